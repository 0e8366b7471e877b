/*-------------------------------------------------------------------------
 *
 * http_conn.c
 *	  Requests and responses on one connection of the HTTP/1.1 server.
 *
 *	  A connection thread (http.c) reads requests with poll() deadlines
 *	  (or takes over one the event loop read, http_loop.c),
 *	  parses them with http_parse.c, hands them to gw_dispatch() and writes
 *	  the response: keep-alive (HTTP/1.1 by default, HTTP/1.0 on request),
 *	  pipelining, Expect: 100-continue, chunked request bodies, and the
 *	  change feed's Server-Sent Events streams (feed.c).  Each connection
 *	  has one buffer, reused from request to request; the request's method,
 *	  path and header fields point into it.
 *
 *	  Every reply is JSON, including those to malformed requests (400),
 *	  oversized ones (413, 414, 431) and requests that do not arrive within
 *	  --request-timeout (408); after such a reply the connection is closed.
 *	  A connection that sends nothing for --idle-timeout is closed.  One
 *	  access-log line and one metrics update per request.
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

#include "dispatch.h"
#include "feed.h"
#include "http_conn.h"
#include "metrics.h"
#include "pathid.h"

#define BUF_KEEP		65536	/* larger buffers shrink after a request */
#define STREAM_BUF		16384	/* change-feed bytes per write */
#define LINGER_MS		2000	/* reading after a final reply, at most */
#define LINGER_BYTES	(4 << 20)

#define MSG_HEAD_TIMEOUT "the request headers were not received within the request timeout"
#define MSG_BODY_TIMEOUT "the request was not received within the request timeout"

typedef GwExchange Exchange;

typedef enum IoResult
{
	IO_OK,
	IO_EOF,
	IO_TIMEOUT,
	IO_ERROR,
	IO_STOP						/* the server is stopping */
} IoResult;

atomic_bool gw_http_stopping;
atomic_int	gw_http_in_flight;
int			gw_http_stop_pipe[2] = {-1, -1};
GwHttpLimits gw_http_limits;
size_t		gw_http_head_bytes;

/*
 * deadline_after
 *		The monotonic time s seconds after t.
 */
static struct timespec
deadline_after(const struct timespec *t, int s)
{
	struct timespec d = *t;

	d.tv_sec += s;
	return d;
}

/*
 * ms_until
 *		Milliseconds from now until t (negative once past).
 */
static long
ms_until(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (t->tv_sec - now.tv_sec) * 1000L + (t->tv_nsec - now.tv_nsec) / 1000000L;
}

/*
 * reason
 *		The reason phrase of a status code.
 */
static const char *
reason(int status)
{
	switch (status)
	{
		case 100:
			return "Continue";
		case 200:
			return "OK";
		case 204:
			return "No Content";
		case 400:
			return "Bad Request";
		case 401:
			return "Unauthorized";
		case 403:
			return "Forbidden";
		case 404:
			return "Not Found";
		case 405:
			return "Method Not Allowed";
		case 406:
			return "Not Acceptable";
		case 408:
			return "Request Timeout";
		case 409:
			return "Conflict";
		case 413:
			return "Content Too Large";
		case 414:
			return "URI Too Long";
		case 429:
			return "Too Many Requests";
		case 431:
			return "Request Header Fields Too Large";
		case 500:
			return "Internal Server Error";
		case 503:
			return "Service Unavailable";
		default:
			return status < 500 ? "Client Error" : "Server Error";
	}
}

/*
 * http_date
 *		The current time as an HTTP date (cached per thread and second).
 */
static const char *
http_date(void)
{
	static __thread time_t last;
	static __thread char text[40];
	time_t		now = time(NULL);

	if (now != last)
	{
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		last = now;
	}
	return text;
}

/*
 * read_more
 *		Wait up to timeout_ms for bytes and append them to the buffer
 *		(which has room).  With watch_stop, a graceful stop ends the wait
 *		unless bytes are there.
 */
