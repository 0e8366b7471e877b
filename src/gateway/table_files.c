/*-------------------------------------------------------------------------
 *
 * table_files.c
 *	  The files of a whole table (src/gateway/README.md describes each):
 *
 *	  - RegisterTable imports the canonical manifests listed in
 *		<location>/_versions, replacing any "versions" the client sent;
 *	  - DescribeTableVersion of a local manifest under --root that is gone
 *		while a later version's manifest is listed (a client's cleanup;
 *		never the latest, and an unmounted location lists nothing) answers
 *		TableVersionNotFound and retires the row; one that is not below a
 *		later manifest was lost by a crash and is rewritten from the bytes
 *		the catalog holds (publish.c);
 *	  - DropTable checks inside its transaction that the location lies
 *		under --root (else PermissionDenied, unless --drop-outside-root),
 *		and after COMMIT deletes the files older than that check.  Catalog
 *		first, then files: a crash in between leaves files without a row,
 *		which --sweep deletes through the DropTable record.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "db.h"
#include "publish.h"
#include "storage.h"
#include "manifest_rules.h"
#include "table_files.h"

typedef struct DropCtx
{
	char	   *location;		/* normalized location of the dropped table */
	bool		inside;			/* under --root */
	struct timespec checked;	/* when the drop was checked, before COMMIT */
} DropCtx;

/*
 * gw_table_location_dir
 *		A table location as the storage layer names it (a file:// URI as
 *		its path, no trailing slash), malloc'd; NULL when out of memory.
 */
char *
gw_table_location_dir(const char *location)
{
	size_t		len;

	if (strncmp(location, "file://", 7) == 0)
		location += 7;
	len = strlen(location);
	while (len > 1 && location[len - 1] == '/')
		len--;
	return strndup(location, len);
}

/*
 * under
 *		Whether dir lies strictly below root (a path or URI prefix).
 */
static bool
under(const char *dir, const char *root)
{
	size_t		rootlen = strlen(root);

	while (rootlen > 1 && root[rootlen - 1] == '/')
		rootlen--;
	if (rootlen == 1 && root[0] == '/')
		return dir[0] == '/' && dir[1] != '\0';
	return strncmp(dir, root, rootlen) == 0 && dir[rootlen] == '/' && dir[rootlen + 1] != '\0';
}

/*
 * gw_table_location_inside
 *		Whether a normalized table location lies under this gateway's
 *		--root.
 */
bool
gw_table_location_inside(const char *dir)
{
	const char *local = gw_storage_local_root();
	const char *s3 = gw_storage_s3_root();

	if (strncmp(dir, "s3://", 5) == 0)
		return s3 != NULL && under(dir, s3);
	return local != NULL && dir[0] == '/' && under(dir, local);
}

/*
 * storage_at
 *		The backend that reaches table directory dir: the gateway's under
 *		--root or in a bucket; else, for an absolute path, one confined to
 *		base (*own, to free).  NULL with err set, or with err clear when
 *		there is nothing at base.
 */
static GwStorage *
storage_at(const char *dir, const char *base, GwStorage **own, GwError *err)
{
	*own = NULL;
	gw_error_clear(err);
	if (gw_table_location_inside(dir) || strncmp(dir, "s3://", 5) == 0)
		return gw_storage_for(dir, err);
	if (dir[0] != '/')
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "%s is neither an absolute path nor an s3:// location", dir);
	else if ((*own = gw_storage_local_create(base, err)) == NULL)
		gw_error_clear(err);
	return *own;
}

/*
 * gw_table_remove_data
 *		Delete the files of the table at dir (normalized); *removed counts
 *		them.  Outside --root (allowed by the caller) a local location is
 *		reached through a backend confined to its parent directory.
 */
bool
gw_table_remove_data(const char *dir, int64_t min_age_ms, long *removed, GwError *err)
{
	char	   *parent = strdup(dir);
	char	   *slash = parent ? strrchr(parent, '/') : NULL;
	GwStorage  *own;
	GwStorage  *st;
	bool		ok;

	*removed = 0;
	if (parent == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return false;
	}
	if (slash != NULL)
		slash[slash == parent] = '\0';	/* the parent; "/" stays */
	st = storage_at(dir, parent, &own, err);
	free(parent);
	ok = st != NULL ? st->remove_tree(st, dir, min_age_ms, removed, err) : err->code < 0;
	if (own != NULL)
		gw_storage_local_free(own);
	return ok;
}

/*
 * gw_manifest_missing
 *		Whether the manifest file at path (of version) is missing: 0 no (or
 *		cannot say), GW_MANIFEST_CLEANED when its directory lists a later
 *		version's manifest (a client's cleanup removed it: a crash loses
 *		only the latest links, the journal commits in order), else
 *		GW_MANIFEST_LOST.
 */
