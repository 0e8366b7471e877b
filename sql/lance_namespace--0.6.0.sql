/*
 * lance_namespace 0.6.0: PostgreSQL as a Lance Namespace catalog.
 *
 * Every object lives in the fixed schema lance_namespace (the extension is
 * not relocatable).  Every function pins search_path to pg_catalog, pg_temp
 * and schema-qualifies what it uses; all functions but lance_authenticate
 * are SECURITY INVOKER.  The commit history is written by the database (C
 * triggers and the catalog's C functions, as the catalog's owner), never by
 * callers, and committed versions are immutable (README, Security model).
 * A version row carries the record of its own creation; the history log
 * holds every other operation's (0.4.0, docs/history.md).
 */

\echo Use "CREATE EXTENSION lance_namespace" to load this file. \quit

/* ------------------------------------------------------------------------
 * Catalog tables
 * ------------------------------------------------------------------------ */

CREATE SEQUENCE lance_namespace.entries_id_seq AS bigint MINVALUE 1;

/*
 * One row per namespace or table.  Namespaces and tables share one table so
 * that a single unique constraint keeps names unique among siblings across
 * both kinds.  The root namespace is the row with id 0 and the empty path.
 */
CREATE TABLE lance_namespace.entries (
	id			bigint NOT NULL DEFAULT pg_catalog.nextval('lance_namespace.entries_id_seq'),
	parent_id	bigint,
	kind		"char" NOT NULL,
	name		text COLLATE "C" NOT NULL,
	path		text[] COLLATE "C" NOT NULL,
	properties	jsonb NOT NULL DEFAULT '{}',
	location	text,
	declared	boolean NOT NULL DEFAULT false,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	created_by	name NOT NULL DEFAULT CURRENT_USER,
	CONSTRAINT entries_pkey PRIMARY KEY (id),
	CONSTRAINT entries_parent_fkey FOREIGN KEY (parent_id)
		REFERENCES lance_namespace.entries (id) ON DELETE CASCADE,
	CONSTRAINT entries_sibling_name_key UNIQUE (parent_id, name),
	CONSTRAINT entries_path_key UNIQUE (path),
	CONSTRAINT entries_kind_check CHECK (kind IN ('r', 'n', 't')),
	CONSTRAINT entries_root_check CHECK ((kind = 'r') = (parent_id IS NULL)),
	CONSTRAINT entries_root_row_check CHECK (kind <> 'r' OR (id = 0 AND name = '')),
	CONSTRAINT entries_location_check CHECK ((kind = 't') = (location IS NOT NULL)),
	CONSTRAINT entries_properties_check CHECK (pg_catalog.jsonb_typeof(properties) = 'object'),
	CONSTRAINT entries_path_check CHECK (pg_catalog.cardinality(path) = 0 OR
		(pg_catalog.array_ndims(path) = 1 AND pg_catalog.array_lower(path, 1) = 1 AND
		 path[pg_catalog.cardinality(path)] = name))
);

CREATE INDEX entries_child_namespaces_idx ON lance_namespace.entries (parent_id, name) WHERE kind = 'n';
CREATE INDEX entries_child_tables_idx ON lance_namespace.entries (parent_id, name) WHERE kind = 't';
CREATE INDEX entries_table_paths_idx ON lance_namespace.entries (path) WHERE kind = 't';

INSERT INTO lance_namespace.entries (id, parent_id, kind, name, path)
	VALUES (0, NULL, 'r', '', '{}');

/*
 * One row per (table, branch, version): the catalog is the authority on
 * which manifest is version N.  The primary key is the put-if-not-exists
 * guard of CreateTableVersion.
 *
 * The row is also the history's record of its creation (0.4.0): the
 * versions_check trigger writes, whatever the inserter gives, the role
 * (created_by: the session's current role), the transaction, the instant,
 * the interface, the session role and the table's id (table_path) as the
 * version was created, so a create writes no history row of its own.  When
 * the row goes or changes, the record moves to history_log unchanged
 * (audit.c).  The record columns are NULL in a row created before 0.4.0,
 * whose record is in history_log, and in a row the owner has changed.
 */
CREATE TABLE lance_namespace.versions (
	table_id	bigint NOT NULL,
	branch		text COLLATE "C" NOT NULL DEFAULT 'main',
	version		bigint NOT NULL,
	manifest_path text NOT NULL,
	staging_manifest_path text NOT NULL,
	manifest_size bigint,
	e_tag		text,
	metadata	jsonb,
	naming_scheme text NOT NULL,
	timestamp_millis bigint NOT NULL,
	created_by	text NOT NULL DEFAULT CURRENT_USER,
	transaction_id xid8,
	created_at	timestamptz,
	interface	text,
	session_role text,
	table_path	text[],
	CONSTRAINT versions_pkey PRIMARY KEY (table_id, branch, version),
	CONSTRAINT versions_table_fkey FOREIGN KEY (table_id)
		REFERENCES lance_namespace.entries (id) ON DELETE CASCADE
);

/* the change feed and DescribeTransaction find a transaction's versions */
CREATE INDEX versions_transaction_idx ON lance_namespace.versions (transaction_id);

/*
 * The row checks of versions (version >= 0, manifest_size >= 0, naming_scheme
 * V1 or V2, non-empty manifest paths, metadata an object) are a C trigger
 * rather than CHECK constraints: PostgreSQL re-plans CHECK constraints for
 * every INSERT statement, which cost a tenth of each commit.  Same names,
 * same SQLSTATE (23514).  The same trigger keeps committed versions
 * immutable: only the catalog's owner updates a version, and only
 * CreateTableVersion (and its batch form) inserts one (42501); and it
 * writes the creation record on every new row.
 */
CREATE FUNCTION lance_namespace.lance_versions_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_versions_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER versions_check BEFORE INSERT OR UPDATE ON lance_namespace.versions
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_versions_check();

