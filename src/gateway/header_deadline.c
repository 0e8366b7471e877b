/*-------------------------------------------------------------------------
 *
 * header_deadline.c
 *	  408 for clients that trickle their request headers.
 *
 * libmicrohttpd calls the gateway only once a request's headers are
 * complete, so the per-request deadline of http.c cannot see a client that
 * sends its headers a byte at a time.  Every connection is therefore
 * tracked from accept (MHD_OPTION_NOTIFY_CONNECTION): while it waits for
 * the headers of a request, a reaper thread checks it against
 * --request-timeout and, once past it, writes a JSON 408 to the socket and
 * shuts the socket down, which makes libmicrohttpd close the connection.
 * Entries are removed under the same mutex in the CLOSED notification,
 * which libmicrohttpd sends before it closes the socket, so the reaper
 * never writes to a descriptor that was reused.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "gateway.h"
#include "header_deadline.h"

typedef struct HdlEntry
{
	int			fd;
	bool		waiting;		/* waiting for the headers of a request */
	bool		answered;		/* 408 already sent */
	struct timespec since;		/* when the wait began */
	struct HdlEntry *prev;
	struct HdlEntry *next;
} HdlEntry;

static pthread_mutex_t hdl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hdl_wake = PTHREAD_COND_INITIALIZER;
static HdlEntry *hdl_head;
static pthread_t hdl_thread;
static bool hdl_running;
static bool hdl_stopping;

#define HDL_BODY "{\"error\":\"the request headers were not received within the request timeout\"," \
	"\"code\":13,\"detail\":null,\"instance\":null}"

/*
 * elapsed_ms
 *		Milliseconds since t.
 */
static long
elapsed_ms(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000L + (now.tv_nsec - t->tv_nsec) / 1000000L;
}

/*
 * entry_of
 *		The tracking entry of a connection, or NULL.
 */
static HdlEntry *
entry_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? (HdlEntry *) ci->socket_context : NULL;
}

/*
 * gw_hdl_notify
 *		MHD_OPTION_NOTIFY_CONNECTION callback: track a connection from
 *		accept to close.
 */
void
gw_hdl_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	HdlEntry   *e;

	(void) cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		e = calloc(1, sizeof(HdlEntry));
		if (e == NULL || ci == NULL)
		{
			free(e);
			return;
		}
		e->fd = ci->connect_fd;
		e->waiting = true;
		clock_gettime(CLOCK_MONOTONIC, &e->since);
		pthread_mutex_lock(&hdl_lock);
		e->next = hdl_head;
		if (hdl_head)
			hdl_head->prev = e;
		hdl_head = e;
		pthread_mutex_unlock(&hdl_lock);
		*socket_context = e;
	}
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context != NULL)
	{
		e = *socket_context;
		pthread_mutex_lock(&hdl_lock);
		if (e->prev)
			e->prev->next = e->next;
		else
			hdl_head = e->next;
		if (e->next)
			e->next->prev = e->prev;
		pthread_mutex_unlock(&hdl_lock);
		free(e);
		*socket_context = NULL;
	}
}

/*
 * gw_hdl_headers_done
 *		The headers of the connection's current request are complete.
 */
void
gw_hdl_headers_done(struct MHD_Connection *conn)
{
	HdlEntry   *e = entry_of(conn);

	if (e == NULL)
		return;
	pthread_mutex_lock(&hdl_lock);
	e->waiting = false;
	pthread_mutex_unlock(&hdl_lock);
}

/*
 * gw_hdl_request_done
 *		A request finished; on a kept-alive connection the wait for the
 *		next request's headers begins.
 */
void
gw_hdl_request_done(struct MHD_Connection *conn)
{
	HdlEntry   *e = entry_of(conn);

	if (e == NULL)
		return;
	pthread_mutex_lock(&hdl_lock);
	e->waiting = true;
	clock_gettime(CLOCK_MONOTONIC, &e->since);
	pthread_mutex_unlock(&hdl_lock);
}

/*
 * reaper
 *		Answer 408 to connections waiting for headers past the deadline.
 */
static void *
reaper(void *arg)
{
	char		reply[512];
	int			n;

	(void) arg;
	n = snprintf(reply, sizeof(reply),
				 "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				 strlen(HDL_BODY), HDL_BODY);
	pthread_mutex_lock(&hdl_lock);
	while (!hdl_stopping)
	{
		struct timespec until;

		for (HdlEntry *e = hdl_head; e != NULL; e = e->next)
		{
			if (!e->waiting || e->answered ||
				elapsed_ms(&e->since) <= (long) gw_config.request_timeout_s * 1000L)
				continue;
			(void) send(e->fd, reply, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			shutdown(e->fd, SHUT_RDWR);
			e->answered = true;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250 * 1000000L;
		if (until.tv_nsec >= 1000000000L)
		{
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&hdl_wake, &hdl_lock, &until);
	}
	pthread_mutex_unlock(&hdl_lock);
	return NULL;
}

/*
 * gw_hdl_start
 *		Start the reaper thread.
 */
bool
gw_hdl_start(void)
{
	hdl_stopping = false;
	hdl_running = pthread_create(&hdl_thread, NULL, reaper, NULL) == 0;
	return hdl_running;
}

/*
 * gw_hdl_stop
 *		Stop the reaper thread.
 */
void
gw_hdl_stop(void)
{
	if (!hdl_running)
		return;
	pthread_mutex_lock(&hdl_lock);
	hdl_stopping = true;
	pthread_cond_signal(&hdl_wake);
	pthread_mutex_unlock(&hdl_lock);
	pthread_join(hdl_thread, NULL);
	hdl_running = false;
}
