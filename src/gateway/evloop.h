/*-------------------------------------------------------------------------
 *
 * evloop.h
 *	  The gateway's event loops (evloop.c): accept connections, wait for
 *	  their requests and answer those that need only their statement,
 *	  pipelined to the database over a connection of each loop's own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_EVLOOP_H
#define LANCE_GATEWAY_EVLOOP_H

#include "http_conn.h"

extern bool gw_loop_start(int listen_fd, int n);
extern bool gw_loop_adopt(GwHttpConn *c);
extern void gw_loop_join(void);

#endif							/* LANCE_GATEWAY_EVLOOP_H */
