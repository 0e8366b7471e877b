--
-- 13_audit: committed versions are immutable, the history is written by the
-- database (never by callers) with the true role and an unforgeable
-- interface, and every direct write a tenant may try on every catalog
-- table is refused or, where allowed, audited (issue 18).
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
\set VERBOSITY terse
-- a run that stopped half-way may have left roles and namespaces behind
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['regress_au_tenant', 'regress_au_authn', 'regress_au_other'] LOOP
		DELETE FROM lance_namespace.privileges WHERE role_name = r;
		IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('DROP OWNED BY %I', r);
			EXECUTE format('DROP ROLE %I', r);
		END IF;
	END LOOP;
END$$;
SELECT n, lance_namespace.lance_drop_namespace(ARRAY[n], 'Skip', 'Cascade') IS NULL AS nothing_left
  FROM unnest(ARRAY['au', 'au_ro']) n;
DROP FUNCTION IF EXISTS public.regress_au_dml(text);
DROP FUNCTION IF EXISTS public.regress_au_sweep();

-- regress_au_dml: run a write; "ok: N rows" or "SQLSTATE: message"
CREATE FUNCTION public.regress_au_dml(sql text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
	n bigint;
BEGIN
	EXECUTE sql;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok: ' || n || ' rows';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$f$;

--
-- The catalog, made by its owner: namespace au with table t (versions 1
-- and 2, branch dev, tag v1), and au_ro, which the tenant may only read.
--
SELECT * FROM lance_namespace.lance_create_namespace('{au}');
SELECT location FROM lance_namespace.lance_declare_table('{au,t}', '/loc/au/t');
SELECT version FROM lance_namespace.lance_create_table_version('{au,t}', 1, '/m/au/t/1');
SELECT version FROM lance_namespace.lance_create_table_version('{au,t}', 2, '/m/au/t/2');
SELECT lance_namespace.lance_create_table_branch('{au,t}', 'dev', from_version => 1) IS NOT NULL AS branched;
SELECT lance_namespace.lance_create_table_tag('{au,t}', 'v1', 1);
SELECT * FROM lance_namespace.lance_create_namespace('{au_ro}');
SELECT location FROM lance_namespace.lance_declare_table('{au_ro,t}', '/loc/au_ro/t');
SELECT version FROM lance_namespace.lance_create_table_version('{au_ro,t}', 1, '/m/au_ro/t/1');
SELECT id AS au_t_id FROM lance_namespace.entries WHERE path = '{au,t}' \gset

CREATE ROLE regress_au_tenant;
CREATE ROLE regress_au_other;
-- the gateway's authenticator: EXECUTE on lance_authenticate, member of the
-- roles it switches to, NOINHERIT (as PostgREST's)
CREATE ROLE regress_au_authn NOINHERIT;
GRANT USAGE ON SCHEMA lance_namespace TO regress_au_authn;
GRANT EXECUTE ON FUNCTION lance_namespace.lance_authenticate(text, text) TO regress_au_authn;
GRANT regress_au_tenant TO regress_au_authn;
SELECT lance_namespace.lance_grant('regress_au_tenant', '{au}', 'write');
SELECT lance_namespace.lance_grant('regress_au_tenant', '{au_ro}', 'read');
SELECT lance_namespace.lance_grant('regress_au_other', '{au_ro}', 'read');

-- least privilege: what lance_grant gave the tenant on each catalog table
SELECT c.relname,
       has_table_privilege('regress_au_tenant', c.oid, 'SELECT') AS sel,
       has_table_privilege('regress_au_tenant', c.oid, 'INSERT') AS ins,
       has_table_privilege('regress_au_tenant', c.oid, 'UPDATE') AS upd,
       has_table_privilege('regress_au_tenant', c.oid, 'DELETE') AS del,
       has_table_privilege('regress_au_tenant', c.oid, 'TRUNCATE') AS trunc
  FROM pg_class c
 WHERE c.relnamespace = 'lance_namespace'::regnamespace AND c.relkind = 'r'
 ORDER BY c.relname;

--
-- The sweep: every direct write on every catalog table, each tried in a
-- subtransaction that is then rolled back, with its outcome: the error, or
-- the rows it changed and the history rows the database wrote for it (who,
-- what).  Row level security hides rows outside the role's grants (0 rows).
--
CREATE FUNCTION public.regress_au_sweep() RETURNS TABLE (attempt text, result text)
LANGUAGE plpgsql AS $f$
DECLARE
	a record;
	n bigint;
	audit text;
BEGIN
	FOR a IN SELECT * FROM (VALUES
		-- versions
		(1, 'versions: UPDATE manifest_path', $$UPDATE lance_namespace.versions SET manifest_path = '/evil/manifest' WHERE version = 1$$),
		(2, 'versions: UPDATE staging_manifest_path', $$UPDATE lance_namespace.versions SET staging_manifest_path = '/evil'$$),
		(3, 'versions: UPDATE manifest_size, e_tag, naming_scheme', $$UPDATE lance_namespace.versions SET manifest_size = 1, e_tag = 'x', naming_scheme = 'V1'$$),
		(4, 'versions: UPDATE version', $$UPDATE lance_namespace.versions SET version = version + 100$$),
		(5, 'versions: UPDATE branch', $$UPDATE lance_namespace.versions SET branch = 'dev' WHERE version = 2$$),
		(6, 'versions: UPDATE table_id', $$UPDATE lance_namespace.versions SET table_id = (SELECT id FROM lance_namespace.entries WHERE path = '{au_ro,t}')$$),
		(7, 'versions: UPDATE timestamp_millis, created_by', $$UPDATE lance_namespace.versions SET timestamp_millis = 0, created_by = 'postgres'$$),
		(8, 'versions: UPDATE metadata', $$UPDATE lance_namespace.versions SET metadata = '{}'$$),
		(9, 'versions: INSERT', $$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis, created_by)
			SELECT id, 7, '/evil/7', '/evil/7', 'V2', 0, 'postgres' FROM lance_namespace.entries WHERE path = '{au,t}'$$),
		(10, 'versions: INSERT ON CONFLICT DO UPDATE', $$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
			SELECT id, 2, '/evil/2', '/evil/2', 'V2', 0 FROM lance_namespace.entries WHERE path = '{au,t}'
			ON CONFLICT (table_id, branch, version) DO UPDATE SET manifest_path = '/evil/2'$$),
		(11, 'versions: DELETE, own table, the latest too', $$DELETE FROM lance_namespace.versions WHERE table_id = (SELECT id FROM lance_namespace.entries WHERE path = '{au,t}')$$),
		(15, 'versions: DELETE, own table, below the latest', $$DELETE FROM lance_namespace.versions WHERE table_id = (SELECT id FROM lance_namespace.entries WHERE path = '{au,t}') AND version = 1$$),
		(16, 'versions: INSERT after a DELETE', $$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
			SELECT id, 1, '/evil/1', '/evil/1', 'V2', 0 FROM lance_namespace.entries WHERE path = '{au,t}'$$),
		(12, 'versions: DELETE, read-only table', $$DELETE FROM lance_namespace.versions WHERE table_id = (SELECT id FROM lance_namespace.entries WHERE path = '{au_ro,t}')$$),
		(13, 'versions: TRUNCATE', $$TRUNCATE lance_namespace.versions$$),
		(14, 'versions: UPDATE the creation record', $$UPDATE lance_namespace.versions SET transaction_id = '1', created_at = now(),
			interface = 'rest', session_role = 'postgres', table_path = '{forged}'$$),
		-- history
		(20, 'history: INSERT', $$INSERT INTO lance_namespace.history (role, interface, operation, id, detail)
			VALUES ('postgres', 'rest', 'CreateTableVersion', ARRAY['au','t'], '{"version": 99}')$$),
		(21, 'history: UPDATE', $$UPDATE lance_namespace.history SET role = 'postgres'$$),
		(22, 'history: DELETE', $$DELETE FROM lance_namespace.history$$),
		(23, 'history: TRUNCATE', $$TRUNCATE lance_namespace.history$$),
		(24, 'history_log: INSERT', $$INSERT INTO lance_namespace.history_log (role, interface, operation, id, detail)
			VALUES ('postgres', 'rest', 'CreateTableVersion', ARRAY['au','t'], '{"version": 99}')$$),
		(25, 'history_log: UPDATE', $$UPDATE lance_namespace.history_log SET role = 'postgres'$$),
		(26, 'history_log: DELETE', $$DELETE FROM lance_namespace.history_log$$),
		(27, 'history_log: TRUNCATE', $$TRUNCATE lance_namespace.history_log$$),
		-- entries
		(30, 'entries: INSERT, own subtree', $$INSERT INTO lance_namespace.entries (parent_id, kind, name, path, created_by)
			SELECT id, 'n', 'direct', '{au,direct}', 'postgres' FROM lance_namespace.entries WHERE path = '{au}'$$),
		(31, 'entries: INSERT, read-only subtree', $$INSERT INTO lance_namespace.entries (parent_id, kind, name, path)
			SELECT id, 'n', 'direct', '{au_ro,direct}' FROM lance_namespace.entries WHERE path = '{au_ro}'$$),
		(32, 'entries: UPDATE properties', $$UPDATE lance_namespace.entries SET properties = '{"k": "v"}' WHERE path = '{au}'$$),
		(33, 'entries: UPDATE location, outside its namespace', $$UPDATE lance_namespace.entries SET location = '/moved' WHERE path = '{au,t}'$$),
		(39, 'entries: UPDATE location, onto another table', $$UPDATE lance_namespace.entries SET location = (SELECT location FROM lance_namespace.entries WHERE path = '{au_ro,t}') WHERE path = '{au,t}'$$),
		(28, 'entries: INSERT a table outside its namespace', $$INSERT INTO lance_namespace.entries (parent_id, kind, name, path, location)
			SELECT id, 't', 'evil', '{au,evil}', (SELECT location FROM lance_namespace.entries WHERE path = '{au_ro,t}') FROM lance_namespace.entries WHERE path = '{au}'$$),
		(29, 'entries: UPDATE location, below its namespace', $$UPDATE lance_namespace.entries SET location = '/data/lance/au/moved.lance' WHERE path = '{au,t}'$$),
		(34, 'entries: UPDATE path into a read-only subtree', $$UPDATE lance_namespace.entries SET path = '{au_ro,t2}', name = 't2',
			parent_id = (SELECT id FROM lance_namespace.entries WHERE path = '{au_ro}') WHERE path = '{au,t}'$$),
		(35, 'entries: DELETE, own subtree', $$DELETE FROM lance_namespace.entries WHERE path = '{au,t}'$$),
		(36, 'entries: DELETE, read-only subtree', $$DELETE FROM lance_namespace.entries WHERE path = '{au_ro,t}'$$),
		(37, 'entries: TRUNCATE', $$TRUNCATE lance_namespace.entries CASCADE$$),
		(38, 'entries_id_seq: setval', $$SELECT pg_catalog.setval('lance_namespace.entries_id_seq', 1)$$),
		-- tags
		(40, 'tags: INSERT', $$INSERT INTO lance_namespace.tags (table_id, name, version)
			SELECT id, 'direct', 2 FROM lance_namespace.entries WHERE path = '{au,t}'$$),
		(41, 'tags: INSERT, read-only table', $$INSERT INTO lance_namespace.tags (table_id, name, version)
			SELECT id, 'direct', 1 FROM lance_namespace.entries WHERE path = '{au_ro,t}'$$),
		(42, 'tags: UPDATE', $$UPDATE lance_namespace.tags SET version = 2 WHERE name = 'v1'$$),
		(43, 'tags: DELETE', $$DELETE FROM lance_namespace.tags$$),
		-- branches
		(50, 'branches: INSERT', $$INSERT INTO lance_namespace.branches (table_id, name, parent_version, create_at)
			SELECT id, 'direct', 2, 0 FROM lance_namespace.entries WHERE path = '{au,t}'$$),
		(51, 'branches: UPDATE', $$UPDATE lance_namespace.branches SET parent_version = 0$$),
		(52, 'branches: DELETE', $$DELETE FROM lance_namespace.branches$$),
		-- privileges
		(60, 'privileges: INSERT admin on {}', $$INSERT INTO lance_namespace.privileges (role_name, namespace, privilege) VALUES ('regress_au_tenant', '{}', 'admin')$$),
		(61, 'privileges: INSERT admin on its own {au}', $$INSERT INTO lance_namespace.privileges (role_name, namespace, privilege) VALUES ('regress_au_tenant', '{au}', 'admin')$$),
		(62, 'privileges: UPDATE', $$UPDATE lance_namespace.privileges SET privilege = 'admin'$$),
		(63, 'privileges: DELETE another role''s grant', $$DELETE FROM lance_namespace.privileges WHERE role_name = 'regress_au_other'$$),
		-- keys, secrets, settings
		(70, 'api_keys: SELECT', $$SELECT * FROM lance_namespace.api_keys$$),
		(71, 'api_keys: INSERT', $$INSERT INTO lance_namespace.api_keys (key_hash, role_name) VALUES (sha256('k'), 'postgres')$$),
		(72, 'api_keys: UPDATE', $$UPDATE lance_namespace.api_keys SET role_name = 'postgres'$$),
		(73, 'api_keys: DELETE', $$DELETE FROM lance_namespace.api_keys$$),
		(74, 'secrets: SELECT', $$SELECT * FROM lance_namespace.secrets$$),
		(75, 'secrets: INSERT', $$INSERT INTO lance_namespace.secrets VALUES ('jwt_secret', repeat('x', 40))$$),
		(76, 'secrets: UPDATE', $$UPDATE lance_namespace.secrets SET value = repeat('x', 40)$$),
		(77, 'secrets: DELETE', $$DELETE FROM lance_namespace.secrets$$),
		(78, 'settings: INSERT', $$INSERT INTO lance_namespace.settings VALUES ('root_location', '/evil')$$),
		(79, 'settings: UPDATE', $$UPDATE lance_namespace.settings SET value = '/evil'$$),
		(80, 'settings: DELETE', $$DELETE FROM lance_namespace.settings$$),
		-- publications (0.3.0): the bytes a gateway republishes
		(81, 'publications: SELECT', $$SELECT * FROM lance_namespace.publications$$),
		(82, 'publications: INSERT', $$INSERT INTO lance_namespace.publications
			SELECT table_id, branch, version, '\x00' FROM lance_namespace.versions$$),
		(83, 'publications: UPDATE', $$UPDATE lance_namespace.publications SET manifest = '\x00'$$),
		(84, 'publications: DELETE', $$DELETE FROM lance_namespace.publications$$)
	) v(i, label, sql) ORDER BY i LOOP
		attempt := a.label;
		BEGIN
			EXECUTE a.sql;
			GET DIAGNOSTICS n = ROW_COUNT;
			-- this transaction's history: only this attempt's (the earlier
			-- ones were rolled back)
			SELECT pg_catalog.count(*) || ' (' ||
				   COALESCE(pg_catalog.string_agg(DISTINCT h.role || ' ' || h.operation, ', '), '') || ')'
			  INTO audit
			  FROM lance_namespace.history h
			 WHERE h.transaction_id OPERATOR(pg_catalog.=) pg_catalog.pg_current_xact_id();
			RAISE EXCEPTION USING ERRCODE = 'ZX001', MESSAGE = n || ' rows; history: ' || audit;
		EXCEPTION WHEN OTHERS THEN
			result := CASE WHEN SQLSTATE = 'ZX001' THEN 'done: ' || SQLERRM
						   ELSE SQLSTATE || ': ' || SQLERRM END;
		END;
		RETURN NEXT;
	END LOOP;
END
$f$;
SET SESSION AUTHORIZATION regress_au_tenant;
SELECT * FROM regress_au_sweep();
SELECT md5(string_agg(attempt || ' ' || result, E'\n')) AS tenant_sweep FROM regress_au_sweep() \gset
RESET SESSION AUTHORIZATION;
-- the gateway's authenticator after SET ROLE gets the same outcome for each
SET SESSION AUTHORIZATION regress_au_authn;
SET ROLE regress_au_tenant;
SET lance_namespace.interface = 'rest';
SELECT md5(string_agg(attempt || ' ' || result, E'\n')) = :'tenant_sweep' AS same_as_tenant FROM regress_au_sweep();
RESET lance_namespace.interface;
RESET ROLE;
RESET SESSION AUTHORIZATION;

SELECT clock_timestamp() AS au_t0, lance_namespace.lance_changes_cursor() AS au_c0 \gset

--
-- As the tenant, from psql, with write on au: every direct write on every
-- catalog table.
--
SET SESSION AUTHORIZATION regress_au_tenant;
-- versions: the attacks of the issue
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET manifest_path = '/evil/manifest' WHERE version = 1$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET staging_manifest_path = '/evil' WHERE version = 1$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET manifest_size = 1, e_tag = 'x', naming_scheme = 'V1' WHERE version = 1$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET version = 9 WHERE version = 1$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET branch = 'dev' WHERE version = 2$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET timestamp_millis = 0, created_by = 'postgres'$$);
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET metadata = '{}'$$);
SELECT regress_au_dml(format($$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis, created_by)
	VALUES (%s, 7, '/evil/7', '/evil/7', 'V2', 0, 'postgres')$$, :au_t_id));
