--
-- 04_cascade: DropNamespace behaviors over a subtree of namespaces, tables
-- and versions.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
SELECT * FROM lance_namespace.lance_create_namespace('{c}', properties => '{"p": "c"}');
SELECT * FROM lance_namespace.lance_create_namespace('{c,sub}');
SELECT * FROM lance_namespace.lance_create_namespace('{c,sub,deeper}');
SELECT * FROM lance_namespace.lance_create_namespace('{c,only_ns}');
SELECT * FROM lance_namespace.lance_create_namespace('{c,only_ns,empty}');
SELECT * FROM lance_namespace.lance_create_namespace('{keep}');
SELECT location FROM lance_namespace.lance_declare_table('{c,ct1}');
SELECT location FROM lance_namespace.lance_register_table('{c,sub,st1}', '/ext/st1');
SELECT location FROM lance_namespace.lance_declare_table('{c,sub,deeper,dt}');
SELECT location FROM lance_namespace.lance_declare_table('{keep,kt}');
SELECT count(*) FROM unnest(ARRAY['{c,ct1}', '{c,sub,st1}', '{c,sub,deeper,dt}', '{keep,kt}']::text[]) t,
       generate_series(1, 3) v,
       lance_namespace.lance_create_table_version(t::text[], v, t || '/' || v);
SELECT count(*) AS entries, (SELECT count(*) FROM lance_namespace.versions) AS versions
  FROM lance_namespace.entries WHERE kind <> 'r';

-- Restrict (the default) refuses a namespace with tables or namespaces in it
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{c}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{c}', 'Skip', 'Restrict')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{c,sub,deeper}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{c,only_ns}', NULL, 'restrict')$$);
-- an empty namespace drops under either behavior
SELECT * FROM lance_namespace.lance_drop_namespace('{c,only_ns,empty}', NULL, 'Cascade');
SELECT * FROM lance_namespace.lance_drop_namespace('{c,only_ns}');
-- Cascade removes the subtree's namespaces, tables and versions, nothing else
SELECT * FROM lance_namespace.lance_drop_namespace('{c,sub}', 'Fail', 'Cascade');
SELECT name FROM lance_namespace.namespaces ORDER BY name;
SELECT name FROM lance_namespace.tables ORDER BY name;
SELECT name, count(*) FROM lance_namespace.table_versions GROUP BY name ORDER BY name;
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_table('{c,sub,st1}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_list_table_versions('{c,sub,deeper,dt}')$$);
SELECT * FROM lance_namespace.lance_drop_namespace('{c}', behavior => 'CASCADE');
SELECT name FROM lance_namespace.namespaces ORDER BY name;
SELECT name, count(*) FROM lance_namespace.table_versions GROUP BY name ORDER BY name;
SELECT count(*) AS orphan_entries FROM lance_namespace.entries e
 WHERE e.kind <> 'r' AND NOT EXISTS (SELECT 1 FROM lance_namespace.entries p WHERE p.id = e.parent_id);
-- Skip on a missing namespace returns NULL, whatever the behavior; Fail raises
SELECT lance_namespace.lance_drop_namespace('{c}', 'Skip', 'Cascade') IS NULL AS skipped;
SELECT (lance_namespace.lance_drop_namespace('{c,sub}', 'SKIP')) IS NULL AS skipped;
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{c}', 'Fail', 'Cascade')$$);
-- a table's id is no namespace, even with Cascade
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{keep,kt}', NULL, 'Cascade')$$);
SELECT lance_namespace.lance_drop_namespace('{keep,kt}', 'Skip', 'Cascade') IS NULL AS skipped;
SELECT lance_namespace.lance_table_exists('{keep,kt}', 3) AS kt_intact;
-- the root cannot be dropped, even with Cascade
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{}', 'Skip', 'Cascade')$$);
-- dropping a namespace in a transaction that rolls back leaves everything
BEGIN;
SELECT * FROM lance_namespace.lance_drop_namespace('{keep}', NULL, 'Cascade');
SELECT count(*) FROM lance_namespace.entries WHERE kind <> 'r';
ROLLBACK;
SELECT count(*) AS entries, (SELECT count(*) FROM lance_namespace.versions) AS versions
  FROM lance_namespace.entries WHERE kind <> 'r';

-- CreateNamespace Overwrite also replaces the subtree
SELECT * FROM lance_namespace.lance_create_namespace('{keep}', 'Overwrite', '{"fresh": "1"}');
SELECT count(*) AS entries, (SELECT count(*) FROM lance_namespace.versions) AS versions
  FROM lance_namespace.entries WHERE kind <> 'r';

-- clean up
SELECT * FROM lance_namespace.lance_drop_namespace('{keep}');
SELECT count(*) AS entries_left FROM lance_namespace.entries;
