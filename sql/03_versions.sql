--
-- 03_versions: CreateTableVersion, DescribeTableVersion, ListTableVersions,
-- BatchDeleteTableVersions, BatchCreateTableVersions.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{vs}');
SELECT location FROM lance_namespace.lance_declare_table('{vs,t}');
SELECT location FROM lance_namespace.lance_declare_table('{vs,u}', '/data/u/');
SELECT location FROM lance_namespace.lance_declare_table('{vs,empty}');

--
-- CreateTableVersion: naming schemes and canonical manifest paths
--
-- V2 (the default): 20-digit zero-padded (2^64 - 1 - version)
SELECT version, manifest_path, manifest_size, e_tag, metadata, timestamp_millis > 0 AS has_ts
  FROM lance_namespace.lance_create_table_version('{vs,t}', 0, '/data/lance/vs/t.lance/_versions/.tmp-0', 10);
SELECT version, manifest_path, manifest_size, e_tag, metadata
  FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/staging/1', 100, 'etag-1', '{"k": "v"}', 'V2', 'main');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{vs,t}', 2, '/staging/2', naming_scheme => 'v2');
-- V1: <version>.manifest; a trailing slash of the location is not doubled
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{vs,u}', 1, '/staging/u1', naming_scheme => 'V1');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{vs,u}', 2, '/staging/u2', naming_scheme => 'v1');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{vs,u}', 9223372036854775807, '/staging/umax');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, '/s', naming_scheme => 'V3')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, '/s', naming_scheme => '')$$);
-- a staging manifest_path is recorded as given: no control characters, as for locations
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, E'/s/\x01x')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["vs", "u"], "version": 3, "manifest_path": "/s/\n"}')$$);
-- at most max_path_bytes (4096) of path, max_e_tag_bytes (1024) of e_tag without control characters
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, '/%s')$$, repeat('p', 4096)));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, '/s/3', e_tag => '%s')$$, repeat('e', 1025)));
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,u}', 3, '/s/3', e_tag => E'"abc"\r\nx: y')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["vs", "u"], "version": 3, "manifest_path": "/s/3", "e_tag": "a\u007f"}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_declare_table('{vs,long}', '/' || repeat('l', 4096))$$);
-- (at the limits: taken)
BEGIN;
SELECT location FROM lance_namespace.lance_declare_table('{vs,limits}');
SELECT version, length(e_tag) AS e_tag_bytes
  FROM lance_namespace.lance_create_table_version('{vs,limits}', 3, '/' || repeat('p', 4095), e_tag => repeat('e', 1024));
ROLLBACK;
-- the view keeps the staging path and the scheme
SELECT name, branch, version, manifest_path, staging_manifest_path, naming_scheme, manifest_size, e_tag, metadata
  FROM lance_namespace.table_versions WHERE id[1] = 'vs' ORDER BY id, version;

--
-- CreateTableVersion: idempotent retry and conflicts
--
-- same version, same staging path, same size: the existing row comes back
SELECT version, manifest_path, manifest_size, e_tag, metadata
  FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/staging/1', 100);
-- the canonical path also names the same manifest; a size left out matches any
SELECT version, manifest_path, manifest_size
  FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/data/lance/vs/t.lance/_versions/18446744073709551614.manifest');
-- the existing row is returned unchanged, whatever e_tag/metadata the retry carries
SELECT version, e_tag, metadata
  FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/staging/1', 100, 'other-etag', '{"x": "y"}');
-- a different manifest for an existing version: ConcurrentModification
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/staging/other', 100)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 1, '/staging/1', 101)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 2, '/staging/1')$$);
-- a version created without a size matches a retry with any size
SELECT version, manifest_size FROM lance_namespace.lance_create_table_version('{vs,t}', 2, '/staging/2', 555);
-- the catalog is unchanged by all of that
SELECT version, manifest_path, manifest_size, e_tag FROM lance_namespace.table_versions
 WHERE id = '{vs,t}' ORDER BY version;

--
-- CreateTableVersion: bad input and missing objects
--
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version(NULL, 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{}', 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,NULL}', 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{{vs,t},{vs,u}}', 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', NULL, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', -1, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', metadata => '[]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', metadata => '"x"')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', metadata => '{"a": {"b": "c"}}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', metadata => '{"a": 1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', branch => 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,t}', 5, '/m', branch => '')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,nope}', 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{nope,t}', 5, '/m')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs}', 5, '/m')$$);
-- metadata JSON null is no metadata
SELECT version, metadata FROM lance_namespace.lance_create_table_version('{vs,t}', 3, '/staging/3', metadata => 'null');
SELECT count(*) AS t_versions FROM lance_namespace.table_versions WHERE id = '{vs,t}';

--
-- DescribeTableVersion
--
SELECT version, manifest_path, manifest_size, e_tag, metadata FROM lance_namespace.lance_describe_table_version('{vs,t}');
SELECT version, manifest_path, manifest_size, e_tag, metadata FROM lance_namespace.lance_describe_table_version('{vs,t}', 1);
SELECT version, manifest_path FROM lance_namespace.lance_describe_table_version('{vs,t}', 0, 'main');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,t}', 42)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,empty}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,empty}', 0)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,t}', -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,t}', 1, 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{vs,nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{nope,t}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table_version('{}')$$);

