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
#include "client_paths.h"
#include "dispatch.h"
#include "feed.h"
#include "metrics.h"
#include "router.h"
#include "table_files.h"
#include "vend.h"

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
	const char *api_key;
	const char *bearer;

	if (gw_config.api_key == NULL)
		return true;
	gw_credentials(headers, &api_key, &bearer);
	return (api_key != NULL && secret_equal(api_key, gw_config.api_key)) ||
		(bearer != NULL && secret_equal(bearer, gw_config.api_key));
}

/*
 * gw_credentials
 *		The x-api-key header and the Authorization Bearer token, or NULL.
 */
void
gw_credentials(json_t *headers, const char **api_key, const char **bearer)
{
	json_t	   *k = json_object_get(headers, "x-api-key");
	json_t	   *a = json_object_get(headers, "authorization");

	*api_key = json_is_string(k) ? json_string_value(k) : NULL;
	*bearer = NULL;
	if (json_is_string(a) && strncasecmp(json_string_value(a), "Bearer ", 7) == 0)
		*bearer = json_string_value(a) + 7;
}

/*
 * build_call
 *		The request model and header texts of a route's call; false with
 *		resp filled when the request is malformed.
 */
static bool
build_call(const GwRoute *route, const char *raw_id, const GwHttpRequest *req,
		   GwResponse *resp, GwCall *call)
{
	GwError		err;

	gw_error_clear(&err);
	memset(call, 0, sizeof(*call));
	call->route = route;
	call->request = gw_parse_body(req->body, req->body_len, &err);
	if (call->request != NULL)
		call->request = gw_build_request(call->request, raw_id, req->query, &err);
	if (call->request == NULL)
	{
		gw_respond_error(resp, &err, req->path);
		return false;
	}
	call->headers_text = json_dumps(req->headers, JSON_COMPACT);
	call->info.headers_json = call->headers_text ? call->headers_text : "{}";
	call->info.method = req->method;
	call->info.path = req->path;
	gw_credentials(req->headers, &call->info.api_key, &call->info.bearer);
	return true;
}

/*
 * gw_call_text
 *		The request model of a call as JSON text (kept in the call), or
 *		NULL with err set.
 */
const char *
gw_call_text(GwCall *call, GwError *err)
{
	if (call->request_text == NULL)
		call->request_text = json_dumps(call->request, JSON_COMPACT);
	if (call->request_text == NULL)
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
	return call->request_text;
}

/*
 * gw_call_free
 *		Release what a call holds.
 */
void
gw_call_free(GwCall *call)
{
	json_decref(call->request);
	free(call->request_text);
	free(call->headers_text);
	memset(call, 0, sizeof(*call));
}

/*
 * gw_dispatch_finish
 *		Turn a call's result (malloc'd, taken over) or its error into the
 *		response, and release the call.
 */
void
gw_dispatch_finish(GwCall *call, char *result, const GwError *err,
				   const char *instance, GwResponse *resp)
{
	GwError		vend_err;
	json_t	   *res;
	const char *op = call->route->operation;

	if (result != NULL && (strcmp(op, "DeclareTable") == 0 || strcmp(op, "DescribeTable") == 0))
	{
		/* tables in buckets: endpoint, region and credentials (vend.c) */
		gw_error_clear(&vend_err);
		result = gw_vend_storage_options(call->request, result, &vend_err);
		if (result == NULL)
			err = &vend_err;
	}
	else if (result != NULL && (strcmp(op, "DescribeTableVersion") == 0 ||
								strcmp(op, "ListTableVersions") == 0) &&
			 (res = json_loads(result, 0, NULL)) != NULL)
	{
		/* a manifest gone from disk: 404, the row retired (table_files.c) */
		gw_error_clear(&vend_err);
		if (strcmp(op, "DescribeTableVersion") == 0 &&
			!gw_describe_version_check(call->request, &call->info, res, &vend_err))
		{
			free(result);
			result = NULL;
			err = &vend_err;
		}
		else
			result = gw_client_paths(res, result);	/* one spelling: client_paths.c */
		json_decref(res);
	}
	if (result == NULL)
		gw_respond_error(resp, err, instance);
	else if (call->route->kind == GW_ROUTE_EXISTS)
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
	gw_call_free(call);
}

/*
 * run_call
 *		Run a route's call here, in this thread: the commits with their
 *		manifest files (commit.c), every other route as its statement.
 */
