/*-------------------------------------------------------------------------
 *
 * publish.c
 *	  One flush per create: ratify in the catalog, publish the file later.
 *
 *	  A create of a table under a local --root (commit.c) reads the staged
 *	  manifest (at most GW_HOLD_MAX bytes) before the catalog call and
 *	  sends its bytes with the version ("manifest_base64").  The catalog
 *	  inserts the version and, in the same transaction, its bytes into
 *	  lance_namespace.publications.  Before COMMIT the gateway gives the
 *	  staging file's inode the canonical name (a hard link, or a copy) with
 *	  no fsync at all, checking that it holds exactly the bytes sent; then
 *	  COMMIT, whose WAL flush is the only flush the create waits for; then
 *	  the answer and the removal of the staging name.  So:
 *
 *	  - every manifest_path the catalog returns exists when returned (it
 *		was linked before COMMIT), with the staged bytes;
 *	  - an acknowledged version survives a crash of either process or of
 *		the host: its row and its bytes are in the WAL.  Only the canonical
 *		file may be lost or short after a host crash (its link and data
 *		were not flushed), and it is rebuilt from the row's bytes.
 *
 *	  Publication made durable (this file): every --publish-interval-ms
 *	  after a commit, the publisher thread reads the pending rows, checks
 *	  that each canonical file holds exactly the row's bytes (rewriting it
 *	  through a temporary name and a rename where it does not; a missing
 *	  file below a later version's manifest is a client's cleanup, which is
 *	  left alone, as DescribeTableVersion and --sweep treat it), makes them
 *	  all durable at once (GwStorage.sync_published: writeback of
 *	  every file started first, then the flushes, which share the file
 *	  system's journal commits) and only then deletes their rows
 *	  (with synchronous_commit off: a lost delete only means a second,
 *	  idempotent pass).  The same pass repairs:
 *
 *	  - at start-up, before the gateway listens: whatever a crash of the
 *		gateway or the host left between COMMIT and durable publication;
 *	  - DescribeTableVersion of a version whose file is missing and not
 *		below a later version's manifest (table_files.c): the pass for that
 *		one manifest runs first;
 *	  - --sweep (sweep.c), before it looks for orphans and missing files.
 *
 *	  A bounded backlog: a create holds its bytes only while fewer than
 *	  --publish-backlog rows (and BACKLOG_BYTES bytes) are pending,
 *	  counting those of creates still running (gw_publish_reserve); past
 *	  that it flushes its manifest before COMMIT, as with
 *	  --publish-interval-ms 0, and wakes the publisher.  So under any
 *	  sustained load the rows that a stop flushes and a start checks stay
 *	  at most --publish-backlog, and the request pays for the flush rather
 *	  than the backlog growing.  The count follows the catalog after every
 *	  pass (recount), so reservations of creates that held nothing (a
 *	  retry, a conflict, an abort) are not kept.
 *
 *	  A publication goes with its version (ON DELETE CASCADE), so a version
 *	  retired after a cleanup takes its bytes along.  Reading and pruning publications takes the
 *	  catalog owner's privileges: a gateway whose role lacks them keeps the
 *	  flushing protocol (each create fsyncs its manifest and directory
 *	  before COMMIT), as does --publish-interval-ms 0, and so do tables in
 *	  buckets, whose conditional PUT is durable when it returns.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool.h"
#include "publish.h"
#include "storage.h"
#include "table_files.h"

/* rows handled per statement of a pass */
#define PASS_ROWS 512

#define SQL_CAN_PUBLISH \
	"SELECT COALESCE((SELECT pg_catalog.pg_has_role(c.relowner, 'USAGE')" \
	" FROM pg_catalog.pg_class c" \
	" WHERE c.oid = pg_catalog.to_regclass('lance_namespace.publications')), false)"

