/* plan.c: see plan.h. */
#include "pipeline/plan.h"
#include "pipeline/procview.h"
#include "pipeline/require.h"
#include "pipeline/activate.h"
#include "devices/devices.h"
#include "formats/ldcache.h"
#include "base/log.h"
#include "devices/mig.h"
#include "safety/rootpath.h"
#include "safety/rootfile.h"
#include "devices/hostfiles.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994  /* linux/magic.h, which musl's headers lack */
#endif

const char *const plan_binary_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL,
};

static void plan_item_free(struct plan_item *it);
#define PLAN_ITEM_NONE ((struct plan_item){ .fd = -1, .link_dirfd = -1 })
#define _cleanup_plan_item_ __attribute__((cleanup(plan_item_free)))

/* State while planning one vendor. */
struct vctx {
	const struct vendor *v;
	struct plan *p;
	int rootfd;
	char *version;         /* NULL: unknown */
	struct ldcache cache;
	int cache_state;       /* 0 not loaded, 1 loaded, -1 unavailable */
	bool arch32;           /* a selected feature has libraries32 */
	bool container;        /* plan_select's */
	bool privileged;
	bool by_path;
};

static void plan_push(struct vctx *c, struct plan_item *n)
{
	struct plan *p = c->p;

	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->items[i].host, n->host) == 0) {
			plan_item_free(n);
			*n = PLAN_ITEM_NONE;
			return;
		}
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 32;
		p->items = xreallocarray(p->items, p->cap, sizeof(*p->items));
	}
	p->items[p->n++] = *n;
	*n = PLAN_ITEM_NONE;
}

static bool kind_accepts(enum item_kind kind, mode_t m)
{
	switch (kind) {
	case KIND_DEVICES:
		return S_ISCHR(m) || S_ISBLK(m);
	case KIND_DIRECTORIES:
		return S_ISDIR(m);
	case KIND_IPC:
		return S_ISSOCK(m) || S_ISDIR(m) || S_ISFIFO(m);
	case KIND_IPC_WRITABLE:
		return S_ISDIR(m);
	default:
		return S_ISREG(m);
	}
}

/* What FD (in the directory PFD) is as a mount: OWN_NONE (its parent's
 * mount, or not known), OWN_OTHER (a mount of its own, not a tmpfs: a
 * user's FUSE file system may be one), OWN_TMPFS (a tmpfs of its own,
 * which no user can mount) */
enum own_mount { OWN_NONE, OWN_OTHER, OWN_TMPFS };
static enum own_mount own_mount(int fd, int pfd)
{
	uint64_t id, pid;
	struct statfs fs;

	if (pfd < 0 || fd_mnt_id(fd, &id) < 0 || fd_mnt_id(pfd, &pid) < 0 || id == pid)
		return OWN_NONE;
	return fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC ? OWN_TMPFS : OWN_OTHER;
}

/* An IPC endpoint (PATH, in directory PARENT, ST its lstat) is mounted
 * where it is: one that is a symlink would give its target (a user's
 * /tmp/nvidia-mps -> /etc), and one in a directory others may write
 * (/tmp) that is not root's (owned_by_root: in a user namespace the
 * overflow uid is anyone) could be a user's stand-in for the daemon's.
 * Refused, said. */
static bool ipc_safe(struct vctx *c, const char *path, const char *parent, int fd, const struct stat *st)
{
	_cleanup_close_ int pfd = root_open(c->rootfd, parent, O_PATH | O_DIRECTORY);
	struct stat ps;
	bool open_dir;   /* a directory others than its owner may write: anyone's (or a group's) */

	if (S_ISLNK(st->st_mode)) {
		log_warn("%s: skipped %s: an IPC path that is a symlink (its target would be mounted)", c->v->name, path);
		return false;
	}
	open_dir = pfd < 0 || fstat(pfd, &ps) < 0 || (ps.st_mode & (S_IWGRP | S_IWOTH));
	if (open_dir && c->by_path) {
		log_warn("%s: skipped %s: in a directory anyone may write, and named by its path for the engine "
			 "to mount later (a CDI spec, the runtime shim): anyone could put their own there first; "
			 "the hook mounts it (by descriptor), or give the daemon a directory under /run",
			 c->v->name, path);
		return false;
	}
	if (open_dir && (pfd < 0 || !owned_by_root(st, &ps))) {
		log_warn("%s: skipped %s: owned by uid %u in a directory anyone may write: not the daemon's%s",
			 c->v->name, path, (unsigned)st->st_uid,
			 st->st_uid == overflow_uid() && !in_initial_userns()
				 ? " (in this user namespace the overflow uid may be any user)" : "");
		return false;
	}
	/* a mount of its own there (an ipc_writable tmpfs) says who owns it,
	 * and a user's FUSE file system says uid 0 as easily: in a directory
	 * anyone may write only a tmpfs, which no user can mount, is taken */
	if (open_dir && own_mount(fd, pfd) == OWN_OTHER) {
		log_warn("%s: skipped %s: a mount of its own that is no tmpfs, in a directory anyone may write "
			 "(a user's FUSE file system could claim root's ownership)", c->v->name, path);
		return false;
	}
	return true;
}

