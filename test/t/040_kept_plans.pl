# The catalog's page walks are planned once per session (src/spiutil.c,
# "generic").  Their LIMIT is a parameter, so PostgreSQL's plan cache
# costs a generic plan as if it fetched a tenth of the rows, finds each
# custom plan (a page of one row) cheaper, and plans the statement again on
# every call: in round 26 that was a third of a ListTableVersions' CPU.
#
# On fixtures large enough for that choice (2,000 versions of one table,
# 300 tables, namespaces and branches, analyzed), each list operation runs
# 30 times in one session, and pg_stat_statements, which counts the
# planning of statements run through SPI (and stores them with their
# constants as parameters), must show each page walk planned at most once.
# Without the generic plans the versions' walks were planned on every call.
# The answers are checked too: the pages are the same.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $CALLS = 30;

my $node = PostgreSQL::Test::Cluster->new('kept_plans');
$node->init;
$node->append_conf('postgresql.conf', join("\n",
	"shared_preload_libraries = 'pg_stat_statements'",
	'pg_stat_statements.track = all',
	'pg_stat_statements.track_planning = on',
	'autovacuum = off', ''));
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pg_stat_statements;
	CREATE EXTENSION lance_namespace;
	SELECT lance_namespace.lance_create_namespace(ARRAY['p']);
	SELECT lance_namespace.lance_declare_table(ARRAY['p', 'v'], '/data/p/v');
	SELECT count(lance_namespace.lance_create_table_version(ARRAY['p', 'v'], g,
		'/data/p/v/_versions/s-' || g, 100)) FROM generate_series(1, 2000) g;
	SELECT count(lance_namespace.lance_declare_table(ARRAY['p', 't' || g], '/data/p/t' || g))
		FROM generate_series(1, 300) g;
	SELECT count(lance_namespace.lance_create_namespace(ARRAY['p', 'n' || g]))
		FROM generate_series(1, 300) g;
	SELECT count(lance_namespace.lance_create_table_branch(ARRAY['p', 'v'], 'b' || g, from_version => g))
		FROM generate_series(1, 300) g;
	ANALYZE;
});

# each operation: a call that walks one page, and the statement it runs
my @walks = (
	[ 'ListTableVersions, descending',
	  q{SELECT (lance_namespace.lance_list_table_versions(ARRAY['p', 'v'], descending => true, "limit" => 1)).versions[1].version},
	  '2000', 'ORDER BY version DESC LIMIT' ],
	[ 'ListTableVersions, ascending',
	  q{SELECT (lance_namespace.lance_list_table_versions(ARRAY['p', 'v'], "limit" => 1)).versions[1].version},
	  '1', 'ORDER BY version LIMIT' ],
	[ 'ListTables',
	  q{SELECT (lance_namespace.lance_list_tables(ARRAY['p'], "limit" => 1)).tables},
	  '{t1}', 'ORDER BY name LIMIT' ],
	[ 'ListNamespaces',
	  q{SELECT (lance_namespace.lance_list_namespaces(ARRAY['p'], "limit" => 1)).namespaces},
	  '{n1}', 'ORDER BY name LIMIT' ],
	[ 'ListTables of every namespace',
	  q{SELECT (lance_namespace.lance_list_all_tables("limit" => 1)).tables},
	  '{p$t1}', 'ORDER BY path LIMIT' ],
	[ 'ListTableBranches',
	  q{SELECT string_agg(k, ',') FROM jsonb_object_keys((lance_namespace.lance_list_table_branches(ARRAY['p', 'v'], "limit" => 1)).branches) k},
	  'b1', 'FROM lance_namespace.branches WHERE table_id' ],
);

foreach my $w (@walks)
{
	my ($what, $call, $first, $stmt) = @$w;
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
	my @answers = split /\n/, $node->safe_psql('postgres', join(";\n", ($call) x $CALLS));
	is(scalar(@answers), $CALLS, "$what: $CALLS answers");
	is(scalar(keys %{{ map { $_ => 1 } @answers }}), 1, "$what: the same page every time");
	is($answers[0], $first, "$what: the page's first entry");
	my ($plans, $calls) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT sum(plans), sum(calls) FROM pg_stat_statements
		 WHERE query LIKE '%' || \$q\$$stmt\$q\$ || '%' AND query NOT LIKE '%pg_stat_statements%'});
	is($calls, $CALLS, "$what: its page walk ran once a call");
	cmp_ok($plans, '<=', 1, "$what: and was planned at most once ($plans plans for $calls calls)");
}

$node->stop;
done_testing();
