/*-------------------------------------------------------------------------
 *
 * rest_acl.c
 *	  EXECUTE on the operation a REST binding calls.
 *
 * PostgreSQL checks EXECUTE when the executor calls a function.  A rest_*
 * binding calls its lance_* operation without the executor (through the
 * function manager, or the operation's C implementation directly), so the
 * check is made here: revoking EXECUTE on a lance_* function then closes
 * its REST route too, as it closed it when the bindings called the
 * operations from SQL.  Access to the catalog's rows is decided, as for
 * every call, by the table grants and row level security.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#if PG_VERSION_NUM >= 160000
#include "catalog/pg_proc.h"
#endif

#include "lance_namespace.h"

/* Bumped when pg_proc changes: every LanceFunctionRef looks up again. */
static uint64 proc_generation = 1;
static bool callback_registered = false;

/*
 * forget_oids
 *		Syscache callback: pg_proc changed (the extension may have been
 *		dropped and created again).
 */
static void
forget_oids(Datum arg, int cacheid, uint32 hashvalue)
{
	proc_generation++;
}

/*
 * lance_function_oid
 *		The OID of the lance_namespace function ref names, with its exact
 *		argument types, looked up once per session.
 */
Oid
lance_function_oid(LanceFunctionRef *ref)
{
	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, forget_oids, (Datum) 0);
		callback_registered = true;
	}
	if (ref->generation != proc_generation)
	{
		ref->oid = LookupFuncName(list_make2(makeString("lance_namespace"),
											 makeString((char *) ref->name)),
								  ref->nargs, ref->argtypes, false);
		ref->generation = proc_generation;
	}
	return ref->oid;
}

/*
 * lance_check_execute
 *		The current user must have EXECUTE on function fn (42501).
 */
void
lance_check_execute(Oid fn)
{
	AclResult	result;

#if PG_VERSION_NUM >= 160000
	result = object_aclcheck(ProcedureRelationId, fn, GetUserId(), ACL_EXECUTE);
#else
	result = pg_proc_aclcheck(fn, GetUserId(), ACL_EXECUTE);
#endif
	if (result != ACLCHECK_OK)
		aclcheck_error(result, OBJECT_FUNCTION, get_func_name(fn));
}
