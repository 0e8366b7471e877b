/*-------------------------------------------------------------------------
 *
 * feed_poll.c
 *	  The change feed's source: a thread that reads committed table
 *	  versions from the catalog's history with lance_changes().
 *
 *	  The history is an outbox.  The poller keeps a cursor, a PostgreSQL
 *	  snapshot (pg_snapshot text), and asks lance_namespace.lance_changes
 *	  for the versions whose transactions became visible since; every
 *	  answer carries the next cursor.  So each committed version is read
 *	  exactly once, never one that rolled back, and none is lost while the
 *	  database restarts: the cursor outlives the connection.  Commits are
 *	  not serialized by a NOTIFY lock, as they were when the feed was
 *	  LISTEN/NOTIFY.
 *
 *	  The poller holds a cursor only while someone subscribes: with no
 *	  subscriber it reads nothing and only keeps its connection alive.
 *	  Each poll's commits go to the feed's log (feed.c) together with the
 *	  poll's new cursor, which follows them as the stream's event id;
 *	  subscribers catch themselves up.
 *	  It polls every LANCE_GATEWAY_FEED_POLL_MS, and at once (at most
 *	  every FEED_MIN_GAP_MS) after the gateway committed a version itself
 *	  (gw_feed_poke()).
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "feed_int.h"
#include "metrics.h"
#include "pool.h"

#define FEED_MIN_GAP_MS		5
#define FEED_IDLE_PING_MS	30000

/* the cursor and the versions after it, in the order to send them */
#define POLL_SQL \
	"SELECT s.cur::text, c.payload::text" \
	"  FROM lance_namespace.lance_changes_cursor() AS s(cur)" \
	"  LEFT JOIN lance_namespace.lance_changes($1::pg_catalog.pg_snapshot)" \
	"       WITH ORDINALITY AS c ON true" \
	" ORDER BY c.ordinality"

static pthread_t poller;
static bool poller_started;
static atomic_bool poller_stop;
static atomic_bool poke_pending;
static int	wake_pipe[2] = {-1, -1};
static long poll_ms = 100;
static char *cursor;			/* the poller's own; NULL without subscribers */

/*
 * wake
 *		Make the poller's wait return.
 */
