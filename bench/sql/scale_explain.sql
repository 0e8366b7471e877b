-- scale_explain.sql: the plans of the catalog's statements on the big
-- fixtures (the same SQL as src/spiutil.c; generic plans: the page walks'
-- kept plans are generic from the start, src/spiutil.c's "generic", and the
-- others' end up so).
SELECT id AS t FROM lance_namespace.entries WHERE path = ARRAY['scale','v_big'] COLLATE "C" \gset
SELECT id AS ns FROM lance_namespace.entries WHERE path = ARRAY['scale','ns_big'] COLLATE "C" \gset
SET plan_cache_mode = force_generic_plan;
PREPARE resolve(text[]) AS SELECT id, kind, location, properties, declared FROM lance_namespace.entries WHERE path = $1 COLLATE "C";
PREPARE latest(bigint, text) AS SELECT version, manifest_path FROM lance_namespace.versions
  WHERE table_id = $1 AND branch = $2 COLLATE "C" ORDER BY version DESC LIMIT 1;
PREPARE page_asc(bigint, text, bigint, bigint) AS SELECT version, manifest_path FROM lance_namespace.versions
  WHERE table_id = $1 AND branch = $2 COLLATE "C" AND version > $3 ORDER BY version LIMIT $4;
PREPARE page_desc(bigint, text, bigint, bigint) AS SELECT version, manifest_path FROM lance_namespace.versions
  WHERE table_id = $1 AND branch = $2 COLLATE "C" AND version <= $3 ORDER BY version DESC LIMIT $4;
PREPARE list_all(text[], bigint) AS SELECT path FROM lance_namespace.entries
  WHERE kind = 't' AND path > $1 COLLATE "C" ORDER BY path LIMIT $2;
PREPARE del_range(bigint, text, bigint, bigint) AS DELETE FROM lance_namespace.versions
  WHERE table_id = $1 AND branch = $2 COLLATE "C" AND version >= $3 AND version <= $4;
PREPARE list_tables(bigint, text, bigint) AS SELECT name FROM lance_namespace.entries
  WHERE parent_id = $1 AND kind = 't' AND name > $2 COLLATE "C" ORDER BY name LIMIT $3;
\echo '--- resolve id -> entry'
EXPLAIN (COSTS OFF) EXECUTE resolve(ARRAY['scale','v_big']);
\echo '--- describe latest / list descending limit 1'
EXPLAIN (COSTS OFF) EXECUTE latest(:t, 'main');
\echo '--- page via page_token'
EXPLAIN (COSTS OFF) EXECUTE page_asc(:t, 'main', 499999, 1001);
\echo '--- page via page_token, descending'
EXPLAIN (COSTS OFF) EXECUTE page_desc(:t, 'main', 500000, 1001);
\echo '--- page of the list of every table'
EXPLAIN (COSTS OFF) EXECUTE list_all(ARRAY['scale','ns_big','t0050000'], 101);
\echo '--- batch delete of a range'
BEGIN;
EXPLAIN (COSTS OFF) EXECUTE del_range(:t, 'main', 500000, 509999);
ROLLBACK;
\echo '--- page of the table list'
EXPLAIN (COSTS OFF) EXECUTE list_tables(:ns, 't0050000', 101);
