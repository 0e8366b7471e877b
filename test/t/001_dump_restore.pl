# pg_dump / pg_restore of a lance_namespace catalog: every row of every
# configuration table of the extension (entries, versions, settings, and
# whatever else it marks with pg_extension_config_dump: branches, tags,
# history) and its id sequence survive a dump and a restore into a fresh
# database, and the restored catalog keeps working.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Math::BigInt;
use JSON::PP;
use FindBin;
use lib $FindBin::RealBin;
use LanceGatewayTest;

my $node = PostgreSQL::Test::Cluster->new('dump_restore');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;

my $root = PostgreSQL::Test::Utils::tempdir('lance_root');

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION lance_namespace');
$node->safe_psql('src',
	"SELECT lance_namespace.lance_set_root_location('$root')");
is($node->safe_psql('src', 'SELECT lance_namespace.lance_root_location()'),
	$root, 'root location is set');

# A namespace tree: a, a$b, a$b$c, z (with properties).
$node->safe_psql(
	'src', q{
	SELECT lance_namespace.lance_create_namespace(ARRAY['a']);
	SELECT lance_namespace.lance_create_namespace(ARRAY['a','b']);
	SELECT lance_namespace.lance_create_namespace(ARRAY['a','b','c']);
	SELECT lance_namespace.lance_create_namespace(ARRAY['z'],
		properties => '{"owner": "ops", "note": "caf\u00e9, \"quoted\""}');
});

# Declared tables, one of them with properties, and a registered table.
$node->safe_psql(
	'src', q{
	SELECT lance_namespace.lance_declare_table(ARRAY['a','t1']);
	SELECT lance_namespace.lance_declare_table(ARRAY['a','b','t2'],
		properties => '{"k": "v"}');
	SELECT lance_namespace.lance_declare_table(ARRAY['a','b','c','t3']);
});
my $reg_location = "$root/elsewhere/registered.lance";
$node->safe_psql('src',
	"SELECT lance_namespace.lance_register_table(ARRAY['z','reg'], '$reg_location')"
);

# Versions: staging manifests next to the canonical V2 names, the way a
# Lance writer sends them (object-store relative: no leading '/').
sub staging_path
{
	my ($db, $id, $version) = @_;
	my $location = $node->safe_psql($db,
		"SELECT location FROM lance_namespace.lance_describe_table($id)");
	$location =~ s{^file://}{};
	$location =~ s{^/+}{};
	$location =~ s{/+$}{};
	# V2 names count down from 2^64-1: version 1 is 18446744073709551614.
	my $name = sprintf('%020s',
		Math::BigInt->new('18446744073709551615')->bsub($version)->bstr);
	return sprintf('%s/_versions/%s.manifest-%08d-0000-4000-8000-%012d',
		$location, $name, $version, $version);
}

my %versions = (
	q{ARRAY['a','t1']}         => [ 1, 2, 3 ],
	q{ARRAY['a','b','t2']}     => [ 1, 2 ],
	q{ARRAY['a','b','c','t3']} => [1],);
my $nversions = 0;
foreach my $id (sort keys %versions)
{
	foreach my $v (@{ $versions{$id} })
	{
		my $path = staging_path('src', $id, $v);
		my $size = 100 * $v;
		$node->safe_psql('src',
			"SELECT lance_namespace.lance_create_table_version($id, $v, '$path', $size, e_tag => 'etag-$v', metadata => '{\"writer\": \"tap\"}')"
		);
		$nversions++;
	}
}

# A branch with a version of its own, and tags.
$node->safe_psql(
	'src', q{
	SELECT lance_namespace.lance_create_table_branch(ARRAY['a','t1'], 'dev',
		from_version => 2, metadata => '{"purpose": "test"}');
	SELECT lance_namespace.lance_create_table_tag(ARRAY['a','t1'], 'first', 1);
	SELECT lance_namespace.lance_create_table_tag(ARRAY['a','b','t2'], 'latest', 2);
});
my $branch_path = staging_path('src', q{ARRAY['a','t1']}, 3);
$branch_path =~ s{/_versions/}{/tree/dev/_versions/};
$node->safe_psql('src',
	"SELECT lance_namespace.lance_create_table_version(ARRAY['a','t1'], 3, '$branch_path', 7, branch => 'dev')"
);
$nversions++;

# Every configuration table and sequence of the extension is dumped; the
# comparison below covers each of them, and must not compare empty tables.
my $config_q = q{
	SELECT c.relname
	  FROM pg_extension e, unnest(e.extconfig) AS x(oid)
	  JOIN pg_class c ON c.oid = x.oid
	 WHERE e.extname = 'lance_namespace' AND c.relkind = '%s'
	 ORDER BY 1};
my @tables = split /\n/, $node->safe_psql('src', sprintf($config_q, 'r'));
my @sequences = split /\n/, $node->safe_psql('src', sprintf($config_q, 'S'));
foreach my $t (qw(entries versions settings))
{
	ok((grep { $_ eq $t } @tables), "$t is a configuration table");
}
ok((grep { $_ eq 'entries_id_seq' } @sequences),
	'entries_id_seq is a configuration sequence');

# Tables this test fills: exact counts where known, else at least one row.
# Other configuration tables (if any) are compared whatever they hold.
my %expected_count = (entries => 1 + 4 + 4, versions => $nversions,
	settings => 1);
my %filled = map { $_ => 1 } qw(entries versions settings branches tags history);
foreach my $t (@tables)
{
	next unless $filled{$t};
	my $n = $node->safe_psql('src', "SELECT count(*) FROM lance_namespace.$t");
	if (defined $expected_count{$t})
	{
		is($n, $expected_count{$t},
			"source database has $expected_count{$t} rows in $t");
	}
	else
	{
		cmp_ok($n, '>', 0, "source database has rows in $t");
	}
}

# Dump in custom format and restore into a fresh database on the same node.
my $dump = $node->basedir . '/src.dump';
$node->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src') ],
	'pg_dump -Fc of the source database');
