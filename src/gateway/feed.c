/*-------------------------------------------------------------------------
 *
 * feed.c
 *	  GET /v1/events, the catalog's change feed as Server-Sent Events
 *	  (src/gateway/README.md, "Change feed").  The poller thread does all
 *	  the database work on its own connection and appends to one bounded
 *	  log of frames; a subscriber is a position in it, streamed by its
 *	  connection's loop (read_cb) and resumed by the poller when due.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "feed.h"
#include "metrics.h"
#include "router.h"
#include "server_int.h"

#define PRIV_CACHE_MAX		4096
#define PRIV_CACHE_TTL_S	60
#define FEED_MIN_GAP_MS		5
#define FEED_IDLE_PING_MS	30000
#define TICK_MS				500 /* a waiting stream looks for bytes this often */
#define CURSOR_MAX			65536	/* the longest cursor accepted to resume from */

#define HELLO "retry: 1000\n: subscribed to the change feed\n\n"
#define WAITING "retry: 1000\n: the change feed is reconnecting to the database; " \
	"the stream starts once it is back\n\n"
#define SLOW ": disconnected: the client did not keep up with the feed\n\n"
#define HEARTBEAT ": heartbeat\n\n"
#define COMMIT_DATA "event: commit\ndata: "
#define RESET(why) "event: reset\ndata: {\"message\":\"" why "\"}\n\n"

/* the cursor and the versions after it, in the order to send them */
#define POLL_SQL \
	"SELECT s.cur::text, c.payload::text" \
	"  FROM lance_namespace.lance_changes_cursor() AS s(cur)" \
	"  LEFT JOIN lance_namespace.lance_changes($1::pg_catalog.pg_snapshot)" \
	"       WITH ORDINALITY AS c ON true" \
	" ORDER BY c.ordinality"

/* what a subscriber missed between its cursor and the log's, in order */
#define CATCH_UP_SQL \
	"SELECT c.payload::text" \
	"  FROM lance_namespace.lance_changes($1::pg_catalog.pg_snapshot," \
	"                                     $2::pg_catalog.pg_snapshot) c" \
	" LIMIT $3::integer"

/* whether the role in effect may read table $1 (its id as JSON) */
#define PRIVILEGE_SQL \
	"SELECT NOT pg_catalog.row_security_active('lance_namespace.entries'::pg_catalog.regclass)" \
	"    OR lance_namespace.lance_has_privilege(" \
	"       ARRAY(SELECT pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb)), 'read')"

/* One frame of the stream, shared by the subscribers that send it. */
typedef struct Frame
{
	atomic_int	refs;
	int			commits;		/* commit events in text */
	char	   *text;			/* the SSE frames */
	size_t		len;
	char	   *id_json;		/* a commit's table id (JSON array), NULL if unknown */
	json_t	   *readers;		/* a commit's: role -> whether it may read the table */
} Frame;

typedef struct FeedSub
{
	struct FeedSub *next;
	struct FeedSub *prev;
	bool		started;		/* sent its start: reads the log from pos */
	uint64_t	pos;			/* the next frame of the log to send */
	char	   *cursor;			/* the cursor that goes with pos; NULL before */
	char	   *resume;			/* the client's cursor, or NULL */
	bool		told;			/* was told that the feed is reconnecting */
	bool		closing;
	const char *bye;			/* last comment to send when closing, until sent */
	char	   *ns_prefix;		/* how the ids in the namespace filter begin, or NULL */
	char	   *table_id;		/* the table filter's id, or NULL */
	char	   *role;			/* --db-auth role, or NULL */
	Frame	   *first;			/* a resuming client's start, made by the poller */
	bool		busy;			/* the poller works for it without feed_lock */
	bool		gone;			/* freed while busy: the poller frees it */
	uint64_t	round;			/* the poller's last round of work for it */
	GwLoop	   *loop;			/* its stream's connection, in that loop */
	struct MHD_Connection *conn;
	bool		suspended;		/* the stream waits for serve_subscribers */
	Frame	   *cur;			/* frame being written */
	size_t		cur_off;
	struct timespec last_write;
	struct timespec last_look;	/* the stream last looked for bytes */
} FeedSub;

