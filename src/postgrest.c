/*-------------------------------------------------------------------------
 *
 * postgrest.c
 *	  Lance errors in the form PostgREST turns into an HTTP response.
 *
 * PostgREST answers 400 for every SQLSTATE it does not know, so behind
 * PostgREST each Lance error (LN0xx) would be a 400.  Its documented way
 * out is an error raised with SQLSTATE "PGRST" whose message is a JSON
 * object {"code", "message", "details", "hint"} (the body it sends) and
 * whose detail is a JSON object {"status", "headers"} (the status it
 * answers with).
 *
 * With lance_namespace.error_format = 'postgrest' (set for PostgREST's
 * authenticator role, say), an emit_log_hook rewrites each error the
 * catalog stands behind (every LN0xx, and the PostgreSQL SQLSTATEs that
 * error_rules.c maps to a Lance code other than Internal) into that form
 * as it is sent: the status is the one error_rules.c gives the Lance code,
 * the body carries the Lance code (as a string), the message, the detail,
 * and in the hint the SQLSTATE, the code's name and any hint of the error.  The default ('sql')
 * leaves every error as psql users see it; errors caught by an exception
 * block are never emitted and so never rewritten.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/elog.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "lance_namespace.h"

/* lance_namespace.error_format */
typedef enum LanceErrorFormat
{
	LANCE_ERRORS_SQL,
	LANCE_ERRORS_POSTGREST
} LanceErrorFormat;

static const struct config_enum_entry error_format_options[] = {
	{"sql", LANCE_ERRORS_SQL, false},
	{"postgrest", LANCE_ERRORS_POSTGREST, false},
	{NULL, 0, false}
};

static int	lance_error_format = LANCE_ERRORS_SQL;
static emit_log_hook_type prev_emit_log_hook = NULL;

/*
 * escape_json_or_null
 *		Append s to buf as a JSON string, or null when s is NULL.
 */
static void
escape_json_or_null(StringInfo buf, const char *s)
{
	if (s == NULL)
		appendStringInfoString(buf, "null");
	else
		escape_json(buf, s);
}

/*
 * lance_postgrest_emit_log_hook
 *		Rewrite an error that is about to be sent into PostgREST's PGRST form
 *		(see the file's comment).
 */
static void
lance_postgrest_emit_log_hook(ErrorData *edata)
{
	if (lance_error_format == LANCE_ERRORS_POSTGREST &&
		edata->elevel == ERROR && edata->output_to_client)
	{
		const char *sqlstate = unpack_sql_state(edata->sqlerrcode);
		int			code = lance_code_for_sqlstate(sqlstate);
		bool		ours = sqlstate[0] == 'L' && sqlstate[1] == 'N';

		if (ours || code != LANCE_INTERNAL)
		{
			int			status = lance_http_status_for_code(code);
			StringInfoData body;
			StringInfoData response;
			char		codetext[16];
			char	   *hint;

			snprintf(codetext, sizeof(codetext), "%d", code);
			hint = edata->hint ?
				psprintf("%s %s: %s", sqlstate, lance_error_name_of(code), edata->hint) :
				psprintf("%s %s", sqlstate, lance_error_name_of(code));

			initStringInfo(&body);
			appendStringInfoString(&body, "{\"code\": ");
			escape_json(&body, codetext);
			appendStringInfoString(&body, ", \"message\": ");
			escape_json_or_null(&body, edata->message);
			appendStringInfoString(&body, ", \"details\": ");
			escape_json_or_null(&body, edata->detail);
			appendStringInfoString(&body, ", \"hint\": ");
			escape_json(&body, hint);
			appendStringInfoChar(&body, '}');

			initStringInfo(&response);
			appendStringInfo(&response, "{\"status\": %d, \"headers\": {%s}}", status,
							 code == LANCE_SERVICE_UNAVAILABLE ? "\"Retry-After\": \"1\"" : "");

			edata->sqlerrcode = MAKE_SQLSTATE('P', 'G', 'R', 'S', 'T');
			edata->message = body.data;
			edata->detail = response.data;
			edata->hint = NULL;
		}
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * lance_postgrest_init
 *		Define lance_namespace.error_format and install the hook (_PG_init).
 */
void
lance_postgrest_init(void)
{
	DefineCustomEnumVariable("lance_namespace.error_format",
							 "How the catalog's errors reach the client: sql, or postgrest.",
							 "postgrest raises each Lance error as SQLSTATE PGRST with a JSON message "
							 "and detail, from which PostgREST answers with the Lance error's HTTP status.",
							 &lance_error_format,
							 LANCE_ERRORS_SQL,
							 error_format_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = lance_postgrest_emit_log_hook;
}