/* An ipc_writable directory (FD, PATH, in PARENT) is mounted read-write
 * only where the host side cannot be abused through it: it is a mount of
 * its own (a tmpfs of its own: what a container writes there fills
 * nothing else of the host's) and that mount is nosuid and nodev (a
 * program made set-id there, or a node made there, means nothing on the
 * host either: MPS's pipe directory on a tmpfs of its own), and the
 * container may have it (unprivileged_ipc_writable). Else read-only,
 * said: its sockets and FIFOs still work. */
static enum item_kind ipc_writable(struct vctx *c, int fd, const char *path, const char *parent)
{
	_cleanup_close_ int pfd = root_open(c->rootfd, parent, O_PATH | O_DIRECTORY);
	int level = c->container ? LOG_WARN : LOG_INFO;
	enum own_mount own = own_mount(fd, pfd);
	struct statvfs vfs;

	if (own == OWN_NONE) {
		log_msg(level, "%s: %s mounted read-only: it is no mount of its own (a container writing there "
			"would fill the host file system it is on; mount a tmpfs there with nosuid,nodev to have "
			"it writable)", c->v->name, path);
		return KIND_IPC;
	}
	if (own != OWN_TMPFS) {
		log_msg(level, "%s: %s mounted read-only: its mount is no tmpfs (a tmpfs of its own, which no user "
			"can mount, is what ipc_writable takes)", c->v->name, path);
		return KIND_IPC;
	}
	if (fstatvfs(fd, &vfs) < 0 || (vfs.f_flag & (ST_NOSUID | ST_NODEV)) != (ST_NOSUID | ST_NODEV)) {
		log_msg(level, "%s: %s mounted read-only: its mount is not nosuid,nodev (what a container writes "
			"there would be a set-id program or a device node on the host; mount a tmpfs there with "
			"nosuid,nodev to have it writable)", c->v->name, path);
		return KIND_IPC;
	}
	if (!c->privileged && !c->v->unprivileged_ipc_writable) {
		log_msg(level, "%s: %s mounted read-only: %s (unprivileged_ipc_writable)", c->v->name, path,
			c->container ? "the container has no CAP_SYS_ADMIN" : "a spec for any container");
		return KIND_IPC;
	}
	return KIND_IPC_WRITABLE;
}

/* PATH (driver-root view, no wildcards): add it when it exists, with its
 * resolved target when it is a symlink. */
