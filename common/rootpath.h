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

#include <stdbool.h>
#include <sys/stat.h>

#include "common/util.h"

/* Tests set OCIDEC_RESOLVE=fallback to run the walk even where openat2 works. */
extern bool rootpath_force_fallback;
void rootpath_init(void);

/* Open PATH inside ROOTFD with open(2) FLAGS (O_PATH, O_RDONLY, O_DIRECTORY,
 * O_NOFOLLOW: the last component itself when it is a symlink). Returns a
 * descriptor, or -1 with errno set. */
int root_open(int rootfd, const char *path, int flags);

/* The canonical absolute path of PATH inside ROOTFD, every symlink followed
 * (the last one too); -1 with errno set when it does not resolve. */
int root_realpath(int rootfd, const char *path, char **out);

/* Append to OUT, sorted, every existing path inside ROOTFD matching the
 * absolute shell PATTERN (wildcards * ? [ ] in any component, which never
 * match a leading dot). Unreadable directories match nothing. */
void root_glob(int rootfd, const char *pattern, struct strv *out);

bool path_has_glob(const char *s);

/* Open for reading the regular file PATHFD (an O_PATH descriptor) refers to,
 * never anything else: a device node or FIFO planted where a file was
 * expected is not opened. The reopen goes through /proc/self/fd; without
 * /proc, PATH is opened again (inside ROOTFD when IN_ROOT, else relative to
 * it, O_NOFOLLOW) and must be the same inode. ST gets the file's status.
 * Returns the descriptor; -2 when it is not a regular file; -1 with errno. */
int reopen_regular(int pathfd, int rootfd, const char *path, bool in_root, struct stat *st);

#endif
