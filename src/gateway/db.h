/*-------------------------------------------------------------------------
 *
 * db.h
 *	  Running one REST call as one PostgreSQL transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_DB_H
#define LANCE_GATEWAY_DB_H

#include <libpq-fe.h>

#include "gateway.h"
#include "pool.h"

/* Request facts exposed to SQL as request.headers/method/path settings. */
typedef struct GwRequestInfo
{
	const char *headers_json;
	const char *method;
	const char *path;
	const char *api_key;		/* x-api-key, or NULL (for --db-auth) */
	const char *bearer;			/* Authorization: Bearer token, or NULL */
} GwRequestInfo;

/*
 * Hooks around the transaction of a call.  during_call (may be NULL) runs
 * while the call is in flight, once it has been sent and before its result
 * is read; it must not use the connection.  after_call runs inside the
 * transaction with the function's result text and may replace it (malloc'd)
 * or fail, which rolls back.  after_commit runs once the transaction
 * committed; after_abort when it surely did not (to undo side effects).
 */
typedef struct GwTxHooks
{
	void		(*during_call) (void *arg);
	bool		(*after_call) (void *arg, char **result, GwError *err);
	void		(*after_commit) (void *arg);
	void		(*after_abort) (void *arg);
	void	   *arg;
} GwTxHooks;

/* function: a route's binding (it names the session's prepared statement) */
extern char *gw_db_call(const char *function, const char *request_json,
						const GwRequestInfo *info, const GwTxHooks *hooks,
						GwError *err);
extern bool gw_db_ping(GwError *err);
extern bool gw_db_exec(PGconn *conn, const char *sql, int nparams,
					   const char *const *params, PGresult **resp,
					   char *sqlstate, GwError *err);
extern char *gw_db_role(const char *api_key, const char *bearer, GwError *err);

/* the call statement, for a loop's own pipeline (pipeline.c) */
extern bool gw_db_send(PGconn *conn, GwPrepared *prep, const char *name,
					   const char *sql, int nparams, const char *const *params,
					   const char **preparing);
extern void gw_db_forget(GwPrepared *prep, const char *name);
extern void gw_db_call_error(PGconn *conn, PGresult *res, const char *function,
							 char *sqlstate, GwError *err);
extern bool gw_db_retryable(const char *sqlstate);
extern bool gw_db_check_root(const char *root, char **catalog_root, GwError *err);
extern bool gw_db_load_routes(GwError *err);

#endif							/* LANCE_GATEWAY_DB_H */
