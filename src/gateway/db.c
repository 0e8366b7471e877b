/*-------------------------------------------------------------------------
 *
 * db.c
 *	  One request, one transaction: the call statement sets the request.*
 *	  settings the way PostgREST does and calls lance_namespace.rest_<op>,
 *	  prepared once per session and sent as a libpq pipeline, usually
 *	  alone in the implicit transaction its Sync commits (one round trip);
 *	  BEGIN and COMMIT only around manifest files or --db-auth's role.
 *	  Serialization failures and deadlocks are retried, a stale connection
 *	  is replaced, errors become Lance error codes (README, "Database
 *	  round trips").
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "metrics.h"
#include "pool.h"
#include "router.h"

typedef enum TxOutcome
{
	TX_OK,
	TX_FAILED,					/* err set, transaction rolled back */
	TX_RETRY,					/* serialization failure or deadlock */
	TX_STALE					/* connection broke before any work */
} TxOutcome;

/* statements prepared once per session, in the pipeline of their first use */
#define STMT_BEGIN "gw_begin"
#define STMT_COMMIT "gw_commit"
#define STMT_ROLE "gw_role"

/*
 * --db-auth: the role of a request's credentials ($1 x-api-key, $2 bearer
 * token), else the --anon-role ($3), else an error (current_setting() of
 * a parameter that does not exist, recognised by its name: 401).
 */
#define NO_ROLE_GUC "lance_gateway.no_credentials"
#define SQL_WHO \
	"COALESCE(lance_namespace.lance_authenticate($1, $2), $3," \
	" pg_catalog.current_setting('" NO_ROLE_GUC "'))"
#define SQL_ROLE "SELECT pg_catalog.set_config('role', " SQL_WHO ", true)"

/*
 * The call.  The request.* settings are the row of a subquery the planner
 * can neither flatten (OFFSET 0) nor drop (set_config is volatile), so
 * they are set before the function runs.  A NULL result raises an error
 * the same way as NO_ROLE_GUC, so that it rolls back although the end of
 * the transaction may be in the same pipeline.
 */
#define NO_RESULT_GUC "lance_gateway.no_result"
#define SQL_CALL \
	"SELECT COALESCE(lance_namespace.%s($1::jsonb)::text," \
	" pg_catalog.current_setting('" NO_RESULT_GUC "'))" \
	" FROM (SELECT pg_catalog.set_config('request.headers', $2, true)," \
	" pg_catalog.set_config('request.method', $3, true)," \
	" pg_catalog.set_config('request.path', $4, true)," \
	" pg_catalog.set_config('lance_namespace.interface', 'rest', true)" \
	" OFFSET 0) AS request_settings"

/*
 * call_error
 *		Fill err from a failed command's result (or the connection's state
 *		if there is none), copy its SQLSTATE ("" if none; "08006" for a
 *		lost connection) into sqlstate_out (6 bytes) and count it.  The
 *		errors the gateway's statements raise on purpose (NO_RESULT_GUC for
 *		the call of function; NO_ROLE_GUC) have no SQLSTATE.
 */
static void
call_error(PGconn *conn, PGresult *res, const char *function,
		   char *sqlstate_out, GwError *err)
{
	const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	bool		own = sqlstate && primary && strcmp(sqlstate, "42704") == 0;

	snprintf(sqlstate_out, 6, "%s", sqlstate ? sqlstate : "");

	/* no SQLSTATE: libpq's own error, a connection lost but not marked bad yet */
	if (PQstatus(conn) != CONNECTION_OK || sqlstate == NULL)
	{
		gw_error_set(err, GW_ERR_UNAVAILABLE, "the connection to the catalog database was lost");
		gw_error_detail(err, "%s", PQerrorMessage(conn));
		if (sqlstate == NULL)
			snprintf(sqlstate_out, 6, "08006");
	}
	else if (own && function && strstr(primary, NO_RESULT_GUC) != NULL)
		gw_error_set(err, GW_ERR_INTERNAL, "lance_namespace.%s returned no result", function);
	else if (own && strstr(primary, NO_ROLE_GUC) != NULL)
		gw_error_set(err, GW_ERR_UNAUTHENTICATED,
					 "credentials required: send x-api-key or Authorization: Bearer");
	else
	{
		gw_error_set(err, lance_code_for_sqlstate(sqlstate), "%s",
					 primary ? primary : "catalog database error");
		if (detail)
			gw_error_detail(err, "%s", detail);
		own = false;
	}
	if (own)
		sqlstate_out[0] = '\0';
	gw_metrics_db_error(sqlstate_out);
}