static void
run_call(GwCall *call, const GwHttpRequest *req, GwResponse *resp)
{
	GwRouteKind kind = call->route->kind;
	const char *function = call->route->function;
	char	   *result = NULL;
	const char *text;
	GwError		err;

	gw_error_clear(&err);
	if (kind == GW_ROUTE_BATCH_COMMIT)
		result = gw_commit_operations(function, call->request, &call->info, &err);
	else if (kind == GW_ROUTE_VERSION_CREATE || kind == GW_ROUTE_BATCH_CREATE)
		result = gw_commit_versions(function, call->request,
									kind == GW_ROUTE_BATCH_CREATE, &call->info, &err);
	else if (kind == GW_ROUTE_TABLE_DROP)
		result = gw_drop_table(function, call->request, &call->info, &err);	/* table_files.c */
	else if (kind == GW_ROUTE_TABLE_REGISTER)
		result = gw_register_table(function, call->request, &call->info, &err);	/* table_files.c */
	else if ((text = gw_call_text(call, &err)) != NULL)
		result = gw_db_call(function, text, &call->info, NULL, &err);

	if (result != NULL && (kind == GW_ROUTE_BATCH_COMMIT ||
						   kind == GW_ROUTE_VERSION_CREATE ||
						   kind == GW_ROUTE_BATCH_CREATE))
		gw_feed_poke();			/* subscribers need not wait for the poll */
	gw_dispatch_finish(call, result, &err, req->path, resp);
}

/*
 * blocks
 *		Routes that a loop does not answer itself.  It answers the
 *		reads, whose statements never wait for another transaction's row
 *		locks, so one of them cannot hold up the others behind it in the
 *		loop's pipeline.  The rest wait on something: the writes on
 *		locks, the commits also on their manifest files, the readiness
 *		probe on a pooled connection, the change feed on commits; and,
 *		with --db-auth, every call on its role switch, a round trip of its
 *		own.
 */
static bool
blocks(GwRouteKind kind)
{
	switch (kind)
	{
		case GW_ROUTE_READ:
		case GW_ROUTE_EXISTS:
			/* STS vending makes DescribeTable wait on the STS endpoint */
			return gw_config.db_auth || strcmp(gw_config.vend_credentials, "sts") == 0;
		case GW_ROUTE_METRICS:
		case GW_ROUTE_HEALTH:
			return false;
		default:
			return true;
	}
}

/*
 * gw_dispatch_begin
 *		Route a request.  GW_DISPATCH_DONE: resp is its answer.
 *		GW_DISPATCH_CALL: call is the route's one statement, to be run
 *		(gw_db_call, or a loop's pipeline) and given to
 *		gw_dispatch_finish.  GW_DISPATCH_THREAD (only when may_block is
 *		false): the request needs a worker, gw_dispatch; nothing was
 *		done.  With may_block, readiness, the change feed and the
 *		commits are answered here, so the result is never THREAD.
 */
GwDispatchStep
gw_dispatch_begin(const GwHttpRequest *req, GwResponse *resp, GwCall *call,
				  bool may_block)
{
	const GwRoute *route;
	char	   *raw_id = NULL;
	GwError		err;
	GwMatch		m;
	GwDispatchStep step = GW_DISPATCH_DONE;

	gw_error_clear(&err);
	memset(resp, 0, sizeof(*resp));
	m = gw_route_match(req->path, gw_method_bit(req->method), &route, &raw_id);
	resp->route = route;

	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_HEALTH)
	{
		resp->status = 200;
		resp->body = strdup("{\"status\":\"ok\"}");
		free(raw_id);
		return GW_DISPATCH_DONE;
	}
	if (!may_block && m == GW_MATCH_OK && blocks(route->kind))
	{
		free(raw_id);
		return GW_DISPATCH_THREAD;
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
		free(raw_id);
		return GW_DISPATCH_DONE;
	}

	if (!authenticated(req->headers))
	{
		gw_error_set(&err, GW_ERR_UNAUTHENTICATED, "missing or invalid API key");
		gw_respond_error(resp, &err, req->path);
		free(raw_id);
		return GW_DISPATCH_DONE;
	}

	/* /metrics never touches the database (so not even --db-auth) */
	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_METRICS)
	{
		resp->body = gw_metrics_render();
		resp->status = resp->body ? 200 : 500;
		resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		free(raw_id);
		return GW_DISPATCH_DONE;
	}
	if (m == GW_MATCH_OK && route->kind == GW_ROUTE_EVENTS)
	{
		gw_feed_subscribe(req, resp);
		free(raw_id);
		return GW_DISPATCH_DONE;
	}

	switch (m)
	{
		case GW_MATCH_NONE:
			/* Unsupported, with the status of that code (406), not 404:
			 * a client reading the status must not think "not found". */
			gw_error_set(&err, GW_ERR_UNSUPPORTED, "no such route: %s %s", req->method, req->path);
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
			if (!build_call(route, raw_id, req, resp, call))
				break;
			if (route->kind == GW_ROUTE_READ || route->kind == GW_ROUTE_EXISTS ||
				route->kind == GW_ROUTE_CATALOG)
				step = GW_DISPATCH_CALL;
			else
				run_call(call, req, resp);
			break;
	}
	free(raw_id);
	return step;
}

/*
 * gw_dispatch
 *		Answer one request in this thread.
 */
void
gw_dispatch(const GwHttpRequest *req, GwResponse *resp)
{
	GwCall		call;

	if (gw_dispatch_begin(req, resp, &call, true) == GW_DISPATCH_CALL)
		run_call(&call, req, resp);
}
