/*-------------------------------------------------------------------------
 *
 * txn_alter.c
 *	  AlterTransaction: set the status and properties of a transaction the
 *	  catalog keeps, all actions or none.
 *
 * A transaction of this catalog is a PostgreSQL transaction: its status
 * (Succeeded, Running, Failed) is a fact that no request can change, so a
 * setStatusAction is accepted only when it states the status the
 * transaction has (an idempotent confirmation) and refused otherwise.  Its
 * properties are the built-in ones that DescribeTransaction computes
 * (operation, time, role, interface, operation_count: reserved) and any
 * that setPropertyAction adds, kept in lance_namespace.transaction_properties
 * with the spec's modes (Overwrite, Fail, Skip; unset: Skip, Fail).
 *
 * Who may alter: the catalog's owner, or a role that is a member of every
 * role that made the transaction's recorded operations.  The properties
 * table is the owner's alone; it is written as the owner after that check,
 * the way history rows are (audit.c), and each alteration is itself
 * recorded in the history.  Every action is checked and applied within the
 * one statement, so an action that fails leaves no other applied.  The
 * modes Fail and Skip are checked by the write itself, with the property's
 * key as the guard: of two requests that race on one property, the second
 * waits for the first and is answered as if it came after it
 * (test/specs/alter_transaction_race.spec).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "lance_namespace.h"

/* One action of a request, checked. */
typedef enum TxnActionKind
{
	TXN_SET_STATUS,
	TXN_SET_PROPERTY,
	TXN_UNSET_PROPERTY
} TxnActionKind;

typedef enum TxnMode
{
	TXN_MODE_OVERWRITE,
	TXN_MODE_FAIL,
	TXN_MODE_SKIP
} TxnMode;

typedef struct TxnAction
{
	TxnActionKind kind;
	char	   *status;			/* SET_STATUS: PascalCase */
	char	   *key;			/* SET/UNSET_PROPERTY */
	char	   *value;			/* SET_PROPERTY */
	TxnMode		mode;
} TxnAction;

static const char *const txn_statuses[] = {"Queued", "Running", "Succeeded", "Failed", "Canceled", NULL};
static const char *const reserved_keys[] = {"operation", "time", "role", "interface",
"operation_count", NULL};

/*
 * action_text
 *		A string field of an action object, or NULL when absent or null;
 *		any other JSON type is InvalidInput.
 */
