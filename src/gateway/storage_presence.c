/*-------------------------------------------------------------------------
 *
 * storage_presence.c
 *	  The manifests under the root that a loop has seen as regular files,
 *	  kept until inotify reports that one of them, or a directory above it,
 *	  was removed, moved or replaced.  It spares a read the system call of
 *	  GwStorage.present (one fstatat costs about 1.7 us on the reference
 *	  machine, where any system call costs 1).
 *
 *	  Why a hit is as true as a fstatat made when it is used: before the
 *	  file is looked up, every directory from the root down to it is
 *	  watched; the kernel queues an event while the unlink or rename that
 *	  causes it runs, and the descriptor is then readable.  A loop has it in
 *	  its epoll set and applies the events (gw_presence_drain) before any
 *	  answer of a wake-up, and a loop answers only requests that came
 *	  before the wake-up (pipeline.c).  A removal that ended before the
 *	  request was sent has therefore been applied when the answer is made.
 *	  Only the loops' threads use the cache; others look the path up.
 *	  Another host's removal on a network file system queues no event, so
 *	  the cache is used only on local file systems.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "storage.h"

#define FILE_SLOTS	32768		/* power of two; at most half of it used */
#define DIR_SLOTS	8192
#define TOMB		((char *) 1)	/* a removed key */
#define WATCH_MASK	(IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | \
					 IN_MOVE_SELF | IN_ONLYDIR)

/* an open-addressed set of relative paths; a directory's carries its watch */
typedef struct Set
{
	char	  **keys;			/* NULL empty, TOMB removed */
	int		   *wds;			/* dirs: the watch of keys[i] */
	int			mask;
	int			used;			/* keys and tombstones */
} Set;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int	rootfd = -1;
static int	ifd = -1;			/* inotify; -1: no cache */
static Set	files;
static Set	dirs;
static int *bywd;				/* a watch's index in dirs, -1 none */
static __thread bool in_loop;

/*
 * hash
 *		FNV-1a of the first len bytes of key.
 */
static unsigned int
hash(const char *key, size_t len)
{
	unsigned int h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char) key[i]) * 16777619u;
	return h;
}

/*
 * set_find
 *		The slot of key (len bytes) in set, or -1.
 */
static int
set_find(const Set *set, const char *key, size_t len)
{
	for (unsigned int i = hash(key, len) & set->mask;; i = (i + 1) & set->mask)
	{
		const char *k = set->keys[i];

		if (k == NULL)
			return -1;
		if (k != TOMB && strncmp(k, key, len) == 0 && k[len] == '\0')
			return (int) i;
	}
}

/*
 * set_add
 *		Add key (len bytes, not in set): its slot, or -1 when the set is
 *		half full or memory is short.
 */
static int
set_add(Set *set, const char *key, size_t len, int wd)
{
	unsigned int i = hash(key, len) & set->mask;
	char	   *copy;

	if (set->used >= (set->mask + 1) / 2 || (copy = strndup(key, len)) == NULL)
		return -1;
	while (set->keys[i] != NULL && set->keys[i] != TOMB)
		i = (i + 1) & set->mask;
	if (set->keys[i] == NULL)
		set->used++;
	set->keys[i] = copy;
	if (set->wds != NULL)
		set->wds[i] = wd;
	return (int) i;
}

/*
 * set_clear
 *		Empty set.
 */
static void
set_clear(Set *set)
{
	for (int i = 0; i <= set->mask; i++)
	{
		if (set->keys[i] != TOMB)
			free(set->keys[i]);
		set->keys[i] = NULL;
	}
	set->used = 0;
}

/*
 * reset
 *		Forget every file and directory, and stop watching.
 */
static void
reset(void)
{
	for (int i = 0; i <= dirs.mask; i++)
		if (dirs.keys[i] != NULL && dirs.keys[i] != TOMB)
			inotify_rm_watch(ifd, dirs.wds[i]);
	set_clear(&files);
	set_clear(&dirs);
	memset(bywd, -1, sizeof(int) * DIR_SLOTS);
}

/*
 * wd_slot
 *		The slot of bywd that holds watch wd, or the empty slot for it.
 */
static int
wd_slot(int wd)
{
	unsigned int i = (unsigned int) wd & (DIR_SLOTS - 1);

	while (bywd[i] >= 0 && dirs.wds[bywd[i]] != wd)
		i = (i + 1) & (DIR_SLOTS - 1);
	return (int) i;
}

/*
 * watch_dir
 *		Watch directory rel (its first len bytes; none: the root).  False
 *		when it cannot be watched, or is a directory watched under another
 *		name (a symbolic link), whose events would name only one of them.
 */
static bool
watch_dir(const char *rel, size_t len)
{
	char		path[PATH_MAX];
	int			wd;
	int			slot;
	int			w;

	if (set_find(&dirs, rel, len) >= 0)
		return true;
	if (snprintf(path, sizeof(path), "/proc/self/fd/%d/%.*s", rootfd, (int) len, rel) >=
		(int) sizeof(path) || (wd = inotify_add_watch(ifd, path, WATCH_MASK)) < 0)
		return false;
	if (bywd[w = wd_slot(wd)] >= 0)
		return false;			/* the same directory by another path */
	if ((slot = set_add(&dirs, rel, len, wd)) < 0)
	{
		inotify_rm_watch(ifd, wd);
		reset();				/* full: start again */
		return false;
	}
	bywd[w] = slot;
	return true;
}