/*
 * gw_db_retryable
 *		Serialization failure or deadlock: run the transaction again.
 */
bool
gw_db_retryable(const char *sqlstate)
{
	return strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0;
}

/*
 * gw_db_exec
 *		Run a command: true with its result in *resp (if given), or false
 *		with err and sqlstate_out (if given) set.
 */
bool
gw_db_exec(PGconn *conn, const char *sql, int nparams, const char *const *params,
		   PGresult **resp, char *sqlstate_out, GwError *err)
{
	PGresult   *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	char		buf[6];
	char	   *sqlstate = sqlstate_out ? sqlstate_out : buf;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
	{
		if (resp)
			*resp = res;
		else
			PQclear(res);
		return true;
	}
	call_error(conn, res, NULL, sqlstate, err);
	PQclear(res);
	return false;
}

/*
 * pooled_query
 *		One statement on a pooled connection: its result, or NULL.
 */
static PGresult *
pooled_query(const char *sql, int nparams, const char *const *params, GwError *err)
{
	GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, err);
	PGresult   *res = NULL;

	if (c == NULL)
		return NULL;
	if (!gw_db_exec(c->conn, sql, nparams, params, &res, NULL, err))
		res = NULL;
	gw_pool_release(c);
	return res;
}

/*
 * pooled_value
 *		The first value of a pooled_query (malloc'd), or NULL.
 */
static char *
pooled_value(const char *sql, int nparams, const char *const *params, GwError *err)
{
	PGresult   *res = pooled_query(sql, nparams, params, err);
	char	   *value = res ? strdup(PQgetvalue(res, 0, 0)) : NULL;

	PQclear(res);
	return value;
}

/*
 * rollback
 *		End a failed transaction, if one is open; errors are ignored.
 */
static void
rollback(PGconn *conn)
{
	if (PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE)
		PQclear(PQexec(conn, "ROLLBACK"));
}

/*
 * gw_db_pipe
 *		Start a pipeline on conn (in pipeline mode), whose session has prep;
 *		its failure goes to err.
 */
void
gw_db_pipe(GwPipe *p, PGconn *conn, GwPrepared *prep, const char *function, GwError *err)
{
	memset(p, 0, sizeof(*p));
	p->conn = conn;
	p->prep = prep;
	p->function = function;
	p->call = -1;
	p->err = err;
}

/*
 * gw_db_queue
 *		Send one statement down the pipeline (call: the call, whose result
 *		is kept), by name (a string that lives as long as the program),
 *		prepared first if the session lacks it.  sql NULL: the call of
 *		binding name (SQL_CALL).  False once libpq refused a statement.
 */
