/*-------------------------------------------------------------------------
 *
 * commit.c
 *	  CreateTableVersion, BatchCreateTableVersions and BatchCommitTables
 *	  as a Lance writer expects them.  The writer sends a staging manifest
 *	  "<canonical>-<uuid>" (often as an object-store relative path).
 *	  Inside the request's transaction the catalog records the version
 *	  (its primary key is the put-if-not-exists guard: a racer waits for
 *	  the winner, then gets 409), the staging bytes get the canonical path
 *	  the catalog computed, and only then is the transaction committed, so
 *	  after a 409 the winner's manifest exists.  After COMMIT the staging
 *	  file is removed and the canonical path returned in the client's form
 *	  (lance_manifest_client_path, src/manifest_rules.c).
 *
 *	  For a local table, while the publisher runs, the staged bytes go to
 *	  the catalog with the version ("manifest_base64") and nothing is
 *	  flushed but COMMIT (RELIABILITY.md, "One flush per create";
 *	  publish.c).  Otherwise (too large, backlog full, no publisher) the
 *	  staging file is fsync'd during the call and the canonical name and
 *	  its directory before COMMIT.  Tables in buckets go through the S3
 *	  backend (storage_s3.c), which records the staging object's ETag.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "commit.h"
#include "feed.h"
#include "manifest_rules.h"
#include "publish.h"
#include "s3.h"

/*
 * After a lost COMMIT, on a new session: lock the table's catalog row,
 * waiting 10 s at most (a commit in flight on the table holds a key share
 * of it until it ends); then, in a statement of its own (a snapshot taken
 * after the lock), look for the version on its branch (NULL: main).
 */
#define SQL_LOCK_TABLE \
	"SELECT e.id::pg_catalog.text FROM lance_namespace.entries e" \
	" WHERE e.kind = 't' AND e.path = ARRAY(SELECT x COLLATE \"C\"" \
	" FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) x)" \
	" FOR UPDATE OF e"
#define SQL_LOCK_WAIT "SELECT pg_catalog.set_config('lock_timeout', '10s', true)"
#define SQL_VERSION_ROW \
	"SELECT 1 FROM lance_namespace.versions v" \
	" WHERE v.table_id = $1::pg_catalog.int8 AND v.version = $2::pg_catalog.int8" \
	" AND v.branch = COALESCE($3::pg_catalog.text, 'main')"

/*
 * The intents directory (NULL: none), and this process's intent files free
 * for a request (kept open, and locked while this process lives).
 */
#define INTENTS_MAX_FREE 1024	/* a request in flight has one: --pool's maximum */
static char *intents_dir;
static pthread_mutex_t intents_lock = PTHREAD_MUTEX_INITIALIZER;
static int	intents_free[INTENTS_MAX_FREE];
static int	intents_nfree;
static bool intents_unsettled;	/* an intent file waits for the catalog */

typedef struct CommitEntry
{
	char	   *staging;		/* absolute staging path, NULL if none */
	GwStorage  *st;				/* its backend, NULL if none */
	int64_t		size;
	char	   *canonical;		/* absolute canonical path from the catalog */
	GwStorage  *cst;			/* its backend, once finalize_entry set it */
	GwWritten	synced;			/* what during_call fsync'd */
	GwWritten	written;
	GwStaged	staged;			/* object stores: the staging bytes */
	bool		deferred;		/* staging problem, reported after the call */
	bool		staging_absent; /* the staging file does not exist */
	GwError		error;
	bool		skip;			/* batch-commit operation other than a version */
	bool		held;			/* staged holds the bytes the catalog keeps */
	char	   *b64;			/* held: their base64 text (see with_held) */
	bool		reserved;		/* room in the backlog for them (publish.c) */
	json_t	   *id;				/* the entry's id array (the request's), if any */
	json_t	   *branch;			/* and its branch, if any */
	int64_t		version;		/* the catalog's version, once finalized */
} CommitEntry;

typedef struct CommitCtx
{
	bool		batch;
	int			n;
	CommitEntry *e;
	bool		ops;			/* BatchCommitTables: e[i] is operations[i] */
	size_t		held;			/* bytes sent to the catalog so far */
	int			intent_fd;		/* its intent file, -1 if none */
	off_t		intent_end;		/* where that file's "#" is */
} CommitCtx;