static pthread_mutex_t feed_lock = PTHREAD_MUTEX_INITIALIZER;
static FeedSub *subs;
static atomic_int nsubs;		/* linked into subs: read without the lock */
static bool stopping;
static bool connected;			/* the poller is connected */
static pthread_t poller;
static atomic_bool poller_stop;
static atomic_bool poke_pending;
static int	wake_fd = -1;		/* eventfd: wakes the poller */
static uint64_t rounds;			/* the poller's rounds of work (FeedSub.round) */
static json_t *privs;			/* the poller's: "role\nid_json" -> seconds, negative: may not */

/* the log: frames log_tail .. log_head - 1, at their number % --sse-queue */
static Frame **log_ring;
static uint64_t log_tail;
static uint64_t log_head;
static size_t log_bytes;
static char *log_cursor;		/* the poller's cursor at log_head; NULL without subscribers */

/* the form of a cursor, a pg_snapshot (the database checks the rest) */
#define CURSOR_FORM "^[0-9]{1,20}:[0-9]{1,20}:([0-9]{1,20}(,[0-9]{1,20})*)?$"
static regex_t cursor_form;

static long heartbeat_ms;		/* --sse-heartbeat-ms, at most half the request timeout */

/*
 * frame_new
 *		A frame of text (taken over) with one reference, or NULL.
 */
static Frame *
frame_new(char *text, int commits)
{
	Frame	   *f = text ? calloc(1, sizeof(Frame)) : NULL;

	if (f == NULL)
	{
		free(text);
		return NULL;
	}
	atomic_init(&f->refs, 1);
	f->commits = commits;
	f->text = text;
	f->len = strlen(text);
	return f;
}

/*
 * frame_unref
 *		Drop a reference to f.
 */
