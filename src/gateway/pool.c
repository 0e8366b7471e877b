/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  The connection pool (a slot waited for a bounded time, then 503;
 *	  connected lazily, dropped when broken) and the workers, started as
 *	  needed so that a request waits for a slot, not a worker (README, "HTTP").
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "pool.h"
#include "server_int.h"

#define WORKER_IDLE_S	30		/* an idle worker ends after this */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;	/* waited on by CLOCK_MONOTONIC */
static GwConn *slots;
static int	pool_size;
static char *pool_conninfo;

static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_gone = PTHREAD_COND_INITIALIZER;
static GwReq *work_head;		/* under work_lock, linked by next */
static GwReq *work_tail;
static int	nqueued;
static int	idle_workers;
static int	nworkers;
static bool stopping;

/*
 * gw_pool_init
 *		Set up size empty slots; no connection is opened yet.
 */
bool
gw_pool_init(const char *conninfo, int size)
{
	slots = calloc(size, sizeof(GwConn));
	pool_conninfo = strdup(conninfo);
	if (slots == NULL || pool_conninfo == NULL)
		return false;
	pool_size = size;
	gw_metrics_add(GW_M_POOL_SIZE, size);
	return true;
}

/*
 * gw_pool_connect
 *		Open a connection (the pool's, a loop's, the publisher's, the feed's):
 *		the user's conninfo, last, overrides these defaults; keepalives
 *		find a server that went away without a word.
 */
PGconn *
gw_pool_connect(GwError *err)
{
	const char *keys[] = {"connect_timeout", "fallback_application_name", "keepalives_idle",
		"keepalives_interval", "keepalives_count", "dbname", NULL};
	const char *vals[] = {"5", GW_PROGRAM, "30", "10", "3", pool_conninfo, NULL};
	PGconn	   *conn = PQconnectdbParams(keys, vals, 1);
	size_t		n;

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
	{
		gw_metrics_add(GW_M_DB_CONNECTS, 1);
		return conn;
	}
	gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "the catalog database is unavailable");
	gw_error_detail(err, "%s", conn ? PQerrorMessage(conn) : "out of memory");
	n = strlen(err->detail);
	while (n > 0 && (err->detail[n - 1] == '\n' || err->detail[n - 1] == ' '))
		err->detail[--n] = '\0';
	PQfinish(conn);
	gw_metrics_add(GW_M_DB_CONNECT_FAILURES, 1);
	return NULL;
}

/*
 * idle_ok
 *		Check a pooled connection before anything is sent on it: an idle
 *		session receives next to nothing, so something to read is usually
 *		the server closing it (a loss noticed now is safe to replace).
 */
static bool
idle_ok(PGconn *conn)
{
	struct pollfd pfd = {PQsocket(conn), POLLIN, 0};

	if (PQtransactionStatus(conn) != PQTRANS_IDLE || pfd.fd < 0)	/* UNKNOWN if bad */
		return false;
	/* read it: a FATAL message, then end of file, marks it bad */
	for (int i = 0; i < 4 && poll(&pfd, 1, 0) > 0; i++)
		if (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK)
			return false;
	return true;
}

/*
 * drop
 *		Close a slot's connection; the next user opens a new session.
 */
static void
drop(GwConn *c)
{
	if (c->conn != NULL)
		gw_metrics_add(GW_M_DB_RECONNECTS, 1);
	PQfinish(c->conn);
	c->conn = NULL;
	c->prep.n = 0;				/* a new session has no prepared statements */
}

/*
 * gw_pool_acquire
 *		A free slot with a connection, waited for at most wait_ms; NULL
 *		with err set (503) on timeout or if the database is unreachable.
 */
