# The change feed: every committed table version is announced on the
# LISTEN/NOTIFY channel lance_namespace_commits with one JSON payload (id,
# table, branch, version, manifest_path, timestamp_millis, transaction_id),
# only once its transaction commits, in commit order, never for rolled-back
# or failed work, and not again for an idempotent repeat of a version.
#
# Phase 1 commits serially from two sessions and checks each payload in
# full.  Phase 2 runs concurrent writers (with rolled-back and failed
# transactions among their commits) and checks that the listener got
# exactly the committed versions, per table in increasing version order,
# and in commit order (commit timestamps never decrease along the feed).
#
# Sessions are plain psql processes driven through IPC::Run, so the test
# does not depend on PostgreSQL::Test::BackgroundPsql.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP;
use Math::BigInt;

my $CHANNEL = 'lance_namespace_commits';
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

my $node = PostgreSQL::Test::Cluster->new('change_feed');
$node->init;
$node->append_conf('postgresql.conf', "track_commit_timestamp = on\n");
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');
$node->safe_psql(
	'postgres', q{
	SELECT lance_namespace.lance_set_root_location('/data/feed');
	SELECT lance_namespace.lance_create_namespace(ARRAY['feed']);
	SELECT lance_namespace.lance_declare_table(ARRAY['feed','a']);
	SELECT lance_namespace.lance_declare_table(ARRAY['feed','b']);
});

# ---------------------------------------------------------------------
# An interactive psql session: send SQL, wait for a marker, collect the
# output (query results and "Asynchronous notification" lines).
# ---------------------------------------------------------------------
my $marker_seq = 0;

sub session_start
{
	my %s = (in => '', out => '', err => '');
	my @cmd = (
		'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0',
		'-d', $node->connstr('postgres'), '-f', '-');
	$s{timer} = IPC::Run::timeout($timeout);
	$s{h} = IPC::Run::start(\@cmd, '<', \$s{in}, '>', \$s{out}, '2>',
		\$s{err}, $s{timer});
	return \%s;
}

# Run $sql in the session and return everything it printed since the last
# call (stdout; stderr in $s->{last_err}).
sub session_run
{
	my ($s, $sql) = @_;
	my $marker = 'sync-' . ++$marker_seq;
	$s->{out} = '';
	$s->{err} = '';
	$s->{in} .= "$sql\n\\echo $marker\n";
	$s->{timer}->start($timeout);
	$s->{h}->pump until $s->{out} =~ /^\Q$marker\E$/m;
	my $out = $s->{out};
	$out =~ s/^\Q$marker\E\n//m;
	$s->{last_err} = $s->{err};
	return $out;
}

sub session_quit
{
	my ($s) = @_;
	$s->{in} .= "\\q\n";
	$s->{h}->finish;
}

# The notifications in a piece of psql output, decoded, in arrival order.
sub notifications
{
	my ($out) = @_;
	my @n;
	while ($out =~
		/^Asynchronous notification "\Q$CHANNEL\E" with payload "(.*)" received from server process with PID \d+\.$/mg
	  )
	{
		push @n, decode_json($1);
	}
	return @n;
}

# The lines of psql output that are not notifications.
sub results
{
	my ($out) = @_;
	return join "\n",
	  grep { !/^Asynchronous notification / } split /\n/, $out;
}

sub v2_path
{
	my ($location, $version) = @_;
	my $name = sprintf('%020s',
		Math::BigInt->new('18446744073709551615')->bsub($version)->bstr);
	return "$location/_versions/$name.manifest";
}

my $listener = session_start();
session_run($listener, "LISTEN $CHANNEL;");

# ---------------------------------------------------------------------
# Phase 1: serial commits, full payloads
# ---------------------------------------------------------------------
my $w1 = session_start();
my $w2 = session_start();

# A version committed in an open transaction is not announced before the
# commit; another session sees that transaction as Running.
my $tx = results(session_run($w1,
	q{BEGIN;
	  SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','a'], 1, '/stage/a1', 11)).version;
	  SELECT lance_namespace.lance_current_transaction_id();}));
my ($v, $tx1) = split /\n/, $tx;
is($v, '1', 'version 1 created in an open transaction');
like($tx1, qr/^\d+$/, 'transaction id is a number');
is( results(session_run(
			$w2,
			"SELECT status FROM lance_namespace.lance_describe_transaction('$tx1');"
		)),
	'Running',
	'another session sees the open transaction as Running');
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'nothing announced before the commit');
session_run($w1, 'COMMIT;');
my @n = notifications(session_run($listener, 'SELECT 1;'));
is(scalar(@n), 1, 'one notification after the commit');
my ($ts) = split /\n/,
  $node->safe_psql('postgres',
	"SELECT timestamp_millis FROM lance_namespace.table_versions WHERE name = 'feed\$a' AND version = 1"
  );