static bool add_existing(struct vctx *c, enum item_kind kind, const char *path)
{
	_cleanup_free_ char *parent = NULL, *cparent = NULL;
	_cleanup_plan_item_ struct plan_item it = { .kind = kind, .vendor = c->v, .fd = -1, .link_dirfd = -1 };
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char *canon;

	it.fd = root_open(c->rootfd, path, O_PATH | O_NOFOLLOW);
	if (it.fd < 0 || fstat(it.fd, &it.st) < 0) {
		log_debug("%s: skipped %s: %s", c->v->name, path, strerror(errno));
		return false;
	}
	/* the item's own canonical name: its directory resolved, its name kept */
	parent = path_dir(path);
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
	    root_realpath(c->rootfd, parent, &cparent) < 0) {
		log_debug("%s: skipped %s: not a plain path", c->v->name, path);
		return false;
	}
	canon = xasprintf("%s/%s", strcmp(cparent, "/") ? cparent : "", base);
	it.host = path_join_root(c->v->driver_root, canon);
	free(canon);
	if ((kind == KIND_IPC || kind == KIND_IPC_WRITABLE) && !ipc_safe(c, path, cparent, it.fd, &it.st))
		return false;
	if (S_ISLNK(it.st.st_mode)) {
		close(it.fd);
		it.fd = -1;
		it.link_dirfd = root_open(c->rootfd, cparent, O_PATH | O_DIRECTORY);
		it.link_name = xstrdup(base);
		if (it.link_dirfd < 0 || root_realpath(c->rootfd, path, &it.target) < 0 ||
		    (it.fd = root_open(c->rootfd, it.target, O_PATH)) < 0 || fstat(it.fd, &it.st) < 0) {
			log_debug("%s: skipped %s: symlink does not resolve: %s", c->v->name, path,
				  strerror(errno));
			return false;
		}
		it.host_target = path_join_root(c->v->driver_root, it.target);
	}
	if (!kind_accepts(kind, it.st.st_mode)) {
		log_warn("%s: skipped %s: not of the kind '%s' lists", c->v->name, path,
			 item_kind_key[kind]);
		return false;
	}
	if (kind == KIND_IPC_WRITABLE)
		it.kind = ipc_writable(c, it.fd, path, cparent);
	it.path = xstrdup(path);
	plan_push(c, &it);
	return true;
}

static void add_pattern(struct vctx *c, enum item_kind kind, const char *path)
{
	struct strv found = { 0 };

	if (!path_has_glob(path)) {
		add_existing(c, kind, path);
		return;
	}
	root_glob(c->rootfd, path, &found, 65536);
	if (!found.n)
		log_debug("%s: skipped %s: no match", c->v->name, path);
	for (size_t i = 0; i < found.n; i++)
		add_existing(c, kind, found.v[i]);
	strv_free(&found);
}

static int load_cache(struct vctx *c)
{
	_cleanup_close_ int fd = -1, pfd = -1;
	struct stat st;
	struct oerr err;

	if (c->cache_state)
		return c->cache_state;
	c->cache_state = -1;
	pfd = root_open(c->rootfd, "/etc/ld.so.cache", O_PATH);
	fd = pfd < 0 ? -1 : reopen_regular(c->rootfd, pfd, &st);
	if (fd == -2)
		errno = EINVAL;
	if (fd < 0) {
		log_warn("%s: libraries skipped: %s/etc/ld.so.cache: %s", c->v->name,
			 strcmp(c->v->driver_root, "/") ? c->v->driver_root : "", strerror(errno));
		return -1;
	}
	if (ldcache_load_fd(&c->cache, fd, &err) < 0) {
		log_warn("%s: libraries skipped: ld.so.cache: %s", c->v->name, err.msg);
		return -1;
	}
	return c->cache_state = 1;
}

/* A bare library name, "NAME" or "PREFIX*": every entry of the host's
 * architecture the cache has for it, as ldconfig -p lists them (and of its
 * 32-bit one, when a selected feature has libraries32). */
static void add_library(struct vctx *c, const char *name)
{
	size_t len = strlen(name);
	bool prefix = len > 0 && name[len - 1] == '*';
	int32_t host = ldcache_host_flags(), host32 = c->arch32 ? ldcache_host32_flags() : -1;
	bool any = false;

	if (load_cache(c) < 0)
		return;
	if (prefix)
		len--;
	for (size_t i = 0; i < c->cache.n; i++) {
		const struct ldcache_entry *e = &c->cache.e[i];
		bool match = prefix ? strncmp(e->key, name, len) == 0 : strcmp(e->key, name) == 0;

		if (match && (e->flags == host || (host32 >= 0 && e->flags == host32)) && e->value[0] == '/') {
			add_existing(c, KIND_LIBRARIES, e->value);
			any = true;
		}
	}
	if (!any)
		log_debug("%s: skipped library %s: not in the ld.so.cache", c->v->name, name);
}

static void add_binary(struct vctx *c, const char *name)
{
	size_t own = c->v->binary_dirs.n;

	for (size_t i = 0; i < own || plan_binary_dirs[i - own]; i++) {
		const char *dir = i < own ? c->v->binary_dirs.v[i] : plan_binary_dirs[i - own];
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
		_cleanup_close_ int fd = root_open(c->rootfd, path, O_PATH);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			add_existing(c, KIND_BINARIES, path);
			return;
		}
	}
	log_debug("%s: skipped binary %s: not found", c->v->name, name);
}

