# LanceGatewayTest: helpers shared by the gateway fault and input TAP tests
# (test/t/03x_*.pl).
#
#  - gateway_bin: the built gateway ($LANCE_GATEWAY_BIN, else
#    `pg_config --bindir`/lance-namespace-gateway, else the one in the tree);
#  - Gateway->start / ->kill9 / ->restart / ->stop: a gateway process on
#    127.0.0.1 (port 0 picks a port; a restart keeps it);
#  - setup_tables: namespace "load" with tables t1..tN and their _versions
#    directories;
#  - start_load / stop_load: forked HTTP clients (HTTP::Tiny, core Perl)
#    that commit versions through the gateway until a deadline, retrying
#    503s and connection errors with the same request, and logging every
#    acknowledged version;
#  - verify_catalog: every acknowledged version is in the catalog with the
#    acknowledged manifest, no version was acknowledged for two manifests,
#    and every catalog row has its canonical manifest file with the right
#    bytes;
#  - check_no_loss: the assertions every fault test makes on those results,
#    and its figures for RELIABILITY.md.
#
# Everything is bounded in time: clients stop at their deadline (plus a
# bounded retry budget), and every wait has a timeout.
package LanceGatewayTest;

use strict;
use warnings;

use Exporter 'import';
use File::Path qw(make_path);
use HTTP::Tiny;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_NODELAY);
use JSON::PP;
use Math::BigInt;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils ();
use Time::HiRes qw(time sleep);
use Test::More;

our @EXPORT = qw(gateway_bin http_client raw_http setup_tables fault_cluster start_load
  stop_load verify_catalog check_no_loss canonical_name slurp);

my $json = JSON::PP->new->canonical->allow_nonref;

sub slurp
{
	my ($f) = @_;
	open(my $fh, '<', $f) or return undef;
	local $/;
	my $s = <$fh>;
	close($fh);
	return $s;
}

# The gateway binary, or undef.
sub gateway_bin
{
	my @c;
	push @c, $ENV{LANCE_GATEWAY_BIN} if $ENV{LANCE_GATEWAY_BIN};
	my $bindir = `pg_config --bindir 2>/dev/null`;
	chomp $bindir if defined $bindir;
	push @c, "$bindir/lance-namespace-gateway" if $bindir;
	push @c, "$ENV{TESTDIR}/lance-namespace-gateway" if $ENV{TESTDIR};
	foreach my $b (@c)
	{
		return $b if -x $b;
	}
	return undef;
}

sub http_client
{
	my (%o) = @_;
	return HTTP::Tiny->new(
		timeout    => $o{timeout} // 10,
		keep_alive => $o{keep_alive} // 1,
		agent      => 'lance-tap/1');
}

