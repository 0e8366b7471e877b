--
-- 11_privileges: read, write and admin on namespace subtrees, enforced by
-- GRANTs and row level security; isolation between tenants, with no
-- existence leak through error codes, messages or unique violations.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
\set VERBOSITY terse
-- a run that stopped half-way may have left roles and namespaces behind
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['regress_lance_tenant_a', 'regress_lance_tenant_b',
							 'regress_lance_admin_c', 'regress_lance_writer_all',
							 'regress_lance_grantee', 'regress_lance_orphan',
							 'regress_lance_bypass'] LOOP
		DELETE FROM lance_namespace.privileges WHERE role_name = r;
		IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('DROP OWNED BY %I', r);
			EXECUTE format('DROP ROLE %I', r);
		END IF;
	END LOOP;
END$$;
SELECT n, lance_namespace.lance_drop_namespace(ARRAY[n], 'Skip', 'Cascade') IS NULL AS nothing_left
  FROM unnest(ARRAY['a', 'b', 'c', 'd']) n;
DROP FUNCTION IF EXISTS public.regress_lance_sees();
DROP FUNCTION IF EXISTS public.regress_lance_leak(text, text);
DROP FUNCTION IF EXISTS public.regress_lance_try(text);
DROP FUNCTION IF EXISTS public.lance_has_privilege(text[], text);

--
-- The catalog (made by its owner): four tenants' namespaces a, b, c, d.
--
SELECT * FROM lance_namespace.lance_create_namespace('{a}');
SELECT * FROM lance_namespace.lance_create_namespace('{a,sub}');
SELECT location FROM lance_namespace.lance_declare_table('{a,t1}');
SELECT version FROM lance_namespace.lance_create_table_version('{a,t1}', 1, '/m/a/t1/1');
SELECT * FROM lance_namespace.lance_create_namespace('{b}', properties => '{"owner": "tenant b"}');
SELECT * FROM lance_namespace.lance_create_namespace('{b,inner}');
SELECT location FROM lance_namespace.lance_declare_table('{b,t}');
SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 1, '/m/b/t/1');
SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 2, '/m/b/t/2');
SELECT lance_namespace.lance_create_table_branch('{b,t}', 'dev', from_version => 1) IS NOT NULL AS branched;
SELECT lance_namespace.lance_create_table_tag('{b,t}', 'v1', 1);
SELECT * FROM lance_namespace.lance_create_namespace('{c}');
SELECT location FROM lance_namespace.lance_declare_table('{c,t}');
SELECT * FROM lance_namespace.lance_create_namespace('{d}');
SELECT location FROM lance_namespace.lance_declare_table('{d,t}');

CREATE ROLE regress_lance_tenant_a;
CREATE ROLE regress_lance_tenant_b;
CREATE ROLE regress_lance_admin_c;
CREATE ROLE regress_lance_writer_all;
CREATE ROLE regress_lance_grantee;
SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a}', 'write');
SELECT lance_namespace.lance_grant('regress_lance_tenant_b', '{b}', 'read');
SELECT lance_namespace.lance_grant('regress_lance_admin_c', '{c}', 'admin');
SELECT lance_namespace.lance_grant('regress_lance_writer_all', '{}', 'write');
-- the grantee gets table access through a grant on d (read)
SELECT lance_namespace.lance_grant('regress_lance_grantee', '{d}', 'read');
-- granting twice is harmless; the privilege is case-insensitive
SELECT lance_namespace.lance_grant('regress_lance_tenant_b', '{b}', 'READ');
SELECT role_name, namespace, privilege, scope, level, granted_by FROM lance_namespace.privileges
 WHERE role_name::text LIKE 'regress_lance_%' ORDER BY role_name, scope;
-- bad grants
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_no_such_role', '{a}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a}', 'owner')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a/b}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a,NULL}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_has_privilege('{a}', 'all')$$);

