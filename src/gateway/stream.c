/*-------------------------------------------------------------------------
 *
 * stream.c
 *	  A change-feed stream (GET /v1/events) as a libmicrohttpd response.
 *	  The connection stays with its loop; a thread of the stream's own
 *	  waits for the feed's next bytes (gw_feed_read blocks) and hands
 *	  them over one buffer at a time.  While the buffer is empty the loop
 *	  suspends the connection, and the thread resumes it when bytes come
 *	  or the stream ends.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "server_int.h"

#define STREAM_BUF		16384	/* change-feed bytes per hand-over */

typedef struct Stream
{
	pthread_mutex_t lock;
	pthread_cond_t drained;		/* the buffer was taken, or the response freed */
	GwLoop	   *loop;
	struct MHD_Connection *conn;
	void	   *feed;			/* the subscriber (feed.c) */
	size_t		len;			/* bytes in buf */
	size_t		off;			/* of which the loop took these */
	bool		ended;			/* the feed ended */
	bool		gone;			/* libmicrohttpd freed the response */
	bool		waiting;		/* the loop suspended the connection */
	int			refs;			/* the thread and the response */
	char		buf[STREAM_BUF];
} Stream;

/*
 * release
 *		Drop one reference; the last one frees the stream.
 */
static void
release(Stream *s)
{
	bool		last;

	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	gw_feed_discard(s->feed);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->drained);
	free(s);
}

/*
 * stream_main
 *		The stream's thread: read the feed into the buffer whenever the
 *		loop has taken the last one, and resume the connection if the
 *		loop is waiting for it.
 */
static void *
stream_main(void *arg)
{
	Stream	   *s = arg;

	for (;;)
	{
		size_t		n;

		pthread_mutex_lock(&s->lock);
		while (s->off < s->len && !s->gone)
			pthread_cond_wait(&s->drained, &s->lock);
		if (s->gone)
		{
			pthread_mutex_unlock(&s->lock);
			break;
		}
		pthread_mutex_unlock(&s->lock);

		/* the loop does not touch buf while it holds nothing */
		n = gw_feed_read(s->feed, s->buf, sizeof(s->buf));

		pthread_mutex_lock(&s->lock);
		s->len = n;
		s->off = 0;
		s->ended = n == 0;
		if (s->waiting && !s->gone)
		{
			s->waiting = false;
			gw_loop_resume(s->loop, s->conn);
		}
		pthread_mutex_unlock(&s->lock);
		if (n == 0)
			break;
	}
	release(s);
	return NULL;
}

/*
 * read_cb
 *		libmicrohttpd asks for the stream's next bytes (in the loop).
 */
static ssize_t
read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	Stream	   *s = cls;
	ssize_t		n;

	(void) pos;
	pthread_mutex_lock(&s->lock);
	if (s->off < s->len)
	{
		size_t		k = s->len - s->off < max ? s->len - s->off : max;

		memcpy(buf, s->buf + s->off, k);
		s->off += k;
		if (s->off == s->len)
			pthread_cond_signal(&s->drained);
		n = (ssize_t) k;
	}
	else if (s->ended)
		n = MHD_CONTENT_READER_END_OF_STREAM;
	else
	{
		/* nothing yet: wait without spinning */
		s->waiting = true;
		MHD_suspend_connection(s->conn);
		n = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/*
 * free_cb
 *		libmicrohttpd is done with the response: end the stream.
 */
static void
free_cb(void *cls)
{
	Stream	   *s = cls;

	pthread_mutex_lock(&s->lock);
	s->gone = true;
	pthread_cond_signal(&s->drained);
	pthread_mutex_unlock(&s->lock);
	gw_feed_cancel(s->feed);
	release(s);
}

/*
 * gw_stream_response
 *		The response that streams a subscriber (taken over), or NULL when
 *		its thread cannot be started (the subscriber is then discarded).
 */
struct MHD_Response *
gw_stream_response(GwReq *r, void *feed)
{
	const union MHD_ConnectionInfo *ci;
	struct MHD_Response *resp;
	pthread_t	t;
	Stream	   *s = calloc(1, sizeof(Stream));
	int			rc;

	if (s == NULL)
	{
		gw_feed_discard(feed);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->drained, NULL);
	s->loop = r->loop;
	s->conn = r->conn;
	s->feed = feed;
	s->refs = 2;
	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci != NULL)
		gw_feed_attach(feed, ci->connect_fd);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_cb, s, free_cb);
	if (resp == NULL)
	{
		s->refs = 1;
		release(s);
		return NULL;
	}
	if ((rc = pthread_create(&t, NULL, stream_main, s)) == 0)
		pthread_detach(t);
	else
	{
		fprintf(stderr, "%s: cannot start a stream thread: %s\n", GW_PROGRAM, strerror(rc));
		s->refs = 1;			/* the response's, dropped by free_cb */
		MHD_destroy_response(resp);
		return NULL;
	}
	return resp;
}
