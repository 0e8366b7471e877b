/*-------------------------------------------------------------------------
 *
 * table_ops.c
 *	  DeclareTable, RegisterTable, DescribeTable, TableExists, ListTables,
 *	  ListAllTables, DeregisterTable and RenameTable.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

#include "lance_namespace.h"

/*
 * location_arg
 *		A table location argument: NULL, or a non-empty string without
 *		control characters.
 */
static char *
location_arg(FunctionCallInfo fcinfo, int argno, const char *op)
{
	char	   *location = lance_text_arg(fcinfo, argno);

	if (location != NULL)
		lance_validate_path(op, "location", location);
	return location;
}

/*
 * text_result
 *		A text datum in cxt.
 */
static Datum
text_result(const char *s, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Datum		d = CStringGetTextDatum(s);

	MemoryContextSwitchTo(old);
	return d;
}

/*
 * jsonb_result
 *		A copy of a jsonb in cxt, as a datum.
 */
static Datum
jsonb_result(Jsonb *jb, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Jsonb	   *copy = palloc(VARSIZE(jb));

	memcpy(copy, jb, VARSIZE(jb));
	MemoryContextSwitchTo(old);
	return JsonbPGetDatum(copy);
}

/*
 * result_tupdesc
 *		The row type a function returns.
 */
static TupleDesc
result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return tupdesc;
}

/*
 * table_has_versions
 *		Whether the catalog holds any version of a table, on any branch.
 */
static bool
table_has_versions(int64 table_id)
{
	Datum		values[1];

	values[0] = Int64GetDatum(table_id);
	return lance_exec(PLAN_HAS_VERSIONS, values, NULL, true, 1) > 0;
}

/*
 * record_location
 *		A history row for a table operation, with its location and mode.
 */
static void
record_location(const char *op, ArrayType *id, const char *location, const char *mode)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"location\":");
	escape_json(&buf, location);
	if (mode != NULL)
	{
		appendStringInfoString(&buf, ",\"mode\":");
		escape_json(&buf, mode);
	}
	appendStringInfoChar(&buf, '}');
	lance_record(op, id, buf.data);
}

PG_FUNCTION_INFO_V1(lance_declare_table);

/*
 * lance_declare_table(id, location, properties, vend_credentials)
 *		returns (location, properties, managed_versioning, storage_options)
 *		Reserve a table name.  Without a location the catalog assigns
 *		<root location>/<ns>/.../<name>.lance.
 */
Datum
lance_declare_table(PG_FUNCTION_ARGS)
{
	const char *op = "DeclareTable";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *location = location_arg(fcinfo, 1, op);
	Jsonb	   *properties = lance_string_map_arg(fcinfo, 2, op, "properties", true);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	Datum		values[4];
	bool		nulls[4] = {false, false, false, true};
	int64		parent_id;
	Datum		result;

	SPI_connect();
	parent_id = lance_resolve_namespace(op, lance_id_parent(id), LANCE_LOCK_KEY_SHARE, NULL);
	if (location == NULL)
		location = lance_default_table_location(op, id);
	if (!lance_insert_entry(parent_id, 't', id, properties, location, true))
		lance_raise_name_taken(op, id, parent_id, lance_id_last(id), 't');
	record_location(op, id, location, NULL);
	values[0] = text_result(location, outer);
	values[1] = JsonbPGetDatum(properties);
	values[2] = BoolGetDatum(true);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_register_table);

/*
 * import_versions
 *		The versions a table had before it was registered: versions is a
 *		JSON array of objects {version, manifest_path, naming_scheme,
 *		manifest_size, e_tag} naming the canonical manifests found under
 *		<location>/_versions (the gateway lists them).  Each becomes a
 *		version of main, as CreateTableVersion would make it (its checks,
 *		its history record); manifest_path must be the canonical path of
 *		that version in that naming scheme.
 */
