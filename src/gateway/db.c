/*-------------------------------------------------------------------------
 *
 * db.c
 *	  One request, one transaction: BEGIN; expose the request headers to
 *	  SQL the way PostgREST does; SELECT lance_namespace.rest_<op>($1);
 *	  COMMIT.  Serialization failures and deadlocks are retried; a stale
 *	  connection (PostgreSQL restarted) is replaced once; errors become
 *	  Lance error codes.
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

typedef enum TxOutcome
{
	TX_OK,
	TX_FAILED,					/* err set, transaction rolled back */
	TX_RETRY,					/* serialization failure or deadlock */
	TX_STALE					/* connection broke before any work */
} TxOutcome;

/*
 * set_error_from_result
 *		Fill err from a failed command's result (or the connection's state
 *		if there is no result), and copy the SQLSTATE ("" if none) into
 *		sqlstate_out (6 bytes).
 */
static void
set_error_from_result(PGconn *conn, PGresult *res, char *sqlstate_out, GwError *err)
{
	const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;

	snprintf(sqlstate_out, 6, "%s", sqlstate ? sqlstate : "");

	/*
	 * No SQLSTATE means libpq made the error itself: almost always a lost
	 * connection that it has not marked bad yet (a failed write, e.g. after
	 * an immediate shutdown or failover).  Treat it as one (503), and the
	 * outcome of a COMMIT as unknown.
	 */
	if (PQstatus(conn) != CONNECTION_OK || sqlstate == NULL)
	{
		gw_error_set(err, GW_ERR_UNAVAILABLE, "the connection to the catalog database was lost");
		gw_error_detail(err, "%s", PQerrorMessage(conn));
		if (sqlstate == NULL)
			snprintf(sqlstate_out, 6, "08006");
		return;
	}
	gw_error_set(err, gw_code_for_sqlstate(sqlstate), "%s",
				 primary ? primary : "catalog database error");
	if (detail)
		gw_error_detail(err, "%s", detail);
}

/*
 * is_retryable
 *		Serialization failure or deadlock: run the transaction again.
 */
static bool
is_retryable(const char *sqlstate)
{
	return strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0;
}

/*
 * exec_ok
 *		Run a command; on failure fill err and the SQLSTATE buffer.
 */
static bool
exec_ok(PGconn *conn, const char *sql, int nparams, const char *const *params,
		PGresult **resp, char *sqlstate, GwError *err)
{
	PGresult   *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
	{
		if (resp)
			*resp = res;
		else
			PQclear(res);
		return true;
	}
	set_error_from_result(conn, res, sqlstate, err);
	gw_metrics_db_error(sqlstate);
	PQclear(res);
	return false;
}

/*
 * rollback
 *		End a failed transaction, ignoring errors (the connection is
 *		dropped by the pool if this does not work).
 */
static void
rollback(PGconn *conn)
{
	if (PQstatus(conn) == CONNECTION_OK)
		PQclear(PQexec(conn, "ROLLBACK"));
}

/*
 * set_request_role
 *		With --db-auth: map the request's credentials to a role with
 *		lance_namespace.lance_authenticate() (PostgREST style) and switch to
 *		it for the rest of the transaction.  No credentials means the
 *		--anon-role, or Unauthenticated without one.
 */
static bool
set_request_role(PGconn *conn, const GwRequestInfo *info, char *sqlstate, GwError *err)
{
	const char *params[2] = {info->api_key, info->bearer};
	PGresult   *res = NULL;
	char	   *role;
	bool		done;

	if (!exec_ok(conn, "SELECT lance_namespace.lance_authenticate($1, $2)", 2, params,
				 &res, sqlstate, err))
		return false;
	if (PQgetisnull(res, 0, 0))
		role = gw_config.anon_role ? strdup(gw_config.anon_role) : NULL;
	else
		role = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (role == NULL)
	{
		gw_error_set(err, GW_ERR_UNAUTHENTICATED,
					 "credentials required: send x-api-key or Authorization: Bearer");
		return false;
	}
	params[0] = role;
	done = exec_ok(conn, "SELECT pg_catalog.set_config('role', $1, true)", 1, params,
				   NULL, sqlstate, err);
	free(role);
	return done;
}

/*
 * run_once
 *		One attempt of the transaction.
 */
