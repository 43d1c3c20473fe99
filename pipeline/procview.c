/* procview.c: see procview.h. */
#include "pipeline/procview.h"

#include "pipeline/activate.h"
#include "devices/devices.h"
#include "base/log.h"
#include "safety/mountapi.h"
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define PROC_MAGIC 0x9fa0
#define FILE_MAX (64 * 1024)   /* a file of the driver's directory copied */
#define FILES_MAX 64

void proc_view_add(const struct vendor *v, const char *path, struct strv *entries)
{
	size_t dl = v->proc_view ? strlen(v->proc_view) : 0;

	if (entries && path && dl && strncmp(path, v->proc_view, dl) == 0 && path[dl] == '/' && path[dl + 1] &&
	    !strv_contains(entries, path + dl + 1))
		strv_push(entries, path + dl + 1);
}

void proc_view_entries(const struct vendor *v, const struct selection *devices, struct strv *entries)
{
	_cleanup_strv_ struct strv dirs = { 0 };

	if (!v->proc_view || !devices)
		return;
	vendor_device_dirs(v, devices, &dirs);
	for (size_t i = 0; i < dirs.n; i++)
		proc_view_add(v, dirs.v[i], entries);
}

/* Open the directory PATH (relative, "a/b") under DIRFD one component at a
 * time, never through a link, each on a filesystem of type MAGIC (0: any:
 * what is below the container's procfs is the runtime's doing, runc
 * refuses any mount there but a few files, the image makes none). */
static int open_dir_under(int dirfd, const char *path, long magic, int flags)
{
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL;
	int fd = dup(dirfd);

	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next = strcmp(c, "..") == 0 || strcmp(c, ".") == 0 ? (errno = EINVAL, -1)
			   : openat(fd, c, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct statfs sf;

		close(fd);
		fd = next;
		if (fd >= 0 && magic && (fstatfs(fd, &sf) < 0 || (long)sf.f_type != magic)) {
			close(fd);
			fd = -1;
			errno = EXDEV;
		}
	}
	return fd;
}

struct file_copy {
	char name[256];
	char *data;
	size_t len;
};

struct collect {
	int dirfd;
	struct file_copy *files;
	size_t n;
};

static void collect_file(const char *name, void *arg)
{
	struct collect *c = arg;
	struct stat st;
	_cleanup_close_ int fd = -1;
	struct oerr err;

	/* only what every user may read: the view's copies are 0444 */
	if (c->n == FILES_MAX || strlen(name) >= sizeof(c->files[0].name) ||
	    fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IROTH))
		return;
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	strcpy(c->files[c->n].name, name);
	if (read_fd_all(fd, FILE_MAX, &c->files[c->n].data, &c->files[c->n].len, &err) == 0)
		c->n++;
}

/* The content of FILE in the view: SET ("FILE NAME: VALUE") replaces the
 * lines of FILE that start with "NAME:" */
static char *view_text(const struct file_copy *f, const char *set, size_t *len)
{
	const char *sp = set ? strchr(set, ' ') : NULL;
	const char *line = sp ? sp + 1 : NULL, *colon = line ? strchr(line, ':') : NULL;
	size_t nl = colon ? (size_t)(colon - line + 1) : 0, n = 0, lines = 1;
	char *out;

	if (!sp || !colon || colon == line || (size_t)(sp - set) != strlen(f->name) ||
	    strncmp(set, f->name, strlen(f->name)) != 0) {
		*len = f->len;
		out = xmalloc(f->len + 1);
		memcpy(out, f->data, f->len);
		return out;
	}
	for (size_t i = 0; i < f->len; i++)
		lines += f->data[i] == '\n';
	out = xmalloc(f->len + lines * (strlen(line) + 1) + 1);
	for (const char *p = f->data, *end = f->data + f->len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t l = eol ? (size_t)(eol - p + 1) : (size_t)(end - p);

		if (l >= nl && strncmp(p, line, nl) == 0) {
			n += (size_t)sprintf(out + n, "%s\n", line);
		} else {
			memcpy(out + n, p, l);
			n += l;
		}
		p += l;
	}
	*len = n;
	return out;
}