static void
import_versions(const char *op, ArrayType *id, const char *location, Jsonb *versions)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (versions == NULL || lance_jsonb_is_null(versions))
		return;
	if (!JB_ROOT_IS_ARRAY(versions) || JB_ROOT_IS_SCALAR(versions))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: versions must be a JSON array", op));
	it = JsonbIteratorInit(&versions->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		LanceVersionRequest req;
		Jsonb	   *obj;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: each of versions must be a JSON object", op));
		obj = JsonbValueToJsonb(&v);
		memset(&req, 0, sizeof(req));
		req.id = id;
		req.has_version = lance_json_int64(obj, "version", op, &req.version);
		req.manifest_path = lance_json_text(obj, "manifest_path", op);
		req.has_size = lance_json_int64(obj, "manifest_size", op, &req.manifest_size);
		req.e_tag = lance_json_text(obj, "e_tag", op);
		req.naming_scheme = lance_json_text(obj, "naming_scheme", op);
		lance_validate_version_request(op, &req);
		if (strcmp(req.manifest_path,
				   lance_canonical_manifest_path(location, req.naming_scheme, req.version)) != 0)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: manifest_path \"%s\" is not the %s manifest of version " INT64_FORMAT " under the table's location",
							   op, req.manifest_path, req.naming_scheme, req.version));
		lance_create_version_spi(op, &req);
	}
}

/*
 * lance_register_table(id, location, mode, properties, versions)
 *		returns (location, properties)
 *		Register an existing table at location.  Mode Create (default) fails
 *		when the name is taken; Overwrite replaces an existing table's
 *		registration, and its version history with it.  versions: the
 *		table's existing versions, imported in the same transaction (see
 *		import_versions).
 */
Datum
lance_register_table(PG_FUNCTION_ARGS)
{
	const char *op = "RegisterTable";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *location = location_arg(fcinfo, 1, op);
	char	   *mode = lance_text_arg(fcinfo, 2);
	Jsonb	   *properties = lance_string_map_arg(fcinfo, 3, op, "properties", true);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	bool		overwrite = false;
	Datum		values[3];
	bool		nulls[2] = {false, false};
	int64		parent_id;
	LanceEntry	existing;
	Datum		result;

	if (location == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: location must not be NULL", op));
	if (mode != NULL && lance_mode_matches(mode, "overwrite"))
		overwrite = true;
	else if (mode != NULL && !lance_mode_matches(mode, "create"))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: invalid mode \"%s\"", op, mode),
					errhint("Valid modes are Create and Overwrite."));

	SPI_connect();
	parent_id = lance_resolve_namespace(op, lance_id_parent(id), LANCE_LOCK_KEY_SHARE, NULL);
	if (!lance_insert_entry(parent_id, 't', id, properties, location, false))
	{
		if (!overwrite ||
			!lance_lookup_entry(id, LANCE_LOCK_FOR_UPDATE, &existing) ||
			existing.kind != 't')
			lance_raise_name_taken(op, id, parent_id, lance_id_last(id), 't');
		values[0] = Int64GetDatum(existing.id);
		lance_exec(PLAN_DELETE_ALL_VERSIONS, values, NULL, false, 0);
		values[1] = CStringGetTextDatum(location);
		values[2] = JsonbPGetDatum(properties);
		lance_exec(PLAN_REREGISTER_ENTRY, values, NULL, false, 0);
	}
	record_location(op, id, location, overwrite ? "Overwrite" : NULL);
	import_versions(op, id, location, PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4));
	values[0] = text_result(location, outer);
	values[1] = JsonbPGetDatum(properties);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/*
 * table_uri
 *		A complete URI for a location: itself when it has a scheme, a file
 *		URI for an absolute local path.
 */
static char *
table_uri(const char *location)
{
	if (strstr(location, "://") != NULL)
		return pstrdup(location);
	if (location[0] == '/')
		return psprintf("file://%s", location);
	return psprintf("file:///%s", location);
}

PG_FUNCTION_INFO_V1(lance_describe_table);

/*
 * lance_describe_table(id, version, branch, tag, with_table_uri,
 *						check_declared, load_detailed_metadata,
 *						vend_credentials)
 *		returns ("table", namespace, version, location, table_uri,
 *				 properties, managed_versioning, is_only_declared,
 *				 storage_options)
 *		version is the given version, the tag's version, or the branch's
 *		latest (NULL when it has none).  A given version or tag that does
 *		not exist is TableVersionNotFound or TableTagNotFound.
 *		load_detailed_metadata true is Unsupported (the catalog does not
 *		open datasets for their schema and stats); false or NULL is this.
 */
