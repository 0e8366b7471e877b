/*-------------------------------------------------------------------------
 *
 * router.c
 *	  The REST route table, and the matching of request paths against it.
 *	  The routes of the namespace are the extension's: at start the
 *	  gateway loads lance_namespace.rest_routes (path, methods, operation,
 *	  binding, and whether the binding only reads) and
 *	  rest_query_parameters (db.c) and adds each row here, so a route is
 *	  defined once, next to its binding.  Its own
 *	  routes (health, readiness, metrics, the change feed) and the data
 *	  operations it answers with 406 are here.  The {id} segment is
 *	  returned still percent-encoded; the caller decodes it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "router.h"

/* The routes the gateway serves itself, without a binding. */
static const GwRoute own_routes[] = {
	{"/health", GW_GET, GW_ROUTE_HEALTH, NULL, "Health", {NULL}, 0},
	{"/ready", GW_GET, GW_ROUTE_READY, NULL, "Ready", {NULL}, 0},
	{"/metrics", GW_GET, GW_ROUTE_METRICS, NULL, "Metrics", {NULL}, 0},
	{"/v1/events", GW_GET, GW_ROUTE_EVENTS, NULL, "ChangeFeed", {NULL}, 0},
};

/*
 * The operations around whose binding call the gateway handles files or
 * objects (commit.c, table_files.c); every other route of the extension
 * is its binding call alone, a read or a write as the binding declares.
 */
static const struct
{
	const char *operation;
	GwRouteKind kind;
}			file_operations[] = {
	{"CreateTableVersion", GW_ROUTE_VERSION_CREATE},
	{"BatchCreateTableVersions", GW_ROUTE_BATCH_CREATE},
	{"BatchCommitTables", GW_ROUTE_BATCH_COMMIT},
	{"DropTable", GW_ROUTE_TABLE_DROP},
	{"RegisterTable", GW_ROUTE_TABLE_REGISTER},
};

static int	split_path(char *copy, char **seg, int maxseg);
static bool split_pattern(GwRoute *route);

/* own_routes, then the extension's; built once at start, then read-only */
static GwRoute *routes;
static int	nroutes;

/* The query parameters that carry request fields, and their types. */
static GwQueryParameter *query_parameters;
static int	nquery_parameters;

/*
 * Table actions (first segment after /v1/table/{id}/) that are data
 * operations, served by a Lance data server rather than a catalog; the
 * tags/ and branches/ entries catch their sub-routes not listed above.
 */
static const char *const unsupported_table_actions[] = {
	"create", "insert", "merge_insert", "update", "delete", "query",
	"count_rows", "explain_plan", "analyze_plan", "add_columns",
	"alter_columns", "drop_columns", "update_field_metadata",
	"backfill_column", "stats", "restore", "schema_metadata",
	"create_index", "create_scalar_index", "index", "tags", "branches",
	NULL
};

/* Top-level collections that are entirely data operations. */
static const char *const unsupported_collections[] = {
	"transaction", "materialized_view", NULL
};

/*
 * gw_method_bit
 *		GW_GET/GW_POST for an HTTP method name, 0 for any other.
 */
int
gw_method_bit(const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return GW_GET;
	if (strcmp(method, "POST") == 0)
		return GW_POST;
	return 0;
}

/*
 * valid_binding
 *		Whether name can be a binding's name in a call statement
 *		(lance_namespace.<name>($1)): lower-case letters, digits and '_'.
 */
