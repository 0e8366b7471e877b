/*-------------------------------------------------------------------------
 *
 * http.c
 *	  libmicrohttpd glue: one thread per connection, request bodies
 *	  collected up to the configured limit (413 beyond), raw request
 *	  targets (the router decodes path segments itself so that an encoded
 *	  '/' or delimiter stays inside its segment), one access-log line per
 *	  request, and a graceful stop that lets in-flight requests finish.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "dispatch.h"
#include "feed.h"
#include "header_deadline.h"
#include "http.h"
#include "metrics.h"
#include "pathid.h"

typedef struct GwReq
{
	struct timespec start;
	char	   *body;
	size_t		len;
	size_t		cap;
	bool		too_large;
	bool		timed_out;		/* the request did not arrive in time */
	int			status;
	char		method[16];
	char	   *path;
	const struct GwRoute *route;	/* for metrics */
	bool		stream;			/* a change-feed stream */
} GwReq;

static struct MHD_Daemon *daemon_handle;
static atomic_int in_flight;
static atomic_bool stopping;

/*
 * keep_raw
 *		MHD unescape callback that leaves the text encoded.
 */
static size_t
keep_raw(void *cls, struct MHD_Connection *c, char *s)
{
	(void) cls;
	(void) c;
	return strlen(s);
}

/*
 * collect_header
 *		MHD iterator: lower-cased header names into a JSON object.
 */
static enum MHD_Result
collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	json_t	   *obj = cls;
	char		name[256];
	size_t		i;

	(void) kind;
	for (i = 0; key[i] && i < sizeof(name) - 1; i++)
		name[i] = (char) tolower((unsigned char) key[i]);
	name[i] = '\0';
	if (value && gw_valid_utf8(value, strlen(value)))
		json_object_set_new(obj, name, json_string(value));
	return MHD_YES;
}

typedef struct QueryCollect
{
	json_t	   *obj;
	GwError	   *err;
} QueryCollect;

/*
 * collect_query
 *		MHD iterator: percent-decoded query parameters into a JSON object.
 */
static enum MHD_Result
collect_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	QueryCollect *qc = cls;
	char	   *k;
	char	   *v;

	(void) kind;
	if (qc->err->code >= 0)
		return MHD_NO;
	k = gw_percent_decode(key, strlen(key), false, qc->err);
	if (k == NULL)
		return MHD_NO;
	v = gw_percent_decode(value ? value : "", value ? strlen(value) : 0, false, qc->err);
	if (v == NULL)
	{
		free(k);
		return MHD_NO;
	}
	json_object_set_new(qc->obj, k, json_string(v));
	free(k);
	free(v);
	return MHD_YES;
}

/*
 * send_response
 *		Queue a GwResponse on the connection.
 */
static enum MHD_Result
send_response(struct MHD_Connection *conn, GwReq *r, GwResponse *resp)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	const char *body = resp->body ? resp->body : "";

	r->route = resp->route;
	if (resp->stream)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		r->stream = true;
		/* takes the subscriber */
		mr = gw_feed_response(resp->stream, ci ? (int) ci->connect_fd : -1);
		resp->stream = NULL;
		if (mr == NULL)
			return MHD_NO;
	}
	else
		mr = MHD_create_response_from_buffer(strlen(body), (void *) body, MHD_RESPMEM_MUST_COPY);
	if (resp->body)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
								resp->content_type ? resp->content_type : "application/json");
	if (resp->retry_after)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (resp->allow)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, resp->allow);
	if (atomic_load(&stopping))
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(conn, resp->status, mr);
	MHD_destroy_response(mr);
	r->status = resp->status;
	free(resp->body);
	resp->body = NULL;
	return ret;
}

/*
 * send_error
 *		Queue a JSON error response.
 */
static enum MHD_Result
send_error(struct MHD_Connection *conn, GwReq *r, int code, int status, const char *msg)
{
	GwError		err;
	GwResponse	resp;

	memset(&resp, 0, sizeof(resp));
	gw_error_set(&err, code, "%s", msg);
	err.status = status;
	gw_respond_error(&resp, &err, r->path);
	return send_response(conn, r, &resp);
}

/*
 * strip_query
 *		Copy of a raw URL without its query string.
 */
static char *
strip_query(const char *url)
{
	const char *q = strchr(url, '?');

	return q ? strndup(url, q - url) : strdup(url);
}

