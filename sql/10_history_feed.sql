--
-- 10_history_feed: transaction ids, DescribeTransaction, AlterTransaction,
-- the commit_history view and the configuration view.  (The NOTIFY change
-- feed is tested in test/t/020_change_feed.pl.)
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
CREATE FUNCTION pg_temp.hf_history(t0 timestamptz) RETURNS TABLE (
	same_txid_as_prev boolean, role text, interface text, operation text, name text, detail jsonb)
LANGUAGE sql AS $$
	SELECT transaction_id = lag(transaction_id) OVER (ORDER BY at, operation),
	       CASE WHEN role = current_user THEN '<me>' ELSE role::text END,
	       interface, operation, name, detail
	  FROM lance_namespace.commit_history
	 WHERE id[1] IN ('hf', 'hf_rb') AND at >= t0
	 ORDER BY at, operation
$$;

--
-- The configuration view
--
SELECT name, value, source, description FROM lance_namespace.configuration ORDER BY name;
SET lance_namespace.interface = 'rest';
SELECT value, source FROM lance_namespace.configuration WHERE name = 'interface';
RESET lance_namespace.interface;
SELECT value FROM lance_namespace.configuration WHERE name = 'interface';

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
INSERT INTO responses (op, r) SELECT 'batch_delete_table_versions', lance_namespace.rest_batch_delete_table_versions('{"id": ["hf", "u"], "ranges": [{"start_version": 2, "end_version": -1}]}');
INSERT INTO responses (op, r) SELECT 'batch_commit_tables', lance_namespace.rest_batch_commit_tables('{"operations": []}');
INSERT INTO responses (op, r) SELECT 'rename_table', lance_namespace.rest_rename_table('{"id": ["hf", "u"], "new_table_name": "u2"}');
INSERT INTO responses (op, r) SELECT 'deregister_table', lance_namespace.rest_deregister_table('{"id": ["hf", "reg"]}');
INSERT INTO responses (op, r) SELECT 'drop_namespace', lance_namespace.rest_drop_namespace('{"id": ["hf", "sub"]}');
INSERT INTO responses (op, r) SELECT 'describe_table', lance_namespace.rest_describe_table('{"id": ["hf", "u2"]}');
INSERT INTO responses (op, r) SELECT 'list_table_versions', lance_namespace.rest_list_table_versions('{"id": ["hf", "u2"]}');
SELECT op, r ? 'transaction_id' AS has_txid, r ->> 'transaction_id' = :'tx2' AS is_tx2 FROM responses ORDER BY n;
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
-- AlterTransaction: Unsupported (0) for any transaction that exists
--
SELECT lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L)$$, :'tx1'));
SELECT lance_try(format($$SELECT lance_namespace.lance_alter_transaction(%L, '[{"set_status": {"status": "Canceled"}}]')$$, :'tx1'));
SELECT lance_try(format($$SELECT lance_namespace.rest_alter_transaction(%L)$$,
	jsonb_build_object('id', jsonb_build_array(:'tx1'), 'actions', '[]'::jsonb)));
SELECT lance_try($$SELECT lance_namespace.lance_alter_transaction('nope')$$);
SELECT lance_try($$SELECT lance_namespace.lance_alter_transaction(NULL)$$);

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
SELECT operation, name, detail FROM lance_namespace.commit_history
 WHERE name = 'hf' ORDER BY at DESC LIMIT 1;
SELECT lance_namespace.lance_revoke('regress_lance_historian', '{hf}', 'write');
DROP OWNED BY regress_lance_historian;
DROP ROLE regress_lance_historian;
