/*-------------------------------------------------------------------------
 *
 * name_rules.c
 *	  The rules for names and string identifiers.
 *
 * Names become path segments of table locations: a valid name is
 * non-empty, valid UTF-8, at most 255 bytes, has no control characters
 * (C0, DEL, C1) and no "/", and is neither "." nor "..".  These functions
 * only classify; ident.c raises the errors.  They depend on nothing of the
 * backend, so test/fuzz builds them as they are (with -DFRONTEND).
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
		/* C0 controls, DEL, and the C1 controls U+0080..U+009F */
		if (p[i] < 0x20 || p[i] == 0x7F ||
			(p[i] == 0xC2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F))
			return LANCE_NAME_CONTROL;
		if (p[i] == '/')
			return LANCE_NAME_SLASH;
	}
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return LANCE_NAME_DOT;
	return LANCE_NAME_OK;
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
