/*-------------------------------------------------------------------------
 *
 * rest_bindings.c
 *	  The REST bindings of the version routes in C:
 *	  rest_create_table_version, rest_describe_table_version,
 *	  rest_list_table_versions and rest_batch_create_table_versions; and
 *	  rest_client_paths, the form of their manifest paths on the wire.
 *
 * Each takes the request object the gateway (or PostgREST) passes and
 * returns the response body as jsonb, as the table-driven bindings of
 * rest_table.c do: the same request fields, read by the same
 * lance_request_* helpers, and the operation's result with JSON nulls left
 * out.  These call the operations' own C implementations (version_ops.c)
 * rather than their SQL functions: the version routes carry every LanceDB
 * commit and read, and a binding in PL/pgSQL cost as much CPU as the
 * catalog work (it went through the SQL function and five request helpers,
 * each of them a function call that sets and restores search_path).  As a
 * SQL call of the operation would, each needs EXECUTE on the operation's
 * SQL function (rest_acl.c).
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

/* The operations the bindings stand for: their callers need EXECUTE on them */
static LanceFunctionRef create_ref = {"lance_create_table_version", 8,
{TEXTARRAYOID, INT8OID, TEXTOID, INT8OID, TEXTOID, JSONBOID, TEXTOID, TEXTOID}};
static LanceFunctionRef describe_ref = {"lance_describe_table_version", 3,
{TEXTARRAYOID, INT8OID, TEXTOID}};
static LanceFunctionRef list_ref = {"lance_list_table_versions", 5,
{TEXTARRAYOID, TEXTOID, TEXTOID, INT4OID, BOOLOID}};
static LanceFunctionRef batch_ref = {"lance_batch_create_table_versions", 1,
{JSONBOID}};

/* The table_version columns, in the order of the SPI results' first six */
static const char *const version_keys[] = {
	"version", "manifest_path", "manifest_size", "e_tag", "timestamp_millis", "metadata"
};

/*
 * push_version
 *		Push row of the last SPI result as a table_version object, without
 *		its NULL fields (as jsonb_strip_nulls(to_jsonb(version)) would).
 *		Returns the object when it is the outermost value (else NULL).
 */
static JsonbValue *
push_version(JsonbParseState **st, int row)
{
	int			col;

	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	for (col = 0; col < lengthof(version_keys); col++)
	{
		bool		isnull;
		Datum		d = lance_spi_value(row, col + 1, &isnull);

		if (isnull)
			continue;
		lance_push_string(st, WJB_KEY, version_keys[col]);
		lance_push_datum(st, d, false, SPI_gettypeid(SPI_tuptable->tupdesc, col + 1));
	}
	return pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*
 * version_response
 *		Finish an operation that left one version as row 0 of the SPI
 *		result: {"version": {...}}, with "transaction_id" when with_txid,
 *		formed in outer; then disconnect from SPI.
 */
static Jsonb *
version_response(MemoryContext outer, bool with_txid)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;
	Jsonb	   *result;

	MemoryContextSwitchTo(outer);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	lance_push_string(&st, WJB_KEY, "version");
	push_version(&st, 0);
	if (with_txid)
	{
		lance_push_string(&st, WJB_KEY, "transaction_id");
		lance_push_string(&st, WJB_VALUE, lance_transaction_id());
	}
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	result = JsonbValueToJsonb(res);	/* before SPI's memory goes */
	SPI_finish();
	return result;
}

/*
 * request_arg
 *		The request argument; NULL when SQL NULL.
 */
static Jsonb *
request_arg(FunctionCallInfo fcinfo)
{
	return PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
}

PG_FUNCTION_INFO_V1(lance_rest_create_table_version);

/*
 * rest_create_table_version(request jsonb) returns jsonb
 *		{"version": {...}, "transaction_id": "..."}
 */
