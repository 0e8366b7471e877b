/*-------------------------------------------------------------------------
 *
 * audit.c
 *	  The audit trail: history rows written by the database, never by the
 *	  caller.
 *
 * Callers have no privilege on lance_namespace.history.  Every history row
 * is inserted by this file's C code, as the catalog's owner (the owner of
 * the history table), the way PostgreSQL's foreign key triggers switch to
 * a table's owner: the rows' role, session_role and interface come from
 * the backend's state, not from anything the caller passes.
 *
 *	- A catalog operation (a lance_* function) writes one row per operation
 *	  (lance_record), with its spec name and detail.  Its own statements
 *	  are those whose plan is marked "operation" in spiutil.c; while one of
 *	  them runs, op_depth is positive.  No caller code runs inside them
 *	  (every function, operator and trigger they reach is the extension's).
 *	- The trigger lance_audit (AFTER ROW on entries, versions, branches,
 *	  tags) records every other change, made by direct DML or a cascade, as
 *	  "<INSERT|UPDATE|DELETE> <table>" with the old and new rows.  A direct
 *	  DELETE of a table records the versions, branches and tags that go
 *	  with it by cascade too; the owner's COPY (pg_restore) is not
 *	  recorded, as it brings the history with it.
 *	- Every new version, whichever path inserted it, is recorded as
 *	  CreateTableVersion (the change feed reads those).  Up to 0.3.0 the
 *	  audit trigger wrote a history row for it.  From 0.4.0 on the version
 *	  row is the record (lance_version_record, from the versions_check
 *	  trigger): the history is a view of history_log (the rows written
 *	  here) and of those records, and a record moves to the log when its
 *	  row goes (versions_moved, versions_truncate) or is changed by the
 *	  owner (versions_check).  The library serves both schemas, until
 *	  ALTER EXTENSION UPDATE.
 *
 * role is the session's current role (set by login or SET ROLE; neither
 * SECURITY DEFINER functions nor foreign key cascades change it),
 * session_role the session user (the column default), and interface is
 * "rest" only when lance_namespace.interface says so AND the session user
 * may EXECUTE lance_authenticate, which the catalog's owner grants to the
 * gateway's authenticator role and to no tenant: a psql user cannot claim
 * "rest" by setting the GUC.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#if PG_VERSION_NUM >= 160000
#include "catalog/pg_proc.h"
#endif
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/pquery.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "lance_namespace.h"

/* > 0 while a statement of a catalog operation runs (see lance_exec) */
static int	op_depth = 0;

/* > 0 while the catalog clears a table's or a branch's versions (0.6.0) */
static int	clearing_depth = 0;

/* The version a CreateTableVersion is inserting: its table's id and path */
static int64 version_table_id = -1;
static ArrayType *version_path = NULL;
static TimestampTz version_at = 0;

static ArrayType *table_path(Oid owner, int64 table_id);

static LanceFunctionRef authenticate_ref = {
	"lance_authenticate", 2, {TEXTOID, TEXTOID}
};

/* attribute numbers of the audited tables */
#define Anum_entries_path		5
#define Anum_table_id			1
#define Anum_versions_branch	2
#define Anum_versions_version	3
#define Anum_versions_manifest	4

/* 0.4.0: the creation record that a version row carries */
#define Anum_versions_created_by		11
#define Anum_versions_transaction_id	12
#define Anum_versions_created_at		13
#define Anum_versions_interface			14
#define Anum_versions_session_role		15
#define Anum_versions_table_path		16
#define VERSION_RECORD_NCOLS			6

/*
 * reset_state, xact_callback, subxact_callback
 *		An error inside an operation's statement leaves op_depth raised:
 *		clear it (and the version context) when the (sub)transaction
 *		aborts, so that later direct writes are audited and refused as
 *		they should be.  Clearing more than needed only audits more.
 */
static void
reset_state(void)
{
	op_depth = 0;
	clearing_depth = 0;
	version_table_id = -1;
	version_path = NULL;
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		reset_state();
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		reset_state();
}

/*
 * lance_audit_init
 *		Register the abort callbacks (from _PG_init).
 */
void
lance_audit_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}

/*
 * lance_operation_begin / lance_operation_end
 *		Bracket a statement of a catalog operation (lance_exec does it for
 *		the plans marked "operation").
 */
