/*-------------------------------------------------------------------------
 *
 * evloop.c
 *	  The gateway's event loop: one thread with epoll that accepts
 *	  connections, waits for their requests and answers those that need
 *	  nothing but their statement (the catalog's reads and single-statement
 *	  writes, /health, /metrics, errors), sending the statements of many
 *	  connections down one pipelined database connection (evloop_db.c).
 *	  A connection whose request may block is handed to a connection
 *	  thread (http.c), which hands it back once it waits for a new request.
 *
 *	  A connection belongs to the loop while it is on the loop's list
 *	  ("owned").  Closing one, or handing it to a thread, happens after
 *	  the batch of events at hand, so that a later event of the same batch
 *	  never refers to a connection that is gone or in another thread.
 *
 *	  The loop closes connections that stay idle for --idle-timeout, and
 *	  hands those whose request does not arrive within --request-timeout
 *	  to a thread, which answers 408.  At a graceful stop it stops
 *	  accepting, answers what is in the pipeline, closes its idle
 *	  connections and ends once it has none left.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "evloop.h"
#include "evloop_int.h"
#include "metrics.h"

#define MAX_EVENTS		256
#define ACCEPT_BATCH	64		/* connections accepted per wake-up */
#define SCAN_MS			1000	/* how often timeouts are checked */

int			gw_loop_epoll = -1;

static int	listen_fd = -1;
static int	wake_fd = -1;
static pthread_t loop_thread;

/* connections handed back by threads, linked by loop_next; under lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GwHttpConn *adopted;
static bool closed;				/* the loop ended: nothing more is adopted */

/* the loop thread's own state */
static GwHttpConn *owned;		/* the loop's connections (loop_prev/next) */
static GwHttpConn *later;		/* disowned in this batch (loop_next) */
static bool stopping;

/*
 * watch
 *		Start or stop watching a connection's readiness.
 */
static void
watch(GwHttpConn *c, bool on)
{
	struct epoll_event ev;

	if (c->watched == on)
		return;
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	epoll_ctl(gw_loop_epoll, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c->fd, &ev);
	c->watched = on;
}

/*
 * own
 *		Put a connection on the loop's list and watch it.
 */
static void
own(GwHttpConn *c)
{
	c->owned = true;
	c->in_call = false;
	c->to_close = false;
	c->loop_prev = NULL;
	c->loop_next = owned;
	if (owned)
		owned->loop_prev = c;
	owned = c;
	watch(c, true);
}

/*
 * disown
 *		Take a connection off the loop's list; after the batch it is closed
 *		(to_close) or handed to a thread (c->resume says what it does).
 */
static void
disown(GwHttpConn *c, bool to_close)
{
	watch(c, false);
	if (c->loop_prev)
		c->loop_prev->loop_next = c->loop_next;
	else
		owned = c->loop_next;
	if (c->loop_next)
		c->loop_next->loop_prev = c->loop_prev;
	c->owned = false;
	c->to_close = to_close;
	c->loop_next = later;
	later = c;
}

/*
 * settle
 *		After a batch: close or hand over what was disowned in it.
 */
static void
settle(void)
{
	while (later != NULL)
	{
		GwHttpConn *c = later;

		later = c->loop_next;
		if (c->to_close)
			gw_http_close(c);
		else
		{
			gw_metrics_add(GW_M_LOOP_HANDOFFS, 1);
			gw_http_thread_serve(c);
		}
	}
}

/*
 * gw_loop_drive
 *		Take a connection as far as it goes without waiting: requests in
 *		its buffer are answered or their statements sent, until it waits
 *		for bytes or its call's result, or leaves the loop.
 */
void
gw_loop_drive(GwHttpConn *c, GwLoopStep step)
{
	for (;;)
	{
		switch (step)
		{
			case GW_LOOP_NEXT:
				step = gw_http_loop_request(c);
				continue;
			case GW_LOOP_CALL:
				step = gw_evdb_send(c);
				continue;
			case GW_LOOP_WAIT:
				/* waiting for bytes, or for the call (c->in_call) */
				if (!c->in_call)
					watch(c, true);
				return;
			case GW_LOOP_THREAD:
				disown(c, false);
				return;
			case GW_LOOP_CLOSE:
				disown(c, true);
				return;
		}
	}
}

/*
 * on_readable
 *		A connection has bytes (or its end) to read.
 */
static void
on_readable(GwHttpConn *c)
{
	if (!c->owned)
		return;					/* disowned earlier in this batch */
	if (c->in_call)
	{
		/* the next request waits for this one's answer */
		watch(c, false);
		return;
	}
	gw_loop_drive(c, gw_http_loop_read(c));
}

/*
 * accept_some
 *		Accept what is waiting, a batch at most.
 */
static void
accept_some(void)
{
	static time_t last_complaint;

	for (int i = 0; i < ACCEPT_BATCH; i++)
	{
		int			fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		GwHttpConn *c;

		if (fd < 0)
		{
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			{
				/* out of descriptors or memory: complain once a second */
				if (time(NULL) != last_complaint)
				{
					last_complaint = time(NULL);
					fprintf(stderr, "%s: cannot accept a connection: %s\n", GW_PROGRAM, strerror(errno));
				}
			}
			return;
		}
		c = gw_http_accepted(fd);
		if (c != NULL)
			own(c);
	}
}

/*
 * take_adopted
 *		Own the connections that threads handed back.
 */
