/*-------------------------------------------------------------------------
 *
 * catalog_oids.c
 *	  The OIDs and attribute numbers of the catalog's own relations that
 *	  CreateTableVersion looks up on every call, looked up once per
 *	  backend until the system catalogs change.
 *
 * Every create resolved lance_namespace, entries, entries_path_key, six
 * attribute numbers of entries and the history relation's session_role
 * column through the syscache: about 6,000 of the 306,000 instructions
 * that a create costs the backend (2 %; callgrind, BENCHMARKS.md round 12).
 * They are kept here and forgotten whenever a row of pg_class,
 * pg_attribute or pg_namespace changes, or a relcache entry is
 * invalidated (any relation: the callbacks do not look at which), so a
 * DDL statement that renames, drops, re-creates or alters one of them is
 * seen at the next lookup, as the syscache would see it.  Privileges and
 * row level security are not kept: they depend on the role, and the
 * callers check them on every call.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "lance_namespace.h"

/* The columns of entries that lance_probe_entry reads, in LanceEntry order */
static const char *const entry_columns[LANCE_ENTRY_NCOLS] = {
	"id", "kind", "location", "properties", "declared"
};

static LanceCatalogOids oids;
static bool oids_valid = false;
static bool callbacks_registered = false;
static uint64 invalidations = 0;

/*
 * forget_oids, forget_relation
 *		Invalidation callbacks: look everything up again next time.
 */
static void
forget_oids(Datum arg, int cacheid, uint32 hashvalue)
{
	oids_valid = false;
	invalidations++;
}

static void
forget_relation(Datum arg, Oid relid)
{
	oids_valid = false;
	invalidations++;
}

/*
 * lance_catalog_oids
 *		The catalog's relations as of the invalidation messages this
 *		backend has processed.  An OID is InvalidOid and an attribute
 *		number InvalidAttrNumber where the object does not exist (an
 *		extension script in progress, a catalog older than the library).
 */
const LanceCatalogOids *
lance_catalog_oids(void)
{
	Oid			nsp;

	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(RELOID, forget_oids, (Datum) 0);
		CacheRegisterSyscacheCallback(ATTNUM, forget_oids, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, forget_oids, (Datum) 0);
		CacheRegisterRelcacheCallback(forget_relation, (Datum) 0);
		callbacks_registered = true;
	}
	if (oids_valid)
		return &oids;

	/*
	 * A lookup may process invalidation messages (a syscache miss reads the
	 * catalog): look up again until none arrived during the lookups.
	 */
	do
	{
		uint64		seen = invalidations;

		memset(&oids, 0, sizeof(oids));
		nsp = get_namespace_oid("lance_namespace", true);
		if (OidIsValid(nsp))
		{
			Oid			history = get_relname_relid("history", nsp);

			oids.entries = get_relname_relid("entries", nsp);
			oids.entries_path_key = get_relname_relid("entries_path_key", nsp);
			oids.versions = get_relname_relid("versions", nsp);
			oids.versions_pkey = get_relname_relid("versions_pkey", nsp);
			oids.history_has_session_role = OidIsValid(history) &&
				get_attnum(history, "session_role") != InvalidAttrNumber;
		}
		if (OidIsValid(oids.entries))
		{
			for (int i = 0; i < LANCE_ENTRY_NCOLS; i++)
				oids.entry_attnums[i] = get_attnum(oids.entries, entry_columns[i]);
			oids.entry_path = get_attnum(oids.entries, "path");
		}
		oids_valid = (seen == invalidations);
	} while (!oids_valid);
	return &oids;
}
