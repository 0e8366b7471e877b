/*-------------------------------------------------------------------------
 *
 * router.h
 *	  The REST route table (which SQL function serves which path, loaded
 *	  from the extension at start), the request model, and the decoding of
 *	  request targets and string identifiers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_ROUTER_H
#define LANCE_GATEWAY_ROUTER_H

#include <jansson.h>

#include "gateway.h"

#define GW_MAX_JSON_DEPTH 64

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
} GwRoute;

typedef enum GwMatch
{
	GW_MATCH_OK,
	GW_MATCH_METHOD,			/* path known, method not allowed */
	GW_MATCH_UNSUPPORTED,		/* a data operation: 406 code 0 */
	GW_MATCH_NONE
} GwMatch;

/* the route table: the gateway's own routes, then the extension's */
extern GwRoute *gw_routes;
extern int	gw_nroutes;

extern bool gw_route_add(const char *path, int methods, const char *operation,
						 const char *binding, bool read_only, bool no_body, GwError *err);
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

#endif							/* LANCE_GATEWAY_ROUTER_H */
