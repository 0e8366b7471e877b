/*-------------------------------------------------------------------------
 *
 * pipeline.c
 *	  A loop's database connection: one non-blocking libpq connection in
 *	  pipeline mode for all the loop's reads, opened by a short-lived thread
 *	  (src/gateway/README.md, "Reads share one pipelined connection").
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>

#include "db.h"
#include "metrics.h"
#include "pool.h"
#include "router.h"
#include "server_int.h"

#define RECONNECT_GAP_MS 1000	/* between connection attempts, at least */
#define LOCK_BYPASS_MS	1000	/* reads go to workers after a lock wait */
#define SYNC_EVERY		4		/* calls per Sync, at most (gw_pipe_send) */

/* lock_timeout $1 (such as "50ms") unless a shorter one is in effect */
#define SQL_LOCK_WAIT \
	"SELECT pg_catalog.set_config('lock_timeout', $1, false)" \
	" WHERE pg_catalog.current_setting('lock_timeout') = '0'" \
	" OR pg_catalog.current_setting('lock_timeout')::pg_catalog.interval" \
	" > $1::pg_catalog.interval"

/*
 * connect_main
 *		The connect thread: open the loop's connection, hand it over.
 */
static void *
connect_main(void *arg)
{
	GwLoop	   *L = arg;
	char		wait[32];
	const char *params[1] = {wait};
	GwError		err;
	PGconn	   *conn = gw_pool_connect(&err);

	snprintf(wait, sizeof(wait), "%dms", gw_config.loop_lock_wait_ms);
	if (conn != NULL && ((gw_config.loop_lock_wait_ms > 0 &&
						  !gw_db_exec(conn, SQL_LOCK_WAIT, 1, params, NULL, NULL, &err)) ||
						 PQsetnonblocking(conn, 1) != 0 || PQenterPipelineMode(conn) != 1))
	{
		PQfinish(conn);
		conn = NULL;
	}
	pthread_mutex_lock(&L->db_lock);
	if (L->db_closed)
		PQfinish(conn);			/* the loop has ended */
	else
	{
		L->opened = conn;
		L->attempt_done = true;
		gw_loop_wake(L);		/* under the lock: gw_pipe_close has not run */
	}
	pthread_mutex_unlock(&L->db_lock);
	return NULL;
}

/*
 * gw_pipe_connect
 *		Start opening a connection, unless one is open or being opened or
 *		was tried less than RECONNECT_GAP_MS ago.
 */
void
gw_pipe_connect(GwLoop *L)
{
	pthread_t	t;

	if (L->pg != NULL || L->connecting ||
		(L->last_attempt.tv_sec != 0 && gw_ms_since(&L->last_attempt) < RECONNECT_GAP_MS))
		return;
	clock_gettime(CLOCK_MONOTONIC, &L->last_attempt);
	L->connecting = pthread_create(&t, NULL, connect_main, L) == 0;
	if (L->connecting)
		pthread_detach(t);
}

/*
 * gw_pipe_take_connection
 *		After a wake-up: use the connection the connect thread opened.
 */
void
gw_pipe_take_connection(GwLoop *L)
{
	struct epoll_event ev = {EPOLLIN, {.u64 = GW_EV_PIPE}};
	PGconn	   *conn;
	bool		done;

	pthread_mutex_lock(&L->db_lock);
	conn = L->opened;
	done = L->attempt_done;
	L->opened = NULL;
	L->attempt_done = false;
	pthread_mutex_unlock(&L->db_lock);
	if (!done)
		return;
	L->connecting = false;
	if (conn != NULL && epoll_ctl(L->ep, EPOLL_CTL_ADD, PQsocket(conn), &ev) != 0)
		PQfinish(conn);
	else if (conn != NULL)
	{
		L->pg = conn;
		gw_metrics_add(GW_M_LOOP_CONNECTED, 1);
		L->want_write = false;
		L->prep.n = 0;			/* a new session has no prepared statements */
	}
}

/*
 * pop
 *		Take the call at the queue's head off the queue.
 */
static GwReq *
pop(GwLoop *L)
{
	GwReq	   *r = L->qhead;

	if ((L->qhead = r->next) == NULL)
		L->qtail = NULL;
	gw_metrics_add(GW_M_LOOP_CALLS, -1);
	return r;
}

/*
 * reply
 *		Answer a request from its call's result (malloc'd) or error.
 */
static void
reply(GwReq *r, char *result, const GwError *err)
{
	gw_dispatch_finish(&r->call, result, err, &r->resp);
	gw_metrics_add(GW_M_LOOP_ANSWERED, 1);
	gw_server_answer(r);
}

/*
 * lost
 *		The connection broke: answer its calls 503 (outcome unknown).
 */
static void
lost(GwLoop *L)
{
	GwError		err;
	char		sqlstate[6];
	PGconn	   *old = L->pg;

	gw_db_error(old, NULL, NULL, sqlstate, &err);
	epoll_ctl(L->ep, EPOLL_CTL_DEL, PQsocket(old), NULL);
	L->pg = NULL;
	PQfinish(old);
	L->unsynced = 0;
	gw_metrics_add(GW_M_LOOP_CONNECTED, -1);
	gw_metrics_add(GW_M_DB_RECONNECTS, 1);
	while (L->qhead != NULL)
	{
		GwReq	   *r = pop(L);

		free(r->pipe.value);
		reply(r, NULL, &err);
	}
	gw_pipe_connect(L);
}