/*
 * past_deadline
 *		True once the request has taken longer than --request-timeout to
 *		arrive (a client trickling its body).
 */
static bool
past_deadline(const GwReq *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - r->start.tv_sec) * 1000L +
		(now.tv_nsec - r->start.tv_nsec) / 1000000L >
		(long) gw_config.request_timeout_s * 1000L;
}

#define TIMEOUT_MESSAGE "the request was not received within the request timeout"

/*
 * send_timeout_raw
 *		libmicrohttpd cannot queue a response while a body is still being
 *		uploaded, so a client trickling its body past the deadline gets the
 *		408 written straight to its socket (this thread is the only one using
 *		the connection), then the connection is closed.
 */
static enum MHD_Result
send_timeout_raw(struct MHD_Connection *conn, GwReq *r)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	GwError		err;
	char	   *body;
	char		head[256];
	int			n;

	r->status = 408;
	if (ci == NULL)
		return MHD_NO;
	gw_error_set(&err, GW_ERR_INVALID_INPUT, "%s", TIMEOUT_MESSAGE);
	body = gw_error_body(&err, r->path);
	if (body == NULL)
		return MHD_NO;
	n = snprintf(head, sizeof(head),
				 "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
	if (send(ci->connect_fd, head, n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
		(void) send(ci->connect_fd, body, strlen(body), MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(ci->connect_fd, SHUT_WR);
	free(body);
	return MHD_NO;
}

/*
 * header_bytes
 *		MHD iterator: add up the size of the request's header lines.
 */
static enum MHD_Result
header_bytes(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	size_t	   *total = cls;

	(void) kind;
	*total += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/*
 * handle
 *		MHD access handler; called once for the headers, once per body
 *		chunk, and once more at the end of the body.
 */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size,
	   void **con_cls)
{
	GwReq	   *r = *con_cls;
	GwHttpRequest req;
	GwResponse	resp;
	GwError		err;
	QueryCollect qc;
	enum MHD_Result ret;

	(void) cls;
	(void) version;
	if (r == NULL)
	{
		const char *clen;

		gw_hdl_headers_done(conn);
		r = calloc(1, sizeof(GwReq));
		if (r == NULL)
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		snprintf(r->method, sizeof(r->method), "%s", method);
		r->path = strip_query(url);
		*con_cls = r;
		atomic_fetch_add(&in_flight, 1);

		if (strlen(url) > (size_t) gw_config.max_url_bytes)
			return send_error(conn, r, GW_ERR_INVALID_INPUT, 414, "request target is too long");
		{
			size_t		hbytes = 0;

			MHD_get_connection_values(conn, MHD_HEADER_KIND, header_bytes, &hbytes);
			if (hbytes > (size_t) gw_config.max_header_bytes)
				return send_error(conn, r, GW_ERR_INVALID_INPUT, 431,
								  "request header section is too large");
		}
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (clen && strtoll(clen, NULL, 10) > gw_config.max_body_bytes)
			return send_error(conn, r, GW_ERR_INVALID_INPUT, 413, "request body is too large");
		return MHD_YES;
	}

	if (*upload_data_size > 0)
	{
		size_t		n = *upload_data_size;

		*upload_data_size = 0;
		if (!r->timed_out && past_deadline(r))
		{
			r->timed_out = true;
			free(r->body);
			r->body = NULL;
			r->len = r->cap = 0;
			/* Answer now if MHD lets us; else answer on the socket ourselves. */
			if (send_error(conn, r, GW_ERR_INVALID_INPUT, 408, TIMEOUT_MESSAGE) != MHD_YES)
				return send_timeout_raw(conn, r);
			return MHD_YES;
		}
		if (r->too_large || r->timed_out)
			return MHD_YES;
		if (r->len + n > (size_t) gw_config.max_body_bytes)
		{
			r->too_large = true;
			free(r->body);
			r->body = NULL;
			r->len = r->cap = 0;
			return MHD_YES;
		}
		if (r->len + n + 1 > r->cap)
		{
			size_t		cap = r->cap ? r->cap : 4096;
			char	   *nb;

			while (cap < r->len + n + 1)
				cap *= 2;
			nb = realloc(r->body, cap);
			if (nb == NULL)
				return MHD_NO;
			r->body = nb;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		return MHD_YES;
	}

	if (r->timed_out)
		return MHD_YES;			/* 408 already queued */
	if (r->too_large)
		return send_error(conn, r, GW_ERR_INVALID_INPUT, 413, "request body is too large");
	if (past_deadline(r))
		return send_error(conn, r, GW_ERR_INVALID_INPUT, 408, TIMEOUT_MESSAGE);

	gw_error_clear(&err);
	qc.obj = json_object();
	qc.err = &err;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &qc);
	if (err.code >= 0)
	{
		json_decref(qc.obj);
		memset(&resp, 0, sizeof(resp));
		gw_respond_error(&resp, &err, r->path);
		return send_response(conn, r, &resp);
	}

	req.method = method;
	req.path = r->path;
	req.query = qc.obj;
	req.headers = json_object();
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, req.headers);
	req.body = r->body ? r->body : "";
	req.body_len = r->len;

	gw_dispatch(&req, &resp);
	ret = send_response(conn, r, &resp);
	json_decref(req.query);
	json_decref(req.headers);
	return ret;
}

/*
 * completed
 *		MHD completion callback: access log, accounting, cleanup.
 */
static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		  enum MHD_RequestTerminationCode toe)
{
	GwReq	   *r = *con_cls;
	struct timespec now;
	double		ms;

	(void) cls;
	gw_hdl_request_done(conn);
	if (r == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - r->start.tv_sec) * 1000.0 + (now.tv_nsec - r->start.tv_nsec) / 1e6;
	if (!gw_config.quiet)
		fprintf(stderr, "%s %s %d %.1fms%s\n", r->method, r->path ? r->path : "-",
				r->status ? r->status : 0, ms,
				toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (aborted)");
	gw_metrics_request(r->route, r->status, ms / 1000.0, !r->stream);
	free(r->body);
	free(r->path);
	free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&in_flight, 1);
}

/*
 * mhd_log
 *		Route libmicrohttpd's own messages to stderr with our prefix.
 */
static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void) cls;
	fprintf(stderr, "%s: libmicrohttpd: ", GW_PROGRAM);
	vfprintf(stderr, fmt, ap);
}

