/*-------------------------------------------------------------------------
 *
 * router.h
 *	  The way of a request: the REST route table (which SQL function
 *	  serves which path, loaded from the extension at start), the request
 *	  model and the decoding of request targets and string identifiers
 *	  (router.c), and the dispatch of a request to its call and response
 *	  (dispatch.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_ROUTER_H
#define LANCE_GATEWAY_ROUTER_H

#include <jansson.h>

#include "db.h"

#define GW_MAX_JSON_DEPTH 64
#define GW_MAX_ROUTES	64		/* the gateway's own and the extension's */

#define GW_GET		1
#define GW_POST		2

typedef enum GwRouteKind
{
	GW_ROUTE_READ,				/* call rest_<op> (reads only), return its JSON */
	GW_ROUTE_EXISTS,			/* call rest_<op> (reads only), 200, no body */
	GW_ROUTE_CATALOG,			/* call rest_<op> (writes), return its JSON */
	GW_ROUTE_VERSION_CREATE,	/* rest_create_table_version + manifest copy */
	GW_ROUTE_BATCH_CREATE,		/* rest_batch_create_table_versions + copies */
	GW_ROUTE_BATCH_COMMIT,		/* rest_batch_commit_tables + copies */
	GW_ROUTE_TABLE_DROP,		/* rest_drop_table, then the files go */
	GW_ROUTE_TABLE_REGISTER,	/* rest_register_table + listed versions */
	GW_ROUTE_TABLE_DECLARE,		/* rest_declare_table, no manifests there */
	GW_ROUTE_BRANCH_CREATE,		/* rest_create_table_branch, none there */
	GW_ROUTE_BRANCH_DELETE,		/* rest_delete_table_branch, then its manifests go */
	GW_ROUTE_EVENTS,			/* change feed (Server-Sent Events) */
	GW_ROUTE_METRICS,			/* Prometheus metrics, no database */
	GW_ROUTE_HEALTH,			/* liveness, no database */
	GW_ROUTE_READY				/* readiness, database reachable */
} GwRouteKind;

typedef struct GwRoute
{
	const char *pattern;		/* e.g. "/v1/table/{id}/describe" */
	int			methods;		/* GW_GET | GW_POST */
	GwRouteKind kind;
	const char *function;		/* lance_namespace.<function>(jsonb) */
	const char *operation;		/* spec operation name, for messages */
	bool		client_paths;	/* answers are table versions (rest_routes) */
	const char *last;			/* its last segment (NULL: {id}, or match_one) */
} GwRoute;

typedef enum GwMatch
{
	GW_MATCH_OK,
	GW_MATCH_METHOD,			/* path known, method not allowed */
	GW_MATCH_NONE
} GwMatch;

extern GwRoute gw_routes[GW_MAX_ROUTES];
extern int	gw_nroutes;

extern bool gw_route_add(const char *path, int methods, const char *operation,
						 const char *binding, bool read_only, bool no_body, bool client_paths,
						 GwError *err);
extern bool gw_binding_client_paths(const char *binding);
extern bool gw_query_parameter_add(const char *name, const char *type, GwError *err);
extern GwMatch gw_route_match(const char *path, int method,
							  const GwRoute **route, char **raw_id);
extern int	gw_method_bit(const char *method);

extern char *gw_percent_decode(const char *s, size_t len, bool plus_is_space, GwError *err);
extern json_t *gw_parse_id(const char *id, const char *delimiter, GwError *err);
extern bool gw_valid_utf8(const char *s, size_t len);
extern json_t *gw_parse_body(const char *body, size_t len, GwError *err);
extern bool gw_parse_query(const char *query, size_t len, json_t *obj, GwError *err);
extern json_t *gw_build_request(json_t *body, const char *raw_id,
								json_t *query, GwError *err);

/* dispatch.c: from a parsed HTTP request to a response, independent of the HTTP library */
typedef struct GwHttpRequest
{
	const char *method;
	const char *path;			/* raw (still percent-encoded) path */
	json_t	   *query;			/* decoded query parameters, name -> string */
	json_t	   *headers;		/* lower-cased header name -> value */
	const char *body;
	size_t		body_len;
} GwHttpRequest;

typedef struct GwResponse
{
	int			status;
	char	   *body;			/* malloc'd, NULL for none */
	const char *allow;			/* Allow header for 405, or NULL */
	const char *content_type;	/* NULL: application/json */
	const GwRoute *route;		/* matched route entry (metrics), or NULL */
	void	   *stream;			/* change-feed subscriber (feed.c), or NULL */
} GwResponse;

/* A route's call: its request model and the request facts SQL sees. */
typedef struct GwCall
{
	const GwRoute *route;
	json_t	   *request;		/* the request model */
	char	   *request_text;	/* its text, once gw_call_text made it */
	char	   *headers_text;	/* the headers as JSON (request.headers) */
	GwRequestInfo info;			/* points into the call and the request */
} GwCall;

typedef enum GwDispatchStep
{
	GW_DISPATCH_DONE,			/* the response is ready */
	GW_DISPATCH_CALL,			/* a read: the loop runs the call's statement */
	GW_DISPATCH_WORK			/* a worker runs the call: gw_dispatch_run */
} GwDispatchStep;

extern GwDispatchStep gw_dispatch_begin(const GwHttpRequest *req, GwResponse *resp,
										GwCall *call);
extern void gw_dispatch_run(GwCall *call, const GwHttpRequest *req, GwResponse *resp);
extern void gw_dispatch_finish(GwCall *call, char *result, const GwError *err,
							   GwResponse *resp);
extern const char *gw_call_text(GwCall *call, GwError *err);
extern void gw_call_free(GwCall *call);
extern void gw_respond_error(GwResponse *resp, const GwError *err, const char *instance);

#endif							/* LANCE_GATEWAY_ROUTER_H */
