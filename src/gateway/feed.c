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

#define FEED_MIN_GAP_MS		5
#define FEED_RETRY_MIN_MS	100 /* a refused poll is tried again after this, */
#define FEED_RETRY_MAX_MS	5000	/* doubling up to this */
#define FEED_IDLE_PING_MS	30000
#define TICK_MS				500 /* a waiting stream looks for bytes this often */
#define CURSOR_MAX			65536	/* the longest cursor accepted to resume from */

#define HELLO "retry: 1000\n: subscribed to the change feed\n\n"
#define WAITING "retry: 1000\n: the change feed is reconnecting to the database; " \
	"the stream starts once it is back\n\n"
#define REFUSED ": the change feed cannot read the commit history (the database " \
	"refused the poll); retrying with backoff\n\n"
#define REFUSED_WAITING "retry: 1000\n" REFUSED
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

/*
 * With --db-auth, one poll is a REPEATABLE READ transaction (one snapshot):
 * the cursor, then under each subscribing role in turn the versions after
 * the last cursor that the role may read (row level security decides, at
 * each poll), in the order to send them.
 */
#define POLL_BEGIN_SQL "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
#define POLL_CURSOR_SQL "SELECT lance_namespace.lance_changes_cursor()::text"
#define SET_ROLE_SQL "SELECT pg_catalog.set_config('role', $1, true)"
#define ROLE_POLL_SQL \
	"SELECT c.payload::text" \
	"  FROM lance_namespace.lance_changes($1::pg_catalog.pg_snapshot)" \
	"       WITH ORDINALITY AS c" \
	" ORDER BY c.ordinality"

/* what a subscriber missed between its cursor and the log's, in order */
#define CATCH_UP_SQL \
	"SELECT c.payload::text" \
	"  FROM lance_namespace.lance_changes($1::pg_catalog.pg_snapshot," \
	"                                     $2::pg_catalog.pg_snapshot) c" \
	" LIMIT $3::integer"

/* what a poll came to */
typedef enum PollResult
{
	POLL_OK,
	POLL_LOST,					/* the connection is gone */
	POLL_REFUSED				/* the database refused it: retried with backoff */
} PollResult;

/* One frame of the stream, shared by the subscribers that send it. */
typedef struct Frame
{
	atomic_int	refs;
	int			commits;		/* commit events in text */
	char	   *text;			/* the SSE frames */
	size_t		len;
	char	   *id_json;		/* a commit's table id (JSON array), NULL if unknown */
	json_t	   *readers;		/* a commit's, --db-auth: role -> true if its poll saw it */
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
static bool refused;			/* its polls are refused (not a lost connection) */
static pthread_t poller;
static atomic_bool poller_stop;
static atomic_bool poke_pending;
static int	wake_fd = -1;		/* eventfd: wakes the poller */
static uint64_t rounds;			/* the poller's rounds of work (FeedSub.round) */
static json_t *denied;			/* the poller's: role -> {since, wait, at} of refused roles */

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
 * end_transaction
 *		End conn's transaction, if one is open (the poller's are read only:
 *		a rollback changes nothing).
 */
static void
end_transaction(PGconn *conn)
{
	if (PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE)
		PQclear(PQexec(conn, "ROLLBACK"));
}

/*
 * now_ms
 *		A monotonic clock in milliseconds.
 */
static json_int_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (json_int_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * role_refused
 *		Role's poll from since was refused with err (the connection is
 *		fine): the role reads nothing for now (fail closed).  Said once; the
 *		role's polls are tried again FEED_RETRY_MIN_MS later, then twice as
 *		long each time up to FEED_RETRY_MAX_MS, from the cursor of its first
 *		refused poll, so that a role granted meanwhile misses no commit.
 */
