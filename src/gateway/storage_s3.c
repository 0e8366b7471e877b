/*-------------------------------------------------------------------------
 *
 * storage_s3.c
 *	  S3 storage backend: manifest finalization for tables whose location
 *	  is "s3://BUCKET/PREFIX", on any S3-compatible store.
 *
 *	  The catalog row is the commit point, as on local disk.  For one
 *	  CreateTableVersion (commit.c drives the steps):
 *
 *	  1. Before the catalog call, the staging object is read whole (GET)
 *		 and its MD5 computed.  The quoted hex MD5 is the ETag S3-compatible
 *		 stores give a single-part upload of those bytes; it goes into the
 *		 request as the version's e_tag, so the catalog records it.
 *	  2. The catalog inserts the version's row (the primary key is the
 *		 put-if-not-exists guard: a racer waits for the row and gets 409).
 *	  3. Inside that transaction, finalize writes the canonical
 *		 "_versions/<name>.manifest" object with a conditional PUT
 *		 (If-None-Match: *) of exactly the staging bytes, with Content-MD5.
 *		 It always uses GET + conditional PUT, never a server-side copy:
 *		 the bytes are needed for the MD5 anyway, and not every store
 *		 honours a condition on CopyObject (moto ignores it).
 *		 - 200: written; the attempt remembers the ETag it wrote.
 *		 - 412: an object is already there.  If its ETag (or, failing
 *		   that, its bytes) is ours, or is the e_tag of the catalog's row,
 *		   it is this version's manifest (an idempotent retry): left alone,
 *		   and not ours to undo.  Otherwise it is an orphan: this
 *		   transaction holds the version's row, so no committed version
 *		   claims it (a crash between PUT and COMMIT, or a version deleted
 *		   from the catalog).  It is deleted with If-Match: <its ETag> (so a
 *		   replacement by anyone else is never deleted) and the conditional
 *		   PUT is tried again, at most three times, then 503.  Two manifests
 *		   can never claim one version: only the holder of the row writes,
 *		   and every write is conditional.
 *	  4. COMMIT.  If it (or anything after step 3) fails, discard deletes
 *		 the canonical object only if it still has the ETag this attempt
 *		 wrote (HEAD and compare, then DELETE with If-Match).
 *	  5. After COMMIT the staging object is deleted (best effort).
 *
 *	  A crash between 3 and 4 leaves a canonical object of a version the
 *	  catalog does not have: the next commit of that version replaces it
 *	  (step 3), and --sweep removes it (sweep.c, with the same rules as on
 *	  disk; a listed object is deleted with If-Match: <listed ETag>).  A
 *	  crash before 5 leaves a staging object, which is its writer's, as on
 *	  disk.  A retry after a lost reply finds the row (same staging path)
 *	  and the canonical object with its bytes: the same answer.
 *
 *	  Keys must have no empty, "." or ".." component; the staging object
 *	  must be in the canonical object's _versions directory (same bucket),
 *	  which the catalog computed from the table's location.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3.h"
#include "manifest_rules.h"
#include "storage.h"

#define FINALIZE_ATTEMPTS 3

typedef struct S3Object
{
	char		bucket[64];
	const char *key;
} S3Object;

/*
 * parse_object
 *		Split and check an s3:// object location.
 */
static bool
parse_object(const char *uri, S3Object *o, GwError *err)
{
	if (!gw_s3_split(uri, o->bucket, sizeof(o->bucket), &o->key) || o->key[0] == '\0')
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "%s is not an s3://BUCKET/KEY location", uri);
		return false;
	}
	if (!gw_storage_plain_components(o->key))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "%s has an empty, \".\" or \"..\" component", uri);
		return false;
	}
	return true;
}

/*
 * head_object
 *		HEAD; 1 found (resp filled), 0 not found, -1 error.
 */
