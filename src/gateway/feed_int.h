/*-------------------------------------------------------------------------
 *
 * feed_int.h
 *	  Between the change feed's log and subscribers (feed.c) and its
 *	  source, the poller of the catalog's history (feed_poll.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_FEED_INT_H
#define LANCE_GATEWAY_FEED_INT_H

#include <libpq-fe.h>

#include "gateway.h"

/* a waiting stream looks for bytes (a heartbeat, its client gone) this often */
#define GW_FEED_TICK_MS		500

/* feed.c, for the poller */
extern bool gw_feed_wanted(void);
extern bool gw_feed_drop_cursor(void);
extern void gw_feed_set_connected(bool up, const char *text);
extern void gw_feed_publish(const char *const *payloads, int n, const char *control,
							const char *cursor);
extern uint64_t gw_feed_xmax(const char *snap);
extern void gw_feed_serve(PGconn *conn);

/* feed_poll.c, for feed.c */
extern bool gw_feed_poller_start(long interval_ms);
extern void gw_feed_poller_wake(void);
extern void gw_feed_poller_join(void);

#endif							/* LANCE_GATEWAY_FEED_INT_H */
