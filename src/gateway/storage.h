/*-------------------------------------------------------------------------
 *
 * storage.h
 *	  The file operations of manifest finalization, behind a small
 *	  interface so that an object-store backend can follow the local one.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_STORAGE_H
#define LANCE_GATEWAY_STORAGE_H

#include "gateway.h"

/* What finalize wrote, so that an aborted commit can undo exactly that. */
typedef struct GwWritten
{
	bool		created;		/* false: canonical already held these bytes */
	uint64_t	dev;
	uint64_t	ino;
	char		etag[80];		/* object stores: the ETag written */
} GwWritten;

/*
 * A staging object read whole before the catalog call (object stores):
 * its bytes and the ETag a single-part upload of them gets (quoted hex
 * MD5), which the catalog records as the version's e_tag.
 */
typedef struct GwStaged
{
	unsigned char *bytes;		/* malloc'd, NULL if not loaded */
	size_t		len;
	char		etag[80];
	bool		open;			/* local read_staging with keep: fd and dfd */
	int			fd;				/* the staging file, kept for finalize */
	int			dfd;			/* its confined directory, kept for remove */
} GwStaged;

/*
 * Temporary names that finalize gives a manifest for an instant:
 * GW_TMP_PREFIX "<pid>-<n>" GW_TMP_SUFFIX, in the manifest's directory
 * (sweep.c recognises them).
 */
#define GW_TMP_PREFIX ".gw-"
#define GW_TMP_SUFFIX ".tmp"

/* A regular file of a directory listing (see GwStorage.list). */
typedef struct GwFileInfo
{
	char		name[256];		/* base name */
	int64_t		age_ms;			/* since its inode last changed (ctime);
								 * negative if that lies in the future */
	uint64_t	dev;
	uint64_t	ino;
	char		etag[80];		/* object stores: the listed ETag */
	int64_t		size;			/* bytes */
} GwFileInfo;

typedef struct GwStorage GwStorage;

struct GwStorage
{
	const char *name;

	/*
	 * Check that path may be read as a staging manifest (confined to the
	 * root, no symlinks, a regular file) and return its size.  Failures are
	 * InvalidInput; errno is ENOENT when the object does not exist.
	 */
	bool		(*stat_staging) (GwStorage *st, const char *path, int64_t *size,
								 GwError *err);

	/*
	 * Local backends only (NULL otherwise): true when path's text, below
	 * the root, names a regular file now.  One lookup that follows the
	 * directories as a client does, not confined: a hint that lets a
	 * reader skip stat_staging; false says nothing.
	 */
	bool		(*present) (GwStorage *st, const char *path);

	/*
	 * Make a staging object's bytes durable ahead of finalize, while the
	 * catalog call is in flight; synced identifies what was synced (created
	 * false if nothing was).  Best effort: finalize checks it.
	 */
	void		(*sync_staging) (GwStorage *st, const char *path, GwWritten *synced);

	/*
	 * Object stores only (NULL otherwise): read a staging object whole,
	 * with the same checks and errors as stat_staging.  finalize then
	 * writes exactly these bytes.
	 */
	bool		(*load_staging) (GwStorage *st, const char *path, GwStaged *staged,
								 GwError *err);

	/*
	 * Local backends only (NULL otherwise): read a staging file whole, with
	 * stat_staging's checks, when it is at most max bytes (errno E2BIG if
	 * larger).  Its bytes go to the catalog with the version (publications:
	 * the commit protocol of commit.c), and finalize then needs no flush.
	 * With keep, the file and its directory stay open (staged->open), so
	 * that finalize and remove neither resolve nor open them again; a
	 * request keeps two descriptors so (gw_staged_free closes them).
	 */
	bool		(*read_staging) (GwStorage *st, const char *path, size_t max, bool keep,
								 GwStaged *staged, GwError *err);