GwConn *
gw_pool_acquire(int wait_ms, GwError *err)
{
	struct timespec deadline;
	struct timespec started;
	bool		waited = false;
	GwConn	   *c = NULL;

	clock_gettime(CLOCK_MONOTONIC, &started);
	deadline.tv_nsec = started.tv_nsec + wait_ms % 1000 * 1000000L;
	deadline.tv_sec = started.tv_sec + wait_ms / 1000 + deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;

	pthread_mutex_lock(&pool_lock);
	for (;;)
	{
		/* a free slot, preferably one that already has a connection */
		for (int i = 0; i < pool_size; i++)
			if (!slots[i].busy && (c == NULL || (c->conn == NULL && slots[i].conn != NULL)))
				c = &slots[i];
		if (c != NULL)
		{
			c->busy = true;
			gw_metrics_add(GW_M_POOL_IN_USE, 1);
			break;
		}
		waited = true;
		if (pthread_cond_clockwait(&pool_cond, &pool_lock, CLOCK_MONOTONIC, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&pool_lock);

	if (waited)
	{
		gw_metrics_add(GW_M_POOL_WAITS, 1);
		gw_metrics_add(GW_M_POOL_WAIT_US, (long) (gw_ms_since(&started) * 1000));
		gw_metrics_add(GW_M_POOL_TIMEOUTS, c == NULL);
	}
	if (c == NULL)
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE,
					 "all %d catalog database connections are busy", pool_size);
		return NULL;
	}
	if (c->conn != NULL && !idle_ok(c->conn))
		drop(c);				/* closed while pooled: nothing was sent */
	if (c->conn == NULL && (c->conn = gw_pool_connect(err)) == NULL)
	{
		gw_pool_release(c);
		return NULL;
	}
	return c;
}

/*
 * gw_pool_release
 *		Give a slot back, closing a connection broken, not idle or in a pipeline.
 */
void
gw_pool_release(GwConn *c)
{
	if (c->conn != NULL && (PQtransactionStatus(c->conn) != PQTRANS_IDLE ||
							PQpipelineStatus(c->conn) != PQ_PIPELINE_OFF))
		drop(c);
	pthread_mutex_lock(&pool_lock);
	c->busy = false;
	gw_metrics_add(GW_M_POOL_IN_USE, -1);
	pthread_cond_signal(&pool_cond);
	pthread_mutex_unlock(&pool_lock);
}

/*
 * gw_pool_discard
 *		Give a slot back and close its connection unconditionally.
 */
void
gw_pool_discard(GwConn *c)
{
	drop(c);
	gw_pool_release(c);
}

/*
 * gw_pool_shutdown
 *		Close every idle connection (at exit, after requests finished).
 */
void
gw_pool_shutdown(void)
{
	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < pool_size; i++)
		if (!slots[i].busy)
			drop(&slots[i]);
	pthread_mutex_unlock(&pool_lock);
}

/*
 * worker_main
 *		A worker: answer queued requests; end idle or at shutdown.
 */
static void *
worker_main(void *arg)
{
	GwReq	   *r = arg;

	while (r != NULL)
	{
		struct timespec until;

		gw_dispatch_run(&r->call, &r->req, &r->resp);
		gw_server_answer(r);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += WORKER_IDLE_S;
		pthread_mutex_lock(&work_lock);
		idle_workers++;
		while (work_head == NULL && !stopping)
			if (pthread_cond_timedwait(&work_ready, &work_lock, &until) == ETIMEDOUT)
				break;
		idle_workers--;
		if ((r = work_head) != NULL)
		{
			if ((work_head = r->next) == NULL)
				work_tail = NULL;
			nqueued--;
		}
		else if (--nworkers == 0)
			pthread_cond_broadcast(&work_gone);
		pthread_mutex_unlock(&work_lock);
	}
	return NULL;
}

/*
 * gw_worker_submit
 *		Queue a request (its connection suspended) for an idle worker, or
 *		start one; if none can be started, answer 503.
 */
void
gw_worker_submit(GwReq *r)
{
	pthread_t	t;
	int			rc = 0;

	gw_metrics_add(GW_M_LOOP_HANDOFFS, 1);
	r->next = NULL;
	pthread_mutex_lock(&work_lock);
	if (idle_workers > nqueued)
	{
		if (work_tail)
			work_tail->next = r;
		else
			work_head = r;
		work_tail = r;
		nqueued++;
		pthread_cond_signal(&work_ready);
	}
	else if ((rc = pthread_create(&t, NULL, worker_main, r)) == 0)
	{
		nworkers++;
		pthread_detach(t);
	}
	pthread_mutex_unlock(&work_lock);
	if (rc != 0)
	{
		fprintf(stderr, "%s: cannot start a worker: %s\n", GW_PROGRAM, strerror(rc));
		gw_server_fail(r, LANCE_SERVICE_UNAVAILABLE, 0, "the gateway cannot start a worker");
		gw_server_answer(r);
	}
}

/*
 * gw_worker_stop
 *		At shutdown, nothing in flight: end the workers, wait for them.
 */
void
gw_worker_stop(void)
{
	pthread_mutex_lock(&work_lock);
	stopping = true;
	pthread_cond_broadcast(&work_ready);
	while (nworkers > 0 && work_head == NULL)
		pthread_cond_wait(&work_gone, &work_lock);
	pthread_mutex_unlock(&work_lock);
}
