/*-------------------------------------------------------------------------
 *
 * fuzz_http.c
 *	  libFuzzer target: the gateway's mapping from an HTTP request to a
 *	  route's call, as the server (src/gateway/server.c) does it once
 *	  libmicrohttpd has parsed the request: the raw target is split at
 *	  '?', the path matched against the routes (router.c), the query
 *	  string split and decoded (gw_parse_query), and for a matched route
 *	  the body and the path id turned into the request model
 *	  (router.c).
 *
 *	  Input: "METHOD TARGET\n" and then the body.  Checked: a route match
 *	  is consistent (a matched route accepts the method and carries an id
 *	  exactly when its pattern has one; a wrong method names a route that
 *	  does not accept it);
 *	  every error is code 13 with a JSON error body; every request model
 *	  is an object whose id, when the route has one, is an array of
 *	  strings.
 *
 *-------------------------------------------------------------------------
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fixture_routes.h"
#include "router.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * check_error
 *		An error of the mapping: code 13, 400, and a JSON error body.
 */
static void
check_error(const GwError *err, const char *path)
{
	char	   *body;
	json_t	   *j;

	assert(err->code == LANCE_INVALID_INPUT);
	assert(lance_http_status_for_code(err->code) == 400);
	body = gw_error_body(err, path);
	assert(body != NULL);
	j = json_loads(body, 0, NULL);
	assert(json_is_object(j));
	assert(json_integer_value(json_object_get(j, "code")) == LANCE_INVALID_INPUT);
	json_decref(j);
	free(body);
}

/*
 * map
 *		Route a request and build its call's request model.
 */
static void
map(const char *method, const char *target, const char *body, size_t body_len)
{
	char	   *path = strdup(target);
	char	   *q = strchr(path, '?');
	const GwRoute *route = NULL;
	char	   *raw_id = NULL;
	json_t	   *query = json_object();
	json_t	   *model;
	GwError		err;
	GwMatch		m;

	if (q != NULL)
		*q++ = '\0';
	gw_error_clear(&err);
	if (q != NULL && !gw_parse_query(q, strlen(q), query, &err))
	{
		check_error(&err, path);
		goto done;
	}
	m = gw_route_match(path, gw_method_bit(method), &route, &raw_id);
	if (m == GW_MATCH_NONE)
		goto done;
	assert(route != NULL);
	assert(route >= gw_routes && route < gw_routes + gw_nroutes);
	if (m == GW_MATCH_METHOD)
	{
		assert((route->methods & gw_method_bit(method)) == 0);
		goto done;
	}
	assert((route->methods & gw_method_bit(method)) != 0);
	assert((raw_id != NULL) == (strstr(route->pattern, "{id}") != NULL));

	model = gw_parse_body(body, body_len, &err);
	if (model != NULL)
		model = gw_build_request(model, raw_id, query, &err);
	if (model == NULL)
		check_error(&err, path);
	else
	{
		char	   *text;

		assert(json_is_object(model));
		if (raw_id != NULL)
		{
			json_t	   *id = json_object_get(model, "id");
			size_t		i;
			json_t	   *part;

			assert(json_is_array(id));
			json_array_foreach(id, i, part)
				assert(json_is_string(part));
		}
		text = json_dumps(model, JSON_COMPACT);
		assert(text != NULL);
		free(text);
		json_decref(model);
	}
done:
	json_decref(query);
	free(raw_id);
	free(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *) data;
	const char *nl = memchr(in, '\n', size);
	const char *sp;
	char	   *method;
	char	   *target;

	if (nl == NULL || memchr(in, '\0', nl - in) != NULL)
		return 0;
	sp = memchr(in, ' ', nl - in);
	if (sp == NULL)
		return 0;
	/* what libmicrohttpd hands over: a token method and a target */
	method = strndup(in, sp - in);
	target = strndup(sp + 1, nl - sp - 1);
	if (target[0] == '/')
		map(method, target, nl + 1, size - (nl + 1 - in));
	free(method);
	free(target);
	return 0;
}
