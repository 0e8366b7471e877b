/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  GET /metrics in the Prometheus text format 0.0.4.  Requests only add
 *	  to fixed arrays with relaxed atomics; a scrape reads them without
 *	  locks (it may see a request counted but its latency not yet).
 *
 *-------------------------------------------------------------------------
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "router.h"

#define N_STATUS		501		/* 0 = none, 1..500 = HTTP 100..599 */
#define N_SQLCLASS		(36 * 36)

/* the slot of unmatched requests, after the routes' slots; a slot's label */
#define UNMATCHED		(gw_nroutes < GW_MAX_ROUTES ? gw_nroutes : GW_MAX_ROUTES - 1)
#define ROUTE_LABEL(r)	((r) < gw_nroutes ? gw_routes[r].pattern : "(unmatched)")

/* the characters of a SQLSTATE class, in the order of db_errors' index */
static const char sqlclass_digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

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

static atomic_ulong requests[GW_MAX_ROUTES][N_STATUS];
static RouteStats latency[GW_MAX_ROUTES];
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
 * gw_metrics_request
 *		Count a finished request, and its latency unless it streamed.
 */
void
gw_metrics_request(const struct GwRoute *route, int status, double seconds,
				   bool observe_latency)
{
	int			r = (route && route - gw_routes < UNMATCHED) ?
		(int) (route - gw_routes) : UNMATCHED;
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
 * gw_metrics_db_error
 *		Count a failed command by its SQLSTATE class ("" is skipped).
 */
void
gw_metrics_db_error(const char *sqlstate)
{
	const char *hi = sqlstate && sqlstate[0] ? strchr(sqlclass_digits, sqlstate[0]) : NULL;
	const char *lo = hi && sqlstate[1] ? strchr(sqlclass_digits, sqlstate[1]) : NULL;

	if (lo != NULL)
		atomic_fetch_add_explicit(&db_errors[(hi - sqlclass_digits) * 36 + (lo - sqlclass_digits)],
								  1, memory_order_relaxed);
}

/*
 * gw_metrics_render
 *		The whole exposition text (malloc'd), or NULL when out of memory.
 */
char *
gw_metrics_render(void)
{
	/* a counter's or gauge's HELP, TYPE and name, before its value */
#define GW_METRIC_TEXT(id, name, type, help) "# HELP lance_gateway_" name " " help \
	"\n# TYPE lance_gateway_" name " " type "\nlance_gateway_" name " ",
	static const char *const scalar_text[] = {GW_METRICS(GW_METRIC_TEXT)};
#undef GW_METRIC_TEXT
	char	   *text = NULL;
	size_t		len;
	FILE	   *b = open_memstream(&text, &len);

	if (b == NULL)
		return NULL;

	fprintf(b, "# HELP lance_gateway_requests_total HTTP requests answered, by route pattern and status.\n"
			"# TYPE lance_gateway_requests_total counter\n");
	for (int r = 0; r <= UNMATCHED; r++)
		for (int s = 0; s < N_STATUS; s++)
		{
			unsigned long v = atomic_load(&requests[r][s]);
			char		status[8] = "none";

			if (v == 0)
				continue;
			if (s > 0)
				snprintf(status, sizeof(status), "%d", s + 99);
			fprintf(b, "lance_gateway_requests_total{route=\"%s\",status=\"%s\"} %lu\n",
					ROUTE_LABEL(r), status, v);
		}

	fprintf(b, "# HELP lance_gateway_request_duration_seconds Time from request arrival to completion, by route pattern (streams excluded).\n"
			"# TYPE lance_gateway_request_duration_seconds histogram\n");
	for (int r = 0; r <= UNMATCHED; r++)
	{
		RouteStats *ls = &latency[r];
		unsigned long cum = 0;
		unsigned long count = atomic_load(&ls->count);

		if (count == 0)
			continue;
		for (size_t i = 0; i < N_BUCKETS; i++)
		{
			cum += atomic_load(&ls->bucket[i]);
			fprintf(b, "lance_gateway_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %lu\n",
					ROUTE_LABEL(r), buckets[i], cum);
		}
		cum += atomic_load(&ls->bucket[N_BUCKETS]);
		/* +Inf must equal _count; increments are not atomic as a group */
		if (cum < count)
			cum = count;
		fprintf(b, "lance_gateway_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %lu\n"
				"lance_gateway_request_duration_seconds_sum{route=\"%s\"} %.6f\n"
				"lance_gateway_request_duration_seconds_count{route=\"%s\"} %lu\n",
				ROUTE_LABEL(r), cum, ROUTE_LABEL(r), atomic_load(&ls->sum_us) / 1e6, ROUTE_LABEL(r), cum);
	}

	fprintf(b, "# HELP lance_gateway_db_errors_total Failed database commands, by SQLSTATE class (LN = catalog errors).\n"
			"# TYPE lance_gateway_db_errors_total counter\n");
	for (int i = 0; i < N_SQLCLASS; i++)
	{
		unsigned long v = atomic_load(&db_errors[i]);

		if (v > 0)
			fprintf(b, "lance_gateway_db_errors_total{class=\"%c%c\"} %lu\n",
					sqlclass_digits[i / 36], sqlclass_digits[i % 36], v);
	}

	for (int m = 0; m < GW_M__COUNT; m++)
	{
		long		v = atomic_load(&scalars[m]);

		if (m == GW_M_POOL_WAIT_US)
			fprintf(b, "%s%.6f\n", scalar_text[m], v / 1e6);
		else
			fprintf(b, "%s%ld\n", scalar_text[m], v);
	}

	if (fclose(b) == 0)
		return text;
	free(text);
	return NULL;
}
