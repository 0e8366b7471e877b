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
} GwWritten;

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
	 * Make a staging object's bytes durable ahead of finalize, while the
	 * catalog call is in flight; synced identifies what was synced (created
	 * false if nothing was).  Best effort: finalize checks it.
	 */
	void		(*sync_staging) (GwStorage *st, const char *path, GwWritten *synced);

	/*
	 * Make canonical hold the bytes of staging, atomically and durably.
	 * staging must lie in canonical's directory.  size is the expected
	 * size.  An identical existing canonical object is left alone.  synced
	 * is what sync_staging reported (or zeroes).
	 */
	bool		(*finalize) (GwStorage *st, const char *staging, const char *canonical,
							 int64_t size, const GwWritten *synced, GwWritten *written,
							 GwError *err);

	/* Undo finalize after the catalog transaction surely did not commit. */
	void		(*discard) (GwStorage *st, const char *canonical, const GwWritten *written);

	/* Remove a staging object once its version committed (best effort). */
	void		(*remove) (GwStorage *st, const char *path);

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

	void	   *priv;
};

extern GwStorage *gw_storage_local_create(const char *root, GwError *err);

#endif							/* LANCE_GATEWAY_STORAGE_H */