int
gw_manifest_missing(GwStorage *st, const char *path, int64_t version)
{
	GwFileInfo *files;
	int			nfiles;
	GwError		err;
	int64_t		size;
	char	   *dir;
	char	   *slash;
	bool		later = false;

	gw_error_clear(&err);
	if (st->stat_staging(st, path, &size, &err) || errno != ENOENT)
		return 0;
	if ((dir = strdup(path)) == NULL || (slash = strrchr(dir, '/')) == NULL)
	{
		free(dir);
		return 0;
	}
	*slash = '\0';
	if (st->list(st, dir, &files, &nfiles, &err))
	{
		for (int i = 0; i < nfiles && !later; i++)
		{
			int64_t		v;

			later = lance_manifest_version(files[i].name, &v, NULL) && v > version;
		}
		free(files);
	}
	free(dir);
	return later ? GW_MANIFEST_CLEANED : GW_MANIFEST_LOST;
}

/*
 * gw_describe_version_check
 *		res is rest_describe_table_version's answer, parsed.  True, or,
 *		when a cleanup removed the version's local manifest, false with err
 *		TableVersionNotFound after retiring the row.
 */
bool
gw_describe_version_check(json_t *request, const GwRequestInfo *info, json_t *res,
						  GwError *err)
{
	json_t	   *v = json_object_get(res, "version");
	const char *path = json_string_value(json_object_get(v, "manifest_path"));
	json_int_t	version = json_integer_value(json_object_get(v, "version"));
	GwStorage  *st;
	GwError		e;
	bool		gone = false;

	gw_error_clear(&e);
	if (path != NULL && path[0] == '/' && gw_table_location_inside(path) &&
		(st = gw_storage_for(path, &e)) != NULL)
	{
		int			missing = gw_manifest_missing(st, path, (int64_t) version);

		gone = missing == GW_MANIFEST_CLEANED;
		if (missing == GW_MANIFEST_LOST)
			(void) gw_publish_repair(path);	/* lost by a crash: rewritten */
	}
	if (gone)
	{
		json_t	   *retire = json_pack("{sOsIsOss}", "id", json_object_get(request, "id"),
									   "version", version,
									   "branch", json_object_get(request, "branch") ?
									   json_object_get(request, "branch") : json_null(),
									   "manifest_path", path);
		char	   *text = retire ? json_dumps(retire, JSON_COMPACT) : NULL;
		char	   *done;

		gw_error_clear(&e);
		done = text ? gw_db_call("rest_retire_table_version", text, info, NULL, &e) : NULL;
		if (done == NULL)
			fprintf(stderr, "%s: could not retire version %" JSON_INTEGER_FORMAT
					" (manifest %s gone): %s %s\n",
					GW_PROGRAM, version, path, e.message, e.detail);
		free(done);
		free(text);
		json_decref(retire);
		gw_error_set(err, GW_ERR_VERSION_NOT_FOUND,
					 "version %" JSON_INTEGER_FORMAT " not found: its manifest %s is gone "
					 "from storage (a cleanup of old versions removed it)", version, path);
		return false;
	}
	return true;
}

/* One listed manifest */
typedef struct Listed
{
	int64_t		version;
	LanceNamingScheme scheme;
	const GwFileInfo *file;
} Listed;

/*
 * listed_cmp
 *		By version, the V2 name first.
 */
static int
listed_cmp(const void *a, const void *b)
{
	const Listed *la = a;
	const Listed *lb = b;

	if (la->version != lb->version)
		return la->version < lb->version ? -1 : 1;
	return (int) lb->scheme - (int) la->scheme;
}

/*
 * list_versions
 *		The canonical manifests of <dir>/_versions as a JSON array of
 *		{version, manifest_path, naming_scheme, manifest_size[, e_tag]},
 *		manifest_path spelled from location as given; one entry per version
 *		(V2 wins).  NULL with err set on a storage error.
 */
static json_t *
list_versions(const char *location, const char *dir, GwError *err)
{
	json_t	   *out = json_array();
	GwStorage  *own;
	GwStorage  *st = storage_at(dir, dir, &own, err);
	GwFileInfo *files = NULL;
	Listed	   *listed = NULL;
	char	   *vdir = NULL;
	int			nfiles = 0;
	int			n = 0;
	size_t		loclen = strlen(location);

	while (loclen > 1 && location[loclen - 1] == '/')
		loclen--;
	if (out == NULL)
		goto oom;
	if (st == NULL && err->code >= 0 && (dir[0] == '/' || strncmp(dir, "s3://", 5) == 0))
		goto fail;
	gw_error_clear(err);		/* nothing there, or rest_register_table judges */
	if (st == NULL)
		goto done;
	if (asprintf(&vdir, "%s/" LANCE_VERSIONS_DIR, dir) < 0)
		goto oom;
	if (!st->list(st, vdir, &files, &nfiles, err))
		goto fail;
	gw_error_clear(err);		/* a missing directory lists nothing */
	if ((listed = calloc(nfiles + 1, sizeof(Listed))) == NULL)
		goto oom;
	for (int i = 0; i < nfiles; i++)
		if (lance_manifest_version(files[i].name, &listed[n].version, &listed[n].scheme))
			listed[n++].file = &files[i];
	qsort(listed, n, sizeof(Listed), listed_cmp);
	for (int i = 0; i < n; i++)
	{
		json_t	   *e;
		char	   *path;

		if (i > 0 && listed[i].version == listed[i - 1].version)
			continue;
		if (asprintf(&path, "%.*s/" LANCE_VERSIONS_DIR "/%s", (int) loclen, location,
					 listed[i].file->name) < 0)
			path = NULL;
		e = json_pack("{sIssss}", "version", (json_int_t) listed[i].version,
					  "manifest_path", path ? path : "",
					  "naming_scheme", listed[i].scheme == LANCE_NAMING_V2 ? "V2" : "V1");
		free(path);
		if (e != NULL && listed[i].file->size >= 0)
			json_object_set_new(e, "manifest_size", json_integer(listed[i].file->size));
		if (e != NULL && listed[i].file->etag[0] != '\0')
			json_object_set_new(e, "e_tag", json_string(listed[i].file->etag));
		if (e == NULL || json_array_append_new(out, e) != 0)
			goto oom;
	}
	goto done;
oom:
	gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
fail:
	json_decref(out);
	out = NULL;
done:
	free(listed);
	free(files);
	free(vdir);
	if (own != NULL)
		gw_storage_local_free(own);
	return out;
}