/*
 * end_group
 *		A Sync after the calls sent since the last one, the queue's tail.
 */
static bool
end_group(GwLoop *L)
{
	L->unsynced = 0;
	L->qtail->pipe.synced = true;
	return PQpipelineSync(L->pg) == 1;
}

/*
 * gw_pipe_send
 *		Send a request's call down the pipeline; false if the loop cannot
 *		take it now (no connection, a lock wait lately).  A Sync ends each
 *		SYNC_EVERY calls and a wake-up's last (the server's transaction and
 *		flush per group; a failure skips the rest of its group: complete).
 */
bool
gw_pipe_send(GwReq *r)
{
	GwLoop	   *L = r->loop;
	const char *text;
	GwError		err;			/* out of memory: the worker says so */

	if (L->bypass_from.tv_sec != 0 && gw_ms_since(&L->bypass_from) >= LOCK_BYPASS_MS)
		L->bypass_from.tv_sec = 0;	/* the lock wait is long enough ago */
	if (L->pg == NULL || L->bypass_from.tv_sec != 0 || (text = gw_call_text(&r->call, &err)) == NULL)
	{
		gw_pipe_connect(L);
		return false;
	}
	r->pipe = (GwPipe) {.conn = L->pg, .prep = &L->prep, .err = &L->head_err,
		.function = r->call.route->function};
	if (!gw_db_queue_call(&r->pipe, text, &r->call.info))
	{
		/* the connection is out of step: drop it, run this one elsewhere */
		lost(L);
		return false;
	}
	r->next = NULL;
	if (L->qtail)
		L->qtail->next = r;
	else
		L->qhead = r;
	L->qtail = r;
	gw_metrics_add(GW_M_LOOP_CALLS, 1);
	if (++L->unsynced == SYNC_EVERY && !end_group(L))
		lost(L);				/* r's answer too */
	return true;
}

/*
 * complete
 *		The results of the call at the queue's head arrived (and the Sync
 *		after it, if one follows): answer it, send it again if the server
 *		skipped it, or give it to a worker to run again (serialization
 *		failure, deadlock, a failed Prepare, the lock wait).
 */
static void
complete(GwLoop *L)
{
	GwReq	   *r = pop(L);
	const char *state = r->pipe.sqlstate;

	if (r->pipe.aborted)
	{
		/* skipped after a failure before it in its group: again */
		if (!gw_pipe_send(r))
			gw_worker_submit(r);
		return;
	}
	if (!r->pipe.failed)
	{
		reply(r, r->pipe.value, NULL);
		return;
	}
	free(r->pipe.value);
	if (strcmp(state, "55P03") == 0)
		clock_gettime(CLOCK_MONOTONIC, &L->bypass_from);
	if (gw_db_retryable(state) || strcmp(state, "26000") == 0 || strcmp(state, "55P03") == 0)
		gw_worker_submit(r);
	else
		reply(r, NULL, &L->head_err);
}

/*
 * gw_pipe_read
 *		The socket is readable (or failed): answer the calls whose results came.
 */
void
gw_pipe_read(GwLoop *L)
{
	if (L->pg != NULL && PQconsumeInput(L->pg) != 1)
		lost(L);				/* L->pg is NULL from here */
	while (L->pg != NULL && L->qhead != NULL && PQisBusy(L->pg) == 0)
	{
		GwPipe	   *p = &L->qhead->pipe;
		GwPipeStep	step = gw_db_result(p, PQgetResult(L->pg));

		if (step == GW_PIPE_SYNC || (step == GW_PIPE_MORE && !p->synced && p->at >= p->n))
			complete(L);
		else if (step == GW_PIPE_IDLE)
			break;
	}
	if (L->pg != NULL && PQstatus(L->pg) != CONNECTION_OK)
		lost(L);
}

/*
 * gw_pipe_flush
 *		End a wake-up: a Sync after its last calls, then send what libpq
 *		holds (EPOLLOUT while the socket cannot take it all).
 */
void
gw_pipe_flush(GwLoop *L)
{
	int			rc = L->unsynced > 0 && !end_group(L) ? -1 : L->pg ? PQflush(L->pg) : 0;
	struct epoll_event ev = {EPOLLIN | (rc == 1 ? EPOLLOUT : 0), {.u64 = GW_EV_PIPE}};

	if (rc < 0)
		lost(L);
	else if (L->pg != NULL && (rc == 1) != L->want_write)
	{
		L->want_write = rc == 1;
		epoll_ctl(L->ep, EPOLL_CTL_MOD, PQsocket(L->pg), &ev);
	}
}

/*
 * gw_pipe_close
 *		When the loop ends: close its connections, open or being opened.
 */
void
gw_pipe_close(GwLoop *L)
{
	pthread_mutex_lock(&L->db_lock);
	L->db_closed = true;
	PQfinish(L->opened);
	L->opened = NULL;
	pthread_mutex_unlock(&L->db_lock);
	gw_metrics_add(GW_M_LOOP_CONNECTED, -(L->pg != NULL));
	PQfinish(L->pg);
	L->pg = NULL;
	L->qhead = L->qtail = NULL;
}
