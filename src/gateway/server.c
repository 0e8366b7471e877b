/*-------------------------------------------------------------------------
 *
 * server.c
 *	  The HTTP server on libmicrohttpd: the loops, a request's limits, body
 *	  and response, the access log, shutdown (src/gateway/README.md, "HTTP").
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "feed.h"
#include "metrics.h"
#include "router.h"
#include "server_int.h"
#include "storage.h"

#define SCAN_MS			1000	/* the longest wait: a lost database connection is retried */
#define MAX_EVENTS		16
#define HEAD_SLACK		16384	/* connection memory beyond the head limits */

static atomic_bool stopping;	/* no new connections; answers close theirs */
static atomic_bool ending;		/* the loops end */
static atomic_int in_flight;	/* requests routed and not yet done */
static GwLoop loops[GW_MAX_LOOPS];
static int	nloops;
static int	port = -1;
static struct sockaddr_storage bind_addr;	/* --listen; its port once bound */

/*
 * gw_loop_wake
 *		Wake a loop (from any thread).
 */
void
gw_loop_wake(GwLoop *L)
{
	if (eventfd_write(L->wake_fd, 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: cannot wake a loop: %s\n", GW_PROGRAM, strerror(errno));
}

/*
 * gw_server_answer
 *		r->resp is ready: let r's loop send it (from any thread).
 */
void
gw_server_answer(GwReq *r)
{
	r->ready = true;
	gw_loop_resume(r->loop, r->conn);
}

/*
 * gw_loop_resume
 *		Resume a suspended connection of loop L (from any thread; in
 *		external epoll mode libmicrohttpd does not wake the loop).
 */
void
gw_loop_resume(GwLoop *L, struct MHD_Connection *conn)
{
	MHD_resume_connection(conn);
	if (!pthread_equal(pthread_self(), L->thread))
		gw_loop_wake(L);
}

/*
 * on_uri
 *		A request line was read: the request's context, with its raw target
 *		(cut at '?' once the head is complete) in the same allocation.
 */
static void *
on_uri(void *cls GW_UNUSED, const char *uri, struct MHD_Connection *conn GW_UNUSED)
{
	size_t		n = strlen(uri) + 1;
	GwReq	   *r = calloc(1, sizeof(GwReq) + n);

	if (r != NULL)
		r->req.path = memcpy(r + 1, uri, n);
	return r;
}

/*
 * gw_server_fail
 *		Make r's answer an error of code and message (status 0: the code's).
 */
void
gw_server_fail(GwReq *r, int code, int status, const char *message)
{
	GwError		err;

	gw_error_set(&err, code, "%s", message);
	err.status = status;
	free(r->resp.body);
	r->resp = (GwResponse) {.route = r->resp.route};	/* all else cleared */
	gw_respond_error(&r->resp, &err, r->req.path);
}

/*
 * send_answer
 *		Queue r->resp on the connection (close: and close it after).
 */
static enum MHD_Result
send_answer(GwReq *r, bool close)
{
	GwResponse *resp = &r->resp;
	struct MHD_Response *m = NULL;
	enum MHD_Result ok = MHD_NO;
	bool		typed;

	if (resp->stream != NULL)
		r->stream = (m = gw_stream_response(r, resp->stream)) != NULL;
	if (resp->stream != NULL && !r->stream)
		gw_server_fail(r, LANCE_SERVICE_UNAVAILABLE, 0, "the gateway cannot start a stream");
	resp->stream = NULL;		/* the response's, or discarded */
	r->status = resp->status;
	r->route = resp->route;
	if (m == NULL &&
		(m = MHD_create_response_from_buffer(resp->body ? strlen(resp->body) : 0,
											 resp->body ? resp->body : (char *) "",
											 resp->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT)) == NULL)
		free(resp->body);
	typed = r->stream || resp->body != NULL;
	resp->body = NULL;			/* the response's now */
	if (m == NULL)
		return MHD_NO;
	if ((!typed || MHD_add_response_header(m, "Content-Type", resp->content_type ?
										   resp->content_type : "application/json")) &&
		(!r->stream || (MHD_add_response_header(m, "Cache-Control", "no-cache") &&
						MHD_add_response_header(m, "X-Accel-Buffering", "no"))) &&
		(r->status != 503 || MHD_add_response_header(m, "Retry-After", "1")) &&
		(resp->allow == NULL || MHD_add_response_header(m, "Allow", resp->allow)) &&
		(!(close || r->stream || atomic_load(&stopping)) ||
		 MHD_add_response_header(m, "Connection", "close")))
		ok = MHD_queue_response(r->conn, (unsigned int) r->status, m);
	MHD_destroy_response(m);
	return ok;
}

/*
 * reply_error
 *		Refuse a request before routing it (code 13) and close the connection.
 */
static enum MHD_Result
reply_error(GwReq *r, int status, const char *message)
{
	gw_server_fail(r, LANCE_INVALID_INPUT, status, message);
	r->dispatched = true;		/* nothing more is routed */
	return send_answer(r, true);
}

/*
 * take_header
 *		Count a header field's bytes and add it to the request's headers
 *		(name lower-cased; UTF-8 values only).
 */
static enum MHD_Result
take_header(void *cls, enum MHD_ValueKind kind GW_UNUSED, const char *key, size_t key_size,
			const char *value, size_t value_size)
{
	GwReq	   *r = cls;
	char	   *name = strndup(key, key_size);

	r->header_bytes += key_size + value_size + 4;	/* "k: v\r\n" */
	if (name == NULL)
	{
		json_decref(r->req.headers);
		r->req.headers = NULL;	/* dispatch ends the connection */
		return MHD_NO;
	}
	for (char *c = name; *c != '\0'; c++)	/* strndup stops at a NUL */
		*c = (char) tolower((unsigned char) *c);
	if (value != NULL && gw_valid_utf8(value, value_size))
		json_object_set_new(r->req.headers, name, json_stringn_nocheck(value, value_size));
	free(name);
	return MHD_YES;
}

/*
 * start
 *		The head arrived: the limits checked before the body (README, "Limits").
 */
static enum MHD_Result
start(GwReq *r, GwLoop *L, struct MHD_Connection *conn, const char *method)
{
	const char *cl;
	char	   *q = strchr(r->req.path, '?');	/* in the request's allocation */
	bool		too_long = strlen(r->req.path) > (size_t) gw_config.max_url_bytes;

	r->started = true;
	r->conn = conn;
	r->loop = L;
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	if ((r->req.method = strdup(method)) == NULL || (r->req.headers = json_object()) == NULL)
		return MHD_NO;
	if (q != NULL)
	{
		*q = '\0';
		r->query = q + 1;
	}
	if (too_long)
		return reply_error(r, 414, "request target is too long");
	MHD_get_connection_values_n(conn, MHD_HEADER_KIND, take_header, r);
	if (r->header_bytes > (size_t) gw_config.max_header_bytes)
		return reply_error(r, 431, "the request header fields are too large");
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > (unsigned long long) gw_config.max_body_bytes)
		return reply_error(r, 413, "the request body is too large");
	return MHD_YES;				/* libmicrohttpd sends 100 Continue if asked */
}

/*
 * dispatch
 *		Route a complete request; answer it, or send its call on its way.
 */
static enum MHD_Result
dispatch(GwReq *r)
{
	GwHttpRequest *req = &r->req;
	GwDispatchStep step;
	GwError		err;

	r->dispatched = true;
	r->counted = true;
	atomic_fetch_add(&in_flight, 1);
	req->body = r->body ? r->body : "";
	req->query = json_object();
	if (req->query == NULL || req->headers == NULL)
		return MHD_NO;
	if (r->query != NULL && !gw_parse_query(r->query, strlen(r->query), req->query, &err))
	{
		gw_respond_error(&r->resp, &err, req->path);
		return send_answer(r, false);
	}

	step = gw_dispatch_begin(req, &r->resp, &r->call);
	if (step == GW_DISPATCH_DONE)
	{
		gw_metrics_add(GW_M_LOOP_ANSWERED, 1);
		return send_answer(r, false);
	}
	MHD_suspend_connection(r->conn);
	if (step == GW_DISPATCH_WORK || !gw_pipe_send(r))
		gw_worker_submit(r);
	return MHD_YES;
}

/*
 * on_request
 *		libmicrohttpd's access handler: for the head, each piece of the
 *		body (kept; past --max-body-bytes the rest is dropped, past
 *		--request-timeout the connection ends: README, "Limits and slow
 *		clients"), the complete request, and after each resume.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
		   const char *version GW_UNUSED, const char *upload, size_t *upload_size, void **ctx)
{
	GwReq	   *r = *ctx;

	(void) url;					/* decoded: on_uri kept the raw one */
	if (r == NULL)
		return MHD_NO;
	if (!r->started)
		return start(r, cls, conn, method);
	if (*upload_size > 0)
	{
		size_t		len = *upload_size;

		*upload_size = 0;
		if (gw_ms_since(&r->start) >= gw_config.request_timeout_s * 1000L)
			return MHD_NO;
		r->too_large = r->too_large || r->req.body_len + len > (size_t) gw_config.max_body_bytes;
		if (r->too_large)
			return MHD_YES;
		if (r->req.body_len + len > r->body_cap)
		{
			char	   *nb = realloc(r->body, 2 * (r->req.body_len + len));

			if (nb == NULL)
				return MHD_NO;
			r->body = nb;
			r->body_cap = 2 * (r->req.body_len + len);
		}
		memcpy(r->body + r->req.body_len, upload, len);
		r->req.body_len += len;
		return MHD_YES;
	}
	if (r->ready)
	{
		r->ready = false;
		return send_answer(r, false);
	}
	if (r->dispatched)
		return MHD_YES;
	if (r->too_large)
		return reply_error(r, 413, "the request body is too large");
	return dispatch(r);
}

