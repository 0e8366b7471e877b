--
-- 06_security: search_path hijacking.  An ordinary role that can create
-- objects in public shadows functions and operators the extension uses;
-- the extension's behaviour must not change, for that role or for a
-- superuser whose search_path puts public first.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
-- a run that stopped half-way may have left the role behind
DO $$BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_lance_attacker') THEN
    EXECUTE 'DROP OWNED BY regress_lance_attacker';
    EXECUTE 'DROP ROLE regress_lance_attacker';
  END IF;
END$$;
CREATE ROLE regress_lance_attacker LOGIN;
GRANT CREATE, USAGE ON SCHEMA public TO regress_lance_attacker;
GRANT USAGE ON SCHEMA lance_namespace TO regress_lance_attacker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA lance_namespace TO regress_lance_attacker;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA lance_namespace TO regress_lance_attacker;
-- row level security: the role may write anywhere in the catalog
SELECT lance_namespace.lance_grant('regress_lance_attacker', '{}', 'write');

SET ROLE regress_lance_attacker;
-- shadows that would raise if anything resolved to them
CREATE FUNCTION public.hijacked(text) RETURNS boolean LANGUAGE plpgsql AS
$$BEGIN RAISE EXCEPTION 'hijacked: %', $1; END$$;
CREATE FUNCTION public.text_eq_hijack(text, text) RETURNS boolean LANGUAGE sql AS
$$SELECT public.hijacked('text =')$$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.text_eq_hijack);
CREATE FUNCTION public.textarr_eq_hijack(text[], text[]) RETURNS boolean LANGUAGE sql AS
$$SELECT public.hijacked('text[] =')$$;
CREATE OPERATOR public.= (LEFTARG = text[], RIGHTARG = text[], FUNCTION = public.textarr_eq_hijack);
CREATE FUNCTION public.int8_eq_hijack(bigint, bigint) RETURNS boolean LANGUAGE sql AS
$$SELECT public.hijacked('bigint =')$$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.int8_eq_hijack);
CREATE FUNCTION public.jsonb_build_object(text, jsonb) RETURNS jsonb LANGUAGE sql AS
$$SELECT to_jsonb(public.hijacked('jsonb_build_object'))$$;
CREATE FUNCTION public.jsonb_build_object(text, text) RETURNS jsonb LANGUAGE sql AS
$$SELECT to_jsonb(public.hijacked('jsonb_build_object'))$$;
CREATE FUNCTION public.jsonb_typeof(jsonb) RETURNS text LANGUAGE sql AS
$$SELECT public.hijacked('jsonb_typeof')::text$$;
CREATE FUNCTION public.cardinality(text[]) RETURNS integer LANGUAGE sql AS
$$SELECT public.hijacked('cardinality')::integer$$;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql AS
$$SELECT public.hijacked('now')::text::timestamptz$$;
CREATE FUNCTION public.nextval(regclass) RETURNS bigint LANGUAGE sql AS
$$SELECT public.hijacked('nextval')::integer::bigint$$;
CREATE FUNCTION public.to_jsonb(text[]) RETURNS jsonb LANGUAGE sql AS
$$SELECT to_jsonb(public.hijacked('to_jsonb'))$$;
CREATE FUNCTION public.jsonb_strip_nulls(jsonb) RETURNS jsonb LANGUAGE sql AS
$$SELECT to_jsonb(public.hijacked('jsonb_strip_nulls'))$$;
CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE sql AS
$$SELECT public.hijacked('clock_timestamp')::text::timestamptz$$;
-- the shadows do take effect for ordinary queries under this search_path
SET search_path = public, pg_catalog;
SELECT lance_try($$SELECT 'a'::text = 'a'::text$$);
SELECT lance_try($$SELECT cardinality('{a}'::text[])$$);

-- ... but not inside the extension, for the attacker's own calls
SELECT * FROM lance_namespace.lance_create_namespace('{sec}', properties => '{"k": "v"}');
SELECT * FROM lance_namespace.lance_describe_namespace('{sec}');
SELECT namespaces FROM lance_namespace.lance_list_namespaces('{}');
SELECT location FROM lance_namespace.lance_declare_table('{sec,t}');
SELECT version, manifest_path FROM lance_namespace.lance_create_table_version('{sec,t}', 1, '/s/1');
SELECT version FROM lance_namespace.lance_describe_table_version('{sec,t}');
SELECT "table", version FROM lance_namespace.lance_describe_table('{sec,t}');
SELECT lance_namespace.lance_rename_table('{sec,t}', 't2');
SELECT lance_try($$SELECT lance_namespace.lance_rename_table('{sec,nope}', 't2')$$);
SELECT lance_namespace.rest_describe_namespace('{"id": ["sec"]}');
SELECT lance_namespace.rest_create_namespace('{"id": ["sec", "sub"]}') OPERATOR(pg_catalog.-) 'transaction_id';
SELECT lance_namespace.rest_list_tables('{"id": ["sec"]}');
SELECT lance_namespace.rest_describe_table('{"id": ["sec", "t2"]}') OPERATOR(pg_catalog.-) 'properties';
SELECT name, version FROM lance_namespace.table_versions;
SELECT name FROM lance_namespace.namespaces ORDER BY name;
RESET ROLE;

-- a superuser with public first in its search_path sees the same behaviour
SET search_path = public, pg_catalog;
SELECT version FROM lance_namespace.lance_create_table_version('{sec,t2}', 2, '/s/2');
SELECT * FROM lance_namespace.lance_batch_delete_table_versions('{sec,t2}', '[{"start_version": 0, "end_version": 2}]');
SELECT lance_namespace.rest_list_table_versions('{"id": ["sec", "t2"]}') #> '{versions,0,version}' AS only_version;
SELECT tables FROM lance_namespace.lance_list_all_tables();
SELECT * FROM lance_namespace.lance_drop_namespace('{sec}', NULL, 'Cascade');
RESET search_path;

-- clean up
SELECT lance_namespace.lance_revoke('regress_lance_attacker', '{}', 'write');
DROP OWNED BY regress_lance_attacker;
DROP ROLE regress_lance_attacker;
SELECT count(*) AS entries_left FROM lance_namespace.entries;
