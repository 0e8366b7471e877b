--
-- 09_batch_commit: BatchCommitTables (lance_batch_commit_tables and
-- rest_batch_commit_tables): declare_table, create_table_version,
-- delete_table_versions and deregister_table, all or nothing.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{bc}');
SELECT location FROM lance_namespace.lance_declare_table('{bc,a}');
SELECT location FROM lance_namespace.lance_register_table('{bc,gone}', '/ext/gone');
SELECT count(*) FROM generate_series(1, 3) v,
       lance_namespace.lance_create_table_version('{bc,a}', v, '/m/a/' || v);

-- the catalog of namespace bc, to compare before and after
CREATE FUNCTION pg_temp.bc_state() RETURNS TABLE (tables text, versions text)
LANGUAGE sql AS $$
	SELECT (SELECT string_agg(name, ',' ORDER BY name) FROM lance_namespace.tables WHERE id[1] = 'bc'),
	       (SELECT string_agg(name || ':' || version, ',' ORDER BY name, version)
	          FROM lance_namespace.table_versions WHERE id[1] = 'bc')
$$;
SELECT * FROM pg_temp.bc_state();

--
-- A mixed batch: results come back one per operation, in request order,
-- each under the name of its operation
--
SELECT jsonb_array_length(r) AS n,
       jsonb_path_query_array(r, '$[*].keyvalue().key') AS kinds
  FROM lance_namespace.lance_batch_commit_tables('[
	{"create_table_version": {"id": ["bc", "a"], "version": 4, "manifest_path": "/m/a/4", "manifest_size": 44}},
	{"declare_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "b"], "version": 1, "manifest_path": "/m/b/1"}},
	{"delete_table_versions": {"id": ["bc", "a"], "ranges": [{"start_version": 1, "end_version": 3}]}},
	{"deregister_table": {"id": ["bc", "gone"]}}
  ]') r;
SELECT * FROM pg_temp.bc_state();
-- the result objects are the responses of the single operations (the
-- transaction_id is the same in every one)
SELECT lance_namespace.lance_batch_commit_tables('[
	{"deregister_table": {"id": ["bc", "b"]}},
	{"declare_table": {"id": ["bc", "b"], "location": "/ext/b2", "properties": {"k": "v"}}},
	{"create_table_version": {"id": ["bc", "b"], "version": 7, "manifest_path": "/m/b/7", "manifest_size": 70,
	                          "e_tag": "e7", "metadata": {"x": "y"}, "naming_scheme": "V1"}},
	{"delete_table_versions": {"id": ["bc", "a"], "ranges": [{"start_version": 3, "end_version": 4}]}}
  ]') #- '{0,deregister_table,transaction_id}' #- '{1,declare_table,transaction_id}'
      #- '{2,create_table_version,transaction_id}' #- '{2,create_table_version,version,timestamp_millis}'
      #- '{3,delete_table_versions,transaction_id}' AS results;
SELECT count(DISTINCT t) AS distinct_txids, bool_and(t = lance_namespace.lance_current_transaction_id()) AS is_current
  FROM jsonb_path_query(lance_namespace.lance_batch_commit_tables('[
	{"create_table_version": {"id": ["bc", "a"], "version": 8, "manifest_path": "/m/a/8"}},
	{"create_table_version": {"id": ["bc", "b"], "version": 8, "manifest_path": "/m/b/8"}}
  ]'), '$[*].*.transaction_id') j, LATERAL (SELECT j #>> '{}') AS x(t);
SELECT * FROM pg_temp.bc_state();
-- an empty batch is fine
SELECT lance_namespace.lance_batch_commit_tables('[]');
-- an operation may see what an earlier one did: the idempotent repeat of
-- a version created earlier in the same batch returns it
SELECT jsonb_path_query_array(r, '$[*].create_table_version.version.version') AS versions
  FROM lance_namespace.lance_batch_commit_tables('[
	{"create_table_version": {"id": ["bc", "a"], "version": 9, "manifest_path": "/m/a/9"}},
	{"create_table_version": {"id": ["bc", "a"], "version": 9, "manifest_path": "/m/a/9"}}
  ]') r;

--
-- All or nothing: when the 3rd of 5 operations fails, none is applied
--
SELECT * FROM pg_temp.bc_state();
-- a conflicting version (14)
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"create_table_version": {"id": ["bc", "b"], "version": 8, "manifest_path": "/m/b/8-other"}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"delete_table_versions": {"id": ["bc", "a"], "ranges": [{"start_version": 0, "end_version": -1}]}}
  ]')$$);
