/*-------------------------------------------------------------------------
 *
 * http_conn.h
 *	  One client connection of the HTTP/1.1 server: what http.c (the
 *	  threads), evloop.c (the event loop), http_conn.c (requests and
 *	  responses on a connection in a thread) and http_loop.c (in the loop)
 *	  share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_HTTP_CONN_H
#define LANCE_GATEWAY_HTTP_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/uio.h>

#include "dispatch.h"
#include "http_parse.h"

#define GW_HTTP_BUF_INITIAL 8192	/* a connection's buffer to begin with */

/* One request as the access log and the metrics see it. */
typedef struct GwExchange
{
	struct timespec start;
	const char *method;			/* "-" until known */
	const char *path;			/* "-" until known */
	int			status;
	const struct GwRoute *route;
	int			minor;			/* HTTP/1.minor of the request */
	bool		head_only;		/* HEAD: no body in the response */
	bool		close;			/* close the connection after the response */
	bool		stream;			/* a change-feed stream */
	bool		aborted;		/* the response could not be sent */
} GwExchange;

/* What a thread must do first with a connection the event loop hands it. */
typedef enum GwHttpResume
{
	GW_RESUME_REQUEST,			/* read and answer requests */
	GW_RESUME_FLUSH,			/* send the rest of a response (out) first */
	GW_RESUME_LINGER			/* a final reply was sent: close gracefully */
} GwHttpResume;

/*
 * One client connection.  It belongs to one thread at a time: the event
 * loop while it waits for a request or its call's result, a connection
 * thread while it is served in a way that may block.
 */
typedef struct GwHttpConn
{
	int			fd;
	char	   *buf;			/* received bytes not yet consumed */
	size_t		len;
	size_t		cap;
	struct timespec wait_start; /* when the wait for a request began */
	struct GwHttpConn *prev;	/* in the list of open connections */
	struct GwHttpConn *next;

	/* a request the event loop answers (http_conn.c, evloop.c) */
	GwHttpHead	head;			/* its head, parsed in place in buf */
	bool		head_ready;		/* a thread takes the head from here */
	GwExchange	x;
	size_t		consumed;		/* its bytes in buf */
	GwCall		call;			/* its statement, while in the pipeline */
	char	   *out;			/* response bytes still to send */
	size_t		out_len;
	GwHttpResume resume;

	/* the event loop's bookkeeping (evloop.c) */
	struct GwLoop *loop;		/* the loop it belongs to */
	struct GwHttpConn *loop_prev;
	struct GwHttpConn *loop_next;
	bool		owned;			/* on the loop's list */
	bool		watched;		/* its readiness is watched */
	bool		in_call;		/* its statement is in the pipeline */
	bool		to_close;		/* disowned: close it (else: to a thread) */
} GwHttpConn;

/* What the event loop does next with a connection (gw_http_loop_*). */
typedef enum GwLoopStep
{
	GW_LOOP_WAIT,				/* wait for more bytes */
	GW_LOOP_NEXT,				/* look for a request in the buffer */
	GW_LOOP_CALL,				/* send c->call's statement */
	GW_LOOP_THREAD,				/* hand it to a thread (c->resume says how) */
	GW_LOOP_CLOSE				/* close it */
} GwLoopStep;

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

/* http_conn.c: a connection in a thread */
extern GwHttpNext gw_http_serve_request(GwHttpConn *c, struct timespec *wait_start);
extern GwHttpNext gw_http_resume(GwHttpConn *c);

/* http.c, for the event loop */
extern GwHttpConn *gw_http_accepted(int fd);
extern void gw_http_thread_serve(GwHttpConn *c);
extern void gw_http_close(GwHttpConn *c);

/* http_conn.c: what http_loop.c shares */
extern bool gw_http_only_blank(const GwHttpConn *c);
extern bool gw_http_request_view(GwHttpConn *c, const GwHttpHead *h, size_t body_len,
								 GwHttpRequest *req, GwResponse *resp);
extern bool gw_http_response_iov(const GwExchange *x, const GwResponse *resp,
								 char *head, size_t size, struct iovec *iov);
extern void gw_http_finish(const GwExchange *x);
extern void gw_http_next_request(GwHttpConn *c, size_t consumed);

/* http_loop.c: a connection in the event loop */
extern GwLoopStep gw_http_loop_read(GwHttpConn *c);
extern GwLoopStep gw_http_loop_request(GwHttpConn *c);
extern GwLoopStep gw_http_loop_reply(GwHttpConn *c, char *result, const GwError *err);
extern void gw_http_loop_fallback(GwHttpConn *c);
extern void gw_http_linger(int fd);
extern void gw_http_reject_busy(int fd);

#endif							/* LANCE_GATEWAY_HTTP_CONN_H */
