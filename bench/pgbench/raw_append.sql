-- (a) baseline, distinct tables: a raw put-if-not-exists into a plain table
-- of the same shape and indexes as lance_namespace.versions.
\set v :v + 1
INSERT INTO bench.raw_versions (table_id, branch, version, manifest_path, staging_manifest_path,
                                manifest_size, naming_scheme, timestamp_millis)
VALUES (:client_id, 'main', :v, '/bench/a.lance/_versions/x.manifest', '/bench/a.lance/_versions/x-staging',
        100, 'V2', (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint)
ON CONFLICT DO NOTHING
RETURNING version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata;
