/*
 * lance_namespace 0.1.0 -> 0.2.0 (issue 18: security).
 *
 * - Committed versions are immutable: the versions_check trigger (C, same
 *   function) now refuses an UPDATE of a version by anyone but the
 *   catalog's owner, and a direct INSERT outside lance_create_table_version.
 * - The history is written by the database: the catalog's C functions and
 *   the new lance_audit trigger write it as the catalog's owner; callers
 *   lose INSERT on it (and the history_insert policy goes); the new
 *   history_guard trigger keeps it append-only for all but the owner.
 * - history gains session_role (NULL for rows written before the upgrade),
 *   and its interface comes from lance_interface(), which a psql user
 *   cannot set to rest.
 * - lance_grant gives no UPDATE on versions and no INSERT on history; the
 *   roles that had them lose them here.
 *
 * - Issue 17: lance_drop_table / rest_drop_table (DropTable, recorded as
 *   such; the gateway deletes the files), and lance_register_table gains
 *   versions (the versions already at the location, imported with the
 *   registration), and lance_retire_table_version / rest_retire_table_version
 *   (a version whose manifest is gone from storage).
 *
 * The result equals a fresh 0.2.0 install (test/t/033_upgrade_paths.pl).
 */

\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.2.0'" to load this file. \quit

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

ALTER TABLE lance_namespace.history
	ALTER COLUMN interface SET DEFAULT lance_namespace.lance_interface();
/* rows written before the upgrade have no known session role: NULL */
ALTER TABLE lance_namespace.history ADD COLUMN session_role name;
ALTER TABLE lance_namespace.history ALTER COLUMN session_role SET DEFAULT SESSION_USER;

DROP POLICY history_insert ON lance_namespace.history;

/*
 * The audit trail (src/audit.c).  lance_audit records every change to
 * entries, branches and tags that no catalog operation records itself
 * (direct DML, and the owner's), as "<INSERT|UPDATE|DELETE> <table>" with
 * the old and new rows, and every new version as CreateTableVersion, the
 * row the change feed reads.  It writes as the catalog's owner: callers
 * cannot write the history.  C rather than PL/pgSQL: it runs on every
 * commit.
 */
CREATE FUNCTION lance_namespace.lance_audit()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_audit'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER entries_audit AFTER INSERT OR UPDATE OR DELETE ON lance_namespace.entries
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();
CREATE TRIGGER versions_audit AFTER INSERT OR UPDATE OR DELETE ON lance_namespace.versions
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_audit();
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

CREATE TRIGGER history_guard BEFORE INSERT OR UPDATE OR DELETE ON lance_namespace.history
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_history_guard();

CREATE OR REPLACE FUNCTION lance_namespace.lance_grant(role_name name, namespace text[], privilege text)
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
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.history TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, DELETE ON lance_namespace.privileges TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.settings, lance_namespace.namespaces,'
			' lance_namespace.tables, lance_namespace.table_versions, lance_namespace.table_branches,'
			' lance_namespace.table_tags, lance_namespace.commit_history, lance_namespace.configuration TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE lance_namespace.entries_id_seq TO %I', role_name);
	END IF;
END;
$$;

/*
 * Take back what 0.1.0's lance_grant gave (and anything else granted):
 * UPDATE on versions, and every write on history, from every role but the
 * owner.
 */
DO $upgrade$
DECLARE
	r record;
BEGIN
	FOR r IN
		SELECT DISTINCT c.oid::pg_catalog.regclass AS rel, a.privilege_type AS priv,
			   CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
					ELSE pg_catalog.quote_ident(g.rolname) END AS grantee
		  FROM pg_catalog.pg_class c
		 CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
		  LEFT JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) a.grantee
		 WHERE a.grantee OPERATOR(pg_catalog.<>) c.relowner
		   AND ((c.oid OPERATOR(pg_catalog.=) 'lance_namespace.versions'::pg_catalog.regclass
				 AND a.privilege_type OPERATOR(pg_catalog.=) 'UPDATE')
				OR (c.oid OPERATOR(pg_catalog.=) 'lance_namespace.history'::pg_catalog.regclass
					AND a.privilege_type OPERATOR(pg_catalog.=) ANY (ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'])))
	LOOP
		EXECUTE pg_catalog.format('REVOKE %s ON %s FROM %s', r.priv, r.rel, r.grantee);
	END LOOP;
END
$upgrade$;

CREATE OR REPLACE VIEW lance_namespace.commit_history WITH (security_invoker = true) AS
	SELECT h.transaction_id::text AS transaction_id, h.at, h.role, h.interface,
		   h.operation, h.id, lance_namespace.lance_format_id(h.id) AS name, h.detail,
		   h.session_role
	  FROM lance_namespace.history h;

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
 * ListAllTables honours include_declared, as ListTables does (a new
 * parameter: the function is replaced, so an EXECUTE revoked on the old one
 * must be revoked again).
 */
DROP FUNCTION lance_namespace.lance_list_all_tables(text, integer, text);
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
CREATE OR REPLACE VIEW lance_namespace.configuration AS
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

CREATE FUNCTION lance_namespace.rest_drop_table(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/* RegisterTable imports the versions a table already has (issue 17). */
DROP FUNCTION lance_namespace.lance_register_table(text[], text, text, jsonb);
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
