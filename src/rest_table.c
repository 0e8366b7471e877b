/*-------------------------------------------------------------------------
 *
 * rest_table.c
 *	  The REST bindings of the namespace, table, branch, tag, batch commit
 *	  and transaction routes, driven by one table: lance_rest_binding.
 *
 * A binding translates the request object that the gateway (or PostgREST)
 * passes into the arguments of one lance_* SQL function, calls it, and
 * turns its result into the response object.  Every one of these has the
 * same shape, so each is one row of "bindings" below: the operation's
 * function, the request fields in the order of its parameters (read with
 * the lance_request_* helpers, as the req_* SQL functions do), the result
 * columns that the response carries, whether JSON nulls are left out
 * (jsonb_strip_nulls of the whole object) and whether the transaction_id
 * of a mutating operation is added; or, for an operation that forms the
 * whole response itself, that its result is the response.
 *
 * The operation is called through the function manager with its own
 * pinned search_path, exactly as a SQL call of it would, so its rules are
 * not copied here; EXECUTE on it is checked first (rest_acl.c).  What is
 * saved against a PL/pgSQL body is the executor work around the call: one
 * search_path set-up per request instead of one per request field.  The function's OID and result columns are looked up
 * once per session and forgotten when pg_proc changes.
 *
 * The version routes, batch creates included, have their own C bindings
 * (rest_bindings.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "lance_namespace.h"

#define REST_MAX_ARGS 8
#define REST_MAX_OUTPUTS 10

/* How a request field becomes an argument */
typedef enum RestArgKind
{
	RA_TEXT_ARRAY,				/* text[]: an array of strings */
	RA_ID_STRING,				/* text: an array of strings joined by '$' */
	RA_TEXT,					/* text */
	RA_JSON,					/* jsonb: any JSON value */
	RA_BOOL,					/* boolean */
	RA_INT,						/* integer */
	RA_BIGINT					/* bigint */
} RestArgKind;

/* What an absent field becomes (else SQL NULL) */
typedef enum RestDefault
{
	RD_NULL,
	RD_EMPTY_ARRAY,				/* '{}' */
	RD_TRUE,
	RD_FALSE,
	RD_DOLLAR					/* '$', the default delimiter */
} RestDefault;

/*
 * Whether the response carries the transaction_id, and as what: most
 * responses give it as a string, DropNamespaceResponse as an array of
 * strings (spec.yaml).  true and false in the table below are
 * TXID_STRING and TXID_NONE.
 */
typedef enum RestTxid
{
	TXID_NONE = 0,
	TXID_STRING = 1,
	TXID_ARRAY
} RestTxid;

typedef struct RestArg
{
	const char *field;
	RestArgKind kind;
	RestDefault dflt;
} RestArg;

typedef struct RestBinding
{
	const char *name;			/* the rest_* function */
	const char *function;		/* the lance_* function it calls */
	int			nargs;
	RestArg		args[REST_MAX_ARGS];
	const char *outputs[REST_MAX_OUTPUTS];	/* result columns, NULL-ended */
	bool		strip_nulls;
	RestTxid	with_txid;
	bool		whole;			/* the result is the response (no outputs) */
} RestBinding;

#define ID {"id", RA_TEXT_ARRAY, RD_NULL}
#define PAGE {"page_token", RA_TEXT, RD_NULL}, {"limit", RA_INT, RD_NULL}

