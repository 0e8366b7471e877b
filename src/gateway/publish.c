/*-------------------------------------------------------------------------
 *
 * publish.c
 *	  One flush per create: the catalog holds a create's manifest bytes
 *	  (lance_namespace.publications) until this file's publisher has made
 *	  the canonical file durable.  RELIABILITY.md, "One flush per create",
 *	  describes the protocol and what each failure leaves; commit.c is the
 *	  create's side.
 *
 *	  A pass checks that each pending row's canonical file holds exactly
 *	  its bytes (rewriting it where not), flushes them all together
 *	  (GwStorage.sync_published) and only then deletes the rows.  It runs
 *	  --publish-interval-ms after a create, at start-up before listening,
 *	  for one manifest that DescribeTableVersion found missing, and at the
 *	  start of --sweep.  A missing file below a later version's manifest
 *	  is a client's cleanup and is not rewritten.
 *
 *-------------------------------------------------------------------------
 */
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
 * The next PASS_ROWS pending rows after a key, each looked up in versions
 * by its key.  A LATERAL subquery with a LIMIT, so that the planner cannot
 * make it a hash join over all of versions (036_publication.pl counts the
 * rows read).  Read in binary: the bytes as they are, the rest as text.
 */
#define VERSION_OF(k) \
	" CROSS JOIN LATERAL (SELECT v.manifest_path FROM lance_namespace.versions v" \
	"  WHERE v.table_id = " k ".table_id AND v.branch = " k ".branch" \
	"  AND v.version = " k ".version LIMIT 1) v"

#define SQL_PENDING \
	"SELECT p.table_id::text, p.branch, p.version::text, v.manifest_path, p.manifest" \
	" FROM (SELECT table_id, branch, version, manifest FROM lance_namespace.publications" \
	"  WHERE (table_id, branch, version) > ($1::bigint, $2::text COLLATE \"C\", $3::bigint)" \
	"  ORDER BY table_id, branch, version LIMIT " GW_STR(PASS_ROWS) ") p" \
	VERSION_OF("p") \
	" ORDER BY p.table_id, p.branch, p.version"

/* The pending row of one manifest: each pending key looked up in versions */
#define SQL_PENDING_ONE \
	"SELECT p.table_id::text, p.branch, p.version::text, v.manifest_path, p.manifest" \
	" FROM lance_namespace.publications p" \
	VERSION_OF("p") \
	" WHERE v.manifest_path = $1 OR v.manifest_path = 'file://' || $1"

/* What publications hold (the backlog) */
#define SQL_BACKLOG \
	"SELECT count(*), COALESCE(sum(pg_catalog.octet_length(manifest)), 0)" \
	" FROM lance_namespace.publications"

/* $1: [{"t": table_id, "b": branch, "v": version}, ...] */
#define SQL_PRUNE \
	"DELETE FROM lance_namespace.publications p" \
	" USING pg_catalog.jsonb_to_recordset($1::pg_catalog.jsonb) AS d(t bigint, b text, v bigint)" \
	" WHERE p.table_id = d.t AND p.branch = d.b AND p.version = d.v"
#define VACUUM_ROWS 256			/* prune() vacuums after this many rows */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long commits;	/* creates since the last pass (mu) */
static bool stopping;			/* (mu) */
static bool started;			/* the publisher runs: creates send their bytes */
static bool privileged;			/* the role may read and prune publications */
static pthread_t publisher;

/* creates past --publish-backlog rows or these bytes flush instead of holding */
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
static long unvacuumed;			/* rows pruned since the last VACUUM (conn_mu) */

/*
 * ensure_conn
 *		The publisher's connection, (re)opened when needed.  conn_mu held.
 */
static PGconn *
ensure_conn(GwError *err)
{
	if (pconn != NULL && PQstatus(pconn) == CONNECTION_OK)
		return pconn;
	PQfinish(pconn);
	pconn = gw_pool_connect(err);
	/* a lost prune only repeats an idempotent pass */
	if (pconn != NULL)
		PQclear(PQexec(pconn, "SET synchronous_commit = off"));
	return pconn;
}

/*
 * own_pass
 *		A pass on the publisher's connection (opened when needed).  After a
 *		full one, the backlog is recounted: what publications hold now,
 *		plus what creates reserved since the count began or still run (an
 *		over-estimate until the next count); reservations of creates that
 *		held nothing are forgotten.  A failure is logged: what, the
 *		manifest_path if any, the error, then.
 */
