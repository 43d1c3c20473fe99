/* inject.c: see inject.h. */
#include "pipeline/inject.h"
#include "pipeline/appprofile.h"
#include "base/cleanup.h"
#include "safety/mountapi.h"
#include "pipeline/procview.h"

#include "pipeline/devcg.h"
#include "pipeline/edits.h"
#include "formats/elf.h"
#include "formats/ldconfig.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "pipeline/require.h"
#include "safety/rootpath.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/fsuid.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

_Static_assert(EDIT_RDONLY == MOUNT_ATTR_RDONLY_ && EDIT_NOSUID == MOUNT_ATTR_NOSUID_ &&
	       EDIT_NODEV == MOUNT_ATTR_NODEV_ && EDIT_NOEXEC == MOUNT_ATTR_NOEXEC_,
	       "the edit flags are mount_setattr's");

/* One mount edit to apply: its source cloned as a detached mount. The
 * EDIT_* flags are the kernel's MOUNT_ATTR_* values. */
struct job {
	const struct edit_mount *m;
	int tree;               /* detached mount, or -1 */
};

static bool new_api_missing;

/* "legacy" (tests) takes the path of kernels before 5.2. */
void inject_mount_api(const char *mode)
{
	new_api_missing = mode && strcmp(mode, "legacy") == 0;
}

static int prepare(struct job *j, struct oerr *err)
{
	struct mount_attr_ ma = { .attr_set = j->m->flags, .propagation = MS_PRIVATE_ };

	j->tree = -1;
	if (new_api_missing)
		return 0;
	j->tree = (int)syscall(SYS_open_tree, j->m->it->fd, "", OPEN_TREE_CLONE_ | O_CLOEXEC | AT_EMPTY_PATH);
	if (j->tree < 0 && (errno == ENOSYS || errno == EPERM)) {
		new_api_missing = true;
		return 0;
	}
	if (j->tree < 0)
		return oerr_set(err, errno, "%s: open_tree", j->m->source);
	if (syscall(SYS_mount_setattr, j->tree, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0)
		return oerr_set(err, errno, "%s: mount_setattr %s", j->m->source, edit_flags_text(j->m->flags));
	return 0;
}

/* The target CPATH inside ROOTFD, made if missing (a directory for
 * directories, else an empty file), as an O_PATH descriptor of the thing
 * itself. A symlink in the way is replaced: nothing is mounted through one. */
static int make_target(int rootfd, const char *cpath, bool dir, struct oerr *err)
{
	_cleanup_free_ char *parent = xstrdup(cpath);
	char *slash = strrchr(parent, '/');
	const char *name = slash + 1;
	_cleanup_close_ int pfd = -1;
	struct stat st;
	int fd;

	if (slash == parent)
		parent[1] = '\0', name = cpath + 1;
	else
		*slash = '\0';
	pfd = root_mkdirs(rootfd, parent, ROOT_MKDIRS_DANGLING, NULL, NULL, err);
	if (pfd < 0)
		return -1;
	for (int tries = 0; tries < 4; tries++) {
		fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (fstat(fd, &st) < 0) {
				close(fd);
				return oerr_set(err, errno, "%s", cpath);
			}
			if (S_ISLNK(st.st_mode)) {
				close(fd);
				log_info("%s: a symlink in the image; replaced", cpath);
				if (unlinkat(pfd, name, 0) < 0)
					return oerr_set(err, errno, "%s: unlink", cpath);
				continue;
			}
			if (dir != !!S_ISDIR(st.st_mode)) {
				close(fd);
				return oerr_set(err, 0, "%s: exists and is %sa directory", cpath, dir ? "not " : "");
			}
			return fd;
		}
		if (errno != ENOENT)
			return oerr_set(err, errno, "%s", cpath);
		if (root_check_mount(rootfd, pfd) < 0)
			return oerr_set(err, 0, "%s: not made: %s is a mount from outside the container's image "
					"(a volume, the host's /dev), where nothing is created", cpath, parent);
		if (dir) {
			if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
				return oerr_set(err, errno, "%s: mkdir", cpath);
		} else {
			int nfd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (nfd < 0 && errno != EEXIST)
				return oerr_set(err, errno, "%s: create", cpath);
			if (nfd >= 0)
				close(nfd);
		}
	}
	return oerr_set(err, ELOOP, "%s: keeps changing", cpath);
}