/*
 * gw_http_start
 *		Start listening on addr.
 */
bool
gw_http_start(const struct sockaddr *addr)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;

	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	daemon_handle = MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL,
									 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
									 MHD_OPTION_SOCK_ADDR, addr,
									 MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
									 MHD_OPTION_NOTIFY_CONNECTION, gw_hdl_notify, NULL,
									 MHD_OPTION_UNESCAPE_CALLBACK, keep_raw, NULL,
									 MHD_OPTION_CONNECTION_LIMIT, (unsigned int) gw_config.max_connections,
									 MHD_OPTION_CONNECTION_TIMEOUT,
									 (unsigned int) gw_config.idle_timeout_s,
									 MHD_OPTION_CONNECTION_MEMORY_LIMIT,
									 (size_t) (gw_config.max_url_bytes +
											   gw_config.max_header_bytes + 16384),
									 MHD_OPTION_END);
	if (daemon_handle == NULL)
		return false;
	if (!gw_hdl_start())
	{
		MHD_stop_daemon(daemon_handle);
		daemon_handle = NULL;
		return false;
	}
	return true;
}

/*
 * gw_http_port
 *		The port actually bound (useful with port 0).
 */
int
gw_http_port(void)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(daemon_handle, MHD_DAEMON_INFO_BIND_PORT);

	return info ? info->port : -1;
}

/*
 * gw_http_stop
 *		Stop accepting connections, wait for in-flight requests (at most
 *		the shutdown budget), then stop the daemon.
 */
void
gw_http_stop(void)
{
	MHD_socket	s;
	struct timespec ts = {0, 20 * 1000000L};
	int			waited_ms = 0;

	atomic_store(&stopping, true);
	s = MHD_quiesce_daemon(daemon_handle);
	if (s != MHD_INVALID_SOCKET)
		close(s);
	while (atomic_load(&in_flight) > 0 && waited_ms < gw_config.shutdown_wait_s * 1000)
	{
		nanosleep(&ts, NULL);
		waited_ms += 20;
	}
	if (atomic_load(&in_flight) > 0)
		fprintf(stderr, "%s: %d requests still running at shutdown\n", GW_PROGRAM,
				atomic_load(&in_flight));
	MHD_stop_daemon(daemon_handle);
	daemon_handle = NULL;
	gw_hdl_stop();
}