/*
 * on_completed
 *		A request ended: the access log line, the metrics, its memory.
 */
static void
on_completed(void *cls GW_UNUSED, struct MHD_Connection *conn GW_UNUSED, void **ctx,
			 enum MHD_RequestTerminationCode toe)
{
	GwReq	   *r = *ctx;

	if (r == NULL)
		return;
	*ctx = NULL;
	if (r->started)
	{
		double		ms = gw_ms_since(&r->start);
		bool		aborted = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK;

		if (!gw_config.quiet)
			fprintf(stderr, "%s %s %d %.1fms%s\n", r->req.method ? r->req.method : "-",
					r->req.path, r->status, ms, aborted ? " (aborted)" : "");
		gw_metrics_request(r->route, r->status, ms / 1000.0, !r->stream);
	}
	if (r->counted)
		atomic_fetch_sub(&in_flight, 1);
	json_decref(r->req.query);
	json_decref(r->req.headers);
	gw_call_free(&r->call);
	free(r->resp.body);
	if (r->resp.stream != NULL)
		gw_feed_discard(r->resp.stream);	/* only a change-feed stream has one */
	free(r->body);
	free((char *) r->req.method);
	free(r);
}

/*
 * loop_main
 *		A loop: wait for events, run the daemon, send what the pipeline holds.
 */