/*
 * Branches other than main.  A branch starts at parent_version of its parent
 * branch (NULL parent_branch is main); its own versions come after that.
 */
CREATE TABLE lance_namespace.branches (
	table_id	bigint NOT NULL,
	name		text COLLATE "C" NOT NULL,
	parent_branch text COLLATE "C",
	parent_version bigint NOT NULL,
	create_at	bigint NOT NULL,
	manifest_size bigint NOT NULL DEFAULT 0,
	metadata	jsonb,
	created_by	name NOT NULL DEFAULT CURRENT_USER,
	CONSTRAINT branches_pkey PRIMARY KEY (table_id, name),
	CONSTRAINT branches_table_fkey FOREIGN KEY (table_id)
		REFERENCES lance_namespace.entries (id) ON DELETE CASCADE,
	CONSTRAINT branches_name_check CHECK (name <> 'main' AND name <> ''),
	CONSTRAINT branches_parent_check CHECK (parent_branch IS NULL OR parent_branch <> 'main'),
	CONSTRAINT branches_parent_version_check CHECK (parent_version >= 0)
);

CREATE INDEX branches_parent_idx ON lance_namespace.branches (table_id, parent_branch);

/* Tags: a name for one version of a table, on a branch (main by default). */
CREATE TABLE lance_namespace.tags (
	table_id	bigint NOT NULL,
	name		text COLLATE "C" NOT NULL,
	branch		text COLLATE "C" NOT NULL DEFAULT 'main',
	version		bigint NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	created_by	name NOT NULL DEFAULT CURRENT_USER,
	CONSTRAINT tags_pkey PRIMARY KEY (table_id, name),
	CONSTRAINT tags_table_fkey FOREIGN KEY (table_id)
		REFERENCES lance_namespace.entries (id) ON DELETE CASCADE,
	CONSTRAINT tags_name_check CHECK (name <> ''),
	CONSTRAINT tags_version_check CHECK (version >= 0)
);

/*
 * The interface the history records for this session: "rest" only when
 * lance_namespace.interface is rest and the session user may EXECUTE
 * lance_authenticate (the gateway's authenticator); otherwise "sql".
 */
CREATE FUNCTION lance_namespace.lance_interface()
RETURNS text
AS 'MODULE_PATHNAME', 'lance_interface_fn'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

/*
 * Append-only log of the commit history: one row per mutating operation
 * that creates no version, with the PostgreSQL transaction that made it
 * (its transaction_id), the role (the session's current role), the
 * session role, and the interface (see lance_interface()); and the
 * creation records that left their version row (a version deleted or
 * changed, and every version created before 0.4.0).  Read the whole
 * history through the view history.  Only the catalog writes it
 * (src/audit.c): callers have no privilege on it but SELECT, and the
 * history_guard trigger refuses every write but the owner's.
 */
CREATE TABLE lance_namespace.history_log (
	transaction_id xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
	at			timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	role		text NOT NULL DEFAULT CURRENT_USER,
	interface	text NOT NULL DEFAULT lance_namespace.lance_interface(),
	operation	text NOT NULL,
	id			text[] NOT NULL,
	detail		jsonb,
	session_role text DEFAULT SESSION_USER
);

CREATE INDEX history_log_transaction_idx ON lance_namespace.history_log (transaction_id);
CREATE INDEX history_log_at_idx ON lance_namespace.history_log USING brin (at);

/*
 * The commit history: the log's rows and the creation record that each
 * version row carries, as one append-only relation of the columns the
 * history table had before 0.4.0.  A version's record reads as its
 * CreateTableVersion row: detail {branch, version, manifest_path}.
 * security_invoker: a role sees the rows that row level security on
 * history_log and versions lets it read.
 */
CREATE VIEW lance_namespace.history WITH (security_invoker = true) AS
	SELECT l.transaction_id, l.at, l.role, l.interface, l.operation, l.id, l.detail,
		   l.session_role
	  FROM lance_namespace.history_log l
	UNION ALL
	SELECT v.transaction_id, v.created_at, v.created_by, v.interface,
		   'CreateTableVersion'::text, v.table_path,
		   pg_catalog.jsonb_build_object('branch', v.branch, 'version', v.version,
										 'manifest_path', v.manifest_path),
		   v.session_role
	  FROM lance_namespace.versions v
	 WHERE v.transaction_id IS NOT NULL;

/*
 * Properties that AlterTransaction set on a transaction (txn_alter.c).  The
 * catalog's owner's alone: the function checks the caller's right to the
 * transaction and writes as the owner, and records each alteration in the
 * history; no role is granted anything on this table.
 */
CREATE TABLE lance_namespace.transaction_properties (
	transaction_id xid8 NOT NULL,
	key			text COLLATE "C" NOT NULL,
	value		text NOT NULL,
	set_at		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	set_by		name NOT NULL,
	CONSTRAINT transaction_properties_pkey PRIMARY KEY (transaction_id, key),
	CONSTRAINT transaction_properties_key_check CHECK (key <> '')
);

ALTER TABLE lance_namespace.transaction_properties ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON lance_namespace.transaction_properties FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.transaction_properties', '');

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

/* Catalog-wide settings; a missing row means the built-in default. */
CREATE TABLE lance_namespace.settings (
	name		text NOT NULL,
	value		text NOT NULL,
	CONSTRAINT settings_pkey PRIMARY KEY (name),
	CONSTRAINT settings_name_check CHECK (name IN ('root_location'))
);

SELECT pg_catalog.pg_extension_config_dump('lance_namespace.entries', 'WHERE id <> 0');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.versions', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.settings', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.branches', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.tags', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.history_log', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.entries_id_seq', '');

