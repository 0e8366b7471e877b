/*-------------------------------------------------------------------------
 *
 * http_loop.c
 *	  Requests and responses on a connection while the event loop
 *	  (evloop.c) holds it: nothing here waits.  A request is answered when
 *	  it has fully arrived and needs nothing but its route (health,
 *	  metrics, errors) or a read's statement, which the loop pipelines
 *	  (evloop_db.c); the response is written as far as the socket takes
 *	  it.  Everything else goes to a connection thread, which serves it
 *	  as http_conn.c does.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "http_conn.h"
#include "metrics.h"

/*
 * gw_http_loop_read
 *		In the event loop: read what arrived on a readable connection.
 *		GW_LOOP_NEXT when bytes came (look for a request), GW_LOOP_WAIT when
 *		none did, GW_LOOP_CLOSE when the client left between requests (or
 *		the connection failed), GW_LOOP_THREAD when it left in the middle
 *		of one (a thread answers 400) or the buffer is full (a thread
 *		grows it).
 */
GwLoopStep
gw_http_loop_read(GwHttpConn *c)
{
	ssize_t		n;

	if (c->len == c->cap)
		return GW_LOOP_THREAD;
	n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (n > 0)
	{
		c->len += (size_t) n;
		return GW_LOOP_NEXT;
	}
	if (n == 0)
		return gw_http_only_blank(c) ? GW_LOOP_CLOSE : GW_LOOP_THREAD;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return GW_LOOP_WAIT;
	return GW_LOOP_CLOSE;
}

/*
 * loop_sent
 *		In the event loop, once a response is written: the access log and
 *		metrics, then close, linger (in a thread) or look for the next
 *		request.
 */
static GwLoopStep
loop_sent(GwHttpConn *c)
{
	gw_metrics_add(GW_M_LOOP_ANSWERED, 1);
	gw_http_finish(&c->x);
	atomic_fetch_sub(&gw_http_in_flight, 1);
	if (c->x.close)
	{
		if (c->x.aborted)
			return GW_LOOP_CLOSE;
		c->resume = GW_RESUME_LINGER;
		return GW_LOOP_THREAD;
	}
	gw_http_next_request(c, c->consumed);
	return GW_LOOP_NEXT;
}

/*
 * loop_send
 *		In the event loop: write a response without waiting.  What the
 *		socket does not take goes to a thread (GW_RESUME_FLUSH), which may
 *		wait for the client.
 */
static GwLoopStep
loop_send(GwHttpConn *c, GwResponse *resp)
{
	char		head[1024];
	struct iovec iov[2];
	struct msghdr msg;
	size_t		total;
	ssize_t		n;

	c->x.status = resp->status;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	if (!gw_http_response_iov(&c->x, resp, head, sizeof(head), iov))
		n = -1;
	else
	{
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			n = 0;
	}
	total = iov[0].iov_len + iov[1].iov_len;
	if (n >= 0 && (size_t) n < total)
	{
		/* keep the rest for a thread */
		c->out_len = total - (size_t) n;
		c->out = malloc(c->out_len);
		if (c->out != NULL)
		{
			size_t		from_head = (size_t) n < iov[0].iov_len ? iov[0].iov_len - (size_t) n : 0;

			memcpy(c->out, (char *) iov[0].iov_base + (iov[0].iov_len - from_head), from_head);
			memcpy(c->out + from_head,
				   (char *) iov[1].iov_base + (iov[1].iov_len - (c->out_len - from_head)),
				   c->out_len - from_head);
			free(resp->body);
			c->resume = GW_RESUME_FLUSH;
			return GW_LOOP_THREAD;
		}
		c->out_len = 0;
		n = -1;
	}
	free(resp->body);
	if (n < 0)
	{
		c->x.aborted = true;
		c->x.close = true;
	}
	return loop_sent(c);
}

/*
 * gw_http_loop_request
 *		In the event loop: answer the request at the front of the buffer
 *		if it is complete and can be answered without blocking.
 *		GW_LOOP_CALL: its statement (c->call) is to be sent, and
 *		gw_http_loop_reply called with the result.  GW_LOOP_WAIT: nothing
 *		complete yet.  GW_LOOP_THREAD: a thread must serve it (a malformed
 *		or oversized request, a body still to come, a route that blocks);
 *		nothing was consumed.
 */
GwLoopStep
gw_http_loop_request(GwHttpConn *c)
{
	GwHttpHead *h = &c->head;
	GwHttpError perr;
	GwHttpRequest req;
	GwResponse	resp;
	GwDispatchStep step;
	size_t		need;

	if (c->len == 0)
		return GW_LOOP_WAIT;
	if (!c->head_ready)
	{
		gw_http_head_init(h);
		switch (gw_http_parse_head(c->buf, c->len, &gw_http_limits, h, &perr))
		{
			case GW_HTTP_MORE:
				return c->len < c->cap ? GW_LOOP_WAIT : GW_LOOP_THREAD;
			case GW_HTTP_ERROR:
				return GW_LOOP_THREAD;
			case GW_HTTP_DONE:
				/* parsed in place: kept until the request is answered */
				c->head_ready = true;
				break;
		}
	}
	need = h->head_len + h->content_length;
	if (h->chunked)
		return GW_LOOP_THREAD;
	if (c->len < need)
	{
		/* a thread reads the body, within --request-timeout of the head */
		return GW_LOOP_THREAD;
	}

	memset(&c->x, 0, sizeof(c->x));
	clock_gettime(CLOCK_MONOTONIC, &c->x.start);
	c->x.method = h->method;
	c->x.path = h->path;
	c->x.minor = h->minor;
	c->x.head_only = strcmp(h->method, "HEAD") == 0;
	c->x.close = !h->keep_alive || atomic_load(&gw_http_stopping);
	c->consumed = need;
	atomic_fetch_add(&gw_http_in_flight, 1);

	memset(&resp, 0, sizeof(resp));
	step = GW_DISPATCH_DONE;
	if (gw_http_request_view(c, h, h->content_length, &req, &resp))
		step = gw_dispatch_begin(&req, &resp, &c->call, false);
	json_decref(req.query);
	json_decref(req.headers);
	c->x.route = resp.route;
	if (step == GW_DISPATCH_THREAD)
	{
		atomic_fetch_sub(&gw_http_in_flight, 1);
		c->resume = GW_RESUME_REQUEST;
		return GW_LOOP_THREAD;
	}
	c->head_ready = false;
	if (step == GW_DISPATCH_CALL)
	{
		/* they pointed into the headers just released; --db-auth is not here */
		c->call.info.api_key = c->call.info.bearer = NULL;
		return GW_LOOP_CALL;
	}
	return loop_send(c, &resp);
}

/*
 * gw_http_loop_reply
 *		In the event loop: answer the request whose statement returned
 *		result (malloc'd, taken over), or failed with err.
 */
GwLoopStep
gw_http_loop_reply(GwHttpConn *c, char *result, const GwError *err)
{
	GwResponse	resp;

	memset(&resp, 0, sizeof(resp));
	gw_dispatch_finish(&c->call, result, err, c->x.path, &resp);
	return loop_send(c, &resp);
}

/*
 * gw_http_loop_fallback
 *		In the event loop: give up answering the request whose statement
 *		was sent (it may be run again: a serialization failure, a lost
 *		prepared statement); a thread serves it from the start.
 */
void
gw_http_loop_fallback(GwHttpConn *c)
{
	gw_call_free(&c->call);
	atomic_fetch_sub(&gw_http_in_flight, 1);
	c->resume = GW_RESUME_REQUEST;
	c->head_ready = true;		/* c->head is still that of the request */
}
