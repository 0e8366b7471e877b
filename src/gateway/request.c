/*-------------------------------------------------------------------------
 *
 * request.c
 *	  The request model handed to lance_namespace.rest_<op>(jsonb): the
 *	  JSON body (a missing, empty or null body counts as {}), plus the
 *	  path id as an array of names under "id", plus the known query
 *	  parameters as strings.  A body "id" that differs from the path id is
 *	  InvalidInput (catalog-rest-index.md, "Standard Operations").
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pathid.h"
#include "request.h"

/* Query parameters that carry request fields (spec components/parameters). */
static const char *const query_fields[] = {
	"delimiter", "page_token", "limit", "descending", "include_declared",
	"check_declared", "with_table_uri", "load_detailed_metadata", "branch",
	"mode", "behavior", "version", "vend_credentials", NULL
};

/* Request arrays whose length is capped by --max-batch-entries. */
static const char *const batch_fields[] = {"entries", "ranges", "operations", NULL};

/*
 * json_depth
 *		Nesting depth of a JSON value, stopping early past limit.
 */
static int
json_depth(json_t *v, int limit)
{
	int			max = 0;

	if (limit < 0)
		return 1;
	if (json_is_object(v))
	{
		const char *key;
		json_t	   *val;

		json_object_foreach(v, key, val)
		{
			int			d = json_depth(val, limit - 1);

			if (d > max)
				max = d;
			if (max > limit)
				break;
		}
		return max + 1;
	}
	if (json_is_array(v))
	{
		size_t		i;
		json_t	   *val;

		json_array_foreach(v, i, val)
		{
			int			d = json_depth(val, limit - 1);

			if (d > max)
				max = d;
			if (max > limit)
				break;
		}
		return max + 1;
	}
	return 0;
}

/*
 * gw_parse_body
 *		Parse the request body into a JSON object (new reference).
 */
json_t *
gw_parse_body(const char *body, size_t len, GwError *err)
{
	json_error_t jerr;
	json_t	   *v;
	size_t		i;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char) body[i]))
			break;
	if (i == len)
		return json_object();

	v = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (v == NULL)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "malformed JSON request body");
		gw_error_detail(err, "%s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (json_is_null(v))
	{
		json_decref(v);
		return json_object();
	}
	if (!json_is_object(v))
	{
		json_decref(v);
		gw_error_set(err, GW_ERR_INVALID_INPUT, "request body must be a JSON object");
		return NULL;
	}
	if (json_depth(v, GW_MAX_JSON_DEPTH) > GW_MAX_JSON_DEPTH)
	{
		json_decref(v);
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "request body is nested deeper than %d levels", GW_MAX_JSON_DEPTH);
		return NULL;
	}
	for (i = 0; batch_fields[i]; i++)
	{
		json_t	   *a = json_object_get(v, batch_fields[i]);

		if (gw_config.max_batch_entries > 0 && json_is_array(a) &&
			json_array_size(a) > (size_t) gw_config.max_batch_entries)
		{
			json_decref(v);
			gw_error_set(err, GW_ERR_INVALID_INPUT, "%s has more than %d elements",
						 batch_fields[i], gw_config.max_batch_entries);
			return NULL;
		}
	}
	return v;
}

/*
 * gw_build_request
 *		Merge the decoded path id and query parameters into the body.
 *		Takes ownership of body; returns it or NULL with err set.
 */
json_t *
gw_build_request(json_t *body, const char *raw_id, json_t *query, GwError *err)
{
	json_t	   *jdelim = json_object_get(query, "delimiter");
	const char *delimiter = json_is_string(jdelim) ? json_string_value(jdelim) : "$";

	if (raw_id != NULL)
	{
		char	   *decoded = gw_percent_decode(raw_id, strlen(raw_id), false, err);
		json_t	   *id;
		json_t	   *body_id;

		if (decoded == NULL)
			goto fail;
		id = gw_parse_id(decoded, delimiter, err);
		free(decoded);
		if (id == NULL)
			goto fail;
		body_id = json_object_get(body, "id");
		if (body_id != NULL && !json_is_null(body_id) && !json_equal(body_id, id))
		{
			json_decref(id);
			gw_error_set(err, GW_ERR_INVALID_INPUT,
						 "the id in the request body does not match the id in the path");
			goto fail;
		}
		json_object_set_new(body, "id", id);
	}

	for (int i = 0; query_fields[i]; i++)
	{
		json_t	   *qv = json_object_get(query, query_fields[i]);
		json_t	   *bv = json_object_get(body, query_fields[i]);

		if (qv != NULL && (bv == NULL || json_is_null(bv)))
			json_object_set(body, query_fields[i], qv);
	}
	return body;

fail:
	json_decref(body);
	return NULL;
}
