# One flush per create (issue 19): the catalog holds a create's staged
# bytes (lance_namespace.publications) until the gateway has made the
# canonical file durable, and every path that could find the file missing
# or short rebuilds it from those bytes (src/gateway/publish.c).
#
# The gateway runs with a publication interval of an hour, so that every
# create stays between COMMIT and durable publication, the state that a
# crash of the gateway or the host can leave.  Expected:
#  - each create's answer names a canonical file holding exactly the
#    staged bytes, and the catalog holds those bytes;
#  - after SIGKILL of the gateway, with the latest canonical file lost and
#    another one short (as a host crash leaves unflushed files), --sweep
#    republishes them from the catalog instead of retiring the version,
#    and prunes the rows;
#  - the same after a restart of the gateway: start-up repairs them;
#  - DescribeTableVersion of the latest version whose file is lost gets the
#    file back, byte for byte, and its version; a file a client's cleanup
#    removed below a later manifest is not rewritten (404, retired, and its
#    bytes go with it);
#  - a retry of an acknowledged create gets the same answer;
#  - with the default interval the publisher makes files durable and
#    prunes the rows by itself;
#  - a gateway whose role is not the catalog's owner keeps flushing each
#    create (no rows held), and its creates still succeed;
#  - the backlog is bounded (--publish-backlog): past it, creates flush
#    their manifests themselves and hold nothing, so that what a stop
#    flushes and a start checks does not grow with the length of a load;
#  - a create whose COMMIT is lost and did not commit leaves no canonical
#    file behind;
#  - the publisher vacuums the table after every 256 rows it prunes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use LanceGatewayTest;
use JSON::PP;
use Digest::MD5 ();
use IPC::Run ();
use POSIX ();

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my ($node, $root, $work, $loc) = fault_cluster('publication');
my $dir = $loc->{'load$t1'} . '/_versions';
my $db = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $log = "$PostgreSQL::Test::Utils::log_path/036_gateway.log";
my @hour = ('--publish-interval-ms', '3600000', '--quiet');

my $gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
my $http = http_client(timeout => 10, keep_alive => 0);
my %staged;    # version => bytes

sub slurp_bin
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or return undef;
	local $/;
	my $b = <$fh>;
	close($fh);
	return $b;
}

# Stage a manifest of random bytes for version $v and create it through
# the gateway; returns the HTTP response.
sub create
{
	my ($v, $size) = @_;
	my $bytes = join('', map { chr(int(rand(256))) } 1 .. ($size // 4096));
	my $staging = "$dir/" . canonical_name($v) . "-$$-$v";
	open(my $fh, '>:raw', $staging) or die "open $staging: $!";
	print $fh $bytes;
	close($fh);
	$staged{$v} = $bytes;
	return $http->post($gw->url . '/v1/table/load%24t1/version/create',
		{ content => encode_json({ version => $v, manifest_path => $staging }) });
}

sub pending
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) FROM lance_namespace.publications});
}

sub canonical { return "$dir/" . canonical_name($_[0]) }

