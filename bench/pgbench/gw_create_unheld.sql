-- pgbench/gw_create.sql without manifest_base64: the gateway's create
-- transaction when it holds no bytes (the flushing protocol,
-- --publish-interval-ms 0, or a manifest over the held limits), to split
-- the REST-only PostgreSQL work into the held bytes and the rest.
\set v :v + 1
\startpipeline
BEGIN;
SELECT COALESCE(lance_namespace.rest_create_table_version(('{"version":' || :v || ',"manifest_path":"/tmp/lance_bench.XXXXXX/root/bench/g' || :client_id || '.lance/_versions/stg-' || :v || '","id":["bench","g' || :client_id || '"],"manifest_size":4096}')::jsonb)::text,
                pg_catalog.current_setting('lance_gateway.no_result'))
  FROM (SELECT pg_catalog.set_config('request.headers', '{"host":"127.0.0.1:56400","content-type":"application/json","content-length":"107"}', true),
               pg_catalog.set_config('request.method', 'POST', true),
               pg_catalog.set_config('request.path', '/v1/table/bench%24g' || :client_id || '/version/create', true),
               pg_catalog.set_config('lance_namespace.interface', 'rest', true)
        OFFSET 0) AS request_settings;
\endpipeline
COMMIT;