static bool
own_pass(const char *manifest_path, GwPublishCounts *counts, const char *what,
		 const char *then)
{
	GwError		err;
	bool		ok;
	Backlog		r0;
	Backlog		f0;
	PGresult   *res;

	gw_error_clear(&err);
	pthread_mutex_lock(&conn_mu);
	ok = ensure_conn(&err) != NULL && gw_publish_pass(pconn, manifest_path, false, counts, &err);
	if (ok && manifest_path == NULL)
	{
		pthread_mutex_lock(&mu);
		r0 = reserved;
		f0 = inflight;
		pthread_mutex_unlock(&mu);
		res = PQexec(pconn, SQL_BACKLOG);
		if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		{
			pthread_mutex_lock(&mu);
			backlog.rows = atol(PQgetvalue(res, 0, 0)) + (reserved.rows - r0.rows) + f0.rows;
			backlog.bytes = atol(PQgetvalue(res, 0, 1)) + (reserved.bytes - r0.bytes) + f0.bytes;
			pthread_mutex_unlock(&mu);
		}
		PQclear(res);
	}
	pthread_mutex_unlock(&conn_mu);
	if (!ok)
		fprintf(stderr, "%s: %s%s%s: %s%s%s%s\n", GW_PROGRAM, what, manifest_path ? " " : "",
				manifest_path ? manifest_path : "", err.message, err.detail[0] ? ": " : "",
				err.detail, then);
	return ok;
}

/*
 * prune
 *		Delete the publications of keys (their canonical files are durable
 *		or gone), adding the number deleted to *pruned.  False on an error.
 *		After VACUUM_ROWS, a VACUUM lets creates reuse the table's pages
 *		(a 4 KiB manifest takes one) rather than extend it until autovacuum,
 *		not truncating it: it waits for every create's lock (BENCHMARKS.md).
 */
static bool
prune(PGconn *conn, json_t *keys, long *pruned, GwError *err)
{
	char	   *text = json_dumps(keys, JSON_COMPACT);
	PGresult   *res;
	bool		ok;

	if (text == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return false;
	}
	res = PQexecParams(conn, SQL_PRUNE, 1, NULL, (const char *const *) &text, NULL, NULL, 0);
	if ((ok = PQresultStatus(res) == PGRES_COMMAND_OK))
		*pruned += atol(PQcmdTuples(res));
	else
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "cannot prune the catalog's publications");
		gw_error_detail(err, "%s", PQresultErrorMessage(res));
	}
	if (ok && (unvacuumed += atol(PQcmdTuples(res))) >= VACUUM_ROWS)
	{
		unvacuumed = 0;			/* a failure leaves it to autovacuum */
		PQclear(res);
		res = PQexec(conn, "VACUUM (TRUNCATE false) lance_namespace.publications");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			fprintf(stderr, "%s: %s", GW_PROGRAM, PQresultErrorMessage(res));
	}
	PQclear(res);
	free(text);
	return ok;
}

/*
 * publish_rows
 *		Make the canonical file of each pending row in res hold its bytes,
 *		flush them together and delete the rows of those and of the files
 *		a cleanup removed.  False on a database or flush error (err set).
 */
static bool
publish_rows(PGconn *conn, PGresult *res, GwPublishCounts *counts, GwError *err)
{
	json_t	   *keys = json_array();	/* the rows to delete */
	const char **paths = calloc(PQntuples(res) + 1, sizeof(char *));
	GwStorage  *st = NULL;
	int			nok = 0;		/* files to flush */
	bool		ok;

	for (int i = 0; paths != NULL && i < PQntuples(res); i++)
	{
		const char *canon = PQgetvalue(res, i, 3);
		GwStorage  *s;
		GwError		e;
		int			r = 0;
		bool		cleaned;

		if (strncmp(canon, "file://", 7) == 0)
			canon += 7;
		gw_error_clear(&e);
		s = gw_storage_for(canon, &e);
		if (s == NULL || s->republish == NULL || (st != NULL && s != st))
		{
			counts->failed++;
			continue;			/* not a local manifest under --root */
		}
		cleaned = gw_manifest_missing(s, canon, atoll(PQgetvalue(res, i, 2))) == GW_MANIFEST_CLEANED;
		if (!cleaned && (r = s->republish(s, canon, (const unsigned char *) PQgetvalue(res, i, 4),
										  (size_t) PQgetlength(res, i, 4), false, &e)) < 0)
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
		if (!cleaned)
		{
			st = s;
			paths[nok++] = canon;
		}
		json_array_append_new(keys, json_pack("{ssssss}", "t", PQgetvalue(res, i, 0),
											  "b", PQgetvalue(res, i, 1), "v", PQgetvalue(res, i, 2)));
	}
	if (paths == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	ok = paths != NULL && (nok == 0 || st->sync_published(st, paths, nok, err)) &&
		(json_array_size(keys) == 0 || prune(conn, keys, &counts->pruned, err));
	json_decref(keys);
	free(paths);
	return ok;
}

/*
 * gw_publish_pass
 *		Publish every pending publication (or only that of manifest_path
 *		when not NULL) over conn, which has the catalog owner's privileges.
 *		A row whose file cannot be written is left for a later pass
 *		(counts->failed).  dry_run only counts.  False on a database error
 *		(err set).
 */
bool
gw_publish_pass(PGconn *conn, const char *manifest_path, bool dry_run,
				GwPublishCounts *counts, GwError *err)
{
	/* keyset over the pending rows: one left behind does not stop the rest */
	char		after_table[32] = "-1";
	char		after_branch[256] = "";
	char		after_version[32] = "-1";
	bool		more = true;
	bool		ok = true;

	while (ok && more)
	{
		const char *params[3] = {after_table, after_branch, after_version};
		PGresult   *res = manifest_path != NULL ?
			PQexecParams(conn, SQL_PENDING_ONE, 1, NULL, &manifest_path, NULL, NULL, 1) :
			PQexecParams(conn, SQL_PENDING, 3, NULL, params, NULL, NULL, 1);
		int			n = PQntuples(res);

		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "cannot read the catalog's publications");
			gw_error_detail(err, "%s", PQresultErrorMessage(res));
			ok = false;
		}
		else
		{
			counts->pending += n;
			ok = dry_run || publish_rows(conn, res, counts, err);
		}
		if (ok && n > 0)
		{
			snprintf(after_table, sizeof(after_table), "%s", PQgetvalue(res, n - 1, 0));
			snprintf(after_branch, sizeof(after_branch), "%s", PQgetvalue(res, n - 1, 1));
			snprintf(after_version, sizeof(after_version), "%s", PQgetvalue(res, n - 1, 2));
		}
		more = n == PASS_ROWS && manifest_path == NULL &&
			strlen(after_branch) < sizeof(after_branch) - 1;
		PQclear(res);
	}
	return ok;
}

