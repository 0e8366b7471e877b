--
-- 02_tables: DeclareTable, RegisterTable, DescribeTable, TableExists,
-- ListTables, ListAllTables, DeregisterTable, RenameTable.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{db}');
SELECT * FROM lance_namespace.lance_create_namespace('{db,sales}');
SELECT * FROM lance_namespace.lance_create_namespace('{other}');

--
-- DeclareTable
--
SELECT * FROM lance_namespace.lance_declare_table('{db,t1}');
SELECT * FROM lance_namespace.lance_declare_table('{db,sales,orders}', properties => '{"format": "lance"}');
SELECT * FROM lance_namespace.lance_declare_table('{top}', 's3://bucket/top.lance', NULL, true);
SELECT * FROM lance_namespace.lance_declare_table('{db,t2}', location => '/elsewhere/t2');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{nope,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,nope,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,t1,inner}')$$);  -- a table is no namespace
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,NULL}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{{db,a},{db,b}}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,..}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,a/b}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table(ARRAY['db', E'a\x01b'])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table(ARRAY['db', repeat('t', 256)])$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,""}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,bad}', '')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,bad}', E'/x\ny')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,bad}', NULL, '[1]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,bad}', NULL, '{"k": {"n": "v"}}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,bad}', NULL, '{"k": 1}')$$);
SELECT lance_namespace.lance_table_exists('{db,bad}') AS bad_exists;

-- names are unique across kinds within one parent
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,sales}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,sales}', '/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{db,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{db,t1}', 'ExistOk')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{db,t1}', 'Overwrite')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{db,t1}')$$);
SELECT lance_namespace.lance_namespace_exists('{db,t1}') AS t1_is_ns, lance_namespace.lance_table_exists('{db,t1}') AS t1_is_table;
SELECT lance_namespace.lance_table_exists('{db,sales}') AS sales_is_table;

-- the default location follows the root location; without one, a location is required
SELECT lance_namespace.lance_set_root_location('s3://bucket/warehouse/');
SELECT location FROM lance_namespace.lance_declare_table('{db,t3}');
BEGIN;
DELETE FROM lance_namespace.settings WHERE name = 'root_location';
SELECT lance_namespace.lance_root_location() IS NULL AS unset;
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{db,t4}')$$);
SELECT location FROM lance_namespace.lance_declare_table('{db,t4}', '/explicit/t4');
ROLLBACK;
SELECT lance_namespace.lance_set_root_location('/data/lance');
SELECT location FROM lance_namespace.lance_describe_table('{db,t3}');   -- unchanged

--
-- RegisterTable
--
SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '/data/existing/reg.lance');
SELECT * FROM lance_namespace.lance_register_table('{db,reg2}', 'gs://b/reg2', 'Create', '{"a": "b"}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '/data/other')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '/data/other', 'create')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '/data/other', 'Upsert')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,reg}', NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{nope,reg}', '/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{}', '/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table(NULL, '/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,r3}', '/x', NULL, '"s"')$$);
-- Overwrite replaces the registration and drops the version history
SELECT version FROM lance_namespace.lance_create_table_version('{db,reg}', 1, '/data/existing/reg.lance/_versions/1.manifest');
SELECT * FROM lance_namespace.lance_register_table('{db,reg}', '/data/moved/reg.lance', 'Overwrite', '{"moved": "yes"}');
SELECT "table", namespace, version, location, properties, is_only_declared
  FROM lance_namespace.lance_describe_table('{db,reg}', check_declared => true);
SELECT count(*) AS versions_left FROM lance_namespace.table_versions WHERE id = '{db,reg}';
-- Overwrite of a declared table makes it a registered one
SELECT is_only_declared FROM lance_namespace.lance_describe_table('{db,t2}', check_declared => true);
SELECT * FROM lance_namespace.lance_register_table('{db,t2}', '/elsewhere/t2', 'overwrite');
SELECT is_only_declared FROM lance_namespace.lance_describe_table('{db,t2}', check_declared => true);
-- Overwrite of a missing table registers it; Overwrite never replaces a namespace
SELECT * FROM lance_namespace.lance_register_table('{db,reg3}', '/r3', 'Overwrite');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{db,sales}', '/x', 'Overwrite')$$);