/* "${version}" replaced; NULL when the path needs an unknown version. */
static char *expand(struct vctx *c, const char *item)
{
	static const char var[] = "${version}";
	const char *at = strstr(item, var);
	char *out, *rest;

	if (!at)
		return xstrdup(item);
	if (!c->version) {
		log_debug("%s: skipped %s: driver version unknown", c->v->name, item);
		return NULL;
	}
	rest = expand(c, at + strlen(var));
	if (!rest)
		return NULL;
	out = xasprintf("%.*s%s%s", (int)(at - item), item, c->version, rest);
	free(rest);
	return out;
}

static void add_item(struct vctx *c, enum item_kind kind, const char *item)
{
	_cleanup_free_ char *s = expand(c, item);

	if (!s)
		return;
	if (s[0] == '/')
		add_pattern(c, kind, s);
	else if (kind == KIND_DEVICES) {
		_cleanup_free_ char *dev = xasprintf("/dev/%s", s);
		add_pattern(c, kind, dev);
	} else if (kind == KIND_BINARIES)
		add_binary(c, s);
	else if (kind == KIND_LIBRARIES)
		add_library(c, s);
}

unsigned long *plan_node_indices(const struct vendor *v, size_t *n)
{
	return vendor_node_indices(v, n);
}

/* A device's node (devices.h), added when the driver root has it and it is
 * the node the device layer says (device_node_fits: a node of a number
 * the kernel gave is that character device itself), its proc file in the
 * view; true when the plan has it (given before too) */
static bool add_node(struct vctx *c, const struct device_node *n, struct strv *entries)
{
	size_t before = c->p->n;
	const struct plan_item *it;

	if (!n->path || !add_existing(c, KIND_DEVICES, n->path))
		return false;
	it = c->p->n > before ? &c->p->items[c->p->n - 1] : NULL;
	if (it && !device_node_fits(c->v, n, &it->st, it->link_dirfd >= 0)) {
		plan_item_free(&c->p->items[--c->p->n]);
		return false;
	}
	proc_view_add(c->v, n->proc, entries);
	return true;
}

/* The selected devices, as the device layer gives them (MIG devices among
 * them), once over: each one's nodes and proc entries (ENTRIES: the
 * container's view, NULL: none); a device a container named that has none
 * of its nodes here, or a required node that is not, fails the plan. Its
 * network interfaces go with it (every device's, the selection whole). */
static int add_devices(struct vctx *c, const struct plan_select *sel, struct strv *entries, struct oerr *err)
{
	_cleanup_devices_ struct devices ds = { 0 };
	bool whole = !sel->devices || sel->devices->kind == SEL_ALL;

	vendor_devices(c->v, c->rootfd, sel->devices, sel->container, &ds);
	mig_devices(c->v, c->rootfd, sel->devices, sel->mig_caps, &ds);
	for (size_t i = 0; i < ds.n; i++) {
		const struct device *d = &ds.v[i];
		bool any = false;

		if (d->error)
			return oerr_set(err, 0, "%s", d->error);
		proc_view_add(c->v, d->dir, entries);
		for (size_t k = 0; k < d->nnodes; k++)
			if (!d->nodes[k].absent)
				any |= add_node(c, &d->nodes[k], entries);
		if (d->strict && !any)
			return device_absent(c->v, d, err);
		for (size_t k = 0; k < d->nnodes; k++)
			if (d->nodes[k].absent && !add_node(c, &d->nodes[k], entries))
				return oerr_set(err, 0, "%s", d->nodes[k].absent);
		for (size_t k = 0; d->netdevs && (any || whole) && k < d->netdevs->n; k++) {
			c->p->netdevs_some |= !whole;
			if (!strv_contains(&c->p->netdevs, d->netdevs->v[k]))
				strv_push(&c->p->netdevs, d->netdevs->v[k]);
		}
	}
	return 0;
}

