/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  The gateway's errors (GwError) and their JSON body; codes, SQLSTATEs
 *	  and statuses are the shared rules of error_rules.c.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
}

/*
 * gw_error_set
 *		An error of a Lance code (its HTTP status unless set after).
 */
void
gw_error_set(GwError *err, int code, const char *fmt,...)
{
	va_list		ap;

	err->code = code;
	err->status = 0;
	err->detail[0] = '\0';
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
 * string_or
 *		A JSON string of s, or of fallback if s is not UTF-8.
 */
static json_t *
string_or(const char *s, const char *fallback)
{
	json_t	   *j = json_string(s);

	return j ? j : json_string(fallback);
}

/*
 * gw_error_body
 *		The JSON error body, malloc'd: {"error", "code", "detail",
 *		"instance"}, each of the spec's type (ErrorResponse), never null.
 *		"detail" is the error's detail, or the name of its Lance code when it
 *		has none; "instance" is the request path ("" when the request could
 *		not be read).
 */
char *
gw_error_body(const GwError *err, const char *instance)
{
	int			code = err->code < 0 ? LANCE_INTERNAL : err->code;
	const char *name = lance_error_name_of(code) ? lance_error_name_of(code) : "Internal";
	json_t	   *obj = json_pack("{s:o, s:i, s:o, s:o}",
								"error", string_or(err->message[0] ? err->message : "error", "error"),
								"code", code,
								"detail", string_or(err->detail[0] ? err->detail : name, name),
								"instance", string_or(instance ? instance : "", ""));
	char	   *text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(obj);
	return text;
}

/*
 * gw_fatal
 *		Print the message and exit with status (2: a wrong option; 1: a
 *		failed start).
 */
void
gw_fatal(int status, const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s: ", GW_PROGRAM);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}
