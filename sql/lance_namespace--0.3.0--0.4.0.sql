/*
 * lance_namespace 0.3.0 -> 0.4.0.
 *
 * Issue 19, less WAL per SQL commit: a version row is the record of its own
 * creation.  CreateTableVersion wrote a history row (about 530 bytes of
 * WAL with its two index entries) besides the version; now the
 * versions_check trigger writes the record on the version row itself (the
 * role as created_by, the transaction, the instant, the interface, the
 * session role and the table's id), and the history keeps a log only of
 * the operations that create no version.
 *
 * - versions: created_by is text (it was name, 64 bytes), and the record
 *   columns transaction_id, created_at, interface, session_role and
 *   table_path, with an index on transaction_id (the change feed's and
 *   DescribeTransaction's lookup).  They stay NULL in the rows created
 *   before this update, whose records are in the log already.
 * - The history table becomes history_log, with text roles; history is
 *   now a view of the log and of the versions' records, with the same
 *   columns, so that its readers see the same rows.  A version that goes
 *   or changes moves its record to the log (audit.c).  The roles granted
 *   SELECT on the history table keep it on history_log and get it on the
 *   view.
 * - versions_audit no longer fires on INSERT; versions_moved moves the
 *   records of the versions a DELETE removes (one statement per DELETE),
 *   versions_truncate all of them before the owner's TRUNCATE.
 * - lance_changes() reads the versions' records and the log; lance_grant
 *   grants SELECT on history and history_log.
 * - The views table_versions and commit_history are made again (their
 *   role columns are text), with the grants they had.
 *
 * The result equals a fresh 0.4.0 install (test/t/033_upgrade_paths.pl).
 */

\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.4.0'" to load this file. \quit

/*
 * The grants of the views made again, and of the history table (for the
 * new view), as GRANT statements kept in a transaction-local setting (a
 * table made here would become a member of the extension).
 */
SELECT pg_catalog.set_config('lance_namespace_update.grants', COALESCE(pg_catalog.jsonb_agg(
		pg_catalog.format('GRANT %s ON lance_namespace.%I TO %s%s', a.privilege_type, c.relname,
			CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
				 ELSE pg_catalog.quote_ident(a.grantee::pg_catalog.regrole::text) END,
			CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END))::text, '[]'), true)
  FROM pg_catalog.pg_class c,
	   LATERAL pg_catalog.aclexplode(c.relacl) a
 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'lance_namespace'::pg_catalog.regnamespace
   AND c.relname OPERATOR(pg_catalog.=) ANY ('{table_versions,commit_history,history}'::pg_catalog.name[])
   AND a.grantee OPERATOR(pg_catalog.<>) c.relowner;

DROP VIEW lance_namespace.commit_history;
DROP VIEW lance_namespace.table_versions;

ALTER TABLE lance_namespace.history RENAME TO history_log;
ALTER INDEX lance_namespace.history_transaction_idx RENAME TO history_log_transaction_idx;
ALTER INDEX lance_namespace.history_at_idx RENAME TO history_log_at_idx;
ALTER TABLE lance_namespace.history_log
	ALTER COLUMN role TYPE text,
	ALTER COLUMN session_role TYPE text;

ALTER TABLE lance_namespace.versions
	ALTER COLUMN created_by TYPE text,
	ADD COLUMN transaction_id xid8,
	ADD COLUMN created_at timestamptz,
	ADD COLUMN interface text,
	ADD COLUMN session_role text,
	ADD COLUMN table_path text[];

/* the change feed and DescribeTransaction find a transaction's versions */
CREATE INDEX versions_transaction_idx ON lance_namespace.versions (transaction_id);

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

CREATE VIEW lance_namespace.table_versions WITH (security_invoker = true) AS
	SELECT e.path AS id, lance_namespace.lance_format_id(e.path) AS name,
		   v.branch, v.version, v.manifest_path, v.staging_manifest_path,
		   v.manifest_size, v.e_tag, v.metadata, v.naming_scheme,
		   v.timestamp_millis, v.created_by
	  FROM lance_namespace.versions v
	  JOIN lance_namespace.entries e ON e.id OPERATOR(pg_catalog.=) v.table_id;

/* Commit history: who (role, session_role), when, what, and through which interface. */
CREATE VIEW lance_namespace.commit_history WITH (security_invoker = true) AS
	SELECT h.transaction_id::text AS transaction_id, h.at, h.role, h.interface,
		   h.operation, h.id, lance_namespace.lance_format_id(h.id) AS name, h.detail,
		   h.session_role
	  FROM lance_namespace.history h;

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
DROP TRIGGER versions_audit ON lance_namespace.versions;
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
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.history, lance_namespace.history_log TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, DELETE ON lance_namespace.privileges TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT SELECT ON lance_namespace.settings, lance_namespace.namespaces,'
			' lance_namespace.tables, lance_namespace.table_versions, lance_namespace.table_branches,'
			' lance_namespace.table_tags, lance_namespace.commit_history, lance_namespace.configuration TO %I', role_name);
		EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE lance_namespace.entries_id_seq TO %I', role_name);
	END IF;
END;
$$;

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
CREATE OR REPLACE FUNCTION lance_namespace.lance_changes(since pg_catalog.pg_snapshot,
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

DO $$
DECLARE
	g text;
BEGIN
	FOR g IN SELECT pg_catalog.jsonb_array_elements_text(
				 pg_catalog.current_setting('lance_namespace_update.grants')::pg_catalog.jsonb) LOOP
		EXECUTE g;
	END LOOP;
END
$$;