/*
 * with_held
 *		The request's text (text, json_dumps' output, freed here) with each
 *		held manifest's placeholder replaced by its base64 text, or NULL
 *		with err set.  Escaping the base64 through jansson cost a sixth of a
 *		create's CPU; it needs no escaping.  A placeholder is NUL and the
 *		entry's index ("\u0000<index>"), which no other string of a request
 *		can begin with (jansson refuses \u0000 in a body, router.c a NUL in
 *		a target), and each must name a held entry once.
 */
static char *
with_held(char *text, CommitCtx *ctx, GwError *err)
{
	static const char mark[] = "\"\\u0000";
	size_t		extra = 0;
	int			expected = 0;
	int			found = 0;
	char	   *out;
	char	   *o;
	const char *p;
	const char *m;

	for (int i = 0; i < ctx->n; i++)
		if (ctx->e[i].held)
		{
			extra += strlen(ctx->e[i].b64);
			expected++;
		}
	if (expected == 0 && text != NULL)
		return text;
	out = o = text ? malloc(strlen(text) + extra + 1) : NULL;	/* NULL: out of memory */
	for (p = text; out != NULL && (m = strstr(p, mark)) != NULL; p = m)
	{
		char	   *end;
		long		i = strtol(m + sizeof(mark) - 1, &end, 10);

		if (*end != '"' || i < 0 || i >= ctx->n || !ctx->e[i].held || ctx->e[i].b64 == NULL)
			break;
		memcpy(o, p, (size_t) (m - p) + 1);	/* up to and with the quote */
		o += m - p + 1;
		o = stpcpy(o, ctx->e[i].b64);
		free(ctx->e[i].b64);
		ctx->e[i].b64 = NULL;	/* once */
		found++;
		m = end;				/* the closing quote */
	}
	if (out != NULL && found == expected)
		strcpy(o, p);
	else
	{
		gw_error_set(err, LANCE_INTERNAL, out == NULL ? "out of memory" :
					 "the request's held manifests do not match its versions");
		free(out);
		out = NULL;
	}
	free(text);
	return out;
}

/*
 * staging_path
 *		The absolute form of a staging manifest_path (malloc'd; NULL when
 *		out of memory): a file:// URI's path; a relative (object-store)
 *		path in the bucket of an s3:// --root if under its key prefix, else
 *		under "/".
 */
static char *
staging_path(const char *path)
{
	const char *root = gw_storage_s3_root();
	char		bucket[64];
	const char *key;
	size_t		n;
	char	   *out;

	if (strncmp(path, "file://", 7) == 0)
		return strdup(path + 7);
	if (path[0] == '/' || strncmp(path, "s3://", 5) == 0)
		return strdup(path);
	if (root != NULL && gw_s3_split(root, bucket, sizeof(bucket), &key))
	{
		for (n = strlen(key); n > 0 && key[n - 1] == '/'; n--)
			;
		if (n == 0 || (strncmp(path, key, n) == 0 && path[n] == '/'))
			return asprintf(&out, "s3://%s/%s", bucket, path) < 0 ? NULL : out;
	}
	return asprintf(&out, "/%s", path) < 0 ? NULL : out;
}

/*
 * prepare_entry
 *		Resolve one entry's staging manifest before the catalog call: its
 *		absolute path, its size (filled in when absent) and, if held, its
 *		bytes.  A problem with the staging file is reported only if the
 *		catalog accepts the version, so that a duplicate still gets 409.
 */
