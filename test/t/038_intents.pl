# A create's canonical manifest orphaned by the gateway's death is repaired
# when a gateway starts again (RELIABILITY.md, "Windows where a file can be
# orphaned", case 1; src/gateway/commit.c, intents).
#
# A deferred constraint trigger makes chosen versions' COMMIT sleep 2 s
# (and for some then fail); the gateway is killed with SIGKILL while it
# waits there, after it linked the canonical name.  Expected:
#  - a normal create leaves no intent behind, and a second gateway's start
#    leaves the files of a live one alone;
#  - a COMMIT that then rolls back: the next start removes the canonical
#    file (it waits on the table's catalog row for the transaction to end)
#    and says so, and the dead gateway's intent files;
#  - a COMMIT that then commits: the file stays, the version is in the
#    catalog, the intents directory is empty;
#  - the same on a branch whose version number main also has: only the
#    branch's row counts;
#  - a record with nothing after it (a death inside finalize): the file
#    stays, start-up says --sweep handles it;
#  - a COMMIT lost with the server (stopped at once) while the gateway
#    lives on: the gateway removes the file once the server is back,
#    without a restart.
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
use File::Path qw(make_path);
use POSIX ();

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my ($node, $root, $work, $loc) = fault_cluster('intents');
my $t1 = $loc->{'load$t1'};
my $db = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $log = "$PostgreSQL::Test::Utils::log_path/038_gateway.log";
my $intents = "$root/.lance-gateway/intents";

my $gw = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => ['--quiet'], owner => $$);
my $http = http_client(timeout => 30, keep_alive => 0);

sub versions_dir { my ($branch) = @_; return $branch ? "$t1/tree/$branch/_versions" : "$t1/_versions" }
sub canonical { my ($v, $branch) = @_; return versions_dir($branch) . '/' . canonical_name($v) }

# Stage a manifest for version $v (of $branch, if given) and create it.
sub create
{
	my ($v, $branch) = @_;
	my $staging = canonical($v, $branch) . "-$$-$v";
	open(my $fh, '>:raw', $staging) or die "open $staging: $!";
	print $fh "manifest $v " . ($branch // 'main') . "\n" x 64;
	close($fh);
	return $http->post($gw->url . '/v1/table/load%24t1/version/create',
		{ content => encode_json({ version => $v, manifest_path => $staging,
			($branch ? (branch => $branch) : ()) }) });
}

sub intent_files
{
	opendir(my $d, $intents) or return ('(no directory)');
	my @f = grep { !/^\.\.?$/ } readdir($d);
	closedir($d);
	return @f;
}

# the intent files that hold a record (a gateway keeps its files, emptied
# to "#", for its next creates)
sub pending_intents
{
	return grep { (LanceGatewayTest::slurp("$intents/$_") // '#') !~ /^#/ } intent_files();
}

sub in_catalog
{
	my ($v, $branch) = @_;
	$branch //= 'main';
	return $node->safe_psql('postgres',
		qq{SELECT count(*) FROM lance_namespace.versions v JOIN lance_namespace.entries e ON e.id = v.table_id
		   WHERE e.path = ARRAY['load', 't1'] AND v.version = $v AND v.branch = '$branch'});
}

# Create $v (of $branch) in a child, kill the gateway with SIGKILL while its
# COMMIT sleeps in the trigger, and start it again; returns the new log.
sub kill_in_commit
{
	my ($v, $branch) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		create($v, $branch);
		POSIX::_exit(0);    # not the parent's END blocks and destructors
	}
	my $deadline = time + 20;
	sleep 0.05 while $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE wait_event = 'PgSleep'}) eq '0'
	  && time < $deadline;
	ok(-e canonical($v, $branch), "version $v: its canonical file exists while COMMIT runs");
	is(scalar(pending_intents()), 1, '... with one intent file that holds a record');
	$gw->kill9;
	waitpid($pid, 0);
	ok(-e canonical($v, $branch), '... and after SIGKILL of the gateway');
	my $size_before = -s $log;
	$gw->restart;
	return substr(LanceGatewayTest::slurp($log), $size_before);
}

# 1. A normal create leaves no intent behind.
is(create(1)->{status}, 200, 'create 1: 200');
ok(-d $intents, 'the intents directory is made under the root');
is((stat($intents))[2] & 07777, 0700, '... mode 0700');
is(scalar(intent_files()), 1, '... where a create leaves one file');
is_deeply([ pending_intents() ], [], '... which holds no record');
# a second gateway starting on the same root leaves the live one's files
my @live = intent_files();
my $gw2 = LanceGatewayTest::Gateway->start(bin => $bin, db => $db, root => $root,
	log => $log, args => ['--quiet'], owner => $$);
