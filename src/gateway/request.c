/*-------------------------------------------------------------------------
 *
 * request.c
 *	  The request model handed to lance_namespace.rest_<op>(jsonb): the
 *	  JSON body (a missing, empty or null body counts as {}), plus the
 *	  path id as an array of names under "id", plus the query parameters
 *	  that the extension lists (lance_namespace.rest_query_parameters) as
 *	  JSON values of their types.  A body "id" that
 *	  differs from the path id is InvalidInput (catalog-rest-index.md,
 *	  "Standard Operations").
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pathid.h"
#include "request.h"
#include "router.h"

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
 * typed_query_value
 *		The JSON value of query parameter name (a JSON string as the query
 *		was parsed) as the spec's type: an integer from an optional "-" and
 *		decimal digits in the 64-bit range, a boolean from "true" or "false"
 *		(any case) or "1" or "0".  NULL with err set when the text is not
 *		one.  Returns a new reference.
 */
static json_t *
typed_query_value(const char *name, GwQueryType type, json_t *qv, GwError *err)
{
	const char *text = json_string_value(qv);

	if (text == NULL || type == GW_QUERY_STRING)
		return json_incref(qv);
	if (type == GW_QUERY_INTEGER)
	{
		const char *p = text + (text[0] == '-');
		char	   *end;
		long long	val;

		errno = 0;
		val = strtoll(text, &end, 10);
		if (*p >= '0' && *p <= '9' && *end == '\0' && errno == 0)
			return json_integer(val);
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "query parameter \"%s\" must be an integer", name);
	}
	else
	{
		if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0)
			return json_true();
		if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0)
			return json_false();
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "query parameter \"%s\" must be true or false", name);
	}
	gw_error_detail(err, "Got \"%.200s\".", text);
	return NULL;
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

	/*
	 * The spec's Identity travels in the x-api-key and Authorization
	 * headers on REST (catalog-rest-index.md); one in the body would be
	 * ignored, so it is refused rather than dropped without a word.
	 */
	{
		json_t	   *identity = json_object_get(body, "identity");

		if (identity != NULL && !json_is_null(identity))
		{
			gw_error_set(err, GW_ERR_INVALID_INPUT,
						 "identity is not read from the request body: send the API key in the "
						 "x-api-key header or the token in the Authorization header");
			goto fail;
		}
	}

	/* the query parameters and their types are the extension's (router.c) */
	for (int i = 0; gw_query_parameter(i) != NULL; i++)
	{
		const char *name = gw_query_parameter(i)->name;
		json_t	   *qv = json_object_get(query, name);
		json_t	   *bv = json_object_get(body, name);
		json_t	   *typed;

		if (qv == NULL || (bv != NULL && !json_is_null(bv)))
			continue;
		typed = typed_query_value(name, gw_query_parameter(i)->type, qv, err);
		if (typed == NULL)
			goto fail;
		json_object_set_new(body, name, typed);
	}
	return body;

fail:
	json_decref(body);
	return NULL;
}

/*
 * gw_parse_query
 *		Query parameters into obj: split on '&' and then the first '=',
 *		'+' is a space, each part percent-decoded.  A parameter without
 *		'=' has the empty value, an empty part (as in "a=1&&b=2") is the
 *		empty name, a final empty part adds nothing, and a later duplicate
 *		wins.  False with err set on bad encoding.
 */
bool
gw_parse_query(const char *query, size_t len, json_t *obj, GwError *err)
{
	size_t		pos = 0;

	while (pos < len)
	{
		const char *seg = query + pos;
		const char *amp = memchr(seg, '&', len - pos);
		size_t		seglen = amp ? (size_t) (amp - seg) : len - pos;
		const char *eq = memchr(seg, '=', seglen);
		size_t		klen = eq ? (size_t) (eq - seg) : seglen;
		char	   *k;
		char	   *v;

		k = gw_percent_decode(seg, klen, true, err);
		if (k == NULL)
			return false;
		v = eq ? gw_percent_decode(eq + 1, seglen - klen - 1, true, err)
			: gw_percent_decode("", 0, true, err);
		if (v == NULL)
		{
			free(k);
			return false;
		}
		json_object_set_new(obj, k, json_string(v));
		free(k);
		free(v);
		pos += seglen + 1;
	}
	return true;
}
