/*-------------------------------------------------------------------------
 *
 * table_files.c
 *	  The files of a whole table: RegisterTable imports the manifests
 *	  listed at its location, DescribeTableVersion checks that a local
 *	  manifest is still there, DropTable deletes the data after its COMMIT
 *	  (src/gateway/README.md: "RegisterTable imports existing versions",
 *	  "Manifests a client's cleanup removed", "DropTable deletes the data").
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

#include "publish.h"
#include "manifest_rules.h"
#include "table_files.h"

/* CreateTableBranch and DeleteTableBranch: where the branch's manifests are */
typedef struct BranchCtx
{
	char	   *location;		/* <table location>/tree/<branch> */
	struct timespec checked;	/* when checked, before COMMIT (monotonic) */
} BranchCtx;

typedef struct DropCtx
{
	char	   *location;		/* normalized location of the dropped table */
	struct timespec checked;	/* when checked, before COMMIT (monotonic) */
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
 * gw_table_location_inside
 *		Whether a normalized table location lies strictly under this
 *		gateway's --root: a directory's real path or s3://BUCKET[/PREFIX],
 *		without a trailing slash unless it is "/" (main.c, prepare_root).
 */
bool
gw_table_location_inside(const char *dir)
{
	const char *root = strncmp(dir, "s3://", 5) == 0 ? gw_storage_s3_root() : gw_storage_local_root();
	size_t		len = root == NULL || strcmp(root, "/") == 0 ? 0 : strlen(root);

	return root != NULL && strncmp(dir, root, len) == 0 && dir[len] == '/' && dir[len + 1] != '\0';
}

/*
 * storage_at
 *		The backend that reaches table directory dir: the gateway's under
 *		--root or in a bucket; else, for an absolute path, one confined to
 *		base (*own, to free).  NULL with err set for a location neither
 *		absolute nor s3:// (gw_storage_for), or clear when nothing is at base.
 */
static GwStorage *
storage_at(const char *dir, const char *base, GwStorage **own, GwError *err)
{
	*own = NULL;
	gw_error_clear(err);
	if (dir[0] != '/' || gw_table_location_inside(dir))
		return gw_storage_for(dir, err);
	if ((*own = gw_storage_local_create(base, err)) == NULL)
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
	const char *slash = strrchr(dir, '/');
	/* the parent directory; "/" stays */
	char	   *parent = strndup(dir, slash == NULL ? strlen(dir) :
							   slash == dir ? 1 : (size_t) (slash - dir));
	GwStorage  *own;
	GwStorage  *st;
	bool		ok;

	*removed = 0;
	if (parent == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return false;
	}
	st = storage_at(dir, parent, &own, err);
	free(parent);
	ok = st != NULL ? st->remove_tree(st, dir, min_age_ms, removed, err) : err->code < 0;
	gw_storage_local_free(own);
	return ok;
}

/*
 * gw_manifest_missing
 *		Whether the manifest at path (of version) is missing: 0 no (or
 *		cannot say), GW_MANIFEST_CLEANED when a later version's manifest is
 *		listed beside it (a client's cleanup: a crash loses only the latest
 *		links, the journal commits in order), else GW_MANIFEST_LOST.
 */
int
gw_manifest_missing(GwStorage *st, const char *path, int64_t version)
{
	const char *slash = strrchr(path, '/');
	GwFileInfo *files;
	int			nfiles;
	GwError		err;
	int64_t		size;
	int64_t		v;
	char	   *dir;
	bool		later = false;

	gw_error_clear(&err);
	if ((st->present && st->present(st, path)) || st->stat_staging(st, path, &size, &err) ||
		errno != ENOENT || slash == NULL ||
		(dir = strndup(path, slash - path)) == NULL)
		return 0;
	if (st->list(st, dir, &files, &nfiles, &err))
	{
		for (int i = 0; i < nfiles && !later; i++)
			later = lance_manifest_version(files[i].name, &v, NULL) && v > version;
		free(files);
	}
	free(dir);
	return later ? GW_MANIFEST_CLEANED : GW_MANIFEST_LOST;
}

/*
 * call_request
 *		gw_db_call of function with request as its JSON text.
 */
static char *
call_request(const char *function, json_t *request, const GwRequestInfo *info,
			 const GwTxHooks *hooks, GwError *err)
{
	char	   *text = json_dumps(request, JSON_COMPACT);
	char	   *result = NULL;

	if (text == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	else
		result = gw_db_call(function, text, info, hooks, err);
	free(text);
	return result;
}

/*
 * gw_describe_version_check
 *		path and version are those of a DescribeTableVersion answer.  True,
 *		or, when a cleanup removed the version's local manifest, false with
 *		err TableVersionNotFound after retiring the row.
 */
bool
gw_describe_version_check(json_t *request, const GwRequestInfo *info, const char *path,
						  json_int_t version, GwError *err)
{
	GwStorage  *st;
	GwError		e;
	int			missing = 0;
	json_t	   *retire;
	char	   *done;

	gw_error_clear(&e);
	if (path[0] == '/' && gw_table_location_inside(path) &&
		(st = gw_storage_for(path, &e)) != NULL)
		missing = gw_manifest_missing(st, path, (int64_t) version);
	if (missing == GW_MANIFEST_LOST)
		(void) gw_publish_repair(path);	/* lost by a crash: rewritten */
	if (missing != GW_MANIFEST_CLEANED)
		return true;
	retire = json_pack("{sOsIsO?ss}", "id", json_object_get(request, "id"), "version", version,
					   "branch", json_object_get(request, "branch"), "manifest_path", path);
	if ((done = call_request("rest_retire_table_version", retire, info, NULL, &e)) == NULL)
		fprintf(stderr, "%s: could not retire version %" JSON_INTEGER_FORMAT
				" (manifest %s gone): %s %s\n", GW_PROGRAM, version, path, e.message, e.detail);
	free(done);
	json_decref(retire);
	gw_error_set(err, LANCE_TABLE_VERSION_NOT_FOUND,
				 "version %" JSON_INTEGER_FORMAT " not found: its manifest %s is gone "
				 "from storage (a cleanup of old versions removed it)", version, path);
	return false;
}

/* A version of a ListTableVersions answer (gw_list_versions_check). */
typedef struct Listed
{
	int64_t		version;
	char	   *path;			/* its manifest's location (malloc'd) */
	int			dir;			/* its directory's index in the DirFiles, -1 none */
	bool		missing;
	bool		hide;			/* left out of the answer */
} Listed;

/* A directory of manifests, listed at most once per answer. */
typedef struct DirFiles
{
	char	   *dir;			/* malloc'd */
	GwStorage  *st;
	bool		s3;				/* in a bucket: listed to check each manifest */
	bool		listed;
	GwFileInfo *files;			/* sorted by name */
	int			nfiles;
	int64_t		latest;			/* the latest version with a manifest there, -1 */
} DirFiles;

/*
 * file_name_cmp
 *		Listed files by name, for bsearch.
 */
static int
file_name_cmp(const void *a, const void *b)
{
	return strcmp(((const GwFileInfo *) a)->name, ((const GwFileInfo *) b)->name);
}

/*
 * parse_listed
 *		The versions of db.c's SQL_CALL_PATHS ("<number> <bytes> <location>"
 *		each, nothing between) as *n Listed (malloc'd).  False when the text
 *		is not of that form or memory is short.
 */
static bool
parse_listed(const char *text, Listed **out, int *n)
{
	int			cap = 0;

	*out = NULL;
	*n = 0;
	while (*text != '\0')
	{
		char	   *end;
		long long	version = strtoll(text, &end, 10);
		unsigned long len;

		if (end == text || *end != ' ')
			return false;
		len = strtoul(end + 1, &end, 10);
		if (*end != ' ' || strnlen(end + 1, len) < len)
			return false;
		if (*n == cap)
		{
			Listed	   *more = realloc(*out, sizeof(Listed) * (cap = cap ? cap * 2 : 16));

			if (more == NULL)
				return false;
			*out = more;
		}
		(*out)[*n] = (Listed) {version, strndup(end + 1, len), -1, false, false};
		if ((*out)[(*n)++].path == NULL)
			return false;
		text = end + 1 + len;
	}
	return true;
}

/*
 * dir_of
 *		The index of the directory of manifest path in *dirs (added when
 *		new), or -1 when memory is short.
 */
static int
dir_of(DirFiles **dirs, int *ndirs, const char *path, GwStorage *st, bool s3)
{
	const char *slash = strrchr(path, '/');
	size_t		len = slash ? (size_t) (slash - path) : 0;
	DirFiles   *more;

	for (int i = 0; i < *ndirs; i++)
		if (strncmp((*dirs)[i].dir, path, len) == 0 && (*dirs)[i].dir[len] == '\0')
			return i;
	if ((more = realloc(*dirs, sizeof(DirFiles) * (*ndirs + 1))) == NULL)
		return -1;
	*dirs = more;
	more[*ndirs] = (DirFiles) {strndup(path, len), st, s3, false, NULL, 0, -1};
	return more[*ndirs].dir == NULL ? -1 : (*ndirs)++;
}

/*
 * list_dir
 *		List d once: its files by name, and the latest version whose
 *		manifest is among them.  False with err set on a storage error.
 */
static bool
list_dir(DirFiles *d, GwError *err)
{
	int64_t		v;

	if (d->listed)
		return true;
	if (!d->st->list(d->st, d->dir, &d->files, &d->nfiles, err))
		return false;
	d->listed = true;
	if (d->nfiles > 1)
		qsort(d->files, d->nfiles, sizeof(GwFileInfo), file_name_cmp);
	for (int i = 0; i < d->nfiles; i++)
		if (lance_manifest_version(d->files[i].name, &v, NULL) && v > d->latest)
			d->latest = v;
	return true;
}

/*
 * manifest_gone
 *		Whether the manifest of e, under --root, is gone: for a file, the
 *		presence lookup (the loops' cache) and, when it misses, the confined
 *		check that decides for describe too (gw_manifest_missing); in a
 *		bucket, the listing of its directory.  False with err set when a
 *		bucket could not be listed.
 */
static bool
manifest_gone(Listed *e, DirFiles *d, GwError *err)
{
	GwFileInfo	key;
	const char *name = strrchr(e->path, '/') + 1;
	int64_t		size;
	GwError		ignored;

	if (!d->s3)
	{
		gw_error_clear(&ignored);
		if ((d->st->present && d->st->present(d->st, e->path)) ||
			d->st->stat_staging(d->st, e->path, &size, &ignored))
			return false;
		return errno == ENOENT;	/* else it cannot say: handed out */
	}
	if (!list_dir(d, err))
		return false;
	snprintf(key.name, sizeof(key.name), "%s", name);
	return strlen(name) >= sizeof(key.name) ||
		bsearch(&key, d->files, d->nfiles, sizeof(GwFileInfo), file_name_cmp) == NULL;
}

/*
 * drop_hidden
 *		*result (malloc'd) without the versions of e marked hide; false with
 *		err set when it cannot be rewritten.
 */
static bool
drop_hidden(char **result, const Listed *e, int n, GwError *err)
{
	json_t	   *answer = json_loads(*result, 0, NULL);
	json_t	   *versions = json_object_get(answer, "versions");
	char	   *text = NULL;
	size_t		i = 0;

	while (i < json_array_size(versions))
	{
		json_t	   *v = json_object_get(json_array_get(versions, i), "version");
		bool		hide = false;

		for (int k = 0; k < n && !hide; k++)
			hide = e[k].hide && json_is_integer(v) && json_integer_value(v) == e[k].version;
		if (hide)
			json_array_remove(versions, i);
		else
			i++;
	}
	if (json_is_array(versions))
		text = json_dumps(answer, JSON_COMPACT);
	json_decref(answer);
	if (text == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "ListTableVersions: the answer could not be "
					 "rewritten without the versions whose manifests are gone");
		return false;
	}
	free(*result);
	*result = text;
	return true;
}

/*
 * gw_list_versions_check
 *		listed holds the versions of a ListTableVersions answer *result
 *		(db.c's call_value).  A version whose manifest under --root is gone
 *		is left out of *result, which is then rewritten; when a later
 *		version's manifest is in its directory (a client's cleanup, as for
 *		describe) it is also retired.  A file is one presence lookup (no
 *		system call on a loop that found it before); a bucket's directory
 *		is listed once.  The page token stays the catalog's, so a page may
 *		come out shorter than its limit (an upper bound in the spec).
 *		False with err set when a bucket cannot be listed, or on no memory.
 */
bool
gw_list_versions_check(json_t *request, const GwRequestInfo *info, const char *listed,
					   char **result, GwError *err)
{
	Listed	   *e = NULL;
	DirFiles   *dirs = NULL;
	int			n = 0;
	int			ndirs = 0;
	int			missing = 0;
	int			hidden = 0;
	bool		ok;

	gw_error_clear(err);
	if (!(ok = parse_listed(listed, &e, &n)))
		gw_error_set(err, LANCE_INTERNAL, "ListTableVersions: the versions of the answer "
					 "could not be read");
	for (int i = 0; ok && i < n; i++)
	{
		bool		s3 = strncmp(e[i].path, "s3://", 5) == 0;
		GwStorage  *st;
		GwError		ignored;

		gw_error_clear(&ignored);
		if ((!s3 && e[i].path[0] != '/') || !gw_table_location_inside(e[i].path) ||
			(st = gw_storage_for(e[i].path, &ignored)) == NULL)
			continue;			/* outside --root: not checked, as for describe */
		if ((e[i].dir = dir_of(&dirs, &ndirs, e[i].path, st, s3)) < 0)
		{
			gw_error_set(err, LANCE_INTERNAL, "out of memory");
			ok = false;
		}
		else if ((e[i].missing = manifest_gone(&e[i], &dirs[e[i].dir], err)))
			missing++;
		else
			ok = err->code < 0;
	}
	for (int i = 0; ok && missing > 0 && i < n; i++)
	{
		DirFiles   *d = e[i].missing ? &dirs[e[i].dir] : NULL;
		GwError		e2;
		json_t	   *retire;
		char	   *done;

		gw_error_clear(&e2);
		if (d == NULL)
			continue;
		if (!list_dir(d, &e2))
			d->listed = true;	/* cannot say which are later: none retired */
		hidden++;
		e[i].hide = true;
		if (d->latest <= e[i].version)
		{
			/* no later manifest: lost by a crash (rewritten if the catalog holds it), or kept */
			if (!d->s3 && gw_publish_repair(e[i].path))
			{
				e[i].hide = false;
				hidden--;
			}
			continue;
		}
		retire = json_pack("{sOsIsO?ss}", "id", json_object_get(request, "id"),
						   "version", (json_int_t) e[i].version,
						   "branch", json_object_get(request, "branch"), "manifest_path", e[i].path);
		if ((done = call_request("rest_retire_table_version", retire, info, NULL, &e2)) == NULL)
			fprintf(stderr, "%s: could not retire version %" PRId64 " (manifest %s gone): %s %s\n",
					GW_PROGRAM, e[i].version, e[i].path, e2.message, e2.detail);
		free(done);
		json_decref(retire);
	}
	if (ok && hidden > 0)
		ok = drop_hidden(result, e, n, err);
	for (int i = 0; i < n; i++)
		free(e[i].path);
	for (int i = 0; i < ndirs; i++)
	{
		free(dirs[i].dir);
		free(dirs[i].files);
	}
	free(e);
	free(dirs);
	return ok;
}

/*
 * manifest_cmp
 *		Listed files by the version their manifest name names, the V2 name
 *		first; other names last.
 */
static int
manifest_cmp(const void *a, const void *b)
{
	int64_t		va = INT64_MAX;
	int64_t		vb = INT64_MAX;
	LanceNamingScheme sa = LANCE_NAMING_V1;
	LanceNamingScheme sb = LANCE_NAMING_V1;

	lance_manifest_version(((const GwFileInfo *) a)->name, &va, &sa);
	lance_manifest_version(((const GwFileInfo *) b)->name, &vb, &sb);
	if (va != vb)
		return va < vb ? -1 : 1;
	return (int) sb - (int) sa;
}

/*
 * list_versions
 *		The canonical manifests of <location>/_versions as a JSON array of
 *		{version, manifest_path, naming_scheme, manifest_size[, e_tag]},
 *		manifest_path spelled from location as given; one entry per version
 *		(V2 wins).  NULL with err set on a storage error.
 */
static json_t *
list_versions(const char *location, GwError *err)
{
	char	   *dir = gw_table_location_dir(location);
	GwStorage  *own = NULL;
	GwStorage  *st = dir ? storage_at(dir, dir, &own, err) : NULL;
	json_t	   *out = json_array();
	GwFileInfo *files = NULL;
	char	   *vdir = NULL;
	int			nfiles = 0;
	int64_t		last = -1;
	int			loclen = (int) strlen(location);

	while (loclen > 1 && location[loclen - 1] == '/')
		loclen--;
	gw_error_clear(err);		/* nothing there, or rest_register_table judges */
	if (dir == NULL || out == NULL ||
		(st != NULL && (asprintf(&vdir, "%s/" LANCE_VERSIONS_DIR, dir) < 0 ||
						!st->list(st, vdir, &files, &nfiles, err))))
		goto fail;
	gw_error_clear(err);		/* a missing directory lists nothing */
	if (nfiles > 0)
		qsort(files, nfiles, sizeof(GwFileInfo), manifest_cmp);
	for (const GwFileInfo *f = files; f < files + nfiles; f++)
	{
		int64_t		version;
		LanceNamingScheme scheme;
		json_t	   *e;

		if (!lance_manifest_version(f->name, &version, &scheme) || version == last)
			continue;			/* not a manifest, or the V1 name of a version listed */
		last = version;
		e = json_pack("{sIss#++ssso*ss*}", "version", (json_int_t) version,
					  "manifest_path", location, loclen, "/" LANCE_VERSIONS_DIR "/", f->name,
					  "naming_scheme", scheme == LANCE_NAMING_V2 ? "V2" : "V1",
					  "manifest_size", f->size >= 0 ? json_integer(f->size) : NULL,
					  "e_tag", f->etag[0] ? f->etag : NULL);
		if (json_array_append_new(out, e) != 0)
			goto fail;
	}
	goto done;
fail:
	if (err->code < 0)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	json_decref(out);
	out = NULL;
done:
	free(files);
	free(vdir);
	free(dir);
	gw_storage_local_free(own);
	return out;
}

/*
 * gw_register_table
 *		Run rest_register_table with the versions found under the
 *		location, once rest_check_table_location allowed the location.
 *		Returns the response text, or NULL with err set.
 */
char *
gw_register_table(const char *function, json_t *request, const GwRequestInfo *info,
				  GwError *err)
{
	const char *location = json_string_value(json_object_get(request, "location"));
	json_t	   *versions;

	char	   *checked;

	if (location == NULL)
		json_object_del(request, "versions");
	else
	{
		/*
		 * The catalog says whether this role may place the table there
		 * before anything at the location is read: a refusal is the same
		 * whether or not a dataset is there.
		 */
		json_t	   *check = json_pack("{s:O*,s:s}", "id", json_object_get(request, "id"),
									  "location", location);

		checked = check ? call_request("rest_check_table_location", check, info, NULL, err) : NULL;
		if (check == NULL)
			gw_error_set(err, LANCE_INTERNAL, "out of memory");
		json_decref(check);
		if (checked == NULL)
			return NULL;
		free(checked);
		if ((versions = list_versions(location, err)) == NULL)
			return NULL;
		json_object_set_new(request, "versions", versions);
	}
	return call_request(function, request, info, NULL, err);
}

/*
 * declare_after_call
 *		Inside the transaction, once the catalog placed the table (its
 *		location is the caller's to take, and no live table's overlaps it):
 *		a new table meets no manifests, such as a dropped table's whose
 *		files are not yet deleted, or a dataset never registered, which a
 *		first commit would mix with its own.
 */
static bool
declare_after_call(void *arg GW_UNUSED, char **result, GwError *err)
{
	json_t	   *res = json_loads(*result, 0, NULL);
	const char *location = json_string_value(json_object_get(res, "location"));
	json_t	   *found = location ? list_versions(location, err) : NULL;
	bool		ok = found != NULL && json_array_size(found) == 0;

	if (found != NULL && !ok)
	{
		gw_error_set(err, LANCE_TABLE_ALREADY_EXISTS,
					 "DeclareTable: the location %s already holds the manifests of %zu versions",
					 location, json_array_size(found));
		gw_error_detail(err, "RegisterTable imports a dataset that is there; "
						"--sweep removes what a dropped table left");
	}
	else if (location == NULL)
		gw_error_set(err, LANCE_INTERNAL, "DeclareTable: the catalog returned no location");
	json_decref(found);
	json_decref(res);
	return ok;
}

/*
 * gw_declare_table
 *		Run rest_declare_table; the table is declared only where no
 *		manifests are (declare_after_call).  Returns the response text,
 *		or NULL with err set.
 */
char *
gw_declare_table(const char *function, json_t *request, const GwRequestInfo *info,
				 GwError *err)
{
	GwTxHooks	hooks = {NULL, declare_after_call, NULL, NULL, NULL, NULL};

	return call_request(function, request, info, &hooks, err);
}

/*
 * no_manifests_at
 *		Whether location (a table's or a branch's) holds no manifests in
 *		its versions directory; false with err set (code, what) if it does
 *		or cannot be listed.
 */
static bool
no_manifests_at(const char *location, int code, const char *what, GwError *err)
{
	json_t	   *found = list_versions(location, err);
	bool		ok = found != NULL && json_array_size(found) == 0;

	if (found != NULL && !ok)
	{
		gw_error_set(err, code, "%s: %s already holds the manifests of %zu versions",
					 what, location, json_array_size(found));
		gw_error_detail(err, "RegisterTable imports a dataset that is there; "
						"--sweep removes what a dropped table left");
	}
	json_decref(found);
	return ok;
}

/*
 * branch_create_after_call
 *		Inside the transaction: a new branch meets no manifests that a
 *		deleted branch of the same name left.
 */
static bool
branch_create_after_call(void *arg, char **result GW_UNUSED, GwError *err)
{
	BranchCtx  *ctx = arg;

	return no_manifests_at(ctx->location, LANCE_TABLE_BRANCH_ALREADY_EXISTS,
						   "CreateTableBranch", err);
}

/*
 * branch_delete_after_call, branch_delete_after_commit
 *		The branch is gone from the catalog: its manifests go too (files
 *		younger than the check stay: a branch created again since), so
 *		that a branch created again under its name never meets them.  Only
 *		under --root, as DropTable; a failure is logged.
 */
static bool
branch_delete_after_call(void *arg, char **result GW_UNUSED, GwError *err GW_UNUSED)
{
	BranchCtx  *ctx = arg;

	clock_gettime(CLOCK_MONOTONIC, &ctx->checked);
	return true;
}

static void
branch_delete_after_commit(void *arg)
{
	BranchCtx  *ctx = arg;
	char	   *dir = gw_table_location_dir(ctx->location);
	char	   *vdir = NULL;
	GwError		err;
	long		removed;

	if (dir != NULL && (dir[0] != '/' || gw_table_location_inside(dir) || gw_config.drop_outside_root) &&
		asprintf(&vdir, "%s/" LANCE_VERSIONS_DIR, dir) >= 0 &&
		!gw_table_remove_data(vdir, gw_ms_since(&ctx->checked), &removed, &err))
		fprintf(stderr, "%s: DeleteTableBranch: the branch was deleted, but deleting its "
				"manifests at %s failed: %s %s\n", GW_PROGRAM, vdir, err.message, err.detail);
	free(vdir);
	free(dir);
}

/*
 * gw_table_branch
 *		Run rest_create_table_branch (create) or rest_delete_table_branch,
 *		with the branch's manifests looked at (create) or deleted after
 *		COMMIT.  The table's location comes from rest_describe_table first
 *		(a table's location does not change while it has branches).
 *		Returns the response text, or NULL with err set.
 */
char *
gw_table_branch(const char *function, json_t *request, bool create,
				const GwRequestInfo *info, GwError *err)
{
	const char *name = json_string_value(json_object_get(request, "name"));
	json_t	   *describe = json_pack("{s:O*}", "id", json_object_get(request, "id"));
	char	   *text = NULL;
	json_t	   *table = NULL;
	const char *location = NULL;
	BranchCtx	ctx = {0};
	GwTxHooks	hooks = {NULL, create ? branch_create_after_call : branch_delete_after_call,
	create ? NULL : branch_delete_after_commit, NULL, &ctx, NULL};
	char	   *result = NULL;

	if (name != NULL && describe != NULL)
		text = call_request("rest_describe_table", describe, info, NULL, err);
	if (text != NULL)
		table = json_loads(text, 0, NULL);
	location = json_string_value(json_object_get(table, "location"));
	if (name == NULL || describe == NULL || text == NULL || location == NULL)
		/* the catalog reports a missing name or table */
		result = call_request(function, request, info, NULL, err);
	else if (asprintf(&ctx.location, "%s/" LANCE_BRANCH_DIR "/%s", location, name) < 0)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	else
		result = call_request(function, request, info, &hooks, err);
	free(ctx.location);
	json_decref(table);
	json_decref(describe);
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
		gw_error_set(err, LANCE_INTERNAL, "DropTable: the catalog returned no location");
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &ctx->checked);
	if (!gw_table_location_inside(ctx->location) && !gw_config.drop_outside_root)
	{
		gw_error_set(err, LANCE_PERMISSION_DENIED,
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

	/* a table declared there right after this COMMIT writes younger files */
	if (!gw_table_remove_data(ctx->location, gw_ms_since(&ctx->checked), &removed, &err))
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
	DropCtx		ctx = {0};
	GwTxHooks	hooks = {NULL, drop_after_call, drop_after_commit, NULL, &ctx, NULL};
	char	   *result = call_request(function, request, info, &hooks, err);

	free(ctx.location);
	return result;
}
