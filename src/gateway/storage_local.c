/*-------------------------------------------------------------------------
 *
 * storage_local.c
 *	  Local-filesystem storage backend.  Every path must be absolute, lie
 *	  under the catalog root, have no empty, "." or ".." components and no
 *	  symbolic link in its directories (its real path is its lexical path);
 *	  leaves must be regular files.  A canonical manifest is the staging
 *	  file's inode under a second name: the staging file is fsync'd, hard
 *	  linked to the canonical name, and the directory fsync'd; no bytes are
 *	  copied and no inode is created.  Where a hard link cannot be made (a
 *	  file the gateway may not link, another file system) the staging bytes
 *	  are copied to a temporary file in the same directory, fsync'd and
 *	  renamed into place, and the directory fsync'd.  For --sweep
 *	  (sweep.c) it lists the regular files of a directory and removes one
 *	  of them, by name relative to the opened directory, only if it is
 *	  still the file that was listed.
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage.h"

typedef struct LocalStorage
{
	char		root[PATH_MAX];
	size_t		rootlen;
} LocalStorage;

static atomic_ulong tmp_counter;

/*
 * dir_of
 *		Copy the directory part of an absolute path into buf.
 */
static void
dir_of(const char *path, char *buf, size_t buflen)
{
	const char *slash = strrchr(path, '/');
	size_t		n = slash ? (size_t) (slash - path) : 0;

	if (n == 0)
		n = 1;					/* "/x" -> "/" */
	if (n >= buflen)
		n = buflen - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/*
 * check_lexical
 *		The rules on the text of a path: absolute, under the root, no empty,
 *		"." or ".." component.
 */
static bool
check_lexical(LocalStorage *ls, const char *path, GwError *err)
{
	size_t		len = strlen(path);
	const char *p;

	if (path[0] != '/' || len >= PATH_MAX - 64)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "manifest path must be an absolute path: %s", path);
		return false;
	}
	if (!(ls->rootlen == 1 ||
		  (strncmp(path, ls->root, ls->rootlen) == 0 && path[ls->rootlen] == '/')))
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "manifest path is outside the catalog root %s: %s", ls->root, path);
		return false;
	}
	p = path + 1;
	for (;;)
	{
		const char *slash = strchr(p, '/');
		size_t		n = slash ? (size_t) (slash - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		{
			gw_error_set(err, GW_ERR_INVALID_INPUT,
						 "manifest path has an empty, \".\" or \"..\" component: %s", path);
			return false;
		}
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	return true;
}

/*
 * check_real_dir
 *		A directory must be reachable without a symbolic link: its real path
 *		is its lexical path.  errno is kept from a failed realpath().
 */
static bool
check_real_dir(const char *dir, GwError *err)
{
	char		real[PATH_MAX];

	if (realpath(dir, real) == NULL)
	{
		int			saved = errno;

		gw_error_set(err, GW_ERR_INVALID_INPUT, "manifest directory %s is not accessible", dir);
		gw_error_detail(err, "%s", strerror(saved));
		errno = saved;
		return false;
	}
	if (strcmp(real, dir) != 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "manifest directory %s leaves the table location through a symbolic link", dir);
		errno = EINVAL;
		return false;
	}
	return true;
}

/*
 * check_path
 *		Confinement rules shared by every operation (see file header).
 */
static bool
check_path(LocalStorage *ls, const char *path, GwError *err)
{
	char		dir[PATH_MAX];

	if (!check_lexical(ls, path, err))
		return false;
	dir_of(path, dir, sizeof(dir));
	return check_real_dir(dir, err);
}

/*
 * local_stat_staging
 *		See GwStorage.stat_staging.
 */
