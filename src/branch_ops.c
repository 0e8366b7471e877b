/*-------------------------------------------------------------------------
 *
 * branch_ops.c
 *	  Branches: resolution, version lookup along the parent chain, and
 *	  CreateTableBranch, ListTableBranches, DeleteTableBranch.
 *
 * The main branch is implicit (NULL or "main").  Any other branch starts at
 * parent_version of its parent branch; the versions it creates come after
 * that, and versions up to parent_version are its parent's.
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
 * validate_branch_name
 *		A branch name is one or more valid names joined by "/" (it becomes
 *		the directory tree/<branch> of the table).
 */
static void
validate_branch_name(const char *op, const char *name)
{
	const char *p = name;

	if (name == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: branch name must not be NULL", op));
	if (strlen(name) > LANCE_MAX_NAME_BYTES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: branch name is longer than %d bytes", op, LANCE_MAX_NAME_BYTES));
	for (;;)
	{
		const char *slash = strchr(p, '/');
		int			len = slash ? (int) (slash - p) : (int) strlen(p);

		lance_validate_name(op, "branch name", p, len);
		if (slash == NULL)
			break;
		p = slash + 1;
	}
}

/*
 * branch_from_spi
 *		Fill out from row 0 of the last SPI result (BRANCH_COLUMNS).
 */
static void
branch_from_spi(LanceBranch *out)
{
	bool		isnull;
	Datum		d;

	out->name = TextDatumGetCString(lance_spi_value(0, 1, &isnull));
	out->is_main = false;
	d = lance_spi_value(0, 2, &isnull);
	out->parent_branch = isnull ? NULL : TextDatumGetCString(d);
	out->parent_version = DatumGetInt64(lance_spi_value(0, 3, &isnull));
	out->manifest_size = DatumGetInt64(lance_spi_value(0, 5, &isnull));
}

/*
 * lance_resolve_branch
 *		Resolve a branch of a table: NULL or "main" is the main branch; any
 *		other name must exist (TableBranchNotFound).  Writers lock the branch
 *		row so that it cannot be deleted under them.
 */
void
lance_resolve_branch(const char *op, int64 table_id, const char *branch,
					 LanceLock lock, LanceBranch *out)
{
	Datum		values[2];
	LancePlanId plan;

	memset(out, 0, sizeof(*out));
	if (branch == NULL || strcmp(branch, LANCE_MAIN_BRANCH) == 0)
	{
		out->name = LANCE_MAIN_BRANCH;
		out->is_main = true;
		return;
	}
	plan = lock == LANCE_LOCK_KEY_SHARE ? PLAN_GET_BRANCH_KEY_SHARE :
		lock == LANCE_LOCK_FOR_UPDATE ? PLAN_GET_BRANCH_FOR_UPDATE : PLAN_GET_BRANCH;
	values[0] = Int64GetDatum(table_id);
	values[1] = CStringGetTextDatum(branch);
	if (lance_exec(plan, values, NULL, lock == LANCE_LOCK_NONE, 1) == 0)
		lance_error(LANCE_TABLE_BRANCH_NOT_FOUND,
					errmsg("%s: branch \"%s\" not found", op, branch));
	branch_from_spi(out);
}

/*
 * lance_find_version
 *		Find a version (or the latest, when latest) as seen from a branch,
 *		following the parent chain for versions at or below the branch's
 *		starting point.  On success row 0 of the last SPI result holds the
 *		version's columns and *found_branch (if given) the branch it lives on.
 */
bool
lance_find_version(int64 table_id, const LanceBranch *branch, bool latest,
				   int64 version, const char **found_branch)
{
	LanceBranch cur = *branch;
	Datum		values[3];
	int			depth;

	for (depth = 0; depth < 1000; depth++)
	{
		values[0] = Int64GetDatum(table_id);
		values[1] = CStringGetTextDatum(cur.name);
		if (latest)
		{
			if (lance_exec(PLAN_LATEST_VERSION, values, NULL, true, 1) > 0)
				break;
			if (cur.is_main)
				return false;
			latest = false;
			version = cur.parent_version;
		}
		else if (cur.is_main || version > cur.parent_version)
		{
			values[2] = Int64GetDatum(version);
			if (lance_exec(PLAN_GET_VERSION, values, NULL, true, 1) == 0)
				return false;
			break;
		}
		/* step to the parent branch */
		lance_resolve_branch("FindVersion", table_id, cur.parent_branch, LANCE_LOCK_NONE, &cur);
	}
	if (depth == 1000)
		return false;
	if (found_branch != NULL)
		*found_branch = cur.name;
	return true;
}

/*
 * lance_branch_dir
 *		The directory of a branch's data: the table location for main,
 *		<location>/tree/<branch> otherwise.
 */
char *
lance_branch_dir(const char *location, const char *branch)
{
	if (branch == NULL || strcmp(branch, LANCE_MAIN_BRANCH) == 0)
		return pstrdup(location);
	return lance_join_path(location, psprintf(LANCE_BRANCH_DIR "/%s", branch));
}

/*
 * branch_contents_json
 *		BranchContents of row `row` of the last SPI result, appended to buf.
 */
static void
branch_contents_json(StringInfo buf, int row)
{
	bool		isnull;
	Datum		d;

	appendStringInfoChar(buf, '{');
	d = lance_spi_value(row, 2, &isnull);
	if (!isnull)
	{
		appendStringInfoString(buf, "\"parentBranch\":");
		escape_json(buf, TextDatumGetCString(d));
		appendStringInfoChar(buf, ',');
	}
	appendStringInfo(buf, "\"parentVersion\":" INT64_FORMAT,
					 DatumGetInt64(lance_spi_value(row, 3, &isnull)));
	appendStringInfo(buf, ",\"createAt\":" INT64_FORMAT,
					 DatumGetInt64(lance_spi_value(row, 4, &isnull)));
	appendStringInfo(buf, ",\"manifestSize\":" INT64_FORMAT,
					 DatumGetInt64(lance_spi_value(row, 5, &isnull)));
	d = lance_spi_value(row, 6, &isnull);
	if (!isnull)
	{
		appendStringInfoString(buf, ",\"metadata\":");
		appendStringInfoString(buf, JsonbToCString(NULL, &DatumGetJsonbP(d)->root, 0));
	}
	appendStringInfoChar(buf, '}');
}

/*
 * jsonb_datum_in
 *		Parse JSON text into a jsonb datum allocated in cxt.
 */
static Datum
jsonb_datum_in(const char *json, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Datum		d = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));

	MemoryContextSwitchTo(old);
	return d;
}

