-- (b) lance_create_table_version, distinct tables: client N appends to bench$aN.
\set v :v + 1
SELECT * FROM lance_namespace.lance_create_table_version(ARRAY['bench', 'a' || :client_id], :v,
       '/bench/a.lance/_versions/x-staging', 100);
