/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  Route a request, check its credentials, build its call and run it,
 *	  or answer the gateway's own routes and the requests no route serves.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "commit.h"
#include "db.h"
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
	resp->status = err->status ? err->status : lance_http_status_for_code(err->code);
	resp->body = gw_error_body(err, instance);
}

/*
 * respond_ok
 *		A 200 answer with a body (malloc'd, taken over).
 */
static void
respond_ok(GwResponse *resp, char *body)
{
	resp->status = 200;
	resp->body = body;
}

/*
 * is_api_key
 *		Whether given (NULL: none) is --api-key; the bytes are compared in
 *		constant time (OpenSSL's CRYPTO_memcmp).
 */
static bool
is_api_key(const char *given)
{
	size_t		len = strlen(gw_config.api_key);

	return given != NULL && strlen(given) == len &&
		CRYPTO_memcmp(given, gw_config.api_key, len) == 0;
}

/*
 * build_call
 *		A route's call; false with err set for a malformed request.
 */
static bool
build_call(const char *raw_id, const GwHttpRequest *req, GwCall *call, GwError *err)
{
	call->request = gw_parse_body(req->body, req->body_len, err);
	if (call->request != NULL)
		call->request = gw_build_request(call->request, raw_id, req->query, err);
	if (call->request == NULL)
		return false;
	call->headers_text = json_dumps(req->headers, JSON_COMPACT);
	call->info.headers_json = call->headers_text ? call->headers_text : "{}";
	call->info.method = req->method;
	call->info.path = req->path;
	return true;
}

/*
 * gw_call_text
 *		The call's request model as JSON text (kept), or NULL with err set.
 */