	/*
	 * Make canonical hold the bytes of staging, atomically and durably.
	 * staging must lie in canonical's directory.  size is the expected
	 * size.  An identical existing canonical object is left alone.  synced
	 * is what sync_staging reported (or zeroes); staged what load_staging
	 * read, or for a local backend what read_staging read (NULL where there
	 * is none); row_etag the e_tag the catalog records for the version
	 * (NULL if none).  Local backend with staged: the staging file must
	 * still hold exactly those bytes, and nothing is flushed, because the
	 * catalog holds them until publish.c has made the name durable.
	 */
	bool		(*finalize) (GwStorage *st, const char *staging, const char *canonical,
							 int64_t size, const GwWritten *synced, const GwStaged *staged,
							 const char *row_etag, GwWritten *written, GwError *err);

	/* Undo finalize after the catalog transaction surely did not commit. */
	void		(*discard) (GwStorage *st, const char *canonical, const GwWritten *written);

	/*
	 * Remove a staging object once its version committed (best effort);
	 * staged is what read_staging kept open for it, or NULL.
	 */
	void		(*remove) (GwStorage *st, const char *path, const GwStaged *staged);

	/*
	 * List the regular files of directory dir (confined like every path;
	 * other kinds of entries, symbolic links included, are left out).  A
	 * directory that does not exist lists nothing.  *files is a malloc'd
	 * array of *nfiles entries sorted by name (free it), NULL if none.
	 */
	bool		(*list) (GwStorage *st, const char *dir, GwFileInfo **files, int *nfiles,
						 GwError *err);

	/*
	 * Remove the file of dir that list reported as file, provided that it
	 * is still that regular file (same identity) and still at least
	 * min_age_ms old, and make the removal durable.  Returns 1 when it was
	 * removed, 0 when it is gone or changed (left alone), -1 on an error
	 * (err set).
	 */
	int			(*remove_listed) (GwStorage *st, const char *dir, const GwFileInfo *file,
								  int64_t min_age_ms, GwError *err);

	/*
	 * Remove directory dir and everything below it (in an object store,
	 * every object whose key starts with dir + "/"), but for files changed
	 * less than min_age_ms ago, which are kept with their directories.
	 * Symbolic links are removed, never followed; dir is confined like
	 * every path and is never the root itself.  A dir that does not exist
	 * removes nothing.  *removed counts the files removed.  False on an
	 * error (err set), with what was removed before it gone.
	 */
	bool		(*remove_tree) (GwStorage *st, const char *dir, int64_t min_age_ms,
								long *removed, GwError *err);

	/*
	 * Local backends only (NULL otherwise), for publish.c: make canonical
	 * hold exactly bytes (kept if it does, else written to a temporary name
	 * and renamed into place; flushed only with flush).  Returns 1 when it
	 * was rewritten, 0 when it already held them, -1 on an error (err set).
	 */
	int			(*republish) (GwStorage *st, const char *canonical,
							  const unsigned char *bytes, size_t len, bool flush,
							  GwError *err);

	/*
	 * Local backends only (NULL otherwise): make the files paths and their
	 * directories durable, grouped so that the file system shares its
	 * journal commits among them.
	 */
	bool		(*sync_published) (GwStorage *st, const char *const *paths, int n,
								   GwError *err);

	void	   *priv;
};

extern bool gw_storage_plain_components(const char *path);
extern GwStorage *gw_storage_local_create(const char *root, GwError *err);
extern void gw_storage_local_free(GwStorage *st);
extern const char *gw_storage_local_root_of(GwStorage *st);
extern void gw_storage_local_cache(GwStorage *st);
extern const char *gw_storage_local_root(void);
extern GwStorage *gw_storage_s3_create(const char *root, GwError *err);

/* storage.c: the backend of a location (NULL: none serves it, err set) */
extern void gw_staged_free(GwStaged *staged);
extern bool gw_storage_init(const char *root, GwError *err);
extern GwStorage *gw_storage_for(const char *path, GwError *err);
extern const char *gw_storage_s3_root(void);

/* storage_presence.c: the root's manifests a loop has seen (present) */
extern void gw_presence_init(int rootfd);
extern void gw_presence_enter_loop(int ep, uint64_t tag);
extern void gw_presence_drain(void);
extern bool gw_presence_lookup(const char *rel);

#endif							/* LANCE_GATEWAY_STORAGE_H */