/*
 * The audit trail (src/audit.c).  lance_audit records every change to
 * entries, versions, branches and tags that no catalog operation records
 * itself (direct DML, and the owner's), as "<INSERT|UPDATE|DELETE> <table>"
 * with the old and new rows.  A new version is its own record: no history
 * row (versions_unrecorded fires only for a row without a record: a writer
 * that expected to lose the race for its version, and did not, has its
 * record written to the log).  After each DELETE of versions
 * (versions_moved, one statement for all the rows) and before the owner's
 * TRUNCATE it moves the creation records of the versions that go to the
 * log.  It writes as the catalog's owner:
 * callers cannot write the history.  C rather than PL/pgSQL.
 */
CREATE FUNCTION lance_namespace.lance_audit()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_audit'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER entries_audit AFTER INSERT OR UPDATE OR DELETE ON lance_namespace.entries
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER versions_audit AFTER UPDATE OR DELETE ON lance_namespace.versions
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER versions_unrecorded AFTER INSERT ON lance_namespace.versions
	FOR EACH ROW WHEN (NEW.transaction_id IS NULL)
	EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER versions_moved AFTER DELETE ON lance_namespace.versions
	REFERENCING OLD TABLE AS gone
	FOR EACH STATEMENT EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER versions_truncate BEFORE TRUNCATE ON lance_namespace.versions
	FOR EACH STATEMENT EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER branches_audit AFTER INSERT OR UPDATE OR DELETE ON lance_namespace.branches
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER tags_audit AFTER INSERT OR UPDATE OR DELETE ON lance_namespace.tags
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();

/* The history is append-only, and written only as the catalog's owner. */
CREATE FUNCTION lance_namespace.lance_history_guard()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_history_guard'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER history_guard BEFORE INSERT OR UPDATE OR DELETE ON lance_namespace.history_log
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_history_guard();

/* Composite result of every version operation: the spec's TableVersion. */
CREATE TYPE lance_namespace.table_version AS (
	version		bigint,
	manifest_path text,
	manifest_size bigint,
	e_tag		text,
	timestamp_millis bigint,
	metadata	jsonb
);

/* ------------------------------------------------------------------------
 * Identifiers, errors and settings
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_parse_id(id text, delimiter text DEFAULT '$')
RETURNS text[]
AS 'MODULE_PATHNAME', 'lance_parse_id'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_format_id(id text[], delimiter text DEFAULT '$')
RETURNS text
AS 'MODULE_PATHNAME', 'lance_format_id'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_error_code(sqlstate text)
RETURNS integer
AS 'MODULE_PATHNAME', 'lance_error_code'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_error_name(code integer)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_error_name'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_set_root_location(root_location text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_set_root_location'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_root_location()
RETURNS text
AS 'MODULE_PATHNAME', 'lance_root_location'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Namespaces
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_create_namespace(
	id text[],
	mode text DEFAULT NULL,
	properties jsonb DEFAULT NULL,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_create_namespace'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_namespaces(
	id text[] DEFAULT '{}',
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	OUT namespaces text[],
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_namespaces'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_describe_namespace(
	id text[],
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_describe_namespace'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_drop_namespace(
	id text[],
	mode text DEFAULT NULL,
	behavior text DEFAULT NULL,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_drop_namespace'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_namespace_exists(id text[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_namespace_exists'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_declare_table(
	id text[],
	location text DEFAULT NULL,
	properties jsonb DEFAULT NULL,
	vend_credentials boolean DEFAULT NULL,
	OUT location text,
	OUT properties jsonb,
	OUT managed_versioning boolean,
	OUT storage_options jsonb)
AS 'MODULE_PATHNAME', 'lance_declare_table'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * versions: the table's existing versions, imported with the registration
 * (a JSON array of {version, manifest_path, naming_scheme, manifest_size,
 * e_tag}, each the canonical manifest of a version of main; the gateway
 * lists <location>/_versions and fills it in).
 */
CREATE FUNCTION lance_namespace.lance_register_table(
	id text[],
	location text,
	mode text DEFAULT NULL,
	properties jsonb DEFAULT NULL,
	versions jsonb DEFAULT NULL,
	OUT location text,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_register_table'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_describe_table(
	id text[],
	version bigint DEFAULT NULL,
	branch text DEFAULT NULL,
	tag text DEFAULT NULL,
	with_table_uri boolean DEFAULT false,
	check_declared boolean DEFAULT false,
	load_detailed_metadata boolean DEFAULT NULL,
	vend_credentials boolean DEFAULT NULL,
	OUT "table" text,
	OUT namespace text[],
	OUT version bigint,
	OUT location text,
	OUT table_uri text,
	OUT properties jsonb,
	OUT managed_versioning boolean,
	OUT is_only_declared boolean,
	OUT storage_options jsonb)