PG_FUNCTION_INFO_V1(lance_create_table_branch);

/*
 * lance_create_table_branch(id, name, from_branch, from_version, metadata)
 *		returns jsonb (BranchContents)
 *		Create a branch from a parent branch (main by default) at a version
 *		that defaults to the parent's latest.
 */
Datum
lance_create_table_branch(PG_FUNCTION_ARGS)
{
	const char *op = "CreateTableBranch";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *name = lance_text_arg(fcinfo, 1);
	char	   *from_branch = lance_text_arg(fcinfo, 2);
	bool		has_version = !PG_ARGISNULL(3);
	int64		from_version = has_version ? PG_GETARG_INT64(3) : 0;
	Jsonb	   *metadata = lance_string_map_arg(fcinfo, 4, op, "metadata", false);
	LanceEntry	table;
	LanceBranch parent;
	const char *found_branch;
	Datum		values[6];
	char		nulls[6] = "      ";
	bool		isnull;
	Datum		d;
	int64		parent_version;
	StringInfoData buf;
	Datum		result;

	validate_branch_name(op, name);
	if (has_version && from_version < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: from_version must not be negative", op));

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	if (strcmp(name, LANCE_MAIN_BRANCH) == 0)
		lance_error(LANCE_TABLE_BRANCH_ALREADY_EXISTS,
					errmsg("%s: branch \"main\" of table \"%s\" already exists", op,
						   lance_id_to_cstring(id, "$")));
	lance_resolve_branch(op, table.id, from_branch, LANCE_LOCK_KEY_SHARE, &parent);
	if (!lance_find_version(table.id, &parent, !has_version, from_version, &found_branch))
	{
		if (has_version)
			lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
						errmsg("%s: version " INT64_FORMAT " of branch \"%s\" of table \"%s\" not found",
							   op, from_version, parent.name, lance_id_to_cstring(id, "$")));
		lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
					errmsg("%s: branch \"%s\" of table \"%s\" has no versions to branch from",
						   op, parent.name, lance_id_to_cstring(id, "$")));
	}
	parent_version = DatumGetInt64(lance_spi_value(0, 1, &isnull));
	d = lance_spi_value(0, 3, &isnull);

	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(name);
	if (parent.is_main)
		nulls[2] = 'n';
	else
		values[2] = CStringGetTextDatum(parent.name);
	values[3] = Int64GetDatum(parent_version);
	values[4] = isnull ? Int64GetDatum(0) : d;
	if (metadata != NULL)
		values[5] = JsonbPGetDatum(metadata);
	else
		nulls[5] = 'n';
	if (lance_exec(PLAN_INSERT_BRANCH, values, nulls, false, 1) == 0)
		lance_error(LANCE_TABLE_BRANCH_ALREADY_EXISTS,
					errmsg("%s: branch \"%s\" of table \"%s\" already exists", op, name,
						   lance_id_to_cstring(id, "$")));
	initStringInfo(&buf);
	branch_contents_json(&buf, 0);
	result = jsonb_datum_in(buf.data, outer);
	resetStringInfo(&buf);
	appendStringInfoString(&buf, "{\"branch\":");
	escape_json(&buf, name);
	appendStringInfo(&buf, ",\"parent_version\":" INT64_FORMAT "}", parent_version);
	lance_record(op, id, buf.data);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_list_table_branches);

