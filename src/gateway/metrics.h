/*-------------------------------------------------------------------------
 *
 * metrics.h
 *	  Counters, gauges and histograms of the gateway, rendered in the
 *	  Prometheus text format by GET /metrics.  Every update is a relaxed
 *	  atomic operation on a fixed array: no locks, no allocation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_METRICS_H
#define LANCE_GATEWAY_METRICS_H

#include "gateway.h"

/*
 * The counters and gauges: id, name (after "lance_gateway_"), type and
 * help text.  POOL_WAIT_US adds microseconds and is shown in seconds.
 */
#define GW_METRICS(X) \
	X(POOL_SIZE, "pool_size", "gauge", "Configured PostgreSQL connections of the request pool.") \
	X(POOL_IN_USE, "pool_in_use", "gauge", "Pooled connections currently lent to requests.") \
	X(POOL_WAITS, "pool_waits_total", "counter", "Requests that had to wait for a free connection.") \
	X(POOL_WAIT_US, "pool_wait_seconds_total", "counter", "Total time requests waited for a free connection.") \
	X(POOL_TIMEOUTS, "pool_timeouts_total", "counter", "Requests that found no free connection in time (503).") \
	X(DB_CONNECTS, "db_connects_total", "counter", "PostgreSQL connections opened by the gateway.") \
	X(DB_CONNECT_FAILURES, "db_connect_failures_total", "counter", "Failed attempts to open a PostgreSQL connection.") \
	X(DB_RECONNECTS, "db_reconnects_total", "counter", "Pooled connections found broken and dropped (reopened on next use).") \
	X(SSE_SUBSCRIBERS, "sse_subscribers", "gauge", "Open change-feed (Server-Sent Events) streams.") \
	X(SSE_EVENTS_SENT, "sse_events_sent_total", "counter", "Commit events written to change-feed streams.") \
	X(SSE_EVENTS_WITHHELD, "sse_events_withheld_total", "counter", "Commit events not sent because the subscriber may not read the table.") \
	X(SSE_SLOW_DISCONNECTS, "sse_slow_disconnects_total", "counter", "Streams closed because their client fell too far behind.") \
	X(SSE_RESUMES, "sse_resumes_total", "counter", "Streams resumed from a client's cursor (Last-Event-ID or since).") \
	X(FEED_COMMITS, "feed_commits_total", "counter", "Committed table versions read from the catalog's history.") \
	X(FEED_POLLS, "feed_polls_total", "counter", "Reads of the catalog's history (lance_changes calls).") \
	X(FEED_CONNECTED, "feed_connected", "gauge", "1 while the change feed's poller is connected.") \
	X(FEED_RECONNECTS, "feed_reconnects_total", "counter", "Times the change-feed listener re-established its connection.") \
	X(LOOP_CONNECTED, "loop_db_connected", "gauge", "Loops whose pipelined database connection is open.") \
	X(LOOP_CALLS, "loop_calls", "gauge", "Statements in the loops' pipelines, waiting for their results.") \
	X(LOOP_ANSWERED, "loop_answered_total", "counter", "Requests a loop answered without a worker.") \
	X(LOOP_HANDOFFS, "loop_handoffs_total", "counter", "Requests a loop handed to a worker.")

typedef enum GwMetric
{
#define GW_METRIC_ID(id, name, type, help) GW_M_##id,
	GW_METRICS(GW_METRIC_ID)
#undef GW_METRIC_ID
	GW_M__COUNT
} GwMetric;

struct GwRoute;

extern void gw_metrics_add(GwMetric m, long delta);
extern void gw_metrics_request(const struct GwRoute *route, int status, double seconds,
							   bool observe_latency);
extern void gw_metrics_db_error(const char *sqlstate);
extern char *gw_metrics_render(void);

#endif							/* LANCE_GATEWAY_METRICS_H */