void
lance_operation_begin(void)
{
	op_depth++;
}

void
lance_operation_end(void)
{
	if (op_depth > 0)
		op_depth--;
}

/*
 * lance_in_operation
 *		Whether a statement of a catalog operation is running.
 */
bool
lance_in_operation(void)
{
	return op_depth > 0;
}

/*
 * lance_clearing_begin / lance_clearing_end / lance_clearing_versions
 *		Bracket a statement by which the catalog removes every version of a
 *		table or a branch (lance_exec does it for the plans marked
 *		"clearing"); while it runs, a branch's latest version may go
 *		(lance_versions_keep_latest).
 */
void
lance_clearing_begin(void)
{
	clearing_depth++;
}

void
lance_clearing_end(void)
{
	if (clearing_depth > 0)
		clearing_depth--;
}

bool
lance_clearing_versions(void)
{
	return clearing_depth > 0;
}

/*
 * lance_audit_version
 *		Tell the audit trigger which table (path) the next version insert
 *		belongs to and the instant to record (the version's own timestamp);
 *		table_id -1 clears it.  Saves the trigger a lookup per commit.
 */
void
lance_audit_version(int64 table_id, ArrayType *path, TimestampTz at)
{
	version_table_id = table_id;
	version_path = path;
	version_at = at;
}

/*
 * lance_catalog_owner
 *		The catalog's owner: the owner of lance_namespace.entries (and of
 *		every table of the catalog).
 */
Oid
lance_catalog_owner(void)
{
	Oid			nsp = get_namespace_oid("lance_namespace", false);
	Oid			relid = get_relname_relid("entries", nsp);
	HeapTuple	tup;
	Oid			owner;

	if (!OidIsValid(relid))
		elog(ERROR, "relation lance_namespace.entries does not exist");
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * lance_is_owner_of
 *		Whether the current user has the privileges of rel's owner (the
 *		catalog's owner, or a superuser).
 */
bool
lance_is_owner_of(Relation rel)
{
	return has_privs_of_role(GetUserId(), rel->rd_rel->relowner);
}

/*
 * lance_effective_interface
 *		"rest" when lance_namespace.interface is rest and the session user
 *		is a gateway authenticator (may EXECUTE lance_authenticate);
 *		otherwise "sql".
 */
const char *
lance_effective_interface(void)
{
	Oid			fn;
	AclResult	result;

	if (lance_interface == NULL || strcmp(lance_interface, "rest") != 0)
		return "sql";
	fn = lance_function_oid(&authenticate_ref);
#if PG_VERSION_NUM >= 160000
	result = object_aclcheck(ProcedureRelationId, fn, GetSessionUserId(), ACL_EXECUTE);
#else
	result = pg_proc_aclcheck(fn, GetSessionUserId(), ACL_EXECUTE);
#endif
	return result == ACLCHECK_OK ? "rest" : "sql";
}

PG_FUNCTION_INFO_V1(lance_interface_fn);

/*
 * lance_interface() returns text
 *		The interface the history records for this session (sql or rest).
 */
Datum
lance_interface_fn(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(lance_effective_interface()));
}

/*
 * insert_history
 *		Insert one history row as owner, the catalog's owner.  Must be called
 *		while connected to SPI.  An error restores the user id with the
 *		aborting (sub)transaction.
 */
static void
insert_history(Oid owner, TimestampTz at, const char *op, ArrayType *id, Jsonb *detail)
{
	Datum		values[6];
	char		nulls[6] = "      ";
	bool		has_log;

	values[0] = TimestampTzGetDatum(at);
	values[1] = CStringGetTextDatum(GetUserNameFromId(GetOuterUserId(), false));
	values[2] = CStringGetTextDatum(lance_effective_interface());
	values[3] = CStringGetTextDatum(op);
	values[4] = PointerGetDatum(id);
	if (detail != NULL)
		values[5] = JsonbPGetDatum(detail);
	else
		nulls[5] = 'n';
	/* 0.4.0's log, or the history table of a catalog not yet updated */
	has_log = OidIsValid(get_relname_relid("history_log",
										   get_namespace_oid("lance_namespace", false)));
	lance_exec_as(owner, has_log ? PLAN_INSERT_HISTORY_LOG : PLAN_INSERT_HISTORY,
				  values, nulls, false, 0);
}