static bool
local_stat_staging(GwStorage *st, const char *path, int64_t *size, GwError *err)
{
	LocalStorage *ls = st->priv;
	struct stat sb;

	if (!check_path(ls, path, err))
	{
		errno = EINVAL;
		return false;
	}
	if (lstat(path, &sb) != 0)
	{
		int			saved = errno;

		gw_error_set(err, GW_ERR_INVALID_INPUT, "staging manifest %s cannot be read", path);
		gw_error_detail(err, "%s", strerror(saved));
		errno = saved;
		return false;
	}
	if (!S_ISREG(sb.st_mode))
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "staging manifest %s is not a regular file", path);
		errno = EINVAL;
		return false;
	}
	*size = (int64_t) sb.st_size;
	return true;
}

/*
 * same_content
 *		True if two open files hold the same size bytes.
 */
static bool
same_content(int a, int b, int64_t size)
{
	char		ba[65536];
	char		bb[65536];
	int64_t		off = 0;

	while (off < size)
	{
		size_t		want = (size - off) < (int64_t) sizeof(ba) ? (size_t) (size - off) : sizeof(ba);
		ssize_t		na = pread(a, ba, want, off);
		ssize_t		nb = pread(b, bb, want, off);

		if (na <= 0 || nb != na || memcmp(ba, bb, na) != 0)
			return false;
		off += na;
	}
	return true;
}

/*
 * copy_fd
 *		Copy size bytes from in (at offset 0) to out; false on I/O error.
 */
static bool
copy_fd(int in, int out, int64_t size)
{
	char		buf[65536];
	int64_t		off = 0;

	while (off < size)
	{
		ssize_t		n = pread(in, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		for (ssize_t w = 0; w < n;)
		{
			ssize_t		k = write(out, buf + w, n - w);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return false;
			w += k;
		}
		off += n;
	}
	return true;
}

/*
 * fsync_dir
 *		fsync a directory so that a rename or unlink in it is durable.
 */
static bool
fsync_dir(const char *dir)
{
	int			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool		ok;

	if (fd < 0)
		return false;
	ok = (fsync(fd) == 0);
	close(fd);
	return ok;
}

/*
 * temp_name
 *		A fresh temporary name in dir (see GW_TMP_PREFIX); false if it does
 *		not fit in size bytes.
 */
static bool
temp_name(const char *dir, char *buf, size_t size)
{
	int			n = snprintf(buf, size, "%s/" GW_TMP_PREFIX "%ld-%lu" GW_TMP_SUFFIX,
							 dir, (long) getpid(),
							 (unsigned long) atomic_fetch_add(&tmp_counter, 1));

	return n >= 0 && (size_t) n < size;
}

/*
 * write_canonical
 *		Copy in to a temporary file beside canonical and rename it there.
 */
static bool
write_canonical(int in, const char *dir, const char *canonical, int64_t size,
				GwWritten *written, GwError *err)
{
	char		tmp[PATH_MAX];
	struct stat sb;
	int			out;

	if (!temp_name(dir, tmp, sizeof(tmp)))
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "manifest directory path is too long");
		return false;
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot create a temporary manifest in %s", dir);
		gw_error_detail(err, "%s", strerror(errno));
		return false;
	}
	if (!copy_fd(in, out, size) || fsync(out) != 0 || fstat(out, &sb) != 0)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot write the manifest %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		close(out);
		unlink(tmp);
		return false;
	}
	close(out);
	if (rename(tmp, canonical) != 0)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot rename the manifest into %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		unlink(tmp);
		return false;
	}
	if (!fsync_dir(dir))
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot fsync the directory %s", dir);
		gw_error_detail(err, "%s", strerror(errno));
		unlink(canonical);
		return false;
	}
	written->created = true;
	written->dev = sb.st_dev;
	written->ino = sb.st_ino;
	return true;
}

/*
 * link_canonical
 *		Give the staging file's inode (in, already checked: a regular file
 *		of the expected size) the canonical name too.  The link is made
 *		through /proc/self/fd, so it names exactly the inode that was
 *		opened, checked and fsync'd, even if the staging path has been
 *		replaced since (for example by a symbolic link).  An existing
 *		canonical file (an orphan of an attempt that did not commit) is
 *		replaced atomically through a temporary name.  Returns 1 when the
 *		canonical name is durable, 0 when a link cannot be made here (the
 *		caller copies instead), -1 on an error (err set).
 */