--
-- DescribeTable
--
SELECT * FROM lance_namespace.lance_describe_table('{db,t1}');
SELECT * FROM lance_namespace.lance_describe_table('{db,sales,orders}', with_table_uri => true, check_declared => true);
SELECT "table", location, table_uri FROM lance_namespace.lance_describe_table('{top}', with_table_uri => true);
SELECT "table", location, table_uri FROM lance_namespace.lance_describe_table('{db,reg3}', with_table_uri => true);
SELECT "table", table_uri, is_only_declared FROM lance_namespace.lance_describe_table('{db,t1}', with_table_uri => false, check_declared => false);
SELECT "table", version, is_only_declared FROM lance_namespace.lance_describe_table('{db,t1}', load_detailed_metadata => false, vend_credentials => true, check_declared => true);
-- load_detailed_metadata true asks for the dataset's schema and stats, which
-- the catalog does not read: Unsupported, not silently ignored
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1}', load_detailed_metadata => true)$$);
SELECT version FROM lance_namespace.lance_create_table_version('{db,t1}', 1, '/m/1');
SELECT version FROM lance_namespace.lance_create_table_version('{db,t1}', 2, '/m/2');
SELECT "table", version, is_only_declared FROM lance_namespace.lance_describe_table('{db,t1}', check_declared => true);
SELECT "table", version FROM lance_namespace.lance_describe_table('{db,t1}', version => 1);
SELECT "table", version FROM lance_namespace.lance_describe_table('{db,t1}', version => 2, branch => 'main');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1}', version => 3)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,sales,orders}', version => 0)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1}', version => -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1}', branch => 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{nope,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,sales}')$$);   -- a namespace
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1,x}')$$);    -- under a table
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t1}', NULL, NULL, NULL, NULL)$$);

--
-- TableExists
--
SELECT lance_namespace.lance_table_exists('{db,t1}') AS t1,
       lance_namespace.lance_table_exists('{db,t1}', 2) AS t1_v2,
       lance_namespace.lance_table_exists('{db,t1}', 3) AS t1_v3,
       lance_namespace.lance_table_exists('{db,nope}') AS nope,
       lance_namespace.lance_table_exists('{nope,t1}') AS nope_ns,
       lance_namespace.lance_table_exists('{db,sales}') AS a_namespace;
