/*-------------------------------------------------------------------------
 *
 * http.h
 *	  The libmicrohttpd front end.
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