Datum
lance_rest_create_table_version(PG_FUNCTION_ARGS)
{
	const char *op = "CreateTableVersion";
	MemoryContext outer = CurrentMemoryContext;
	Jsonb	   *request = request_arg(fcinfo);
	LanceVersionRequest req;
	int64		held = 0;

	lance_check_execute(lance_function_oid(&create_ref));
	req.id = lance_request_text_array(request, "id");
	req.has_version = lance_request_int64(request, "version", &req.version);
	req.manifest_path = lance_request_text(request, "manifest_path");
	req.has_size = lance_request_int64(request, "manifest_size", &req.manifest_size);
	req.e_tag = lance_request_text(request, "e_tag");
	req.metadata = lance_request_json(request, "metadata");
	req.naming_scheme = lance_request_text(request, "naming_scheme");
	req.branch = lance_request_text(request, "branch");
	req.manifest = lance_json_manifest_bytes(request, op, &held);
	req.id = lance_require_id(op, "id", req.id, false);

	SPI_connect();
	lance_create_version_spi(op, &req);
	PG_RETURN_JSONB_P(version_response(outer, true));
}

PG_FUNCTION_INFO_V1(lance_rest_describe_table_version);

/*
 * rest_describe_table_version(request jsonb) returns jsonb
 *		{"version": {...}}
 */
Datum
lance_rest_describe_table_version(PG_FUNCTION_ARGS)
{
	const char *op = "DescribeTableVersion";
	MemoryContext outer = CurrentMemoryContext;
	Jsonb	   *request = request_arg(fcinfo);
	ArrayType  *id;
	int64		version = 0;
	bool		has_version;
	char	   *branch;

	lance_check_execute(lance_function_oid(&describe_ref));
	id = lance_request_text_array(request, "id");
	has_version = lance_request_int64(request, "version", &version);
	branch = lance_request_text(request, "branch");
	id = lance_require_id(op, "id", id, false);
	SPI_connect();
	lance_describe_version_spi(op, id, has_version, version, branch);
	PG_RETURN_JSONB_P(version_response(outer, false));
}

PG_FUNCTION_INFO_V1(lance_rest_list_table_versions);

/*
 * rest_list_table_versions(request jsonb) returns jsonb
 *		{"versions": [...], "page_token": "..."}, page_token only when
 *		another page follows.
 */
Datum
lance_rest_list_table_versions(PG_FUNCTION_ARGS)
{
	const char *op = "ListTableVersions";
	MemoryContext outer = CurrentMemoryContext;
	Jsonb	   *request = request_arg(fcinfo);
	ArrayType  *id;
	char	   *branch;
	char	   *token;
	int32		limit = 0;
	bool		has_limit;
	bool		descending = false;
	JsonbParseState *st = NULL;
	JsonbValue *res;
	Jsonb	   *result;
	char	   *next;
	int			n;
	int			i;

	lance_check_execute(lance_function_oid(&list_ref));
	id = lance_request_text_array(request, "id");
	branch = lance_request_text(request, "branch");
	token = lance_request_text(request, "page_token");
	has_limit = lance_request_int32(request, "limit", &limit);
	lance_request_bool(request, "descending", &descending);
	id = lance_require_id(op, "id", id, false);
	limit = lance_check_page_limit(has_limit, limit, op);

	SPI_connect();
	n = lance_list_versions_spi(op, id, branch, token, limit, descending, outer, &next);
	MemoryContextSwitchTo(outer);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	lance_push_string(&st, WJB_KEY, "versions");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		push_version(&st, i);
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (next != NULL)
	{
		lance_push_string(&st, WJB_KEY, "page_token");
		lance_push_string(&st, WJB_VALUE, next);
	}
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	result = JsonbValueToJsonb(res);	/* before SPI's memory goes */
	SPI_finish();
	PG_RETURN_JSONB_P(result);
}

/* What the batch binding's emit callback fills */
typedef struct BatchJson
{
	Jsonb	  **versions;		/* in request order */
	MemoryContext cxt;
} BatchJson;

/*
 * batch_version
 *		LanceBatchEmit of the batch binding: keep the version (row 0 of the
 *		SPI result) as a table_version object in the caller's context.
 */