is_deeply(
	$n[0],
	{
		id => [ 'feed', 'a' ],
		table => 'feed$a',
		branch => 'main',
		version => 1,
		manifest_path => v2_path('/data/feed/feed/a.lance', 1),
		timestamp_millis => $ts + 0,
		transaction_id => $tx1,
	},
	'payload of version 1');
is( results(session_run(
			$w2,
			"SELECT status FROM lance_namespace.lance_describe_transaction('$tx1');"
		)),
	'Succeeded',
	'the committed transaction is Succeeded');

# An idempotent repeat of the same version announces nothing; neither does
# a conflicting one, a rolled-back one, or a version in a transaction that
# fails later.
session_run($w1,
	q{SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','a'], 1, '/stage/a1', 11)).version;}
);
session_run($w1,
	q{SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','a'], 1, '/stage/other')).version;}
);
like($w1->{last_err}, qr/already exists/, 'a conflicting version fails');
session_run($w1,
	q{BEGIN;
	  SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','a'], 2, '/stage/a2-rolled-back')).version;
	  ROLLBACK;});
session_run($w1,
	q{BEGIN;
	  SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','a'], 2, '/stage/a2-failed')).version;
	  SELECT 1/0;
	  COMMIT;});
like($w1->{last_err}, qr/division by zero/, 'the failing transaction fails');
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'no notification for repeats, conflicts, rollbacks and failures');

# Serial commits alternating between two sessions: singles, a batch of two
# versions in one transaction, a version on a branch, a BatchCommitTables.
my @expected;    # [table, branch, version, transaction_id]

sub commit_and_expect
{
	my ($s, $sql, @versions) = @_;
	my $out = results(session_run($s,
		"BEGIN;\n$sql\nSELECT 'tx=' || lance_namespace.lance_current_transaction_id();\nCOMMIT;"
	));
	my ($txid) = $out =~ /^tx=(\d+)$/m;
	die "no transaction id in: $out" unless defined $txid;
	push @expected, map { [ @$_, $txid ] } @versions;
	return $txid;
}

commit_and_expect($w2,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','b'], 1, '/stage/b1');},
	[ 'feed$b', 'main', 1 ]);
commit_and_expect($w1,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 2, '/stage/a2');},
	[ 'feed$a', 'main', 2 ]);
commit_and_expect(
	$w2, q{SELECT count(*) FROM lance_namespace.lance_batch_create_table_versions(
	jsonb_build_array(
		jsonb_build_object('id', ARRAY['feed','b'], 'version', 2, 'manifest_path', '/stage/b2'),
		jsonb_build_object('id', ARRAY['feed','a'], 'version', 3, 'manifest_path', '/stage/a3')));},
	[ 'feed$a', 'main', 3 ],
	[ 'feed$b', 'main', 2 ]);
commit_and_expect(
	$w1, q{SELECT lance_namespace.lance_create_table_branch(ARRAY['feed','a'], 'dev/x');
	SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 4, '/stage/a4-dev', branch => 'dev/x');},
	[ 'feed$a', 'dev/x', 4 ]);
commit_and_expect(
	$w2, q{SELECT lance_namespace.lance_batch_commit_tables(jsonb_build_array(
		jsonb_build_object('declare_table', jsonb_build_object('id', ARRAY['feed','c'])),
		jsonb_build_object('create_table_version', jsonb_build_object(
			'id', ARRAY['feed','c'], 'version', 1, 'manifest_path', '/stage/c1')),
		jsonb_build_object('create_table_version', jsonb_build_object(
			'id', ARRAY['feed','b'], 'version', 3, 'manifest_path', '/stage/b3'))));},
	[ 'feed$c', 'main', 1 ],
	[ 'feed$b', 'main', 3 ]);
commit_and_expect($w1,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 4, '/stage/a4');},
	[ 'feed$a', 'main', 4 ]);

@n = notifications(session_run($listener, 'SELECT 1;'));
# Within one transaction the order is the order of the inserts (the batch
# of versions sorts its entries by table); across transactions it is the
# commit order.
is_deeply(
	[ map { [ $_->{table}, $_->{branch}, $_->{version}, $_->{transaction_id} ] } @n ],
	\@expected,
	'phase 1: the committed versions, in commit order, with their transaction ids');
my ($bad) = grep {
	my $p = $_;
	my $loc = $p->{table} eq 'feed$a' ? '/data/feed/feed/a.lance'
	  : $p->{table} eq 'feed$b' ? '/data/feed/feed/b.lance'
	  : '/data/feed/feed/c.lance';
	$loc .= "/tree/$p->{branch}" if $p->{branch} ne 'main';
	!($p->{manifest_path} eq v2_path($loc, $p->{version})
		&& join('$', @{ $p->{id} }) eq $p->{table}
		&& $p->{timestamp_millis} > 0)
} @n;
ok(!defined $bad, 'phase 1: manifest paths, ids and timestamps are right')
  or diag explain $bad;