Datum
lance_describe_table(PG_FUNCTION_ARGS)
{
	const char *op = "DescribeTable";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	bool		has_version = !PG_ARGISNULL(1);
	int64		version = has_version ? PG_GETARG_INT64(1) : 0;
	char	   *branch_name = lance_text_arg(fcinfo, 2);
	char	   *tag = lance_text_arg(fcinfo, 3);
	bool		with_uri = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
	bool		check_declared = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	Datum		values[9];
	bool		nulls[9] = {false, false, true, false, true, false, false, true, true};
	LanceEntry	entry;
	LanceBranch branch;
	Datum		result;
	bool		isnull;

	if (has_version && version < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be negative", op));
	if (!PG_ARGISNULL(6) && PG_GETARG_BOOL(6))
		lance_error(LANCE_UNSUPPORTED,
					errmsg("%s: load_detailed_metadata is not supported", op),
					errdetail("The catalog does not open datasets, so it cannot return their schema "
							  "or stats; without load_detailed_metadata it returns the table's "
							  "name, namespace, latest version and location."));
	if (tag != NULL && (has_version || branch_name != NULL))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: tag cannot be combined with version or branch", op));

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_NONE, &entry);
	if (tag != NULL)
	{
		Datum		args[2];

		args[0] = Int64GetDatum(entry.id);
		args[1] = CStringGetTextDatum(tag);
		if (lance_exec(PLAN_GET_TAG, args, NULL, true, 1) == 0)
			lance_error(LANCE_TABLE_TAG_NOT_FOUND,
						errmsg("%s: tag \"%s\" of table \"%s\" not found", op, tag,
							   lance_id_to_cstring(id, "$")));
		branch_name = TextDatumGetCString(lance_spi_value(0, 2, &isnull));
		version = DatumGetInt64(lance_spi_value(0, 3, &isnull));
		has_version = true;
	}
	lance_resolve_branch(op, entry.id, branch_name, LANCE_LOCK_NONE, &branch);
	if (lance_find_version(entry.id, &branch, !has_version, version, NULL))
	{
		values[2] = lance_spi_value(0, 1, &isnull);
		nulls[2] = false;
	}
	else if (has_version)
		lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
					errmsg("%s: version " INT64_FORMAT " of table \"%s\" not found",
						   op, version, lance_id_to_cstring(id, "$")));
	if (check_declared)
	{
		values[7] = BoolGetDatum(entry.declared && !table_has_versions(entry.id));
		nulls[7] = false;
	}
	values[0] = text_result(lance_id_last(id), outer);
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		values[1] = PointerGetDatum(lance_id_parent(id));
		MemoryContextSwitchTo(old);
	}
	values[3] = text_result(entry.location, outer);
	if (with_uri)
	{
		values[4] = text_result(table_uri(entry.location), outer);
		nulls[4] = false;
	}
	values[5] = jsonb_result(entry.properties, outer);
	values[6] = BoolGetDatum(true);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/*
 * table_exists
 *		Whether id names a table and, when version is given, that version
 *		exists on the main branch.
 */
static bool
table_exists(ArrayType *id, bool has_version, int64 version)
{
	LanceEntry	entry;
	bool		found;

	SPI_connect();
	found = lance_lookup_entry(id, LANCE_LOCK_NONE, &entry) && entry.kind == 't';
	if (found && has_version)
	{
		Datum		args[3];

		args[0] = Int64GetDatum(entry.id);
		args[1] = CStringGetTextDatum(LANCE_MAIN_BRANCH);
		args[2] = Int64GetDatum(version);
		found = lance_exec(PLAN_GET_VERSION, args, NULL, true, 1) > 0;
	}
	SPI_finish();
	return found;
}

PG_FUNCTION_INFO_V1(lance_table_exists);

/*
 * lance_table_exists(id, version) returns boolean
 */
Datum
lance_table_exists(PG_FUNCTION_ARGS)
{
	const char *op = "TableExists";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);

	if (!PG_ARGISNULL(1) && PG_GETARG_INT64(1) < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be negative", op));
	PG_RETURN_BOOL(table_exists(id, !PG_ARGISNULL(1),
								PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1)));
}

PG_FUNCTION_INFO_V1(lance_rest_table_exists);

/*
 * rest_table_exists(request jsonb) returns jsonb
 *		REST form of TableExists: {} when the table exists (and, with
 *		"version", when that version of its main branch exists); otherwise
 *		NamespaceNotFound, TableNotFound or TableVersionNotFound.
 */