static int
head_object(const S3Object *o, const char *uri, GwS3Response *resp, GwError *err)
{
	GwS3Request req = {.method = "HEAD", .bucket = o->bucket, .key = o->key};

	if (!gw_s3_send(&req, resp, err))
		return -1;
	if (resp->status == 404 && resp->code[0] == '\0')
		return 0;				/* HEAD answers have no body */
	if (resp->status == 200)
		return 1;
	gw_s3_fail(resp, "HEAD", uri, err);
	return -1;
}

/*
 * get_object
 *		GET; 1 found (resp->body), 0 not found (NoSuchKey), -1 error.
 */
static int
get_object(const S3Object *o, const char *uri, GwS3Response *resp, GwError *err)
{
	GwS3Request req = {.method = "GET", .bucket = o->bucket, .key = o->key};

	if (!gw_s3_send(&req, resp, err))
		return -1;
	if (resp->status == 404 && strcmp(resp->code, "NoSuchKey") == 0)
		return 0;
	if (resp->status == 200)
		return 1;
	gw_s3_fail(resp, "GET", uri, err);
	return -1;
}

/*
 * s3_stat_staging
 *		See GwStorage.stat_staging.
 */
static bool
s3_stat_staging(GwStorage *st, const char *path, int64_t *size, GwError *err)
{
	GwS3Response resp;
	S3Object	o;
	int			found;

	(void) st;
	errno = EINVAL;
	if (!parse_object(path, &o, err))
		return false;
	found = head_object(&o, path, &resp, err);
	gw_s3_response_free(&resp);
	if (found == 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s does not exist", path);
		errno = ENOENT;
	}
	if (found <= 0)
		return false;
	*size = resp.content_length;
	return true;
}

/*
 * s3_load_staging
 *		See GwStorage.load_staging.
 */
static bool
s3_load_staging(GwStorage *st, const char *path, GwStaged *staged, GwError *err)
{
	GwS3Response resp;
	S3Object	o;
	int			found;

	(void) st;
	memset(staged, 0, sizeof(*staged));
	errno = EINVAL;
	if (!parse_object(path, &o, err))
		return false;
	found = get_object(&o, path, &resp, err);
	if (found == 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s does not exist", path);
		errno = ENOENT;
	}
	if (found <= 0)
	{
		gw_s3_response_free(&resp);
		return false;
	}
	staged->len = resp.len;
	staged->bytes = (unsigned char *) resp.body;	/* taken over */
	if (staged->bytes == NULL)
		staged->bytes = calloc(1, 1);
	gw_s3_md5_etag(staged->bytes, staged->len, staged->etag, sizeof(staged->etag));
	return true;
}

/*
 * s3_sync_staging
 *		Nothing to sync: the store made the staging object durable.
 */
static void
s3_sync_staging(GwStorage *st, const char *path, GwWritten *synced)
{
	(void) st;
	(void) path;
	memset(synced, 0, sizeof(*synced));
}

/*
 * same_dir
 *		Whether two keys have the same directory part.
 */
static bool
same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/');
	const char *sb = strrchr(b, '/');

	return sa && sb && sa - a == sb - b && strncmp(a, b, sa - a) == 0;
}

/*
 * existing_is_ours
 *		After a 412: is the canonical object there this version's manifest
 *		(our bytes, or the ETag the catalog recorded)?  1 yes, 0 no (etag
 *		gets its ETag), -1 error, 2 gone meanwhile.
 */
static int
existing_is_ours(const S3Object *o, const char *uri, const GwStaged *staged,
				 const char *row_etag, char *etag, size_t etaglen, GwError *err)
{
	GwS3Response resp;
	int			found = head_object(o, uri, &resp, err);
	int			result;

	gw_s3_response_free(&resp);
	if (found < 0)
		return -1;
	if (found == 0)
		return 2;
	snprintf(etag, etaglen, "%s", resp.etag);
	if (strcmp(resp.etag, staged->etag) == 0 ||
		(row_etag != NULL && strcmp(resp.etag, row_etag) == 0))
		return 1;
	/* a store whose ETags are not MD5s: compare the bytes */
	found = get_object(o, uri, &resp, err);
	if (found < 0)
		result = -1;
	else if (found == 0)
		result = 2;
	else
	{
		result = (resp.len == staged->len &&
				  memcmp(resp.body ? resp.body : "", staged->bytes, staged->len) == 0) ? 1 : 0;
		snprintf(etag, etaglen, "%s", resp.etag);
	}
	gw_s3_response_free(&resp);
	return result;
}

