/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Resolving identifiers to catalog entries, settings, and locations.
 *
 * All functions here must be called while connected to SPI.  Lookups by
 * identifier are one index probe on entries.path.  Writers resolve the
 * objects they depend on with FOR KEY SHARE, which keeps them from being
 * dropped or renamed until the writer commits; a concurrent drop makes the
 * lookup wait, and then find nothing, so the writer reports "not found"
 * instead of failing on a foreign key.  CreateTableVersion is the exception
 * (lance_commit_lock): the hottest writer leaves the lock to the foreign key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"

#include "lance_namespace.h"

/*
 * entries_rls_applies
 *		Whether row level security filters what the current role reads of
 *		entries (true, too, if the catalog's objects are not found).
 */
static bool
entries_rls_applies(void)
{
	Oid			entries = lance_catalog_oids()->entries;

	return !OidIsValid(entries) || check_enable_rls(entries, InvalidOid, true) == RLS_ENABLED;
}

/*
 * lance_lookup_entry
 *		Find the entry at path, optionally locking it.  Returns false when
 *		there is none.  Strings are palloc'd in the current context.
 */
bool
lance_lookup_entry(ArrayType *path, LanceLock lock, LanceEntry *entry)
{
	Datum		values[1];
	bool		isnull;
	LancePlanId plan;
	Datum		d;

	/*
	 * CreateTableVersion's lookup, or a read that row level security does
	 * not filter: one index probe (entry_probe.c)
	 */
	if (lock == LANCE_LOCK_NONE_FRESH || (lock == LANCE_LOCK_NONE && !entries_rls_applies()))
	{
		int			found = lance_probe_entry(path, lock == LANCE_LOCK_NONE_FRESH, entry);

		if (found >= 0)
			return found == 1;
	}
	values[0] = PointerGetDatum(path);
	plan = lock == LANCE_LOCK_KEY_SHARE ? PLAN_RESOLVE_ENTRY_KEY_SHARE :
		lock == LANCE_LOCK_FOR_UPDATE ? PLAN_RESOLVE_ENTRY_FOR_UPDATE :
		PLAN_RESOLVE_ENTRY;
	if (lance_exec(plan, values, NULL, lock == LANCE_LOCK_NONE, 1) == 0)
	{
		/*
		 * A locking lookup that waited for a transaction which deleted the
		 * entry and created another at the same path (CreateNamespace
		 * Overwrite) finds nothing: the new row is not in the snapshot the
		 * lookup started with.  Look once more; a non-read-only execution
		 * takes a new snapshot (in READ COMMITTED), which holds the new
		 * row.  Without this the caller reported the namespace not found,
		 * or, since lance_check_lock_denied then sees the new row,
		 * permission denied.
		 */
		if ((lock != LANCE_LOCK_KEY_SHARE && lock != LANCE_LOCK_FOR_UPDATE) ||
			lance_exec(plan, values, NULL, false, 1) == 0)
			return false;
	}
	entry->id = DatumGetInt64(lance_spi_value(0, 1, &isnull));
	entry->kind = DatumGetChar(lance_spi_value(0, 2, &isnull));
	d = lance_spi_value(0, 3, &isnull);
	entry->location = isnull ? NULL : TextDatumGetCString(d);
	entry->properties = DatumGetJsonbPCopy(lance_spi_value(0, 4, &isnull));
	entry->declared = DatumGetBool(lance_spi_value(0, 5, &isnull));
	return true;
}

/*
 * lance_check_lock_denied
 *		After a locking lookup found nothing: if the entry is visible to a
 *		plain read, row level security let the role read it but not write
 *		it, which is PermissionDenied rather than "not found".  Otherwise
 *		return (it does not exist, or the role may not even see it).
 */
void
lance_check_lock_denied(const char *op, ArrayType *id, LanceLock lock)
{
	Datum		values[1];

	/*
	 * Not lance_lookup_entry(id, LANCE_LOCK_NONE): its read-only lookup
	 * uses the statement's snapshot, which still shows a row that a
	 * concurrent transaction deleted (and committed) while the locking
	 * lookup waited, or that an earlier command of this statement deleted.
	 * A non-read-only execution takes a fresh snapshot, as the locking
	 * lookup did, so such a row is "not found", not "permission denied".
	 */
	if (lock == LANCE_LOCK_NONE || lock == LANCE_LOCK_NONE_FRESH)
		return;
	values[0] = PointerGetDatum(id);
	if (lance_exec(PLAN_RESOLVE_ENTRY, values, NULL, false, 1) > 0)
		lance_error(LANCE_PERMISSION_DENIED,
					errmsg("%s: permission denied to change \"%s\"", op,
						   lance_id_to_cstring(id, "$")));
}