# 1. Creates whose publication is pending.
for my $v (1 .. 3)
{
	my $r = create($v);
	is($r->{status}, 200, "create $v: 200");
	my $path = decode_json($r->{content})->{version}{manifest_path};
	is(slurp_bin("/$path" =~ s{^//}{/}r), $staged{$v},
		"create $v: the returned manifest_path holds exactly the staged bytes");
}
is(pending(), '3', 'the catalog holds the bytes of the three creates');
is($node->safe_psql('postgres',
	q{SELECT string_agg(md5(manifest), ',' ORDER BY version) FROM lance_namespace.publications}),
	join(',', map { Digest::MD5::md5_hex($staged{$_}) } 1 .. 3),
	'... exactly the staged bytes');

# 2. SIGKILL of the gateway; the latest file (v3) lost, v2's short (a host
# crash's unflushed link and data); --sweep republishes rather than retires.
$gw->kill9;
unlink(canonical(3)) or die "unlink: $!";
truncate(canonical(2), 100) or die "truncate: $!";
my ($out, $err) = ('', '');
IPC::Run::run([ $bin, '--sweep', '--db', $db, '--root', $root, '--sweep-min-age', '0' ],
	'>', \$out, '2>', \$err);
like($out, qr/sweep: 3 pending publications, 2 manifests republished from the catalog's bytes, 3 made durable/,
	'--sweep republishes the lost and the short manifest and prunes the rows');
like($out, qr/sweep: 0 temporary and 0 orphaned manifests removed/, '... and removes nothing');
unlike($out, qr/retired/, '... and retires no version');
is(slurp_bin(canonical($_)), $staged{$_}, "after --sweep: version $_ holds the staged bytes")
  for 1 .. 3;
is(pending(), '0', 'after --sweep: nothing pending');
is($node->safe_psql('postgres', q{SELECT count(*) FROM lance_namespace.versions}), '3',
	'after --sweep: every version is in the catalog');

# 3. The same left to the gateway's start-up.
$gw->restart;
for my $v (4 .. 6)
{
	is(create($v)->{status}, 200, "create $v: 200");
}
$gw->kill9;
unlink(canonical(6)) or die "unlink: $!";
open(my $fh, '>:raw', canonical(5)) or die;
print $fh 'x' x 4096;    # same size, other bytes
close($fh);
my $size_before = -s $log;
$gw->restart;
my $text = substr(LanceGatewayTest::slurp($log), $size_before);
like($text, qr/publications at start-up: 3 pending, 2 republished, 3 made durable, 0 left/,
	'start-up republishes a lost and a rewritten manifest');
is(slurp_bin(canonical($_)), $staged{$_}, "after the restart: version $_ holds the staged bytes")
  for 4 .. 6;
is(pending(), '0', 'after the restart: nothing pending');

# 4. DescribeTableVersion of the latest version whose file is lost:
# repaired and served.
sub describe
{
	return $http->post($gw->url . '/v1/table/load%24t1/version/describe',
		{ content => encode_json({ version => $_[0] }) });
}
is(create(7)->{status}, 200, 'create 7: 200');
is(create(8)->{status}, 200, 'create 8: 200');
unlink(canonical(8)) or die "unlink: $!";
my $r = describe(8);
is($r->{status}, 200, 'describe of version 8 with its file lost: 200');
is(eval { decode_json($r->{content})->{version}{version} }, 8, '... version 8');
is(slurp_bin(canonical(8)), $staged{8}, '... and its file is back with the staged bytes');
is($node->safe_psql('postgres',
	q{SELECT string_agg(version::text, ',' ORDER BY version) FROM lance_namespace.publications}),
	'7', '... and only version 7 is still pending');
# a cleanup removes version 7's file below 8's: not rewritten, retired
unlink(canonical(7)) or die "unlink: $!";
is(describe(7)->{status}, 404, 'describe of version 7, removed by a cleanup: 404');
ok(!-e canonical(7), '... its file is not rewritten');
is($node->safe_psql('postgres',
	q{SELECT string_agg(version::text, ',' ORDER BY version) FROM lance_namespace.versions}),
	'1,2,3,4,5,6,8', '... and it is retired');
is(pending(), '0', '... with its bytes');

# 5. A retry of an acknowledged create (staging file gone) gets its answer.
is(create(9)->{status}, 200, 'create 9: 200');
my $again = $http->post($gw->url . '/v1/table/load%24t1/version/create',
	{ content => encode_json({ version => 9,
		manifest_path => "$dir/" . canonical_name(9) . "-$$-9" }) });
is($again->{status}, 200, 'a retry of create 9 after its answer: 200');
is(slurp_bin(canonical(9)), $staged{9}, '... and the file still holds the staged bytes');

# 6. The default interval: the publisher prunes by itself; a clean stop
# leaves nothing pending either.
$gw->stop;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => ['--quiet'], owner => $$);
is(pending(), '0', 'start-up published version 9');
is(create(10)->{status}, 200, 'create 10 (default interval): 200');
my $deadline = time() + 10;
sleep(0.05) while pending() ne '0' && time() < $deadline;
is(pending(), '0', 'the publisher made it durable and pruned it');
$gw->stop;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
is(create(11)->{status}, 200, 'create 11: 200');
is(pending(), '1', '... pending for the next hour');
is($gw->stop, 0, 'SIGTERM stops the gateway cleanly');
is(pending(), '0', '... after a last pass that published what was pending');
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
# 21's file lost and repaired by a describe (its row goes); then a cleanup
# removes 20's file below 21's, so that the last pass has only that row,
# which it prunes without rewriting the file
is(create(20)->{status}, 200, 'create 20: 200');
is(create(21)->{status}, 200, 'create 21: 200');
unlink(canonical(21)) or die "unlink: $!";
is(describe(21)->{status}, 200, 'describe of 21 with its file lost: 200');
is(pending(), '1', '... its row pruned once repaired (20 pending)');
unlink(canonical(20)) or die "unlink: $!";
$gw->stop;
is(pending(), '0', 'a pass with only a cleaned-up row prunes it');
ok(!-e canonical(20), '... without rewriting the file a cleanup removed below a later manifest');
is(slurp_bin(canonical(21)), $staged{21}, '... and with the later one in place');

# 7. A gateway whose role is not the catalog's owner: each create flushes
# its manifest (nothing held), and works.
$node->safe_psql('postgres', q{CREATE ROLE pub_tenant LOGIN;
	SELECT lance_namespace.lance_grant('pub_tenant', ARRAY['load'], 'write')});
$size_before = -s $log;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => "$db user=pub_tenant", root => $root,
	log => $log, args => ['--quiet'], owner => $$);
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/the gateway's role is not the catalog's owner.*every create flushes its manifest/,
	'a gateway that is not the owner says it flushes each create');