/*
 * s3_finalize
 *		See GwStorage.finalize and the design at the top of this file.
 */
static bool
s3_finalize(GwStorage *st, const char *staging, const char *canonical, int64_t size,
			const GwWritten *synced, const GwStaged *staged, const char *row_etag,
			GwWritten *written, GwError *err)
{
	S3Object	so;
	S3Object	co;
	const char *dir;

	(void) st;
	(void) synced;
	memset(written, 0, sizeof(*written));
	if (!parse_object(canonical, &co, err) || !parse_object(staging, &so, err))
		return false;
	dir = strrchr(co.key, '/');
	if (dir == NULL || dir - co.key < (ptrdiff_t) strlen("/" LANCE_VERSIONS_DIR) ||
		strncmp(dir - strlen("/" LANCE_VERSIONS_DIR), "/" LANCE_VERSIONS_DIR,
				strlen("/" LANCE_VERSIONS_DIR)) != 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "canonical manifest %s is not in a _versions directory", canonical);
		return false;
	}
	if (strcmp(so.bucket, co.bucket) != 0 || !same_dir(so.key, co.key))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "staging manifest %s must be in the table's directory %.*s", staging,
					 (int) (strrchr(canonical, '/') - canonical), canonical);
		return false;
	}
	if (staged == NULL || staged->bytes == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "staging manifest %s was not read", staging);
		return false;
	}
	if ((int64_t) staged->len != size)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "staging manifest %s is %zu bytes, manifest_size says %lld",
					 staging, staged->len, (long long) size);
		return false;
	}
	if (strcmp(staging, canonical) == 0)
		return true;

	for (int attempt = 0; attempt < FINALIZE_ATTEMPTS; attempt++)
	{
		GwS3Request put = {.method = "PUT", .bucket = co.bucket, .key = co.key,
			.if_none_match = "*", .body = staged->bytes, .body_len = staged->len,
		.content_md5 = true};
		GwS3Request del = {.method = "DELETE", .bucket = co.bucket, .key = co.key};
		GwS3Response resp;
		char		etag[80];
		int			ours;

		if (!gw_s3_send(&put, &resp, err))
		{
			gw_s3_response_free(&resp);
			return false;
		}
		gw_s3_response_free(&resp);
		if (resp.status == 200)
		{
			written->created = true;
			snprintf(written->etag, sizeof(written->etag), "%s",
					 resp.etag[0] ? resp.etag : staged->etag);
			return true;
		}
		if (resp.status != 412)
		{
			gw_s3_fail(&resp, "PUT", canonical, err);
			return false;
		}
		ours = existing_is_ours(&co, canonical, staged, row_etag, etag, sizeof(etag), err);
		if (ours < 0)
			return false;
		if (ours == 1)
			return true;		/* this version's manifest is in place */
		if (ours == 2)
			continue;			/* gone meanwhile: try again */
		/* an orphan: no committed version claims it while we hold the row */
		fprintf(stderr, "%s: replacing orphaned manifest %s (ETag %s)\n", GW_PROGRAM,
				canonical, etag);
		del.if_match = etag;
		if (!gw_s3_send(&del, &resp, err))
		{
			gw_s3_response_free(&resp);
			return false;
		}
		gw_s3_response_free(&resp);
	}
	gw_error_set(err, LANCE_SERVICE_UNAVAILABLE,
				 "canonical manifest %s keeps changing; try again", canonical);
	return false;
}