bool
gw_db_queue(GwPipe *p, const char *name, const char *sql, int nparams,
			const char *const *params, bool call)
{
	GwPrepared *prep = p->prep;
	bool		known = false;
	char		text[1024];

	for (int i = 0; name != NULL && i < prep->n && !known; i++)
		known = prep->names[i] == name || strcmp(prep->names[i], name) == 0;
	if (sql == NULL && !known)
	{
		snprintf(text, sizeof(text), SQL_CALL, name);
		sql = text;
	}
	if (p->send_failed || p->n + 2 > GW_PIPE_MAX)
	{
		p->send_failed = true;
		return false;
	}
	if (name != NULL && !known && prep->n == GW_MAX_PREPARED)
		name = NULL;
	else if (name != NULL && !known)
	{
		if (PQsendPrepare(p->conn, name, sql, nparams, NULL) != 1)
		{
			p->send_failed = true;
			return false;
		}
		prep->names[prep->n++] = p->prepare[p->n++] = name;
	}
	if (call)
		p->call = p->n;
	p->n++;
	if (name != NULL)
		p->send_failed = PQsendQueryPrepared(p->conn, name, nparams, params, NULL, NULL, 0) != 1;
	else
		p->send_failed = PQsendQueryParams(p->conn, sql, nparams, NULL, params, NULL, NULL, 0) != 1;
	return !p->send_failed;
}

/*
 * gw_db_result
 *		Take one result of the pipeline (NULL: the end of one statement's
 *		results).  The call's value is kept, and the first failure.  libpq
 *		returns no NULL after a Sync.
 */
GwPipeStep
gw_db_result(GwPipe *p, PGresult *res)
{
	ExecStatusType st = PQresultStatus(res);

	if (res == NULL)
	{
		if (!p->got)
			return GW_PIPE_IDLE;
		p->at++;
		p->got = false;
		return GW_PIPE_MORE;
	}
	p->got = st != PGRES_PIPELINE_SYNC;
	if (st == PGRES_PIPELINE_SYNC && !p->failed && p->call >= 0 && p->value == NULL)
	{
		p->failed = true;
		gw_error_set(p->err, GW_ERR_INTERNAL, "lance_namespace.%s returned no result", p->function);
	}
	else if (st == PGRES_TUPLES_OK && p->at == p->call && !p->failed &&
			 PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
			 (p->value = strdup(PQgetvalue(res, 0, 0))) == NULL)
	{
		p->failed = true;
		gw_error_set(p->err, GW_ERR_INTERNAL, "out of memory");
	}
	else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_PIPELINE_SYNC)
	{
		/* a failed Prepare: the name is prepared anew next time */
		for (int i = 0; p->at < p->n && p->prepare[p->at] != NULL && i < p->prep->n; i++)
			if (p->prep->names[i] == p->prepare[p->at])
			{
				p->prep->names[i] = p->prep->names[--p->prep->n];
				break;
			}
		if (st != PGRES_PIPELINE_ABORTED && !p->failed)
		{
			p->failed = true;
			call_error(p->conn, res, p->function, p->sqlstate, p->err);
		}
	}
	PQclear(res);
	return st == PGRES_PIPELINE_SYNC ? GW_PIPE_SYNC : GW_PIPE_MORE;
}

/*
 * pipe_run
 *		Send the Sync, run during(arg) if given while the server works,
 *		read every result and leave pipeline mode.  False with err and
 *		sqlstate set ("08006" when libpq made the error: a lost
 *		connection) if a statement failed or the pipeline did not end.
 */
static bool
pipe_run(GwPipe *p, void (*during) (void *), void *arg)
{
	if (!p->send_failed && PQpipelineSync(p->conn) == 1)
	{
		if (during)
			during(arg);
		for (int guard = 0; guard < 4 * GW_PIPE_MAX + 8; guard++)
		{
			GwPipeStep step = gw_db_result(p, PQgetResult(p->conn));

			if (step == GW_PIPE_SYNC && p->at >= p->n && PQexitPipelineMode(p->conn) == 1 &&
				!p->failed)
				return true;
			if (step != GW_PIPE_MORE)
				break;
		}
	}
	/* else the connection broke, or the protocol went out of step */
	if (!p->failed)
		call_error(p->conn, NULL, p->function, p->sqlstate, p->err);
	free(p->value);
	p->value = NULL;
	return false;
}

/*
 * gw_db_role
 *		--db-auth outside a call (the change feed): the credentials' role.
 */
