/*-------------------------------------------------------------------------
 *
 * evloop.c
 *	  The gateway's event loops (--loops, one by default).  A loop is one
 *	  thread with epoll that accepts connections, waits for their requests
 *	  and answers those that need nothing but a read's statement (or
 *	  nothing at all: /health, /metrics, errors), sending the statements
 *	  of many connections down its one pipelined database connection
 *	  (evloop_db.c).  A connection whose request may block is handed to a
 *	  connection thread (http.c), which hands it back to its loop once it
 *	  waits for a new request.  Several loops share the listening socket;
 *	  a connection stays with the loop that accepted it.
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

static int	listen_fd = -1;
static GwLoop loops[GW_MAX_LOOPS];
static int	nloops;

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
	epoll_ctl(c->loop->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c->fd, &ev);
	c->watched = on;
}

/*
 * own
 *		Put a connection on the loop's list and watch it.
 */
static void
own(GwLoop *L, GwHttpConn *c)
{
	c->loop = L;
	c->owned = true;
	c->in_call = false;
	c->to_close = false;
	c->loop_prev = NULL;
	c->loop_next = L->owned;
	if (L->owned)
		L->owned->loop_prev = c;
	L->owned = c;
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
	GwLoop	   *L = c->loop;

	watch(c, false);
	if (c->loop_prev)
		c->loop_prev->loop_next = c->loop_next;
	else
		L->owned = c->loop_next;
	if (c->loop_next)
		c->loop_next->loop_prev = c->loop_prev;
	c->owned = false;
	c->to_close = to_close;
	c->loop_next = L->later;
	L->later = c;
}

/*
 * settle
 *		After a batch: close or hand over what was disowned in it.
 */
