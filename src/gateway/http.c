/*-------------------------------------------------------------------------
 *
 * http.c
 *	  The gateway's HTTP/1.1 server: the listening socket, an accept
 *	  thread and one thread per connection, at most --max-connections of
 *	  them (a connection beyond that gets a JSON 503 and is closed).  What
 *	  a connection thread does with its requests is in http_conn.c.
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

static int	listen_fd = -1;
static pthread_t accept_thread;
static bool accept_started;
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_gone = PTHREAD_COND_INITIALIZER;
static GwHttpConn *conns;		/* under conn_lock */
static int	nconns;				/* under conn_lock */

/*
 * forget_connection
 *		Take c out of the list of open connections and wake gw_http_stop.
 */
static void
forget_connection(GwHttpConn *c)
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
}

/*
 * conn_main
 *		A connection's thread: requests until the connection ends.
 */
static void *
conn_main(void *arg)
{
	GwHttpConn	   *c = arg;
	struct timespec wait_start;
	GwHttpNext		next = GW_HTTP_NEXT_CLOSE;

	clock_gettime(CLOCK_MONOTONIC, &wait_start);
	c->cap = GW_HTTP_BUF_INITIAL;
	c->buf = malloc(c->cap);
	if (c->buf != NULL)
		while ((next = gw_http_serve_request(c, &wait_start)) == GW_HTTP_NEXT_REQUEST)
			;
	if (next == GW_HTTP_NEXT_LINGER)
		gw_http_linger(c->fd);

	forget_connection(c);
	close(c->fd);
	free(c->buf);
	free(c);
	return NULL;
}

/*
 * start_connection
 *		Give an accepted connection its thread, or refuse it when the
 *		connection limit is reached.
 */
static void
start_connection(int fd)
{
	GwHttpConn	   *c = calloc(1, sizeof(GwHttpConn));
	pthread_attr_t attr;
	pthread_t	t;
	int			one = 1;
	int			rc;

	pthread_mutex_lock(&conn_lock);
	if (c == NULL || nconns >= gw_config.max_connections)
	{
		pthread_mutex_unlock(&conn_lock);
		free(c);
		gw_http_reject_busy(fd);
		return;
	}
	c->fd = fd;
	c->next = conns;
	if (conns)
		conns->prev = c;
	conns = c;
	nconns++;
	pthread_mutex_unlock(&conn_lock);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, conn_main, c);
	pthread_attr_destroy(&attr);
	if (rc != 0)
	{
		fprintf(stderr, "%s: cannot start a connection thread: %s\n", GW_PROGRAM, strerror(rc));
		forget_connection(c);
		close(fd);
		free(c);
	}
}

/*
 * accept_main
 *		The accept thread: until the server stops.
 */
static void *
accept_main(void *arg)
{
	time_t		last_complaint = 0;

	(void) arg;
	for (;;)
	{
		struct pollfd p[2] = {{listen_fd, POLLIN, 0}, {gw_http_stop_pipe[0], POLLIN, 0}};
		int			fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (atomic_load(&gw_http_stopping) || p[1].revents != 0)
			break;
		if (p[0].revents == 0)
			continue;
		fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
		{
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			{
				/* out of descriptors or memory: complain, back off */
				if (time(NULL) != last_complaint)
				{
					last_complaint = time(NULL);
					fprintf(stderr, "%s: cannot accept a connection: %s\n", GW_PROGRAM, strerror(errno));
				}
				poll(NULL, 0, 100);
			}
			continue;
		}
		start_connection(fd);
	}
	return NULL;
}

/*
 * gw_http_start
 *		Listen on addr and start the accept thread.
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
	if (pipe2(gw_http_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
		pthread_create(&accept_thread, NULL, accept_main, NULL) != 0)
	{
		fprintf(stderr, "%s: cannot start the accept thread\n", GW_PROGRAM);
		close(listen_fd);
		listen_fd = -1;
		return false;
	}
	accept_started = true;
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
 *		Stop accepting connections and close the idle ones, wait for
 *		in-flight requests (at most the shutdown budget), then close every
 *		connection and wait for their threads.
 */
void
gw_http_stop(void)
{
	struct timespec ts = {0, 20 * 1000000L};
	int			waited_ms = 0;

	atomic_store(&gw_http_stopping, true);
	if (write(gw_http_stop_pipe[1], "x", 1) < 0)
		fprintf(stderr, "%s: cannot wake the connection threads\n", GW_PROGRAM);
	if (accept_started)
		pthread_join(accept_thread, NULL);
	accept_started = false;
	close(listen_fd);
	listen_fd = -1;

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
	close(gw_http_stop_pipe[0]);
	close(gw_http_stop_pipe[1]);
	gw_http_stop_pipe[0] = gw_http_stop_pipe[1] = -1;
}
