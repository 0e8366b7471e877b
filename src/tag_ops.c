/*-------------------------------------------------------------------------
 *
 * tag_ops.c
 *	  Tags: CreateTableTag, GetTableTagVersion, UpdateTableTag,
 *	  DeleteTableTag and ListTableTags.
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
#include "utils/jsonb.h"

#include "lance_namespace.h"

/*
 * tag_arg
 *		A tag name argument: non-empty, valid UTF-8, at most 255 bytes, no
 *		control characters.
 */
static char *
tag_arg(FunctionCallInfo fcinfo, int argno, const char *op)
{
	char	   *tag = lance_text_arg(fcinfo, argno);
	const unsigned char *p;

	if (tag == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: tag must not be NULL", op));
	if (tag[0] == '\0')
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: tag must not be empty", op));
	if (strlen(tag) > LANCE_MAX_NAME_BYTES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: tag is longer than %d bytes", op, LANCE_MAX_NAME_BYTES));
	for (p = (const unsigned char *) tag; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: tag contains a control character", op));
	return tag;
}

/*
 * tag_target
 *		Resolve the version a tag is to point to: version on branch (main by
 *		default), which must exist (TableVersionNotFound).  Returns the
 *		branch the version lives on.
 */
static const char *
tag_target(const char *op, ArrayType *id, int64 table_id, FunctionCallInfo fcinfo,
		   int version_arg, int branch_arg, int64 *version)
{
	LanceBranch branch;
	const char *found_branch;

	if (PG_ARGISNULL(version_arg))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be NULL", op));
	*version = PG_GETARG_INT64(version_arg);
	if (*version < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be negative", op));
	lance_resolve_branch(op, table_id, lance_text_arg(fcinfo, branch_arg),
						 LANCE_LOCK_KEY_SHARE, &branch);
	if (!lance_find_version(table_id, &branch, false, *version, &found_branch))
		lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
					errmsg("%s: version " INT64_FORMAT " of table \"%s\" not found",
						   op, *version, lance_id_to_cstring(id, "$")));
	return found_branch;
}

/*
 * raise_tag_not_found
 *		TableTagNotFound for tag of table id.
 */
static void
raise_tag_not_found(const char *op, ArrayType *id, const char *tag)
{
	lance_error(LANCE_TABLE_TAG_NOT_FOUND,
				errmsg("%s: tag \"%s\" of table \"%s\" not found", op, tag,
					   lance_id_to_cstring(id, "$")));
}

/*
 * record_tag
 *		A history row for a tag operation.
 */
static void
record_tag(const char *op, ArrayType *id, const char *tag, const char *branch, int64 version)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"tag\":");
	escape_json(&buf, tag);
	if (branch != NULL)
	{
		appendStringInfoString(&buf, ",\"branch\":");
		escape_json(&buf, branch);
		appendStringInfo(&buf, ",\"version\":" INT64_FORMAT, version);
	}
	appendStringInfoChar(&buf, '}');
	lance_record(op, id, buf.data);
}

PG_FUNCTION_INFO_V1(lance_create_table_tag);

/*
 * lance_create_table_tag(id, tag, version, branch) returns void
 */
Datum
lance_create_table_tag(PG_FUNCTION_ARGS)
{
	const char *op = "CreateTableTag";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *tag = tag_arg(fcinfo, 1, op);
	LanceEntry	table;
	const char *branch;
	int64		version;
	Datum		values[4];

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	branch = tag_target(op, id, table.id, fcinfo, 2, 3, &version);
	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(tag);
	values[2] = CStringGetTextDatum(branch);
	values[3] = Int64GetDatum(version);
	if (lance_exec(PLAN_INSERT_TAG, values, NULL, false, 1) == 0)
		lance_error(LANCE_TABLE_TAG_ALREADY_EXISTS,
					errmsg("%s: tag \"%s\" of table \"%s\" already exists", op, tag,
						   lance_id_to_cstring(id, "$")));
	record_tag(op, id, tag, branch, version);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(lance_get_table_tag_version);

/*
 * lance_get_table_tag_version(id, tag) returns (version, branch)
 *		branch is NULL when the tag points to the main branch.
 */
Datum
lance_get_table_tag_version(PG_FUNCTION_ARGS)
{
	const char *op = "GetTableTagVersion";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *tag = tag_arg(fcinfo, 1, op);
	TupleDesc	tupdesc;
	LanceEntry	table;
	Datum		args[2];
	Datum		values[2];
	bool		nulls[2] = {false, true};
	bool		isnull;
	char	   *branch;
	Datum		result;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_NONE, &table);
	args[0] = Int64GetDatum(table.id);
	args[1] = CStringGetTextDatum(tag);
	if (lance_exec(PLAN_GET_TAG, args, NULL, true, 1) == 0)
		raise_tag_not_found(op, id, tag);
	values[0] = lance_spi_value(0, 3, &isnull);
	branch = TextDatumGetCString(lance_spi_value(0, 2, &isnull));
	if (strcmp(branch, LANCE_MAIN_BRANCH) != 0)
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		values[1] = CStringGetTextDatum(branch);
		nulls[1] = false;
		MemoryContextSwitchTo(old);
	}
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_update_table_tag);

