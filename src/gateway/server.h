/*-------------------------------------------------------------------------
 *
 * server.h
 *	  The gateway's HTTP server (server.c), built on libmicrohttpd.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_SERVER_H
#define LANCE_GATEWAY_SERVER_H

#include <sys/socket.h>

#include "gateway.h"

extern bool gw_server_start(const struct sockaddr *addr);
extern int	gw_server_port(void);
extern void gw_server_stop(void);

#endif							/* LANCE_GATEWAY_SERVER_H */