--
-- ListTableVersions
--
SELECT (v).version, (v).manifest_size FROM lance_namespace.lance_list_table_versions('{vs,t}') r, unnest(r.versions) v;
SELECT (v).version FROM lance_namespace.lance_list_table_versions('{vs,t}', descending => true) r, unnest(r.versions) v;
SELECT versions, page_token FROM lance_namespace.lance_list_table_versions('{vs,empty}');
SELECT versions, page_token FROM lance_namespace.lance_list_table_versions('{vs,t}', NULL, NULL, 0);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,t}', 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,t}', NULL, NULL, -1)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,t}', NULL, 'bad token')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,nope}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{nope,t}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions(NULL)$$);
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,t}', NULL, %L)$$,
                        encode(convert_to('a:12x', 'UTF8'), 'base64')));
-- pagination: 25 versions, 7 at a time, both directions
SELECT location FROM lance_namespace.lance_declare_table('{vs,many}');
SELECT count(*) FROM generate_series(0, 24) i,
       lance_namespace.lance_create_table_version('{vs,many}', i, '/m/' || i);
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.versions, r.page_token
	  FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.versions, r.page_token
	  FROM pages p, lance_namespace.lance_list_table_versions('{vs,many}', NULL, p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT page, ARRAY(SELECT (v).version FROM unnest(items) v) AS versions, token IS NOT NULL AS has_token
  FROM pages ORDER BY page;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.versions, r.page_token
	  FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, NULL, 7, true) r
	UNION ALL
	SELECT p.page + 1, r.versions, r.page_token
	  FROM pages p, lance_namespace.lance_list_table_versions('{vs,many}', NULL, p.token, 7, true) r
	 WHERE p.token IS NOT NULL
)
SELECT page, ARRAY(SELECT (v).version FROM unnest(items) v) AS versions, token IS NOT NULL AS has_token
  FROM pages ORDER BY page;
WITH RECURSIVE pages(page, items, token) AS (
	SELECT 1, r.versions, r.page_token
	  FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, NULL, 7) r
	UNION ALL
	SELECT p.page + 1, r.versions, r.page_token
	  FROM pages p, lance_namespace.lance_list_table_versions('{vs,many}', NULL, p.token, 7) r
	 WHERE p.token IS NOT NULL
)
SELECT count(*) AS seen, count(DISTINCT (v).version) AS distinct_seen,
       min((v).version), max((v).version)
  FROM pages, unnest(items) v;
-- ascending and descending tokens are not interchangeable
SELECT page_token AS asc_tok FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, NULL, 7) \gset
SELECT page_token AS desc_tok FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, NULL, 7, true) \gset
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, %L, 7, true)$$, :'asc_tok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, %L, 7)$$, :'desc_tok'));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_tables('{vs}', %L)$$, :'asc_tok'));
-- a version token's position is a number within bigint
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, %L, 7)$$, encode(convert_to('a:', 'UTF8'), 'base64')));
SELECT lance_try(format($$SELECT * FROM lance_namespace.lance_list_table_versions('{vs,many}', NULL, %L, 7)$$, encode(convert_to('a:99999999999999999999', 'UTF8'), 'base64')));
-- a version token may be used on another table's list (keyset position only)
SELECT ARRAY(SELECT (v).version FROM unnest(versions) v) FROM lance_namespace.lance_list_table_versions('{vs,t}', NULL, :'asc_tok', 7);

