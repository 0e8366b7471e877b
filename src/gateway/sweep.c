/*-------------------------------------------------------------------------
 *
 * sweep.c
 *	  lance-namespace-gateway --sweep: remove the manifest files a crash
 *	  orphaned in the _versions directories of the tables under --root,
 *	  retire the versions whose manifest a client's cleanup removed, delete
 *	  what is left of dropped tables.  RELIABILITY.md ("Sweeping orphans")
 *	  gives the rules and why they cannot lose a committed version.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "manifest_rules.h"
#include "pool.h"
#include "publish.h"
#include "table_files.h"

/* How long the sweep waits for the transactions in flight on a table. */
#define SWEEP_LOCK_TIMEOUT "10s"

#define SQL_SESSION \
	"SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)," \
	" pg_catalog.set_config('row_security', 'off', false)," \
	" pg_catalog.set_config('lock_timeout', '" SWEEP_LOCK_TIMEOUT "', false)"

/* the tables, then the locations of dropped tables (lance_drop_table records them) */
#define SQL_WORK \
	"SELECT e.id, e.location, lance_namespace.lance_format_id(e.path), false" \
	" FROM lance_namespace.entries e WHERE e.kind = 't'" \
	" UNION ALL SELECT DISTINCT NULL::bigint, h.detail OPERATOR(pg_catalog.->>) 'location', NULL, true" \
	" FROM lance_namespace.history h WHERE h.operation = 'DropTable'" \
	" AND h.detail OPERATOR(pg_catalog.?) 'location' ORDER BY 4, 1, 2"

#define SQL_LOCK_TABLE \
	"SELECT e.location FROM lance_namespace.entries e" \
	" WHERE e.id = $1::bigint AND e.kind = 't' FOR UPDATE"

/*
 * no table of the catalog is at, above or below location $1 (but table $2,
 * if given), whatever row level security hides: the extension's rule
 */
#define SQL_LOCATION_FREE \
	"SELECT NOT lance_namespace.lance_location_taken($1::pg_catalog.text, $2::pg_catalog.int8)"

/* the versions of a branch, read under the table's lock */
#define SQL_BRANCH_VERSIONS \
	"SELECT v.version, v.manifest_path FROM lance_namespace.versions v" \
	" WHERE v.table_id = $1::bigint AND v.branch = $2::text ORDER BY v.version"

#define SQL_RETIRE \
	"SELECT lance_namespace.lance_retire_table_version(e.path, $2::bigint, $3::text, $4::text)" \
	" FROM lance_namespace.entries e WHERE e.id = $1::bigint"

#define SQL_BRANCHES \
	"SELECT b.name FROM lance_namespace.branches b" \
	" WHERE b.table_id = $1::bigint ORDER BY b.name"

typedef struct Sweep
{
	PGconn	   *conn;
	int64_t		min_age_ms;
	bool		dry_run;
	long		ntemporary;
	long		norphaned;
	long		ntables;
	long		ndropped;		/* files of dropped tables */
	long		nretired;		/* versions whose manifest was gone */
	bool		failed;
} Sweep;

/*
 * report
 *		Print an error of the sweep and remember that it failed.
 */
static void
report(Sweep *sw, const char *context, const char *message, const char *detail)
{
	fprintf(stderr, "%s: sweep: %s: %s%s%s\n", GW_PROGRAM, context, message,
			detail && detail[0] ? ": " : "", detail ? detail : "");
	sw->failed = true;
}

/*
 * run
 *		Execute one statement.  Returns its result, or NULL after reporting
 *		the error.
 */
