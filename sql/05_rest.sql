--
-- 05_rest: the jsonb REST bindings (rest_*) and the req_* field readers.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;

--
-- req_* readers
--
SELECT lance_namespace.req_text('{"a": "x"}', 'a'), lance_namespace.req_text('{"a": null}', 'a') IS NULL AS null_is_null,
       lance_namespace.req_text('{}', 'a') IS NULL AS absent, lance_namespace.req_text(NULL, 'a') IS NULL AS no_request,
       lance_namespace.req_text('null', 'a') IS NULL AS json_null_request;
SELECT lance_namespace.req_bigint('{"v": 9223372036854775807}', 'v'), lance_namespace.req_bigint('{"v": -5}', 'v'),
       lance_namespace.req_int('{"l": 7}', 'l'), lance_namespace.req_int('{"l": 2147483647}', 'l');
SELECT lance_namespace.req_bool('{"b": true}', 'b'), lance_namespace.req_bool('{"b": false}', 'b');
SELECT lance_namespace.req_text_array('{"id": ["a", "b"]}', 'id'), lance_namespace.req_text_array('{"id": []}', 'id');
SELECT lance_namespace.req_json('{"p": {"k": "v"}}', 'p'), lance_namespace.req_json('{"p": [1, 2]}', 'p'),
       lance_namespace.req_json('{"p": null}', 'p') IS NULL AS null_is_null;
