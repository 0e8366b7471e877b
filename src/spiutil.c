/*-------------------------------------------------------------------------
 *
 * spiutil.c
 *	  The catalog's SQL statements, prepared once per backend and kept.
 *
 * Every statement is schema-qualified and runs under the search_path that
 * each function pins (pg_catalog, pg_temp).  Text keys are compared with
 * COLLATE "C", the collation of the catalog's key columns, so that every
 * lookup and every page walk is an index range scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "lance_namespace.h"

#define ENTRY_COLUMNS "id, kind, location, properties, declared"
#define BRANCH_COLUMNS "name, parent_branch, parent_version, create_at, manifest_size, metadata"
#define VERSION_COLUMNS "version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata"

/*
 * operation marks a write of a catalog operation that the operation
 * records in the history itself (or, for a version insert, that the audit
 * trigger records): while it runs, the audit trigger writes no row of its
 * own, and versions accept the insert (audit.c).
 *
 * generic marks a page walk whose plan is kept generic.  Its LIMIT is a
 * parameter, so the plan cache costs a generic plan as if it fetched a
 * tenth of the rows and every custom plan (a page of a few rows) as
 * cheaper: it would plan the statement again on every call, a third of a
 * list's CPU.  The generic plan is the same index range scan
 * (bench/sql/scale_explain.sql shows it on the scale fixtures).  The walks
 * with a subquery or a join (declared tables left out, tags) are left to
 * the plan cache: their generic plans are not shown there.
 */
typedef struct LancePlanDef
{
	const char *sql;
	int			nargs;
	Oid			argtypes[12];
	bool		operation;
	bool		generic;
	bool		clearing;		/* removes every version of a table or branch */
} LancePlanDef;

