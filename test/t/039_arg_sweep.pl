# Hostile-argument sweep of every C function of the SQL API.
#
# The functions are read from pg_proc (every LANGUAGE C function of the
# extension but its triggers), so a new function is swept without a change
# here.  Each argument in turn (the others valid) gets NULL, and for its
# type: empty, NULL-element, multi-dimensional and odd-bound arrays;
# empty, 10,000-character, control-character and multibyte strings;
# -1, 0 and the extreme bigints and integers; jsonb of every type, deeply
# nested and large; garbage page tokens.  Every rest_* binding also gets
# request bodies with each request field set to a value of the wrong type.
# Each call runs in its own transaction under a 10 s statement_timeout.
# Expected: no backend crash, no timeout, and every error an LN SQLSTATE
# (a Lance error code) rather than one of PostgreSQL's internal errors.
use strict;
use warnings;

use MIME::Base64 qw(encode_base64);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('arg_sweep');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION lance_namespace;
SELECT lance_namespace.lance_set_root_location('/data/lance');
SELECT lance_namespace.lance_create_namespace('{ns}');
SELECT lance_namespace.lance_declare_table('{ns,t}');
SELECT lance_namespace.lance_create_table_version('{ns,t}', 1, '/staging/1', 100);
SELECT lance_namespace.lance_create_table_version('{ns,t}', 2, '/staging/2', 100);
SELECT lance_namespace.lance_create_table_branch('{ns,t}', 'b1', NULL, 1);
SELECT lance_namespace.lance_create_table_tag('{ns,t}', 'tag1', 1);
});

sub lit
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

my $long = 'x' x 10000;
my @text = ("NULL", "''", lit($long), "E'a\\x01b'", "E'\\n'", "'garbage'", "'\$'",
	"'/'", "'..'", "chr(8232)", "repeat(chr(233), 5000)", "chr(127)", "' '",
	"chr(1114111)");
my @tokens = ("'garbage'", "'='", lit('A' x 70000));
foreach my $kind (qw(a d b g n p t x))
{
	foreach my $rest ('', 'zzz', "\xff\xfe", '-1', '99999999999999999999999', ' 5', "\x01")
	{
		push @tokens, lit(encode_base64("$kind:$rest", ''));
	}
}
my %pool = (
	'text' => \@text,
	'text[]' => [
		"NULL", "'{}'::text[]", "'{NULL}'::text[]", "'{ns,NULL}'::text[]",
		"'{\"\"}'::text[]", "'{{a,b},{c,d}}'::text[]", "'{{ns,t}}'::text[]",
		"'[0:1]={ns,t}'::text[]", "ARRAY[" . lit($long) . "]",
		"ARRAY[E'a\\x01b']", "(SELECT array_agg('a' || g) FROM generate_series(1, 1000) g)",
		"'{..}'::text[]", "ARRAY['a/b']", "array_fill('z'::text, ARRAY[2, 2, 2])"
	],
	'bigint' => [ "NULL", "-1", "0", "9223372036854775807", "(-9223372036854775807 - 1)" ],
	'integer' => [ "NULL", "-1", "0", "2147483647", "(-2147483647 - 1)" ],
	'boolean' => [ "NULL", "true", "false" ],
	'jsonb' => [
		"NULL", "'[]'::jsonb", "'1'::jsonb", "'\"s\"'::jsonb", "'null'::jsonb",
		"'{}'::jsonb", "'true'::jsonb", "'[null]'::jsonb", "'[{}]'::jsonb",
		"(repeat('[', 3000) || repeat(']', 3000))::jsonb",
		"(repeat('{\"a\":', 3000) || '1' || repeat('}', 3000))::jsonb",
		"(SELECT jsonb_object_agg('k' || g, g) FROM generate_series(1, 2000) g)",
		"jsonb_build_object('k', " . lit($long) . ")"
	],
	'name' => [ "NULL", "''", "'no_such_role'", lit($long) ],
	'timestamp with time zone' =>
	  [ "NULL", "'infinity'::timestamptz", "'-infinity'::timestamptz" ],
	'xid8' => [ "NULL", "'0'::xid8", "'18446744073709551615'::xid8" ]);

# a valid value per parameter name, so that one bad argument reaches the
# function's deeper checks
my %valid = (
	'version' => '1', 'manifest_path' => "'/staging/z'", 'name' => "'b2'",
	'tag' => "'tag2'", 'privilege' => "'read'", 'new_table_name' => "'t2'",
	'field' => "'id'", 'root_location' => "'/data/lance'", 'sqlstate' => "'LN001'",
	'delimiter' => "'\$'", 'code' => '1', 'role_name' => "'postgres'",
	'branch' => "'main'", 'timestamp_millis' => '0', 'transaction_id' => "'1'::xid8");

