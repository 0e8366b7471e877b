/*-------------------------------------------------------------------------
 *
 * fuzz_pathid.c
 *	  libFuzzer target: percent-decoding and string identifiers of the
 *	  gateway (src/gateway/router.c).
 *
 *	  Input: byte 0 picks '+' handling and the delimiter length (0 = the
 *	  default "$"); the delimiter is taken from the start of the decoded
 *	  text when it is valid UTF-8.  Checked: decoding either fails with
 *	  InvalidInput or yields NUL-free valid UTF-8; parsing a non-root id
 *	  and joining its parts with the delimiter gives the text back.
 *
 *-------------------------------------------------------------------------
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "router.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GwError		err;
	char	   *dec;
	char		delim[8] = "$";
	size_t		dlen;
	json_t	   *id;

	if (size < 1)
		return 0;
	gw_error_clear(&err);
	dec = gw_percent_decode((const char *) data + 1, size - 1, data[0] & 1, &err);
	if (dec == NULL)
	{
		assert(err.code == LANCE_INVALID_INPUT);
		return 0;
	}
	assert(gw_valid_utf8(dec, strlen(dec)));
	assert(strlen(dec) <= size - 1);

	dlen = (data[0] >> 1) & 7;
	if (dlen > 0 && dlen <= strlen(dec) && gw_valid_utf8(dec, dlen))
	{
		memcpy(delim, dec, dlen);
		delim[dlen] = '\0';
	}
	id = gw_parse_id(dec, delim, &err);
	if (id == NULL)
	{
		/* only an id of more than 64 names is refused here */
		assert(err.code == LANCE_INVALID_INPUT);
		free(dec);
		return 0;
	}
	assert(json_is_array(id));
	if (json_array_size(id) > 0)
	{
		size_t		cap = strlen(dec) + 1;
		char	   *join = calloc(1, cap);
		size_t		i;
		json_t	   *part;

		json_array_foreach(id, i, part)
		{
			assert(json_is_string(part));
			if (i > 0)
				strcat(join, delim);
			assert(strlen(join) + strlen(json_string_value(part)) < cap);
			strcat(join, json_string_value(part));
		}
		assert(strcmp(join, dec) == 0);
		free(join);
	}
	else
		assert(dec[0] == '\0' || strcmp(dec, delim) == 0);
	json_decref(id);
	free(dec);
	return 0;
}
