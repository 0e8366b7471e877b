/*-------------------------------------------------------------------------
 *
 * entry_probe.c
 *	  The lookup of CreateTableVersion's table entry without SPI: one probe
 *	  of the unique index entries_path_key.
 *
 * CreateTableVersion resolves the table with no lock and a fresh snapshot
 * (LANCE_LOCK_NONE_FRESH, see lance_commit_lock), and that lookup was a
 * whole SPI statement on every commit: executor start-up and shutdown
 * around one index probe, about a tenth of the commit's backend CPU.  It
 * is made here as the executor would make it: the same snapshot as a
 * non-read-only SPI execution (a fresh one in READ COMMITTED, after a
 * command counter increment, so that a table declared earlier in the same
 * statement is found), the same lock on the relation, and the same
 * privilege.  It is only used where nothing else applies: for a role that
 * row level security does not apply to (lance_commit_lock) and that has
 * SELECT on the table; otherwise the caller uses SPI, which raises the
 * same errors as before.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "lance_namespace.h"

/* The columns read, in LanceEntry order */
static const char *const entry_columns[] = {"id", "kind", "location", "properties", "declared"};

/*
 * lance_probe_entry
 *		lance_lookup_entry(path, LANCE_LOCK_NONE_FRESH, entry) by a direct
 *		index probe.  Returns 1 if found, 0 if not, -1 if the probe cannot
 *		stand in for the SPI lookup (the role may not read entries, or the
 *		catalog's objects are not where they should be).
 */
int
lance_probe_entry(ArrayType *path, LanceEntry *entry)
{
	Oid			nsp = get_namespace_oid("lance_namespace", false);
	Oid			relid = get_relname_relid("entries", nsp);
	Oid			indexid = get_relname_relid("entries_path_key", nsp);
	AttrNumber	attnums[lengthof(entry_columns)];
	AttrNumber	pathnum;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	TupleDesc	desc;
	int			found = 0;

	if (!OidIsValid(relid) || !OidIsValid(indexid) ||
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return -1;
	for (int i = 0; i < lengthof(entry_columns); i++)
		if ((attnums[i] = get_attnum(relid, entry_columns[i])) == InvalidAttrNumber)
			return -1;
	/* systable_beginscan takes the heap's attribute number */
	if ((pathnum = get_attnum(relid, "path")) == InvalidAttrNumber)
		return -1;

	/* the snapshot of a non-read-only SPI execution */
	PushActiveSnapshot(GetTransactionSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();

	rel = table_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	ScanKeyEntryInitialize(&key, 0, pathnum, BTEqualStrategyNumber, InvalidOid,
						   C_COLLATION_OID, F_ARRAY_EQ, PointerGetDatum(path));
	scan = systable_beginscan(rel, indexid, true, GetActiveSnapshot(), 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d;

		entry->id = DatumGetInt64(heap_getattr(tup, attnums[0], desc, &isnull));
		entry->kind = DatumGetChar(heap_getattr(tup, attnums[1], desc, &isnull));
		d = heap_getattr(tup, attnums[2], desc, &isnull);
		entry->location = isnull ? NULL : TextDatumGetCString(d);
		entry->properties = DatumGetJsonbPCopy(heap_getattr(tup, attnums[3], desc, &isnull));
		entry->declared = DatumGetBool(heap_getattr(tup, attnums[4], desc, &isnull));
		found = 1;
	}
	systable_endscan(scan);
	table_close(rel, NoLock);	/* held to the end of the transaction */
	PopActiveSnapshot();
	return found;
}