SELECT lance_try($$SELECT lance_namespace.req_text('{"a": 1}', 'a')$$);
SELECT lance_try($$SELECT lance_namespace.req_text('[1]', 'a')$$);
SELECT lance_try($$SELECT lance_namespace.req_text('"str"', 'a')$$);
SELECT lance_try($$SELECT lance_namespace.req_text('{"a": "x"}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": "abc"}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": "12abc"}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": ""}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": 1.5}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": 9223372036854775808}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": true}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": [1]}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_int('{"l": 2147483648}', 'l')$$);
SELECT lance_try($$SELECT lance_namespace.req_bool('{"b": "yes"}', 'b')$$);
SELECT lance_try($$SELECT lance_namespace.req_bool('{"b": 1}', 'b')$$);
-- strict JSON types: a string is not a number or a boolean, whatever it says
-- (the gateway types query parameters before they get here)
SELECT lance_try($$SELECT lance_namespace.req_bigint('{"v": "-5"}', 'v')$$);
SELECT lance_try($$SELECT lance_namespace.req_int('{"l": "7"}', 'l')$$);
SELECT lance_try($$SELECT lance_namespace.req_bool('{"b": "true"}', 'b')$$);
SELECT lance_try($$SELECT lance_namespace.req_bool('{"b": "0"}', 'b')$$);
SELECT lance_namespace.req_bigint('{"v": null}', 'v') IS NULL AS null_is_absent;
SELECT lance_try($$SELECT lance_namespace.req_text_array('{"id": "notarray"}', 'id')$$);
SELECT lance_try($$SELECT lance_namespace.req_text_array('{"id": ["a", 1]}', 'id')$$);
SELECT lance_try($$SELECT lance_namespace.req_text_array('{"id": ["a", null]}', 'id')$$);
SELECT lance_try($$SELECT lance_namespace.req_text_array('{"id": [["a"]]}', 'id')$$);
SELECT lance_try($$SELECT lance_namespace.req_text_array('{"id": {"a": "b"}}', 'id')$$);

--
-- namespaces
--
SELECT lance_namespace.rest_create_namespace('{"id": ["r1"], "properties": {"k": "v"}}') - 'transaction_id';
SELECT lance_namespace.rest_create_namespace('{"id": ["r1", "kid"]}') - 'transaction_id';
SELECT lance_namespace.rest_create_namespace('{"id": ["r1"], "mode": "exist_ok"}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{"id": ["r1"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{"id": ["r1"], "mode": 1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{"id": ["r2"], "properties": {"k": 1}}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{"id": ["r2"], "properties": "k=v"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{"id": "notarray"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('{}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_namespace('[]')$$);
SELECT lance_namespace.rest_describe_namespace('{"id": ["r1"]}');
SELECT lance_namespace.rest_describe_namespace('{"id": []}');
SELECT lance_try($$SELECT lance_namespace.rest_describe_namespace('{"id": ["nope"]}')$$);
SELECT lance_namespace.rest_namespace_exists('{"id": ["r1", "kid"]}');
SELECT lance_namespace.rest_namespace_exists('{}');
SELECT lance_namespace.rest_namespace_exists(NULL);
SELECT lance_try($$SELECT lance_namespace.rest_namespace_exists('{"id": ["nope"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_namespace_exists('{"id": "r1"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_namespace_exists('{"id": [""]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_namespace_exists('[1]')$$);
SELECT lance_namespace.rest_list_namespaces('{}');
SELECT lance_namespace.rest_list_namespaces('{"id": ["r1"], "limit": 5}');
SELECT lance_namespace.rest_list_namespaces('{"id": ["r1"], "limit": 0}');
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"id": ["r1"], "limit": "0"}')$$);
SELECT lance_namespace.rest_list_namespaces(NULL);
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"limit": "many"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"limit": -1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"page_token": 5}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"page_token": "nope"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_namespaces('{"id": ["nope"]}')$$);

--
-- tables
--
SELECT lance_namespace.rest_declare_table('{"id": ["r1", "t"], "properties": {"a": "b"}}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "t2"], "location": "s3://b/t2", "vend_credentials": "true"}')$$);
SELECT lance_namespace.rest_declare_table('{"id": ["r1", "t2"], "location": "s3://b/t2", "vend_credentials": true}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "t"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["nope", "t"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "x"], "vend_credentials": "maybe"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "x"], "location": 5}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": []}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{}')$$);
SELECT lance_namespace.rest_register_table('{"id": ["r1", "reg"], "location": "/ext/reg"}') - 'transaction_id';
SELECT lance_namespace.rest_register_table('{"id": ["r1", "reg"], "location": "/ext/reg2", "mode": "OVERWRITE", "properties": {"v": "2"}}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_register_table('{"id": ["r1", "reg"], "location": "/ext/reg3"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_register_table('{"id": ["r1", "reg9"]}')$$);
SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"]}');
SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "with_table_uri": true, "check_declared": true}');
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "check_declared": "true"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "version": "abc"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "version": 1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "branch": "dev"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "nope"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "check_declared": 1}')$$);
SELECT lance_namespace.rest_table_exists('{"id": ["r1", "t"]}');
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["r1", "nope"]}')$$);
-- with a version: that version must exist too (TableVersionNotFound otherwise)
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["r1", "t"], "version": 1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["r1", "t"], "version": -1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["nope", "t"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["r1"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": []}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": 7}')$$);
SELECT lance_namespace.rest_list_tables('{"id": ["r1"]}');
SELECT lance_namespace.rest_list_tables('{"id": ["r1"], "include_declared": false}');
SELECT lance_namespace.rest_list_tables('{"id": ["r1"], "limit": 1}');
SELECT lance_try($$SELECT lance_namespace.rest_list_tables('{"id": ["r1"], "include_declared": "x"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_tables('{"id": ["nope"]}')$$);
SELECT lance_namespace.rest_list_all_tables('{}');
SELECT lance_namespace.rest_list_all_tables('{"delimiter": "."}');
SELECT lance_namespace.rest_list_all_tables('{"limit": 2}');
SELECT lance_try($$SELECT lance_namespace.rest_list_all_tables('{"delimiter": ""}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_all_tables('{"delimiter": ["."]}')$$);
SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t2"], "new_table_name": "t2b"}') - 'transaction_id';
SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t2b"], "new_table_name": "t2", "new_namespace_id": ["r1", "kid"]}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t"], "new_table_name": "reg"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t"], "new_table_name": "x", "new_namespace_id": ["nope"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_rename_table('{"id": ["r1", "t"], "new_table_name": ["x"]}')$$);
SELECT lance_namespace.rest_deregister_table('{"id": ["r1", "kid", "t2"]}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_deregister_table('{"id": ["r1", "kid", "t2"]}')$$);
-- DropTable: the catalog half (the gateway deletes the files after COMMIT),
-- recorded as DropTable with the location, which --sweep reads
SELECT (lance_namespace.rest_declare_table('{"id": ["r1", "dropme"], "location": "s3://b/dropme"}')->>'location');
SELECT lance_namespace.rest_drop_table('{"id": ["r1", "dropme"]}') - 'transaction_id';
SELECT operation, detail FROM lance_namespace.history
 WHERE id = '{r1,dropme}' AND operation = 'DropTable';
SELECT lance_try($$SELECT lance_namespace.rest_drop_table('{"id": ["r1", "dropme"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_drop_table('{"id": ["r1"]}')$$);
-- a table owns its location (0.6.0): a location that is, lies in or
-- contains another table's is refused (file:// and trailing slashes aside),
-- in either order, and a sibling whose name only begins the same is not
SELECT (lance_namespace.rest_declare_table('{"id": ["r1", "outer"], "location": "/data/nest"}')->>'location');
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "inner"], "location": "file:///data/nest/inner.lance/"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "above"], "location": "/data//"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "same"], "location": "file:///data/nest/"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "dots"], "location": "/data/nest2/../nest"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_declare_table('{"id": ["r1", "rel"], "location": "data/rel"}')$$);
SELECT (lance_namespace.rest_declare_table('{"id": ["r1", "nest2"], "location": "/data/nest2"}')->>'location');
-- a drop must not delete another table's data: refused while one location
-- is, lies in or contains another's, as a catalog from before 0.6.0 can
-- hold them (made here with the trigger off)
ALTER TABLE lance_namespace.entries DISABLE TRIGGER entries_location_check;
SELECT (lance_namespace.rest_declare_table('{"id": ["r1", "inner"], "location": "file:///data/nest/inner.lance/"}')->>'location');
ALTER TABLE lance_namespace.entries ENABLE TRIGGER entries_location_check;
SELECT lance_try($$SELECT lance_namespace.rest_drop_table('{"id": ["r1", "outer"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_drop_table('{"id": ["r1", "inner"]}')$$);
SELECT lance_namespace.rest_deregister_table('{"id": ["r1", "inner"]}')->>'location';
SELECT lance_namespace.rest_drop_table('{"id": ["r1", "outer"]}')->>'location';
SELECT lance_namespace.rest_drop_table('{"id": ["r1", "nest2"]}')->>'location';
-- RegisterTable with the versions already at the location (the gateway
-- lists them): imported with the registration, or nothing is
SELECT lance_namespace.rest_register_table('{"id": ["r1", "imp"], "location": "s3://b/imp",
  "versions": [{"version": 1, "manifest_path": "s3://b/imp/_versions/1.manifest", "naming_scheme": "V1", "manifest_size": 10},
               {"version": 2, "manifest_path": "s3://b/imp/_versions/18446744073709551613.manifest", "naming_scheme": "V2", "e_tag": "\"x\""}]}') - 'transaction_id';
SELECT version, manifest_path, manifest_size, e_tag, naming_scheme FROM lance_namespace.table_versions
 WHERE id = '{r1,imp}' ORDER BY version;
SELECT lance_try($$SELECT lance_namespace.rest_register_table('{"id": ["r1", "imp2"], "location": "s3://b/imp2",
  "versions": [{"version": 1, "manifest_path": "s3://b/imp2/_versions/1.manifest", "naming_scheme": "V1"},
               {"version": 2, "manifest_path": "s3://b/elsewhere/_versions/2.manifest", "naming_scheme": "V1"}]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_register_table('{"id": ["r1", "imp2"], "location": "s3://b/imp2", "versions": {}}')$$);
SELECT count(*) FROM lance_namespace.tables WHERE id = '{r1,imp2}';
-- RetireTableVersion: a version whose manifest is gone from storage; only
-- the row that still names that manifest goes, recorded with the reason
SELECT lance_namespace.rest_retire_table_version('{"id": ["r1", "imp"], "version": 1, "manifest_path": "s3://b/imp/_versions/other.manifest"}') - 'transaction_id';
SELECT lance_namespace.rest_retire_table_version('{"id": ["r1", "imp"], "version": 1, "manifest_path": "s3://b/imp/_versions/1.manifest"}') - 'transaction_id';
SELECT version FROM lance_namespace.table_versions WHERE id = '{r1,imp}' ORDER BY version;
SELECT operation, detail FROM lance_namespace.history
 WHERE id = '{r1,imp}' AND operation = 'RetireTableVersion';
SELECT lance_try($$SELECT lance_namespace.rest_retire_table_version('{"id": ["r1", "imp"], "manifest_path": "x"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_retire_table_version('{"id": ["r1", "imp"], "version": 2}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_retire_table_version('{"id": ["r1", "imp"], "version": 2, "manifest_path": "x", "branch": "nope"}')$$);
SELECT lance_namespace.rest_drop_table('{"id": ["r1", "imp"]}') - 'transaction_id';

--
-- versions (timestamp_millis and transaction_id are left out of the output)
--
SELECT (r->'version') - 'timestamp_millis'
  FROM lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 1, "manifest_path": "/s/1", "manifest_size": 10, "e_tag": "e", "metadata": {"m": "x"}}') r;
SELECT (r->'version') - 'timestamp_millis'
  FROM lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 2, "manifest_path": "/s/2", "naming_scheme": "V1"}') r;
SELECT (r->'version') ? 'timestamp_millis' AS has_ts
  FROM lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 1, "manifest_path": "/s/1", "manifest_size": 10}') r;
-- a number as a string is refused (strict JSON types), in the single and the batch form alike
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": "7", "manifest_path": "/s/7"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 7, "manifest_path": "/s/7", "manifest_size": "10"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": "abc", "manifest_path": "/s/x"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 1, "manifest_path": "/s/other"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "manifest_path": "/s/x"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 3}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 3, "manifest_path": "/s/3", "manifest_size": "big"}')$$);
-- a NULL or JSON null request is a request without fields, also for its manifest_base64
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('null')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 3, "manifest_path": "/s/3", "metadata": "m"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "t"], "version": 3, "manifest_path": "/s/3", "branch": "dev"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["r1", "gone"], "version": 3, "manifest_path": "/s/3"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": "notarray", "version": 3, "manifest_path": "/s/3"}')$$);
-- manifest_base64, the staged bytes a gateway sends for the catalog to hold
-- until the file is durable: at most max_held_manifest_bytes for one
-- manifest and max_held_request_bytes for one request (lance_limits.h,
-- which the configuration view reports), else LN013
SELECT value AS held_max FROM lance_namespace.configuration WHERE name = 'max_held_manifest_bytes' \gset
SELECT value AS held_request_max FROM lance_namespace.configuration WHERE name = 'max_held_request_bytes' \gset
SELECT :held_request_max / :held_max AS manifests_at_limit_per_request;
SELECT lance_namespace.rest_declare_table('{"id": ["r1", "held"]}') ? 'location' AS declared;
CREATE TEMP TABLE held_b64 AS
  SELECT translate(encode(decode(repeat('ab', :held_max), 'hex'), 'base64'), E'\n', '') AS at_limit,
         translate(encode(decode(repeat('ab', :held_max + 1), 'hex'), 'base64'), E'\n', '') AS over;
