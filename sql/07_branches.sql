--
-- 07_branches: CreateTableBranch, ListTableBranches, DeleteTableBranch, and
-- versions on branches (create, describe along the parent chain, list,
-- batch delete).
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{br}');
SELECT location FROM lance_namespace.lance_declare_table('{br,t}');
SELECT location FROM lance_namespace.lance_declare_table('{br,empty}');
SELECT count(*) FROM generate_series(1, 3) v,
       lance_namespace.lance_create_table_version('{br,t}', v, '/m/main/' || v, 100 + v);

-- createAt is the creation time in seconds: show it as "now-ish"
CREATE FUNCTION pg_temp.mask_branches(b jsonb) RETURNS jsonb LANGUAGE sql AS $$
	SELECT COALESCE(jsonb_object_agg(k,
		CASE WHEN (v->>'createAt')::bigint BETWEEN extract(epoch FROM now())::bigint - 600
		                                       AND extract(epoch FROM clock_timestamp())::bigint + 1
		     THEN jsonb_set(v, '{createAt}', '"<now>"')
		     ELSE v END), '{}')
	  FROM jsonb_each(b) AS e(k, v)
$$;

--
-- CreateTableBranch
--
-- from main at its latest version (3) by default; returns BranchContents
SELECT pg_temp.mask_branches(jsonb_build_object('dev',
	lance_namespace.lance_create_table_branch('{br,t}', 'dev')));
-- from main at a given version, with metadata
SELECT pg_temp.mask_branches(jsonb_build_object('old',
	lance_namespace.lance_create_table_branch('{br,t}', 'old', from_version => 1,
	                                          metadata => '{"owner": "qa"}')));
-- explicit 'main' parent is the same as the default (no parentBranch)
SELECT pg_temp.mask_branches(jsonb_build_object('m2',
	lance_namespace.lance_create_table_branch('{br,t}', 'm2', 'main', 2)));
-- a name with "/" segments is allowed
SELECT pg_temp.mask_branches(jsonb_build_object('feature/x',
	lance_namespace.lance_create_table_branch('{br,t}', 'feature/x')));
-- the branches table records who and when
SELECT table_name, branch, parent_branch, parent_version, created_at BETWEEN now() - interval '10 min' AND clock_timestamp() AS created_at_ok,
       manifest_size, metadata, created_by = current_user AS by_me
  FROM lance_namespace.table_branches WHERE id = '{br,t}' ORDER BY branch;

-- errors: missing table (4), missing parent branch (22), duplicate (23)
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,nope}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{nope,t}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', 'ghost')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'dev', 'old', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'main')$$);
-- errors: from_version missing (11), parent without versions (11)
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', NULL, 4)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', NULL, 0)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', NULL, -1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,empty}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,empty}', 'x', NULL, 1)$$);
-- errors: invalid names (13)
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', '')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', '.')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', '..')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'a/../b')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'a//b')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', '/a')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'a/')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', E'a\tb')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', E'a\x7fb')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', repeat('b', 256))$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', metadata => '{"k": 1}')$$);
-- nothing of that was created
SELECT branch FROM lance_namespace.table_branches WHERE id = '{br,t}' ORDER BY branch;

--
-- Versions on a branch
--
-- a branch's own versions come after its parent version (dev starts at 3)
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{br,t}', 3, '/m/dev/3', branch => 'dev')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{br,t}', 1, '/m/dev/1', branch => 'dev')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/x', branch => 'ghost')$$);
-- describe latest of a branch without its own versions: the parent's
-- version at the branch point (3 for dev, even after main moves on)
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/main/4', 104);
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', branch => 'dev');
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', branch => 'old');
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}');
-- canonical path under <location>/tree/<branch>/_versions/
SELECT version, manifest_path, manifest_size
  FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/dev/4', 204, branch => 'dev');
SELECT version, manifest_path
  FROM lance_namespace.lance_create_table_version('{br,t}', 5, '/m/dev/5', 205, naming_scheme => 'V1', branch => 'dev');
SELECT version, manifest_path
  FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/fx/4', branch => 'feature/x');
-- the same version on main and on dev are different versions
SELECT branch, version, staging_manifest_path FROM lance_namespace.table_versions
 WHERE id = '{br,t}' AND version = 4 ORDER BY branch;