AS 'MODULE_PATHNAME', 'lance_describe_table'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_table_exists(id text[], version bigint DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_table_exists'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_tables(
	id text[] DEFAULT '{}',
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	include_declared boolean DEFAULT true,
	OUT tables text[],
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_tables'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_all_tables(
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	delimiter text DEFAULT '$',
	include_declared boolean DEFAULT true,
	OUT tables text[],
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_all_tables'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_deregister_table(
	id text[],
	OUT id text[],
	OUT location text,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_deregister_table'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * DropTable in the catalog: DeregisterTable recorded as DropTable.  The
 * caller (the gateway) deletes the data at the returned location after
 * COMMIT; --sweep finds the leftovers of a crash through the record.
 */
CREATE FUNCTION lance_namespace.lance_drop_table(
	id text[],
	OUT id text[],
	OUT location text,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_drop_table'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_rename_table(
	id text[],
	new_table_name text,
	new_namespace_id text[] DEFAULT NULL,
	OUT id text[])
AS 'MODULE_PATHNAME', 'lance_rename_table'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Table versions
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_create_table_version(
	id text[],
	version bigint,
	manifest_path text,
	manifest_size bigint DEFAULT NULL,
	e_tag text DEFAULT NULL,
	metadata jsonb DEFAULT NULL,
	naming_scheme text DEFAULT NULL,
	branch text DEFAULT NULL)
RETURNS lance_namespace.table_version
AS 'MODULE_PATHNAME', 'lance_create_table_version'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_describe_table_version(
	id text[],
	version bigint DEFAULT NULL,
	branch text DEFAULT NULL)
RETURNS lance_namespace.table_version
AS 'MODULE_PATHNAME', 'lance_describe_table_version'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_table_versions(
	id text[],
	branch text DEFAULT NULL,
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	descending boolean DEFAULT false,
	OUT versions lance_namespace.table_version[],
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_table_versions'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_batch_delete_table_versions(
	id text[],
	ranges jsonb,
	branch text DEFAULT NULL,
	OUT deleted_count bigint)
AS 'MODULE_PATHNAME', 'lance_batch_delete_table_versions'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * A version whose manifest is gone from storage (a client's cleanup of old
 * versions deletes manifests without telling the catalog) is retired: its
 * row goes, recorded as RetireTableVersion.  The gateway calls it when
 * DescribeTableVersion finds the manifest missing, and --sweep for every
 * row whose manifest its listing lacks.
 */
CREATE FUNCTION lance_namespace.lance_retire_table_version(
	id text[],
	version bigint,
	branch text DEFAULT NULL,
	manifest_path text DEFAULT NULL,
	OUT retired boolean)
AS 'MODULE_PATHNAME', 'lance_retire_table_version'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_retire_table_version(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_batch_create_table_versions(entries jsonb)
RETURNS SETOF lance_namespace.table_version
AS 'MODULE_PATHNAME', 'lance_batch_create_table_versions'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Branches and tags
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_create_table_branch(
	id text[],
	name text,
	from_branch text DEFAULT NULL,
	from_version bigint DEFAULT NULL,
	metadata jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_create_table_branch'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_table_branches(
	id text[],
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	OUT branches jsonb,
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_table_branches'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_delete_table_branch(id text[], name text)
RETURNS void
AS 'MODULE_PATHNAME', 'lance_delete_table_branch'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_create_table_tag(
	id text[],
	tag text,
	version bigint,
	branch text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'lance_create_table_tag'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_get_table_tag_version(
	id text[],
	tag text,
	OUT version bigint,
	OUT branch text)
AS 'MODULE_PATHNAME', 'lance_get_table_tag_version'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_update_table_tag(
	id text[],
	tag text,
	version bigint,
	branch text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'lance_update_table_tag'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_delete_table_tag(id text[], tag text)
RETURNS void
AS 'MODULE_PATHNAME', 'lance_delete_table_tag'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_list_table_tags(
	id text[],
	page_token text DEFAULT NULL,
	"limit" integer DEFAULT NULL,
	OUT tags jsonb,
	OUT page_token text)
AS 'MODULE_PATHNAME', 'lance_list_table_tags'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Batch commits and transactions
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_batch_commit_tables(operations jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_batch_commit_tables'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_current_transaction_id()
RETURNS text
AS 'MODULE_PATHNAME', 'lance_current_transaction_id'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_describe_transaction(
	id text,
	OUT status text,
	OUT properties jsonb)
AS 'MODULE_PATHNAME', 'lance_describe_transaction'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_alter_transaction(id text, actions jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_alter_transaction'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * Authentication and authorization
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_privilege_level(privilege text)
RETURNS integer
AS 'MODULE_PATHNAME', 'lance_privilege_level'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

/*
 * Privileges on namespace subtrees: a grant on namespace N (the root is {})
 * covers N and everything below it.  admin > write > read.
 */
CREATE TABLE lance_namespace.privileges (
	role_name	name NOT NULL,
	namespace	text[] COLLATE "C" NOT NULL,
	privilege	text NOT NULL,
	scope		text COLLATE "C" NOT NULL
		GENERATED ALWAYS AS (lance_namespace.lance_format_id(namespace, '/')) STORED,
	level		integer NOT NULL
		GENERATED ALWAYS AS (lance_namespace.lance_privilege_level(privilege)) STORED,
	granted_by	name NOT NULL DEFAULT CURRENT_USER,
	granted_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT privileges_pkey PRIMARY KEY (role_name, namespace, privilege),
	CONSTRAINT privileges_privilege_check CHECK (privilege IN ('read', 'write', 'admin'))
);

CREATE INDEX privileges_scope_idx ON lance_namespace.privileges (scope, level);

/* API keys, stored as SHA-256 hashes, each mapped to a PostgreSQL role. */
CREATE TABLE lance_namespace.api_keys (
	key_hash	bytea NOT NULL,
	role_name	name NOT NULL,
	description text,
	expires_at	timestamptz,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	created_by	name NOT NULL DEFAULT CURRENT_USER,
	CONSTRAINT api_keys_pkey PRIMARY KEY (key_hash),
	CONSTRAINT api_keys_hash_check CHECK (pg_catalog.length(key_hash) = 32)
);

/* Secrets (the JWT HS256 secret); readable only by the catalog's owner. */
CREATE TABLE lance_namespace.secrets (
	name		text NOT NULL,
	value		text NOT NULL,
	CONSTRAINT secrets_pkey PRIMARY KEY (name),
	CONSTRAINT secrets_name_check CHECK (name IN ('jwt_secret')),
	CONSTRAINT secrets_value_check CHECK (pg_catalog.length(value) >= 32)
);

SELECT pg_catalog.pg_extension_config_dump('lance_namespace.privileges', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.api_keys', '');
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.secrets', '');

CREATE FUNCTION lance_namespace.lance_has_privilege(path text[], privilege text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_has_privilege'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_create_api_key(
	role_name name,
	description text DEFAULT NULL,
	expires_at timestamptz DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_create_api_key'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.lance_revoke_api_key(api_key text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_revoke_api_key'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * The one SECURITY DEFINER function (audited): it maps a credential to a
 * role for the gateway's authenticator role, which must not read key
 * hashes or the JWT secret itself.  It reads only api_keys and secrets and
 * returns only a role name.  Not executable by PUBLIC.
 */
CREATE FUNCTION lance_namespace.lance_authenticate(api_key text, bearer_token text)
RETURNS name
AS 'MODULE_PATHNAME', 'lance_authenticate'
LANGUAGE C STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

REVOKE ALL ON FUNCTION lance_namespace.lance_authenticate(text, text) FROM PUBLIC;
REVOKE ALL ON lance_namespace.api_keys, lance_namespace.secrets FROM PUBLIC;

CREATE FUNCTION lance_namespace.lance_set_jwt_secret(secret text)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF secret IS NULL OR pg_catalog.length(secret) OPERATOR(pg_catalog.<) 32 THEN
		RAISE SQLSTATE 'LN013' USING MESSAGE = 'SetJwtSecret: the secret must be at least 32 characters';
	END IF;
	INSERT INTO lance_namespace.secrets (name, value) VALUES ('jwt_secret', secret)
	ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;
END;
$$;

/*
 * Grant a role read, write or admin on a namespace subtree.  The catalog's
 * owner (or a superuser) also gives the role the table-level access it needs;
 * a role with admin on a subtree can grant within it to roles that already
 * have that access.  Least privilege: no UPDATE on versions (immutable) and
 * only SELECT on history (written by the catalog); INSERT on versions is
 * there for lance_create_table_version, which runs as the caller, and the
 * versions_check trigger refuses a direct insert.  Row locks (FOR KEY
 * SHARE, FOR UPDATE) need UPDATE, hence UPDATE on entries, branches and
 * tags; their direct changes are audited (lance_audit).
 */
CREATE FUNCTION lance_namespace.lance_grant(role_name name, namespace text[], privilege text)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) role_name) THEN
		RAISE SQLSTATE 'LN013' USING MESSAGE = pg_catalog.format('Grant: role "%s" does not exist', role_name);
	END IF;
	PERFORM lance_namespace.lance_format_id(namespace, '/');
	PERFORM lance_namespace.lance_privilege_level(privilege);
	INSERT INTO lance_namespace.privileges (role_name, namespace, privilege)
		VALUES (role_name, namespace, pg_catalog.lower(privilege))
		ON CONFLICT DO NOTHING;
	IF pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c
								WHERE c.oid OPERATOR(pg_catalog.=) 'lance_namespace.entries'::pg_catalog.regclass),
							  'USAGE') THEN
		EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA lance_namespace TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON lance_namespace.entries,'
			' lance_namespace.branches, lance_namespace.tags TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, DELETE ON lance_namespace.versions TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.history, lance_namespace.history_log TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, DELETE ON lance_namespace.privileges TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.settings, lance_namespace.namespaces,'
			' lance_namespace.tables, lance_namespace.table_versions, lance_namespace.table_branches,'
			' lance_namespace.table_tags, lance_namespace.commit_history, lance_namespace.configuration TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE lance_namespace.entries_id_seq TO %I', role_name);
	END IF;
END;
$$;

/* Revoke a grant (the catalog's owner, or a member of the grantee role). */
CREATE FUNCTION lance_namespace.lance_revoke(role_name name, namespace text[], privilege text)
RETURNS boolean LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	WITH d AS (
		DELETE FROM lance_namespace.privileges p
		 WHERE p.role_name OPERATOR(pg_catalog.=) lance_revoke.role_name
		   AND p.namespace OPERATOR(pg_catalog.=) lance_revoke.namespace
		   AND p.privilege OPERATOR(pg_catalog.=) pg_catalog.lower(lance_revoke.privilege)
		RETURNING 1)
	SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) 0 FROM d;
END;

/*
 * Whether the current role is a member of role_name.  Unlike
 * pg_has_role(name, ...), false (not an error) for a role that no longer
 * exists, so that the grants of a dropped role break no one's checks.
 */
CREATE FUNCTION lance_namespace.lance_is_member(role_name name)
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
					WHERE r.rolname OPERATOR(pg_catalog.=) lance_is_member.role_name
					  AND pg_catalog.pg_has_role(r.oid, 'MEMBER'));
END;

/*
 * Whether parent_id is the entry that path's parent names (the root, id 0,
 * for a top-level name), as the current role sees it.  Row level security
 * checks only path; without this, a role could insert or move a row of its
 * own subtree under another tenant's entry, and learn from unique and
 * foreign key violations which of that tenant's names and ids exist.
 */
CREATE FUNCTION lance_namespace.lance_parent_matches(parent_id bigint, path text[])
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT CASE pg_catalog.cardinality(lance_parent_matches.path)
		WHEN 0 THEN lance_parent_matches.parent_id IS NULL
		WHEN 1 THEN lance_parent_matches.parent_id OPERATOR(pg_catalog.=) 0
		ELSE EXISTS (SELECT 1 FROM lance_namespace.entries p
					  WHERE p.id OPERATOR(pg_catalog.=) lance_parent_matches.parent_id
						AND p.kind OPERATOR(pg_catalog.=) 'n'
						AND p.path OPERATOR(pg_catalog.=)
							lance_parent_matches.path[1:pg_catalog.cardinality(lance_parent_matches.path) OPERATOR(pg_catalog.-) 1])
		END;
END;

/* Row level security: a role sees and changes only what its grants cover. */
ALTER TABLE lance_namespace.entries ENABLE ROW LEVEL SECURITY;
CREATE POLICY entries_read ON lance_namespace.entries FOR SELECT
	USING (lance_namespace.lance_has_privilege(path, 'read'));
CREATE POLICY entries_insert ON lance_namespace.entries FOR INSERT
	WITH CHECK (lance_namespace.lance_has_privilege(path, 'write')
				AND lance_namespace.lance_parent_matches(parent_id, path));
CREATE POLICY entries_update ON lance_namespace.entries FOR UPDATE
	USING (lance_namespace.lance_has_privilege(path, 'write'))
	WITH CHECK (lance_namespace.lance_has_privilege(path, 'write')
				AND lance_namespace.lance_parent_matches(parent_id, path));
CREATE POLICY entries_delete ON lance_namespace.entries FOR DELETE
	USING (lance_namespace.lance_has_privilege(path, 'write'));

ALTER TABLE lance_namespace.versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY versions_read ON lance_namespace.versions FOR SELECT
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id));
CREATE POLICY versions_write ON lance_namespace.versions FOR ALL
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
				   AND lance_namespace.lance_has_privilege(e.path, 'write')))
	WITH CHECK (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
						AND lance_namespace.lance_has_privilege(e.path, 'write')));