is(create(22)->{status}, 200, 'create 22 by a non-owner gateway: 200');
is(slurp_bin(canonical(22)), $staged{22}, '... its file holds the staged bytes');
is(pending(), '0', '... and the catalog holds no bytes for it');
$gw->stop;

# 8. A bounded backlog: with no pass for an hour and room for 5, the 6th
# and later creates flush their manifests (nothing held), and start-up
# after a SIGKILL has only those 5 to check.
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour, '--publish-backlog', '5'], owner => $$);
$size_before = -s $log;
for my $v (30 .. 41)
{
	is(create($v)->{status}, 200, "create $v with a backlog of at most 5: 200");
}
is(pending(), '5', 'the catalog holds the bytes of 5 creates, not 12');
is($node->safe_psql('postgres',
	q{SELECT string_agg(version::text, ',' ORDER BY version) FROM lance_namespace.publications}),
	'30,31,32,33,34', '... the first 5: the later ones flushed their manifests');
is(slurp_bin(canonical($_)), $staged{$_}, "version $_ holds the staged bytes")
  for 30 .. 41;
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/5 pending .* at --publish-backlog: creates flush their manifests/,
	'the gateway says when creates start flushing');
# a host crash leaves a held file short (its data unflushed), never
# missing below the later, flushed ones (the journal commits in order)
$gw->kill9;
truncate(canonical(34), 10) or die "truncate: $!";
$size_before = -s $log;
$gw->restart;
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/publications at start-up: 5 pending, 1 republished, 5 made durable, 0 left/,
	'start-up after a SIGKILL checks only the 5 held');
is(slurp_bin(canonical(34)), $staged{34}, '... and republishes the short one');
is(pending(), '0', '... nothing pending');
# the count of the backlog follows the catalog: creates hold again
is(create(42)->{status}, 200, 'create 42 after the restart: 200');
is(pending(), '1', '... held again');