char *
gw_db_role(const char *api_key, const char *bearer, GwError *err)
{
	const char *params[3] = {api_key, bearer, gw_config.anon_role};

	return pooled_value("SELECT " SQL_WHO, 3, params, err);
}

/*
 * failed_lost
 *		Whether a failure lost the connection (or left a pipeline open).
 */
static bool
failed_lost(PGconn *conn, const char *sqlstate)
{
	return PQstatus(conn) != CONNECTION_OK ||
		PQpipelineStatus(conn) != PQ_PIPELINE_OFF ||
		strcmp(sqlstate, "08006") == 0;
}

/*
 * run_once
 *		One attempt of the transaction: the call alone, committed by the
 *		pipeline's Sync; or BEGIN, [--db-auth's SQL_ROLE,] the call and
 *		COMMIT, where an after_call hook runs before a COMMIT of its own.
 */
static TxOutcome
run_once(GwConn *c, const char *function, const char *request_json,
		 const GwRequestInfo *info, const GwTxHooks *hooks, char **out, GwError *err)
{
	GwPipe		p;
	PGconn	   *conn = c->conn;
	char	   *sqlstate = p.sqlstate;
	const char *role[3] = {info->api_key, info->bearer, gw_config.anon_role};
	const char *call[4] = {request_json, info->headers_json, info->method, info->path};
	char	   *result;
	bool		commit_in_pipe = hooks->after_call == NULL;
	bool		implicit = commit_in_pipe && !gw_config.db_auth;
	bool		commit_sent;

	if (PQenterPipelineMode(conn) != 1)
	{
		gw_error_set(err, GW_ERR_UNAVAILABLE, "the connection to the catalog database was lost");
		return TX_STALE;
	}
	gw_db_pipe(&p, conn, &c->prep, function, err);
	if (!implicit)
		gw_db_queue(&p, STMT_BEGIN, "BEGIN", 0, NULL, false);
	if (gw_config.db_auth)
		gw_db_queue(&p, STMT_ROLE, SQL_ROLE, 3, role, false);
	gw_db_queue(&p, function, NULL, 4, call, true);
	if (commit_in_pipe && !implicit)
		gw_db_queue(&p, STMT_COMMIT, "COMMIT", 0, NULL, false);
	/* the Sync of an implicit transaction is its COMMIT */
	commit_sent = commit_in_pipe && !p.send_failed;
	if (!pipe_run(&p, hooks->during_call, hooks->arg))
	{
		/* lost with the COMMIT on its way: the outcome is unknown */
		if (commit_sent && failed_lost(conn, sqlstate))
			return TX_FAILED;
		goto failed;
	}
	result = p.value;
	if (commit_in_pipe)
	{
		*out = result;
		return TX_OK;
	}

	if (!hooks->after_call(hooks->arg, &result, err))
	{
		free(result);
		rollback(conn);
		if (hooks->after_abort)
			hooks->after_abort(hooks->arg);
		return TX_FAILED;
	}

	if (!gw_db_exec(conn, "COMMIT", 0, NULL, NULL, sqlstate, err))
	{
		free(result);
		/* lost during COMMIT: the outcome is unknown, so undo nothing */
		if (failed_lost(conn, sqlstate))
			return TX_FAILED;
		goto failed;
	}
	if (hooks->after_commit)
		hooks->after_commit(hooks->arg);
	*out = result;
	return TX_OK;

failed:
	if (hooks->after_abort)
		hooks->after_abort(hooks->arg);
	/* a connection lost before COMMIT rolled back: safe to run again */
	if (failed_lost(conn, sqlstate))
		return TX_STALE;
	rollback(conn);
	if (PQstatus(conn) != CONNECTION_OK)
		return TX_STALE;
	return gw_db_retryable(sqlstate) ? TX_RETRY : TX_FAILED;
}