SELECT r->'version'->'version' AS version
  FROM held_b64, lance_namespace.rest_create_table_version(jsonb_build_object('id', ARRAY['r1', 'held'],
       'version', 1, 'manifest_path', '/s/h1', 'manifest_base64', at_limit)) r;
SELECT count(*) AS held, min(octet_length(manifest)) = :held_max AS at_limit FROM lance_namespace.publications;
SELECT lance_try(format($$SELECT lance_namespace.rest_create_table_version(%L)$$,
       jsonb_build_object('id', ARRAY['r1', 'held'], 'version', 2, 'manifest_path', '/s/h2',
                          'manifest_base64', over))) FROM held_b64;
-- one manifest at the limit more than a request may send, in a batch of
-- versions and in a batch commit
SELECT lance_try(format($$SELECT lance_namespace.rest_batch_create_table_versions(%L)$$,
       jsonb_build_object('entries', (SELECT jsonb_agg(jsonb_build_object('id', ARRAY['r1', 'held'],
         'version', v, 'manifest_path', '/s/h' || v, 'manifest_base64', at_limit))
         FROM generate_series(2, 2 + :held_request_max / :held_max) v)))) FROM held_b64;
SELECT lance_try(format($$SELECT lance_namespace.rest_batch_commit_tables(%L)$$,
       jsonb_build_object('operations', (SELECT jsonb_agg(jsonb_build_object('create_table_version',
         jsonb_build_object('id', ARRAY['r1', 'held'], 'version', v, 'manifest_path', '/s/h' || v,
           'manifest_base64', at_limit)))
         FROM generate_series(2, 2 + :held_request_max / :held_max) v)))) FROM held_b64;