static int attach(struct job *j, int rootfd, int tgt, struct oerr *err)
{
	char src[64], dst[64];
	uint64_t id;

	if (j->tree >= 0) {
		if (syscall(SYS_move_mount, j->tree, "", tgt, "",
			    MOVE_MOUNT_F_EMPTY_PATH_ | MOVE_MOUNT_T_EMPTY_PATH_) < 0)
			return oerr_set(err, errno, "%s: move_mount", j->m->destination);
		if (fd_mnt_id(j->tree, &id) == 0)
			root_confine_allow(rootfd, id);  /* the cache reads what it mounted */
		return 0;
	}
	/* A bind mount's source must be in our (now the container's) mount
	 * namespace: before pivot_root the host's tree is still there, so the
	 * source is opened again by its path and must be the same inode. */
	_cleanup_close_ int here = open(j->m->source, O_PATH | O_CLOEXEC);
	struct stat st;

	if (here < 0 || fstat(here, &st) < 0 || st.st_dev != j->m->it->st.st_dev || st.st_ino != j->m->it->st.st_ino)
		return oerr_set(err, here < 0 ? errno : ESTALE,
				"%s: not reachable from the container's mount namespace (without open_tree, "
				"inject only before pivot_root)", j->m->source);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", here);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d", tgt);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return oerr_set(err, errno, "%s: bind mount", j->m->destination);
	/* TGT is the file under the new mount: the remount needs the mount
	 * (found unconfined: it is not on an allowed mount yet) */
	_cleanup_close_ int top = root_open_any(rootfd, j->m->destination, O_PATH | O_NOFOLLOW);
	if (top < 0 || fstat(top, &st) < 0 || st.st_dev != j->m->it->st.st_dev || st.st_ino != j->m->it->st.st_ino)
		return oerr_set(err, top < 0 ? errno : ESTALE, "%s: the new mount is not there", j->m->destination);
	if (fd_mnt_id(top, &id) == 0)
		root_confine_allow(rootfd, id);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d", top);
	if (mount(NULL, dst, NULL, MS_PRIVATE, NULL) < 0 ||
	    mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT |
		  (j->m->flags & EDIT_RDONLY ? MS_RDONLY : 0) |
		  (j->m->flags & EDIT_NOSUID ? MS_NOSUID : 0) |
		  (j->m->flags & EDIT_NODEV ? MS_NODEV : 0) |
		  (j->m->flags & EDIT_NOEXEC ? MS_NOEXEC : 0), NULL) < 0)
		return oerr_set(err, errno, "%s: remount %s", j->m->destination, edit_flags_text(j->m->flags));
	return 0;
}

static void jobs_free(struct job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].tree >= 0)
			close(jobs[i].tree);
	free(jobs);
}

struct shared_check {
	uint64_t ids[2];
	bool found[2], shared[2], tmpfs[2];
};

static int note_shared(const struct mountinfo_line *l, void *arg)
{
	struct shared_check *c = arg;

	for (int i = 0; i < 2; i++) {
		if (l->id == c->ids[i] && !c->found[i]) {
			c->found[i] = true;
			c->shared[i] = strstr(l->optional, "shared:") != NULL;
			c->tmpfs[i] = strcmp(l->fstype, "tmpfs") == 0;
		}
	}
	return 0;
}

/* Confine ROOTFD: its own mount, and the runtime's /dev when that is a tmpfs
 * of the container's (not the host's devtmpfs, not a volume). Refuses a root
 * or /dev whose mount is shared (or not found in the mount table of the
 * namespace entered): a mount made below it would propagate to a peer in
 * another namespace. */