static bool
prepare_entry(json_t *entry, CommitCtx *ctx, CommitEntry *ce, GwError *err)
{
	const char *path = json_string_value(json_object_get(entry, "manifest_path"));
	json_t	   *jsize = json_object_get(entry, "manifest_size");
	int64_t		claimed;
	GwStorage  *st;
	char		mark[16];

	if (path == NULL)
		return true;			/* the catalog reports the bad field */
	if ((ce->staging = staging_path(path)) == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return false;
	}
	json_object_set_new(entry, "manifest_path", json_string(ce->staging));
	json_object_del(entry, "manifest_base64");	/* the gateway's alone */
	if (json_is_array(json_object_get(entry, "id")))
		ce->id = json_object_get(entry, "id");
	ce->branch = json_object_get(entry, "branch");
	gw_error_clear(&ce->error);
	st = ce->st = gw_storage_for(ce->staging, &ce->error);
	errno = EINVAL;
	if (st != NULL && st->read_staging != NULL && gw_publish_holds() &&
		ctx->held < LANCE_MAX_HELD_REQUEST_BYTES)
	{
		/* held unless too large for the catalog's limits or the backlog */
		size_t		max = LANCE_MAX_HELD_REQUEST_BYTES - ctx->held;

		if (max > LANCE_MAX_HELD_MANIFEST_BYTES)
			max = LANCE_MAX_HELD_MANIFEST_BYTES;
		/* one create keeps its file open to finalize; a batch's could be thousands */
		if (!st->read_staging(st, ce->staging, max, ctx->n == 1, &ce->staged, &ce->error))
		{
			if (errno != E2BIG)
				goto deferred;
			gw_error_clear(&ce->error);
		}
		else if (gw_publish_reserve(ce->staged.len))
		{
			/* sent as base64, a placeholder until with_held */
			int			len = snprintf(mark, sizeof(mark), "%c%d", '\0', (int) (ce - ctx->e));

			ce->reserved = true;
			if ((ce->b64 = malloc(4 * ((ce->staged.len + 2) / 3) + 1)) == NULL)
			{
				gw_error_set(err, LANCE_INTERNAL, "out of memory");
				return false;
			}
			EVP_EncodeBlock((unsigned char *) ce->b64, ce->staged.bytes, (int) ce->staged.len);
			json_object_set_new(entry, "manifest_base64", json_stringn_nocheck(mark, (size_t) len));
			ce->held = true;
			ce->size = (int64_t) ce->staged.len;
			ctx->held += ce->staged.len;
		}
		else
			gw_staged_free(&ce->staged);
	}
	if (!ce->held && (st == NULL ||
					  !(st->load_staging ? st->load_staging(st, ce->staging, &ce->staged, &ce->error) :
						st->stat_staging(st, ce->staging, &ce->size, &ce->error))))
		goto deferred;
	if (st->load_staging)
	{
		/* the catalog records the ETag of the bytes the canonical will get */
		ce->size = (int64_t) ce->staged.len;
		json_object_set_new(entry, "e_tag", json_string(ce->staged.etag));
	}

	if (json_is_integer(jsize))
		claimed = json_integer_value(jsize);
	else if (jsize == NULL || json_is_null(jsize))
	{
		json_object_set_new(entry, "manifest_size", json_integer(ce->size));
		claimed = ce->size;
	}
	else
		return true;			/* the catalog reports the bad field */

	if (claimed != ce->size)
	{
		gw_error_set(&ce->error, LANCE_INVALID_INPUT,
					 "manifest_size %lld does not match the staging manifest %s (%lld bytes)",
					 (long long) claimed, ce->staging, (long long) ce->size);
		ce->deferred = true;
		ce->held = false;
		json_object_del(entry, "manifest_base64");
	}
	return true;

deferred:
	ce->staging_absent = st != NULL && errno == ENOENT;
	ce->deferred = true;
	return true;
}

/*
 * entry_record
 *		What an intent file and settle_entry know of a finalized entry:
 *		which version and file (names), and, after finalize, whether it
 *		made that file and which it is (made).
 */
static json_t *
entry_record(CommitEntry *ce, bool names, bool made)
{
	bool		c = made && ce->written.created;

	return json_pack("{s:O*,s:s*,s:o*,s:s*,s:o*,s:o*,s:o*,s:s*}", "id", names ? ce->id : NULL,
					 "branch", names ? json_string_value(ce->branch) : NULL,
					 "version", names ? json_integer((json_int_t) ce->version) : NULL,
					 "canonical", names ? ce->canonical : NULL, "created", made ? json_boolean(c) : NULL,
					 "dev", c ? json_integer((json_int_t) ce->written.dev) : NULL,
					 "ino", c ? json_integer((json_int_t) ce->written.ino) : NULL,
					 "etag", c ? ce->written.etag : NULL);
}

/*
 * intent_write
 *		Add the entry's record to its request's intent file, for a start
 *		after this process died to settle (gw_commit_replay): before
 *		finalize makes the canonical name, which; then after, what it made
 *		(entry_record's halves).  The records are JSON texts up to a "#",
 *		which the next one overwrites.  No flush: a process's death keeps
 *		the page cache.  Without a file (said once), creates go on.
 */
