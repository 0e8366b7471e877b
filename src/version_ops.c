/*-------------------------------------------------------------------------
 *
 * version_ops.c
 *	  CreateTableVersion, DescribeTableVersion, ListTableVersions,
 *	  BatchDeleteTableVersions and BatchCreateTableVersions.
 *
 * CreateTableVersion is a put-if-not-exists of (table, branch, version):
 * one INSERT ... ON CONFLICT DO NOTHING RETURNING against the primary key.
 * A writer that meets an in-flight insert of the same key waits for it to
 * commit or abort and then gets the true answer; there is no
 * check-then-insert window and no subtransaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/json.h"
#include "utils/typcache.h"

#include "utils/timestamp.h"
#include "common/base64.h"

#include "lance_namespace.h"

/*
 * quote_json_cstring
 *		s as a JSON string literal.
 */
static char *
quote_json_cstring(const char *s)
{
	StringInfoData buf;

	initStringInfo(&buf);
	escape_json(&buf, s);
	return buf.data;
}

/*
 * lance_validate_version_request
 *		InvalidInput for a NULL or negative version, a NULL, empty or too
 *		long manifest_path or one with a control character, a negative
 *		manifest_size, a too long e_tag or one with a control character,
 *		metadata that is not a flat object of strings, or an unknown
 *		naming_scheme.  Normalizes
 *		naming_scheme to "V1" or "V2" (the default).
 */
void
lance_validate_version_request(const char *op, LanceVersionRequest *req)
{
	if (!req->has_version)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be NULL", op));
	if (req->version < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: version must not be negative", op));
	if (req->manifest_path == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: manifest_path must not be NULL", op));
	lance_validate_path(op, "manifest_path", req->manifest_path);
	if (req->has_size && req->manifest_size < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: manifest_size must not be negative", op));
	lance_validate_e_tag(op, req->e_tag);
	if (req->metadata != NULL && lance_jsonb_is_null(req->metadata))
		req->metadata = NULL;
	if (req->metadata != NULL)
		lance_check_string_map(op, "metadata", req->metadata);
	if (req->naming_scheme == NULL || pg_strcasecmp(req->naming_scheme, "V2") == 0)
		req->naming_scheme = "V2";
	else if (pg_strcasecmp(req->naming_scheme, "V1") == 0)
		req->naming_scheme = "V1";
	else
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: unknown naming_scheme \"%s\"", op, req->naming_scheme),
					errhint("Known naming schemes are V1 and V2."));
}

/*
 * lance_canonical_manifest_path
 *		<location>/_versions/<the version's name in scheme> (manifest_rules.c)
 */
char *
lance_canonical_manifest_path(const char *location, const char *scheme, int64 version)
{
	char		name[64];

	lance_manifest_name(name, sizeof(name),
						strcmp(scheme, "V1") == 0 ? LANCE_NAMING_V1 : LANCE_NAMING_V2, version);
	return lance_join_path(location, psprintf(LANCE_VERSIONS_DIR "/%s", name));
}

/*
 * version_tuple
 *		Form a table_version tuple in cxt from row of the last SPI result,
 *		whose first six columns are the table_version columns.
 */
static HeapTuple
version_tuple(int row, TupleDesc tupdesc, MemoryContext cxt)
{
	Datum		values[6];
	bool		nulls[6];
	int			i;
	MemoryContext old;
	HeapTuple	tuple;

	for (i = 0; i < 6; i++)
		values[i] = lance_spi_copy_value(row, i + 1, &nulls[i], cxt);
	old = MemoryContextSwitchTo(cxt);
	tuple = heap_form_tuple(tupdesc, values, nulls);
	MemoryContextSwitchTo(old);
	return tuple;
}

/*
 * same_manifest
 *		Whether the existing version (row 0 of the last SPI result, from
 *		PLAN_GET_VERSION) records the manifest the request names: the same
 *		staging or canonical path, and the same size when both are known.
 */
static bool
same_manifest(LanceVersionRequest *req)
{
	bool		isnull;
	Datum		d;
	char	   *canonical;
	char	   *staging;

	canonical = TextDatumGetCString(lance_spi_value(0, 2, &isnull));
	staging = TextDatumGetCString(lance_spi_value(0, 7, &isnull));
	if (strcmp(req->manifest_path, staging) != 0 &&
		strcmp(req->manifest_path, canonical) != 0)
		return false;
	d = lance_spi_value(0, 3, &isnull);
	if (req->has_size && !isnull && DatumGetInt64(d) != req->manifest_size)
		return false;
	return true;
}

/*
 * lance_json_manifest_bytes
 *		The "manifest_base64" field of a version request: the staged
 *		manifest's bytes, which a gateway sends so that the catalog keeps
 *		them until the canonical file is durable (publications); NULL when
 *		absent.  At most LANCE_MAX_HELD_MANIFEST_BYTES, and with *held (the
 *		bytes the request's earlier entries sent, updated) at most
 *		LANCE_MAX_HELD_REQUEST_BYTES: a larger manifest's file is to be
 *		flushed by its writer instead.
 */
bytea *
lance_json_manifest_bytes(Jsonb *obj, const char *op, int64 *held)
{
	char	   *text = lance_json_text(obj, "manifest_base64", op);
	int			len;
	int			maxlen;
	bytea	   *result;

	if (text == NULL)
		return NULL;
	len = strlen(text);
	maxlen = pg_b64_dec_len(len);
	result = palloc(VARHDRSZ + maxlen);
	len = pg_b64_decode(text, len, VARDATA(result), maxlen);
	if (len < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: manifest_base64 is not valid base64", op));
	if (len > LANCE_MAX_HELD_MANIFEST_BYTES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: manifest_base64 holds %d bytes, more than the %d the catalog keeps for one manifest",
						   op, len, LANCE_MAX_HELD_MANIFEST_BYTES),
					errhint("Flush the manifest file and send its path without manifest_base64."));
	*held += len;
	if (*held > LANCE_MAX_HELD_REQUEST_BYTES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: manifest_base64 of the request's manifests holds " INT64_FORMAT " bytes, more than the %d the catalog keeps for one request",
						   op, *held, LANCE_MAX_HELD_REQUEST_BYTES),
					errhint("Flush the other manifest files and send their paths without manifest_base64."));
	SET_VARSIZE(result, VARHDRSZ + len);
	return result;
}

