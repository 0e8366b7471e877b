--
-- 01_namespaces: CreateNamespace, ListNamespaces, DescribeNamespace,
-- DropNamespace, NamespaceExists.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;

-- create, describe, exists
SELECT * FROM lance_namespace.lance_create_namespace('{ns1}');
SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', properties => '{"owner": "alice", "team": "db"}');
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['ns1', 'child', 'leaf'], 'Create', 'null');
SELECT * FROM lance_namespace.lance_describe_namespace('{ns1,child}');
SELECT * FROM lance_namespace.lance_describe_namespace('{ns1}');
SELECT * FROM lance_namespace.lance_describe_namespace('{}');      -- the root
SELECT lance_namespace.lance_namespace_exists('{ns1}'),
       lance_namespace.lance_namespace_exists('{ns1,child,leaf}'),
       lance_namespace.lance_namespace_exists('{}'),
       lance_namespace.lance_namespace_exists('{nope}'),
       lance_namespace.lance_namespace_exists('{nope,deeper}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_namespace('{nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_namespace('{ns1,nope}')$$);

-- create: modes
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', 'create')$$);
-- ExistOk returns the existing namespace's properties, not the given ones
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', 'ExistOk', '{"x": "y"}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', 'exist_ok')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', 'EXIST_OK')$$);
SELECT * FROM lance_namespace.lance_describe_namespace('{ns1,child}');
-- Overwrite replaces the namespace (and drops its subtree)
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,child}', 'Overwrite', '{"v": "2"}')$$);
SELECT * FROM lance_namespace.lance_describe_namespace('{ns1,child}');
SELECT lance_namespace.lance_namespace_exists('{ns1,child,leaf}') AS leaf_after_overwrite;
-- Overwrite of a missing namespace simply creates it
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,fresh}', 'overwrite')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,x}', 'Replace')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,x}', '')$$);
SELECT lance_namespace.lance_namespace_exists('{ns1,x}') AS x_exists;

-- create: missing parent, root, bad ids and names
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{nope,child}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{""}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{.}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{..}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{a/b}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[E'a\x01b'])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[E'a\x7fb'])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[E'a\u0085b'])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[E'tab\there'])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[repeat('n', 256)])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[repeat('é', 128)])$$);  -- 256 bytes
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['{ns1}', NULL])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{ns1,NULL}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{{ns1,a},{ns1,b}}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(lance_namespace.lance_parse_id(repeat('a$', 64) || 'a'))$$);
-- names that are fine: 255 bytes, unicode, dots, spaces, '$'
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY[repeat('n', 255)]);
SELECT lance_namespace.lance_namespace_exists(ARRAY[repeat('n', 255)]) AS long_name_exists;
SELECT * FROM lance_namespace.lance_drop_namespace(ARRAY[repeat('n', 255)]);
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['ünïcødé 名前']);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['a.b', '...'])$$);
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['with space']);
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['dollar$name']);
SELECT lance_namespace.lance_namespace_exists(ARRAY['a.b', '...']) AS dotted_parent_missing;
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['a.b']);
SELECT * FROM lance_namespace.lance_create_namespace(ARRAY['a.b', '...']);
SELECT lance_namespace.lance_namespace_exists(ARRAY['a.b', '...']) AS dotted;
-- case matters
SELECT * FROM lance_namespace.lance_create_namespace('{NS1}');

-- create: properties must be a flat object of strings
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '[]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '"str"')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{"a": {"b": "c"}}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{"a": 1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{"a": null}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{"a": true}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{"a": ["b"]}')$$);
SELECT lance_namespace.lance_namespace_exists('{p1}') AS p1_exists;
SELECT * FROM lance_namespace.lance_create_namespace('{p1}', NULL, '{}');

