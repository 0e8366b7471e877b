# Randomized sweep of the extension's id and name validators.
#
# lance_parse_id, lance_format_id, lance_create_namespace and
# lance_declare_table get LANCE_ID_SWEEP (default 4000) seeded random
# strings and arrays each: control characters, delimiters, "/", "." and
# "..", multibyte and 4-byte characters, empty and very long names, deep
# ids, NULL elements, multi-dimensional arrays, random delimiters.
# Expected: every error is an LN SQLSTATE (a Lance error code), the
# backend never crashes, and parse/format round-trip whenever both
# succeed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $N = $ENV{LANCE_ID_SWEEP} // 4000;

my $node = PostgreSQL::Test::Cluster->new('id_sweep');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');
$node->safe_psql('postgres',
	"SELECT lance_namespace.lance_set_root_location('/data/sweep')");

$node->safe_psql('postgres', q{
CREATE FUNCTION public.rnd_text(maxlen int) RETURNS text LANGUAGE sql VOLATILE AS $$
	SELECT coalesce(string_agg(
		CASE (random() * 11)::int
			WHEN 0 THEN chr(1 + (random() * 30)::int)          -- control
			WHEN 1 THEN '$'
			WHEN 2 THEN '/'
			WHEN 3 THEN '.'
			WHEN 4 THEN chr(233)                                 -- é
			WHEN 5 THEN chr(128512)                              -- 4-byte
			WHEN 6 THEN chr(127)
			WHEN 7 THEN chr(8232)                                -- line separator
			WHEN 8 THEN ' '
			ELSE chr(97 + (random() * 25)::int)
		END, ''), '')
	  FROM generate_series(1, (random() * maxlen)::int)
$$;
CREATE TABLE sweep_result (fn text, sqlstate text, n int);
});

my $sql = <<"SQL";
SELECT setseed(0.4242);
DO \$\$
DECLARE
	s text; d text; arr text[]; back text; st text;
	counts jsonb := '{}';
	roundtrip_bad int := 0;
	i int;
BEGIN
	FOR i IN 1 .. $N LOOP
		-- a random id string and delimiter
		s := CASE WHEN random() < 0.05 THEN repeat('x', 300 + (random() * 2000)::int)
				  WHEN random() < 0.05 THEN repeat('a\$', (random() * 100)::int)
				  ELSE public.rnd_text(40) END;
		d := CASE WHEN random() < 0.7 THEN '\$'
				  WHEN random() < 0.1 THEN ''
				  WHEN random() < 0.1 THEN repeat('#', 17 + (random() * 10)::int)
				  ELSE public.rnd_text(4) END;
		-- lance_parse_id and the round trip through lance_format_id
		BEGIN
			arr := lance_namespace.lance_parse_id(s, d);
			st := 'ok';
			BEGIN
				back := lance_namespace.lance_format_id(arr, d);
				IF cardinality(arr) > 0 AND back IS DISTINCT FROM s THEN
					roundtrip_bad := roundtrip_bad + 1;
					RAISE WARNING 'round trip: % -> % -> %', s, arr, back;
				END IF;
			EXCEPTION WHEN OTHERS THEN
				INSERT INTO sweep_result VALUES ('format_id(parsed)', SQLSTATE, 1);
			END;
		EXCEPTION WHEN OTHERS THEN
			st := SQLSTATE;
		END;
		INSERT INTO sweep_result VALUES ('parse_id', st, 1);

		-- a random array: random names, NULLs, empties, deep, 2-D
		arr := CASE (random() * 6)::int
			WHEN 0 THEN ARRAY[public.rnd_text(20)]
			WHEN 1 THEN ARRAY[public.rnd_text(10), public.rnd_text(10)]
			WHEN 2 THEN ARRAY[public.rnd_text(5), NULL]
			WHEN 3 THEN (SELECT array_agg('n' || g) FROM generate_series(1, 1 + (random() * 80)::int) g)
			WHEN 4 THEN ARRAY[[public.rnd_text(3), 'a'], ['b', 'c']]
			WHEN 5 THEN ARRAY[repeat(chr(233), 100 + (random() * 200)::int)]
			ELSE '{}'::text[] END;
		BEGIN
			back := lance_namespace.lance_format_id(arr, d);
			st := 'ok';
		EXCEPTION WHEN OTHERS THEN st := SQLSTATE;
		END;
		INSERT INTO sweep_result VALUES ('format_id', st, 1);
		BEGIN
			PERFORM lance_namespace.lance_create_namespace(arr);
			st := 'ok';
		EXCEPTION WHEN OTHERS THEN st := SQLSTATE;
		END;
		INSERT INTO sweep_result VALUES ('create_namespace', st, 1);
		BEGIN
			PERFORM lance_namespace.lance_declare_table(arr);
			st := 'ok';
		EXCEPTION WHEN OTHERS THEN st := SQLSTATE;
		END;
		INSERT INTO sweep_result VALUES ('declare_table', st, 1);
	END LOOP;
	INSERT INTO sweep_result VALUES ('roundtrip_bad', 'n', roundtrip_bad);
END
\$\$;
SQL

my ($rc, $out, $err) = $node->psql('postgres', $sql);
is($rc, 0, "the sweep ran to completion ($N inputs per function)");
note $err if $rc;

my $summary = $node->safe_psql('postgres',
	q{SELECT fn || ' ' || sqlstate || ' ' || sum(n) FROM sweep_result GROUP BY fn, sqlstate ORDER BY 1});
note $summary;
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM sweep_result WHERE sqlstate NOT IN ('ok', 'n') AND sqlstate !~ '^LN[0-9]{3}$'}),
	'0', 'every error is an LN SQLSTATE');
is($node->safe_psql('postgres', q{SELECT sum(n) FROM sweep_result WHERE fn = 'roundtrip_bad'}),
	'0', 'lance_format_id(lance_parse_id(s, d), d) = s whenever both succeed');
cmp_ok($node->safe_psql('postgres', q{SELECT sum(n) FROM sweep_result WHERE sqlstate = 'ok'}),
	'>', 0, 'some inputs were valid');
cmp_ok($node->safe_psql('postgres', q{SELECT sum(n) FROM sweep_result WHERE sqlstate ~ '^LN'}),
	'>', 0, 'some inputs were rejected');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|server process .* was terminated|PANIC/,
	'no backend crashed');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server still answers');
$node->stop;
done_testing();