static bool
valid_binding(const char *name)
{
	if (name[0] == '\0' || strlen(name) >= 60)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/*
 * methods_of
 *		GW_GET/GW_POST bits of a text[] of method names ("{GET,POST}"), or
 *		0 when one is neither.
 */
static int
methods_of(const char *array)
{
	char	   *copy = strdup(array);
	int			bits = 0;
	char	   *save = NULL;

	if (copy == NULL)
		return 0;
	for (char *m = strtok_r(copy, "{,}", &save); m; m = strtok_r(NULL, "{,}", &save))
	{
		int			bit = strcmp(m, "HEAD") == 0 ? 0 : gw_method_bit(m);

		if (bit == 0)
		{
			bits = 0;
			break;
		}
		bits |= bit;
	}
	free(copy);
	return bits;
}

/*
 * route_kind
 *		How the gateway serves an operation of the extension: with its
 *		files, or as the binding call that the binding declares.
 */
static GwRouteKind
route_kind(const char *operation, bool read_only, bool no_body)
{
	for (size_t i = 0; i < sizeof(file_operations) / sizeof(file_operations[0]); i++)
		if (strcmp(file_operations[i].operation, operation) == 0)
			return file_operations[i].kind;
	if (read_only)
		return no_body ? GW_ROUTE_EXISTS : GW_ROUTE_READ;
	return GW_ROUTE_CATALOG;
}

/*
 * gw_route_add
 *		Add a route of the extension's rest_routes: its path, its methods
 *		as a text[] ("{GET,POST}"), its operation, its binding and what
 *		the binding declares.  False, with err set, for a row the gateway
 *		cannot serve.  Called at start, before any request is served.
 */
bool
gw_route_add(const char *path, const char *methods, const char *operation,
			 const char *binding, bool read_only, bool no_body, GwError *err)
{
	int			nown = (int) (sizeof(own_routes) / sizeof(own_routes[0]));
	GwRoute    *grown;
	GwRoute    *r;

	if (routes == NULL)
	{
		if ((routes = calloc(nown, sizeof(GwRoute))) == NULL)
			goto oom;
		memcpy(routes, own_routes, sizeof(own_routes));
		for (int i = 0; i < nown; i++)
			if (!split_pattern(&routes[i]))
				goto oom;
		nroutes = nown;
	}
	if ((grown = realloc(routes, (nroutes + 1) * sizeof(GwRoute))) == NULL)
		goto oom;
	routes = grown;
	r = &routes[nroutes];
	r->methods = methods_of(methods);
	r->kind = route_kind(operation, read_only, no_body);
	if (r->methods == 0 || !valid_binding(binding) || path[0] != '/')
	{
		gw_error_set(err, GW_ERR_INTERNAL, "lance_namespace.rest_routes: cannot serve %s %s (%s)",
					 methods, path, binding);
		return false;
	}
	r->pattern = strdup(path);
	r->operation = strdup(operation);
	r->function = strdup(binding);
	if (r->pattern == NULL || r->operation == NULL || r->function == NULL)
		goto oom;
	if (!split_pattern(r))
	{
		gw_error_set(err, GW_ERR_INTERNAL, "lance_namespace.rest_routes: cannot serve %s (%s)",
					 path, binding);
		return false;
	}
	nroutes++;
	return true;

oom:
	gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
	return false;
}

/*
 * gw_query_parameter_add
 *		Add a query parameter of the extension's rest_query_parameters and
 *		its type ("string", "integer" or "boolean").  False, with err set,
 *		for another type.
 */
bool
gw_query_parameter_add(const char *name, const char *type, GwError *err)
{
	GwQueryParameter *grown;
	GwQueryParameter *q;

	grown = realloc(query_parameters, (nquery_parameters + 1) * sizeof(GwQueryParameter));
	if (grown == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return false;
	}
	query_parameters = grown;
	q = &query_parameters[nquery_parameters];
	if (strcmp(type, "string") == 0)
		q->type = GW_QUERY_STRING;
	else if (strcmp(type, "integer") == 0)
		q->type = GW_QUERY_INTEGER;
	else if (strcmp(type, "boolean") == 0)
		q->type = GW_QUERY_BOOLEAN;
	else
	{
		gw_error_set(err, GW_ERR_INTERNAL, "query parameter %s has an unknown type %s", name, type);
		return false;
	}
	if ((q->name = strdup(name)) == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return false;
	}
	nquery_parameters++;
	return true;
}

/*
 * gw_query_parameter
 *		The i-th query parameter that carries a request field, or NULL
 *		past the last.
 */
const GwQueryParameter *
gw_query_parameter(int i)
{
	return i >= 0 && i < nquery_parameters ? &query_parameters[i] : NULL;
}

/*
 * gw_route_count
 *		Number of entries of the route table (route indexes are
 *		0 .. gw_route_count() - 1).
 */
int
gw_route_count(void)
{
	return nroutes;
}

/*
 * gw_route_index
 *		Index of a route table entry, or -1 for NULL.
 */
int
gw_route_index(const GwRoute *route)
{
	if (route == NULL || routes == NULL || route < routes || route >= routes + nroutes)
		return -1;
	return (int) (route - routes);
}

/*
 * gw_route_pattern
 *		The pattern of route index (e.g. "/v1/table/{id}/describe").
 */
const char *
gw_route_pattern(int index)
{
	return index >= 0 && index < gw_route_count() ? routes[index].pattern : NULL;
}

/*
 * split_path
 *		Split "/a/b/c" into segments (in place in a copy).  One trailing
 *		slash is ignored.  Returns the number of segments, or -1 if the
 *		path does not start with '/' or has too many segments.
 */
static int
split_path(char *copy, char **seg, int maxseg)
{
	size_t		len = strlen(copy);
	int			n = 0;
	char	   *p;

	if (copy[0] != '/')
		return -1;
	if (len > 1 && copy[len - 1] == '/')
		copy[len - 1] = '\0';
	if (copy[1] == '\0')
		return 0;
	p = copy + 1;
	for (;;)
	{
		char	   *slash = strchr(p, '/');

		if (n >= maxseg)
			return -1;
		seg[n++] = p;
		if (slash == NULL)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	return n;
}

/*
 * split_pattern
 *		Split a route's pattern into its segments, once, in a copy that
 *		lives as long as the route.  False for a pattern that cannot be
 *		split (out of memory, too many segments).
 */
static bool
split_pattern(GwRoute *route)
{
	char	   *copy = strdup(route->pattern);

	route->nseg = copy ? split_path(copy, route->seg, GW_ROUTE_MAX_SEGMENTS) : -1;
	if (route->nseg < 0)
		free(copy);
	return route->nseg >= 0;
}

/*
 * match_one
 *		Match path segments against a route's pattern (split when the
 *		route was added, not per request); on success *id points at
 *		the {id} segment (or stays NULL if the pattern has none).
 */
static bool
match_one(const GwRoute *route, char **seg, int nseg, const char **id)
{
	if (route->nseg != nseg)
		return false;
	*id = NULL;
	for (int i = 0; i < nseg; i++)
	{
		if (strcmp(route->seg[i], "{id}") == 0)
			*id = seg[i];
		else if (strcmp(route->seg[i], seg[i]) != 0)
			return false;
	}
	return true;
}

/*
 * in_list
 *		True if s is one of the NULL-terminated list.
 */
static bool
in_list(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/*
 * gw_route_match
 *		Find the route of a raw request path.  On GW_MATCH_OK, *route is
 *		set and *raw_id is a malloc'd copy of the {id} segment (or NULL).
 *		GW_MATCH_METHOD and GW_MATCH_UNSUPPORTED also set *route when a
 *		route entry is known.
 */
GwMatch
gw_route_match(const char *path, int method, const GwRoute **route, char **raw_id)
{
	char	   *copy = strdup(path);
	char	   *seg[64];
	int			nseg;
	GwMatch		result = GW_MATCH_NONE;

	*route = NULL;
	*raw_id = NULL;
	if (copy == NULL)
		return GW_MATCH_NONE;
	nseg = split_path(copy, seg, 64);
	if (nseg < 0)
	{
		free(copy);
		return GW_MATCH_NONE;
	}

	for (int i = 0; i < nroutes; i++)
	{
		const char *id = NULL;

		if (!match_one(&routes[i], seg, nseg, &id))
			continue;
		*route = &routes[i];
		if (routes[i].kind == GW_ROUTE_UNSUPPORTED)
			result = GW_MATCH_UNSUPPORTED;
		else if ((routes[i].methods & method) == 0)
			result = GW_MATCH_METHOD;
		else
		{
			result = GW_MATCH_OK;
			if (id != NULL)
				*raw_id = strdup(id);
		}
		free(copy);
		return result;
	}

	/* Data operations of the spec that this catalog does not serve. */
	if (nseg >= 2 && strcmp(seg[0], "v1") == 0)
	{
		if (nseg >= 4 && strcmp(seg[1], "table") == 0 &&
			in_list(seg[3], unsupported_table_actions))
			result = GW_MATCH_UNSUPPORTED;
		else if (nseg >= 3 && in_list(seg[1], unsupported_collections))
			result = GW_MATCH_UNSUPPORTED;
	}
	free(copy);
	return result;
}