static PGresult *
run(Sweep *sw, const char *context, const char *sql, int nparams,
	const char *const *params)
{
	PGresult   *res;
	GwError		err;
	char		sqlstate[6];

	if (gw_db_exec(sw->conn, sql, nparams, params, &res, sqlstate, &err))
		return res;
	report(sw, context, err.message,
		   strcmp(sqlstate, "42501") == 0 ?
		   "run the sweep as the catalog's owner or a superuser: it must see every row "
		   "(row level security) and lock the tables it works on" :
		   strcmp(sqlstate, "55P03") == 0 ?
		   "a transaction held the table for longer than " SWEEP_LOCK_TIMEOUT
		   "; the table was skipped, run the sweep again" : err.detail);
	return NULL;
}

/*
 * table_dir
 *		gw_table_location_dir of a location under --root; NULL for any other.
 */
static char *
table_dir(const char *location)
{
	char	   *dir = gw_table_location_dir(location);

	if (dir == NULL || gw_table_location_inside(dir))
		return dir;
	free(dir);
	return NULL;
}

/*
 * name_cmp
 *		bsearch's comparison of a name with a listed file's.
 */
static int
name_cmp(const void *name, const void *file)
{
	return strcmp(name, ((const GwFileInfo *) file)->name);
}

/*
 * sweep_dir
 *		Under the table's lock, remove (or, in a dry run, list) the orphaned
 *		files of one versions directory of a table, then retire the versions
 *		of the branch below the latest one it lists whose manifest is gone
 *		(a client's cleanup removed it; a directory that is empty or gone
 *		retires nothing).  Returns false if the catalog could not be asked
 *		(the caller gives up on the table).
 */
static bool
sweep_dir(Sweep *sw, const char *table_id, const char *table_name, const char *branch,
		  const char *dir)
{
	const char *verb = sw->dry_run ? "would remove" : "removed";
	const char *params[2] = {table_id, branch};
	size_t		dirlen = strlen(dir);
	GwFileInfo *files;
	int			nfiles;
	GwError		err;
	bool		ok = true;
	GwStorage  *st;
	PGresult   *res;
	int64_t		latest_row = -1;
	int64_t		latest_on_disk = -1;

	gw_error_clear(&err);
	st = gw_storage_for(dir, &err);
	if (st == NULL || !st->list(st, dir, &files, &nfiles, &err))
	{
		report(sw, table_name, err.message, err.detail);
		return true;
	}
	if ((res = run(sw, table_name, SQL_BRANCH_VERSIONS, 2, params)) == NULL)
	{
		free(files);
		return false;
	}
	if (PQntuples(res) > 0)
		latest_row = strtoll(PQgetvalue(res, PQntuples(res) - 1, 0), NULL, 10);
	for (const GwFileInfo *f = files; f < files + nfiles; f++)
	{
		const char *tmp = f->name;	/* past GW_TMP_PREFIX when it has one */
		int64_t		version = -1;
		int			n = -1;
		bool		temporary;
		int			rc = 1;

		/* ours: a temporary file (.gw-<pid>-<n>.tmp) or a V1 or V2 manifest name */
		if (strncmp(tmp, GW_TMP_PREFIX, strlen(GW_TMP_PREFIX)) == 0)
			sscanf(tmp += strlen(GW_TMP_PREFIX), "%*[0-9]-%*[0-9]%n", &n);
		temporary = n > 0 && strcmp(tmp + n, GW_TMP_SUFFIX) == 0;
		if (!temporary && !lance_manifest_version(f->name, &version, NULL))
			continue;			/* not ours: never touched */
		/* a canonical file goes only above the branch's latest row */
		if (!temporary &&
			(latest_row < 0 || version <= latest_row || f->age_ms < sw->min_age_ms))
		{
			latest_on_disk = version > latest_on_disk ? version : latest_on_disk;
			continue;
		}
		if (f->age_ms < sw->min_age_ms)
			continue;
		if (!sw->dry_run)
		{
			gw_error_clear(&err);
			if ((rc = st->remove_listed(st, dir, f, sw->min_age_ms, &err)) < 0)
				report(sw, table_name, err.message, err.detail);
		}
		if (rc <= 0)
			continue;			/* an error, or the file changed: kept */
		if (temporary)
		{
			sw->ntemporary++;
			printf("%s temporary file %s/%s\n", verb, dir, f->name);
		}
		else
		{
			sw->norphaned++;
			printf("%s orphaned manifest %s/%s (table %s, branch %s, version %" PRId64 ")\n",
				   verb, dir, f->name, table_name, branch, version);
		}
	}
	for (int i = 0; latest_on_disk >= 0 && i < PQntuples(res); i++)
	{
		const char *version = PQgetvalue(res, i, 0);
		const char *path = PQgetvalue(res, i, 1);
		const char *rparams[4] = {table_id, version, branch, path};
		PGresult   *r = NULL;

		if (strtoll(version, NULL, 10) >= latest_on_disk ||
			strncmp(path, dir, dirlen) != 0 || path[dirlen] != '/' ||
			bsearch(path + dirlen + 1, files, nfiles, sizeof(GwFileInfo), name_cmp))
			continue;
		if (!sw->dry_run && (r = run(sw, table_name, SQL_RETIRE, 4, rparams)) == NULL)
		{
			ok = false;
			break;
		}
		PQclear(r);
		sw->nretired++;
		printf("%s version %s of table %s, branch %s: its manifest %s is gone\n",
			   sw->dry_run ? "would retire" : "retired", version, table_name, branch, path);
	}
	PQclear(res);
	free(files);
	return ok;
}