/*
 * delete_if_etag
 *		Delete uri if it still has ETag etag (HEAD and compare, then DELETE
 *		with If-Match, for stores that ignore the condition).  1 deleted,
 *		0 left alone, -1 error.
 */
static int
delete_if_etag(const char *uri, const char *etag, GwError *err)
{
	GwS3Response resp;
	S3Object	o;
	GwS3Request del = {.method = "DELETE", .if_match = etag};
	int			found;

	if (!parse_object(uri, &o, err))
		return -1;
	found = head_object(&o, uri, &resp, err);
	gw_s3_response_free(&resp);
	if (found <= 0)
		return found;
	if (strcmp(resp.etag, etag) != 0)
		return 0;
	del.bucket = o.bucket;
	del.key = o.key;
	if (!gw_s3_send(&del, &resp, err))
	{
		gw_s3_response_free(&resp);
		return -1;
	}
	gw_s3_response_free(&resp);
	if (resp.status == 204 || resp.status == 200)
		return 1;
	if (resp.status == 412 || resp.status == 404)
		return 0;
	gw_s3_fail(&resp, "DELETE", uri, err);
	return -1;
}

/*
 * s3_discard
 *		See GwStorage.discard.
 */
static void
s3_discard(GwStorage *st, const char *canonical, const GwWritten *written)
{
	GwError		err;

	(void) st;
	gw_error_clear(&err);
	if (written->created && delete_if_etag(canonical, written->etag, &err) < 0)
		fprintf(stderr, "%s: could not remove %s after an aborted commit (--sweep will): %s %s\n",
				GW_PROGRAM, canonical, err.message, err.detail);
}

/*
 * s3_remove
 *		See GwStorage.remove.
 */
static void
s3_remove(GwStorage *st, const char *path, const GwStaged *staged)
{
	GwS3Response resp;
	GwError		err;
	S3Object	o;
	GwS3Request del = {.method = "DELETE"};

	(void) st;
	(void) staged;
	gw_error_clear(&err);
	if (!parse_object(path, &o, &err))
		return;
	del.bucket = o.bucket;
	del.key = o.key;
	if (!gw_s3_send(&del, &resp, &err))
		fprintf(stderr, "%s: could not remove staging manifest %s: %s %s\n",
				GW_PROGRAM, path, err.message, err.detail);
	gw_s3_response_free(&resp);
}

/*
 * parse_time
 *		"2026-12-01T05:43:26.000Z" as Unix milliseconds (0 if malformed).
 */
static int64_t
parse_time(const char *s)
{
	struct tm	tm;
	const char *rest;

	memset(&tm, 0, sizeof(tm));
	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (rest == NULL)
		return 0;
	return (int64_t) timegm(&tm) * 1000;
}

/*
 * list_page
 *		One ListObjectsV2 page of o's key + "/" (after continuation token,
 *		when not NULL), with delimiter "/" when delimited (one level) or
 *		without (the whole tree).  On success resp holds the 200 answer (the
 *		caller frees it); on failure err is set and resp is freed.
 */
static bool
list_page(const S3Object *o, const char *dir, const char *token, bool delimited,
		  GwS3Response *resp, GwError *err)
{
	char		prefix[2048];
	char	   *eprefix;
	char	   *etoken = NULL;
	char	   *query;
	GwS3Request req = {.method = "GET", .bucket = o->bucket};

	snprintf(prefix, sizeof(prefix), "%s/", o->key);

	/*
	 * "/" stays as it is in the query: libcurl 7.88's SigV4 (Debian 12)
	 * signs a "%2F" of a query value as something else than the store
	 * checks (SignatureDoesNotMatch once the store verifies signatures),
	 * and it encodes a plain "/" itself when it signs.
	 */
	eprefix = gw_s3_escape(prefix, true);
	if (token)
		etoken = gw_s3_escape(token, false);
	/* parameters in the order SigV4's canonical query string sorts them */
	if (asprintf(&query, "%s%s%s%slist-type=2&prefix=%s",
				 etoken ? "continuation-token=" : "", etoken ? etoken : "",
				 etoken ? "&" : "", delimited ? "delimiter=/&" : "", eprefix) < 0)
		query = NULL;
	free(eprefix);
	free(etoken);
	req.query = query;
	if (query == NULL || !gw_s3_send(&req, resp, err))
	{
		if (query == NULL)
			gw_error_set(err, LANCE_INTERNAL, "out of memory");
		free(query);
		gw_s3_response_free(resp);
		return false;
	}
	free(query);
	if (resp->status != 200)
	{
		gw_s3_fail(resp, "LIST", dir, err);
		gw_s3_response_free(resp);
		return false;
	}
	return true;
}