SELECT regress_au_dml(format($$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
	VALUES (%s, 2, '/evil/2', '/evil/2', 'V2', 0) ON CONFLICT (table_id, branch, version) DO UPDATE SET manifest_path = '/evil/2'$$, :au_t_id));
SELECT manifest_path FROM lance_namespace.lance_describe_table_version(ARRAY['au','t'], 1);
-- history: forging, rewriting and erasing the trail
SELECT regress_au_dml($$INSERT INTO lance_namespace.history (role, interface, operation, id, detail)
	VALUES ('postgres', 'rest', 'CreateTableVersion', ARRAY['au','t'], '{"version": 99}')$$);
SELECT regress_au_dml($$UPDATE lance_namespace.history SET role = 'postgres'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.history$$);
SELECT regress_au_dml($$TRUNCATE lance_namespace.history$$);
-- keys, secrets, settings and privileges
SELECT regress_au_dml($$INSERT INTO lance_namespace.api_keys (key_hash, role_name) VALUES (sha256('k'), 'postgres')$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.api_keys$$);
SELECT regress_au_dml($$UPDATE lance_namespace.api_keys SET role_name = 'postgres'$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.secrets VALUES ('jwt_secret', repeat('x', 40))$$);
SELECT regress_au_dml($$UPDATE lance_namespace.settings SET value = '/evil'$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.privileges (role_name, namespace, privilege) VALUES ('regress_au_tenant', '{}', 'admin')$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.privileges (role_name, namespace, privilege) VALUES ('regress_au_tenant', '{au}', 'admin')$$);
SELECT regress_au_dml($$UPDATE lance_namespace.privileges SET privilege = 'admin'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.privileges WHERE role_name = 'regress_au_other'$$);
-- the rows the tenant may write directly: audited
SELECT regress_au_dml($$DELETE FROM lance_namespace.versions WHERE version = 1 AND branch = 'main'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.versions WHERE table_id <> 0 AND version = 1 AND manifest_path LIKE '/m/au_ro/%'$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.entries (parent_id, kind, name, path, created_by)
	SELECT id, 'n', 'direct', '{au,direct}', 'postgres' FROM lance_namespace.entries WHERE path = '{au}'$$);