/*
 * The next PASS_ROWS pending rows after a key, read from publications'
 * primary key, each then looked up in versions by its key: O(rows
 * returned), whatever the number of versions.  The lookup is a LATERAL
 * subquery with a LIMIT so that the planner cannot make it a join: as a
 * join, with publications' few rows unanalyzed, it chose a hash join
 * over all of versions (036_publication.pl counts the rows read); joined
 * the other way round, every pass walked all the versions.
 */
#define VERSION_OF(k) \
	" CROSS JOIN LATERAL (SELECT v.manifest_path FROM lance_namespace.versions v" \
	"  WHERE v.table_id = " k ".table_id AND v.branch = " k ".branch" \
	"  AND v.version = " k ".version LIMIT 1) v"

#define SQL_PENDING \
	"SELECT p.table_id, p.branch, p.version, v.manifest_path, p.manifest" \
	" FROM (SELECT table_id, branch, version, manifest FROM lance_namespace.publications" \
	"  WHERE (table_id, branch, version) > ($1::bigint, $2::text COLLATE \"C\", $3::bigint)" \
	"  ORDER BY table_id, branch, version LIMIT " GW_STR(PASS_ROWS) ") p" \
	VERSION_OF("p") \
	" ORDER BY p.table_id, p.branch, p.version"

/* The pending row of one manifest: each pending key looked up in versions */
#define SQL_PENDING_ONE \
	"SELECT p.table_id, p.branch, p.version, v.manifest_path, p.manifest" \
	" FROM lance_namespace.publications p" \
	VERSION_OF("p") \
	" WHERE v.manifest_path = $1 OR v.manifest_path = 'file://' || $1"

/* What publications hold (the backlog) */
#define SQL_BACKLOG \
	"SELECT count(*), COALESCE(sum(pg_catalog.octet_length(manifest)), 0)" \
	" FROM lance_namespace.publications"

#define SQL_PRUNE \
	"DELETE FROM lance_namespace.publications p" \
	" USING ROWS FROM (pg_catalog.unnest($1::bigint[]), pg_catalog.unnest($2::text[])," \
	"  pg_catalog.unnest($3::bigint[])) AS d(t, b, v)" \
	" WHERE p.table_id = d.t AND p.branch = d.b AND p.version = d.v"

#define GW_STR_(x) #x
#define GW_STR(x) GW_STR_(x)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long commits;	/* creates since the last pass (mu) */
static bool stopping;			/* (mu) */
static bool holds;				/* creates send their bytes */
static bool started;
static bool privileged;			/* the role may read and prune publications */
static pthread_t publisher;

/*
 * The backlog (mu): rows held in publications by the last count, plus those
 * reserved since; creates past --publish-backlog rows or BACKLOG_BYTES
 * bytes flush their manifests instead of holding them.
 */
#define BACKLOG_BYTES (64L * 1024 * 1024)

typedef struct Backlog
{
	long		rows;
	long		bytes;
} Backlog;

static Backlog backlog;			/* held or reserved (mu) */
static Backlog reserved;		/* ever reserved: only grows (mu) */
static Backlog inflight;		/* reserved by creates still running (mu) */
static time_t overflow_said;	/* when the last refusal was logged (mu) */

/* the publisher's own connection, also used by gw_publish_repair */
static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static PGconn *pconn;

/*
 * ensure_conn
 *		The publisher's connection, (re)opened when needed.  conn_mu held.
 */
static PGconn *
ensure_conn(GwError *err)
{
	PGresult   *res;

	if (pconn != NULL && PQstatus(pconn) == CONNECTION_OK)
		return pconn;
	if (pconn != NULL)
		PQfinish(pconn);
	pconn = gw_pool_connect(err);
	if (pconn == NULL)
		return NULL;
	/* a lost prune only repeats an idempotent pass */
	res = PQexec(pconn, "SET synchronous_commit = off");
	PQclear(res);
	return pconn;
}

/*
 * recount
 *		Set the backlog to what publications hold now, plus what creates
 *		reserved since the count began or still run (counted twice when
 *		they committed before it: an over-estimate only until the next
 *		count).  Reservations of creates that held nothing in the end (a
 *		retry, a conflict, an abort) are forgotten here.
 */