/*
 * gw_db_call
 *		lance_namespace.<function>(request) in a transaction of its own:
 *		its JSON result (malloc'd), or NULL with err set.
 */
char *
gw_db_call(const char *function, const char *request_json,
		   const GwRequestInfo *info, const GwTxHooks *hooks, GwError *err)
{
	static const GwTxHooks no_hooks;
	bool		reconnected = false;

	for (int attempt = 0;; attempt++)
	{
		GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, err);
		char	   *out = NULL;
		TxOutcome	rc;

		if (c == NULL)
			return NULL;
		gw_error_clear(err);
		rc = run_once(c, function, request_json, info, hooks ? hooks : &no_hooks, &out, err);
		if (rc == TX_STALE || PQstatus(c->conn) != CONNECTION_OK ||
			PQpipelineStatus(c->conn) != PQ_PIPELINE_OFF)
			gw_pool_discard(c);
		else
			gw_pool_release(c);

		if (rc == TX_OK)
			return out;
		if (rc == TX_STALE && !reconnected)
			attempt--;			/* once more, on a new connection */
		else if (rc != TX_RETRY || attempt >= gw_config.max_retries)
			return NULL;		/* err says unavailable (17), conflict (14) or why */
		else
		{
			/* jittered exponential backoff, at most 329 ms */
			struct timespec ts = {0, ((5L << (attempt < 6 ? attempt : 6)) + rand() % 10) * 1000000L};

			nanosleep(&ts, NULL);
		}
		reconnected = reconnected || rc == TX_STALE;
	}
}

/*
 * gw_db_ping
 *		Whether a pooled connection answers (a second try if one was lost).
 */
bool
gw_db_ping(GwError *err)
{
	for (int attempt = 0; attempt < 2; attempt++)
	{
		PGresult   *res = pooled_query("SELECT 1", 0, NULL, err);

		PQclear(res);
		if (res != NULL)
			return true;
	}
	return false;
}

/*
 * gw_db_check_root
 *		The catalog's root location (malloc'd, into *catalog_root), set to
 *		root if it had none.
 */
bool
gw_db_check_root(const char *root, char **catalog_root, GwError *err)
{
	const char *params[1] = {root};

	*catalog_root = pooled_value("SELECT COALESCE(lance_namespace.lance_root_location(),"
								 " lance_namespace.lance_set_root_location($1), $1)",
								 1, params, err);
	return *catalog_root != NULL;
}

/*
 * gw_db_load_routes
 *		Load the extension's routes (lance_namespace.rest_routes) and the
 *		query parameters that carry request fields (rest_query_parameters)
 *		into the route table (router.c), once at start.
 */
bool
gw_db_load_routes(GwError *err)
{
	PGresult   *res = pooled_query("SELECT path, CASE WHEN methods <@ '{GET,POST}' THEN"
								   " ('GET' = ANY (methods))::int * " GW_STR(GW_GET) " +"
								   " ('POST' = ANY (methods))::int * " GW_STR(GW_POST) " ELSE 0 END,"
								   " operation, binding, read_only, no_body"
								   "  FROM lance_namespace.rest_routes ORDER BY path", 0, NULL, err);
	bool		ok = res != NULL;

	for (int i = 0; ok && i < PQntuples(res); i++)
		ok = gw_route_add(PQgetvalue(res, i, 0), atoi(PQgetvalue(res, i, 1)), PQgetvalue(res, i, 2),
						  PQgetvalue(res, i, 3), PQgetvalue(res, i, 4)[0] == 't',
						  PQgetvalue(res, i, 5)[0] == 't', err);
	PQclear(res);
	res = ok ? pooled_query("SELECT name, type FROM lance_namespace.rest_query_parameters"
							" ORDER BY name", 0, NULL, err) : NULL;
	ok = res != NULL;
	for (int i = 0; ok && i < PQntuples(res); i++)
		ok = gw_query_parameter_add(PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), err);
	PQclear(res);
	return ok;
}
