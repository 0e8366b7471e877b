/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  Lance error codes: mapping from SQLSTATE, to HTTP status, and the
 *	  JSON error body {"error", "code", "detail", "instance"}.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gateway.h"

/*
 * gw_error_clear
 *		Reset an error to "no error".
 */
void
gw_error_clear(GwError *err)
{
	err->code = -1;
	err->status = 0;
	err->message[0] = '\0';
	err->detail[0] = '\0';
	err->retry_after = false;
}

/*
 * gw_error_set
 *		Record an error with a Lance code and a printf-style message.  The
 *		HTTP status follows from the code unless set afterwards.
 */
void
gw_error_set(GwError *err, int code, const char *fmt,...)
{
	va_list		ap;

	err->code = code;
	err->status = 0;
	err->detail[0] = '\0';
	err->retry_after = (code == GW_ERR_UNAVAILABLE);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/*
 * gw_error_detail
 *		Attach a detail text to an error already set.
 */
void
gw_error_detail(GwError *err, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
}

/*
 * gw_status_for_code
 *		HTTP status of a Lance error code.
 */
int
gw_status_for_code(int code)
{
	switch (code)
	{
		case 0:
			return 406;
		case 1:
		case 4:
		case 6:
		case 8:
		case 10:
		case 11:
		case 12:
		case 22:
			return 404;
		case 2:
		case 3:
		case 5:
		case 7:
		case 9:
		case 14:
		case 19:
		case 23:
			return 409;
		case 13:
		case 20:
			return 400;
		case 15:
			return 403;
		case 16:
			return 401;
		case 17:
			return 503;
		case 21:
			return 429;
		default:
			return 500;
	}
}

/*
 * gw_code_for_sqlstate
 *		Lance error code of a PostgreSQL SQLSTATE.  The extension raises
 *		LN0xx for Lance code xx; everything else is mapped by class.
 */
int
gw_code_for_sqlstate(const char *sqlstate)
{
	if (sqlstate == NULL || strlen(sqlstate) != 5)
		return GW_ERR_INTERNAL;
	if (sqlstate[0] == 'L' && sqlstate[1] == 'N' &&
		sqlstate[2] >= '0' && sqlstate[2] <= '9' &&
		sqlstate[3] >= '0' && sqlstate[3] <= '9' &&
		sqlstate[4] >= '0' && sqlstate[4] <= '9')
		return atoi(sqlstate + 2);
	if (strcmp(sqlstate, "42501") == 0)
		return GW_ERR_PERMISSION_DENIED;
	if (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0 ||
		strcmp(sqlstate, "23505") == 0 || strcmp(sqlstate, "23503") == 0)
		return GW_ERR_CONCURRENT_MOD;
	if (strncmp(sqlstate, "22", 2) == 0)
		return GW_ERR_INVALID_INPUT;
	if (strcmp(sqlstate, "57P01") == 0 || strcmp(sqlstate, "57P02") == 0 ||
		strcmp(sqlstate, "57P03") == 0 || strncmp(sqlstate, "08", 2) == 0 ||
		strncmp(sqlstate, "53", 2) == 0)
		return GW_ERR_UNAVAILABLE;
	return GW_ERR_INTERNAL;
}

/*
 * gw_error_body
 *		The JSON error body, malloc'd.  "instance" is the request path.
 */
char *
gw_error_body(const GwError *err, const char *instance)
{
	json_t	   *obj = json_object();
	char	   *text;

	json_object_set_new(obj, "error", json_string(err->message[0] ? err->message : "error"));
	json_object_set_new(obj, "code", json_integer(err->code < 0 ? GW_ERR_INTERNAL : err->code));
	json_object_set_new(obj, "detail", err->detail[0] ? json_string(err->detail) : json_null());
	json_object_set_new(obj, "instance", instance ? json_string(instance) : json_null());

	/* json_string() refuses invalid UTF-8; never lose the whole body. */
	if (json_object_get(obj, "error") == NULL)
		json_object_set_new(obj, "error", json_string("error"));
	if (json_object_get(obj, "detail") == NULL)
		json_object_set_new(obj, "detail", json_null());
	if (json_object_get(obj, "instance") == NULL)
		json_object_set_new(obj, "instance", json_null());

	text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	return text;
}