/*
 * hold_manifest
 *		Keep the staged bytes of the version this call has just inserted
 *		(values are PLAN_INSERT_VERSION's) in publications, as the catalog's
 *		owner: the caller created the version, so the bytes are its
 *		manifest, and they must be the size the version records.
 */
static void
hold_manifest(const char *op, LanceVersionRequest *req, Datum *values)
{
	Datum		args[4];
	SPITupleTable *saved;
	uint64		nsaved;

	if (req->has_size && VARSIZE_ANY_EXHDR(req->manifest) != req->manifest_size)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: manifest_base64 holds %zu bytes but manifest_size is " INT64_FORMAT,
						   op, (size_t) VARSIZE_ANY_EXHDR(req->manifest), req->manifest_size));
	args[0] = values[0];
	args[1] = values[1];
	args[2] = values[2];
	args[3] = PointerGetDatum(req->manifest);
	/* the version stays row 0 of the last SPI result, for the caller */
	saved = SPI_tuptable;
	nsaved = SPI_processed;
	lance_exec_as(lance_catalog_owner(), PLAN_INSERT_PUBLICATION, args, NULL, false, 0);
	SPI_tuptable = saved;
	SPI_processed = nsaved;
}

/*
 * check_version_grows
 *		Raise ConcurrentModification unless the version just inserted
 *		(values as for PLAN_INSERT_VERSION) is its branch's latest: a
 *		version number is acknowledged once (version_check.c).  Read after
 *		the insert, with the latest snapshot, as the catalog's owner: a
 *		transaction that deleted this number before (which it may only do
 *		below a later version) committed before the insert got past the
 *		primary key, so that later version is seen here, under any
 *		isolation level.  Leaves the insert's row as row 0 of the SPI
 *		result.
 */
