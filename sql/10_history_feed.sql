--
-- 10_history_feed: transaction ids, DescribeTransaction, AlterTransaction,
-- the commit_history view, the configuration view and lance_changes() (the
-- change feed read from the history).  (NOTIFY and polling lance_changes
-- during concurrent commits are tested in test/t/020_change_feed.pl, a
-- transaction left open across polls in test/specs/change_feed_outbox.spec.)
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
-- a run that stopped half-way may have left the role behind
DO $$BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_lance_historian') THEN
    EXECUTE 'DROP OWNED BY regress_lance_historian';
    EXECUTE 'DROP ROLE regress_lance_historian';
  END IF;
END$$;
DELETE FROM lance_namespace.privileges WHERE role_name = 'regress_lance_historian';
CREATE ROLE regress_lance_historian;

-- history rows of namespace hf written by this run, with the volatile
-- columns masked (the history is append-only: earlier runs left theirs)
SELECT clock_timestamp() AS hf_t0 \gset
-- and a change feed cursor from before them
SELECT pg_current_snapshot() AS hf_c0 \gset
CREATE FUNCTION pg_temp.hf_history(t0 timestamptz) RETURNS TABLE (
	same_txid_as_prev boolean, role text, interface text, operation text, name text, detail jsonb)
LANGUAGE sql AS $$
	SELECT transaction_id = lag(transaction_id) OVER (ORDER BY at, operation),
	       CASE WHEN role = current_user THEN '<me>' ELSE role::text END,
	       interface, operation, name,
	       CASE WHEN operation = 'AlterTransaction' THEN detail - 'transaction_id' ELSE detail END
	  FROM lance_namespace.commit_history
	 WHERE id[1] IN ('hf', 'hf_rb') AND at >= t0
	 ORDER BY at, operation
$$;

--
-- The configuration view
--
SELECT name, value, source, description FROM lance_namespace.configuration ORDER BY name;
-- the limits it reports are the ones the code enforces: at the limit is
-- accepted, one past it is refused
SELECT value::int AS max_name FROM lance_namespace.configuration WHERE name = 'max_name_bytes' \gset
SELECT lance_namespace.lance_namespace_exists(ARRAY[repeat('n', :max_name)]) IS NOT NULL AS name_at_limit_accepted;
SELECT lance_try(format('SELECT lance_namespace.lance_namespace_exists(ARRAY[%L])', repeat('n', :max_name + 1))) LIKE 'LN013%' AS name_past_limit_refused;
SELECT value::int AS max_depth FROM lance_namespace.configuration WHERE name = 'max_id_depth' \gset
SELECT lance_namespace.lance_namespace_exists(array_fill('d'::text, ARRAY[:max_depth])) IS NOT NULL AS depth_at_limit_accepted;
SELECT lance_try(format('SELECT lance_namespace.lance_namespace_exists(%L::text[])', array_fill('d'::text, ARRAY[:max_depth + 1]))) LIKE 'LN013%' AS depth_past_limit_refused;
SELECT value::int AS max_batch FROM lance_namespace.configuration WHERE name = 'max_batch_entries' \gset
SELECT lance_try(format('SELECT lance_namespace.rest_batch_create_table_versions(%L)',
	jsonb_build_object('entries', (SELECT jsonb_agg(jsonb_build_object('id', ARRAY['hf_none', 't'], 'version', g, 'manifest_path', '/m'))
								   FROM generate_series(1, :max_batch + 1) g)))) AS batch_past_limit;
SELECT lance_try(format('SELECT lance_namespace.rest_batch_create_table_versions(%L)',
	jsonb_build_object('entries', (SELECT jsonb_agg(jsonb_build_object('id', ARRAY['hf_none', 't'], 'version', g, 'manifest_path', '/m'))
								   FROM generate_series(1, :max_batch) g)))) LIKE 'LN001%' AS batch_at_limit_reaches_the_catalog;
SET lance_namespace.interface = 'rest';
SELECT value, source FROM lance_namespace.configuration WHERE name = 'interface';
RESET lance_namespace.interface;
SELECT value FROM lance_namespace.configuration WHERE name = 'interface';
-- lance_namespace.notify_commits (once the library is loaded, here by a
-- call of one of its functions): off by default, set by superusers only;
-- the old name lance_namespace.change_feed is gone, and the library
-- reserves its prefix
SELECT lance_namespace.lance_current_transaction_id() IS NOT NULL AS library_loaded;
SHOW lance_namespace.notify_commits;
SET lance_namespace.notify_commits = on;
SELECT value FROM lance_namespace.configuration WHERE name = 'notify_commits';
RESET lance_namespace.notify_commits;
SET ROLE regress_lance_historian;
SET lance_namespace.notify_commits = on;
RESET ROLE;
SET lance_namespace.change_feed = off;

