/*-------------------------------------------------------------------------
 *
 * version_check.c
 *	  Row checks of lance_namespace.versions, as a C trigger.
 *
 * PostgreSQL re-reads and re-plans every CHECK constraint of a table for
 * each INSERT statement, which made the five checks of versions about a
 * tenth of the cost of a commit.  This trigger enforces the same rules per
 * row, with the same constraint names and SQLSTATE (check_violation), for
 * every writer: the catalog's functions and direct writes alike.
 *
 * It also keeps committed versions immutable: no role but the catalog's
 * owner may update a version row (its table, branch, version, manifests,
 * size, e_tag, naming scheme, time and creator are the catalog's record of
 * which manifest is version N), and versions are inserted only by
 * CreateTableVersion and its batch form, which compute the canonical
 * manifest path, the time and the creator themselves.  Both are
 * insufficient_privilege (42501).  Deleting is a matter of grants and row
 * level security, and the audit trigger records it (audit.c), but for one
 * rule (0.6.0).
 *
 * A version number is acknowledged once: once (table, branch, N) has
 * named a manifest, no other manifest is ever version N, after a deletion
 * or a retirement too.  Versions only grow: a new version must be above
 * the branch's latest one (else ConcurrentModification; the same version
 * again is left to the primary key, which makes a retry idempotent), and
 * a branch's latest version cannot be deleted (lance_versions_keep_latest),
 * as Lance's own cleanup never deletes it, while the table and the branch
 * live.  So the latest number only grows, and every deleted number stays
 * below it.  Both checks read with the latest snapshot, as the catalog's
 * owner, so that they hold under any isolation level and whatever row
 * level security hides.
 *
 * Since 0.4.0 it also writes, on every new row, the record of the
 * version's creation (who, when, through which interface, in which
 * transaction, under which table id: lance_version_record in audit.c),
 * whatever the inserter gave; and the owner's update of a row moves that
 * record to the history log first, unchanged.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/rel.h"

#include "lance_namespace.h"

/* attribute numbers of lance_namespace.versions */
#define Anum_table_id			1
#define Anum_branch				2
#define Anum_version			3
#define Anum_manifest_path		4
#define Anum_staging_path		5
#define Anum_manifest_size		6
#define Anum_metadata			8
#define Anum_naming_scheme		9

/*
 * check_failed
 *		Raise check_violation for constraint name of rel.
 */
static void
check_failed(Relation rel, const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_CHECK_VIOLATION),
			 errmsg("new row for relation \"%s\" violates check constraint \"%s\"",
					RelationGetRelationName(rel), name),
			 errtableconstraint(rel, name)));
}

/*
 * text_is_empty
 *		Whether a non-NULL text attribute is the empty string.
 */
static bool
text_is_empty(HeapTuple tuple, TupleDesc desc, int attnum)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, attnum, desc, &isnull);

	return !isnull && VARSIZE_ANY_EXHDR(DatumGetPointer(d)) == 0;
}

PG_FUNCTION_INFO_V1(lance_versions_check);

/*
 * lance_versions_check() returns trigger
 *		BEFORE INSERT OR UPDATE FOR EACH ROW on versions: only the owner
 *		updates, and inserts outside a catalog operation; version >= 0,
 *		manifest_size >= 0, naming_scheme V1 or V2, non-empty manifest
 *		paths, metadata NULL or an object.
 */