static void
role_refused(const char *role, const char *since, const GwError *err)
{
	json_t	   *d = json_object_get(denied, role);
	json_int_t	wait;

	if (d == NULL)
	{
		fprintf(stderr, "%s: change feed: role \"%s\" may not read the commit history (%s); "
				"its subscribers get no events until it may (tried again with backoff)\n",
				GW_PROGRAM, role, err->message);
		if (json_object_size(denied) >= 4096 ||
			(d = json_pack("{s:s,s:I,s:I}", "since", since, "wait", (json_int_t) 0, "at",
						   (json_int_t) 0)) == NULL)
			return;				/* then tried at every poll */
		json_object_set_new_nocheck(denied, role, d);
	}
	wait = json_integer_value(json_object_get(d, "wait"));
	wait = wait == 0 ? FEED_RETRY_MIN_MS : wait * 2 > FEED_RETRY_MAX_MS ? FEED_RETRY_MAX_MS : wait * 2;
	json_object_set_new(d, "wait", json_integer(wait));
	json_object_set_new(d, "at", json_integer(now_ms() + wait));
}

/*
 * as_role
 *		In conn's open transaction, under a savepoint: switch to role and
 *		run sql with its one parameter param; *res holds the rows.
 *		When the database refused the role or the read, the savepoint is
 *		rolled back and the role reads nothing: POLL_OK with *res NULL and
 *		err set.
 */
static PollResult
as_role(PGconn *conn, const char *role, const char *sql, int nparams, const char *const *params,
		PGresult **res, GwError *err)
{
	const char *rp[1] = {role};
	bool		done;

	*res = NULL;
	if (!gw_db_exec(conn, "SAVEPOINT feed_role", 0, NULL, NULL, NULL, err))
		return PQstatus(conn) == CONNECTION_OK ? POLL_REFUSED : POLL_LOST;
	done = gw_db_exec(conn, SET_ROLE_SQL, 1, rp, NULL, NULL, err) &&
		gw_db_exec(conn, sql, nparams, params, res, NULL, err);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		PQclear(*res);
		*res = NULL;
		return POLL_LOST;
	}
	if (!done)
	{
		GwError		e2;

		return gw_db_exec(conn, "ROLLBACK TO SAVEPOINT feed_role", 0, NULL, NULL, NULL, &e2) ?
			POLL_OK : POLL_LOST;
	}
	if (!gw_db_exec(conn, "RELEASE SAVEPOINT feed_role", 0, NULL, NULL, NULL, err))
	{
		PQclear(*res);
		*res = NULL;
		return PQstatus(conn) == CONNECTION_OK ? POLL_REFUSED : POLL_LOST;
	}
	return POLL_OK;
}

/* The commits of one poll under --db-auth: each once, in each role's order */
typedef struct Merged
{
	Frame	  **frames;
	int			n;
	json_t	   *index;			/* frame text -> its place in frames */
} Merged;

/*
 * merge_role
 *		Merge the commits that role's poll returned (res, in its order)
 *		into m.  A commit that another role saw already is that frame, now
 *		readable by role too; a new one goes right after the last commit
 *		of role's before it, so that every role's own order is kept.  False
 *		if out of memory (m unchanged).
 */
static bool
merge_role(Merged *m, const char *role, PGresult *res)
{
	int			rows = PQntuples(res);
	Frame	  **out = calloc((size_t) m->n + rows + 1, sizeof(Frame *));
	json_t	   *index = json_object();
	Frame	  **fresh = calloc((size_t) rows + 1, sizeof(Frame *));
	int			k = 0;
	int			p = 0;

	if (out == NULL || index == NULL || fresh == NULL)
		goto oom;
	for (int i = 0; i < rows; i++)
		if ((fresh[i] = commit_frame(PQgetvalue(res, i, 0))) == NULL)
			goto oom;
	for (int i = 0; i < rows; i++)
	{
		json_t	   *at = json_object_get(m->index, fresh[i]->text);
		Frame	   *f = fresh[i];

		if (at != NULL)
		{
			int			j = (int) json_integer_value(at);

			while (p <= j)		/* (j < p: equal keys in another order; kept) */
				out[k++] = m->frames[p++];
			f = m->frames[j];
			frame_unref(fresh[i]);
			fresh[i] = NULL;
		}
		else
		{
			out[k++] = f;
			fresh[i] = NULL;
		}
		json_object_set_new_nocheck(f->readers, role, json_true());
	}
	while (p < m->n)
		out[k++] = m->frames[p++];
	for (int i = 0; i < k; i++)
		json_object_set_new_nocheck(index, out[i]->text, json_integer(i));
	free(fresh);
	free(m->frames);
	json_decref(m->index);
	m->frames = out;
	m->n = k;
	m->index = index;
	return true;

oom:
	for (int i = 0; fresh != NULL && i < rows; i++)
		frame_unref(fresh[i]);
	free(fresh);
	free(out);
	json_decref(index);
	return false;
}

