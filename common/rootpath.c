/* rootpath.c: see rootpath.h. */
#include "common/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
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
#define MAX_SYMLINKS 40

struct open_how_ {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

bool rootpath_force_fallback;
static bool openat2_missing;

void rootpath_init(void)
{
	const char *e = getenv("OCIDEC_RESOLVE");
	rootpath_force_fallback = e && strcmp(e, "fallback") == 0;
}

bool path_has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The walk: see the top of rootpath.h. Fills CANON when asked. stack[d]
 * is the directory at depth d; canon holds their names ("/a/b"), so the
 * name of the deepest one is what follows canon's last '/'. */
static int walk(int rootfd, const char *path, int flags, char **canon_out)
{
	size_t depth = 0, cap = 16, clen = 0, pos = 0;
	int *stack = xmalloc(cap * sizeof(*stack));
	char *canon = xstrdup(""), *rest = xstrdup(path);
	bool follow_last = !(flags & O_NOFOLLOW);
	int links = 0, fd = -1, err = 0;

	stack[0] = rootfd;
	for (;;) {
		char comp[NAME_MAX + 1];
		struct stat st;
		size_t len;
		bool is_last;

		while (rest[pos] == '/')
			pos++;
		if (!rest[pos])
			break;
		len = strcspn(rest + pos, "/");
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, rest + pos, len);
		comp[len] = '\0';
		pos += len;
		is_last = rest[pos + strspn(rest + pos, "/")] == '\0';

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (depth > 0) {
				close(stack[depth--]);
				clen = strrchr(canon, '/') - canon;
				canon[clen] = '\0';
			}
			continue;
		}
		fd = openat(stack[depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			err = errno;
			goto out;
		}
		if (S_ISLNK(st.st_mode) && (!is_last || follow_last)) {
			char target[PATH_MAX];
			struct statfs sfs;
			ssize_t n;

			if (++links > MAX_SYMLINKS ||
			    (fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_)) {
				err = ELOOP;  /* a loop, or a magic link */
				goto out;
			}
			n = readlinkat(fd, "", target, sizeof(target) - 1);
			if (n < 0) {
				err = errno;
				goto out;
			}
			close(fd);
			fd = -1;
			target[n] = '\0';
			if (target[0] == '/') {
				while (depth > 0)
					close(stack[depth--]);
				canon[clen = 0] = '\0';
			}
			char *nrest = xasprintf("%s/%s", target, rest + pos);
			free(rest);
			rest = nrest;
			pos = 0;
			continue;
		}
		if (!is_last && !S_ISDIR(st.st_mode)) {
			err = ENOTDIR;
			goto out;
		}
		if (depth + 2 >= cap) {
			cap *= 2;
			stack = xreallocarray(stack, cap, sizeof(*stack));
		}
		stack[++depth] = fd;
		fd = -1;
		canon = xrealloc(canon, clen + len + 2);
		clen += (size_t)sprintf(canon + clen, "/%s", comp);
	}
	/* Reopen the result with the caller's flags; O_NOFOLLOW makes a swap of
	 * the last component for a symlink since we looked fail, not follow. */
	if (depth == 0)
		fd = openat(rootfd, ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	else if ((flags & O_PATH) && !(flags & O_DIRECTORY))
		fd = dup(stack[depth]);
	else
		fd = openat(stack[depth - 1], strrchr(canon, '/') + 1, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		err = errno;
out:
	while (depth > 0)
		close(stack[depth--]);
	free(stack);
	free(rest);
	if (err) {
		if (fd >= 0)
			close(fd);
		free(canon);
		errno = err;
		return -1;
	}
	if (canon_out)
		*canon_out = clen ? canon : (free(canon), xstrdup("/"));
	else
		free(canon);
	return fd;
}

/* The fallback's re-check: the kernel's name for FD must lie under ROOTFD's.
 * Without /proc there is nothing to ask; the walk alone stands then. */
static bool fd_under_root(int rootfd, int fd)
{
	char p1[64], p2[64], root[PATH_MAX], got[PATH_MAX];
	ssize_t a, b;

	snprintf(p1, sizeof(p1), "/proc/self/fd/%d", rootfd);
	snprintf(p2, sizeof(p2), "/proc/self/fd/%d", fd);
	a = readlink(p1, root, sizeof(root) - 1);
	b = readlink(p2, got, sizeof(got) - 1);
	if (a < 0 || b < 0)
		return true;
	root[a] = got[b] = '\0';
	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(got, root, a) == 0 && (got[a] == '\0' || got[a] == '/');
}

int root_open(int rootfd, const char *path, int flags)
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
			return fd;
		openat2_missing = true;  /* old kernel, or a seccomp filter */
	}
	fd = walk(rootfd, path, flags, NULL);
	if (fd >= 0 && !fd_under_root(rootfd, fd)) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	return fd;
}

int root_realpath(int rootfd, const char *path, char **out)
{
	int fd = walk(rootfd, path, O_PATH, out);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void glob_walk(int rootfd, const char *prefix, const char *rest, struct strv *out)
{
	char *comp, *slash, *after;
	DIR *d;
	struct dirent *de;
	int fd;

	while (*rest == '/')
		rest++;
	if (!*rest) {
		fd = root_open(rootfd, *prefix ? prefix : "/", O_PATH | O_NOFOLLOW);
		if (fd >= 0) {
			close(fd);
			strv_push(out, *prefix ? prefix : "/");
		}
		return;
	}
	slash = strchr(rest, '/');
	comp = slash ? xstrndup(rest, slash - rest) : xstrdup(rest);
	after = slash ? slash : "";
	if (!path_has_glob(comp)) {
		char *np = xasprintf("%s/%s", prefix, comp);
		glob_walk(rootfd, np, after, out);
		free(np);
		free(comp);
		return;
	}
	fd = root_open(rootfd, *prefix ? prefix : "/", O_RDONLY | O_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		free(comp);
		return;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fnmatch(comp, de->d_name, FNM_PERIOD) == 0) {
			char *np = xasprintf("%s/%s", prefix, de->d_name);
			glob_walk(rootfd, np, after, out);
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

void root_glob(int rootfd, const char *pattern, struct strv *out)
{
	size_t first = out->n;

	glob_walk(rootfd, "", pattern, out);
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
}

int reopen_regular(int pathfd, int rootfd, const char *path, bool in_root, struct stat *st)
{
	char proc[64];
	struct stat st2;
	int fd;

	if (fstat(pathfd, st) < 0)
		return -1;
	if (!S_ISREG(st->st_mode))
		return -2;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
	/* openat, not open: musl's open adds an fcntl for O_CLOEXEC */
	fd = openat(AT_FDCWD, proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 || errno != ENOENT)
		return fd;  /* the same inode, by construction */
	fd = in_root ? root_open(rootfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
		     : openat(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;  /* swapped while we looked */
		return -1;
	}
	return fd;
}
