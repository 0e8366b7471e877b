/*-------------------------------------------------------------------------
 *
 * error_rules.c
 *	  The one definition of the Lance error codes' names, of the SQLSTATE
 *	  that stands for each code, and of the HTTP status of each code.
 *
 * The extension raises "LN0xx" for Lance code xx; PostgreSQL's own
 * SQLSTATEs are mapped by meaning (a statement timeout or a read-only
 * standby is ServiceUnavailable, a lock not available is a concurrent
 * modification, ...).  Pure C with no dependency on the backend: the
 * extension (errors.c, SQL functions lance_error_code/lance_error_name)
 * and the gateway (gateway/errors.c) both compile this file.
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>
#include <string.h>

#include "error_rules.h"

static const char *const lance_error_names[] = {
	"Unsupported",
	"NamespaceNotFound",
	"NamespaceAlreadyExists",
	"NamespaceNotEmpty",
	"TableNotFound",
	"TableAlreadyExists",
	"TableIndexNotFound",
	"TableIndexAlreadyExists",
	"TableTagNotFound",
	"TableTagAlreadyExists",
	"TransactionNotFound",
	"TableVersionNotFound",
	"TableColumnNotFound",
	"InvalidInput",
	"ConcurrentModification",
	"PermissionDenied",
	"Unauthenticated",
	"ServiceUnavailable",
	"Internal",
	"InvalidTableState",
	"TableSchemaValidationError",
	"Throttling",
	"TableBranchNotFound",
	"TableBranchAlreadyExists",
};

_Static_assert(sizeof(lance_error_names) / sizeof(lance_error_names[0]) ==
			   LANCE_MAX_ERROR_CODE + 1, "one name per Lance error code");

/*
 * lance_error_name_of
 *		Name of a Lance error code, or NULL when the code is unknown.
 */
const char *
lance_error_name_of(int code)
{
	if (code < 0 || code > LANCE_MAX_ERROR_CODE)
		return NULL;
	return lance_error_names[code];
}

/*
 * One PostgreSQL SQLSTATE, or a class of them (len 2 or 3: a prefix), and
 * the Lance code it stands for.  The first match wins.
 */
typedef struct SqlstateRule
{
	const char *sqlstate;
	int			len;
	int			code;
} SqlstateRule;

static const SqlstateRule sqlstate_rules[] = {
	{"42501", 5, LANCE_PERMISSION_DENIED},	/* insufficient_privilege */
	{"28000", 5, LANCE_UNAUTHENTICATED},	/* invalid_authorization_spec */
	{"28P01", 5, LANCE_UNAUTHENTICATED},	/* invalid_password */
	{"40001", 5, LANCE_CONCURRENT_MODIFICATION},	/* serialization_failure */
	{"40P01", 5, LANCE_CONCURRENT_MODIFICATION},	/* deadlock_detected */
	{"23505", 5, LANCE_CONCURRENT_MODIFICATION},	/* unique_violation */
	{"23503", 5, LANCE_CONCURRENT_MODIFICATION},	/* foreign_key_violation */
	{"55P03", 5, LANCE_CONCURRENT_MODIFICATION},	/* lock_not_available */
	{"22", 2, LANCE_INVALID_INPUT}, /* data_exception */
	{"42P02", 5, LANCE_INVALID_INPUT},	/* undefined_parameter */
	{"42883", 5, LANCE_INVALID_INPUT},	/* undefined_function */
	{"42725", 5, LANCE_INVALID_INPUT},	/* ambiguous_function */
	{"08", 2, LANCE_SERVICE_UNAVAILABLE},	/* connection_exception */
	{"53", 2, LANCE_SERVICE_UNAVAILABLE},	/* insufficient_resources */
	{"57P", 3, LANCE_SERVICE_UNAVAILABLE},	/* shutdown, cannot connect now */
	{"57014", 5, LANCE_SERVICE_UNAVAILABLE},	/* query_canceled (timeout) */
	{"25006", 5, LANCE_SERVICE_UNAVAILABLE},	/* read_only_sql_transaction */
};

/*
 * lance_code_for_sqlstate
 *		Lance error code of a five-character SQLSTATE; Internal for one that
 *		stands for none (or for anything that is not a SQLSTATE).
 */
int
lance_code_for_sqlstate(const char *s)
{
	size_t		i;

	if (s == NULL || strlen(s) != 5)
		return LANCE_INTERNAL;
	if (s[0] == 'L' && s[1] == 'N' && s[2] == '0' &&
		s[3] >= '0' && s[3] <= '9' && s[4] >= '0' && s[4] <= '9')
	{
		int			code = (s[3] - '0') * 10 + (s[4] - '0');

		return code <= LANCE_MAX_ERROR_CODE ? code : LANCE_INTERNAL;
	}
	for (i = 0; i < sizeof(sqlstate_rules) / sizeof(sqlstate_rules[0]); i++)
	{
		if (strncmp(s, sqlstate_rules[i].sqlstate, sqlstate_rules[i].len) == 0)
			return sqlstate_rules[i].code;
	}
	return LANCE_INTERNAL;
}

/*
 * lance_http_status_for_code
 *		HTTP status of a Lance error code (catalog-rest-index.md and the
 *		error responses of spec.yaml); 500 for an unknown code.
 */
int
lance_http_status_for_code(int code)
{
	switch (code)
	{
		case LANCE_UNSUPPORTED:
			return 406;
		case LANCE_NAMESPACE_NOT_FOUND:
		case LANCE_TABLE_NOT_FOUND:
		case LANCE_TABLE_INDEX_NOT_FOUND:
		case LANCE_TABLE_TAG_NOT_FOUND:
		case LANCE_TRANSACTION_NOT_FOUND:
		case LANCE_TABLE_VERSION_NOT_FOUND:
		case LANCE_TABLE_COLUMN_NOT_FOUND:
		case LANCE_TABLE_BRANCH_NOT_FOUND:
			return 404;
		case LANCE_NAMESPACE_ALREADY_EXISTS:
		case LANCE_NAMESPACE_NOT_EMPTY:
		case LANCE_TABLE_ALREADY_EXISTS:
		case LANCE_TABLE_INDEX_ALREADY_EXISTS:
		case LANCE_TABLE_TAG_ALREADY_EXISTS:
		case LANCE_CONCURRENT_MODIFICATION:
		case LANCE_INVALID_TABLE_STATE:
		case LANCE_TABLE_BRANCH_ALREADY_EXISTS:
			return 409;
		case LANCE_INVALID_INPUT:
		case LANCE_TABLE_SCHEMA_VALIDATION_ERROR:
			return 400;
		case LANCE_PERMISSION_DENIED:
			return 403;
		case LANCE_UNAUTHENTICATED:
			return 401;
		case LANCE_SERVICE_UNAVAILABLE:
			return 503;
		case LANCE_THROTTLING:
			return 429;
		default:
			return 500;
	}
}