static char *read_version(const struct vendor *v)
{
	_cleanup_close_ int fd = -1;
	char buf[128];
	ssize_t n;
	size_t len;

	if (v->version)
		return xstrdup(v->version);
	if (!v->version_file)
		return NULL;
	fd = open(v->version_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		log_debug("%s: driver version unknown: %s: %s", v->name, v->version_file,
			  fd < 0 ? strerror(errno) : "empty");
		return NULL;
	}
	buf[n] = '\0';
	len = strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-");
	if (len == 0)
		return NULL;
	return xstrndup(buf, len);
}

/* A plan holds a descriptor or two per item, and the hook one more per
 * mount: a driver with hundreds of files needs more than the usual soft
 * limit of 1024, so take what the hard limit allows, once. */
static void raise_nofile(void)
{
	static bool done;
	struct rlimit rl;

	if (done)
		return;
	done = true;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		/* (prlimit: musl's setrlimit also stops every thread to set it,
		 * 1 KB of the C library for a process of one thread) */
		prlimit(0, RLIMIT_NOFILE, &rl, NULL);
	}
}

/* The selected features' bus_devices for each selected device: "%s" is
 * its PCI address (no format string: the pattern is the config's) */
static void add_bus_devices(struct vctx *c, const bool *selected, const struct selection *devices)
{
	struct strv buses = { 0 };
	bool any = false;

	for (size_t f = 0; f < c->v->nfeatures && !any; f++)
		any = selected[f] && c->v->features[f].bus_devices.n;
	if (!any)
		return;
	vendor_device_buses(c->v, devices, &buses);
	for (size_t f = 0; f < c->v->nfeatures; f++) {
		if (!selected[f])
			continue;
		for (size_t i = 0; i < c->v->features[f].bus_devices.n; i++) {
			const char *pat = c->v->features[f].bus_devices.v[i], *pc = strstr(pat, "%s");

			for (size_t b = 0; pc && b < buses.n; b++) {
				_cleanup_free_ char *path = xasprintf("%.*s%s%s", (int)(pc - pat), pat, buses.v[b], pc + 2);
				add_item(c, KIND_DEVICES, path);
			}
		}
	}
	strv_free(&buses);
}

/* The driver's CUDA version, from the text of cuda_version_library (the
 * driver root's, through its cache), read, never run; NULL: unknown */
static char *cuda_version(struct vctx *c)
{
	const char *name = c->v->cuda_version_library;
	char *version = NULL;

	if (!name || load_cache(c) < 0)
		return NULL;
	for (size_t i = 0; i < c->cache.n && !version; i++) {
		const struct ldcache_entry *e = &c->cache.e[i];
		_cleanup_close_ int pfd = -1, fd = -1;
		struct stat st;
		void *map;

		if (strcmp(e->key, name) != 0 || e->flags != ldcache_host_flags() || e->value[0] != '/')
			continue;
		pfd = root_open(c->rootfd, e->value, O_PATH);
		fd = pfd < 0 ? -1 : reopen_regular(c->rootfd, pfd, &st);
		if (fd < 0 || st.st_size <= 0 || st.st_size > (off_t)1 << 30)
			continue;
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			continue;
		version = require_cuda_version(map, (size_t)st.st_size);
		munmap(map, (size_t)st.st_size);
	}
	return version;
}

void plan_driver_versions(const struct vendor *v, char **driver, char **cuda)
{
	struct vctx c = { .v = v, .rootfd = open(v->driver_root, O_PATH | O_DIRECTORY | O_CLOEXEC) };

	*driver = read_version(v);
	*cuda = c.rootfd >= 0 ? cuda_version(&c) : NULL;
	if (c.rootfd >= 0)
		close(c.rootfd);
	if (c.cache_state > 0)
		ldcache_free(&c.cache);
}

/* Each of the image's requirements holds, or the plan fails (ERR: which,
 * what the driver is, how to skip the check) */
static int check_requirements(struct vctx *c, const struct strv *reqs, struct oerr *err)
{
	_cleanup_free_ char *cuda = cuda_version(c);
	struct require_props props = { cuda, c->version };
	const struct vendor *v = c->v;

	for (size_t i = 0; i < reqs->n; i++) {
		_cleanup_free_ char *why = NULL;
		int r = require_eval(reqs->v[i], &props, &why);

		if (r == 1)
			continue;
		return oerr_set(err, 0, "%s: %s%.256s (the driver: cuda %s, driver %s)%s%s%s", v->name,
				r == 0 ? "unsatisfied condition: " : "cannot check a condition: ", why, cuda ? cuda : "unknown",
				c->version ? c->version : "unknown", v->requirements_disable_env ? "; " : "",
				v->requirements_disable_env ? v->requirements_disable_env : "",
				v->requirements_disable_env ? "=true skips the check" : "");
	}
	log_debug("%s: the image's %zu requirements hold (cuda %s, driver %s)", v->name, reqs->n,
		  cuda ? cuda : "unknown", c->version ? c->version : "unknown");
	return 0;
}