static const RestBinding bindings[] = {
	{"rest_create_namespace", "lance_create_namespace", 3,
		{ID, {"mode", RA_TEXT, RD_NULL}, {"properties", RA_JSON, RD_NULL}},
	{"properties"}, false, true},
	{"rest_list_namespaces", "lance_list_namespaces", 3,
		{{"id", RA_TEXT_ARRAY, RD_EMPTY_ARRAY}, PAGE},
	{"namespaces", "page_token"}, true, false},
	{"rest_describe_namespace", "lance_describe_namespace", 1,
		{ID},
	{"properties"}, false, false},
	{"rest_drop_namespace", "lance_drop_namespace", 3,
		{ID, {"mode", RA_TEXT, RD_NULL}, {"behavior", RA_TEXT, RD_NULL}},
	{"properties"}, true, TXID_ARRAY},
	{"rest_declare_table", "lance_declare_table", 4,
		{ID, {"location", RA_TEXT, RD_NULL}, {"properties", RA_JSON, RD_NULL},
		{"vend_credentials", RA_BOOL, RD_NULL}},
	{"location", "properties", "managed_versioning", "storage_options"}, true, true},
	{"rest_check_table_location", "lance_check_table_location", 2,
		{ID, {"location", RA_TEXT, RD_NULL}},
	{"location"}, false, false},
	{"rest_register_table", "lance_register_table", 5,
		{ID, {"location", RA_TEXT, RD_NULL}, {"mode", RA_TEXT, RD_NULL},
		{"properties", RA_JSON, RD_NULL}, {"versions", RA_JSON, RD_NULL}},
	{"location", "properties"}, true, true},
	{"rest_describe_table", "lance_describe_table", 8,
		{ID, {"version", RA_BIGINT, RD_NULL}, {"branch", RA_TEXT, RD_NULL},
			{"tag", RA_TEXT, RD_NULL}, {"with_table_uri", RA_BOOL, RD_FALSE},
			{"check_declared", RA_BOOL, RD_FALSE},
			{"load_detailed_metadata", RA_BOOL, RD_NULL},
		{"vend_credentials", RA_BOOL, RD_NULL}},
		{"table", "namespace", "version", "location", "table_uri", "properties",
	"managed_versioning", "is_only_declared", "storage_options"}, true, false},
	{"rest_list_tables", "lance_list_tables", 4,
		{{"id", RA_TEXT_ARRAY, RD_EMPTY_ARRAY}, PAGE,
		{"include_declared", RA_BOOL, RD_TRUE}},
	{"tables", "page_token"}, true, false},
	{"rest_list_all_tables", "lance_list_all_tables", 4,
		{PAGE, {"delimiter", RA_TEXT, RD_DOLLAR}, {"include_declared", RA_BOOL, RD_TRUE}},
	{"tables", "page_token"}, true, false},
	{"rest_deregister_table", "lance_deregister_table", 1,
		{ID},
	{"id", "location", "properties"}, true, true},
	{"rest_drop_table", "lance_drop_table", 1,
		{ID},
	{"id", "location", "properties"}, true, true},
	{"rest_rename_table", "lance_rename_table", 3,
		{ID, {"new_table_name", RA_TEXT, RD_NULL},
		{"new_namespace_id", RA_TEXT_ARRAY, RD_NULL}},
	{NULL}, false, true},
	{"rest_batch_delete_table_versions", "lance_batch_delete_table_versions", 3,
		{ID, {"ranges", RA_JSON, RD_NULL}, {"branch", RA_TEXT, RD_NULL}},
	{"deleted_count"}, false, true},
	{"rest_retire_table_version", "lance_retire_table_version", 4,
		{ID, {"version", RA_BIGINT, RD_NULL}, {"branch", RA_TEXT, RD_NULL},
		{"manifest_path", RA_TEXT, RD_NULL}},
	{"retired"}, false, true},
	{"rest_create_table_branch", "lance_create_table_branch", 5,
		{ID, {"name", RA_TEXT, RD_NULL}, {"from_branch", RA_TEXT, RD_NULL},
		{"from_version", RA_BIGINT, RD_NULL}, {"metadata", RA_JSON, RD_NULL}},
	{NULL}, false, true},
	{"rest_list_table_branches", "lance_list_table_branches", 3,
		{ID, PAGE},
	{"branches", "page_token"}, true, false},
	{"rest_delete_table_branch", "lance_delete_table_branch", 2,
		{ID, {"name", RA_TEXT, RD_NULL}},
	{NULL}, false, true},
	{"rest_create_table_tag", "lance_create_table_tag", 4,
		{ID, {"tag", RA_TEXT, RD_NULL}, {"version", RA_BIGINT, RD_NULL},
		{"branch", RA_TEXT, RD_NULL}},
	{NULL}, false, true},
	{"rest_get_table_tag_version", "lance_get_table_tag_version", 2,
		{ID, {"tag", RA_TEXT, RD_NULL}},
	{"version", "branch"}, true, false},
	{"rest_update_table_tag", "lance_update_table_tag", 4,
		{ID, {"tag", RA_TEXT, RD_NULL}, {"version", RA_BIGINT, RD_NULL},
		{"branch", RA_TEXT, RD_NULL}},
	{NULL}, false, true},
	{"rest_delete_table_tag", "lance_delete_table_tag", 2,
		{ID, {"tag", RA_TEXT, RD_NULL}},
	{NULL}, false, true},
	{"rest_list_table_tags", "lance_list_table_tags", 3,
		{ID, PAGE},
	{"tags", "page_token"}, true, false},
	{"rest_batch_commit_tables", "lance_batch_commit_tables", 1,
		{{"operations", RA_JSON, RD_NULL}},
	{"results"}, false, true},
	{"rest_describe_transaction", "lance_describe_transaction", 1,
		{{"id", RA_ID_STRING, RD_NULL}},
	{"status", "properties"}, false, false},
	{"rest_alter_transaction", "lance_alter_transaction", 2,
		{{"id", RA_ID_STRING, RD_NULL}, {"actions", RA_JSON, RD_NULL}},
	{NULL}, false, false, true},
};

