/* ldconfig.h: rebuild a tree's ld.so.cache the way glibc's ldconfig -r does,
 * without running anything from the tree and without leaving it.
 *
 * The directory list is glibc 2.36's: the DIRs given, then ld.so.conf (its
 * `include` globs nested, a file that includes itself skipped), then the
 * trusted directories, each followed by its glibc-hwcaps subdirectories,
 * duplicates (same inode) dropped. Every path is resolved inside the tree
 * (rootpath.h); files are opened O_PATH, checked to be regular, and only then
 * reopened for reading, so a device node or FIFO planted in an image is never
 * opened. SONAME symlinks are made with symlinkat to a temporary name and
 * renameat over the old link; the cache is written to a temporary file in its
 * directory, fsynced and renamed, so a failure leaves the old one in place.
 */
#ifndef OCIDEC_LDCONFIG_H
#define OCIDEC_LDCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

struct ldconfig {
	int rootfd;             /* the tree; paths below are inside it */
	const char *conf;       /* default /etc/ld.so.conf */
	const char *cache;      /* default /etc/ld.so.cache */
	bool no_links;          /* -X: create no SONAME symlinks */
	char *const *dirs;      /* extra directories (absolute) */
	size_t ndirs;
};

/* OCIDEC_LDCACHE_ARCH (tests; never read by the hook), or NULL: the build's. */
extern const char *ldconfig_arch;

/* A full rebuild, like `ldconfig -r ROOT DIR...`. */
int ldconfig_rebuild(const struct ldconfig *o, struct oerr *err);

/* The hook's fast path: scan only the DIRs and merge them into the existing
 * cache, giving the entries a full rebuild would give when the old cache was
 * itself complete. Without a readable cache it rebuilds. In a musl-based
 * tree (/lib/ld-musl-ARCH.so.1) the DIRs go into /etc/ld-musl-ARCH.path
 * instead, and a cache is only updated when the tree has one. */
int ldconfig_add(const struct ldconfig *o, struct oerr *err);

/* glibc trees with /etc/ld.so.conf.d: one drop-in per DIR
 * (00-ocidec-opt-vendor-lib.conf holding "/opt/vendor/lib"), so that the
 * container's own ldconfig keeps the DIRs in its cache. Written only when
 * missing or different; a read-only tree is left alone. */
int ldconfig_dropin(const struct ldconfig *o, struct oerr *err);

/* musl only: add the DIRs to /etc/ld-musl-ARCH.path when the tree has
 * musl's loader. Returns 1 when it has, 0 when not, -1 on error. */
int ldconfig_musl_path(const struct ldconfig *o, struct oerr *err);


#endif
