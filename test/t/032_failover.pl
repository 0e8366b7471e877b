# Fault: failover to a synchronous standby under load.
#
# A primary with a synchronous standby (synchronous_standby_names); the
# gateway connects with a multi-host conninfo and
# target_session_attrs=read-write.  Under load the primary is stopped
# (immediate) and the standby promoted.  Expected:
#  - meanwhile the gateway answers 503 with Retry-After (the standby is
#    read-only until promoted), then reaches the new primary by itself;
#  - zero acknowledged versions lost: every 200 is on the new primary with
#    the acknowledged manifest;
#  - no version number was ever acknowledged for two different manifests,
#    and every catalog row has its canonical manifest file.
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

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "max_connections = 50\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');
my $node = $primary;

my $root = PostgreSQL::Test::Utils::tempdir('lance_root');
my $work = PostgreSQL::Test::Utils::tempdir('load');
$node->safe_psql('postgres',
	"SELECT lance_namespace.lance_set_root_location('$root')");
my $loc = setup_tables($node, 'postgres', $root, 3);

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'\n");
$primary->reload;
ok( $primary->poll_query_until('postgres',
		q{SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby'}),
	'the standby is synchronous')
  or die 'the standby did not become synchronous; the failover checks need it';

my $gw = LanceGatewayTest::Gateway->start(
	bin   => $bin,
	db    => 'host=' . $primary->host . ',' . $standby->host
	  . ' port=' . $primary->port . ',' . $standby->port
	  . ' dbname=postgres target_session_attrs=read-write connect_timeout=2',
	root  => $root,
	log   => "$PostgreSQL::Test::Utils::log_path/032_gateway.log",
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
note 'stopping the primary (immediate)';
$primary->stop('immediate');

my $http = http_client(timeout => 10, keep_alive => 0);
my $r = $http->get("$url/v1/namespace/load/list");
is($r->{status}, 503, 'an operation gets 503 while there is no primary');
is($r->{headers}{'retry-after'}, '1', '... with Retry-After: 1');
sleep(1);

note 'promoting the standby';
$standby->promote;
$node = $standby;

my $ready = 0;
my $deadline = time() + 30;
while (time() < $deadline)
{
	$r = $http->get("$url/v1/namespace/load/list");
	if ($r->{status} == 200) { $ready = 1; last }
	sleep(0.2);
}
ok($ready, 'the gateway reaches the new primary without a restart');
ok($gw->alive, 'the gateway process survived');

my $res = stop_load($load);
my $v = verify_catalog($node, 'postgres', $loc, $res);
check_no_loss('032_failover', $CLIENTS, $v, $res);
cmp_ok($res->{retry_503}, '>', 0, 'the clients saw 503 during the outage');

is($gw->stop, 0, 'the gateway stops cleanly');
$standby->stop;
done_testing();