# lance_namespace.change_feed = off (superuser) stops the announcements;
# the history still records the version.
session_run($w1,
	q{SET lance_namespace.change_feed = off;
	  SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 5, '/stage/a5');
	  RESET lance_namespace.change_feed;});
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'change_feed = off: no notification');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM lance_namespace.commit_history
		   WHERE name = 'feed$a' AND operation = 'CreateTableVersion' AND (detail->>'version')::int = 5}
	),
	'1',
	'change_feed = off: the history has the version');
session_run($w1,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 6, '/stage/a6');});
@n = notifications(session_run($listener, 'SELECT 1;'));
is_deeply([ map { $_->{version} } @n ], [6], 'change_feed back on: announced again');

session_quit($w1);
session_quit($w2);

# ---------------------------------------------------------------------
# Phase 2: concurrent writers
# ---------------------------------------------------------------------
my $nwriters = 8;
my $nversions = 25;
$node->safe_psql('postgres',
	join("\n",
		map { "SELECT lance_namespace.lance_declare_table(ARRAY['feed','w$_']);" }
		  1 .. $nwriters));

my @writers;
foreach my $w (1 .. $nwriters)
{
	my $sql = '';
	foreach my $v (1 .. $nversions)
	{
		$sql .=
		  "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], $v, '/w$w/$v');\n";
		if ($v % 10 == 0)
		{
			# rolled back, and failed on an error
			$sql .= "BEGIN;\n"
			  . "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], 1000 + $v, '/w$w/rb$v');\n"
			  . "ROLLBACK;\n";
			$sql .= "BEGIN;\n"
			  . "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], 2000 + $v, '/w$w/err$v');\n"
			  . "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], $v, '/w$w/conflict');\n"
			  . "COMMIT;\n";
		}
		if ($v % 7 == 0)
		{
			# a repeat of the version just created
			$sql .=
			  "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], $v, '/w$w/$v');\n";
		}
	}
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr('postgres'), '-f', '-'
		],
		'<', \$sql, '>', \$out, '2>', \$err,
		IPC::Run::timeout($timeout));
	push @writers, [ $h, \$out, \$err ];
}
foreach my $wr (@writers)
{
	$wr->[0]->finish;
}
# each writer failed where meant to (the conflicts at versions 10 and 20),
# and nowhere else: no deadlock, no serialization failure
my @errors = map { grep { /ERROR/ } split /\n/, ${ $_->[2] } } @writers;
is(scalar(grep { /version \d+ of table "feed\$w\d+" already exists/ } @errors),
	2 * $nwriters, 'phase 2: the planted conflicts failed');
is(scalar(grep { !/already exists|current transaction is aborted/ } @errors),
	0, 'phase 2: no other errors')
  or diag join "\n", @errors;
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM lance_namespace.table_versions WHERE name LIKE 'feed\$w%'"),
	$nwriters * $nversions,
	'phase 2: every writer committed its versions, and nothing else');

@n = notifications(session_run($listener, 'SELECT 1;'));
is(scalar(@n), $nwriters * $nversions,
	'phase 2: one notification per committed version');
my %seen;
my %last;
my $in_order = 1;
foreach my $p (@n)
{
	my $key = "$p->{table}:$p->{version}";
	$seen{$key}++;
	$in_order = 0
	  if defined $last{ $p->{table} } && $p->{version} <= $last{ $p->{table} };
	$last{ $p->{table} } = $p->{version};
}
is_deeply(
	\%seen,
	{
		map {
			my $w = $_;
			map { ("feed\$w$w:$_" => 1) } 1 .. $nversions
		} 1 .. $nwriters
	},
	'phase 2: exactly the committed versions, each once');
ok($in_order, 'phase 2: per table, versions arrive in increasing order');
ok(!(grep { $_->{version} > $nversions } @n),
	'phase 2: nothing from rolled-back or failed transactions');

# Commit order: the commit timestamps of the notifications' transactions
# never decrease along the feed.
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FILTER (WHERE back OR ts IS NULL) FROM (
		SELECT pg_xact_commit_timestamp(x::xid) AS ts,
		       pg_xact_commit_timestamp(x::xid) < lag(pg_xact_commit_timestamp(x::xid)) OVER (ORDER BY n) AS back
		  FROM unnest(ARRAY[@{[ join ',', map { "'$_->{transaction_id}'" } @n ]}]::text[]) WITH ORDINALITY AS u(x, n)) s
	}),
	'0',
	'phase 2: notifications arrive in commit order');

session_quit($listener);
$node->stop;
done_testing();