static int
link_canonical(int in, const struct stat *insb, const char *dir, const char *canonical,
			   const GwWritten *synced, GwWritten *written, GwError *err)
{
	char		proc[64];
	char		tmp[PATH_MAX];
	bool		already = synced->created && synced->dev == (uint64_t) insb->st_dev &&
		synced->ino == (uint64_t) insb->st_ino;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in);
	if (!already && fsync(in) != 0)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot fsync the staging manifest for %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		return -1;
	}
	if (linkat(AT_FDCWD, proc, AT_FDCWD, canonical, AT_SYMLINK_FOLLOW) != 0)
	{
		if (errno != EEXIST)
			return 0;
		if (!temp_name(dir, tmp, sizeof(tmp)) ||
			linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0)
			return 0;
		if (rename(tmp, canonical) != 0)
		{
			gw_error_set(err, GW_ERR_INTERNAL, "cannot rename the manifest into %s", canonical);
			gw_error_detail(err, "%s", strerror(errno));
			unlink(tmp);
			return -1;
		}
	}
	if (!fsync_dir(dir))
	{
		gw_error_set(err, GW_ERR_INTERNAL, "cannot fsync the directory %s", dir);
		gw_error_detail(err, "%s", strerror(errno));
		unlink(canonical);
		return -1;
	}
	written->created = true;
	written->dev = insb->st_dev;
	written->ino = insb->st_ino;
	return 1;
}

/*
 * local_sync_staging
 *		See GwStorage.sync_staging: fsync the staging file, whose inode
 *		finalize then recognises (a file swapped in since is fsync'd again).
 */
static void
local_sync_staging(GwStorage *st, const char *path, GwWritten *synced)
{
	GwError		err;
	struct stat sb;
	int			fd;

	memset(synced, 0, sizeof(*synced));
	if (!check_path(st->priv, path, &err))
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && fsync(fd) == 0)
	{
		synced->created = true;
		synced->dev = sb.st_dev;
		synced->ino = sb.st_ino;
	}
	close(fd);
}

/*
 * local_finalize
 *		See GwStorage.finalize.
 */
static bool
local_finalize(GwStorage *st, const char *staging, const char *canonical,
			   int64_t size, const GwWritten *synced, GwWritten *written, GwError *err)
{
	LocalStorage *ls = st->priv;
	char		sdir[PATH_MAX];
	char		cdir[PATH_MAX];
	const char *base;
	struct stat sb;
	int			in;
	bool		ok;

	memset(written, 0, sizeof(*written));
	if (!check_path(ls, canonical, err) || !check_path(ls, staging, err))
		return false;
	dir_of(staging, sdir, sizeof(sdir));
	dir_of(canonical, cdir, sizeof(cdir));
	base = strrchr(cdir, '/');
	if (base == NULL || strcmp(base, "/_versions") != 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "canonical manifest %s is not in a _versions directory", canonical);
		return false;
	}
	if (strcmp(sdir, cdir) != 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "staging manifest %s must be in the table's directory %s", staging, cdir);
		return false;
	}

	in = open(staging, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 || fstat(in, &sb) != 0 || !S_ISREG(sb.st_mode))
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "staging manifest %s cannot be read", staging);
		gw_error_detail(err, "%s", strerror(errno));
		if (in >= 0)
			close(in);
		return false;
	}
	if ((int64_t) sb.st_size != size)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT,
					 "staging manifest %s is %lld bytes, manifest_size says %lld",
					 staging, (long long) sb.st_size, (long long) size);
		close(in);
		return false;
	}
	if (strcmp(staging, canonical) == 0)
	{
		close(in);
		return true;
	}

	/* An identical canonical manifest (an idempotent retry) is kept. */
	if (lstat(canonical, &sb) == 0)
	{
		int			cur;

		if (!S_ISREG(sb.st_mode))
		{
			gw_error_set(err, GW_ERR_INVALID_INPUT,
						 "canonical manifest %s exists and is not a regular file", canonical);
			close(in);
			return false;
		}
		cur = open(canonical, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (cur >= 0)
		{
			bool		same = ((int64_t) sb.st_size == size && same_content(in, cur, size));

			close(cur);
			if (same)
			{
				close(in);
				return true;
			}
		}
	}

	{
		struct stat insb;
		int			linked = !gw_config.manifest_copy && fstat(in, &insb) == 0 ?
			link_canonical(in, &insb, cdir, canonical, synced, written, err) : 0;

		ok = linked > 0 || (linked == 0 && write_canonical(in, cdir, canonical, size, written, err));
	}
	close(in);
	return ok;
}

