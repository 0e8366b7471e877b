/*-------------------------------------------------------------------------
 *
 * feed.c
 *	  GET /v1/events: the catalog's change feed as Server-Sent Events.
 *
 *	  The poller (feed_poll.c) reads committed table versions from the
 *	  catalog's history with lance_changes() and hands each payload here;
 *	  this file numbers them and appends each (a shared, reference-counted
 *	  frame) to the bounded queue of every subscriber whose filter
 *	  matches.  Each subscriber's stream thread (stream.c) blocks in
 *	  gw_feed_read() until its queue has frames or a heartbeat is due.  A subscriber whose queue overflows is
 *	  closed instead of growing memory.
 *
 *	  When the poller loses its connection (PostgreSQL restarted) every
 *	  subscriber is told with an SSE comment; once it is back, an "event:
 *	  reconnected", and the commits made meanwhile follow.
 *
 *	  With --db-auth, a subscription authenticates like any request and
 *	  each (subscriber, table) pair is checked once (cached for a minute)
 *	  with lance_namespace.lance_has_privilege(id, 'read') under the
 *	  subscriber's role; events of tables it may not read are withheld.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "feed.h"
#include "feed_int.h"
#include "metrics.h"
#include "pathid.h"
#include "pool.h"

#define PRIV_CACHE_MAX		256
#define PRIV_CACHE_TTL_S	60

/* One frame of the stream, shared by the subscribers it is queued for. */
typedef struct FeedEvent
{
	atomic_int	refs;
	bool		commit;			/* a commit event (else a control frame) */
	char	   *text;			/* the SSE frame */
	size_t		len;
	char	  **parts;			/* the table id, NULL if unknown */
	int			nparts;
	char	   *id_json;		/* the table id as a JSON array */
} FeedEvent;

typedef struct PrivEntry
{
	char	   *key;			/* id_json */
	bool		allowed;
	time_t		at;
} PrivEntry;

typedef struct FeedSub
{
	struct FeedSub *next;
	struct FeedSub *prev;
	pthread_cond_t cond;
	FeedEvent **ring;
	int			head;
	int			count;
	size_t		bytes;
	bool		closing;
	const char *bye;			/* last comment to send when closing */
	bool		bye_sent;
	json_t	   *ns_filter;		/* namespace id (array), or NULL */
	json_t	   *table_filter;	/* table id (array), or NULL */
	char	   *role;			/* --db-auth role, or NULL */
	PrivEntry  *cache;
	int			ncache;
	int			fd;				/* the client's socket, -1 if unknown */
	FeedEvent  *cur;			/* frame being written */
	size_t		cur_off;
	struct timespec last_write;
	unsigned long long serial;	/* identifies it to the poller */
	bool		pending;		/* not joined yet: the poller catches it up */
	char	   *resume;			/* the cursor to catch up from, or NULL */
	bool		resume_given;	/* resume came from the client */
} FeedSub;

static pthread_mutex_t feed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static FeedSub *subs;
static atomic_int nsubs;		/* linked into subs: read without the lock */
static bool stopping;
static bool connected;			/* the poller is connected; under feed_lock */
static bool refused;			/* the database refused the poll; under feed_lock */
static bool started;
static char *shared_cursor;		/* the poller's cursor; under feed_lock */
static unsigned long long next_serial;	/* under feed_lock */

static long heartbeat_ms = 15000;
static int	queue_max = 1024;
static long queue_max_bytes = 1048576;

/*
 * event_new
 *		A frame with one reference.  text is taken over.
 */
static FeedEvent *
event_new(char *text, bool commit)
{
	FeedEvent  *ev = calloc(1, sizeof(FeedEvent));

	if (ev == NULL)
	{
		free(text);
		return NULL;
	}
	atomic_init(&ev->refs, 1);
	ev->commit = commit;
	ev->text = text;
	ev->len = strlen(text);
	return ev;
}

