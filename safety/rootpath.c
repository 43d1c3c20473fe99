/* rootpath.c: see rootpath.h. */
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define RESOLVE_NO_MAGICLINKS_ 0x02
#define RESOLVE_IN_ROOT_ 0x10
#define PROC_SUPER_MAGIC_ 0x9fa0

struct open_how_ {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

bool rootpath_force_fallback;
int proc_fd = -1;
static bool openat2_missing;

void rootpath_init(const char *resolver)
{
	rootpath_force_fallback = resolver && strcmp(resolver, "fallback") == 0;
	proc_open();
}

void proc_open(void)
{
	if (proc_fd < 0) {
		struct statfs sfs;
		proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (proc_fd >= 0 && (fstatfs(proc_fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC_)) {
			close(proc_fd);  /* not procfs: nothing to trust there */
			proc_fd = -1;
		}
	}
}

/* ---- mounts ---- */

static int fdinfo_mnt_id(int fd, uint64_t *id)
{
	char path[64], buf[512];
	ssize_t n;
	int f;
	char *p;

	if (proc_fd < 0) {
		errno = ENOSYS;
		return -1;
	}
	snprintf(path, sizeof(path), "self/fdinfo/%d", fd);
	f = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "mnt_id:");
	if (!p) {
		errno = ENOSYS;
		return -1;
	}
	*id = strtoull(p + 7, NULL, 10);
	return 0;
}

/* struct statx as far as stx_mnt_id (musl 1.2.3 has no statx wrapper). */
struct statx_ {
	uint32_t stx_mask, stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink, stx_uid, stx_gid;
	uint16_t stx_mode, spare0;
	uint64_t stx_ino, stx_size, stx_blocks, stx_attributes_mask;
	struct { int64_t sec; uint32_t nsec; int32_t reserved; } ts[4];
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t stx_mnt_id;
	uint64_t spare[18];
};

int fd_mnt_id(int fd, uint64_t *id)
{
	struct statx_ stx;

	if (!rootpath_force_fallback &&
	    syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID)) {
		*id = stx.stx_mnt_id;
		return 0;
	}
	return fdinfo_mnt_id(fd, id);
}

/* The confined roots: few (one per rootfs the process works in). */
struct confine {
	int rootfd;
	uint64_t *ids;
	size_t n;
};
static struct confine confined[4];

static struct confine *confine_of(int rootfd)
{
	for (size_t i = 0; i < sizeof(confined) / sizeof(*confined); i++)
		if (confined[i].ids && confined[i].rootfd == rootfd)
			return &confined[i];
	return NULL;
}

void root_confine(int rootfd)
{
	uint64_t id;

	for (size_t i = 0; i < sizeof(confined) / sizeof(*confined); i++) {
		if (!confined[i].ids) {
			confined[i] = (struct confine){ rootfd, xmalloc(sizeof(uint64_t)), 0 };
			if (fd_mnt_id(rootfd, &id) == 0)
				confined[i].ids[confined[i].n++] = id;
			return;
		}
	}
	abort();  /* more roots at once than any caller has */
}

void root_confine_allow(int rootfd, uint64_t id)
{
	struct confine *c = confine_of(rootfd);

	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->ids[i] == id)
			return;
	c->ids = xreallocarray(c->ids, c->n + 1, sizeof(*c->ids));
	c->ids[c->n++] = id;
}

void root_unconfine(int rootfd)
{
	struct confine *c = confine_of(rootfd);

	if (c) {
		free(c->ids);
		memset(c, 0, sizeof(*c));
	}
}

bool root_confined(int rootfd)
{
	return confine_of(rootfd) != NULL;
}

int root_check_mount(int rootfd, int fd)
{
	struct confine *c = confine_of(rootfd);
	uint64_t id;

	if (!c)
		return 0;
	if (fd_mnt_id(fd, &id) == 0)
		for (size_t i = 0; i < c->n; i++)
			if (c->ids[i] == id)
				return 0;
	errno = EXDEV;
	return -1;
}

bool path_has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The walk: see the top of rootpath.h. Fills CANON when asked. stack[d]
 * is the directory at depth d; canon holds their names ("/a/b"), so the
 * name of the deepest one is what follows canon's last '/'. */
/* The fallback resolver's state: the descriptors of the directories
 * walked so far (stack[0] is the root), their canonical path, and what is
 * left of the path to resolve. */
struct walk {
	int *stack;
	size_t depth, cap;
	char *canon;
	size_t clen;
	char *rest;
	size_t pos;
	int links;
};