--
-- What a role sees: every list, describe and exists function, the views,
-- and the catalog tables themselves.
--
CREATE FUNCTION public.regress_lance_sees() RETURNS TABLE (what text, result text)
LANGUAGE sql AS $f$
SELECT u.what, public.lance_try(u.q) FROM (VALUES
	('list_namespaces {}', $$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}')$$),
	('list_namespaces {a}', $$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{a}')$$),
	('list_namespaces {b}', $$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{b}')$$),
	('list_namespaces {c}', $$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{c}')$$),
	('list_tables {a}', $$SELECT tables FROM lance_namespace.lance_list_tables('{a}')$$),
	('list_tables {b}', $$SELECT tables FROM lance_namespace.lance_list_tables('{b}')$$),
	('list_tables {d}', $$SELECT tables FROM lance_namespace.lance_list_tables('{d}')$$),
	('list_all_tables', $$SELECT tables FROM lance_namespace.lance_list_all_tables()$$),
	('namespace_exists', $$SELECT lance_namespace.lance_namespace_exists('{a}') a, lance_namespace.lance_namespace_exists('{b}') b,
	         lance_namespace.lance_namespace_exists('{b,inner}') b_inner, lance_namespace.lance_namespace_exists('{c}') c,
	         lance_namespace.lance_namespace_exists('{d}') d$$),
	('table_exists', $$SELECT lance_namespace.lance_table_exists('{a,t1}') a, lance_namespace.lance_table_exists('{b,t}') b,
	         lance_namespace.lance_table_exists('{b,t}', 2) b_v2, lance_namespace.lance_table_exists('{c,t}') c,
	         lance_namespace.lance_table_exists('{d,t}') d$$),
	('describe_namespace {b}', $$SELECT * FROM lance_namespace.lance_describe_namespace('{b}')$$),
	('describe_table b$t', $$SELECT "table", namespace, version FROM lance_namespace.lance_describe_table('{b,t}')$$),
	('describe_table_version b$t', $$SELECT version, manifest_path FROM lance_namespace.lance_describe_table_version('{b,t}')$$),
	('list_table_versions b$t', $$SELECT ARRAY(SELECT v.version FROM pg_catalog.unnest(versions) v) AS versions FROM lance_namespace.lance_list_table_versions('{b,t}')$$),
	('list_table_branches b$t', $$SELECT ARRAY(SELECT pg_catalog.jsonb_object_keys(branches)) AS branches FROM lance_namespace.lance_list_table_branches('{b,t}')$$),
	('list_table_tags b$t', $$SELECT ARRAY(SELECT pg_catalog.jsonb_object_keys(tags)) AS tags FROM lance_namespace.lance_list_table_tags('{b,t}')$$),
	('get_table_tag_version b$t', $$SELECT * FROM lance_namespace.lance_get_table_tag_version('{b,t}', 'v1')$$),
	('rest_namespace_exists {b}', $$SELECT lance_namespace.rest_namespace_exists('{"id": ["b"]}')$$),
	('view namespaces', $$SELECT pg_catalog.array_agg(name ORDER BY name) FROM lance_namespace.namespaces$$),
	('view tables', $$SELECT pg_catalog.array_agg(name ORDER BY name) FROM lance_namespace.tables$$),
	('view table_versions', $$SELECT pg_catalog.array_agg(name || '@' || branch || '#' || version ORDER BY name, branch, version) FROM lance_namespace.table_versions$$),
	('view table_branches', $$SELECT pg_catalog.array_agg(table_name || '@' || branch ORDER BY table_name, branch) FROM lance_namespace.table_branches$$),
	('view table_tags', $$SELECT pg_catalog.array_agg(table_name || ':' || tag ORDER BY table_name, tag) FROM lance_namespace.table_tags$$),
	('view commit_history', $$SELECT pg_catalog.array_agg(DISTINCT id[1] ORDER BY id[1]) FROM lance_namespace.commit_history WHERE id[1] IN ('a', 'b', 'c', 'd')$$),
	('table entries', $$SELECT pg_catalog.array_agg(lance_namespace.lance_format_id(path) ORDER BY path) FROM lance_namespace.entries$$),
	('table versions', $$SELECT pg_catalog.count(*) FROM lance_namespace.versions$$),
	('table privileges', $$SELECT pg_catalog.array_agg(role_name || ' ' || privilege || ' ' || scope ORDER BY role_name, scope) FROM lance_namespace.privileges$$)
) AS u(what, q)
$f$;

-- the owner sees everything (it bypasses row level security)
SELECT * FROM public.regress_lance_sees();

SET ROLE regress_lance_tenant_a;
SELECT * FROM public.regress_lance_sees();
RESET ROLE;

SET ROLE regress_lance_tenant_b;
SELECT * FROM public.regress_lance_sees();
RESET ROLE;

SET ROLE regress_lance_admin_c;
SELECT * FROM public.regress_lance_sees();
RESET ROLE;

SET ROLE regress_lance_writer_all;
SELECT * FROM public.regress_lance_sees();
RESET ROLE;

--
-- No existence leak: for tenant_a (nothing granted on b), an existing
-- object of b and a missing one give the same error.  "same" compares the
-- two results with the quoted names masked.
--
-- regress_lance_try: lance_try for queries, and for INSERT, UPDATE and
-- DELETE "ok: N rows" or the error
CREATE FUNCTION public.regress_lance_try(sql text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
	n bigint;
BEGIN
	IF sql ~* '^\s*SELECT' THEN
		RETURN public.lance_try(sql);
	END IF;
	EXECUTE sql;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok: ' || n || ' rows';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' ||
		COALESCE(lance_namespace.lance_error_name(lance_namespace.lance_error_code(SQLSTATE)), '?') ||
		': ' || SQLERRM;
END;
$f$;
CREATE FUNCTION public.regress_lance_leak(existing text, missing text)
RETURNS TABLE (existing_result text, missing_result text, same boolean)
LANGUAGE sql AS $f$
SELECT r1, r2, pg_catalog.regexp_replace(r1, '"[^"]*"', '"?"', 'g') =
			   pg_catalog.regexp_replace(r2, '"[^"]*"', '"?"', 'g')
  FROM (SELECT public.regress_lance_try(existing) AS r1, public.regress_lance_try(missing) AS r2) s
$f$;
-- the ids of b's entries, to try them as parent_id below
SELECT id AS b_id FROM lance_namespace.entries WHERE path = '{b}' \gset
SELECT id AS bt_id FROM lance_namespace.entries WHERE path = '{b,t}' \gset
SELECT max(id) + 1000 AS free_id FROM lance_namespace.entries \gset

SET ROLE regress_lance_tenant_a;
-- describe and exists
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_describe_namespace('{b}')$$,
                                 $$SELECT * FROM lance_namespace.lance_describe_namespace('{nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_describe_namespace('{b,inner}')$$,
                                 $$SELECT * FROM lance_namespace.lance_describe_namespace('{b,nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT "table" FROM lance_namespace.lance_describe_table('{b,t}')$$,
                                 $$SELECT "table" FROM lance_namespace.lance_describe_table('{b,nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT "table" FROM lance_namespace.lance_describe_table('{b,t}')$$,
                                 $$SELECT "table" FROM lance_namespace.lance_describe_table('{nope,t}')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_namespace_exists('{b}')$$,
                                 $$SELECT lance_namespace.lance_namespace_exists('{nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_table_exists('{b,t}')$$,
                                 $$SELECT lance_namespace.lance_table_exists('{b,nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.rest_table_exists('{"id": ["b", "t"]}')$$,
                                 $$SELECT lance_namespace.rest_table_exists('{"id": ["b", "nope"]}')$$);
SELECT * FROM regress_lance_leak($$SELECT version FROM lance_namespace.lance_describe_table_version('{b,t}', 1)$$,
                                 $$SELECT version FROM lance_namespace.lance_describe_table_version('{b,nope}', 1)$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_get_table_tag_version('{b,t}', 'v1')$$,
                                 $$SELECT * FROM lance_namespace.lance_get_table_tag_version('{b,nope}', 'v1')$$);
-- lists
SELECT * FROM regress_lance_leak($$SELECT tables FROM lance_namespace.lance_list_tables('{b}')$$,
                                 $$SELECT tables FROM lance_namespace.lance_list_tables('{nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{b}')$$,
                                 $$SELECT namespaces FROM lance_namespace.lance_list_namespaces('{nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT versions FROM lance_namespace.lance_list_table_versions('{b,t}')$$,
                                 $$SELECT versions FROM lance_namespace.lance_list_table_versions('{b,nope}')$$);
-- creating a namespace whose name is taken in b, or free: the same
-- row level security violation (PermissionDenied), not a name conflict
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_create_namespace('{b}')$$,
                                 $$SELECT * FROM lance_namespace.lance_create_namespace('{z}')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_create_namespace('{b}', 'ExistOk')$$,
                                 $$SELECT * FROM lance_namespace.lance_create_namespace('{z}', 'ExistOk')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_create_namespace('{b,inner}')$$,
                                 $$SELECT * FROM lance_namespace.lance_create_namespace('{b,nope}')$$);
-- writes into b
SELECT * FROM regress_lance_leak($$SELECT location FROM lance_namespace.lance_declare_table('{b,t}')$$,
                                 $$SELECT location FROM lance_namespace.lance_declare_table('{b,nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT location FROM lance_namespace.lance_declare_table('{b,t2}')$$,
                                 $$SELECT location FROM lance_namespace.lance_declare_table('{nope,t2}')$$);
SELECT * FROM regress_lance_leak($$SELECT location FROM lance_namespace.lance_register_table('{b,t}', '/x', 'Overwrite')$$,
                                 $$SELECT location FROM lance_namespace.lance_register_table('{b,nope}', '/x', 'Overwrite')$$);
SELECT * FROM regress_lance_leak($$SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 3, '/m/3')$$,
                                 $$SELECT version FROM lance_namespace.lance_create_table_version('{b,nope}', 3, '/m/3')$$);
SELECT * FROM regress_lance_leak($$SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 1, '/m/b/t/1')$$,
                                 $$SELECT version FROM lance_namespace.lance_create_table_version('{b,nope}', 1, '/m/b/t/1')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{b,t}', '[{"start_version": 1, "end_version": 2}]')$$,
                                 $$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{b,nope}', '[{"start_version": 1, "end_version": 2}]')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_deregister_table('{b,t}')$$,
                                 $$SELECT * FROM lance_namespace.lance_deregister_table('{b,nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_drop_namespace('{b}', NULL, 'Cascade')$$,
                                 $$SELECT * FROM lance_namespace.lance_drop_namespace('{nope}', NULL, 'Cascade')$$);
SELECT * FROM regress_lance_leak($$SELECT * FROM lance_namespace.lance_drop_namespace('{b,inner}', 'Skip')$$,
                                 $$SELECT * FROM lance_namespace.lance_drop_namespace('{b,nope}', 'Skip')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_create_table_tag('{b,t}', 'v2', 2)$$,
                                 $$SELECT lance_namespace.lance_create_table_tag('{b,nope}', 'v2', 2)$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_delete_table_tag('{b,t}', 'v1')$$,
                                 $$SELECT lance_namespace.lance_delete_table_tag('{b,nope}', 'v1')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_create_table_branch('{b,t}', 'dev')$$,
                                 $$SELECT lance_namespace.lance_create_table_branch('{b,nope}', 'dev')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_delete_table_branch('{b,t}', 'dev')$$,
                                 $$SELECT lance_namespace.lance_delete_table_branch('{b,nope}', 'dev')$$);
-- moving a table of a into b: b is "not found" whether or not it exists
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_rename_table('{a,t1}', 't', '{b}')$$,
                                 $$SELECT lance_namespace.lance_rename_table('{a,t1}', 't', '{nope}')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.lance_rename_table('{a,t1}', 'x', '{b,inner}')$$,
                                 $$SELECT lance_namespace.lance_rename_table('{a,t1}', 'x', '{b,nope}')$$);
-- a batch that touches b fails as a whole, the same way
SELECT * FROM regress_lance_leak(
	$$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
		{"id": ["a", "t1"], "version": 2, "manifest_path": "/m/a/t1/2"},
		{"id": ["b", "t"], "version": 3, "manifest_path": "/m/b/t/3"}]')$$,
	$$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[
		{"id": ["a", "t1"], "version": 2, "manifest_path": "/m/a/t1/2"},
		{"id": ["b", "nope"], "version": 3, "manifest_path": "/m/b/t/3"}]')$$);
SELECT * FROM regress_lance_leak(
	$$SELECT lance_namespace.lance_batch_commit_tables('[
		{"declare_table": {"id": ["a", "t9"]}},
		{"create_table_version": {"id": ["b", "t"], "version": 3, "manifest_path": "/m/b/t/3"}}]')$$,
	$$SELECT lance_namespace.lance_batch_commit_tables('[
		{"declare_table": {"id": ["a", "t9"]}},
		{"create_table_version": {"id": ["b", "nope"], "version": 3, "manifest_path": "/m/b/t/3"}}]')$$);
-- through the REST functions
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.rest_describe_table('{"id": ["b", "t"]}')$$,
                                 $$SELECT lance_namespace.rest_describe_table('{"id": ["b", "nope"]}')$$);
SELECT * FROM regress_lance_leak($$SELECT lance_namespace.rest_create_namespace('{"id": ["b"]}')$$,
                                 $$SELECT lance_namespace.rest_create_namespace('{"id": ["z"]}')$$);
-- writing the catalog tables directly: a row of a's subtree whose
-- parent_id is b's entry is refused before any unique or foreign key
-- check, whether the name is taken under b or not, and whether the parent
-- id exists or not
SELECT * FROM regress_lance_leak(
	format($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (%s, 'n', 'inner', '{a,inner}')$$, :b_id),
	format($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (%s, 'n', 'nope', '{a,nope}')$$, :b_id));
SELECT * FROM regress_lance_leak(
	format($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (%s, 'n', 'x', '{a,x}')$$, :b_id),
	format($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (%s, 'n', 'x', '{a,x}')$$, :free_id));
SELECT * FROM regress_lance_leak(
	format($$UPDATE lance_namespace.entries SET parent_id = %s WHERE path = '{a,sub}'$$, :b_id),
	format($$UPDATE lance_namespace.entries SET parent_id = %s WHERE path = '{a,sub}'$$, :free_id));
SELECT * FROM regress_lance_leak(
	$$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (0, 'n', 'b', '{b}')$$,
	$$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (0, 'n', 'z', '{z}')$$);
SELECT * FROM regress_lance_leak(
	$$UPDATE lance_namespace.entries SET properties = '{"x": "y"}' WHERE path = '{b}'$$,
	$$UPDATE lance_namespace.entries SET properties = '{"x": "y"}' WHERE path = '{nope}'$$);
SELECT * FROM regress_lance_leak(
	$$DELETE FROM lance_namespace.entries WHERE path = '{b}'$$,
	$$DELETE FROM lance_namespace.entries WHERE path = '{nope}'$$);
SELECT * FROM regress_lance_leak(
	format($$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
	         VALUES (%s, 1, '/x', '/x', 'V2', 0)$$, :bt_id),
	format($$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
	         VALUES (%s, 1, '/x', '/x', 'V2', 0)$$, :free_id));
-- with the right parent, the same direct insert is fine
SELECT id AS a_id FROM lance_namespace.entries WHERE path = '{a}' \gset
SELECT regress_lance_try(format($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path) VALUES (%s, 'n', 'direct', '{a,direct}')$$, :a_id));
SELECT regress_lance_try($$DELETE FROM lance_namespace.entries WHERE path = '{a,direct}'$$);
-- tenant_a may not grant itself anything, nor change the settings
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{b}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_tenant_a', '{a}', 'admin')$$);
SELECT regress_lance_try($$INSERT INTO lance_namespace.privileges (role_name, namespace, privilege) VALUES ('regress_lance_tenant_a', '{}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('/elsewhere')$$);
-- nothing of b changed, and a's own table is where it was
SELECT lance_try($$SELECT tables FROM lance_namespace.lance_list_tables('{a}')$$);
RESET ROLE;
SELECT path, parent_id = :b_id AS under_b FROM lance_namespace.entries
 WHERE path[1] IN ('a', 'b') ORDER BY path;
SELECT name, version FROM lance_namespace.table_versions WHERE id[1] IN ('a', 'b') ORDER BY name, version;
SELECT table_name, tag, version FROM lance_namespace.table_tags WHERE id[1] = 'b';
SELECT table_name, branch FROM lance_namespace.table_branches WHERE id[1] = 'b';
SELECT properties FROM lance_namespace.entries WHERE path = '{b}';

--
-- Read-only: tenant_b describes and lists b, but every write in b is
-- PermissionDenied ("permission denied to change").
--
SET ROLE regress_lance_tenant_b;
SELECT * FROM lance_namespace.lance_describe_namespace('{b}');
SELECT "table", version FROM lance_namespace.lance_describe_table('{b,t}', tag => 'v1');
SELECT version FROM lance_namespace.lance_describe_table_version('{b,t}', branch => 'dev');
SELECT lance_try($$SELECT location FROM lance_namespace.lance_declare_table('{b,t2}')$$);
SELECT lance_try($$SELECT location FROM lance_namespace.lance_declare_table('{b,t}')$$);
SELECT lance_try($$SELECT location FROM lance_namespace.lance_register_table('{b,t2}', '/x')$$);
SELECT lance_try($$SELECT location FROM lance_namespace.lance_register_table('{b,t}', '/x', 'Overwrite')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{b,x}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{b,inner}', 'ExistOk')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{b,inner}', 'Overwrite')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_create_namespace('{b}', 'ExistOk')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{b,inner}')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{b}', NULL, 'Cascade')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 3, '/m/3')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 2, '/m/b/t/2')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{b,t}', 3, '/m/3', branch => 'dev')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["b", "t"], "version": 3, "manifest_path": "/m/3"}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{b,t}', '[{"start_version": 1, "end_version": 2}]')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_deregister_table('{b,t}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{b,t}', 't3')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{b,t}', 'v2', 2)$$);
SELECT lance_try($$SELECT lance_namespace.lance_update_table_tag('{b,t}', 'v1', 2)$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_tag('{b,t}', 'v1')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_table_branch('{b,t}', 'dev2')$$);
SELECT lance_try($$SELECT lance_namespace.lance_delete_table_branch('{b,t}', 'dev')$$);
SELECT lance_try($$SELECT lance_namespace.lance_batch_commit_tables('[{"declare_table": {"id": ["b", "t5"]}}]')$$);
SELECT lance_try($$SELECT lance_namespace.rest_create_table_version('{"id": ["b", "t"], "version": 3, "manifest_path": "/m/3"}')$$);
-- directly in the tables: rows it can read but not write are skipped
-- (row level security filters them), and inserts are refused
SELECT regress_lance_try($$UPDATE lance_namespace.entries SET properties = '{}' WHERE path = '{b}'$$);
SELECT regress_lance_try($$DELETE FROM lance_namespace.versions$$);
SELECT regress_lance_try($$DELETE FROM lance_namespace.tags$$);
SELECT regress_lance_try($$INSERT INTO lance_namespace.history (operation, id) VALUES ('Forged', '{b}')$$);
SELECT regress_lance_try($$UPDATE lance_namespace.history SET role = 'x'$$);
RESET ROLE;
SELECT name, version FROM lance_namespace.table_versions WHERE id[1] = 'b' ORDER BY branch, version;
SELECT table_name, tag, version FROM lance_namespace.table_tags WHERE id[1] = 'b';
SELECT name FROM lance_namespace.tables WHERE id[1] = 'b';

--
-- Write: tenant_a's full lifecycle inside a, cascade drop included.
--
SELECT clock_timestamp() AS lifecycle_t0 \gset
SET ROLE regress_lance_tenant_a;
SELECT * FROM lance_namespace.lance_create_namespace('{a,x}', properties => '{"k": "v"}');
SELECT * FROM lance_namespace.lance_create_namespace('{a,x}', 'ExistOk');
SELECT * FROM lance_namespace.lance_create_namespace('{a,x,y}');
SELECT location FROM lance_namespace.lance_declare_table('{a,x,y,t}');
-- a tenant places a table only below its namespace's location (0.6.0):
-- elsewhere, at the namespace's own location, or in another tenant's
-- namespace, it is refused (42501, before anything is written)
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{a,x,r}', '/ext/r')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{a,x,r}', '/data/lance/a/x')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_register_table('{a,x,r}', '/data/lance/b/t.lance')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_declare_table('{a,x,r}', 's3://other/a/x/r')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_check_table_location('{a,x,r}', '/data/lance/b/t.lance')$$);
SELECT lance_namespace.lance_check_table_location('{a,x,r}', '/data/lance/a/x/r');
SELECT location FROM lance_namespace.lance_register_table('{a,x,r}', '/data/lance/a/x/r');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{a,x,y,t}', 1, '/m/1');
SELECT version FROM lance_namespace.lance_batch_create_table_versions('[{"id": ["a", "x", "y", "t"], "version": 2, "manifest_path": "/m/2"}]');
SELECT lance_namespace.lance_create_table_branch('{a,x,y,t}', 'dev', from_version => 1) IS NOT NULL AS branched;
SELECT lance_namespace.lance_create_table_tag('{a,x,y,t}', 'first', 1);
SELECT lance_namespace.lance_update_table_tag('{a,x,y,t}', 'first', 2);
SELECT * FROM lance_namespace.lance_get_table_tag_version('{a,x,y,t}', 'first');
SELECT lance_namespace.lance_rename_table('{a,x,r}', 'r2', '{a}');
SELECT lance_namespace.lance_rename_table('{a,t1}', 't1', '{a,x}');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{a,x,y,t}', '[{"start_version": 1, "end_version": 2}]');
SELECT id, location FROM lance_namespace.lance_deregister_table('{a,r2}');
SELECT tables FROM lance_namespace.lance_list_all_tables();
SELECT name, branch, version FROM lance_namespace.table_versions ORDER BY name, branch, version;
SELECT table_name, tag, version FROM lance_namespace.table_tags;
-- (the history is append-only: earlier runs left theirs)
SELECT operation, name FROM lance_namespace.commit_history
 WHERE role = 'regress_lance_tenant_a' AND at >= :'lifecycle_t0' ORDER BY at;
SELECT lance_try($$SELECT * FROM lance_namespace.lance_drop_namespace('{a,x}')$$);
SELECT lance_namespace.lance_rename_table('{a,x,t1}', 't1', '{a}');
SELECT * FROM lance_namespace.lance_drop_namespace('{a,x}', NULL, 'Cascade');
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{a,t1}', 't1', '{a,x}')$$);
SELECT lance_namespace.lance_namespace_exists('{a,x,y}') AS y_left,
       lance_namespace.lance_table_exists('{a,x,y,t}') AS t_left;
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{a}');
SELECT tables FROM lance_namespace.lance_list_tables('{a}');
-- the whole of a, then a again
SELECT * FROM lance_namespace.lance_drop_namespace('{a}', NULL, 'Cascade');
SELECT * FROM lance_namespace.lance_create_namespace('{a}');
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}');
RESET ROLE;
SELECT path FROM lance_namespace.entries WHERE path[1] = 'a' ORDER BY path;

--
-- Admin: admin_c grants within c to a role that already has table access,
-- but not outside c.
--
SELECT * FROM lance_namespace.lance_create_namespace('{c,sub}');
SELECT location FROM lance_namespace.lance_declare_table('{c,sub,t}');
SET ROLE regress_lance_grantee;
SELECT lance_try($$SELECT "table" FROM lance_namespace.lance_describe_table('{c,sub,t}')$$);
RESET ROLE;
SET ROLE regress_lance_admin_c;
SELECT lance_namespace.lance_grant('regress_lance_grantee', '{c,sub}', 'write');
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_grantee', '{a}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_grantee', '{}', 'read')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_admin_c', '{}', 'admin')$$);
-- it sees its own grants only
SELECT role_name, scope, privilege FROM lance_namespace.privileges ORDER BY role_name, scope;
-- admin implies write
SELECT location FROM lance_namespace.lance_declare_table('{c,t2}');
RESET ROLE;
SET ROLE regress_lance_grantee;
SELECT "table" FROM lance_namespace.lance_describe_table('{c,sub,t}');
SELECT version FROM lance_namespace.lance_create_table_version('{c,sub,t}', 1, '/m/c/1');
SELECT lance_try($$SELECT "table" FROM lance_namespace.lance_describe_table('{c,t}')$$);
SELECT lance_try($$SELECT location FROM lance_namespace.lance_declare_table('{c,t3}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_grant('regress_lance_grantee', '{c,sub}', 'admin')$$);
RESET ROLE;
-- the admin cannot revoke what it granted (only the grantee or the owner can)
SET ROLE regress_lance_admin_c;
SELECT lance_namespace.lance_revoke('regress_lance_grantee', '{c,sub}', 'write') AS admin_revoked;
RESET ROLE;

--
-- Revoke takes effect at once, in the same session.
--
SET ROLE regress_lance_tenant_b;
SELECT lance_namespace.lance_namespace_exists('{b}');
RESET ROLE;
SELECT lance_namespace.lance_revoke('regress_lance_tenant_b', '{b}', 'read');
SELECT lance_namespace.lance_revoke('regress_lance_tenant_b', '{b}', 'read') AS again;
SET ROLE regress_lance_tenant_b;
SELECT lance_namespace.lance_namespace_exists('{b}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_namespace('{b}')$$);
SELECT lance_try($$SELECT "table" FROM lance_namespace.lance_describe_table('{b,t}')$$);
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}');
SELECT count(*) FROM lance_namespace.table_versions;
RESET ROLE;
-- a role may give up its own grant
SET ROLE regress_lance_grantee;
SELECT lance_namespace.lance_revoke('regress_lance_grantee', '{c,sub}', 'write') AS self_revoked;
SELECT lance_try($$SELECT "table" FROM lance_namespace.lance_describe_table('{c,sub,t}')$$);
RESET ROLE;

--
-- search_path: tenant_a with public first, and a planted
-- public.lance_has_privilege that allows everything: nothing changes.
--
CREATE FUNCTION public.lance_has_privilege(text[], text) RETURNS boolean
LANGUAGE sql AS 'SELECT true';
SET ROLE regress_lance_tenant_a;
SELECT string_agg(what || ' => ' || result, E'\n' ORDER BY what) AS a_sees FROM public.regress_lance_sees() \gset
SET search_path = public;
SELECT public.lance_has_privilege('{b}', 'admin') AS planted;
SELECT string_agg(what || ' => ' || result, E'\n' ORDER BY what) = :'a_sees' AS same_with_public_first
  FROM public.regress_lance_sees();
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_namespace('{b}')$$);
SELECT lance_try($$SELECT location FROM lance_namespace.lance_declare_table('{b,t2}')$$);
SELECT count(*) FROM lance_namespace.tables;
RESET search_path;
RESET ROLE;
DROP FUNCTION public.lance_has_privilege(text[], text);

--
-- The grants of a dropped role break no one else's checks.
--
CREATE ROLE regress_lance_orphan;
SELECT lance_namespace.lance_grant('regress_lance_orphan', '{}', 'read');
DROP OWNED BY regress_lance_orphan;
DROP ROLE regress_lance_orphan;
SET ROLE regress_lance_tenant_a;
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_namespace('{b}')$$);
SELECT count(*) FROM lance_namespace.privileges;
RESET ROLE;
SELECT lance_namespace.lance_revoke('regress_lance_orphan', '{}', 'read') AS orphan_revoked;

