/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  Lance error codes, their names and the SQLSTATE mapping.
 *
 * Errors raised by the extension carry SQLSTATE "LN0xx" where xx is the
 * Lance code.  lance_error_code() also maps the standard SQLSTATEs that
 * PostgreSQL itself raises (permission denied, serialization failure, ...)
 * so that a client can classify any error it gets.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "lance_namespace.h"

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
 * sqlstate_to_lance_code
 *		Map a five-character SQLSTATE to a Lance error code.
 */
static int
sqlstate_to_lance_code(const char *s)
{
	if (strlen(s) != 5)
		return LANCE_INTERNAL;
	if (s[0] == 'L' && s[1] == 'N' && s[2] == '0' &&
		isdigit((unsigned char) s[3]) && isdigit((unsigned char) s[4]))
	{
		int			code = (s[3] - '0') * 10 + (s[4] - '0');

		if (code <= LANCE_MAX_ERROR_CODE)
			return code;
		return LANCE_INTERNAL;
	}
	if (strcmp(s, "42501") == 0)
		return LANCE_PERMISSION_DENIED;
	if (strcmp(s, "28000") == 0 || strcmp(s, "28P01") == 0)
		return LANCE_UNAUTHENTICATED;
	if (strcmp(s, "40001") == 0 || strcmp(s, "40P01") == 0 ||
		strcmp(s, "23505") == 0 || strcmp(s, "23503") == 0 ||
		strcmp(s, "55P03") == 0)
		return LANCE_CONCURRENT_MODIFICATION;
	if (strncmp(s, "22", 2) == 0 || strcmp(s, "42P02") == 0 ||
		strcmp(s, "42883") == 0 || strcmp(s, "42725") == 0)
		return LANCE_INVALID_INPUT;
	if (strncmp(s, "08", 2) == 0 || strncmp(s, "53", 2) == 0 ||
		strncmp(s, "57P", 3) == 0 || strcmp(s, "25006") == 0)
		return LANCE_SERVICE_UNAVAILABLE;
	if (strcmp(s, "57014") == 0)
		return LANCE_SERVICE_UNAVAILABLE;
	return LANCE_INTERNAL;
}

PG_FUNCTION_INFO_V1(lance_error_code);

/*
 * lance_error_code(sqlstate text) returns integer
 *		The Lance error code that a SQLSTATE stands for.
 */
Datum
lance_error_code(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_INT32(sqlstate_to_lance_code(s));
}

PG_FUNCTION_INFO_V1(lance_error_name);

/*
 * lance_error_name(code integer) returns text
 *		The spec's name of a Lance error code; NULL for an unknown code.
 */
Datum
lance_error_name(PG_FUNCTION_ARGS)
{
	const char *name = lance_error_name_of(PG_GETARG_INT32(0));

	if (name == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(name));
}