static char *
action_text(const char *op, Jsonb *obj, const char *action, const char *key)
{
	JsonbValue	v;

	if (!lance_json_field(obj, key, &v) || v.type == jbvNull)
		return NULL;
	if (v.type != jbvString)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s.%s must be a string", op, action, key));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * parse_mode
 *		A SetPropertyMode or UnsetPropertyMode (case-insensitive), or dflt
 *		when absent; a mode outside allowed is InvalidInput.
 */
static TxnMode
parse_mode(const char *op, const char *action, const char *mode, TxnMode dflt, bool allow_overwrite)
{
	if (mode == NULL)
		return dflt;
	if (allow_overwrite && pg_strcasecmp(mode, "overwrite") == 0)
		return TXN_MODE_OVERWRITE;
	if (pg_strcasecmp(mode, "fail") == 0)
		return TXN_MODE_FAIL;
	if (pg_strcasecmp(mode, "skip") == 0)
		return TXN_MODE_SKIP;
	lance_error(LANCE_INVALID_INPUT,
				errmsg("%s: %s.mode must be %s", op, action,
					   allow_overwrite ? "Overwrite, Fail or Skip" : "Skip or Fail"),
				errdetail("Got \"%s\".", mode));
	return dflt;				/* not reached */
}

/*
 * parse_action
 *		Check one element of actions: an object with exactly one of
 *		setStatusAction, setPropertyAction and unsetPropertyAction.
 */
static void
parse_action(const char *op, Jsonb *elem, int i, TxnAction *a)
{
	static const char *const kinds[] = {"setStatusAction", "setPropertyAction", "unsetPropertyAction"};
	Jsonb	   *body = NULL;
	int			found = 0;

	if (!JB_ROOT_IS_OBJECT(elem))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: actions[%d] must be an object", op, i));
	for (int k = 0; k < lengthof(kinds); k++)
	{
		JsonbValue	v;

		if (!lance_json_field(elem, kinds[k], &v) || v.type == jbvNull)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: actions[%d].%s must be an object", op, i, kinds[k]));
		found++;
		a->kind = (TxnActionKind) k;
		body = JsonbValueToJsonb(&v);
	}
	if (found != 1)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: actions[%d] must set exactly one of setStatusAction, "
						   "setPropertyAction and unsetPropertyAction", op, i));

	if (a->kind == TXN_SET_STATUS)
	{
		char	   *status = action_text(op, body, "setStatusAction", "status");

		a->status = NULL;
		for (int s = 0; status != NULL && txn_statuses[s]; s++)
			if (pg_strcasecmp(status, txn_statuses[s]) == 0)
				a->status = (char *) txn_statuses[s];
		if (a->status == NULL)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: setStatusAction.status must be one of Queued, Running, "
							   "Succeeded, Failed and Canceled", op));
		return;
	}

	a->key = action_text(op, body, kinds[a->kind], "key");
	if (a->key == NULL || a->key[0] == '\0')
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s.key must be a non-empty string", op, kinds[a->kind]));
	for (int r = 0; reserved_keys[r]; r++)
		if (strcmp(a->key, reserved_keys[r]) == 0)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: property \"%s\" is the catalog's own and cannot be set or unset",
							   op, a->key));
	if (a->kind == TXN_SET_PROPERTY)
	{
		a->value = action_text(op, body, "setPropertyAction", "value");
		if (a->value == NULL)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: setPropertyAction.value must be a string", op));
		a->mode = parse_mode(op, "setPropertyAction",
							 action_text(op, body, "setPropertyAction", "mode"),
							 TXN_MODE_OVERWRITE, true);
	}
	else
		a->mode = parse_mode(op, "unsetPropertyAction",
							 action_text(op, body, "unsetPropertyAction", "mode"),
							 TXN_MODE_SKIP, false);
}

/*
 * parse_actions
 *		The request's actions, all checked before any is applied.
 */
static TxnAction *
parse_actions(const char *op, Jsonb *actions, int *n)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	TxnAction  *list;
	int			i = 0;

	if (actions == NULL || !JB_ROOT_IS_ARRAY(actions) || JB_ROOT_IS_SCALAR(actions) ||
		JB_ROOT_COUNT(actions) == 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: actions must be a non-empty JSON array", op));
	*n = JB_ROOT_COUNT(actions);
	list = palloc0(sizeof(TxnAction) * *n);
	it = JsonbIteratorInit(&actions->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary)
			lance_error(LANCE_INVALID_INPUT, errmsg("%s: actions[%d] must be an object", op, i));
		parse_action(op, JsonbValueToJsonb(&v), i, &list[i]);
		i++;
	}
	return list;
}

/*
 * authorize
 *		Refuse (PermissionDenied) unless the current user is the catalog's
 *		owner or a member of every role in the transaction's n history rows
 *		(the last SPI result).  Returns the id of its first row, or the root.
 */
static ArrayType *
authorize(const char *op, const char *xid, int n, Oid owner)
{
	ArrayType  *first = construct_empty_array(TEXTOID);
	bool		allowed = has_privs_of_role(GetUserId(), owner);
	bool		isnull;

	if (n > 0)
		first = DatumGetArrayTypePCopy(lance_spi_value(0, 5, &isnull));
	if (!allowed && n > 0)
	{
		allowed = true;
		for (int i = 0; i < n && allowed; i++)
		{
			Oid			role = get_role_oid(TextDatumGetCString(lance_spi_value(i, 3, &isnull)), true);

			allowed = OidIsValid(role) && has_privs_of_role(GetUserId(), role);
		}
	}
	if (!allowed)
		lance_error(LANCE_PERMISSION_DENIED,
					errmsg("%s: permission denied to alter transaction \"%s\"", op, xid),
					errdetail("Only the catalog's owner and members of the role that made a "
							  "transaction may alter it."));
	return first;
}

PG_FUNCTION_INFO_V1(lance_alter_transaction);

