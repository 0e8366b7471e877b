/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  GET /metrics: Prometheus text exposition format 0.0.4.  The hot path
 *	  only does relaxed atomic increments on fixed arrays indexed by route
 *	  and HTTP status; rendering reads them without locks (a scrape may see
 *	  a request counted but its latency not yet, which Prometheus
 *	  tolerates).  Nothing here touches the database.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "router.h"

#define MAX_ROUTES		64		/* route table entries, plus "unmatched" */
#define N_STATUS		501		/* 0 = none, 1..500 = HTTP 100..599 */
#define N_SQLCLASS		(36 * 36)

/* Latency histogram bucket upper bounds, in seconds. */
static const double buckets[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
};
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

typedef struct RouteStats
{
	atomic_ulong bucket[N_BUCKETS + 1];	/* non-cumulative; last = +Inf */
	atomic_ulong sum_us;
	atomic_ulong count;
} RouteStats;

static atomic_ulong requests[MAX_ROUTES][N_STATUS];
static RouteStats latency[MAX_ROUTES];
static atomic_ulong db_errors[N_SQLCLASS];
static atomic_long scalars[GW_M__COUNT];

/*
 * gw_metrics_add
 *		Add delta to a counter or gauge.
 */
void
gw_metrics_add(GwMetric m, long delta)
{
	atomic_fetch_add_explicit(&scalars[m], delta, memory_order_relaxed);
}

/*
 * route_slot
 *		Array index of a route: its table index, or the last used slot for
 *		requests that matched no route entry.
 */
static int
route_slot(const GwRoute *route)
{
	int			i = gw_route_index(route);
	int			n = gw_route_count();

	if (n >= MAX_ROUTES)
		n = MAX_ROUTES - 1;
	return (i >= 0 && i < n) ? i : n;
}

/*
 * gw_metrics_request
 *		Count one finished request; observe its latency unless it was a
 *		long-lived stream.
 */
void
gw_metrics_request(const struct GwRoute *route, int status, double seconds,
				   bool observe_latency)
{
	int			r = route_slot(route);
	int			s = (status >= 100 && status <= 599) ? status - 99 : 0;
	RouteStats *ls = &latency[r];
	size_t		b = 0;

	atomic_fetch_add_explicit(&requests[r][s], 1, memory_order_relaxed);
	if (!observe_latency)
		return;
	while (b < N_BUCKETS && seconds > buckets[b])
		b++;
	atomic_fetch_add_explicit(&ls->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ls->sum_us, (unsigned long) (seconds * 1e6), memory_order_relaxed);
	atomic_fetch_add_explicit(&ls->count, 1, memory_order_relaxed);
}

/*
 * class_index
 *		Index of a two-character SQLSTATE class ([0-9A-Z]{2}), or -1.
 */
static int
class_index(const char *sqlstate)
{
	int			v = 0;

	for (int i = 0; i < 2; i++)
	{
		char		c = sqlstate[i];

		if (c >= '0' && c <= '9')
			v = v * 36 + (c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + 10 + (c - 'A');
		else
			return -1;
	}
	return v;
}

/*
 * gw_metrics_db_error
 *		Count a failed database command by its SQLSTATE class ("" counts
 *		as class "XX" would not: it is skipped).
 */
void
gw_metrics_db_error(const char *sqlstate)
{
	int			i;

	if (sqlstate == NULL || strlen(sqlstate) < 2)
		return;
	i = class_index(sqlstate);
	if (i >= 0)
		atomic_fetch_add_explicit(&db_errors[i], 1, memory_order_relaxed);
}

typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;
} Buf;

/*
 * put
 *		printf-append to a growing buffer.
 */
