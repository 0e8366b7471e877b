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

typedef enum GwMetric
{
	GW_M_POOL_IN_USE,			/* gauge: pooled connections lent out */
	GW_M_POOL_WAITS,			/* acquisitions that had to wait */
	GW_M_POOL_WAIT_US,			/* total microseconds waited */
	GW_M_POOL_TIMEOUTS,			/* acquisitions that gave up (503) */
	GW_M_DB_CONNECTS,			/* connections opened */
	GW_M_DB_CONNECT_FAILURES,	/* connection attempts that failed */
	GW_M_DB_RECONNECTS,			/* broken pooled connections dropped */
	GW_M_SSE_SUBSCRIBERS,		/* gauge: open change-feed streams */
	GW_M_SSE_EVENTS_SENT,		/* commit events written to streams */
	GW_M_SSE_EVENTS_WITHHELD,	/* events a subscriber may not read */
	GW_M_SSE_SLOW_DISCONNECTS,	/* streams closed for falling behind */
	GW_M_SSE_RESUMES,			/* streams resumed from a client's cursor */
	GW_M_FEED_COMMITS,			/* versions read by the feed's poller */
	GW_M_FEED_POLLS,			/* lance_changes() calls of the poller */
	GW_M_FEED_CONNECTED,		/* gauge: 1 while the poller is connected */
	GW_M_FEED_RECONNECTS,		/* poller connections re-established */
	GW_M_LOOP_CONNECTED,		/* gauge: loops whose pipeline is connected */
	GW_M_LOOP_CALLS,			/* gauge: calls in the loops' pipelines */
	GW_M_LOOP_ANSWERED,			/* requests a loop answered itself */
	GW_M_LOOP_HANDOFFS,			/* requests a loop handed to a worker */
	GW_M__COUNT
} GwMetric;

struct GwRoute;

extern void gw_metrics_add(GwMetric m, long delta);
extern void gw_metrics_request(const struct GwRoute *route, int status, double seconds,
							   bool observe_latency);
extern void gw_metrics_db_error(const char *sqlstate);
extern char *gw_metrics_render(void);

#endif							/* LANCE_GATEWAY_METRICS_H */
