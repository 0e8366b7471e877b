# Fault: the gateway crashes under load.
#
# Concurrent HTTP clients commit table versions through the gateway (two
# clients race on each table).  The gateway gets SIGKILL twice mid-load and
# is restarted on the same port each time.  Clients retry a request that
# got no answer (connection refused or reset) with the same staging
# manifest.  Expected:
#  - no partial rows: every catalog row has its canonical manifest file
#    with exactly the bytes of the manifest the row names;
#  - every version acknowledged with 200 is in the catalog with the
#    acknowledged manifest; no version was acknowledged for two manifests;
#  - a retry after a lost reply gets 200 (even when the first attempt had
#    already committed and removed its staging file).
# Orphan canonical files (written, then the gateway died before COMMIT) are
# counted and reported; see RELIABILITY.md.
#
# Then `lance-namespace-gateway --sweep` removes the orphans of the crash
# phase and planted ones (a canonical file of a version above the latest
# with no row, V2 and V1 names, on main and on a branch, and a
# .gw-99999-1.tmp), and keeps everything else: staging files, a symbolic
# link with a canonical name, orphans below the latest version, the files of
# a branch and of a table with no catalog version, every committed
# version's file, and any file younger than --sweep-min-age.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use LanceGatewayTest;
use File::Path ();
use IPC::Run ();
use JSON::PP;

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my $LOAD_SECONDS = $ENV{LANCE_FAULT_SECONDS} // 12;
my $CLIENTS = 6;

my ($node, $root, $work, $loc) = fault_cluster('gw_crash');

my $db = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $gw = LanceGatewayTest::Gateway->start(
	bin   => $bin,
	db    => $db,
	root  => $root,
	log   => "$PostgreSQL::Test::Utils::log_path/031_gateway.log",
	args  => [ '--pool', '4', '--pool-wait-ms', '2000', '--quiet' ],
	owner => $$);
my $url = $gw->url;

my $load = start_load(
	loc     => $loc,
	url_of  => sub { $url },
	dir     => $work,
	clients => $CLIENTS,
	seconds => $LOAD_SECONDS,
	grace   => 60);

my $http = http_client(timeout => 10, keep_alive => 0);
for my $round (1 .. 2)
{
	sleep($LOAD_SECONDS / 4);
	note "SIGKILL to the gateway (round $round)";
	$gw->kill9;
	my $r = $http->get("$url/health");
	is($r->{status}, 599, "round $round: nothing answers while the gateway is down");
	sleep(0.5);
	$gw->restart;
	is($gw->url, $url, "round $round: restarted on the same address");
	is($http->get("$url/ready")->{status}, 200, "round $round: ready after the restart");
}

my $res = stop_load($load);
my $v = verify_catalog($node, 'postgres', $loc, $res);
check_no_loss('031_gateway_crash', $CLIENTS, $v, $res);
cmp_ok($res->{retries}, '>', 0, 'the clients retried during the outages');

# Deterministic versions of the two crash windows, on a table of their own.
$loc = { %$loc, %{ setup_tables_more($node, $root) } };
my $tloc = $loc->{'load$w1'};
my $vurl = "$url/v1/table/load%24w1/version/create";

# (1) Reply lost after COMMIT: the first attempt committed and removed its
# staging file; the client's retry of the same request must get 200.
my $staging = "$tloc/_versions/" . canonical_name(1) . '-00000000-0000-4000-8000-000000000001';
write_file($staging, LanceGatewayTest::manifest_bytes($staging));
(my $rel = $staging) =~ s{^/}{};
my $body = qq({"version":1,"manifest_path":"$rel"});
my $r1 = $http->post($vurl, { content => $body });
is($r1->{status}, 200, 'lost reply: first attempt commits');
ok(!-e $staging, 'lost reply: the staging file was removed after COMMIT');
my $r2 = $http->post($vurl, { content => $body });
is($r2->{status}, 200, 'lost reply: the retry of the same request gets 200');
my $json = JSON::PP->new->canonical;
is($json->encode($json->decode($r2->{content})->{version}),
	$json->encode($json->decode($r1->{content})->{version}),
	'lost reply: ... with the same version object');

# (2) Crash between the canonical write and COMMIT leaves an orphan
# canonical file (here: other bytes, as if another writer had died).  The
# next commit of that version replaces it with its own bytes.
my $canon2 = "$tloc/_versions/" . canonical_name(2);
write_file($canon2, "orphan from a writer that died before COMMIT\n");
$staging = "$tloc/_versions/" . canonical_name(2) . '-00000000-0000-4000-8000-000000000002';
write_file($staging, LanceGatewayTest::manifest_bytes($staging));
($rel = $staging) =~ s{^/}{};
my $r3 = $http->post($vurl, { content => qq({"version":2,"manifest_path":"$rel"}) });
is($r3->{status}, 200, 'orphan: the version commits over an orphan canonical file');
is(slurp($canon2), LanceGatewayTest::manifest_bytes($staging),
	'orphan: the canonical file now holds the committed manifest');

