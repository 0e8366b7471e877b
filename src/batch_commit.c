/*-------------------------------------------------------------------------
 *
 * batch_commit.c
 *	  BatchCommitTables: DeclareTable, CreateTableVersion,
 *	  DeleteTableVersions and DeregisterTable in one transaction.
 *
 * Each operation runs through the same SQL function as its single form, so
 * the rules are those of the single operations.  They run in request order
 * within one statement: the first failure raises an error and rolls back
 * every operation of the batch.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "lance_namespace.h"

typedef struct CommitOperation
{
	const char *field;
	LancePlanId plan;
} CommitOperation;

static const CommitOperation commit_operations[] = {
	{"declare_table", PLAN_REST_DECLARE_TABLE},
	{"create_table_version", PLAN_REST_CREATE_TABLE_VERSION},
	{"delete_table_versions", PLAN_REST_DELETE_TABLE_VERSIONS},
	{"deregister_table", PLAN_REST_DEREGISTER_TABLE},
};

#define N_COMMIT_OPERATIONS lengthof(commit_operations)

/*
 * run_operation
 *		Run one CommitTableOperation object; append its CommitTableResult
 *		to buf.  *held counts the manifest bytes of the request's creates.
 */
static void
run_operation(const char *op, int position, Jsonb *operation, StringInfo buf, int64 *held)
{
	const CommitOperation *chosen = NULL;
	Jsonb	   *request = NULL;
	Datum		values[1];
	bool		isnull;
	Datum		d;
	int			i;

	for (i = 0; i < N_COMMIT_OPERATIONS; i++)
	{
		Jsonb	   *sub = lance_json_value(operation, commit_operations[i].field);

		if (sub == NULL)
			continue;
		if (chosen != NULL)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: operation %d sets more than one operation field", op, position));
		if (!JB_ROOT_IS_OBJECT(sub))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: operation %d: field \"%s\" must be an object", op, position,
							   commit_operations[i].field));
		chosen = &commit_operations[i];
		request = sub;
	}
	if (chosen == NULL)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: operation %d sets none of declare_table, create_table_version, delete_table_versions, deregister_table",
						   op, position));
	/* the request's limit on held manifest bytes, over all its operations */
	if (chosen->plan == PLAN_REST_CREATE_TABLE_VERSION)
	{
		bytea	   *bytes = lance_json_manifest_bytes(request, op, held);

		if (bytes != NULL)
			pfree(bytes);
	}
	values[0] = JsonbPGetDatum(request);
	if (lance_exec(chosen->plan, values, NULL, false, 1) != 1)
		elog(ERROR, "%s: operation %d returned no result", op, position);
	d = lance_spi_value(0, 1, &isnull);
	appendStringInfo(buf, "%s{\"%s\":%s}", position > 0 ? "," : "", chosen->field,
					 isnull ? "{}" : JsonbToCString(NULL, &DatumGetJsonbP(d)->root, 0));
}

PG_FUNCTION_INFO_V1(lance_batch_commit_tables);

/*
 * lance_batch_commit_tables(operations jsonb) returns jsonb
 *		The results, one per operation in request order.
 */
Datum
lance_batch_commit_tables(PG_FUNCTION_ARGS)
{
	const char *op = "BatchCommitTables";
	MemoryContext outer = CurrentMemoryContext;
	Jsonb	   *operations;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	StringInfoData buf;
	int			n = 0;
	int64		held = 0;
	Datum		result;
	MemoryContext old;

	if (PG_ARGISNULL(0))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: operations must not be NULL", op));
	operations = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_ARRAY(operations) || JB_ROOT_IS_SCALAR(operations))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: operations must be a JSON array", op));
	if (JB_ROOT_COUNT(operations) > LANCE_MAX_BATCH_ENTRIES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: more than %d operations", op, LANCE_MAX_BATCH_ENTRIES));

	SPI_connect();
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	it = JsonbIteratorInit(&operations->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: operation %d must be a JSON object", op, n));
		run_operation(op, n, JsonbValueToJsonb(&v), &buf, &held);
		n++;
	}
	appendStringInfoChar(&buf, ']');
	old = MemoryContextSwitchTo(outer);
	result = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
	MemoryContextSwitchTo(old);
	SPI_finish();
	PG_RETURN_DATUM(result);
}
