/*-------------------------------------------------------------------------
 *
 * privileges.c
 *	  Namespace-subtree privileges: read, write and admin.
 *
 * A privilege granted to a role on namespace N covers N and everything
 * below it; admin implies write, and write implies read.  Row level
 * security on the catalog tables calls lance_has_privilege(), so psql users
 * and REST users meet the same rules.  The owner of the catalog tables and
 * superusers bypass row level security.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "lance_namespace.h"

/*
 * privilege_level
 *		1 read, 2 write, 3 admin; InvalidInput for anything else.
 */
static int
privilege_level(const char *op, const char *privilege)
{
	if (privilege != NULL)
	{
		if (pg_strcasecmp(privilege, "read") == 0)
			return 1;
		if (pg_strcasecmp(privilege, "write") == 0)
			return 2;
		if (pg_strcasecmp(privilege, "admin") == 0)
			return 3;
	}
	lance_error(LANCE_INVALID_INPUT,
				errmsg("%s: privilege must be read, write or admin", op));
	return 0;					/* not reached */
}

PG_FUNCTION_INFO_V1(lance_has_privilege);

/*
 * lance_has_privilege(path text[], privilege text) returns boolean
 *		Whether the current role holds privilege on path through a grant on
 *		path or one of its ancestors (the root {} included).  Grants are
 *		read through row level security, which shows a role only its own.
 */
Datum
lance_has_privilege(PG_FUNCTION_ARGS)
{
	ArrayType  *path;
	Datum	   *elems;
	Datum	   *prefixes;
	int			n;
	int			i;
	int			level;
	Datum		values[2];
	Oid			types[2] = {TEXTARRAYOID, INT4OID};
	bool		found;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	path = PG_GETARG_ARRAYTYPE_P(0);
	level = privilege_level("HasPrivilege", text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (ARR_NDIM(path) > 1 || array_contains_nulls(path))
		PG_RETURN_BOOL(false);
	deconstruct_array(path, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);

	/* every prefix of path, as a text[] of their "/"-joined forms */
	prefixes = palloc(sizeof(Datum) * (n + 1));
	for (i = 0; i <= n; i++)
	{
		ArrayType  *prefix = construct_array(elems, i, TEXTOID, -1, false, TYPALIGN_INT);

		prefixes[i] = CStringGetTextDatum(lance_id_to_cstring(prefix, "/"));
	}
	values[0] = PointerGetDatum(construct_array(prefixes, n + 1, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[1] = Int32GetDatum(level);
	SPI_connect();
	if (SPI_execute_with_args("SELECT 1 FROM lance_namespace.privileges p"
							  " WHERE p.scope = ANY ($1) AND p.level >= $2"
							  " AND lance_namespace.lance_is_member(p.role_name)"
							  " LIMIT 1",
							  2, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read privileges");
	found = SPI_processed > 0;
	SPI_finish();
	PG_RETURN_BOOL(found);
}

PG_FUNCTION_INFO_V1(lance_privilege_level);

/*
 * lance_privilege_level(privilege text) returns integer
 *		1 for read, 2 for write, 3 for admin.
 */
Datum
lance_privilege_level(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(privilege_level("Grant",
									PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0))));
}