/*
 * lance_versions_carry_records
 *		Whether versions (desc) has the creation record columns of 0.4.0;
 *		a catalog not yet updated keeps every record in its history table.
 */
bool
lance_versions_carry_records(TupleDesc desc)
{
	return desc->natts >= Anum_versions_table_path &&
		strcmp(NameStr(TupleDescAttr(desc, Anum_versions_transaction_id - 1)->attname),
			   "transaction_id") == 0;
}

/*
 * lance_restoring
 *		Whether rel's rows are being restored: the owner's COPY (pg_restore)
 *		brings the history with the rows, so neither is written again.
 *		(Only roles that row level security does not apply to may COPY
 *		into the catalog's tables.)
 */
bool
lance_restoring(Relation rel)
{
	return ActivePortal != NULL && ActivePortal->commandTag == CMDTAG_COPY &&
		lance_is_owner_of(rel);
}

/*
 * version_record_values
 *		The creation record of a new version row (tuple) of versions, in the
 *		order of record_cols: the role (the session's current role), the
 *		transaction (assigning its id), the instant, the interface, the
 *		session role and the table's id (its path) as the version was
 *		created.
 */
static const int record_cols[VERSION_RECORD_NCOLS] = {
	Anum_versions_created_by, Anum_versions_transaction_id, Anum_versions_created_at,
	Anum_versions_interface, Anum_versions_session_role, Anum_versions_table_path
};

static void
version_record_values(Relation rel, HeapTuple tuple, Datum *values, bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;
	int64		table_id = DatumGetInt64(heap_getattr(tuple, Anum_table_id, desc, &isnull));
	ArrayType  *path;
	TimestampTz at;

	if (version_path != NULL && table_id == version_table_id)
	{
		/* CreateTableVersion: the id it was called with, its instant */
		path = version_path;
		at = version_at;
	}
	else
	{
		MemoryContext cxt = CurrentMemoryContext;

		SPI_connect();
		path = table_path(rel->rd_rel->relowner, table_id);
		if (path != NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			path = DatumGetArrayTypePCopy(PointerGetDatum(path));
			MemoryContextSwitchTo(old);
		}
		SPI_finish();
		at = GetCurrentTimestamp();
	}
	memset(nulls, 0, sizeof(bool) * VERSION_RECORD_NCOLS);
	values[0] = CStringGetTextDatum(GetUserNameFromId(GetOuterUserId(), false));
	values[1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	values[2] = TimestampTzGetDatum(at);
	values[3] = CStringGetTextDatum(lance_effective_interface());
	values[4] = CStringGetTextDatum(GetUserNameFromId(GetSessionUserId(), false));
	if (path != NULL)
		values[5] = PointerGetDatum(path);
	else
		nulls[5] = true;
}

/*
 * version_key_taken
 *		Whether a row with tuple's (table_id, branch, version) exists,
 *		committed or still being inserted or deleted by another transaction
 *		(the primary key, read with a dirty snapshot, as the insert's own
 *		conflict check reads it).
 */
static bool
version_key_taken(Relation rel, HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Oid			indexoid = RelationGetPrimaryKeyIndex(rel);
	Relation	index;
	IndexScanDesc scan;
	ScanKeyData keys[3];
	SnapshotData dirty;
	TupleTableSlot *slot;
	bool		isnull;
	bool		found;

	if (!OidIsValid(indexoid))
		return false;
	index = index_open(indexoid, AccessShareLock);
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[0], F_INT8EQ,
						   heap_getattr(tuple, Anum_table_id, desc, &isnull));
	ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[1], F_TEXTEQ,
						   heap_getattr(tuple, Anum_versions_branch, desc, &isnull));
	ScanKeyEntryInitialize(&keys[2], 0, 3, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[2], F_INT8EQ,
						   heap_getattr(tuple, Anum_versions_version, desc, &isnull));
	InitDirtySnapshot(dirty);
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, &dirty, 3, 0);
	index_rescan(scan, keys, 3, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, AccessShareLock);
	return found;
}

