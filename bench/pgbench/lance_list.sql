-- SQL twin of REST version/list?descending=true&limit=1.
SELECT * FROM lance_namespace.lance_list_table_versions(ARRAY['bench', 'read'], descending => true, "limit" => 1);
