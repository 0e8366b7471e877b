/*-------------------------------------------------------------------------
 *
 * namespace_ops.c
 *	  CreateNamespace, ListNamespaces, DescribeNamespace, DropNamespace and
 *	  NamespaceExists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "lance_namespace.h"

typedef enum CreateMode
{
	CREATE_MODE_CREATE,
	CREATE_MODE_EXIST_OK,
	CREATE_MODE_OVERWRITE
} CreateMode;

/*
 * lance_mode_matches
 *		Case-insensitive match of a mode name that ignores underscores, so
 *		that both PascalCase and snake_case spellings are accepted.
 */
bool
lance_mode_matches(const char *given, const char *name)
{
	const char *g = given;
	const char *n = name;

	for (;;)
	{
		while (*g == '_')
			g++;
		while (*n == '_')
			n++;
		if (*g == '\0' || *n == '\0')
			return *g == *n;
		if (pg_tolower((unsigned char) *g) != pg_tolower((unsigned char) *n))
			return false;
		g++;
		n++;
	}
}

/*
 * create_mode_arg
 *		Parse CreateNamespace's mode: Create (default), ExistOk, Overwrite.
 */
static CreateMode
create_mode_arg(FunctionCallInfo fcinfo, int argno, const char *op)
{
	char	   *mode = lance_text_arg(fcinfo, argno);

	if (mode == NULL || lance_mode_matches(mode, "create"))
		return CREATE_MODE_CREATE;
	if (lance_mode_matches(mode, "exist_ok"))
		return CREATE_MODE_EXIST_OK;
	if (lance_mode_matches(mode, "overwrite"))
		return CREATE_MODE_OVERWRITE;
	lance_error(LANCE_INVALID_INPUT,
				errmsg("%s: invalid mode \"%s\"", op, mode),
				errhint("Valid modes are Create, ExistOk and Overwrite."));
	return CREATE_MODE_CREATE;	/* not reached */
}

/*
 * insert_entry
 *		Insert a namespace or table entry; returns false on a name conflict.
 */
bool
lance_insert_entry(int64 parent_id, char kind, ArrayType *path, Jsonb *properties,
				   const char *location, bool declared)
{
	Datum		values[7];
	char		nulls[7] = "       ";

	values[0] = Int64GetDatum(parent_id);
	values[1] = CharGetDatum(kind);
	values[2] = CStringGetTextDatum(lance_id_last(path));
	values[3] = PointerGetDatum(path);
	values[4] = JsonbPGetDatum(properties);
	if (location != NULL)
		values[5] = CStringGetTextDatum(location);
	else
		nulls[5] = 'n';
	values[6] = BoolGetDatum(declared);
	return lance_exec(PLAN_INSERT_ENTRY, values, nulls, false, 1) == 1;
}

/*
 * copy_jsonb_out
 *		Copy a jsonb into cxt.
 */
static Jsonb *
copy_jsonb_out(Jsonb *jb, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Jsonb	   *copy = palloc(VARSIZE(jb));

	memcpy(copy, jb, VARSIZE(jb));
	MemoryContextSwitchTo(old);
	return copy;
}

/*
 * lance_delete_entry
 *		Delete an entry; its subtree and versions go with it (ON DELETE
 *		CASCADE).  Returns false when it was already gone.
 */
bool
lance_delete_entry(int64 id)
{
	Datum		values[1];

	values[0] = Int64GetDatum(id);
	return lance_exec(PLAN_DELETE_ENTRY, values, NULL, false, 1) == 1;
}

PG_FUNCTION_INFO_V1(lance_create_namespace);

/*
 * lance_create_namespace(id, mode, properties) returns properties
 */
