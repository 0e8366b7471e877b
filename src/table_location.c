/*-------------------------------------------------------------------------
 *
 * table_location.c
 *	  A table owns its location: no live table's location is, lies in or
 *	  contains another's, and who may name a location, and where, is a
 *	  privilege.
 *
 * The rule is enforced by the entries_location_check trigger on every
 * path that places a table (DeclareTable, RegisterTable, the batch forms,
 * an owner's or a tenant's direct INSERT or UPDATE of entries), as the
 * catalog's owner, so that a table the caller cannot see still counts,
 * and with the latest snapshot, so that it holds under any isolation
 * level.  Two placements that could overlap are serialized by advisory
 * locks, taken in one order: a share lock on each key a location lies
 * within, then an exclusive lock on its own key.  Of two overlapping
 * locations, one lies within the other or both are equal, so the two
 * transactions ask for the same lock in conflicting modes; the later one
 * waits, then sees the other's row.
 *
 * A role that is not the catalog's owner (or a superuser) may place a
 * table only strictly below its namespace's own location, which is the
 * root location followed by the namespace's names (where DeclareTable
 * puts a table that comes without one).  A refusal names no other table.
 *
 * The comparable form of a location (its key) is location_rules.c's,
 * shared with the gateway.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "lance_namespace.h"
#include "location_rules.h"

/* the first key of the advisory locks of table locations: "LNLC" */
#define LOCATION_LOCK_CLASS 0x4c4e4c43

/*
 * location_key
 *		The key of a table location, or an InvalidInput error saying why it
 *		is not one.
 */
static char *
location_key(const char *what, const char *location)
{
	char	   *key = palloc(strlen(location) + 1);
	const char *problem = lance_location_key(location, key, strlen(location) + 1);

	if (problem != NULL)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: location \"%s\" %s", what, location, problem),
					errhint("A table's location is an absolute path or a URI such as s3://bucket/prefix/name.lance."));
	return key;
}

/*
 * lock_location
 *		Take the advisory lock of key, or of its prefix of len bytes, in
 *		mode, until the transaction ends.
 */
static void
lock_location(const char *key, size_t len, LOCKMODE mode)
{
	LOCKTAG		tag;
	uint32		h = DatumGetUInt32(hash_any((const unsigned char *) key, (int) len));

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, LOCATION_LOCK_CLASS, h, 2);
	(void) LockAcquire(&tag, mode, false, false);
}

/*
 * namespace_key
 *		The key of a table's namespace's own location (the root location
 *		and the names of the namespaces of path), or NULL when no root
 *		location is set.
 */
static char *
namespace_key(const char *what, ArrayType *path)
{
	char	   *root = lance_get_setting("root_location");
	ArrayType  *parent;

	if (root == NULL)
		return NULL;
	parent = lance_id_parent(path);
	if (ArrayGetNItems(ARR_NDIM(parent), ARR_DIMS(parent)) > 0)
		root = lance_join_path(root, lance_id_to_cstring(parent, "/"));
	return location_key(what, root);
}

/*
 * key_and_outer_keys
 *		key and every key it lies within, as a text array.
 */