ALTER TABLE lance_namespace.branches ENABLE ROW LEVEL SECURITY;
CREATE POLICY branches_read ON lance_namespace.branches FOR SELECT
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id));
CREATE POLICY branches_write ON lance_namespace.branches FOR ALL
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
				   AND lance_namespace.lance_has_privilege(e.path, 'write')))
	WITH CHECK (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
						AND lance_namespace.lance_has_privilege(e.path, 'write')));

ALTER TABLE lance_namespace.tags ENABLE ROW LEVEL SECURITY;
CREATE POLICY tags_read ON lance_namespace.tags FOR SELECT
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id));
CREATE POLICY tags_write ON lance_namespace.tags FOR ALL
	USING (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
				   AND lance_namespace.lance_has_privilege(e.path, 'write')))
	WITH CHECK (EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id OPERATOR(pg_catalog.=) table_id
						AND lance_namespace.lance_has_privilege(e.path, 'write')));

ALTER TABLE lance_namespace.history_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY history_read ON lance_namespace.history_log FOR SELECT
	USING (lance_namespace.lance_has_privilege(id, 'read'));

ALTER TABLE lance_namespace.privileges ENABLE ROW LEVEL SECURITY;
CREATE POLICY privileges_own ON lance_namespace.privileges FOR SELECT
	USING (lance_namespace.lance_is_member(role_name));