-- idempotent repeat on the branch; a different manifest conflicts (14)
SELECT version, manifest_size FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/dev/4', 204, branch => 'dev');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{br,t}', 4, '/m/dev/4-other', branch => 'dev')$$);
-- describe: latest on dev is its own; versions <= 3 resolve through main
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', branch => 'dev');
SELECT version, manifest_path, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', 4, 'dev');
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', 2, 'dev');
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', 3, 'dev');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table_version('{br,t}', 6, 'dev')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table_version('{br,t}', 1, 'ghost')$$);
-- 'old' starts at 1: main's 2 is not visible on it
SELECT version, manifest_size FROM lance_namespace.lance_describe_table_version('{br,t}', 1, 'old');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table_version('{br,t}', 2, 'old')$$);
-- lance_describe_table on a branch
SELECT version, location FROM lance_namespace.lance_describe_table('{br,t}', branch => 'dev');
SELECT version FROM lance_namespace.lance_describe_table('{br,t}', branch => 'old');
SELECT version FROM lance_namespace.lance_describe_table('{br,t}', 2, 'dev');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{br,t}', 7, 'dev')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{br,t}', branch => 'ghost')$$);

--
-- A branch of a branch
--
-- from dev at its latest (5), and from dev at 2 (a main version seen through dev)
SELECT pg_temp.mask_branches(jsonb_build_object('dev/sub',
	lance_namespace.lance_create_table_branch('{br,t}', 'dev/sub', 'dev')));
SELECT pg_temp.mask_branches(jsonb_build_object('dev2',
	lance_namespace.lance_create_table_branch('{br,t}', 'dev2', 'dev', 2)));
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', 'dev', 6)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{br,t}', 'x', 'old', 2)$$);
-- a branch of a branch without own versions starts at the inherited version
SELECT pg_temp.mask_branches(jsonb_build_object('old/sub',
	lance_namespace.lance_create_table_branch('{br,t}', 'old/sub', 'old')));
-- dev/sub sees its own, dev's and main's versions along the chain
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{br,t}', 6, '/m/sub/6', branch => 'dev/sub');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{br,t}', 5, '/m/sub/5', branch => 'dev/sub')$$);
SELECT v, (lance_namespace.lance_describe_table_version('{br,t}', v, 'dev/sub')).manifest_size
  FROM generate_series(1, 6) v;
SELECT (lance_namespace.lance_describe_table_version('{br,t}', NULL, 'dev2')).version AS dev2_latest;
SELECT (lance_namespace.lance_describe_table_version('{br,t}', NULL, 'old/sub')).version AS old_sub_latest;

--
-- ListTableVersions on a branch: its own versions only
--
SELECT (unnest(versions)).version, page_token FROM lance_namespace.lance_list_table_versions('{br,t}', 'dev');
SELECT (unnest(versions)).version FROM lance_namespace.lance_list_table_versions('{br,t}', 'dev', descending => true);
SELECT cardinality(versions) AS n, page_token FROM lance_namespace.lance_list_table_versions('{br,t}', 'old');
SELECT (unnest(versions)).version FROM lance_namespace.lance_list_table_versions('{br,t}', 'main');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{br,t}', 'ghost')$$);

--
-- ListTableBranches
--
SELECT pg_temp.mask_branches(branches) AS branches, page_token
  FROM lance_namespace.lance_list_table_branches('{br,t}');
SELECT branches, page_token FROM lance_namespace.lance_list_table_branches('{br,empty}');
SELECT branches, page_token FROM lance_namespace.lance_list_table_branches('{br,t}', "limit" => 0);
-- a walk with limit 2 visits every branch once, in name order
WITH RECURSIVE walk(n, names, token) AS (
	SELECT 1, ARRAY(SELECT jsonb_object_keys(r.branches)), r.page_token
	  FROM lance_namespace.lance_list_table_branches('{br,t}', NULL, 2) r
	UNION ALL
	SELECT w.n + 1, ARRAY(SELECT jsonb_object_keys(r.branches)), r.page_token
	  FROM walk w, lance_namespace.lance_list_table_branches('{br,t}', w.token, 2) r
	 WHERE w.token IS NOT NULL)
SELECT n, names, token IS NOT NULL AS more FROM walk ORDER BY n;
-- the token is "b:<last name>"; tokens of other lists are refused (13)
SELECT convert_from(decode(page_token, 'base64'), 'UTF8') AS token
  FROM lance_namespace.lance_list_table_branches('{br,t}', NULL, 1);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{br,t}',
	encode(convert_to('g:dev', 'UTF8'), 'base64'))$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{br,t}',
	encode(convert_to('a:3', 'UTF8'), 'base64'))$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{br,t}', 'not a token')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{br,t}', NULL, -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{br,nope}')$$);
-- a hand-made "b:" token resumes after that name
SELECT ARRAY(SELECT jsonb_object_keys(branches)) AS names, page_token
  FROM lance_namespace.lance_list_table_branches('{br,t}', encode(convert_to('b:dev2', 'UTF8'), 'base64'));