SELECT * FROM pg_temp.bc_state();
-- a missing table (4), an existing table (5), a missing version's branch (22),
-- bad input inside an operation (13)
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"deregister_table": {"id": ["bc", "nope"]}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 11, "manifest_path": "/m/a/11"}}
  ]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"declare_table": {"id": ["bc", "b"]}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 11, "manifest_path": "/m/a/11"}}
  ]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"create_table_version": {"id": ["bc", "a"], "version": 11, "manifest_path": "/m/a/11", "branch": "ghost"}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "c"], "version": 1, "manifest_path": "/m/c/1"}}
  ]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}},
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"delete_table_versions": {"id": ["bc", "a"], "ranges": [{"start_version": -1, "end_version": 2}]}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "c"], "version": 1, "manifest_path": "/m/c/1"}}
  ]')$$);
-- a later operation that depends on an earlier one of the same batch: the
-- deregistered table cannot take a version (4), and nothing is applied
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"}},
	{"deregister_table": {"id": ["bc", "b"]}},
	{"create_table_version": {"id": ["bc", "b"], "version": 9, "manifest_path": "/m/b/9"}}
  ]')$$);
SELECT * FROM pg_temp.bc_state();

--
-- Malformed operations (13)
--
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"other": {}}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]},
	 "deregister_table": {"id": ["bc", "b"]}}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"create_table_version": {"id": ["bc", "a"], "version": 10, "manifest_path": "/m/a/10"},
	 "delete_table_versions": {"id": ["bc", "a"], "ranges": []}}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"declare_table": null}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"declare_table": ["bc", "c"]}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"declare_table": "bc$c"}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"declare_table": {}}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[1]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[[]]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[null]')$$);
-- a good operation before a malformed one is not applied either
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[
	{"declare_table": {"id": ["bc", "c"]}}, {}]')$$);
-- not an array
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('{}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('{"declare_table": {"id": ["bc", "c"]}}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('"x"')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('3')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('null')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables(NULL)$$);
-- too many operations
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables(
	(SELECT jsonb_agg('{}'::jsonb) FROM generate_series(1, 10001)))$$);
SELECT * FROM pg_temp.bc_state();

--
-- rest_batch_commit_tables: {"operations": [...]} -> {"results": [...], "transaction_id"}
--
SELECT r AS rest_response FROM lance_namespace.rest_batch_commit_tables('{"operations": [
	{"declare_table": {"id": ["bc", "r"]}},
	{"create_table_version": {"id": ["bc", "r"], "version": 1, "manifest_path": "/m/r/1"}},
	{"delete_table_versions": {"id": ["bc", "a"], "ranges": [{"start_version": 8, "end_version": 9}]}}
  ]}') r \gset
SELECT r ? 'transaction_id' AS has_txid,
       r ->> 'transaction_id' = (r #>> '{results,0,declare_table,transaction_id}') AS same_txid,
       jsonb_path_query_array(r, '$.results[*].keyvalue().key') AS kinds,
       r #> '{results,1,create_table_version,version,manifest_path}' AS v1_path
  FROM (SELECT :'rest_response'::jsonb AS r) x;
SELECT r - 'transaction_id' FROM lance_namespace.rest_batch_commit_tables('{"operations": []}') r;
SELECT lance_try($$SELECT lance_namespace.rest_batch_commit_tables('{}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_commit_tables('{"operations": {}}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_commit_tables('{"operations": [{"declare_table": {"id": ["bc", "r"]}}]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_batch_commit_tables('{"operations": [
	{"create_table_version": {"id": ["bc", "r"], "version": 2, "manifest_path": "/m/r/2"}},
	{"create_table_version": {"id": ["bc", "r"], "version": 2, "manifest_path": "/m/r/2-other"}}]}')$$);
SELECT * FROM pg_temp.bc_state();

--
-- The history records each operation of a batch, in one transaction
--
SELECT array_agg(operation || ' ' || name ORDER BY at) AS operations
  FROM lance_namespace.commit_history
 WHERE transaction_id = :'rest_response'::jsonb ->> 'transaction_id';

SELECT * FROM lance_namespace.lance_drop_namespace('{bc}', NULL, 'Cascade');
