/*-------------------------------------------------------------------------
 *
 * evloop_db.c
 *	  The event loop's database connection: one libpq connection in
 *	  pipeline mode, non-blocking, that carries the call statements of
 *	  every connection the loop answers.  Each statement is followed by a
 *	  Sync, so it is a transaction of its own, exactly as db.c runs it
 *	  (the call statement and its prepared name are db.c's); a failure
 *	  ends at its Sync and touches no other call.  Calls that are ready at
 *	  one wake-up reach the backend together, and their results are read
 *	  back in the order they were sent.
 *
 *	  What the loop does not answer itself goes to a connection thread,
 *	  which runs the request from the start with db.c's retries: a
 *	  serialization failure or deadlock, a statement whose preparation
 *	  failed, and every call while the loop has no connection.
 *	  A connection that breaks is closed; the calls that were in its
 *	  pipeline may have committed, so they are answered 503 (code 17), as
 *	  db.c answers a call whose COMMIT was in flight.  A new connection is
 *	  opened by a short-lived thread, at most once a second (when a call
 *	  needs one, and at the loop's once-a-second scan), so that the loop
 *	  never waits for the database.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>

#include "db.h"
#include "evloop_int.h"
#include "metrics.h"
#include "pool.h"
#include "router.h"

#define RECONNECT_GAP_MS 1000	/* between connection attempts, at least */
#define QUEUE_INITIAL	64

/* One call in the pipeline, up to its Sync. */
typedef struct Pending
{
	GwHttpConn *c;
	const char *prepare;		/* statement prepared along with it, or NULL */
} Pending;

/* the connection opened by the connect thread; under lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static PGconn *opened;
static bool attempt_done;
static bool db_closed;			/* the loop ended: the thread closes it */

/* the loop thread's own state */
static PGconn *pg;
static bool want_write;			/* EPOLLOUT is watched on pg's socket */
static bool connecting;
static struct timespec last_attempt;
static int	nprepared;
static const char *prepared[GW_MAX_PREPARED];
static Pending *queue;
static int	qhead;
static int	qlen;
static int	qcap;

/* the call at the queue's head, while its results arrive */
static PGresult *head_res;
static bool head_prepared;		/* its statement's preparation succeeded */
static bool head_failed;
static char head_sqlstate[6];
static GwError head_err;

/*
 * connect_main
 *		The connect thread: open a connection and hand it to the loop.
 */
static void *
connect_main(void *arg)
{
	GwError		err;
	PGconn	   *conn;

	(void) arg;
	gw_error_clear(&err);
	conn = gw_pool_connect(&err);
	pthread_mutex_lock(&lock);
	if (db_closed)
	{
		PQfinish(conn);
		conn = NULL;
	}
	opened = conn;
	attempt_done = true;
	pthread_mutex_unlock(&lock);
	gw_loop_wake();
	return NULL;
}

/*
 * gw_evdb_connect
 *		Start opening a connection, unless one is being opened or the last
 *		attempt was less than RECONNECT_GAP_MS ago.
 */
void
gw_evdb_connect(void)
{
	struct timespec now;
	pthread_attr_t attr;
	pthread_t	t;
	long		ms;

	if (pg != NULL || connecting)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - last_attempt.tv_sec) * 1000L +
		(now.tv_nsec - last_attempt.tv_nsec) / 1000000L;
	if (last_attempt.tv_sec != 0 && ms < RECONNECT_GAP_MS)
		return;
	last_attempt = now;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	connecting = pthread_create(&t, &attr, connect_main, NULL) == 0;
	pthread_attr_destroy(&attr);
}

/*
 * gw_evdb_take_connection
 *		After a wake-up: start using the connection the connect thread
 *		opened, if it has.
 */
void
gw_evdb_take_connection(void)
{
	struct epoll_event ev;
	PGconn	   *conn;
	bool		done;

	pthread_mutex_lock(&lock);
	conn = opened;
	done = attempt_done;
	opened = NULL;
	attempt_done = false;
	pthread_mutex_unlock(&lock);
	if (!done)
		return;
	connecting = false;
	if (conn == NULL)
		return;
	ev.events = EPOLLIN;
	ev.data.u64 = GW_EV_DB;
	if (PQsetnonblocking(conn, 1) != 0 || PQenterPipelineMode(conn) != 1 ||
		epoll_ctl(gw_loop_epoll, EPOLL_CTL_ADD, PQsocket(conn), &ev) != 0)
	{
		PQfinish(conn);
		return;
	}
	pg = conn;
	gw_metrics_add(GW_M_LOOP_CONNECTED, 1);
	want_write = false;
	nprepared = 0;				/* a new session has no prepared statements */
}

