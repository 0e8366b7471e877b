/*-------------------------------------------------------------------------
 *
 * router.h
 *	  The REST route table: which SQL function serves which path, loaded
 *	  from the extension at start.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_ROUTER_H
#define LANCE_GATEWAY_ROUTER_H

#include "gateway.h"

#define GW_GET		0x01
#define GW_POST		0x02

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
	GW_ROUTE_READY,				/* readiness, database reachable */
	GW_ROUTE_UNSUPPORTED		/* data operation: 406 code 0 */
} GwRouteKind;

#define GW_ROUTE_MAX_SEGMENTS 16

typedef struct GwRoute
{
	const char *pattern;		/* e.g. "/v1/table/{id}/describe" */
	int			methods;		/* GW_GET | GW_POST */
	GwRouteKind kind;
	const char *function;		/* lance_namespace.<function>(jsonb) */
	const char *operation;		/* spec operation name, for messages */
	/* the pattern's segments, split once when the route is added */
	char	   *seg[GW_ROUTE_MAX_SEGMENTS];
	int			nseg;
} GwRoute;

/* The JSON type that a query parameter becomes in the request model. */
typedef enum GwQueryType
{
	GW_QUERY_STRING,
	GW_QUERY_INTEGER,
	GW_QUERY_BOOLEAN
} GwQueryType;

typedef struct GwQueryParameter
{
	const char *name;
	GwQueryType type;
} GwQueryParameter;

typedef enum GwMatch
{
	GW_MATCH_OK,
	GW_MATCH_METHOD,			/* path known, method not allowed */
	GW_MATCH_UNSUPPORTED,		/* known data operation */
	GW_MATCH_NONE
} GwMatch;

extern bool gw_route_add(const char *path, const char *methods, const char *operation,
						 const char *binding, bool read_only, bool no_body, GwError *err);
extern bool gw_query_parameter_add(const char *name, const char *type, GwError *err);
extern const GwQueryParameter *gw_query_parameter(int i);
extern GwMatch gw_route_match(const char *path, int method,
							  const GwRoute **route, char **raw_id);
extern int	gw_method_bit(const char *method);
extern int	gw_route_count(void);
extern int	gw_route_index(const GwRoute *route);
extern const char *gw_route_pattern(int index);

#endif							/* LANCE_GATEWAY_ROUTER_H */
