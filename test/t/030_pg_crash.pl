# Fault: PostgreSQL crashes under load.
#
# Concurrent HTTP clients commit table versions through the gateway (two
# clients race on each table).  Mid-load the postmaster gets SIGKILL; it is
# restarted once its orphaned backends are gone.  Expected:
#  - while PostgreSQL is down the gateway answers 503 with Retry-After;
#  - it reconnects by itself, and clients that retry the same request
#    (same staging manifest) get their answer;
#  - every version acknowledged with 200 is in the catalog with exactly the
#    acknowledged manifest; no version was acknowledged for two manifests;
#  - every catalog row has its canonical manifest file with the right bytes.
# Bounded: the load runs LOAD_SECONDS, retries stop after a grace period.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use LanceGatewayTest;

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my $LOAD_SECONDS = $ENV{LANCE_FAULT_SECONDS} // 12;
my $CLIENTS = 6;

my ($node, $root, $work, $loc) = fault_cluster('pg_crash');

my $gw = LanceGatewayTest::Gateway->start(
	bin   => $bin,
	db    => 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres',
	root  => $root,
	log   => "$PostgreSQL::Test::Utils::log_path/030_gateway.log",
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

sleep($LOAD_SECONDS / 3);
note 'SIGKILL to the postmaster';
$node->kill9;
# Its backends notice and exit; one that is slow to be scheduled may still
# answer a statement that reached it first (PostgreSQL's behaviour, not the
# gateway's), so the checks below wait until none is left.
{
	my $name = $node->name;
	my $deadline = time() + 30;
	sleep(0.05) while time() < $deadline && `ps -eo args` =~ /^postgres: \Q$name\E: /m;
}

# While it is down: /ready and a real operation both get 503 + Retry-After.
my $http = http_client(timeout => 10, keep_alive => 0);
my $r = $http->get("$url/v1/namespace/load/list");
is($r->{status}, 503, 'an operation gets 503 while PostgreSQL is down');
is($r->{headers}{'retry-after'}, '1', '... with Retry-After: 1');
like($r->{content}, qr/"code":17/, '... and Lance code 17');
$r = $http->get("$url/ready");
is($r->{status}, 503, '/ready is 503 while PostgreSQL is down');
is($http->get("$url/health")->{status}, 200, '/health does not need the database');

sleep(1);
# The orphaned backends notice the postmaster's death and exit; until then
# a new postmaster refuses to start.
my $started = 0;
my $deadline = time() + 60;
while (!$started && time() < $deadline)
{
	# A failed start reads the stale postmaster.pid; forget it again.
	$node->{_pid} = undef;
	$started = $node->start(fail_ok => 1);
	sleep(0.5) unless $started;
}
ok($started, 'PostgreSQL restarted after SIGKILL');

# The gateway reconnects by itself.
my $ready = 0;
$deadline = time() + 30;
while (time() < $deadline)
{
	$r = $http->get("$url/ready");
	if ($r->{status} == 200) { $ready = 1; last }
	sleep(0.2);
}
ok($ready, 'the gateway is ready again without a restart');
ok($gw->alive, 'the gateway process survived');

my $res = stop_load($load);
my $v = verify_catalog($node, 'postgres', $loc, $res);
check_no_loss('030_pg_crash', $CLIENTS, $v, $res);
cmp_ok($res->{retry_503}, '>', 0, 'the clients saw 503 during the outage');

is($gw->stop, 0, 'the gateway stops cleanly');
$node->stop;
done_testing();