Datum
lance_create_namespace(PG_FUNCTION_ARGS)
{
	const char *op = "CreateNamespace";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", true);
	CreateMode	mode = create_mode_arg(fcinfo, 1, op);
	Jsonb	   *properties = lance_string_map_arg(fcinfo, 2, op, "properties", true);
	Jsonb	   *result = properties;
	int64		parent_id;
	LanceEntry	existing;

	if (lance_id_depth(id) == 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: the root namespace always exists and cannot be created", op));

	SPI_connect();
	parent_id = lance_resolve_namespace(op, lance_id_parent(id), LANCE_LOCK_KEY_SHARE, NULL);
	if (!lance_insert_entry(parent_id, 'n', id, properties, NULL, false))
	{
		if (!lance_lookup_entry(id, mode == CREATE_MODE_OVERWRITE ?
								LANCE_LOCK_FOR_UPDATE : LANCE_LOCK_NONE, &existing) ||
			existing.kind != 'n' || mode == CREATE_MODE_CREATE)
			lance_raise_name_taken(op, id, parent_id, lance_id_last(id), 'n');
		if (mode == CREATE_MODE_EXIST_OK)
			result = copy_jsonb_out(existing.properties, outer);
		else
		{
			/* Overwrite: drop the namespace and its subtree, then recreate */
			lance_delete_entry(existing.id);
			if (!lance_insert_entry(parent_id, 'n', id, properties, NULL, false))
				lance_raise_name_taken(op, id, parent_id, lance_id_last(id), 'n');
			lance_record(op, id, "{\"mode\":\"Overwrite\"}");
		}
	}
	else
		lance_record(op, id, NULL);
	SPI_finish();
	PG_RETURN_JSONB_P(result);
}

/*
 * lance_list_names
 *		One page of child names of parent_id, by a list plan whose
 *		parameters are (parent_id, after, limit).  Builds the (names,
 *		page_token) result row.
 */
Datum
lance_list_names(FunctionCallInfo fcinfo, const char *op, LancePlanId plan,
				 int64 parent_id, char token_kind, const char *token, int limit,
				 MemoryContext outer)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	Datum		result[2];
	bool		nulls[2] = {false, true};
	Datum	   *names;
	int			n = 0;
	int			i;
	const char *after = lance_page_token_decode(token_kind, token, op);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	names = palloc(sizeof(Datum) * (limit + 1));
	if (limit > 0)
	{
		values[0] = Int64GetDatum(parent_id);
		values[1] = CStringGetTextDatum(after ? after : "");
		values[2] = Int64GetDatum((int64) limit + 1);
		n = lance_exec(plan, values, NULL, true, 0);
	}
	for (i = 0; i < n && i < limit; i++)
	{
		bool		isnull;

		names[i] = lance_spi_copy_value(i, 1, &isnull, outer);
	}
	if (n > limit)
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		result[1] = CStringGetTextDatum(lance_page_token_encode(token_kind,
																TextDatumGetCString(names[limit - 1])));
		nulls[1] = false;
		MemoryContextSwitchTo(old);
	}
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		result[0] = PointerGetDatum(construct_array(names, Min(n, limit), TEXTOID, -1,
													false, TYPALIGN_INT));
		MemoryContextSwitchTo(old);
	}
	return lance_form_result(tupdesc, result, nulls, outer);
}

PG_FUNCTION_INFO_V1(lance_list_namespaces);

/*
 * lance_list_namespaces(id, page_token, limit) returns (namespaces, page_token)
 *		The child namespaces of id, sorted by name.
 */
