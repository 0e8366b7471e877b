-- (a) baseline, one hot table: every writer races for latest+1.
INSERT INTO bench.raw_versions (table_id, branch, version, manifest_path, staging_manifest_path,
                                manifest_size, naming_scheme, timestamp_millis)
SELECT -1, 'main', COALESCE(max(version), -1) + 1, '/bench/hot.lance/_versions/x.manifest',
       '/bench/hot.lance/_versions/x-staging', 100, 'V2', (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint
  FROM bench.raw_versions WHERE table_id = -1 AND branch = 'main'
ON CONFLICT DO NOTHING
RETURNING version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata;
