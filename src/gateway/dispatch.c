/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  Route a request, check authentication, build the request model and
 *	  run the operation's SQL function (or answer health, readiness,
 *	  unsupported and unknown routes).
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commit.h"
#include "db.h"
#include "dispatch.h"
#include "feed.h"
#include "metrics.h"
#include "request.h"
#include "router.h"

/*
 * gw_respond_error
 *		Fill resp with the JSON error body of err.
 */
void
gw_respond_error(GwResponse *resp, const GwError *err, const char *instance)
{
	resp->status = err->status ? err->status : gw_status_for_code(err->code);
	resp->body = gw_error_body(err, instance);
	resp->retry_after = err->retry_after || resp->status == 503;
}

/*
 * secret_equal
 *		Compare two strings in time independent of where they differ.
 */
static bool
secret_equal(const char *a, const char *b)
{
	size_t		la = strlen(a);
	size_t		lb = strlen(b);
	unsigned char diff = (la != lb);

	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char) a[i] ^ (unsigned char) b[i % (lb ? lb : 1)];
	return diff == 0;
}

/*
 * authenticated
 *		With --api-key, the request must carry x-api-key: KEY or
 *		Authorization: Bearer KEY.
 */
static bool
authenticated(json_t *headers)
{
	json_t	   *k = json_object_get(headers, "x-api-key");
	json_t	   *a = json_object_get(headers, "authorization");

	if (gw_config.api_key == NULL)
		return true;
	if (json_is_string(k) && secret_equal(json_string_value(k), gw_config.api_key))
		return true;
	if (json_is_string(a) && strncasecmp(json_string_value(a), "Bearer ", 7) == 0 &&
		secret_equal(json_string_value(a) + 7, gw_config.api_key))
		return true;
	return false;
}

/*
 * credentials
 *		The x-api-key header and the Authorization Bearer token, or NULL.
 */
static void
credentials(json_t *headers, const char **api_key, const char **bearer)
{
	json_t	   *k = json_object_get(headers, "x-api-key");
	json_t	   *a = json_object_get(headers, "authorization");

	*api_key = json_is_string(k) ? json_string_value(k) : NULL;
	*bearer = NULL;
	if (json_is_string(a) && strncasecmp(json_string_value(a), "Bearer ", 7) == 0)
		*bearer = json_string_value(a) + 7;
}

/*
 * run_operation
 *		Build the request model and call the route's SQL function.
 */
static void
run_operation(const GwRoute *route, char *raw_id, const GwHttpRequest *req,
			  GwResponse *resp)
{
	GwError		err;
	json_t	   *request;
	char	   *headers_text;
	char	   *request_text = NULL;
	char	   *result = NULL;
	GwRequestInfo info;

	gw_error_clear(&err);
	request = gw_parse_body(req->body, req->body_len, &err);
	if (request != NULL)
		request = gw_build_request(request, raw_id, req->query, &err);
	if (request == NULL)
	{
		gw_respond_error(resp, &err, req->path);
		return;
	}

	headers_text = json_dumps(req->headers, JSON_COMPACT);
	info.headers_json = headers_text ? headers_text : "{}";
	info.method = req->method;
	info.path = req->path;
	credentials(req->headers, &info.api_key, &info.bearer);

	if (route->kind == GW_ROUTE_BATCH_COMMIT)
		result = gw_commit_operations(route->function, request, &info, &err);
	else if (route->kind == GW_ROUTE_VERSION_CREATE || route->kind == GW_ROUTE_BATCH_CREATE)
		result = gw_commit_versions(route->function, request,
									route->kind == GW_ROUTE_BATCH_CREATE, &info, &err);
	else
	{
		request_text = json_dumps(request, JSON_COMPACT);
		if (request_text == NULL)
			gw_error_set(&err, GW_ERR_INTERNAL, "out of memory");
		else
			result = gw_db_call(route->function, request_text, &info, NULL, &err);
	}

	if (result != NULL && (route->kind == GW_ROUTE_BATCH_COMMIT ||
						   route->kind == GW_ROUTE_VERSION_CREATE ||
						   route->kind == GW_ROUTE_BATCH_CREATE))
		gw_feed_poke();			/* subscribers need not wait for the poll */

	if (result == NULL)
		gw_respond_error(resp, &err, req->path);
	else if (route->kind == GW_ROUTE_EXISTS)
	{
		/* existence is the status code; no body (catalog-rest-index.md) */
		resp->status = 200;
		free(result);
	}
	else
	{
		resp->status = 200;
		resp->body = result;
	}
	json_decref(request);
	free(request_text);
	free(headers_text);
}

/*
 * gw_dispatch
 *		Answer one request.
 */
void
gw_dispatch(const GwHttpRequest *req, GwResponse *resp)
{
	const GwRoute *route;
	char	   *raw_id = NULL;
	GwError		err;
	GwMatch		m;

	gw_error_clear(&err);
	memset(resp, 0, sizeof(*resp));
	m = gw_route_match(req->path, gw_method_bit(req->method), &route, &raw_id);
	resp->route = route;

	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_HEALTH)
	{
		resp->status = 200;
		resp->body = strdup("{\"status\":\"ok\"}");
		return;
	}
	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_READY)
	{
		if (gw_db_ping(&err))
		{
			resp->status = 200;
			resp->body = strdup("{\"status\":\"ready\"}");
		}
		else
			gw_respond_error(resp, &err, req->path);
		return;
	}

	if (!authenticated(req->headers))
	{
		gw_error_set(&err, GW_ERR_UNAUTHENTICATED, "missing or invalid API key");
		gw_respond_error(resp, &err, req->path);
		free(raw_id);
		return;
	}

	/* /metrics never touches the database (so not even --db-auth) */
	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_METRICS)
	{
		resp->body = gw_metrics_render();
		resp->status = resp->body ? 200 : 500;
		resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		free(raw_id);
		return;
	}
	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_EVENTS)
	{
		gw_feed_subscribe(req, resp);
		free(raw_id);
		return;
	}

	switch (m)
	{
		case GW_MATCH_NONE:
			gw_error_set(&err, GW_ERR_UNSUPPORTED, "no such route: %s %s", req->method, req->path);
			err.status = 404;
			gw_respond_error(resp, &err, req->path);
			break;
		case GW_MATCH_UNSUPPORTED:
			gw_error_set(&err, GW_ERR_UNSUPPORTED,
						 "%s is a data operation, which this catalog does not serve",
						 route ? route->operation : "this route");
			gw_respond_error(resp, &err, req->path);
			break;
		case GW_MATCH_METHOD:
			gw_error_set(&err, GW_ERR_UNSUPPORTED, "method %s is not allowed for %s",
						 req->method, route->operation);
			err.status = 405;
			gw_respond_error(resp, &err, req->path);
			resp->allow = (route->methods & GW_GET) ? "GET, POST" : "POST";
			break;
		case GW_MATCH_OK:
			run_operation(route, raw_id, req, resp);
			break;
	}
	free(raw_id);
}
