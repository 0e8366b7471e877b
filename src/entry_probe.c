/*-------------------------------------------------------------------------
 *
 * entry_probe.c
 *	  The lookup of an entry without SPI, for CreateTableVersion and for
 *	  the reads: one probe of the unique index entries_path_key; and a
 *	  branch's latest version number, for CreateTableVersion's check that
 *	  versions only grow (0.6.0): one backward step on versions_pkey.
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
 * A read (LANCE_LOCK_NONE) is made the same way, with a read-only SPI
 * execution's snapshot: the statement's active one, unchanged.  Its SPI
 * statement was a generic plan; on a catalog of a few pages the planner
 * chose a sequential scan comparing the path with every row, a third of
 * a DescribeTableVersion's backend CPU (BENCHMARKS.md, round 18).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "lance_namespace.h"

/*
 * lance_probe_entry
 *		lance_lookup_entry(path, LANCE_LOCK_NONE_FRESH or LANCE_LOCK_NONE,
 *		entry) by a direct index probe, with the snapshot of a non-read-only
 *		(fresh) or read-only SPI execution.  Returns 1 if found, 0 if not, -1
 *		if the probe cannot stand in for the SPI lookup (the role may not
 *		read entries, or the catalog's objects are not where they should be).
 */
int
lance_probe_entry(ArrayType *path, bool fresh, LanceEntry *entry)
{
	const LanceCatalogOids *oids = lance_catalog_oids();
	Oid			relid = oids->entries;
	Oid			indexid = oids->entries_path_key;
	AttrNumber	attnums[LANCE_ENTRY_NCOLS];
	AttrNumber	pathnum;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		usable;
	int			found = 0;

	if (!OidIsValid(relid) || !OidIsValid(indexid) || (!fresh && !ActiveSnapshotSet()) ||
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return -1;

	/* a non-read-only SPI execution's snapshot, or a read-only one's */
	if (!fresh)
		PushActiveSnapshot(GetActiveSnapshot());
	else
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		CommandCounterIncrement();
		UpdateActiveSnapshotCommandId();
	}

	rel = table_open(relid, AccessShareLock);

	/*
	 * The attribute numbers as of the invalidations that taking the lock
	 * processed: a change of the relation committed before the lock is
	 * seen.  Should the catalog have been replaced meanwhile, let SPI
	 * look it up.
	 */
	oids = lance_catalog_oids();
	pathnum = oids->entry_path;
	usable = oids->entries == relid && oids->entries_path_key == indexid &&
		pathnum != InvalidAttrNumber;
	for (int i = 0; i < LANCE_ENTRY_NCOLS; i++)
		usable = usable && (attnums[i] = oids->entry_attnums[i]) != InvalidAttrNumber;
	if (!usable)
	{
		table_close(rel, NoLock);
		PopActiveSnapshot();
		return -1;
	}
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

/*
 * lance_probe_latest_version
 *		The latest version number of a table's branch, read with the latest
 *		snapshot and whatever row level security would hide (the check of
 *		lance_create_version_spi that a version number is acknowledged
 *		once): one backward step of an ordered scan of versions_pkey, where
 *		an SPI statement cost a fifth of a commit.  Returns 1 and sets
 *		*latest if the branch has a version, 0 if not, -1 if the catalog's
 *		objects are not where they should be.
 */
int
lance_probe_latest_version(int64 table_id, const char *branch, int64 *latest)
{
	const LanceCatalogOids *oids = lance_catalog_oids();
	Relation	rel;
	Relation	index;
	SysScanDesc scan;
	ScanKeyData keys[2];
	HeapTuple	tup;
	Snapshot	snapshot;
	int			found = 0;

	if (!OidIsValid(oids->versions) || !OidIsValid(oids->versions_pkey))
		return -1;
	rel = table_open(oids->versions, AccessShareLock);
	index = index_open(oids->versions_pkey, AccessShareLock);
	/* index columns: 1 table_id, 2 branch, 3 version */
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   InvalidOid, F_INT8EQ, Int64GetDatum(table_id));
	ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
						   C_COLLATION_OID, F_TEXTEQ, CStringGetTextDatum(branch));
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = systable_beginscan_ordered(rel, index, snapshot, 2, keys);
	if (HeapTupleIsValid(tup = systable_getnext_ordered(scan, BackwardScanDirection)))
	{
		bool		isnull;

		/* versions' third column is version (version_check.c) */
		*latest = DatumGetInt64(heap_getattr(tup, 3, RelationGetDescr(rel), &isnull));
		found = 1;
	}
	systable_endscan_ordered(scan);
	UnregisterSnapshot(snapshot);
	index_close(index, NoLock);
	table_close(rel, NoLock);	/* held to the end of the transaction */
	return found;
}