-- list
SELECT * FROM lance_namespace.lance_list_namespaces();
SELECT * FROM lance_namespace.lance_list_namespaces('{ns1}');
SELECT * FROM lance_namespace.lance_list_namespaces('{ns1,child}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_namespaces('{nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_namespaces(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_namespaces('{ns1}', NULL, -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_namespaces('{ns1}', 'garbage!')$$);
SELECT * FROM lance_namespace.lance_list_namespaces('{ns1}', NULL, 0);
SELECT * FROM lance_namespace.lance_list_namespaces('{ns1}', '', 1);

-- pagination: walk 25 namespaces 7 at a time
SELECT * FROM lance_namespace.lance_create_namespace('{pg}');
SELECT count(*) FROM generate_series(1, 25) i,
       lance_namespace.lance_create_namespace(ARRAY['pg', 'n' || lpad(i::text, 2, '0')]);
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.namespaces, r.page_token
	  FROM lance_namespace.lance_list_namespaces('{pg}', NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.namespaces, r.page_token
	  FROM pages p, lance_namespace.lance_list_namespaces('{pg}', p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT page, items, token IS NOT NULL AS has_token FROM pages ORDER BY page;
-- every item exactly once
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.namespaces, r.page_token
	  FROM lance_namespace.lance_list_namespaces('{pg}', NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.namespaces, r.page_token
	  FROM pages p, lance_namespace.lance_list_namespaces('{pg}', p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT count(*) AS seen, count(DISTINCT n) AS distinct_seen,
       array_agg(n ORDER BY n) = ARRAY(SELECT 'n' || lpad(i::text, 2, '0') FROM generate_series(1, 25) i) AS all_present
  FROM pages, unnest(items) n;
-- an exact multiple of the page size: the last full page carries no token
SELECT count(*) FROM lance_namespace.namespaces WHERE id[1] = 'pg' AND id[2] > 'n21'
   AND lance_namespace.lance_drop_namespace(id) IS NOT NULL;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.namespaces, r.page_token
	  FROM lance_namespace.lance_list_namespaces('{pg}', NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.namespaces, r.page_token
	  FROM pages p, lance_namespace.lance_list_namespaces('{pg}', p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT page, cardinality(items) AS n, items[1] AS first, token IS NOT NULL AS has_token FROM pages ORDER BY page;
-- limit larger than the list, and the default page size
SELECT cardinality(namespaces), page_token FROM lance_namespace.lance_list_namespaces('{pg}', NULL, 100);
SELECT cardinality(namespaces), page_token FROM lance_namespace.lance_list_namespaces('{pg}');
-- a token stays valid when the item it points at is dropped
SELECT page_token AS tok FROM lance_namespace.lance_list_namespaces('{pg}', NULL, 3) \gset
SELECT * FROM lance_namespace.lance_drop_namespace('{pg,n03}');
SELECT * FROM lance_namespace.lance_list_namespaces('{pg}', :'tok', 3);
-- a token of a table list is rejected by a namespace list (tokens are
-- base64 of "<kind>:<last name>")
SELECT convert_from(decode(:'tok', 'base64'), 'UTF8') AS token_content;
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_namespaces('{pg}', %L, 3)$$,
                        encode(convert_to('t:n05', 'UTF8'), 'base64')));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_namespaces('{pg}', %L, 3)$$,
                        encode(convert_to('n:n05', 'UTF8'), 'base64')));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_namespaces('{pg}', %L, 3)$$,
                        encode(convert_to('n', 'UTF8'), 'base64')));
-- a key that is not text of the database's encoding: not a token the list made
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_namespaces('{pg}', %L, 3)$$,
                        encode('\x6e3aff'::bytea, 'base64')));

-- drop
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{nope}', 'Fail')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{nope}', 'Skip')$$);
SELECT lance_namespace.lance_drop_namespace('{nope,deeper}', 'skip') IS NULL AS skipped;
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{ns1}', 'Ignore')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{ns1}', NULL, 'Everything')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{ns1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{ns1}', 'Fail', 'Restrict')$$);
SELECT * FROM lance_namespace.lance_drop_namespace('{ns1,child}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{ns1,child}')$$);
SELECT * FROM lance_namespace.lance_drop_namespace('{ns1}', behavior => 'Cascade');
SELECT lance_namespace.lance_namespace_exists('{ns1}') AS ns1, lance_namespace.lance_namespace_exists('{ns1,fresh}') AS fresh;

-- the psql view
SELECT id, name, properties, created_by = current_user AS by_me, created_at <= now() AS ts
  FROM lance_namespace.namespaces WHERE id[1] <> 'pg' ORDER BY id;

-- clean up
SELECT count(lance_namespace.lance_drop_namespace(n.id, 'Skip', 'Cascade'))
  FROM (SELECT id FROM lance_namespace.namespaces WHERE cardinality(id) = 1 OFFSET 0) n;
SELECT count(*) AS entries_left FROM lance_namespace.entries;