/* NVIDIA's CSV lists of host files (csv_files): bounds on what they may
 * make a hook read and mount (L4T's biggest lists have some hundreds of
 * lines; a plan's items are checked for doubles one by one) */
#define CSV_MAX_FILES 64
#define CSV_MAX_SIZE (1024 * 1024)
#define CSV_MAX_ITEMS 4096
#define CSV_MAX_WARNINGS 5     /* bad lines said per file */

struct csv_read {
	const struct vendor *v;
	const char *file;
	struct strv *items;    /* [KIND_COUNT] */
	int bad;
};

static void csv_item(void *arg, int line, enum item_kind kind, const char *path)
{
	struct csv_read *r = arg;

	(void)line;
	if (kind == KIND_DEVICES && path[0] != '/')
		strv_push_owned(&r->items[kind], xasprintf("/dev/%s", path));
	else
		strv_push(&r->items[kind], path);
}

static void csv_bad(void *arg, int line, const char *why)
{
	struct csv_read *r = arg;

	if (++r->bad <= CSV_MAX_WARNINGS)
		log_warn("%s: %s%s:%d: %s: line skipped", r->v->name,
			 strcmp(r->v->driver_root, "/") ? r->v->driver_root : "", r->file, line, why);
}

/* The items of the CSV lists the selected features name, read in the
 * driver root (a list that is a symlink followed inside it), by kind into
 * ITEMS[KIND_COUNT]: literal paths (no glob). A list that cannot be read
 * is said and skipped; -1 (ERR) for one held to the vendor files' rule
 * and refused (hostfiles_read): it could give a container any host file. */
static int read_csv_files(struct vctx *c, const bool *selected, struct strv *items, struct oerr *err)
{
	const struct vendor *v = c->v;
	size_t total = 0, nfiles = 0;
	struct strv files = { 0 };

	for (size_t f = 0; f < v->nfeatures; f++)
		for (size_t i = 0; selected[f] && i < v->features[f].csv_files.n; i++)
			root_glob(c->rootfd, v->features[f].csv_files.v[i], &files, CSV_MAX_FILES + 1);
	strv_sort(&files);
	for (size_t i = 0; i < files.n && nfiles < CSV_MAX_FILES && total < CSV_MAX_ITEMS; i++) {
		struct csv_read r = { .v = v, .file = files.v[i], .items = items };
		_cleanup_free_ char *buf = NULL, *real = NULL;
		size_t len;
		struct oerr e;
		int got;

		if (i && strcmp(files.v[i], files.v[i - 1]) == 0)
			continue;
		nfiles++;
		if (root_realpath(c->rootfd, files.v[i], &real) < 0) {
			if (errno != ENOENT)   /* (a link loop, no permission: said) */
				log_warn("%s: csv_files: %s: %s", v->name, files.v[i], strerror(errno));
			continue;
		}
		got = hostfiles_read(c->rootfd, real, strcmp(v->driver_root, "/") ? v->driver_root : "", CSV_MAX_SIZE,
				     &buf, &len, &e);
		if (got < 0 && e.code == EXIT_USAGE) {
			*err = e;
			strv_free(&files);
			return oerr_prefix(err, "%s: csv_files", v->name);
		}
		if (got < 0)
			log_warn("%s: csv_files: %s (%s)", v->name, files.v[i], e.msg);
		if (got <= 0)
			continue;
		total += hostfiles_parse(buf, len, CSV_MAX_ITEMS - total, csv_item, csv_bad, &r);
		if (r.bad > CSV_MAX_WARNINGS)
			log_warn("%s: %s%s: %d more lines skipped", v->name, strcmp(v->driver_root, "/") ? v->driver_root : "",
				 files.v[i], r.bad - CSV_MAX_WARNINGS);
	}
	nfiles = 0;   /* the distinct files, for the bound */
	for (size_t i = 0; i < files.n; i++)
		nfiles += !i || strcmp(files.v[i], files.v[i - 1]) != 0;
	if (nfiles > CSV_MAX_FILES || total >= CSV_MAX_ITEMS)
		log_warn("%s: csv_files: more than %d files or %d entries; the rest ignored", v->name,
			 CSV_MAX_FILES, CSV_MAX_ITEMS);
	strv_free(&files);
	return 0;
}

