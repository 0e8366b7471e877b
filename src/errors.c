/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  SQL access to the Lance error rules of error_rules.c.
 *
 * Errors raised by the extension carry SQLSTATE "LN0xx" where xx is the
 * Lance code.  lance_error_code() also maps the standard SQLSTATEs that
 * PostgreSQL itself raises (permission denied, serialization failure, ...)
 * so that a client can classify any error it gets; the gateway compiles
 * the same rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "lance_namespace.h"

PG_FUNCTION_INFO_V1(lance_error_code);

/*
 * lance_error_code(sqlstate text) returns integer
 *		The Lance error code that a SQLSTATE stands for.
 */
Datum
lance_error_code(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_INT32(lance_code_for_sqlstate(s));
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