static TxOutcome
run_once(PGconn *conn, const char *function, const char *request_json,
		 const GwRequestInfo *info, const GwTxHooks *hooks, char **out,
		 GwError *err)
{
	char		sqlstate[6] = "";
	char		sql[256];
	PGresult   *res = NULL;
	const char *params[3];
	char	   *result;

	if (!exec_ok(conn, "BEGIN", 0, NULL, NULL, sqlstate, err))
		return PQstatus(conn) != CONNECTION_OK ? TX_STALE : TX_FAILED;

	params[0] = info->headers_json;
	params[1] = info->method;
	params[2] = info->path;
	if (!exec_ok(conn,
				 "SELECT pg_catalog.set_config('request.headers', $1, true),"
				 " pg_catalog.set_config('request.method', $2, true),"
				 " pg_catalog.set_config('request.path', $3, true),"
				 " pg_catalog.set_config('lance_namespace.interface', 'rest', true)",
				 3, params, NULL, sqlstate, err))
		goto failed;

	if (gw_config.db_auth && !set_request_role(conn, info, sqlstate, err))
		goto failed;

	snprintf(sql, sizeof(sql), "SELECT lance_namespace.%s($1::jsonb)::text", function);
	params[0] = request_json;
	if (!exec_ok(conn, sql, 1, params, &res, sqlstate, err))
		goto failed;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		rollback(conn);
		gw_error_set(err, GW_ERR_INTERNAL, "lance_namespace.%s returned no result", function);
		return TX_FAILED;
	}
	result = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);

	if (hooks && hooks->after_call && !hooks->after_call(hooks->arg, &result, err))
	{
		free(result);
		rollback(conn);
		if (hooks->after_abort)
			hooks->after_abort(hooks->arg);
		return TX_FAILED;
	}

	if (!exec_ok(conn, "COMMIT", 0, NULL, NULL, sqlstate, err))
	{
		free(result);
		/* Lost during COMMIT: the outcome is unknown, so undo nothing. */
		if (PQstatus(conn) != CONNECTION_OK || strcmp(sqlstate, "08006") == 0)
			return TX_FAILED;
		if (hooks && hooks->after_abort)
			hooks->after_abort(hooks->arg);
		return is_retryable(sqlstate) ? TX_RETRY : TX_FAILED;
	}
	if (hooks && hooks->after_commit)
		hooks->after_commit(hooks->arg);
	*out = result;
	return TX_OK;

failed:
	rollback(conn);
	if (hooks && hooks->after_abort)
		hooks->after_abort(hooks->arg);
	/* A connection lost before COMMIT rolled back: safe to run again. */
	if (PQstatus(conn) != CONNECTION_OK)
		return TX_STALE;
	return is_retryable(sqlstate) ? TX_RETRY : TX_FAILED;
}

/*
 * backoff
 *		Sleep a little before retrying attempt n (jittered exponential).
 */
static void
backoff(int attempt)
{
	struct timespec ts;
	long		ms = (5L << (attempt < 6 ? attempt : 6)) + rand() % 10;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/*
 * gw_db_call
 *		Run lance_namespace.<function>(request) in its own transaction and
 *		return its JSON result text (malloc'd), or NULL with err set.
 */
char *
gw_db_call(const char *function, const char *request_json,
		   const GwRequestInfo *info, const GwTxHooks *hooks, GwError *err)
{
	bool		reconnected = false;

	for (int attempt = 0;; attempt++)
	{
		GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, err);
		char	   *out = NULL;
		TxOutcome	rc;

		if (c == NULL)
			return NULL;
		gw_error_clear(err);
		rc = run_once(c->conn, function, request_json, info, hooks, &out, err);
		if (rc == TX_STALE)
			gw_pool_discard(c);
		else
			gw_pool_release(c);

		if (rc == TX_OK)
			return out;
		if (rc == TX_STALE && !reconnected)
		{
			reconnected = true;
			attempt--;
			continue;
		}
		if (rc == TX_RETRY && attempt < gw_config.max_retries)
		{
			backoff(attempt);
			continue;
		}
		/* err says unavailable (17), conflict (14) or the failure */
		return NULL;
	}
}

/*
 * gw_db_ping
 *		True if a pooled connection answers SELECT 1.
 */
bool
gw_db_ping(GwError *err)
{
	for (int attempt = 0; attempt < 2; attempt++)
	{
		GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, err);
		char		sqlstate[6] = "";

		if (c == NULL)
			return false;
		if (exec_ok(c->conn, "SELECT 1", 0, NULL, NULL, sqlstate, err))
		{
			gw_pool_release(c);
			return true;
		}
		gw_pool_discard(c);
	}
	return false;
}

/*
 * gw_db_check_root
 *		Make sure the catalog's root location is root: set it if the catalog
 *		has none, fail if it has another.  *catalog_root gets the catalog's
 *		value (malloc'd) when it is set.
 */
bool
gw_db_check_root(const char *root, char **catalog_root, GwError *err)
{
	GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, err);
	char		sqlstate[6] = "";
	PGresult   *res = NULL;
	const char *params[1] = {root};
	bool		ok = false;

	*catalog_root = NULL;
	if (c == NULL)
		return false;
	if (!exec_ok(c->conn, "SELECT lance_namespace.lance_root_location()", 0, NULL,
				 &res, sqlstate, err))
		goto done;
	if (!PQgetisnull(res, 0, 0))
	{
		*catalog_root = strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		ok = true;
		goto done;
	}
	PQclear(res);
	if (!exec_ok(c->conn, "SELECT lance_namespace.lance_set_root_location($1)", 1, params,
				 &res, sqlstate, err))
		goto done;
	*catalog_root = strdup(PQgetisnull(res, 0, 0) ? root : PQgetvalue(res, 0, 0));
	PQclear(res);
	ok = true;
done:
	gw_pool_release(c);
	return ok;
}