static void
wake(void)
{
	/* a full pipe already wakes it */
	if (write(wake_pipe[1], "x", 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: change feed: cannot wake the poller\n", GW_PROGRAM);
}

/*
 * gw_feed_poke
 *		The gateway committed versions: poll soon, if anyone subscribes.
 *		One wake-up covers every poke until the poll it causes.
 */
void
gw_feed_poke(void)
{
	if (!poller_started || !gw_feed_wanted())
		return;
	if (!atomic_exchange(&poke_pending, true))
		wake();
}

/*
 * gw_feed_poller_wake
 *		A subscriber arrived or left: re-examine the subscriptions now.
 */
void
gw_feed_poller_wake(void)
{
	if (poller_started)
		wake();
}

/*
 * poll_once
 *		Publish the versions committed since the cursor with the cursor
 *		that follows them; without a cursor, only the current one (where
 *		the feed starts).  False if the connection failed.
 */
static bool
poll_once(PGconn *conn)
{
	const char *params[1] = {cursor};
	PGresult   *res = PQexecParams(conn, POLL_SQL, 1, NULL, params, NULL, NULL, 0);
	const char *reset = NULL;
	const char **payloads;
	int			n = 0;
	char	   *next;

	gw_metrics_add(GW_M_FEED_POLLS, 1);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
	{
		if (PQstatus(conn) == CONNECTION_OK)
			fprintf(stderr, "%s: change feed: poll failed: %s", GW_PROGRAM, PQerrorMessage(conn));
		PQclear(res);
		return false;
	}
	next = strdup(PQgetvalue(res, 0, 0));
	payloads = calloc(PQntuples(res), sizeof(char *));
	if (next == NULL || payloads == NULL)
	{
		free(next);
		PQclear(res);
		return true;			/* try again later from the same cursor */
	}
	if (cursor != NULL && gw_feed_xmax(next) < gw_feed_xmax(cursor))
	{
		/* transaction ids went back: another database (a restore) */
		fprintf(stderr, "%s: change feed: the database's transaction ids went back; "
				"reading from its current snapshot\n", GW_PROGRAM);
		reset = "event: reset\ndata: {\"message\":\"the database's transaction ids "
			"went back (a restored database); commits may have been missed\"}\n\n";
	}
	for (int i = 0; reset == NULL && i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, 1))
			payloads[n++] = PQgetvalue(res, i, 1);
	gw_metrics_add(GW_M_FEED_COMMITS, n);
	free(cursor);
	cursor = next;
	gw_feed_publish(payloads, n, reset, cursor);
	free(payloads);
	PQclear(res);
	return true;
}

/*
 * wait_for_work
 *		Sleep until woken (poked, or a subscriber came, left or asks), the
 *		poll interval or a stream's look (or, while no one subscribes, the
 *		idle ping) is due, or the connection has something to say.
 *		Returns true if woken.
 */
static bool
wait_for_work(PGconn *conn, bool active, const struct timespec *last_poll)
{
	struct pollfd p[2] = {{wake_pipe[0], POLLIN, 0}, {PQsocket(conn), POLLIN, 0}};
	long		timeout = active ? poll_ms - gw_ms_since(last_poll) : FEED_IDLE_PING_MS;
	char		drain[64];
	bool		woken;

	if (active && timeout > GW_FEED_TICK_MS)
		timeout = GW_FEED_TICK_MS;
	if (poll(p, 2, timeout > 0 ? (int) timeout : 0) > 0 && p[1].revents != 0)
		PQconsumeInput(conn);	/* a notice, or the server closing */
	woken = p[0].revents != 0;
	while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
		;
	if (woken && active)
	{
		/* a poke: poll soon, but not more often than every FEED_MIN_GAP_MS */
		long		gap = FEED_MIN_GAP_MS - gw_ms_since(last_poll);

		if (gap > 0)
			poll(NULL, 0, (int) gap);
	}
	atomic_store(&poke_pending, false);
	return woken;
}

/*
 * serve
 *		Poll on conn while it works and we are not stopping, and serve the
 *		subscribers' streams (gw_feed_serve).
 */
static void
serve(PGconn *conn)
{
	struct timespec last_poll = {0, 0};
	bool		woken = true;

	while (!atomic_load(&poller_stop) && PQstatus(conn) == CONNECTION_OK)
	{
		if (cursor != NULL && gw_feed_drop_cursor())
		{
			free(cursor);
			cursor = NULL;
		}
		else if (cursor == NULL ? gw_feed_wanted() : woken || gw_ms_since(&last_poll) >= poll_ms)
		{
			clock_gettime(CLOCK_MONOTONIC, &last_poll);
			if (!poll_once(conn))
				return;
		}
		gw_feed_serve(conn);
		woken = wait_for_work(conn, cursor != NULL, &last_poll);
		if (!woken && cursor == NULL)
			PQclear(PQexec(conn, ""));	/* is the connection still alive? */
	}
}

/*
 * pause_ms
 *		Sleep while the poller has no connection, serving the streams;
 *		wake early when the poller is told to stop.
 */
static void
pause_ms(int ms)
{
	struct pollfd p = {wake_pipe[0], POLLIN, 0};
	char		drain[64];

	for (; ms > 0 && !atomic_load(&poller_stop); ms -= GW_FEED_TICK_MS)
	{
		gw_feed_serve(NULL);
		poll(&p, 1, ms < GW_FEED_TICK_MS ? ms : GW_FEED_TICK_MS);
		while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
			;
	}
}

/*
 * poller_main
 *		The poller thread: connect, serve, reconnect with backoff.  The
 *		cursor is kept across reconnections, so nothing committed in
 *		between is lost.
 */
static void *
poller_main(void *arg)
{
	int			backoff = 100;
	bool		ever = false;

	(void) arg;
	while (!atomic_load(&poller_stop))
	{
		GwError		err;
		PGconn	   *conn = gw_pool_connect(&err);

		if (conn == NULL)
		{
			pause_ms(backoff);
			backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
			continue;
		}
		backoff = 100;
		gw_metrics_add(GW_M_FEED_CONNECTED, 1);
		if (ever)
		{
			gw_metrics_add(GW_M_FEED_RECONNECTS, 1);
			fprintf(stderr, "%s: change feed: connected again\n", GW_PROGRAM);
		}
		gw_feed_set_connected(true, ever && cursor != NULL ?
							  "event: reconnected\ndata: {\"message\":\"the change feed "
							  "reconnected to the database; commits made meanwhile follow\"}\n\n" : NULL);
		ever = true;

		serve(conn);

		gw_metrics_add(GW_M_FEED_CONNECTED, -1);
		PQfinish(conn);
		if (!atomic_load(&poller_stop))
			fprintf(stderr, "%s: change feed: lost the database connection, reconnecting\n", GW_PROGRAM);
		gw_feed_set_connected(false, atomic_load(&poller_stop) ? NULL :
							  ": the change feed lost its database connection; reconnecting\n\n");
		gw_feed_serve(NULL);
	}
	free(cursor);
	cursor = NULL;
	return NULL;
}

/*
 * gw_feed_poller_start
 *		Start the poller thread.  False if it cannot be started.
 */
bool
gw_feed_poller_start(long interval_ms)
{
	poll_ms = interval_ms;
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return false;
	if (pthread_create(&poller, NULL, poller_main, NULL) != 0)
		return false;
	poller_started = true;
	return true;
}

/*
 * gw_feed_poller_join
 *		Stop the poller thread and close its connection.
 */
void
gw_feed_poller_join(void)
{
	if (!poller_started)
		return;
	atomic_store(&poller_stop, true);
	wake();
	pthread_join(poller, NULL);
	poller_started = false;
}