#define NBINDINGS lengthof(bindings)

/* What a session has looked up for one binding */
typedef struct RestCache
{
	Oid			binding_oid;	/* the rest_* function, InvalidOid if unknown */
	FmgrInfo	call;			/* the lance_* function */
	bool		composite;		/* it returns a row (else a scalar or void) */
	int			attnums[REST_MAX_OUTPUTS];	/* of the outputs, in the row */
	Oid			types[REST_MAX_OUTPUTS];	/* of the outputs */
} RestCache;

static RestCache cache[NBINDINGS];
static bool callback_registered = false;

/*
 * forget_functions
 *		Syscache callback: pg_proc changed (the extension may have been
 *		dropped and created again), so look everything up again.
 */
static void
forget_functions(Datum arg, int cacheid, uint32 hashvalue)
{
	for (int i = 0; i < NBINDINGS; i++)
		cache[i].binding_oid = InvalidOid;
}

/*
 * arg_type
 *		The SQL type of an argument kind.
 */
static Oid
arg_type(RestArgKind kind)
{
	switch (kind)
	{
		case RA_TEXT_ARRAY:
			return TEXTARRAYOID;
		case RA_TEXT:
		case RA_ID_STRING:
			return TEXTOID;
		case RA_JSON:
			return JSONBOID;
		case RA_BOOL:
			return BOOLOID;
		case RA_INT:
			return INT4OID;
		case RA_BIGINT:
			return INT8OID;
	}
	return InvalidOid;			/* not reached */
}

/*
 * look_up
 *		Fill c for binding b: the operation's function by its exact
 *		signature, and where each output sits in its result.
 */
static void
look_up(const RestBinding *b, RestCache *c, Oid binding_oid)
{
	Oid			argtypes[REST_MAX_ARGS];
	Oid			fn;
	Oid			rettype;
	TupleDesc	tupdesc;
	TypeFuncClass class;
	int			i;

	for (i = 0; i < b->nargs; i++)
		argtypes[i] = arg_type(b->args[i].kind);
	fn = LookupFuncName(list_make2(makeString("lance_namespace"),
								   makeString((char *) b->function)),
						b->nargs, argtypes, false);
	class = get_func_result_type(fn, &rettype, &tupdesc);
	c->composite = (class == TYPEFUNC_COMPOSITE);
	for (i = 0; b->outputs[i] != NULL; i++)
	{
		if (c->composite)
		{
			int			a;

			for (a = 0; a < tupdesc->natts; a++)
				if (strcmp(NameStr(TupleDescAttr(tupdesc, a)->attname), b->outputs[i]) == 0)
					break;
			if (a == tupdesc->natts)
				elog(ERROR, "%s has no result column \"%s\"", b->function, b->outputs[i]);
			c->attnums[i] = a + 1;
			c->types[i] = TupleDescAttr(tupdesc, a)->atttypid;
		}
		else
		{
			/* one OUT parameter: the result is that column */
			if (i > 0 || class != TYPEFUNC_SCALAR)
				elog(ERROR, "%s does not return \"%s\"", b->function, b->outputs[i]);
			c->attnums[i] = 0;
			c->types[i] = rettype;
		}
	}
	fmgr_info_cxt(fn, &c->call, TopMemoryContext);
	c->binding_oid = binding_oid;
}

/*
 * binding_for
 *		The binding of the calling rest_* function, looked up once.
 */
static int
binding_for(FunctionCallInfo fcinfo)
{
	Oid			oid = fcinfo->flinfo->fn_oid;
	char	   *name;
	int			i;

	for (i = 0; i < NBINDINGS; i++)
		if (cache[i].binding_oid == oid)
			return i;
	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, forget_functions, (Datum) 0);
		callback_registered = true;
	}
	name = get_func_namespace(oid) == get_namespace_oid("lance_namespace", false) ?
		get_func_name(oid) : NULL;
	for (i = 0; i < NBINDINGS; i++)
		if (name != NULL && strcmp(bindings[i].name, name) == 0)
		{
			look_up(&bindings[i], &cache[i], oid);
			return i;
		}
	elog(ERROR, "function %u is not a REST binding", oid);
	return -1;					/* not reached */
}

/*
 * request_arg_value
 *		Read request field a as its argument: *isnull when absent and
 *		without default.  Errors are those of the req_* helpers.
 */