/*
 * s3_list
 *		See GwStorage.list: ListObjectsV2 of dir + "/" with delimiter "/".
 */
static bool
s3_list(GwStorage *st, const char *dir, GwFileInfo **files, int *nfiles, GwError *err)
{
	S3Object	o;
	char	   *token = NULL;
	int			cap = 0;
	struct timespec now;
	int64_t		now_ms;
	bool		ok = true;

	(void) st;
	*files = NULL;
	*nfiles = 0;
	if (!parse_object(dir, &o, err))
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	now_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
	do
	{
		char		prefix[2048];
		GwS3Response resp;
		const char *p;
		char	   *truncated;

		snprintf(prefix, sizeof(prefix), "%s/", o.key);
		if (!list_page(&o, dir, token, true, &resp, err))
		{
			free(token);
			token = NULL;
			ok = false;
			break;
		}
		free(token);
		token = NULL;
		for (p = resp.body;;)
		{
			const char *next;
			char	   *entry = gw_s3_xml_text(p, "Contents", &next);
			char	   *key;
			char	   *etag;
			char	   *mod;
			char	   *size;
			GwFileInfo *f;

			if (entry == NULL)
				break;
			p = next;
			key = gw_s3_xml_text(entry, "Key", NULL);
			etag = gw_s3_xml_text(entry, "ETag", NULL);
			mod = gw_s3_xml_text(entry, "LastModified", NULL);
			size = gw_s3_xml_text(entry, "Size", NULL);
			if (key && strlen(key) > strlen(prefix) && strchr(key + strlen(prefix), '/') == NULL &&
				strlen(key + strlen(prefix)) < sizeof(f->name))
			{
				if (*nfiles == cap)
				{
					GwFileInfo *nf = realloc(*files, sizeof(GwFileInfo) * (cap ? cap * 2 : 16));

					if (nf == NULL)
						ok = false;
					else
					{
						*files = nf;
						cap = cap ? cap * 2 : 16;
					}
				}
				if (ok)
				{
					f = &(*files)[(*nfiles)++];
					memset(f, 0, sizeof(*f));
					snprintf(f->name, sizeof(f->name), "%s", key + strlen(prefix));
					snprintf(f->etag, sizeof(f->etag), "%s", etag ? etag : "");
					f->age_ms = mod ? now_ms - parse_time(mod) : 0;
					f->size = size ? strtoll(size, NULL, 10) : -1;
				}
			}
			free(key);
			free(etag);
			free(mod);
			free(size);
			free(entry);
			if (!ok)
				break;
		}
		truncated = gw_s3_xml_text(resp.body, "IsTruncated", NULL);
		if (ok && truncated && strcmp(truncated, "true") == 0)
			token = gw_s3_xml_text(resp.body, "NextContinuationToken", NULL);
		free(truncated);
		gw_s3_response_free(&resp);
	} while (ok && token);
	free(token);
	if (!ok)
	{
		if (err->code < 0)
			gw_error_set(err, LANCE_INTERNAL, "out of memory");
		free(*files);
		*files = NULL;
		*nfiles = 0;
	}
	return ok;
}

/*
 * s3_remove_listed
 *		See GwStorage.remove_listed: the object must still have the listed
 *		ETag (the listing's age stands: an object replaced since then has
 *		another ETag).
 */