static void
check_version_grows(LanceVersionRequest *req, Datum *values)
{
	SPITupleTable *saved = SPI_tuptable;
	uint64		nsaved = SPI_processed;
	bool		isnull;
	int64		latest = 0;
	int			found = lance_probe_latest_version(DatumGetInt64(values[0]),
												   TextDatumGetCString(values[1]), &latest);

	/* the probe stands in for the statement; without the catalog's objects, the statement */
	if (found < 0 &&
		lance_exec_latest_as(lance_catalog_owner(), PLAN_LATEST_VERSION_NUMBER, values, NULL, 1) == 1)
	{
		latest = DatumGetInt64(lance_spi_value(0, 1, &isnull));
		found = 1;
	}
	if (found > 0 && latest > req->version)
		lance_error(LANCE_CONCURRENT_MODIFICATION,
					errmsg("version " INT64_FORMAT " of branch \"%s\" is below its latest version " INT64_FORMAT,
						   req->version, TextDatumGetCString(values[1]), latest),
					errdetail("A version number is acknowledged once: the number of a deleted or retired version is never used again."),
					errhint("Describe the table's latest version and retry at the next one."));
	SPI_tuptable = saved;
	SPI_processed = nsaved;
}

/*
 * lance_create_version_spi
 *		The one implementation of CreateTableVersion.  Must be called while
 *		connected to SPI.  Leaves as row 0 of the SPI result the new version,
 *		or the existing one when the same manifest is repeated (a retry after
 *		a lost reply); a different manifest for an existing version is
 *		ConcurrentModification.
 */
void
lance_create_version_spi(const char *op, LanceVersionRequest *req)
{
	LanceEntry	table;
	LanceBranch branch;
	char	   *canonical;
	Datum		values[10];
	char		nulls[10] = "          ";
	TimestampTz now;
	int			attempt;

	lance_validate_version_request(op, req);
	lance_resolve_table(op, req->id, lance_commit_lock(), &table);
	lance_resolve_branch(op, table.id, req->branch, LANCE_LOCK_KEY_SHARE, &branch);
	if (!branch.is_main && req->version <= branch.parent_version)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: version " INT64_FORMAT " of branch \"%s\" must be greater than its parent version " INT64_FORMAT,
						   op, req->version, branch.name, branch.parent_version));
	canonical = lance_canonical_manifest_path(lance_branch_dir(table.location, branch.name),
										req->naming_scheme, req->version);

	values[0] = Int64GetDatum(table.id);
	values[1] = CStringGetTextDatum(branch.name);
	values[2] = Int64GetDatum(req->version);
	values[3] = CStringGetTextDatum(canonical);
	values[4] = CStringGetTextDatum(req->manifest_path);
	values[5] = Int64GetDatum(req->manifest_size);
	if (!req->has_size)
		nulls[5] = 'n';
	if (req->e_tag != NULL)
		values[6] = CStringGetTextDatum(req->e_tag);
	else
		nulls[6] = 'n';
	if (req->metadata != NULL)
		values[7] = JsonbPGetDatum(req->metadata);
	else
		nulls[7] = 'n';
	values[8] = CStringGetTextDatum(req->naming_scheme);
	/* one instant for the version and its history row: lance_changes() */
	now = GetCurrentTimestamp();
	values[9] = TimestampTzGetDatum(now);
	lance_audit_version(table.id, req->id, now);

	/*
	 * A conflicting row that is deleted between our INSERT and our SELECT
	 * leaves nothing to compare with: insert again.
	 */
	for (attempt = 0; attempt < 3; attempt++)
	{
		if (lance_exec(PLAN_INSERT_VERSION, values, nulls, false, 1) == 1)
		{
			bool		isnull;
			int64		ts = DatumGetInt64(lance_spi_value(0, 5, &isnull));

			lance_audit_version(-1, NULL, 0);
			check_version_grows(req, values);
			if (req->manifest != NULL)
				hold_manifest(op, req, values);
			lance_record_version(req->id, now, branch.name, req->version, canonical);
			lance_version_committed(req->id, branch.name, req->version, canonical, ts);
			return;
		}
		if (lance_exec(PLAN_GET_VERSION, values, NULL, false, 1) == 1)
		{
			lance_audit_version(-1, NULL, 0);
			if (!same_manifest(req))
				lance_error(LANCE_CONCURRENT_MODIFICATION,
							errmsg("%s: version " INT64_FORMAT " of table \"%s\" already exists",
								   op, req->version, lance_id_to_cstring(req->id, "$")),
							errdetail("The catalog holds a different manifest for this version."),
							errhint("Describe the table's latest version and retry at the next one."));
			return;
		}
	}
	lance_error(LANCE_CONCURRENT_MODIFICATION,
				errmsg("%s: version " INT64_FORMAT " of table \"%s\" was changed concurrently",
					   op, req->version, lance_id_to_cstring(req->id, "$")));
}

