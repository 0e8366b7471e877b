--
-- 14_postgrest: with lance_namespace.error_format = 'postgrest', the
-- catalog's errors reach the client as PostgREST's custom-error form:
-- SQLSTATE PGRST, a JSON message (the body PostgREST sends) and a JSON
-- detail (the HTTP status it answers with, from the one rule of
-- error_rules.c).  The default leaves errors as psql users know them.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
\set VERBOSITY default
\set SHOW_CONTEXT never

-- the default: SQLSTATE LN001, plain message
SELECT lance_namespace.rest_describe_namespace('{"id": ["pgrst_missing"]}');
\echo :LAST_ERROR_SQLSTATE

SET lance_namespace.error_format = 'postgrest';
SHOW lance_namespace.error_format;

-- NamespaceNotFound: 404, code "1"
SELECT lance_namespace.rest_describe_namespace('{"id": ["pgrst_missing"]}');
\echo :LAST_ERROR_SQLSTATE
SELECT :'LAST_ERROR_MESSAGE'::jsonb AS body;

-- the detail PostgREST reads the status and headers from
SELECT lance_namespace.lance_create_namespace('{pgrst_ns}');
SELECT lance_namespace.lance_create_namespace('{pgrst_ns}');
\echo :LAST_ERROR_SQLSTATE
SELECT :'LAST_ERROR_MESSAGE'::jsonb ->> 'hint' AS hint;

-- InvalidInput (400) keeps PostgreSQL's DETAIL as the body's details
SELECT lance_namespace.rest_list_namespaces('{"limit": "x"}');
SELECT :'LAST_ERROR_MESSAGE'::jsonb AS body;

-- a statement timeout is ServiceUnavailable: 503 with Retry-After
SET statement_timeout = '10ms';
SELECT pg_sleep(1);
RESET statement_timeout;
\echo :LAST_ERROR_SQLSTATE
SELECT :'LAST_ERROR_MESSAGE'::jsonb ->> 'code' AS code;

-- an error the catalog has no Lance code for is left to PostgREST
SELECT no_such_column FROM lance_namespace.entries;
\echo :LAST_ERROR_SQLSTATE

-- an error caught by an exception block is never rewritten
DO $$
BEGIN
	PERFORM lance_namespace.rest_describe_namespace('{"id": ["pgrst_missing"]}');
EXCEPTION WHEN SQLSTATE 'LN001' THEN
	RAISE NOTICE 'caught %', SQLSTATE;
END
$$;

SET lance_namespace.error_format = 'nonsense';
RESET lance_namespace.error_format;
SELECT lance_namespace.rest_describe_namespace('{"id": ["pgrst_missing"]}');
\echo :LAST_ERROR_SQLSTATE
SELECT lance_namespace.lance_drop_namespace('{pgrst_ns}');