# (3) A staging file that never existed is still an error (400).
$staging = "$tloc/_versions/" . canonical_name(3) . '-00000000-0000-4000-8000-000000000003';
($rel = $staging) =~ s{^/}{};
my $r4 = $http->post($vurl, { content => qq({"version":3,"manifest_path":"$rel","manifest_size":10}) });
is($r4->{status}, 400, 'a missing staging manifest of a new version is 400');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM lance_namespace.table_versions WHERE name = 'load$w1' AND version = 3}),
	'0', '... and records nothing');

# --sweep: the orphans of the crash phase (above) and planted ones.
my $before = verify_catalog($node, 'postgres', $loc, $res);
note sprintf('before the sweep: %d orphan canonical files, %d temporary files',
	$before->{orphan_canonical}, $before->{leftover_tmp});

# Version 6 of load$w1 commits through the gateway: main's latest is 6.
$staging = "$tloc/_versions/" . canonical_name(6) . '-00000000-0000-4000-8000-000000000006';
write_file($staging, LanceGatewayTest::manifest_bytes($staging));
($rel = $staging) =~ s{^/}{};
is($http->post($vurl, { content => qq({"version":6,"manifest_path":"$rel"}) })->{status},
	200, 'sweep: version 6 commits');

# Branch b1 (from main's 6) has version 7 in the catalog; branch b2 has none.
$node->safe_psql('postgres', q{
	SELECT lance_namespace.lance_create_table_branch(ARRAY['load','w1'], 'b1');
	SELECT lance_namespace.lance_create_table_branch(ARRAY['load','w1'], 'b2');});
my $bdir = "$tloc/tree/b1/_versions";
my $b2dir = "$tloc/tree/b2/_versions";
File::Path::make_path($bdir, $b2dir);
my $bstaging = "$bdir/" . canonical_name(7) . '-00000000-0000-4000-8000-000000000007';
$node->safe_psql('postgres',
	"SELECT lance_namespace.lance_create_table_version(ARRAY['load','w1'], 7, '$bstaging', "
	  . "NULL, NULL, NULL, 'V2', 'b1')");
my $bcanon = $node->safe_psql('postgres',
	q{SELECT manifest_path FROM lance_namespace.table_versions
	   WHERE name = 'load$w1' AND branch = 'b1' AND version = 7});