SELECT string_agg(version::text, ',') AS versions FROM lance_namespace.table_versions WHERE id = '{r1,held}';
SELECT lance_namespace.rest_drop_table('{"id": ["r1", "held"]}') ? 'id' AS dropped;
SELECT count(*) AS held_left FROM lance_namespace.publications;
DROP TABLE held_b64;
SELECT (r->'version') - 'timestamp_millis' FROM lance_namespace.rest_describe_table_version('{"id": ["r1", "t"]}') r;
SELECT (r->'version') - 'timestamp_millis' FROM lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": 1}') r;
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": "1"}')$$);
SELECT lance_namespace.rest_table_exists('{"id": ["r1", "t"], "version": 1}');
SELECT lance_try($$SELECT lance_namespace.rest_table_exists('{"id": ["r1", "t"], "version": 99}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": 9}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": "abc"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('{"id": ["r1", "reg"]}')$$);
SELECT lance_namespace.rest_describe_table('{"id": ["r1", "t"], "version": 1}') - 'properties';
SELECT jsonb_path_query_array(r, '$.versions[*].version') AS versions, r ? 'page_token' AS has_token
  FROM lance_namespace.rest_list_table_versions('{"id": ["r1", "t"]}') r;
SELECT jsonb_path_query_array(r, '$.versions[*].version') AS versions, r ? 'page_token' AS has_token
  FROM lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "descending": true, "limit": 1}') r;
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "descending": "true"}')$$);
SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "reg"]}');
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "descending": "down"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": 1.5}')$$);
-- The version bindings are C: each must answer exactly as the SQL function
-- it binds, with NULL fields left out.
SELECT lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": 1}')
       = jsonb_build_object('version', jsonb_strip_nulls(to_jsonb(v))) AS describe_same
  FROM lance_namespace.lance_describe_table_version('{r1,t}', 1) v;
SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": 1, "descending": false}')
       = jsonb_strip_nulls(jsonb_build_object('versions', to_jsonb(l.versions), 'page_token', l.page_token)) AS list_same
  FROM lance_namespace.lance_list_table_versions('{r1,t}', "limit" => 1) l;
-- paging through the binding: each page_token leads to the next version
WITH RECURSIVE pages(n, r) AS (
	SELECT 1, lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": 1}')
	UNION ALL
	SELECT n + 1, lance_namespace.rest_list_table_versions(
		jsonb_build_object('id', '["r1", "t"]'::jsonb, 'limit', 1, 'page_token', r->>'page_token'))
	  FROM pages WHERE r ? 'page_token')
SELECT n, jsonb_path_query_array(r, '$.versions[*].version') AS versions FROM pages ORDER BY n;
SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": 0}');
SELECT jsonb_array_length(r->'versions') AS n
  FROM lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": null, "branch": null, "page_token": null}') r;
SELECT (r->'version'->'version') AS latest
  FROM lance_namespace.rest_describe_table_version('{"id": ["r1", "t"], "version": null}') r;
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "limit": -1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": ["r1", "t"], "page_token": "bm9wZQ=="}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('[1]')$$);
SELECT lance_try($$SELECT lance_namespace.rest_list_table_versions('{"id": []}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('null')$$);
SELECT lance_namespace.rest_batch_create_table_versions('{"entries": []}') - 'transaction_id';
SELECT jsonb_path_query_array(r, '$.versions[*].version') AS versions,
       jsonb_path_query_array(r, '$.versions[*].manifest_path') AS paths
  FROM lance_namespace.rest_batch_create_table_versions('{"entries": [
	{"id": ["r1", "reg"], "version": 5, "manifest_path": "/r/5"},
	{"id": ["r1", "t"], "version": 3, "manifest_path": "/s/3"}]}') r;
SELECT lance_try($$SELECT lance_namespace.rest_batch_create_table_versions('{"entries": [
	{"id": ["r1", "reg"], "version": 6, "manifest_path": "/r/6"},
	{"id": ["r1", "t"], "version": 3, "manifest_path": "/s/3-other"}]}')$$);
SELECT lance_namespace.lance_table_exists('{r1,reg}', 6) AS reg_v6_applied;
SELECT lance_try($$SELECT lance_namespace.rest_batch_create_table_versions('{"entries": [
	{"id": ["r1", "reg"], "version": "6", "manifest_path": "/r/6"}]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_create_table_versions('{"entries": [
	{"id": ["r1", "reg"], "version": 6, "manifest_path": "/r/6", "manifest_size": "10"}]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_create_table_versions('{"entries": {}}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_create_table_versions('{}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"], "ranges": [{"start_version": 2, "end_version": -1}]}')$$);
SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"], "ranges": [{"start_version": 2, "end_version": 3}]}') - 'transaction_id';
SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"], "ranges": []}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"], "ranges": "all"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_delete_table_versions('{"id": ["r1", "t"], "ranges": [], "branch": "dev"}')$$);
SELECT jsonb_path_query_array(r, '$.versions[*].version') AS versions
  FROM lance_namespace.rest_list_table_versions('{"id": ["r1", "t"]}') r;

--
-- drop
--
SELECT lance_try($$SELECT lance_namespace.rest_drop_namespace('{"id": ["r1"]}')$$);
SELECT lance_namespace.rest_drop_namespace('{"id": ["nope"], "mode": "skip"}') - 'transaction_id';
SELECT lance_try($$SELECT lance_namespace.rest_drop_namespace('{"id": ["nope"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_drop_namespace('{"id": ["r1"], "behavior": 7}')$$);
SELECT lance_namespace.rest_drop_namespace('{"id": ["r1"], "behavior": "Cascade"}') - 'transaction_id';
SELECT count(*) AS entries_left FROM lance_namespace.entries;

-- The REST routes are defined once, in the extension; the gateway loads
-- them.  read_only is the binding's own volatility.
SELECT path, methods, operation, binding, read_only, no_body, client_paths
  FROM lance_namespace.rest_routes ORDER BY path;
SELECT name, type FROM lance_namespace.rest_query_parameters ORDER BY name;
-- the answers of the client_paths routes go through rest_client_paths: each
-- table version's manifest_path in the form Lance clients use (a file's
-- path without its leading "/", a bucket's key); nothing else changes, a
-- manifest_path in a version's metadata or at the top level included
SELECT lance_namespace.rest_client_paths('{"version": {"version": 3,
  "manifest_path": "/data/t.lance/_versions/3.manifest", "manifest_size": 9,
  "metadata": {"manifest_path": "/kept"}}, "manifest_path": "/kept"}');
SELECT lance_namespace.rest_client_paths('{"versions": [
  {"version": 1, "manifest_path": "s3://bucket/t.lance/_versions/1.manifest"},
  {"version": 2, "manifest_path": "relative/_versions/2.manifest"},
  {"version": 3, "manifest_path": "s3://bucket-only"},
  {"version": 4, "manifest_path": 4}, [{"manifest_path": "/kept"}]],
  "page_token": "/kept"}');
SELECT lance_namespace.rest_client_paths('[{"version": {"manifest_path": "/kept"}}]'),
       lance_namespace.rest_client_paths('{}'), lance_namespace.rest_client_paths(NULL) IS NULL;
-- every binding serves a route, but those the gateway calls itself
SELECT p.proname FROM pg_proc p
 WHERE p.pronamespace = 'lance_namespace'::regnamespace AND p.proname LIKE 'rest\_%'
   AND p.proname NOT IN (SELECT binding FROM lance_namespace.rest_routes)
 ORDER BY 1;
-- readable by any role: it describes the interface, not the catalog
SELECT has_table_privilege('public', 'lance_namespace.rest_routes', 'SELECT') AS routes_public,
       has_table_privilege('public', 'lance_namespace.rest_query_parameters', 'SELECT') AS params_public;
