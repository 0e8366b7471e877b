/*
 * lance_namespace 0.4.0 -> 0.5.0.
 *
 * Issue 16, the gateway's reads: the manifest paths of a REST answer's
 * table versions take the form Lance clients use in the extension, where
 * the rule is defined once (src/manifest_rules.c), not in the gateway,
 * which parsed and rewrote every such answer.
 *
 * - rest_client_paths(answer jsonb): the answer with each table version's
 *   manifest_path in the object store's form.
 * - rest_routes gains client_paths, true for the routes whose answers are
 *   table versions (DescribeTableVersion, ListTableVersions); the gateway
 *   sends their answers through rest_client_paths.  CREATE OR REPLACE
 *   keeps the view's grants.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.5.0'" to load this file. \quit

SET search_path = pg_catalog, pg_temp;

/*
 * An answer whose table versions carry their manifest_path in the form
 * Lance clients use (src/manifest_rules.c): the object store's path, the
 * key of "s3://BUCKET/KEY" or a file's path without its leading "/".  The
 * gateway sends the answers of the routes marked client_paths in
 * rest_routes through it (0.5.0, issue 16).
 */
CREATE FUNCTION lance_namespace.rest_client_paths(answer jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_client_paths'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE VIEW lance_namespace.rest_routes AS
	SELECT r.path, r.methods, r.operation, p.proname::pg_catalog.text AS binding,
		   p.provolatile OPERATOR(pg_catalog.<>) 'v' AS read_only, r.no_body,
		   r.operation OPERATOR(pg_catalog.=) ANY
			 ('{DescribeTableVersion,ListTableVersions}'::pg_catalog.text[]) AS client_paths
	  FROM (VALUES
		('/v1/namespace/{id}/create', '{POST}'::pg_catalog.text[], 'CreateNamespace',
		 'lance_namespace.rest_create_namespace(jsonb)'::pg_catalog.regprocedure, false),
		('/v1/namespace/{id}/list', '{GET,POST}', 'ListNamespaces', 'lance_namespace.rest_list_namespaces(jsonb)', false),
		('/v1/namespace/{id}/describe', '{POST}', 'DescribeNamespace', 'lance_namespace.rest_describe_namespace(jsonb)', false),
		('/v1/namespace/{id}/drop', '{POST}', 'DropNamespace', 'lance_namespace.rest_drop_namespace(jsonb)', false),
		('/v1/namespace/{id}/exists', '{POST}', 'NamespaceExists', 'lance_namespace.rest_namespace_exists(jsonb)', true),
		('/v1/namespace/{id}/table/list', '{GET,POST}', 'ListTables', 'lance_namespace.rest_list_tables(jsonb)', false),
		('/v1/table', '{GET,POST}', 'ListAllTables', 'lance_namespace.rest_list_all_tables(jsonb)', false),
		('/v1/table/version/batch-create', '{POST}', 'BatchCreateTableVersions', 'lance_namespace.rest_batch_create_table_versions(jsonb)', false),
		('/v1/table/batch-commit', '{POST}', 'BatchCommitTables', 'lance_namespace.rest_batch_commit_tables(jsonb)', false),
		('/v1/table/{id}/declare', '{POST}', 'DeclareTable', 'lance_namespace.rest_declare_table(jsonb)', false),
		('/v1/table/{id}/register', '{POST}', 'RegisterTable', 'lance_namespace.rest_register_table(jsonb)', false),
		('/v1/table/{id}/describe', '{POST}', 'DescribeTable', 'lance_namespace.rest_describe_table(jsonb)', false),
		('/v1/table/{id}/exists', '{POST}', 'TableExists', 'lance_namespace.rest_table_exists(jsonb)', true),
		('/v1/table/{id}/deregister', '{POST}', 'DeregisterTable', 'lance_namespace.rest_deregister_table(jsonb)', false),
		('/v1/table/{id}/drop', '{POST}', 'DropTable', 'lance_namespace.rest_drop_table(jsonb)', false),
		('/v1/table/{id}/rename', '{POST}', 'RenameTable', 'lance_namespace.rest_rename_table(jsonb)', false),
		('/v1/table/{id}/version/create', '{POST}', 'CreateTableVersion', 'lance_namespace.rest_create_table_version(jsonb)', false),
		('/v1/table/{id}/version/describe', '{POST}', 'DescribeTableVersion', 'lance_namespace.rest_describe_table_version(jsonb)', false),
		('/v1/table/{id}/version/list', '{GET,POST}', 'ListTableVersions', 'lance_namespace.rest_list_table_versions(jsonb)', false),
		('/v1/table/{id}/version/delete', '{POST}', 'BatchDeleteTableVersions', 'lance_namespace.rest_batch_delete_table_versions(jsonb)', false),
		('/v1/table/{id}/tags/list', '{GET,POST}', 'ListTableTags', 'lance_namespace.rest_list_table_tags(jsonb)', false),
		('/v1/table/{id}/tags/version', '{POST}', 'GetTableTagVersion', 'lance_namespace.rest_get_table_tag_version(jsonb)', false),
		('/v1/table/{id}/tags/create', '{POST}', 'CreateTableTag', 'lance_namespace.rest_create_table_tag(jsonb)', false),
		('/v1/table/{id}/tags/update', '{POST}', 'UpdateTableTag', 'lance_namespace.rest_update_table_tag(jsonb)', false),
		('/v1/table/{id}/tags/delete', '{POST}', 'DeleteTableTag', 'lance_namespace.rest_delete_table_tag(jsonb)', false),
		('/v1/table/{id}/branches/list', '{GET,POST}', 'ListTableBranches', 'lance_namespace.rest_list_table_branches(jsonb)', false),
		('/v1/table/{id}/branches/create', '{POST}', 'CreateTableBranch', 'lance_namespace.rest_create_table_branch(jsonb)', false),
		('/v1/table/{id}/branches/delete', '{POST}', 'DeleteTableBranch', 'lance_namespace.rest_delete_table_branch(jsonb)', false),
		('/v1/transaction/{id}/describe', '{POST}', 'DescribeTransaction', 'lance_namespace.rest_describe_transaction(jsonb)', false),
		('/v1/transaction/{id}/alter', '{POST}', 'AlterTransaction', 'lance_namespace.rest_alter_transaction(jsonb)', false)
	  ) AS r(path, methods, operation, binding, no_body)
	  JOIN pg_catalog.pg_proc p
		ON p.oid OPERATOR(pg_catalog.=) r.binding::pg_catalog.oid;