static IoResult
read_more(GwHttpConn *c, long timeout_ms, bool watch_stop)
{
	for (;;)
	{
		struct pollfd p[2] = {{c->fd, POLLIN, 0}, {gw_http_stop_pipe[0], POLLIN, 0}};
		ssize_t		n;
		int			rc;

		rc = poll(p, watch_stop ? 2 : 1, timeout_ms > INT32_MAX ? INT32_MAX : (int) timeout_ms);
		if (rc < 0)
		{
			if (errno == EINTR)
				continue;
			return IO_ERROR;
		}
		if (rc == 0)
			return IO_TIMEOUT;
		if (p[0].revents == 0)
			return IO_STOP;
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n > 0)
		{
			c->len += (size_t) n;
			return IO_OK;
		}
		if (n == 0)
			return IO_EOF;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return IO_ERROR;
	}
}

/*
 * write_all
 *		Send the iovecs completely, waiting while the socket is full, but
 *		at most --idle-timeout without progress.  False if the client is
 *		gone or stopped reading.
 */
static bool
write_all(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = iovcnt;
	while (msg.msg_iovlen > 0)
	{
		ssize_t		n;

		if (msg.msg_iov->iov_len == 0)
		{
			msg.msg_iov++;
			msg.msg_iovlen--;
			continue;
		}
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0)
		{
			struct pollfd p = {fd, POLLOUT, 0};
			int			rc;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return false;
			rc = poll(&p, 1, gw_config.idle_timeout_s * 1000);
			if (rc == 0 || (rc < 0 && errno != EINTR))
				return false;
			continue;
		}
		while (n > 0 && msg.msg_iovlen > 0)
		{
			if ((size_t) n >= msg.msg_iov->iov_len)
			{
				n -= (ssize_t) msg.msg_iov->iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			}
			else
			{
				msg.msg_iov->iov_base = (char *) msg.msg_iov->iov_base + n;
				msg.msg_iov->iov_len -= (size_t) n;
				n = 0;
			}
		}
	}
	return true;
}

/*
 * response_head
 *		Format the head of a complete response into head (size bytes);
 *		its length, or 0 if it does not fit.
 */
static size_t
response_head(const Exchange *x, const GwResponse *resp, char *head, size_t size)
{
	size_t		blen = resp->body ? strlen(resp->body) : 0;
	bool		bodyless = resp->status < 200 || resp->status == 204 || resp->status == 304;
	int			n;

	n = snprintf(head, size, "HTTP/1.1 %d %s\r\nDate: %s\r\n",
				 resp->status, reason(resp->status), http_date());
	if (resp->body)
		n += snprintf(head + n, size - n, "Content-Type: %s\r\n",
					  resp->content_type ? resp->content_type : "application/json");
	if (!bodyless)
		n += snprintf(head + n, size - n, "Content-Length: %zu\r\n", blen);
	if (resp->retry_after)
		n += snprintf(head + n, size - n, "Retry-After: 1\r\n");
	if (resp->allow)
		n += snprintf(head + n, size - n, "Allow: %s\r\n", resp->allow);
	if (x->close)
		n += snprintf(head + n, size - n, "Connection: close\r\n");
	else if (x->minor == 0)
		n += snprintf(head + n, size - n, "Connection: keep-alive\r\n");
	n += snprintf(head + n, size - n, "\r\n");
	if ((size_t) n >= size)
		return 0;				/* cannot happen: the header values are ours */
	return (size_t) n;
}

/*
 * gw_http_response_iov
 *		The head (formatted into head) and the body of a response as two
 *		iovecs; false if the head does not fit.
 */
bool
gw_http_response_iov(const Exchange *x, const GwResponse *resp, char *head, size_t size,
			 struct iovec *iov)
{
	bool		bodyless = resp->status < 200 || resp->status == 204 || resp->status == 304;

	iov[0].iov_base = head;
	iov[0].iov_len = response_head(x, resp, head, size);
	iov[1].iov_base = resp->body;
	iov[1].iov_len = (x->head_only || bodyless || resp->body == NULL) ? 0 : strlen(resp->body);
	return iov[0].iov_len > 0;
}

