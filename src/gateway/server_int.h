/*-------------------------------------------------------------------------
 *
 * server_int.h
 *	  What the HTTP server (server.c) shares with its parts: the loops'
 *	  pipelines (pipeline.c), the workers (pool.c), the streams (feed.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_SERVER_INT_H
#define LANCE_GATEWAY_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <sys/socket.h>

#include <libpq-fe.h>
#include <microhttpd.h>

#include "router.h"
#include "pool.h"

/* epoll tags of a loop's descriptors */
#define GW_EV_DAEMON	1		/* the daemon's own epoll set */
#define GW_EV_WAKE		2		/* wake_fd */
#define GW_EV_PIPE		3		/* the pipelined database connection */
#define GW_EV_FILES		4		/* the presence cache's inotify (storage_presence.c) */

/*
 * A loop: its thread, its libmicrohttpd daemon and its pipelined database
 * connection, all the thread's but what is under db_lock.
 */
typedef struct GwLoop
{
	struct MHD_Daemon *daemon;
	int			ep;				/* epoll set: the daemon's, wake_fd, the database */
	int			wake_fd;		/* eventfd: a database connection was opened */
	pthread_t	thread;

	/* the pipelined database connection (pipeline.c) */
	pthread_mutex_t db_lock;
	PGconn	   *opened;			/* opened by the connect thread */
	bool		attempt_done;	/* the connect thread finished */
	bool		db_closed;		/* the loop ended: the thread closes it */
	PGconn	   *pg;
	bool		want_write;		/* EPOLLOUT is watched on pg's socket */
	bool		connecting;
	struct timespec last_attempt;
	struct timespec bypass_from;	/* reads go to workers LOCK_BYPASS_MS from then (0: no) */
	GwPrepared	prep;
	struct GwReq *qhead;		/* the calls in the pipeline, by next */
	struct GwReq *qtail;
	int			unsynced;		/* calls sent since the last Sync */
	GwError		head_err;		/* the failure of the call being read */
} GwLoop;

/* One request: libmicrohttpd's per-request context. */
typedef struct GwReq
{
	struct MHD_Connection *conn;
	GwLoop	   *loop;
	const char *query;			/* the raw query string, cut from req.path */
	struct timespec start;
	bool		started;		/* the head was checked */
	bool		dispatched;		/* answered, in a call, or at a worker */
	bool		counted;		/* in the in-flight count */
	char	   *body;			/* req.body_len bytes */
	size_t		body_cap;
	size_t		header_bytes;	/* the header fields' */
	bool		too_large;		/* the body passed --max-body-bytes */
	GwHttpRequest req;			/* method (malloc'd), raw target, body */
	GwCall		call;			/* its route's call */
	GwResponse	resp;			/* the answer, once ready */
	bool		ready;			/* resp is the answer (set before resuming) */
	int			status;			/* as sent, for the log and metrics */
	const struct GwRoute *route;
	bool		stream;			/* a change-feed stream */
	GwPipe		pipe;			/* its statement, in a loop's pipeline */
	struct GwReq *next;			/* in the pipeline's or the workers' queue */
} GwReq;

/* server.c */
extern int	gw_server_start(const struct sockaddr *addr);
extern void gw_server_stop(void);
extern void gw_server_answer(GwReq *r);
extern void gw_server_fail(GwReq *r, int code, int status, const char *message);
extern void gw_loop_wake(GwLoop *L);
extern void gw_loop_resume(GwLoop *L, struct MHD_Connection *conn);

/* pipeline.c */
extern void gw_pipe_connect(GwLoop *L);
extern void gw_pipe_take_connection(GwLoop *L);
extern bool gw_pipe_send(GwReq *r);
extern void gw_pipe_read(GwLoop *L);
extern void gw_pipe_flush(GwLoop *L);
extern void gw_pipe_close(GwLoop *L);

/* pool.c */
extern void gw_worker_submit(GwReq *r);
extern void gw_worker_stop(void);

/* feed.c */
extern struct MHD_Response *gw_stream_response(GwReq *r, void *stream);

#endif							/* LANCE_GATEWAY_SERVER_INT_H */
