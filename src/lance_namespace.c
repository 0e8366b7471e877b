/*-------------------------------------------------------------------------
 *
 * lance_namespace.c
 *	  Module entry point of the lance_namespace extension: its settings.
 *
 * The catalog's operations live in namespace_ops.c, table_ops.c,
 * version_ops.c and their neighbours; this file declares the module and
 * its configuration parameters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "lance_namespace.h"

PG_MODULE_MAGIC;

bool		lance_notify_commits = false;
char	   *lance_interface = NULL;

void		_PG_init(void);

/*
 * _PG_init
 *		Define the lance_namespace.* configuration parameters.
 */
void
_PG_init(void)
{
	DefineCustomBoolVariable("lance_namespace.notify_commits",
							 "Also announce each committed table version on the lance_namespace_commits channel.",
							 "NOTIFY serializes the commits of notifying transactions; the change feed "
							 "(lance_changes(), the gateway's /v1/events) does not need it.",
							 &lance_notify_commits,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomStringVariable("lance_namespace.interface",
							   "Interface recorded in the commit history (sql, rest).",
							   NULL,
							   &lance_interface,
							   "sql",
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);
	lance_postgrest_init();
	MarkGUCPrefixReserved("lance_namespace");
	lance_audit_init();
}