/*
 * lance_create_version_core
 *		lance_create_version_spi, the version formed as a table_version
 *		tuple in outcxt.
 */
HeapTuple
lance_create_version_core(const char *op, LanceVersionRequest *req,
						  TupleDesc tupdesc, MemoryContext outcxt)
{
	lance_create_version_spi(op, req);
	return version_tuple(0, tupdesc, outcxt);
}

/*
 * result_tupdesc
 *		The composite type a function returns (table_version or a row).
 */
static TupleDesc
result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return BlessTupleDesc(tupdesc);
}

PG_FUNCTION_INFO_V1(lance_create_table_version);

/*
 * lance_create_table_version(id, version, manifest_path, manifest_size,
 *							  e_tag, metadata, naming_scheme, branch)
 *		returns table_version
 */
Datum
lance_create_table_version(PG_FUNCTION_ARGS)
{
	const char *op = "CreateTableVersion";
	MemoryContext outer = CurrentMemoryContext;
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	LanceVersionRequest req;
	HeapTuple	tuple;

	req.id = lance_id_arg(fcinfo, 0, op, "id", false);
	req.has_version = !PG_ARGISNULL(1);
	req.version = req.has_version ? PG_GETARG_INT64(1) : 0;
	req.manifest_path = lance_text_arg(fcinfo, 2);
	req.has_size = !PG_ARGISNULL(3);
	req.manifest_size = req.has_size ? PG_GETARG_INT64(3) : 0;
	req.e_tag = lance_text_arg(fcinfo, 4);
	req.metadata = PG_ARGISNULL(5) ? NULL : PG_GETARG_JSONB_P(5);
	req.naming_scheme = lance_text_arg(fcinfo, 6);
	req.branch = lance_text_arg(fcinfo, 7);
	req.manifest = NULL;

	SPI_connect();
	tuple = lance_create_version_core(op, &req, tupdesc, outer);
	SPI_finish();
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

/*
 * lance_describe_version_spi
 *		DescribeTableVersion while connected to SPI: leaves the version (the
 *		given one, or the latest when !has_version) as row 0 of the SPI
 *		result.  branch NULL is main.
 */
void
lance_describe_version_spi(const char *op, ArrayType *id, bool has_version,
						   int64 version, const char *branch_name)
{
	LanceEntry	table;
	LanceBranch branch;

	if (has_version && version < 0)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be negative", op));
	lance_resolve_table(op, id, LANCE_LOCK_NONE, &table);
	lance_resolve_branch(op, table.id, branch_name, LANCE_LOCK_NONE, &branch);
	if (lance_find_version(table.id, &branch, !has_version, version, NULL))
		return;
	if (!has_version)
		lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
					errmsg("%s: table \"%s\" has no versions", op,
						   lance_id_to_cstring(id, "$")));
	lance_error(LANCE_TABLE_VERSION_NOT_FOUND,
				errmsg("%s: version " INT64_FORMAT " of table \"%s\" not found",
					   op, version, lance_id_to_cstring(id, "$")));
}

PG_FUNCTION_INFO_V1(lance_describe_table_version);

/*
 * lance_describe_table_version(id, version, branch) returns table_version
 *		The given version, or the latest when version is NULL.
 */
Datum
lance_describe_table_version(PG_FUNCTION_ARGS)
{
	const char *op = "DescribeTableVersion";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	HeapTuple	tuple;

	SPI_connect();
	lance_describe_version_spi(op, id, !PG_ARGISNULL(1),
							   PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1),
							   lance_text_arg(fcinfo, 2));
	tuple = version_tuple(0, tupdesc, outer);
	SPI_finish();
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

/*
 * lance_list_versions_spi
 *		ListTableVersions while connected to SPI: the page is the first rows
 *		of the SPI result, and their number is returned.  *next_token is set,
 *		in cxt, to the page token of the next page, or NULL after the last.
 */
