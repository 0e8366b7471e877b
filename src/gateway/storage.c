/*-------------------------------------------------------------------------
 *
 * storage.c
 *	  The backend of a location: "s3://..." goes to the S3 backend, an
 *	  absolute path to the local one.  The local backend exists when
 *	  --root is a directory (and is confined to it); the S3 backend always
 *	  exists, so a gateway rooted on disk can serve tables registered in a
 *	  bucket, and one rooted in a bucket serves no local path.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3.h"
#include "storage.h"

static GwStorage *local_storage;
static GwStorage *s3_storage;
static char *s3_root;

/*
 * gw_storage_init
 *		Create the backends for root (a directory's real path or an s3://
 *		URI).  Called once at start-up.
 */
bool
gw_storage_init(const char *root, GwError *err)
{
	if (strncmp(root, "s3://", 5) == 0)
	{
		s3_root = strdup(root);
		if (s3_root == NULL)
		{
			gw_error_set(err, LANCE_INTERNAL, "out of memory");
			return false;
		}
	}
	else if ((local_storage = gw_storage_local_create(root, err)) == NULL)
		return false;
	else
		gw_storage_local_cache(local_storage);
	if (!gw_s3_init(err))
		return false;
	s3_storage = gw_storage_s3_create(s3_root, err);
	return s3_storage != NULL;
}

/*
 * gw_staged_free
 *		Release what read_staging or load_staging left in staged: its bytes
 *		and the descriptors it kept open.
 */
void
gw_staged_free(GwStaged *staged)
{
	if (staged->open)
	{
		close(staged->fd);
		close(staged->dfd);
	}
	free(staged->bytes);
	memset(staged, 0, sizeof(*staged));
}

/*
 * gw_storage_s3_root
 *		--root when it is an s3:// URI, else NULL.
 */
const char *
gw_storage_s3_root(void)
{
	return s3_root;
}

/*
 * gw_storage_local_root
 *		The real path of --root when it is a directory, else NULL.
 */
const char *
gw_storage_local_root(void)
{
	return local_storage ? gw_storage_local_root_of(local_storage) : NULL;
}

/*
 * gw_storage_for
 *		The backend that serves path, or NULL with err set.
 */
GwStorage *
gw_storage_for(const char *path, GwError *err)
{
	if (strncmp(path, "s3://", 5) == 0)
		return s3_storage;
	if (path[0] == '/' && local_storage != NULL)
		return local_storage;
	if (path[0] == '/')
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "%s is a local path, but this gateway's root is %s: it serves no local files",
					 path, s3_root);
	else
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "%s is neither an absolute path nor an s3:// location", path);
	return NULL;
}

/*
 * gw_storage_plain_components
 *		Whether every "/"-separated component of path is a plain name: not
 *		empty, "." or "..".  The one rule of both backends for the paths and
 *		keys they are given.
 */
bool
gw_storage_plain_components(const char *path)
{
	const char *p = path;

	for (;;)
	{
		const char *slash = strchr(p, '/');
		size_t		n = slash ? (size_t) (slash - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (slash == NULL)
			return true;
		p = slash + 1;
	}
}