SELECT regress_au_dml($$UPDATE lance_namespace.entries SET properties = '{"k": "v"}' WHERE path = '{au,direct}'$$);
SELECT regress_au_dml($$UPDATE lance_namespace.entries SET location = '/moved' WHERE path = '{au,t}'$$);
SELECT regress_au_dml($$UPDATE lance_namespace.entries SET location = '/data/lance/au/moved.lance' WHERE path = '{au,t}'$$);
SELECT regress_au_dml($$UPDATE lance_namespace.entries SET location = '/data/lance/au/t.lance' WHERE path = '{au,t}'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.entries WHERE path = '{au,direct}'$$);
SELECT regress_au_dml(format($$INSERT INTO lance_namespace.tags (table_id, name, version) VALUES (%s, 'direct', 2)$$, :au_t_id));
SELECT regress_au_dml($$UPDATE lance_namespace.tags SET version = 1 WHERE name = 'direct'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.tags WHERE name = 'direct'$$);
SELECT regress_au_dml(format($$INSERT INTO lance_namespace.branches (table_id, name, parent_version, create_at) VALUES (%s, 'direct', 2, 0)$$, :au_t_id));
SELECT regress_au_dml($$UPDATE lance_namespace.branches SET parent_version = 0 WHERE name = 'direct'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.branches WHERE name = 'direct'$$);
-- COPY into a table with row level security is refused to whom it applies
\copy lance_namespace.tags from '/dev/null'
-- a rolled-back direct write leaves nothing behind, not even its history
BEGIN;
SELECT regress_au_dml($$UPDATE lance_namespace.entries SET properties = '{"rolled": "back"}' WHERE path = '{au,t}'$$);
ROLLBACK;
-- the tenant cannot claim the REST interface by setting the GUC
SET lance_namespace.interface = 'rest';
SELECT value FROM lance_namespace.configuration WHERE name = 'interface';
SELECT version FROM lance_namespace.lance_create_table_version('{au,t}', 3, '/m/au/t/3');
RESET lance_namespace.interface;
RESET SESSION AUTHORIZATION;