static int confine_rootfs(int rootfd, const char *rootfs, struct oerr *err)
{
	_cleanup_close_ int dev = root_open_any(rootfd, "/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	struct shared_check c = { 0 };
	struct statfs sfs;
	bool own_dev;

	if (fd_mnt_id(rootfd, &c.ids[0]) < 0)
		return oerr_set(err, errno, "%s: its mount", rootfs);
	own_dev = dev >= 0 && fd_mnt_id(dev, &c.ids[1]) == 0 && c.ids[1] != c.ids[0] &&
		  fstatfs(dev, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_;
	if (proc_fd < 0 || mountinfo_each(proc_fd, note_shared, &c) < 0)
		return oerr_set(err, errno, "%s: the mount table of the container's namespace", rootfs);
	/* the host's devtmpfs bound there (Enroot's, podman -v /dev:/dev) has
	 * tmpfs's magic too: the mount table names it; and a /dev that is the
	 * very file system of this namespace's /dev (a host whose /dev is a
	 * tmpfs: Enroot in a pod) is no container's own either */
	own_dev = own_dev && (!c.found[1] || c.tmpfs[1]);
	if (own_dev) {
		struct stat rs, slash, ds, hs;
		bool pivoted = fstat(rootfd, &rs) == 0 && stat("/", &slash) == 0 && rs.st_dev == slash.st_dev &&
			       rs.st_ino == slash.st_ino;

		if (!pivoted && fstat(dev, &ds) == 0 && stat("/dev", &hs) == 0 && ds.st_dev == hs.st_dev)
			own_dev = false;
	}
	if (!c.found[0] || c.shared[0])
		return oerr_set(err, 0, "%s: the container's root is a shared mount: mounts made in it would "
				"propagate to other mount namespaces; refused", rootfs);
	if (own_dev && (!c.found[1] || c.shared[1]))
		return oerr_set(err, 0, "%s/dev: a shared mount: mounts made in it would propagate to "
				"other mount namespaces; refused", rootfs);
	root_confine(rootfd);
	if (own_dev)
		root_confine_allow(rootfd, c.ids[1]);
	return 0;
}

/* The id (in our user namespace) that id 0 of PID's user namespace maps
 * to, from its uid_map or gid_map read here; -1 when 0 is not mapped. */
static long map_zero(int pid, const char *which)
{
	char path[64], buf[4096], *save = NULL;
	_cleanup_close_ int fd = -1;
	ssize_t r;

	snprintf(path, sizeof(path), "%d/%s", pid, which);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (r = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[r] = '\0';
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long in, out, count;
		const char *q = l;

		if (scan_num(&q, &in, 10) && scan_num(&q, &out, 10) && scan_num(&q, &count, 10) && in == 0 && count > 0)
			return (long)out;
	}
	return -1;
}

/* Files and directories the hook makes in the container (targets, their
 * parents, the driver's links, the cache) belong to the container's root,
 * as the runtime's own do: in a user namespace of its own (rootless podman
 * with --userns nomap or keep-id, rootful --uidmap, inject into a rootless
 * container) the file system ids become those its uid 0 and gid 0 map to.
 * Without that, a file made as our root, which that namespace does not map,
 * cannot be created on the runtime's /dev (EOVERFLOW). Changing the fsuid
 * away from 0 drops the file capabilities from the effective set; the
 * hook takes back CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER
 * (as libnvidia-container does) to reach every directory of the image. */
static int become_container_root(int pid, struct oerr *err)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };  /* _LINUX_CAPABILITY_VERSION_3 */
	struct { uint32_t effective, permitted, inheritable; } caps[2];
	const uint32_t fs_caps = 1u << 1 | 1u << 2 | 1u << 3;
	char path[64];
	struct stat ours, theirs;
	long uid, gid;

	snprintf(path, sizeof(path), "%d/ns/user", pid);
	if (fstatat(proc_fd, "self/ns/user", &ours, 0) < 0 || fstatat(proc_fd, path, &theirs, 0) < 0)
		return oerr_set(err, errno, "/proc/%d/ns/user", pid);
	if (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)
		return 0;  /* our uid 0 is the container's */
	uid = map_zero(pid, "uid_map");
	gid = map_zero(pid, "gid_map");
	if (uid < 0 || gid < 0)
		return oerr_set(err, 0, "/proc/%d/uid_map, gid_map: the container's user namespace maps no "
				"root that this one has", pid);
	if (uid == (long)geteuid() && gid == (long)getegid())
		return 0;
	setfsgid((gid_t)gid);
	setfsuid((uid_t)uid);
	if (setfsuid((uid_t)-1) != (int)uid || setfsgid((gid_t)-1) != (int)gid)
		return oerr_set(err, EPERM, "file system ids %ld:%ld (the container's root)", uid, gid);
	if (syscall(SYS_capget, &hdr, caps) < 0)
		return oerr_set(err, errno, "capget");
	caps[0].effective |= caps[0].permitted & fs_caps;
	if (syscall(SYS_capset, &hdr, caps) < 0)
		return oerr_set(err, errno, "capset");
	log_debug("files made as %ld:%ld, the container's root", uid, gid);
	return 0;
}

/* The host side: each mount's source cloned as a detached mount. */
static int jobs_prepare(const struct edits *e, struct job *jobs, struct oerr *err)
{
	for (size_t i = 0; i < e->nmounts; i++)
		jobs[i] = (struct job){ .m = &e->mounts[i], .tree = -1 };
	for (size_t i = 0; i < e->nmounts; i++)
		if (prepare(&jobs[i], err) < 0)
			return -1;
	return 0;
}

