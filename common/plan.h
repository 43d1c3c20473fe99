/* plan.h: what a set of vendors would inject, as a plain value.
 *
 * Parse (config) -> plan (this) -> apply (mounts, cgroup, cache: the hook).
 * `list` prints a plan's host paths, `inject --dry-run` prints it whole, the
 * hook applies it. Building a plan only looks at the host: it resolves each
 * configured name under the vendor's driver_root (SPEC section 3) and keeps
 * what exists.
 */
#ifndef OCIDEC_PLAN_H
#define OCIDEC_PLAN_H

#include <sys/types.h>

#include "common/config.h"

struct plan_item {
	enum item_kind kind;
	const struct vendor *vendor;
	char *path;        /* as seen inside the driver root; also the container path */
	char *host;        /* driver_root + path */
	char *target;      /* path is a symlink: where it resolves (driver-root view) */
	char *host_target; /* driver_root + target */
	mode_t mode;       /* of the file finally opened (after symlinks) */
	dev_t rdev;
};

struct plan {
	struct plan_item *items;
	size_t n, cap;
};

struct plan_select {
	const char *features;  /* "all", a list, or NULL: the vendor's driver_feature */
	const char *devices;   /* "all", "none", indices; NULL: every node that exists */
};

/* Add vendor V's items for SEL to P. Nonexistent paths are skipped (debug
 * log); a bad selection is a usage error. */
int plan_vendor(struct plan *p, const struct vendor *v, const struct plan_select *sel,
		struct oerr *err);
void plan_free(struct plan *p);

/* Directories searched for bare binary names, in order. */
extern const char *const plan_binary_dirs[];

#endif
