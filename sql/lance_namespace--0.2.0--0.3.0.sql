/*
 * lance_namespace 0.2.0 -> 0.3.0.
 *
 * - Issue 16: the REST route table is defined once, in the extension: the
 *   views rest_routes (path, methods, operation, binding, read_only from
 *   the binding's volatility, no_body) and rest_query_parameters (the
 *   query parameters and their JSON types), which the gateway loads when
 *   it starts.
 * - Issue 19, publications: the bytes of manifests that a gateway's CreateTableVersion
 *   ratified before their canonical file was durable, kept in the version's
 *   transaction and pruned once the file is (src/gateway/publish.c).  The
 *   catalog's C code writes it as the owner; a row goes with its version.
 *
 * The result equals a fresh 0.3.0 install (test/t/033_upgrade_paths.pl).
 */

\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.3.0'" to load this file. \quit

/*
 * Manifests ratified but not yet durably published (issue 19).  A gateway
 * committing to a local --root sends the staged manifest's bytes with
 * CreateTableVersion; the catalog keeps them here, in the transaction that
 * inserts the version, so that the WAL flush of COMMIT is the only flush a
 * create waits for.  The canonical file is then a publication that can be
 * redone from these bytes: the gateway links it before COMMIT without
 * flushing, makes publications durable in groups (syncfs) and then deletes
 * their rows; its start-up, DescribeTableVersion and --sweep rewrite a
 * canonical file that is missing or differs from the row's bytes
 * (src/gateway/publish.c, RELIABILITY.md).  Rows go with their version
 * (ON DELETE CASCADE).  Written by the catalog's C code as the owner, for
 * the version the caller's own call has just inserted; read and pruned by
 * the owner alone: no role is granted anything on this table.
 */
CREATE TABLE lance_namespace.publications (
	table_id	bigint NOT NULL,
	branch		text COLLATE "C" NOT NULL,
	version		bigint NOT NULL,
	manifest	bytea NOT NULL,
	CONSTRAINT publications_pkey PRIMARY KEY (table_id, branch, version),
	CONSTRAINT publications_version_fkey FOREIGN KEY (table_id, branch, version)
		REFERENCES lance_namespace.versions (table_id, branch, version) ON DELETE CASCADE
) WITH (toast_tuple_target = 8160);

/*
 * A manifest up to a page stays in its row, uncompressed (its bytes hardly
 * compress): one heap record per create instead of a TOAST row and its
 * index entry as well.
 */
ALTER TABLE lance_namespace.publications ALTER COLUMN manifest SET STORAGE EXTERNAL;
ALTER TABLE lance_namespace.publications ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON lance_namespace.publications FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.publications', '');

/* ------------------------------------------------------------------------
 * The REST routes, defined once (issue 16).  Each row is a spec route that
 * this catalog serves: its path, the HTTP methods it accepts, the spec
 * operation, and the binding (a rest_* function above) that serves it.
 * read_only is not written here: it is the binding's own declaration (a
 * STABLE or IMMUTABLE binding only reads), so a read is whatever the
 * function says it is.  no_body marks the existence checks, answered by
 * their status alone (catalog-rest-index.md).  The binding column is a
 * regprocedure constant: a route that names no function fails the install,
 * and the view depends on each binding it names.
 *
 * The gateway loads this view when it starts (src/gateway/router.c);
 * adding an operation is a row here, its binding, and the lance_* function
 * behind it.  The gateway's own routes (/health, /ready, /metrics,
 * /v1/events) and the data operations it answers with 406 are not listed.
 * Readable by everyone: it describes the public REST interface, nothing
 * of the catalog's contents.
 * ------------------------------------------------------------------------ */
CREATE VIEW lance_namespace.rest_routes AS
	SELECT r.path, r.methods, r.operation, p.proname::pg_catalog.text AS binding,
		   p.provolatile OPERATOR(pg_catalog.<>) 'v' AS read_only, r.no_body
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

/*
 * The query parameters that carry request fields (spec
 * components/parameters), with the JSON type each becomes in the request
 * model: a query string is text, and the bindings hold every request to
 * strict JSON types, so the gateway types the text by this view (a
 * string where the spec says integer is 400).
 */
CREATE VIEW lance_namespace.rest_query_parameters AS
	SELECT q.name, q.type
	  FROM (VALUES
		('delimiter', 'string'), ('page_token', 'string'), ('limit', 'integer'),
		('descending', 'boolean'), ('include_declared', 'boolean'),
		('check_declared', 'boolean'), ('with_table_uri', 'boolean'),
		('load_detailed_metadata', 'boolean'), ('branch', 'string'), ('mode', 'string'),
		('behavior', 'string'), ('version', 'integer'), ('vend_credentials', 'boolean')
	  ) AS q(name, type);

GRANT SELECT ON lance_namespace.rest_routes, lance_namespace.rest_query_parameters TO PUBLIC;