/* The symlink PATH -> TEXT inside ROOTFD, its directory made if missing.
 * Whatever the image has at PATH stays (warned about): what uses the name
 * then gets the image's. */
static int make_link(int rootfd, const char *path, const char *text, struct oerr *err)
{
	_cleanup_close_ int pfd = -1;
	const char *slash = strrchr(path, '/');
	char *parent = path_dir(path);
	char cur[PATH_MAX];
	ssize_t l;

	pfd = root_mkdirs(rootfd, parent, ROOT_MKDIRS_DANGLING, NULL, NULL, err);
	if (pfd < 0) {
		/* a directory in a mount from outside (the host's /dev bound in,
		 * with udev's /dev/dri/by-path links): the link there already, as
		 * the driver has it, is all that was to be made */
		pfd = root_open_any(rootfd, parent, O_PATH | O_DIRECTORY);
		free(parent);
		if (pfd < 0 || (l = readlinkat(pfd, slash + 1, cur, sizeof(cur) - 1)) < 0)
			return -1;
		cur[l] = '\0';
		if (strcmp(cur, text) != 0)
			return -1;
		log_debug("the link %s -> %s is there", path, text);
		return 0;
	}
	free(parent);
	if (symlinkat(text, pfd, slash + 1) == 0) {
		log_debug("made the link %s -> %s", path, text);
		return 0;
	}
	if (errno != EEXIST) {
		log_warn("%s: symlink: %s", path, strerror(errno));
		return 0;
	}
	l = readlinkat(pfd, slash + 1, cur, sizeof(cur) - 1);
	if (l >= 0)
		cur[l] = '\0';
	if (l < 0 || strcmp(cur, text) != 0)
		log_warn("%s: the image has a %s there; the driver's link to %s is not made "
			 "(what uses that name gets the image's)", path, l < 0 ? "file" : "link of its own", text);
	return 0;
}

/* Is FD (at container path PATH) a mount of its own: the root of a mount
 * its parent directory is not in? */
static bool own_mount(int rootfd, const char *path, int fd)
{
	_cleanup_free_ char *parent = path_dir(path);
	_cleanup_close_ int pfd = root_open_any(rootfd, parent, O_PATH | O_DIRECTORY);
	uint64_t a, b;

	return pfd >= 0 && fd_mnt_id(fd, &a) == 0 && fd_mnt_id(pfd, &b) == 0 && a != b;
}

static void root_confine_allow_fd(int rootfd, int fd)
{
	uint64_t id;

	if (fd_mnt_id(fd, &id) == 0)
		root_confine_allow(rootfd, id);
}

/* In the container's mount namespace: targets made and mounts attached,
 * each after the driver's links to it (E's). */
static int jobs_attach(struct job *jobs, size_t n, const struct edits *e, int rootfd, struct oerr *err)
{
	for (size_t i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		_cleanup_close_ int tgt = -1, cur = -1;
		struct stat st;

		if (deadline_passed())
			return oerr_set(err, 0, "%s: not mounted: the deadline (--timeout) passed", j->m->destination);
		/* the driver's symlinks, made as they are on the host */
		for (size_t k = 0; k < e->nlinks; k++)
			if (e->links[k].mount == i && make_link(rootfd, e->links[k].path, e->links[k].text, err) < 0)
				return -1;
		/* Already there (a second run)? Then leave it. */
		cur = root_open_any(rootfd, j->m->destination, O_PATH | O_NOFOLLOW);
		if (cur >= 0 && fstat(cur, &st) == 0 && ((st.st_dev == j->m->it->st.st_dev && st.st_ino == j->m->it->st.st_ino) ||
		    /* the same device node (the host's /dev bound there: Enroot) */
		    (S_ISCHR(st.st_mode) && S_ISCHR(j->m->it->st.st_mode) && st.st_rdev == j->m->it->st.st_rdev))) {
			/* its own mount (a second run) may be read through
			 * later; a node that only sits in a mount from outside
			 * (the host's /dev bound there) opens nothing more of it */
			if (own_mount(rootfd, j->m->destination, cur))
				root_confine_allow_fd(rootfd, cur);
			log_debug("%s: already mounted", j->m->destination);
			continue;
		}
		tgt = make_target(rootfd, j->m->destination, S_ISDIR(j->m->it->st.st_mode), err);
		if (tgt < 0 || attach(j, rootfd, tgt, err) < 0)
			return -1;
		log_info("mounted %s on %s (%s)", j->m->source, j->m->destination, edit_flags_text(j->m->flags));
	}
	return 0;
}