Datum
lance_rest_table_exists(PG_FUNCTION_ARGS)
{
	const char *op = "TableExists";
	Jsonb	   *request = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	ArrayType  *id = lance_request_id(request);
	int64		version = 0;
	bool		has_version = lance_request_int64(request, "version", &version);

	if (id == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: id must not be NULL", op));
	id = lance_validate_id(op, "id", id, false);
	if (has_version && version < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be negative", op));
	if (!table_exists(id, has_version, version))
	{
		if (has_version && table_exists(id, false, 0))
			lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
						errmsg("%s: version " INT64_FORMAT " of table \"%s\" not found",
							   op, version, lance_id_to_cstring(id, "$")));
		SPI_connect();
		lance_raise_missing_table(op, id);
		SPI_finish();
	}
	PG_RETURN_JSONB_P(lance_empty_object());
}

PG_FUNCTION_INFO_V1(lance_list_tables);

/*
 * lance_list_tables(id, page_token, limit, include_declared)
 *		returns (tables, page_token)
 *		The tables directly in namespace id, sorted by name.  With
 *		include_declared false, tables that are only declared (no version
 *		yet) are left out.
 */
Datum
lance_list_tables(PG_FUNCTION_ARGS)
{
	const char *op = "ListTables";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", true);
	char	   *token = lance_text_arg(fcinfo, 1);
	int			limit = lance_page_limit(fcinfo, 2, op);
	bool		include_declared = PG_ARGISNULL(3) || PG_GETARG_BOOL(3);
	int64		parent_id;
	Datum		result;

	SPI_connect();
	parent_id = lance_resolve_namespace(op, id, LANCE_LOCK_NONE, NULL);
	result = lance_list_names(fcinfo, op,
							  include_declared ? PLAN_LIST_TABLES : PLAN_LIST_TABLES_CREATED,
							  parent_id, 't', token, limit, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_list_all_tables);

/*
 * lance_list_all_tables(page_token, limit, delimiter, include_declared)
 *		returns (tables, page_token)
 *		Every table of the catalog, as string identifiers, sorted by id.
 *		With include_declared false, tables that are only declared (no
 *		version yet) are left out, as in ListTables.
 */
Datum
lance_list_all_tables(PG_FUNCTION_ARGS)
{
	const char *op = "ListAllTables";
	MemoryContext outer = CurrentMemoryContext;
	char	   *token = lance_text_arg(fcinfo, 0);
	int			limit = lance_page_limit(fcinfo, 1, op);
	char	   *delimiter = lance_text_arg(fcinfo, 2);
	bool		include_declared = PG_NARGS() < 4 || PG_ARGISNULL(3) || PG_GETARG_BOOL(3);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	const char *after;
	ArrayType  *after_path;
	Datum		args[2];
	Datum		values[2];
	bool		nulls[2] = {false, true};
	Datum	   *names;
	int			n = 0;
	int			i;
	ArrayType  *last = NULL;
	Datum		result;

	if (delimiter == NULL)
		delimiter = "$";
	lance_validate_delimiter(op, delimiter);
	after = lance_page_token_decode('p', token, op);
	if (after == NULL)
		after_path = construct_empty_array(TEXTOID);
	else
		after_path = lance_cstring_to_id(after, "/", op);

	SPI_connect();
	names = palloc(sizeof(Datum) * (limit + 1));
	if (limit > 0)
	{
		args[0] = PointerGetDatum(after_path);
		args[1] = Int64GetDatum((int64) limit + 1);
		n = lance_exec(include_declared ? PLAN_LIST_ALL_TABLES : PLAN_LIST_ALL_TABLES_CREATED,
					   args, NULL, true, 0);
	}
	for (i = 0; i < n && i < limit; i++)
	{
		bool		isnull;

		last = DatumGetArrayTypeP(lance_spi_value(i, 1, &isnull));
		names[i] = text_result(lance_id_to_cstring(last, delimiter), outer);
	}
	if (n > limit)
	{
		/* names cannot contain "/", so it joins a path unambiguously */
		values[1] = text_result(lance_page_token_encode('p', lance_id_to_cstring(last, "/")),
								outer);
		nulls[1] = false;
	}
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		values[0] = PointerGetDatum(construct_array(names, Min(n, limit), TEXTOID, -1,
													false, TYPALIGN_INT));
		MemoryContextSwitchTo(old);
	}
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/*
 * remove_table
 *		DeregisterTable and DropTable in the catalog: remove a table's entry
 *		and its versions, record op with the location, and return (id,
 *		location, properties).  Neither touches files; the gateway deletes
 *		a dropped table's data once the transaction committed, so a drop
 *		(drop true) is refused while another table's location is, lies in
 *		or contains this one's.
 */
static Datum
remove_table(FunctionCallInfo fcinfo, const char *op, bool drop)
{
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	LanceEntry	entry;
	Datum		result;

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_FOR_UPDATE, &entry);
	/*
	 * deleting this location must not delete another table's data: asked
	 * as the catalog's owner, and answered without naming the other table,
	 * which the caller may not see (a catalog from before 0.6.0 can still
	 * hold such tables)
	 */
	if (drop && lance_location_taken_by_other(entry.id, entry.location))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: table \"%s\" shares its location %s with another table",
						   op, lance_id_to_cstring(id, "$"), entry.location),
					errdetail("One location lies in or is the other; deleting it would delete the other table's data."),
					errhint("DeregisterTable removes the table and keeps its files."));
	lance_delete_entry(entry.id);
	record_location(op, id, entry.location, NULL);
	values[0] = PointerGetDatum(id);	/* normalized: lower bound 1 */
	values[1] = text_result(entry.location, outer);
	values[2] = jsonb_result(entry.properties, outer);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_deregister_table);