static void
frame_unref(Frame *f)
{
	if (f == NULL || atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	json_decref(f->readers);
	free(f->id_json);
	free(f->text);
	free(f);
}

/*
 * wake_poller
 *		Make the poller's wait return.
 */
static void
wake_poller(void)
{
	if (eventfd_write(wake_fd, 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "%s: change feed: cannot wake the poller\n", GW_PROGRAM);
}

/*
 * commit_frame
 *		The frame of one lance_changes() payload, with its table id as the
 *		JSON text jansson writes (equal for equal ids) for the filters.
 */
static Frame *
commit_frame(const char *payload)
{
	char	   *text;
	Frame	   *f;
	json_t	   *j;
	json_t	   *id;

	if (asprintf(&text, COMMIT_DATA "%s\n\n", payload) < 0)
		return NULL;
	/* the payload, up to the final blank line, is one line of JSON: keep it so */
	for (char *c = text + strlen(COMMIT_DATA); *c != '\0' && c[2] != '\0'; c++)
		*c = (*c == '\n' || *c == '\r') ? ' ' : *c;
	if ((f = frame_new(text, 1)) == NULL || (f->readers = json_object()) == NULL)
	{
		frame_unref(f);
		return NULL;
	}
	j = json_loads(payload, 0, NULL);
	id = json_object_get(j, "id");
	if (json_is_array(id))
		f->id_json = json_dumps(id, JSON_COMPACT);
	json_decref(j);
	return f;
}

/*
 * close_sub
 *		Make s end its stream after the comment bye (feed_lock held); false
 *		if it was closing already.
 */
static bool
close_sub(FeedSub *s, const char *bye)
{
	if (s->closing)
		return false;
	s->closing = true;
	s->bye = bye;
	if (s->suspended)
		gw_loop_resume(s->loop, s->conn);
	s->suspended = false;
	return true;
}

/*
 * log_append
 *		Append f (its reference; feed_lock held), dropping the oldest frames
 *		beyond the bounds and closing the subscribers that fell off the tail.
 */
static void
log_append(Frame *f)
{
	uint64_t	tail = log_tail;

	if (f == NULL)
		return;
	while (log_head > log_tail &&
		   (log_head - log_tail >= (uint64_t) gw_config.sse_queue ||
			log_bytes + f->len > (size_t) gw_config.sse_queue_bytes))
	{
		Frame	   *old = log_ring[log_tail++ % gw_config.sse_queue];

		log_bytes -= old->len;
		frame_unref(old);
	}
	log_ring[log_head++ % gw_config.sse_queue] = f;
	log_bytes += f->len;
	for (FeedSub *s = subs; log_tail != tail && s; s = s->next)
		if (s->cursor && s->pos < log_tail && close_sub(s, SLOW))
			gw_metrics_add(GW_M_SSE_SLOW_DISCONNECTS, 1);
}

/*
 * drop_cursor
 *		If no one subscribes, drop the poller's cursor and empty the log.
 */
static bool
drop_cursor(void)
{
	bool		idle;

	pthread_mutex_lock(&feed_lock);
	if ((idle = subs == NULL))
	{
		while (log_tail < log_head)
			frame_unref(log_ring[log_tail++ % gw_config.sse_queue]);
		log_bytes = 0;
		free(log_cursor);
		log_cursor = NULL;
	}
	pthread_mutex_unlock(&feed_lock);
	return idle;
}

/*
 * set_connected
 *		The poller's connection is up or down; text, if any, tells the streams.
 */
static void
set_connected(bool up, const char *text)
{
	pthread_mutex_lock(&feed_lock);
	connected = up;
	gw_metrics_add(GW_M_FEED_CONNECTED, up ? 1 : -1);
	if (text)
		log_append(frame_new(strdup(text), 0));
	pthread_mutex_unlock(&feed_lock);
}

/*
 * xmax
 *		The xmax of a pg_snapshot text ("xmin:xmax:xip,...", as CURSOR_FORM).
 */
static uint64_t
xmax(const char *snap)
{
	return strtoull(strchr(snap, ':') + 1, NULL, 10);
}

/*
 * may_read
 *		On the poller's connection: whether role may read the table of
 *		commit frame f, as cached for PRIV_CACHE_TTL_S or as the database
 *		says now (an unknown answer is no, and is not cached).  A role that
 *		bypasses row level security on the catalog reads all, as over REST.
 */
static bool
may_read(PGconn *conn, const char *role, const Frame *f)
{
	const char *params[1] = {role};
	GwError		err;
	PGresult   *res;
	char	   *key;
	json_int_t	at;
	int			answer = -1;

	if (f->id_json == NULL || asprintf(&key, "%s\n%s", role, f->id_json) < 0)
		return false;
	at = json_integer_value(json_object_get(privs, key));	/* 0 if not cached */
	if (time(NULL) - llabs(at) < PRIV_CACHE_TTL_S)
	{
		free(key);
		return at > 0;
	}
	if (gw_db_exec(conn, "BEGIN READ ONLY", 0, NULL, NULL, NULL, &err) &&
		gw_db_exec(conn, "SELECT pg_catalog.set_config('role', $1, true)", 1, params,
				   NULL, NULL, &err))
	{
		params[0] = f->id_json;
		if (gw_db_exec(conn, PRIVILEGE_SQL, 1, params, &res, NULL, &err))
		{
			answer = (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0) ? 1 : 0;
			PQclear(res);
		}
		else if (PQstatus(conn) == CONNECTION_OK && err.code == LANCE_PERMISSION_DENIED)
			answer = 0;			/* e.g. no USAGE on the schema: such a role reads nothing */
	}
	if (PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE)
		PQclear(PQexec(conn, "ROLLBACK"));
	if (answer >= 0)
	{
		if (json_object_size(privs) >= PRIV_CACHE_MAX)
			json_object_clear(privs);
		json_object_set_new(privs, key, json_integer(answer ? time(NULL) : -time(NULL)));
	}
	free(key);
	return answer == 1;
}

/*
 * matches
 *		Whether frame f passes the filters of s (control frames do).
 */
static bool
matches(const FeedSub *s, const Frame *f)
{
	const char *id = f->id_json ? f->id_json : "";

	return f->commits == 0 ||
		((s->ns_prefix == NULL || strncmp(id, s->ns_prefix, strlen(s->ns_prefix)) == 0) &&
		 (s->table_id == NULL || strcmp(id, s->table_id) == 0));
}

/*
 * answer_readers
 *		Give each of the n commit frames the answer of every subscribing
 *		role whose filters it passes, role by role, asked without feed_lock
 *		(the frames are the poller's until appended; a null answer is one to
 *		ask).  Returns with feed_lock held and no subscriber left out, so
 *		that the frames are appended before another one can join.
 */
static void
answer_readers(PGconn *conn, Frame **frames, int n)
{
	uint64_t	round = ++rounds;
	char	   *role = NULL;

	for (;;)
	{
		pthread_mutex_lock(&feed_lock);
		free(role);
		role = NULL;
		for (FeedSub *s = subs; n > 0 && s; s = s->next)
		{
			if (!s->role || s->round == round || (role && strcmp(role, s->role) != 0))
				continue;
			if (!role && (role = strdup(s->role)) == NULL)
				break;
			s->round = round;
			for (int i = 0; i < n; i++)
				if (frames[i] && matches(s, frames[i]) &&
					!json_object_get(frames[i]->readers, role))
					json_object_set_new(frames[i]->readers, role, json_null());
		}
		if (role == NULL)
			return;				/* unanswered after a failure: withheld */
		pthread_mutex_unlock(&feed_lock);
		for (int i = 0; i < n; i++)
			if (frames[i] && json_is_null(json_object_get(frames[i]->readers, role)))
				json_object_set_new(frames[i]->readers, role,
									json_boolean(may_read(conn, role, frames[i])));
	}
}

/*
 * catch_up
 *		On the poller's connection: write to out the commits that s missed
 *		between its client's cursor and s->cursor, counted in *sent, or a
 *		reset when they cannot be sent (over max).  False to try again later.
 */
static bool
catch_up(PGconn *conn, FeedSub *s, FILE *out, int *sent)
{
	int			max = gw_config.sse_queue > 3 ? gw_config.sse_queue - 2 : 1;
	char		limit[16];
	const char *params[3] = {s->resume, s->cursor, limit};
	PGresult   *res;
	GwError		err;
	int			n;

	if (xmax(s->resume) > xmax(s->cursor))
		return fputs(RESET("the cursor to resume from is not from this database's past; "
						   "commits may have been missed"), out) >= 0;
	snprintf(limit, sizeof(limit), "%d", max + 1);
	if (!gw_db_exec(conn, CATCH_UP_SQL, 3, params, &res, NULL, &err))
		return PQstatus(conn) == CONNECTION_OK &&	/* the database refused the cursor */
			fputs(RESET("the database refused the cursor to resume from; "
						"commits may have been missed"), out) >= 0;
	n = PQntuples(res);
	if (n > max)
		fprintf(out, RESET("more than %d commits since the cursor to resume from: "
						   "re-read the tables; the stream goes on from here"), max);
	for (int i = 0; i < n && n <= max; i++)
	{
		Frame	   *f = commit_frame(PQgetvalue(res, i, 0));

		if (f != NULL && matches(s, f) && s->role != NULL && !may_read(conn, s->role, f))
			gw_metrics_add(GW_M_SSE_EVENTS_WITHHELD, 1);
		else if (f != NULL && matches(s, f) && fputs(f->text, out) >= 0)
			(*sent)++;
		frame_unref(f);
	}
	PQclear(res);
	return true;
}

/*
 * join
 *		Give s, unless it has them, the log's head and cursor of now
 *		(feed_lock held).  False while it has no cursor.
 */
static bool
join(FeedSub *s)
{
	if (s->cursor == NULL && log_cursor != NULL && (s->cursor = strdup(log_cursor)) != NULL)
		s->pos = log_head;
	return s->cursor != NULL;
}

/*
 * start
 *		The frame that starts the stream of s: the hello, a resuming
 *		client's catch-up (on conn, the poller's, without feed_lock) and the
 *		cursor of its position as the event id.  NULL to try again later.
 */
static Frame *
start(FeedSub *s, PGconn *conn)
{
	char	   *text = NULL;
	size_t		len;
	FILE	   *out = open_memstream(&text, &len);
	int			sent = 0;
	bool		ok;

	ok = out != NULL && fputs(HELLO, out) >= 0 &&
		(s->resume == NULL || catch_up(conn, s, out, &sent)) &&
		fprintf(out, "id: %s\n\n", s->cursor) > 0;
	if (!(out != NULL && fclose(out) == 0 && ok))
	{
		free(text);
		return NULL;
	}
	if (s->resume != NULL)
		gw_metrics_add(GW_M_SSE_RESUMES, 1);
	return frame_new(text, sent);
}

/*
 * next_frame
 *		The next frame s sends (a reference), or NULL if none is due yet
 *		(feed_lock held).
 */
static Frame *
next_frame(FeedSub *s)
{
	Frame	   *f;

	if (s->closing)
	{
		f = s->bye ? frame_new(strdup(s->bye), 0) : NULL;
		s->bye = NULL;
		return f;
	}
	if (!s->started)
	{
		/* a resuming client's start is made by the poller (serve_subscribers) */
		f = s->first;
		if (f == NULL && connected && s->resume == NULL && join(s))
			f = start(s, NULL);
		s->first = NULL;
		if ((s->started = f != NULL))
			return f;
		if (!connected && !s->told)
		{
			s->told = true;
			return frame_new(strdup(WAITING), 0);
		}
	}
	/* a position that fell off the tail is closing (log_append) */
	while (s->started && s->pos >= log_tail && s->pos < log_head)
	{
		f = log_ring[s->pos++ % gw_config.sse_queue];
		if (matches(s, f) && s->role != NULL && f->commits > 0 &&
			!json_is_true(json_object_get(f->readers, s->role)))
			gw_metrics_add(GW_M_SSE_EVENTS_WITHHELD, 1);
		else if (matches(s, f))
		{
			atomic_fetch_add(&f->refs, 1);
			return f;
		}
	}
	if (gw_ms_since(&s->last_write) < heartbeat_ms)
		return NULL;
	s->last_write = s->last_look;	/* one per interval, not a buffer full */
	return frame_new(strdup(HEARTBEAT), 0);
}

/*
 * read_cb
 *		libmicrohttpd asks for the stream's next bytes (in its loop): copy
 *		what is due, else suspend the connection until serve_subscribers()
 *		resumes it; the end once the stream closed or its client went away.
 */
static ssize_t
read_cb(void *cls, uint64_t pos GW_UNUSED, char *buf, size_t max)
{
	FeedSub    *s = cls;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(s->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p = {ci ? ci->connect_fd : -1, POLLRDHUP, 0};	/* -1: ignored */
	size_t		n = 0;
	long		sent = 0;
	bool		end = false;

	pthread_mutex_lock(&feed_lock);
	clock_gettime(CLOCK_MONOTONIC, &s->last_look);
	while (n < max && (s->cur != NULL || (s->cur = next_frame(s)) != NULL))
	{
		size_t		k = s->cur->len - s->cur_off;

		k = k < max - n ? k : max - n;
		memcpy(buf + n, s->cur->text + s->cur_off, k);
		n += k;
		s->cur_off += k;
		if (s->cur_off < s->cur->len)
			break;				/* buf is full */
		sent += s->cur->commits;
		frame_unref(s->cur);
		s->cur = NULL;
		s->cur_off = 0;
	}
	if (n > 0)
		s->last_write = s->last_look;
	else if (s->closing ||
			 (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))))
		end = s->closing = true;	/* log_append need not close it */
	else
	{
		s->suspended = true;
		MHD_suspend_connection(s->conn);
	}
	pthread_mutex_unlock(&feed_lock);
	if (sent > 0)
		gw_metrics_add(GW_M_SSE_EVENTS_SENT, sent);
	return end ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t) n;
}