/* The device cgroup of the container's process: its rules allowed
 * (devcg.h says where; a hook outside the initial user namespace has no
 * cgroup to change). */
static int cgroup_allow(const struct edits *e, const struct inject_opts *o, struct oerr *err)
{
	struct devcg_target t;
	size_t n;
	_cleanup_free_ struct devcg_rule *rules = edits_rules(e, &n);
	int r;

	if (!n)
		return 0;
	if (devcg_target(o->pid, o->cgroups_path, &t, err) < 0)
		return -1;
	r = devcg_allow(&t, rules, n, err);
	devcg_target_free(&t);
	return r;
}

/* Into the container's mount namespace, as its root (become_container_root):
 * the rootfs's descriptor, or -1. Before pivot_root (a prestart hook under
 * runc) the rootfs is at its path; after it (inject into a running
 * container, a hook run late) it is the namespace's "/". */
static int enter_container(const struct inject_opts *o, struct oerr *err)
{
	_cleanup_close_ int nsfd = -1;
	char nspath[64];
	struct stat proot, hostroot;
	bool pivoted;
	int rootfd;

	snprintf(nspath, sizeof(nspath), "/proc/%d/root", o->pid);
	if (stat(nspath, &proot) < 0)
		return oerr_set(err, errno, "%s", nspath);
	pivoted = o->rootfs_is_host_path && stat(o->rootfs, &hostroot) == 0 &&
		  hostroot.st_dev == proot.st_dev && hostroot.st_ino == proot.st_ino;
#ifdef __SANITIZE_ADDRESS__
	/* LeakSanitizer reads /proc/self/task at exit, which the container's
	 * namespace does not show us: check for leaks now, once. */
	__lsan_do_leak_check();
#endif
	log_syslog_connect();  /* the host's socket, not the container's path */
	snprintf(nspath, sizeof(nspath), "/proc/%d/ns/mnt", o->pid);
	nsfd = open(nspath, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNS) < 0)
		return oerr_set(err, errno, "%s: enter the mount namespace", nspath);
	if (become_container_root(o->pid, err) < 0)
		return -1;
	rootfd = open(pivoted ? "/" : o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return oerr_set(err, errno, "%s: the container's rootfs", o->rootfs);
	return rootfd;
}

#define COMPAT_DROPIN "/etc/ld.so.conf.d/00-compat-ocidec.conf"

/* CUDA forward compatibility: the image's DIR holds exactly one
 * libcuda.so.MAJOR.x (a regular file, found inside the rootfs) whose MAJOR
 * is greater than the host driver's (HOST: "535.261.03"), as NVIDIA's
 * enable-cuda-compat decides; where the library carries NVIDIA's note of
 * the driver branches it supports, when the host's branch is one of them
 * and the library is newer. Only the image's own directory, named by the
 * vendor config: never a path the container's env gives. */
static bool compat_newer(int rootfd, const char *dir, const char *host)
{
	_cleanup_close_ int dfd = dir ? root_open(rootfd, dir, O_RDONLY | O_DIRECTORY) : -1;
	_cleanup_close_ int lib = -1;
	unsigned long found = 0, hostmajor = host ? strtoul(host, NULL, 10) : 0;
	char version[64] = "";
	int n = 0;
	DIR *d;
	struct dirent *de;

	if (dfd < 0 || !hostmajor || !(d = fdopendir(dfd)))
		return false;
	dfd = -1;  /* the DIR owns it */
	while ((de = readdir(d)) && n < 2) {
		const char *v = de->d_name + strlen("libcuda.so.");
		char *end;
		unsigned long major;
		struct stat st;

		if (strncmp(de->d_name, "libcuda.so.", strlen("libcuda.so.")) != 0 || !isdigit((unsigned char)*v) ||
		    !strchr(v, '.') || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		major = strtoul(v, &end, 10);
		if (*end != '.')
			continue;
		found = major;
		if (!n) {
			snprintf(version, sizeof(version), "%s", v);
			close(lib);
			lib = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		}
		n++;
	}
	closedir(d);
	if (n != 1) {
		if (n > 1)
			log_warn("%s: more than one libcuda.so.MAJOR.x: CUDA's compat libraries not used", dir);
		return false;
	}
	/* the compat libcuda's own word (NVIDIA's newer packages): the driver
	 * branches it supports, in its .note.cuda.fwd_compatibility, as
	 * NVIDIA's enable-cuda-compat reads it */
	if (lib >= 0) {
		struct stat st;
		struct elf_source src = { .fd = lib };
		_cleanup_free_ char *note = NULL;
		size_t len;
		cJSON *j, *e;

		if (fstat(lib, &st) == 0 && S_ISREG(st.st_mode)) {
			src.size = (uint64_t)st.st_size;
			note = elf_note(&src, ".note.cuda.fwd_compatibility", "NVIDIA Corporation", &len);
		}
		if (note && (j = cJSON_Parse(note))) {
			bool listed = false, use;

			cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "Driver"))
				listed |= cJSON_IsNumber(e) && e->valuedouble == (double)hostmajor;
			cJSON_Delete(j);
			use = listed && version_cmp(version, host) > 0;
			log_debug("%s: libcuda %s, for driver branches %s the host's (%s): %s", dir, version,
				  listed ? "including" : "other than", host, use ? "the compat libraries first" : "the host's");
			return use;
		}
	}
	log_debug("%s: libcuda %lu, the host driver's %lu: %s", dir, found, hostmajor,
		  found > hostmajor ? "the compat libraries first" : "the host's");
	return found > hostmajor;
}