static void
recount(PGconn *conn)
{
	Backlog		r0;
	Backlog		f0;
	PGresult   *res;

	pthread_mutex_lock(&mu);
	r0 = reserved;
	f0 = inflight;
	pthread_mutex_unlock(&mu);
	res = PQexec(conn, SQL_BACKLOG);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
	{
		pthread_mutex_lock(&mu);
		backlog.rows = atol(PQgetvalue(res, 0, 0)) + (reserved.rows - r0.rows) + f0.rows;
		backlog.bytes = atol(PQgetvalue(res, 0, 1)) + (reserved.bytes - r0.bytes) + f0.bytes;
		pthread_mutex_unlock(&mu);
	}
	PQclear(res);
}

/*
 * append_text
 *		Append s to an array literal being built in *buf (quoted element).
 */
static bool
append_text(char **buf, size_t *len, size_t *cap, const char *s, bool first)
{
	size_t		need = *len + 2 * strlen(s) + 8;

	if (need > *cap)
	{
		size_t		ncap = need * 2;
		char	   *n = realloc(*buf, ncap);

		if (n == NULL)
			return false;
		*buf = n;
		*cap = ncap;
	}
	if (!first)
		(*buf)[(*len)++] = ',';
	(*buf)[(*len)++] = '"';
	for (; *s; s++)
	{
		if (*s == '"' || *s == '\\')
			(*buf)[(*len)++] = '\\';
		(*buf)[(*len)++] = *s;
	}
	(*buf)[(*len)++] = '"';
	(*buf)[*len] = '\0';
	return true;
}

/*
 * prune
 *		Delete the publications of rows[i] where ok[i] (their canonical
 *		files are durable).  Returns the number deleted, -1 on an error.
 */
static long
prune(PGconn *conn, PGresult *rows, const bool *ok, GwError *err)
{
	char	   *arr[3] = {NULL, NULL, NULL};
	size_t		len[3] = {0, 0, 0};
	size_t		cap[3] = {0, 0, 0};
	bool		first = true;
	long		n = -1;
	PGresult   *res;

	for (int i = 0; i < PQntuples(rows); i++)
	{
		if (!ok[i])
			continue;
		for (int k = 0; k < 3; k++)
			if (!append_text(&arr[k], &len[k], &cap[k], PQgetvalue(rows, i, k), first))
				goto done;
		first = false;
	}
	if (first)
	{
		n = 0;
		goto done;
	}
	for (int k = 0; k < 3; k++)
	{
		char	   *lit = malloc(len[k] + 3);

		if (lit == NULL)
			goto done;
		snprintf(lit, len[k] + 3, "{%s}", arr[k]);
		free(arr[k]);
		arr[k] = lit;
	}
	res = PQexecParams(conn, SQL_PRUNE, 3, NULL, (const char *const *) arr, NULL, NULL, 0);
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
		n = atol(PQcmdTuples(res));
	else
	{
		gw_error_set(err, GW_ERR_UNAVAILABLE, "cannot prune the catalog's publications");
		gw_error_detail(err, "%s", PQresultErrorMessage(res));
	}
	PQclear(res);
done:
	for (int k = 0; k < 3; k++)
		free(arr[k]);
	return n;
}

/*
 * removed_by_cleanup
 *		Whether the canonical file of version is missing while its
 *		directory lists the manifest of a later version: a client's cleanup
 *		of old versions removed it (table_files.c), which a publication must
 *		not undo.  A crash loses only the latest links, never one below a
 *		link that survived (the file system's journal commits in order).
 */