CREATE POLICY privileges_grant ON lance_namespace.privileges FOR INSERT
	WITH CHECK (lance_namespace.lance_has_privilege(namespace, 'admin'));
CREATE POLICY privileges_revoke ON lance_namespace.privileges FOR DELETE
	USING (lance_namespace.lance_is_member(role_name));

ALTER TABLE lance_namespace.api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE lance_namespace.secrets ENABLE ROW LEVEL SECURITY;

/* ------------------------------------------------------------------------
 * Views for psql users
 * ------------------------------------------------------------------------ */

/*
 * The views are security_invoker: a view runs with its owner's privileges
 * otherwise, and the owner bypasses row level security.
 */

CREATE VIEW lance_namespace.namespaces WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS name,
		   e.properties, e.created_at, e.created_by
	  FROM lance_namespace.entries e
	 WHERE e.kind OPERATOR(pg_catalog.=) 'n';

CREATE VIEW lance_namespace.tables WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS name,
		   e.location, e.properties, e.declared, e.created_at, e.created_by
	  FROM lance_namespace.entries e
	 WHERE e.kind OPERATOR(pg_catalog.=) 't';

CREATE VIEW lance_namespace.table_versions WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS name,
		   v.branch, v.version, v.manifest_path, v.staging_manifest_path,
		   v.manifest_size, v.e_tag, v.metadata, v.naming_scheme,
		   v.timestamp_millis, v.created_by
	  FROM lance_namespace.versions v
	  JOIN lance_namespace.entries e ON e.id OPERATOR(pg_catalog.=) v.table_id;

CREATE VIEW lance_namespace.table_branches WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS table_name,
		   b.name AS branch, COALESCE(b.parent_branch, 'main') AS parent_branch,
		   b.parent_version, pg_catalog.to_timestamp(b.create_at) AS created_at,
		   b.manifest_size, b.metadata, b.created_by
	  FROM lance_namespace.branches b
	  JOIN lance_namespace.entries e ON e.id OPERATOR(pg_catalog.=) b.table_id;

CREATE VIEW lance_namespace.table_tags WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS table_name,
		   t.name AS tag, t.branch, t.version, t.created_at, t.created_by
	  FROM lance_namespace.tags t
	  JOIN lance_namespace.entries e ON e.id OPERATOR(pg_catalog.=) t.table_id;

/* Commit history: who (role, session_role), when, what, and through which interface. */
CREATE VIEW lance_namespace.commit_history WITH (security_invoker = true) AS
	SELECT h.transaction_id::text AS transaction_id, h.at, h.role, h.interface,
		   h.operation, h.id, lance_namespace.lance_format_id(h.id) AS name, h.detail,
		   h.session_role
	  FROM lance_namespace.history h;

/*
 * The change feed's JSON for one table version: the payload of the
 * optional NOTIFY, and of lance_changes().
 */
CREATE FUNCTION lance_namespace.lance_commit_payload(id text[], branch text, version bigint,
	manifest_path text, timestamp_millis bigint, transaction_id xid8)
RETURNS json
AS 'MODULE_PATHNAME', 'lance_commit_payload'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

/*
 * A cursor for lance_changes(): the statement's snapshot, with the current
 * transaction listed as in progress.  pg_current_snapshot() leaves it out,
 * which would make a cursor taken inside a writing transaction count that
 * transaction's own versions as already seen.
 */
CREATE FUNCTION lance_namespace.lance_changes_cursor()
RETURNS pg_catalog.pg_snapshot
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $body$
DECLARE
	snap pg_catalog.pg_snapshot := pg_catalog.pg_current_snapshot();
	me pg_catalog.xid8 := pg_catalog.pg_current_xact_id_if_assigned();