static void
intent_write(CommitCtx *ctx, CommitEntry *ce, bool after)
{
	static bool warned;
	json_t	   *rec = entry_record(ce, !after, after);
	char	   *text = json_dumps(rec, JSON_COMPACT);	/* NULL: out of memory */
	struct iovec iov[2] = {{text, text ? strlen(text) : 0}, {"\n#", 2}};
	ssize_t		n = -1;
	char	   *path;

	json_decref(rec);
	pthread_mutex_lock(&intents_lock);
	if (ctx->intent_fd < 0 && intents_nfree > 0)
		ctx->intent_fd = intents_free[--intents_nfree];
	pthread_mutex_unlock(&intents_lock);
	if (ctx->intent_fd < 0 && asprintf(&path, "%s/%d-XXXXXX.intent", intents_dir, (int) getpid()) >= 0)
	{
		if ((ctx->intent_fd = mkostemps(path, 7, O_CLOEXEC)) >= 0)
			flock(ctx->intent_fd, LOCK_EX);
		free(path);
	}
	if (ctx->intent_fd >= 0 && text != NULL)
		n = pwritev(ctx->intent_fd, iov, 2, ctx->intent_end);
	if (n == (ssize_t) iov[0].iov_len + 2)
		ctx->intent_end += n - 1;
	else if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		fprintf(stderr, "%s: cannot write an intent file in %s (%s): creates go on without\n",
				GW_PROGRAM, intents_dir, n >= 0 ? "a short write" : strerror(errno));
	free(text);
}

/*
 * intent_done
 *		The request's outcome is settled: its intent file, emptied, is free
 *		for another.  Else the file stays as it is, for the next start.
 */
static void
intent_done(CommitCtx *ctx, bool settled)
{
	if (ctx->intent_fd >= 0 && settled && pwrite(ctx->intent_fd, "#", 1, 0) == 1)
	{
		pthread_mutex_lock(&intents_lock);
		if (intents_nfree < INTENTS_MAX_FREE)
		{
			intents_free[intents_nfree++] = ctx->intent_fd;
			ctx->intent_fd = -1;
		}
		pthread_mutex_unlock(&intents_lock);
	}
	if (ctx->intent_fd >= 0)
		close(ctx->intent_fd);
	ctx->intent_fd = -1;
	ctx->intent_end = 0;
}

/*
 * finalize_entry
 *		Copy one staging manifest to the canonical path of the version
 *		object the catalog returned, and rewrite that object for the client.
 */
static bool
finalize_entry(CommitCtx *ctx, CommitEntry *ce, json_t *version, GwError *err)
{
	const char *canon = json_string_value(json_object_get(version, "manifest_path"));
	GwStorage  *st;

	if (ce->staging == NULL)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "manifest_path is required");
		return false;
	}
	if (ce->deferred && !ce->staging_absent)
	{
		*err = ce->error;
		return false;
	}
	if (canon == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "the catalog returned no manifest_path");
		return false;
	}
	if (strncmp(canon, "file://", 7) == 0)
		canon += 7;
	ce->version = json_integer_value(json_object_get(version, "version"));
	free(ce->canonical);
	if ((ce->canonical = strdup(canon)) == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return false;
	}
	if ((st = ce->cst = gw_storage_for(ce->canonical, err)) == NULL)
		return false;
	if (ce->deferred)
	{
		/*
		 * The staging file is gone: a retry after a lost reply if the
		 * canonical file has the recorded size (RELIABILITY.md), else the
		 * staging error.
		 */
		json_t	   *jsize = json_object_get(version, "manifest_size");
		GwError		ignored;
		int64_t		csize;

		if (!json_is_integer(jsize) ||
			!st->stat_staging(st, ce->canonical, &csize, &ignored) ||
			csize != json_integer_value(jsize))
		{
			*err = ce->error;
			return false;
		}
		ce->size = csize;
	}
	else
	{
		if (intents_dir && ce->id)
			intent_write(ctx, ce, false);
		if (!st->finalize(st, ce->staging, ce->canonical, ce->size, &ce->synced,
						  ce->staged.bytes ? &ce->staged : NULL,
						  json_string_value(json_object_get(version, "e_tag")),
						  &ce->written, err))
			return false;
		if (intents_dir && ce->id)
			intent_write(ctx, ce, true);
	}
	json_object_set_new(version, "manifest_path",
						json_string(lance_manifest_client_path(ce->canonical)));
	if (json_object_get(version, "manifest_size") == NULL)
		json_object_set_new(version, "manifest_size", json_integer(ce->size));
	return true;
}

