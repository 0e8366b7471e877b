-- (d) plain_append.sql, (c), without the foreign key: the same statement
-- into bench.versions_nofk, a copy of lance_namespace.versions with its
-- columns, defaults, indexes, row level security and row triggers
-- (versions_check writes the creation record; versions_unrecorded) but not
-- its foreign key to the table's entry (bench/sql/setup.sql).  (c)/(d) is
-- the price of the foreign key, the one guarantee that takes a lock on
-- another table's row; (d) is not a catalog: a version in it can outlive
-- its table.  Client N appends to bench$pN (its versions go to the copy).
\set v :v + 1
WITH t AS (SELECT clock_timestamp() AS at),
e AS (
	SELECT id, location FROM lance_namespace.entries
	 WHERE path = ARRAY['bench', 'p' || :client_id] COLLATE "C"),
v AS (
	INSERT INTO bench.versions_nofk (table_id, branch, version, manifest_path,
		staging_manifest_path, manifest_size, naming_scheme, timestamp_millis)
	SELECT e.id, 'main', :v, e.location || '/_versions/' || (18446744073709551615 - :v) || '.manifest',
		'/bench/p.lance/_versions/x-staging', 100, 'V2', (EXTRACT(EPOCH FROM t.at) * 1000)::bigint
	  FROM e, t
	ON CONFLICT (table_id, branch, version) DO NOTHING
	RETURNING version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata)
SELECT * FROM v;