/* ".." : one directory up, never above the root */
static void walk_up(struct walk *w)
{
	if (w->depth == 0)
		return;
	close(w->stack[w->depth--]);
	w->clen = (size_t)(strrchr(w->canon, '/') - w->canon);
	w->canon[w->clen] = '\0';
}

/* A directory (or the last component) reached: FD, named COMP, goes on the stack. */
static void walk_push(struct walk *w, int fd, const char *comp)
{
	if (w->depth + 2 >= w->cap) {
		w->cap *= 2;
		w->stack = xreallocarray(w->stack, w->cap, sizeof(*w->stack));
	}
	w->stack[++w->depth] = fd;
	w->canon = xrealloc(w->canon, w->clen + strlen(comp) + 2);
	w->clen += (size_t)sprintf(w->canon + w->clen, "/%s", comp);
}

/* The symlink FD (closed here): its text replaces it in what is left, from
 * the root when absolute. 0, or an errno (a loop, a magic link). */
static int walk_follow(struct walk *w, int fd)
{
	char target[PATH_MAX], *nrest;
	struct statfs sfs;
	ssize_t n;

	if (++w->links > MAX_SYMLINKS || (fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_)) {
		close(fd);
		return ELOOP;  /* a loop, or a magic link */
	}
	n = readlinkat(fd, "", target, sizeof(target) - 1);
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	close(fd);
	target[n] = '\0';
	if (target[0] == '/') {
		while (w->depth > 0)
			close(w->stack[w->depth--]);
		w->canon[w->clen = 0] = '\0';
	}
	nrest = xasprintf("%s/%s", target, w->rest + w->pos);
	free(w->rest);
	w->rest = nrest;
	w->pos = 0;
	return 0;
}

/* The result reopened with the caller's FLAGS; O_NOFOLLOW makes a swap of
 * the last component for a symlink since we looked fail, not follow. */
static int walk_reopen(const struct walk *w, int rootfd, int flags)
{
	if (w->depth == 0)
		return openat(rootfd, ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	if ((flags & O_PATH) && !(flags & O_DIRECTORY))
		return dup(w->stack[w->depth]);
	return openat(w->stack[w->depth - 1], strrchr(w->canon, '/') + 1, flags | O_NOFOLLOW | O_CLOEXEC);
}

static int walk(int rootfd, const char *path, int flags, char **canon_out)
{
	struct walk w = { .cap = 16, .canon = xstrdup(""), .rest = xstrdup(path) };
	bool follow_last = !(flags & O_NOFOLLOW);
	int fd = -1, err = 0;

	w.stack = xmalloc(w.cap * sizeof(*w.stack));
	w.stack[0] = rootfd;
	for (;;) {
		char comp[NAME_MAX + 1];
		struct stat st;
		size_t len;
		bool is_last;

		while (w.rest[w.pos] == '/')
			w.pos++;
		if (!w.rest[w.pos])
			break;
		len = strcspn(w.rest + w.pos, "/");
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, w.rest + w.pos, len);
		comp[len] = '\0';
		w.pos += len;
		is_last = w.rest[w.pos + strspn(w.rest + w.pos, "/")] == '\0';

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			walk_up(&w);
			continue;
		}
		fd = openat(w.stack[w.depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			err = errno;
			goto out;
		}
		if (S_ISLNK(st.st_mode) && (!is_last || follow_last)) {
			err = walk_follow(&w, fd);
			fd = -1;
			if (err)
				goto out;
			continue;
		}
		if (!is_last && !S_ISDIR(st.st_mode)) {
			err = ENOTDIR;
			goto out;
		}
		walk_push(&w, fd, comp);
		fd = -1;
	}
	fd = walk_reopen(&w, rootfd, flags);
	if (fd < 0)
		err = errno;
out:
	while (w.depth > 0)
		close(w.stack[w.depth--]);
	free(w.stack);
	free(w.rest);
	if (err) {
		if (fd >= 0)
			close(fd);
		free(w.canon);
		errno = err;
		return -1;
	}
	if (canon_out)
		*canon_out = w.clen ? w.canon : (free(w.canon), xstrdup("/"));
	else
		free(w.canon);
	return fd;
}

/* The fallback's re-check: the kernel's name for FD must lie under ROOTFD's.
 * Without /proc there is nothing to ask; the walk alone stands then. */
