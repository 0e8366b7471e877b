/*-------------------------------------------------------------------------
 *
 * feed.h
 *	  The change feed over HTTP: GET /v1/events streams the
 *	  lance_namespace_commits notifications as Server-Sent Events.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_FEED_H
#define LANCE_GATEWAY_FEED_H

#include "dispatch.h"

struct MHD_Response;

extern bool gw_feed_start(void);
extern void gw_feed_stop(void);
extern void gw_feed_join(void);
extern void gw_feed_subscribe(const GwHttpRequest *req, GwResponse *resp);
extern struct MHD_Response *gw_feed_response(void *stream, int fd);
extern void gw_feed_discard(void *stream);

#endif							/* LANCE_GATEWAY_FEED_H */