SELECT lance_try($$SELECT lance_namespace.lance_table_exists('{db,t1}', -1)$$);
SELECT lance_try($$SELECT lance_namespace.lance_table_exists('{}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_table_exists(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_table_exists('{db,"a/b"}')$$);

--
-- ListTables
--
SELECT * FROM lance_namespace.lance_list_tables('{db}');
SELECT * FROM lance_namespace.lance_list_tables('{db}', include_declared => false);
SELECT * FROM lance_namespace.lance_list_tables('{db}', NULL, NULL, NULL);
SELECT * FROM lance_namespace.lance_list_tables('{}');
SELECT * FROM lance_namespace.lance_list_tables('{db,sales}');
SELECT * FROM lance_namespace.lance_list_tables('{db,sales}', include_declared => false);
SELECT * FROM lance_namespace.lance_list_tables('{db}', NULL, 0);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_tables('{nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_tables('{db,t1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_tables(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_tables('{db}', NULL, -5)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_tables('{db}', 'not a token')$$);

-- pagination: walk 25 tables 7 at a time
SELECT * FROM lance_namespace.lance_create_namespace('{pt}');
SELECT count(*) FROM generate_series(1, 25) i,
       lance_namespace.lance_declare_table(ARRAY['pt', 't' || lpad(i::text, 2, '0')]);
SELECT * FROM lance_namespace.lance_create_namespace('{pt,a_namespace}');   -- not listed as a table
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.tables, r.page_token
	  FROM lance_namespace.lance_list_tables('{pt}', NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.tables, r.page_token
	  FROM pages p, lance_namespace.lance_list_tables('{pt}', p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT page, items, token IS NOT NULL AS has_token FROM pages ORDER BY page;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.tables, r.page_token
	  FROM lance_namespace.lance_list_tables('{pt}', NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.tables, r.page_token
	  FROM pages p, lance_namespace.lance_list_tables('{pt}', p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT count(*) AS seen, count(DISTINCT t) AS distinct_seen,
       array_agg(t ORDER BY t) = ARRAY(SELECT 't' || lpad(i::text, 2, '0') FROM generate_series(1, 25) i) AS all_present
  FROM pages, unnest(items) t;
-- tokens are bound to the kind of list
SELECT page_token AS ttok FROM lance_namespace.lance_list_tables('{pt}', NULL, 7) \gset
SELECT page_token AS ntok FROM lance_namespace.lance_list_namespaces('{}', NULL, 1) \gset
SELECT page_token AS atok FROM lance_namespace.lance_list_all_tables(NULL, 1) \gset
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_namespaces('{pt}', %L)$$, :'ttok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_tables('{pt}', %L)$$, :'ntok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_tables('{pt}', %L)$$, :'atok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_all_tables(%L)$$, :'ttok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{db,t1}', NULL, %L)$$, :'ttok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_all_tables(%L)$$, :'ntok'));
-- include_declared => false skips declared tables across pages
SELECT (lance_namespace.lance_create_table_version(ARRAY['pt', 't' || lpad(i::text, 2, '0')], 1, '/m' || i)).version
  FROM generate_series(3, 25, 3) i;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.tables, r.page_token
	  FROM lance_namespace.lance_list_tables('{pt}', NULL, 2, false) r
	UNION ALL
	SELECT p.page + 1, r.tables, r.page_token
	  FROM pages p, lance_namespace.lance_list_tables('{pt}', p.token, 2, false) r
	 WHERE p.token IS NOT NULL
)
SELECT page, items, token IS NOT NULL AS has_token FROM pages ORDER BY page;

--
-- ListAllTables
--
SELECT * FROM lance_namespace.lance_list_all_tables() WHERE false;  -- shape only
SELECT t FROM lance_namespace.lance_list_all_tables() r, unnest(r.tables) t WHERE t NOT LIKE 'pt$%';
SELECT t FROM lance_namespace.lance_list_all_tables(delimiter => '.') r, unnest(r.tables) t WHERE t NOT LIKE 'pt.%';
-- include_declared => false leaves out tables that are only declared, as ListTables does
SELECT t FROM lance_namespace.lance_list_all_tables(include_declared => false) r, unnest(r.tables) t WHERE t NOT LIKE 'pt$%';
SELECT (SELECT cardinality(tables) FROM lance_namespace.lance_list_all_tables(include_declared => false))
     < (SELECT cardinality(tables) FROM lance_namespace.lance_list_all_tables()) AS some_declared_left_out;
SELECT t FROM lance_namespace.rest_list_all_tables('{"include_declared": false}') r, jsonb_array_elements_text(r -> 'tables') t WHERE t NOT LIKE 'pt$%';
SELECT t FROM lance_namespace.lance_list_all_tables(NULL, NULL, '::') r, unnest(r.tables) t WHERE t NOT LIKE 'pt::%';
SELECT (lance_namespace.lance_list_all_tables()).page_token IS NULL AS single_page;
SELECT cardinality(tables) FROM lance_namespace.lance_list_all_tables(NULL, 0);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_all_tables(delimiter => '')$$);
SELECT cardinality(tables) FROM lance_namespace.lance_list_all_tables(delimiter => NULL);  -- NULL: the default '$'
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_all_tables(NULL, -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_all_tables('Zm9v')$$);
-- walk every table 7 at a time with a custom delimiter
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.tables, r.page_token
	  FROM lance_namespace.lance_list_all_tables(NULL, 7, '/') r
	UNION ALL
	SELECT p.page + 1, r.tables, r.page_token
	  FROM pages p, lance_namespace.lance_list_all_tables(p.token, 7, '/') r
	 WHERE p.token IS NOT NULL
)
SELECT page, items, token IS NOT NULL AS has_token FROM pages ORDER BY page;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.tables, r.page_token
	  FROM lance_namespace.lance_list_all_tables(NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.tables, r.page_token
	  FROM pages p, lance_namespace.lance_list_all_tables(p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT count(*) AS seen, count(DISTINCT t) AS distinct_seen,
       (SELECT count(*) FROM lance_namespace.tables) AS tables
  FROM pages, unnest(items) t;

--
-- RenameTable
--
SELECT lance_namespace.lance_rename_table('{db,t1}', 't1_renamed');
SELECT "table", namespace, version, location FROM lance_namespace.lance_describe_table('{db,t1_renamed}');
SELECT lance_namespace.lance_table_exists('{db,t1}') AS old_name_exists;
SELECT lance_namespace.lance_rename_table('{db,t1_renamed}', 'moved', '{other}');
SELECT "table", namespace, version, location FROM lance_namespace.lance_describe_table('{other,moved}');
SELECT version FROM lance_namespace.lance_list_table_versions('{other,moved}') r, unnest(r.versions);
SELECT lance_namespace.lance_rename_table('{other,moved}', 'at_root', '{}');
SELECT lance_namespace.lance_rename_table('{at_root}', 't1', '{db}');
SELECT lance_namespace.lance_rename_table('{db,t1}', 't1');               -- to itself: no-op
SELECT lance_namespace.lance_rename_table('{db,t1}', 't1', '{db}');
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 't2')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 'sales')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 'x', '{nope}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 'x', '{db,t2}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,nope}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{nope,t1}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,sales}', 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', '')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 'a/b')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', '..')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', E'x\x01')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{db,t1}', 'x', '{db,NULL}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table(NULL, 'x')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{}', 'x')$$);
SELECT lance_namespace.lance_table_exists('{db,t1}') AS t1_still_there;