int
lance_list_versions_spi(const char *op, ArrayType *id, const char *branch_name,
						const char *token, int limit, bool descending,
						MemoryContext cxt, char **next_token)
{
	char		kind = descending ? 'd' : 'a';
	const char *after = lance_page_token_decode(kind, token, op);
	int64		bound = descending ? PG_INT64_MAX : -1;
	LanceEntry	table;
	LanceBranch branch;
	Datum		args[4];
	int			n = 0;

	if (after != NULL)
	{
		char	   *end;

		errno = 0;
		bound = strtoll(after, &end, 10);
		if (end == after || *end != '\0' || errno == ERANGE)
			lance_error(LANCE_INVALID_INPUT, errmsg("%s: invalid page_token", op));
	}
	lance_resolve_table(op, id, LANCE_LOCK_NONE, &table);
	lance_resolve_branch(op, table.id, branch_name, LANCE_LOCK_NONE, &branch);
	args[0] = Int64GetDatum(table.id);
	args[1] = CStringGetTextDatum(branch.name);
	args[2] = Int64GetDatum(bound);
	args[3] = Int64GetDatum((int64) limit + 1);
	if (limit > 0)
		n = lance_exec(descending ? PLAN_LIST_VERSIONS_DESC : PLAN_LIST_VERSIONS_ASC,
					   args, NULL, true, 0);
	*next_token = NULL;
	if (n > limit)
	{
		bool		isnull;
		int64		last = DatumGetInt64(lance_spi_value(limit - 1, 1, &isnull));
		MemoryContext old = MemoryContextSwitchTo(cxt);

		/* resume strictly after the last version returned */
		*next_token = lance_page_token_encode(kind, psprintf(INT64_FORMAT,
															 descending ? last - 1 : last));
		MemoryContextSwitchTo(old);
	}
	return Min(n, limit);
}

PG_FUNCTION_INFO_V1(lance_list_table_versions);

/*
 * lance_list_table_versions(id, branch, page_token, limit, descending)
 *		returns (versions table_version[], page_token)
 *		One page of a branch's versions, ascending unless descending.
 */
