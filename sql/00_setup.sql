--
-- 00_setup: install the extension, test helpers, identifiers and error codes.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;

-- lance_try(sql): run a query; return its rows as JSON lines, or, when it
-- fails, "SQLSTATE LanceErrorName: message".  Everything it uses is
-- schema-qualified, so it behaves the same under any search_path.
CREATE OR REPLACE FUNCTION public.lance_try(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE pg_catalog.format(
		'SELECT pg_catalog.string_agg(pg_catalog.row_to_json(q)::text, E''\n'') FROM (%s) q', sql)
		INTO result;
	RETURN COALESCE(result, '(no rows)');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' ||
		COALESCE(lance_namespace.lance_error_name(lance_namespace.lance_error_code(SQLSTATE)), '?') ||
		': ' || SQLERRM;
END;
$$;

SELECT lance_namespace.lance_root_location() IS NULL AS no_root_yet;
SELECT lance_namespace.lance_set_root_location('/data/lance');
SELECT lance_namespace.lance_root_location();
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location(E'/data\nx')$$);
-- neither an absolute path nor a URI
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('garbage')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('..')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('s3:/bucket')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_root_location('://bucket')$$);
SELECT lance_namespace.lance_root_location();

-- The root namespace row exists and nothing else.
SELECT id, parent_id, kind, name, path FROM lance_namespace.entries ORDER BY id;

--
-- Error codes and names
--
SELECT c, lance_namespace.lance_error_name(c) FROM generate_series(-1, 24) c;
SELECT lance_namespace.lance_error_name(NULL) IS NULL AS null_name;
SELECT s, lance_namespace.lance_error_code(s)
  FROM unnest(ARRAY['LN000', 'LN001', 'LN002', 'LN003', 'LN004', 'LN005', 'LN011',
                    'LN013', 'LN014', 'LN022', 'LN023', 'LN024', 'LN099', 'LNX01',
                    '42501', '28000', '28P01', '40001', '40P01', '23505', '23503', '55P03',
                    '22P02', '22003', '42P02', '42883', '42725', '08006', '53300',
                    '57P01', '25006', '57014', 'XX000', '42P01', '', 'LN0013']) s;
SELECT lance_namespace.lance_error_code(NULL) IS NULL AS null_code;

--
-- lance_parse_id / lance_format_id
--
SELECT lance_namespace.lance_parse_id('a$b$c');
SELECT lance_namespace.lance_parse_id('a');
SELECT lance_namespace.lance_parse_id('');
SELECT lance_namespace.lance_parse_id('$');
SELECT lance_namespace.lance_parse_id('a.b.c', '.');
SELECT lance_namespace.lance_parse_id('a::b::c', '::');
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a/b', '.')$$);
SELECT lance_try($q$SELECT lance_namespace.lance_parse_id('a$$b')$q$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('$a')$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a$')$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a$..$b')$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a', '')$$);
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a', repeat('x', 17))$$);
SELECT lance_namespace.lance_parse_id('axxxxxxxxxxxxxxxxb', repeat('x', 16));
-- no control characters in a delimiter (C0, DEL, C1), as in a name
SELECT lance_try($$SELECT lance_namespace.lance_parse_id('a' || chr(9) || 'b', chr(9))$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,b}', chr(127))$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,b}', '.' || chr(133))$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,b}', '/' || chr(10))$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,b}', repeat('x', 17))$$);
SELECT lance_namespace.lance_format_id('{a,b}', '→');
SELECT lance_try($$SELECT lance_namespace.lance_parse_id(repeat('a$', 64) || 'a')$$);
SELECT cardinality(lance_namespace.lance_parse_id(repeat('a$', 63) || 'a')) AS depth64;
SELECT lance_namespace.lance_format_id('{a,b,c}');
SELECT lance_namespace.lance_format_id('{a,b,c}', '.');
SELECT lance_namespace.lance_format_id('{}');
SELECT lance_namespace.lance_format_id('[0:1]={x,y}'::text[]);
SELECT lance_try($$SELECT lance_namespace.lance_format_id(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a}', NULL)$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a}', '')$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{{a,b},{c,d}}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,NULL}')$$);
SELECT lance_try($$SELECT lance_namespace.lance_format_id('{a,""}')$$);
SELECT lance_namespace.lance_parse_id(lance_namespace.lance_format_id('{x,y,z}', '::'), '::');
