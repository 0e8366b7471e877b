/*-------------------------------------------------------------------------
 *
 * storage_local.c
 *	  Local-filesystem storage backend.  Every path must be absolute, lie
 *	  under the catalog root, have no empty, "." or ".." components and no
 *	  symbolic link in its directories (its real path is its lexical path);
 *	  leaves must be regular files.  The directory is opened once per
 *	  operation, confined to the root in the same step that resolves it
 *	  (open_confined_dir), and every file operation is then made relative
 *	  to that descriptor, so a directory swapped for a symbolic link after
 *	  the check cannot redirect it.  A canonical manifest is the staging
 *	  file's inode under a second name: the staging file is fsync'd, hard
 *	  linked to the canonical name, and the directory fsync'd; no bytes are
 *	  copied and no inode is created.  Where a hard link cannot be made (a
 *	  file the gateway may not link, another file system) the staging bytes
 *	  are copied to a temporary file in the same directory, fsync'd and
 *	  renamed into place, and the directory fsync'd.  When the catalog
 *	  holds the staged bytes (publish.c) neither is fsync'd: the link or
 *	  copy must hold exactly those bytes, and republish/sync_published
 *	  later make it durable, in groups.  For --sweep
 *	  (sweep.c) it lists the regular files of a directory and removes one
 *	  of them, by name relative to the opened directory, only if it is
 *	  still the file that was listed.  Only present, a hint that a
 *	  reader's check may stop at, looks a path up as a client does (for
 *	  the gateway's root, through the cache of storage_presence.c).
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "manifest_rules.h"
#include "storage.h"

static bool local_read_staging(GwStorage *st, const char *path, size_t max, bool keep,
							   GwStaged *staged, GwError *err);
static int	local_republish(GwStorage *st, const char *canonical, const unsigned char *bytes,
							size_t len, bool flush, GwError *err);
static bool local_sync_published(GwStorage *st, const char *const *paths, int n,
								 GwError *err);

typedef struct LocalStorage
{
	char		root[PATH_MAX];
	size_t		rootlen;
	int			rootfd;			/* O_PATH descriptor of root */
	bool		cached;			/* present asks storage_presence.c */
} LocalStorage;

/* 0: not tried yet, 1: openat2 works, -1: the kernel refuses it */
static atomic_int have_openat2;

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

	if (path[0] != '/' || len >= PATH_MAX - 64)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "manifest path must be an absolute path: %s", path);
		return false;
	}
	if (!(ls->rootlen == 1 ||
		  (strncmp(path, ls->root, ls->rootlen) == 0 && path[ls->rootlen] == '/')))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "manifest path is outside the catalog root %s: %s", ls->root, path);
		return false;
	}
	if (!gw_storage_plain_components(path + 1))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "manifest path has an empty, \".\" or \"..\" component: %s", path);
		return false;
	}
	return true;
}

/*
 * walk_nofollow
 *		open_confined_dir without openat2 (kernels before 5.6, or a seccomp
 *		filter that refuses it): each component below the root is opened
 *		relative to the previous one with O_NOFOLLOW, which is as strict.
 */