Datum
lance_list_table_versions(PG_FUNCTION_ARGS)
{
	const char *op = "ListTableVersions";
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *token = lance_text_arg(fcinfo, 2);
	int			limit = lance_page_limit(fcinfo, 3, op);
	bool		descending = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	Oid			elemtype = get_element_type(TupleDescAttr(tupdesc, 0)->atttypid);
	TupleDesc	vdesc = BlessTupleDesc(lookup_rowtype_tupdesc_copy(elemtype, -1));
	Datum		values[2];
	bool		nulls[2] = {false, true};
	Datum	   *items;
	char	   *next;
	int			n;
	int			i;
	Datum		result;
	MemoryContext old;

	SPI_connect();
	n = lance_list_versions_spi(op, id, lance_text_arg(fcinfo, 1), token, limit,
								descending, outer, &next);
	items = palloc(sizeof(Datum) * (n + 1));
	for (i = 0; i < n; i++)
		items[i] = HeapTupleGetDatum(version_tuple(i, vdesc, outer));
	old = MemoryContextSwitchTo(outer);
	values[0] = PointerGetDatum(construct_array(items, n, elemtype,
												-1, false, TYPALIGN_DOUBLE));
	if (next != NULL)
	{
		values[1] = CStringGetTextDatum(next);
		nulls[1] = false;
	}
	MemoryContextSwitchTo(old);
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(lance_batch_delete_table_versions);

/*
 * lance_batch_delete_table_versions(id, ranges, branch) returns deleted_count
 *		ranges is a JSON array of {"start_version", "end_version"} objects,
 *		each the range [start, end); end -1 means through the latest.
 */
Datum
lance_batch_delete_table_versions(PG_FUNCTION_ARGS)
{
	const char *op = "BatchDeleteTableVersions";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	Jsonb	   *ranges;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int64	   *starts;
	int64	   *ends;
	int			nranges = 0;
	int			i;
	int64		deleted = 0;
	LanceEntry	table;
	LanceBranch branch;
	Datum		args[4];

	if (PG_ARGISNULL(1))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: ranges must not be NULL", op));
	ranges = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_ARRAY(ranges) || JB_ROOT_IS_SCALAR(ranges))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: ranges must be a JSON array of version ranges", op));
	if (JB_ROOT_COUNT(ranges) > LANCE_MAX_BATCH_ENTRIES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: more than %d ranges", op, LANCE_MAX_BATCH_ENTRIES));
	starts = palloc(sizeof(int64) * (JB_ROOT_COUNT(ranges) + 1));
	ends = palloc(sizeof(int64) * (JB_ROOT_COUNT(ranges) + 1));
	it = JsonbIteratorInit(&ranges->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		Jsonb	   *range;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: each range must be an object with start_version and end_version", op));
		range = JsonbValueToJsonb(&v);
		if (!lance_json_int64(range, "start_version", op, &starts[nranges]) ||
			!lance_json_int64(range, "end_version", op, &ends[nranges]))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: each range needs start_version and end_version", op));
		if (starts[nranges] < 0)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: start_version must not be negative", op));
		if (ends[nranges] < -1)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: end_version must be -1 or a version", op));
		nranges++;
	}

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	lance_resolve_branch(op, table.id, lance_text_arg(fcinfo, 2), LANCE_LOCK_KEY_SHARE, &branch);
	args[0] = Int64GetDatum(table.id);
	args[1] = CStringGetTextDatum(branch.name);
	for (i = 0; i < nranges; i++)
	{
		/* [start, end) as start <= version <= end - 1; -1 is unbounded */
		if (ends[i] != -1 && ends[i] <= starts[i])
			continue;
		args[2] = Int64GetDatum(starts[i]);
		args[3] = Int64GetDatum(ends[i] == -1 ? PG_INT64_MAX : ends[i] - 1);
		deleted += lance_exec(PLAN_DELETE_VERSION_RANGE, args, NULL, false, 0);
	}
	lance_record(op, id, psprintf("{\"branch\":%s,\"ranges\":%s,\"deleted_count\":" INT64_FORMAT "}",
								  quote_json_cstring(branch.name),
								  JsonbToCString(NULL, &ranges->root, VARSIZE(ranges)),
								  deleted));
	SPI_finish();
	PG_RETURN_INT64(deleted);
}

PG_FUNCTION_INFO_V1(lance_retire_table_version);

/*
 * lance_retire_table_version(id, version, branch, manifest_path) returns retired
 *		Remove a version whose manifest is gone from storage (a client's
 *		cleanup of old versions deletes manifests without telling the
 *		catalog): the gateway found manifest_path missing.  Only the row
 *		that still names that manifest goes; the removal is recorded as
 *		RetireTableVersion.  False when there was no such row.
 */
Datum
lance_retire_table_version(PG_FUNCTION_ARGS)
{
	const char *op = "RetireTableVersion";
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *manifest_path = lance_text_arg(fcinfo, 3);
	int64		version;
	LanceEntry	table;
	LanceBranch branch;
	Datum		args[4];
	int64		n;

	if (PG_ARGISNULL(1))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: version must not be NULL", op));
	version = PG_GETARG_INT64(1);
	if (manifest_path == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: manifest_path must not be NULL", op));

	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_KEY_SHARE, &table);
	lance_resolve_branch(op, table.id, lance_text_arg(fcinfo, 2), LANCE_LOCK_KEY_SHARE, &branch);
	args[0] = Int64GetDatum(table.id);
	args[1] = CStringGetTextDatum(branch.name);
	args[2] = Int64GetDatum(version);
	args[3] = CStringGetTextDatum(manifest_path);
	n = lance_exec(PLAN_RETIRE_VERSION, args, NULL, false, 0);
	if (n > 0)
		lance_record(op, id, psprintf("{\"branch\":%s,\"version\":" INT64_FORMAT
									  ",\"manifest_path\":%s,\"reason\":\"manifest not found\"}",
									  quote_json_cstring(branch.name), version,
									  quote_json_cstring(manifest_path)));
	SPI_finish();
	PG_RETURN_BOOL(n > 0);
}

typedef struct BatchEntry
{
	int			position;		/* index in the request */
	char	   *key;			/* sort key: id, branch */
	LanceVersionRequest req;
} BatchEntry;

/*
 * batch_entry_cmp
 *		Order entries by table, branch and version, so that concurrent
 *		batches take their row locks in one order and cannot deadlock.
 */
static int
batch_entry_cmp(const void *a, const void *b)
{
	const BatchEntry *ea = (const BatchEntry *) a;
	const BatchEntry *eb = (const BatchEntry *) b;
	int			c = strcmp(ea->key, eb->key);

	if (c != 0)
		return c;
	if (ea->req.version != eb->req.version)
		return ea->req.version < eb->req.version ? -1 : 1;
	return ea->position - eb->position;
}

/*
 * parse_batch_entry
 *		A CreateTableVersionEntry object as a version request; *held counts
 *		the manifest bytes of the request's entries.
 */
static void
parse_batch_entry(const char *op, Jsonb *obj, BatchEntry *entry, int64 *held)
{
	LanceVersionRequest *req = &entry->req;
	ArrayType  *id = lance_json_text_array(obj, "id");

	if (id == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: every entry needs an id", op));
	req->id = lance_validate_id(op, "id", id, false);
	req->has_version = lance_json_int64(obj, "version", op, &req->version);
	req->manifest_path = lance_json_text(obj, "manifest_path", op);
	req->has_size = lance_json_int64(obj, "manifest_size", op, &req->manifest_size);
	req->e_tag = lance_json_text(obj, "e_tag", op);
	req->metadata = lance_json_value(obj, "metadata");
	req->naming_scheme = lance_json_text(obj, "naming_scheme", op);
	req->branch = lance_json_text(obj, "branch", op);
	req->manifest = lance_json_manifest_bytes(obj, op, held);
	lance_validate_version_request(op, req);
	entry->key = psprintf("%s%c%s", lance_id_to_cstring(req->id, "/"), '\0' + 1,
						  req->branch ? req->branch : LANCE_MAIN_BRANCH);
}

/*
 * lance_batch_count
 *		The number of entries of a BatchCreateTableVersions request, which
 *		must be a JSON array of at most LANCE_MAX_BATCH_ENTRIES values.
 */
int
lance_batch_count(const char *op, Jsonb *entries)
{
	if (entries == NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: entries must not be NULL", op));
	if (!JB_ROOT_IS_ARRAY(entries) || JB_ROOT_IS_SCALAR(entries))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: entries must be a JSON array", op));
	if (JB_ROOT_COUNT(entries) > LANCE_MAX_BATCH_ENTRIES)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: more than %d entries", op, LANCE_MAX_BATCH_ENTRIES));
	return JB_ROOT_COUNT(entries);
}

/*
 * lance_batch_create_spi
 *		BatchCreateTableVersions while connected to SPI: create the versions
 *		of entries (a JSON array of CreateTableVersionEntry objects), all or
 *		nothing, in the order of batch_entry_cmp.  After each one, emit is
 *		called with the entry's index in the request while the new version
 *		is row 0 of the SPI result.  Returns the number of entries.
 */
int
lance_batch_create_spi(const char *op, Jsonb *entries, LanceBatchEmit emit, void *arg)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	BatchEntry *batch;
	int			n = 0;
	int64		held = 0;

	batch = palloc0(sizeof(BatchEntry) * (lance_batch_count(op, entries) + 1));
	it = JsonbIteratorInit(&entries->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: each entry must be a JSON object", op));
		batch[n].position = n;
		parse_batch_entry(op, JsonbValueToJsonb(&v), &batch[n], &held);
		n++;
	}
	qsort(batch, n, sizeof(BatchEntry), batch_entry_cmp);
	for (int i = 0; i < n; i++)
	{
		lance_create_version_spi(op, &batch[i].req);
		emit(batch[i].position, arg);
	}
	return n;
}

/* What the SRF's emit callback fills: the results in request order */
typedef struct BatchTuples
{
	HeapTuple  *results;
	TupleDesc	tupdesc;
	MemoryContext cxt;
} BatchTuples;

/*
 * batch_tuple
 *		LanceBatchEmit of the SRF: keep the version as a tuple.
 */
static void
batch_tuple(int position, void *arg)
{
	BatchTuples *bt = arg;

	bt->results[position] = version_tuple(0, bt->tupdesc, bt->cxt);
}

PG_FUNCTION_INFO_V1(lance_batch_create_table_versions);

/*
 * lance_batch_create_table_versions(entries jsonb) returns setof table_version
 *		Create versions across tables, all or nothing: any failing entry
 *		raises an error, which rolls back every entry.  Results come back
 *		in request order.
 */
Datum
lance_batch_create_table_versions(PG_FUNCTION_ARGS)
{
	const char *op = "BatchCreateTableVersions";
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Jsonb	   *entries = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	BatchTuples bt;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	bt.tupdesc = rsinfo->setDesc;
	bt.cxt = CurrentMemoryContext;
	bt.results = palloc0(sizeof(HeapTuple) * (lance_batch_count(op, entries) + 1));
	SPI_connect();
	n = lance_batch_create_spi(op, entries, batch_tuple, &bt);
	SPI_finish();
	for (int i = 0; i < n; i++)
		tuplestore_puttuple(rsinfo->setResult, bt.results[i]);
	return (Datum) 0;
}
