/*-------------------------------------------------------------------------
 *
 * jsonutil.c
 *	  jsonb arguments: string maps, and typed reads of request fields.
 *
 * The lance_request_* functions read one field of a REST request object
 * and raise InvalidInput, naming the field, when the JSON type is wrong.
 * Numbers and booleans are also accepted as strings, because REST query
 * parameters arrive as strings.  The C bindings (rest_bindings.c) call them
 * directly; the req_* SQL functions expose them to the bindings in SQL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <limits.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "lance_namespace.h"

/*
 * lance_jsonb_is_null
 *		True when a jsonb value is the JSON null literal.
 */
bool
lance_jsonb_is_null(Jsonb *jb)
{
	JsonbValue	v;

	if (!JB_ROOT_IS_SCALAR(jb))
		return false;
	if (!JsonbExtractScalar(&jb->root, &v))
		return false;
	return v.type == jbvNull;
}

/*
 * lance_empty_object
 *		A new empty jsonb object.
 */
Jsonb *
lance_empty_object(void)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * lance_string_map_arg
 *		Fetch a jsonb argument that must be a flat object of strings (a
 *		string -> string map).  SQL NULL and JSON null give NULL, or an empty
 *		object when empty_if_null.
 */
Jsonb *
lance_string_map_arg(FunctionCallInfo fcinfo, int argno, const char *op,
					 const char *field, bool empty_if_null)
{
	Jsonb	   *jb;

	if (PG_ARGISNULL(argno))
		return empty_if_null ? lance_empty_object() : NULL;
	jb = PG_GETARG_JSONB_P(argno);
	if (lance_jsonb_is_null(jb))
		return empty_if_null ? lance_empty_object() : NULL;
	lance_check_string_map(op, field, jb);
	return jb;
}

/*
 * lance_check_string_map
 *		Raise InvalidInput unless jb is a flat JSON object of strings.
 */
void
lance_check_string_map(const char *op, const char *field, Jsonb *jb)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (!JB_ROOT_IS_OBJECT(jb))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must be a JSON object of strings", op, field));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_VALUE && v.type != jbvString)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s must be a JSON object of strings", op, field),
						errdetail("Every value must be a string."));
	}
}

/*
 * lance_request_field
 *		Look up field in a request object.  Returns false when the request
 *		is NULL or JSON null, or the field is absent or JSON null; a request
 *		that is not an object is InvalidInput.
 */
bool
lance_request_field(Jsonb *req, const char *field, JsonbValue *out)
{
	if (req == NULL || lance_jsonb_is_null(req))
		return false;
	if (!JB_ROOT_IS_OBJECT(req))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request body must be a JSON object"));
	if (!getKeyJsonValueFromContainer(&req->root, field, strlen(field), out))
		return false;
	return out->type != jbvNull;
}

/*
 * parse_int64
 *		Parse a whole decimal number; false unless all of str is consumed.
 */
static bool
parse_int64(const char *str, int64 *result)
{
	char	   *end;
	long long	val;

	while (*str == ' ')
		str++;
	if (*str == '\0')
		return false;
	errno = 0;
	val = strtoll(str, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*result = (int64) val;
	return true;
}

/*
 * lance_request_text
 *		A string field of a request, or NULL when absent.
 */
char *
lance_request_text(Jsonb *req, const char *field)
{
	JsonbValue	v;

	if (!lance_request_field(req, field, &v))
		return NULL;
	if (v.type != jbvString)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" must be a string", field));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * lance_jsonb_type_name
 *		The JSON type of a scalar or container value, for error details.
 */
const char *
lance_jsonb_type_name(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		case jbvArray:
			return "array";
		case jbvObject:
			return "object";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "array" : "object";
		default:
			return "value";
	}
}

/*
 * lance_request_int64
 *		An integer field of a request, which must be a JSON number (a string
 *		is InvalidInput, as every other JSON type: the gateway gives query
 *		parameters their JSON types before they get here); false when
 *		absent.
 */
bool
lance_request_int64(Jsonb *req, const char *field, int64 *result)
{
	JsonbValue	v;
	char	   *str;

	if (!lance_request_field(req, field, &v))
		return false;
	if (v.type != jbvNumeric)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" must be an integer", field),
					errdetail("Got a JSON %s.", lance_jsonb_type_name(&v)));
	str = DatumGetCString(DirectFunctionCall1(numeric_out,
											  NumericGetDatum(v.val.numeric)));
	if (!parse_int64(str, result))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" must be a whole number in the 64-bit integer range", field),
					errdetail("Got \"%s\".", str));
	return true;
}

/*
 * lance_request_int32
 *		lance_request_int64 within the 32-bit range.
 */
