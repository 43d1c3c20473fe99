/* plan.h: what a set of vendors would inject, as a plain value.
 *
 * Parse (config) -> plan (this) -> container edits (edits.h) -> apply
 * (mounts, cgroup, cache: the hook) or print (--dry-run). `list`, `relabel`
 * and `selinux-check` use a plan's host side directly. Building a plan only looks at the host: it resolves each
 * configured name under the vendor's driver_root (ocidec(1), VENDOR CONFIGS) and keeps
 * what exists.
 */
#ifndef OCIDEC_PLAN_H
#define OCIDEC_PLAN_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "devices/config.h"
#include "devices/devices.h"

/* Every path is resolved once, inside the driver root, and held as a
 * descriptor: that descriptor is what is cloned into a container, fstat'ed
 * for the device cgroup rule, labelled and checked. The host strings are
 * for people (list, logs): driver_root + the canonical path inside it, so a
 * symlink in the driver root (dev -> /x) never names a host path outside. */
struct plan_item {
	enum item_kind kind;
	const struct vendor *vendor;
	char *path;        /* as configured (globs expanded): the container path */
	char *host;        /* driver_root + canonical path of the item itself */
	char *target;      /* path is a symlink: its canonical target (driver-root view) */
	char *host_target; /* driver_root + target */
	int fd;            /* O_PATH: what is injected (a symlink: its target) */
	int link_dirfd;    /* a symlink: O_PATH of its directory, else -1 */
	char *link_name;   /* a symlink: its name there */
	struct stat st;    /* of fd */
};

/* A vendor's proc_view for a container: the entries of its devices
 * (procview.h) */
struct plan_view {
	const struct vendor *vendor;
	struct strv entries;
};

struct plan {
	struct plan_item *items;
	size_t n, cap;
	struct plan_view *views;   /* container requests only */
	size_t nviews;
	const char *app_profile;   /* a vendor's application_profile */
	const char *compat_dir;    /* a vendor's cuda_compat_dir, */
	char *compat_host;         /* and its driver's version (the compat libcuda
				    * is preferred when its major is greater) */
	struct strv netdevs;       /* the selected devices' network interfaces (pci_net):
				    * host names, each once */
	bool netdevs_some;         /* some of them from a selection of some devices, not
				    * all: the container must have them alone */
};

struct plan_select {
	const char *features;  /* "all", a list, or NULL: the vendor's driver_feature */
	const struct selection *devices;  /* devices.h: all, none, indices, MIG devices;
					   * NULL: every node that exists */
	bool container;        /* a container's request (hook, inject): a device index
				* that does not exist fails it, finding nothing warns */
	bool privileged;       /* that container has CAP_SYS_ADMIN (ipc_writable) */
	bool by_path;          /* the edits name host paths that an engine mounts
				* later (CDI specs, the shim's config.json), not
				* descriptors: no IPC path in a directory anyone
				* may write, where anyone could put their own first */
	bool nodes_only;       /* only the per-device nodes DEVICES selects (cdi: one
				* device's own edits) */
	const struct strv *requires; /* the image's requirements (require.h): one
				      * that does not hold fails the plan */
	unsigned mig_caps;       /* MIG_CAP_CONFIG, MIG_CAP_MONITOR */
};

/* Add vendor V's items for SEL to P. Nonexistent paths are skipped (debug
 * log); a bad selection is a usage error. */
int plan_vendor(struct plan *p, const struct vendor *v, const struct plan_select *sel,
		struct oerr *err);
void plan_free(struct plan *p);

/* The indices of vendor V's per-device nodes that exist in its driver
 * root, sorted, each once (*N of them; NULL when none). */
unsigned long *plan_node_indices(const struct vendor *v, size_t *n);

/* relabel and selinux-check: for each path the vendor configs label
 * (vendors named in NAMES, all when N is 0, that set a context; EVERY: each
 * path of every vendor, CONTEXT NULL where its config names none), once per
 * path: FN(vendor, item, link, path, context, arg), where LINK says PATH is
 * the item's symlink (labelled as a file, not through it) and CONTEXT is
 * the device or the file context. A plan that fails stops the walk (-1,
 * ERR); FN's count of failures is its own business. */
typedef void (*plan_label_fn)(const struct vendor *v, const struct plan_item *it, bool link,
			      const char *path, const char *context, void *arg);
int plan_label_walk(const struct config *cfg, char *const *names, int n, bool every, plan_label_fn fn, void *arg,
		    struct oerr *err);

/* The item's SELinux attribute (or any xattr) through its descriptors: the
 * symlink itself when LINK (lgetxattr on its directory's descriptor + name),
 * else what fd is. */
ssize_t plan_getxattr(const struct plan_item *it, bool link, const char *name, char *buf, size_t n);
int plan_setxattr(const struct plan_item *it, bool link, const char *name, const char *value, size_t n);

/* Vendor V's driver version (version_file, "535.261.03") and CUDA version
 * (from cuda_version_library's text, read, never run) into *DRIVER and
 * *CUDA, each NULL when unknown (free them). */
void plan_driver_versions(const struct vendor *v, char **driver, char **cuda);
/* Directories searched for bare binary names, in order. */
extern const char *const plan_binary_dirs[];

#endif
