/* rootpath.h: resolve paths inside a directory tree as if it were "/".
 *
 * Every open inside a container rootfs or a driver root goes through here:
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) where the kernel has it,
 * else a component-by-component walk that keeps one O_PATH descriptor per
 * level (so ".." never climbs above the root), reads symlinks as text and
 * restarts them at the root, refuses magic links (procfs symlinks), and
 * re-checks the result through /proc/self/fd. No symlink, ".." or magic link
 * in the tree can make a lookup land outside it.
 */
#ifndef OCIDEC_ROOTPATH_H
#define OCIDEC_ROOTPATH_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/util.h"

/* "fallback" (tests: OCIDEC_RESOLVE for most applets, --resolver for the
 * hook) runs the walk even where openat2 works, and reads mount ids from
 * /proc fdinfo instead of statx: the code paths of kernels before 5.6/5.8. */
extern bool rootpath_force_fallback;
/* The most symlinks one path resolution follows (Linux's own limit, ELOOP
 * beyond), inside a root as the kernel does outside one. */
#define MAX_SYMLINKS 40

/* The host's /proc, opened once at start, before any setns: a descriptor is
 * reopened through it ("self/fd/N") whatever mount namespace the process has
 * entered since, and whatever the container's /proc shows. -1 without /proc.
 * proc_open opens it (once; later calls do nothing): the dispatcher calls it
 * before an applet starts, the hook once it knows a container asks for a
 * vendor (container_decide: the idle path needs no /proc). */
extern int proc_fd;
void proc_open(void);
/* The resolver ("fallback": the code path of kernels without openat2;
 * NULL: openat2 where the kernel has it), and proc_open */
void rootpath_init(const char *resolver);

/* Is this process in the initial user namespace (its uid_map the identity
 * over all 2^32 - 1 ids)? Read once, through proc_fd. */
bool in_initial_userns(void);
/* The overflow uid: what an id not mapped into this user namespace shows as
 * (/proc/sys/kernel/overflowuid, 65534 by default). */
unsigned overflow_uid(void);
/* Is ST, an entry of the directory PARENT (its stat), root's as far as
 * this process can tell? uid 0 is. In a user namespace other than the
 * initial one the overflow uid is unknown, not root: every host id the
 * namespace does not map shows as it (the host's root, and every other
 * user of a rootless engine's host). It counts only where PARENT is
 * writable by no one but its owner and that owner is 0 or the overflow uid
 * too: no unprivileged user could have put ST there (/tmp/nvidia-mps in
 * /tmp, mode 1777, is anyone's). */
bool owned_by_root(const struct stat *st, const struct stat *parent);

/* The id of the mount FD is on (statx STATX_MNT_ID, else /proc fdinfo). */
int fd_mnt_id(int fd, uint64_t *id);

/* Confinement (the hook, in a container's rootfs). Once ROOTFD is confined,
 * every descriptor root_open returns for it, and every file reopen_regular
 * reads for it, must lie on one of the mounts allowed for ROOTFD (the rootfs's
 * own mount, the runtime's /dev, the hook's own mounts), or the call fails
 * with EXDEV: nothing is read, made or removed in a volume, procfs, sysfs or
 * devtmpfs that a symlink in the image points into. A file read for a
 * confined root must also be readable by everyone (else EACCES), so nothing
 * reaches the hook's output that the container's user could not read. */
void root_confine(int rootfd);
void root_confine_allow(int rootfd, uint64_t mnt_id);
void root_unconfine(int rootfd);
bool root_confined(int rootfd);
/* 0 when FD may be used for ROOTFD (always, unconfined); -1 with EXDEV. */
int root_check_mount(int rootfd, int fd);

/* Open PATH inside ROOTFD with open(2) FLAGS (O_PATH, O_RDONLY, O_DIRECTORY,
 * O_NOFOLLOW: the last component itself when it is a symlink). Returns a
 * descriptor, or -1 with errno set. */
int root_open(int rootfd, const char *path, int flags);
/* The same, on any mount even for a confined ROOTFD (the hook, finding the
 * mount it has just made, or the runtime's /dev before allowing it). */
int root_open_any(int rootfd, const char *path, int flags);
/* The directory PATH inside ROOTFD (root_open), open for readdir; NULL
 * with errno set. */
DIR *root_opendir(int rootfd, const char *path);

/* The canonical absolute path of PATH inside ROOTFD, every symlink followed
 * (the last one too); -1 with errno set when it does not resolve. */
int root_realpath(int rootfd, const char *path, char **out);

/* Append to OUT, sorted, every existing path inside ROOTFD matching the
 * absolute shell PATTERN (wildcards * ? [ ] in any component, which never
 * match a leading dot). Unreadable directories match nothing. Bounded: at
 * most MAX results, MAX * 64 directory entries looked at, PATH_MAX bytes of
 * pattern or path; returns -1 (what was found kept) when a bound or the
 * deadline cut it short, else 0. */
int root_glob(int rootfd, const char *pattern, struct strv *out, size_t max);
/* ROOTFD for root_glob: the host's own paths, as glob(3) walks them
 * (links followed on the way; the last component may be a link) */
#define HOST_ROOT (-100000)

bool path_has_glob(const char *s);

/* Open for reading the regular file PATHFD (an O_PATH descriptor found in
 * ROOTFD) refers to, never anything else: a device node or FIFO planted where
 * a file was expected is not opened, and no path is looked up again. The
 * reopen goes through proc_fd ("self/fd/N"); without /proc it fails (ENOSYS).
 * For a confined ROOTFD the mount and mode rules above apply. ST gets the
 * file's status. Returns the descriptor; -2 when it is not a regular file;
 * -1 with errno. */
int reopen_regular(int rootfd, int pathfd, struct stat *st);
/* The same with ST, PATHFD's status, already read (fstat) */
int reopen_regular_stat(int rootfd, int pathfd, const struct stat *st);

/* Open DIR inside ROOTFD as an O_PATH descriptor, making its missing
 * components (0755), each after BEFORE(its path, ARG, ERR) (if not
 * NULL; its -1 stops). With ROOT_MKDIRS_DANGLING, a component that is
 * a dangling symlink is followed inside the root and what it names is made
 * (a container's /usr/lib64 -> lib); every open goes through root_open,
 * so no text in a link leads outside. -1 (ERR) on failure. */
#define ROOT_MKDIRS_DANGLING 1u
int root_mkdirs(int rootfd, const char *dir, unsigned flags, int (*before)(const char *path, void *arg, struct oerr *err), void *arg,
		struct oerr *err);

#endif