BEGIN
	IF me IS NULL OR me OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmax(snap) THEN
		RETURN snap;
	END IF;
	RETURN (LEAST(pg_catalog.pg_snapshot_xmin(snap), me)::text
			OPERATOR(pg_catalog.||) ':'
			OPERATOR(pg_catalog.||) pg_catalog.pg_snapshot_xmax(snap)::text
			OPERATOR(pg_catalog.||) ':'
			OPERATOR(pg_catalog.||)
			(SELECT pg_catalog.string_agg(u.xid::text, ',' ORDER BY u.xid)
			   FROM (SELECT pg_catalog.pg_snapshot_xip(snap) AS xid UNION SELECT me) u)
		   )::pg_catalog.pg_snapshot;
END
$body$;

/*
 * The change feed, read from the history (an outbox): the table versions
 * whose transactions committed after the snapshot "since" was taken and
 * before the statement's own snapshot ("cursor", the same in every row),
 * in the order of their inserts.  With "until", an earlier cursor, only
 * those committed before until was taken (a catch-up to a known point).
 * Pass the last cursor you received as the next "since": each committed
 * version is returned exactly once, however long its transaction ran,
 * across restarts, and never for rolled-back work.  Start from
 * lance_changes_cursor().  A version's record is read from its row, or
 * from history_log once it has moved there (the version deleted or
 * changed since, or created before 0.4.0): in one statement's snapshot it
 * is in exactly one of them.  The rows with transaction ids from since's
 * xmax on, and those of its in-progress list, are read by index.  The
 * current transaction counts as in progress: its own versions are left to
 * a later call, after it commits.  PL/pgSQL, so that its plan is kept for
 * the session: the gateway's feed calls it up to 200 times a second, and a
 * LANGUAGE sql function is planned at each call.
 */
CREATE FUNCTION lance_namespace.lance_changes(since pg_catalog.pg_snapshot,
											 until pg_catalog.pg_snapshot DEFAULT NULL)
RETURNS TABLE (cursor pg_catalog.pg_snapshot, transaction_id pg_catalog.xid8, id text[],
			   branch text, version bigint, manifest_path text, timestamp_millis bigint,
			   payload json)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
	snap pg_catalog.pg_snapshot := COALESCE(until, lance_namespace.lance_changes_cursor());
	xips pg_catalog.xid8[] := ARRAY(SELECT pg_catalog.pg_snapshot_xip(since));
BEGIN
	IF since IS NULL THEN
		RETURN;
	END IF;
	/*
	 * Rows from since's xmax up to snap's (a transaction from snap's xmax on
	 * is not visible in it), and those of since's in-progress list.  The
	 * upper bound also gives the kept generic plan a range, which it
	 * estimates small: an index scan whatever the table's size.
	 */
	RETURN QUERY
	WITH h AS (SELECT r.transaction_id, r.at, r.id,
					  r.detail OPERATOR(pg_catalog.->>) 'branch' AS branch,
					  (r.detail OPERATOR(pg_catalog.->>) 'version')::bigint AS version,
					  r.detail OPERATOR(pg_catalog.->>) 'manifest_path' AS manifest_path
				 FROM lance_namespace.history_log r
				WHERE r.transaction_id OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmax(since)
				  AND r.transaction_id OPERATOR(pg_catalog.<) pg_catalog.pg_snapshot_xmax(snap)
				  AND r.operation OPERATOR(pg_catalog.=) 'CreateTableVersion'
			   UNION ALL
			   SELECT r.transaction_id, r.at, r.id,
					  r.detail OPERATOR(pg_catalog.->>) 'branch',
					  (r.detail OPERATOR(pg_catalog.->>) 'version')::bigint,
					  r.detail OPERATOR(pg_catalog.->>) 'manifest_path'
				 FROM lance_namespace.history_log r
				WHERE r.transaction_id OPERATOR(pg_catalog.=) ANY (xips)
				  AND r.operation OPERATOR(pg_catalog.=) 'CreateTableVersion'
			   UNION ALL
			   SELECT v.transaction_id, v.created_at, v.table_path, v.branch::text, v.version,
					  v.manifest_path
				 FROM lance_namespace.versions v
				WHERE v.transaction_id OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmax(since)
				  AND v.transaction_id OPERATOR(pg_catalog.<) pg_catalog.pg_snapshot_xmax(snap)
			   UNION ALL
			   SELECT v.transaction_id, v.created_at, v.table_path, v.branch::text, v.version,
					  v.manifest_path
				 FROM lance_namespace.versions v
				WHERE v.transaction_id OPERATOR(pg_catalog.=) ANY (xips)),
	c AS (SELECT h.transaction_id, h.at, h.id, h.branch, h.version, h.manifest_path,
				 (pg_catalog.extract('epoch', h.at) OPERATOR(pg_catalog.*) 1000)::bigint AS timestamp_millis
			FROM h
		   WHERE pg_catalog.pg_visible_in_snapshot(h.transaction_id, snap))
	SELECT snap, c.transaction_id, c.id, c.branch, c.version, c.manifest_path, c.timestamp_millis,
		   lance_namespace.lance_commit_payload(c.id, c.branch, c.version, c.manifest_path,
												c.timestamp_millis, c.transaction_id)
	  FROM c
	 ORDER BY c.at, c.transaction_id;
END
$body$;

/*
 * The built-in limits, as the C code enforces them (lance_limits.h), for the
 * configuration view.
 */