/*
 * send_response
 *		Write a complete response, head and body in one call.
 */
static bool
send_response(GwHttpConn *c, const Exchange *x, const GwResponse *resp)
{
	char		head[1024];
	struct iovec iov[2];

	if (!gw_http_response_iov(x, resp, head, sizeof(head), iov))
		return false;
	return write_all(c->fd, iov, 2);
}

/*
 * reply_error
 *		Answer a request that cannot be served with a JSON error (code 13
 *		unless given) and mark the connection for closing.
 */
static void
reply_error(GwHttpConn *c, Exchange *x, int status, int code, const char *message,
			const char *instance)
{
	GwError		err;
	GwResponse	resp;

	memset(&resp, 0, sizeof(resp));
	gw_error_set(&err, code, "%s", message);
	err.status = status;
	gw_respond_error(&resp, &err, instance);
	x->status = resp.status;
	x->close = true;
	if (resp.body == NULL || !send_response(c, x, &resp))
		x->aborted = true;
	free(resp.body);
}

/*
 * gw_http_finish
 *		The access-log line and the metrics of one request.
 */
void
gw_http_finish(const Exchange *x)
{
	struct timespec now;
	double		ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - x->start.tv_sec) * 1000.0 + (now.tv_nsec - x->start.tv_nsec) / 1e6;
	if (!gw_config.quiet)
		fprintf(stderr, "%s %s %d %.1fms%s\n", x->method, x->path, x->status, ms,
				x->aborted ? " (aborted)" : "");
	gw_metrics_request(x->route, x->status, ms / 1000.0, !x->stream);
}

/*
 * grow
 *		Make the buffer hold at least want bytes, moving the pointers of h
 *		(if any) along with it.
 */
static bool
grow(GwHttpConn *c, size_t want, GwHttpHead *h)
{
	char	   *old = c->buf;
	char	   *nb;

	if (want <= c->cap)
		return true;
	nb = malloc(want);
	if (nb == NULL)
		return false;
	memcpy(nb, old, c->len);
	if (h != NULL)
	{
#define REBASE(p) do { if ((p) != NULL) (p) = nb + ((p) - old); } while (0)
		REBASE(h->method);
		REBASE(h->path);
		REBASE(h->query);
		for (int i = 0; i < h->nfields; i++)
		{
			REBASE(h->fields[i].name);
			REBASE(h->fields[i].value);
		}
#undef REBASE
	}
	free(old);
	c->buf = nb;
	c->cap = want;
	return true;
}

/*
 * gw_http_only_blank
 *		True if the buffer holds nothing but line endings.
 */
bool
gw_http_only_blank(const GwHttpConn *c)
{
	for (size_t i = 0; i < c->len; i++)
		if (c->buf[i] != '\r' && c->buf[i] != '\n')
			return false;
	return true;
}

/*
 * read_head
 *		Receive and parse a request head.  Returns GW_HTTP_DONE with h
 *		filled, or GW_HTTP_MORE when the connection is to be closed
 *		without a reply (idle, the client left, the server stops), or
 *		GW_HTTP_ERROR with perr set.
 */
