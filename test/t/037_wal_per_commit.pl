# WAL per SQL commit (issue 19): a CreateTableVersion of 0.4.0 writes its
# version row, which carries the record of its creation, and no history
# row.  The test measures the WAL bytes per commit of
# lance_create_table_version on a 0.4.0 catalog, on a 0.3.0 catalog (the
# same library: there the audit trigger writes a history row per version,
# as 0.3.0 did), and of the bare put-if-not-exists into a plain table of
# the versions' own columns (the bench's baseline), each over a run of
# commits after a warm-up, in one cluster.  0.4.0 must stay within the
# bound below; 0.3.0 exceeds it, so the bound tells the two apart.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $N = 400;		# measured commits
my $BOUND = 800;	# bytes per commit; 0.4.0 measured about 600, 0.3.0 about 1,050

my $node = PostgreSQL::Test::Cluster->new('wal_per_commit');
$node->init;
$node->append_conf('postgresql.conf', "checkpoint_timeout = 1h\nmax_wal_size = 4GB\nautovacuum = off\n");
$node->start;

# The WAL bytes per commit of $n autocommitted statements made by $stmt
# (given the statement's number), after a warm-up of 50.
sub wal_per_commit
{
	my ($db, $stmt, $start) = @_;
	$node->safe_psql($db, join('', map { $stmt->($_) . ";\n" } $start .. $start + 49));
	my $l0 = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
	$node->safe_psql($db, join('', map { $stmt->($_) . ";\n" } $start + 50 .. $start + 49 + $N));
	my $l1 = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
	return $node->safe_psql($db, "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / $N)");
}

my %bytes;
foreach my $v ('0.3.0', '0.4.0')
{
	my $db = 'v' . ($v =~ s/\W//gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION lance_namespace VERSION '$v'");
	$node->safe_psql($db, q{
		SELECT lance_namespace.lance_create_namespace(ARRAY['w']);
		SELECT lance_namespace.lance_declare_table(ARRAY['w', 't'], '/data/w/t');});
	my $log0 = $node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.history WHERE operation <> 'CreateTableVersion'});
	$bytes{$v} = wal_per_commit($db, sub {
		"SELECT version FROM lance_namespace.lance_create_table_version(ARRAY['w','t'], $_[0], '/data/w/t/_versions/s-$_[0]', 100)"
	}, 1);
	note "lance_create_table_version on a $v catalog: $bytes{$v} bytes of WAL per commit";
	is($node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.history WHERE operation = 'CreateTableVersion'}),
		50 + $N, "$v: every version's creation is in the history");
	is($node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.history WHERE operation <> 'CreateTableVersion'}),
		$log0, "$v: and nothing else");
	if ($v eq '0.4.0')
	{
		is($node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.history_log}), $log0,
			'0.4.0: the creates wrote no row to the history log');
		# a writer whose version exists already (an idempotent repeat, or
		# the loser of a race) writes nothing: it takes no transaction id
		# for a record it will not insert
		my $l0 = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
		$node->safe_psql($db, join('', map {
			"SELECT version FROM lance_namespace.lance_create_table_version(ARRAY['w','t'], 1, '/data/w/t/_versions/s-1', 100);\n"
		} 1 .. 50));
		my $l1 = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
		cmp_ok($node->safe_psql($db, "SELECT pg_wal_lsn_diff('$l1', '$l0')"), '<=', 200,
			'0.4.0: 50 repeats of an existing version write (next to) no WAL');
		# the baseline: the same insert into a plain table of the versions'
		# own columns and primary key
		$node->safe_psql($db, q{
			CREATE TABLE raw_versions (LIKE lance_namespace.versions INCLUDING DEFAULTS INCLUDING INDEXES);
			ALTER TABLE raw_versions DROP COLUMN transaction_id, DROP COLUMN created_at, DROP COLUMN interface,
				DROP COLUMN session_role, DROP COLUMN table_path;});
		$bytes{raw} = wal_per_commit($db, sub {
			"INSERT INTO raw_versions (table_id, branch, version, manifest_path, staging_manifest_path, manifest_size,"
			  . " naming_scheme, timestamp_millis) VALUES (1, 'main', $_[0], '/data/w/t/_versions/x.manifest',"
			  . " '/data/w/t/_versions/s-$_[0]', 100, 'V2', 0) ON CONFLICT DO NOTHING"
			  . " RETURNING version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata"
		}, 1);
		note "the bare INSERT ... ON CONFLICT: $bytes{raw} bytes of WAL per commit";
	}
}

cmp_ok($bytes{'0.4.0'}, '<=', $BOUND, "0.4.0: a create writes at most $BOUND bytes of WAL per commit ($bytes{'0.4.0'})");
cmp_ok($bytes{'0.3.0'}, '>', $BOUND, "0.3.0 wrote more ($bytes{'0.3.0'}): the bound tells them apart");
cmp_ok($bytes{'0.4.0'}, '<', $bytes{'0.3.0'} * 0.7, '0.4.0 writes less than 70 % of what 0.3.0 wrote per create');
cmp_ok($bytes{raw}, '<', $bytes{'0.4.0'}, "the bare INSERT ($bytes{raw}) is the floor");

$node->stop;
done_testing();