/*
 * lance_version_record
 *		0.4.0: tuple, a new row of versions, with the creation record that
 *		the database writes on it, whatever the inserter put there (see
 *		version_record_values).  The history and the change feed read it
 *		there; the row is the record, so a create writes no history row of
 *		its own.  Called by the versions_check trigger.
 *
 *		A transaction that has no id yet and whose row's key is taken will
 *		not insert it (a writer that lost the race for a version, or an
 *		idempotent repeat): it gets no record, so that it takes no
 *		transaction id and commits writing nothing.  Should the insert go
 *		through after all (the other inserter aborted in between), the
 *		versions_unrecorded trigger writes the record to the log.
 */
HeapTuple
lance_version_record(Relation rel, HeapTuple tuple)
{
	Datum		values[VERSION_RECORD_NCOLS];
	bool		nulls[VERSION_RECORD_NCOLS];

	if (!FullTransactionIdIsValid(GetTopFullTransactionIdIfAny()) &&
		version_key_taken(rel, tuple))
	{
		tuple = lance_version_record_cleared(rel, tuple);
		values[0] = CStringGetTextDatum(GetUserNameFromId(GetOuterUserId(), false));
		nulls[0] = false;
		return heap_modify_tuple_by_cols(tuple, RelationGetDescr(rel), 1, (int *) record_cols,
										 values, nulls);
	}
	version_record_values(rel, tuple, values, nulls);
	return heap_modify_tuple_by_cols(tuple, RelationGetDescr(rel), VERSION_RECORD_NCOLS,
									 (int *) record_cols, values, nulls);
}

/*
 * record_unrecorded_version
 *		0.4.0, versions_unrecorded (AFTER INSERT on versions, for a row
 *		without a record): the record of a version inserted after all by a
 *		writer that expected to lose (lance_version_record) goes to the log.
 */
static void
record_unrecorded_version(Relation rel, HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum		record[VERSION_RECORD_NCOLS];
	bool		record_nulls[VERSION_RECORD_NCOLS];
	Datum		values[7];
	char		nulls[7] = "       ";
	bool		isnull;

	version_record_values(rel, tuple, record, record_nulls);
	values[0] = record[1];
	values[1] = record[2];
	values[2] = record[0];
	values[3] = record[3];
	values[4] = record_nulls[5] ? PointerGetDatum(construct_empty_array(TEXTOID)) : record[5];
	values[5] = JsonbPGetDatum(lance_version_history_detail(
		TextDatumGetCString(heap_getattr(tuple, Anum_versions_branch, desc, &isnull)),
		DatumGetInt64(heap_getattr(tuple, Anum_versions_version, desc, &isnull)),
		TextDatumGetCString(heap_getattr(tuple, Anum_versions_manifest, desc, &isnull))));
	values[6] = record[4];
	SPI_connect();
	lance_exec_as(rel->rd_rel->relowner, PLAN_RECORD_VERSION, values, nulls, false, 0);
	SPI_finish();
}

/*
 * lance_version_record_cleared
 *		tuple without a creation record: the record columns but created_by
 *		NULL.  (The versions_check trigger, for an updated row whose record
 *		has moved to the log.)
 */
HeapTuple
lance_version_record_cleared(Relation rel, HeapTuple tuple)
{
	int			cols[VERSION_RECORD_NCOLS - 1] = {
		Anum_versions_transaction_id, Anum_versions_created_at,
		Anum_versions_interface, Anum_versions_session_role, Anum_versions_table_path
	};
	Datum		values[VERSION_RECORD_NCOLS - 1] = {0, 0, 0, 0, 0};
	bool		nulls[VERSION_RECORD_NCOLS - 1] = {true, true, true, true, true};

	return heap_modify_tuple_by_cols(tuple, RelationGetDescr(rel), VERSION_RECORD_NCOLS - 1,
									 cols, values, nulls);
}

/*
 * lance_move_version_record
 *		0.4.0: when the owner changes a version row that carries its
 *		creation record, the record moves to the log, with its own
 *		transaction id, instant and roles, so that the history and the
 *		change feed keep the version as it was committed (a deleted row's
 *		record moves the same way: move_deleted_records).  A row without a
 *		record (created before 0.4.0, whose record is in the log) has none
 *		to move.
 */
void
lance_move_version_record(Relation rel, HeapTuple old)
{
	Datum		values[1];

	values[0] = PointerGetDatum(&old->t_self);
	SPI_connect();
	lance_exec_as(rel->rd_rel->relowner, PLAN_MOVE_VERSION_RECORD, values, NULL, false, 0);
	SPI_finish();
}