/*
 * local_discard
 *		See GwStorage.discard: unlink canonical if it is still the file
 *		finalize wrote.
 */
static void
local_discard(GwStorage *st, const char *canonical, const GwWritten *written)
{
	struct stat sb;
	char		dir[PATH_MAX];

	(void) st;
	if (!written->created)
		return;
	if (lstat(canonical, &sb) == 0 && (uint64_t) sb.st_dev == written->dev &&
		(uint64_t) sb.st_ino == written->ino)
	{
		unlink(canonical);
		dir_of(canonical, dir, sizeof(dir));
		fsync_dir(dir);
	}
}

/*
 * local_remove
 *		See GwStorage.remove.
 */
static void
local_remove(GwStorage *st, const char *path)
{
	GwError		err;
	struct stat sb;

	if (check_path(st->priv, path, &err) && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		unlink(path);
}

/*
 * open_dir
 *		Open a directory that passes the confinement rules, without
 *		following a symbolic link in its last component.  Returns the
 *		descriptor, or -1 with err set (errno ENOENT when it does not exist).
 */
static int
open_dir(LocalStorage *ls, const char *dir, GwError *err)
{
	int			fd;

	if (!check_lexical(ls, dir, err))
	{
		errno = EINVAL;
		return -1;
	}
	if (!check_real_dir(dir, err))
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
	{
		int			saved = errno;

		gw_error_set(err, GW_ERR_INTERNAL, "cannot open the directory %s", dir);
		gw_error_detail(err, "%s", strerror(saved));
		errno = saved;
	}
	return fd;
}

/*
 * age_ms
 *		Milliseconds since the inode of sb last changed (its ctime: a new
 *		name, link or rename sets it, so a file that just got its name is
 *		young even if its bytes are old).
 */
static int64_t
age_ms(const struct stat *sb)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (int64_t) (now.tv_sec - sb->st_ctim.tv_sec) * 1000 +
		(now.tv_nsec - sb->st_ctim.tv_nsec) / 1000000;
}

/*
 * cmp_file
 *		qsort comparator of GwFileInfo by name.
 */
static int
cmp_file(const void *a, const void *b)
{
	return strcmp(((const GwFileInfo *) a)->name, ((const GwFileInfo *) b)->name);
}

/*
 * local_list
 *		See GwStorage.list.  Entries are examined with fstatat() relative to
 *		the opened directory, never following a symbolic link.
 */