/*
 * poll_roles
 *		The --db-auth poll, in one REPEATABLE READ transaction: the cursor,
 *		then the commits after log_cursor under each subscribing role (a
 *		role that joins meanwhile too).  Returns with feed_lock held and
 *		*m filled on POLL_OK (*next the cursor), so that the frames are
 *		appended before another subscriber can join, and the transaction
 *		still open (end_transaction, once feed_lock is released); without
 *		either otherwise.
 */
static PollResult
poll_roles(PGconn *conn, Merged *m, char **next, GwError *err)
{
	json_t	   *asked = json_object();
	PGresult   *res = NULL;
	PollResult	r = POLL_OK;

	*next = NULL;
	if (asked == NULL || (m->index = json_object()) == NULL)
	{
		json_decref(asked);
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return POLL_REFUSED;
	}
	if (!gw_db_exec(conn, POLL_BEGIN_SQL, 0, NULL, NULL, NULL, err) ||
		!gw_db_exec(conn, POLL_CURSOR_SQL, 0, NULL, &res, NULL, err) ||
		PQntuples(res) != 1 || (*next = strdup(PQgetvalue(res, 0, 0))) == NULL)
		r = PQstatus(conn) == CONNECTION_OK ? POLL_REFUSED : POLL_LOST;
	PQclear(res);
	/* without a cursor yet, or after the ids went back, only the cursor */
	while (r == POLL_OK)
	{
		json_t	   *roles = json_array();

		pthread_mutex_lock(&feed_lock);
		for (FeedSub *s = subs; roles && s; s = s->next)
			if (s->role && log_cursor && xmax(*next) >= xmax(log_cursor) &&
				!json_object_get(asked, s->role))
			{
				json_object_set_new_nocheck(asked, s->role, json_true());
				json_array_append_new(roles, json_string_nocheck(s->role));
			}
		if (roles == NULL || json_array_size(roles) == 0)
		{
			json_decref(roles);
			break;				/* no subscriber left out: with feed_lock */
		}
		pthread_mutex_unlock(&feed_lock);
		for (size_t i = 0; r == POLL_OK && i < json_array_size(roles); i++)
		{
			const char *role = json_string_value(json_array_get(roles, i));
			json_t	   *d = json_object_get(denied, role);
			const char *since[1] = {d ? json_string_value(json_object_get(d, "since")) : log_cursor};

			if (d && now_ms() < json_integer_value(json_object_get(d, "at")))
				continue;		/* refused lately: not yet again */
			r = as_role(conn, role, ROLE_POLL_SQL, 1, since, &res, err);
			if (r == POLL_OK && res == NULL)
				role_refused(role, since[0], err);
			else if (r == POLL_OK && d != NULL)
			{
				fprintf(stderr, "%s: change feed: role \"%s\" may read the commit history again\n",
						GW_PROGRAM, role);
				json_object_del(denied, role);
			}
			if (r == POLL_OK && res != NULL && !merge_role(m, role, res))
			{
				gw_error_set(err, LANCE_INTERNAL, "out of memory");
				r = POLL_REFUSED;
			}
			PQclear(res);
		}
		json_decref(roles);
	}
	/* (feed_lock held if POLL_OK) the refused roles no one subscribes as any more */
	if (r == POLL_OK)
	{
		const char *key;
		json_t	   *v;
		void	   *tmp;

		json_object_foreach_safe(denied, tmp, key, v)
		{
			if (!json_object_get(asked, key) || (log_cursor && xmax(*next) < xmax(log_cursor)))
				json_object_del(denied, key);
		}
	}
	json_decref(asked);
	if (r != POLL_OK)
	{
		end_transaction(conn);
		free(*next);
		*next = NULL;
		for (int i = 0; i < m->n; i++)
			frame_unref(m->frames[i]);
		m->n = 0;
	}
	return r;
}

