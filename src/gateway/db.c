/*-------------------------------------------------------------------------
 *
 * db.c
 *	  One request, one transaction, sent as a libpq pipeline of prepared
 *	  statements; retries, stale connections, errors as Lance error codes
 *	  (README, "Database round trips").
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
	TX_FAILED,					/* err set; rolled back, or outcome unknown */
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
#define SQL_NO_RESULT "pg_catalog.current_setting('" NO_RESULT_GUC "')"
#define SQL_SETTINGS \
	" FROM (SELECT pg_catalog.set_config('request.headers', $2, true)," \
	" pg_catalog.set_config('request.method', $3, true)," \
	" pg_catalog.set_config('request.path', $4, true)," \
	" pg_catalog.set_config('lance_namespace.interface', 'rest', true)" \
	" OFFSET 0) AS request_settings"
#define SQL_CALL \
	"SELECT COALESCE(lance_namespace.%s($1::jsonb)::text, " SQL_NO_RESULT ")" SQL_SETTINGS

/*
 * The call of a binding whose answers are table versions (client_paths in
 * rest_routes): the answer with their manifest paths in the clients' form,
 * the location and number of the version a DescribeTableVersion answer
 * holds, and the versions of a ListTableVersions answer as "<number>
 * <bytes> <location>" each, the location's length in bytes framing it, so
 * that any byte may be in it (call_value; the gateway checks that their
 * manifests still exist, table_files.c).  OFFSET 0 runs the binding once.
 */
#define SQL_CALL_PATHS \
	"SELECT COALESCE(lance_namespace.rest_client_paths(a.r)::text, " SQL_NO_RESULT ")," \
	" a.r OPERATOR(pg_catalog.#>>) '{version,manifest_path}'," \
	" a.r OPERATOR(pg_catalog.#>>) '{version,version}'," \
	" (SELECT pg_catalog.string_agg(pg_catalog.format('%%s %%s %%s', e.v OPERATOR(pg_catalog.->>) 'version'," \
	" pg_catalog.octet_length(e.v OPERATOR(pg_catalog.->>) 'manifest_path')," \
	" e.v OPERATOR(pg_catalog.->>) 'manifest_path'), '')" \
	" FROM pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof(a.r OPERATOR(pg_catalog.->) 'versions')" \
	" WHEN 'array' THEN a.r OPERATOR(pg_catalog.->) 'versions' END) AS e(v))" \
	" FROM (SELECT lance_namespace.%s($1::jsonb) AS r" SQL_SETTINGS " OFFSET 0) AS a"

/*
 * gw_db_error
 *		Fill err from a failed command's result (NULL: the connection's
 *		state) and count its SQLSTATE, copied into sqlstate_out (6 bytes):
 *		"08006" for a lost connection, "" for NO_RESULT_GUC and NO_ROLE_GUC.
 */
void
gw_db_error(PGconn *conn, PGresult *res, const char *function,
			char *sqlstate_out, GwError *err)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);	/* NULL if res is */
	const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	bool		own = sqlstate && primary && strcmp(sqlstate, "42704") == 0;

	/* no SQLSTATE: libpq's own error, a connection lost but not marked bad yet */
	snprintf(sqlstate_out, 6, "%s", sqlstate ? sqlstate : "08006");
	if (PQstatus(conn) != CONNECTION_OK || sqlstate == NULL)
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "the connection to the catalog database was lost");
		gw_error_detail(err, "%s", PQerrorMessage(conn));
	}
	else if (own && function && strstr(primary, NO_RESULT_GUC) != NULL)
		gw_error_set(err, LANCE_INTERNAL, "lance_namespace.%s returned no result", function);
	else if (own && strstr(primary, NO_ROLE_GUC) != NULL)
		gw_error_set(err, LANCE_UNAUTHENTICATED,
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
	ExecStatusType st = PQresultStatus(res);	/* PGRES_FATAL_ERROR if NULL */
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
	gw_db_error(conn, res, NULL, sqlstate, err);
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
	gw_db_exec(c->conn, sql, nparams, params, &res, NULL, err);	/* res stays NULL if it fails */
	gw_pool_release(c);
	return res;
}

/*
 * gw_db_value
 *		The first value of a statement on a pooled connection (malloc'd),
 *		or NULL with err set.
 */
char *
gw_db_value(const char *sql, int nparams, const char *const *params, GwError *err)
{
	PGresult   *res = pooled_query(sql, nparams, params, err);
	char	   *value = res ? strdup(PQgetvalue(res, 0, 0)) : NULL;

	PQclear(res);
	return value;
}

