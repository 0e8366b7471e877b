/*-------------------------------------------------------------------------
 *
 * name_rules.c
 *	  The rules for names and string identifiers.
 *
 * Names become path segments of table locations: a valid name is
 * non-empty, valid UTF-8, at most 255 bytes, has no control characters
 * (C0, DEL, C1) and no "/", and is neither "." nor "..".  A delimiter is
 * 1 to 16 bytes of UTF-8 without control characters.  These functions
 * only classify (the delimiter's with the message both halves give);
 * ident.c and the gateway's router.c raise the errors.  They depend on
 * nothing of the backend, so test/fuzz builds them as they are (with
 * -DFRONTEND).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRONTEND
#include "postgres.h"
#else
#include "postgres_fe.h"
#endif

#include "mb/pg_wchar.h"

#include "name_rules.h"

/*
 * lance_valid_utf8
 *		Whether len bytes at s are valid UTF-8 without a NUL byte, by
 *		PostgreSQL's own check; the gateway uses it for request targets.
 */
bool
lance_valid_utf8(const char *s, int len)
{
	return pg_encoding_verifymbstr(PG_UTF8, s, len) == len;
}

/*
 * control_at
 *		Whether a control character starts at byte i of the len bytes at p:
 *		a C0 control, DEL, or a C1 control (U+0080..U+009F).
 */
static bool
control_at(const unsigned char *p, int i, int len)
{
	return p[i] < 0x20 || p[i] == 0x7F ||
		(p[i] == 0xC2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F);
}

/*
 * lance_name_problem
 *		What is wrong with a name of len bytes, or LANCE_NAME_OK.
 */
LanceNameProblem
lance_name_problem(const char *name, int len)
{
	const unsigned char *p = (const unsigned char *) name;
	int			i;

	if (len <= 0)
		return LANCE_NAME_EMPTY;
	if (len > LANCE_MAX_NAME_BYTES)
		return LANCE_NAME_TOO_LONG;
	if (!lance_valid_utf8(name, len))
		return LANCE_NAME_BAD_UTF8;
	for (i = 0; i < len; i++)
	{
		if (control_at(p, i, len))
			return LANCE_NAME_CONTROL;
		if (p[i] == '/')
			return LANCE_NAME_SLASH;
	}
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return LANCE_NAME_DOT;
	return LANCE_NAME_OK;
}

/*
 * lance_delimiter_problem
 *		What is wrong with a string identifier's delimiter (NULL: none), as
 *		the message both halves give, or NULL when it is good: non-empty,
 *		at most LANCE_MAX_DELIMITER_BYTES, valid UTF-8, without control
 *		characters (a name can hold none, so a delimiter made of them would
 *		only hide the names in what a formatted identifier shows).
 */
const char *
lance_delimiter_problem(const char *delimiter)
{
	int			len = delimiter ? (int) strlen(delimiter) : 0;

	if (len == 0)
		return "delimiter must not be empty";
	if (len > LANCE_MAX_DELIMITER_BYTES)
		return "delimiter is longer than " CppAsString2(LANCE_MAX_DELIMITER_BYTES) " bytes";
	if (!lance_valid_utf8(delimiter, len))
		return "delimiter is not valid UTF-8";
	for (int i = 0; i < len; i++)
		if (control_at((const unsigned char *) delimiter, i, len))
			return "delimiter contains a control character";
	return NULL;
}

/*
 * lance_split_id
 *		Split a NUL-terminated string identifier on a non-empty delimiter
 *		into segments (pointing into str).  The empty string and the
 *		delimiter alone denote the root: 0 segments.  Returns the number of
 *		segments, or -1 when there are more than max_segments.  Segments are
 *		not validated here.
 */
int
lance_split_id(const char *str, const char *delimiter,
			   LanceIdSegment *segments, int max_segments)
{
	size_t		dlen = strlen(delimiter);
	const char *p = str;
	int			n = 0;

	if (str[0] == '\0' || strcmp(str, delimiter) == 0)
		return 0;
	for (;;)
	{
		const char *next = strstr(p, delimiter);
		size_t		len = next ? (size_t) (next - p) : strlen(p);

		if (n >= max_segments)
			return -1;
		segments[n].start = p;
		segments[n].len = (int) len;
		n++;
		if (next == NULL)
			return n;
		p = next + dlen;
	}
}