/*
 * lance_list_table_branches(id, page_token, limit) returns (branches jsonb, page_token)
 *		A page of the table's branches (main is implicit and not listed), as
 *		a map of name to BranchContents, sorted by name.
 */
Datum
lance_list_table_branches(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(lance_list_table_map(fcinfo, "ListTableBranches", PLAN_LIST_BRANCHES,
										 'b', branch_contents_json));
}

PG_FUNCTION_INFO_V1(lance_delete_table_branch);

/*
 * lance_delete_table_branch(id, name) returns void
 *		Delete a branch with its versions and tags.  A branch that other
 *		branches were created from cannot be deleted (InvalidTableState).
 */
Datum
lance_delete_table_branch(PG_FUNCTION_ARGS)
{
	const char *op = "DeleteTableBranch";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *name = lance_text_arg(fcinfo, 1);
	LanceEntry	table;
	LanceBranch branch;
	Datum		values[2];
	bool		isnull;
	StringInfoData buf;

	if (name == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: name must not be NULL", op));
	if (strcmp(name, LANCE_MAIN_BRANCH) == 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: the main branch cannot be deleted", op));

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	lance_resolve_branch(op, table.id, name, LANCE_LOCK_FOR_UPDATE, &branch);
	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(name);
	if (lance_exec(PLAN_BRANCH_HAS_CHILDREN, values, NULL, false, 1) > 0)
		lance_error(LANCE_INVALID_TABLE_STATE,
					errmsg("%s: branch \"%s\" of table \"%s\" has dependent branches", op,
						   name, lance_id_to_cstring(id, "$")),
					errdetail("Branch \"%s\" was created from it.",
							  TextDatumGetCString(lance_spi_value(0, 1, &isnull))),
					errhint("Delete the dependent branches first."));
	lance_exec(PLAN_DELETE_BRANCH_TAGS, values, NULL, false, 0);
	lance_exec(PLAN_DELETE_BRANCH_VERSIONS, values, NULL, false, 0);
	lance_exec(PLAN_DELETE_BRANCH, values, NULL, false, 0);
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"branch\":");
	escape_json(&buf, name);
	appendStringInfoChar(&buf, '}');
	lance_record(op, id, buf.data);
	SPI_finish();
	PG_RETURN_VOID();
}