static bool
removed_by_cleanup(GwStorage *st, const char *canon, int64_t version)
{
	GwError		e;
	int64_t		size;
	char	   *dir;
	char	   *slash;
	bool		later;

	gw_error_clear(&e);
	if (st->stat_staging(st, canon, &size, &e) || errno != ENOENT)
		return false;
	if ((dir = strdup(canon)) == NULL || (slash = strrchr(dir, '/')) == NULL)
	{
		free(dir);
		return false;
	}
	*slash = '\0';
	later = gw_later_manifest(st, dir, version);
	free(dir);
	return later;
}

/*
 * gw_publish_pass
 *		Publish every pending publication (or only that of manifest_path
 *		when not NULL) over conn, which has the catalog owner's privileges:
 *		make each canonical file hold its row's bytes, make them durable
 *		together, then delete their rows.  A row whose file cannot be
 *		written is left for a later pass (counts->failed).  dry_run only
 *		counts.  False on a database error (err set).
 */
bool
gw_publish_pass(PGconn *conn, const char *manifest_path, bool dry_run,
				GwPublishCounts *counts, GwError *err)
{
	/* keyset over the pending rows: one left behind does not stop the rest */
	char		after_table[32] = "-1";
	char		after_branch[256] = "";
	char		after_version[32] = "-1";

	for (;;)
	{
		const char *params[3] = {after_table, after_branch, after_version};
		PGresult   *res = manifest_path != NULL ?
			PQexecParams(conn, SQL_PENDING_ONE, 1, NULL, &manifest_path, NULL, NULL, 0) :
			PQexecParams(conn, SQL_PENDING, 3, NULL, params, NULL, NULL, 0);
		int			n;
		bool	   *ok;
		const char **paths;
		int			nok = 0;		/* files to flush */
		int			nprune = 0;		/* rows to delete: those and cleanups */
		GwStorage  *st = NULL;

		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			gw_error_set(err, GW_ERR_UNAVAILABLE, "cannot read the catalog's publications");
			gw_error_detail(err, "%s", PQresultErrorMessage(res));
			PQclear(res);
			return false;
		}
		n = PQntuples(res);
		counts->pending += n;
		ok = calloc(n + 1, sizeof(bool));
		paths = calloc(n + 1, sizeof(char *));
		if (ok == NULL || paths == NULL)
		{
			free(ok);
			free(paths);
			PQclear(res);
			gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
			return false;
		}
		for (int i = 0; i < n && !dry_run; i++)
		{
			const char *canon = PQgetvalue(res, i, 3);
			size_t		blen;
			unsigned char *bytes;
			GwStorage  *s;
			GwError		e;
			int			r = -1;

			if (strncmp(canon, "file://", 7) == 0)
				canon += 7;
			gw_error_clear(&e);
			s = gw_storage_for(canon, &e);
			if (s == NULL || s->republish == NULL || (st != NULL && s != st))
			{
				counts->failed++;
				continue;		/* not a local manifest under --root */
			}
			if (removed_by_cleanup(s, canon, atoll(PQgetvalue(res, i, 2))))
			{
				/* the client's cleanup removed it: not to be rewritten */
				counts->removed++;
				ok[i] = true;
				nprune++;
				continue;
			}
			bytes = PQunescapeBytea((const unsigned char *) PQgetvalue(res, i, 4), &blen);
			if (bytes == NULL)
				gw_error_set(&e, GW_ERR_INTERNAL, "out of memory");
			else
				r = s->republish(s, canon, bytes, blen, false, &e);
			PQfreemem(bytes);
			if (r < 0)
			{
				fprintf(stderr, "%s: publication of %s: %s%s%s\n", GW_PROGRAM, canon,
						e.message, e.detail[0] ? ": " : "", e.detail);
				counts->failed++;
				continue;
			}
			if (r > 0)
			{
				counts->rewritten++;
				fprintf(stderr, "%s: republished %s from the catalog's bytes\n", GW_PROGRAM, canon);
			}
			st = s;
			ok[i] = true;
			paths[nok++] = canon;
			nprune++;
		}
		if (nok > 0 && !st->sync_published(st, paths, nok, err))
		{
			free(ok);
			free(paths);
			PQclear(res);
			return false;
		}
		if (nprune > 0)
		{
			long		k = prune(conn, res, ok, err);

			if (k < 0)
			{
				free(ok);
				free(paths);
				PQclear(res);
				return false;
			}
			counts->pruned += k;
		}
		if (n > 0)
		{
			snprintf(after_table, sizeof(after_table), "%s", PQgetvalue(res, n - 1, 0));
			snprintf(after_branch, sizeof(after_branch), "%s", PQgetvalue(res, n - 1, 1));
			snprintf(after_version, sizeof(after_version), "%s", PQgetvalue(res, n - 1, 2));
		}
		free(ok);
		free(paths);
		PQclear(res);
		if (n < PASS_ROWS || manifest_path != NULL || strlen(after_branch) >= sizeof(after_branch) - 1)
			return true;
	}
}