/*
 * lance_record
 *		Append the history row of operation op on object id.  detail is a
 *		JSON object text, or NULL.  Must be called while connected to SPI.
 */
void
lance_record(const char *op, ArrayType *id, const char *detail)
{
	insert_history(lance_catalog_owner(), GetCurrentTimestamp(), op, id,
				   detail == NULL ? NULL :
				   DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(detail))));
}

/*
 * lance_record_version
 *		The CreateTableVersion row of a version just inserted, for a catalog
 *		whose schema predates the audit trigger (0.1.0, between the library's
 *		installation and ALTER EXTENSION UPDATE): with 0.2.0's schema,
 *		recognised by history.session_role, the trigger writes it.
 */
void
lance_record_version(ArrayType *id, TimestampTz at, const char *branch, int64 version,
					 const char *manifest_path)
{
	if (lance_catalog_oids()->history_has_session_role)
		return;
	/* a level of its own: the caller's SPI result (the version) survives */
	SPI_connect();
	insert_history(lance_catalog_owner(), at, "CreateTableVersion", id,
				   lance_version_history_detail(branch, version, manifest_path));
	SPI_finish();
}

/*
 * table_path
 *		The path of table entry table_id, read as owner (the catalog's) with
 *		the statement's snapshot (in which a table deleted by the statement
 *		that cascades to this row still exists), or NULL when it is gone.
 */
static ArrayType *
table_path(Oid owner, int64 table_id)
{
	Datum		values[1];
	bool		isnull;
	int			n;

	values[0] = Int64GetDatum(table_id);
	n = lance_exec_as(owner, PLAN_ENTRY_PATH, values, NULL, true, 1);
	if (n == 0)
		return NULL;
	return DatumGetArrayTypeP(lance_spi_value(0, 1, &isnull));
}

/*
 * row_json
 *		A row of rel as JSON text.
 */
static char *
row_json(HeapTuple tuple, TupleDesc desc)
{
	Datum		row = heap_copy_tuple_as_datum(tuple, desc);

	return text_to_cstring(DatumGetTextPP(DirectFunctionCall1(row_to_json, row)));
}

/*
 * move_deleted_records
 *		0.4.0, versions_moved (AFTER DELETE FOR EACH STATEMENT on versions,
 *		with the deleted rows as the transition table "gone"): the creation
 *		records of the deleted versions move to the log, in one statement
 *		as the catalog's owner, whichever path deleted them (an operation,
 *		direct DML, a cascade).  A row without a record (created before
 *		0.4.0, whose record is in the log) has none to move.
 */
static void
move_deleted_records(TriggerData *trigdata)
{
	Oid			save_userid;
	int			save_sec_context;
	int			rc;

	SPI_connect();
	if (SPI_register_trigger_data(trigdata) != SPI_OK_TD_REGISTER)
		elog(ERROR, "SPI_register_trigger_data failed");
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(trigdata->tg_relation->rd_rel->relowner,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	rc = SPI_execute(LANCE_MOVE_VERSION_RECORDS("FROM gone v WHERE true"),
					 false, 0);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "moving the records of deleted versions failed: %s",
			 SPI_result_code_string(rc));
	SPI_finish();
}

PG_FUNCTION_INFO_V1(lance_audit);

/*
 * lance_audit() returns trigger
 *		AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW on entries, versions,
 *		branches and tags: the history row of a change that no catalog
 *		operation records itself, and of every new version.
 */