static void
event_unref(FeedEvent *ev)
{
	if (ev == NULL || atomic_fetch_sub(&ev->refs, 1) != 1)
		return;
	for (int i = 0; i < ev->nparts; i++)
		free(ev->parts[i]);
	free(ev->parts);
	free(ev->id_json);
	free(ev->text);
	free(ev);
}

/*
 * drop_queue
 *		Release every queued frame of s (feed_lock held).
 */
static void
drop_queue(FeedSub *s)
{
	while (s->count > 0)
	{
		event_unref(s->ring[s->head]);
		s->head = (s->head + 1) % queue_max;
		s->count--;
	}
	s->bytes = 0;
}

/*
 * close_sub
 *		Make s end its stream after the comment bye (feed_lock held).
 */
static void
close_sub(FeedSub *s, const char *bye)
{
	if (s->closing)
		return;
	s->closing = true;
	s->bye = bye;
	pthread_cond_signal(&s->cond);
}

/*
 * push
 *		Queue ev for s (feed_lock held); a full queue closes s.
 */
static void
push(FeedSub *s, FeedEvent *ev)
{
	if (s->closing)
		return;
	if (s->count >= queue_max || s->bytes + ev->len > (size_t) queue_max_bytes)
	{
		drop_queue(s);
		close_sub(s, ": disconnected: the client did not keep up with the feed\n\n");
		gw_metrics_add(GW_M_SSE_SLOW_DISCONNECTS, 1);
		return;
	}
	atomic_fetch_add(&ev->refs, 1);
	s->ring[(s->head + s->count) % queue_max] = ev;
	s->count++;
	s->bytes += ev->len;
	pthread_cond_signal(&s->cond);
}

/*
 * id_matches
 *		Whether the event's table id lies under prefix (whole = exact id).
 */
static bool
id_matches(const FeedEvent *ev, json_t *filter, bool whole)
{
	size_t		n = json_array_size(filter);

	if (ev->parts == NULL)
		return false;
	if (whole ? (size_t) ev->nparts != n : (size_t) ev->nparts <= n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev->parts[i], json_string_value(json_array_get(filter, i))) != 0)
			return false;
	return true;
}

static bool
sub_matches(const FeedSub *s, const FeedEvent *ev)
{
	if (!ev->commit)
		return true;
	if (s->ns_filter && !id_matches(ev, s->ns_filter, false))
		return false;
	if (s->table_filter && !id_matches(ev, s->table_filter, true))
		return false;
	return true;
}

/*
 * broadcast
 *		Queue ev for every matching subscriber and drop the caller's
 *		reference.
 */
static void
broadcast(FeedEvent *ev)
{
	if (ev == NULL)
		return;
	pthread_mutex_lock(&feed_lock);
	for (FeedSub *s = subs; s; s = s->next)
		if (!s->pending && sub_matches(s, ev))
			push(s, ev);
	pthread_mutex_unlock(&feed_lock);
	event_unref(ev);
}

/*
 * broadcast_text
 *		A control frame (comment or non-commit event) to everyone.
 */
static void
broadcast_text(const char *text)
{
	char	   *copy = strdup(text);

	if (copy != NULL)
		broadcast(event_new(copy, false));
}

/*
 * commit_event
 *		The frame of one notification payload, with its table id parsed
 *		for filters and privilege checks.
 */
