-- scale_load.sql: the scale fixtures, bulk-loaded with INSERT ... SELECT
-- generate_series into the catalog tables as the owner (foreign-key
-- triggers are skipped with session_replication_role = replica: the
-- parents exist by construction).
-- psql variables: big (versions of the big table), bigt (tables of the big
-- namespace); the small fixtures have 1,000 of each.
SELECT lance_namespace.lance_create_namespace(ARRAY['scale']);
SELECT lance_namespace.lance_declare_table(ARRAY['scale', 'v_small']);
SELECT lance_namespace.lance_declare_table(ARRAY['scale', 'v_big']);
SELECT lance_namespace.lance_create_namespace(ARRAY['scale', 'ns_small']);
SELECT lance_namespace.lance_create_namespace(ARRAY['scale', 'ns_big']);
SET session_replication_role = replica;
INSERT INTO lance_namespace.versions (table_id, branch, version, manifest_path, staging_manifest_path,
                                      manifest_size, naming_scheme, timestamp_millis)
SELECT e.id, 'main', g, e.location || '/_versions/' || g || '.manifest', e.location || '/_versions/s-' || g,
       1000, 'V2', 1700000000000 + g
  FROM (VALUES ('v_small', 1000), ('v_big', :big)) AS f(name, n)
  JOIN lance_namespace.entries e ON e.path = ARRAY['scale', f.name] COLLATE "C"
 CROSS JOIN LATERAL generate_series(0, f.n - 1) g;
INSERT INTO lance_namespace.entries (parent_id, kind, name, path, location, declared)
SELECT p.id, 't', t.name, p.path || t.name, '/bench/scale/' || f.name || '/' || t.name || '.lance', false
  FROM lance_namespace.entries p
  JOIN (VALUES ('ns_small', 1000), ('ns_big', :bigt)) AS f(name, n) ON p.path = ARRAY['scale', f.name] COLLATE "C"
 CROSS JOIN LATERAL (SELECT 't' || lpad(g::text, 7, '0') AS name FROM generate_series(0, f.n - 1) g) t;
RESET session_replication_role;
VACUUM ANALYZE lance_namespace.versions;
VACUUM ANALYZE lance_namespace.entries;