/*
 * queue
 *		Send one statement down the pipeline by name (a string that lives
 *		as long as the program), prepared first if the session lacks it;
 *		sql NULL: the call of binding name (SQL_CALL), whose result is
 *		kept.  False once libpq refused a statement.
 */
static bool
queue(GwPipe *p, const char *name, const char *sql, int nparams, const char *const *params)
{
	GwPrepared *prep = p->prep;
	bool		call = sql == NULL;
	bool		known = false;
	bool		prepare;
	char		text[2048];

	for (int i = 0; i < prep->n && !known; i++)
		known = prep->names[i] == name || strcmp(prep->names[i], name) == 0;
	if (call && !known)
	{
		snprintf(text, sizeof(text), gw_binding_client_paths(name) ? SQL_CALL_PATHS : SQL_CALL,
				 name);
		sql = text;
	}
	prepare = !known && prep->n < GW_MAX_PREPARED;
	if (p->send_failed || p->n + 2 > GW_PIPE_MAX ||
		(prepare && PQsendPrepare(p->conn, name, sql, nparams, NULL) != 1))
	{
		p->send_failed = true;
		return false;
	}
	if (prepare)
		prep->names[prep->n++] = p->prepare[p->n++] = name;
	if (call)
		p->call = p->n;
	p->n++;
	if (known || prepare)
		p->send_failed = PQsendQueryPrepared(p->conn, name, nparams, params, NULL, NULL, 0) != 1;
	else						/* no more are cached: sent unnamed */
		p->send_failed = PQsendQueryParams(p->conn, sql, nparams, NULL, params, NULL, NULL, 0) != 1;
	return !p->send_failed;
}

/*
 * gw_db_queue_call
 *		Send the call of the pipeline's function with a request.
 */
bool
gw_db_queue_call(GwPipe *p, const char *request_json, const GwRequestInfo *info)
{
	const char *params[4] = {request_json, info->headers_json, info->method, info->path};

	return queue(p, p->function, NULL, 4, params);
}

/*
 * call_value
 *		The call's result text (malloc'd), or NULL; for SQL_CALL_PATHS
 *		followed, each after a NUL, by the described version's manifest
 *		location and number ("" when the answer holds no single version)
 *		and the listed versions ("" when it lists none).
 */
static char *
call_value(const PGresult *res)
{
	int			n = PQnfields(res) >= 4 ? 4 : 1;
	size_t		total = 0;
	char	   *value;

	for (int i = 0; i < n; i++)
		total += PQgetlength(res, 0, i) + 1;
	value = malloc(total);
	for (int i = 0, at = 0; value != NULL && i < n; at += PQgetlength(res, 0, i++) + 1)
		memcpy(value + at, PQgetvalue(res, 0, i), PQgetlength(res, 0, i) + 1);
	return value;
}

/*
 * gw_db_result
 *		Take one result of the pipeline (NULL: the end of a statement's;
 *		none follows a Sync), keeping the call's value and the first failure.
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
	if (st == PGRES_PIPELINE_SYNC && !p->failed && !p->aborted && p->value == NULL)
	{
		p->failed = true;
		gw_error_set(p->err, LANCE_INTERNAL, "lance_namespace.%s returned no result", p->function);
	}
	else if (st == PGRES_TUPLES_OK && p->at == p->call && !p->failed &&
			 PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
			 (p->value = call_value(res)) == NULL)
	{
		p->failed = true;
		gw_error_set(p->err, LANCE_INTERNAL, "out of memory");
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
		p->aborted |= st == PGRES_PIPELINE_ABORTED && !p->failed;
		if (st != PGRES_PIPELINE_ABORTED && !p->failed)
		{
			p->failed = true;
			gw_db_error(p->conn, res, p->function, p->sqlstate, p->err);
		}
	}
	PQclear(res);
	return st == PGRES_PIPELINE_SYNC ? GW_PIPE_SYNC : GW_PIPE_MORE;
}

/*
 * pipe_run
 *		Send the Sync, run during(arg) while the server works, read every
 *		result, leave pipeline mode; false with the failure in err.
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
		gw_db_error(p->conn, NULL, p->function, p->sqlstate, p->err);
	return false;				/* a value read before is run_once's to free */
}

/*
 * gw_db_role
 *		--db-auth outside a call (the change feed): the credentials' role.
 */
char *
gw_db_role(const char *api_key, const char *bearer, GwError *err)
{
	const char *params[3] = {api_key, bearer, gw_config.anon_role};

	return gw_db_value("SELECT " SQL_WHO, 3, params, err);
}