static void
batch_version(int position, void *arg)
{
	BatchJson  *bj = arg;
	MemoryContext old = MemoryContextSwitchTo(bj->cxt);
	JsonbParseState *st = NULL;

	bj->versions[position] = JsonbValueToJsonb(push_version(&st, 0));
	MemoryContextSwitchTo(old);
}

PG_FUNCTION_INFO_V1(lance_rest_batch_create_table_versions);

/*
 * rest_batch_create_table_versions(request jsonb) returns jsonb
 *		{"versions": [...], "transaction_id": "..."}, the versions in the
 *		order of the request's entries.
 */
Datum
lance_rest_batch_create_table_versions(PG_FUNCTION_ARGS)
{
	const char *op = "BatchCreateTableVersions";
	Jsonb	   *request = request_arg(fcinfo);
	Jsonb	   *entries;
	JsonbParseState *st = NULL;
	JsonbValue *res;
	BatchJson	bj;
	int			n;

	lance_check_execute(lance_function_oid(&batch_ref));
	entries = lance_request_json(request, "entries");
	bj.cxt = CurrentMemoryContext;
	bj.versions = palloc0(sizeof(Jsonb *) * (lance_batch_count(op, entries) + 1));
	SPI_connect();
	n = lance_batch_create_spi(op, entries, batch_version, &bj);
	SPI_finish();

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	lance_push_string(&st, WJB_KEY, "versions");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		JsonbValue	v;

		v.type = jbvBinary;
		v.val.binary.data = &bj.versions[i]->root;
		v.val.binary.len = VARSIZE(bj.versions[i]) - VARHDRSZ;
		pushJsonbValue(&st, WJB_ELEM, &v);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	lance_push_string(&st, WJB_KEY, "transaction_id");
	lance_push_string(&st, WJB_VALUE, lance_transaction_id());
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(res));
}

/*
 * is_key
 *		Whether the string value v is the key name.
 */
static bool
is_key(const JsonbValue *v, const char *name)
{
	return v->val.string.len == (int) strlen(name) &&
		memcmp(v->val.string.val, name, v->val.string.len) == 0;
}

PG_FUNCTION_INFO_V1(lance_rest_client_paths);

/*
 * rest_client_paths(answer jsonb) returns jsonb
 *		answer with the manifest_path of its "version" object and of each
 *		object of its "versions" array in the form Lance clients use
 *		(lance_manifest_client_path).  Nothing else changes, a manifest_path
 *		nested in a version's metadata included.
 */
Datum
lance_rest_client_paths(PG_FUNCTION_ARGS)
{
	Jsonb	   *answer = PG_GETARG_JSONB_P(0);
	JsonbIterator *it;
	JsonbParseState *st = NULL;
	JsonbValue	v;
	JsonbValue *res = NULL;
	JsonbIteratorToken tok;
	int			depth = 0;
	int			version_depth = -1; /* the depth inside a version object */
	bool		path_next = false;

	if (!JB_ROOT_IS_OBJECT(answer))
		PG_RETURN_JSONB_P(answer);
	it = JsonbIteratorInit(&answer->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (tok == WJB_KEY && depth == 1)
			version_depth = is_key(&v, "version") ? 2 : is_key(&v, "versions") ? 3 : -1;
		if (tok == WJB_VALUE && path_next && v.type == jbvString)
		{
			const char *location = pnstrdup(v.val.string.val, v.val.string.len);
			const char *client = lance_manifest_client_path(location);

			v.val.string.len = strlen(client);
			v.val.string.val = (char *) client;
		}
		path_next = tok == WJB_KEY && depth == version_depth && is_key(&v, "manifest_path");
		if (tok == WJB_BEGIN_OBJECT || tok == WJB_BEGIN_ARRAY)
			depth++;
		else if (tok == WJB_END_OBJECT || tok == WJB_END_ARRAY)
			depth--;
		res = pushJsonbValue(&st, tok, tok < WJB_BEGIN_ARRAY ? &v : NULL);
	}
	PG_RETURN_JSONB_P(JsonbValueToJsonb(res));
}
