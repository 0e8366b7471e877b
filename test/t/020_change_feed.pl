# The change feed, both ways of reading it.
#
# NOTIFY (lance_namespace.notify_commits = on; off by default): every
# committed table version is announced on the LISTEN/NOTIFY channel
# lance_namespace_commits with one JSON payload (id, table, branch,
# version, manifest_path, timestamp_millis, transaction_id), only once its
# transaction commits, in commit order, never for rolled-back or failed
# work, and not again for an idempotent repeat of a version.
#
# The outbox (lance_changes(since), which needs no setting): the versions
# whose transactions became visible between the snapshot "since" and the
# call's own ("cursor"); passing each cursor back as the next since, every
# committed version arrives exactly once, a long transaction's only after
# it commits, with the payload NOTIFY would send.
#
# The default sends no notification.  Phase 1 commits serially from two
# sessions and checks each payload in full.  The outbox phase commits
# serially around a transaction left open across polls and polls
# lance_changes.  Phase 2 runs concurrent writers (with rolled-back, failed
# and slow transactions among their commits) while a reader polls
# lance_changes, and checks that the listener and the reader each got
# exactly the committed versions, per table in increasing version order,
# the listener in commit order (commit timestamps never decrease along the
# feed).
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
	SELECT lance_namespace.lance_declare_table(ARRAY['feed','quiet']);
	SELECT lance_namespace.lance_declare_table(ARRAY['feed','oa']);
	SELECT lance_namespace.lance_declare_table(ARRAY['feed','ob']);
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
# call (stdout; stderr in $s->{last_err}).  The marker goes to both streams:
# they are separate pipes, so the one on stdout alone can be read before an
# error psql wrote to stderr just ahead of it.  Each counts once its newline
# has come (psql may write the two apart).
sub session_run
{
	my ($s, $sql) = @_;
	my $marker = 'sync-' . ++$marker_seq;
	$s->{out} = '';
	$s->{err} = '';
	$s->{in} .= "$sql\n\\echo $marker\n\\warn $marker\n";
	$s->{timer}->start($timeout);
	$s->{h}->pump
	  until $s->{out} =~ /^\Q$marker\E\n/m && $s->{err} =~ /^\Q$marker\E\n/m;
	my $out = $s->{out};
	$out =~ s/^\Q$marker\E\n//m;
	($s->{last_err} = $s->{err}) =~ s/^\Q$marker\E\n//m;
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
# The default: lance_namespace.notify_commits is off, nothing is announced
# ---------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
	SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','quiet'], 1, '/stage/q1')).version;
	SHOW lance_namespace.notify_commits;}),
	"1\noff",
	'notify_commits is off by default');
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'notify_commits off by default: no notification');

# Turn it on for the sessions started from here on (all the writers below);
# a new connection that shows it on proves the reload was done.
$node->append_conf('postgresql.conf', "lance_namespace.notify_commits = on\n");
$node->reload;
$node->poll_query_until('postgres', 'SHOW lance_namespace.notify_commits', 'on')
  or die 'notify_commits = on was not loaded';
$node->safe_psql('postgres',
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','quiet'], 2, '/stage/q2');});
# only the version committed with it on: the one before was never queued
is_deeply(
	[
		map { "$_->{table}:$_->{version}" }
		  notifications(session_run($listener, 'SELECT 1;'))
	],
	['feed$quiet:2'],
	'notify_commits = on in postgresql.conf: announced');

# In session $s, create version $v of table feed$t twice, in a transaction
# that rolls back and in one that fails (its COMMIT rolls back): neither
# may be announced or returned.
sub rolled_back_and_failed
{
	my ($s, $t, $v) = @_;
	my $create = "SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','$t'], $v, '/stage/$t$v-%s')).version;";
	session_run($s, 'BEGIN; ' . sprintf($create, 'rolled-back') . ' ROLLBACK;');
	session_run($s, 'BEGIN; ' . sprintf($create, 'failed') . ' SELECT 1/0; COMMIT;');
}

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
rolled_back_and_failed($w1, 'a', 2);
like($w1->{last_err}, qr/division by zero/, 'the failing transaction fails');
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'no notification for repeats, conflicts, rollbacks and failures');

