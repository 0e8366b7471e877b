-- (c) the work of lance_create_table_version written out by hand as one
-- statement on the extension's own tables: resolve the table (no row lock,
-- as lance_create_table_version for a role outside row level security: the
-- FK check locks the entry when the version row goes in), insert the
-- version (the FK, the row triggers and the primary key apply; the
-- versions_check trigger writes the creation record on the row, as for
-- lance_create_table_version, looking up the table's path, which the
-- function hands it).  No validation, no function call, no SPI:
-- the floor of what these guarantees cost.  (b)/(c) is the implementation's
-- own overhead.  Client N appends to bench$pN.  This variant also queues
-- the change feed's NOTIFY, as lance_create_table_version does with
-- lance_namespace.notify_commits = on.
\set v :v + 1
WITH t AS (SELECT clock_timestamp() AS at),
e AS (
	SELECT id, location FROM lance_namespace.entries
	 WHERE path = ARRAY['bench', 'p' || :client_id] COLLATE "C"),
v AS (
	INSERT INTO lance_namespace.versions (table_id, branch, version, manifest_path,
		staging_manifest_path, manifest_size, naming_scheme, timestamp_millis)
	SELECT e.id, 'main', :v, e.location || '/_versions/' || (18446744073709551615 - :v) || '.manifest',
		'/bench/p.lance/_versions/x-staging', 100, 'V2', (EXTRACT(EPOCH FROM t.at) * 1000)::bigint
	  FROM e, t
	ON CONFLICT (table_id, branch, version) DO NOTHING
	RETURNING version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata),
n AS (
	SELECT pg_notify('lance_namespace_commits', json_build_object('id', ARRAY['bench', 'p' || :client_id],
		'table', 'bench$p' || :client_id, 'branch', 'main', 'version', v.version,
		'manifest_path', v.manifest_path, 'timestamp_millis', v.timestamp_millis,
		'transaction_id', pg_current_xact_id()::text)::text) AS notified
	  FROM v)
SELECT v.* FROM v, n;