# One HTTP/1.1 request on a fresh loopback connection, written in one
# piece (HTTP::Tiny writes the head and the body separately, which costs
# a delayed-ACK round trip per request).  Returns an HTTP::Tiny-like
# { status, headers, content }; status 599 when nothing usable came back.
sub raw_http
{
	my ($url, $method, $path, $body, $headers, $timeout) = @_;
	my ($host, $port) = $url =~ m{^http://([^:/]+):(\d+)};
	$timeout //= 20;
	my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port,
		Proto => 'tcp', Timeout => 5);
	return { status => 599, headers => {}, content => "connect: $!" } unless $s;
	setsockopt($s, IPPROTO_TCP, TCP_NODELAY, 1);
	$body //= '';
	my $req = "$method $path HTTP/1.1\r\nHost: $host:$port\r\nConnection: close\r\n";
	foreach my $h (sort keys %{ $headers // {} })
	{
		$req .= "$h: $headers->{$h}\r\n";
	}
	$req .= 'Content-Length: ' . length($body) . "\r\n"
	  if length($body) || $method eq 'POST';
	$req .= "\r\n" . $body;
	my $off = 0;
	while ($off < length($req))
	{
		my $n = syswrite($s, $req, length($req) - $off, $off);
		last unless $n;
		$off += $n;
	}
	my $buf = '';
	my $end = time() + $timeout;
	my $sel = '';
	vec($sel, fileno($s), 1) = 1;
	while (time() < $end)
	{
		my $r = $sel;
		last unless select($r, undef, undef, 0.5) >= 0;
		next unless vec($r, fileno($s), 1);
		my $n = sysread($s, my $chunk, 65536);
		last unless $n;
		$buf .= $chunk;
	}
	close($s);
	my ($head, $content) = split /\r\n\r\n/, $buf, 2;
	return { status => 599, headers => {}, content => 'no reply' }
	  unless defined $head && $head =~ m{^HTTP/1\.[01] (\d{3})};
	my $status = $1;
	my %h;
	foreach my $l (split /\r\n/, $head)
	{
		$h{ lc $1 } = $2 if $l =~ /^([^:]+):\s*(.*)$/;
	}
	return { status => $status, headers => \%h, content => $content // '' };
}

# V2 canonical manifest name of a version: 2^64-1 - version, 20 digits.
sub canonical_name
{
	my ($v) = @_;
	return sprintf('%020s.manifest',
		Math::BigInt->new('18446744073709551615')->bsub($v)->bstr);
}

# Namespace "load" with tables t1..tn; returns { "load\$tK" => location }.
sub setup_tables
{
	my ($node, $db, $root, $n) = @_;
	$node->safe_psql($db,
		"SELECT lance_namespace.lance_create_namespace(ARRAY['load'])");
	my %loc;
	for my $i (1 .. $n)
	{
		my $l = $node->safe_psql($db,
			"SELECT location FROM lance_namespace.lance_declare_table(ARRAY['load','t$i'])"
		);
		$l =~ s{^file://}{};
		make_path("$l/_versions");
		$loc{"load\$t$i"} = $l;
	}
	return \%loc;
}

# A started cluster for a fault test: the extension in database postgres,
# a catalog root and namespace "load" with tables t1..t3.  Returns
# ($node, $root, $work, $loc): $work is a scratch directory for the load's
# clients, $loc as from setup_tables.
sub fault_cluster
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "max_connections = 50\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');

	my $root = PostgreSQL::Test::Utils::tempdir('lance_root');
	my $work = PostgreSQL::Test::Utils::tempdir('load');
	$node->safe_psql('postgres',
		"SELECT lance_namespace.lance_set_root_location('$root')");
	return ($node, $root, $work, setup_tables($node, 'postgres', $root, 3));
}

# ---------------------------------------------------------------------
# Gateway process
# ---------------------------------------------------------------------
package LanceGatewayTest::Gateway;

use Time::HiRes qw(time sleep);

sub start
{
	my ($class, %o) = @_;
	my $self = bless {%o}, $class;
	$self->{port} //= 0;
	$self->_spawn;
	return $self;
}

sub _spawn
{
	my ($self) = @_;
	my $log = $self->{log};
	my $start_size = -s $log // 0;
	my @cmd = (
		$self->{bin}, '--listen', "127.0.0.1:$self->{port}",
		'--db', $self->{db}, '--root', $self->{root},
		@{ $self->{args} // [] });
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDOUT, '>>', $log) or POSIX::_exit(127);
		open(STDERR, '>>&', \*STDOUT) or POSIX::_exit(127);
		exec(@cmd) or POSIX::_exit(127);
	}
	$self->{pid} = $pid;
	my $deadline = time() + 60;
	while (time() < $deadline)
	{
		my $text = LanceGatewayTest::slurp($log) // '';
		$text = substr($text, $start_size);
		if ($text =~ /listening on 127\.0\.0\.1:(\d+)/)
		{
			$self->{port} = $1;
			$self->{url}  = "http://127.0.0.1:$1";
			return;
		}
		if (waitpid($pid, POSIX::WNOHANG()) == $pid)
		{
			die "the gateway exited at start-up:\n$text";
		}
		sleep(0.05);
	}
	die "the gateway did not start within 60 s";
}

sub url { return $_[0]->{url} }
sub pid { return $_[0]->{pid} }

sub alive
{
	my ($self) = @_;
	return 0 unless $self->{pid};
	return waitpid($self->{pid}, POSIX::WNOHANG()) == 0;
}

sub kill9
{
	my ($self) = @_;
	kill 'KILL', $self->{pid};
	waitpid($self->{pid}, 0);
	$self->{pid} = undef;
}

sub restart
{
	my ($self) = @_;
	my $deadline = time() + 30;
	for (;;)
	{
		my $ok = eval { $self->_spawn; 1 };
		return if $ok;
		die $@ if time() > $deadline;
		sleep(0.2);    # the port may still be held briefly
	}
}

# SIGTERM, wait up to 30 s, then SIGKILL; returns the exit status.
sub stop
{
	my ($self) = @_;
	return undef unless $self->{pid};
	kill 'TERM', $self->{pid};
	my $deadline = time() + 30;
	while (time() < $deadline)
	{
		my $r = waitpid($self->{pid}, POSIX::WNOHANG());
		if ($r == $self->{pid})
		{
			$self->{pid} = undef;
			return $?;
		}
		sleep(0.05);
	}
	kill 'KILL', $self->{pid};
	waitpid($self->{pid}, 0);
	$self->{pid} = undef;
	return -1;
}

sub DESTROY
{
	my ($self) = @_;
	if ($self->{pid} && $self->{owner} && $self->{owner} == $$)
	{
		kill 'KILL', $self->{pid};
		waitpid($self->{pid}, 0);
	}
}

package LanceGatewayTest;

# ---------------------------------------------------------------------
# Load: forked clients committing versions
# ---------------------------------------------------------------------

# Expected bytes of the manifest whose staging path (absolute) is $staging.
sub manifest_bytes
{
	my ($staging) = @_;
	my $base = $staging;
	$base =~ s{.*/}{};
	return "lance-tap manifest $base\n" . ('x' x (length($base) % 97)) . "\n";
}

# One client: commits versions of its tables until $deadline.  Tables are
# shared between clients, so they race for version numbers; a 409 moves on
# to the next number.  A 503 or a connection error retries the same request
# (same staging file) until it resolves or $deadline + $grace passes.
sub _client
{
	my (%o) = @_;
	my @tables = @{ $o{tables} };
	my %next = map { $_ => 1 } @tables;
	open(my $out, '>>', $o{out}) or die "open $o{out}: $!";
	$out->autoflush(1);
	my $seq = 0;
	srand($$ ^ int(time() * 1000));
	while (time() < $o{deadline})
	{
		my $t = $tables[ $seq % @tables ];
		my $v = $next{$t};
		my $loc = $o{loc}->{$t};
		my $staging = sprintf('%s/_versions/%s-%08x-%04x-4000-8000-%012d',
			$loc, canonical_name($v), $$, $seq & 0xffff, int(rand(1e12)));
		$seq++;
		open(my $fh, '>', $staging) or die "open $staging: $!";
		print $fh manifest_bytes($staging);
		close($fh);
		(my $rel = $staging) =~ s{^/}{};
		my $body = $json->encode({ version => $v, manifest_path => $rel });
		my $giveup = $o{deadline} + $o{grace};
		my $tries = 0;
		for (;;)
		{
			my $r = raw_http($o{url_of}->(), 'POST',
				'/v1/table/' . ($t =~ s/\$/%24/r) . '/version/create',
				$body, { 'Content-Type' => 'application/json' }, 15);
			my $st = $r->{status};
			$tries++;
			if ($st == 200)
			{
				my $res = eval { $json->decode($r->{content}) };
				my $mp = $res ? $res->{version}{manifest_path} // '' : '';
				print $out "ACK\t$t\t$v\t$staging\t$mp\t$tries\n";
				$next{$t} = $v + 1;
				last;
			}
			if ($st == 409)
			{
				print $out "CONFLICT\t$t\t$v\t$staging\n";
				unlink $staging;
				$next{$t} = $v + 1;
				last;
			}
			if ($st == 503 || $st == 599)
			{
				my $ra = $r->{headers}{'retry-after'};
				print $out "RETRY\t$st\t" . (defined $ra ? $ra : '-') . "\t$t\t$v\n";
				if (time() > $giveup)
				{
					print $out "UNRESOLVED\t$t\t$v\t$staging\n";
					last;
				}
				sleep(0.05 + rand(0.15));
				next;
			}
			my $c = $r->{content} // '';
			$c =~ s/\s+/ /g;
			print $out "UNEXPECTED\t$st\t$t\t$v\t$staging\t" . substr($c, 0, 300) . "\n";
			$next{$t} = $v + 1;
			last;
		}
	}
	close($out);
}

# Start $n clients over the tables of $loc for $seconds.  $url_of is a
# closure returning the gateway's base URL (it survives restarts on the
# same port).  Returns a handle for stop_load.
sub start_load
{
	my (%o) = @_;
	my @tables = sort keys %{ $o{loc} };
	my $deadline = time() + $o{seconds};
	my @pids;
	for my $i (1 .. $o{clients})
	{
		my $out = "$o{dir}/client-$i.log";
		unlink $out;
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			# Each client works on two neighbouring tables, so every table
			# has two racing writers.
			my @mine = ($tables[ ($i - 1) % @tables ], $tables[ $i % @tables ]);
			eval {
				_client(
					tables   => \@mine,
					loc      => $o{loc},
					url_of   => $o{url_of},
					deadline => $deadline,
					grace    => $o{grace} // 60,
					out      => $out);
			};
			print STDERR "client $i: $@" if $@;
			POSIX::_exit($@ ? 1 : 0);
		}
		push @pids, $pid;
	}
	return { pids => \@pids, dir => $o{dir}, clients => $o{clients},
		deadline => $deadline, grace => $o{grace} // 60 };
}

# Wait for the clients (bounded) and parse their logs.
sub stop_load
{
	my ($h) = @_;
	my $limit = $h->{deadline} + $h->{grace} + 30;
	foreach my $pid (@{ $h->{pids} })
	{
		while (waitpid($pid, POSIX::WNOHANG()) == 0)
		{
			if (time() > $limit)
			{
				kill 'KILL', $pid;
				waitpid($pid, 0);
				last;
			}
			sleep(0.1);
		}
	}
	my %r = (acks => [], conflicts => 0, retries => 0, retry_503 => 0,
		retry_503_no_header => 0, unexpected => [], unresolved => []);
	for my $i (1 .. $h->{clients})
	{
		open(my $fh, '<', "$h->{dir}/client-$i.log") or next;
		while (my $l = <$fh>)
		{
			chomp $l;
			my @f = split /\t/, $l;
			if ($f[0] eq 'ACK')
			{
				push @{ $r{acks} },
				  { table => $f[1], version => $f[2], staging => $f[3],
					reply_path => $f[4] };
			}
			elsif ($f[0] eq 'CONFLICT') { $r{conflicts}++ }
			elsif ($f[0] eq 'RETRY')
			{
				$r{retries}++;
				if ($f[1] == 503)
				{
					$r{retry_503}++;
					$r{retry_503_no_header}++ if $f[2] eq '-';
				}
			}
			elsif ($f[0] eq 'UNEXPECTED') { push @{ $r{unexpected} }, $l }
			elsif ($f[0] eq 'UNRESOLVED') { push @{ $r{unresolved} }, $l }
		}
		close($fh);
	}
	return \%r;
}

# Compare the catalog with what the clients were told.  Returns a hash of
# counts; the caller asserts on them.
sub verify_catalog
{
	my ($node, $db, $loc, $load) = @_;
	my %res = (acked => scalar @{ $load->{acks} }, lost => 0, wrong => 0,
		double_ack => 0, rows => 0, missing_file => 0, bad_file => 0,
		orphan_canonical => 0, leftover_tmp => 0, details => []);
	my $out = $node->safe_psql($db,
		q{SELECT name, version, manifest_path, staging_manifest_path,
				 coalesce(manifest_size, -1)
			FROM lance_namespace.table_versions WHERE branch = 'main'
			ORDER BY 1, 2});
	my %row;
	foreach my $l (split /\n/, $out)
	{
		my ($t, $v, $mp, $sp, $sz) = split /\|/, $l;
		$row{"$t\t$v"} = { manifest => $mp, staging => $sp, size => $sz };
	}
	$res{rows} = scalar keys %row;

	my %acked;
	foreach my $a (@{ $load->{acks} })
	{
		my $k = "$a->{table}\t$a->{version}";
		if (exists $acked{$k} && $acked{$k} ne $a->{staging})
		{
			$res{double_ack}++;
			push @{ $res{details} }, "version acknowledged for two manifests: $k";
		}
		$acked{$k} = $a->{staging};
		if (!exists $row{$k})
		{
			$res{lost}++;
			push @{ $res{details} }, "acknowledged version missing: $k";
		}
		elsif ($row{$k}{staging} ne $a->{staging})
		{
			$res{wrong}++;
			push @{ $res{details} },
			  "acknowledged $k as $a->{staging}, catalog has $row{$k}{staging}";
		}
	}

	my %canon_rows;
	foreach my $k (sort keys %row)
	{
		my $r = $row{$k};
		my $f = $r->{manifest};
		$f =~ s{^file://}{};
		$canon_rows{$f} = 1;
		my $bytes = slurp($f);
		if (!defined $bytes)
		{
			$res{missing_file}++;
			push @{ $res{details} }, "no canonical manifest file for $k: $f";
			next;
		}
		if ($bytes ne manifest_bytes($r->{staging})
			|| ($r->{size} >= 0 && $r->{size} != length($bytes)))
		{
			$res{bad_file}++;
			push @{ $res{details} }, "canonical manifest of $k has other bytes";
		}
	}
	foreach my $t (sort keys %$loc)
	{
		my $d = "$loc->{$t}/_versions";
		opendir(my $dh, $d) or next;
		foreach my $e (readdir $dh)
		{
			if ($e =~ /^\d{20}\.manifest$/ && !$canon_rows{"$d/$e"})
			{
				$res{orphan_canonical}++;
			}
			$res{leftover_tmp}++ if $e =~ /^\.gw-.*\.tmp$/;
		}
		closedir($dh);
	}
	return \%res;
}


# check_no_loss($test, $clients, $v, $res): note the figures of a fault run
# (verify_catalog's $v, stop_load's $res) and assert that nothing was lost:
# every acknowledged version is present with its manifest, none was
# acknowledged twice, every row has its file, every request resolved and
# every 503 carried Retry-After.
sub check_no_loss
{
	my ($test, $clients, $v, $res) = @_;

	note sprintf(
		'acknowledged %d, catalog rows %d, conflicts %d, retries %d (503: %d), orphan canonical files %d, leftover tmp files %d',
		$v->{acked}, $v->{rows}, $res->{conflicts}, $res->{retries},
		$res->{retry_503}, $v->{orphan_canonical}, $v->{leftover_tmp});
	note $_ foreach @{ $v->{details} };
	note $_ foreach @{ $res->{unexpected} }, @{ $res->{unresolved} };

	cmp_ok($v->{acked}, '>', 20, 'the clients committed versions');
	is($res->{retry_503_no_header}, 0, 'every 503 carried Retry-After');
	is($v->{lost}, 0, 'no acknowledged version was lost');
	is($v->{wrong}, 0, 'every acknowledged version has the acknowledged manifest');
	is($v->{double_ack}, 0, 'no version was acknowledged for two manifests');
	is($v->{missing_file}, 0, 'every catalog row has its canonical manifest');
	is($v->{bad_file}, 0, 'every canonical manifest has the committed bytes');
	is(scalar @{ $res->{unexpected} }, 0, 'no unexpected status');
	is(scalar @{ $res->{unresolved} }, 0, 'every request resolved');

	diag sprintf('%s: %d clients, %d acknowledged versions, %d retries (503: %d), lost %d, orphans %d',
		$test, $clients, $v->{acked}, $res->{retries}, $res->{retry_503}, $v->{lost},
		$v->{orphan_canonical})
	  if $ENV{LANCE_RELIABILITY_FIGURES};
	return;
}

1;
