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

#include <pthread.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "http_conn.h"
#include "pool.h"

/* epoll tags of the loop's own descriptors (connections are pointers) */
#define GW_EV_LISTEN	1
#define GW_EV_WAKE		2
#define GW_EV_STOP		3
#define GW_EV_DB		4

/* One call in a loop's pipeline, up to its Sync. */
typedef struct GwPending
{
	GwHttpConn *c;
	const char *prepare;		/* statement prepared along with it, or NULL */
} GwPending;

/*
 * An event loop: its thread, its epoll set, its connections and its
 * pipelined database connection.  All of it belongs to the loop's thread
 * except what is under lock (connections handed back by threads) and
 * db_lock (the connection opened by the connect thread).
 */
typedef struct GwLoop
{
	int			ep;				/* epoll set */
	int			wake_fd;		/* eventfd: adopted connections, a database connection */
	pthread_t	thread;
	bool		started;

	pthread_mutex_t lock;
	GwHttpConn *adopted;		/* handed back by threads (loop_next) */
	bool		closed;			/* the loop ended: nothing more is adopted */

	bool		accepting;		/* the listening socket is watched */
	GwHttpConn *owned;			/* the loop's connections (loop_prev/next) */
	GwHttpConn *later;			/* disowned in this batch (loop_next) */
	bool		stopping;

	/* the pipelined database connection (evloop_db.c) */
	pthread_mutex_t db_lock;
	PGconn	   *opened;			/* opened by the connect thread */
	bool		attempt_done;	/* the connect thread finished */
	bool		db_closed;		/* the loop ended: the thread closes it */
	PGconn	   *pg;
	bool		want_write;		/* EPOLLOUT is watched on pg's socket */
	bool		connecting;
	struct timespec last_attempt;
	struct timespec bypass_until;	/* reads go to threads until then (0: no) */
	int			nprepared;
	const char *prepared[GW_MAX_PREPARED];
	GwPending  *queue;			/* the calls in the pipeline, a ring */
	int			qhead;
	int			qlen;
	int			qcap;
	/* the call at the queue's head, while its results arrive */
	PGresult   *head_res;
	bool		head_prepared;	/* its statement's preparation succeeded */
	bool		head_failed;
	char		head_sqlstate[6];
	GwError		head_err;
} GwLoop;

/* evloop.c */
extern void gw_loop_drive(GwHttpConn *c, GwLoopStep step);
extern void gw_loop_wake(GwLoop *L);

/* evloop_db.c */
extern void gw_evdb_connect(GwLoop *L);
extern void gw_evdb_take_connection(GwLoop *L);
extern GwLoopStep gw_evdb_send(GwHttpConn *c);
extern void gw_evdb_event(GwLoop *L, uint32_t events);
extern void gw_evdb_flush(GwLoop *L);
extern int	gw_evdb_pending(GwLoop *L);
extern void gw_evdb_close(GwLoop *L);

#endif							/* LANCE_GATEWAY_EVLOOP_INT_H */