/*
 * free_sub
 *		Free a subscriber that is no longer linked.
 */
static void
free_sub(FeedSub *s)
{
	frame_unref(s->cur);
	frame_unref(s->first);
	free(s->role);
	free(s->cursor);
	free(s->resume);
	free(s->ns_prefix);
	free(s->table_id);
	free(s);
}

/*
 * serve_subscribers
 *		The poller's round (conn NULL while it has none): start resuming
 *		subscribers, then resume the streams that have something to send
 *		or are due a look (a heartbeat, a client that went away).
 */
static void
serve_subscribers(PGconn *conn)
{
	uint64_t	round = ++rounds;
	FeedSub    *s;

	pthread_mutex_lock(&feed_lock);
	for (s = subs; conn != NULL && s != NULL; s = s ? s->next : subs)
	{
		Frame	   *f;

		if (s->round == round || s->started || !s->resume || s->first || !join(s))
			continue;			/* (conn is only given while connected) */
		s->busy = true;
		s->round = round;
		pthread_mutex_unlock(&feed_lock);
		f = start(s, conn);
		pthread_mutex_lock(&feed_lock);
		s->first = f;
		s->busy = false;
		if (s->gone)
		{
			free_sub(s);
			s = NULL;			/* the list changed meanwhile: walk it again */
		}
	}
	for (s = subs; s; s = s->next)
		if (s->suspended &&
			(s->closing || s->first ||
			 (!s->started && connected && log_cursor && !s->resume) ||
			 (s->started && s->pos < log_head) ||
			 gw_ms_since(&s->last_look) >= TICK_MS))
		{
			s->suspended = false;
			gw_loop_resume(s->loop, s->conn);
		}
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_discard
 *		Unlink and free a subscriber (or leave it to the poller while it
 *		works for it): a stream that ended or will not be sent.
 */
void
gw_feed_discard(void *stream)
{
	FeedSub    *s = stream;
	bool		busy;

	pthread_mutex_lock(&feed_lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	atomic_fetch_sub(&nsubs, 1);
	busy = s->gone = s->busy;
	pthread_mutex_unlock(&feed_lock);
	wake_poller();				/* perhaps the last one: stop reading */
	gw_metrics_add(GW_M_SSE_SUBSCRIBERS, -1);
	if (!busy)
		free_sub(s);
}

/*
 * gw_stream_response
 *		The response that streams a subscriber (taken over), or NULL (the
 *		subscriber is then discarded).
 */
struct MHD_Response *
gw_stream_response(GwReq *r, void *stream)
{
	struct MHD_Response *resp;
	FeedSub    *s = stream;

	pthread_mutex_lock(&feed_lock);
	s->loop = r->loop;
	s->conn = r->conn;
	pthread_mutex_unlock(&feed_lock);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_cb, s, gw_feed_discard);
	if (resp == NULL)
		gw_feed_discard(s);
	return resp;
}

/*
 * poll_once
 *		Append to the log the versions committed since the cursor, then
 *		the next cursor as an event id; without a cursor, take the current
 *		one (where the feed starts).  False if the connection failed.
 */
static bool
poll_once(PGconn *conn)
{
	const char *params[1] = {log_cursor};	/* only the poller changes it */
	PGresult   *res = PQexecParams(conn, POLL_SQL, 1, NULL, params, NULL, NULL, 0);
	Frame	  **frames;
	char	   *next;
	char	   *id = NULL;
	bool		back;
	int			n = 0;

	gw_metrics_add(GW_M_FEED_POLLS, 1);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
	{
		if (PQstatus(conn) == CONNECTION_OK)
			fprintf(stderr, "%s: change feed: poll failed: %s", GW_PROGRAM, PQerrorMessage(conn));
		PQclear(res);
		return false;
	}
	next = strdup(PQgetvalue(res, 0, 0));
	frames = calloc(PQntuples(res), sizeof(Frame *));
	if (next == NULL || frames == NULL)
	{
		free(next);
		free(frames);
		PQclear(res);
		return true;			/* try again later from the same cursor */
	}
	back = log_cursor != NULL && xmax(next) < xmax(log_cursor);
	if (back)
		fprintf(stderr, "%s: change feed: the database's transaction ids went back; "
				"reading from its current snapshot\n", GW_PROGRAM);
	for (int i = 0; !back && i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, 1))
			frames[n++] = commit_frame(PQgetvalue(res, i, 1));
	PQclear(res);
	gw_metrics_add(GW_M_FEED_COMMITS, n);
	if ((n > 0 || back) && asprintf(&id, "id: %s\n\n", next) < 0)
		id = NULL;

	answer_readers(conn, frames, n);	/* takes feed_lock */
	if (back)
		log_append(frame_new(strdup(RESET("the database's transaction ids went back "
										  "(a restored database); commits may have been missed")), 0));
	for (int i = 0; i < n; i++)
		log_append(frames[i]);
	log_append(frame_new(id, 0));
	free(log_cursor);
	log_cursor = next;
	pthread_mutex_unlock(&feed_lock);
	free(frames);
	return true;
}

