/*-------------------------------------------------------------------------
 *
 * fuzz_request.c
 *	  libFuzzer target: the request model of the gateway
 *	  (src/gateway/router.c: JSON body, path id, query parameters) and
 *	  the JSON error body (src/gateway/errors.c).
 *
 *	  Input: <body> 0x00 <raw path id> 0x00 <delimiter>; missing parts
 *	  are absent.  Checked: a body is either an object or InvalidInput;
 *	  the merged request is an object whose "id" is an array of strings;
 *	  every failure is InvalidInput and has a JSON error body.
 *
 *-------------------------------------------------------------------------
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_routes.h"
#include "router.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_error_body(const GwError *err, const char *instance)
{
	char	   *text = gw_error_body(err, instance);
	json_t	   *v;

	assert(text != NULL);
	v = json_loads(text, 0, NULL);
	assert(v != NULL && json_is_object(v));
	assert(json_integer_value(json_object_get(v, "code")) == LANCE_INVALID_INPUT);
	json_decref(v);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *) data;
	const char *end = p + size;
	const char *nul1 = memchr(p, 0, size);
	const char *nul2 = nul1 ? memchr(nul1 + 1, 0, end - nul1 - 1) : NULL;
	size_t		blen = nul1 ? (size_t) (nul1 - p) : size;
	char	   *raw_id = NULL;
	json_t	   *query;
	json_t	   *body;
	json_t	   *req;
	GwError		err;

	gw_config.max_batch_entries = 100;
	gw_error_clear(&err);
	body = gw_parse_body(p, blen, &err);
	if (body == NULL)
	{
		assert(err.code == LANCE_INVALID_INPUT);
		check_error_body(&err, "/v1/fuzz");
		return 0;
	}
	assert(json_is_object(body));

	query = json_object();
	if (nul1)
		raw_id = strndup(nul1 + 1, (nul2 ? nul2 : end) - nul1 - 1);
	if (nul2 && gw_valid_utf8(nul2 + 1, end - nul2 - 1))
	{
		char	   *d = strndup(nul2 + 1, end - nul2 - 1);

		json_object_set_new(query, "delimiter", json_string(d));
		free(d);
	}
	json_object_set_new(query, "limit", json_string("10"));

	req = gw_build_request(body, raw_id, query, &err);
	if (req == NULL)
	{
		assert(err.code == LANCE_INVALID_INPUT);
		check_error_body(&err, raw_id);
	}
	else
	{
		char	   *text;

		assert(json_is_object(req));
		if (raw_id != NULL)
		{
			json_t	   *id = json_object_get(req, "id");
			size_t		i;
			json_t	   *part;

			assert(json_is_array(id));
			json_array_foreach(id, i, part)
				assert(json_is_string(part));
		}
		text = json_dumps(req, JSON_COMPACT);
		assert(text != NULL);
		free(text);
		json_decref(req);
	}
	json_decref(query);
	free(raw_id);
	return 0;
}