/*
 * watch_above
 *		Watch every directory from the root down to file rel's.
 */
static bool
watch_above(const char *rel)
{
	if (!watch_dir(rel, 0))
		return false;
	for (const char *s = strchr(rel, '/'); s != NULL; s = strchr(s + 1, '/'))
		if (!watch_dir(rel, (size_t) (s - rel)))
			return false;
	return true;
}

/*
 * regular_now
 *		Whether rel names a regular file now (directories followed, the
 *		file itself not).
 */
static bool
regular_now(const char *rel)
{
	struct stat sb;

	return fstatat(rootfd, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
}

/*
 * local_fs
 *		Whether a file system of this type changes only through this
 *		kernel, which queues inotify events for every change: not a
 *		network or cluster file system, nor FUSE.
 */
static bool
local_fs(long type)
{
	return type == EXT4_SUPER_MAGIC || type == XFS_SUPER_MAGIC ||
		type == BTRFS_SUPER_MAGIC || type == TMPFS_MAGIC || type == F2FS_SUPER_MAGIC ||
		type == 0x2fc12fc1;		/* ZFS */
}

/*
 * gw_presence_init
 *		Keep a cache for the root opened as fd, if it is on a local file
 *		system and inotify can be had; without one, every lookup is made.
 */
void
gw_presence_init(int fd)
{
	struct statfs fs;

	rootfd = fd;
	if (fstatfs(fd, &fs) != 0 || !local_fs(fs.f_type))
		return;
	files.keys = calloc(FILE_SLOTS, sizeof(char *));
	dirs.keys = calloc(DIR_SLOTS, sizeof(char *));
	dirs.wds = calloc(DIR_SLOTS, sizeof(int));
	bywd = malloc(sizeof(int) * DIR_SLOTS);
	if (files.keys == NULL || dirs.keys == NULL || dirs.wds == NULL || bywd == NULL ||
		(ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
	{
		fprintf(stderr, "%s: no manifest presence cache: %s\n", GW_PROGRAM, strerror(errno));
		return;
	}
	files.mask = FILE_SLOTS - 1;
	dirs.mask = DIR_SLOTS - 1;
	memset(bywd, -1, sizeof(int) * DIR_SLOTS);
}

/*
 * gw_presence_enter_loop
 *		The calling thread is a loop's, with epoll set ep: the descriptor
 *		joins it as tag, and the loop drains it before it answers, so it
 *		may use the cache.
 */
void
gw_presence_enter_loop(int ep, uint64_t tag)
{
	struct epoll_event ev = {EPOLLIN, {.u64 = tag}};

	in_loop = ifd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, ifd, &ev) == 0;
}

/*
 * apply
 *		One event: a name removed or replaced in a watched directory drops
 *		the file of that name; a watched directory's own change, a lost
 *		watch or lost events drop everything.
 */
static void
apply(const struct inotify_event *ev)
{
	char		path[PATH_MAX];
	int			d;
	int			f;

	if (ev->mask & IN_Q_OVERFLOW)
	{
		reset();
		return;
	}
	if ((d = bywd[wd_slot(ev->wd)]) < 0)
		return;					/* a watch forgotten by reset */
	if (ev->len == 0 || (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) ||
		snprintf(path, sizeof(path), "%s%s%s", dirs.keys[d], dirs.keys[d][0] ? "/" : "",
				 ev->name) >= (int) sizeof(path) ||
		set_find(&dirs, path, strlen(path)) >= 0)
	{
		reset();
		return;
	}
	if ((f = set_find(&files, path, strlen(path))) >= 0)
	{
		free(files.keys[f]);
		files.keys[f] = TOMB;
	}
}

/*
 * gw_presence_drain
 *		Apply the events queued on the descriptor.
 */
void
gw_presence_drain(void)
{
	char		buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t		n;

	pthread_mutex_lock(&lock);
	while ((n = read(ifd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		for (char *p = buf; p < buf + n; p += sizeof(struct inotify_event) +
			 ((struct inotify_event *) p)->len)
			apply((struct inotify_event *) p);
	if (n < 0 && errno != EAGAIN)
		reset();				/* events left unread: forget everything */
	pthread_mutex_unlock(&lock);
}

/*
 * gw_presence_lookup
 *		Whether rel, relative to the root and checked lexically, names a
 *		regular file: from the cache on a loop's thread, else looked up.
 */
bool
gw_presence_lookup(const char *rel)
{
	size_t		len = strlen(rel);
	bool		found;

	if (!in_loop)
		return regular_now(rel);
	pthread_mutex_lock(&lock);
	if (set_find(&files, rel, len) >= 0)
		found = true;
	else if (!watch_above(rel))
		found = regular_now(rel);
	else if ((found = regular_now(rel)) && set_add(&files, rel, len, 0) < 0)
	{
		set_clear(&files);		/* full: start again, watches kept */
		(void) set_add(&files, rel, len, 0);
	}
	pthread_mutex_unlock(&lock);
	return found;
}