static ArrayType *
key_and_outer_keys(const char *key)
{
	int			depth = lance_location_depth(key);
	Datum	   *items = palloc(sizeof(Datum) * (depth + 1));
	int			i;

	for (i = 0; i < depth; i++)
		items[i] = PointerGetDatum(cstring_to_text_with_len(key,
															(int) lance_location_prefix(key, i + 1)));
	items[depth] = CStringGetTextDatum(key);
	return construct_array(items, depth + 1, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * location_taken
 *		Whether another live table (not table_id, nor of path: the unique
 *		constraint decides about a row of the same name) has a location
 *		that is, lies in or contains key.  As the catalog's owner, with the
 *		latest snapshot.  Must be called while connected to SPI.
 */
static bool
location_taken(int64 table_id, ArrayType *path, const char *key)
{
	Datum		args[5];

	args[0] = Int64GetDatum(table_id);
	args[1] = PointerGetDatum(path);
	args[2] = PointerGetDatum(key_and_outer_keys(key));
	args[3] = CStringGetTextDatum(psprintf("%s/", key));
	args[4] = CStringGetTextDatum(psprintf("%s0", key));
	return lance_exec_latest_as(lance_catalog_owner(), PLAN_LOCATION_TAKEN, args, NULL, 1) > 0;
}

/*
 * lance_check_location
 *		Raise unless the current role may place table path (id table_id, 0
 *		if none yet) at location, and no other live table's location is,
 *		lies in or contains it; on success the locations that could overlap
 *		it are locked until the transaction ends.  Must be called while
 *		connected to SPI.
 */
void
lance_check_location(int64 table_id, ArrayType *path, const char *location)
{
	char	   *what = psprintf("table \"%s\"", lance_id_to_cstring(path, "$"));
	char	   *key = location_key(what, location);
	Oid			owner = lance_catalog_owner();
	int			depth = lance_location_depth(key);
	int			i;

	if (!has_privs_of_role(GetUserId(), owner))
	{
		char	   *outer = namespace_key(what, path);

		if (outer == NULL || strcmp(key, outer) == 0 || !lance_location_within(key, outer))
			lance_error(LANCE_PERMISSION_DENIED,
						errmsg("%s: role \"%s\" may not place a table at \"%s\"", what,
							   GetUserNameFromId(GetUserId(), false), location),
						outer == NULL ?
						errdetail("No root location is set; only the catalog's owner places tables.") :
						errdetail("A role other than the catalog's owner places a table only below its namespace's location, %s.",
								  outer),
						errhint("Declare the table without a location, or ask the catalog's owner to place it."));
	}
	for (i = 1; i <= depth; i++)
		lock_location(key, lance_location_prefix(key, i), ShareLock);
	lock_location(key, strlen(key), ExclusiveLock);
	if (location_taken(table_id, path, key))
		lance_error(LANCE_TABLE_ALREADY_EXISTS,
					errmsg("%s: location \"%s\" belongs to another table", what, location),
					errdetail("Another table's location is, lies in or contains it: a table owns its location."),
					errhint("Choose another location, or declare the table without one."));
}

PG_FUNCTION_INFO_V1(lance_location_key_sql);

/*
 * lance_location_key(location text) returns text
 *		The comparable form of a table location (location_rules.c), or NULL
 *		when it is not one.  Immutable: the expression of
 *		entries_location_key_idx.
 */
Datum
lance_location_key_sql(PG_FUNCTION_ARGS)
{
	char	   *location = text_to_cstring(PG_GETARG_TEXT_PP(0));
	size_t		size = strlen(location) + 1;
	char	   *key = palloc(size);

	if (lance_location_key(location, key, size) != NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(key));
}

PG_FUNCTION_INFO_V1(lance_location_taken);

/*
 * lance_location_taken(location text, except_table bigint) returns boolean
 *		Whether a live table other than except_table (NULL: none) has a
 *		location that is, lies in or contains location: before the gateway's
 *		--sweep deletes files at a dropped table's location or takes a
 *		table's manifests for orphans.  As the catalog's owner, whoever
 *		asks: not executable by PUBLIC (it would tell a tenant where other
 *		tenants' tables are).
 */
Datum
lance_location_taken(PG_FUNCTION_ARGS)
{
	char	   *location;
	char	   *key;
	bool		taken;

	if (PG_ARGISNULL(0))
		lance_error(LANCE_INVALID_INPUT, errmsg("LocationTaken: location must not be NULL"));
	location = text_to_cstring(PG_GETARG_TEXT_PP(0));
	key = location_key("LocationTaken", location);
	SPI_connect();
	taken = location_taken(PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1),
						   construct_empty_array(TEXTOID), key);
	SPI_finish();
	PG_RETURN_BOOL(taken);
}

/*
 * lance_location_taken_by_other
 *		lance_location_taken for a table's own location, for DropTable.
 *		Must be called while connected to SPI.
 */
bool
lance_location_taken_by_other(int64 table_id, const char *location)
{
	size_t		size = strlen(location) + 1;
	char	   *key = palloc(size);

	if (lance_location_key(location, key, size) != NULL)
		return false;			/* placed before 0.6.0: nothing to compare */
	return location_taken(table_id, construct_empty_array(TEXTOID), key);
}

PG_FUNCTION_INFO_V1(lance_entries_location_check);

/*
 * lance_entries_location_check() returns trigger
 *		BEFORE INSERT OR UPDATE OF location FOR EACH ROW on entries: a
 *		table's new location passes lance_check_location.  A row restored
 *		by pg_restore, and an update that keeps the location's key, pass.
 */
Datum
lance_entries_location_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	HeapTuple	tuple;
	bool		isnull;
	Datum		d;
	char	   *location;
	int64		id;
	ArrayType  *path;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		elog(ERROR, "lance_entries_location_check must be a BEFORE INSERT OR UPDATE ROW trigger");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
	d = heap_getattr(tuple, lance_catalog_oids()->entry_attnums[2], desc, &isnull);
	if (isnull || lance_restoring(rel))
		return PointerGetDatum(tuple);	/* a namespace; or a restore */
	location = TextDatumGetCString(d);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		Datum		old = heap_getattr(trigdata->tg_trigtuple, lance_catalog_oids()->entry_attnums[2],
									   desc, &isnull);

		if (!isnull && strcmp(TextDatumGetCString(old), location) == 0)
			return PointerGetDatum(tuple);
	}
	id = DatumGetInt64(heap_getattr(tuple, lance_catalog_oids()->entry_attnums[0], desc, &isnull));
	path = DatumGetArrayTypeP(heap_getattr(tuple, lance_catalog_oids()->entry_path, desc, &isnull));
	SPI_connect();
	lance_check_location(id, path, location);
	SPI_finish();
	return PointerGetDatum(tuple);
}

PG_FUNCTION_INFO_V1(lance_check_table_location);

/*
 * lance_check_table_location(id text[], location text) returns text
 *		Raise unless the current role could place table id at location now
 *		(lance_check_location); returns the location.  The gateway asks it
 *		before it reads anything at a location a client named
 *		(RegisterTable), so that a refusal comes before any I/O and the
 *		same whether or not anything is there.
 */
Datum
lance_check_table_location(PG_FUNCTION_ARGS)
{
	const char *op = "CheckTableLocation";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *location = lance_text_arg(fcinfo, 1);
	LanceEntry	existing;
	int64		table_id = 0;

	if (location == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: location must not be NULL", op));
	lance_validate_path(op, "location", location);
	SPI_connect();
	if (lance_lookup_entry(id, LANCE_LOCK_NONE, &existing) && existing.kind == 't')
		table_id = existing.id;
	lance_check_location(table_id, id, location);
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(location));
}