/*
 * lance_alter_transaction(id, actions) returns jsonb
 *		Apply actions to transaction id, all or none, and answer its
 *		AlterTransactionResponse {"status", "properties"}.
 */
Datum
lance_alter_transaction(PG_FUNCTION_ARGS)
{
	const char *op = "AlterTransaction";
	MemoryContext outer = CurrentMemoryContext;
	uint64		xid64;
	char	   *xid = lance_transaction_arg(fcinfo, 0, op, &xid64);
	int			nactions;
	TxnAction  *actions = parse_actions(op, PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1), &nactions);
	Oid			owner;
	Datum		args[4];
	char	   *status;
	ArrayType  *first;
	bool		isnull;
	int			n;
	StringInfoData detail;
	StringInfoData response;
	Jsonb	   *result;

	SPI_connect();
	owner = lance_catalog_owner();
	args[0] = CStringGetTextDatum(xid);
	/* TransactionNotFound for an unknown id */
	lance_exec(PLAN_DESCRIBE_TRANSACTION, args, NULL, true, 1);
	status = TextDatumGetCString(lance_spi_value(0, 1, &isnull));
	n = lance_exec(PLAN_TRANSACTION_HISTORY, args, NULL, true, 0);
	first = authorize(op, xid, n, owner);

	for (int i = 0; i < nactions; i++)
	{
		TxnAction  *a = &actions[i];

		if (a->kind == TXN_SET_STATUS)
		{
			if (strcmp(a->status, status) != 0)
				lance_error(LANCE_INVALID_INPUT,
							errmsg("%s: transaction \"%s\" is %s and cannot become %s", op, xid,
								   status, a->status),
							errdetail("A transaction of this catalog is a PostgreSQL transaction; "
									  "its status is a fact, which setStatusAction can only confirm."));
			continue;
		}
		args[1] = CStringGetTextDatum(a->key);
		if (a->kind == TXN_SET_PROPERTY)
		{
			args[2] = CStringGetTextDatum(a->value);
			args[3] = DirectFunctionCall1(namein,
										  CStringGetDatum(GetUserNameFromId(GetOuterUserId(), false)));

			/*
			 * Fail and Skip write the property only where it is absent, in
			 * the one insert: a check before the write would miss a
			 * concurrent request's uncommitted property, and then
			 * overwrite it.  The key is the guard instead: this insert
			 * waits for that request, and then finds its property.
			 */
			if (a->mode == TXN_MODE_OVERWRITE)
				lance_exec_as(owner, PLAN_SET_TRANSACTION_PROPERTY, args, NULL, false, 0);
			else if (lance_exec_as(owner, PLAN_ADD_TRANSACTION_PROPERTY, args, NULL, false, 0) == 0 &&
					 a->mode == TXN_MODE_FAIL)
				lance_error(LANCE_INVALID_INPUT,
							errmsg("%s: property \"%s\" of transaction \"%s\" already exists",
								   op, a->key, xid));
		}
		else if (lance_exec_as(owner, PLAN_UNSET_TRANSACTION_PROPERTY, args, NULL, false, 0) == 0 &&
				 a->mode == TXN_MODE_FAIL)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: property \"%s\" of transaction \"%s\" does not exist",
							   op, a->key, xid));
	}

	initStringInfo(&detail);
	appendStringInfoString(&detail, "{\"transaction_id\":");
	escape_json(&detail, xid);
	appendStringInfo(&detail, ",\"actions\":%d}", nactions);
	lance_record(op, first, detail.data);

	/* the response: the status and every property, after the actions */
	lance_exec(PLAN_DESCRIBE_TRANSACTION, args, NULL, false, 1);
	initStringInfo(&response);
	appendStringInfoString(&response, "{\"status\":");
	escape_json(&response, TextDatumGetCString(lance_spi_value(0, 1, &isnull)));
	appendStringInfoString(&response, ",\"properties\":");
	appendStringInfoString(&response, JsonbToCString(NULL, &DatumGetJsonbP(lance_spi_value(0, 2, &isnull))->root, 0));
	appendStringInfoChar(&response, '}');
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		result = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(response.data)));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	PG_RETURN_JSONB_P(result);
}