--
-- lance_current_transaction_id: one id per transaction
--
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS tx1 \gset
SELECT lance_namespace.lance_current_transaction_id() = :'tx1' AS stable_within_tx,
       lance_namespace.lance_current_transaction_id() ~ '^[0-9]+$' AS is_decimal,
       pg_current_xact_id()::text = :'tx1' AS is_the_xid8;
SELECT * FROM lance_namespace.lance_create_namespace('{hf}');
SELECT lance_namespace.rest_declare_table('{"id": ["hf", "t"]}') ->> 'transaction_id' = :'tx1' AS declare_same_id;
SELECT lance_namespace.rest_create_table_version('{"id": ["hf", "t"], "version": 1, "manifest_path": "/m/1"}')
       ->> 'transaction_id' = :'tx1' AS version_same_id;
-- the current transaction is Running, with the operations done so far
SELECT status, properties - 'time' - 'role' AS properties,
       (properties ->> 'time')::timestamptz BETWEEN now() AND clock_timestamp() AS time_ok,
       properties ->> 'role' = current_user AS role_ok
  FROM lance_namespace.lance_describe_transaction(:'tx1');
COMMIT;
-- a new transaction has a new id
SELECT lance_namespace.lance_current_transaction_id() <> :'tx1' AS new_id;
-- committed: Succeeded, with the operations in order, the role and interface
SELECT status, properties - 'time' - 'role' AS properties,
       (properties ->> 'time')::timestamptz BETWEEN now() - interval '10 min' AND now() AS time_ok,
       properties ->> 'role' = current_user AS role_ok
  FROM lance_namespace.lance_describe_transaction(:'tx1');
SELECT r - 'properties' AS response, r #>> '{properties,operation}' AS operation
  FROM lance_namespace.rest_describe_transaction(jsonb_build_object('id', jsonb_build_array(:'tx1'))) r;
-- leading zeros name the same transaction
SELECT status FROM lance_namespace.lance_describe_transaction('000' || :'tx1');