static bool
local_list(GwStorage *st, const char *dir, GwFileInfo **files, int *nfiles, GwError *err)
{
	LocalStorage *ls = st->priv;
	GwFileInfo *out = NULL;
	int			n = 0;
	int			cap = 0;
	DIR		   *d;
	int			fd;

	*files = NULL;
	*nfiles = 0;
	fd = open_dir(ls, dir, err);
	if (fd < 0)
		return errno == ENOENT;
	d = fdopendir(fd);
	if (d == NULL)
	{
		int			saved = errno;

		gw_error_set(err, GW_ERR_INTERNAL, "cannot read the directory %s", dir);
		gw_error_detail(err, "%s", strerror(saved));
		close(fd);
		return false;
	}
	for (;;)
	{
		struct dirent *de;
		struct stat sb;
		size_t		len;

		errno = 0;
		de = readdir(d);
		if (de == NULL)
			break;
		len = strlen(de->d_name);
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			len >= sizeof(out->name))
			continue;
		if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
			continue;			/* gone since, or not a regular file */
		if (n == cap)
		{
			int			ncap = cap ? cap * 2 : 64;
			GwFileInfo *grown = realloc(out, ncap * sizeof(GwFileInfo));

			if (grown == NULL)
			{
				gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
				free(out);
				closedir(d);
				return false;
			}
			out = grown;
			cap = ncap;
		}
		memcpy(out[n].name, de->d_name, len + 1);
		out[n].age_ms = age_ms(&sb);
		out[n].dev = sb.st_dev;
		out[n].ino = sb.st_ino;
		n++;
	}
	if (errno != 0)
	{
		int			saved = errno;

		gw_error_set(err, GW_ERR_INTERNAL, "cannot read the directory %s", dir);
		gw_error_detail(err, "%s", strerror(saved));
		free(out);
		closedir(d);
		return false;
	}
	closedir(d);
	if (n > 1)
		qsort(out, n, sizeof(GwFileInfo), cmp_file);
	*files = out;
	*nfiles = n;
	return true;
}

/*
 * local_remove_listed
 *		See GwStorage.remove_listed.  The name is looked up and unlinked
 *		relative to the opened directory, so no path component can be
 *		swapped for a symbolic link in between.
 */
static int
local_remove_listed(GwStorage *st, const char *dir, const GwFileInfo *file,
					int64_t min_age_ms, GwError *err)
{
	LocalStorage *ls = st->priv;
	struct stat sb;
	int			fd;
	int			rc = 0;

	if (file->name[0] == '\0' || strchr(file->name, '/') != NULL ||
		strcmp(file->name, ".") == 0 || strcmp(file->name, "..") == 0)
	{
		gw_error_set(err, GW_ERR_INVALID_INPUT, "invalid file name in %s: %s", dir, file->name);
		return -1;
	}
	fd = open_dir(ls, dir, err);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstatat(fd, file->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
		(uint64_t) sb.st_dev == file->dev && (uint64_t) sb.st_ino == file->ino &&
		age_ms(&sb) >= min_age_ms)
	{
		if (unlinkat(fd, file->name, 0) != 0)
		{
			int			saved = errno;

			if (saved != ENOENT)
			{
				gw_error_set(err, GW_ERR_INTERNAL, "cannot remove %s/%s", dir, file->name);
				gw_error_detail(err, "%s", strerror(saved));
				rc = -1;
			}
		}
		else if (fsync(fd) != 0)
		{
			int			saved = errno;

			gw_error_set(err, GW_ERR_INTERNAL, "removed %s/%s but cannot fsync the directory",
						 dir, file->name);
			gw_error_detail(err, "%s", strerror(saved));
			rc = -1;
		}
		else
			rc = 1;
	}
	close(fd);
	return rc;
}

/*
 * gw_storage_local_create
 *		A local backend confined to root (which must exist).
 */
GwStorage *
gw_storage_local_create(const char *root, GwError *err)
{
	GwStorage  *st = calloc(1, sizeof(GwStorage));
	LocalStorage *ls = calloc(1, sizeof(LocalStorage));

	if (st == NULL || ls == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if (realpath(root, ls->root) == NULL)
	{
		gw_error_set(err, GW_ERR_INTERNAL, "root directory %s is not accessible: %s",
					 root, strerror(errno));
		free(st);
		free(ls);
		return NULL;
	}
	ls->rootlen = strlen(ls->root);
	st->name = "local";
	st->stat_staging = local_stat_staging;
	st->finalize = local_finalize;
	st->sync_staging = local_sync_staging;
	st->discard = local_discard;
	st->remove = local_remove;
	st->list = local_list;
	st->remove_listed = local_remove_listed;
	st->priv = ls;
	return st;
}
