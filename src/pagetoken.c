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
#include "fmgr.h"

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
	if (len < 2 || raw[0] != kind || raw[1] != ':' || memchr(raw, '\0', len) != NULL)
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
	int32		limit;

	if (PG_ARGISNULL(argno))
		return LANCE_DEFAULT_PAGE_SIZE;
	limit = PG_GETARG_INT32(argno);
	if (limit < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: limit must not be negative", op));
	return Min(limit, LANCE_MAX_PAGE_SIZE);
}