static int write_file(int dirfd, const char *name, const char *data, size_t len)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);

	return fd < 0 ? -1 : write_all(fd, data, len);
}

static int write_file_mode(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	return fd < 0 || fchmod(fd, mode) < 0 ? -1 : write_all(fd, data, len);
}

/* A file entry: its text and its mode (read bits only) */
struct entry_file {
	char *data;
	size_t len;
	mode_t mode;
};

static void read_entry_file(int dirfd, const char *entry, struct entry_file *f)
{
	const char *slash = strrchr(entry, '/');
	_cleanup_free_ char *parent = slash ? xstrndup(entry, (size_t)(slash - entry)) : NULL;
	_cleanup_close_ int pfd = parent ? open_dir_under(dirfd, parent, 0, O_RDONLY) : dup(dirfd);
	_cleanup_close_ int fd = -1;
	struct stat st;
	struct oerr err;

	if (pfd < 0)
		return;
	fd = openat(pfd, slash ? slash + 1 : entry, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    read_fd_all(fd, FILE_MAX, &f->data, &f->len, &err) < 0)
		return;
	f->mode = st.st_mode & 0444;
}

/* The directories of ENTRY ("gpus/X") made under VIEWFD; its descriptor */
static int make_entry_dir(int viewfd, const char *entry)
{
	_cleanup_free_ char *copy = xstrdup(entry);
	char *save = NULL;
	int fd = dup(viewfd);

	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (mkdirat(fd, c, 0555) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}

/* Mounting by descriptor: the new mount API (mountapi.h), else mount(2)
 * through /proc/self/fd, which the container's mount namespace resolves
 * only before pivot_root. */
#define ATTR_RO_ (MOUNT_ATTR_RDONLY_ | MOUNT_ATTR_NOSUID_ | MOUNT_ATTR_NODEV_ | MOUNT_ATTR_NOEXEC_)
#define EMPTY_BOTH_ (MOVE_MOUNT_F_EMPTY_PATH_ | MOVE_MOUNT_T_EMPTY_PATH_)

static int legacy(const char *src, int srcfd, int tgtfd, const char *type, unsigned long flags, const char *data)
{
	char s[64], t[64];

	if (srcfd >= 0)
		snprintf(s, sizeof(s), "/proc/self/fd/%d", srcfd);
	snprintf(t, sizeof(t), "/proc/self/fd/%d", tgtfd);
	return mount(srcfd >= 0 ? s : src, t, type, flags, data);
}

/* make FD's mount (its root) private and, RO, read-only */
static int set_attrs(int fd, bool ro)
{
	struct mount_attr_ a = { .attr_set = ro ? ATTR_RO_ : 0, .propagation = MS_PRIVATE };

	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &a, sizeof(a)) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	if (legacy(NULL, -1, fd, NULL, MS_PRIVATE, NULL) < 0)
		return -1;
	return ro ? legacy(NULL, -1, fd, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			   NULL) : 0;
}

static int mount_tmpfs(int tgtfd)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC_), m = -1, r = -1;

	if (fs < 0)
		return errno == ENOSYS ? legacy("tmpfs", -1, tgtfd, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
						"mode=0555,size=4m") : -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING_, "mode", "0555", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING_, "size", "4m", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE_, NULL, NULL, 0) == 0 &&
	    (m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC_, ATTR_RO_ & ~MOUNT_ATTR_RDONLY_)) >= 0)
		r = (int)syscall(SYS_move_mount, m, "", tgtfd, "", EMPTY_BOTH_);
	close(fs);
	if (m >= 0)
		close(m);
	return r;
}

