--
-- 08_tags: CreateTableTag, GetTableTagVersion, UpdateTableTag,
-- DeleteTableTag, ListTableTags, and DescribeTable by tag.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{tg}');
SELECT location FROM lance_namespace.lance_declare_table('{tg,t}');
SELECT location FROM lance_namespace.lance_declare_table('{tg,other}');
SELECT count(*) FROM generate_series(1, 4) v,
       lance_namespace.lance_create_table_version('{tg,t}', v, '/m/main/' || v, 10 * v);
SELECT (lance_namespace.lance_create_table_branch('{tg,t}', 'dev', from_version => 2)) ? 'createAt' AS dev_created;
SELECT version FROM lance_namespace.lance_create_table_version('{tg,t}', 3, '/m/dev/3', 33, branch => 'dev');
SELECT version FROM lance_namespace.lance_create_table_version('{tg,other}', 1, '/m/other/1');

--
-- CreateTableTag
--
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'v1', 1);
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'stable', 4, 'main');
-- on a branch: its own version, and a version it inherits from main
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'dev-3', 3, 'dev');
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'dev-2', 2, 'dev');
-- any valid UTF-8 without control characters, "/" and "." included
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'release/1.0 β', 4);
-- the same tag name on another table is another tag
SELECT lance_namespace.lance_create_table_tag('{tg,other}', 'v1', 1);
SELECT table_name, tag, branch, version, created_at <= now() AS created_at_ok,
       created_by = current_user AS by_me
  FROM lance_namespace.table_tags WHERE id[1] = 'tg' ORDER BY table_name, tag;

-- errors: missing version (11), duplicate (9), missing table (4), missing
-- branch (22), invalid tag or version (13)
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', 5)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', 0)$$);
-- main's 3 and 4 are not on dev (it starts at 2; it has its own 3)
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', 4, 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'v1', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'v1', 2)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,nope}', 'x', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', 1, 'ghost')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'x', -1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', NULL, 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', '', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', E'a\nb', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{tg,t}', repeat('t', 256), 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag(NULL, 'x', 1)$$);
SELECT count(*) AS tags FROM lance_namespace.table_tags WHERE id[1] = 'tg';

--
-- GetTableTagVersion: branch is NULL for main
--
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'v1');
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'dev-3');
-- a tag made on dev for a version dev inherits points to main's version
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'dev-2');
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'release/1.0 β');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'nope')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'V1')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,nope}', 'v1')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', '')$$);

--
-- DescribeTable by tag
--
SELECT "table", version FROM lance_namespace.lance_describe_table('{tg,t}', tag => 'v1');
SELECT "table", version FROM lance_namespace.lance_describe_table('{tg,t}', tag => 'dev-3');
SELECT "table", version FROM lance_namespace.lance_describe_table('{tg,t}', tag => 'dev-2');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{tg,t}', tag => 'nope')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{tg,t}', 1, tag => 'v1')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{tg,t}', branch => 'main', tag => 'v1')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{tg,t}', NULL, 'dev', 'dev-3')$$);
SELECT lance_namespace.rest_describe_table('{"id": ["tg", "t"], "tag": "dev-3"}') -> 'version' AS rest_version;
SELECT lance_try($$SELECT lance_namespace.rest_describe_table('{"id": ["tg", "t"], "tag": "v1", "version": 1}')$$);

--
-- UpdateTableTag
--
SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 2);
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'v1');
-- move it to a branch, and back
SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 3, 'dev');
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'v1');
SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 3);
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'v1');
-- errors: missing tag (8), missing target version (11), missing branch (22)
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'nope', 1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 9)$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 4, 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', 1, 'ghost')$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'v1', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,nope}', 'v1', 1)$$);
-- a missing tag is reported before a missing version
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{tg,t}', 'nope', 9)$$);
-- the failed updates changed nothing
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'v1');

--
-- ListTableTags: a map of name to TagContents {branch?, version, manifestSize}
--
SELECT tags, page_token FROM lance_namespace.lance_list_table_tags('{tg,t}');
SELECT tags, page_token FROM lance_namespace.lance_list_table_tags('{tg,other}');
SELECT tags, page_token FROM lance_namespace.lance_list_table_tags('{tg,t}', NULL, 0);
-- a walk with limit 2 visits every tag once, in name order (C collation)
WITH RECURSIVE walk(n, names, token) AS (
	SELECT 1, ARRAY(SELECT k FROM jsonb_object_keys(r.tags) k ORDER BY k COLLATE "C"), r.page_token
	  FROM lance_namespace.lance_list_table_tags('{tg,t}', NULL, 2) r
	UNION ALL
	SELECT w.n + 1, ARRAY(SELECT k FROM jsonb_object_keys(r.tags) k ORDER BY k COLLATE "C"), r.page_token
	  FROM walk w, lance_namespace.lance_list_table_tags('{tg,t}', w.token, 2) r
	 WHERE w.token IS NOT NULL)