--
-- BatchDeleteTableVersions: ranges are [start, end); end -1 is "through the latest"
--
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": 3}]');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 5, "end_version": 5}, {"start_version": 9, "end_version": 7}]');  -- empty ranges
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 5, "end_version": 6}, {"start_version": 10, "end_version": 12}, {"start_version": 11, "end_version": 13}]');
-- the latest version (24) stays: a range through it is refused whole
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 20, "end_version": -1}]')$$);
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 20, "end_version": 24}]');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[]');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 100, "end_version": -1}]');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": 1}]', 'main');
SELECT ARRAY(SELECT (v).version FROM unnest(versions) v) AS remaining FROM lance_namespace.lance_list_table_versions('{vs,many}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '5')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[5]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[[1, 2]]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 1}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"end_version": 1}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": -1, "end_version": 5}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": -2}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": "1", "end_version": 5}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 1.5, "end_version": 5}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 1e30, "end_version": 5}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": -1}]', 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,nope}', '[]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{nope,t}', '[]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions(NULL, '[]')$$);
-- a bad range anywhere deletes nothing
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": -1}, {"start_version": -3, "end_version": 1}]')$$);
SELECT count(*) AS many_versions FROM lance_namespace.table_versions WHERE id = '{vs,many}';
-- a version number is acknowledged once: 0 .. -1 would take the latest
-- version, so it deletes nothing; 0 .. 24 deletes all but the latest, and
-- no deleted number is created again, by any manifest (409), nor the
-- latest with another manifest; the same manifest again is a retry
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": -1}]')$$);
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{vs,many}', '[{"start_version": 0, "end_version": 24}]');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,many}', 4, '/new/4')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,many}', 4, '/m/4')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_table_version('{vs,many}', 24, '/new/24')$$);
SELECT version FROM lance_namespace.lance_create_table_version('{vs,many}', 24, '/m/24');
SELECT version FROM lance_namespace.lance_create_table_version('{vs,many}', 25, '/m/25');
-- ... a direct DELETE of the latest (as the catalog's owner too) is refused,
-- and a retirement of the latest keeps it
DO $$BEGIN
	DELETE FROM lance_namespace.versions v USING lance_namespace.entries e
	 WHERE v.table_id = e.id AND e.path = '{vs,many}' AND v.version = 25;
	RAISE NOTICE 'deleted';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE '%: %', SQLSTATE, SQLERRM;
END$$;
SELECT lance_namespace.lance_retire_table_version('{vs,many}', 25, NULL,
	(SELECT manifest_path FROM lance_namespace.lance_describe_table_version('{vs,many}', 25)));
SELECT lance_namespace.lance_retire_table_version('{vs,many}', 24, NULL,
	(SELECT manifest_path FROM lance_namespace.lance_describe_table_version('{vs,many}', 24)));
SELECT ARRAY(SELECT (v).version FROM unnest(versions) v) AS remaining FROM lance_namespace.lance_list_table_versions('{vs,many}');

--
-- BatchCreateTableVersions: all or nothing, results in request order
--
SELECT location FROM lance_namespace.lance_declare_table('{vs,b1}');
SELECT location FROM lance_namespace.lance_declare_table('{vs,b2}');
SELECT version, manifest_path, manifest_size, e_tag, metadata
  FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b2"], "version": 2, "manifest_path": "/b2/2", "manifest_size": 20},
	{"id": ["vs", "b1"], "version": 1, "manifest_path": "/b1/1", "e_tag": "e1", "metadata": {"m": "1"}},
	{"id": ["vs", "b2"], "version": 1, "manifest_path": "/b2/1", "naming_scheme": "V1", "branch": "main"},
	{"id": ["vs", "b1"], "version": 0, "manifest_path": "/b1/0"}
  ]');
SELECT name, version, manifest_path, naming_scheme FROM lance_namespace.table_versions
 WHERE id[2] IN ('b1', 'b2') ORDER BY name, version;
-- one bad entry (a conflicting manifest for b1 v1) and nothing is applied
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["vs", "b2"], "version": 3, "manifest_path": "/b2/3"},
	{"id": ["vs", "b1"], "version": 1, "manifest_path": "/b1/other"}
  ]')$$);
-- a missing table in the batch
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["vs", "gone"], "version": 1, "manifest_path": "/gone/1"}
  ]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["nope", "b1"], "version": 1, "manifest_path": "/x"}
  ]')$$);
-- duplicates inside one batch: a different manifest conflicts, the same one is a retry
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2bis"}
  ]')$$);
SELECT name, version FROM lance_namespace.table_versions WHERE id[2] IN ('b1', 'b2') ORDER BY name, version;
SELECT version, manifest_path FROM lance_namespace.lance_batch_create_table_versions('[
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["vs", "b1"], "version": 2, "manifest_path": "/b1/2"},
	{"id": ["vs", "b1"], "version": 1, "manifest_path": "/b1/1"}
  ]');
SELECT * FROM lance_namespace.lance_batch_create_table_versions('[]');
-- malformed batches
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions(NULL)$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('{}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('"x"')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[1]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"version": 1, "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": [], "version": 1, "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": "vs$b1", "version": 1, "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", 1], "version": 1, "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": "7", "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": -7, "manifest_path": "/x"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": ""}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": 5}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": "/x", "manifest_size": -1}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": "/x", "metadata": {"a": 1}}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": "/x", "naming_scheme": "V9"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": "/x", "branch": "dev"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["vs", "b1"], "version": 7, "manifest_path": "/x", "e_tag": 1}]')$$);
SELECT name, version FROM lance_namespace.table_versions WHERE id[2] IN ('b1', 'b2') ORDER BY name, version;

-- A table declared earlier in the same statement is found by
-- CreateTableVersion: its lookup takes a fresh snapshot, as a writer must,
-- although it takes no lock.
WITH d AS MATERIALIZED (SELECT (lance_namespace.lance_declare_table('{vs,same}', '/data/same')).location)
SELECT d.location, (lance_namespace.lance_create_table_version('{vs,same}', 1, '/s/same-1')).version FROM d;

-- clean up
SELECT * FROM lance_namespace.lance_drop_namespace('{vs}', NULL, 'Cascade');
SELECT count(*) AS entries_left FROM lance_namespace.entries;
SELECT count(*) AS versions_left FROM lance_namespace.versions;