$node->command_ok([ 'createdb', '-h', $node->host, '-p', $node->port, 'dst' ],
	'createdb dst');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'), $dump ],
	'pg_restore into dst');

# Every row of every configuration table, in a stable order.  The root
# namespace (entries id 0) is not dumped but made by CREATE EXTENSION: all of
# it but its creation time must match.
sub digest
{
	my ($db, $from) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, E'\\n' ORDER BY t::text)), '-') FROM $from"
	);
}
foreach my $t (@tables)
{
	my $from = "lance_namespace.$t t";
	$from = "lance_namespace.$t t WHERE id <> 0" if $t eq 'entries';
	my $before = digest('src', $from);
	my $after  = digest('dst', $from);
	like($before, $filled{$t} ? qr/^[1-9][0-9]* [0-9a-f]{32}$/ : qr/^(0 -|[1-9][0-9]* [0-9a-f]{32})$/,
		"$t digest of the source");
	is($after, $before, "$t is identical after dump and restore");
}
my $root_q = q{
	SELECT (parent_id, kind, name, path, properties, location, declared, created_by)
	  FROM lance_namespace.entries WHERE id = 0};
is($node->safe_psql('dst', $root_q),
	$node->safe_psql('src', $root_q),
	'the root namespace is the same after dump and restore');

# The sequences came along.
foreach my $seq (@sequences)
{
	my $q = "SELECT last_value, is_called FROM lance_namespace.$seq";
	is($node->safe_psql('dst', $q), $node->safe_psql('src', $q),
		"$seq is identical after dump and restore");
}

# The restored catalog answers like the source.
foreach my $q (
	q{SELECT lance_namespace.lance_root_location()},
	q{SELECT lance_namespace.lance_describe_namespace(ARRAY['z'])},
	q{SELECT * FROM lance_namespace.lance_describe_table_version(ARRAY['a','t1'], 2)},
	q{SELECT namespaces FROM lance_namespace.lance_list_namespaces(ARRAY['a'])},
	q{SELECT tables FROM lance_namespace.lance_list_tables(ARRAY['a','b'])},
	q{SELECT location FROM lance_namespace.lance_describe_table(ARRAY['z','reg'])},
	q{SELECT * FROM lance_namespace.lance_describe_table_version(ARRAY['a','t1'], 3, 'dev')},
	q{SELECT lance_namespace.lance_get_table_tag_version(ARRAY['a','t1'], 'first')})
{
	is($node->safe_psql('dst', $q), $node->safe_psql('src', $q),
		"same answer after restore: $q");
}

