/*-------------------------------------------------------------------------
 *
 * pathid.c
 *	  Percent-decoding of path segments and query parameters, and string
 *	  identifiers ("ns$sub$table") split by the extension's rule.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pathid.h"
#include "name_rules.h"

/*
 * gw_valid_utf8
 *		True if s[0..len) is well-formed UTF-8 without NUL bytes: the
 *		extension's rule, PostgreSQL's own check (src/name_rules.c).
 */
bool
gw_valid_utf8(const char *s, size_t len)
{
	return len <= INT_MAX && lance_valid_utf8(s, (int) len);
}

/*
 * gw_percent_decode
 *		Decode %XY escapes (and '+' as a space when asked, for query
 *		strings).  Malformed escapes, NUL bytes and invalid UTF-8 are
 *		InvalidInput.  Returns a malloc'd string or NULL with err set.
 */
char *
gw_percent_decode(const char *s, size_t len, bool plus_is_space, GwError *err)
{
	char	   *out = malloc(len + 1);
	size_t		o = 0;

	if (out == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
	{
		char		hex[3] = {0};

		if (s[i] != '%')
		{
			out[o++] = s[i] == '+' && plus_is_space ? ' ' : s[i];
			continue;
		}
		/* the gateway never calls setlocale: isxdigit is [0-9a-fA-F] */
		if (i + 2 >= len || !isxdigit((unsigned char) s[i + 1]) || !isxdigit((unsigned char) s[i + 2]))
		{
			free(out);
			gw_error_set(err, GW_ERR_INVALID_INPUT, "malformed percent-encoding in request target");
			return NULL;
		}
		memcpy(hex, s + i + 1, 2);
		out[o++] = (char) strtol(hex, NULL, 16);
		i += 2;
	}
	out[o] = '\0';
	if (!gw_valid_utf8(out, o))
	{
		free(out);
		gw_error_set(err, GW_ERR_INVALID_INPUT, "request target is not valid UTF-8 or contains a NUL byte");
		return NULL;
	}
	return out;
}

/*
 * gw_parse_id
 *		Split a decoded string identifier into a JSON array of strings by
 *		the extension's rule (src/name_rules.c): the empty string or the
 *		delimiter alone is the root.  The catalog validates the names.
 */
json_t *
gw_parse_id(const char *id, const char *delimiter, GwError *err)
{
	LanceIdSegment segments[LANCE_MAX_ID_DEPTH];
	json_t	   *arr;
	int			n;

	if (delimiter[0] == '\0')
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "delimiter must not be empty");
		return NULL;
	}
	n = lance_split_id(id, delimiter, segments, LANCE_MAX_ID_DEPTH);
	if (n < 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "id has more than 64 levels");
		return NULL;
	}
	arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_stringn(segments[i].start, segments[i].len));
	return arr;
}