# Serial commits alternating between two sessions: singles, a batch of two
# versions in one transaction, a version on a branch, a BatchCommitTables.
my @expected;    # [table, branch, version, transaction_id]

# Run $sql in one transaction of session $s; return its transaction id.
sub commit_tx
{
	my ($s, $sql) = @_;
	my $out = results(session_run($s,
		"BEGIN;\n$sql\nSELECT 'tx=' || lance_namespace.lance_current_transaction_id();\nCOMMIT;"
	));
	my ($txid) = $out =~ /^tx=(\d+)$/m;
	die "no transaction id in: $out" unless defined $txid;
	return $txid;
}

sub commit_and_expect
{
	my ($s, $sql, @versions) = @_;
	my $txid = commit_tx($s, $sql);
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

# lance_namespace.notify_commits = off (superuser) in a session stops its
# announcements; the history still records the version.
session_run($w1,
	q{SET lance_namespace.notify_commits = off;
	  SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 5, '/stage/a5');
	  RESET lance_namespace.notify_commits;});
is(scalar(notifications(session_run($listener, 'SELECT 1;'))),
	0, 'notify_commits = off: no notification');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM lance_namespace.commit_history
		   WHERE name = 'feed$a' AND operation = 'CreateTableVersion' AND (detail->>'version')::int = 5}
	),
	'1',
	'notify_commits = off: the history has the version');
