-- SQL twin of REST table/describe on the table that wrk reads.
SELECT * FROM lance_namespace.lance_describe_table(ARRAY['bench', 'read']);