is_deeply([ intent_files() ], \@live, "a second gateway's start leaves the live gateway's intent file alone");
$gw2->stop;
is(create(2)->{status}, 200, 'create 2: 200');
is(create(3)->{status}, 200, 'create 3: 200');

$node->safe_psql('postgres', q{
	CREATE FUNCTION public.slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM pg_catalog.pg_sleep(2);
		IF NEW.version IN (5, 3) THEN
			RAISE EXCEPTION 'version % refused at COMMIT', NEW.version;
		END IF;
		RETURN NULL;
	END $$;
	CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON lance_namespace.versions
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
		WHEN (NEW.version IN (5, 6, 8) OR NEW.branch = 'b')
		EXECUTE FUNCTION public.slow_commit();
});

# 2. The COMMIT rolls back after the gateway died: the next start removes
# the file, once the table's row lock shows the transaction ended.
my $text = kill_in_commit(5);
ok(!-e canonical(5), 'start-up removed the canonical file of version 5, which did not commit');
is(in_catalog(5), '0', '... not in the catalog');
like($text, qr/the COMMIT of version 5 of \["load","t1"\] did not end before its gateway died and it is not in the catalog/,
	'... as the gateway says');
is_deeply([ intent_files() ], [], '... and the intents directory is empty');

# 3. The COMMIT succeeds after the gateway died: the file stays.
$text = kill_in_commit(6);
ok(-e canonical(6), 'the canonical file of version 6, which committed, stays');
is(in_catalog(6), '1', '... the version is in the catalog');
unlike($text, qr/version 6 of/, '... nothing said of it');
is_deeply([ intent_files() ], [], '... and the intents directory is empty');

# 4. A branch's version 3 whose COMMIT rolls back, while main has a version
# 3: the branch's file goes.
$node->safe_psql('postgres',
	q{SELECT lance_namespace.lance_create_table_branch(ARRAY['load','t1'], 'b', NULL, 1)});
make_path(versions_dir('b'));
$text = kill_in_commit(3, 'b');
ok(!-e canonical(3, 'b'), 'start-up removed the file of version 3 of branch b, which did not commit');
is(in_catalog(3, 'b') . in_catalog(3), '01', '... main has a version 3, branch b none');
like($text, qr/the COMMIT of version 3 of \["load","t1"\] did not end/, '... as the gateway says');
is_deeply([ intent_files() ], [], '... and the intents directory is empty');

# 5. A record written before a finalize and nothing after (a death inside
# it): nothing proves the file the dead gateway's, so it stays; said.
$gw->stop;
open(my $fh, '>', "$intents/0-dead.intent") or die;
print $fh encode_json({ id => [ 'load', 't1' ], version => 9, canonical => canonical(9) }) . "\n#";
close($fh);
open($fh, '>', canonical(9)) or die;
close($fh);
my $size_before = -s $log;
$gw->restart;
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/a gateway died while it made \S+\Q${\ canonical_name(9)}\E: --sweep removes it/,
	'a record without what finalize made: start-up says --sweep handles it');
ok(-e canonical(9), '... and leaves the file');
is_deeply([ intent_files() ], [], '... and removes the record');
unlink(canonical(9));

# 6. The catalog is lost while a COMMIT runs (the server stops at once),
# and the gateway lives on: its after_unknown cannot ask, so the file and
# the intent stay; once the server is back, the gateway settles them by
# itself, without a restart.
my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	POSIX::_exit(create(8)->{status} == 503 ? 0 : 1);
}
my $deadline = time + 20;
sleep 0.05 while $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE wait_event = 'PgSleep'}) eq '0'
  && time < $deadline;
ok(-e canonical(8), 'version 8: its canonical file exists while COMMIT runs');
$size_before = -s $log;
$node->stop('immediate');
waitpid($pid, 0);
is($? >> 8, 0, '... the server stops at once: 503');
ok(-e canonical(8), '... the file stays while the catalog is down');
is(scalar(pending_intents()), 1, '... and so does its intent');
$node->start;
$deadline = time + 30;
sleep 0.2 while -e canonical(8) && time < $deadline;
ok(!-e canonical(8), 'once the server is back, the live gateway removed the file of version 8');
is(in_catalog(8), '0', '... which is not in the catalog');
like(substr(LanceGatewayTest::slurp($log), $size_before),
	qr/the COMMIT of version 8 of \["load","t1"\] was lost and it is not in the catalog/,
	'... as the gateway says');
is_deeply([ pending_intents() ], [], '... and no intent holds a record');

# the gateway serves as usual after its repairs
$node->safe_psql('postgres', 'DROP TRIGGER slow_commit ON lance_namespace.versions');
is(create(7)->{status}, 200, 'create 7 after the restarts: 200');
is_deeply([ pending_intents() ], [], '... no intent left');
$gw->stop;

$node->stop;
done_testing();