static int
walk_nofollow(LocalStorage *ls, const char *rel)
{
	char		comp[NAME_MAX + 1];
	int			cur = ls->rootfd;
	const char *p = rel;

	for (;;)
	{
		const char *slash = strchr(p, '/');
		size_t		n = slash ? (size_t) (slash - p) : strlen(p);
		int			next;
		int			saved;

		if (n > NAME_MAX)
		{
			errno = ENAMETOOLONG;
			next = -1;
		}
		else
		{
			memcpy(comp, p, n);
			comp[n] = '\0';
			next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		saved = errno;
		if (next < 0 && saved == ENOTDIR)
		{
			struct stat sb;

			/* O_DIRECTORY reports a symbolic link as "not a directory" */
			if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
				saved = ELOOP;
		}
		if (cur != ls->rootfd)
			close(cur);
		errno = saved;
		if (next < 0 || slash == NULL)
			return next;
		cur = next;
		p = slash + 1;
	}
}

/*
 * open_confined_dir
 *		Open dir, which passed check_lexical, without following a symbolic
 *		link in any component below the root: openat2() from the root's
 *		descriptor with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so that the
 *		check and the open are one step.  Returns the descriptor, or -1 with
 *		err set (InvalidInput) and errno kept: ENOENT when a component does
 *		not exist, EINVAL for a symbolic link.
 */
static int
open_confined_dir(LocalStorage *ls, const char *dir, GwError *err)
{
	const char *rel = dir[ls->rootlen] == '\0' ? "." : dir + ls->rootlen + 1;
	int			fd = -1;

	if (ls->rootlen == 1)
		rel = dir[1] == '\0' ? "." : dir + 1;
	if (atomic_load(&have_openat2) >= 0)
	{
		struct open_how how = {
			.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int) syscall(SYS_openat2, ls->rootfd, rel, &how, sizeof(how));
		if (fd >= 0)
			atomic_store(&have_openat2, 1);
		else if ((errno == ENOSYS || errno == EPERM) && atomic_load(&have_openat2) == 0)
			atomic_store(&have_openat2, -1);
	}
	if (fd < 0 && atomic_load(&have_openat2) < 0)
		fd = strcmp(rel, ".") == 0 ?
			openat(ls->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : walk_nofollow(ls, rel);
	if (fd < 0)
	{
		int			saved = errno;

		if (saved == ELOOP || saved == EXDEV)
		{
			gw_error_set(err, LANCE_INVALID_INPUT,
						 "manifest directory %s leaves the table location through a symbolic link", dir);
			saved = EINVAL;
		}
		else
		{
			gw_error_set(err, LANCE_INVALID_INPUT, "manifest directory %s is not accessible", dir);
			gw_error_detail(err, "%s", strerror(saved));
		}
		errno = saved;
	}
	return fd;
}

/*
 * open_parent
 *		The confinement rules shared by every operation on a file (see the
 *		file header): check path lexically and open its directory.  Returns
 *		the directory's descriptor and points *base at the file's name, or
 *		-1 with err set and errno kept (see open_confined_dir).
 */
static int
open_parent(LocalStorage *ls, const char *path, const char **base, GwError *err)
{
	char		dir[PATH_MAX];

	if (!check_lexical(ls, path, err))
	{
		errno = EINVAL;
		return -1;
	}
	dir_of(path, dir, sizeof(dir));
	*base = strrchr(path, '/') + 1;
	return open_confined_dir(ls, dir, err);
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
	const char *base;
	int			dfd = open_parent(ls, path, &base, err);
	int			saved;

	if (dfd < 0)
	{
		errno = EINVAL;
		return false;
	}
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) != 0)
	{
		saved = errno;
		close(dfd);
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s cannot be read", path);
		gw_error_detail(err, "%s", strerror(saved));
		errno = saved;
		return false;
	}
	close(dfd);
	if (!S_ISREG(sb.st_mode))
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s is not a regular file", path);
		errno = EINVAL;
		return false;
	}
	*size = (int64_t) sb.st_size;
	return true;
}

/*
 * local_present
 *		See GwStorage.present: one fstatat of the path's text from the root,
 *		or for the gateway's root the presence cache, which makes it when
 *		it must.
 */