/*
 * publisher_main
 *		The publisher thread: a pass --publish-interval-ms after the first
 *		create since the last one, and a last pass at shutdown.
 */
static void *
publisher_main(void *arg)
{
	(void) arg;
	for (;;)
	{
		bool		last;
		GwPublishCounts counts = {0};
		GwError		err;
		struct timespec until;

		pthread_mutex_lock(&mu);
		while (!stopping && commits == 0)
			pthread_cond_wait(&cv, &mu);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += gw_config.publish_interval_ms / 1000;
		until.tv_nsec += (long) (gw_config.publish_interval_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L)
		{
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		/* gather the creates of one interval */
		while (!stopping && pthread_cond_timedwait(&cv, &mu, &until) != ETIMEDOUT)
			;
		last = stopping;
		commits = 0;
		pthread_mutex_unlock(&mu);

		gw_error_clear(&err);
		pthread_mutex_lock(&conn_mu);
		if (ensure_conn(&err) == NULL ||
			!gw_publish_pass(pconn, NULL, false, &counts, &err))
		{
			fprintf(stderr, "%s: publication pass: %s%s%s (retried)\n", GW_PROGRAM,
					err.message, err.detail[0] ? ": " : "", err.detail);
			pthread_mutex_lock(&mu);
			commits++;			/* try again after an interval */
			pthread_mutex_unlock(&mu);
		}
		else
			recount(pconn);
		pthread_mutex_unlock(&conn_mu);
		if (last)
			return NULL;
	}
}

/*
 * gw_publish_start
 *		At start-up, before listening: decide whether creates hold their
 *		bytes in the catalog (the gateway's role has the catalog owner's
 *		privileges and --publish-interval-ms is not 0), repair what a crash
 *		left unpublished, and start the publisher thread.  False when the
 *		catalog cannot be reached.
 */
bool
gw_publish_start(void)
{
	GwPublishCounts counts = {0};
	GwError		err;
	PGresult   *res;
	bool		owner;

	gw_error_clear(&err);
	pthread_mutex_lock(&conn_mu);
	if (ensure_conn(&err) == NULL)
	{
		pthread_mutex_unlock(&conn_mu);
		fprintf(stderr, "%s: publications: %s\n", GW_PROGRAM, err.message);
		return false;
	}
	res = PQexec(pconn, SQL_CAN_PUBLISH);
	owner = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!owner)
	{
		pthread_mutex_unlock(&conn_mu);
		fprintf(stderr, "%s: publications: the gateway's role is not the catalog's owner "
				"(or the catalog predates 0.3.0): every create flushes its manifest\n", GW_PROGRAM);
		return true;
	}
	privileged = true;
	if (!gw_publish_pass(pconn, NULL, false, &counts, &err))
	{
		/* the publisher tries again; describe repairs one file on demand */
		fprintf(stderr, "%s: publications at start-up: %s%s%s (retried)\n", GW_PROGRAM,
				err.message, err.detail[0] ? ": " : "", err.detail);
		commits = 1;
	}
	recount(pconn);
	pthread_mutex_unlock(&conn_mu);
	if (counts.pending > 0)
		fprintf(stderr, "%s: publications at start-up: %ld pending, %ld republished, "
				"%ld made durable, %ld left\n", GW_PROGRAM, counts.pending, counts.rewritten,
				counts.pruned, counts.failed);
	if (gw_config.publish_interval_ms > 0)
	{
		if (pthread_create(&publisher, NULL, publisher_main, NULL) != 0)
			return true;		/* creates keep flushing */
		started = true;
		holds = true;
	}
	return true;
}