static void
put(Buf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
put(Buf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (b->oom)
		return;
	for (;;)
	{
		va_start(ap, fmt);
		n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
		{
			b->oom = true;
			return;
		}
		if ((size_t) n < b->cap - b->len)
		{
			b->len += n;
			return;
		}
		else
		{
			size_t		cap = b->cap * 2 + n;
			char	   *nd = realloc(b->data, cap);

			if (nd == NULL)
			{
				b->oom = true;
				return;
			}
			b->data = nd;
			b->cap = cap;
		}
	}
}

static unsigned long
load(atomic_ulong *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static long
scalar(GwMetric m)
{
	return atomic_load_explicit(&scalars[m], memory_order_relaxed);
}

/*
 * route_label
 *		The route label of an array slot.
 */
static const char *
route_label(int slot)
{
	const char *p = gw_route_pattern(slot);

	return p ? p : "(unmatched)";
}

/*
 * gw_metrics_render
 *		The whole exposition text (malloc'd), or NULL when out of memory.
 */
char *
gw_metrics_render(void)
{
	Buf			b = {malloc(16384), 0, 16384, false};
	int			nroutes = gw_route_count();

	if (b.data == NULL)
		return NULL;
	if (nroutes >= MAX_ROUTES)
		nroutes = MAX_ROUTES - 1;

	put(&b, "# HELP lance_gateway_requests_total HTTP requests answered, by route pattern and status.\n"
		"# TYPE lance_gateway_requests_total counter\n");
	for (int r = 0; r <= nroutes; r++)
		for (int s = 0; s < N_STATUS; s++)
		{
			unsigned long v = load(&requests[r][s]);

			if (v == 0)
				continue;
			if (s == 0)
				put(&b, "lance_gateway_requests_total{route=\"%s\",status=\"none\"} %lu\n",
					route_label(r), v);
			else
				put(&b, "lance_gateway_requests_total{route=\"%s\",status=\"%d\"} %lu\n",
					route_label(r), s + 99, v);
		}

	put(&b, "# HELP lance_gateway_request_duration_seconds Time from request arrival to completion, by route pattern (streams excluded).\n"
		"# TYPE lance_gateway_request_duration_seconds histogram\n");
	for (int r = 0; r <= nroutes; r++)
	{
		RouteStats *ls = &latency[r];
		unsigned long cum = 0;
		unsigned long count = load(&ls->count);

		if (count == 0)
			continue;
		for (size_t i = 0; i < N_BUCKETS; i++)
		{
			cum += load(&ls->bucket[i]);
			put(&b, "lance_gateway_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %lu\n",
				route_label(r), buckets[i], cum);
		}
		cum += load(&ls->bucket[N_BUCKETS]);
		/* +Inf must equal _count; increments are not atomic as a group */
		if (cum < count)
			cum = count;
		put(&b, "lance_gateway_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %lu\n",
			route_label(r), cum);
		put(&b, "lance_gateway_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
			route_label(r), load(&ls->sum_us) / 1e6);
		put(&b, "lance_gateway_request_duration_seconds_count{route=\"%s\"} %lu\n",
			route_label(r), cum);
	}

	put(&b, "# HELP lance_gateway_pool_size Configured PostgreSQL connections of the request pool.\n"
		"# TYPE lance_gateway_pool_size gauge\n"
		"lance_gateway_pool_size %d\n", gw_config.pool_size);
	put(&b, "# HELP lance_gateway_pool_in_use Pooled connections currently lent to requests.\n"
		"# TYPE lance_gateway_pool_in_use gauge\n"
		"lance_gateway_pool_in_use %ld\n", scalar(GW_M_POOL_IN_USE));
	put(&b, "# HELP lance_gateway_pool_waits_total Requests that had to wait for a free connection.\n"
		"# TYPE lance_gateway_pool_waits_total counter\n"
		"lance_gateway_pool_waits_total %ld\n", scalar(GW_M_POOL_WAITS));
	put(&b, "# HELP lance_gateway_pool_wait_seconds_total Total time requests waited for a free connection.\n"
		"# TYPE lance_gateway_pool_wait_seconds_total counter\n"
		"lance_gateway_pool_wait_seconds_total %.6f\n", scalar(GW_M_POOL_WAIT_US) / 1e6);
	put(&b, "# HELP lance_gateway_pool_timeouts_total Requests that found no free connection in time (503).\n"
		"# TYPE lance_gateway_pool_timeouts_total counter\n"
		"lance_gateway_pool_timeouts_total %ld\n", scalar(GW_M_POOL_TIMEOUTS));
	put(&b, "# HELP lance_gateway_db_connects_total PostgreSQL connections opened by the pool.\n"
		"# TYPE lance_gateway_db_connects_total counter\n"
		"lance_gateway_db_connects_total %ld\n", scalar(GW_M_DB_CONNECTS));
	put(&b, "# HELP lance_gateway_db_connect_failures_total Failed attempts to open a pooled connection.\n"
		"# TYPE lance_gateway_db_connect_failures_total counter\n"
		"lance_gateway_db_connect_failures_total %ld\n", scalar(GW_M_DB_CONNECT_FAILURES));
	put(&b, "# HELP lance_gateway_db_reconnects_total Pooled connections found broken and dropped (reopened on next use).\n"
		"# TYPE lance_gateway_db_reconnects_total counter\n"
		"lance_gateway_db_reconnects_total %ld\n", scalar(GW_M_DB_RECONNECTS));

	put(&b, "# HELP lance_gateway_db_errors_total Failed database commands, by SQLSTATE class (LN = catalog errors).\n"
		"# TYPE lance_gateway_db_errors_total counter\n");
	for (int i = 0; i < N_SQLCLASS; i++)
	{
		unsigned long v = load(&db_errors[i]);
		static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

		if (v > 0)
			put(&b, "lance_gateway_db_errors_total{class=\"%c%c\"} %lu\n",
				digits[i / 36], digits[i % 36], v);
	}

	put(&b, "# HELP lance_gateway_sse_subscribers Open change-feed (Server-Sent Events) streams.\n"
		"# TYPE lance_gateway_sse_subscribers gauge\n"
		"lance_gateway_sse_subscribers %ld\n", scalar(GW_M_SSE_SUBSCRIBERS));
	put(&b, "# HELP lance_gateway_sse_events_sent_total Commit events written to change-feed streams.\n"
		"# TYPE lance_gateway_sse_events_sent_total counter\n"
		"lance_gateway_sse_events_sent_total %ld\n", scalar(GW_M_SSE_EVENTS_SENT));
	put(&b, "# HELP lance_gateway_sse_events_withheld_total Commit events not sent because the subscriber may not read the table.\n"
		"# TYPE lance_gateway_sse_events_withheld_total counter\n"
		"lance_gateway_sse_events_withheld_total %ld\n", scalar(GW_M_SSE_EVENTS_WITHHELD));
	put(&b, "# HELP lance_gateway_sse_slow_disconnects_total Streams closed because their client fell too far behind.\n"
		"# TYPE lance_gateway_sse_slow_disconnects_total counter\n"
		"lance_gateway_sse_slow_disconnects_total %ld\n", scalar(GW_M_SSE_SLOW_DISCONNECTS));
	put(&b, "# HELP lance_gateway_sse_resumes_total Streams resumed from a client's cursor (Last-Event-ID or since).\n"
		"# TYPE lance_gateway_sse_resumes_total counter\n"
		"lance_gateway_sse_resumes_total %ld\n", scalar(GW_M_SSE_RESUMES));
	put(&b, "# HELP lance_gateway_feed_commits_total Committed table versions read from the catalog's history.\n"
		"# TYPE lance_gateway_feed_commits_total counter\n"
		"lance_gateway_feed_commits_total %ld\n", scalar(GW_M_FEED_COMMITS));
	put(&b, "# HELP lance_gateway_feed_polls_total Reads of the catalog's history (lance_changes calls).\n"
		"# TYPE lance_gateway_feed_polls_total counter\n"
		"lance_gateway_feed_polls_total %ld\n", scalar(GW_M_FEED_POLLS));
	put(&b, "# HELP lance_gateway_feed_connected 1 while the change feed's poller is connected.\n"
		"# TYPE lance_gateway_feed_connected gauge\n"
		"lance_gateway_feed_connected %ld\n", scalar(GW_M_FEED_CONNECTED));
	put(&b, "# HELP lance_gateway_feed_reconnects_total Times the change-feed listener re-established its connection.\n"
		"# TYPE lance_gateway_feed_reconnects_total counter\n"
		"lance_gateway_feed_reconnects_total %ld\n", scalar(GW_M_FEED_RECONNECTS));
	put(&b, "# HELP lance_gateway_loop_db_connected Loops whose pipelined database connection is open.\n"
		"# TYPE lance_gateway_loop_db_connected gauge\n"
		"lance_gateway_loop_db_connected %ld\n", scalar(GW_M_LOOP_CONNECTED));
	put(&b, "# HELP lance_gateway_loop_calls Statements in the loops' pipelines, waiting for their results.\n"
		"# TYPE lance_gateway_loop_calls gauge\n"
		"lance_gateway_loop_calls %ld\n", scalar(GW_M_LOOP_CALLS));
	put(&b, "# HELP lance_gateway_loop_answered_total Requests a loop answered without a worker.\n"
		"# TYPE lance_gateway_loop_answered_total counter\n"
		"lance_gateway_loop_answered_total %ld\n", scalar(GW_M_LOOP_ANSWERED));
	put(&b, "# HELP lance_gateway_loop_handoffs_total Requests a loop handed to a worker.\n"
		"# TYPE lance_gateway_loop_handoffs_total counter\n"
		"lance_gateway_loop_handoffs_total %ld\n", scalar(GW_M_LOOP_HANDOFFS));

	if (b.oom)
	{
		free(b.data);
		return NULL;
	}
	return b.data;
}