static bool
local_present(GwStorage *st, const char *path)
{
	LocalStorage *ls = st->priv;
	const char *rel;
	struct stat sb;
	GwError		ignored;

	if (!check_lexical(ls, path, &ignored))
		return false;
	rel = path + (ls->rootlen == 1 ? 1 : ls->rootlen + 1);
	if (ls->cached)
		return gw_presence_lookup(rel);
	return fstatat(ls->rootfd, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
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
 * same_bytes
 *		True if the open file fd, of fd_size bytes (-1: not known yet),
 *		holds exactly the len bytes of buf.
 */
static bool
same_bytes(int fd, int64_t fd_size, const unsigned char *buf, size_t len)
{
	char		b[65536];
	size_t		off = 0;
	struct stat sb;

	if (fd_size < 0)
		fd_size = fstat(fd, &sb) == 0 ? (int64_t) sb.st_size : -1;
	if (fd_size != (int64_t) len)
		return false;
	while (off < len)
	{
		size_t		want = len - off < sizeof(b) ? len - off : sizeof(b);
		ssize_t		n = pread(fd, b, want, (off_t) off);

		if (n <= 0 || memcmp(b, buf + off, n) != 0)
			return false;
		off += n;
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
 * temp_name
 *		A fresh temporary file name (see GW_TMP_PREFIX), relative to the
 *		manifest's directory.
 */
static void
temp_name(char *buf, size_t size)
{
	snprintf(buf, size, GW_TMP_PREFIX "%ld-%lu" GW_TMP_SUFFIX, (long) getpid(),
			 (unsigned long) atomic_fetch_add(&tmp_counter, 1));
}

/*
 * write_canonical
 *		Copy in to a temporary file beside the canonical name cbase in the
 *		directory dfd and rename it there.  canonical is the full path, for
 *		messages.  With flush the file and the directory are fsync'd;
 *		without, the catalog holds the bytes (publications) and publish.c
 *		makes the name durable later.
 */
static bool
write_canonical(int in, int dfd, const char *cbase, const char *canonical, int64_t size,
				bool flush, GwWritten *written, GwError *err)
{
	char		tmp[64];
	struct stat sb;
	int			out;

	temp_name(tmp, sizeof(tmp));
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot create a temporary manifest beside %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		return false;
	}
	if (!copy_fd(in, out, size) || (flush && fsync(out) != 0) || fstat(out, &sb) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot write the manifest %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		close(out);
		unlinkat(dfd, tmp, 0);
		return false;
	}
	close(out);
	if (renameat(dfd, tmp, dfd, cbase) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot rename the manifest into %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		unlinkat(dfd, tmp, 0);
		return false;
	}
	if (flush && fsync(dfd) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot fsync the directory of %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		unlinkat(dfd, cbase, 0);
		return false;
	}
	written->created = true;
	written->dev = sb.st_dev;
	written->ino = sb.st_ino;
	return true;
}

/*
 * keep_identical
 *		An identical canonical manifest (an idempotent retry) is kept: 1 if
 *		cbase in dfd already holds the size bytes of in, 0 if it does not
 *		exist or differs, -1 (err set) if it is not a regular file.
 */
static int
keep_identical(int in, int dfd, const char *cbase, const char *canonical, int64_t size,
			   GwError *err)
{
	struct stat sb;
	int			cur;
	bool		same;

	if (fstatat(dfd, cbase, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	if (!S_ISREG(sb.st_mode))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "canonical manifest %s exists and is not a regular file", canonical);
		return -1;
	}
	cur = openat(dfd, cbase, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (cur < 0)
		return 0;
	same = ((int64_t) sb.st_size == size && same_content(in, cur, size));
	close(cur);
	return same ? 1 : 0;
}

/*
 * link_canonical
 *		Give the staging file's inode (in, already checked: a regular file
 *		of the expected size) the canonical name cbase in the directory dfd
 *		too.  The link is made through /proc/self/fd, so it names exactly
 *		the inode that was opened, checked and fsync'd, even if the staging
 *		path has been replaced since (for example by a symbolic link).  An
 *		existing canonical file is kept if it holds the same bytes (an
 *		idempotent retry), else (an orphan of an attempt that did not
 *		commit) replaced atomically through a temporary name: linking first
 *		spares a create the look for it.  Without flush nothing is fsync'd
 *		(the catalog holds the bytes).  Returns 1 when the canonical name
 *		is made (durable with flush) or kept (written left unset), 0 when a
 *		link cannot be made here (the caller copies instead), -1 on an
 *		error (err set).
 */
static int
link_canonical(int in, const struct stat *insb, int dfd, const char *cbase,
			   const char *canonical, const GwWritten *synced, bool flush,
			   GwWritten *written, GwError *err)
{
	char		proc[64];
	char		tmp[64];
	bool		already = synced->created && synced->dev == (uint64_t) insb->st_dev &&
		synced->ino == (uint64_t) insb->st_ino;
	int			kept;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in);
	if (flush && !already && fsync(in) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot fsync the staging manifest for %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		return -1;
	}
	if (linkat(AT_FDCWD, proc, dfd, cbase, AT_SYMLINK_FOLLOW) != 0)
	{
		if (errno != EEXIST)
			return 0;
		if ((kept = keep_identical(in, dfd, cbase, canonical, insb->st_size, err)) != 0)
			return kept;
		temp_name(tmp, sizeof(tmp));
		if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) != 0)
			return 0;
		if (renameat(dfd, tmp, dfd, cbase) != 0)
		{
			gw_error_set(err, LANCE_INTERNAL, "cannot rename the manifest into %s", canonical);
			gw_error_detail(err, "%s", strerror(errno));
			unlinkat(dfd, tmp, 0);
			return -1;
		}
	}
	if (flush && fsync(dfd) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot fsync the directory of %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		unlinkat(dfd, cbase, 0);
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
	const char *base;
	int			dfd;
	int			fd;

	memset(synced, 0, sizeof(*synced));
	dfd = open_parent(st->priv, path, &base, &err);
	if (dfd < 0)
		return;
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
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
			   int64_t size, const GwWritten *synced, const GwStaged *staged,
			   const char *row_etag, GwWritten *written, GwError *err)
{
	LocalStorage *ls = st->priv;
	char		sdir[PATH_MAX];
	char		cdir[PATH_MAX];
	const char *base;
	const char *cbase;
	struct stat sb;
	int			dfd;
	int			in;
	bool		ok;
	bool		held = staged != NULL && staged->bytes != NULL;
	bool		reuse = held && staged->open;	/* read_staging's descriptors */

	(void) row_etag;
	memset(written, 0, sizeof(*written));
	if (!check_lexical(ls, canonical, err) || !check_lexical(ls, staging, err))
		return false;
	dir_of(staging, sdir, sizeof(sdir));
	dir_of(canonical, cdir, sizeof(cdir));
	base = strrchr(cdir, '/');
	if (base == NULL || strcmp(base, "/" LANCE_VERSIONS_DIR) != 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "canonical manifest %s is not in a _versions directory", canonical);
		return false;
	}
	if (strcmp(sdir, cdir) != 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "staging manifest %s must be in the table's directory %s", staging, cdir);
		return false;
	}
	dfd = reuse ? staged->dfd : open_confined_dir(ls, cdir, err);
	if (dfd < 0)
		return false;
	cbase = strrchr(canonical, '/') + 1;

	in = reuse ? staged->fd :
		openat(dfd, strrchr(staging, '/') + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 || fstat(in, &sb) != 0 || !S_ISREG(sb.st_mode))
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s cannot be read", staging);
		gw_error_detail(err, "%s", strerror(errno));
		if (in >= 0 && !reuse)
			close(in);
		if (!reuse)
			close(dfd);
		return false;
	}
	if ((int64_t) sb.st_size != size)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "staging manifest %s is %lld bytes, manifest_size says %lld",
					 staging, (long long) sb.st_size, (long long) size);
		ok = false;
	}
	else if (held && !same_bytes(in, sb.st_size, staged->bytes, staged->len))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "staging manifest %s changed while its version was committed", staging);
		ok = false;
	}
	else if (strcmp(staging, canonical) == 0)
		ok = true;
	else
	{
		int			linked = gw_config.manifest_copy ? 0 :
			link_canonical(in, &sb, dfd, cbase, canonical, synced, !held, written, err);

		/* no link: an identical canonical file is kept, else a copy is written */
		if (linked == 0 && (linked = keep_identical(in, dfd, cbase, canonical, size, err)) == 0)
			linked = write_canonical(in, dfd, cbase, canonical, size, !held, written, err) ? 1 : -1;
		ok = linked > 0;
	}
	if (!reuse)
	{
		close(in);
		close(dfd);
	}
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
	GwError		err;
	struct stat sb;
	const char *base;
	int			dfd;

	if (!written->created)
		return;
	dfd = open_parent(st->priv, canonical, &base, &err);
	if (dfd < 0)
		return;
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		(uint64_t) sb.st_dev == written->dev && (uint64_t) sb.st_ino == written->ino &&
		unlinkat(dfd, base, 0) == 0)
		fsync(dfd);
	close(dfd);
}