/*
 * run_once
 *		One attempt of the transaction: the call alone, committed by the
 *		pipeline's Sync; or BEGIN, [--db-auth's SQL_ROLE,] the call and
 *		COMMIT, where an after_call hook runs before a COMMIT of its own
 *		(its failure is a failure of the transaction, undone as any other).
 */
static TxOutcome
run_once(GwConn *c, const char *function, const char *request_json,
		 const GwRequestInfo *info, const GwTxHooks *hooks, char **out, GwError *err)
{
	PGconn	   *conn = c->conn;
	GwPipe		p = {.conn = conn, .prep = &c->prep, .function = function, .err = err};
	char	   *sqlstate = p.sqlstate;
	const char *role[3] = {info->api_key, info->bearer, gw_config.anon_role};
	char	   *result;
	bool		commit_in_pipe = hooks->after_call == NULL;
	bool		implicit = commit_in_pipe && !gw_config.db_auth;
	bool		commit_sent;
	bool		ok;
	bool		lost;

	if (PQenterPipelineMode(conn) != 1)
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "the connection to the catalog database was lost");
		return TX_STALE;
	}
	if (!implicit)
		queue(&p, STMT_BEGIN, "BEGIN", 0, NULL);
	if (gw_config.db_auth)
		queue(&p, STMT_ROLE, SQL_ROLE, 3, role);
	gw_db_queue_call(&p, request_json, info);
	if (commit_in_pipe && !implicit)
		queue(&p, STMT_COMMIT, "COMMIT", 0, NULL);
	/* the Sync of an implicit transaction is its COMMIT */
	commit_sent = commit_in_pipe && !p.send_failed;
	ok = pipe_run(&p, hooks->during_call, hooks->arg);
	result = p.value;
	if (ok && !commit_in_pipe)
	{
		commit_sent = hooks->after_call(hooks->arg, &result, err);
		ok = commit_sent && gw_db_exec(conn, "COMMIT", 0, NULL, NULL, sqlstate, err);
	}
	if (ok)
	{
		if (hooks->after_commit)
			hooks->after_commit(hooks->arg);
		*out = result;
		return TX_OK;
	}
	free(result);
	/* lost with the COMMIT on its way: the outcome is unknown here */
	lost = PQstatus(conn) != CONNECTION_OK || PQpipelineStatus(conn) != PQ_PIPELINE_OFF ||
		strcmp(sqlstate, "08006") == 0;
	if (commit_sent && lost && hooks->after_unknown)
		hooks->after_unknown(hooks->arg);
	if (commit_sent && lost)
		return TX_FAILED;
	if (hooks->after_abort)
		hooks->after_abort(hooks->arg);
	/* lost before COMMIT, it rolled back: safe to run again; else roll back */
	if (!lost && PQtransactionStatus(conn) != PQTRANS_IDLE)
		PQclear(PQexec(conn, "ROLLBACK"));
	if (lost || PQstatus(conn) != CONNECTION_OK)
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
		if (rc == TX_STALE)
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
	PGresult   *res = pooled_query("SELECT 1", 0, NULL, err);
	bool		ok;

	if (res == NULL)
		res = pooled_query("SELECT 1", 0, NULL, err);
	ok = res != NULL;
	PQclear(res);
	return ok;
}

/*
 * gw_db_load_routes
 *		At start: rest_routes and rest_query_parameters into router.c's table.
 */
bool
gw_db_load_routes(GwError *err)
{
	PGresult   *res = pooled_query("SELECT path, CASE WHEN methods <@ '{GET,POST}' THEN"
								   " ('GET' = ANY (methods))::int * " GW_STR(GW_GET) " +"
								   " ('POST' = ANY (methods))::int * " GW_STR(GW_POST) " ELSE 0 END,"
								   " operation, binding, read_only, no_body, client_paths"
								   "  FROM lance_namespace.rest_routes ORDER BY path", 0, NULL, err);
	bool		ok = res != NULL;

	for (int i = 0; ok && i < PQntuples(res); i++)
		ok = gw_route_add(PQgetvalue(res, i, 0), atoi(PQgetvalue(res, i, 1)), PQgetvalue(res, i, 2),
						  PQgetvalue(res, i, 3), PQgetvalue(res, i, 4)[0] == 't',
						  PQgetvalue(res, i, 5)[0] == 't', PQgetvalue(res, i, 6)[0] == 't', err);
	PQclear(res);
	res = ok ? pooled_query("SELECT name, type FROM lance_namespace.rest_query_parameters"
							" ORDER BY name", 0, NULL, err) : NULL;
	ok = res != NULL;
	for (int i = 0; ok && i < PQntuples(res); i++)
		ok = gw_query_parameter_add(PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), err);
	PQclear(res);
	return ok;
}