/*
 * gw_register_table
 *		Run rest_register_table with the versions found under the
 *		location.  Returns the response text, or NULL with err set.
 */
char *
gw_register_table(const char *function, json_t *request, const GwRequestInfo *info,
				  GwError *err)
{
	const char *location = json_string_value(json_object_get(request, "location"));
	char	   *text = NULL;
	char	   *result = NULL;

	if (location != NULL)
	{
		char	   *dir = gw_table_location_dir(location);
		json_t	   *versions = dir ? list_versions(location, dir, err) : NULL;

		if (dir == NULL)
			gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		free(dir);
		if (versions == NULL)
			return NULL;
		json_object_set_new(request, "versions", versions);
	}
	else
		json_object_del(request, "versions");
	text = json_dumps(request, JSON_COMPACT);
	if (text == NULL)
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
	else
		result = gw_db_call(function, text, info, NULL, err);
	free(text);
	return result;
}

/*
 * drop_after_call
 *		Inside the transaction: the dropped table's location must lie
 *		under --root, unless --drop-outside-root.
 */
static bool
drop_after_call(void *arg, char **result, GwError *err)
{
	DropCtx    *ctx = arg;
	json_t	   *res = json_loads(*result, 0, NULL);
	const char *location = json_string_value(json_object_get(res, "location"));

	free(ctx->location);
	ctx->location = location ? gw_table_location_dir(location) : NULL;
	json_decref(res);
	if (ctx->location == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "DropTable: the catalog returned no location");
		return false;
	}
	ctx->inside = gw_table_location_inside(ctx->location);
	clock_gettime(CLOCK_REALTIME, &ctx->checked);
	if (!ctx->inside && !gw_config.drop_outside_root)
	{
		gw_error_set(err, GW_ERR_PERMISSION_DENIED,
					 "DropTable: the table's location %s is outside the catalog root %s, "
					 "where this gateway deletes no data", ctx->location, gw_config.root);
		gw_error_detail(err, "DeregisterTable removes the table and keeps its files; "
						"an operator can allow DropTable there with --drop-outside-root");
		return false;
	}
	return true;
}

/*
 * drop_after_commit
 *		The table is gone from the catalog: delete its files.  A failure is
 *		logged; --sweep deletes what is left (sweep.c).
 */
static void
drop_after_commit(void *arg)
{
	DropCtx    *ctx = arg;
	GwError		err;
	long		removed;
	struct timespec now;
	int64_t		since_ms;

	/* a table declared there right after this COMMIT writes younger files */
	clock_gettime(CLOCK_REALTIME, &now);
	since_ms = (int64_t) (now.tv_sec - ctx->checked.tv_sec) * 1000 +
		(now.tv_nsec - ctx->checked.tv_nsec) / 1000000;
	gw_error_clear(&err);
	if (ctx->location != NULL &&
		!gw_table_remove_data(ctx->location, since_ms > 0 ? since_ms : 0, &removed, &err))
		fprintf(stderr, "%s: DropTable: the table was dropped, but deleting its data at %s "
				"failed (--sweep deletes what is left): %s %s\n",
				GW_PROGRAM, ctx->location, err.message, err.detail);
}

/*
 * gw_drop_table
 *		Run rest_drop_table, then delete the table's data.  Returns the
 *		response text, or NULL with err set.
 */
char *
gw_drop_table(const char *function, json_t *request, const GwRequestInfo *info,
			  GwError *err)
{
	DropCtx		ctx;
	GwTxHooks	hooks = {NULL, drop_after_call, drop_after_commit, NULL, &ctx};
	char	   *text = json_dumps(request, JSON_COMPACT);
	char	   *result = NULL;

	memset(&ctx, 0, sizeof(ctx));
	if (text == NULL)
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
	else
		result = gw_db_call(function, text, info, &hooks, err);
	free(text);
	free(ctx.location);
	return result;
}