/* A CSV item's kind as the driver root has it: a "lib" or "sym" line
 * whose path leads to a directory (JetPack's "sym, /usr/local/cuda") is
 * one; else as the line says */
static enum item_kind csv_kind(struct vctx *c, enum item_kind kind, const char *path)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (kind != KIND_LIBRARIES && kind != KIND_MISC)
		return kind;
	fd = root_open(c->rootfd, path, O_PATH);
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) ? KIND_DIRECTORIES : kind;
}

static void vctx_free(struct vctx *c)
{
	if (c->rootfd >= 0)
		close(c->rootfd);
	if (c->cache_state == 1)
		ldcache_free(&c->cache);
	free(c->version);
}
#define _cleanup_vctx_ __attribute__((cleanup(vctx_free)))

static void csv_free(struct strv (*csv)[KIND_COUNT])
{
	for (int k = 0; k < KIND_COUNT; k++)
		strv_free(&(*csv)[k]);
}
#define _cleanup_csv_ __attribute__((cleanup(csv_free)))

int plan_vendor(struct plan *p, const struct vendor *v, const struct plan_select *sel,
		struct oerr *err)
{
	_cleanup_vctx_ struct vctx c = { .v = v, .p = p, .rootfd = -1, .container = sel->container,
					 .privileged = sel->privileged, .by_path = sel->by_path };
	size_t before = p->n;
	_cleanup_free_ bool *selected = xcalloc(v->nfeatures, sizeof(*selected));
	_cleanup_csv_ struct strv csv[KIND_COUNT] = { 0 };

	if (vendor_select_features(v, sel->features, selected, err) < 0)
		return -1;
	/* another vendor file serves this platform (WSL2, a Jetson): nothing,
	 * not even a failure for a container that asks */
	if (!vendor_here(v))
		return 0;
	for (size_t f = 0; f < v->nfeatures; f++)
		c.arch32 |= selected[f] && v->features[f].libraries32;
	if (sel->container && v->proc_view) {
		p->views = xreallocarray(p->views, p->nviews + 1, sizeof(*p->views));
		p->views[p->nviews] = (struct plan_view){ .vendor = v };
		proc_view_entries(v, sel->devices, &p->views[p->nviews++].entries);
	}
	raise_nofile();
	c.rootfd = open(v->driver_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.rootfd < 0) {
		/* A driver container that is not there yet has nothing to offer;
		 * a user namespace made before it was mounted never sees it. A
		 * container that asked for the vendor fails (a GPU job on CPU
		 * costs more than a failed start), unless missing_driver = start. */
		const char *hint = in_initial_userns() ? "" : " (in a user namespace made before it was mounted? "
							      "rootless podman: podman system migrate)";
		int e = errno;

		if (sel->container && !v->missing_driver_start)
			return oerr_set(err, 0, "%s: asked for, but its driver is not there: driver_root %s: %s%s "
					"(missing_driver = start in %s lets such a container start without it)", v->name,
					v->driver_root, strerror(e), hint, v->file);
		if (sel->container)
			log_warn("%s: active, but driver_root %s: %s: the container gets nothing from it%s",
				 v->name, v->driver_root, strerror(e), hint);
		else
			log_debug("%s: driver_root %s: %s", v->name, v->driver_root, strerror(e));
		return 0;
	}
	c.version = read_version(v);
	if (sel->requires && sel->requires->n && check_requirements(&c, sel->requires, err) < 0)
		return -1;
	if (!sel->nodes_only && read_csv_files(&c, selected, csv, err) < 0)
		return -1;
	if (v->application_profile && !sel->nodes_only && !p->app_profile)
		p->app_profile = v->application_profile;
	if (v->cuda_compat_dir && c.version && !sel->nodes_only && !p->compat_dir) {
		p->compat_dir = v->cuda_compat_dir;
		p->compat_host = xstrdup(c.version);
	}
	/* Devices first: the feature lists, then the selected per-device nodes. */
	for (int k = 0; k < KIND_COUNT; k++) {
		for (size_t f = 0; f < v->nfeatures; f++) {
			if (!selected[f])
				continue;
			for (size_t i = 0; !sel->nodes_only && i < v->features[f].items[k].n; i++)
				add_item(&c, (enum item_kind)k, v->features[f].items[k].v[i]);
		}
		for (size_t i = 0; i < csv[k].n; i++)
			add_existing(&c, csv_kind(&c, (enum item_kind)k, csv[k].v[i]), csv[k].v[i]);
		if (k == KIND_DEVICES &&
		    add_devices(&c, sel, sel->container && v->proc_view ? &p->views[p->nviews - 1].entries : NULL, err) < 0)
			return -1;
		if (k == KIND_DEVICES)
			add_bus_devices(&c, selected, sel->devices);
	}
	if (p->n == before && sel->container && !v->missing_driver_start &&
	    !(sel->devices && sel->devices->kind == SEL_NONE))
		return oerr_set(err, 0, "%s: asked for, but none of its files is under driver_root %s: is the "
				"driver installed? (missing_driver = start in %s lets such a container start without "
				"it)", v->name, v->driver_root, v->file);
	if (p->n == before && sel->container)
		log_warn("%s: active, but none of its files is under driver_root %s: the container gets "
			 "nothing from it", v->name, v->driver_root);
	return 0;
}