# 9. A batch of creates in one request: each version's held bytes are its
# own (the gateway writes them into the request by entry, commit.c), of
# different sizes so that bytes landing with another version show.
$gw->stop;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
my @batch;
for my $v (43 .. 46)
{
	my $bytes = join('', map { chr(int(rand(256))) } 1 .. (1000 * ($v - 42)));
	my $staging = "$dir/" . canonical_name($v) . "-$$-$v";
	open(my $fh, '>:raw', $staging) or die "open $staging: $!";
	print $fh $bytes;
	close($fh);
	$staged{$v} = $bytes;
	push @batch, { id => [ 'load', 't1' ], version => $v, manifest_path => $staging };
}
# the entries out of version order: index and version differ
@batch = @batch[ 2, 0, 3, 1 ];
is($http->post($gw->url . '/v1/table/version/batch-create',
		{ content => encode_json({ entries => \@batch }) })->{status},
	200, 'batch-create of versions 43 to 46: 200');
is($node->safe_psql('postgres',
	q{SELECT string_agg(version || ':' || md5(manifest), ',' ORDER BY version) FROM lance_namespace.publications WHERE version > 42}),
	join(',', map { "$_:" . Digest::MD5::md5_hex($staged{$_}) } 43 .. 46),
	'... the catalog holds each version\'s own staged bytes');
is(slurp_bin(canonical($_)), $staged{$_}, "version $_ holds its staged bytes")
  for 43 .. 46;
$gw->stop;

# 10. A publication pass costs what is pending, not what the catalog holds:
# with 20,000 versions of another table and one create held, the publisher
# reads a few version rows.  (Its query once walked every version to find
# the pending ones: a pass took seconds under load, and the backlog grew.)
my $t2 = $loc->{'load$t2'} . '/_versions';
$node->safe_psql('postgres',
	"SELECT count(lance_namespace.lance_create_table_version(ARRAY['load', 't2'], v, '$t2/' || v || '.manifest'))"
	  . ' FROM generate_series(1, 20000) v; SELECT pg_catalog.pg_stat_force_next_flush()');
# that session's counters (since 0.6.0 each create reads its branch's
# latest version) reach the statistics as it exits: what follows is counted
# from where they settle
my $base = 0;
{
	my $last = -1;
	my $until = time + 10;
	while ($base != $last && time < $until)
	{
		sleep 0.5;
		$last = $base;
		$base = $node->safe_psql('postgres',
			q{SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) FROM pg_catalog.pg_stat_user_tables
			  WHERE relid = 'lance_namespace.versions'::regclass});
	}
}
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => ['--quiet'], owner => $$);
is(create(47)->{status}, 200, 'create 47 with 20,000 versions of another table: 200');
$deadline = time + 20;
sleep 0.1 while pending() ne '0' && time < $deadline;
is(pending(), '0', '... published by the publisher');
$gw->stop;
# its connections report their counters as they end: read until they settle
my ($read, $before) = (0, -1);
$deadline = time + 10;
while (($read == 0 || $read != $before) && time < $deadline)
{
	sleep 0.5;
	$before = $read;
	$read = $node->safe_psql('postgres',
		q{SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) FROM pg_catalog.pg_stat_user_tables
		  WHERE relid = 'lance_namespace.versions'::regclass}) - $base;
}
cmp_ok($read, '>', 0, 'the create and its publication read versions');
cmp_ok($read, '<', 500, "... a few rows, not the 20,000 of the other table ($read)");

# 11. A COMMIT lost on its way (the backend ends inside it, a deferred
# trigger terminating its own session at version 77, so the transaction
# rolls back): the gateway cannot tell the outcome and answers 503, but a
# canonical file for a version that did not commit would be taken as
# committed by a Lance writer probing the next manifest's names.  On a new
# session, with the table's catalog row locked, the gateway finds no row
# and removes the file it linked; a retry commits the version.
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.lose_commit() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM pg_catalog.pg_terminate_backend(pg_catalog.pg_backend_pid());
		PERFORM pg_catalog.pg_sleep(10);
		RETURN NULL;
	END $$;
	CREATE CONSTRAINT TRIGGER lose_commit AFTER INSERT ON lance_namespace.versions
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.version = 77)
		EXECUTE FUNCTION public.lose_commit();
});
$size_before = -s $log;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
my $lost = create(77);
is($lost->{status}, 503, 'create 77, its COMMIT lost: 503');
ok(!-e canonical(77), '... and no canonical file for the version that did not commit');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM lance_namespace.versions v JOIN lance_namespace.entries e ON e.id = v.table_id
	  WHERE e.path = ARRAY['load', 't1'] AND v.version = 77}), '0',
	'... which is not in the catalog');
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/the COMMIT of version 77 of \["load","t1"\] was lost and it is not in the catalog/,
	'... as the gateway says');
