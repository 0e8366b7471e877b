-- setup.sql: fixtures of bench/run (database "bench", run as the owner).
-- psql variables: root (the catalog root), ntables (append tables).
CREATE SCHEMA bench;
-- (a) the baseline: a plain table of the same shape and indexes as
-- lance_namespace.versions (columns, defaults, primary key; no foreign key,
-- CHECK constraints, row level security, history or change feed).  From
-- 0.4.0 on a version row also carries its history record (transaction,
-- instant, interface, session role, table id) with an index on its
-- transaction: history, so not in the baseline.
CREATE TABLE bench.raw_versions (LIKE lance_namespace.versions INCLUDING DEFAULTS INCLUDING INDEXES);
ALTER TABLE bench.raw_versions DROP COLUMN IF EXISTS transaction_id, DROP COLUMN IF EXISTS created_at,
	DROP COLUMN IF EXISTS interface, DROP COLUMN IF EXISTS session_role, DROP COLUMN IF EXISTS table_path;
-- The held bytes of bench/create_floor.c's creates (the REST create's floor
-- probe): a manifest up to a page stays in its row, uncompressed, as in
-- lance_namespace.publications.
CREATE TABLE bench.raw_held (
	table_id	bigint NOT NULL,
	version		bigint NOT NULL,
	manifest	bytea NOT NULL,
	PRIMARY KEY (table_id, version)
) WITH (toast_tuple_target = 8160);
ALTER TABLE bench.raw_held ALTER COLUMN manifest SET STORAGE EXTERNAL;
SELECT lance_namespace.lance_set_root_location(:'root');
SELECT lance_namespace.lance_create_namespace(ARRAY['bench']);
SELECT count(*) FROM (SELECT lance_namespace.lance_declare_table(ARRAY['bench', 'a' || i])
                        FROM generate_series(0, :ntables - 1) i) s;
-- (d) the hand-written floor without the foreign key
-- (pgbench/plain_append_nofk.sql): a copy of versions with its columns,
-- defaults, indexes (the primary key, the transaction index), row level
-- security and row triggers, but no foreign key to entries.
CREATE TABLE bench.versions_nofk (LIKE lance_namespace.versions INCLUDING DEFAULTS INCLUDING INDEXES);
ALTER TABLE bench.versions_nofk ENABLE ROW LEVEL SECURITY;
CREATE TRIGGER versions_check BEFORE INSERT OR UPDATE ON bench.versions_nofk
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_versions_check();
CREATE TRIGGER versions_unrecorded AFTER INSERT ON bench.versions_nofk
	FOR EACH ROW WHEN (NEW.transaction_id IS NULL)
	EXECUTE FUNCTION lance_namespace.lance_audit();
-- (c) and (d): the tables that the hand-written floor
-- (pgbench/plain_append*.sql) appends to.
SELECT count(*) FROM (SELECT lance_namespace.lance_declare_table(ARRAY['bench', 'p' || i])
                        FROM generate_series(0, :ntables - 1) i) s;
-- the gateway's create statement through pgbench (pgbench/gw_create.sql)
SELECT count(*) FROM (SELECT lance_namespace.lance_declare_table(ARRAY['bench', 'g' || i])
                        FROM generate_series(0, :ntables - 1) i) s;
SELECT lance_namespace.lance_declare_table(ARRAY['bench', 'hot']);
SELECT lance_namespace.lance_create_table_version(ARRAY['bench', 'hot'], 0, '/bench/hot.lance/_versions/stg-0', 100);
SELECT lance_namespace.lance_declare_table(ARRAY['bench', 'read']);
SELECT count(*) FROM (SELECT lance_namespace.lance_create_table_version(ARRAY['bench', 'read'], v, '/bench/read-' || v, 100)
                        FROM generate_series(1, 100) v) s;

-- bench.time_ms(sql, n, undo): median wall time in ms of n executions of
-- sql.  With undo, each execution runs in a subtransaction that is rolled
-- back, so that a destructive operation (BatchDeleteTableVersions) measures
-- the same work every time.
CREATE FUNCTION bench.time_ms(q text, n int, undo boolean DEFAULT false) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
	ts float8[] := '{}';
BEGIN
	FOR i IN 1 .. n LOOP
		IF undo THEN
			BEGIN
				t0 := clock_timestamp();
				EXECUTE q;
				ts := ts || (extract(epoch FROM clock_timestamp() - t0) * 1000)::float8;
				RAISE EXCEPTION USING ERRCODE = 'P0099';
			EXCEPTION WHEN SQLSTATE 'P0099' THEN
				NULL;
			END;
		ELSE
			t0 := clock_timestamp();
			EXECUTE q;
			ts := ts || (extract(epoch FROM clock_timestamp() - t0) * 1000)::float8;
		END IF;
	END LOOP;
	RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ts) x);
END $$;

-- bench.token(kind, value): a page token as the catalog encodes it.
CREATE FUNCTION bench.token(kind text, value text) RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT translate(encode(convert_to(kind || ':' || value, 'UTF8'), 'base64'), E'\n', '') $$;