/*
 * lance_deregister_table(id) returns (id, location, properties)
 *		Remove a table's catalog entry and its versions; its data stay.
 */
Datum
lance_deregister_table(PG_FUNCTION_ARGS)
{
	return remove_table(fcinfo, "DeregisterTable", false);
}

PG_FUNCTION_INFO_V1(lance_drop_table);

/*
 * lance_drop_table(id) returns (id, location, properties)
 *		Remove a table's catalog entry and its versions, recorded as
 *		DropTable: the caller deletes the data at location once this
 *		transaction committed (the gateway does; a leftover of a crash in
 *		between is found by --sweep through this history record).
 */
Datum
lance_drop_table(PG_FUNCTION_ARGS)
{
	return remove_table(fcinfo, "DropTable", true);
}

PG_FUNCTION_INFO_V1(lance_rename_table);

/*
 * lance_rename_table(id, new_table_name, new_namespace_id) returns id
 *		Rename a table, optionally moving it to another namespace.  Its
 *		location and versions stay as they are.  Returns the new id.
 */
Datum
lance_rename_table(PG_FUNCTION_ARGS)
{
	const char *op = "RenameTable";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *new_name = lance_text_arg(fcinfo, 1);
	ArrayType  *new_ns;
	ArrayType  *new_id;
	LanceEntry	entry;
	LanceEntry	taken;
	int64		new_parent;
	Datum		values[4];

	if (new_name == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: new_table_name must not be NULL", op));
	lance_validate_name(op, "new_table_name", new_name, strlen(new_name));
	new_ns = PG_ARGISNULL(2) ? lance_id_parent(id) :
		lance_validate_id(op, "new_namespace_id", PG_GETARG_ARRAYTYPE_P(2), true);

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_FOR_UPDATE, &entry);
	new_parent = lance_resolve_namespace(op, new_ns, LANCE_LOCK_KEY_SHARE, NULL);
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		new_id = lance_id_append(new_ns, new_name);
		MemoryContextSwitchTo(old);
	}
	if (lance_lookup_entry(new_id, LANCE_LOCK_NONE, &taken))
	{
		if (taken.id == entry.id)
		{
			SPI_finish();
			PG_RETURN_ARRAYTYPE_P(new_id);
		}
		lance_raise_name_taken(op, new_id, new_parent, new_name, 't');
	}
	values[0] = Int64GetDatum(entry.id);
	values[1] = Int64GetDatum(new_parent);
	values[2] = CStringGetTextDatum(new_name);
	values[3] = PointerGetDatum(new_id);
	lance_exec(PLAN_RENAME_ENTRY, values, NULL, false, 0);
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "{\"new_id\":");
		lance_json_id(&buf, new_id);
		appendStringInfoChar(&buf, '}');
		lance_record(op, id, buf.data);
	}
	SPI_finish();
	PG_RETURN_ARRAYTYPE_P(new_id);
}
