/*-------------------------------------------------------------------------
 *
 * pagetoken.c
 *	  Opaque page tokens and page limits of the list operations.
 *
 * A token is base64 of "<kind>:<last key returned>", the keyset position
 * after which the next page starts.  Every list walks an index in key
 * order, so a walk never repeats or skips an item, however the catalog
 * changes between pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/base64.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "lance_namespace.h"

/*
 * lance_page_token_encode
 *		Make the token that resumes after value.
 */
char *
lance_page_token_encode(char kind, const char *value)
{
	StringInfoData raw;
	char	   *out;
	int			len;

	initStringInfo(&raw);
	appendStringInfo(&raw, "%c:%s", kind, value);
	out = palloc(pg_b64_enc_len(raw.len) + 1);
	len = pg_b64_encode(raw.data, raw.len, out, pg_b64_enc_len(raw.len));
	if (len < 0)
		elog(ERROR, "could not encode page token");
	out[len] = '\0';
	return out;
}

/*
 * lance_page_token_decode
 *		The key a token resumes after; InvalidInput for a token that this
 *		kind of list did not make.  NULL and "" mean the first page.
 */
char *
lance_page_token_decode(char kind, const char *token, const char *op)
{
	int			tlen;
	char	   *raw;
	int			len;

	if (token == NULL || token[0] == '\0')
		return NULL;
	tlen = strlen(token);
	if (tlen > 65536)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: page_token is too long", op));
	raw = palloc(pg_b64_dec_len(tlen) + 1);
	len = pg_b64_decode(token, tlen, raw, pg_b64_dec_len(tlen));
	/* the key is text the catalog returned: in the database's encoding */
	if (len < 2 || raw[0] != kind || raw[1] != ':' || memchr(raw, '\0', len) != NULL ||
		!pg_verifymbstr(raw + 2, len - 2, true))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: invalid page_token", op),
					errdetail("Pass the page_token returned by the previous call of the same list."));
	raw[len] = '\0';
	return raw + 2;
}

/*
 * lance_page_limit
 *		The page size from a "limit" argument: NULL gives the default page
 *		size, a negative limit is InvalidInput, and limits above the maximum
 *		page size are lowered to it (a page token then follows).
 */
int
lance_page_limit(FunctionCallInfo fcinfo, int argno, const char *op)
{
	return lance_check_page_limit(!PG_ARGISNULL(argno),
								  PG_ARGISNULL(argno) ? 0 : PG_GETARG_INT32(argno), op);
}

/*
 * lance_check_page_limit
 *		lance_page_limit for a limit that is given (has_limit) or not.
 */
int
lance_check_page_limit(bool has_limit, int32 limit, const char *op)
{
	if (!has_limit)
		return LANCE_DEFAULT_PAGE_SIZE;
	if (limit < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: limit must not be negative", op));
	return Min(limit, LANCE_MAX_PAGE_SIZE);
}

/*
 * lance_list_table_map
 *		One page of a table's named objects (branches, tags) as a JSON map
 *		of name to contents, sorted by name: the (map jsonb, page_token)
 *		result row.  fcinfo's arguments are (id, page_token, limit); plan
 *		takes (table_id, after, limit) and returns the name first; contents
 *		appends the JSON value of one result row.
 */
Datum
lance_list_table_map(FunctionCallInfo fcinfo, const char *op, LancePlanId plan,
					 char token_kind, void (*contents) (StringInfo buf, int row))
{
	MemoryContext outer = CurrentMemoryContext;
	ArrayType  *id = lance_id_arg(fcinfo, 0, op, "id", false);
	char	   *token = lance_text_arg(fcinfo, 1);
	int			limit = lance_page_limit(fcinfo, 2, op);
	const char *after = lance_page_token_decode(token_kind, token, op);
	TupleDesc	tupdesc;
	LanceEntry	table;
	Datum		args[3];
	Datum		values[2];
	bool		nulls[2] = {false, true};
	StringInfoData buf;
	int			n = 0;
	int			i;
	Datum		result;
	MemoryContext old;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	SPI_connect();
	lance_resolve_table(op, id, LANCE_LOCK_NONE, &table);
	if (limit > 0)
	{
		args[0] = Int64GetDatum(table.id);
		args[1] = CStringGetTextDatum(after ? after : "");
		args[2] = Int64GetDatum((int64) limit + 1);
		n = lance_exec(plan, args, NULL, true, 0);
	}
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (i = 0; i < n && i < limit; i++)
	{
		bool		isnull;

		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, TextDatumGetCString(lance_spi_value(i, 1, &isnull)));
		appendStringInfoChar(&buf, ':');
		contents(&buf, i);
	}
	appendStringInfoChar(&buf, '}');
	old = MemoryContextSwitchTo(outer);
	values[0] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
	MemoryContextSwitchTo(old);
	if (n > limit)
	{
		bool		isnull;
		char	   *last = TextDatumGetCString(lance_spi_value(limit - 1, 1, &isnull));

		old = MemoryContextSwitchTo(outer);
		values[1] = CStringGetTextDatum(lance_page_token_encode(token_kind, last));
		nulls[1] = false;
		MemoryContextSwitchTo(old);
	}
	result = lance_form_result(tupdesc, values, nulls, outer);
	SPI_finish();
	return result;
}