-- what the tenant did, as the history has it: every change, with the true
-- role and the session role, written by the database
SELECT role, session_role, interface, operation, name,
       CASE WHEN operation LIKE '% %' THEN
            jsonb_build_object('old', (detail->'old') - '{created_at,id,parent_id,table_id,create_at,timestamp_millis,transaction_id}'::text[],
                               'new', (detail->'new') - '{created_at,id,parent_id,table_id,create_at,timestamp_millis,transaction_id}'::text[])
            ELSE detail - 'manifest_path' END AS detail
  FROM lance_namespace.commit_history
 WHERE at >= :'au_t0' AND id[1] IN ('au', 'au_ro')
 ORDER BY at;
SELECT branch, version, manifest_path, created_by FROM lance_namespace.table_versions
 WHERE id = '{au,t}' ORDER BY branch, version;
-- au_ro's version is still there (row level security hid it from the delete)
SELECT version FROM lance_namespace.table_versions WHERE id = '{au_ro,t}';
-- the change feed reads only the database's trail: the tenant's version 3,
-- not the forged CreateTableVersion 99
SELECT id, branch, version FROM lance_namespace.lance_changes(:'au_c0') WHERE id[1] = 'au';

--
-- As the gateway's authenticator after SET ROLE: the same rules, the
-- tenant's role, the authenticator as session role, and interface rest.
--
SELECT clock_timestamp() AS au_t1 \gset
SET SESSION AUTHORIZATION regress_au_authn;
-- the authenticator itself has no access to the catalog's tables
SELECT regress_au_dml($$DELETE FROM lance_namespace.versions$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.history (operation, id) VALUES ('Forged', '{au}')$$);
SET ROLE regress_au_tenant;
SET lance_namespace.interface = 'rest';
SELECT current_user, session_user, lance_namespace.lance_interface();
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET manifest_path = '/evil/manifest' WHERE version = 2$$);
SELECT regress_au_dml(format($$INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
	VALUES (%s, 8, '/evil/8', '/evil/8', 'V2', 0)$$, :au_t_id));
