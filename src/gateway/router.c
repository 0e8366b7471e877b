/*-------------------------------------------------------------------------
 *
 * router.c
 *	  Matching of request paths against the REST route table.  The {id}
 *	  segment is returned still percent-encoded; the caller decodes it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "router.h"

#define GP (GW_GET | GW_POST)

static const GwRoute routes[] = {
	{"/health", GW_GET, GW_ROUTE_HEALTH, NULL, "Health"},
	{"/ready", GW_GET, GW_ROUTE_READY, NULL, "Ready"},
	{"/metrics", GW_GET, GW_ROUTE_METRICS, NULL, "Metrics"},
	{"/v1/events", GW_GET, GW_ROUTE_EVENTS, NULL, "ChangeFeed"},

	{"/v1/namespace/{id}/create", GW_POST, GW_ROUTE_CATALOG, "rest_create_namespace", "CreateNamespace"},
	{"/v1/namespace/{id}/list", GP, GW_ROUTE_READ, "rest_list_namespaces", "ListNamespaces"},
	{"/v1/namespace/{id}/describe", GW_POST, GW_ROUTE_READ, "rest_describe_namespace", "DescribeNamespace"},
	{"/v1/namespace/{id}/drop", GW_POST, GW_ROUTE_CATALOG, "rest_drop_namespace", "DropNamespace"},
	{"/v1/namespace/{id}/exists", GW_POST, GW_ROUTE_EXISTS, "rest_namespace_exists", "NamespaceExists"},
	{"/v1/namespace/{id}/table/list", GP, GW_ROUTE_READ, "rest_list_tables", "ListTables"},

	{"/v1/table", GP, GW_ROUTE_READ, "rest_list_all_tables", "ListAllTables"},
	{"/v1/table/version/batch-create", GW_POST, GW_ROUTE_BATCH_CREATE, "rest_batch_create_table_versions", "BatchCreateTableVersions"},
	{"/v1/table/batch-commit", GW_POST, GW_ROUTE_BATCH_COMMIT, "rest_batch_commit_tables", "BatchCommitTables"},

	{"/v1/table/{id}/declare", GW_POST, GW_ROUTE_CATALOG, "rest_declare_table", "DeclareTable"},
	/* RegisterTable imports the versions on disk (table_files.c) */
	{"/v1/table/{id}/register", GW_POST, GW_ROUTE_TABLE_REGISTER, "rest_register_table", "RegisterTable"},
	{"/v1/table/{id}/describe", GW_POST, GW_ROUTE_READ, "rest_describe_table", "DescribeTable"},
	{"/v1/table/{id}/exists", GW_POST, GW_ROUTE_EXISTS, "rest_table_exists", "TableExists"},
	{"/v1/table/{id}/deregister", GW_POST, GW_ROUTE_CATALOG, "rest_deregister_table", "DeregisterTable"},
	/* DropTable deletes the table's files after COMMIT (table_files.c) */
	{"/v1/table/{id}/drop", GW_POST, GW_ROUTE_TABLE_DROP, "rest_drop_table", "DropTable"},
	{"/v1/table/{id}/rename", GW_POST, GW_ROUTE_CATALOG, "rest_rename_table", "RenameTable"},
	{"/v1/table/{id}/version/create", GW_POST, GW_ROUTE_VERSION_CREATE, "rest_create_table_version", "CreateTableVersion"},
	{"/v1/table/{id}/version/describe", GW_POST, GW_ROUTE_READ, "rest_describe_table_version", "DescribeTableVersion"},
	{"/v1/table/{id}/version/list", GP, GW_ROUTE_READ, "rest_list_table_versions", "ListTableVersions"},
	{"/v1/table/{id}/version/delete", GW_POST, GW_ROUTE_CATALOG, "rest_batch_delete_table_versions", "BatchDeleteTableVersions"},

	{"/v1/table/{id}/tags/list", GP, GW_ROUTE_READ, "rest_list_table_tags", "ListTableTags"},
	{"/v1/table/{id}/tags/version", GW_POST, GW_ROUTE_READ, "rest_get_table_tag_version", "GetTableTagVersion"},
	{"/v1/table/{id}/tags/create", GW_POST, GW_ROUTE_CATALOG, "rest_create_table_tag", "CreateTableTag"},
	{"/v1/table/{id}/tags/update", GW_POST, GW_ROUTE_CATALOG, "rest_update_table_tag", "UpdateTableTag"},
	{"/v1/table/{id}/tags/delete", GW_POST, GW_ROUTE_CATALOG, "rest_delete_table_tag", "DeleteTableTag"},
	{"/v1/table/{id}/branches/list", GP, GW_ROUTE_READ, "rest_list_table_branches", "ListTableBranches"},
	{"/v1/table/{id}/branches/create", GW_POST, GW_ROUTE_CATALOG, "rest_create_table_branch", "CreateTableBranch"},
	{"/v1/table/{id}/branches/delete", GW_POST, GW_ROUTE_CATALOG, "rest_delete_table_branch", "DeleteTableBranch"},
	{"/v1/transaction/{id}/describe", GW_POST, GW_ROUTE_READ, "rest_describe_transaction", "DescribeTransaction"},
	{"/v1/transaction/{id}/alter", GW_POST, GW_ROUTE_CATALOG, "rest_alter_transaction", "AlterTransaction"},
};

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
 * gw_route_count
 *		Number of entries of the route table (route indexes are
 *		0 .. gw_route_count() - 1).
 */
int
gw_route_count(void)
{
	return (int) (sizeof(routes) / sizeof(routes[0]));
}

/*
 * gw_route_index
 *		Index of a route table entry, or -1 for NULL.
 */
int
gw_route_index(const GwRoute *route)
{
	if (route == NULL || route < routes || route >= routes + gw_route_count())
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
 * match_one
 *		Match path segments against one pattern; on success *id points at
 *		the {id} segment (or stays NULL if the pattern has none).
 */
static bool
match_one(const char *pattern, char **seg, int nseg, const char **id)
{
	char		buf[128];
	char	   *pseg[16];
	int			np;

	strncpy(buf, pattern, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	np = split_path(buf, pseg, 16);
	if (np != nseg)
		return false;
	*id = NULL;
	for (int i = 0; i < np; i++)
	{
		if (strcmp(pseg[i], "{id}") == 0)
			*id = seg[i];
		else if (strcmp(pseg[i], seg[i]) != 0)
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

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
	{
		const char *id = NULL;

		if (!match_one(routes[i].pattern, seg, nseg, &id))
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
