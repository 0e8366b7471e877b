/*-------------------------------------------------------------------------
 *
 * pool.h
 *	  A bounded pool of libpq connections.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_POOL_H
#define LANCE_GATEWAY_POOL_H

#include <libpq-fe.h>

#include "gateway.h"

/* named statements prepared on a connection (db.c); more are not cached */
#define GW_MAX_PREPARED 64

/* the names (strings that live as long as the program) prepared on a session */
typedef struct GwPrepared
{
	int			n;
	const char *names[GW_MAX_PREPARED];
} GwPrepared;

typedef struct GwConn
{
	PGconn	   *conn;
	bool		busy;			/* lent out */
	GwPrepared	prep;			/* reset on connect */
} GwConn;

extern bool gw_pool_init(const char *conninfo, int size);
extern GwConn *gw_pool_acquire(int wait_ms, GwError *err);
extern void gw_pool_release(GwConn *c);
extern void gw_pool_discard(GwConn *c);
extern void gw_pool_shutdown(void);
extern PGconn *gw_pool_connect(GwError *err);

#endif							/* LANCE_GATEWAY_POOL_H */