/*
 * local_remove
 *		See GwStorage.remove.
 */
static void
local_remove(GwStorage *st, const char *path, const GwStaged *staged)
{
	GwError		err;
	struct stat sb;
	const char *base = strrchr(path, '/') + 1;
	bool		kept = staged != NULL && staged->open;
	int			dfd = kept ? staged->dfd : open_parent(st->priv, path, &base, &err);

	if (dfd < 0)
		return;
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
		unlinkat(dfd, base, 0);
	if (!kept)
		close(dfd);
}

/*
 * open_dir
 *		Open a directory that passes the confinement rules (see
 *		open_confined_dir).  Returns the descriptor, or -1 with err set
 *		(errno ENOENT when it does not exist).
 */
static int
open_dir(LocalStorage *ls, const char *dir, GwError *err)
{
	if (!check_lexical(ls, dir, err))
	{
		errno = EINVAL;
		return -1;
	}
	return open_confined_dir(ls, dir, err);
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

		gw_error_set(err, LANCE_INTERNAL, "cannot read the directory %s", dir);
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
				gw_error_set(err, LANCE_INTERNAL, "out of memory");
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
		out[n].etag[0] = '\0';
		out[n].size = (int64_t) sb.st_size;
		n++;
	}
	if (errno != 0)
	{
		int			saved = errno;

		gw_error_set(err, LANCE_INTERNAL, "cannot read the directory %s", dir);
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
		gw_error_set(err, LANCE_INVALID_INPUT, "invalid file name in %s: %s", dir, file->name);
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
				gw_error_set(err, LANCE_INTERNAL, "cannot remove %s/%s", dir, file->name);
				gw_error_detail(err, "%s", strerror(saved));
				rc = -1;
			}
		}
		else if (fsync(fd) != 0)
		{
			int			saved = errno;

			gw_error_set(err, LANCE_INTERNAL, "removed %s/%s but cannot fsync the directory",
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
 * remove_below
 *		Remove what directory fd (named dir, for messages) holds: files and
 *		symbolic links at least min_age_ms old, then each subdirectory's
 *		contents and, once empty, the subdirectory.  Entries are opened
 *		and removed relative to their directory, never following a link.
 *		*kept is set when something young was kept.  False on an error.
 */
static bool
remove_below(int fd, const char *dir, int64_t min_age_ms, long *removed, bool *kept,
			 GwError *err)
{
	int			dfd = dup(fd);
	DIR		   *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	bool		ok = true;

	if (d == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot read the directory %s", dir);
		gw_error_detail(err, "%s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	while (ok)
	{
		struct dirent *de;
		struct stat sb;

		errno = 0;
		de = readdir(d);
		if (de == NULL)
		{
			if (errno != 0)
			{
				gw_error_set(err, LANCE_INTERNAL, "cannot read the directory %s", dir);
				gw_error_detail(err, "%s", strerror(errno));
				ok = false;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(sb.st_mode))
		{
			int			sub = openat(fd, de->d_name,
									 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char	   *subname = NULL;

			if (sub < 0 || asprintf(&subname, "%s/%s", dir, de->d_name) < 0)
			{
				gw_error_set(err, LANCE_INTERNAL, "cannot open the directory %s/%s",
							 dir, de->d_name);
				gw_error_detail(err, "%s", strerror(errno));
				if (sub >= 0)
					close(sub);
				ok = false;
				break;
			}
			ok = remove_below(sub, subname, min_age_ms, removed, kept, err);
			if (ok && fsync(sub) != 0)
				ok = false;
			close(sub);
			free(subname);
			if (ok && unlinkat(fd, de->d_name, AT_REMOVEDIR) != 0 &&
				errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
				ok = false;
			if (!ok && err->code < 0)
			{
				gw_error_set(err, LANCE_INTERNAL, "cannot remove the directory %s/%s",
							 dir, de->d_name);
				gw_error_detail(err, "%s", strerror(errno));
			}
		}
		else if (age_ms(&sb) < min_age_ms)
			*kept = true;
		else if (unlinkat(fd, de->d_name, 0) == 0)
			(*removed)++;
		else if (errno != ENOENT)
		{
			gw_error_set(err, LANCE_INTERNAL, "cannot remove %s/%s", dir, de->d_name);
			gw_error_detail(err, "%s", strerror(errno));
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/*
 * local_remove_tree
 *		See GwStorage.remove_tree.
 */
static bool
local_remove_tree(GwStorage *st, const char *dir, int64_t min_age_ms, long *removed,
				  GwError *err)
{
	LocalStorage *ls = st->priv;
	const char *base;
	bool		kept = false;
	bool		ok;
	int			fd;
	int			pfd;

	*removed = 0;
	fd = open_dir(ls, dir, err);
	if (fd < 0)
	{
		if (errno != ENOENT)
			return false;
		gw_error_clear(err);
		return true;
	}
	ok = remove_below(fd, dir, min_age_ms, removed, &kept, err);
	close(fd);
	if (!ok || kept)
		return ok;
	/* then the directory itself, relative to its parent */
	pfd = open_parent(ls, dir, &base, err);
	if (pfd < 0)
		return errno == ENOENT;
	if (unlinkat(pfd, base, AT_REMOVEDIR) != 0 && errno != ENOENT && errno != ENOTEMPTY &&
		errno != EEXIST)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot remove the directory %s", dir);
		gw_error_detail(err, "%s", strerror(errno));
		ok = false;
	}
	else if (fsync(pfd) != 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "removed %s but cannot fsync its parent", dir);
		gw_error_detail(err, "%s", strerror(errno));
		ok = false;
	}
	close(pfd);
	return ok;
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
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return NULL;
	}
	if (realpath(root, ls->root) == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "root directory %s is not accessible: %s",
					 root, strerror(errno));
		free(st);
		free(ls);
		return NULL;
	}
	ls->rootlen = strlen(ls->root);
	if (gw_config.no_openat2)
		atomic_store(&have_openat2, -1);
	ls->rootfd = open(ls->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ls->rootfd < 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "root directory %s cannot be opened: %s",
					 ls->root, strerror(errno));
		free(st);
		free(ls);
		return NULL;
	}
	st->name = "local";
	st->stat_staging = local_stat_staging;
	st->present = local_present;
	st->finalize = local_finalize;
	st->sync_staging = local_sync_staging;
	st->discard = local_discard;
	st->remove = local_remove;
	st->list = local_list;
	st->remove_listed = local_remove_listed;
	st->remove_tree = local_remove_tree;
	st->read_staging = local_read_staging;
	st->republish = local_republish;
	st->sync_published = local_sync_published;
	st->priv = ls;
	return st;
}

/*
 * gw_storage_local_free
 *		Release a backend of gw_storage_local_create.
 */
void
gw_storage_local_free(GwStorage *st)
{
	LocalStorage *ls;

	if (st == NULL)
		return;
	ls = st->priv;
	close(ls->rootfd);
	free(ls);
	free(st);
}

/*
 * gw_storage_local_cache
 *		Let st's present use the presence cache: the gateway's root only.
 */
void
gw_storage_local_cache(GwStorage *st)
{
	LocalStorage *ls = st->priv;

	gw_presence_init(ls->rootfd);
	ls->cached = true;
}

/*
 * gw_storage_local_root_of
 *		The real path a local backend is confined to.
 */
const char *
gw_storage_local_root_of(GwStorage *st)
{
	return ((LocalStorage *) st->priv)->root;
}

/*
 * local_read_staging
 *		See GwStorage.read_staging.
 */
static bool
local_read_staging(GwStorage *st, const char *path, size_t max, bool keep,
				   GwStaged *staged, GwError *err)
{
	struct stat sb;
	const char *base;
	int			dfd = open_parent(st->priv, path, &base, err);
	int			fd;
	size_t		off = 0;

	memset(staged, 0, sizeof(*staged));
	if (dfd < 0)
	{
		errno = EINVAL;
		return false;
	}
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
	{
		int			saved = fd < 0 ? errno : EINVAL;

		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s cannot be read", path);
		gw_error_detail(err, "%s", strerror(saved));
		if (fd >= 0)
			close(fd);
		close(dfd);
		errno = saved;
		return false;
	}
	if ((size_t) sb.st_size > max || (staged->bytes = malloc(sb.st_size + 1)) == NULL)
	{
		close(fd);
		close(dfd);
		gw_error_set(err, LANCE_INTERNAL, "staging manifest %s is too large to hold", path);
		errno = E2BIG;
		return false;
	}
	while (off < (size_t) sb.st_size)
	{
		ssize_t		n = pread(fd, staged->bytes + off, sb.st_size - off, (off_t) off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += n;
	}
	staged->len = off;
	staged->open = keep && off == (size_t) sb.st_size;
	staged->fd = fd;
	staged->dfd = dfd;
	if (!staged->open)
	{
		close(fd);
		close(dfd);
	}
	if (off != (size_t) sb.st_size)
	{
		free(staged->bytes);
		memset(staged, 0, sizeof(*staged));
		gw_error_set(err, LANCE_INVALID_INPUT, "staging manifest %s changed while it was read", path);
		errno = EIO;
		return false;
	}
	return true;
}

/*
 * local_republish
 *		See GwStorage.republish: keep canonical if it holds exactly bytes,
 *		else write them to a temporary name and rename it into place.
 */
static int
local_republish(GwStorage *st, const char *canonical, const unsigned char *bytes, size_t len,
				bool flush, GwError *err)
{
	const char *cbase;
	int			dfd = open_parent(st->priv, canonical, &cbase, err);
	int			cur;
	int			out;
	char		tmp[64];
	bool		ok;

	if (dfd < 0)
		return -1;
	cur = openat(dfd, cbase, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (cur >= 0)
	{
		bool		same = same_bytes(cur, -1, bytes, len);

		close(cur);
		if (same)
		{
			close(dfd);
			return 0;
		}
	}
	temp_name(tmp, sizeof(tmp));
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	ok = out >= 0;
	for (size_t w = 0; ok && w < len;)
	{
		ssize_t		k = write(out, bytes + w, len - w);

		if (k < 0 && errno == EINTR)
			continue;
		ok = k > 0;
		w += ok ? (size_t) k : 0;
	}
	ok = ok && (!flush || fsync(out) == 0);
	if (out >= 0)
		close(out);
	ok = ok && renameat(dfd, tmp, dfd, cbase) == 0 && (!flush || fsync(dfd) == 0);
	if (!ok)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot republish the manifest %s", canonical);
		gw_error_detail(err, "%s", strerror(errno));
		unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return ok ? 1 : -1;
}

/* threads that flush one group of published files (local_sync_published) */
#define FLUSH_THREADS 8

/* The descriptors of one group, flushed by FLUSH_THREADS threads */
typedef struct FlushGroup
{
	const int  *fds;			/* n files (-1: skip), then ndirs directories */
	int			n;
	int			ndirs;
	int			next;			/* next descriptor to take (mu) */
	int			failed;			/* first that failed, -1 if none (mu) */
	int			failed_errno;	/* (mu) */
	pthread_mutex_t mu;
} FlushGroup;

/*
 * flush_worker
 *		Take the group's descriptors one at a time and flush them: a file's
 *		data (fdatasync) or a directory (fsync).
 */
static void *
flush_worker(void *arg)
{
	FlushGroup *g = arg;

	for (;;)
	{
		int			i;
		int			rc;

		pthread_mutex_lock(&g->mu);
		i = g->failed < 0 && g->next < g->n + g->ndirs ? g->next++ : -1;
		pthread_mutex_unlock(&g->mu);
		if (i < 0)
			return NULL;
		if (g->fds[i] < 0)
			continue;
		rc = i < g->n ? fdatasync(g->fds[i]) : fsync(g->fds[i]);
		if (rc != 0)
		{
			pthread_mutex_lock(&g->mu);
			if (g->failed < 0)
			{
				g->failed = i;
				g->failed_errno = errno;
			}
			pthread_mutex_unlock(&g->mu);
		}
	}
}

/*
 * local_sync_published
 *		See GwStorage.sync_published.  Writeback of every file is started
 *		first (sync_file_range, no wait); then FLUSH_THREADS threads flush
 *		the files' data and each distinct directory concurrently.  Flushed
 *		one after the other, each fdatasync would wait for a journal commit
 *		or a disk cache flush of its own (the first one commits the block
 *		allocations and links of all of them, and every later one still
 *		sends a cache flush): about one flush per file, fewer files per
 *		second than a sustained load creates.  Concurrent flushes share the
 *		journal's commits and the block layer's cache flushes.  Every file
 *		still gets its own fdatasync, which is all POSIX promises anything
 *		for.  Only these files are flushed, not every dirty page of the file
 *		system (syncfs would also write out unrelated data, such as a
 *		writer's data files and PostgreSQL's, and stall the WAL flushes of
 *		the commits meanwhile).
 */
static bool
local_sync_published(GwStorage *st, const char *const *paths, int n, GwError *err)
{
	int		   *fds = malloc(sizeof(int) * (2 * n + 1));
	int		   *dfds = fds != NULL ? fds + n : NULL;
	char	  **dpaths = malloc(sizeof(char *) * (n + 1));	/* dfds' */
	char		dir[PATH_MAX];
	bool		ok = fds != NULL && dpaths != NULL;
	int			ndirs = 0;
	FlushGroup	g;
	pthread_t	threads[FLUSH_THREADS];
	int			nthreads = 0;

	for (int i = 0; fds != NULL && i < n; i++)
		fds[i] = -1;

	/*
	 * One descriptor per directory: confined, lexically checked paths name
	 * the same directory exactly when their text is the same
	 */
	for (int i = 0; ok && i < n; i++)
	{
		const char *base = strrchr(paths[i], '/');
		int			k = ndirs - 1;	/* the rows come by table: the last first */

		if (!check_lexical(st->priv, paths[i], err))
		{
			ok = false;
			break;
		}
		dir_of(paths[i], dir, sizeof(dir));
		while (k >= 0 && strcmp(dpaths[k], dir) != 0)
			k--;
		if (k < 0)
		{
			k = ndirs;
			if ((dfds[k] = open_confined_dir(st->priv, dir, err)) < 0)
			{
				if (errno == ENOENT)
					continue;	/* the table's directory went: nothing to keep */
				ok = false;
				break;
			}
			if ((dpaths[k] = strdup(dir)) == NULL)
			{
				close(dfds[k]);
				gw_error_set(err, LANCE_INTERNAL, "out of memory");
				ok = false;
				break;
			}
			ndirs++;
		}
		fds[i] = openat(dfds[k], base + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fds[i] >= 0)
			(void) sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
	}
	if (ok)
	{
		g.fds = fds;
		g.n = n;
		g.ndirs = ndirs;
		g.next = 0;
		g.failed = -1;
		g.failed_errno = 0;
		pthread_mutex_init(&g.mu, NULL);
		while (nthreads < FLUSH_THREADS && nthreads < n + ndirs &&
			   pthread_create(&threads[nthreads], NULL, flush_worker, &g) == 0)
			nthreads++;
		if (nthreads == 0)
			flush_worker(&g);	/* no thread to be had: flush them here */
		for (int k = 0; k < nthreads; k++)
			pthread_join(threads[k], NULL);
		pthread_mutex_destroy(&g.mu);
		if (g.failed >= 0)
		{
			if (g.failed < n)
				gw_error_set(err, LANCE_INTERNAL, "cannot flush the manifest %s", paths[g.failed]);
			else
				gw_error_set(err, LANCE_INTERNAL, "cannot flush a manifest directory");
			gw_error_detail(err, "%s", strerror(g.failed_errno));
			ok = false;
		}
	}
	if (fds == NULL || dpaths == NULL)
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
	for (int i = 0; fds != NULL && i < n + ndirs; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (int k = 0; dpaths != NULL && k < ndirs; k++)
		free(dpaths[k]);
	free(fds);
	free(dpaths);
	return ok;
}
