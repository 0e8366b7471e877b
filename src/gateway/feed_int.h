/*-------------------------------------------------------------------------
 *
 * feed_int.h
 *	  Between the change feed's subscribers (feed.c) and its source, the
 *	  poller of the catalog's history (feed_poll.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_FEED_INT_H
#define LANCE_GATEWAY_FEED_INT_H

#include "gateway.h"

/* feed.c, for the poller */
extern bool gw_feed_wanted(void);
extern void gw_feed_set_connected(bool connected);
extern void gw_feed_set_ready(bool ready);
extern void gw_feed_broadcast_commit(const char *payload);
extern void gw_feed_broadcast_text(const char *text);

/* feed_poll.c, for feed.c */
extern bool gw_feed_poller_start(long interval_ms);
extern void gw_feed_poller_wake(void);
extern void gw_feed_poller_join(void);

#endif							/* LANCE_GATEWAY_FEED_INT_H */