static int
s3_remove_listed(GwStorage *st, const char *dir, const GwFileInfo *file, int64_t min_age_ms,
				 GwError *err)
{
	char	   *uri;
	int			rc;

	(void) st;
	if (file->age_ms < min_age_ms || file->etag[0] == '\0')
		return 0;
	if (asprintf(&uri, "%s/%s", dir, file->name) < 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return -1;
	}
	rc = delete_if_etag(uri, file->etag, err);
	free(uri);
	return rc;
}

/*
 * s3_remove_tree
 *		See GwStorage.remove_tree: ListObjectsV2 of dir + "/" without a
 *		delimiter, and a DELETE of each object old enough.
 */
static bool
s3_remove_tree(GwStorage *st, const char *dir, int64_t min_age_ms, long *removed,
			   GwError *err)
{
	S3Object	o;
	char	   *token = NULL;
	struct timespec now;
	int64_t		now_ms;
	bool		ok = true;

	(void) st;
	*removed = 0;
	if (!parse_object(dir, &o, err))
		return false;
	if (o.key[0] == '\0')
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "%s is a whole bucket, not a table location", dir);
		return false;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	now_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
	do
	{
		char		prefix[2048];
		GwS3Response resp;
		const char *p;
		char	   *truncated;

		snprintf(prefix, sizeof(prefix), "%s/", o.key);
		if (!list_page(&o, dir, token, false, &resp, err))
		{
			free(token);
			token = NULL;
			ok = false;
			break;
		}
		free(token);
		token = NULL;
		for (p = resp.body; ok;)
		{
			const char *next;
			char	   *entry = gw_s3_xml_text(p, "Contents", &next);
			char	   *key;
			char	   *mod;

			if (entry == NULL)
				break;
			p = next;
			key = gw_s3_xml_text(entry, "Key", NULL);
			mod = gw_s3_xml_text(entry, "LastModified", NULL);
			if (key && strncmp(key, prefix, strlen(prefix)) == 0 &&
				(mod ? now_ms - parse_time(mod) : 0) >= min_age_ms)
			{
				GwS3Request del = {.method = "DELETE", .bucket = o.bucket, .key = key};
				GwS3Response dresp;

				if (!gw_s3_send(&del, &dresp, err))
					ok = false;
				else if (dresp.status == 200 || dresp.status == 204)
					(*removed)++;
				else if (dresp.status != 404)
				{
					gw_s3_fail(&dresp, "DELETE", dir, err);
					ok = false;
				}
				gw_s3_response_free(&dresp);
			}
			free(key);
			free(mod);
			free(entry);
		}
		truncated = gw_s3_xml_text(resp.body, "IsTruncated", NULL);
		if (ok && truncated && strcmp(truncated, "true") == 0)
			token = gw_s3_xml_text(resp.body, "NextContinuationToken", NULL);
		free(truncated);
		gw_s3_response_free(&resp);
	} while (ok && token);
	free(token);
	return ok;
}

/*
 * gw_storage_s3_create
 *		The S3 backend.  root (an s3:// URI or NULL) is only checked here.
 */
GwStorage *
gw_storage_s3_create(const char *root, GwError *err)
{
	GwStorage  *st = calloc(1, sizeof(GwStorage));
	char		bucket[64];
	const char *key;

	if (st == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return NULL;
	}
	if (root != NULL && !gw_s3_split(root, bucket, sizeof(bucket), &key))
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "--root %s is not an s3://BUCKET[/PREFIX] location",
					 root);
		free(st);
		return NULL;
	}
	st->name = "s3";
	st->stat_staging = s3_stat_staging;
	st->load_staging = s3_load_staging;
	st->sync_staging = s3_sync_staging;
	st->finalize = s3_finalize;
	st->discard = s3_discard;
	st->remove = s3_remove;
	st->list = s3_list;
	st->remove_listed = s3_remove_listed;
	st->remove_tree = s3_remove_tree;
	return st;
}