/*
 * gw_publish_stop
 *		Stop the publisher after a last pass (after the server stopped).
 */
void
gw_publish_stop(void)
{
	if (!started)
		return;
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(publisher, NULL);
	started = false;
	holds = false;
	privileged = false;
	pthread_mutex_lock(&mu);
	backlog = (Backlog) {0, 0};
	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&conn_mu);
	if (pconn != NULL)
		PQfinish(pconn);
	pconn = NULL;
	pthread_mutex_unlock(&conn_mu);
}

/*
 * gw_publish_holds
 *		Whether creates send their bytes to the catalog and skip the flushes.
 */
bool
gw_publish_holds(void)
{
	return holds;
}

/*
 * gw_publish_reserve
 *		A create is about to send len staged bytes for the catalog to hold:
 *		true when the backlog leaves room for them (reserved until
 *		gw_publish_release).  Otherwise the create flushes its manifest
 *		before COMMIT, as with --publish-interval-ms 0, so that the
 *		backlog, and with it what a stop flushes and a start checks, stays
 *		bounded under any load; and the publisher is woken to recount.
 */
bool
gw_publish_reserve(size_t len)
{
	bool		ok;

	if (!holds)
		return false;
	pthread_mutex_lock(&mu);
	ok = backlog.rows < gw_config.publish_backlog &&
		backlog.bytes + (long) len <= BACKLOG_BYTES;
	if (ok)
	{
		backlog.rows++;
		backlog.bytes += (long) len;
		reserved.rows++;
		reserved.bytes += (long) len;
		inflight.rows++;
		inflight.bytes += (long) len;
	}
	else
	{
		/* said at most every 10 s: under a sustained load it comes and goes */
		if (time(NULL) >= overflow_said + 10)
		{
			overflow_said = time(NULL);
			fprintf(stderr, "%s: publications: %ld pending (%ld bytes), at --publish-backlog: "
					"creates flush their manifests until the publisher catches up\n",
					GW_PROGRAM, backlog.rows, backlog.bytes);
		}
		if (commits++ == 0)
			pthread_cond_signal(&cv);
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

/*
 * gw_publish_release
 *		The create that reserved len bytes has ended (committed or not).
 */
void
gw_publish_release(size_t len)
{
	pthread_mutex_lock(&mu);
	inflight.rows--;
	inflight.bytes -= (long) len;
	pthread_mutex_unlock(&mu);
}

/*
 * gw_publish_notify
 *		A create holding its bytes committed: wake the publisher.
 */
void
gw_publish_notify(void)
{
	pthread_mutex_lock(&mu);
	if (commits++ == 0)
		pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

/*
 * gw_publish_repair
 *		The pass for one manifest (DescribeTableVersion found it missing):
 *		true when the catalog held its bytes and the file now holds them.
 */
bool
gw_publish_repair(const char *manifest_path)
{
	GwPublishCounts counts = {0};
	GwError		err;
	bool		ok;

	if (!privileged)
		return false;
	gw_error_clear(&err);
	pthread_mutex_lock(&conn_mu);
	ok = ensure_conn(&err) != NULL &&
		gw_publish_pass(pconn, manifest_path, false, &counts, &err);
	pthread_mutex_unlock(&conn_mu);
	if (!ok)
		fprintf(stderr, "%s: publication of %s: %s%s%s\n", GW_PROGRAM, manifest_path,
				err.message, err.detail[0] ? ": " : "", err.detail);
	return ok && counts.pruned > 0;
}