static bool fd_under_root(int rootfd, int fd)
{
	char p1[64], p2[64], root[PATH_MAX], got[PATH_MAX];
	ssize_t a, b;

	if (proc_fd < 0)
		return true;
	snprintf(p1, sizeof(p1), "self/fd/%d", rootfd);
	snprintf(p2, sizeof(p2), "self/fd/%d", fd);
	a = readlinkat(proc_fd, p1, root, sizeof(root) - 1);
	b = readlinkat(proc_fd, p2, got, sizeof(got) - 1);
	if (a < 0 || b < 0)
		return true;
	root[a] = got[b] = '\0';
	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(got, root, a) == 0 && (got[a] == '\0' || got[a] == '/');
}

static int root_open_(int rootfd, const char *path, int flags, bool any_mount)
{
	int fd;

	if (!rootpath_force_fallback && !openat2_missing) {
		struct open_how_ how = {
			.flags = (uint64_t)(flags | O_CLOEXEC),
			.resolve = RESOLVE_IN_ROOT_ | RESOLVE_NO_MAGICLINKS_,
		};
		for (int tries = 0; tries < 8; tries++) {
			fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
			if (fd >= 0 || errno != EAGAIN)
				break;
		}
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG))
			goto check;
		openat2_missing = true;  /* old kernel, or a seccomp filter */
	}
	fd = walk(rootfd, path, flags, NULL);
	if (fd >= 0 && !fd_under_root(rootfd, fd)) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
check:
	if (fd >= 0 && !any_mount && root_check_mount(rootfd, fd) < 0) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	return fd;
}

int root_open(int rootfd, const char *path, int flags)
{
	return root_open_(rootfd, path, flags, false);
}

