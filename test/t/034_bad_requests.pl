# Bad input against a running gateway: a sweep of malformed requests and
# the gateway's limits.
#
# Sweep: every route gets bad path ids (bad percent-encoding, NUL, invalid
# UTF-8, empty segments, "/" "." "..", long names), bad query parameters,
# bad bodies (malformed JSON, duplicate keys, non-objects, deep nesting,
# wrong types, NUL, invalid UTF-8), wrong methods, and a few thousand
# seeded random mutations of valid bodies.  Mutating routes only target
# ids under a namespace that does not exist.  Expected: zero crashes, zero
# 5xx, every reply is a JSON error whose code matches its HTTP status, and
# the catalog tables are byte-for-byte unchanged (checksums).
#
# Limits (each with a clear status): body size 413, header size 431,
# request target 414, JSON depth 400/13, batch entries and ranges 400/13;
# a client trickling its body is cut off after --request-timeout, an idle
# connection closed after --idle-timeout.
#
# Protocol-level garbage (malformed request lines, unsupported HTTP
# versions, bad header lines, bad or conflicting Content-Length and
# Transfer-Encoding, bad chunked framing, truncated bodies, garbage after
# a good request on a kept-alive connection): HTTP itself is
# libmicrohttpd's, so each gets either the library's 4xx (or 505) and a
# closed connection, or, where the library reads it as a request, the
# gateway's JSON answer; never a 5xx, and the gateway serves /health
# after each one.  The gateway's own limits on a request's head are JSON
# errors with code 13, and the connection is closed after them.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IO::Socket::INET;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use LanceGatewayTest;

my $bin = gateway_bin();
plan skip_all => 'lance-namespace-gateway not found' unless $bin;

my $SWEEP = $ENV{LANCE_SWEEP_REQUESTS} // 3000;
my $json = JSON::PP->new->canonical->allow_nonref;

my $node = PostgreSQL::Test::Cluster->new('bad_requests');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION lance_namespace');
my $root = PostgreSQL::Test::Utils::tempdir('lance_root');
$node->safe_psql('postgres',
	"SELECT lance_namespace.lance_set_root_location('$root')");
my $loc = setup_tables($node, 'postgres', $root, 1);
my $tloc = $loc->{'load$t1'};
$node->safe_psql('postgres', qq{
	SELECT lance_namespace.lance_create_table_version(ARRAY['load','t1'], 1,
		'$tloc/_versions/18446744073709551614.manifest-x', 10);
	SELECT lance_namespace.lance_create_table_tag(ARRAY['load','t1'], 'v1', 1);
	SELECT lance_namespace.lance_create_table_branch(ARRAY['load','t1'], 'b1');
});

my $gw = LanceGatewayTest::Gateway->start(
	bin  => $bin,
	db   => 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres',
	root => $root,
	log  => "$PostgreSQL::Test::Utils::log_path/034_gateway.log",
	args => [
		'--quiet',                      '--max-body-bytes',
		'65536',                        '--max-url-bytes',
		'4096',                         '--max-header-bytes',
		'8192',                         '--max-batch-entries',
		'100',                          '--request-timeout',
		'3',                            '--idle-timeout',
		'3'
	],
	owner => $$);
my $url = $gw->url;
my ($port) = $url =~ /:(\d+)$/;
my $http = http_client(timeout => 20);

sub checksum
{
	return $node->safe_psql('postgres', q{
		SELECT string_agg(t || ':' || h, ' ' ORDER BY t) FROM (
		  SELECT 'entries' t, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) h FROM lance_namespace.entries x
		  UNION ALL SELECT 'versions', md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM lance_namespace.versions x
		  UNION ALL SELECT 'branches', md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM lance_namespace.branches x
		  UNION ALL SELECT 'tags', md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM lance_namespace.tags x
		  UNION ALL SELECT 'settings', md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM lance_namespace.settings x
		  UNION ALL SELECT 'history', md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM lance_namespace.history x) s});
}
my $before = checksum();

# Lance code -> HTTP status (src/gateway/README.md).
sub status_for_code
{
	my ($c) = @_;
	return 406 if $c == 0;
	return 404 if grep { $c == $_ } 1, 4, 6, 8, 10, 11, 12, 22;
	return 409 if grep { $c == $_ } 2, 3, 5, 7, 9, 14, 19, 23;
	return 400 if $c == 13 || $c == 20;
	return 403 if $c == 15;
	return 401 if $c == 16;
	return 503 if $c == 17;
	return 429 if $c == 21;
	return 500;
}