static FeedEvent *
commit_event(const char *payload)
{
	size_t		plen = strlen(payload);
	char	   *text = malloc(plen + 64);
	FeedEvent  *ev;
	json_t	   *j;
	json_t	   *id;
	int			off;

	if (text == NULL)
		return NULL;
	off = snprintf(text, 64, "event: commit\ndata: ");
	/* the payload is one line of JSON; never let it break the framing */
	for (size_t i = 0; i < plen; i++)
		text[off + i] = (payload[i] == '\n' || payload[i] == '\r') ? ' ' : payload[i];
	strcpy(text + off + plen, "\n\n");
	ev = event_new(text, true);
	if (ev == NULL)
		return NULL;

	j = json_loads(payload, 0, NULL);
	id = json_object_get(j, "id");
	if (json_is_array(id))
	{
		size_t		n = json_array_size(id);

		ev->parts = calloc(n ? n : 1, sizeof(char *));
		ev->id_json = json_dumps(id, JSON_COMPACT);
		for (size_t i = 0; ev->parts && i < n; i++)
		{
			json_t	   *p = json_array_get(id, i);

			ev->parts[i] = strdup(json_is_string(p) ? json_string_value(p) : "");
			ev->nparts++;
		}
	}
	json_decref(j);
	return ev;
}

/*
 * gw_feed_broadcast_commit
 *		Send the commit event of one lance_changes() payload (poller).
 */
void
gw_feed_broadcast_commit(const char *payload)
{
	broadcast(commit_event(payload));
}

/*
 * gw_feed_broadcast_text
 *		Send a control frame to every subscriber (poller).
 */
void
gw_feed_broadcast_text(const char *text)
{
	broadcast_text(text);
}

/*
 * gw_feed_wanted
 *		Whether anyone subscribes, so that the poller should read.
 */
bool
gw_feed_wanted(void)
{
	/* on every commit's path (gw_feed_poke): no lock */
	return atomic_load(&nsubs) > 0;
}

/*
 * gw_feed_set_connected
 *		The poller's connection came up or went down.
 */
