/*-------------------------------------------------------------------------
 *
 * evloop_int.h
 *	  What the event loop (evloop.c) and its database pipeline
 *	  (evloop_db.c) share.  Everything here runs in the loop's thread,
 *	  except gw_loop_wake.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_EVLOOP_INT_H
#define LANCE_GATEWAY_EVLOOP_INT_H

#include <stdint.h>

#include "http_conn.h"

/* epoll tags of the loop's own descriptors (connections are pointers) */
#define GW_EV_LISTEN	1
#define GW_EV_WAKE		2
#define GW_EV_STOP		3
#define GW_EV_DB		4

extern int	gw_loop_epoll;

/* evloop.c */
extern void gw_loop_drive(GwHttpConn *c, GwLoopStep step);
extern void gw_loop_wake(void);

/* evloop_db.c */
extern void gw_evdb_connect(void);
extern void gw_evdb_take_connection(void);
extern GwLoopStep gw_evdb_send(GwHttpConn *c);
extern void gw_evdb_event(uint32_t events);
extern void gw_evdb_flush(void);
extern int	gw_evdb_pending(void);
extern void gw_evdb_close(void);

#endif							/* LANCE_GATEWAY_EVLOOP_INT_H */