/*
 * during_call
 *		GwTxHooks.during_call: fsync the staging files while the catalog
 *		records the versions, so that finalize has only the link and the
 *		directory left to make durable.
 */
static void
during_call(void *arg)
{
	CommitCtx  *ctx = arg;

	for (CommitEntry *ce = ctx->e; ce < ctx->e + ctx->n; ce++)
		if (ce->st && !ce->deferred && !ce->skip && !ce->held)
			ce->st->sync_staging(ce->st, ce->staging, &ce->synced);
}

/*
 * after_call
 *		GwTxHooks.after_call: finalize every entry inside the transaction.
 */
static bool
after_call(void *arg, char **result, GwError *err)
{
	CommitCtx  *ctx = arg;
	json_t	   *res = json_loads(*result, 0, NULL);
	/* BatchCommitTables: results[i] = {"create_table_version": {"version": ...}} */
	json_t	   *list = json_object_get(res, ctx->ops ? "results" : "versions");
	char	   *text = NULL;
	bool		ok = res != NULL;

	if (res == NULL)
		gw_error_set(err, LANCE_INTERNAL, "the catalog returned malformed JSON");
	else if (ctx->batch && (!json_is_array(list) || (int) json_array_size(list) != ctx->n))
	{
		gw_error_set(err, LANCE_INTERNAL, "the catalog returned %d results for %d entries",
					 json_is_array(list) ? (int) json_array_size(list) : -1, ctx->n);
		ok = false;
	}
	for (int i = 0; ok && i < ctx->n; i++)
		if (!ctx->e[i].skip)
			ok = finalize_entry(ctx, &ctx->e[i], !ctx->batch ? json_object_get(res, "version") :
								!ctx->ops ? json_array_get(list, i) :
								json_object_get(json_object_get(json_array_get(list, i),
																"create_table_version"),
												"version"),
								err);
	if (ok && (text = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	if (text != NULL)
	{
		free(*result);
		*result = text;
	}
	json_decref(res);
	return text != NULL;
}

/*
 * after_commit
 *		GwTxHooks.after_commit: the staging and intent files are no longer
 *		needed, held publications are the publisher's to make durable, and
 *		the change feed is told.
 */
static void
after_commit(void *arg)
{
	CommitCtx  *ctx = arg;
	bool		held = false;

	for (CommitEntry *ce = ctx->e; ce < ctx->e + ctx->n; ce++)
	{
		held |= ce->held && !ce->deferred;
		if (ce->st && ce->canonical && strcmp(ce->staging, ce->canonical) != 0)
			ce->st->remove(ce->st, ce->staging, &ce->staged);
	}
	intent_done(ctx, true);
	if (held)
		gw_publish_notify();
	gw_feed_poke();				/* subscribers need not wait for the poll */
}

/*
 * after_abort
 *		GwTxHooks.after_abort: remove canonical files this attempt wrote
 *		(and their intents).
 */
static void
after_abort(void *arg)
{
	CommitCtx  *ctx = arg;

	for (CommitEntry *ce = ctx->e; ce < ctx->e + ctx->n; ce++)
	{
		if (ce->cst && ce->written.created)
			ce->cst->discard(ce->cst, ce->canonical, &ce->written);
		memset(&ce->written, 0, sizeof(ce->written));
	}
	intent_done(ctx, true);
}

/*
 * settle_entry
 *		On conn, for an entry (rec, entry_record's) whose COMMIT ended
 *		unseen (why says how): with the table's catalog row locked, remove
 *		the canonical file it made unless the version is in the catalog,
 *		for a Lance writer takes any file at the next manifest's name as
 *		committed (RELIABILITY.md, "Windows where a file can be orphaned",
 *		cases 1 and 2).  Returns whether the catalog answered (or the entry
 *		made no file).
 */
static bool
settle_entry(PGconn *conn, json_t *rec, const char *why)
{
	GwError		err;
	GwStorage  *cst;
	json_int_t	n[3];			/* version, dev, ino */
	const char *canonical;
	const char *etag;
	char	   *id;
	char		v[32];
	const char *params[3] = {NULL, v, NULL};
	PGresult   *lock = NULL;
	PGresult   *row = NULL;
	bool		answered;

	if (json_unpack(rec, "{s:I,s:s,s?s,s:I,s:I,s:s}", "version", &n[0], "canonical", &canonical,
					"branch", &params[2], "dev", &n[1], "ino", &n[2], "etag", &etag) != 0)
		return true;
	params[0] = id = json_dumps(json_object_get(rec, "id"), JSON_COMPACT);
	snprintf(v, sizeof(v), "%lld", (long long) n[0]);
	answered = id != NULL && conn != NULL &&
		gw_db_exec(conn, "BEGIN", 0, NULL, NULL, NULL, &err) &&
		gw_db_exec(conn, SQL_LOCK_WAIT, 0, NULL, NULL, NULL, &err) &&
		gw_db_exec(conn, SQL_LOCK_TABLE, 1, params, &lock, NULL, &err) &&
		(PQntuples(lock) == 0 || ((params[0] = PQgetvalue(lock, 0, 0)) != NULL &&
								  gw_db_exec(conn, SQL_VERSION_ROW, 3, params, &row, NULL, &err)));
	if (answered && row != NULL && PQntuples(row) == 0 && (cst = gw_storage_for(canonical, &err)))
	{
		GwWritten	written = {true, (uint64_t) n[1], (uint64_t) n[2], ""};

		snprintf(written.etag, sizeof(written.etag), "%s", etag);
		cst->discard(cst, canonical, &written);
		fprintf(stderr, "%s: the COMMIT of version %s of %s %s and it is not in the "
				"catalog: %s removed\n", GW_PROGRAM, v, id, why, canonical);
	}
	else if (!answered)
		fprintf(stderr, "%s: the catalog did not tell whether version %s of %s committed: "
				"%s stays\n", GW_PROGRAM, v, id, canonical);
	free(id);
	PQclear(lock);
	PQclear(row);
	PQclear(PQexec(conn, "ROLLBACK"));
	return answered;
}

/*
 * after_unknown
 *		GwTxHooks.after_unknown: settle each canonical file this attempt
 *		linked (settle_entry), on a new session.  Unanswered, the files and
 *		the request's intent file stay.
 */
static void
after_unknown(void *arg)
{
	CommitCtx  *ctx = arg;
	GwError		err;
	PGconn	   *conn = NULL;
	bool		settled = true;

	for (int i = 0; settled && i < ctx->n; i++)
	{
		json_t	   *rec;

		if (!ctx->e[i].written.created || ctx->e[i].id == NULL)
			continue;
		if (conn == NULL)
			conn = gw_pool_connect(&err);
		settled = settle_entry(conn, rec = entry_record(&ctx->e[i], true, true), "was lost");
		json_decref(rec);
	}
	intent_done(ctx, settled);
	PQfinish(conn);
	if (!settled)
		__atomic_store_n(&intents_unsettled, true, __ATOMIC_RELEASE);
}

/*
 * gw_commit
 *		Run the binding of a CreateTableVersion, BatchCreateTableVersions
 *		or BatchCommitTables (kind) request with manifest finalization of
 *		the versions it creates: all or nothing for files as for rows (a
 *		failure removes the canonical files this attempt wrote).  Consumes
 *		nothing; returns the response text, or NULL with err set.
 */
char *
gw_commit(const char *function, json_t *request, GwRouteKind kind,
		  const GwRequestInfo *info, GwError *err)
{
	CommitCtx	ctx = {.batch = kind != GW_ROUTE_VERSION_CREATE,
	.ops = kind == GW_ROUTE_BATCH_COMMIT, .intent_fd = -1};
	GwTxHooks	hooks = {during_call, after_call, after_commit, after_abort, &ctx, after_unknown};
	const char *field = ctx.ops ? "operations" : "entries";
	json_t	   *list = json_object_get(request, field);
	bool		prepared = true;
	char	   *text = NULL;
	char	   *result = NULL;

	if (ctx.batch && !json_is_array(list))
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "%s must be an array", field);
		return NULL;
	}
	ctx.n = ctx.batch ? (int) json_array_size(list) : 1;
	if ((ctx.e = calloc(ctx.n > 0 ? ctx.n : 1, sizeof(CommitEntry))) == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return NULL;
	}
	for (int i = 0; prepared && i < ctx.n; i++)
	{
		json_t	   *entry = ctx.batch ? json_array_get(list, i) : request;

		if (ctx.ops)
			entry = json_object_get(entry, "create_table_version");
		/* other operations, and malformed entries, are the catalog's to judge */
		ctx.e[i].skip = !json_is_object(entry);
		prepared = ctx.e[i].skip || prepare_entry(entry, &ctx, &ctx.e[i], err);
	}
	if (prepared && (text = with_held(json_dumps(request, JSON_COMPACT), &ctx, err)) != NULL)
		result = gw_db_call(function, text, info, &hooks, err);
	for (CommitEntry *ce = ctx.e; ce < ctx.e + ctx.n; ce++)
	{
		if (ce->reserved)
			gw_publish_release(ce->staged.len);
		free(ce->staging);
		free(ce->canonical);
		gw_staged_free(&ce->staged);
		free(ce->b64);
	}
	free(ctx.e);
	free(text);
	return result;
}

