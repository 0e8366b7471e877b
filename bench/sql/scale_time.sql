-- scale_time.sql: median times of the scale operations, big fixture vs
-- small fixture.  psql variables: big, bigt, n (repetitions).  A range
-- never takes a fixture's latest version, which stays (a version number is
-- acknowledged once).
\pset format unaligned
\pset tuples_only on
\pset fieldsep '\t'
SET plan_cache_mode = auto;
-- warm the plans and the caches once
SELECT bench.time_ms($q$SELECT lance_namespace.lance_describe_table_version(ARRAY['scale','v_big'])$q$, 3);
SELECT bench.time_ms($q$SELECT lance_namespace.lance_describe_table_version(ARRAY['scale','v_small'])$q$, 3);
SELECT 'SCALE', op, big, small FROM (VALUES
 ('describe latest, ms',
  bench.time_ms($q$SELECT lance_namespace.lance_describe_table_version(ARRAY['scale','v_big'])$q$, :n),
  bench.time_ms($q$SELECT lance_namespace.lance_describe_table_version(ARRAY['scale','v_small'])$q$, :n)),
 ('list descending limit 1, ms',
  bench.time_ms($q$SELECT lance_namespace.lance_list_table_versions(ARRAY['scale','v_big'], descending => true, "limit" => 1)$q$, :n),
  bench.time_ms($q$SELECT lance_namespace.lance_list_table_versions(ARRAY['scale','v_small'], descending => true, "limit" => 1)$q$, :n)),
 ('page of 1,000 via page_token (big: from the middle), ms',
  bench.time_ms(format($q$SELECT lance_namespace.lance_list_table_versions(ARRAY['scale','v_big'], page_token => %L, "limit" => 1000)$q$,
                       bench.token('a', ((:big / 2) - 1)::text)), :n),
  bench.time_ms(format($q$SELECT lance_namespace.lance_list_table_versions(ARRAY['scale','v_small'], page_token => %L, "limit" => 1000)$q$,
                       bench.token('a', '-1')), :n)),
 ('batch delete of a version range, per deleted version (big: 10,000; small: all but the latest, 999), us',
  bench.time_ms(format($q$SELECT lance_namespace.lance_batch_delete_table_versions(ARRAY['scale','v_big'], '[{"start_version": %s, "end_version": %s}]')$q$,
                       :big / 2 - 1, :big / 2 + 9998), greatest(:n / 10, 3), true) / 10,
  bench.time_ms($q$SELECT lance_namespace.lance_batch_delete_table_versions(ARRAY['scale','v_small'], '[{"start_version": 0, "end_version": 998}]')$q$,
                greatest(:n / 10, 3), true)),
 ('batch delete of a 10,000-version range (small: all but the latest, 999), total ms (not comparable: 10x the rows)',
  bench.time_ms(format($q$SELECT lance_namespace.lance_batch_delete_table_versions(ARRAY['scale','v_big'], '[{"start_version": %s, "end_version": %s}]')$q$,
                       :big / 2 - 1, :big / 2 + 9998), greatest(:n / 10, 3), true),
  bench.time_ms($q$SELECT lance_namespace.lance_batch_delete_table_versions(ARRAY['scale','v_small'], '[{"start_version": 0, "end_version": 998}]')$q$,
                greatest(:n / 10, 3), true)),
 ('page of the table list (100 names; big: from the middle), ms',
  bench.time_ms(format($q$SELECT lance_namespace.lance_list_tables(ARRAY['scale','ns_big'], page_token => %L, "limit" => 100)$q$,
                       bench.token('t', 't' || lpad((:bigt / 2)::text, 7, '0'))), :n),
  bench.time_ms(format($q$SELECT lance_namespace.lance_list_tables(ARRAY['scale','ns_small'], page_token => %L, "limit" => 100)$q$,
                       bench.token('t', 't' || lpad('500', 7, '0'))), :n))
) AS r(op, big, small);
