/*-------------------------------------------------------------------------
 *
 * http.h
 *	  The gateway's own HTTP/1.1 server (http.c; parsing in http_parse.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_HTTP_H
#define LANCE_GATEWAY_HTTP_H

#include <sys/socket.h>

#include "gateway.h"

extern bool gw_http_start(const struct sockaddr *addr);
extern int	gw_http_port(void);
extern void gw_http_stop(void);

#endif							/* LANCE_GATEWAY_HTTP_H */