/*
 * gw_commit_resettle
 *		Settle each create of an intent file that no live gateway holds (a
 *		gateway that lives holds its files' locks): a dead one's, or one of
 *		this process's that after_unknown could not settle; a last record
 *		written before a finalize proves no file ours (--sweep's).  Stops
 *		at the first the catalog does not answer (10 s at most): main calls
 *		this every few seconds, and then it tries again.
 */
void
gw_commit_resettle(void)
{
	DIR		   *d;
	struct dirent *de;
	PGconn	   *conn = NULL;
	GwError		err;
	bool		answered;

	if (intents_dir == NULL || !__atomic_exchange_n(&intents_unsettled, false, __ATOMIC_ACQ_REL))
		return;
	answered = (d = opendir(intents_dir)) != NULL;
	while (answered && (de = readdir(d)) != NULL)
	{
		char	   *path;
		int			fd;
		FILE	   *f = NULL;
		json_t	   *rec = NULL;
		json_t	   *next;

		if (fnmatch("*.intent", de->d_name, 0) != 0 ||
			asprintf(&path, "%s/%s", intents_dir, de->d_name) < 0)
			continue;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 &&
			(flock(fd, LOCK_EX | LOCK_NB) != 0 || (f = fdopen(fd, "r")) == NULL))
			close(fd);
		while (answered && f != NULL && (next = json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL)) != NULL)
		{
			/* what finalize made of the entry of the record before, or an entry */
			if (json_object_get(next, "id") == NULL)
				json_object_update_missing(next, rec);
			json_decref(rec);
			rec = next;
			if (conn == NULL && json_object_get(rec, "etag") != NULL)
				conn = gw_pool_connect(&err);
			answered = settle_entry(conn, rec, strtol(de->d_name, NULL, 10) == getpid() ?
									"was lost" : "did not end before its gateway died");
		}
		if (answered && json_object_get(rec, "created") == NULL && json_object_get(rec, "id"))
			fprintf(stderr, "%s: a gateway died while it made %s: --sweep removes it if no "
					"version committed it\n", GW_PROGRAM,
					json_string_value(json_object_get(rec, "canonical")));
		if (answered && f != NULL)
			unlink(path);
		if (f != NULL)
			fclose(f);
		json_decref(rec);
		free(path);
	}
	if (!answered)
		__atomic_store_n(&intents_unsettled, true, __ATOMIC_RELEASE);
	if (d != NULL)
		closedir(d);
	PQfinish(conn);
}