my @bad_field = ('null', '1', '-1', '9223372036854775808', '1.5', '"s"', '""',
	'"' . ('y' x 10000) . '"', 'true', '[]', '{}', '[null]', '[[1]]', '["a",null]',
	'"\u0001"', '[' x 500 . ']' x 500, '"!!!"');
my @fields = qw(id version branch page_token limit descending naming_scheme
  metadata manifest_size manifest_path manifest_base64 e_tag entries mode
  properties location behavior new_namespace_id new_table_name tag name
  from_branch from_version operations actions ranges include_declared
  with_table_uri check_declared delimiter);

my $procs = $node->safe_psql('postgres', q{
SELECT p.proname,
	   coalesce(array_to_string(p.proargnames[1:p.pronargs], ','), ''),
	   coalesce((SELECT string_agg(format_type(t, NULL), ',' ORDER BY o)
				   FROM unnest(p.proargtypes) WITH ORDINALITY u(t, o)), '')
  FROM pg_proc p
 WHERE p.pronamespace = 'lance_namespace'::regnamespace
   AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
   AND p.prorettype <> 'trigger'::regtype
 ORDER BY 1});

my @calls;
my %functions;
foreach my $line (split /\n/, $procs)
{
	my ($fn, $names, $types) = split /\|/, $line, -1;
	my @names = split /,/, $names;
	my @types = split /,/, $types;
	my $call = sub {
		my @args = @_;
		return "SELECT left(t::text, 100) FROM lance_namespace.$fn("
		  . join(', ', map { "$args[$_]::$types[$_]" } 0 .. $#args) . ") AS t";
	};
	my @base = map {
		my $n = $names[$_];
		$types[$_] eq 'text[]'
		  ? ($fn =~ /namespace/ || $n eq 'path' ? "'{ns}'" : "'{ns,t}'")
		  : ($valid{$n} // 'NULL')
	} 0 .. $#names;
	$functions{$fn} = 1;
	push @calls, $call->(@base), $call->(map { 'NULL' } @types);
	foreach my $i (0 .. $#types)
	{
		die "no value pool for type $types[$i] of $fn" unless $pool{ $types[$i] };
		my @values = @{ $pool{ $types[$i] } };
		push @values, @tokens if $names[$i] eq 'page_token';
		foreach my $v (@values)
		{
			my @args = @base;
			$args[$i] = $v;
			push @calls, $call->(@args);
		}
	}
	next unless $fn =~ /^rest_/ && $fn ne 'rest_client_paths';
	my $id = $fn =~ /namespace/ ? '["ns"]' : '["ns","t"]';
	foreach my $field (@fields)
	{
		foreach my $v (@bad_field)
		{
			my $body = $field eq 'id' ? "{\"id\": $v}" : "{\"id\": $id, \"$field\": $v}";
			push @calls, $call->(lit($body));
		}
	}
}

my $script = "SET statement_timeout = '10s';\n\\set VERBOSITY verbose\n"
  . join('', map { "BEGIN;\n$_;\nROLLBACK;\n" } @calls);
# a backend crash ends psql early, and the write of the rest of the script
# then fails: that is a failed sweep, not a dead test
my ($rc, $out, $err) = (-1, '', '');
eval {
	($rc, $out, $err) = $node->psql('postgres', $script, on_error_stop => 0);
	1;
} or $err = "psql failed: $@";
my $nfunctions = scalar(keys %functions);
my $ncalls = scalar(@calls);
note "$ncalls calls of $nfunctions functions";
cmp_ok($nfunctions, '>=', 80, 'the sweep found the C functions in pg_proc');
is($rc, 0, 'the sweep ran to completion');

my %states;
$states{$1}++ while $err =~ /^(?:psql:\S+ )?ERROR:\s+([0-9A-Z]{5}):/mg;
note join(', ', map { "$_ x $states{$_}" } sort keys %states);
my @foreign = grep { !/^LN[0-9]{3}$/ } sort keys %states;
is_deeply(\@foreign, [], 'every error is an LN SQLSTATE (no internal, timeout or PostgreSQL error)');
if (@foreign)
{
	foreach my $line (split /\n/, $err)
	{
		note $line if $line =~ /ERROR:\s+(?!LN)[0-9A-Z]{5}:/;
	}
}
cmp_ok($states{LN013} // 0, '>', 0, 'some calls were InvalidInput');

my $log = slurp_file($node->logfile);
my @crashes = grep { /terminated by signal|was terminated|PANIC/ } split /\n/, $log;
is_deeply(\@crashes, [], 'no backend crashed');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server still answers');
$node->stop('fast', fail_ok => 1);
done_testing();
