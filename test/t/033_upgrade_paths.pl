# Upgrade paths: ALTER EXTENSION lance_namespace UPDATE from every earlier
# version reaches default_version, keeps the catalog's data, and leaves
# exactly the objects of a fresh install of default_version.
#
# The versions come from the install scripts sql/lance_namespace--V.sql and
# the update scripts sql/lance_namespace--A--B.sql.  Only the oldest and
# the current release keep an install script; CREATE EXTENSION ... VERSION
# of one in between installs the oldest and follows the updates.  Each earlier version is
# installed, filled with a catalog (namespaces, tables, versions, a branch,
# a tag, a grant, an API key, history), updated, and compared with a fresh
# install of the default version: every object's definition and ACL, and
# every row.  The no-op UPDATE of the default version is checked too.
#
# The releases in order: each later release's checks apply to an update
# that reaches it (a path from any earlier version).
my @chain = ('0.1.0', '0.2.0', '0.3.0', '0.4.0', '0.5.0', '0.6.0');
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $srcdir = "$FindBin::RealBin/../..";
my (%install, @updates);
foreach my $f (glob("$srcdir/sql/lance_namespace--*.sql"))
{
	my $b = $f =~ s{.*/}{}r;
	if ($b =~ /^lance_namespace--([^-]+(?:-[^-]+)*?)--(.+)\.sql$/)
	{
		push @updates, [ $1, $2 ];
	}
	elsif ($b =~ /^lance_namespace--(.+)\.sql$/)
	{
		$install{$1} = 1;
	}
}
note 'install scripts: ' . join(', ', sort keys %install);
note 'update scripts: ' . (join(', ', map { "$_->[0] -> $_->[1]" } @updates) || 'none');

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

my $default = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'lance_namespace'});
ok($install{$default}, "default_version $default has an install script");

# Every update script is installed and known to PostgreSQL.
foreach my $u (@updates)
{
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension_update_paths('lance_namespace') WHERE source = '$u->[0]' AND target = '$u->[1]' AND path IS NOT NULL"),
		'1', "update script $u->[0] -> $u->[1] is installed");
}

# Every version that an update script starts from can reach the default.
my %from = map { $_->[0] => 1 } @updates;
foreach my $src (sort keys %from)
{
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension_update_paths('lance_namespace') WHERE source = '$src' AND target = '$default' AND path IS NOT NULL"),
		'1', "there is an update path from $src to $default");
}

