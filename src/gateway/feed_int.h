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

/* a subscriber waiting to join the stream */
typedef struct GwFeedPending
{
	unsigned long long serial;
	char	   *resume;			/* the cursor to catch up from, or NULL */
} GwFeedPending;

/* feed.c, for the poller */
extern bool gw_feed_wanted(void);
extern void gw_feed_set_connected(bool connected);
extern void gw_feed_set_refused(void);
extern void gw_feed_set_cursor(const char *cursor);
extern void gw_feed_broadcast_commit(const char *payload);
extern void gw_feed_broadcast_text(const char *text);
extern int	gw_feed_pending(GwFeedPending **out);
extern void gw_feed_pending_free(GwFeedPending *p, int n);
extern void gw_feed_join_stream(unsigned long long serial, char **payloads, int n,
								const char *reset, const char *cursor);

/* feed_poll.c, for feed.c */
extern bool gw_feed_poller_start(long interval_ms, int catch_up_max);
extern void gw_feed_poller_wake(void);
extern void gw_feed_poller_join(void);

#endif							/* LANCE_GATEWAY_FEED_INT_H */