/*
 * lance_commit_lock
 *		The lock that CreateTableVersion takes on the table's entry while
 *		resolving it.  For a role that row level security does not apply to
 *		(the catalog's owner, as the gateway connects by default) none: the
 *		versions foreign key locks the entry (FOR KEY SHARE) when, and only
 *		when, a version row is inserted, so a writer that loses a race for a
 *		version neither locks nor writes anything and commits without a WAL
 *		flush (since 0.4.0 the versions_check trigger, finding the version's
 *		key taken, takes no transaction id for the row's creation record:
 *		lance_version_record in audit.c).  A concurrent drop then fails the foreign key (23503,
 *		ConcurrentModification), and a re-registration that commits between
 *		the lookup and the insert leaves the version's canonical path under
 *		the location the writer saw (where its staging manifest is) instead
 *		of the new one.  Under row level security the locking
 *		lookup stays: it is what tells a role that may read but not write
 *		the table PermissionDenied, before anything is inserted.  Either way
 *		the lookup reads with a fresh snapshot, so a table declared earlier
 *		in the same statement is found.
 */
LanceLock
lance_commit_lock(void)
{
	return entries_rls_applies() ? LANCE_LOCK_KEY_SHARE : LANCE_LOCK_NONE_FRESH;
}

/*
 * lance_resolve_namespace
 *		The entry id of namespace id (the root is 0), or NamespaceNotFound.
 *		entry may be NULL.
 */
int64
lance_resolve_namespace(const char *op, ArrayType *id, LanceLock lock, LanceEntry *entry)
{
	LanceEntry	e;

	if (lance_id_depth(id) == 0 && lock != LANCE_LOCK_FOR_UPDATE)
	{
		if (entry != NULL)
		{
			entry->id = LANCE_ROOT_ID;
			entry->kind = 'r';
			entry->location = NULL;
			entry->properties = lance_empty_object();
			entry->declared = false;
		}
		return LANCE_ROOT_ID;
	}
	if (!lance_lookup_entry(id, lock, &e))
	{
		lance_check_lock_denied(op, id, lock);
		e.kind = 't';			/* not found */
	}
	if (e.kind == 't')
		lance_error(LANCE_NAMESPACE_NOT_FOUND,
					errmsg("%s: namespace \"%s\" not found", op,
						   lance_id_to_cstring(id, "$")));
	if (entry != NULL)
		*entry = e;
	return e.id;
}

/*
 * lance_raise_missing_table
 *		Raise NamespaceNotFound when the table's namespace is missing, and
 *		TableNotFound otherwise.  The namespace is looked up with a fresh
 *		snapshot: a lookup of the table that waited for a DropNamespace
 *		Cascade to commit found the table gone, and the statement's own
 *		snapshot would still show its namespace.
 */
void
lance_raise_missing_table(const char *op, ArrayType *id)
{
	ArrayType  *parent_id = lance_id_parent(id);
	Datum		values[1];
	bool		isnull;

	/* not read-only: a new snapshot (not the probe: row level security) */
	values[0] = PointerGetDatum(parent_id);
	if (lance_id_depth(parent_id) > 0 &&
		(lance_exec(PLAN_RESOLVE_ENTRY, values, NULL, false, 1) == 0 ||
		 DatumGetChar(lance_spi_value(0, 2, &isnull)) == 't'))
		lance_error(LANCE_NAMESPACE_NOT_FOUND,
					errmsg("%s: namespace \"%s\" not found", op,
						   lance_id_to_cstring(parent_id, "$")));
	lance_error(LANCE_TABLE_NOT_FOUND,
				errmsg("%s: table \"%s\" not found", op, lance_id_to_cstring(id, "$")));
}

/*
 * lance_resolve_table
 *		Fill entry with table id, or raise NamespaceNotFound/TableNotFound.
 */
void
lance_resolve_table(const char *op, ArrayType *id, LanceLock lock, LanceEntry *entry)
{
	if (!lance_lookup_entry(id, lock, entry))
	{
		lance_check_lock_denied(op, id, lock);
		lance_raise_missing_table(op, id);
	}
	if (entry->kind != 't')
		lance_raise_missing_table(op, id);
}

/*
 * lance_raise_name_taken
 *		Report why an insert of name under parent_id conflicted.  The code is
 *		that of the kind being created (NamespaceAlreadyExists for 'n',
 *		TableAlreadyExists for 't'); the message says which kind of object
 *		holds the name, since names are unique across both kinds.  If the
 *		holder vanished meanwhile, the caller raced with a drop:
 *		ConcurrentModification.
 */