Datum
lance_list_namespaces(PG_FUNCTION_ARGS)
{
	const char *op = "ListNamespaces";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", true);
	char	   *token = lance_text_arg(fcinfo, 1);
	int			limit = lance_page_limit(fcinfo, 2, op);
	int64		parent_id;
	Datum		result;

	SPI_connect();
	parent_id = lance_resolve_namespace(op, id, LANCE_LOCK_NONE, NULL);
	result = lance_list_names(fcinfo, op, PLAN_LIST_NAMESPACES, parent_id, 'n', token,
							  limit, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_describe_namespace);

/*
 * lance_describe_namespace(id) returns properties
 */
Datum
lance_describe_namespace(PG_FUNCTION_ARGS)
{
	const char *op = "DescribeNamespace";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", true);
	LanceEntry	entry;
	Jsonb	   *result;

	SPI_connect();
	lance_resolve_namespace(op, id, LANCE_LOCK_NONE, &entry);
	result = copy_jsonb_out(entry.properties, outer);
	SPI_finish();
	PG_RETURN_JSONB_P(result);
}

PG_FUNCTION_INFO_V1(lance_drop_namespace);

/*
 * lance_drop_namespace(id, mode, behavior) returns properties
 *		mode Fail (default) or Skip decides what a missing namespace gives;
 *		behavior Restrict (default) refuses a non-empty namespace, Cascade
 *		removes the subtree's catalog entries (table data are untouched).
 */
Datum
lance_drop_namespace(PG_FUNCTION_ARGS)
{
	const char *op = "DropNamespace";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", true);
	char	   *mode = lance_text_arg(fcinfo, 1);
	char	   *behavior = lance_text_arg(fcinfo, 2);
	bool		skip = false;
	bool		cascade = false;
	LanceEntry	entry = {0};
	Jsonb	   *result = NULL;
	Datum		values[1];

	if (mode != NULL && lance_mode_matches(mode, "skip"))
		skip = true;
	else if (mode != NULL && !lance_mode_matches(mode, "fail"))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: invalid mode \"%s\"", op, mode),
					errhint("Valid modes are Fail and Skip."));
	if (behavior != NULL && lance_mode_matches(behavior, "cascade"))
		cascade = true;
	else if (behavior != NULL && !lance_mode_matches(behavior, "restrict"))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: invalid behavior \"%s\"", op, behavior),
					errhint("Valid behaviors are Restrict and Cascade."));
	if (lance_id_depth(id) == 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: the root namespace cannot be dropped", op));

	SPI_connect();
	if (!lance_lookup_entry(id, LANCE_LOCK_FOR_UPDATE, &entry) || entry.kind != 'n')
	{
		if (entry.kind != 't')
			lance_check_lock_denied(op, id, LANCE_LOCK_FOR_UPDATE);
		if (!skip)
			lance_error(LANCE_NAMESPACE_NOT_FOUND,
						errmsg("%s: namespace \"%s\" not found", op,
							   lance_id_to_cstring(id, "$")));
	}
	else
	{
		values[0] = Int64GetDatum(entry.id);
		if (!cascade && lance_exec(PLAN_CHILD_EXISTS, values, NULL, false, 1) > 0)
			lance_error(LANCE_NAMESPACE_NOT_EMPTY,
						errmsg("%s: namespace \"%s\" is not empty", op,
							   lance_id_to_cstring(id, "$")),
						errhint("Drop its tables and namespaces first, or use behavior Cascade."));
		lance_delete_entry(entry.id);
		lance_record(op, id, cascade ? "{\"behavior\":\"Cascade\"}" : NULL);
		result = copy_jsonb_out(entry.properties, outer);
	}
	SPI_finish();
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(result);
}

/*
 * namespace_exists
 *		Whether id names a namespace (the root always exists).
 */
static bool
namespace_exists(ArrayType *id)
{
	LanceEntry	entry;
	bool		found;

	if (lance_id_depth(id) == 0)
		return true;
	SPI_connect();
	found = lance_lookup_entry(id, LANCE_LOCK_NONE, &entry) && entry.kind == 'n';
	SPI_finish();
	return found;
}

PG_FUNCTION_INFO_V1(lance_namespace_exists);

/*
 * lance_namespace_exists(id) returns boolean
 */
Datum
lance_namespace_exists(PG_FUNCTION_ARGS)
{
	ArrayType  *id = lance_id_arg(fcinfo, 0, "NamespaceExists", "id", true);

	PG_RETURN_BOOL(namespace_exists(id));
}

PG_FUNCTION_INFO_V1(lance_rest_namespace_exists);

/*
 * rest_namespace_exists(request jsonb) returns jsonb
 *		REST form of NamespaceExists: {} when the namespace exists,
 *		NamespaceNotFound otherwise.
 */
Datum
lance_rest_namespace_exists(PG_FUNCTION_ARGS)
{
	const char *op = "NamespaceExists";
	ArrayType  *id = lance_request_id(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0));

	if (id == NULL)
		id = construct_empty_array(TEXTOID);
	id = lance_validate_id(op, "id", id, true);
	if (!namespace_exists(id))
		lance_error(LANCE_NAMESPACE_NOT_FOUND,
					errmsg("%s: namespace \"%s\" not found", op,
						   lance_id_to_cstring(id, "$")));
	PG_RETURN_JSONB_P(lance_empty_object());
}