SELECT n, names, token IS NOT NULL AS more FROM walk ORDER BY n;
SELECT convert_from(decode(page_token, 'base64'), 'UTF8') AS token
  FROM lance_namespace.lance_list_table_tags('{tg,t}', NULL, 1);
-- tokens of other lists are refused (13)
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_tags('{tg,t}',
	encode(convert_to('b:dev', 'UTF8'), 'base64'))$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_tags('{tg,t}',
	(SELECT page_token FROM lance_namespace.lance_list_table_versions('{tg,t}', NULL, NULL, 1)))$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_tags('{tg,t}', 'x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_tags('{tg,t}', NULL, -5)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_tags('{tg,nope}')$$);
-- and a tags token is refused by the branches list
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_branches('{tg,t}',
	(SELECT page_token FROM lance_namespace.lance_list_table_tags('{tg,t}', NULL, 1)))$$);

--
-- DeleteTableTag
--
SELECT lance_namespace.lance_delete_table_tag('{tg,t}', 'stable');
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_tag('{tg,t}', 'stable')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'stable')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_tag('{tg,nope}', 'v1')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_tag('{tg,t}', NULL)$$);
-- the deleted name can be used again
SELECT lance_namespace.lance_create_table_tag('{tg,t}', 'stable', 1);
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,t}', 'stable');
-- the other table's v1 is untouched by all of this
SELECT * FROM lance_namespace.lance_get_table_tag_version('{tg,other}', 'v1');

--
-- REST bindings
--
SELECT r - 'transaction_id' AS response, r ? 'transaction_id' AS has_txid
  FROM lance_namespace.rest_create_table_tag('{"id": ["tg", "t"], "tag": "rest", "version": 3, "branch": "dev"}') r;
SELECT lance_namespace.rest_get_table_tag_version('{"id": ["tg", "t"], "tag": "rest"}');
SELECT lance_namespace.rest_get_table_tag_version('{"id": ["tg", "t"], "tag": "stable"}');
SELECT r - 'transaction_id' AS response, r ? 'transaction_id' AS has_txid
  FROM lance_namespace.rest_update_table_tag('{"id": ["tg", "t"], "tag": "rest", "version": 4}') r;
SELECT lance_try($$SELECT lance_namespace.rest_update_table_tag('{"id": ["tg", "t"], "tag": "rest", "version": "4"}')$$);
SELECT lance_namespace.rest_list_table_tags('{"id": ["tg", "t"], "limit": 2}') - 'page_token' AS first_page;
SELECT r - 'transaction_id' AS response, r ? 'transaction_id' AS has_txid
  FROM lance_namespace.rest_delete_table_tag('{"id": ["tg", "t"], "tag": "rest"}') r;
SELECT lance_try($$SELECT lance_namespace.rest_delete_table_tag('{"id": ["tg", "t"], "tag": "rest"}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_tag('{"id": ["tg", "t"], "tag": "v1", "version": 1}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_tag('{"id": ["tg", "t"], "tag": "r2", "version": 1.5}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_update_table_tag('{"id": ["tg", "t"], "tag": "nope", "version": 1}')$$);

--
-- Tags and the versions under them
--
-- deleting a tagged version leaves the tag; describing by it fails (11)
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{tg,t}', '[{"start_version": 1, "end_version": 2}]');
SELECT tags -> 'stable' AS stable FROM lance_namespace.lance_list_table_tags('{tg,t}');
SELECT lance_try($$SELECT version FROM lance_namespace.lance_describe_table('{tg,t}', tag => 'stable')$$);
-- deleting the branch removes the tags on it
SELECT lance_namespace.lance_delete_table_branch('{tg,t}', 'dev');
SELECT tag, branch, version FROM lance_namespace.table_tags WHERE id = '{tg,t}' ORDER BY tag;
-- dropping the namespace removes every tag of its tables
SELECT array_agg(id) AS tg_ids FROM lance_namespace.entries WHERE path[1] = 'tg' AND kind = 't' \gset
SELECT count(*) AS tags FROM lance_namespace.tags WHERE table_id = ANY (:'tg_ids');
SELECT * FROM lance_namespace.lance_drop_namespace('{tg}', NULL, 'Cascade');
SELECT count(*) AS tags_left FROM lance_namespace.tags WHERE table_id = ANY (:'tg_ids');