bool
lance_request_int32(Jsonb *req, const char *field, int32 *result)
{
	int64		val;

	if (!lance_request_int64(req, field, &val))
		return false;
	if (val < INT_MIN || val > INT_MAX)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" is out of the 32-bit integer range", field));
	*result = (int32) val;
	return true;
}

/*
 * lance_request_bool
 *		A boolean field of a request, which must be JSON true or false;
 *		false when absent.
 */
bool
lance_request_bool(Jsonb *req, const char *field, bool *result)
{
	JsonbValue	v;

	if (!lance_request_field(req, field, &v))
		return false;
	if (v.type != jbvBool)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" must be a boolean", field),
					errdetail("Got a JSON %s.", lance_jsonb_type_name(&v)));
	*result = v.val.boolean;
	return true;
}

/*
 * lance_request_json
 *		Any field of a request as jsonb, or NULL when absent or JSON null.
 */
Jsonb *
lance_request_json(Jsonb *req, const char *field)
{
	JsonbValue	v;

	if (!lance_request_field(req, field, &v))
		return NULL;
	return JsonbValueToJsonb(&v);
}

/*
 * json_text_array
 *		Convert a JSON array of strings (field's value v) to text[].
 */
static ArrayType *
json_text_array(JsonbValue *vp, const char *field)
{
	JsonbValue	v = *vp;
	JsonbValue	elem;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	Datum	   *elems;
	int			n = 0;
	int			cap;

	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" must be an array of strings", field));
	cap = JsonContainerSize(v.val.binary.data);
	if (cap > LANCE_MAX_ID_DEPTH)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("request field \"%s\" has more than %d elements", field,
						   LANCE_MAX_ID_DEPTH));
	elems = palloc(sizeof(Datum) * (cap + 1));
	it = JsonbIteratorInit(v.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (elem.type != jbvString)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("request field \"%s\" must be an array of strings", field));
		elems[n++] = PointerGetDatum(cstring_to_text_with_len(elem.val.string.val,
															  elem.val.string.len));
	}
	return construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * lance_request_text_array
 *		An array-of-strings field of a request as text[], or NULL when
 *		absent.
 */
ArrayType *
lance_request_text_array(Jsonb *req, const char *field)
{
	JsonbValue	v;

	if (!lance_request_field(req, field, &v))
		return NULL;
	return json_text_array(&v, field);
}

/*
 * lance_request_id
 *		The "id" field of a request object as text[]; NULL when absent.
 */
ArrayType *
lance_request_id(Jsonb *req)
{
	return lance_request_text_array(req, "id");
}

/*
 * sql_request
 *		The (request jsonb, field text) arguments of a req_* function; a
 *		NULL field name is InvalidInput.
 */
static Jsonb *
sql_request(FunctionCallInfo fcinfo, char **field)
{
	if (PG_ARGISNULL(1))
		lance_error(LANCE_INVALID_INPUT, errmsg("request field name must not be NULL"));
	*field = text_to_cstring(PG_GETARG_TEXT_PP(1));
	return PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
}

PG_FUNCTION_INFO_V1(lance_req_text);

/*
 * req_text(request jsonb, field text) returns text
 */
Datum
lance_req_text(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	char	   *val = lance_request_text(req, field);

	if (val == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(val));
}

PG_FUNCTION_INFO_V1(lance_req_bigint);

/*
 * req_bigint(request jsonb, field text) returns bigint
 */
Datum
lance_req_bigint(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	int64		val;

	if (!lance_request_int64(req, field, &val))
		PG_RETURN_NULL();
	PG_RETURN_INT64(val);
}

PG_FUNCTION_INFO_V1(lance_req_int);

/*
 * req_int(request jsonb, field text) returns integer
 */
Datum
lance_req_int(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	int32		val;

	if (!lance_request_int32(req, field, &val))
		PG_RETURN_NULL();
	PG_RETURN_INT32(val);
}

PG_FUNCTION_INFO_V1(lance_req_bool);

/*
 * req_bool(request jsonb, field text) returns boolean
 */
Datum
lance_req_bool(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	bool		val;

	if (!lance_request_bool(req, field, &val))
		PG_RETURN_NULL();
	PG_RETURN_BOOL(val);
}

PG_FUNCTION_INFO_V1(lance_req_text_array);

/*
 * req_text_array(request jsonb, field text) returns text[]
 *		A JSON array of strings; NULL when absent.
 */
Datum
lance_req_text_array(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	ArrayType  *val = lance_request_text_array(req, field);

	if (val == NULL)
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(val);
}

PG_FUNCTION_INFO_V1(lance_req_json);

/*
 * req_json(request jsonb, field text) returns jsonb
 *		The field's value as jsonb; NULL when absent or JSON null.
 */