const char *
gw_call_text(GwCall *call, GwError *err)
{
	if (call->request_text == NULL)
		call->request_text = json_dumps(call->request, JSON_COMPACT);
	if (call->request_text == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
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
 *		The response of a call's result (malloc'd, taken) or error.
 */
void
gw_dispatch_finish(GwCall *call, char *result, const GwError *err, GwResponse *resp)
{
	const char *op = call->route->operation;
	GwError		own;

	gw_error_clear(&own);
	/* tables in buckets: endpoint, region and credentials (vend.c) */
	if (result != NULL && (strcmp(op, "DeclareTable") == 0 || strcmp(op, "DescribeTable") == 0))
		result = gw_vend_storage_options(call->request, result, &own);
	/*
	 * a described version's manifest gone from storage: 404, the row
	 * retired; listed versions whose manifests are gone: left out
	 */
	else if (result != NULL && call->route->client_paths)
	{
		const char *path = result + strlen(result) + 1; /* db.c's call_value */
		const char *number = path + strlen(path) + 1;
		const char *listed = number + strlen(number) + 1;

		if ((path[0] != '\0' &&
			 !gw_describe_version_check(call->request, &call->info, path,
										strtoll(number, NULL, 10), &own)) ||
			(listed[0] != '\0' &&
			 !gw_list_versions_check(call->request, &call->info, listed, &result, &own)))
		{
			free(result);
			result = NULL;
		}
	}
	if (result == NULL)
		gw_respond_error(resp, own.code >= 0 ? &own : err, call->info.path);
	else if (call->route->kind == GW_ROUTE_EXISTS)
	{
		/* existence is the status code; no body (catalog-rest-index.md) */
		respond_ok(resp, NULL);
		free(result);
	}
	else
		respond_ok(resp, result);
	gw_call_free(call);
}

/*
 * gw_dispatch_begin
 *		Route a request, in its loop.  GW_DISPATCH_DONE: resp is its
 *		answer.  GW_DISPATCH_CALL: call is a read's statement, for the
 *		loop's pipeline (pipeline.c) and gw_dispatch_finish.
 *		GW_DISPATCH_WORK: a worker is to run call (gw_dispatch_run).
 */
GwDispatchStep
gw_dispatch_begin(const GwHttpRequest *req, GwResponse *resp, GwCall *call)
{
	const char *auth = json_string_value(json_object_get(req->headers, "authorization"));
	const GwRoute *route;
	char	   *raw_id = NULL;
	GwError		err;
	GwMatch		m;
	GwRouteKind kind;
	GwDispatchStep step = GW_DISPATCH_DONE;

	gw_error_clear(&err);
	memset(resp, 0, sizeof(*resp));
	memset(call, 0, sizeof(*call));
	/* the credentials: the x-api-key header and the Authorization Bearer token */
	call->info.api_key = json_string_value(json_object_get(req->headers, "x-api-key"));
	call->info.bearer = auth && strncasecmp(auth, "Bearer ", 7) == 0 ? auth + 7 : NULL;
	m = gw_route_match(req->path, gw_method_bit(req->method), &route, &raw_id);
	resp->route = call->route = route;
	kind = m == GW_MATCH_OK ? route->kind : GW_ROUTE_CATALOG;
	if (m == GW_MATCH_OK && kind == GW_ROUTE_HEALTH)
		respond_ok(resp, strdup("{\"status\":\"ok\"}"));
	else if (m == GW_MATCH_OK && kind == GW_ROUTE_READY)
		step = GW_DISPATCH_WORK;
	/* --api-key: x-api-key: KEY or Authorization: Bearer KEY */
	else if (gw_config.api_key != NULL && !is_api_key(call->info.api_key) &&
			 !is_api_key(call->info.bearer))
		gw_error_set(&err, LANCE_UNAUTHENTICATED, "missing or invalid API key");
	else if (m == GW_MATCH_NONE)
		/* code 0 has status 406, not 404: a client must not think "not found" */
		gw_error_set(&err, LANCE_UNSUPPORTED, "no such route: %s %s (this catalog serves no "
					 "data operations)", req->method, req->path);
	else if (m == GW_MATCH_METHOD)
	{
		gw_error_set(&err, LANCE_UNSUPPORTED, "method %s is not allowed for %s",
					 req->method, route->operation);
		err.status = 405;
		resp->allow = route->methods == GW_GET ? "GET" :
			route->methods == GW_POST ? "POST" : "GET, POST";
	}
	else if (kind == GW_ROUTE_METRICS)
	{
		/* never the database (so not even --db-auth) */
		resp->body = gw_metrics_render();
		resp->status = resp->body ? 200 : 500;
		resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	}
	else if (kind == GW_ROUTE_EVENTS && !gw_config.db_auth)
		gw_feed_subscribe(req, &call->info, resp);
	else if (kind == GW_ROUTE_EVENTS)
		step = GW_DISPATCH_WORK;
	/*
	 * reads, which never wait for row locks, go down the loop's pipeline,
	 * unless --db-auth's role (a round trip), STS vending or, under a
	 * bucket root, the listing of a version list's manifests makes them wait
	 */
	else if (build_call(raw_id, req, call, &err))
		step = (kind == GW_ROUTE_READ || kind == GW_ROUTE_EXISTS) && !gw_config.db_auth &&
			strcmp(gw_config.vend_credentials, "sts") != 0 &&
			!(gw_storage_s3_root() != NULL && strcmp(route->operation, "ListTableVersions") == 0) ?
			GW_DISPATCH_CALL : GW_DISPATCH_WORK;
	if (err.code >= 0)
		gw_respond_error(resp, &err, req->path);
	free(raw_id);
	return step;
}

/*
 * gw_dispatch_run
 *		At a worker: run what gw_dispatch_begin left to it (or a read the
 *		loop's pipeline gave back), with its files if it has any.
 */
void
gw_dispatch_run(GwCall *call, const GwHttpRequest *req, GwResponse *resp)
{
	GwRouteKind kind = call->route->kind;
	const char *function = call->route->function;
	char	   *result = NULL;
	const char *text;
	GwError		err;

	gw_error_clear(&err);
	if (kind == GW_ROUTE_READY && gw_db_ping(&err))
		respond_ok(resp, strdup("{\"status\":\"ready\"}"));
	else if (kind == GW_ROUTE_READY)
		gw_respond_error(resp, &err, req->path);
	else if (kind == GW_ROUTE_EVENTS)
		gw_feed_subscribe(req, &call->info, resp);
	if (kind == GW_ROUTE_READY || kind == GW_ROUTE_EVENTS)
		return;
	if (kind == GW_ROUTE_VERSION_CREATE || kind == GW_ROUTE_BATCH_CREATE ||
		kind == GW_ROUTE_BATCH_COMMIT)
		result = gw_commit(function, call->request, kind, &call->info, &err);
	else if (kind == GW_ROUTE_TABLE_DROP)
		result = gw_drop_table(function, call->request, &call->info, &err);
	else if (kind == GW_ROUTE_TABLE_REGISTER)
		result = gw_register_table(function, call->request, &call->info, &err);
	else if (kind == GW_ROUTE_TABLE_DECLARE)
		result = gw_declare_table(function, call->request, &call->info, &err);
	else if (kind == GW_ROUTE_BRANCH_CREATE || kind == GW_ROUTE_BRANCH_DELETE)
		result = gw_table_branch(function, call->request, kind == GW_ROUTE_BRANCH_CREATE,
								 &call->info, &err);
	else if ((text = gw_call_text(call, &err)) != NULL)
		result = gw_db_call(function, text, &call->info, NULL, &err);
	gw_dispatch_finish(call, result, &err, resp);
}
