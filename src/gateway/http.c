/*-------------------------------------------------------------------------
 *
 * http.c
 *	  The gateway's HTTP/1.1 server: the listening socket, the list of
 *	  open connections (at most --max-connections; one beyond that gets a
 *	  JSON 503 and is closed) and the connection threads.
 *
 *	  The event loop (evloop.c) accepts connections, waits for their
 *	  requests and answers those that need nothing but their statement.
 *	  A connection whose request may block (a commit with its manifest
 *	  files, the change feed's stream, a body still to arrive, a response
 *	  the client is slow to take) is handed to a connection thread, which
 *	  serves it as http_conn.c says until it waits for a new request, and
 *	  then hands it back (serve).  Threads are started as needed and end
 *	  after a while without work.
 *
 *	  A graceful stop: stop accepting, close idle connections, let
 *	  in-flight requests finish (--shutdown-timeout), then close what is
 *	  left.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "http.h"
#include "http_conn.h"

#include "evloop.h"

#define THREAD_IDLE_S	30		/* an idle connection thread ends after this */
#define THREAD_KEEP_MS	10		/* a thread keeps a connection this long */

static int	listen_fd = -1;
static bool loop_started;
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_gone = PTHREAD_COND_INITIALIZER;
static GwHttpConn *conns;		/* under conn_lock */
static int	nconns;				/* under conn_lock */

/* connections waiting for a thread, linked by loop_next; under work_lock */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready;
static GwHttpConn *work_head;
static GwHttpConn *work_tail;
static int	nqueued;
static int	idle_threads;

/*
 * gw_http_close
 *		Close a connection and take it out of the list of open connections
 *		(waking gw_http_stop).
 */
void
gw_http_close(GwHttpConn *c)
{
	pthread_mutex_lock(&conn_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	nconns--;
	pthread_cond_broadcast(&conn_gone);
	pthread_mutex_unlock(&conn_lock);
	close(c->fd);
	free(c->out);
	free(c->buf);
	free(c);
}

/*
 * next_arrives
 *		True if the connection has bytes (or its end) to read within ms.
 */
static bool
next_arrives(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	int			rc;

	while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
		;
	return rc != 0;
}

/*
 * serve
 *		In a connection thread: finish what the event loop handed over,
 *		then serve requests until the connection ends or no request comes
 *		for THREAD_KEEP_MS, when it goes back to the event loop.  Keeping
 *		it that long spares a client that sends request after request of
 *		the kind a thread serves (commits) two hand-overs per request.
 */
static void
serve(GwHttpConn *c)
{
	GwHttpNext	next = gw_http_resume(c);

	while (next == GW_HTTP_NEXT_REQUEST)
	{
		if (c->len == 0 && !atomic_load(&gw_http_stopping) &&
			!next_arrives(c->fd, THREAD_KEEP_MS) && gw_loop_adopt(c))
			return;
		next = gw_http_serve_request(c, &c->wait_start);
	}
	if (next == GW_HTTP_NEXT_LINGER)
		gw_http_linger(c->fd);
	gw_http_close(c);
}

/*
 * thread_main
 *		A connection thread: serve the connections handed to it, and end
 *		after THREAD_IDLE_S seconds without one.
 */
static void *
thread_main(void *arg)
{
	GwHttpConn *c = arg;

	for (;;)
	{
		struct timespec until;

		serve(c);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += THREAD_IDLE_S;
		pthread_mutex_lock(&work_lock);
		idle_threads++;
		while (work_head == NULL && !atomic_load(&gw_http_stopping))
			if (pthread_cond_timedwait(&work_ready, &work_lock, &until) == ETIMEDOUT)
				break;
		idle_threads--;
		c = work_head;
		if (c != NULL)
		{
			work_head = c->loop_next;
			if (work_head == NULL)
				work_tail = NULL;
			nqueued--;
		}
		pthread_mutex_unlock(&work_lock);
		if (c == NULL)
			return NULL;
	}
}

/*
 * gw_http_thread_serve
 *		Hand a connection to a connection thread: an idle one, or a new
 *		one.
 */
void
gw_http_thread_serve(GwHttpConn *c)
{
	pthread_attr_t attr;
	pthread_t	t;
	int			rc = 0;

	c->loop_next = NULL;
	pthread_mutex_lock(&work_lock);
	if (idle_threads > nqueued)
	{
		if (work_tail)
			work_tail->loop_next = c;
		else
			work_head = c;
		work_tail = c;
		nqueued++;
		pthread_cond_signal(&work_ready);
		pthread_mutex_unlock(&work_lock);
		return;
	}
	pthread_mutex_unlock(&work_lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, thread_main, c);
	pthread_attr_destroy(&attr);
	if (rc != 0)
	{
		fprintf(stderr, "%s: cannot start a connection thread: %s\n", GW_PROGRAM, strerror(rc));
		if (c->resume == GW_RESUME_FLUSH)
		{
			/* the request the loop answered ends here */
			c->x.aborted = true;
			free(c->out);
			c->out = NULL;
			atomic_fetch_sub(&gw_http_in_flight, 1);
		}
		gw_http_close(c);
	}
}

/*
 * gw_http_accepted
 *		Take an accepted connection into the list, or refuse it when the
 *		connection limit is reached (NULL).
 */
GwHttpConn *
gw_http_accepted(int fd)
{
	GwHttpConn *c = calloc(1, sizeof(GwHttpConn));
	int			one = 1;

	if (c != NULL)
	{
		c->cap = GW_HTTP_BUF_INITIAL;
		c->buf = malloc(c->cap);
	}
	pthread_mutex_lock(&conn_lock);
	if (c == NULL || c->buf == NULL || nconns >= gw_config.max_connections)
	{
		pthread_mutex_unlock(&conn_lock);
		if (c != NULL)
			free(c->buf);
		free(c);
		gw_http_reject_busy(fd);
		return NULL;
	}
	c->fd = fd;
	c->next = conns;
	if (conns)
		conns->prev = c;
	conns = c;
	nconns++;
	pthread_mutex_unlock(&conn_lock);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	clock_gettime(CLOCK_MONOTONIC, &c->wait_start);
	return c;
}

/*
 * gw_http_start
 *		Listen on addr and start the event loop.
 */
bool
gw_http_start(const struct sockaddr *addr)
{
	socklen_t	alen = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		: sizeof(struct sockaddr_in);
	int			one = 1;

	gw_http_limits.max_target = (size_t) gw_config.max_url_bytes;
	gw_http_limits.max_fields = (size_t) gw_config.max_header_bytes;
	gw_http_limits.max_body = (size_t) gw_config.max_body_bytes;
	gw_http_head_bytes = gw_http_head_max(&gw_http_limits);

	listen_fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
	{
		fprintf(stderr, "%s: socket: %s\n", GW_PROGRAM, strerror(errno));
		return false;
	}
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, addr, alen) != 0 || listen(listen_fd, SOMAXCONN) != 0)
	{
		fprintf(stderr, "%s: %s\n", GW_PROGRAM, strerror(errno));
		close(listen_fd);
		listen_fd = -1;
		return false;
	}
	{
		pthread_condattr_t cattr;

		pthread_condattr_init(&cattr);
		pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
		pthread_cond_init(&work_ready, &cattr);
		pthread_condattr_destroy(&cattr);
	}
	if (pipe2(gw_http_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0 || !gw_loop_start(listen_fd, gw_config.loops))
	{
		fprintf(stderr, "%s: cannot start the event loop\n", GW_PROGRAM);
		close(listen_fd);
		listen_fd = -1;
		return false;
	}
	loop_started = true;
	return true;
}

