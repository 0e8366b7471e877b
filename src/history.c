/*-------------------------------------------------------------------------
 *
 * history.c
 *	  Commit history, transaction ids, and the change feed.
 *
 * Every mutating operation appends a row to lance_namespace.history, so
 * the history view answers who did what, when, and through which
 * interface.  The transaction_id of an operation is its PostgreSQL
 * top-level transaction id: stable across all operations of one
 * transaction, and resolvable to a status by DescribeTransaction.
 *
 * The history is also the change feed's outbox: lance_changes() (SQL)
 * returns the table versions whose transactions became visible between two
 * snapshots, and the gateway's GET /v1/events polls it.  Optionally
 * (lance_namespace.notify_commits), each committed table version is also
 * announced on the LISTEN/NOTIFY channel lance_namespace_commits; NOTIFY
 * serializes the commits of notifying transactions, so it is off by
 * default.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "commands/async.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/xid8.h"

#include "lance_namespace.h"

/*
 * lance_transaction_id
 *		The current top-level transaction id as a decimal string, assigning
 *		one if needed.
 */
char *
lance_transaction_id(void)
{
	FullTransactionId fxid = GetTopFullTransactionId();

	return psprintf(UINT64_FORMAT, U64FromFullTransactionId(fxid));
}

/*
 * lance_json_id
 *		A text[] identifier as a JSON array, appended to buf.
 */
void
lance_json_id(StringInfo buf, ArrayType *id)
{
	Datum	   *elems;
	int			n;
	int			i;

	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	appendStringInfoChar(buf, '[');
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoChar(buf, ',');
		escape_json(buf, TextDatumGetCString(elems[i]));
	}
	appendStringInfoChar(buf, ']');
}

/*
 * push_string_pair
 *		Add "key": "value" to the object being built in *st.
 */
static void
push_string_pair(JsonbParseState **st, const char *key, const char *value)
{
	lance_push_string(st, WJB_KEY, key);
	lance_push_string(st, WJB_VALUE, value);
}

/*
 * lance_version_history_detail
 *		The history detail of a CreateTableVersion,
 *		{"branch": ..., "version": ..., "manifest_path": ...}, built as jsonb
 *		directly (no JSON text to parse on the commit path).
 */
Jsonb *
lance_version_history_detail(const char *branch, int64 version, const char *manifest_path)
{
	JsonbParseState *st = NULL;
	JsonbValue	k;
	JsonbValue	v;
	JsonbValue *res;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_string_pair(&st, "branch", branch);
	k.type = jbvString;
	k.val.string.val = "version";
	k.val.string.len = strlen("version");
	pushJsonbValue(&st, WJB_KEY, &k);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(version);
	pushJsonbValue(&st, WJB_VALUE, &v);
	push_string_pair(&st, "manifest_path", manifest_path);
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * append_commit_payload
 *		The change feed's JSON for one table version, appended to buf: the
 *		payload of a NOTIFY and of lance_commit_payload().
 */
static void
append_commit_payload(StringInfo buf, ArrayType *id, const char *branch, int64 version,
					  const char *manifest_path, int64 timestamp_millis,
					  const char *transaction_id)
{
	appendStringInfoString(buf, "{\"id\":");
	lance_json_id(buf, id);
	appendStringInfoString(buf, ",\"table\":");
	escape_json(buf, lance_id_to_cstring(id, "$"));
	appendStringInfoString(buf, ",\"branch\":");
	escape_json(buf, branch);
	appendStringInfo(buf, ",\"version\":" INT64_FORMAT ",\"manifest_path\":", version);
	escape_json(buf, manifest_path);
	appendStringInfo(buf, ",\"timestamp_millis\":" INT64_FORMAT ",\"transaction_id\":\"%s\"}",
					 timestamp_millis, transaction_id);
}

/*
 * lance_version_committed
 *		With lance_namespace.notify_commits on, queue the NOTIFY of a new
 *		table version, part of the current transaction.  (Its history row,
 *		which lance_changes() reads, is written by the audit trigger on
 *		versions: audit.c.)
 */
void
lance_version_committed(ArrayType *id, const char *branch, int64 version,
						const char *manifest_path, int64 timestamp_millis)
{
	StringInfoData buf;

	if (!lance_notify_commits)
		return;

	initStringInfo(&buf);
	append_commit_payload(&buf, id, branch, version, manifest_path, timestamp_millis,
						  lance_transaction_id());
	/* NOTIFY payloads are limited; a table id near the limit is cut short */
	if (buf.len < 7900)
		Async_Notify(LANCE_NOTIFY_CHANNEL, buf.data);
}

PG_FUNCTION_INFO_V1(lance_commit_payload);

/*
 * lance_commit_payload(id text[], branch text, version bigint,
 *		manifest_path text, timestamp_millis bigint, transaction_id xid8)
 *		returns json
 *		The change feed's JSON for one table version, as NOTIFY sends it.
 *		id must have an identifier's shape; its names are printed as given
 *		(they come from the catalog's history).
 */
Datum
lance_commit_payload(PG_FUNCTION_ARGS)
{
	StringInfoData buf;
	FullTransactionId fxid = PG_GETARG_FULLTRANSACTIONID(5);
	char		xid[32];

	lance_check_id_shape("CommitPayload", "id", PG_GETARG_ARRAYTYPE_P(0));
	snprintf(xid, sizeof(xid), UINT64_FORMAT, U64FromFullTransactionId(fxid));
	initStringInfo(&buf);
	append_commit_payload(&buf, PG_GETARG_ARRAYTYPE_P(0), text_to_cstring(PG_GETARG_TEXT_PP(1)),
						  PG_GETARG_INT64(2), text_to_cstring(PG_GETARG_TEXT_PP(3)),
						  PG_GETARG_INT64(4), xid);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf.data, buf.len));
}

PG_FUNCTION_INFO_V1(lance_current_transaction_id);

/*
 * lance_current_transaction_id() returns text
 *		The transaction_id that mutating operations of the current
 *		transaction report.
 */
Datum
lance_current_transaction_id(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(lance_transaction_id()));
}
