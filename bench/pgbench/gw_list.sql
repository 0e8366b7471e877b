-- The statement that the gateway sends for REST
-- version/list?descending=true&limit=1 of bench$read (SQL_CALL_PATHS in
-- src/gateway/db.c, with the values of a wrk request as literals): the
-- REST path without HTTP and the gateway.
SELECT COALESCE(lance_namespace.rest_client_paths(a.r)::text,
                pg_catalog.current_setting('lance_gateway.no_result')),
       a.r OPERATOR(pg_catalog.#>>) '{version,manifest_path}',
       a.r OPERATOR(pg_catalog.#>>) '{version,version}'
  FROM (SELECT lance_namespace.rest_list_table_versions('{"id":["bench","read"],"descending": true, "limit": 1}'::jsonb) AS r
          FROM (SELECT pg_catalog.set_config('request.headers', '{"host":"127.0.0.1:56400"}', true),
                       pg_catalog.set_config('request.method', 'GET', true),
                       pg_catalog.set_config('request.path', '/v1/table/bench%24read/version/list', true),
                       pg_catalog.set_config('lance_namespace.interface', 'rest', true)
                OFFSET 0) AS request_settings
        OFFSET 0) AS a;