/*
 * wait_for_work
 *		Sleep for up to ms, until woken (poked, a subscriber came or left,
 *		told to stop) or conn, if any, has something to say.  True if woken.
 */
static bool
wait_for_work(PGconn *conn, long ms)
{
	struct pollfd p[2] = {{wake_fd, POLLIN, 0}, {PQsocket(conn), POLLIN, 0}};	/* -1: ignored */
	eventfd_t	wakes;
	bool		woken;

	if (poll(p, 2, ms > 0 ? (int) ms : 0) > 0 && p[1].revents != 0)
		PQconsumeInput(conn);	/* a notice, or the server closing */
	woken = eventfd_read(wake_fd, &wakes) == 0;
	atomic_store(&poke_pending, false);
	return woken;
}

/*
 * poller_main
 *		The poller thread: connect, then poll and serve the subscribers
 *		while the connection works; reconnect with backoff, keeping the
 *		cursor across connections.  A stream is looked at every TICK_MS.
 */
static void *
poller_main(void *first_conn)
{
	PGconn	   *conn = first_conn;
	int			backoff = 100;
	bool		ever = false;

	while (!atomic_load(&poller_stop))
	{
		GwError		err;
		struct timespec last_poll = {0, 0};
		bool		woken = true;

		if (conn == NULL && (conn = gw_pool_connect(&err)) == NULL)
		{
			/* until the next try, serving the streams */
			for (int ms = backoff; ms > 0 && !atomic_load(&poller_stop); ms -= TICK_MS)
			{
				serve_subscribers(NULL);
				wait_for_work(NULL, ms < TICK_MS ? ms : TICK_MS);
			}
			backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
			continue;
		}
		backoff = 100;
		if (ever)
		{
			gw_metrics_add(GW_M_FEED_RECONNECTS, 1);
			fprintf(stderr, "%s: change feed: connected again\n", GW_PROGRAM);
		}
		set_connected(true, ever && log_cursor != NULL ?
					  "event: reconnected\ndata: {\"message\":\"the change feed "
					  "reconnected to the database; commits made meanwhile follow\"}\n\n" : NULL);
		ever = true;

		while (!atomic_load(&poller_stop) && PQstatus(conn) == CONNECTION_OK)
		{
			long		gap = FEED_MIN_GAP_MS - gw_ms_since(&last_poll);
			long		due;

			if (log_cursor != NULL && drop_cursor())
				continue;		/* no one subscribes */
			if (log_cursor == NULL ? atomic_load(&nsubs) > 0 :
				woken || gw_ms_since(&last_poll) >= gw_config.feed_poll_ms)
			{
				/* a poke: poll soon, but not more often than every FEED_MIN_GAP_MS */
				if (woken && log_cursor != NULL && gap > 0)
					poll(NULL, 0, (int) gap);
				clock_gettime(CLOCK_MONOTONIC, &last_poll);
				if (!poll_once(conn))
					break;
			}
			serve_subscribers(conn);
			/* the next poll, or a stream's look; idle: the ping */
			due = gw_config.feed_poll_ms - gw_ms_since(&last_poll);
			woken = wait_for_work(conn, log_cursor == NULL ? FEED_IDLE_PING_MS :
								  due < TICK_MS ? due : TICK_MS);
			if (!woken && log_cursor == NULL)
				PQclear(PQexec(conn, ""));	/* is the connection still alive? */
		}

		PQfinish(conn);
		conn = NULL;
		if (!atomic_load(&poller_stop))
			fprintf(stderr, "%s: change feed: lost the database connection, reconnecting\n", GW_PROGRAM);
		set_connected(false, atomic_load(&poller_stop) ? NULL :
					  ": the change feed lost its database connection; reconnecting\n\n");
		serve_subscribers(NULL);
	}
	return NULL;
}