my %stats = (requests => 0, fivexx => 0, not_json => 0, bad_code => 0, ok => 0);
my %status_seen;
my @problems;

# Check one reply; $mutating: the request must not have succeeded.
sub check_reply
{
	my ($what, $r, $mutating) = @_;
	my $st = $r->{status};
	$stats{requests}++;
	$status_seen{$st}++;
	if ($st == 599)
	{
		push @problems, "$what: no reply: " . ($r->{content} // '');
		$stats{fivexx}++;
		return;
	}
	if ($st >= 500)
	{
		$stats{fivexx}++;
		push @problems, "$what: $st " . substr($r->{content} // '', 0, 200);
		return;
	}
	if ($st == 200)
	{
		$stats{ok}++;
		push @problems, "$what: a mutating request succeeded" if $mutating;
		my $c = $r->{content} // '';
		if ($c ne '' && !eval { $json->decode($c); 1 })
		{
			$stats{not_json}++;
			push @problems, "$what: 200 body is not JSON";
		}
		return;
	}
	my $body = eval { $json->decode($r->{content} // '') };
	if (ref $body ne 'HASH' || ($r->{headers}{'content-type'} // '') !~ m{^application/json})
	{
		# exists routes answer 404 without a body? They send the JSON error.
		$stats{not_json}++;
		push @problems, "$what: $st reply is not a JSON object";
		return;
	}
	my $code = $body->{code};
	my $ok = defined $code && $code =~ /^\d+$/
	  && (status_for_code($code) == $st
		|| ($code == 0 && $st == 405)
		|| ($code == 13 && grep { $st == $_ } 408, 413, 414, 431));
	if (!$ok)
	{
		$stats{bad_code}++;
		push @problems, "$what: status $st with code " . ($code // 'none');
	}
}

sub req
{
	my ($method, $path, $body, $headers) = @_;
	return raw_http($url, $method, $path, $body, $headers);
}

# ---------------------------------------------------------------------
# Sweep 1: hand-written bad input on every route.
# ---------------------------------------------------------------------
my @routes = (
	[ POST => '/v1/namespace/{id}/create',        1 ],
	[ GET  => '/v1/namespace/{id}/list',          0 ],
	[ POST => '/v1/namespace/{id}/describe',      0 ],
	[ POST => '/v1/namespace/{id}/drop',          1 ],
	[ POST => '/v1/namespace/{id}/exists',        0 ],
	[ GET  => '/v1/namespace/{id}/table/list',    0 ],
	[ POST => '/v1/table/{id}/declare',           1 ],
	[ POST => '/v1/table/{id}/register',          1 ],
	[ POST => '/v1/table/{id}/describe',          0 ],
	[ POST => '/v1/table/{id}/exists',            0 ],
	[ POST => '/v1/table/{id}/deregister',        1 ],
	[ POST => '/v1/table/{id}/drop',              1 ],
	[ POST => '/v1/table/{id}/rename',            1 ],
	[ POST => '/v1/table/{id}/version/create',    1 ],
	[ POST => '/v1/table/{id}/version/describe',  0 ],
	[ POST => '/v1/table/{id}/version/list',      0 ],
	[ POST => '/v1/table/{id}/version/delete',    1 ],
	[ POST => '/v1/table/{id}/tags/list',         0 ],
	[ POST => '/v1/table/{id}/tags/version',      0 ],
	[ POST => '/v1/table/{id}/tags/create',       1 ],
	[ POST => '/v1/table/{id}/tags/update',       1 ],
	[ POST => '/v1/table/{id}/tags/delete',       1 ],
	[ POST => '/v1/table/{id}/branches/list',     0 ],
	[ POST => '/v1/table/{id}/branches/create',   1 ],
	[ POST => '/v1/table/{id}/branches/delete',   1 ],
	[ POST => '/v1/transaction/{id}/describe',    0 ],
	[ POST => '/v1/transaction/{id}/alter',       1 ],
	[ POST => '/v1/table/version/batch-create',   1 ],);

my @bad_ids = (
	'%', '%2', '%zz', '%00', 'a%00b', '%ff', '%C0%80', '%ED%A0%80', '%F4%90%80%80',
	'ghost%24%24x', 'ghost%24', '%24%24', 'ghost%24.', 'ghost%24..', 'ghost%24a%2Fb',
	'ghost%24' . ('n' x 300), 'ghost%24%01', 'ghost%24%7F', join('%24', ('g') x 80),
	'ghost%24' . ('%E2%82%AC' x 200), 'ghost%24ok?delimiter=', 'ghost%24ok?delimiter=' . ('d' x 40),
	'ghost%24ok?limit=-1', 'ghost%24ok?limit=abc', 'ghost%24ok?limit=99999999999999999999',
	'ghost%24ok?page_token=%ff', 'ghost%24ok?page_token=!!!', 'ghost%24ok?version=x',
	'ghost%24ok?descending=maybe', 'ghost%24ok?mode=bogus', 'ghost%24ok?behavior=bogus',
	'ghost%24ok?branch=', 'ghost%24ok?branch=%00');

my @bad_bodies = (
	'{', '}', '[', '[]', '1', '"x"', 'true', 'nul', '{"a":1,"a":2}', '{"a":}', "{\"a\":\"\x00\"}",
	"{\"a\":\"\xff\xfe\"}", '{"a":"\\ud800"}', '{"a":"\\u0000"}', ('[' x 65) . (']' x 65),
	'{"a":' . ('[' x 64) . (']' x 64) . '}', '{"a":' . ('{"b":' x 70) . '1' . ('}' x 70) . '}',
	'{"version":"abc"}', '{"version":-1}', '{"version":1e400}', '{"version":18446744073709551616}',
	'{"version":1.5}', '{"version":true}', '{"manifest_path":123}', '{"manifest_path":""}',
	'{"manifest_path":"../../etc/passwd","version":1}', '{"manifest_path":"/etc/passwd","version":1}',
	'{"manifest_size":-5,"version":1,"manifest_path":"x"}', '{"id":"notalist"}', '{"id":[1,2]}',
	'{"id":[null]}', '{"id":[""]}', '{"id":["ghost","x"],"properties":"notobject"}',
	'{"properties":{"a":{"b":1}}}', '{"mode":"nope"}', '{"behavior":"nope"}', '{"limit":-3}',
	'{"page_token":"%%%"}', '{"ranges":"x"}', '{"ranges":[{"start_version":5,"end_version":1}]}',
	'{"ranges":[1,2]}', '{"entries":{}}', '{"entries":[1]}', '{"entries":[{"id":["ghost","t"],"version":1}]}',
	'{"tag":""}', '{"tag":null,"version":1}', '{"new_table_name":"a/b"}', '{"new_namespace_id":["ghost"]}',
	'{"location":"relative/path"}', '{"location":"/elsewhere/t.lance"}', '{"branch":"main"}',
	'{"metadata":[1]}', '{"naming_scheme":"V9"}', '{"transaction_id":"zz"}', "\xef\xbb\xbf{}");

my $n = 0;
foreach my $rt (@routes)
{
	my ($method, $tmpl, $mutating) = @{$rt};
	foreach my $id (@bad_ids)
	{
		my $p = $tmpl =~ s/\{id\}/$id/r;
		check_reply("$method $p", req($method, $p, undef), $mutating);
	}
	foreach my $b (@bad_bodies)
	{
		my $p = $tmpl =~ s/\{id\}/ghost%24nothing/r;
		check_reply("$method $p body " . substr($b, 0, 40), req($method, $p, $b), $mutating);
	}
	foreach my $m (qw(PUT DELETE PATCH))
	{
		my $p = $tmpl =~ s/\{id\}/ghost/r;
		check_reply("$m $p", req($m, $p, '{}'), $mutating);
	}
}
foreach my $p ('/', '/v1', '/v1/', '/v1/namespace', '/v1/namespace/', '/v1/namespace//create',
	'/v1/table//declare', '/v2/table/x/describe', '/v1/table/x/unknown', '/v1/table/x/version/create/extra',
	'/%', '/v1/namespace/%ff/list', '//v1/namespace/x/list', '/v1/namespace/x/list/../../table')
{
	check_reply("GET $p", req('GET', $p, undef), 0);
	check_reply("POST $p", req('POST', $p, '{}'), 1);
}

# ---------------------------------------------------------------------
# Sweep 2: seeded random mutations of valid request bodies.
# ---------------------------------------------------------------------
srand(20240501);
my @valid = (
	[ '/v1/namespace/ghost%24sub/create', '{"properties":{"owner":"x"},"mode":"Create"}' ],
	[ '/v1/table/ghost%24t/declare', '{"properties":{"k":"v"}}' ],
	[ '/v1/table/ghost%24t/version/create',
		qq({"version":2,"manifest_path":"$tloc/_versions/18446744073709551613.manifest-u","manifest_size":10}) ],
	[ '/v1/table/ghost%24t/version/delete', '{"ranges":[{"start_version":0,"end_version":10}]}' ],
	[ '/v1/table/ghost%24t/tags/create', '{"tag":"x","version":1}' ],
	[ '/v1/table/ghost%24t/branches/create', '{"name":"b2","from_version":1}' ],
	[ '/v1/table/ghost%24t/rename', '{"new_table_name":"t2","new_namespace_id":["load"]}' ],
	[ '/v1/table/version/batch-create',
		'{"entries":[{"id":["ghost","t"],"version":2,"manifest_path":"x/_versions/y"}]}' ],
	[ '/v1/table/load%24t1/describe', '{"version":1,"with_table_uri":true}' ],
	[ '/v1/table/load%24t1/version/list', '{"descending":true,"limit":5}' ],
	[ '/v1/namespace/load/table/list', '{"limit":2,"page_token":null}' ],);
my @chars = (split(//, '{}[]":,0123456789-.eEtrufalsn\\ $%/'), "\x00", "\xff", "\xc3", "\x7f", "\n");
for my $i (1 .. $SWEEP)
{
	my ($p, $b) = @{ $valid[ $i % @valid ] };
	my @c = split //, $b;
	for (1 .. 1 + int(rand(4)))
	{
		my $op = int(rand(3));
		my $pos = int(rand(@c + 1));
		if ($op == 0) { splice(@c, $pos, 0, $chars[ int(rand(@chars)) ]) }
		elsif ($op == 1 && @c) { splice(@c, $pos % @c, 1) }
		elsif (@c) { $c[ $pos % @c ] = $chars[ int(rand(@chars)) ] }
	}
	my $mb = join('', @c);
	# read-only routes may succeed; mutating ones target ghost ids only
	my $mutating = $p =~ /ghost|batch-create/ ? 1 : 0;
	check_reply("POST $p mutation $i", req('POST', $p, $mb), $mutating);
}
note sprintf('sweep: %d requests; statuses %s', $stats{requests},
	join(' ', map { "$_:$status_seen{$_}" } sort keys %status_seen));
note $_ foreach @problems[ 0 .. ($#problems < 30 ? $#problems : 30) ];
cmp_ok($stats{requests}, '>=', 2000, 'the sweep sent its requests');
is($stats{fivexx}, 0, 'no 5xx and no dropped connection');
is($stats{not_json}, 0, 'every reply is JSON');
is($stats{bad_code}, 0, 'every error code matches its HTTP status');
is(scalar(grep { /mutating request succeeded/ } @problems), 0, 'no mutating request succeeded');
ok($gw->alive, 'the gateway survived the sweep');
is(checksum(), $before, 'the catalog tables are unchanged');

# ---------------------------------------------------------------------
# Limits.
# ---------------------------------------------------------------------
sub expect_error
{
	my ($what, $r, $status, $code) = @_;
	is($r->{status}, $status, "$what: status $status");
	my $b = eval { $json->decode($r->{content}) };
	is(ref $b eq 'HASH' ? $b->{code} : undef, $code, "$what: JSON error with code $code")
	  if defined $code;
}

expect_error('body over --max-body-bytes',
	req('POST', '/v1/namespace/ghost/describe', '{"a":"' . ('x' x 70000) . '"}'), 413, 13);
expect_error('body at the limit is parsed',
	req('POST', '/v1/namespace/ghost/describe', '{"a":"' . ('x' x 60000) . '"}'), 404, 1);
expect_error('request target over --max-url-bytes',
	req('GET', '/v1/namespace/' . ('a' x 5000) . '/list'), 414, 13);
expect_error('header section over --max-header-bytes',
	req('GET', '/v1/namespace/load/list', undef, { 'x-big' => 'h' x 10000 }), 431, 13);
is(req('GET', '/v1/namespace/load/list', undef, { 'x-ok' => 'h' x 4000 })->{status}, 200,
	'headers under the limit are accepted');
expect_error('JSON nested 65 levels',
	req('POST', '/v1/namespace/ghost/describe', '{"a":' . ('[' x 64) . (']' x 64) . '}'), 400, 13);
expect_error('JSON nested 64 levels is accepted (then 404)',
	req('POST', '/v1/namespace/ghost/describe', '{"a":' . ('[' x 63) . (']' x 63) . '}'), 404, 1);
expect_error('a name longer than the catalog allows',
	req('POST', '/v1/namespace/ghost%24' . ('n' x 1000) . '/create', '{}'), 400, 13);
expect_error('an id deeper than the catalog allows',
	req('POST', '/v1/namespace/' . join('%24', ('g') x 200) . '/describe', '{}'), 400, 13);
my $ranges = $json->encode({ ranges => [ map { { start_version => $_, end_version => $_ + 1 } } 1 .. 101 ] });
expect_error('101 ranges over --max-batch-entries 100',
	req('POST', '/v1/table/load%24t1/version/delete', $ranges), 400, 13);
my $entries = $json->encode({ entries => [ map { { id => [ 'load', 't1' ], version => $_, manifest_path => 'x' } } 1 .. 101 ] });
expect_error('101 entries over --max-batch-entries 100',
	req('POST', '/v1/table/version/batch-create', $entries), 400, 13);
is(checksum(), $before, 'the limits changed nothing in the catalog');

# A client trickling its body is cut off once --request-timeout (3 s)
# passed (libmicrohttpd 0.9 cannot answer before the body is complete).
sub raw_connect
{
	return IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
		Proto => 'tcp', Timeout => 5) || die "connect: $!";
}

{
	my $body = '{"pad":"' . ('x' x 200) . '"}';
	my $s = raw_connect();
	my $t0 = time();
	my $got = '';
	my $closed = 0;
	print $s "POST /v1/namespace/ghost/describe HTTP/1.1\r\nHost: x\r\n"
	  . 'Content-Length: ' . length($body) . "\r\n\r\n";
	$s->blocking(0);
	for my $i (0 .. length($body) - 1)
	{
		last if time() - $t0 > 15;
		syswrite($s, substr($body, $i, 1));
		sleep(0.25);
		my $n = sysread($s, my $chunk, 65536);
		$got .= $chunk if $n;
		if (defined $n && $n == 0) { $closed = 1; last; }
	}
	my $elapsed = time() - $t0;
	ok($closed, sprintf('a trickling body: the connection is closed (after %.1f s)', $elapsed));
	ok($elapsed < 10, '... soon after the 3 s deadline');
	is($got, '', '... and the request was not answered');
	close($s);
}

# An idle connection (nothing sent) is closed after --idle-timeout.
{
	my $s = raw_connect();
	my $t0 = time();
	my $got = (read_to_close($s, 10))[0];
	my $elapsed = time() - $t0;
	ok($elapsed < 9, sprintf('an idle connection is closed (after %.1f s)', $elapsed));
	close($s);
}

# ---------------------------------------------------------------------
# Protocol-level garbage on raw sockets.
# ---------------------------------------------------------------------
$SIG{PIPE} = 'IGNORE';

# Read until the server closes the connection (or $limit seconds).
# Returns the bytes and whether the connection was closed.
sub read_to_close
{
	my ($s, $limit) = @_;
	my $buf = '';
	my $end = time() + $limit;
	$s->blocking(0);
	while (time() < $end)
	{
		my $n = sysread($s, my $chunk, 65536);
		return ($buf, 1) if defined $n && $n == 0;
		$buf .= $chunk if $n;
		sleep(0.02) unless $n;
	}
	return ($buf, 0);
}

# The HTTP responses at the start of $buf, and what follows them.
sub parse_replies
{
	my ($buf) = @_;
	my @out;
	while ($buf =~ m{\A(HTTP/1\.1 (\d{3}) [^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n)}s)
	{
		my ($head, $st, $fields) = ($1, $2, $3);
		my %h;
		$h{ lc $1 } = $2 while $fields =~ /^([^:\r\n]+):[ \t]*([^\r\n]*?)[ \t]*\r\n/mg;
		my $len = $h{'content-length'} // 0;
		last if length($buf) < length($head) + $len;
		push @out, { status => $st, headers => \%h, content => substr($buf, length($head), $len) };
		$buf = substr($buf, length($head) + $len);
	}
	return (\@out, $buf);
}

# Send raw bytes on a fresh connection (optionally half-closing it), then
# read every reply until the server closes.
sub raw_exchange
{
	my ($bytes, %o) = @_;
	my $s = raw_connect();
	my $off = 0;
	$s->blocking(1);
	while ($off < length($bytes))
	{
		my $n = syswrite($s, $bytes, length($bytes) - $off, $off);
		last unless $n;
		$off += $n;
	}
	shutdown($s, 1) if $o{half_close};
	my ($buf, $closed) = read_to_close($s, $o{wait} // 6);
	close($s);
	my ($replies, $rest) = parse_replies($buf);
	return { replies => $replies, rest => $rest, closed => $closed, raw => $buf };
}

my $body2 = '{}';
my $post = "POST /v1/namespace/ghost/describe HTTP/1.1\r\nHost: x\r\n";

# The gateway's limits on a request's head: its JSON error, then close.
my @limits = (
	[ 'Content-Length over --max-body-bytes', "${post}Content-Length: 100000\r\n\r\n",     413 ],
	[ 'header section over --max-header-bytes',
		"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " . ('h' x 10000) . "\r\n\r\n", 431 ],
	[ 'request target over --max-url-bytes',
		"GET /v1/namespace/" . ('a' x 5000) . "/list HTTP/1.1\r\nHost: x\r\n\r\n", 414 ],);
foreach my $l (@limits)
{
	my ($name, $bytes, $want) = @{$l};
	my $x = raw_exchange($bytes);
	my $r = $x->{replies}[0];
	my $b = $r ? eval { $json->decode($r->{content}) } : undef;
	is($r ? $r->{status} : 'none', $want, "$name: status $want");
	ok(ref $b eq 'HASH' && ($r->{headers}{'content-type'} // '') =~ m{^application/json}
		  && ($b->{code} // '') eq '13' && exists $b->{error} && exists $b->{detail}
		  && exists $b->{instance}, "$name: a JSON error body with code 13")
	  or diag(substr($x->{raw}, 0, 300));
	ok($x->{closed} && $x->{rest} eq '', "$name: then the connection is closed");
}

# Bytes that are not HTTP, or break its framing.
my @garbage = (
	[ 'garbage request line',         "GARBAGE\r\n\r\n" ],
	[ 'binary garbage',               "\x00\x01\x02 garbage\r\n\r\n" ],
	[ 'missing HTTP version',         "GET /v1/namespace/load/list\r\n\r\n" ],
	[ 'HTTP/9.9',                     "GET /v1/namespace/load/list HTTP/9.9\r\n\r\n" ],
	[ 'HTTP/2.0',                     "GET /v1/namespace/load/list HTTP/2.0\r\nHost: x\r\n\r\n" ],
	[ 'lowercase http/1.1',           "GET /v1/namespace/load/list http/1.1\r\nHost: x\r\n\r\n" ],
	[ 'absolute-form target',         "GET http://x/v1/namespace/load/list HTTP/1.1\r\nHost: x\r\n\r\n" ],
	[ 'two spaces in the request line', "GET  /health HTTP/1.1\r\n\r\n" ],
	[ 'NUL in the target',            "GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n" ],
	[ 'control character in the target', "GET /v1/\x01 HTTP/1.1\r\nHost: x\r\n\r\n" ],
	[ 'CR without LF',                "GET /health HTTP/1.1\rHost: x\r\n\r\n" ],
	[ 'header line without a colon',  "GET /health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n" ],
	[ 'space before the colon',       "GET /health HTTP/1.1\r\nHost : x\r\n\r\n" ],
	[ 'obs-fold',                     "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\n\r\n" ],
	[ 'whitespace before the first header', "GET /health HTTP/1.1\r\n Host: x\r\n\r\n" ],
	[ 'NUL in a header value',        "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n" ],
	[ 'Content-Length abc',           "${post}Content-Length: abc\r\n\r\n" ],
	[ 'Content-Length -1',            "${post}Content-Length: -1\r\n\r\n" ],
	[ 'Content-Length "1, 2"',        "${post}Content-Length: 1, 2\r\n\r\n" ],
	[ 'overflowing Content-Length',   "${post}Content-Length: 99999999999999999999999\r\n\r\n" ],
	[ 'two different Content-Lengths', "${post}Content-Length: 2\r\nContent-Length: 3\r\n\r\n$body2" ],
	[ 'Content-Length and Transfer-Encoding',
		"${post}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n" ],
	[ 'Transfer-Encoding: gzip',      "${post}Transfer-Encoding: gzip\r\n\r\n" ],
	[ 'Transfer-Encoding: gzip, chunked', "${post}Transfer-Encoding: gzip, chunked\r\n\r\n" ],
	[ 'Transfer-Encoding in HTTP/1.0',
		"POST /v1/namespace/ghost/describe HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" ],
	[ 'bad chunk size',               "${post}Transfer-Encoding: chunked\r\n\r\nzz\r\n" ],
	[ 'chunk without CRLF',           "${post}Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX" ],
	[ 'chunk size overflowing',       "${post}Transfer-Encoding: chunked\r\n\r\n" . ('f' x 20) . "\r\n" ],
	[ 'chunk larger than --max-body-bytes',
		"${post}Transfer-Encoding: chunked\r\n\r\n" . sprintf('%x', 70000) . "\r\n" . ('x' x 70000) ],
	[ 'a body that never arrives',    "${post}Content-Length: 10\r\n\r\n" ],
	[ 'too many header fields',
		"GET /health HTTP/1.1\r\n" . join('', map { "X-$_: 1\r\n" } 1 .. 200) . "\r\n" ],
	[ 'only empty lines, then nothing', "\r\n\r\n\r\n" ],);
my ($garbage_replies, $garbage_bad) = (0, 0);

# Check the replies to garbage: each is the library's 4xx (or 505), or the
# gateway's JSON answer to what the library read as a request; never
# another 5xx.  A connection without a JSON answer that keeps it open is
# closed (at the latest after --idle-timeout).
sub check_garbage
{
	my ($name, $x, @replies) = @_;
	my $ok = 1;
	foreach my $r (@replies)
	{
		$garbage_replies++;
		my $b = eval { $json->decode($r->{content}) };
		my $is_json = ref $b eq 'HASH'
		  && ($r->{headers}{'content-type'} // '') =~ m{^application/json};
		my $status_ok = $is_json ? $r->{status} < 500
		  : ($r->{status} =~ /^4\d\d$/ || $r->{status} == 505);
		$ok = 0 unless $status_ok;
		diag("$name: $r->{status}: " . substr($r->{content}, 0, 200)) unless $status_ok;
	}
	$ok = 0 unless $x->{closed} || (@replies && $replies[-1]{status} < 400);
	$garbage_bad++ unless $ok;
	ok($ok, "$name: the library's 4xx or the gateway's JSON, never a 5xx, "
		  . (@replies ? scalar(@replies) . ' replies' : 'no reply') . ($x->{closed} ? ', closed' : ''))
	  or diag(substr($x->{raw}, 0, 300));
	is(req('GET', '/health')->{status}, 200, "$name: /health still answers");
}

foreach my $g (@garbage)
{
	my ($name, $bytes) = @{$g};
	my $x = raw_exchange($bytes);
	check_garbage($name, $x, @{ $x->{replies} });
}

# A body shorter than its Content-Length, then the client half-closes.
{
	my $x = raw_exchange("${post}Content-Length: 100\r\n\r\n{\"a\"", half_close => 1);
	check_garbage('a truncated body and a half-close', $x, @{ $x->{replies} });
}

# Garbage as the second request on a kept-alive connection.
foreach my $second ("BLAH\r\n\r\n", "GET /health HTTP/9.9\r\n\r\n",
	"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")
{
	(my $shown = $second) =~ s/\r\n.*//s;
	my $x = raw_exchange("GET /v1/namespace/load/list HTTP/1.1\r\nHost: x\r\n\r\n$second");
	is($x->{replies}[0]{status}, 200, "after a good request, \"$shown\": the first is 200");
	my @rest = @{ $x->{replies} };
	shift @rest;
	check_garbage("after a good request, \"$shown\"", $x, @rest);
}
note "protocol garbage: $garbage_replies replies, $garbage_bad not as expected";
is($garbage_bad, 0, 'no reply to protocol garbage is a 5xx, and its connections close');
ok($gw->alive, 'the gateway survived the limits and the raw garbage');
is(req('GET', '/v1/namespace/load/list')->{status}, 200, 'and still serves requests');
is(checksum(), $before, 'the catalog tables are still unchanged');

is($gw->stop, 0, 'the gateway stops cleanly');
$node->stop;
done_testing();