static const LancePlanDef plan_defs[PLAN_COUNT] = {
	[PLAN_RESOLVE_ENTRY] = {
		"SELECT " ENTRY_COLUMNS " FROM lance_namespace.entries"
		" WHERE path = $1 COLLATE \"C\"",
		1, {TEXTARRAYOID}
	},
	[PLAN_RESOLVE_ENTRY_KEY_SHARE] = {
		"SELECT " ENTRY_COLUMNS " FROM lance_namespace.entries"
		" WHERE path = $1 COLLATE \"C\" FOR KEY SHARE",
		1, {TEXTARRAYOID}
	},
	[PLAN_RESOLVE_ENTRY_FOR_UPDATE] = {
		"SELECT " ENTRY_COLUMNS " FROM lance_namespace.entries"
		" WHERE path = $1 COLLATE \"C\" FOR UPDATE",
		1, {TEXTARRAYOID}
	},
	[PLAN_INSERT_ENTRY] = {
		"INSERT INTO lance_namespace.entries"
		" (parent_id, kind, name, path, properties, location, declared)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7)"
		" ON CONFLICT DO NOTHING RETURNING id",
		7, {INT8OID, CHAROID, TEXTOID, TEXTARRAYOID, JSONBOID, TEXTOID, BOOLOID}, true
	},
	[PLAN_SIBLING_KIND] = {
		"SELECT kind FROM lance_namespace.entries"
		" WHERE parent_id = $1 AND name = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_CHILD_EXISTS] = {
		"SELECT 1 FROM lance_namespace.entries WHERE parent_id = $1 LIMIT 1",
		1, {INT8OID}
	},
	[PLAN_DELETE_ENTRY] = {
		"DELETE FROM lance_namespace.entries WHERE id = $1"
		" RETURNING location, properties",
		1, {INT8OID}, true
	},
	[PLAN_GET_SETTING] = {
		"SELECT value FROM lance_namespace.settings WHERE name = $1",
		1, {TEXTOID}
	},
	/*
	 * The put-if-not-exists of CreateTableVersion.  Its history row is
	 * written by the audit trigger on versions (audit.c).
	 */
	[PLAN_INSERT_VERSION] = {
		"INSERT INTO lance_namespace.versions"
		" (table_id, branch, version, manifest_path, staging_manifest_path,"
		"  manifest_size, e_tag, metadata, naming_scheme, timestamp_millis)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, (EXTRACT(EPOCH FROM $10) * 1000)::bigint)"
		" ON CONFLICT (table_id, branch, version) DO NOTHING"
		" RETURNING " VERSION_COLUMNS,
		10, {INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID, INT8OID, TEXTOID, JSONBOID, TEXTOID,
		TIMESTAMPTZOID}, true
	},
	[PLAN_GET_VERSION] = {
		"SELECT " VERSION_COLUMNS ", staging_manifest_path"
		" FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\" AND version = $3",
		3, {INT8OID, TEXTOID, INT8OID}
	},
	[PLAN_LATEST_VERSION] = {
		"SELECT " VERSION_COLUMNS " FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\""
		" ORDER BY version DESC LIMIT 1",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_HAS_VERSIONS] = {
		"SELECT 1 FROM lance_namespace.versions WHERE table_id = $1 LIMIT 1",
		1, {INT8OID}
	},
	[PLAN_DELETE_VERSION_RANGE] = {
		"DELETE FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\""
		" AND version >= $3 AND version <= $4",
		4, {INT8OID, TEXTOID, INT8OID, INT8OID}, true
	},
	/* never a branch's latest version: its number stays taken */
	[PLAN_RETIRE_VERSION] = {
		"DELETE FROM lance_namespace.versions v"
		" WHERE v.table_id = $1 AND v.branch = $2 COLLATE \"C\""
		" AND v.version = $3 AND v.manifest_path = $4"
		" AND EXISTS (SELECT 1 FROM lance_namespace.versions w WHERE w.table_id = $1"
		"  AND w.branch = $2 COLLATE \"C\" AND w.version > $3)",
		4, {INT8OID, TEXTOID, INT8OID, TEXTOID}, true
	},
	/*
	 * The staged bytes of a version inserted by this very call, kept until
	 * the gateway's publication of its canonical file is durable (written
	 * as the catalog's owner: publications).
	 */
	[PLAN_INSERT_PUBLICATION] = {
		"INSERT INTO lance_namespace.publications (table_id, branch, version, manifest)"
		" VALUES ($1, $2, $3, $4)",
		4, {INT8OID, TEXTOID, INT8OID, BYTEAOID}
	},
	/*
	 * Another live table ($1: this one's id, 0 for none; $2: its path, to
	 * leave to the unique constraint a row of the same name) whose location
	 * key is one of $3 (a key and the keys it lies within) or lies below
	 * $4 (a key and "/": up to $5, that key and "0", the next byte), by the
	 * expression index entries_location_key_idx (location_rules.c).
	 */
	[PLAN_LOCATION_TAKEN] = {
		"SELECT 1 FROM lance_namespace.entries e"
		" WHERE e.kind = 't' AND e.id <> $1 AND e.path <> $2 COLLATE \"C\""
		" AND ((lance_namespace.lance_location_key(e.location) COLLATE \"C\") = ANY ($3)"
		"  OR ((lance_namespace.lance_location_key(e.location) COLLATE \"C\") >= $4"
		"      AND (lance_namespace.lance_location_key(e.location) COLLATE \"C\") < $5))"
		" LIMIT 1",
		5, {INT8OID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID, TEXTOID}
	},
	/* a branch's latest version number, and whether it has version $3 */
	[PLAN_LATEST_VERSION_NUMBER] = {
		"SELECT version FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\""
		" ORDER BY version DESC LIMIT 1",
		2, {INT8OID, TEXTOID}, false, true
	},
	[PLAN_VERSION_NUMBER_EXISTS] = {
		"SELECT 1 FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\" AND version = $3",
		3, {INT8OID, TEXTOID, INT8OID}
	},
	/*
	 * Whether deleting version $3 of a branch leaves its latest version:
	 * a later version exists, or the table ($1) or the branch ($2, not
	 * main) is gone (a drop's cascade).
	 */
	[PLAN_VERSION_KEEPS_LATEST] = {
		"SELECT EXISTS (SELECT 1 FROM lance_namespace.versions"
		"  WHERE table_id = $1 AND branch = $2 COLLATE \"C\" AND version > $3)"
		" OR NOT EXISTS (SELECT 1 FROM lance_namespace.entries WHERE id = $1)"
		" OR ($2 <> 'main' AND NOT EXISTS (SELECT 1 FROM lance_namespace.branches"
		"  WHERE table_id = $1 AND name = $2 COLLATE \"C\"))",
		3, {INT8OID, TEXTOID, INT8OID}
	},
	[PLAN_LIST_NAMESPACES] = {
		"SELECT name FROM lance_namespace.entries"
		" WHERE parent_id = $1 AND kind = 'n' AND name > $2 COLLATE \"C\""
		" ORDER BY name LIMIT $3",
		3, {INT8OID, TEXTOID, INT8OID}, .generic = true
	},
	[PLAN_LIST_TABLES] = {
		"SELECT name FROM lance_namespace.entries"
		" WHERE parent_id = $1 AND kind = 't' AND name > $2 COLLATE \"C\""
		" ORDER BY name LIMIT $3",
		3, {INT8OID, TEXTOID, INT8OID}, .generic = true
	},
	[PLAN_LIST_TABLES_CREATED] = {
		"SELECT e.name FROM lance_namespace.entries e"
		" WHERE e.parent_id = $1 AND e.kind = 't' AND e.name > $2 COLLATE \"C\""
		" AND NOT (e.declared AND NOT EXISTS (SELECT 1 FROM lance_namespace.versions v"
		"                                     WHERE v.table_id = e.id))"
		" ORDER BY e.name LIMIT $3",
		3, {INT8OID, TEXTOID, INT8OID}
	},
	[PLAN_LIST_ALL_TABLES] = {
		"SELECT path FROM lance_namespace.entries"
		" WHERE kind = 't' AND path > $1 COLLATE \"C\""
		" ORDER BY path LIMIT $2",
		2, {TEXTARRAYOID, INT8OID}, .generic = true
	},
	[PLAN_LIST_ALL_TABLES_CREATED] = {
		"SELECT e.path FROM lance_namespace.entries e"
		" WHERE e.kind = 't' AND e.path > $1 COLLATE \"C\""
		" AND NOT (e.declared AND NOT EXISTS (SELECT 1 FROM lance_namespace.versions v"
		"                                     WHERE v.table_id = e.id))"
		" ORDER BY e.path LIMIT $2",
		2, {TEXTARRAYOID, INT8OID}
	},
	[PLAN_LIST_VERSIONS_ASC] = {
		"SELECT " VERSION_COLUMNS " FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\" AND version > $3"
		" ORDER BY version LIMIT $4",
		4, {INT8OID, TEXTOID, INT8OID, INT8OID}, .generic = true
	},
	[PLAN_LIST_VERSIONS_DESC] = {
		"SELECT " VERSION_COLUMNS " FROM lance_namespace.versions"
		" WHERE table_id = $1 AND branch = $2 COLLATE \"C\" AND version <= $3"
		" ORDER BY version DESC LIMIT $4",
		4, {INT8OID, TEXTOID, INT8OID, INT8OID}, .generic = true
	},
	[PLAN_UPDATE_ENTRY_PROPERTIES] = {
		"UPDATE lance_namespace.entries SET properties = $2 WHERE id = $1",
		2, {INT8OID, JSONBOID}, true
	},
	[PLAN_RENAME_ENTRY] = {
		"UPDATE lance_namespace.entries SET parent_id = $2, name = $3, path = $4"
		" WHERE id = $1",
		4, {INT8OID, INT8OID, TEXTOID, TEXTARRAYOID}, true
	},
	[PLAN_REREGISTER_ENTRY] = {
		"UPDATE lance_namespace.entries"
		" SET location = $2, properties = $3, declared = false,"
		"     created_at = now(), created_by = CURRENT_USER"
		" WHERE id = $1",
		3, {INT8OID, TEXTOID, JSONBOID}, true
	},
	[PLAN_DELETE_ALL_VERSIONS] = {
		"DELETE FROM lance_namespace.versions WHERE table_id = $1",
		1, {INT8OID}, true, false, true
	},
	/*
	 * Run as the catalog's owner (audit.c); session_role is its default.
	 * The history table of 0.1.0 to 0.3.0 (until ALTER EXTENSION UPDATE),
	 * and 0.4.0's log of the operations that create no version.
	 */
	[PLAN_INSERT_HISTORY] = {
		"INSERT INTO lance_namespace.history (at, role, interface, operation, id, detail)"
		" VALUES ($1, $2, $3, $4, $5, $6)",
		6, {TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, JSONBOID}
	},
	[PLAN_INSERT_HISTORY_LOG] = {
		"INSERT INTO lance_namespace.history_log (at, role, interface, operation, id, detail)"
		" VALUES ($1, $2, $3, $4, $5, $6)",
		6, {TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, JSONBOID}
	},
	/*
	 * The creation record of a version inserted without one, written to the
	 * log with the values of the inserting transaction (audit.c).
	 */
	[PLAN_RECORD_VERSION] = {
		"INSERT INTO lance_namespace.history_log"
		" (transaction_id, at, role, interface, operation, id, detail, session_role)"
		" VALUES ($1, $2, $3, $4, 'CreateTableVersion', $5, $6, $7)",
		7, {XID8OID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTARRAYOID, JSONBOID, TEXTOID}
	},
	/* the record of the version row at $1, which changes (0.4.0; audit.c) */
	[PLAN_MOVE_VERSION_RECORD] = {
		LANCE_MOVE_VERSION_RECORDS("FROM lance_namespace.versions v WHERE v.ctid = $1"),
		1, {TIDOID}
	},
	/* every record, before the owner's TRUNCATE of versions */
	[PLAN_MOVE_ALL_VERSION_RECORDS] = {
		LANCE_MOVE_VERSION_RECORDS("FROM lance_namespace.versions v WHERE true"),
		0, {InvalidOid}
	},
	[PLAN_ENTRY_PATH] = {
		"SELECT path FROM lance_namespace.entries WHERE id = $1",
		1, {INT8OID}
	},
	[PLAN_GET_BRANCH] = {
		"SELECT " BRANCH_COLUMNS " FROM lance_namespace.branches"
		" WHERE table_id = $1 AND name = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_GET_BRANCH_KEY_SHARE] = {
		"SELECT " BRANCH_COLUMNS " FROM lance_namespace.branches"
		" WHERE table_id = $1 AND name = $2 COLLATE \"C\" FOR KEY SHARE",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_GET_BRANCH_FOR_UPDATE] = {
		"SELECT " BRANCH_COLUMNS " FROM lance_namespace.branches"
		" WHERE table_id = $1 AND name = $2 COLLATE \"C\" FOR UPDATE",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_INSERT_BRANCH] = {
		"INSERT INTO lance_namespace.branches"
		" (table_id, name, parent_branch, parent_version, create_at, manifest_size, metadata)"
		" VALUES ($1, $2, $3, $4, floor(EXTRACT(EPOCH FROM clock_timestamp()))::bigint, $5, $6)"
		" ON CONFLICT DO NOTHING RETURNING " BRANCH_COLUMNS,
		6, {INT8OID, TEXTOID, TEXTOID, INT8OID, INT8OID, JSONBOID}, true
	},
	[PLAN_BRANCH_HAS_CHILDREN] = {
		"SELECT name FROM lance_namespace.branches"
		" WHERE table_id = $1 AND parent_branch = $2 COLLATE \"C\" ORDER BY name LIMIT 1",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_DELETE_BRANCH] = {
		"DELETE FROM lance_namespace.branches WHERE table_id = $1 AND name = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}, true
	},
	[PLAN_DELETE_BRANCH_VERSIONS] = {
		"DELETE FROM lance_namespace.versions WHERE table_id = $1 AND branch = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}, true, false, true
	},
	[PLAN_DELETE_BRANCH_TAGS] = {
		"DELETE FROM lance_namespace.tags WHERE table_id = $1 AND branch = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}, true
	},
	[PLAN_LIST_BRANCHES] = {
		"SELECT " BRANCH_COLUMNS " FROM lance_namespace.branches"
		" WHERE table_id = $1 AND name > $2 COLLATE \"C\" ORDER BY name LIMIT $3",
		3, {INT8OID, TEXTOID, INT8OID}, .generic = true
	},
	[PLAN_GET_TAG] = {
		"SELECT t.name, t.branch, t.version, v.manifest_size"
		" FROM lance_namespace.tags t LEFT JOIN lance_namespace.versions v"
		"   ON v.table_id = t.table_id AND v.branch = t.branch AND v.version = t.version"
		" WHERE t.table_id = $1 AND t.name = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_GET_TAG_FOR_UPDATE] = {
		"SELECT name FROM lance_namespace.tags"
		" WHERE table_id = $1 AND name = $2 COLLATE \"C\" FOR UPDATE",
		2, {INT8OID, TEXTOID}
	},
	[PLAN_INSERT_TAG] = {
		"INSERT INTO lance_namespace.tags (table_id, name, branch, version)"
		" VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING name",
		4, {INT8OID, TEXTOID, TEXTOID, INT8OID}, true
	},
	[PLAN_UPDATE_TAG] = {
		"UPDATE lance_namespace.tags SET branch = $3, version = $4"
		" WHERE table_id = $1 AND name = $2 COLLATE \"C\"",
		4, {INT8OID, TEXTOID, TEXTOID, INT8OID}, true
	},
	[PLAN_DELETE_TAG] = {
		"DELETE FROM lance_namespace.tags WHERE table_id = $1 AND name = $2 COLLATE \"C\"",
		2, {INT8OID, TEXTOID}, true
	},
	[PLAN_LIST_TAGS] = {
		"SELECT t.name, t.branch, t.version, v.manifest_size"
		" FROM lance_namespace.tags t LEFT JOIN lance_namespace.versions v"
		"   ON v.table_id = t.table_id AND v.branch = t.branch AND v.version = t.version"
		" WHERE t.table_id = $1 AND t.name > $2 COLLATE \"C\" ORDER BY t.name LIMIT $3",
		3, {INT8OID, TEXTOID, INT8OID}
	},
	[PLAN_TRANSACTION_HISTORY] = {
		"SELECT operation, at, role::text, interface, id FROM lance_namespace.history"
		" WHERE transaction_id = $1::text::xid8 ORDER BY at",
		1, {TEXTOID}
	},
	[PLAN_TRANSACTION_PROPERTIES] = {
		"SELECT key, value FROM lance_namespace.transaction_properties"
		" WHERE transaction_id = $1::text::xid8 ORDER BY key",
		1, {TEXTOID}
	},
	[PLAN_SET_TRANSACTION_PROPERTY] = {
		"INSERT INTO lance_namespace.transaction_properties (transaction_id, key, value, set_by)"
		" VALUES ($1::text::xid8, $2, $3, $4)"
		" ON CONFLICT (transaction_id, key) DO UPDATE"
		" SET value = EXCLUDED.value, set_at = pg_catalog.now(), set_by = EXCLUDED.set_by",
		4, {TEXTOID, TEXTOID, TEXTOID, NAMEOID}
	},
	[PLAN_ADD_TRANSACTION_PROPERTY] = {
		"INSERT INTO lance_namespace.transaction_properties (transaction_id, key, value, set_by)"
		" VALUES ($1::text::xid8, $2, $3, $4)"
		" ON CONFLICT (transaction_id, key) DO NOTHING",
		4, {TEXTOID, TEXTOID, TEXTOID, NAMEOID}
	},
	[PLAN_UNSET_TRANSACTION_PROPERTY] = {
		"DELETE FROM lance_namespace.transaction_properties"
		" WHERE transaction_id = $1::text::xid8 AND key = $2",
		2, {TEXTOID, TEXTOID}
	},
	[PLAN_DESCRIBE_TRANSACTION] = {
		"SELECT status, properties FROM lance_namespace.lance_describe_transaction($1)",
		1, {TEXTOID}
	},
	[PLAN_REST_DECLARE_TABLE] = {
		"SELECT lance_namespace.rest_declare_table($1)", 1, {JSONBOID}
	},
	[PLAN_REST_CREATE_TABLE_VERSION] = {
		"SELECT lance_namespace.rest_create_table_version($1)", 1, {JSONBOID}
	},
	[PLAN_REST_DELETE_TABLE_VERSIONS] = {
		"SELECT lance_namespace.rest_batch_delete_table_versions($1)", 1, {JSONBOID}
	},
	[PLAN_REST_DEREGISTER_TABLE] = {
		"SELECT lance_namespace.rest_deregister_table($1)", 1, {JSONBOID}
	},
};