$node->safe_psql('postgres', 'DROP TRIGGER lose_commit ON lance_namespace.versions');
my $retry = $http->post($gw->url . '/v1/table/load%24t1/version/create',
	{ content => encode_json({ version => 77,
		manifest_path => "$dir/" . canonical_name(77) . "-$$-77" }) });
is($retry->{status}, 200, 'the retry of create 77: 200');
is(slurp_bin(canonical(77)), $staged{77}, '... its file holds the staged bytes');

# A COMMIT lost after its commit record (the session ends while COMMIT
# waits for a synchronous standby that is not there): the version did
# commit, so its file stays.  The gateway's new session waits on the
# table's catalog row until the ending transaction is visible.
$gw->stop;
$node->append_conf('postgresql.conf',
	"wal_level = replica\nmax_wal_senders = 2\nsynchronous_standby_names = 'absent_standby'\n");
$node->restart;
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => [@hour], owner => $$);
my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	my $r = create(78);
	open(my $out, '>', "$work/create78") or die;
	print $out $r->{status};
	close($out);
	POSIX::_exit(0);    # not the parent's END blocks and destructors
}
$deadline = time + 20;
sleep 0.1 while $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE wait_event = 'SyncRep'}) eq '0'
  && time < $deadline;
$node->safe_psql('postgres',
	q{SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE wait_event = 'SyncRep'});
waitpid($pid, 0);
$node->append_conf('postgresql.conf', "synchronous_standby_names = ''");
$node->reload;
is(LanceGatewayTest::slurp("$work/create78"), '503', 'create 78, its COMMIT lost after the commit record: 503');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM lance_namespace.versions v JOIN lance_namespace.entries e ON e.id = v.table_id
	  WHERE e.path = ARRAY['load', 't1'] AND v.version = 78}), '1',
	'... the version committed');
# the child staged the bytes (under its own pid), and its staging file stays
my ($staging78) = glob("$dir/" . canonical_name(78) . '-*-78');
$staged{78} = slurp_bin($staging78 // '/nonexistent');
ok(defined $staged{78}, 'the staging file of create 78 is kept');
is(slurp_bin(canonical(78)), $staged{78}, '... and its canonical file stays, holding the staged bytes');
$gw->stop;

# 12. The publisher vacuums the rows it prunes, after every 256 of them,
# so that creates reuse the table's pages rather than extend it until
# autovacuum comes, a minute later (BENCHMARKS.md, Round 20).
# pg_stat_all_tables.vacuum_count counts only a VACUUM run by a client.
sub vacuums
{
	return $node->safe_psql('postgres',
		q{SELECT vacuum_count FROM pg_catalog.pg_stat_all_tables
		  WHERE relid = 'lance_namespace.publications'::regclass});
}
my $vacuums_before = vacuums();
$gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => ['--quiet', '--publish-interval-ms', '20'], owner => $$);
my @failed = grep { create($_, 100)->{status} != 200 } 1000 .. 1249;
is(scalar(@failed), 0, '250 creates: 200');
$deadline = time + 20;
sleep 0.1 while pending() ne '0' && time < $deadline;
is(vacuums(), $vacuums_before, '... and no VACUUM of the publications before 256 are pruned');
push(@failed, grep { create($_, 100)->{status} != 200 } 1250 .. 1299);
is(scalar(@failed), 0, '50 more: 200');
$deadline = time + 20;
sleep 0.1 while (pending() ne '0' || vacuums() eq $vacuums_before) && time < $deadline;
is(pending(), '0', '... all published and pruned');
is(vacuums(), $vacuums_before + 1, '... and the publisher vacuumed the table once');
$gw->stop;

$node->stop;
done_testing();
