/*-------------------------------------------------------------------------
 *
 * fixture_routes.h
 *	  The route table and query parameters that the fuzz targets map
 *	  requests with.  The gateway loads them from the extension's views
 *	  lance_namespace.rest_routes and rest_query_parameters at start
 *	  (db.c); a target has no database, so it adds routes of each shape
 *	  those views have (with and without {id}, GET and POST, reads,
 *	  writes, commits, an existence check and answers of table versions)
 *	  and a parameter of each
 *	  type, through the same functions (router.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_FUZZ_FIXTURE_ROUTES_H
#define LANCE_FUZZ_FIXTURE_ROUTES_H

#include <stdlib.h>
#include <string.h>

#include "router.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * LLVMFuzzerInitialize
 *		Build the route table once, before the first input.
 */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const routes[][4] = {
		{"/v1/namespace/{id}/create", "{POST}", "CreateNamespace", "rest_create_namespace"},
		{"/v1/namespace/{id}/list", "{GET,POST}", "ListNamespaces", "rest_list_namespaces"},
		{"/v1/namespace/{id}/exists", "{POST}", "NamespaceExists", "rest_namespace_exists"},
		{"/v1/namespace/{id}/table/list", "{GET,POST}", "ListTables", "rest_list_tables"},
		{"/v1/table", "{GET,POST}", "ListAllTables", "rest_list_all_tables"},
		{"/v1/table/version/batch-create", "{POST}", "BatchCreateTableVersions", "rest_batch_create_table_versions"},
		{"/v1/table/{id}/describe", "{POST}", "DescribeTable", "rest_describe_table"},
		{"/v1/table/{id}/version/create", "{POST}", "CreateTableVersion", "rest_create_table_version"},
		{"/v1/table/{id}/version/list", "{GET,POST}", "ListTableVersions", "rest_list_table_versions"},
		{"/v1/table/{id}/tags/create", "{POST}", "CreateTableTag", "rest_create_table_tag"},
		{"/v1/transaction/{id}/describe", "{POST}", "DescribeTransaction", "rest_describe_transaction"},
	};
	static const char *const parameters[][2] = {
		{"delimiter", "string"}, {"page_token", "string"}, {"limit", "integer"},
		{"descending", "boolean"}, {"with_table_uri", "boolean"}, {"version", "integer"},
		{"mode", "string"},
	};
	GwError		err;

	(void) argc;
	(void) argv;
	gw_error_clear(&err);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!gw_route_add(routes[i][0], (strstr(routes[i][1], "GET") ? GW_GET : 0) |
						  (strstr(routes[i][1], "POST") ? GW_POST : 0), routes[i][2], routes[i][3],
						  strstr(routes[i][0], "list") != NULL || strstr(routes[i][0], "describe") != NULL ||
						  strstr(routes[i][0], "exists") != NULL,
						  strstr(routes[i][0], "exists") != NULL,
						  strstr(routes[i][0], "version/list") != NULL, &err))
			abort();
	for (size_t i = 0; i < sizeof(parameters) / sizeof(parameters[0]); i++)
		if (!gw_query_parameter_add(parameters[i][0], parameters[i][1], &err))
			abort();
	return 0;
}

#endif							/* LANCE_FUZZ_FIXTURE_ROUTES_H */