# The objects of an installed lance_namespace, as comparable text: its
# members, and for every object in the schema its definition: columns (in
# order, with types, NOT NULL and defaults), constraints, indexes, triggers,
# row level security and policies, views, functions (arguments, result,
# body, language, volatility, SECURITY DEFINER, settings) and the ACLs of
# tables, sequences, functions and the schema, and the extension's
# configuration tables.
sub members
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		WITH ns AS (SELECT 'lance_namespace'::regnamespace AS oid)
		SELECT string_agg(d, E'\n' ORDER BY d) FROM (
		  SELECT 'member ' || pg_describe_object(classid, objid, objsubid) AS d
			FROM pg_depend
		   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
			 AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lance_namespace')
		  UNION ALL
		  SELECT format('function %s(%s) -> %s lang=%s vol=%s secdef=%s strict=%s config=%s src=%s bin=%s',
						p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
						l.lanname, p.provolatile, p.prosecdef, p.proisstrict, p.proconfig,
						md5(coalesce(p.prosrc, '') || coalesce(pg_get_function_sqlbody(p.oid), '')),
						p.probin)
			FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, ns
		   WHERE p.pronamespace = ns.oid
		  UNION ALL
		  SELECT format('acl %s %s %s', p.proname, pg_get_function_identity_arguments(p.oid), x.acl)
			FROM pg_proc p, ns,
				 LATERAL (SELECT string_agg(format('%s:%s:%s', a.grantee::regrole, a.privilege_type, a.is_grantable),
											',' ORDER BY a.grantee::regrole::text, a.privilege_type) AS acl
							FROM aclexplode(coalesce(p.proacl, acldefault('f'::"char", p.proowner))) a) x
		   WHERE p.pronamespace = ns.oid
		  UNION ALL
		  SELECT format('relation %s kind=%s rls=%s force=%s options=%s acl=%s',
						c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity, c.reloptions, x.acl)
			FROM pg_class c, ns,
				 LATERAL (SELECT string_agg(format('%s:%s:%s', a.grantee::regrole, a.privilege_type, a.is_grantable),
											',' ORDER BY a.grantee::regrole::text, a.privilege_type) AS acl
							FROM aclexplode(coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a) x
		   WHERE c.relnamespace = ns.oid
		  UNION ALL
		  SELECT format('column %s.%s #%s %s notnull=%s default=%s generated=%s storage=%s',
						c.relname, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod),
						a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attgenerated, a.attstorage)
			FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
			LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum, ns
		   WHERE c.relnamespace = ns.oid AND a.attnum > 0 AND NOT a.attisdropped
		  UNION ALL
		  SELECT format('constraint %s: %s', conname, pg_get_constraintdef(co.oid))
			FROM pg_constraint co, ns WHERE co.connamespace = ns.oid
		  UNION ALL
		  SELECT 'index ' || pg_get_indexdef(i.indexrelid)
			FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid, ns WHERE c.relnamespace = ns.oid
		  UNION ALL
		  SELECT format('trigger %s: %s enabled=%s', t.tgname, pg_get_triggerdef(t.oid), t.tgenabled)
			FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid, ns
		   WHERE c.relnamespace = ns.oid AND NOT t.tgisinternal
		  UNION ALL
		  SELECT format('policy %s on %s: cmd=%s permissive=%s roles=%s using=%s check=%s',
						po.polname, c.relname, po.polcmd, po.polpermissive,
						(SELECT array_agg(r::regrole::text ORDER BY r::regrole::text) FROM unnest(po.polroles) r),
						pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid))
			FROM pg_policy po JOIN pg_class c ON c.oid = po.polrelid, ns WHERE c.relnamespace = ns.oid
		  UNION ALL
		  SELECT format('view %s: %s', c.relname, pg_get_viewdef(c.oid))
			FROM pg_class c, ns WHERE c.relnamespace = ns.oid AND c.relkind = 'v'
		  UNION ALL
		  SELECT format('type %s %s', t.typname, t.typtype)
			FROM pg_type t, ns WHERE t.typnamespace = ns.oid
		  UNION ALL
		  SELECT format('schema acl %s', nspacl) FROM pg_namespace, ns WHERE pg_namespace.oid = ns.oid
		  UNION ALL
		  SELECT format('config %s %s', cfg::regclass, cond)
			FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(cfg, cond)
		   WHERE e.extname = 'lance_namespace') s});
}

# The same grant and role in every database, so that the ACLs compare.
$node->safe_psql('postgres', 'CREATE ROLE upg_tenant');

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION lance_namespace');
$node->safe_psql('fresh', q{SELECT lance_namespace.lance_grant('upg_tenant', ARRAY['keep'], 'write')});
my $fresh = members('fresh');
ok(length($fresh) > 0, 'a fresh install has objects');
like($fresh, qr/trigger versions_audit/, '... among them the audit triggers');
# 0.3.0: the bytes of manifests whose publication is pending (issue 19)
like($fresh, qr/relation publications kind=r rls=t force=f options=\{toast_tuple_target=8160\} acl=\S*postgres:INSERT/,
	'... and publications, with row level security and no grant to roles');
like($fresh, qr/constraint publications_version_fkey: FOREIGN KEY \(table_id, branch, version\) REFERENCES lance_namespace.versions\(table_id, branch, version\) ON DELETE CASCADE/,
	'... whose rows go with their version');
like($fresh, qr/column publications.manifest #4 bytea notnull=t default= generated= storage=e/,
	'... whose bytes stay in the row, uncompressed');
like($fresh, qr/config lance_namespace.publications /, '... and which pg_dump keeps');

# Whether the default version is release $v or a later one.
sub reaches
{
	my ($v) = @_;
	my ($i) = grep { $chain[$_] eq $v } 0 .. $#chain;
	my ($d) = grep { $chain[$_] eq $default } 0 .. $#chain;
	return defined $i && defined $d && $d >= $i;
}
ok(defined((grep { $_ eq $default } @chain)[0]), "default_version $default is in the release chain of this test");