static void
take_adopted(void)
{
	GwHttpConn *list;
	uint64_t	n;

	if (read(wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: event loop: %s\n", GW_PROGRAM, strerror(errno));
	pthread_mutex_lock(&lock);
	list = adopted;
	adopted = NULL;
	pthread_mutex_unlock(&lock);
	while (list != NULL)
	{
		GwHttpConn *c = list;

		list = c->loop_next;
		own(c);
	}
	gw_evdb_take_connection();
}

/*
 * ms_since
 *		Milliseconds from t until now.
 */
static long
ms_since(const struct timespec *t, const struct timespec *now)
{
	return (now->tv_sec - t->tv_sec) * 1000L + (now->tv_nsec - t->tv_nsec) / 1000000L;
}

/*
 * scan
 *		Timeouts: an idle connection past --idle-timeout is closed; one
 *		whose request has not fully arrived within --request-timeout goes
 *		to a thread, which answers 408.  At a stop, every idle connection
 *		is closed and a partial request goes to a thread.
 */
static void
scan(void)
{
	struct timespec now;
	GwHttpConn *next;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (GwHttpConn *c = owned; c != NULL; c = next)
	{
		long		waited = ms_since(&c->wait_start, &now);

		next = c->loop_next;
		if (c->in_call)
			continue;
		if (c->len == 0)
		{
			if (stopping || waited >= gw_config.idle_timeout_s * 1000L)
				disown(c, true);
		}
		else if (stopping || waited >= gw_config.request_timeout_s * 1000L)
		{
			c->resume = GW_RESUME_REQUEST;
			disown(c, false);
		}
	}
}

/*
 * loop_ended
 *		At a stop: true once nothing is left to the loop.  Threads that
 *		finish later close their connections themselves.
 */
static bool
loop_ended(void)
{
	bool		done;

	if (owned != NULL || gw_evdb_pending() > 0)
		return false;
	pthread_mutex_lock(&lock);
	done = (adopted == NULL);
	if (done)
		closed = true;
	pthread_mutex_unlock(&lock);
	return done;
}

/*
 * loop_main
 *		The loop.  The database's events of a batch come first, so that a
 *		connection the server closed is noticed before a statement is sent
 *		down it.
 */
static void *
loop_main(void *arg)
{
	struct epoll_event evs[MAX_EVENTS];
	struct timespec last_scan;

	(void) arg;
	clock_gettime(CLOCK_MONOTONIC, &last_scan);
	gw_evdb_connect();
	for (;;)
	{
		int			n = epoll_wait(gw_loop_epoll, evs, MAX_EVENTS, stopping ? 20 : SCAN_MS);
		struct timespec now;

		if (n < 0 && errno != EINTR)
		{
			fprintf(stderr, "%s: event loop: %s\n", GW_PROGRAM, strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == GW_EV_DB)
				gw_evdb_event(evs[i].events);
		for (int i = 0; i < n; i++)
		{
			switch (evs[i].data.u64)
			{
				case GW_EV_DB:
					break;
				case GW_EV_LISTEN:
					if (!stopping)
						accept_some();
					break;
				case GW_EV_WAKE:
					take_adopted();
					break;
				case GW_EV_STOP:
					if (!stopping)
					{
						stopping = true;
						epoll_ctl(gw_loop_epoll, EPOLL_CTL_DEL, listen_fd, NULL);
						epoll_ctl(gw_loop_epoll, EPOLL_CTL_DEL, gw_http_stop_pipe[0], NULL);
					}
					break;
				default:
					on_readable(evs[i].data.ptr);
					break;
			}
		}
		gw_evdb_flush();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (stopping || ms_since(&last_scan, &now) >= SCAN_MS)
		{
			scan();
			if (!stopping)
				gw_evdb_connect();	/* if the connection is down: reopen it */
			last_scan = now;
		}
		settle();
		if (stopping && loop_ended())
			break;
	}
	gw_evdb_close();
	return NULL;
}

/*
 * gw_loop_start
 *		Start the event loop on a listening socket.
 */
bool
gw_loop_start(int lfd)
{
	struct epoll_event ev;

	listen_fd = lfd;
	gw_loop_epoll = epoll_create1(EPOLL_CLOEXEC);
	wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (gw_loop_epoll < 0 || wake_fd < 0)
		return false;
	ev.events = EPOLLIN;
	ev.data.u64 = GW_EV_LISTEN;
	if (epoll_ctl(gw_loop_epoll, EPOLL_CTL_ADD, listen_fd, &ev) != 0)
		return false;
	ev.data.u64 = GW_EV_WAKE;
	if (epoll_ctl(gw_loop_epoll, EPOLL_CTL_ADD, wake_fd, &ev) != 0)
		return false;
	ev.data.u64 = GW_EV_STOP;
	if (epoll_ctl(gw_loop_epoll, EPOLL_CTL_ADD, gw_http_stop_pipe[0], &ev) != 0)
		return false;
	return pthread_create(&loop_thread, NULL, loop_main, NULL) == 0;
}

/*
 * gw_loop_wake
 *		Wake the loop (from any thread).
 */
void
gw_loop_wake(void)
{
	uint64_t	one = 1;

	if (write(wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: cannot wake the event loop: %s\n", GW_PROGRAM, strerror(errno));
}

/*
 * gw_loop_adopt
 *		From a connection thread: give a connection that waits for its next
 *		request back to the loop.  False once the loop has ended (the
 *		caller closes it).
 */
bool
gw_loop_adopt(GwHttpConn *c)
{
	pthread_mutex_lock(&lock);
	if (closed)
	{
		pthread_mutex_unlock(&lock);
		return false;
	}
	c->loop_next = adopted;
	adopted = c;
	pthread_mutex_unlock(&lock);
	gw_loop_wake();
	return true;
}

/*
 * gw_loop_join
 *		Wait for the loop to end (after gw_http_stop closed everything).
 */
void
gw_loop_join(void)
{
	pthread_join(loop_thread, NULL);
	close(wake_fd);
	close(gw_loop_epoll);
	wake_fd = gw_loop_epoll = -1;
}