--
-- A role that row level security does not apply to (BYPASSRLS) gets
-- CreateTableVersion's lock-free lookup, which is a direct index probe
-- rather than an SPI statement.  It needs the same privileges as the SPI
-- lookup did and gets the same errors: without SELECT on the catalog the
-- lookup is refused; with it, a missing table is TableNotFound and the
-- insert needs its own privileges.
--
CREATE ROLE regress_lance_bypass BYPASSRLS;
GRANT USAGE ON SCHEMA lance_namespace TO regress_lance_bypass;
SET ROLE regress_lance_bypass;
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{d,t}', 1, '/m/d/t/1')$$);
RESET ROLE;
GRANT SELECT ON lance_namespace.entries TO regress_lance_bypass;
SET ROLE regress_lance_bypass;
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{d,t}', 1, '/m/d/t/1')$$);
SELECT lance_try($$SELECT version FROM lance_namespace.lance_create_table_version('{d,nope}', 1, '/m/d/nope/1')$$);
RESET ROLE;
GRANT SELECT, INSERT ON lance_namespace.versions, lance_namespace.history TO regress_lance_bypass;
SET ROLE regress_lance_bypass;
SELECT version FROM lance_namespace.lance_create_table_version('{d,t}', 1, '/m/d/t/1');
RESET ROLE;
SELECT version, manifest_path FROM lance_namespace.lance_describe_table_version('{d,t}', 1);
REVOKE ALL ON lance_namespace.entries, lance_namespace.versions, lance_namespace.history
	FROM regress_lance_bypass;