# 0.4.0: a version row is the record of its own creation (issue 19)
if (reaches('0.4.0'))
{
	like($fresh, qr/column versions.transaction_id #12 xid8 notnull=f/, '0.4.0: versions carry their creation records');
	like($fresh, qr/column versions.created_by #11 text notnull=t/, '... with the role as text');
	like($fresh, qr/relation history kind=v /, '... and history is a view of them and of the log');
	like($fresh, qr/column history_log.role #3 text notnull=t/, '... whose roles are text');
	like($fresh, qr/trigger versions_audit: CREATE TRIGGER versions_audit AFTER DELETE OR UPDATE ON lance_namespace.versions/,
		'... and no audit trigger fires on a version insert');
	like($fresh, qr/config lance_namespace.history_log /, '... and pg_dump keeps the log');
}

# 0.5.0: the clients' form of a manifest path is the extension's rule (issue 16)
if (reaches('0.5.0'))
{
	like($fresh, qr/function rest_client_paths\(answer jsonb\) -> jsonb lang=c vol=i secdef=f strict=t config=\{"search_path=pg_catalog, pg_temp"\}/,
		'0.5.0: rest_client_paths gives the clients\' form of manifest paths');
	like($fresh, qr/column rest_routes.client_paths #7 boolean /, '... for the routes rest_routes marks');
}

# 0.6.0: a table owns its location; a version number is acknowledged once (issue 39)
if (reaches('0.6.0'))
{
	like($fresh, qr/trigger entries_location_check: CREATE TRIGGER entries_location_check BEFORE INSERT OR UPDATE OF location ON lance_namespace.entries/,
		'0.6.0: every placement of a table is checked');
	like($fresh, qr/index CREATE INDEX entries_location_key_idx .*lance_location_key\(location\)/, '... by the key of its location, indexed');
	like($fresh, qr/trigger versions_keep_latest: CREATE TRIGGER versions_keep_latest BEFORE DELETE ON lance_namespace.versions/,
		'... and a branch\'s latest version is kept');
}

# A catalog's content, as comparable text.
sub content
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SELECT concat_ws(E'\n',
			(SELECT string_agg(format('%s %s %s %s', kind, path, location, properties), ';' ORDER BY path)
			   FROM lance_namespace.entries),
			(SELECT string_agg(format('%s %s %s %s %s', branch, version, manifest_path, manifest_size, created_by),
							   ';' ORDER BY branch, version) FROM lance_namespace.versions),
			(SELECT string_agg(format('%s %s %s', name, parent_version, created_by), ';' ORDER BY name)
			   FROM lance_namespace.branches),
			(SELECT string_agg(format('%s %s %s', name, branch, version), ';' ORDER BY name) FROM lance_namespace.tags),
			(SELECT string_agg(format('%s %s %s', role_name, namespace, privilege), ';' ORDER BY role_name, namespace)
			   FROM lance_namespace.privileges),
			(SELECT string_agg(format('%s %s %s %s %s', transaction_id, role, interface, operation, detail), ';'
							   ORDER BY at, operation) FROM lance_namespace.history),
			(SELECT count(*) FROM lance_namespace.api_keys),
			(SELECT string_agg(format('%s %s', name, value), ';') FROM lance_namespace.settings))});
}

# Each earlier version with an install script (and a path to the default).
my @sources = grep { $_ ne $default } sort keys %install;
foreach my $src (@sources)
{
	my $db = "from_" . ($src =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION lance_namespace VERSION '$src'");
	my $cursor = $node->safe_psql($db, q{SELECT pg_catalog.pg_current_snapshot()});
	$node->safe_psql($db, q{
		SELECT lance_namespace.lance_set_root_location('/data/upgrade');
		SELECT lance_namespace.lance_create_namespace(ARRAY['keep']);
		SELECT lance_namespace.lance_create_namespace(ARRAY['keep', 'inner'], properties => '{"k": "v"}');
		SELECT lance_namespace.lance_declare_table(ARRAY['keep','t']);
		SELECT lance_namespace.lance_register_table(ARRAY['keep','r'], '/ext/r');
		SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 1,
			'data/upgrade/keep/t.lance/_versions/18446744073709551614.manifest-1', 10);
		SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 2, '/m/2', 20);
		SELECT lance_namespace.lance_create_table_branch(ARRAY['keep','t'], 'dev', from_version => 1);
		SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 2, '/m/dev/2', branch => 'dev');
		SELECT lance_namespace.lance_create_table_tag(ARRAY['keep','t'], 'v1', 1);
		SELECT lance_namespace.lance_grant('upg_tenant', ARRAY['keep'], 'write');
		SELECT lance_namespace.lance_create_api_key('upg_tenant') IS NOT NULL;
	});
	my $feed = $node->safe_psql($db, qq{SELECT string_agg(format('%s %s %s', lance_namespace.lance_format_id(id), branch, version), ';')
		FROM lance_namespace.lance_changes('$cursor')});
	my $before = content($db);
	$node->safe_psql($db, 'ALTER EXTENSION lance_namespace UPDATE');
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'lance_namespace'}),
		$default, "$src: UPDATE reaches $default");
	my $updated = members($db);
	is($updated, $fresh, "$src: the updated objects equal a fresh install of $default");
	if ($updated ne $fresh)
	{
		# name the differences, line by line
		my %f = map { $_ => 1 } split /\n/, $fresh;
		my %u = map { $_ => 1 } split /\n/, $updated;
		diag "only after the update: $_" foreach grep { !$f{$_} } sort keys %u;
		diag "only in a fresh install: $_" foreach grep { !$u{$_} } sort keys %f;
	}
	is(content($db), $before, "$src: the catalog's data survive the update");
	is($node->safe_psql($db, qq{SELECT string_agg(format('%s %s %s', lance_namespace.lance_format_id(id), branch, version), ';')
		FROM lance_namespace.lance_changes('$cursor')}), $feed,
		"$src: the change feed from a cursor taken before the update returns the same versions");
	is($node->safe_psql($db,
		q{SELECT version FROM lance_namespace.lance_describe_table_version(ARRAY['keep','t'])}),
		'2', "$src: the updated catalog serves its versions");
	if (reaches('0.6.0'))
	{
		my ($rc6, $out6, $err6) = $node->psql($db,
			q{SELECT lance_namespace.lance_declare_table(ARRAY['keep','twin'], '/data/upgrade/keep/t.lance/')});
		like($err6, qr/belongs to another table/, "$src: the updated catalog refuses a second table at a table's location");
		($rc6, $out6, $err6) = $node->psql($db,
			q{SELECT lance_namespace.lance_batch_delete_table_versions(ARRAY['keep','t'], '[{"start_version": 2, "end_version": 3}]')});
		like($err6, qr/is the latest version/, "$src: ... and keeps a branch's latest version");
	}

	# The updated catalog enforces 0.2.0's rules, and records the session role.
	my ($rc, $out, $err) = $node->psql($db, q{SET ROLE upg_tenant;
		UPDATE lance_namespace.versions SET manifest_path = '/evil' WHERE version = 1});
	like($err, qr/permission denied for table versions/, "$src: a tenant cannot rewrite a version after the update");
	($rc, $out, $err) = $node->psql($db, q{SET ROLE upg_tenant;
		INSERT INTO lance_namespace.history (operation, id) VALUES ('Forged', '{keep}')});
	if (reaches('0.4.0'))
	{
		# the history is a view from 0.4.0 on; its log is guarded
		like($err, qr/cannot insert into view "history"/, "$src: nor forge history");
		($rc, $out, $err) = $node->psql($db, q{SET ROLE upg_tenant;
			INSERT INTO lance_namespace.history_log (operation, id) VALUES ('Forged', '{keep}')});
		like($err, qr/permission denied for table history_log/, "$src: nor write the history's log");
	}
	else
	{
		like($err, qr/permission denied for table history/, "$src: nor forge history");
	}
	my $mark = $node->safe_psql($db, q{SELECT pg_catalog.clock_timestamp()});
	$node->safe_psql($db, q{SET ROLE upg_tenant;
		SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 3, '/m/3');
		DELETE FROM lance_namespace.versions WHERE version = 1 AND branch = 'main'});
	# 0.1.0 recorded no session role; 0.2.0 and later record it
	my $old = $src eq '0.1.0' ? 9 : 0;
	is($node->safe_psql($db, qq{
		SELECT format('%s old rows; new: %s', count(*) FILTER (WHERE session_role IS NULL),
					  string_agg(format('%s %s', role, operation), ';' ORDER BY at)
						FILTER (WHERE session_role IS NOT NULL AND at > '$mark'))
		  FROM lance_namespace.history}),
		"$old old rows; new: upg_tenant CreateTableVersion;upg_tenant DELETE versions",
		"$src: rows from before the update keep their session role (none before 0.2.0); new ones are written by the triggers");

	# The path taken runs through every release in order.
	my @from = grep { $_ eq $src .. $_ eq $default } @chain;
	is($node->safe_psql($db,
		"SELECT path FROM pg_extension_update_paths('lance_namespace') WHERE source = '$src' AND target = '$default'"),
		join('--', @from), "$src: the update runs " . join(' -> ', @from));

	# 0.4.0: the version created after the update carries its record; those
	# created before keep theirs in the log, once each, also after a delete;
	# and the feed returns each version once.
	if (reaches('0.4.0'))
	{
		my $from_040 = (grep { $_ eq '0.4.0' } @from) && $src ne '0.4.0';
		is($node->safe_psql($db, q{SELECT format('%s %s %s %s', v.version, v.created_by, v.table_path,
				v.transaction_id IS NOT NULL)
			  FROM lance_namespace.versions v WHERE v.branch = 'main' ORDER BY v.version}),
			($from_040 ? "2 postgres  f" : "2 postgres {keep,t} t") . "\n3 upg_tenant {keep,t} t",
			"$src: a version created after the update carries its record, those from before "
			  . ($from_040 ? "do not (they predate 0.4.0)" : "too (created in 0.4.0 or later)"));
		is($node->safe_psql($db, q{SELECT string_agg(format('%s:%s', detail->>'version', n), ',' ORDER BY detail->>'version')
			  FROM (SELECT detail, count(*) AS n FROM lance_namespace.history
					 WHERE operation = 'CreateTableVersion' AND detail->>'branch' = 'main' GROUP BY detail) s}),
			'1:1,2:1,3:1', "$src: every version's creation is in the history once");
		is($node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.history_log
			 WHERE operation = 'CreateTableVersion' AND detail->>'version' = '3'}), '0',
			"$src: ... the new one's on its row only");
		is($node->safe_psql($db, qq{SELECT string_agg(format('%s %s %s', lance_namespace.lance_format_id(id), branch, version), ';')
			FROM lance_namespace.lance_changes('$cursor')}), "$feed;keep\$t main 3",
			"$src: the change feed from before the update returns every version once, the new one last");
	}

	# 0.3.0's publications after the update: a tenant's CreateTableVersion
	# with the staged bytes keeps them (written as the owner), the tenant
	# cannot read the table, and the bytes go with the version.
	($rc, $out, $err) = $node->psql($db, q{SET ROLE upg_tenant;
		SELECT lance_namespace.rest_create_table_version('{"id": ["keep", "t"], "version": 4,
			"manifest_path": "/m/4", "manifest_size": 3, "manifest_base64": "YWJj"}')});
	is($rc, 0, "$src: a tenant's create with manifest_base64 succeeds after the update");
	is($node->safe_psql($db, q{SELECT format('%s %s %s', branch, version, encode(manifest, 'escape'))
		FROM lance_namespace.publications}), 'main 4 abc', "$src: ... and the catalog holds its bytes");
	($rc, $out, $err) = $node->psql($db, q{SET ROLE upg_tenant; SELECT * FROM lance_namespace.publications});
	like($err, qr/permission denied for table publications/, "$src: a tenant cannot read publications");
	# (0.6.0: a branch's latest version is never retired; v5 comes after it)
	$node->safe_psql($db, q{SELECT lance_namespace.lance_create_table_version(ARRAY['keep','t'], 5, '/m/5')});
	is($node->safe_psql($db, q{SELECT lance_namespace.lance_retire_table_version(ARRAY['keep','t'], 4, NULL,
		(SELECT manifest_path FROM lance_namespace.versions WHERE version = 4 AND branch = 'main'))}),
		't', "$src: a version whose publication is pending can be retired (a cleanup removed its file)");
	is($node->safe_psql($db, q{SELECT count(*) FROM lance_namespace.publications}), '0',
		"$src: a publication goes with its version");
}

# No-op UPDATE of the current version (always run).
$node->safe_psql('postgres', 'CREATE DATABASE noop');
$node->safe_psql('noop', 'CREATE EXTENSION lance_namespace');
$node->safe_psql('noop', q{SELECT lance_namespace.lance_create_namespace(ARRAY['keep'])});
$node->safe_psql('noop', q{SELECT lance_namespace.lance_grant('upg_tenant', ARRAY['keep'], 'write')});
my ($rc, $out, $err) = $node->psql('noop', 'ALTER EXTENSION lance_namespace UPDATE');
is($rc, 0, 'the no-op UPDATE succeeds');
like($err, qr/already installed|^$/, '... saying the version is already installed');
is($node->safe_psql('noop', q{SELECT extversion FROM pg_extension WHERE extname = 'lance_namespace'}),
	$default, "the installed version is default_version $default");
is(members('noop'), $fresh, 'the no-op UPDATE changes no object');
is($node->safe_psql('noop', q{SELECT count(*) FROM lance_namespace.namespaces}), '1',
	'... and no data');

note sprintf('upgrade paths checked: %d (update scripts: %d)', scalar @sources, scalar @updates);
$node->stop;
done_testing();