void
lance_raise_name_taken(const char *op, ArrayType *id, int64 parent_id, const char *name,
					   char kind)
{
	Datum		values[2];
	bool		isnull;
	char	   *sid = lance_id_to_cstring(id, "$");
	int			code = kind == 'n' ? LANCE_NAMESPACE_ALREADY_EXISTS : LANCE_TABLE_ALREADY_EXISTS;

	values[0] = Int64GetDatum(parent_id);
	values[1] = CStringGetTextDatum(name);
	if (lance_exec(PLAN_SIBLING_KIND, values, NULL, false, 1) == 0)
		lance_error(LANCE_CONCURRENT_MODIFICATION,
					errmsg("%s: \"%s\" was changed concurrently", op, sid),
					errhint("Retry the operation."));
	if (DatumGetChar(lance_spi_value(0, 1, &isnull)) == 'n')
		lance_error(code, errmsg("%s: namespace \"%s\" already exists", op, sid),
					kind == 'n' ? 0 : errdetail("Tables and namespaces share one set of names."));
	lance_error(code, errmsg("%s: table \"%s\" already exists", op, sid),
				kind == 't' ? 0 : errdetail("Tables and namespaces share one set of names."));
}

/*
 * lance_get_setting
 *		A catalog setting, or NULL when unset.
 */
char *
lance_get_setting(const char *name)
{
	Datum		values[1];
	bool		isnull;
	Datum		d;

	values[0] = CStringGetTextDatum(name);
	if (lance_exec(PLAN_GET_SETTING, values, NULL, true, 1) == 0)
		return NULL;
	d = lance_spi_value(0, 1, &isnull);
	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * lance_join_path
 *		base "/" rest, without doubling a trailing slash of base.
 */
char *
lance_join_path(const char *base, const char *rest)
{
	size_t		len = strlen(base);

	while (len > 0 && base[len - 1] == '/')
		len--;
	return psprintf("%.*s/%s", (int) len, base, rest);
}

/*
 * lance_default_table_location
 *		<root location>/<ns>/.../<name>.lance for table id.
 */
char *
lance_default_table_location(const char *op, ArrayType *id)
{
	char	   *root = lance_get_setting("root_location");

	if (root == NULL)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: no location given and no root location is configured", op),
					errhint("Pass a location, or set one with lance_namespace.lance_set_root_location()."));
	return psprintf("%s.lance", lance_join_path(root, lance_id_to_cstring(id, "/")));
}

/*
 * lance_text_arg
 *		A text argument as a C string, or NULL.
 */
char *
lance_text_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		return NULL;
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/*
 * validate_root_location
 *		A root location is a non-empty string without control characters,
 *		and an absolute path or a URI ("scheme://..."): a relative one
 *		would place every declared table relative to whoever reads it.
 */
static void
validate_root_location(const char *op, const char *root)
{
	size_t		scheme;

	lance_validate_path(op, "root_location", root);
	scheme = isalpha((unsigned char) root[0]) ?
		strspn(root, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") : 0;
	if (root[0] != '/' && (scheme == 0 || strncmp(root + scheme, "://", 3) != 0))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: root_location \"%s\" is neither an absolute path nor a URI",
						   op, root),
					errhint("Pass a path that begins with \"/\", or a URI such as s3://bucket/prefix."));
}

PG_FUNCTION_INFO_V1(lance_set_root_location);

/*
 * lance_set_root_location(root_location text) returns text
 *		Set where DeclareTable places tables that come without a location.
 *		Existing tables keep their locations.
 */
Datum
lance_set_root_location(PG_FUNCTION_ARGS)
{
	const char *op = "SetRootLocation";
	char	   *root = lance_text_arg(fcinfo, 0);
	Datum		values[1];
	Oid			types[1] = {TEXTOID};
	int			rc;

	validate_root_location(op, root);
	values[0] = CStringGetTextDatum(root);
	SPI_connect();
	rc = SPI_execute_with_args("INSERT INTO lance_namespace.settings (name, value)"
							   " VALUES ('root_location', $1)"
							   " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
							   1, types, values, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "could not store root_location: %s", SPI_result_code_string(rc));
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(root));
}

PG_FUNCTION_INFO_V1(lance_root_location);

/*
 * lance_root_location() returns text
 *		The configured root location, or NULL.  Read as the catalog's owner
 *		(issue 39, item 11): the gateway's authenticator reads it at start-up
 *		and holds no privilege on any catalog table, as README's security
 *		model has it.  Narrow: this one setting, which is no secret (every
 *		DeclareTable answer shows a location under it, and lance_grant gives
 *		each tenant SELECT on settings); the caller still needs USAGE on the
 *		schema and EXECUTE on this function.
 */
Datum
lance_root_location(PG_FUNCTION_ARGS)
{
	MemoryContext outer = CurrentMemoryContext;
	Datum		values[1];
	char	   *root = NULL;
	text	   *result = NULL;
	bool		isnull;

	SPI_connect();
	values[0] = CStringGetTextDatum("root_location");
	if (lance_exec_as(lance_catalog_owner(), PLAN_GET_SETTING, values, NULL, true, 1) > 0)
	{
		Datum		d = lance_spi_value(0, 1, &isnull);

		root = isnull ? NULL : TextDatumGetCString(d);
	}
	if (root != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		result = cstring_to_text(root);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(result);
}