/*
 * sweep_table
 *		Sweep the versions directories of one table (main and every branch)
 *		while holding FOR UPDATE on its row of entries.
 */
static void
sweep_table(Sweep *sw, const char *table_id, const char *table_name)
{
	const char *params[1] = {table_id};
	PGresult   *res;
	PGresult   *branches = NULL;
	char	   *dir = NULL;
	bool		ok = true;

	if ((res = run(sw, table_name, "BEGIN ISOLATION LEVEL READ COMMITTED", 0, NULL)) == NULL)
		return;
	PQclear(res);
	res = run(sw, table_name, SQL_LOCK_TABLE, 1, params);
	/* the location again, under the lock: it may have changed */
	if (res != NULL && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		dir = table_dir(PQgetvalue(res, 0, 0));
	if (dir != NULL)
	{
		/*
		 * Another table's manifests are not this one's orphans: a table
		 * whose location another's is, lies in or contains (a catalog from
		 * before 0.6.0 can hold such) is left alone.
		 */
		const char *free_params[2] = {PQgetvalue(res, 0, 0), table_id};
		PGresult   *r = run(sw, table_name, SQL_LOCATION_FREE, 2, free_params);

		if (r == NULL || strcmp(PQgetvalue(r, 0, 0), "t") != 0)
		{
			if (r != NULL)
				printf("table %s shares its location %s with another table: not swept\n",
					   table_name, PQgetvalue(res, 0, 0));
			free(dir);
			dir = NULL;
		}
		PQclear(r);
	}
	PQclear(res);
	if (dir != NULL)
		branches = run(sw, table_name, SQL_BRANCHES, 1, params);
	/* main (i = -1), then each branch */
	for (int i = -1; branches != NULL && ok && i < PQntuples(branches); i++)
	{
		const char *branch = i < 0 ? "main" : PQgetvalue(branches, i, 0);
		char	   *vdir;

		if ((i < 0 ? asprintf(&vdir, "%s/" LANCE_VERSIONS_DIR, dir) :
			 asprintf(&vdir, "%s/" LANCE_BRANCH_DIR "/%s/" LANCE_VERSIONS_DIR, dir, branch)) < 0)
		{
			report(sw, table_name, "out of memory", NULL);
			break;
		}
		ok = sweep_dir(sw, table_id, table_name, branch, vdir);
		sw->ntables += i < 0 && ok;	/* its main directory was scanned */
		free(vdir);
	}
	PQclear(branches);
	free(dir);
	/* COMMIT of a failed transaction rolls it back */
	if (PQstatus(sw->conn) == CONNECTION_OK && PQtransactionStatus(sw->conn) != PQTRANS_IDLE)
		PQclear(run(sw, table_name, "COMMIT", 0, NULL));
}

/*
 * gw_sweep_run
 *		One sweep over the catalog's tables under --root.  Prints one line
 *		per file and a summary; returns the exit status (1 after an error).
 */
int
gw_sweep_run(void)
{
	Sweep		sw = {.min_age_ms = (int64_t) gw_config.sweep_min_age_s * 1000,
	.dry_run = gw_config.dry_run};
	GwPublishCounts pc = {0};
	GwConn	   *c;
	GwError		err;
	PGresult   *res;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((c = gw_pool_acquire(gw_config.pool_wait_ms, &err)) == NULL)
	{
		report(&sw, "cannot use the catalog database", err.message, err.detail);
		return 1;
	}
	sw.conn = c->conn;

	if ((res = run(&sw, "session", SQL_SESSION, 0, NULL)) != NULL)
	{
		/* first what a crash left unpublished: neither missing nor orphans */
		PQclear(res);
		gw_error_clear(&err);
		if (!gw_publish_pass(sw.conn, NULL, sw.dry_run, &pc, &err))
			report(&sw, "publishing the manifests the catalog holds", err.message, err.detail);
		else if (pc.pending > 0)
			printf("sweep: %ld pending publications, %ld manifests %s from the catalog's bytes, %ld made durable\n",
				   pc.pending, pc.rewritten, sw.dry_run ? "would be checked" : "republished", pc.pruned);
		res = run(&sw, "listing the tables", SQL_WORK, 0, NULL);
	}
	for (int i = 0; res != NULL && i < PQntuples(res); i++)
	{
		char	   *dir;

		if (PQstatus(sw.conn) != CONNECTION_OK)
		{
			report(&sw, "catalog database", "the connection was lost", NULL);
			break;
		}
		/* NULL: not under the root, not the gateway's */
		dir = PQgetisnull(res, i, 1) ? NULL : table_dir(PQgetvalue(res, i, 1));
		if (dir != NULL && strcmp(PQgetvalue(res, i, 3), "t") == 0)
		{
			/*
			 * What a crash after DropTable's COMMIT left at dir, deleted if no
			 * table is at, above or below it now.  Files younger than
			 * --sweep-min-age stay (a table declared since).
			 */
			const char *free_params[2] = {dir, NULL};
			PGresult   *r = run(&sw, dir, SQL_LOCATION_FREE, 2, free_params);
			bool		is_free = r != NULL && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
			long		removed;

			PQclear(r);
			if (is_free && sw.dry_run)
				printf("would remove what is left of the dropped table at %s\n", dir);
			else if (is_free)
			{
				if (!gw_table_remove_data(dir, sw.min_age_ms, &removed, &err))
					report(&sw, dir, err.message, err.detail);
				if (removed > 0)
					printf("removed %ld files of the dropped table at %s\n", removed, dir);
				sw.ndropped += removed;
			}
		}
		else if (dir != NULL)
			sweep_table(&sw, PQgetvalue(res, i, 0), PQgetvalue(res, i, 2));
		free(dir);
	}
	PQclear(res);

	printf("sweep: %ld temporary and %ld orphaned manifests %s, %ld tables scanned%s\n",
		   sw.ntemporary, sw.norphaned, sw.dry_run ? "would be removed" : "removed",
		   sw.ntables, sw.dry_run ? " (dry run)" : "");
	if (sw.ndropped > 0)
		printf("sweep: %ld files of dropped tables removed\n", sw.ndropped);
	if (sw.nretired > 0)
		printf("sweep: %ld versions whose manifest is gone %s\n", sw.nretired,
			   sw.dry_run ? "would be retired" : "retired");
	gw_pool_discard(c);
	return sw.failed ? 1 : 0;
}