--
-- DeregisterTable
--
SELECT * FROM lance_namespace.lance_deregister_table('{db,t2}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table('{db,t2}')$$);
-- the id comes back normalized (lower bound 1), whatever bounds it came with
SELECT (lance_namespace.lance_declare_table('{db,bounds}')).location IS NOT NULL AS declared;
SELECT id FROM lance_namespace.lance_deregister_table('[0:1]={db,bounds}'::text[]);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{db,t2}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table('{db,sales}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table('{nope,t}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table(NULL)$$);
-- deregistering drops the versions too
SELECT count(*) FROM lance_namespace.versions v JOIN lance_namespace.entries e ON e.id = v.table_id
 WHERE e.path = '{db,t1}';
SELECT id, location, properties FROM lance_namespace.lance_deregister_table('{db,t1}');
SELECT count(*) AS orphan_versions FROM lance_namespace.versions v
 WHERE NOT EXISTS (SELECT 1 FROM lance_namespace.entries e WHERE e.id = v.table_id);
-- the name is free again, for either kind
SELECT * FROM lance_namespace.lance_create_namespace('{db,t1}');

--
-- the psql view
--
SELECT id, name, location, properties, declared, created_by = current_user AS by_me
  FROM lance_namespace.tables WHERE id[1] <> 'pt' ORDER BY id;

-- clean up
SELECT * FROM lance_namespace.lance_deregister_table('{top}');
SELECT count(*) FROM unnest(ARRAY['db', 'other', 'pt']) n,
       lance_namespace.lance_drop_namespace(ARRAY[n], 'Fail', 'Cascade');
SELECT count(*) AS entries_left FROM lance_namespace.entries;
SELECT count(*) AS versions_left FROM lance_namespace.versions;
