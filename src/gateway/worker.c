/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The workers: threads that answer the requests a loop must not wait
 *	  for (dispatch.c, blocks()) and the reads its pipeline gives back,
 *	  each on a pooled connection.  A worker answers the request and
 *	  resumes its connection; the loop sends the answer.  Workers start as
 *	  needed, so that a request waits for a database connection
 *	  (--pool-wait-ms), not for a worker, and end after a while idle.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "server_int.h"

#define WORKER_IDLE_S	30		/* an idle worker ends after this */

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
 * worker_main
 *		A worker: answer queued requests; end idle or at shutdown.
 */
static void *
worker_main(void *arg)
{
	GwReq	   *r = arg;

	for (;;)
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
		r = work_head;
		if (r != NULL)
		{
			work_head = r->next;
			if (work_head == NULL)
				work_tail = NULL;
			nqueued--;
		}
		else
		{
			nworkers--;
			pthread_cond_broadcast(&work_gone);
		}
		pthread_mutex_unlock(&work_lock);
		if (r == NULL)
			return NULL;
	}
}

/*
 * gw_worker_submit
 *		Queue a request (its connection suspended) for an idle worker, or
 *		start a new one.  A worker that cannot be started answers 503.
 */
void
gw_worker_submit(GwReq *r)
{
	pthread_t	t;
	int			rc;

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
		pthread_mutex_unlock(&work_lock);
		return;
	}
	nworkers++;
	pthread_mutex_unlock(&work_lock);

	if ((rc = pthread_create(&t, NULL, worker_main, r)) == 0)
		pthread_detach(t);
	else
	{
		fprintf(stderr, "%s: cannot start a worker: %s\n", GW_PROGRAM, strerror(rc));
		pthread_mutex_lock(&work_lock);
		nworkers--;
		pthread_mutex_unlock(&work_lock);
		gw_server_fail(r, GW_ERR_UNAVAILABLE, 0, "the gateway cannot start a worker");
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