/*
 * lance_update_table_tag(id, tag, version, branch) returns void
 *		Point an existing tag to another version.
 */
Datum
lance_update_table_tag(PG_FUNCTION_ARGS)
{
	const char *op = "UpdateTableTag";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *tag = tag_arg(fcinfo, 1, op);
	LanceEntry	table;
	const char *branch;
	int64		version;
	Datum		values[4];

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(tag);
	if (lance_exec(PLAN_GET_TAG_FOR_UPDATE, values, NULL, false, 1) == 0)
		raise_tag_not_found(op, id, tag);
	branch = tag_target(op, id, table.id, fcinfo, 2, 3, &version);
	values[2] = CStringGetTextDatum(branch);
	values[3] = Int64GetDatum(version);
	lance_exec(PLAN_UPDATE_TAG, values, NULL, false, 0);
	record_tag(op, id, tag, branch, version);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(lance_delete_table_tag);

/*
 * lance_delete_table_tag(id, tag) returns void
 */
Datum
lance_delete_table_tag(PG_FUNCTION_ARGS)
{
	const char *op = "DeleteTableTag";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *tag = tag_arg(fcinfo, 1, op);
	LanceEntry	table;
	Datum		values[2];

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(tag);
	if (lance_exec(PLAN_DELETE_TAG, values, NULL, false, 0) == 0)
		raise_tag_not_found(op, id, tag);
	record_tag(op, id, tag, NULL, 0);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * tag_contents_json
 *		TagContents ({branch, version, manifestSize}; branch absent for main)
 *		of row `row` of the last SPI result (PLAN_LIST_TAGS), appended to buf.
 */
static void
tag_contents_json(StringInfo buf, int row)
{
	bool		isnull;
	char	   *branch;
	Datum		size;

	appendStringInfoChar(buf, '{');
	branch = TextDatumGetCString(lance_spi_value(row, 2, &isnull));
	if (strcmp(branch, LANCE_MAIN_BRANCH) != 0)
	{
		appendStringInfoString(buf, "\"branch\":");
		escape_json(buf, branch);
		appendStringInfoChar(buf, ',');
	}
	appendStringInfo(buf, "\"version\":" INT64_FORMAT,
					 DatumGetInt64(lance_spi_value(row, 3, &isnull)));
	size = lance_spi_value(row, 4, &isnull);
	appendStringInfo(buf, ",\"manifestSize\":" INT64_FORMAT "}",
					 isnull ? (int64) 0 : DatumGetInt64(size));
}

PG_FUNCTION_INFO_V1(lance_list_table_tags);

/*
 * lance_list_table_tags(id, page_token, limit) returns (tags jsonb, page_token)
 *		A page of the table's tags as a map of name to TagContents, sorted
 *		by name.
 */
Datum
lance_list_table_tags(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(lance_list_table_map(fcinfo, "ListTableTags", PLAN_LIST_TAGS,
										 'g', tag_contents_json));
}