static SPIPlanPtr plans[PLAN_COUNT];

/*
 * lance_plan
 *		The kept plan of a catalog statement, prepared on first use.
 *		Must be called while connected to SPI.
 */
SPIPlanPtr
lance_plan(LancePlanId id)
{
	if (plans[id] == NULL)
	{
		const LancePlanDef *def = &plan_defs[id];
		SPIPlanPtr	plan;

		plan = SPI_prepare_cursor(def->sql, def->nargs, (Oid *) def->argtypes,
								  def->generic ? CURSOR_OPT_GENERIC_PLAN : 0);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 def->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		plans[id] = plan;
	}
	return plans[id];
}

/*
 * lance_exec
 *		Execute a kept plan; returns the number of rows processed.
 */
int
lance_exec(LancePlanId id, Datum *values, const char *nulls, bool read_only, long count)
{
	int			rc;

	if (plan_defs[id].operation)
	{
		lance_operation_begin();
		if (plan_defs[id].clearing)
			lance_clearing_begin();
		rc = SPI_execute_plan(lance_plan(id), values, nulls, read_only, count);
		if (plan_defs[id].clearing)
			lance_clearing_end();
		lance_operation_end();
	}
	else
		rc = SPI_execute_plan(lance_plan(id), values, nulls, read_only, count);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed for \"%s\": %s",
			 plan_defs[id].sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * lance_exec_as
 *		lance_exec with role as the current user: how the catalog writes
 *		what only its owner may (history rows, transaction properties)
 *		after the caller's right was checked.  An error restores the user id
 *		with the aborting (sub)transaction.
 */
int
lance_exec_as(Oid role, LancePlanId id, Datum *values, const char *nulls, bool read_only,
			  long count)
{
	Oid			save_userid;
	int			save_sec_context;
	int			n;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(role, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	n = lance_exec(id, values, nulls, read_only, count);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return n;
}

/*
 * lance_exec_latest_as
 *		lance_exec_as, read-only, with the latest snapshot instead of the
 *		statement's: how a check that must see what other transactions
 *		committed since (a version number, a location) reads, as RI
 *		triggers do, under any isolation level.
 */
int
lance_exec_latest_as(Oid role, LancePlanId id, Datum *values, const char *nulls, long count)
{
	Oid			save_userid;
	int			save_sec_context;
	int			rc;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(role, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	rc = SPI_execute_snapshot(lance_plan(id), values, nulls, GetLatestSnapshot(),
							  InvalidSnapshot, false, false, count);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s",
			 plan_defs[id].sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * lance_spi_value
 *		Column col (1-based) of row of the last SPI result, in SPI memory.
 */
Datum
lance_spi_value(int row, int col, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);
}

/*
 * lance_spi_copy_value
 *		Like lance_spi_value, but copied into cxt so that it survives
 *		SPI_finish.
 */
Datum
lance_spi_copy_value(int row, int col, bool *isnull, MemoryContext cxt)
{
	Datum		d = lance_spi_value(row, col, isnull);
	Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, col - 1);
	MemoryContext old;

	if (*isnull)
		return (Datum) 0;
	old = MemoryContextSwitchTo(cxt);
	d = datumCopy(d, att->attbyval, att->attlen);
	MemoryContextSwitchTo(old);
	return d;
}

/*
 * lance_form_result
 *		Form a composite result datum in cxt, so that it survives SPI_finish.
 */
Datum
lance_form_result(TupleDesc tupdesc, Datum *values, bool *nulls, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	HeapTuple	tuple;

	tupdesc = BlessTupleDesc(CreateTupleDescCopy(tupdesc));
	tuple = heap_form_tuple(tupdesc, values, nulls);
	MemoryContextSwitchTo(old);
	return HeapTupleGetDatum(tuple);
}