-- REST shape
SELECT jsonb_path_query_array(r, '$.branches.keyvalue().key') AS names, r ? 'page_token' AS more
  FROM lance_namespace.rest_list_table_branches('{"id": ["br", "t"], "limit": 3}') r;

--
-- DeleteTableBranch
--
-- tags on branches, to see which go with a branch
SELECT lance_namespace.lance_create_table_tag('{br,t}', 'on-dev', 4, 'dev');
SELECT lance_namespace.lance_create_table_tag('{br,t}', 'on-sub', 6, 'dev/sub');
SELECT lance_namespace.lance_create_table_tag('{br,t}', 'on-main', 2);
-- errors: missing (22), main (13), NULL (13), missing table (4), a branch
-- others were created from (19)
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'ghost')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'main')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,nope}', 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'old')$$);
-- leaves first: dev/sub takes its version 6 and its tag along
SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'dev/sub');
SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'dev2');
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'dev/sub')$$);
SELECT branch, version FROM lance_namespace.table_versions WHERE id = '{br,t}' AND branch = 'dev/sub';
SELECT tag, branch, version FROM lance_namespace.table_tags WHERE id = '{br,t}' ORDER BY tag;
-- now dev has no dependents: its versions and tags go, main's stay
SELECT lance_namespace.lance_delete_table_branch('{br,t}', 'dev');
SELECT branch, version FROM lance_namespace.table_versions WHERE id = '{br,t}' ORDER BY branch, version;
SELECT tag, branch, version FROM lance_namespace.table_tags WHERE id = '{br,t}' ORDER BY tag;
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table_version('{br,t}', NULL, 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_version('{br,t}', 9, '/m/dev/9', branch => 'dev')$$);
-- a deleted name can be created again, from the current main
SELECT pg_temp.mask_branches(jsonb_build_object('dev',
	lance_namespace.lance_create_table_branch('{br,t}', 'dev')));
SELECT (lance_namespace.lance_describe_table_version('{br,t}', NULL, 'dev')).version;

--
-- BatchDeleteTableVersions on a branch: only that branch's versions
--
SELECT count(*) FROM generate_series(5, 8) v,
       lance_namespace.lance_create_table_version('{br,t}', v, '/m/dev/' || v, branch => 'dev');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{br,t}',
	'[{"start_version": 0, "end_version": 7}]', 'dev');
SELECT branch, version FROM lance_namespace.table_versions WHERE id = '{br,t}' ORDER BY branch, version;
-- a branch's latest version stays (a version number is acknowledged once)
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{br,t}',
	'[{"start_version": 0, "end_version": -1}]', 'feature/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{br,t}', '[]', 'ghost')$$);
SELECT (lance_namespace.lance_describe_table_version('{br,t}', NULL, 'feature/x')).version;

--
-- REST bindings
--
SELECT r - 'transaction_id' AS response, r ? 'transaction_id' AS has_txid
  FROM lance_namespace.rest_create_table_branch('{"id": ["br", "t"], "name": "r1", "from_version": 2}') r;
SELECT lance_try($$SELECT lance_namespace.rest_create_table_branch('{"id": ["br", "t"], "name": "r1"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_branch('{"id": ["br", "t"], "name": "r2", "from_branch": "nope"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_branch('{"id": ["br", "t"], "name": "r2", "from_version": "x"}')$$);
SELECT r - 'transaction_id' AS response, r ? 'transaction_id' AS has_txid
  FROM lance_namespace.rest_delete_table_branch('{"id": ["br", "t"], "name": "r1"}') r;
SELECT lance_try($$SELECT lance_namespace.rest_delete_table_branch('{"id": ["br", "t"], "name": "r1"}')$$);

--
-- Deregistering the table removes its branches, versions and tags
--
SELECT id AS br_t_id FROM lance_namespace.entries WHERE path = '{br,t}' \gset
SELECT lance_namespace.lance_create_table_tag('{br,t}', 'last', 1, 'dev');
SELECT (SELECT count(*) FROM lance_namespace.branches WHERE table_id = :br_t_id) AS branches,
       (SELECT count(*) FROM lance_namespace.tags WHERE table_id = :br_t_id) AS tags,
       (SELECT count(*) FROM lance_namespace.versions WHERE table_id = :br_t_id) AS versions;
SELECT id FROM lance_namespace.lance_deregister_table('{br,t}');
SELECT (SELECT count(*) FROM lance_namespace.branches WHERE table_id = :br_t_id) AS branches,
       (SELECT count(*) FROM lance_namespace.tags WHERE table_id = :br_t_id) AS tags,
       (SELECT count(*) FROM lance_namespace.versions WHERE table_id = :br_t_id) AS versions;
SELECT * FROM lance_namespace.lance_drop_namespace('{br}', NULL, 'Cascade');
