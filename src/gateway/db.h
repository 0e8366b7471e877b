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
 * committed; after_abort when it surely did not (to undo side effects);
 * after_unknown (may be NULL) when the connection was lost with COMMIT on
 * its way, so that this session cannot tell.
 */
typedef struct GwTxHooks
{
	void		(*during_call) (void *arg);
	bool		(*after_call) (void *arg, char **result, GwError *err);
	void		(*after_commit) (void *arg);
	void		(*after_abort) (void *arg);
	void	   *arg;
	void		(*after_unknown) (void *arg);
} GwTxHooks;

/*
 * A pipeline: statements sent in libpq's pipeline mode with one Sync, their
 * results read back in order (db.c's transactions, pipeline.c's reads).
 */
#define GW_PIPE_MAX 10

typedef struct GwPipe
{
	PGconn	   *conn;
	GwPrepared *prep;			/* the statements the session has prepared */
	const char *function;		/* the call's binding, for its errors */
	int			n;				/* statements sent, Prepares included */
	int			call;			/* the call's statement (every pipeline has one) */
	const char *prepare[GW_PIPE_MAX];	/* a Prepare's name, forgotten if it fails */
	bool		send_failed;
	int			at;				/* the statement whose results are read */
	bool		got;			/* it had a result */
	bool		failed;			/* the first failure is in *err and sqlstate */
	bool		aborted;		/* skipped: a call before it in its group failed */
	bool		synced;			/* a Sync follows its statements */
	char		sqlstate[6];	/* its SQLSTATE ("08006": connection lost) */
	GwError    *err;
	char	   *value;			/* the call's result (call_value, malloc'd) */
} GwPipe;

typedef enum GwPipeStep
{
	GW_PIPE_MORE,				/* read on */
	GW_PIPE_SYNC,				/* the Sync arrived: every result is in */
	GW_PIPE_IDLE				/* nothing more has arrived */
} GwPipeStep;

/* function: a route's binding (it names the session's prepared statement) */
extern char *gw_db_call(const char *function, const char *request_json,
						const GwRequestInfo *info, const GwTxHooks *hooks,
						GwError *err);
extern bool gw_db_ping(GwError *err);
extern bool gw_db_exec(PGconn *conn, const char *sql, int nparams,
					   const char *const *params, PGresult **resp,
					   char *sqlstate, GwError *err);
extern char *gw_db_role(const char *api_key, const char *bearer, GwError *err);
extern char *gw_db_value(const char *sql, int nparams, const char *const *params,
						GwError *err);
extern bool gw_db_load_routes(GwError *err);

extern bool gw_db_queue_call(GwPipe *p, const char *request_json, const GwRequestInfo *info);
extern GwPipeStep gw_db_result(GwPipe *p, PGresult *res);
extern bool gw_db_retryable(const char *sqlstate);
extern void gw_db_error(PGconn *conn, PGresult *res, const char *function,
						char *sqlstate_out, GwError *err);

#endif							/* LANCE_GATEWAY_DB_H */
