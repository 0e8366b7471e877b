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
use JSON::PP;

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my $LOAD_SECONDS = $ENV{LANCE_FAULT_SECONDS} // 12;
my $CLIENTS = 6;

my $node = PostgreSQL::Test::Cluster->new('gw_crash');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 50\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');

my $root = PostgreSQL::Test::Utils::tempdir('lance_root');
my $work = PostgreSQL::Test::Utils::tempdir('load');
$node->safe_psql('postgres',
	"SELECT lance_namespace.lance_set_root_location('$root')");
my $loc = setup_tables($node, 'postgres', $root, 3);

my $gw = LanceGatewayTest::Gateway->start(
	bin   => $bin,
	db    => 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres',
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

is($gw->stop, 0, 'the gateway stops cleanly');
$node->stop;
done_testing();

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
