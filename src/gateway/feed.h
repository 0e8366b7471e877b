/*-------------------------------------------------------------------------
 *
 * feed.h
 *	  The change feed over HTTP: GET /v1/events streams the committed
 *	  table versions (read from the catalog's history) as Server-Sent
 *	  Events.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_FEED_H
#define LANCE_GATEWAY_FEED_H

#include "router.h"

extern bool gw_feed_start(void);
extern void gw_feed_stop(void);
extern void gw_feed_join(void);
extern void gw_feed_subscribe(const GwHttpRequest *req, const GwRequestInfo *info,
							  GwResponse *resp);
extern void gw_feed_discard(void *stream);
extern void gw_feed_poke(void);

#endif							/* LANCE_GATEWAY_FEED_H */