# New objects after the restore get fresh ids (the sequence was dumped).
my $max_before =
  $node->safe_psql('dst', 'SELECT max(id) FROM lance_namespace.entries');
$node->safe_psql('dst',
	q{SELECT lance_namespace.lance_create_namespace(ARRAY['after_restore'])});
ok( $node->safe_psql('dst',
		q{SELECT lance_namespace.lance_namespace_exists(ARRAY['after_restore'])}) eq 't',
	'a namespace created after restore exists');
cmp_ok(
	$node->safe_psql('dst',
		q{SELECT id FROM lance_namespace.entries WHERE path = ARRAY['after_restore']::text[]}
	),
	'>', $max_before,
	'the new namespace got an id past every restored one');
$node->safe_psql('dst',
	q{SELECT lance_namespace.lance_declare_table(ARRAY['after_restore','t'])});
ok( $node->safe_psql('dst',
		q{SELECT lance_namespace.lance_table_exists(ARRAY['after_restore','t'])}) eq 't',
	'a table declared after restore exists');

# Version history goes on after the restore; the restored versions still
# guard against a duplicate.
my $next = staging_path('dst', q{ARRAY['a','t1']}, 4);
$node->safe_psql('dst',
	"SELECT lance_namespace.lance_create_table_version(ARRAY['a','t1'], 4, '$next')"
);
is( $node->safe_psql('dst',
		q{SELECT max(version) FROM lance_namespace.table_versions WHERE id = ARRAY['a','t1']::text[]}
	),
	'4',
	'version 4 created after restore');
# Retrying a restored version with its own manifest is idempotent; another
# manifest for it is a conflict.
my $same = staging_path('dst', q{ARRAY['a','t1']}, 3);
is( $node->safe_psql('dst',
		"SELECT version FROM lance_namespace.lance_create_table_version(ARRAY['a','t1'], 3, '$same', 300)"
	),
	'3',
	'retrying a restored version with the same manifest returns it');
(my $other = $same) =~ s/manifest-[0-9a-f-]+$/manifest-ffffffff-0000-4000-8000-000000000000/;
my ($ret, $stdout, $stderr) = $node->psql('dst',
	"SELECT lance_namespace.lance_create_table_version(ARRAY['a','t1'], 3, '$other')"
);
isnt($ret, 0, 'a restored version cannot be created with another manifest');
like($stderr, qr/already exists/, '... and the error says it already exists');

# REST spells every restored version's manifest_path as before the dump:
# the object-store path (no leading "/"), derived from the same rows.
# (a missing gateway fails the check rather than skipping it)
my $bin = LanceGatewayTest::gateway_bin();
ok($bin, 'the gateway is built, for the REST checks after restore');
if ($bin)
{
	my %lists;
	foreach my $db ('src', 'dst')
	{
		my $gw = LanceGatewayTest::Gateway->start(
			bin   => $bin,
			db    => 'host=' . $node->host . ' port=' . $node->port . " dbname=$db",
			root  => $root,
			log   => "$PostgreSQL::Test::Utils::log_path/001_gateway_$db.log",
			args  => ['--quiet'],
			owner => $$);
		my $res = LanceGatewayTest::http_client()->request('POST',
			$gw->url . '/v1/table/a%24t1/version/list?delimiter=%24',
			{ content => '{}', headers => { 'content-type' => 'application/json' } });
		$gw->stop;
		my @paths = map { "$_->{version} $_->{manifest_path}" }
		  grep { $_->{version} <= 3 } @{ JSON::PP::decode_json($res->{content})->{versions} };
		$lists{$db} = join("\n", @paths);
	}
	isnt($lists{src}, '', 'the source lists its versions over REST');
	is($lists{dst}, $lists{src}, 'REST lists the restored versions with the same manifest_path');
	unlike($lists{dst}, qr{^\d+ /}m, '... as object-store paths, without a leading /');
}

$node->stop;
done_testing();