Datum
lance_req_json(PG_FUNCTION_ARGS)
{
	char	   *field;
	Jsonb	   *req = sql_request(fcinfo, &field);
	Jsonb	   *val = lance_request_json(req, field);

	if (val == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(val);
}

/*
 * lance_json_field
 *		Look up key in a JSON object; false when absent or JSON null.  It
 *		reads obj as lance_request_field reads a request: a SQL NULL or
 *		JSON null obj has no fields, and any other non-object is
 *		InvalidInput, so a missing request body never reaches the jsonb
 *		lookup (which reads only objects).
 */
bool
lance_json_field(Jsonb *obj, const char *key, JsonbValue *out)
{
	return lance_request_field(obj, key, out);
}

/*
 * lance_json_text
 *		A string field of a JSON object, or NULL when absent.
 */
char *
lance_json_text(Jsonb *obj, const char *key, const char *op)
{
	JsonbValue	v;

	if (!lance_json_field(obj, key, &v))
		return NULL;
	if (v.type != jbvString)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: field \"%s\" must be a string", op, key));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * lance_json_int64
 *		An integer field of a JSON object; false when absent.
 */
bool
lance_json_int64(Jsonb *obj, const char *key, const char *op, int64 *result)
{
	JsonbValue	v;
	char	   *str;

	if (!lance_json_field(obj, key, &v))
		return false;
	if (v.type != jbvNumeric)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: field \"%s\" must be an integer", op, key));
	str = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	if (!parse_int64(str, result))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: field \"%s\" must be a whole number in the 64-bit integer range", op, key));
	return true;
}

/*
 * lance_json_text_array
 *		An array-of-strings field of a JSON object, or NULL when absent.
 */
ArrayType *
lance_json_text_array(Jsonb *obj, const char *key)
{
	JsonbValue	v;

	if (!lance_json_field(obj, key, &v))
		return NULL;
	return json_text_array(&v, key);
}

/*
 * lance_json_value
 *		Any field of a JSON object as jsonb, or NULL when absent.
 */
Jsonb *
lance_json_value(Jsonb *obj, const char *key)
{
	JsonbValue	v;

	if (!lance_json_field(obj, key, &v))
		return NULL;
	return JsonbValueToJsonb(&v);
}

/*
 * lance_push_string
 *		Push a string into the jsonb being built in *st as seq (WJB_KEY,
 *		WJB_VALUE or WJB_ELEM).
 */
void
lance_push_string(JsonbParseState **st, JsonbIteratorToken seq, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	pushJsonbValue(st, seq, &v);
}

/*
 * lance_push_datum
 *		Push a value of type typid as to_jsonb would turn it into
 *		JSON: text as a string, text[] as an array of strings (NULL
 *		elements as null), bigint as a number, boolean, and jsonb as it is.
 */
void
lance_push_datum(JsonbParseState **st, Datum d, bool isnull, Oid typid)
{
	JsonbValue	v;

	if (isnull)
	{
		v.type = jbvNull;
		pushJsonbValue(st, WJB_VALUE, &v);
		return;
	}
	switch (typid)
	{
		case TEXTOID:
			lance_push_string(st, WJB_VALUE, TextDatumGetCString(d));
			return;
		case TEXTARRAYOID:
			{
				Datum	   *elems;
				bool	   *nulls;
				int			n;

				deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false,
								  TYPALIGN_INT, &elems, &nulls, &n);
				pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
				for (int i = 0; i < n; i++)
				{
					if (nulls[i])
					{
						v.type = jbvNull;
						pushJsonbValue(st, WJB_ELEM, &v);
					}
					else
						lance_push_string(st, WJB_ELEM, TextDatumGetCString(elems[i]));
				}
				pushJsonbValue(st, WJB_END_ARRAY, NULL);
				return;
			}
		case INT8OID:
			v.type = jbvNumeric;
			v.val.numeric = int64_to_numeric(DatumGetInt64(d));
			break;
		case BOOLOID:
			v.type = jbvBool;
			v.val.boolean = DatumGetBool(d);
			break;
		case JSONBOID:
			{
				Jsonb	   *jb = DatumGetJsonbP(d);

				if (JB_ROOT_IS_SCALAR(jb))
					JsonbExtractScalar(&jb->root, &v);
				else
				{
					v.type = jbvBinary;
					v.val.binary.data = &jb->root;
					v.val.binary.len = VARSIZE(jb) - VARHDRSZ;
				}
			}
			break;
		default:
			elog(ERROR, "unexpected type %u for a JSON value", typid);
	}
	pushJsonbValue(st, WJB_VALUE, &v);
}
