-- SQL twin of REST version/describe (latest) on the table that wrk reads.
SELECT * FROM lance_namespace.lance_describe_table_version(ARRAY['bench', 'read']);