DIR *root_opendir(int rootfd, const char *path)
{
	int fd = root_open(rootfd, path, O_RDONLY | O_DIRECTORY), e;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

int root_open_any(int rootfd, const char *path, int flags)
{
	return root_open_(rootfd, path, flags, true);
}

int root_realpath(int rootfd, const char *path, char **out)
{
	int fd = walk(rootfd, path, O_PATH, out);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

struct glob_state {
	int rootfd;
	struct strv *out;
	size_t max, entries;
	bool cut;
};

/* Is there a file at PATH inside ROOTFD (HOST_ROOT: the host's), a link
 * itself (a dangling one too)? */
static bool glob_exists(int rootfd, const char *path)
{
	struct stat st;
	int fd;

	if (rootfd == HOST_ROOT)
		return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	fd = root_open(rootfd, path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void glob_walk(struct glob_state *g, const char *prefix, const char *rest)
{
	char *comp, *slash, *after;
	DIR *d;
	struct dirent *de;

	while (*rest == '/')
		rest++;
	if (g->cut || g->out->n >= g->max || strlen(prefix) + strlen(rest) >= PATH_MAX ||
	    deadline_passed()) {
		g->cut = true;
		return;
	}
	if (!*rest) {
		if (glob_exists(g->rootfd, *prefix ? prefix : "/"))
			strv_push(g->out, *prefix ? prefix : "/");
		return;
	}
	slash = strchr(rest, '/');
	comp = slash ? xstrndup(rest, slash - rest) : xstrdup(rest);
	after = slash ? slash : "";
	if (!path_has_glob(comp)) {
		char *np = xasprintf("%s/%s", prefix, comp);
		glob_walk(g, np, after);
		free(np);
		free(comp);
		return;
	}
	d = g->rootfd == HOST_ROOT ? opendir(*prefix ? prefix : "/") : root_opendir(g->rootfd, *prefix ? prefix : "/");
	if (!d) {
		free(comp);
		return;
	}
	while (!g->cut && (de = readdir(d))) {
		if (++g->entries > g->max * 64) {
			g->cut = true;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (glob_match(comp, de->d_name)) {
			char *np = xasprintf("%s/%s", prefix, de->d_name);
			glob_walk(g, np, after);
			free(np);
		}
	}
	closedir(d);
	free(comp);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int root_glob(int rootfd, const char *pattern, struct strv *out, size_t max)
{
	struct glob_state g = { .rootfd = rootfd, .out = out, .max = out->n + max };
	size_t first = out->n;

	if (strlen(pattern) >= PATH_MAX)
		return -1;
	glob_walk(&g, "", pattern);
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
	return g.cut ? -1 : 0;
}

int reopen_regular(int rootfd, int pathfd, struct stat *st)
{
	if (fstat(pathfd, st) < 0)
		return -1;
	return reopen_regular_stat(rootfd, pathfd, st);
}

int reopen_regular_stat(int rootfd, int pathfd, const struct stat *st)
{
	char proc[64];

	if (!S_ISREG(st->st_mode))
		return -2;
	if (root_confined(rootfd)) {
		if (root_check_mount(rootfd, pathfd) < 0)
			return -1;
		if (!(st->st_mode & S_IROTH)) {
			errno = EACCES;  /* not everyone may read it: its bytes stay where they are */
			return -1;
		}
	}
	if (proc_fd < 0) {
		errno = ENOSYS;  /* no /proc: nothing opens a file by its path again */
		return -1;
	}
	snprintf(proc, sizeof(proc), "self/fd/%d", pathfd);
	return openat(proc_fd, proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* /proc/NAME of the host, read-only: through proc_fd when it is open */
static int proc_file(const char *name)
{
	char path[64];

	if (proc_fd >= 0)
		return openat(proc_fd, name, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

bool in_initial_userns(void)
{
	static int known = -1;
	char buf[256];
	unsigned long a, b, n;
	const char *q;
	_cleanup_close_ int fd = -1;
	ssize_t r;

	if (known >= 0)
		return known;
	fd = proc_file("self/uid_map");
	r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (r <= 0) {
		known = 1;  /* no /proc: no user namespaces to tell apart */
		return true;
	}
	buf[r] = '\0';
	q = buf;
	known = scan_num(&q, &a, 10) && scan_num(&q, &b, 10) && scan_num(&q, &n, 10) && a == 0 && b == 0 &&
		n == 4294967295UL &&
		strchr(buf, '\n') == buf + r - 1;
	return known;
}

unsigned overflow_uid(void)
{
	static unsigned uid;
	char buf[32];
	_cleanup_close_ int fd = -1;
	ssize_t r;

	if (uid)
		return uid;
	uid = 65534;
	fd = proc_file("sys/kernel/overflowuid");
	if (fd >= 0 && (r = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		if (strtoul(buf, NULL, 10) > 0)
			uid = (unsigned)strtoul(buf, NULL, 10);
	}
	return uid;
}

bool owned_by_root(const struct stat *st, const struct stat *parent)
{
	unsigned over = overflow_uid();

	if (st->st_uid == 0)
		return true;
	if (st->st_uid != over || in_initial_userns() || !parent)
		return false;
	return !(parent->st_mode & (S_IWGRP | S_IWOTH)) && (parent->st_uid == 0 || parent->st_uid == over);
}

int root_mkdirs(int rootfd, const char *dir, unsigned flags, int (*before)(const char *path, void *arg, struct oerr *err), void *arg,
		struct oerr *err)
{
	char *path = xstrdup(dir);
	int fd = -1, links = 0;

	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		fd = root_open(rootfd, path, O_PATH | O_DIRECTORY);
		if (fd < 0 && errno == ENOENT) {
			char *slash = strrchr(path, '/'), text[PATH_MAX];
			struct stat st;
			ssize_t l;
			int parent;

			*slash = '\0';
			parent = root_open(rootfd, *path ? path : "/", O_PATH | O_DIRECTORY);
			*slash = '/';
			if ((flags & ROOT_MKDIRS_DANGLING) && parent >= 0 &&
			    fstatat(parent, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode) && ++links <= MAX_SYMLINKS &&
			    (l = readlinkat(parent, slash + 1, text, sizeof(text) - 1)) > 0) {
				/* dangling: continue at what it names */
				char *np;
				text[l] = '\0';
				*p = c;
				if (text[0] == '/')
					np = xasprintf("%s%s", text, p);
				else
					np = xasprintf("%.*s/%s%s", (int)(slash - path), path, text, p);
				close(parent);
				free(path);
				path = np;
				p = path;
				continue;
			}
			if (before && parent >= 0 && before(path, arg, err) < 0) {
				close(parent);
				free(path);
				return -1;
			}
			if (parent >= 0 && root_check_mount(rootfd, parent) < 0) {
				/* a mount the container was given (a volume, the
				 * host's /dev): what is made there is made outside */
				oerr_set(err, 0, "%s: not made: %.*s is a mount from outside the container's image "
					 "(a volume, the host's /dev), where nothing is created", path,
					 slash > path ? (int)(slash - path) : 1, slash > path ? path : "/");
				close(parent);
				free(path);
				return -1;
			}
			if (parent < 0 || (mkdirat(parent, slash + 1, 0755) < 0 && errno != EEXIST)) {
				oerr_set(err, errno, "%s: mkdir", path);
				if (parent >= 0)
					close(parent);
				free(path);
				return -1;
			}
			close(parent);
			fd = root_open(rootfd, path, O_PATH | O_DIRECTORY);
		}
		if (fd < 0) {
			oerr_set(err, errno, "%s", path);
			free(path);
			return -1;
		}
		*p = c;
		if (!c)
			break;
		close(fd);
	}
	free(path);
	return fd;
}
