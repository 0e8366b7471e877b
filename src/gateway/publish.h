/*-------------------------------------------------------------------------
 *
 * publish.h
 *	  Publication of the manifests whose bytes the catalog holds
 *	  (publications): the protocol is described in publish.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_PUBLISH_H
#define LANCE_GATEWAY_PUBLISH_H

#include <libpq-fe.h>

#include "gateway.h"

/* What one pass over publications did */
typedef struct GwPublishCounts
{
	long		pending;		/* rows read */
	long		rewritten;		/* canonical files written from the bytes */
	long		pruned;			/* rows deleted once their file was durable */
	long		failed;			/* rows left for a later pass */
} GwPublishCounts;

extern bool gw_publish_start(void);
extern void gw_publish_stop(void);
extern bool gw_publish_holds(void);
extern bool gw_publish_reserve(size_t len);
extern void gw_publish_release(size_t len);
extern void gw_publish_notify(void);
extern bool gw_publish_repair(const char *manifest_path);
extern bool gw_publish_pass(PGconn *conn, const char *manifest_path, bool dry_run,
							GwPublishCounts *counts, GwError *err);

#endif							/* LANCE_GATEWAY_PUBLISH_H */
