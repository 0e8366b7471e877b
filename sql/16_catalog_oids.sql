--
-- 16_catalog_oids: CreateTableVersion looks up the catalog's relations once
-- per backend (src/catalog_oids.c) and again after DDL changes them: a
-- catalog dropped and created again in this session is found, and so is
-- the first one when that is rolled back.
--
SELECT lance_namespace.lance_create_namespace('{co}') IS NOT NULL AS created;
SELECT location FROM lance_namespace.lance_declare_table('{co,t}');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{co,t}', 1, '/data/lance/co/t.lance/stg-1', 10);

BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION lance_namespace CASCADE;
CREATE EXTENSION lance_namespace;
SELECT lance_namespace.lance_set_root_location('/data/other');
SELECT lance_namespace.lance_create_namespace('{co}') IS NOT NULL AS created;
SELECT location FROM lance_namespace.lance_declare_table('{co,t}');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{co,t}', 7, '/data/other/co/t.lance/stg-7', 10);
SELECT count(*) AS versions FROM lance_namespace.versions;
ROLLBACK;

SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{co,t}', 2, '/data/lance/co/t.lance/stg-2', 10);
SELECT version FROM lance_namespace.table_versions WHERE id = '{co,t}' ORDER BY version;
SELECT lance_namespace.lance_drop_namespace('{co}', NULL, 'Cascade') IS NOT NULL AS dropped;
