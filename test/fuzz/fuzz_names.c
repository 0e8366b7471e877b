/*-------------------------------------------------------------------------
 *
 * fuzz_names.c
 *	  libFuzzer target: the extension's rules for names and string
 *	  identifiers (src/name_rules.c), built as they are.
 *
 *	  Input: byte 0 picks the delimiter length (1..4; 0 = "$"), the
 *	  delimiter follows, the rest is the string id.  Checked: splitting
 *	  never reads past the string and the segments with the delimiters
 *	  between them give the string back; a name said to be valid is
 *	  non-empty, at most 255 bytes, free of "/" and control bytes, and not
 *	  "." or ".."; the string taken as a delimiter, if said to be good, is
 *	  1 to 16 bytes of UTF-8 without control characters (C0, DEL, C1).
 *
 *-------------------------------------------------------------------------
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "postgres_fe.h"

#include "name_rules.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * check_valid_name
 *		The properties every valid name has.
 */
static void
check_valid_name(const char *name, int len)
{
	int			i;

	assert(len > 0 && len <= LANCE_MAX_NAME_BYTES);
	assert(!(len == 1 && name[0] == '.'));
	assert(!(len == 2 && name[0] == '.' && name[1] == '.'));
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) name[i];

		assert(c >= 0x20 && c != 0x7F && c != '/');
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		delim[5] = "$";
	size_t		dlen = 1;
	char	   *str;
	LanceIdSegment segs[LANCE_MAX_ID_DEPTH];
	int			n;
	int			i;

	size_t		off = 1;

	if (size == 0)
		return 0;
	if (data[0] % 5 != 0)
	{
		dlen = data[0] % 5;
		if (size < 1 + dlen || memchr(data + 1, '\0', dlen) != NULL)
			return 0;
		memcpy(delim, data + 1, dlen);
		delim[dlen] = '\0';
		off = 1 + dlen;
	}
	/* the string id ends at the first NUL, as a C string does */
	str = strndup((const char *) data + off, size - off);
	if (str == NULL)
		return 0;

	n = lance_split_id(str, delim, segs, LANCE_MAX_ID_DEPTH);
	if (n > 0)
	{
		size_t		pos = 0;

		for (i = 0; i < n; i++)
		{
			if (i > 0)
			{
				assert(strncmp(str + pos, delim, dlen) == 0);
				pos += dlen;
			}
			assert(segs[i].start == str + pos);
			assert(segs[i].len >= 0 && pos + segs[i].len <= strlen(str));
			pos += segs[i].len;
			if (lance_name_problem(segs[i].start, segs[i].len) == LANCE_NAME_OK)
				check_valid_name(segs[i].start, segs[i].len);
		}
		assert(pos == strlen(str));
	}
	else if (n == 0)
		assert(str[0] == '\0' || strcmp(str, delim) == 0);
	if (lance_name_problem(str, (int) strlen(str)) == LANCE_NAME_OK)
		check_valid_name(str, (int) strlen(str));
	/* a good delimiter: 1 to 16 bytes of UTF-8 without C0, DEL or C1 */
	if (lance_delimiter_problem(str) == NULL)
	{
		const unsigned char *u = (const unsigned char *) str;

		assert(strlen(str) >= 1 && strlen(str) <= LANCE_MAX_DELIMITER_BYTES);
		assert(lance_valid_utf8(str, (int) strlen(str)));
		for (i = 0; u[i] != '\0'; i++)
			assert(u[i] >= 0x20 && u[i] != 0x7F &&
				   !(u[i] == 0xC2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F));
	}
	free(str);
	return 0;
}
