/*-------------------------------------------------------------------------
 *
 * txn_ops.c
 *	  DescribeTransaction (AlterTransaction is txn_alter.c).
 *
 * A transaction_id is a PostgreSQL top-level transaction id (xid8).  Its
 * history rows, visible once it commits, tell the operations, time and
 * role; without them, pg_xact_status tells whether it is still running or
 * was rolled back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "lance_namespace.h"

/*
 * lance_transaction_arg
 *		A transaction id argument: a decimal xid8.  Returns it in canonical
 *		form (no leading zeros) and its value in *xid.
 */
char *
lance_transaction_arg(FunctionCallInfo fcinfo, int argno, const char *op, uint64 *xid)
{
	char	   *id = lance_text_arg(fcinfo, argno);
	const char *p;
	char	   *end;

	if (id == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: id must not be NULL", op));
	if (id[0] == '\0' || strlen(id) > 20)
		lance_error(LANCE_TRANSACTION_NOT_FOUND,
					errmsg("%s: transaction \"%s\" not found", op, id));
	for (p = id; *p; p++)
		if (*p < '0' || *p > '9')
			lance_error(LANCE_TRANSACTION_NOT_FOUND,
						errmsg("%s: transaction \"%s\" not found", op, id));
	errno = 0;
	*xid = strtou64(id, &end, 10);
	if (errno != 0 || *end != '\0')
		lance_error(LANCE_TRANSACTION_NOT_FOUND,
					errmsg("%s: transaction \"%s\" not found", op, id));
	return psprintf(UINT64_FORMAT, *xid);
}

/*
 * lance_append_transaction_properties
 *		Append the properties that AlterTransaction set on transaction xid to
 *		the JSON object being built in buf, as "key":"value" members (a
 *		comma first unless first).  They are read as the catalog's owner:
 *		lance_namespace.transaction_properties is the owner's alone, and the
 *		caller's right to the transaction was checked by its caller.  A
 *		catalog whose schema predates the table (0.1.0, before ALTER
 *		EXTENSION UPDATE) has none.  Must be called while connected to SPI.
 */
void
lance_append_transaction_properties(StringInfo buf, const char *xid, bool first)
{
	Oid			nsp = get_namespace_oid("lance_namespace", false);
	Datum		args[1];
	int			n;

	if (!OidIsValid(get_relname_relid("transaction_properties", nsp)))
		return;
	args[0] = CStringGetTextDatum(xid);
	n = lance_exec_as(lance_catalog_owner(), PLAN_TRANSACTION_PROPERTIES, args, NULL, true, 0);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		if (!first || i > 0)
			appendStringInfoChar(buf, ',');
		escape_json(buf, TextDatumGetCString(lance_spi_value(i, 1, &isnull)));
		appendStringInfoChar(buf, ':');
		escape_json(buf, TextDatumGetCString(lance_spi_value(i, 2, &isnull)));
	}
}

/*
 * xact_status
 *		pg_xact_status of transaction xid (args[0] is its id as text):
 *		"in progress", "committed" or "aborted"; NULL when unknown.
 *		pg_xact_status raises an error for an id not yet assigned.  The next
 *		id to assign only grows, so an id below it stays valid; the
 *		snapshot's xmax would not do, as it can be at or below an id that
 *		is still running (our own, or another session's newest).
 */
static const char *
xact_status(uint64 xid, Datum *args)
{
	Oid			types[1] = {TEXTOID};
	bool		isnull;
	Datum		d;

	if (xid >= U64FromFullTransactionId(ReadNextFullTransactionId()))
		return NULL;
	if (SPI_execute_with_args("SELECT pg_catalog.pg_xact_status($1::text::xid8)",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up transaction status");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? NULL : TextDatumGetCString(d);
}

PG_FUNCTION_INFO_V1(lance_describe_transaction);

/*
 * lance_describe_transaction(id) returns (status, properties)
 *		status is Succeeded, Running or Failed; properties give the
 *		operations, time, role and interface when known, and what
 *		AlterTransaction set.
 */
Datum
lance_describe_transaction(PG_FUNCTION_ARGS)
{
	const char *op = "DescribeTransaction";
	MemoryContext outer = CurrentMemoryContext;
	uint64		xid;
	char	   *id = lance_transaction_arg(fcinfo, 0, op, &xid);
	FullTransactionId current = GetTopFullTransactionIdIfAny();
	TupleDesc	tupdesc;
	Datum		args[1];
	Datum		values[2];
	bool		nulls[2] = {false, false};
	const char *status = NULL;
	StringInfoData buf;
	int			n;
	int			i;
	Datum		result;
	MemoryContext old;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	SPI_connect();
	args[0] = CStringGetTextDatum(id);
	n = lance_exec(PLAN_TRANSACTION_HISTORY, args, NULL, true, 0);
	if (n == 0)
	{
		const char *xstatus = xact_status(xid, args);

		if (xstatus != NULL && strcmp(xstatus, "in progress") == 0)
			status = "Running";
		else if (xstatus != NULL && strcmp(xstatus, "aborted") == 0)
			status = "Failed";

		/*
		 * Committed since this statement's snapshot was taken: its rows
		 * are there for a new snapshot (a non-read-only execution).
		 */
		else if (xstatus == NULL || strcmp(xstatus, "committed") != 0 ||
				 (n = lance_exec(PLAN_TRANSACTION_HISTORY, args, NULL, false, 0)) == 0)
			lance_error(LANCE_TRANSACTION_NOT_FOUND,
						errmsg("%s: transaction \"%s\" not found", op, id));
	}
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	if (n > 0)
	{
		bool		isnull;
		StringInfoData ops;

		/* committed rows, or our own: no need to assign an xid to tell */
		status = FullTransactionIdIsValid(current) &&
			U64FromFullTransactionId(current) == xid ? "Running" : "Succeeded";

		/* the operation names, comma-separated, as one JSON string */
		initStringInfo(&ops);
		for (i = 0; i < n; i++)
		{
			if (i > 0)
				appendStringInfoChar(&ops, ',');
			appendStringInfoString(&ops, TextDatumGetCString(lance_spi_value(i, 1, &isnull)));
		}
		appendStringInfoString(&buf, "\"operation\":");
		escape_json(&buf, ops.data);
		appendStringInfoString(&buf, ",\"time\":");
		escape_json(&buf, DatumGetCString(DirectFunctionCall1(timestamptz_out,
															  lance_spi_value(0, 2, &isnull))));
		appendStringInfoString(&buf, ",\"role\":");
		escape_json(&buf, TextDatumGetCString(lance_spi_value(0, 3, &isnull)));
		appendStringInfoString(&buf, ",\"interface\":");
		escape_json(&buf, TextDatumGetCString(lance_spi_value(0, 4, &isnull)));
		appendStringInfo(&buf, ",\"operation_count\":\"%d\"", n);
	}
	lance_append_transaction_properties(&buf, id, n == 0);
	appendStringInfoChar(&buf, '}');
	old = MemoryContextSwitchTo(outer);
	values[0] = CStringGetTextDatum(status);
	values[1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
	MemoryContextSwitchTo(old);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}