/*
 * catch_up
 *		On the poller's connection: write to out the commits that s missed
 *		between its client's cursor and s->cursor, counted in *sent, or a
 *		reset when they cannot be sent (over max).  With --db-auth, those
 *		that its role may read, as the database says now.  False to try
 *		again later.
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
	if (s->role != NULL)
	{
		/* what the role may read (row level security): none if refused */
		PollResult	r = POLL_LOST;

		if (gw_db_exec(conn, "BEGIN READ ONLY", 0, NULL, NULL, NULL, &err))
			r = as_role(conn, s->role, CATCH_UP_SQL, 3, params, &res, &err);
		end_transaction(conn);
		if (r != POLL_OK)
			return false;		/* try again later */
		if (res == NULL)
			return true;		/* refused: nothing to catch up with */
	}
	else if (!gw_db_exec(conn, CATCH_UP_SQL, 3, params, &res, NULL, &err))
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

		if (f != NULL && matches(s, f) && fputs(f->text, out) >= 0)
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
		if ((!connected || refused) && !s->told)
		{
			s->told = true;
			return frame_new(strdup(connected ? REFUSED_WAITING : WAITING), 0);
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
 * poll_plain
 *		The poll without --db-auth: one statement, as the gateway's role.
 *		On POLL_OK returns with feed_lock held, *m and *next filled.
 */
static PollResult
poll_plain(PGconn *conn, Merged *m, char **next, GwError *err)
{
	const char *params[1] = {log_cursor};	/* only the poller changes it */
	PGresult   *res = NULL;

	*next = NULL;
	if (!gw_db_exec(conn, POLL_SQL, 1, params, &res, NULL, err) || PQntuples(res) < 1 ||
		(*next = strdup(PQgetvalue(res, 0, 0))) == NULL ||
		(m->frames = calloc(PQntuples(res), sizeof(Frame *))) == NULL)
	{
		PQclear(res);
		free(*next);
		*next = NULL;
		if (PQstatus(conn) != CONNECTION_OK)
			return POLL_LOST;
		if (err->code < 0)
			gw_error_set(err, LANCE_INTERNAL, "out of memory or no cursor");
		return POLL_REFUSED;
	}
	if (log_cursor == NULL || xmax(*next) >= xmax(log_cursor))
		for (int i = 0; i < PQntuples(res); i++)
			if (!PQgetisnull(res, i, 1))
				m->frames[m->n++] = commit_frame(PQgetvalue(res, i, 1));
	PQclear(res);
	pthread_mutex_lock(&feed_lock);
	return POLL_OK;
}

/*
 * poll_once
 *		Append to the log the versions committed since the cursor, then
 *		the next cursor as an event id; without a cursor, take the current
 *		one (where the feed starts).  With --db-auth, each commit once, for
 *		the roles whose polls returned it (poll_roles).  POLL_LOST if the
 *		connection failed; POLL_REFUSED, with err, if the database refused
 *		the poll (the cursor stays: the same commits are read again).
 */
static PollResult
poll_once(PGconn *conn, GwError *err)
{
	Merged		m = {NULL, 0, NULL};
	char	   *next;
	char	   *id = NULL;
	bool		back;
	PollResult	r;

	gw_metrics_add(GW_M_FEED_POLLS, 1);
	gw_error_clear(err);
	r = gw_config.db_auth ? poll_roles(conn, &m, &next, err) : poll_plain(conn, &m, &next, err);
	if (r != POLL_OK)
	{
		free(m.frames);
		json_decref(m.index);
		return r;
	}
	/* feed_lock held */
	back = log_cursor != NULL && xmax(next) < xmax(log_cursor);
	if (back)
		fprintf(stderr, "%s: change feed: the database's transaction ids went back; "
				"reading from its current snapshot\n", GW_PROGRAM);
	gw_metrics_add(GW_M_FEED_COMMITS, m.n);
	if ((m.n > 0 || back) && asprintf(&id, "id: %s\n\n", next) < 0)
		id = NULL;
	if (back)
		log_append(frame_new(strdup(RESET("the database's transaction ids went back "
										  "(a restored database); commits may have been missed")), 0));
	for (int i = 0; i < m.n; i++)
		log_append(m.frames[i]);
	log_append(frame_new(id, 0));
	free(log_cursor);
	log_cursor = next;
	pthread_mutex_unlock(&feed_lock);
	end_transaction(conn);
	free(m.frames);
	json_decref(m.index);
	return POLL_OK;
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
 * poll_refused
 *		The database refused a poll (not a lost connection): say it once,
 *		to the log and to the streams, until a poll succeeds.
 */
static void
poll_refused(const GwError *err)
{
	fprintf(stderr, "%s: change feed: the database refused the poll: %s; trying again "
			"with backoff (%d ms doubling up to %d ms)\n", GW_PROGRAM, err->message,
			FEED_RETRY_MIN_MS, FEED_RETRY_MAX_MS);
	pthread_mutex_lock(&feed_lock);
	refused = true;
	log_append(frame_new(strdup(REFUSED), 0));
	pthread_mutex_unlock(&feed_lock);
}

/*
 * poll_accepted
 *		A poll succeeded after refused ones.
 */
static void
poll_accepted(void)
{
	fprintf(stderr, "%s: change feed: polling again\n", GW_PROGRAM);
	pthread_mutex_lock(&feed_lock);
	refused = false;
	pthread_mutex_unlock(&feed_lock);
}

/*
 * poller_main
 *		The poller thread: connect, then poll and serve the subscribers
 *		while the connection works; reconnect with backoff, keeping the
 *		cursor across connections.  A poll that the database refuses on a
 *		working connection (a permission, a statement timeout, ...) is
 *		said once, to the log and to the streams, and tried again on the
 *		same connection from the same cursor, FEED_RETRY_MIN_MS later and
 *		then twice as long each time up to FEED_RETRY_MAX_MS.  A stream is
 *		looked at every TICK_MS.
 */
static void *
poller_main(void *first_conn)
{
	PGconn	   *conn = first_conn;
	int			backoff = 100;
	long		retry_ms = 0;	/* while polls are refused: the wait before the next */
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
			long		every = retry_ms > 0 ? retry_ms : gw_config.feed_poll_ms;
			long		due;

			if (log_cursor != NULL && drop_cursor())
				continue;		/* no one subscribes */
			if (retry_ms > 0 ? (atomic_load(&nsubs) > 0 && gw_ms_since(&last_poll) >= retry_ms) :
				log_cursor == NULL ? atomic_load(&nsubs) > 0 :
				woken || gw_ms_since(&last_poll) >= gw_config.feed_poll_ms)
			{
				PollResult	r;

				/* a poke: poll soon, but not more often than every FEED_MIN_GAP_MS */
				if (woken && log_cursor != NULL && gap > 0)
					poll(NULL, 0, (int) gap);
				clock_gettime(CLOCK_MONOTONIC, &last_poll);
				if ((r = poll_once(conn, &err)) == POLL_LOST || PQstatus(conn) != CONNECTION_OK)
					break;
				if (r == POLL_REFUSED)
				{
					if (retry_ms == 0)
						poll_refused(&err);
					retry_ms = retry_ms == 0 ? FEED_RETRY_MIN_MS :
						retry_ms * 2 > FEED_RETRY_MAX_MS ? FEED_RETRY_MAX_MS : retry_ms * 2;
				}
				else if (retry_ms > 0)
				{
					retry_ms = 0;
					poll_accepted();
				}
				every = retry_ms > 0 ? retry_ms : gw_config.feed_poll_ms;
			}
			serve_subscribers(conn);
			/* the next poll, or a stream's look; idle: the ping */
			due = every - gw_ms_since(&last_poll);
			woken = wait_for_work(conn, log_cursor == NULL ? FEED_IDLE_PING_MS :
								  due < TICK_MS ? due : TICK_MS);
			if (!woken && log_cursor == NULL)
				PQclear(PQexec(conn, ""));	/* is the connection still alive? */
		}

		PQfinish(conn);
		conn = NULL;
		retry_ms = 0;			/* said again if the new connection's polls are refused */
		pthread_mutex_lock(&feed_lock);
		refused = false;
		pthread_mutex_unlock(&feed_lock);
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
	denied = json_object();
	wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (log_ring == NULL || denied == NULL || wake_fd < 0 ||
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
		json_decref(denied);
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