/*
 * gw_http_port
 *		The port actually bound (useful with port 0).
 */
int
gw_http_port(void)
{
	struct sockaddr_storage ss;
	socklen_t	len = sizeof(ss);

	if (listen_fd < 0 || getsockname(listen_fd, (struct sockaddr *) &ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *) &ss)->sin6_port);
	return ntohs(((struct sockaddr_in *) &ss)->sin_port);
}

/*
 * gw_http_stop
 *		Stop accepting connections and close the idle ones (the event loop
 *		does both), wait for in-flight requests (at most the shutdown
 *		budget), then close every connection and wait for the loop.
 */
void
gw_http_stop(void)
{
	struct timespec ts = {0, 20 * 1000000L};
	int			waited_ms = 0;

	atomic_store(&gw_http_stopping, true);
	if (write(gw_http_stop_pipe[1], "x", 1) < 0)
		fprintf(stderr, "%s: cannot wake the connection threads\n", GW_PROGRAM);

	while (atomic_load(&gw_http_in_flight) > 0 && waited_ms < gw_config.shutdown_wait_s * 1000)
	{
		nanosleep(&ts, NULL);
		waited_ms += 20;
	}
	if (atomic_load(&gw_http_in_flight) > 0)
		fprintf(stderr, "%s: %d requests still running at shutdown\n", GW_PROGRAM,
				atomic_load(&gw_http_in_flight));

	pthread_mutex_lock(&conn_lock);
	for (GwHttpConn *c = conns; c != NULL; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (nconns > 0)
		pthread_cond_wait(&conn_gone, &conn_lock);
	pthread_mutex_unlock(&conn_lock);
	if (loop_started)
		gw_loop_join();
	loop_started = false;
	close(listen_fd);
	listen_fd = -1;
	pthread_mutex_lock(&work_lock);
	pthread_cond_broadcast(&work_ready);	/* idle threads end */
	pthread_mutex_unlock(&work_lock);
	close(gw_http_stop_pipe[0]);
	close(gw_http_stop_pipe[1]);
	gw_http_stop_pipe[0] = gw_http_stop_pipe[1] = -1;
}
