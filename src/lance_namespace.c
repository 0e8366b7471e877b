/*-------------------------------------------------------------------------
 *
 * lance_namespace.c
 *	  Module entry point of the lance_namespace extension.
 *
 * The catalog's operations live in namespace_ops.c, table_ops.c and
 * version_ops.c; this file only declares the module.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;