static void plan_item_free(struct plan_item *it)
{
	free(it->path);
	free(it->host);
	free(it->target);
	free(it->host_target);
	free(it->link_name);
	if (it->fd >= 0)
		close(it->fd);
	if (it->link_dirfd >= 0)
		close(it->link_dirfd);
}

void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		plan_item_free(&p->items[i]);
	free(p->items);
	for (size_t i = 0; i < p->nviews; i++)
		strv_free(&p->views[i].entries);
	free(p->views);
	free(p->compat_host);
	strv_free(&p->netdevs);
	memset(p, 0, sizeof(*p));
}

static void fd_path(const struct plan_item *it, bool link, char *buf, size_t n)
{
	if (link)
		snprintf(buf, n, "/proc/self/fd/%d/%s", it->link_dirfd, it->link_name);
	else
		snprintf(buf, n, "/proc/self/fd/%d", it->fd);
}

ssize_t plan_getxattr(const struct plan_item *it, bool link, const char *name, char *buf, size_t n)
{
	char p[PATH_MAX];

	fd_path(it, link, p, sizeof(p));
	return link ? lgetxattr(p, name, buf, n) : getxattr(p, name, buf, n);
}

int plan_setxattr(const struct plan_item *it, bool link, const char *name, const char *value, size_t n)
{
	char p[PATH_MAX];

	fd_path(it, link, p, sizeof(p));
	return link ? lsetxattr(p, name, value, n, 0) : setxattr(p, name, value, n, 0);
}

int plan_label_walk(const struct config *cfg, char *const *names, int n, bool every, plan_label_fn fn, void *arg,
		    struct oerr *err)
{
	struct plan_select sel = { .features = "all" };
	struct strv seen = { 0 };
	int r = 0;

	for (size_t i = 0; i < cfg->n && r == 0; i++) {
		const struct vendor *v = &cfg->vendors[i];
		struct plan plan = { 0 };

		if (!vendor_named(v, names, n) || (!every && !v->selinux_device_context && !v->selinux_file_context))
			continue;
		r = plan_vendor(&plan, v, &sel, err);
		for (size_t k = 0; k < plan.n && r == 0; k++) {
			const struct plan_item *it = &plan.items[k];
			const char *paths[2] = { it->host, it->host_target };

			for (int p = 0; p < 2; p++) {
				bool link = p == 0 && it->link_dirfd >= 0;
				const char *ctx;

				if (!paths[p] || strv_contains(&seen, paths[p]))
					continue;
				strv_push(&seen, paths[p]);
				ctx = !link && (S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode))
					      ? v->selinux_device_context : v->selinux_file_context;
				if (ctx || every)
					fn(v, it, link, paths[p], ctx, arg);
			}
		}
		plan_free(&plan);
	}
	strv_free(&seen);
	return r;
}
