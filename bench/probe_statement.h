/*
 * probe_statement.h: the statement that evloop_probe.c and mhd_probe.c
 * send for every request, the gateway's for REST version/describe of
 * bench$read (bench/pgbench/gw_describe.sql, with empty request headers).
 */
#ifndef PROBE_STATEMENT_H
#define PROBE_STATEMENT_H

#define SQL "SELECT COALESCE(lance_namespace.rest_client_paths(a.r)::text," \
	" pg_catalog.current_setting('lance_gateway.no_result'))," \
	" a.r OPERATOR(pg_catalog.#>>) '{version,manifest_path}'," \
	" a.r OPERATOR(pg_catalog.#>>) '{version,version}'" \
	" FROM (SELECT lance_namespace.rest_describe_table_version('{\"id\":[\"bench\",\"read\"]}'::jsonb) AS r" \
	" FROM (SELECT pg_catalog.set_config('request.headers', '{}', true)," \
	" pg_catalog.set_config('request.method', 'POST', true)," \
	" pg_catalog.set_config('request.path', '/v1/table/bench%24read/version/describe', true)," \
	" pg_catalog.set_config('lance_namespace.interface', 'rest', true) OFFSET 0) AS request_settings" \
	" OFFSET 0) AS a"

#endif