static Datum
request_arg_value(Jsonb *request, const RestArg *a, bool *isnull)
{
	Datum		d = (Datum) 0;
	bool		present = false;

	switch (a->kind)
	{
		case RA_TEXT_ARRAY:
			{
				ArrayType  *arr = lance_request_text_array(request, a->field);

				if (arr == NULL && a->dflt == RD_EMPTY_ARRAY)
					arr = construct_empty_array(TEXTOID);
				present = (arr != NULL);
				d = PointerGetDatum(arr);
			}
			break;
		case RA_ID_STRING:
			{
				ArrayType  *arr = lance_request_text_array(request, a->field);

				present = (arr != NULL);
				if (present)
					d = CStringGetTextDatum(lance_id_to_cstring(arr, "$"));
			}
			break;
		case RA_TEXT:
			{
				char	   *s = lance_request_text(request, a->field);

				if (s == NULL && a->dflt == RD_DOLLAR)
					s = "$";
				present = (s != NULL);
				if (present)
					d = CStringGetTextDatum(s);
			}
			break;
		case RA_JSON:
			{
				Jsonb	   *jb = lance_request_json(request, a->field);

				present = (jb != NULL);
				d = JsonbPGetDatum(jb);
			}
			break;
		case RA_BOOL:
			{
				bool		b;

				present = lance_request_bool(request, a->field, &b);
				if (!present && (a->dflt == RD_TRUE || a->dflt == RD_FALSE))
				{
					b = (a->dflt == RD_TRUE);
					present = true;
				}
				d = BoolGetDatum(b);
			}
			break;
		case RA_INT:
			{
				int32		v = 0;

				present = lance_request_int32(request, a->field, &v);
				d = Int32GetDatum(v);
			}
			break;
		case RA_BIGINT:
			{
				int64		v = 0;

				present = lance_request_int64(request, a->field, &v);
				d = Int64GetDatum(v);
			}
			break;
	}
	*isnull = !present;
	return present ? d : (Datum) 0;
}

PG_FUNCTION_INFO_V1(lance_rest_binding);

/*
 * lance_rest_binding(request jsonb) returns jsonb
 *		The C function of every rest_* function listed in "bindings": read
 *		the request, call the operation, answer with its result columns
 *		(and transaction_id), or with its result itself for a "whole"
 *		binding.
 */
Datum
lance_rest_binding(PG_FUNCTION_ARGS)
{
	int			bi = binding_for(fcinfo);
	const RestBinding *b = &bindings[bi];
	RestCache  *c = &cache[bi];
	Jsonb	   *request = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	LOCAL_FCINFO(call, REST_MAX_ARGS);
	JsonbParseState *st = NULL;
	JsonbValue *res;
	Datum		result;
	Jsonb	   *out;
	HeapTupleHeader row = NULL;
	HeapTupleData tuple;
	TupleDesc	tupdesc = NULL;

	lance_check_execute(c->call.fn_oid);
	InitFunctionCallInfoData(*call, &c->call, b->nargs, InvalidOid, NULL, NULL);
	for (int i = 0; i < b->nargs; i++)
		call->args[i].value = request_arg_value(request, &b->args[i], &call->args[i].isnull);
	result = FunctionCallInvoke(call);
	if (b->whole)
	{
		if (call->isnull)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(result);
	}

	if (c->composite && !call->isnull)
	{
		row = DatumGetHeapTupleHeader(result);
		tupdesc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(row),
										 HeapTupleHeaderGetTypMod(row));
		tuple.t_len = HeapTupleHeaderGetDatumLength(row);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = row;
	}

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; b->outputs[i] != NULL; i++)
	{
		Datum		d = result;
		bool		isnull = call->isnull;

		if (row != NULL)
			d = heap_getattr(&tuple, c->attnums[i], tupdesc, &isnull);
		lance_push_string(&st, WJB_KEY, b->outputs[i]);
		lance_push_datum(&st, d, isnull, c->types[i]);
	}
	if (tupdesc != NULL)
		ReleaseTupleDesc(tupdesc);
	if (b->with_txid != TXID_NONE)
	{
		/* never null: jsonb_strip_nulls below leaves it alone */
		lance_push_string(&st, WJB_KEY, "transaction_id");
		if (b->with_txid == TXID_ARRAY)
		{
			pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
			lance_push_string(&st, WJB_ELEM, lance_transaction_id());
			pushJsonbValue(&st, WJB_END_ARRAY, NULL);
		}
		else
			lance_push_string(&st, WJB_VALUE, lance_transaction_id());
	}
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	out = JsonbValueToJsonb(res);
	if (b->strip_nulls)
		out = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls, JsonbPGetDatum(out)));
	PG_RETURN_JSONB_P(out);
}