Datum
lance_audit(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	const char *relname;
	const char *verb;
	HeapTuple	row;
	bool		is_entries;
	bool		is_versions;
	bool		version_insert;
	ArrayType  *id;
	TimestampTz at = GetCurrentTimestamp();
	Oid			owner;
	bool		isnull;
	StringInfoData detail;

	if (CALLED_AS_TRIGGER(fcinfo) && TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event) &&
		TRIGGER_FIRED_BEFORE(trigdata->tg_event))
	{
		/* 0.4.0: a TRUNCATE of versions (the owner's) moves every record */
		SPI_connect();
		lance_exec_as(trigdata->tg_relation->rd_rel->relowner,
					  PLAN_MOVE_ALL_VERSION_RECORDS, NULL, NULL, false, 0);
		SPI_finish();
		return PointerGetDatum(NULL);
	}
	if (CALLED_AS_TRIGGER(fcinfo) && TRIGGER_FIRED_BY_DELETE(trigdata->tg_event) &&
		TRIGGER_FIRED_AFTER(trigdata->tg_event) &&
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) && trigdata->tg_oldtable != NULL)
	{
		move_deleted_records(trigdata);
		return PointerGetDatum(NULL);
	}
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		elog(ERROR, "lance_audit must be an AFTER ROW trigger");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	relname = RelationGetRelationName(rel);
	/* the catalog's tables have one owner: this one's saves a lookup */
	owner = rel->rd_rel->relowner;
	is_entries = strcmp(relname, "entries") == 0;
	is_versions = strcmp(relname, "versions") == 0;
	version_insert = TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) && is_versions;
	/*
	 * 0.4.0: the row is the record of its creation (moved by versions_moved);
	 * this trigger fires on an insert only for a row without one.
	 */
	if (version_insert && lance_versions_carry_records(desc))
	{
		bool		isnull;

		heap_getattr(trigdata->tg_trigtuple, Anum_versions_transaction_id, desc, &isnull);
		if (isnull && !lance_restoring(rel))
			record_unrecorded_version(rel, trigdata->tg_trigtuple);
		return PointerGetDatum(NULL);
	}
	if (lance_in_operation() && !version_insert)
		return PointerGetDatum(NULL);	/* the operation records itself */

	/*
	 * pg_restore: the owner's COPY restores the history along with the
	 * rows, so recording them again would double it.
	 */
	if (lance_restoring(rel))
		return PointerGetDatum(NULL);

	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		verb = "INSERT";
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		verb = "UPDATE";
	else
		verb = "DELETE";
	/* the new row of an INSERT, the old one of an UPDATE or DELETE */
	row = trigdata->tg_trigtuple;

	SPI_connect();
	if (is_entries)
		id = DatumGetArrayTypeP(heap_getattr(row, Anum_entries_path, desc, &isnull));
	else
	{
		int64		table_id = DatumGetInt64(heap_getattr(row, Anum_table_id, desc, &isnull));

		if (version_insert && version_path != NULL && table_id == version_table_id)
		{
			id = version_path;
			at = version_at;
		}
		else
			id = table_path(owner, table_id);
	}
	if (id == NULL)
	{
		SPI_finish();
		return PointerGetDatum(NULL);
	}
	if (version_insert)
	{
		char	   *branch = TextDatumGetCString(heap_getattr(row, Anum_versions_branch,
															  desc, &isnull));
		int64		version = DatumGetInt64(heap_getattr(row, Anum_versions_version,
														 desc, &isnull));
		char	   *manifest = TextDatumGetCString(heap_getattr(row, Anum_versions_manifest,
																desc, &isnull));

		insert_history(owner, at, "CreateTableVersion", id,
					   lance_version_history_detail(branch, version, manifest));
		SPI_finish();
		return PointerGetDatum(NULL);
	}
	initStringInfo(&detail);
	appendStringInfoChar(&detail, '{');
	if (!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		appendStringInfo(&detail, "\"old\":%s", row_json(trigdata->tg_trigtuple, desc));
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		appendStringInfoChar(&detail, ',');
	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		appendStringInfo(&detail, "\"new\":%s", row_json(trigdata->tg_trigtuple, desc));
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		appendStringInfo(&detail, "\"new\":%s", row_json(trigdata->tg_newtuple, desc));
	appendStringInfoChar(&detail, '}');
	insert_history(owner, at, psprintf("%s %s", verb, relname), id,
				   DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(detail.data))));
	SPI_finish();
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(lance_history_guard);

/*
 * lance_history_guard() returns trigger
 *		BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW on history: only the
 *		catalog's owner writes it (this file does, as the owner), so a role
 *		that was granted a write on it still cannot forge or rewrite the
 *		trail (42501).
 */
Datum
lance_history_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		elog(ERROR, "lance_history_guard must be a BEFORE ROW trigger");
	if (!lance_is_owner_of(trigdata->tg_relation))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the commit history is written only by the catalog"),
				 errdetail("Role \"%s\" may not insert, update or delete history rows.",
						   GetUserNameFromId(GetUserId(), false))));
	return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
						   trigdata->tg_newtuple : trigdata->tg_trigtuple);
}
