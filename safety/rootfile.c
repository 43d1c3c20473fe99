/* rootfile.c: see rootfile.h. */
#include "safety/rootfile.h"

#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *root_temp_name(const char *base)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r;
	return xasprintf(".%s.ocidec-%016llx", base, (unsigned long long)r);
}

/* Is NAME one of root_temp_name's? */
static bool is_temp_name(const char *name)
{
	const char *m = strstr(name, ".ocidec-");

	return name[0] == '.' && m && strlen(m + 8) == 16 && strspn(m + 8, "0123456789abcdef") == 16;
}

/* The directory root_dir_hold locked for this process (its writes there
 * take no lock of their own: a second open of it would wait on ours) */
static struct { dev_t dev; ino_t ino; bool held; } held;

static bool is_held(int dfd)
{
	struct stat st;

	return held.held && fstat(dfd, &st) == 0 && st.st_dev == held.dev && st.st_ino == held.ino;
}

void root_dir_hold(int dfd)
{
	struct stat st;

	if (root_dir_lock_sweep(dfd) && fstat(dfd, &st) == 0)
		held.dev = st.st_dev, held.ino = st.st_ino, held.held = true;
}

void root_dir_release(void)
{
	held.held = false;
}

bool root_dir_lock_sweep(int dfd)
{
	struct dirent *de;
	DIR *d;
	int fd, tries = 0;

	while (!is_held(dfd) && flock(dfd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK || ++tries > 40 || deadline_passed())
			return false;
		usleep(5000);
	}
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	while ((de = readdir(d))) {
		struct stat sb;
		if (is_temp_name(de->d_name) && fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISLNK(sb.st_mode) || S_ISREG(sb.st_mode)))
			unlinkat(dfd, de->d_name, 0);
	}
	closedir(d);
	return true;
}

/* BUF (LEN bytes) into the new file FD, its mode MODE, synced when
 * DURABLE; FD closed either way: 0, or -1 with errno */
static int fill_temp(int fd, const void *buf, size_t len, mode_t mode, bool durable)
{
	if (write_all(fd, buf, len) < 0 || fchmod(fd, mode) < 0 || (durable && fsync(fd) < 0)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

int root_write_atomic(int rootfd, const char *path, const void *buf, size_t len, mode_t mode, int durable,
		      struct oerr *err)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = path_dir(path);
	const char *base = slash ? slash + 1 : path;
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *tmp = NULL;
	int fd = -1;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return oerr_set(err, 0, "%s: not a file name", path);
	dfd = root_open(rootfd, dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return oerr_set(err, errno, "%s", dir);
	root_dir_lock_sweep(dfd);
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		free(tmp);
		tmp = root_temp_name(base);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return oerr_set(err, errno, "%s: can't create a temporary file", dir);
	/* the name's old inode, whatever it was (a device node, a FIFO, a
	 * link the image put there), is unlinked, never opened */
	if (fill_temp(fd, buf, len, mode, durable) < 0 || renameat(dfd, tmp, dfd, base) < 0) {
		oerr_set(err, errno ? errno : EIO, "%s", path);
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	if (durable == ROOT_SYNC_DIR)
		fsync(dfd);
	return 0;
}

int root_symlink_atomic(int dirfd, const char *name, const char *text)
{
	for (int tries = 0; tries < 16; tries++) {
		char *tmp = root_temp_name(name);
		int r = symlinkat(text, dirfd, tmp), e;

		if (r == 0 && (r = renameat(dirfd, tmp, dirfd, name)) < 0) {
			e = errno;
			unlinkat(dirfd, tmp, 0);
			errno = e;
		}
		free(tmp);
		if (r == 0 || errno != EEXIST)
			return r;
	}
	return -1;  /* (errno EEXIST) */
}

int root_read_file(int rootfd, const char *path, size_t max, char **buf, size_t *len, struct stat *st,
		   struct oerr *err)
{
	_cleanup_close_ int pfd = root_open(rootfd, path, O_PATH | O_NOFOLLOW);
	_cleanup_close_ int fd = -1;
	struct stat sb;

	if (pfd < 0 && errno == ENOENT)
		return 0;
	if (pfd < 0)
		return oerr_set(err, errno, "%s", path);
	fd = reopen_regular(rootfd, pfd, st ? st : &sb);
	if (fd == -2)
		return oerr_set(err, 0, "%s: not a regular file: left alone", path);
	if (fd < 0)
		return oerr_set(err, errno, "%s", path);
	if (read_fd_all(fd, max, buf, len, err) < 0)
		return oerr_prefix(err, "%s", path);
	return 1;
}