/*
 * gw_commit_replay
 *		Start-up: make the intents directory (--intents-dir, else
 *		<root>/.lance-gateway/intents under a local root, mode 0700; none
 *		under a bucket root), then settle each create whose gateway died
 *		before its COMMIT ended (gw_commit_resettle).
 */
void
gw_commit_replay(const char *root)
{
	char	   *dir = gw_config.intents_dir;

	if (dir == NULL && strncmp(root, "s3://", 5) == 0)
		fprintf(stderr, "%s: a bucket root and no --intents-dir: the manifests of creates "
				"that a crash cuts short wait for --sweep\n", GW_PROGRAM);
	else if (dir == NULL && asprintf(&dir, "%s/.lance-gateway", root) >= 0)
	{
		mkdir(dir, 0700);
		free(dir);
		if (asprintf(&dir, "%s/.lance-gateway/intents", root) < 0)
			dir = NULL;
	}
	if (dir != NULL && (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
		access(dir, R_OK | W_OK | X_OK) == 0)
	{
		intents_dir = dir;
		intents_unsettled = true;
		gw_commit_resettle();
	}
	else if (dir != NULL)
	{
		fprintf(stderr, "%s: cannot use the intents directory %s (%s): creates go on "
				"without\n", GW_PROGRAM, dir, strerror(errno));
		if (dir != gw_config.intents_dir)
			free(dir);
	}
}
