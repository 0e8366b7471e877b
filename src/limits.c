/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  lance_limits(): the built-in limits of lance_limits.h as rows, so
 *	  that the configuration view reports the values the code enforces
 *	  rather than a copy of them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "lance_namespace.h"

/* One built-in setting: its name, value and what it means. */
typedef struct LanceLimit
{
	const char *name;
	const char *value;
	const char *description;
} LanceLimit;

#define LIMIT_STR_(x) #x
#define LIMIT_STR(x) LIMIT_STR_(x)

static const LanceLimit lance_limits[] = {
	{"default_page_size", LIMIT_STR(LANCE_DEFAULT_PAGE_SIZE),
	"Page size of list operations called without a limit"},
	{"max_page_size", LIMIT_STR(LANCE_MAX_PAGE_SIZE),
	"Largest page a list operation returns"},
	{"max_batch_entries", LIMIT_STR(LANCE_MAX_BATCH_ENTRIES),
	"Most entries, ranges or operations in one batch"},
	{"max_name_bytes", LIMIT_STR(LANCE_MAX_NAME_BYTES),
	"Longest namespace, table, branch or tag name"},
	{"max_id_depth", LIMIT_STR(LANCE_MAX_ID_DEPTH),
	"Most levels in an identifier"},
	{"max_path_bytes", LIMIT_STR(LANCE_MAX_PATH_BYTES),
	"Longest location, root location or manifest path a caller gives"},
	{"max_e_tag_bytes", LIMIT_STR(LANCE_MAX_E_TAG_BYTES),
	"Longest e_tag of a table version"},
	{"max_held_manifest_bytes", LIMIT_STR(LANCE_MAX_HELD_MANIFEST_BYTES),
	"Most bytes of one manifest a create may send to be held (manifest_base64)"},
	{"max_held_request_bytes", LIMIT_STR(LANCE_MAX_HELD_REQUEST_BYTES),
	"Most manifest_base64 bytes of one request"},
	{"notify_channel", LANCE_NOTIFY_CHANNEL,
	"LISTEN/NOTIFY channel for committed versions (with notify_commits on)"},
};

PG_FUNCTION_INFO_V1(lance_limits_srf);

/*
 * lance_limits() returns table (name text, value text, description text)
 *		The catalog's built-in limits, from lance_limits.h.
 */
Datum
lance_limits_srf(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < lengthof(lance_limits); i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(lance_limits[i].name);
		values[1] = CStringGetTextDatum(lance_limits[i].value);
		values[2] = CStringGetTextDatum(lance_limits[i].description);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