$bcanon =~ s{^file://}{};
is($bcanon, "$bdir/" . canonical_name(7), 'sweep: a branch keeps its versions in tree/<branch>/_versions');
write_file($bcanon, "version 7 of branch b1\n");

# A table with no catalog version, with a file that looks like an orphan
# (the history of a registered table looks the same).
my $w2 = $node->safe_psql('postgres',
	"SELECT location FROM lance_namespace.lance_declare_table(ARRAY['load','w2'])");
$w2 =~ s{^file://}{};
File::Path::make_path("$w2/_versions");

my $vd = "$tloc/_versions";
my %gone = (
	"$vd/" . canonical_name(7) => 'main, V2 name, above the latest',
	"$vd/8.manifest"           => 'main, V1 name, above the latest',
	"$bdir/" . canonical_name(8) => 'branch b1, above its latest',
	"$vd/.gw-99999-1.tmp"      => 'temporary name');
my %kept = (
	"$vd/" . canonical_name(4) => 'main, below the latest',
	"$vd/" . canonical_name(9) . '-00000000-0000-4000-8000-000000000009' => 'staging file',
	"$vd/0009.manifest"        => 'not a canonical name',
	"$bdir/" . canonical_name(5) => 'branch b1, below its latest',
	"$b2dir/" . canonical_name(7) => 'branch b2, no catalog version',
	"$w2/_versions/" . canonical_name(1) => 'table with no catalog version');
write_file($_, "planted: $gone{$_}\n") foreach keys %gone;
write_file($_, "planted: $kept{$_}\n") foreach keys %kept;
my $target = "$work/symlink-target";
write_file($target, "not the sweep's\n");
my $link = "$vd/" . canonical_name(10);
symlink($target, $link) or die "symlink: $!";

# Every file of a committed version (main and branches), which must stay.
my @committed;
foreach my $l (split /\n/, $node->safe_psql('postgres',
		q{SELECT manifest_path FROM lance_namespace.table_versions ORDER BY 1}))
{
	(my $f = $l) =~ s{^file://}{};
	push @committed, $f;
}
ok(!(grep { !-f $_ } @committed), 'sweep: every committed version has its file before the sweep');

my $orphans = $before->{orphan_canonical} + 3;
my $temps = $before->{leftover_tmp} + 1;

# A large minimum age keeps everything (the planted files are seconds old).
my ($st, $out) = run_sweep('--sweep-min-age', '100000');
is($st, 0, 'sweep (min age 100000 s): exit 0');
like($out, qr/^sweep: 0 temporary and 0 orphaned manifests removed, 5 tables scanned$/m,
	'sweep (min age 100000 s): nothing removed, 5 tables scanned');
ok(!(grep { !-e $_ } keys %gone, keys %kept), 'sweep (min age 100000 s): every file is kept');

# --dry-run lists, removes nothing.
($st, $out) = run_sweep('--sweep-min-age', '0', '--dry-run');
is($st, 0, 'sweep --dry-run: exit 0');
like($out, qr/^sweep: $temps temporary and $orphans orphaned manifests would be removed, 5 tables scanned \(dry run\)$/m,
	"sweep --dry-run: $temps temporary and $orphans orphaned manifests listed");
foreach my $f (sort keys %gone)
{
	like($out, qr/^would remove (temporary file|orphaned manifest) \Q$f\E( |$)/m, "sweep --dry-run lists $gone{$f}");
}
like($out, qr/^would remove orphaned manifest \Q$bdir\E\/\d{20}\.manifest \(table load\$w1, branch b1, version 8\)$/m,
	'sweep --dry-run: the branch orphan is version 8 of branch b1');
like($out, qr/^would remove orphaned manifest \Q$vd\E\/8\.manifest \(table load\$w1, branch main, version 8\)$/m,
	'sweep --dry-run: the V1 name is parsed');
ok(!(grep { !-e $_ } keys %gone, keys %kept), 'sweep --dry-run: every file is kept');

# The sweep.
($st, $out) = run_sweep('--sweep-min-age', '0');
is($st, 0, 'sweep: exit 0');
like($out, qr/^sweep: $temps temporary and $orphans orphaned manifests removed, 5 tables scanned$/m,
	"sweep: $temps temporary and $orphans orphaned manifests removed");
foreach my $f (sort keys %gone)
{
	ok(!-e $f, "sweep removed: $gone{$f}");
	like($out, qr/^removed (temporary file|orphaned manifest) \Q$f\E( |$)/m, "sweep reports: $gone{$f}");
}
foreach my $f (sort keys %kept)
{
	ok(-f $f, "sweep kept: $kept{$f}");
}
ok(-l $link && -f $target, 'sweep kept: a symbolic link with a canonical name, and its target');
my @missing = grep { !-f $_ } @committed;
is(scalar @missing, 0, 'sweep kept every committed version\'s file') or note "missing: @missing";

my $after = verify_catalog($node, 'postgres', $loc, $res);
check_no_loss('031_gateway_crash (after the sweep)', $CLIENTS, $after, $res);
is($after->{orphan_canonical}, 2,
	'after the sweep: the only canonical names without a row are the one below the latest and the symbolic link');
is($after->{leftover_tmp}, 0, 'after the sweep: no temporary file is left');

($st, $out) = run_sweep('--sweep-min-age', '0');
is($st, 0, 'second sweep: exit 0');
like($out, qr/^sweep: 0 temporary and 0 orphaned manifests removed, 5 tables scanned$/m,
	'second sweep: nothing left to remove');

# An unreachable database is an error.
($st) = run_sweep_db('host=127.0.0.1 port=1 dbname=postgres', '--startup-timeout', '0');
isnt($st, 0, 'sweep: an unreachable database is an error');

is($gw->stop, 0, 'the gateway stops cleanly');
$node->stop;
done_testing();

# Run the gateway's --sweep against this catalog; returns (exit status, stdout).
sub run_sweep
{
	return run_sweep_db($db, @_);
}

sub run_sweep_db
{
	my ($conninfo, @args) = @_;
	my ($o, $e) = ('', '');
	my @cmd = ($bin, '--sweep', '--db', $conninfo, '--root', $root,
		'--startup-timeout', '10', @args);
	IPC::Run::run(\@cmd, '<', \undef, '>', \$o, '2>', \$e, IPC::Run::timeout(120));
	my $status = $? >> 8;
	note "--sweep @args: exit $status\n$o$e";
	return ($status, $o);
}

sub write_file
{
	my ($f, $bytes) = @_;
	open(my $fh, '>', $f) or die "open $f: $!";
	print $fh $bytes;
	close($fh);
}

sub setup_tables_more
{
	my ($node, $root) = @_;
	my $l = $node->safe_psql('postgres',
		"SELECT location FROM lance_namespace.lance_declare_table(ARRAY['load','w1'])");
	$l =~ s{^file://}{};
	File::Path::make_path("$l/_versions");
	return { 'load$w1' => $l };
}