static void
settle(GwLoop *L)
{
	while (L->later != NULL)
	{
		GwHttpConn *c = L->later;

		L->later = c->loop_next;
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
 * watch_listener
 *		Start or stop watching the listening socket.
 */
static void
watch_listener(GwLoop *L, bool on)
{
	struct epoll_event ev;

	if (L->accepting == on)
		return;
	ev.events = EPOLLIN | (nloops > 1 ? EPOLLEXCLUSIVE : 0);
	ev.data.u64 = GW_EV_LISTEN;
	if (epoll_ctl(L->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, listen_fd, &ev) == 0)
		L->accepting = on;
}

/*
 * accept_some
 *		Accept what is waiting, a batch at most.
 */
static void
accept_some(GwLoop *L)
{
	static __thread time_t last_complaint;

	for (int i = 0; i < ACCEPT_BATCH; i++)
	{
		int			fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		GwHttpConn *c;

		if (fd < 0)
		{
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			{
				/*
				 * Out of descriptors or memory: the socket stays readable,
				 * so stop watching it until the next scan (a second), and
				 * complain once a second.
				 */
				watch_listener(L, false);
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
			own(L, c);
	}
}

/*
 * take_adopted
 *		Own the connections that threads handed back.
 */
static void
take_adopted(GwLoop *L)
{
	GwHttpConn *list;
	uint64_t	n;

	if (read(L->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: event loop: %s\n", GW_PROGRAM, strerror(errno));
	pthread_mutex_lock(&L->lock);
	list = L->adopted;
	L->adopted = NULL;
	pthread_mutex_unlock(&L->lock);
	while (list != NULL)
	{
		GwHttpConn *c = list;

		list = c->loop_next;
		own(L, c);
	}
	gw_evdb_take_connection(L);
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
scan(GwLoop *L)
{
	struct timespec now;
	GwHttpConn *next;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (GwHttpConn *c = L->owned; c != NULL; c = next)
	{
		long		waited = ms_since(&c->wait_start, &now);

		next = c->loop_next;
		if (c->in_call)
			continue;
		if (c->len == 0)
		{
			if (L->stopping || waited >= gw_config.idle_timeout_s * 1000L)
				disown(c, true);
		}
		else if (L->stopping || waited >= gw_config.request_timeout_s * 1000L)
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
loop_ended(GwLoop *L)
{
	bool		done;

	if (L->owned != NULL || gw_evdb_pending(L) > 0)
		return false;
	pthread_mutex_lock(&L->lock);
	done = (L->adopted == NULL);
	if (done)
		L->closed = true;
	pthread_mutex_unlock(&L->lock);
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
	GwLoop	   *L = arg;
	struct epoll_event evs[MAX_EVENTS];
	struct timespec last_scan;

	clock_gettime(CLOCK_MONOTONIC, &last_scan);
	gw_evdb_connect(L);
	for (;;)
	{
		int			n = epoll_wait(L->ep, evs, MAX_EVENTS, L->stopping ? 20 : SCAN_MS);
		struct timespec now;

		if (n < 0 && errno != EINTR)
		{
			fprintf(stderr, "%s: event loop: %s\n", GW_PROGRAM, strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == GW_EV_DB)
				gw_evdb_event(L, evs[i].events);
		for (int i = 0; i < n; i++)
		{
			switch (evs[i].data.u64)
			{
				case GW_EV_DB:
					break;
				case GW_EV_LISTEN:
					if (!L->stopping)
						accept_some(L);
					break;
				case GW_EV_WAKE:
					take_adopted(L);
					break;
				case GW_EV_STOP:
					if (!L->stopping)
					{
						L->stopping = true;
						watch_listener(L, false);
						epoll_ctl(L->ep, EPOLL_CTL_DEL, gw_http_stop_pipe[0], NULL);
					}
					break;
				default:
					on_readable(evs[i].data.ptr);
					break;
			}
		}
		gw_evdb_flush(L);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (L->stopping || ms_since(&last_scan, &now) >= SCAN_MS)
		{
			scan(L);
			if (!L->stopping)
			{
				watch_listener(L, true);	/* if accepting was paused */
				gw_evdb_connect(L); /* if the connection is down: reopen it */
			}
			last_scan = now;
		}
		settle(L);
		if (L->stopping && loop_ended(L))
			break;
	}
	gw_evdb_close(L);
	return NULL;
}

/*
 * start_loop
 *		Set up one loop on the listening socket and start its thread.
 *		With several loops, each wakes for the socket alone
 *		(EPOLLEXCLUSIVE), so one of them accepts a new connection.
 */
static bool
start_loop(GwLoop *L)
{
	struct epoll_event ev;

	pthread_mutex_init(&L->lock, NULL);
	pthread_mutex_init(&L->db_lock, NULL);
	L->ep = epoll_create1(EPOLL_CLOEXEC);
	L->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (L->ep < 0 || L->wake_fd < 0)
		return false;
	watch_listener(L, true);
	if (!L->accepting)
		return false;
	ev.events = EPOLLIN;
	ev.data.u64 = GW_EV_WAKE;
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, L->wake_fd, &ev) != 0)
		return false;
	ev.data.u64 = GW_EV_STOP;
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, gw_http_stop_pipe[0], &ev) != 0)
		return false;
	L->started = pthread_create(&L->thread, NULL, loop_main, L) == 0;
	return L->started;
}

/*
 * gw_loop_start
 *		Start n event loops (--loops) on a listening socket.
 */
bool
gw_loop_start(int lfd, int n)
{
	listen_fd = lfd;
	nloops = n < GW_MAX_LOOPS ? n : GW_MAX_LOOPS;
	for (int i = 0; i < nloops; i++)
		if (!start_loop(&loops[i]))
			return false;
	return true;
}

/*
 * gw_loop_wake
 *		Wake a loop (from any thread).
 */
void
gw_loop_wake(GwLoop *L)
{
	uint64_t	one = 1;

	if (write(L->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: cannot wake the event loop: %s\n", GW_PROGRAM, strerror(errno));
}

/*
 * gw_loop_adopt
 *		From a connection thread: give a connection that waits for its next
 *		request back to its loop.  False once the loop has ended (the
 *		caller closes it).
 */
bool
gw_loop_adopt(GwHttpConn *c)
{
	GwLoop	   *L = c->loop;

	pthread_mutex_lock(&L->lock);
	if (L->closed)
	{
		pthread_mutex_unlock(&L->lock);
		return false;
	}
	c->loop_next = L->adopted;
	L->adopted = c;
	pthread_mutex_unlock(&L->lock);
	gw_loop_wake(L);
	return true;
}

/*
 * gw_loop_join
 *		Wait for the loops to end (after gw_http_stop closed everything).
 *		A loop's structure stays: a connect thread may still report to it.
 */
void
gw_loop_join(void)
{
	for (int i = 0; i < nloops; i++)
	{
		GwLoop	   *L = &loops[i];

		if (!L->started)
			continue;
		pthread_join(L->thread, NULL);
		L->started = false;
		close(L->wake_fd);
		close(L->ep);
		L->wake_fd = L->ep = -1;
	}
	nloops = 0;
}
