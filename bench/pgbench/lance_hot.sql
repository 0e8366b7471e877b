-- (b) one hot table: describe the latest version, create latest+1.  All
-- writers name the manifest after the version, so a loser gets the winner's
-- row back (the idempotent-retry answer) instead of an error; goodput is
-- counted from the rows actually created.
SELECT (lance_namespace.lance_create_table_version(ARRAY['bench', 'hot'], l.v,
        '/bench/hot.lance/_versions/stg-' || l.v, 100)).version
  FROM (SELECT (lance_namespace.lance_describe_table_version(ARRAY['bench', 'hot'])).version + 1 AS v) l;