SELECT regress_au_dml($$INSERT INTO lance_namespace.history (operation, id) VALUES ('Forged', '{au}')$$);
SELECT regress_au_dml($$UPDATE lance_namespace.history SET operation = 'x'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.history$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.api_keys$$);
SELECT lance_namespace.rest_create_table_version('{"id": ["au", "t"], "version": 4, "manifest_path": "/m/au/t/4"}') -> 'version' -> 'version' AS version;
SELECT regress_au_dml($$DELETE FROM lance_namespace.versions WHERE version = 3$$);
SELECT regress_au_dml($$UPDATE lance_namespace.tags SET version = 2 WHERE name = 'v1'$$);
RESET lance_namespace.interface;
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT role, session_role, interface, operation, name,
       CASE WHEN operation LIKE '% %' THEN
            jsonb_build_object('old', (detail->'old') - '{created_at,table_id,timestamp_millis,transaction_id}'::text[],
                               'new', (detail->'new') - '{created_at,table_id,timestamp_millis,transaction_id}'::text[])
            ELSE detail - 'manifest_path' END AS detail
  FROM lance_namespace.commit_history
 WHERE at >= :'au_t1' AND id[1] = 'au'
 ORDER BY at;

--
-- An error inside one of an operation's own statements, caught by the
-- caller, leaves nothing of the operation behind: the next direct
-- write is still refused or audited.  (A test-only trigger makes the
-- operation's tag insert fail.)
--
CREATE FUNCTION pg_temp.au_boom() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.name = 'boom' THEN
		RAISE EXCEPTION 'boom';
	END IF;
	RETURN NEW;
END$$;
CREATE TRIGGER au_boom BEFORE INSERT ON lance_namespace.tags
	FOR EACH ROW EXECUTE FUNCTION pg_temp.au_boom();
SELECT clock_timestamp() AS au_t2 \gset
SET ROLE regress_au_tenant;
DO $$
BEGIN
	BEGIN
		PERFORM lance_namespace.lance_create_table_tag('{au,t}', 'boom', 2);
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE 'caught: %', SQLERRM;
	END;
	BEGIN
		INSERT INTO lance_namespace.versions (table_id, version, manifest_path, staging_manifest_path, naming_scheme, timestamp_millis)
			SELECT id, 9, '/evil/9', '/evil/9', 'V2', 0 FROM lance_namespace.entries WHERE path = '{au,t}';
		RAISE NOTICE 'direct version insert: accepted';
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE 'direct version insert: % %', SQLSTATE, SQLERRM;
	END;
	INSERT INTO lance_namespace.tags (table_id, name, version)
		SELECT id, 'after_boom', 2 FROM lance_namespace.entries WHERE path = '{au,t}';
END$$;
RESET ROLE;
DROP TRIGGER au_boom ON lance_namespace.tags;
SELECT role, operation, name FROM lance_namespace.commit_history
 WHERE at >= :'au_t2' AND id[1] = 'au' ORDER BY at;

--
-- A role granted more than lance_grant gives still cannot rewrite a version
-- or write the history: the triggers refuse it.  (The history view is not
-- updatable at all; its log, history_log, is guarded.)
--
GRANT UPDATE ON lance_namespace.versions TO regress_au_tenant;
GRANT INSERT, UPDATE, DELETE ON lance_namespace.history, lance_namespace.history_log TO regress_au_tenant;
SET ROLE regress_au_tenant;
SELECT regress_au_dml($$UPDATE lance_namespace.versions SET manifest_path = '/evil/manifest' WHERE version = 2$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.history (operation, id) VALUES ('Forged', '{au}')$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.history$$);
SELECT regress_au_dml($$INSERT INTO lance_namespace.history_log (operation, id) VALUES ('Forged', '{au}')$$);
SELECT regress_au_dml($$UPDATE lance_namespace.history_log SET role = 'postgres'$$);
SELECT regress_au_dml($$DELETE FROM lance_namespace.history_log$$);
RESET ROLE;
REVOKE UPDATE ON lance_namespace.versions FROM regress_au_tenant;
REVOKE INSERT, UPDATE, DELETE ON lance_namespace.history, lance_namespace.history_log FROM regress_au_tenant;

--
-- The catalog's owner may still correct a version; that is audited too.
--
SELECT clock_timestamp() AS au_t3 \gset
UPDATE lance_namespace.versions SET e_tag = 'fixed' WHERE table_id = :au_t_id AND version = 2 AND branch = 'main';
SELECT role, operation, name, detail->'old'->>'e_tag' AS old_e_tag, detail->'new'->>'e_tag' AS new_e_tag
  FROM lance_namespace.commit_history WHERE at >= :'au_t3' AND id[1] = 'au';

--
-- DescribeTransaction's operation list is JSON-escaped (an operation name
-- with a quote and a backslash, written by the owner).
--
BEGIN;
INSERT INTO lance_namespace.history_log (operation, id) VALUES ('Odd"Op\', '{au}');
SELECT status, properties->>'operation' AS operation
  FROM lance_namespace.lance_describe_transaction(lance_namespace.lance_current_transaction_id());
ROLLBACK;

--
-- Clean up
--
SELECT lance_namespace.lance_drop_namespace('{au}', NULL, 'Cascade') IS NOT NULL AS dropped;
SELECT lance_namespace.lance_drop_namespace('{au_ro}', NULL, 'Cascade') IS NOT NULL AS dropped;
DELETE FROM lance_namespace.privileges WHERE role_name IN ('regress_au_tenant', 'regress_au_other');
DROP OWNED BY regress_au_tenant;
DROP OWNED BY regress_au_other;
DROP OWNED BY regress_au_authn;
DROP ROLE regress_au_tenant;
DROP ROLE regress_au_other;
DROP ROLE regress_au_authn;
DROP FUNCTION public.regress_au_dml(text);
DROP FUNCTION public.regress_au_sweep();