Datum
lance_versions_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	TupleDesc	desc;
	Relation	rel;
	bool		isnull;
	Datum		d;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		elog(ERROR, "lance_versions_check must be a BEFORE ROW trigger");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		if (!lance_is_owner_of(rel))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("committed table versions are immutable"),
					 errdetail("Only the catalog's owner may update rows of \"%s\".",
							   RelationGetRelationName(rel)),
					 errhint("Create a new version with lance_create_table_version.")));
		tuple = trigdata->tg_newtuple;
		/* 0.4.0: a changed row no longer carries its creation record */
		if (lance_versions_carry_records(desc))
		{
			lance_move_version_record(rel, trigdata->tg_trigtuple);
			tuple = lance_version_record_cleared(rel, tuple);
		}
	}
	else
	{
		if (!lance_in_operation() && !lance_is_owner_of(rel))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("table versions are created only by lance_create_table_version"),
					 errdetail("Role \"%s\" may not insert into \"%s\" directly.",
							   GetUserNameFromId(GetUserId(), false),
							   RelationGetRelationName(rel))));
		tuple = trigdata->tg_trigtuple;
	}

	d = heap_getattr(tuple, Anum_version, desc, &isnull);
	if (!isnull && DatumGetInt64(d) < 0)
		check_failed(rel, "versions_version_check");
	d = heap_getattr(tuple, Anum_manifest_size, desc, &isnull);
	if (!isnull && DatumGetInt64(d) < 0)
		check_failed(rel, "versions_manifest_size_check");
	d = heap_getattr(tuple, Anum_naming_scheme, desc, &isnull);
	if (!isnull)
	{
		text	   *t = DatumGetTextPP(d);

		if (VARSIZE_ANY_EXHDR(t) != 2 || VARDATA_ANY(t)[0] != 'V' ||
			(VARDATA_ANY(t)[1] != '1' && VARDATA_ANY(t)[1] != '2'))
			check_failed(rel, "versions_naming_scheme_check");
	}
	if (text_is_empty(tuple, desc, Anum_manifest_path) ||
		text_is_empty(tuple, desc, Anum_staging_path))
		check_failed(rel, "versions_manifest_path_check");
	d = heap_getattr(tuple, Anum_metadata, desc, &isnull);
	if (!isnull && !JB_ROOT_IS_OBJECT(DatumGetJsonbP(d)))
		check_failed(rel, "versions_metadata_check");
	/* 0.4.0: a new row carries the record of its creation (audit.c) */
	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) && lance_versions_carry_records(desc) &&
		!lance_restoring(rel))
		tuple = lance_version_record(rel, tuple);
	return PointerGetDatum(tuple);
}

PG_FUNCTION_INFO_V1(lance_versions_keep_latest);

/*
 * lance_versions_keep_latest() returns trigger
 *		BEFORE DELETE FOR EACH ROW on versions: a branch's latest version is
 *		not deleted while its table and branch live (InvalidInput), so that
 *		its number, and every number below it, stays taken.  A drop of the
 *		table or the branch, and the catalog's own clearing of a table's or
 *		a branch's versions (RegisterTable's Overwrite, DeleteTableBranch:
 *		lance_clearing_versions), delete it.
 */
Datum
lance_versions_keep_latest(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	HeapTuple	tuple;
	Datum		args[3];
	bool		isnull;
	bool		keeps;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		elog(ERROR, "lance_versions_keep_latest must be a BEFORE DELETE ROW trigger");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	tuple = trigdata->tg_trigtuple;
	if (lance_clearing_versions())
		return PointerGetDatum(tuple);
	args[0] = heap_getattr(tuple, Anum_table_id, desc, &isnull);
	args[1] = heap_getattr(tuple, Anum_branch, desc, &isnull);
	args[2] = heap_getattr(tuple, Anum_version, desc, &isnull);
	SPI_connect();
	lance_exec_latest_as(rel->rd_rel->relowner, PLAN_VERSION_KEEPS_LATEST, args, NULL, 1);
	keeps = DatumGetBool(lance_spi_value(0, 1, &isnull));
	if (!keeps)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("version " INT64_FORMAT " is the latest version of branch \"%s\" and cannot be deleted",
						   DatumGetInt64(args[2]), TextDatumGetCString(args[1])),
					errdetail("A version number is acknowledged once: the latest version stays, so that no later manifest can take a deleted number."),
					errhint("Delete older versions only; DropTable or DeleteTableBranch remove every version."));
	SPI_finish();
	return PointerGetDatum(tuple);
}