-- every rest_* mutating response carries the transaction_id of its
-- transaction; the read-only ones do not
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS tx2 \gset
CREATE TEMP TABLE responses (n serial, op text, r jsonb);
INSERT INTO responses (op, r) SELECT 'create_namespace', lance_namespace.rest_create_namespace('{"id": ["hf", "sub"]}');
INSERT INTO responses (op, r) SELECT 'register_table', lance_namespace.rest_register_table('{"id": ["hf", "reg"], "location": "/ext/reg"}');
INSERT INTO responses (op, r) SELECT 'declare_table', lance_namespace.rest_declare_table('{"id": ["hf", "u"]}');
INSERT INTO responses (op, r) SELECT 'create_table_version', lance_namespace.rest_create_table_version('{"id": ["hf", "u"], "version": 1, "manifest_path": "/m/u1"}');
INSERT INTO responses (op, r) SELECT 'batch_create_table_versions', lance_namespace.rest_batch_create_table_versions('{"entries": [{"id": ["hf", "u"], "version": 2, "manifest_path": "/m/u2"}]}');
INSERT INTO responses (op, r) SELECT 'create_table_branch', lance_namespace.rest_create_table_branch('{"id": ["hf", "u"], "name": "b"}');
INSERT INTO responses (op, r) SELECT 'create_table_tag', lance_namespace.rest_create_table_tag('{"id": ["hf", "u"], "tag": "g", "version": 2}');
INSERT INTO responses (op, r) SELECT 'update_table_tag', lance_namespace.rest_update_table_tag('{"id": ["hf", "u"], "tag": "g", "version": 1}');
INSERT INTO responses (op, r) SELECT 'delete_table_tag', lance_namespace.rest_delete_table_tag('{"id": ["hf", "u"], "tag": "g"}');
INSERT INTO responses (op, r) SELECT 'delete_table_branch', lance_namespace.rest_delete_table_branch('{"id": ["hf", "u"], "name": "b"}');
INSERT INTO responses (op, r) SELECT 'batch_delete_table_versions', lance_namespace.rest_batch_delete_table_versions('{"id": ["hf", "u"], "ranges": [{"start_version": 1, "end_version": 2}]}');
INSERT INTO responses (op, r) SELECT 'batch_commit_tables', lance_namespace.rest_batch_commit_tables('{"operations": []}');
INSERT INTO responses (op, r) SELECT 'rename_table', lance_namespace.rest_rename_table('{"id": ["hf", "u"], "new_table_name": "u2"}');
INSERT INTO responses (op, r) SELECT 'deregister_table', lance_namespace.rest_deregister_table('{"id": ["hf", "reg"]}');
INSERT INTO responses (op, r) SELECT 'drop_namespace', lance_namespace.rest_drop_namespace('{"id": ["hf", "sub"]}');
INSERT INTO responses (op, r) SELECT 'describe_table', lance_namespace.rest_describe_table('{"id": ["hf", "u2"]}');
INSERT INTO responses (op, r) SELECT 'list_table_versions', lance_namespace.rest_list_table_versions('{"id": ["hf", "u2"]}');
-- (DropNamespaceResponse gives it as an array of strings, spec.yaml)
SELECT op, r ? 'transaction_id' AS has_txid,
       COALESCE(r #>> '{transaction_id,0}', r ->> 'transaction_id') = :'tx2' AS is_tx2,
       jsonb_typeof(r -> 'transaction_id') AS txid_type
  FROM responses ORDER BY n;
COMMIT;
SELECT status, properties ->> 'operation' AS operation, properties ->> 'operation_count' AS n
  FROM lance_namespace.lance_describe_transaction(:'tx2');

--
-- DescribeTransaction: rolled back, unknown, malformed
--
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS tx_rb \gset
SELECT * FROM lance_namespace.lance_create_namespace('{hf_rb}');
SELECT location FROM lance_namespace.lance_declare_table('{hf_rb,t}');
SELECT version FROM lance_namespace.lance_create_table_version('{hf_rb,t}', 1, '/m/rb');
SELECT version FROM lance_namespace.lance_create_table_version('{hf,t}', 2, '/m/2-rb');
ROLLBACK;
SELECT * FROM lance_namespace.lance_describe_transaction(:'tx_rb');
-- a transaction that failed on an error is Failed too
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS tx_err \gset
SELECT version FROM lance_namespace.lance_create_table_version('{hf,t}', 2, '/m/2-err');
SELECT version FROM lance_namespace.lance_create_table_version('{hf,t}', 1, '/m/1-other');
COMMIT;
SELECT * FROM lance_namespace.lance_describe_transaction(:'tx_err');
-- the current transaction is Running before any catalog operation too
-- (another session's open transaction: see test/t/020_change_feed.pl)
BEGIN;
SELECT lance_namespace.lance_current_transaction_id() AS tx_open \gset
SELECT * FROM lance_namespace.lance_describe_transaction(:'tx_open');
COMMIT;
-- a committed transaction that did nothing in the catalog: not found (10)
SELECT regexp_replace(lance_try(format($$SELECT * FROM lance_namespace.lance_describe_transaction(%L)$$, :'tx_open')),
                      '"[0-9]+"', '"<xid>"');
-- ids not yet assigned, out of range, or not numbers (10)
SELECT regexp_replace(lance_try(format($$SELECT * FROM lance_namespace.lance_describe_transaction(%L)$$,
	(pg_current_xact_id()::text::numeric + 1000000)::text)), '"[0-9]+"', '"<xid>"');
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('18446744073709551615')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('18446744073709551616')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('99999999999999999999')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('123456789012345678901')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('abc')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('-1')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('1.5')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction(' 1')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction('')$$);
SELECT lance_try($$SELECT * FROM lance_namespace.lance_describe_transaction(NULL)$$);
SELECT lance_try($$SELECT lance_namespace.rest_describe_transaction('{"id": ["x"]}')$$);

--
-- AlterTransaction: status and properties of a transaction the catalog
-- keeps, all actions or none
--
-- the request is checked first: actions must be a non-empty array of
-- objects that each set exactly one action
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L)$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"set_status": {"status": "Canceled"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setStatusAction": {"status": "Done"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setStatusAction": {"status": "Failed"}, "setPropertyAction": {"key": "k", "value": "v"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setPropertyAction": {"key": "k", "value": 1}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setPropertyAction": {"key": "k", "value": "v", "mode": "replace"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setPropertyAction": {"key": "role", "value": "me"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT lance_try($$SELECT lance_namespace.lance_alter_transaction('nope', '[{"setStatusAction": {"status": "Succeeded"}}]')$$);
SELECT lance_try($$SELECT lance_namespace.lance_alter_transaction(NULL)$$);
-- a status can be confirmed (any case), never changed: the transaction committed
SELECT lance_namespace.lance_alter_transaction(:'tx1', '[{"setStatusAction": {"status": "succeeded"}}]') -> 'status' AS confirmed;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setStatusAction": {"status": "Canceled"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
-- properties: set (Overwrite by default), then shown by DescribeTransaction
SELECT lance_namespace.lance_alter_transaction(:'tx1',
	'[{"setPropertyAction": {"key": "ticket", "value": "T-1"}}, {"setPropertyAction": {"key": "owner", "value": "qa"}}]')
	-> 'properties' ->> 'ticket' AS ticket;
SELECT properties ->> 'ticket' AS ticket, properties ->> 'owner' AS owner
  FROM lance_namespace.lance_describe_transaction(:'tx1');
-- all or none: the second action fails (Fail mode on an existing key), so
-- the first is not applied either
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L,
	'[{"setPropertyAction": {"key": "extra", "value": "x"}}, {"setPropertyAction": {"key": "ticket", "value": "T-2", "mode": "Fail"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
SELECT properties ? 'extra' AS extra_applied, properties ->> 'ticket' AS ticket
  FROM lance_namespace.lance_describe_transaction(:'tx1');
-- Skip keeps the value, Overwrite replaces it
SELECT lance_namespace.lance_alter_transaction(:'tx1', '[{"setPropertyAction": {"key": "ticket", "value": "T-3", "mode": "SKIP"}}]')
	#>> '{properties,ticket}' AS after_skip;
SELECT lance_namespace.lance_alter_transaction(:'tx1', '[{"setPropertyAction": {"key": "ticket", "value": "T-4", "mode": "overwrite"}}]')
	#>> '{properties,ticket}' AS after_overwrite;
-- unset: Skip (the default) for a missing key, Fail refuses it
SELECT lance_namespace.lance_alter_transaction(:'tx1', '[{"unsetPropertyAction": {"key": "owner"}}, {"unsetPropertyAction": {"key": "never"}}]')
	-> 'properties' ? 'owner' AS owner_left;
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"unsetPropertyAction": {"key": "owner", "mode": "Fail"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
-- through the REST binding
SELECT r ->> 'status' AS status, r #>> '{properties,ticket}' AS ticket
  FROM lance_namespace.rest_alter_transaction(jsonb_build_object('id', jsonb_build_array(:'tx1'),
		'actions', '[{"setStatusAction": {"status": "Succeeded"}}]'::jsonb)) r;
-- each alteration is in the history
SELECT operation, detail ->> 'transaction_id' = :'tx1' AS of_tx1, detail ->> 'actions' AS actions
  FROM lance_namespace.commit_history
 WHERE operation = 'AlterTransaction' AND detail ->> 'transaction_id' = :'tx1' ORDER BY at;
-- a role that can read the transaction but did not make it may not alter it,
-- nor write the properties table directly
SELECT lance_namespace.lance_grant('regress_lance_historian', '{hf}', 'read');
SET ROLE regress_lance_historian;
SELECT status FROM lance_namespace.lance_describe_transaction(:'tx1');
SELECT replace(lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"setPropertyAction": {"key": "k", "value": "v"}}]')$$, :'tx1')), :'tx1', '<tx1>') AS result;
INSERT INTO lance_namespace.transaction_properties (transaction_id, key, value, set_by) VALUES ('1', 'k', 'v', 'x');
DELETE FROM lance_namespace.transaction_properties;
RESET ROLE;
SELECT lance_namespace.lance_revoke('regress_lance_historian', '{hf}', 'read');

--
-- lance_changes(since): the table versions whose transactions became
-- visible after the snapshot "since", read from the history
--
-- STRICT: no cursor, no rows
SELECT count(*) FROM lance_namespace.lance_changes(NULL);
-- from the cursor taken at the start: the versions committed since, once
-- each, in insert order, and nothing of the rolled-back (tx_rb) or failed
-- (tx_err) transactions, nor of the earlier tests.  The feed is the
-- history: hf$u's version 2 (deleted since) and the name hf$u (renamed
-- since) are as they were committed.
SELECT lance_namespace.lance_format_id(id) AS name, branch, version, manifest_path,
       CASE transaction_id::text WHEN :'tx1' THEN 'tx1' WHEN :'tx2' THEN 'tx2'
            ELSE transaction_id::text END AS tx
  FROM lance_namespace.lance_changes(:'hf_c0');
-- one new commit, from a cursor taken before it: the row has the values
-- DescribeTableVersion gives and the id of the committing transaction;
-- cursor is the statement's snapshot; payload is lance_commit_payload()
-- of the columns
SELECT pg_current_snapshot() AS hf_c1 \gset
SELECT * FROM lance_namespace.lance_create_namespace('{hf_feed}');
SELECT location FROM lance_namespace.lance_declare_table('{hf_feed,t}');
SELECT lance_namespace.rest_create_table_version('{"id": ["hf_feed", "t"], "version": 1, "manifest_path": "/m/f1"}')
       ->> 'transaction_id' AS tx_f1 \gset
SELECT c.id, c.branch, c.version, c.manifest_path,
       c.transaction_id::text = :'tx_f1' AS same_tx,
       c.cursor::text = pg_current_snapshot()::text AS cursor_is_snapshot,
       c.manifest_path = d.manifest_path AS described_path,
       c.timestamp_millis = d.timestamp_millis AS described_time,
       c.payload::jsonb - 'timestamp_millis' - 'transaction_id' AS payload,
       (c.payload ->> 'timestamp_millis')::bigint = c.timestamp_millis AS payload_time,
       c.payload ->> 'transaction_id' = :'tx_f1' AS payload_tx,
       c.payload::text = lance_namespace.lance_commit_payload(c.id, c.branch, c.version, c.manifest_path,
                                                              c.timestamp_millis, c.transaction_id)::text AS payload_of_columns
  FROM lance_namespace.lance_changes(:'hf_c1') c,
       lance_namespace.lance_describe_table_version(c.id, c.version) d;
-- a version on a branch
SELECT lance_namespace.lance_changes_cursor() AS hf_c1b \gset
SELECT lance_namespace.lance_create_table_branch('{hf_feed,t}', 'dev') - 'createAt' AS branch;
SELECT version FROM lance_namespace.lance_create_table_version('{hf_feed,t}', 2, '/m/f2', branch => 'dev');
SELECT lance_namespace.lance_format_id(id) AS name, branch, version, manifest_path
  FROM lance_namespace.lance_changes(:'hf_c1');
-- with until, an earlier cursor: only what was committed before it (the
-- gateway's catch-up of a resuming subscriber), with until as the cursor
SELECT lance_namespace.lance_format_id(id) AS name, branch, version,
       cursor::text = :'hf_c1b' AS cursor_is_until
  FROM lance_namespace.lance_changes(:'hf_c1', :'hf_c1b');
SELECT count(*) AS nothing_between FROM lance_namespace.lance_changes(:'hf_c1b', :'hf_c1b');
SELECT count(*) AS null_until_is_now FROM lance_namespace.lance_changes(:'hf_c1', NULL);
-- from the cursor of that call: nothing
SELECT cursor AS hf_c2 FROM lance_namespace.lance_changes(:'hf_c1') LIMIT 1 \gset
SELECT count(*) FROM lance_namespace.lance_changes(:'hf_c2');
-- the current transaction's own version is not returned before it
-- commits, from any cursor; after the commit it is, once: not again for an
-- idempotent repeat, nor for a rolled-back version
BEGIN;
SELECT version FROM lance_namespace.lance_create_table_version('{hf_feed,t}', 3, '/m/f3');
SELECT count(*) AS own_uncommitted FROM lance_namespace.lance_changes(:'hf_c2');
-- a rolled-back subtransaction, with a transaction id of its own, moves
-- the snapshot's xmax past this transaction's id (which a snapshot never
-- lists as in progress): lance_changes_cursor() lists it, so the version
-- stays out, and a cursor taken here does not count it as seen
SAVEPOINT s;
SELECT version FROM lance_namespace.lance_create_table_version('{hf_feed,t}', 4, '/m/f4-sub');
ROLLBACK TO SAVEPOINT s;
SELECT pg_snapshot_xmax(pg_current_snapshot()) > pg_current_xact_id() AS xmax_past_own;
SELECT count(*) AS own_uncommitted FROM lance_namespace.lance_changes(:'hf_c2');
SELECT count(*) AS own_uncommitted FROM lance_namespace.lance_changes(:'hf_c0')
 WHERE id = '{hf_feed,t}' AND version = 3;
SELECT lance_namespace.lance_changes_cursor() AS hf_cw \gset
SELECT pg_visible_in_snapshot(pg_current_xact_id(), pg_current_snapshot()) AS plain_snapshot_counts_own,
       pg_visible_in_snapshot(pg_current_xact_id(), :'hf_cw') AS cursor_counts_own;
COMMIT;
SELECT version AS own_after_commit FROM lance_namespace.lance_changes(:'hf_cw');
SELECT version FROM lance_namespace.lance_create_table_version('{hf_feed,t}', 3, '/m/f3');
BEGIN;
SELECT version FROM lance_namespace.lance_create_table_version('{hf_feed,t}', 4, '/m/f4');
ROLLBACK;
SELECT lance_namespace.lance_format_id(id) AS name, branch, version
  FROM lance_namespace.lance_changes(:'hf_c2');
-- lance_commit_payload: the JSON of NOTIFY and of lance_changes, strings
-- escaped, the transaction id a string (an xid8 can exceed the integers
-- JSON numbers hold exactly); STRICT
SELECT lance_namespace.lance_commit_payload('{ns,"t\"x"}', 'dev/1', 7, '/m/"q"', 1700000000000, '18446744073709551615');
SELECT pg_typeof(lance_namespace.lance_commit_payload('{a}', 'main', 1, '/m', 0, '1'));
SELECT lance_namespace.lance_commit_payload('{a}', NULL, 1, '/m', 0, '1') IS NULL AS null_branch_null;
-- an id of another shape is InvalidInput, not flattened or a PostgreSQL array error
SELECT lance_try($$SELECT lance_namespace.lance_commit_payload('{{a,b},{c,d}}', 'main', 1, '/m', 0, '1')$$);
SELECT lance_try($$SELECT lance_namespace.lance_commit_payload('{a,NULL}', 'main', 1, '/m', 0, '1')$$);
-- a malformed cursor is PostgreSQL's own error (pg_snapshot input)
SELECT * FROM lance_namespace.lance_changes('not a snapshot');
SELECT * FROM lance_namespace.lance_changes('10:5:');

--
-- commit_history: role, interface, operation and detail of every mutating
-- operation, nothing for rolled-back work
--
SELECT lance_namespace.lance_grant('regress_lance_historian', '{hf}', 'write');
SET ROLE regress_lance_historian;
SELECT location FROM lance_namespace.lance_declare_table('{hf,by_role}');
SET lance_namespace.interface = 'rest';
SELECT lance_namespace.rest_create_table_version('{"id": ["hf", "by_role"], "version": 1, "manifest_path": "/m/r1"}') ? 'version' AS created;
RESET lance_namespace.interface;
-- lance_changes returns only the versions of tables the role may read
-- (the history's row level security): those of hf, not of hf_feed
SELECT lance_namespace.lance_format_id(id) AS name, version FROM lance_namespace.lance_changes(:'hf_c0');
RESET ROLE;
-- an empty setting is the default
SET lance_namespace.interface = '';
SELECT lance_namespace.lance_create_table_tag('{hf,by_role}', 'x', 1);
RESET lance_namespace.interface;
-- failed operations and read-only ones record nothing
SELECT lance_try($$SELECT lance_namespace.lance_create_table_tag('{hf,by_role}', 'x', 1)$$);
SELECT count(*) FROM lance_namespace.lance_describe_table_version('{hf,by_role}');
SELECT * FROM pg_temp.hf_history(:'hf_t0');
SELECT count(*) AS rolled_back_rows FROM lance_namespace.commit_history
 WHERE transaction_id IN (:'tx_rb', :'tx_err');
-- the view is the table, transaction ids as text
SELECT (SELECT count(*) FROM lance_namespace.history) = (SELECT count(*) FROM lance_namespace.commit_history) AS same_rows,
       (SELECT pg_typeof(transaction_id) FROM lance_namespace.commit_history LIMIT 1) AS txid_type;

SELECT * FROM lance_namespace.lance_drop_namespace('{hf}', NULL, 'Cascade');
SELECT * FROM lance_namespace.lance_drop_namespace('{hf_feed}', NULL, 'Cascade');
SELECT operation, name, detail FROM lance_namespace.commit_history
 WHERE name = 'hf' ORDER BY at DESC LIMIT 1;
SELECT lance_namespace.lance_revoke('regress_lance_historian', '{hf}', 'write');
DROP OWNED BY regress_lance_historian;
DROP ROLE regress_lance_historian;
