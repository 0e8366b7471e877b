# Upgrade paths: ALTER EXTENSION lance_namespace UPDATE from every earlier
# version reaches default_version, keeps the catalog's data, and leaves
# exactly the objects of a fresh install of default_version.
#
# The versions come from the install scripts sql/lance_namespace--V.sql and
# the update scripts sql/lance_namespace--A--B.sql, so the test keeps
# working when 0.2.0 arrives.  With no update scripts it checks that the
# no-op UPDATE of the default version is accepted and changes nothing.
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $srcdir = "$FindBin::RealBin/../..";
my (%install, @updates);
foreach my $f (glob("$srcdir/sql/lance_namespace--*.sql"))
{
	my $b = $f =~ s{.*/}{}r;
	if ($b =~ /^lance_namespace--([^-]+(?:-[^-]+)*?)--(.+)\.sql$/)
	{
		push @updates, [ $1, $2 ];
	}
	elsif ($b =~ /^lance_namespace--(.+)\.sql$/)
	{
		$install{$1} = 1;
	}
}
note 'install scripts: ' . join(', ', sort keys %install);
note 'update scripts: ' . (join(', ', map { "$_->[0] -> $_->[1]" } @updates) || 'none');

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

my $default = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'lance_namespace'});
ok($install{$default}, "default_version $default has an install script");

# Every update script is installed and known to PostgreSQL.
foreach my $u (@updates)
{
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension_update_paths('lance_namespace') WHERE source = '$u->[0]' AND target = '$u->[1]' AND path IS NOT NULL"),
		'1', "update script $u->[0] -> $u->[1] is installed");
}

# Every version that an update script starts from can reach the default.
my %from = map { $_->[0] => 1 } @updates;
foreach my $src (sort keys %from)
{
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension_update_paths('lance_namespace') WHERE source = '$src' AND target = '$default' AND path IS NOT NULL"),
		'1', "there is an update path from $src to $default");
}

# The objects of an installed lance_namespace, as comparable text.
sub members
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SELECT string_agg(d, E'\n' ORDER BY d) FROM (
		  SELECT pg_describe_object(classid, objid, objsubid) AS d
			FROM pg_depend
		   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
			 AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lance_namespace')
		  UNION ALL
		  SELECT format('%s(%s) -> %s', p.proname, pg_get_function_arguments(p.oid),
						pg_get_function_result(p.oid))
			FROM pg_proc p WHERE p.pronamespace = 'lance_namespace'::regnamespace
		  UNION ALL
		  SELECT format('%s.%s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod))
			FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
		   WHERE c.relnamespace = 'lance_namespace'::regnamespace
			 AND a.attnum > 0 AND NOT a.attisdropped
		  UNION ALL
		  SELECT format('%s: %s', conname, pg_get_constraintdef(oid))
			FROM pg_constraint WHERE connamespace = 'lance_namespace'::regnamespace) s});
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION lance_namespace');
my $fresh = members('fresh');
ok(length($fresh) > 0, 'a fresh install has objects');

# Each earlier version with an install script (and a path to the default).
my @sources = grep { $_ ne $default } sort keys %install;
foreach my $src (@sources)
{
	my $db = "from_" . ($src =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION lance_namespace VERSION '$src'");
	$node->safe_psql($db, q{
		SELECT lance_namespace.lance_set_root_location('/data/upgrade');
		SELECT lance_namespace.lance_create_namespace(ARRAY['keep']);
		SELECT lance_namespace.lance_declare_table(ARRAY['keep','t']);
		SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 1,
			'data/upgrade/keep/t.lance/_versions/18446744073709551614.manifest-1', 10);
	});
	$node->safe_psql($db, 'ALTER EXTENSION lance_namespace UPDATE');
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'lance_namespace'}),
		$default, "$src: UPDATE reaches $default");
	is(members($db), $fresh, "$src: the updated objects equal a fresh install of $default");
	is($node->safe_psql($db,
		q{SELECT version FROM lance_namespace.lance_describe_table_version(ARRAY['keep','t'])}),
		'1', "$src: the catalog's data survive the update");
}

# No-op UPDATE of the current version (always run).
$node->safe_psql('postgres', 'CREATE DATABASE noop');
$node->safe_psql('noop', 'CREATE EXTENSION lance_namespace');
$node->safe_psql('noop', q{SELECT lance_namespace.lance_create_namespace(ARRAY['keep'])});
my ($rc, $out, $err) = $node->psql('noop', 'ALTER EXTENSION lance_namespace UPDATE');
is($rc, 0, 'the no-op UPDATE succeeds');
like($err, qr/already installed|^$/, '... saying the version is already installed');
is($node->safe_psql('noop', q{SELECT extversion FROM pg_extension WHERE extname = 'lance_namespace'}),
	$default, "the installed version is default_version $default");
is(members('noop'), $fresh, 'the no-op UPDATE changes no object');
is($node->safe_psql('noop', q{SELECT count(*) FROM lance_namespace.namespaces}), '1',
	'... and no data');

note sprintf('upgrade paths checked: %d (update scripts: %d)', scalar @sources, scalar @updates);
$node->stop;
done_testing();