CREATE FUNCTION lance_namespace.lance_limits(OUT name text, OUT value text, OUT description text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lance_limits_srf'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

/* The configuration in effect. */
CREATE VIEW lance_namespace.configuration AS
	SELECT 'root_location'::text AS name,
		   (SELECT s.value FROM lance_namespace.settings s
			 WHERE s.name OPERATOR(pg_catalog.=) 'root_location') AS value,
		   'lance_namespace.settings'::text AS source,
		   'Where DeclareTable places tables declared without a location'::text AS description
	UNION ALL
	SELECT l.name, l.value, 'built-in', l.description FROM lance_namespace.lance_limits() l
	UNION ALL
	SELECT 'notify_commits', COALESCE(pg_catalog.current_setting('lance_namespace.notify_commits', true), 'off'), 'lance_namespace.notify_commits',
		   'Whether committed versions are also announced on the channel (lance_changes() does not need it)'
	UNION ALL
	SELECT 'interface', lance_namespace.lance_interface(),
		   'session', 'Interface recorded in the commit history (rest only for the gateway: see lance_interface())';

/* ------------------------------------------------------------------------
 * JSON request helpers: typed reads of one request field that raise
 * InvalidInput (LN013) naming the field when its JSON type is wrong.
 * Types are strict: a string is not a number or a boolean (the gateway
 * gives REST query parameters their JSON types before they get here).
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.req_text(request jsonb, field text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_req_text'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.req_bigint(request jsonb, field text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lance_req_bigint'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.req_int(request jsonb, field text)
RETURNS integer
AS 'MODULE_PATHNAME', 'lance_req_int'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.req_bool(request jsonb, field text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_req_bool'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.req_text_array(request jsonb, field text)
RETURNS text[]
AS 'MODULE_PATHNAME', 'lance_req_text_array'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.req_json(request jsonb, field text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_req_json'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * REST bindings: one function per spec operation, taking the request model
 * as jsonb (path id and query parameters merged in by the gateway) and
 * returning the response model as jsonb.  They only translate shapes; every
 * rule lives in the lance_* functions they call.
 *
 * They are C.  The four of the version routes, which carry every LanceDB
 * commit and read, call the C implementations of the operations directly
 * (src/rest_bindings.c).  Those of the namespace, table, branch, tag, batch
 * commit and transaction routes are one C function, lance_rest_binding,
 * driven by a table (src/rest_table.c): each row names the lance_*
 * function, the request fields in the order of its parameters, read as the
 * req_* helpers read them, and the result columns of the response.  The
 * operation is called through the function manager with its own pinned
 * search_path, as a SQL call of it would be.  Every binding checks EXECUTE
 * on the lance_* function it stands for, as the executor checks it for a
 * SQL call (src/rest_acl.c).  A binding in PL/pgSQL cost a search_path set-up per
 * request field and the executor work of its query: about 0.57 of the
 * SQL function's throughput for DescribeTable, against about 1.0 in C.
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.rest_create_namespace(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_namespaces(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_describe_namespace(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_drop_namespace(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_namespace_exists(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_namespace_exists'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_declare_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_register_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_describe_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_table_exists(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_table_exists'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_tables(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_all_tables(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_deregister_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_drop_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_rename_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_create_table_version(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_create_table_version'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_describe_table_version(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_describe_table_version'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_table_versions(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_list_table_versions'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_batch_delete_table_versions(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_batch_create_table_versions(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_batch_create_table_versions'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_create_table_branch(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_table_branches(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_delete_table_branch(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_create_table_tag(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_get_table_tag_version(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_update_table_tag(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_delete_table_tag(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_list_table_tags(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_batch_commit_tables(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_describe_transaction(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_alter_transaction(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
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

/* ------------------------------------------------------------------------
 * The REST routes, defined once (issue 16).  Each row is a spec route that
 * this catalog serves: its path, the HTTP methods it accepts, the spec
 * operation, and the binding (a rest_* function above) that serves it.
 * read_only is not written here: it is the binding's own declaration (a
 * STABLE or IMMUTABLE binding only reads), so a read is whatever the
 * function says it is.  no_body marks the existence checks, answered by
 * their status alone (catalog-rest-index.md).  client_paths marks the
 * routes whose answers are table versions: the gateway sends them through
 * rest_client_paths and checks that a described version's manifest still
 * exists (0.5.0).  The binding column is a
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

/* ------------------------------------------------------------------------
 * A table owns its location (0.6.0, issue 39; src/table_location.c)
 *
 * No live table's location is, lies in or contains another's, on every
 * path that places a table: the entries_location_check trigger checks it
 * as the catalog's owner (a table the caller cannot see counts) with the
 * latest snapshot, after advisory locks that serialize overlapping
 * placements.  A role other than the catalog's owner places a table only
 * below its namespace's own location (the root location and the
 * namespace's names).  Locations are compared by their keys
 * (src/location_rules.c), which entries_location_key_idx indexes.
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_location_key(location text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_location_key_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE INDEX entries_location_key_idx ON lance_namespace.entries
	((lance_namespace.lance_location_key(location) COLLATE "C")) WHERE kind = 't';

CREATE FUNCTION lance_namespace.lance_entries_location_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_entries_location_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER entries_location_check BEFORE INSERT OR UPDATE OF location
	ON lance_namespace.entries
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_entries_location_check();

/*
 * Whether the current role could place table id at location now; the
 * gateway asks before it reads anything at a location a client named
 * (RegisterTable), so that a refusal comes before any I/O.
 */
CREATE FUNCTION lance_namespace.lance_check_table_location(id text[], location text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_check_table_location'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_check_table_location(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * Whether a live table other than except_table has a location that is,
 * lies in or contains location (--sweep asks before it deletes anything).
 * Answered as the catalog's owner, so not executable by PUBLIC: it would
 * tell a tenant where other tenants' tables are.
 */
CREATE FUNCTION lance_namespace.lance_location_taken(location text, except_table bigint DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_location_taken'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

REVOKE ALL ON FUNCTION lance_namespace.lance_location_taken(text, bigint) FROM PUBLIC;

/*
 * A version number is acknowledged once (0.6.0, issue 39;
 * src/version_check.c): a new version is above its branch's latest
 * (lance_versions_check), and a branch's latest version is not deleted
 * while the table and the branch live.
 */
CREATE FUNCTION lance_namespace.lance_versions_keep_latest()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_versions_keep_latest'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER versions_keep_latest BEFORE DELETE ON lance_namespace.versions
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_versions_keep_latest();