static void *
loop_main(void *arg)
{
	GwLoop	   *L = arg;
	struct epoll_event evs[MAX_EVENTS];
	bool		quiesced = false;

	gw_presence_enter_loop(L->ep, GW_EV_FILES);	/* storage_presence.c */
	while (!atomic_load(&ending))
	{
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		int			timeout = SCAN_MS;
		int			n;

		gw_pipe_connect(L);		/* if the connection is down: reopen it */
		if (MHD_get_timeout(L->daemon, &mhd_ms) == MHD_YES && mhd_ms < (MHD_UNSIGNED_LONG_LONG) timeout)
			timeout = (int) mhd_ms;
		n = epoll_wait(L->ep, evs, MAX_EVENTS, timeout);
		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == GW_EV_FILES)
				gw_presence_drain();	/* before this wake-up's answers */
		for (int i = 0; i < n; i++)
		{
			if (evs[i].data.u64 == GW_EV_WAKE)
			{
				eventfd_t	v;

				if (eventfd_read(L->wake_fd, &v) < 0 && errno != EAGAIN)
					fprintf(stderr, "%s: wake-up: %s\n", GW_PROGRAM, strerror(errno));
				gw_pipe_take_connection(L);
			}
			else if (evs[i].data.u64 == GW_EV_PIPE)
				gw_pipe_read(L);
		}
		MHD_run(L->daemon);
		gw_pipe_flush(L);
		if (atomic_load(&stopping) && !quiesced)
		{
			MHD_socket s = MHD_quiesce_daemon(L->daemon);

			if (s != MHD_INVALID_SOCKET)
				close(s);
			quiesced = true;
		}
	}
	return NULL;
}