/* The container's COMPAT_DROPIN naming DIR (where the tree has
 * /etc/ld.so.conf.d; a read-only rootfs is left alone) */
static int write_compat_dropin(int rootfd, const char *dir, struct oerr *err)
{
	_cleanup_close_ int d = root_open(rootfd, "/etc/ld.so.conf.d", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	_cleanup_free_ char *text = xasprintf("%s\n", dir);

	if (d >= 0 && root_write_atomic(rootfd, COMPAT_DROPIN, text, strlen(text), 0644, true, err) < 0 &&
	    err->errnum != EROFS)
		return oerr_prefix(err, "the container's " COMPAT_DROPIN);
	return 0;
}

/* The directory a compat drop-in of the container's names (the first
 * line of the first /etc/ld.so.conf.d/00-compat-*.conf), if it is one */
static char *compat_dropin_dir(int rootfd)
{
	_cleanup_close_ int dfd = root_open(rootfd, "/etc/ld.so.conf.d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	char *found = NULL;
	struct strv names = { 0 };
	DIR *d;
	struct dirent *de;

	if (dfd < 0 || !(d = fdopendir(dfd)))
		return NULL;
	dfd = -1;
	while ((de = readdir(d)) && names.n < 64)
		if (strncmp(de->d_name, "00-compat-", 10) == 0 && strlen(de->d_name) > 15 &&
		    strcmp(de->d_name + strlen(de->d_name) - 5, ".conf") == 0)
			strv_push(&names, de->d_name);
	closedir(d);
	strv_sort(&names);
	for (size_t i = 0; i < names.n && !found; i++) {
		_cleanup_free_ char *path = xasprintf("/etc/ld.so.conf.d/%s", names.v[i]), *buf = NULL;
		struct oerr e;
		struct stat st;
		size_t len;

		if (root_read_file(rootfd, path, 4096, &buf, &len, &st, &e) <= 0 || !buf)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (buf[0] == '/' && !has_dot_component(buf))
			found = xstrdup(buf);
	}
	strv_free(&names);
	return found;
}

/* The container's cache, and the drop-ins that keep it through the
 * image's own ldconfig; CUDA's compat directory first when it is newer
 * than the host driver (a drop-in that sorts before the others keeps it
 * first for the image's ldconfig too). */
static int update_cache(int rootfd, const struct strv *libdirs, const char *compat_dir, const char *compat_host,
			struct oerr *err)
{
	_cleanup_strv_ struct strv dirs = { 0 };
	struct ldconfig lc = { .rootfd = rootfd, .conf = "/etc/ld.so.conf", .cache = "/etc/ld.so.cache" };
	bool compat;

	compat = compat_newer(rootfd, compat_dir, compat_host);
	if (compat_dir && compat_host && !compat) {
		/* decided here: not newer. A drop-in of ours from before (a
		 * container restarted after a driver upgrade) goes */
		_cleanup_close_ int d = root_open(rootfd, "/etc/ld.so.conf.d", O_PATH | O_DIRECTORY | O_NOFOLLOW);

		if (d >= 0 && unlinkat(d, &COMPAT_DROPIN[sizeof("/etc/ld.so.conf.d/") - 1], 0) == 0)
			log_info("%s: removed: the host driver is not older than the image's compat libraries",
				 COMPAT_DROPIN);
	}
	if (!libdirs->n)  /* nvidia-cdi-hook enable-cuda-compat on its own: the drop-in,
			   * which its update-ldcache hook then puts first */
		return compat ? write_compat_dropin(rootfd, compat_dir, err) : 0;
	if (compat) {
		strv_push(&dirs, compat_dir);
	} else if (!(compat_dir && compat_host)) {
		/* a compat drop-in made before (by this hook, or NVIDIA's
		 * 00-compat-*.conf): its directory first, as ldconfig reads it */
		_cleanup_free_ char *first = compat_dropin_dir(rootfd);

		if (first) {
			strv_push(&dirs, first);
			compat = true;
			compat_dir = dirs.v[0];
		}
	}
	for (size_t i = 0; i < libdirs->n; i++)
		if (!strv_contains(&dirs, libdirs->v[i]))
			strv_push(&dirs, libdirs->v[i]);
	lc.dirs = dirs.v;
	lc.ndirs = dirs.n;
	if (ldconfig_add(&lc, err) < 0)
		return oerr_prefix(err, "the container's ld.so.cache");
	if (compat) {
		if (write_compat_dropin(rootfd, compat_dir, err) < 0)
			return -1;
		lc.dirs = dirs.v + 1;
		lc.ndirs = dirs.n - 1;
	}
	if (ldconfig_dropin(&lc, err) < 0)
		return oerr_prefix(err, "the container's /etc/ld.so.conf.d");
	return 0;
}

/* NVIDIA's application profile PATH (NULL: none) for the GPUs the
 * container has: what EGL and Vulkan may see. A profile that cannot be
 * written is said; the container still starts (its GPUs are its own
 * either way: the profile only narrows what EGL lists). */
static void write_app_profile(int rootfd, const char *path)
{
	struct oerr err;

	if (path && app_profile_write(rootfd, path, &err) < 0)
		log_warn("%s (EGL and Vulkan may list GPUs the container cannot open)", err.msg);
}

static void close_rootfs(int *rootfd)
{
	if (*rootfd >= 0) {
		root_unconfine(*rootfd);
		close(*rootfd);
	}
}
#define _cleanup_rootfs_ __attribute__((cleanup(close_rootfs)))

static int open_rootfs(const struct inject_opts *o, struct oerr *err);

static int inject_jobs(const struct edits *e, const struct inject_opts *o, struct job *jobs, struct oerr *err)
{
	_cleanup_rootfs_ int rootfd = -1;

	if (o->in_container && !o->standalone)
		return oerr_set(err, 0, "the hook runs in the container's namespaces (a createContainer hook): "
				"the vendor hook runs at prestart or createRuntime; refused");
	/* On the host: sources, detached mounts, cgroup. Then in the container
	 * (standalone: the caller's namespace is the container's already). */
	if (jobs_prepare(e, jobs, err) < 0 || (!o->no_cgroups && cgroup_allow(e, o, err) < 0) ||
	    (rootfd = open_rootfs(o, err)) < 0)
		return -1;
	if (confine_rootfs(rootfd, o->rootfs, err) < 0 || jobs_attach(jobs, e->nmounts, e, rootfd, err) < 0)
		return -1;
	for (size_t i = 0; i < e->nviews; i++)
		if (proc_view_apply(rootfd, e->views[i].vendor->proc_view, e->views[i].vendor->proc_view_set,
				    &e->views[i].entries, err) < 0)
			return -1;
	if (update_cache(rootfd, &e->libdirs, e->compat_dir, e->compat_host, err) < 0)
		return -1;
	write_app_profile(rootfd, e->app_profile);
	return 0;
}

int inject(const struct edits *e, const struct inject_opts *o, struct oerr *err)
{
	struct job *jobs = xcalloc(e->nmounts ? e->nmounts : 1, sizeof(*jobs));
	int r = inject_jobs(e, o, jobs, err);

	jobs_free(jobs, e->nmounts);
	return r;
}

/* The rootfs's descriptor: in the container's mount namespace already (a
 * createContainer hook), or entered (enter_container). */
static int open_rootfs(const struct inject_opts *o, struct oerr *err)
{
	int rootfd;

	if (!o->in_container && !o->standalone)
		return enter_container(o, err);
	log_syslog_connect();
	rootfd = open(o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return oerr_set(err, errno, "%s: the container's rootfs", o->rootfs);
	return rootfd;
}

/* The mount the engine made at container path PATH (a library of the
 * spec), allowed for the cache to read. */
static void allow_spec_mount(int rootfd, const char *path)
{
	_cleanup_close_ int fd = root_open_any(rootfd, path, O_PATH | O_NOFOLLOW);
	struct stat st;
	uint64_t id;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		log_warn("%s: not a file in the container (the spec mounts a library there)", path);
		return;
	}
	if (fd_mnt_id(fd, &id) == 0)
		root_confine_allow(rootfd, id);
}

/* The file mounts in folder DIR (nvidia-cdi-hook update-ldcache --folder:
 * NVIDIA's specs name folders, not their files): each regular file in DIR
 * that is a mount of its own, as a spec's library is, allowed for the
 * cache to read; at most 4096 entries looked at. Not only read-only ones:
 * crun 1.28 makes a bind mount read-only after the createContainer hooks
 * ran (crun 1.21 and runc before), and every mount a createContainer hook
 * sees is one config.json asked for (an image makes none). */
static void allow_folder_mounts(int rootfd, const char *dir)
{
	_cleanup_close_ int dfd = root_open(rootfd, dir, O_RDONLY | O_DIRECTORY);
	uint64_t dir_id;
	size_t seen = 0;
	DIR *d;
	struct dirent *de;

	if (dfd < 0 || fd_mnt_id(dfd, &dir_id) < 0 || !(d = fdopendir(dfd)))
		return;
	dfd = -1;
	while ((de = readdir(d)) && seen++ < 4096) {
		_cleanup_free_ char *path = NULL;
		_cleanup_close_ int fd = -1;
		struct stat st;
		uint64_t id;

		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		fd = root_open_any(rootfd, path, O_PATH | O_NOFOLLOW);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fd_mnt_id(fd, &id) == 0 && id != dir_id)
			root_confine_allow(rootfd, id);
	}
	closedir(d);
}

/* chmod MODE (no set-id bits) of the directory PATH in the container
 * (nvidia-cdi-hook chmod): never through a symlink, never a file */
static int chmod_dir(int rootfd, const char *path, int mode, struct oerr *err)
{
	_cleanup_close_ int fd = root_open(rootfd, path, O_PATH | O_DIRECTORY | O_NOFOLLOW);
	char p[64];

	if (fd < 0) {
		log_warn("chmod %s: %s: left alone", path, strerror(errno));
		return 0;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if (chmod(p, (mode_t)(mode & 0777)) < 0)
		return oerr_set(err, errno, "chmod %04o %s", mode, path);
	return 0;
}

void inject_cache_dirs(const struct cache_edits *c, struct strv *dirs)
{
	for (size_t i = 0; i < c->libraries.n; i++)
		edits_libdir_add(dirs, c->libraries.v[i]);
	for (size_t i = 0; i < c->folders.n; i++)
		if (!strv_contains(dirs, c->folders.v[i]))
			strv_push(dirs, c->folders.v[i]);
}

int inject_cache(const struct cache_edits *c, const struct inject_opts *o, struct oerr *err)
{
	_cleanup_strv_ struct strv dirs = { 0 };
	_cleanup_rootfs_ int rootfd = -1;

	inject_cache_dirs(c, &dirs);
	if ((rootfd = open_rootfs(o, err)) < 0 || confine_rootfs(rootfd, o->rootfs, err) < 0)
		return -1;
	for (size_t i = 0; i < c->chmod.n; i++)
		if (chmod_dir(rootfd, c->chmod.v[i], c->chmod_mode, err) < 0)
			return -1;
	for (size_t i = 0; i < c->libraries.n; i++)
		allow_spec_mount(rootfd, c->libraries.v[i]);
	for (size_t i = 0; i < c->folders.n; i++)
		allow_folder_mounts(rootfd, c->folders.v[i]);
	for (size_t i = 0; i + 1 < c->links.n; i += 2)
		if (make_link(rootfd, c->links.v[i], c->links.v[i + 1], err) < 0)
			return -1;
	for (size_t i = 0; i < c->nviews; i++)
		if (proc_view_apply(rootfd, c->views[i].dir, c->views[i].set, &c->views[i].entries, err) < 0)
			return -1;
	if (update_cache(rootfd, &dirs, c->compat_dir, c->compat_host, err) < 0)
		return -1;
	write_app_profile(rootfd, c->app_profile);
	return 0;
}