void
gw_feed_set_connected(bool up)
{
	pthread_mutex_lock(&feed_lock);
	connected = up;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_set_refused
 *		The database answered but cannot serve the feed (an extension
 *		without lance_changes): the poller retries, and the gateway starts
 *		without waiting for it.
 */
void
gw_feed_set_refused(void)
{
	pthread_mutex_lock(&feed_lock);
	refused = true;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_set_cursor
 *		The poller's cursor, after a poll (whose commits it has sent), or
 *		NULL when it dropped it.  A subscriber that arrives now is caught up
 *		from here.
 */
void
gw_feed_set_cursor(const char *cursor)
{
	char	   *copy = cursor ? strdup(cursor) : NULL;

	pthread_mutex_lock(&feed_lock);
	free(shared_cursor);
	shared_cursor = copy;
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_pending
 *		The subscribers that wait to join the stream, as (serial, cursor to
 *		catch up from) pairs in a malloc'd array (*out); their number, or
 *		-1 when out of memory.  Free with gw_feed_pending_free().
 */
int
gw_feed_pending(GwFeedPending **out)
{
	int			n = 0;
	int			i = 0;

	*out = NULL;
	pthread_mutex_lock(&feed_lock);
	for (FeedSub *s = subs; s; s = s->next)
		n += s->pending;
	if (n > 0 && (*out = calloc(n, sizeof(GwFeedPending))) == NULL)
		n = -1;
	for (FeedSub *s = subs; s && n > 0; s = s->next)
		if (s->pending)
		{
			(*out)[i].serial = s->serial;
			(*out)[i].resume = s->resume ? strdup(s->resume) : NULL;
			i++;
		}
	pthread_mutex_unlock(&feed_lock);
	return n;
}

/*
 * gw_feed_pending_free
 *		Free what gw_feed_pending() returned.
 */
void
gw_feed_pending_free(GwFeedPending *p, int n)
{
	for (int i = 0; i < n; i++)
		free(p[i].resume);
	free(p);
}

/*
 * gw_feed_join_stream
 *		Let the subscriber serial join the stream at cursor: the comment
 *		that it is subscribed, the n commits it missed (payloads) or the
 *		control frame reset instead, then the cursor as the stream's event
 *		id.
 */
void
gw_feed_join_stream(unsigned long long serial, char **payloads, int n, const char *reset,
					const char *cursor)
{
	FeedEvent **evs = n > 0 && payloads ? calloc(n, sizeof(FeedEvent *)) : NULL;
	FeedEvent  *hello = NULL;
	FeedEvent  *ctl = NULL;
	FeedEvent  *id = NULL;
	char	   *text;

	for (int i = 0; evs && i < n; i++)
		evs[i] = commit_event(payloads[i]);
	if (n > 0 && evs == NULL)
		reset = "event: reset\ndata: {\"message\":\"out of memory: the commits since the "
			"cursor were not sent\"}\n\n";
	if ((text = strdup("retry: 1000\n: subscribed to the change feed\n\n")) != NULL)
		hello = event_new(text, false);
	if (reset && (text = strdup(reset)) != NULL)
		ctl = event_new(text, false);
	if (asprintf(&text, "id: %s\n\n", cursor) >= 0)
		id = event_new(text, false);

	pthread_mutex_lock(&feed_lock);
	for (FeedSub *s = subs; s; s = s->next)
	{
		if (s->serial != serial)
			continue;
		if (hello)
			push(s, hello);
		if (ctl)
			push(s, ctl);
		for (int i = 0; evs && i < n; i++)
			if (evs[i] && sub_matches(s, evs[i]))
				push(s, evs[i]);
		if (id)
			push(s, id);
		s->pending = false;
		if (s->resume_given)
			gw_metrics_add(GW_M_SSE_RESUMES, 1);
		break;
	}
	pthread_mutex_unlock(&feed_lock);
	for (int i = 0; evs && i < n; i++)
		event_unref(evs[i]);
	free(evs);
	event_unref(hello);
	event_unref(ctl);
	event_unref(id);
}

/*
 * gw_feed_start
 *		Start the poller and wait (up to --startup-timeout) until it is
 *		connected.  False if the thread cannot be started.
 */
bool
gw_feed_start(void)
{
	struct timespec deadline;
	long		interval;

	heartbeat_ms = gw_config.sse_heartbeat_ms;
	queue_max = gw_config.sse_queue;
	queue_max_bytes = gw_config.sse_queue_bytes;
	interval = gw_config.feed_poll_ms;
	/* an idle stream must write before the HTTP server's idle timeout */
	if (gw_config.request_timeout_s > 0 && heartbeat_ms > gw_config.request_timeout_s * 500L)
		heartbeat_ms = gw_config.request_timeout_s * 500L;
	/* a catch-up leaves room in the queue for the hello and the id */
	if (!gw_feed_poller_start(interval, queue_max > 3 ? queue_max - 2 : 1))
		return false;
	started = true;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += gw_config.startup_wait_s;
	pthread_mutex_lock(&feed_lock);
	while (!connected && !refused)
		if (pthread_cond_timedwait(&ready_cond, &feed_lock, &deadline) == ETIMEDOUT)
			break;
	if (!connected)
		fprintf(stderr, "%s: change feed: not connected yet; retrying in the background\n", GW_PROGRAM);
	pthread_mutex_unlock(&feed_lock);
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
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_join
 *		Stop the poller thread and close its connection.
 */
void
gw_feed_join(void)
{
	if (started)
		gw_feed_poller_join();
	started = false;
}

/*
 * exec_fail
 *		Fill err from a failed command on conn.
 */
static void
exec_fail(PGconn *conn, PGresult *res, GwError *err)
{
	const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (PQstatus(conn) != CONNECTION_OK)
	{
		gw_error_set(err, GW_ERR_UNAVAILABLE, "the connection to the catalog database was lost");
		gw_metrics_db_error("08006");
		return;
	}
	gw_metrics_db_error(sqlstate);
	gw_error_set(err, sqlstate ? gw_code_for_sqlstate(sqlstate) : GW_ERR_INTERNAL, "%s",
				 primary ? primary : "catalog database error");
}

/*
 * run
 *		PQexecParams that returns the result on success, else NULL with
 *		err set.
 */
static PGresult *
run(PGconn *conn, const char *sql, int n, const char *const *params, GwError *err)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	exec_fail(conn, res, err);
	PQclear(res);
	return NULL;
}

/*
 * release
 *		Give a pooled connection back (dropping it if it broke).
 */
static void
release(GwConn *c)
{
	if (PQstatus(c->conn) != CONNECTION_OK)
		gw_pool_discard(c);
	else
	{
		if (PQtransactionStatus(c->conn) != PQTRANS_IDLE)
			PQclear(PQexec(c->conn, "ROLLBACK"));
		gw_pool_release(c);
	}
}

/*
 * authenticate
 *		--db-auth: the role of the subscription's credentials (malloc'd),
 *		or NULL with err set.
 */
static char *
authenticate(json_t *headers, GwError *err)
{
	json_t	   *k = json_object_get(headers, "x-api-key");
	json_t	   *a = json_object_get(headers, "authorization");
	const char *params[2] = {json_is_string(k) ? json_string_value(k) : NULL, NULL};
	GwConn	   *c;
	PGresult   *res;
	char	   *role = NULL;

	if (json_is_string(a) && strncasecmp(json_string_value(a), "Bearer ", 7) == 0)
		params[1] = json_string_value(a) + 7;
	c = gw_pool_acquire(gw_config.pool_wait_ms, err);
	if (c == NULL)
		return NULL;
	res = run(c->conn, "SELECT lance_namespace.lance_authenticate($1, $2)", 2, params, err);
	if (res != NULL)
	{
		if (!PQgetisnull(res, 0, 0))
			role = strdup(PQgetvalue(res, 0, 0));
		else if (gw_config.anon_role)
			role = strdup(gw_config.anon_role);
		else
			gw_error_set(err, GW_ERR_UNAUTHENTICATED,
						 "credentials required: send x-api-key or Authorization: Bearer");
		PQclear(res);
	}
	release(c);
	return role;
}

/*
 * check_privilege
 *		1 if role may read table id_json, 0 if not, -1 if the database
 *		could not say.  A role that bypasses row level security on the
 *		catalog (its owner, a superuser) reads every table, as over REST.
 */
static int
check_privilege(const char *role, const char *id_json)
{
	GwError		err;
	GwConn	   *c = gw_pool_acquire(gw_config.pool_wait_ms, &err);
	PGresult   *res;
	const char *params[1];
	int			answer = -1;

	if (c == NULL)
		return -1;
	res = run(c->conn, "BEGIN READ ONLY", 0, NULL, &err);
	if (res == NULL)
		goto done;
	PQclear(res);
	params[0] = role;
	res = run(c->conn, "SELECT pg_catalog.set_config('role', $1, true)", 1, params, &err);
	if (res == NULL)
		goto done;
	PQclear(res);
	params[0] = id_json;
	res = run(c->conn,
			  "SELECT NOT pg_catalog.row_security_active('lance_namespace.entries'::pg_catalog.regclass)"
			  " OR lance_namespace.lance_has_privilege("
			  "ARRAY(SELECT pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb)), 'read')",
			  1, params, &err);
	if (res == NULL)
	{
		/* e.g. no USAGE on the schema: such a role reads nothing */
		if (PQstatus(c->conn) == CONNECTION_OK && err.code == GW_ERR_PERMISSION_DENIED)
			answer = 0;
		goto done;
	}
	answer = (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0) ? 1 : 0;
	PQclear(res);
done:
	release(c);
	return answer;
}

/*
 * may_read
 *		Whether subscriber s may see commit event ev (feed_lock held; it is
 *		released around a database check).
 */
static bool
may_read(FeedSub *s, FeedEvent *ev)
{
	time_t		now = time(NULL);
	int			answer;
	char	   *role;
	PrivEntry  *e = NULL;

	if (s->role == NULL)
		return true;
	if (ev->id_json == NULL)
		return false;
	for (int i = 0; i < s->ncache; i++)
		if (strcmp(s->cache[i].key, ev->id_json) == 0)
		{
			if (now - s->cache[i].at < PRIV_CACHE_TTL_S)
				return s->cache[i].allowed;
			e = &s->cache[i];
			break;
		}

	role = s->role;				/* only this thread frees it */
	pthread_mutex_unlock(&feed_lock);
	answer = check_privilege(role, ev->id_json);
	pthread_mutex_lock(&feed_lock);
	if (answer < 0)
		return false;			/* fail closed, ask again next time */

	if (e == NULL)
	{
		if (s->ncache == PRIV_CACHE_MAX)
		{
			for (int i = 0; i < s->ncache; i++)
				free(s->cache[i].key);
			s->ncache = 0;
		}
		e = &s->cache[s->ncache];
		e->key = strdup(ev->id_json);
		if (e->key == NULL)
			return answer == 1;
		s->ncache++;
	}
	e->allowed = (answer == 1);
	e->at = now;
	return e->allowed;
}

/*
 * gw_feed_read
 *		The next bytes of a stream: block until frames are queued or a
 *		heartbeat is due, then copy as much as fits into buf (max must be
 *		at least GW_FEED_READ_MIN).  Returns 0 at the end of the stream
 *		(closing, or the client went away).
 */
size_t
gw_feed_read(void *stream, char *buf, size_t max)
{
	FeedSub    *s = stream;
	size_t		n = 0;
	long		sent = 0;

	pthread_mutex_lock(&feed_lock);
	for (;;)
	{
		struct timespec now;
		struct timespec due;

		if (s->cur != NULL)
		{
			size_t		k = s->cur->len - s->cur_off;

			if (k > max - n)
				k = max - n;
			memcpy(buf + n, s->cur->text + s->cur_off, k);
			n += k;
			s->cur_off += k;
			if (s->cur_off < s->cur->len)
				break;			/* buf is full */
			if (s->cur->commit)
				sent++;
			event_unref(s->cur);
			s->cur = NULL;
			continue;
		}
		if (s->count > 0 && !s->closing)
		{
			FeedEvent  *ev = s->ring[s->head];

			s->head = (s->head + 1) % queue_max;
			s->count--;
			s->bytes -= ev->len;
			if (ev->commit && !may_read(s, ev))
			{
				gw_metrics_add(GW_M_SSE_EVENTS_WITHHELD, 1);
				event_unref(ev);
				continue;
			}
			s->cur = ev;
			s->cur_off = 0;
			continue;
		}
		if (n > 0)
			break;
		if (s->closing)
		{
			size_t		k = s->bye ? strlen(s->bye) : 0;

			if (!s->bye_sent && k > 0 && k <= max)
			{
				s->bye_sent = true;
				memcpy(buf, s->bye, k);
				n = k;
				break;
			}
			pthread_mutex_unlock(&feed_lock);
			return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		due = s->last_write;
		due.tv_sec += heartbeat_ms / 1000;
		due.tv_nsec += (heartbeat_ms % 1000) * 1000000L;
		if (due.tv_nsec >= 1000000000L)
		{
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		if (now.tv_sec > due.tv_sec || (now.tv_sec == due.tv_sec && now.tv_nsec >= due.tv_nsec))
		{
			static const char hb[] = ": heartbeat\n\n";

			if (sizeof(hb) - 1 <= max)
			{
				memcpy(buf, hb, sizeof(hb) - 1);
				n = sizeof(hb) - 1;
			}
			break;
		}
		/* wake at least twice a second to notice a client that went away */
		{
			struct timespec slice = now;

			slice.tv_nsec += 500000000L;
			if (slice.tv_nsec >= 1000000000L)
			{
				slice.tv_sec++;
				slice.tv_nsec -= 1000000000L;
			}
			if (slice.tv_sec < due.tv_sec || (slice.tv_sec == due.tv_sec && slice.tv_nsec < due.tv_nsec))
				due = slice;
		}
		pthread_cond_timedwait(&s->cond, &feed_lock, &due);
		if (s->fd >= 0)
		{
			struct pollfd p = {s->fd, POLLRDHUP, 0};

			if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			{
				s->closing = true;
				s->bye_sent = true;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &s->last_write);
	pthread_mutex_unlock(&feed_lock);
	if (sent > 0)
		gw_metrics_add(GW_M_SSE_EVENTS_SENT, sent);
	return n;
}

/*
 * sub_free
 *		Unlink and free a subscriber.
 */
static void
sub_free(void *cls)
{
	FeedSub    *s = cls;

	pthread_mutex_lock(&feed_lock);
	if (s->prev || subs == s)
		atomic_fetch_sub(&nsubs, 1);
	if (s->prev)
		s->prev->next = s->next;
	else if (subs == s)
		subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	drop_queue(s);
	event_unref(s->cur);
	pthread_mutex_unlock(&feed_lock);
	gw_feed_poller_wake();		/* perhaps the last one: stop reading */

	gw_metrics_add(GW_M_SSE_SUBSCRIBERS, -1);
	for (int i = 0; i < s->ncache; i++)
		free(s->cache[i].key);
	free(s->cache);
	free(s->ring);
	free(s->role);
	free(s->resume);
	json_decref(s->ns_filter);
	json_decref(s->table_filter);
	pthread_cond_destroy(&s->cond);
	free(s);
}

/*
 * parse_filter
 *		The query parameter name as an id (JSON array), NULL if absent.
 */
static bool
parse_filter(json_t *query, const char *name, const char *delimiter, json_t **out,
			 GwError *err)
{
	json_t	   *v = json_object_get(query, name);

	*out = NULL;
	if (v == NULL)
		return true;
	*out = gw_parse_id(json_string_value(v), delimiter, err);
	if (*out == NULL)
		return false;
	if (strcmp(name, "table") == 0 && json_array_size(*out) == 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "table must name a table");
		json_decref(*out);
		*out = NULL;
		return false;
	}
	return true;
}

/*
 * valid_cursor
 *		Whether text has the form of a pg_snapshot: "xmin:xmax:" and a
 *		comma-separated list of transaction ids (the database checks the
 *		rest).
 */
static bool
valid_cursor(const char *text)
{
	int			field = 0;
	int			digits = 0;

	if (strlen(text) > GW_FEED_CURSOR_MAX)
		return false;
	for (const char *p = text; *p; p++)
	{
		if (*p >= '0' && *p <= '9')
		{
			if (++digits > 20)
				return false;
		}
		else if ((*p == ':' && field < 2) || (*p == ',' && field == 2))
		{
			if (digits == 0)
				return false;
			field += *p == ':';
			digits = 0;
		}
		else
			return false;
	}
	return field == 2 && (digits > 0 || text[strlen(text) - 1] == ':');
}

/*
 * parse_resume
 *		The cursor a subscriber resumes from: the Last-Event-ID header (an
 *		EventSource reconnecting) or the since query parameter, NULL if
 *		neither.  False (err set) for a malformed one.
 */
static bool
parse_resume(const GwHttpRequest *req, char **out, GwError *err)
{
	json_t	   *h = json_object_get(req->headers, "last-event-id");
	json_t	   *q = json_object_get(req->query, "since");
	const char *v = json_is_string(h) ? json_string_value(h) : json_string_value(q);

	*out = NULL;
	if (v == NULL || (v[0] == '\0' && q == NULL))
		return true;			/* an empty Last-Event-ID means none */
	if (!valid_cursor(v))
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "the cursor to resume from (Last-Event-ID or since) must be an event id "
					 "of this feed: xmin:xmax:xip,...");
		return false;
	}
	*out = strdup(v);
	if (*out == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return false;
	}
	return true;
}

/*
 * gw_feed_subscribe
 *		GET /v1/events: register a subscriber and answer with its stream
 *		(resp->stream), or an error.  The poller catches the subscriber up
 *		(from the client's cursor, or from its own at registration) before
 *		it joins the stream.
 */
void
gw_feed_subscribe(const GwHttpRequest *req, GwResponse *resp)
{
	json_t	   *jd = json_object_get(req->query, "delimiter");
	const char *delimiter = json_is_string(jd) ? json_string_value(jd) : "$";
	pthread_condattr_t attr;
	FeedSub    *s;
	GwError		err;

	gw_error_clear(&err);
	s = calloc(1, sizeof(FeedSub));
	if (s == NULL)
	{
		gw_error_set(&err, GW_ERR_INTERNAL, "out of memory");
		gw_respond_error(resp, &err, req->path);
		return;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &attr);
	pthread_condattr_destroy(&attr);
	s->fd = -1;
	s->ring = calloc(queue_max, sizeof(FeedEvent *));
	s->cache = calloc(PRIV_CACHE_MAX, sizeof(PrivEntry));
	clock_gettime(CLOCK_MONOTONIC, &s->last_write);
	gw_metrics_add(GW_M_SSE_SUBSCRIBERS, 1);	/* sub_free subtracts */
	if (s->ring == NULL || s->cache == NULL)
	{
		gw_error_set(&err, GW_ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (!parse_filter(req->query, "namespace", delimiter, &s->ns_filter, &err) ||
		!parse_filter(req->query, "table", delimiter, &s->table_filter, &err) ||
		!parse_resume(req, &s->resume, &err))
		goto fail;
	s->resume_given = s->resume != NULL;
	if (gw_config.db_auth && (s->role = authenticate(req->headers, &err)) == NULL)
		goto fail;

	pthread_mutex_lock(&feed_lock);
	if (stopping)
	{
		pthread_mutex_unlock(&feed_lock);
		gw_error_set(&err, GW_ERR_UNAVAILABLE, "the gateway is shutting down");
		goto fail;
	}
	s->serial = ++next_serial;
	s->pending = true;
	if (s->resume == NULL && shared_cursor != NULL && (s->resume = strdup(shared_cursor)) == NULL)
	{
		pthread_mutex_unlock(&feed_lock);
		gw_error_set(&err, GW_ERR_INTERNAL, "out of memory");
		goto fail;
	}
	s->next = subs;
	if (subs)
		subs->prev = s;
	subs = s;
	atomic_fetch_add(&nsubs, 1);
	if (!connected)
	{
		char	   *text = strdup("retry: 1000\n: the change feed is reconnecting to the database; "
								  "the stream starts once it is back\n\n");
		FeedEvent  *ev = text ? event_new(text, false) : NULL;

		if (ev != NULL)
			push(s, ev);
		event_unref(ev);
	}
	pthread_mutex_unlock(&feed_lock);
	/* the poller lets it join; the first subscriber makes it take a cursor */
	gw_feed_poller_wake();

	resp->status = 200;
	resp->stream = s;
	resp->content_type = "text/event-stream; charset=utf-8";
	return;

fail:
	sub_free(s);
	gw_respond_error(resp, &err, req->path);
}

/*
 * gw_feed_attach
 *		Tell a stream its client's socket, so that gw_feed_read() notices a
 *		client that went away while the stream is idle.
 */
void
gw_feed_attach(void *stream, int fd)
{
	pthread_mutex_lock(&feed_lock);
	((FeedSub *) stream)->fd = fd;
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_cancel
 *		End a stream whose client is gone: gw_feed_read() returns 0.
 */
void
gw_feed_cancel(void *stream)
{
	FeedSub    *s = stream;

	pthread_mutex_lock(&feed_lock);
	s->closing = true;
	s->bye_sent = true;
	s->fd = -1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&feed_lock);
}

/*
 * gw_feed_discard
 *		Free a stream: after its end, or one that will not be sent.
 */
void
gw_feed_discard(void *stream)
{
	if (stream != NULL)
		sub_free(stream);
}