/*
 * is_prepared
 *		True if the connection has the named statement (or its
 *		preparation is on its way).
 */
static bool
is_prepared(const char *name)
{
	for (int i = 0; i < nprepared; i++)
		if (prepared[i] == name)
			return true;
	return false;
}

/*
 * forget_prepared
 *		A preparation failed: the name is prepared anew next time.
 */
static void
forget_prepared(const char *name)
{
	for (int i = 0; i < nprepared; i++)
		if (prepared[i] == name)
		{
			prepared[i] = prepared[--nprepared];
			return;
		}
}

/*
 * pop
 *		Take the call at the queue's head off the queue.
 */
static GwHttpConn *
pop(void)
{
	GwHttpConn *c = queue[qhead].c;

	qhead = (qhead + 1) % qcap;
	qlen--;
	gw_metrics_add(GW_M_LOOP_CALLS, -1);
	c->in_call = false;
	PQclear(head_res);
	head_res = NULL;
	head_prepared = false;
	head_failed = false;
	return c;
}

/*
 * lost
 *		The connection broke: close it and answer every call that was in
 *		its pipeline 503, for its outcome is unknown.
 */
static void
lost(void)
{
	GwError		err;
	PGconn	   *old = pg;

	gw_error_set(&err, GW_ERR_UNAVAILABLE, "the connection to the catalog database was lost");
	gw_error_detail(&err, "%s", PQerrorMessage(old));
	epoll_ctl(gw_loop_epoll, EPOLL_CTL_DEL, PQsocket(old), NULL);
	pg = NULL;
	PQfinish(old);
	gw_metrics_add(GW_M_LOOP_CONNECTED, -1);
	gw_metrics_add(GW_M_DB_RECONNECTS, 1);
	gw_metrics_db_error("08006");
	while (qlen > 0)
	{
		GwHttpConn *c = pop();

		gw_loop_drive(c, gw_http_loop_reply(c, NULL, &err));
	}
	gw_evdb_connect();
}

/*
 * push
 *		Put a call at the queue's tail, growing the queue when it is full.
 */
static bool
push(GwHttpConn *c, const char *prepare)
{
	if (qlen == qcap)
	{
		int			ncap = qcap ? qcap * 2 : QUEUE_INITIAL;
		Pending    *nq = malloc(sizeof(Pending) * ncap);

		if (nq == NULL)
			return false;
		for (int i = 0; i < qlen; i++)
			nq[i] = queue[(qhead + i) % qcap];
		free(queue);
		queue = nq;
		qcap = ncap;
		qhead = 0;
	}
	queue[(qhead + qlen) % qcap].c = c;
	queue[(qhead + qlen) % qcap].prepare = prepare;
	qlen++;
	gw_metrics_add(GW_M_LOOP_CALLS, 1);
	return true;
}

/*
 * gw_evdb_send
 *		Send a connection's call (c->call) down the pipeline.  GW_LOOP_WAIT
 *		once it is on its way; otherwise the next step of the connection
 *		(an answer, or a thread).
 */
GwLoopStep
gw_evdb_send(GwHttpConn *c)
{
	const char *function = c->call.route->function;
	const char *params[4];
	const char *name;
	const char *prepare = NULL;
	char		sql[1024];
	GwError		err;
	int			sent;

	gw_error_clear(&err);
	params[0] = gw_call_text(&c->call, &err);
	if (params[0] == NULL)
		return gw_http_loop_reply(c, NULL, &err);
	if (pg == NULL || !push(c, NULL))
	{
		gw_evdb_connect();
		gw_http_loop_fallback(c);
		return GW_LOOP_THREAD;
	}
	params[1] = c->call.info.headers_json;
	params[2] = c->call.info.method;
	params[3] = c->call.info.path;
	name = gw_db_call_sql(function, sql, sizeof(sql));
	if (name != NULL && !is_prepared(name))
	{
		if (nprepared == GW_MAX_PREPARED)
			name = NULL;		/* run it unnamed */
		else if (PQsendPrepare(pg, name, sql, 4, NULL) == 1)
		{
			prepared[nprepared++] = name;
			prepare = name;
		}
		else
			name = NULL;		/* the send below fails the same way */
	}
	if (name != NULL)
		sent = PQsendQueryPrepared(pg, name, 4, params, NULL, NULL, 0);
	else
		sent = PQsendQueryParams(pg, sql, 4, NULL, params, NULL, NULL, 0);
	queue[(qhead + qlen - 1) % qcap].prepare = prepare;
	c->in_call = true;
	if (sent != 1 || PQpipelineSync(pg) != 1)
	{
		/* the connection is out of step: drop it, run this one elsewhere */
		qlen--;
		gw_metrics_add(GW_M_LOOP_CALLS, -1);
		c->in_call = false;
		lost();
		gw_http_loop_fallback(c);
		return GW_LOOP_THREAD;
	}
	return GW_LOOP_WAIT;
}