/*
 * publisher_main
 *		The publisher thread: a pass --publish-interval-ms after the first
 *		create since the last one, and a last pass at shutdown.
 */
static void *
publisher_main(void *arg GW_UNUSED)
{
	for (;;)
	{
		bool		last;
		GwPublishCounts counts = {0};
		struct timespec until;
		long		ns;

		pthread_mutex_lock(&mu);
		while (!stopping && commits == 0)
			pthread_cond_wait(&cv, &mu);
		/* gather the creates of one interval */
		clock_gettime(CLOCK_REALTIME, &until);
		ns = until.tv_nsec + (long) (gw_config.publish_interval_ms % 1000) * 1000000L;
		until.tv_sec += gw_config.publish_interval_ms / 1000 + ns / 1000000000L;
		until.tv_nsec = ns % 1000000000L;
		while (!stopping && pthread_cond_timedwait(&cv, &mu, &until) != ETIMEDOUT)
			;
		last = stopping;
		commits = 0;
		pthread_mutex_unlock(&mu);

		if (!own_pass(NULL, &counts, "publication pass", " (retried)"))
			gw_publish_notify();	/* try again after an interval */
		if (last)
			return NULL;
	}
}

/*
 * gw_publish_start
 *		Before listening: repair what a crash left unpublished and, when
 *		the role has the catalog owner's privileges and
 *		--publish-interval-ms is not 0, start the publisher (creates then
 *		hold their bytes).  False when the catalog cannot be reached.
 */
bool
gw_publish_start(void)
{
	GwPublishCounts counts = {0};
	GwError		err;
	PGresult   *res;
	bool		owner;

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
	pthread_mutex_unlock(&conn_mu);
	if (!owner)
	{
		fprintf(stderr, "%s: publications: the gateway's role is not the catalog's owner "
				"(or the catalog predates 0.3.0): every create flushes its manifest\n", GW_PROGRAM);
		return true;
	}
	privileged = true;
	/* the publisher tries again; describe repairs one file on demand */
	if (!own_pass(NULL, &counts, "publications at start-up", " (retried)"))
		commits = 1;
	if (counts.pending > 0)
		fprintf(stderr, "%s: publications at start-up: %ld pending, %ld republished, "
				"%ld made durable, %ld left\n", GW_PROGRAM, counts.pending, counts.rewritten,
				counts.pruned, counts.failed);
	/* if the thread cannot be started, creates keep flushing */
	if (gw_config.publish_interval_ms > 0)
		started = pthread_create(&publisher, NULL, publisher_main, NULL) == 0;
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
	started = false;			/* gw_publish_reserve refuses from here */
	privileged = false;
	pthread_mutex_lock(&conn_mu);
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
	return started;
}

/*
 * gw_publish_reserve
 *		A create is about to send len staged bytes for the catalog to hold:
 *		true when the backlog leaves room for them (reserved until
 *		gw_publish_release); else it flushes its manifest, and the
 *		publisher is woken to recount (own_pass).
 */
bool
gw_publish_reserve(size_t len)
{
	bool		ok;

	if (!started)
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

	return privileged && own_pass(manifest_path, &counts, "publication of", "") && counts.pruned > 0;
}
