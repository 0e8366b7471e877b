/*-------------------------------------------------------------------------
 *
 * http_conn.h
 *	  One client connection of the HTTP/1.1 server: what http.c (the
 *	  listener and the connection threads) and http_conn.c (requests and
 *	  responses on a connection) share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_HTTP_CONN_H
#define LANCE_GATEWAY_HTTP_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "http_parse.h"

#define GW_HTTP_BUF_INITIAL 8192	/* a connection's buffer to begin with */

/* One client connection. */
typedef struct GwHttpConn
{
	int			fd;
	char	   *buf;			/* received bytes not yet consumed */
	size_t		len;
	size_t		cap;
	struct GwHttpConn *prev;	/* in the list of open connections */
	struct GwHttpConn *next;
} GwHttpConn;

/* What becomes of a connection after a request. */
typedef enum GwHttpNext
{
	GW_HTTP_NEXT_REQUEST,		/* keep it open for the next request */
	GW_HTTP_NEXT_CLOSE,			/* close it */
	GW_HTTP_NEXT_LINGER			/* a final reply was sent: close gracefully */
} GwHttpNext;

/* Server state, set up by gw_http_start (http.c). */
extern atomic_bool gw_http_stopping;	/* the server is stopping */
extern atomic_int gw_http_in_flight;	/* requests being answered */
extern int	gw_http_stop_pipe[2];	/* readable once the server stops */
extern GwHttpLimits gw_http_limits;
extern size_t gw_http_head_bytes;	/* gw_http_head_max(&gw_http_limits) */

extern GwHttpNext gw_http_serve_request(GwHttpConn *c, struct timespec *wait_start);
extern void gw_http_linger(int fd);
extern void gw_http_reject_busy(int fd);

#endif							/* LANCE_GATEWAY_HTTP_CONN_H */