/*
 * complete
 *		The Sync of the call at the queue's head arrived: answer it, or
 *		hand it to a thread when it may simply run again there (a
 *		serialization failure or deadlock, which db.c retries; a prepared
 *		statement missing because its preparation failed).
 */
static void
complete(void)
{
	const char *function = queue[qhead].c->call.route->function;
	char	   *result = NULL;
	bool		again = false;
	GwHttpConn *c;
	GwError		err;

	gw_error_clear(&err);
	if (head_failed)
	{
		err = head_err;
		again = gw_db_retryable(head_sqlstate) || strcmp(head_sqlstate, "26000") == 0;
	}
	else if (head_res == NULL || PQntuples(head_res) != 1 || PQgetisnull(head_res, 0, 0))
		gw_error_set(&err, GW_ERR_INTERNAL, "lance_namespace.%s returned no result", function);
	else if ((result = strdup(PQgetvalue(head_res, 0, 0))) == NULL)
		gw_error_set(&err, GW_ERR_INTERNAL, "out of memory");
	c = pop();
	if (again)
	{
		gw_http_loop_fallback(c);
		gw_loop_drive(c, GW_LOOP_THREAD);
	}
	else
		gw_loop_drive(c, gw_http_loop_reply(c, result, &err));
}

/*
 * read_results
 *		Read what the server sent and answer the calls whose Sync arrived.
 */
static void
read_results(void)
{
	int			nulls = 0;

	if (PQconsumeInput(pg) != 1)
	{
		lost();
		return;
	}
	while (pg != NULL && qlen > 0 && PQisBusy(pg) == 0)
	{
		PGresult   *res = PQgetResult(pg);
		ExecStatusType st;

		if (res == NULL)
		{
			/* the end of one statement's results; twice: nothing more yet */
			if (++nulls > 1)
				break;
			continue;
		}
		nulls = 0;
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC)
		{
			PQclear(res);
			complete();
			continue;
		}
		if (st == PGRES_TUPLES_OK && !head_failed && head_res == NULL)
		{
			head_res = res;
			continue;
		}
		if (st == PGRES_COMMAND_OK)
			head_prepared = true;	/* only a Prepare answers that */
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
			st != PGRES_PIPELINE_ABORTED && !head_failed)
		{
			head_failed = true;
			gw_db_call_error(pg, res, queue[qhead].c->call.route->function,
							 head_sqlstate, &head_err);
			if (queue[qhead].prepare != NULL && !head_prepared)
				forget_prepared(queue[qhead].prepare);	/* the Prepare failed */
		}
		PQclear(res);
	}
	if (pg != NULL && PQstatus(pg) != CONNECTION_OK)
		lost();
}

/*
 * gw_evdb_event
 *		The connection's socket is readable or writable (or failed).
 */
void
gw_evdb_event(uint32_t events)
{
	if (pg == NULL)
		return;
	if ((events & EPOLLOUT) && PQflush(pg) < 0)
	{
		lost();
		return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		read_results();
}

/*
 * gw_evdb_flush
 *		After a batch: send what libpq still holds, watching for the socket
 *		to become writable while it cannot take it all.
 */
void
gw_evdb_flush(void)
{
	struct epoll_event ev;
	int			rc;

	if (pg == NULL)
		return;
	rc = PQflush(pg);
	if (rc < 0)
	{
		lost();
		return;
	}
	if ((rc == 1) != want_write)
	{
		want_write = (rc == 1);
		ev.events = EPOLLIN | (want_write ? EPOLLOUT : 0);
		ev.data.u64 = GW_EV_DB;
		epoll_ctl(gw_loop_epoll, EPOLL_CTL_MOD, PQsocket(pg), &ev);
	}
}

/*
 * gw_evdb_pending
 *		The number of calls in the pipeline.
 */
int
gw_evdb_pending(void)
{
	return qlen;
}

/*
 * gw_evdb_close
 *		When the loop ends: close the connection (and one still being
 *		opened, once it is).
 */
void
gw_evdb_close(void)
{
	pthread_mutex_lock(&lock);
	db_closed = true;
	PQfinish(opened);
	opened = NULL;
	pthread_mutex_unlock(&lock);
	if (pg != NULL)
	{
		PQfinish(pg);
		gw_metrics_add(GW_M_LOOP_CONNECTED, -1);
	}
	pg = NULL;
	free(queue);
	queue = NULL;
	qcap = qlen = qhead = 0;
}
