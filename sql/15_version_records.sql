--
-- 15_version_records: a version row is the record of its own creation
-- (0.4.0, issue 19).  A create writes no history row: the row carries the
-- role, transaction, instant, interface, session role and table id, which
-- the history view and the change feed read.  The record moves to
-- history_log unchanged when the row goes (an operation's DELETE, a direct
-- DELETE, a cascade) or changes (the owner's UPDATE), and before the
-- owner's TRUNCATE; no inserter, not even the owner, chooses a record.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT n, lance_namespace.lance_drop_namespace(ARRAY[n], 'Skip', 'Cascade') IS NULL AS nothing_left
  FROM unnest(ARRAY['vr']) n;
SELECT * FROM lance_namespace.lance_create_namespace('{vr}');
SELECT location FROM lance_namespace.lance_declare_table('{vr,t}', '/loc/vr/t');
SELECT id AS vr_t FROM lance_namespace.entries WHERE path = '{vr,t}' \gset
SELECT lance_namespace.lance_changes_cursor() AS vr_c0 \gset
SELECT count(*) AS vr_log0 FROM lance_namespace.history_log \gset

-- two creates in one transaction: the rows carry their records, the log
-- gets nothing
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS vr_tx1 \gset
SELECT version FROM lance_namespace.lance_create_table_version('{vr,t}', 1, '/m/vr/1');
SET lance_namespace.interface = 'rest';
SELECT lance_namespace.rest_create_table_version('{"id": ["vr", "t"], "version": 2, "manifest_path": "/m/vr/2"}') -> 'version' -> 'version' AS version;
RESET lance_namespace.interface;
COMMIT;
SELECT count(*) - :vr_log0 AS new_log_rows FROM lance_namespace.history_log;
SELECT version, transaction_id::text = :'vr_tx1' AS in_tx1, created_by = current_user AS by_me,
       interface, session_role = session_user AS session_ok, table_path,
       created_at BETWEEN now() - interval '10 min' AND now() AS at_ok,
       timestamp_millis = (extract(epoch FROM created_at) * 1000)::bigint AS same_instant
  FROM lance_namespace.versions WHERE table_id = :vr_t ORDER BY version;
-- the history view reads them as the CreateTableVersion rows of 0.3.0
SELECT transaction_id::text = :'vr_tx1' AS in_tx1, role = current_user AS by_me, interface,
       operation, id, detail
  FROM lance_namespace.history WHERE id[1] = 'vr' ORDER BY at;
SELECT status, properties ->> 'operation' AS operation
  FROM lance_namespace.lance_describe_transaction(:'vr_tx1');

-- the owner's direct insert gets the database's record, not the one given
INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path,
	naming_scheme, timestamp_millis, created_by, transaction_id, created_at, interface,
	session_role, table_path)
VALUES (:vr_t, 3, '/m/vr/3', '/m/vr/3', 'V2', 0, 'forged', '1', '2000-01-01', 'rest', 'forged', '{forged}');
SELECT version, created_by = current_user AS by_me, transaction_id <> '1' AS tx_not_forged,
       created_at > '2000-01-02' AS at_not_forged, interface, session_role = session_user AS session_ok,
       table_path
  FROM lance_namespace.versions WHERE table_id = :vr_t AND version = 3;

-- renamed, the table's earlier versions keep the id they were created under
SELECT * FROM lance_namespace.lance_rename_table('{vr,t}', 'u');
SELECT version FROM lance_namespace.lance_create_table_version('{vr,u}', 4, '/m/vr/4');
SELECT lance_namespace.lance_format_id(id) AS name, detail ->> 'version' AS version
  FROM lance_namespace.history WHERE operation = 'CreateTableVersion' AND id[1] = 'vr' ORDER BY at;

--
-- The records move, unchanged, when their rows go or change
--
CREATE TEMP TABLE vr_before AS
	SELECT * FROM lance_namespace.history WHERE operation = 'CreateTableVersion' AND id[1] = 'vr';
CREATE FUNCTION pg_temp.vr_kept() RETURNS TABLE (records bigint, lost bigint, in_log bigint)
LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM lance_namespace.history
			 WHERE operation = 'CreateTableVersion' AND id[1] = 'vr'),
		   (SELECT count(*) FROM (SELECT transaction_id, at, role, interface, id, detail::text, session_role FROM vr_before
								  EXCEPT ALL
								  SELECT transaction_id, at, role, interface, id, detail::text, session_role
									FROM lance_namespace.history
								   WHERE operation = 'CreateTableVersion' AND id[1] = 'vr') x),
		   (SELECT count(*) FROM lance_namespace.history_log
			 WHERE operation = 'CreateTableVersion' AND id[1] = 'vr')
$$;
SELECT * FROM pg_temp.vr_kept();
-- an operation's delete (BatchDeleteTableVersions) of version 1
SELECT deleted_count FROM lance_namespace.lance_batch_delete_table_versions('{vr,u}',
	'[{"start_version": 1, "end_version": 2}]');
SELECT * FROM pg_temp.vr_kept();
-- the owner's correction of version 2: the record keeps the committed values
UPDATE lance_namespace.versions SET e_tag = 'fixed', manifest_path = '/corrected'
 WHERE table_id = :vr_t AND version = 2;
SELECT * FROM pg_temp.vr_kept();
SELECT version, manifest_path, transaction_id IS NULL AS record_moved
  FROM lance_namespace.versions WHERE table_id = :vr_t AND version = 2;
-- a direct delete of version 3, rolled back: nothing moves
BEGIN;
DELETE FROM lance_namespace.versions WHERE table_id = :vr_t AND version = 3;
SELECT * FROM pg_temp.vr_kept();
ROLLBACK;
SELECT * FROM pg_temp.vr_kept();
-- the owner's TRUNCATE (rolled back: other tests' versions are there too)
BEGIN;
TRUNCATE lance_namespace.versions CASCADE;
SELECT * FROM pg_temp.vr_kept();
ROLLBACK;
-- the change feed from before: each version once, as it was committed
SELECT lance_namespace.lance_format_id(id) AS name, version, manifest_path
  FROM lance_namespace.lance_changes(:'vr_c0') WHERE id[1] = 'vr';
-- DropTable: the rest go by cascade
SELECT id FROM lance_namespace.lance_drop_table('{vr,u}');
SELECT * FROM pg_temp.vr_kept();
SELECT lance_namespace.lance_format_id(id) AS name, version, manifest_path
  FROM lance_namespace.lance_changes(:'vr_c0') WHERE id[1] = 'vr';

SELECT lance_namespace.lance_drop_namespace('{vr}', NULL, 'Cascade') IS NOT NULL AS dropped;