static GwHttpResult
read_head(GwHttpConn *c, const struct timespec *wait_start, GwHttpHead *h, GwHttpError *perr)
{
	struct timespec deadline = deadline_after(wait_start, gw_config.request_timeout_s);
	struct timespec idle = deadline_after(wait_start, gw_config.idle_timeout_s);

	if (c->head_ready)
	{
		/* the event loop parsed it (in place: it cannot be parsed again) */
		*h = c->head;
		c->head_ready = false;
		return GW_HTTP_DONE;
	}
	for (;;)
	{
		GwHttpResult r;
		bool		fresh;
		long		wait_ms;
		IoResult	io;

		if (c->len > 0)
		{
			r = gw_http_parse_head(c->buf, c->len, &gw_http_limits, h, perr);
			if (r != GW_HTTP_MORE)
				return r;
		}
		fresh = (c->len == 0);
		if (fresh && atomic_load(&gw_http_stopping))
			return GW_HTTP_MORE;
		if (c->len == c->cap &&
			(c->cap > gw_http_head_bytes ||
			 !grow(c, c->cap * 2 <= gw_http_head_bytes ? c->cap * 2 : gw_http_head_bytes + 1, h)))
		{
			/* the parser decides within gw_http_head_bytes bytes, so: out of memory */
			perr->status = 431;
			perr->message = "request header section is too large";
			return GW_HTTP_ERROR;
		}
		wait_ms = ms_until(&deadline);
		if (fresh && ms_until(&idle) <= wait_ms)
		{
			/* an idle connection: closed without a reply */
			wait_ms = ms_until(&idle);
			if (wait_ms <= 0)
				return GW_HTTP_MORE;
		}
		if (wait_ms <= 0)
		{
			perr->status = 408;
			perr->message = MSG_HEAD_TIMEOUT;
			return GW_HTTP_ERROR;
		}
		io = read_more(c, wait_ms, fresh);
		if (io == IO_EOF)
		{
			if (gw_http_only_blank(c))
				return GW_HTTP_MORE;
			perr->status = 400;
			perr->message = "the client closed the connection in the middle of the request head";
			return GW_HTTP_ERROR;
		}
		if (io == IO_ERROR || io == IO_STOP)
			return GW_HTTP_MORE;
	}
}

/*
 * send_continue
 *		Expect: 100-continue: tell the client to send its body, unless some
 *		of it is already here.
 */