session_run($w1,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','a'], 6, '/stage/a6');});
@n = notifications(session_run($listener, 'SELECT 1;'));
is_deeply([ map { $_->{version} } @n ], [6], 'notify_commits back on (RESET): announced again');

# ---------------------------------------------------------------------
# The outbox: lance_changes(since), polled with the last cursor, serial
# ---------------------------------------------------------------------
my $json = JSON::PP->new->canonical;
my @cursor_mismatch;    # polls whose rows disagree on the cursor
my @column_mismatch;    # rows whose columns disagree with their payload

# One poll: a single lance_changes call from the cursor in $$cursor, as a
# client does it.  Each row: the since passed, the cursor, the columns (as
# JSON) and the decoded payload.  When rows came, the cursor moves to
# theirs; with none, the old cursor stays valid.
sub poll_changes
{
	my ($s, $cursor) = @_;
	my $since = $$cursor;
	my $out = session_run($s, qq{
	SELECT c.cursor,
	       json_build_object('transaction_id', c.transaction_id::text, 'id', c.id,
	                         'branch', c.branch, 'version', c.version,
	                         'manifest_path', c.manifest_path, 'timestamp_millis', c.timestamp_millis),
	       c.payload
	  FROM lance_namespace.lance_changes('$since') c;});
	die "lance_changes failed: $s->{last_err}" if $s->{last_err} ne '';
	my @rows;
	foreach my $line (grep { $_ ne '' } split /\n/, results($out))
	{
		my ($cur, $cols, $payload) = split /\|/, $line, 3;
		push @rows,
		  {
			since => $since,
			cursor => $cur,
			cols => decode_json($cols),
			payload => decode_json($payload)
		  };
	}
	return @rows unless @rows;
	push @cursor_mismatch, $since
	  if grep { $_->{cursor} ne $rows[0]{cursor} } @rows;
	foreach my $r (@rows)
	{
		my %p = %{ $r->{payload} };
		my $table = delete $p{table};
		push @column_mismatch, $r
		  unless $json->encode(\%p) eq $json->encode($r->{cols})
		  && $table eq join('$', @{ $p{id} });
	}
	$$cursor = $rows[0]{cursor};
	return @rows;
}

sub keys_of { return [ map { "$_->{payload}{table}:$_->{payload}{version}" } @_ ]; }

# The transaction ids a snapshot (xmin:xmax:xip,...) lists as in progress.
sub in_progress
{
	my ($snapshot) = @_;
	my (undef, undef, $xip) = split /:/, $snapshot;
	return split /,/, ($xip // '');
}

# The reader polls in autocommit mode; it starts from the current snapshot.
my $reader = session_start();
my $c0 = results(session_run($reader, 'SELECT pg_current_snapshot();'));
like($c0, qr/^\d+:\d+:[\d,]*$/, 'outbox: the first cursor');
my $cursor = $c0;
my @outbox;

# Writer A (w1, notify_commits on from postgresql.conf): a version in a
# transaction left open.  It has its transaction id before B's commits
# below, so its id is the older one.
my ($txa, $va) = split /\n/,
  results(session_run($w1,
	q{BEGIN;
	  SELECT lance_namespace.lance_current_transaction_id();
	  SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','oa'], 1, '/stage/oa1')).version;}));
is($va, '1', 'outbox: A created a version in an open transaction');
# Writer B (w2) with notify_commits off: the outbox does not need NOTIFY.
session_run($w2, 'SET lance_namespace.notify_commits = off;');
my $txb1 = commit_tx($w2,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','ob'], 1, '/stage/ob1');});
ok($txa < $txb1, 'outbox: A\'s open transaction is older than B\'s commit');

my @r = poll_changes($reader, \$cursor);
push @outbox, @r;
is_deeply(keys_of(@r), ['feed$ob:1'],
	'outbox: the poll returns B\'s committed version, not A\'s open one');
ok((grep { $_ eq $txa } in_progress($cursor)),
	'outbox: the new cursor lists A\'s transaction as in progress');

# Nothing for a rolled-back version, one in a transaction that fails, an
# idempotent repeat or a conflicting version; A is still open.
rolled_back_and_failed($w2, 'ob', 2);
like($w2->{last_err}, qr/division by zero/, 'outbox: the failing transaction fails');
session_run($w2,
	q{SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','ob'], 1, '/stage/ob1')).version;});
is($w2->{last_err}, '', 'outbox: the idempotent repeat succeeds');
session_run($w2,
	q{SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','ob'], 1, '/stage/ob1-other')).version;});
like($w2->{last_err}, qr/already exists/, 'outbox: the conflicting version fails');
is(scalar(poll_changes($reader, \$cursor)),
	0, 'outbox: nothing for rollbacks, failures, repeats and conflicts');
my $txb2 = commit_tx($w2,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','ob'], 2, '/stage/ob2');});
@r = poll_changes($reader, \$cursor);
push @outbox, @r;
is_deeply(keys_of(@r), ['feed$ob:2'],
	'outbox: the next poll returns B\'s next version only');
ok((grep { $_ eq $txa } in_progress($cursor)),
	'outbox: A is still in progress in the newer cursor');

# A commits: its version arrives in the next poll, once.
session_run($w1, 'COMMIT;');
@r = poll_changes($reader, \$cursor);
push @outbox, @r;
is_deeply(keys_of(@r), ['feed$oa:1'],
	'outbox: A\'s version arrives in the first poll after its commit');
ok((grep { $_ eq $txa } in_progress($r[0]{since})),
	'outbox: it came from the in-progress list of the cursor passed');
is(scalar(poll_changes($reader, \$cursor)), 0, 'outbox: then nothing');

# Each payload has the values DescribeTableVersion gives, and the
# transaction id of the transaction that created the version.
my %txof = ('feed$oa:1' => $txa, 'feed$ob:1' => $txb1, 'feed$ob:2' => $txb2);
foreach my $row (@outbox)
{
	my $p = $row->{payload};
	my ($t) = $p->{table} =~ /^feed\$(\w+)$/;
	my ($path, $ts) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT manifest_path, timestamp_millis FROM lance_namespace.lance_describe_table_version(ARRAY['feed','$t'], $p->{version})"
	  );
	is_deeply(
		$p,
		{
			id => [ 'feed', $t ],
			table => "feed\$$t",
			branch => 'main',
			version => $p->{version},
			manifest_path => $path,
			timestamp_millis => $ts + 0,
			transaction_id => $txof{"$p->{table}:$p->{version}"},
		},
		"outbox: payload of $p->{table} version $p->{version}");
	is($path, v2_path("/data/feed/feed/$t.lance", $p->{version}),
		"outbox: manifest path of $p->{table} version $p->{version}");
}

# A client restarting from a saved cursor gets the same versions again,
# each once, in insert order: A's (inserted first, committed last) first.
my $again = $c0;
is_deeply(keys_of(poll_changes($reader, \$again)),
	[ 'feed$oa:1', 'feed$ob:1', 'feed$ob:2' ],
	'outbox: from the first cursor, every version once, in insert order');

# A poll made inside a transaction does not return that transaction's own
# uncommitted version; once it commits, a poll from the cursor that poll
# returned must.  (B commits in between, so that the snapshot's xmax
# passes A's transaction id.)
my $cw = $cursor;
session_run($w1,
	q{BEGIN;
	  SELECT (lance_namespace.lance_create_table_version(ARRAY['feed','oa'], 2, '/stage/oa2')).version;});
commit_tx($w2,
	q{SELECT lance_namespace.lance_create_table_version(ARRAY['feed','ob'], 3, '/stage/ob3');});
is_deeply(keys_of(poll_changes($w1, \$cw)), ['feed$ob:3'],
	'outbox: a poll in a transaction leaves out its own uncommitted version');
session_run($w1, 'COMMIT;');
# pg_current_snapshot() never lists the current transaction as in
# progress; lance_changes_cursor() does, so that cursor did not count this
# transaction as seen, and its version arrives once it has committed.
is_deeply(keys_of(poll_changes($reader, \$cw)), ['feed$oa:2'],
	'outbox: after its commit, the own version arrives from that cursor');
# the reader's own cursor gets both
is_deeply(keys_of(poll_changes($reader, \$cursor)), [ 'feed$oa:2', 'feed$ob:3' ],
	'outbox: the reader gets both, in insert order');

# NOTIFY sent the same payload for A's versions (w1 has notify_commits
# on) and nothing for B's (w2 has it off).
my @oa_payloads = map { $_->{payload} } grep { $_->{payload}{table} eq 'feed$oa' } @outbox;
@n = notifications(session_run($listener, 'SELECT 1;'));
is_deeply(
	[ map { "$_->{table}:$_->{version}" } @n ],
	[ 'feed$oa:1', 'feed$oa:2' ],
	'outbox: NOTIFY announced only the versions of the session with notify_commits on');
is_deeply($n[0], $oa_payloads[0], 'outbox: the NOTIFY payload is the outbox payload');

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

# The reader's cursor, taken before the writers start.
my $pcursor = results(session_run($reader, 'SELECT pg_current_snapshot();'));

my @writers;
foreach my $w (1 .. $nwriters)
{
	my $sql = '';
	foreach my $v (1 .. $nversions)
	{
		if ($v % 5 == 3)
		{
			# a slow transaction: the reader's polls see it in progress
			# while the other writers commit newer ones
			$sql .= "BEGIN;\n"
			  . "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], $v, '/w$w/$v');\n"
			  . "SELECT pg_sleep(0.02);\n"
			  . "COMMIT;\n";
		}
		else
		{
			$sql .=
			  "SELECT lance_namespace.lance_create_table_version(ARRAY['feed','w$w'], $v, '/w$w/$v');\n";
		}
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
	# psql runs its input in order: this line means the writer is done
	$sql .= "\\echo writer-done\n";
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

# Meanwhile the reader polls lance_changes, passing the last cursor, until
# every writer is done; the poll after that is the last one.
my @polled;
my ($polls, $polls_with_rows) = (0, 0);
while (1)
{
	my $done = 1;
	foreach my $wr (@writers)
	{
		$wr->[0]->pump_nb if $wr->[0]->pumpable;
		$done = 0 unless ${ $wr->[1] } =~ /^writer-done$/m;
	}
	my @rows = poll_changes($reader, \$pcursor);
	$polls++;
	$polls_with_rows++ if @rows;
	push @polled, @rows;
	last if $done;
}
foreach my $wr (@writers)
{
	$wr->[0]->finish;
}
note "phase 2: $polls polls, $polls_with_rows with rows";
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
# How often each (table, version) came in a list of payloads, and whether
# each table's versions came in increasing order.
sub tally
{
	my (%seen, %last);
	my $in_order = 1;
	foreach my $p (@_)
	{
		$seen{"$p->{table}:$p->{version}"}++;
		$in_order = 0
		  if defined $last{ $p->{table} } && $p->{version} <= $last{ $p->{table} };
		$last{ $p->{table} } = $p->{version};
	}
	return (\%seen, $in_order);
}
# every version the writers committed, once
my %committed = map {
	my $w = $_;
	map { ("feed\$w$w:$_" => 1) } 1 .. $nversions
} 1 .. $nwriters;
my ($seen, $in_order) = tally(@n);
is_deeply($seen, \%committed, 'phase 2: exactly the committed versions, each once');
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

# The reader got the same: every committed version exactly once, per
# table in increasing version order, with the payload NOTIFY sent.
is(scalar(@polled), $nwriters * $nversions,
	'phase 2 outbox: one row per committed version');
my ($pseen, $pin_order) = tally(map { $_->{payload} } @polled);
is_deeply($pseen, \%committed, 'phase 2 outbox: exactly the committed versions, each once');
ok($pin_order, 'phase 2 outbox: per table, versions arrive in increasing order');
my $by_key = sub { "$a->{table}:$a->{version}" cmp "$b->{table}:$b->{version}" };
is_deeply(
	[ sort $by_key map { $_->{payload} } @polled ],
	[ sort $by_key @n ],
	'phase 2 outbox: the payloads are the NOTIFY payloads');
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FROM json_to_recordset(\$j\$@{[ encode_json([ map { $_->{payload} } @polled ]) ]}\$j\$)
	         AS p("table" text, branch text, version bigint, manifest_path text, timestamp_millis bigint)
	  LEFT JOIN lance_namespace.table_versions v
	    ON v.name = p."table" AND v.branch = p.branch AND v.version = p.version
	 WHERE v.manifest_path IS DISTINCT FROM p.manifest_path
	    OR v.timestamp_millis IS DISTINCT FROM p.timestamp_millis}),
	'0',
	'phase 2 outbox: manifest paths and timestamps are those of the versions');
# The polls overlapped the writers, and some versions came from
# transactions the cursor passed listed as in progress (they committed
# after it was taken, while transactions with newer ids had committed
# before): the case a plain "transaction id above the last one seen"
# cursor would lose.
cmp_ok($polls_with_rows, '>=', 2, 'phase 2 outbox: several polls returned versions');
my $late = grep {
	my $r = $_;
	grep { $_ eq $r->{payload}{transaction_id} } in_progress($r->{since})
} @polled;
cmp_ok($late, '>', 0,
	'phase 2 outbox: versions of transactions in progress at the cursor passed arrived later');
note "phase 2: $late versions came from the in-progress list of the cursor passed";

# Every poll, serial and concurrent: one cursor per poll, and columns that
# agree with the payload.
is(scalar(@cursor_mismatch), 0, 'outbox: the rows of one poll share one cursor');
is(scalar(@column_mismatch), 0, 'outbox: the columns agree with the payload')
  or diag explain $column_mismatch[0];

session_quit($reader);
session_quit($listener);
$node->stop;
done_testing();