REVOKE USAGE ON SCHEMA lance_namespace FROM regress_lance_bypass;
DROP ROLE regress_lance_bypass;

--
-- A REST binding needs EXECUTE on the operation it calls, as a SQL call of
-- the operation does: revoking it closes the route too.  Both kinds of
-- binding: the table-driven one (rest_describe_namespace) and the version
-- routes' own (rest_describe_table_version).
--
CREATE ROLE regress_lance_noexec;
SELECT lance_namespace.lance_grant('regress_lance_noexec', '{d}', 'read');
REVOKE EXECUTE ON FUNCTION lance_namespace.lance_describe_namespace(text[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION lance_namespace.lance_describe_table_version(text[], bigint, text) FROM PUBLIC;
SET ROLE regress_lance_noexec;
SELECT lance_try($$SELECT lance_namespace.rest_describe_namespace('{"id": ["d"]}')$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_table_version('{"id": ["d", "t"], "version": 1}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_describe_table_version('{d,t}', 1)$$);
-- the routes of the other operations are open
SELECT lance_namespace.rest_namespace_exists('{"id": ["d"]}') AS exists;
SELECT lance_namespace.rest_list_table_versions('{"id": ["d", "t"]}') -> 'versions' -> 0 -> 'version' AS listed;
RESET ROLE;
GRANT EXECUTE ON FUNCTION lance_namespace.lance_describe_table_version(text[], bigint, text) TO regress_lance_noexec;
SET ROLE regress_lance_noexec;
SELECT lance_namespace.rest_describe_table_version('{"id": ["d", "t"], "version": 1}') -> 'version' -> 'version' AS described;
RESET ROLE;
GRANT EXECUTE ON FUNCTION lance_namespace.lance_describe_namespace(text[]),
	lance_namespace.lance_describe_table_version(text[], bigint, text) TO PUBLIC;
REVOKE EXECUTE ON FUNCTION lance_namespace.lance_describe_table_version(text[], bigint, text)
	FROM regress_lance_noexec;
SELECT lance_namespace.lance_revoke('regress_lance_noexec', '{d}', 'read');
DROP OWNED BY regress_lance_noexec;
DROP ROLE regress_lance_noexec;

--
-- Clean up: revoke every grant, then drop the roles.
--
SELECT lance_namespace.lance_revoke('regress_lance_tenant_a', '{a}', 'write');
SELECT lance_namespace.lance_revoke('regress_lance_admin_c', '{c}', 'admin');
SELECT lance_namespace.lance_revoke('regress_lance_writer_all', '{}', 'write');
SELECT lance_namespace.lance_revoke('regress_lance_grantee', '{d}', 'read');
SELECT count(*) AS grants_left FROM lance_namespace.privileges WHERE role_name::text LIKE 'regress_lance_%';
DROP OWNED BY regress_lance_tenant_a, regress_lance_tenant_b, regress_lance_admin_c,
	regress_lance_writer_all, regress_lance_grantee;
DROP ROLE regress_lance_tenant_a, regress_lance_tenant_b, regress_lance_admin_c,
	regress_lance_writer_all, regress_lance_grantee;
DROP FUNCTION public.regress_lance_sees();
DROP FUNCTION public.regress_lance_leak(text, text);
DROP FUNCTION public.regress_lance_try(text);
SELECT n, lance_namespace.lance_drop_namespace(ARRAY[n], NULL, 'Cascade') IS NOT NULL AS dropped
  FROM unnest(ARRAY['a', 'b', 'c', 'd']) n;
SELECT count(*) AS entries_left FROM lance_namespace.entries;