/*
 * gw_feed_poke
 *		The gateway committed versions: poll soon, if anyone subscribes.
 *		One wake-up covers every poke until the poll it causes.
 */
void
gw_feed_poke(void)
{
	if (atomic_load(&nsubs) > 0 && !atomic_exchange(&poke_pending, true))
		wake_poller();
}

/*
 * gw_feed_start
 *		Connect the poller's connection (or leave it to the poller to retry)
 *		and start the poller.  False if the thread cannot be started.
 */
bool
gw_feed_start(void)
{
	PGconn	   *conn;
	GwError		err;

	/* at most half of --request-timeout (libmicrohttpd times out no suspended stream) */
	heartbeat_ms = gw_config.sse_heartbeat_ms < gw_config.request_timeout_s * 500L ?
		gw_config.sse_heartbeat_ms : gw_config.request_timeout_s * 500L;
	log_ring = calloc(gw_config.sse_queue, sizeof(Frame *));
	privs = json_object();
	wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (log_ring == NULL || privs == NULL || wake_fd < 0 ||
		regcomp(&cursor_form, CURSOR_FORM, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	/* subscribers of the first moment need not wait for the thread */
	connected = (conn = gw_pool_connect(&err)) != NULL;
	if (!connected)
		fprintf(stderr, "%s: change feed: not connected yet; retrying in the background\n", GW_PROGRAM);
	if (pthread_create(&poller, NULL, poller_main, conn) != 0)
	{
		PQfinish(conn);
		return false;
	}
	return true;
}

/*
 * gw_feed_stop
 *		Refuse new subscribers and end every stream (before the HTTP
 *		server waits for in-flight requests).
 */
void
gw_feed_stop(void)
{
	pthread_mutex_lock(&feed_lock);
	stopping = true;
	for (FeedSub *s = subs; s; s = s->next)
		close_sub(s, ": the gateway is shutting down\n\n");
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_join
 *		Stop the poller thread and close its connection.
 */
void
gw_feed_join(void)
{
	atomic_store(&poller_stop, true);
	wake_poller();
	pthread_join(poller, NULL);
	/* the log, unless a stream outlived the shutdown budget */
	if (drop_cursor())
	{
		free(log_ring);
		json_decref(privs);
		regfree(&cursor_form);
	}
}

/*
 * parse_filter
 *		The query parameter name as an id's JSON text (*out stays NULL if
 *		absent); of the namespace, only how its tables' ids begin.
 */
static bool
parse_filter(json_t *query, const char *name, const char *delimiter, char **out,
			 GwError *err)
{
	json_t	   *v = json_object_get(query, name);
	json_t	   *id;
	bool		ns = strcmp(name, "namespace") == 0;

	if (v == NULL)
		return true;
	if ((id = gw_parse_id(json_string_value(v), delimiter, err)) == NULL)
		return false;
	if (!ns && json_array_size(id) == 0)
		gw_error_set(err, LANCE_INVALID_INPUT, "table must name a table");
	else if ((*out = json_dumps(id, JSON_COMPACT)) == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	else if (ns)
		(*out)[strlen(*out) - 1] = json_array_size(id) > 0 ? ',' : '\0';	/* ["a","b", */
	json_decref(id);
	return *out != NULL;
}

/*
 * gw_feed_subscribe
 *		GET /v1/events: register a subscriber (with info's credentials) and
 *		answer with its stream (resp->stream), or an error.  Without a cursor
 *		of its own the subscriber takes the feed's position of now, if any.
 */
void
gw_feed_subscribe(const GwHttpRequest *req, const GwRequestInfo *info, GwResponse *resp)
{
	json_t	   *jd = json_object_get(req->query, "delimiter");
	const char *delimiter = json_is_string(jd) ? json_string_value(jd) : "$";
	/* a cursor to resume from: Last-Event-ID (an EventSource reconnecting) or since */
	json_t	   *h = json_object_get(req->headers, "last-event-id");
	json_t	   *q = json_object_get(req->query, "since");
	const char *v = json_is_string(h) ? json_string_value(h) : json_string_value(q);
	FeedSub    *s = calloc(1, sizeof(FeedSub));
	GwError		err;

	gw_error_clear(&err);
	if (s == NULL)
		gw_error_set(&err, LANCE_INTERNAL, "out of memory");
	if (s == NULL ||
		!parse_filter(req->query, "namespace", delimiter, &s->ns_prefix, &err) ||
		!parse_filter(req->query, "table", delimiter, &s->table_id, &err))
		goto fail;
	if (v != NULL && (v[0] != '\0' || q != NULL))	/* an empty Last-Event-ID means none */
	{
		if (strlen(v) > CURSOR_MAX || regexec(&cursor_form, v, 0, NULL, 0) != 0)
			gw_error_set(&err, LANCE_INVALID_INPUT,
						 "the cursor to resume from (Last-Event-ID or since) must be an event id "
						 "of this feed: xmin:xmax:xip,...");
		else if ((s->resume = strdup(v)) == NULL)
			gw_error_set(&err, LANCE_INTERNAL, "out of memory");
		if (s->resume == NULL)
			goto fail;
	}
	if (gw_config.db_auth && (s->role = gw_db_role(info->api_key, info->bearer, &err)) == NULL)
		goto fail;

	clock_gettime(CLOCK_MONOTONIC, &s->last_write);
	pthread_mutex_lock(&feed_lock);
	if (stopping)
	{
		pthread_mutex_unlock(&feed_lock);
		gw_error_set(&err, LANCE_SERVICE_UNAVAILABLE, "the gateway is shutting down");
		goto fail;
	}
	if (s->resume == NULL)
		join(s);
	if ((s->next = subs) != NULL)
		subs->prev = s;
	subs = s;
	atomic_fetch_add(&nsubs, 1);
	pthread_mutex_unlock(&feed_lock);
	gw_metrics_add(GW_M_SSE_SUBSCRIBERS, 1);	/* gw_feed_discard subtracts */
	wake_poller();				/* the first subscriber makes it take a cursor */
	resp->status = 200;
	resp->stream = s;
	resp->content_type = "text/event-stream; charset=utf-8";
	return;

fail:
	if (s != NULL)
		free_sub(s);
	gw_respond_error(resp, &err, req->path);
}