/*
 * loop_start
 *		Set up loop L (its daemon on bind_addr, its epoll set) and start it.
 */
static bool
loop_start(GwLoop *L, unsigned int limit)
{
	const union MHD_DaemonInfo *info;
	struct epoll_event daemon_ev = {EPOLLIN, {.u64 = GW_EV_DAEMON}};
	struct epoll_event wake_ev = {EPOLLIN, {.u64 = GW_EV_WAKE}};
	size_t		head = (size_t) (gw_config.max_url_bytes + gw_config.max_header_bytes);
	bool		v6 = bind_addr.ss_family == AF_INET6;

	pthread_mutex_init(&L->db_lock, NULL);
	/* room for a head past the limits, so that it gets the JSON answer */
	L->daemon = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
								 (v6 ? MHD_USE_DUAL_STACK : 0),
								 0, NULL, NULL, on_request, L,
								 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &bind_addr,
								 MHD_OPTION_LISTENING_ADDRESS_REUSE, 1U,
								 MHD_OPTION_CONNECTION_LIMIT, limit,
								 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) gw_config.idle_timeout_s,
								 MHD_OPTION_CONNECTION_MEMORY_LIMIT, head + HEAD_SLACK,
								 MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
								 MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
								 MHD_OPTION_END);
	if (L->daemon == NULL)
		return false;
	if (port < 0 && (info = MHD_get_daemon_info(L->daemon, MHD_DAEMON_INFO_BIND_PORT)) != NULL)
	{
		/* port 0 picked one: the other loops listen on it too */
		port = info->port;
		if (v6)
			((struct sockaddr_in6 *) &bind_addr)->sin6_port = htons((uint16_t) port);
		else
			((struct sockaddr_in *) &bind_addr)->sin_port = htons((uint16_t) port);
	}
	info = MHD_get_daemon_info(L->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	L->ep = epoll_create1(EPOLL_CLOEXEC);
	L->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (info == NULL || L->ep < 0 || L->wake_fd < 0 ||
		epoll_ctl(L->ep, EPOLL_CTL_ADD, info->epoll_fd, &daemon_ev) != 0 ||
		epoll_ctl(L->ep, EPOLL_CTL_ADD, L->wake_fd, &wake_ev) != 0)
		return false;
	return pthread_create(&L->thread, NULL, loop_main, L) == 0;
}

/*
 * gw_server_start
 *		Listen on addr and start the loops: the port bound (port 0 picks
 *		one), or -1.
 */
int
gw_server_start(const struct sockaddr *addr)
{
	unsigned int limit = (unsigned int) ((gw_config.max_connections + gw_config.loops - 1) /
										 gw_config.loops);

	memcpy(&bind_addr, addr, addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		   : sizeof(struct sockaddr_in));
	for (nloops = 0; nloops < gw_config.loops; nloops++)
		if (!loop_start(&loops[nloops], limit))
		{
			fprintf(stderr, "%s: cannot start the HTTP server\n", GW_PROGRAM);
			return -1;
		}
	return port;
}

/*
 * gw_server_stop
 *		Stop accepting, wait for in-flight requests (at most the shutdown
 *		budget), then end the loops, closing every connection.
 */
void
gw_server_stop(void)
{
	struct timespec ts = {0, 20 * 1000000L};
	int			left;

	atomic_store(&stopping, true);
	for (int i = 0; i < nloops; i++)
		gw_loop_wake(&loops[i]);
	for (int ms = 0; atomic_load(&in_flight) > 0 && ms < gw_config.shutdown_wait_s * 1000; ms += 20)
		nanosleep(&ts, NULL);
	left = atomic_load(&in_flight);
	if (left > 0)
		fprintf(stderr, "%s: %d requests still running at shutdown\n", GW_PROGRAM, left);
	atomic_store(&ending, true);
	for (GwLoop *L = loops; L < loops + nloops; L++)
	{
		gw_loop_wake(L);
		pthread_join(L->thread, NULL);
		/* suspended connections must not meet MHD_stop_daemon */
		if (left == 0)
			MHD_stop_daemon(L->daemon);
		gw_pipe_close(L);
		close(L->ep);
		close(L->wake_fd);
	}
	if (left == 0)
		gw_worker_stop();
	nloops = 0;
}
