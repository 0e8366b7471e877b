--
-- 17_read_lookups: a read resolves its table or namespace with one probe of
-- entries' path index (src/catalog.c, src/entry_probe.c), not with a
-- statement whose generic plan scans a small catalog from end to end: the
-- reads below leave the sequential scan count of entries where it was.
-- Under row level security the lookup stays a statement (11_privileges).
--
SELECT lance_namespace.lance_create_namespace('{rl}') IS NOT NULL AS created;
SELECT count(*) AS declared
  FROM (SELECT lance_namespace.lance_declare_table(ARRAY['rl', 't' || i]) FROM generate_series(1, 40) i) s;
SELECT version FROM lance_namespace.lance_create_table_version('{rl,t1}', 1, '/data/lance/rl/t1.lance/stg-1', 10);
ANALYZE lance_namespace.entries;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS seq_before, idx_scan AS idx_before
  FROM pg_stat_user_tables WHERE relid = 'lance_namespace.entries'::regclass \gset
SELECT count(*) AS described
  FROM generate_series(1, 30) i, LATERAL lance_namespace.lance_describe_table_version(ARRAY['rl', 't' || (1 + i % 1)]) v;
SELECT count(*) AS listed
  FROM generate_series(1, 30) i, LATERAL lance_namespace.lance_list_table_versions(ARRAY['rl', 't' || (1 + i % 1)]) v;
SELECT count(*) AS exist
  FROM generate_series(1, 30) i WHERE lance_namespace.lance_table_exists(ARRAY['rl', 't' || (1 + i % 1)]);
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :seq_before AS sequential_scans, idx_scan - :idx_before >= 90 AS probed
  FROM pg_stat_user_tables WHERE relid = 'lance_namespace.entries'::regclass;
-- what a read finds: the same as before
SELECT version FROM lance_namespace.lance_describe_table_version('{rl,t1}');
SELECT lance_namespace.lance_table_exists('{rl,t9}') AS t9, lance_namespace.lance_table_exists('{rl,nope}') AS nope;
SELECT lance_namespace.lance_drop_namespace('{rl}', NULL, 'Cascade') IS NOT NULL AS dropped;