/* SRCFD's directory bind-mounted read-only on TGTFD */
static int bind_ro(int srcfd, int tgtfd)
{
	struct mount_attr_ a = { .attr_set = ATTR_RO_, .propagation = MS_PRIVATE };
	int t = (int)syscall(SYS_open_tree, srcfd, "", OPEN_TREE_CLONE_ | O_CLOEXEC | AT_EMPTY_PATH), r = -1;

	if (t < 0 && errno == ENOSYS) {
		if (legacy(NULL, srcfd, tgtfd, NULL, MS_BIND, NULL) < 0)
			return -1;
		_cleanup_close_ int top = openat(tgtfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return top < 0 ? -1 : set_attrs(top, true);
	}
	if (t >= 0 && syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &a, sizeof(a)) == 0)
		r = (int)syscall(SYS_move_mount, t, "", tgtfd, "", EMPTY_BOTH_);
	if (t >= 0)
		close(t);
	return r;
}

/* ENTRIES with each "PREFIX/" "*" replaced by the directories in DIRFD's
 * PREFIX (nvidia-cdi-hook's disable-device-node-modification keeps every
 * GPU's entry), into OUT; at most 256 */
static void expand_entries(int dirfd, const struct strv *entries, struct strv *out)
{
	for (size_t i = 0; i < entries->n; i++) {
		const char *e = entries->v[i];
		size_t n = strlen(e);
		_cleanup_free_ char *prefix = NULL;
		int fd;
		DIR *d;
		struct dirent *de;

		if (n < 2 || strcmp(e + n - 2, "/*") != 0) {
			if (!strv_contains(out, e))  /* each once: a second bind would land on the first */
				strv_push(out, e);
			continue;
		}
		prefix = xstrndup(e, n - 2);
		fd = open_dir_under(dirfd, prefix, 0, O_RDONLY);
		if (fd < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((de = readdir(d)) && out->n < 256) {
			_cleanup_free_ char *one = xasprintf("%s/%s", prefix, de->d_name);

			if (de->d_name[0] != '.' && de->d_type == DT_DIR && !strv_contains(out, one))
				strv_push(out, one);
		}
		closedir(d);
	}
}

/* What proc_view_apply holds while it makes the view */
struct view_work {
	struct collect c;          /* the directory's files */
	struct strv all;           /* the entries */
	int *src;                  /* each entry's directory in the procfs (-1: none) */
	struct entry_file *files;  /* each entry that is a file: its content */
};

static void view_work_free(struct view_work *w)
{
	for (size_t i = 0; w->src && i < w->all.n; i++)
		if (w->src[i] >= 0)
			close(w->src[i]);
	for (size_t i = 0; w->files && i < w->all.n; i++)
		free(w->files[i].data);
	free(w->files);
	free(w->src);
	strv_free(&w->all);
	for (size_t i = 0; i < w->c.n; i++)
		free(w->c.files[i].data);
	free(w->c.files);
}
#define _cleanup_view_work_ __attribute__((cleanup(view_work_free)))

int proc_view_apply(int rootfd, const char *dir, const char *set, const struct strv *given, struct oerr *err)
{
	_cleanup_close_ int procfd = -1, dirfd = -1, viewfd = -1;
	_cleanup_view_work_ struct view_work w = { .c = { -1, NULL, 0 } };
	const struct strv *entries = &w.all;
	struct statfs sf;

	/* the container's procfs, and the directory in it */
	procfd = root_open_any(rootfd, "/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	if (procfd < 0 || fstatfs(procfd, &sf) < 0 || (long)sf.f_type != PROC_MAGIC) {
		/* a link (/proc -> /p, procfs there) would show the directory whole */
		return oerr_set(err, procfd < 0 ? errno : EXDEV, "%s: the container's /proc is not a procfs: no "
				"view can be made", dir);
	}
	dirfd = open_dir_under(procfd, dir + strlen("/proc/"), 0, O_RDONLY);
	if (dirfd < 0) {
		log_info("%s: not in the container's procfs (%s): no view needed", dir, strerror(errno));
		return 0;
	}
	if (fstatfs(dirfd, &sf) == 0 && (long)sf.f_type == TMPFS_MAGIC_) {
		log_debug("%s: a view already (a run before)", dir);
		return 0;
	}
	expand_entries(dirfd, given, &w.all);
	w.src = xcalloc(entries->n + 1, sizeof(*w.src));
	for (size_t i = 0; i < entries->n; i++)
		w.src[i] = -1;
	/* what goes into the view, read before it covers the directory */
	w.c.dirfd = dirfd;
	w.c.files = xcalloc(FILES_MAX, sizeof(*w.c.files));
	if (dir_each(dirfd, collect_file, &w.c) < 0)
		return oerr_set(err, errno, "%s: reading", dir);
	/* an entry is a directory (bound), or a file (copied: MIG's access
	 * files, each one of a directory with others') */
	w.files = xcalloc(entries->n + 1, sizeof(*w.files));
	for (size_t i = 0; i < entries->n; i++) {
		w.src[i] = open_dir_under(dirfd, entries->v[i], 0, O_PATH);
		if (w.src[i] < 0 && errno == ENOTDIR)
			read_entry_file(dirfd, entries->v[i], &w.files[i]);
	}

	if (mount_tmpfs(dirfd) < 0)
		return oerr_set(err, errno, "%s: mounting the view", dir);
	viewfd = open_dir_under(procfd, dir + strlen("/proc/"), 0, O_RDONLY);
	if (viewfd < 0 || fstatfs(viewfd, &sf) < 0 || (long)sf.f_type != TMPFS_MAGIC_ || set_attrs(viewfd, false) < 0)
		return oerr_set(err, errno, "%s: the view just mounted", dir);
	for (size_t i = 0; i < w.c.n; i++) {
		size_t len;
		_cleanup_free_ char *text = view_text(&w.c.files[i], set, &len);

		if (write_file(viewfd, w.c.files[i].name, text, len) < 0)
			return oerr_set(err, errno, "%s/%s: in the view", dir, w.c.files[i].name);
	}
	for (size_t i = 0; i < entries->n; i++) {
		_cleanup_free_ char *parent = NULL;
		_cleanup_close_ int t = -1;
		const char *slash = strrchr(entries->v[i], '/');

		if (w.src[i] < 0 && !w.files[i].data)
			continue;
		parent = w.src[i] >= 0 ? xstrdup(entries->v[i])
				       : xstrndup(entries->v[i], slash ? (size_t)(slash - entries->v[i]) : 0);
		t = *parent ? make_entry_dir(viewfd, parent) : dup(viewfd);
		if (t < 0 || (w.src[i] < 0 && write_file_mode(t, slash ? slash + 1 : entries->v[i], w.files[i].data,
							      w.files[i].len, w.files[i].mode) < 0))
			return oerr_set(err, errno, "%s/%s: in the view", dir, entries->v[i]);
	}
	if (set_attrs(viewfd, true) < 0)
		return oerr_set(err, errno, "%s: the view read-only", dir);
	/* each device's entry, bind-mounted read-only from the procfs */
	for (size_t i = 0; i < entries->n; i++) {
		_cleanup_close_ int t = -1;

		if (w.src[i] < 0) {
			if (!w.files[i].data)
				log_warn("%s/%s: not in the container's procfs", dir, entries->v[i]);
			continue;
		}
		t = open_dir_under(viewfd, entries->v[i], TMPFS_MAGIC_, O_PATH);
		if (t < 0 || bind_ro(w.src[i], t) < 0)
			return oerr_set(err, errno, "%s/%s: bind mount", dir, entries->v[i]);
	}
	log_info("%s: the container sees its files and %zu device entr%s", dir, entries->n,
		 entries->n == 1 ? "y" : "ies");
	return 0;
}