static bool
send_continue(GwHttpConn *c, const GwHttpHead *h)
{
	static const char text[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct iovec iov = {(void *) text, sizeof(text) - 1};

	if (!h->expect_continue || h->minor < 1 || c->len > h->head_len)
		return true;
	return write_all(c->fd, &iov, 1);
}

/*
 * read_body
 *		Receive the body of a request (Content-Length or chunked) within
 *		--request-timeout of its head.  On success *body_len is its length
 *		(it starts at c->buf + h->head_len) and *consumed the bytes of the
 *		whole request.  On failure the error reply (if any) was sent.
 */
static bool
read_body(GwHttpConn *c, GwHttpHead *h, Exchange *x, size_t *body_len, size_t *consumed)
{
	struct timespec now;
	struct timespec deadline;
	GwHttpChunked ch;
	GwHttpError perr;
	size_t		need = h->head_len + h->content_length;

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = deadline_after(&now, gw_config.request_timeout_s);
	if (h->chunked)
		gw_http_chunked_init(&ch);
	if (!send_continue(c, h))
	{
		x->aborted = true;
		return false;
	}

	for (;;)
	{
		long		wait_ms;
		IoResult	io;

		if (h->chunked)
		{
			size_t		blen = c->len - h->head_len;
			GwHttpResult r = gw_http_chunked(&ch, c->buf + h->head_len, blen, &gw_http_limits, &perr);

			if (r == GW_HTTP_ERROR)
			{
				reply_error(c, x, perr.status, GW_ERR_INVALID_INPUT, perr.message, h->path);
				return false;
			}
			if (r == GW_HTTP_DONE)
			{
				*body_len = ch.out;
				*consumed = h->head_len + ch.in;
				return true;
			}
			gw_http_chunked_compact(&ch, c->buf + h->head_len, &blen);
			c->len = h->head_len + blen;
			if (c->len == c->cap && !grow(c, c->cap * 2, h))
			{
				reply_error(c, x, 503, GW_ERR_UNAVAILABLE, "out of memory", h->path);
				return false;
			}
		}
		else if (c->len >= need)
		{
			*body_len = h->content_length;
			*consumed = need;
			return true;
		}
		else if (c->len == c->cap && !grow(c, c->cap * 2 < need ? c->cap * 2 : need, h))
		{
			/* the buffer grows with what arrives, not with what is announced */
			reply_error(c, x, 503, GW_ERR_UNAVAILABLE, "out of memory", h->path);
			return false;
		}

		wait_ms = ms_until(&deadline);
		if (wait_ms <= 0)
		{
			reply_error(c, x, 408, GW_ERR_INVALID_INPUT, MSG_BODY_TIMEOUT, h->path);
			return false;
		}
		io = read_more(c, wait_ms, false);
		if (io == IO_EOF)
		{
			reply_error(c, x, 400, GW_ERR_INVALID_INPUT,
						"the client closed the connection before the whole request body arrived",
						h->path);
			return false;
		}
		if (io != IO_OK && io != IO_TIMEOUT)
		{
			x->aborted = true;
			x->close = true;
			return false;
		}
	}
}

/*
 * stream_response
 *		Send a change-feed stream until it ends or the client goes away:
 *		chunked for HTTP/1.1, delimited by the connection's end for
 *		HTTP/1.0.  The connection is closed afterwards.
 */
static void
stream_response(GwHttpConn *c, Exchange *x, GwResponse *resp)
{
	void	   *stream = resp->stream;
	bool		chunked = x->minor >= 1;
	char		head[512];
	char	   *buf;
	struct iovec iov[3];
	int			n;

	resp->stream = NULL;
	x->stream = true;
	x->close = true;
	n = snprintf(head, sizeof(head),
				 "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\nCache-Control: no-cache\r\n"
				 "X-Accel-Buffering: no\r\nConnection: close\r\n%s\r\n",
				 resp->status, reason(resp->status), http_date(),
				 resp->content_type ? resp->content_type : "text/event-stream",
				 chunked && !x->head_only ? "Transfer-Encoding: chunked\r\n" : "");
	iov[0].iov_base = head;
	iov[0].iov_len = (size_t) n;
	buf = x->head_only ? NULL : malloc(STREAM_BUF);
	if (!write_all(c->fd, iov, 1))
		x->aborted = true;
	if (x->head_only || x->aborted || buf == NULL)
	{
		free(buf);
		gw_feed_discard(stream);
		return;
	}

	gw_feed_attach(stream, c->fd);
	for (;;)
	{
		char		size_line[24];
		size_t		len = gw_feed_read(stream, buf, STREAM_BUF);

		if (len == 0)
			break;
		if (chunked)
		{
			iov[0].iov_base = size_line;
			iov[0].iov_len = (size_t) snprintf(size_line, sizeof(size_line), "%zx\r\n", len);
			iov[1].iov_base = buf;
			iov[1].iov_len = len;
			iov[2].iov_base = (void *) "\r\n";
			iov[2].iov_len = 2;
		}
		else
		{
			iov[0].iov_base = buf;
			iov[0].iov_len = len;
		}
		if (!write_all(c->fd, iov, chunked ? 3 : 1))
		{
			x->aborted = true;
			break;
		}
	}
	if (chunked && !x->aborted)
	{
		iov[0].iov_base = (void *) "0\r\n\r\n";
		iov[0].iov_len = 5;
		if (!write_all(c->fd, iov, 1))
			x->aborted = true;
	}
	gw_feed_discard(stream);
	free(buf);
}

/*
 * gw_http_request_view
 *		The dispatcher's view of a complete request whose body is body_len
 *		bytes after the head.  The caller releases req->query and
 *		req->headers.  False, with resp filled, if the query string is
 *		malformed.
 */
bool
gw_http_request_view(GwHttpConn *c, const GwHttpHead *h, size_t body_len,
			 GwHttpRequest *req, GwResponse *resp)
{
	GwError		err;

	gw_error_clear(&err);
	req->query = json_object();
	req->headers = json_object();
	req->method = h->method;
	req->path = h->path;
	req->body = c->buf + h->head_len;
	req->body_len = body_len;
	if (h->query != NULL && !gw_http_parse_query(h->query, h->query_len, req->query, &err))
	{
		gw_respond_error(resp, &err, h->path);
		return false;
	}
	for (int i = 0; i < h->nfields; i++)
	{
		const GwHttpField *f = &h->fields[i];

		if (gw_valid_utf8(f->value, f->value_len))
			json_object_set_new(req->headers, f->name, json_stringn(f->value, f->value_len));
	}
	return true;
}

/*
 * answer
 *		Build the dispatcher's view of a complete request, dispatch it and
 *		send the response.
 */
static void
answer(GwHttpConn *c, const GwHttpHead *h, Exchange *x, size_t body_len)
{
	GwHttpRequest req;
	GwResponse	resp;

	memset(&resp, 0, sizeof(resp));
	if (gw_http_request_view(c, h, body_len, &req, &resp))
		gw_dispatch(&req, &resp);
	json_decref(req.query);
	json_decref(req.headers);

	x->route = resp.route;
	x->status = resp.status;
	if (resp.stream != NULL)
		stream_response(c, x, &resp);
	else if (!send_response(c, x, &resp))
	{
		x->aborted = true;
		x->close = true;
	}
	free(resp.body);
}

/*
 * gw_http_next_request
 *		After a response on a connection that stays open: the next
 *		request's bytes move to the front, a large buffer shrinks, and the
 *		wait for the next request begins.
 */
void
gw_http_next_request(GwHttpConn *c, size_t consumed)
{
	memmove(c->buf, c->buf + consumed, c->len - consumed);
	c->len -= consumed;
	if (c->cap > BUF_KEEP && c->len <= GW_HTTP_BUF_INITIAL)
	{
		char	   *nb = realloc(c->buf, GW_HTTP_BUF_INITIAL);

		if (nb != NULL)
		{
			c->buf = nb;
			c->cap = GW_HTTP_BUF_INITIAL;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &c->wait_start);
}

/*
 * gw_http_serve_request
 *		Receive one request on the connection and answer it.
 */
GwHttpNext
gw_http_serve_request(GwHttpConn *c, struct timespec *wait_start)
{
	GwHttpHead	h;
	GwHttpError perr;
	GwHttpResult r;
	Exchange	x;
	size_t		body_len = 0;
	size_t		consumed;
	bool		ok = true;

	memset(&x, 0, sizeof(x));
	x.method = "-";
	x.path = "-";
	x.minor = 1;
	x.start = *wait_start;
	gw_http_head_init(&h);

	r = read_head(c, wait_start, &h, &perr);
	if (r == GW_HTTP_MORE)
		return GW_HTTP_NEXT_CLOSE;
	if (r == GW_HTTP_ERROR)
	{
		char		method[GW_HTTP_MAX_METHOD + 1];
		char	   *path = NULL;

		if (h.path != NULL)
		{
			snprintf(method, sizeof(method), "%.*s", (int) h.method_len, h.method);
			path = strndup(h.path, h.path_len);
			x.method = method;
			x.path = path ? path : "-";
			x.minor = h.minor;
		}
		reply_error(c, &x, perr.status, GW_ERR_INVALID_INPUT, perr.message, path);
		gw_http_finish(&x);
		free(path);
		return GW_HTTP_NEXT_LINGER;
	}

	clock_gettime(CLOCK_MONOTONIC, &x.start);
	atomic_fetch_add(&gw_http_in_flight, 1);
	x.minor = h.minor;
	x.head_only = strcmp(h.method, "HEAD") == 0;
	x.close = !h.keep_alive || atomic_load(&gw_http_stopping);
	consumed = h.head_len;
	if (h.chunked || h.content_length > 0)
		ok = read_body(c, &h, &x, &body_len, &consumed);
	x.method = h.method;
	x.path = h.path;
	if (ok)
		answer(c, &h, &x, body_len);
	gw_http_finish(&x);
	atomic_fetch_sub(&gw_http_in_flight, 1);
	if (!ok)
		return x.aborted ? GW_HTTP_NEXT_CLOSE : GW_HTTP_NEXT_LINGER;
	if (x.close)
		return (x.stream || x.aborted) ? GW_HTTP_NEXT_CLOSE : GW_HTTP_NEXT_LINGER;

	/* keep the connection */
	gw_http_next_request(c, consumed);
	*wait_start = c->wait_start;
	return GW_HTTP_NEXT_REQUEST;
}

/*
 * gw_http_resume
 *		In a thread, finish what the event loop handed over with a
 *		connection (c->resume): the rest of a response, or the graceful
 *		close after a final one.
 */
GwHttpNext
gw_http_resume(GwHttpConn *c)
{
	GwHttpResume resume = c->resume;

	c->resume = GW_RESUME_REQUEST;
	if (resume == GW_RESUME_LINGER)
		return GW_HTTP_NEXT_LINGER;
	if (resume != GW_RESUME_FLUSH)
		return GW_HTTP_NEXT_REQUEST;

	{
		struct iovec iov = {c->out, c->out_len};

		if (!write_all(c->fd, &iov, 1))
		{
			c->x.aborted = true;
			c->x.close = true;
		}
	}
	free(c->out);
	c->out = NULL;
	c->out_len = 0;
	gw_http_finish(&c->x);
	atomic_fetch_sub(&gw_http_in_flight, 1);
	if (c->x.close)
		return c->x.aborted ? GW_HTTP_NEXT_CLOSE : GW_HTTP_NEXT_LINGER;
	gw_http_next_request(c, c->consumed);
	return GW_HTTP_NEXT_REQUEST;
}

/*
 * gw_http_linger
 *		After a final reply, stop sending and read (and drop) what the
 *		client still sends until it closes, for a short while, so that
 *		closing with unread data does not reset the connection before the
 *		client read the reply.
 */
void
gw_http_linger(int fd)
{
	struct timespec now;
	struct timespec until;
	char		scratch[4096];
	size_t		total = 0;

	shutdown(fd, SHUT_WR);
	clock_gettime(CLOCK_MONOTONIC, &now);
	until = now;
	until.tv_nsec += LINGER_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (total < LINGER_BYTES)
	{
		struct pollfd p = {fd, POLLIN, 0};
		long		ms = ms_until(&until);
		ssize_t		n;

		if (ms <= 0 || poll(&p, 1, (int) ms) <= 0)
			break;
		n = recv(fd, scratch, sizeof(scratch), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n > 0)
			total += (size_t) n;
	}
}

/*
 * gw_http_reject_busy
 *		A connection beyond --max-connections: a JSON 503 with
 *		Retry-After, written without waiting, and close.
 */
void
gw_http_reject_busy(int fd)
{
	GwError		err;
	Exchange	x;
	char	   *body;
	char		head[512];
	int			n;

	memset(&x, 0, sizeof(x));
	clock_gettime(CLOCK_MONOTONIC, &x.start);
	x.method = "-";
	x.path = "-";
	x.status = 503;
	gw_error_set(&err, GW_ERR_UNAVAILABLE,
				 "the gateway has too many open connections; try again later");
	body = gw_error_body(&err, NULL);
	if (body != NULL)
	{
		struct iovec iov[2];
		struct msghdr msg;

		n = snprintf(head, sizeof(head),
					 "HTTP/1.1 503 Service Unavailable\r\nDate: %s\r\nContent-Type: application/json\r\n"
					 "Content-Length: %zu\r\nRetry-After: 1\r\nConnection: close\r\n\r\n",
					 http_date(), strlen(body));
		iov[0].iov_base = head;
		iov[0].iov_len = (size_t) n;
		iov[1].iov_base = body;
		iov[1].iov_len = strlen(body);
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = 2;
		if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			x.aborted = true;
		free(body);
	}
	shutdown(fd, SHUT_WR);
	/* drop what already arrived, so that closing does not reset */
	for (int i = 0; i < 16; i++)
	{
		char		scratch[4096];

		if (recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT) <= 0)
			break;
	}
	close(fd);
	gw_http_finish(&x);
}
