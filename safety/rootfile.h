/* rootfile.h: writing files inside a root (a container's rootfs, the
 * host's root as an installer sees it), every path resolved by root_open:
 * the atomic writer, its temporary names, and the sweep of those that a
 * killed writer left. The container's ld.so.cache and links (ldconfig.c),
 * the shim's config.json, CDI specs and the installer's files all go
 * through here. */
#ifndef OCIDEC_ROOTFILE_H
#define OCIDEC_ROOTFILE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/util.h"

/* Write BUF to PATH inside ROOTFD: temporary file in the same directory,
 * made with MODE, fsync (when DURABLE), rename over PATH, fsync the
 * directory (when DURABLE is ROOT_SYNC_DIR, true: the rename itself lasts
 * through a crash; ROOT_SYNC_FILE: the old file or the whole new one after
 * a crash, as glibc's ldconfig writes its cache). */
enum { ROOT_SYNC_FILE = 2, ROOT_SYNC_DIR = 1 };
int root_write_atomic(int rootfd, const char *path, const void *buf, size_t len, mode_t mode, int durable,
		      struct oerr *err);
/* The regular file PATH inside ROOTFD (not through a final symlink), at
 * most MAX bytes, into *BUF (*LEN, NUL-terminated; ST its stat if not
 * NULL): 1; 0 when there is none; -1 (ERR) when it cannot be read or is
 * no regular file. */
int root_read_file(int rootfd, const char *path, size_t max, char **buf, size_t *len, struct stat *st,
		   struct oerr *err);
/* NAME in the directory DIRFD becomes a symlink to TEXT, atomically (made
 * under a temporary name, renamed over NAME). -1 with errno on failure,
 * nothing left behind. */
int root_symlink_atomic(int dirfd, const char *name, const char *text);
/* A temporary name for BASE in its directory (".BASE.ocidec-" and 16 hex
 * digits): hidden, so no scan ever takes it for a library. */
char *root_temp_name(const char *base);
/* The writers' lock on a directory (flock on DFD, an O_RDONLY descriptor;
 * closing it releases the lock), and the sweep it allows: a temporary name
 * of ours still there while we hold the lock was left by a writer that was
 * killed, so it goes. A lock held by someone else for ~200 ms (a container
 * keeping it) means no sweep this time. */
bool root_dir_lock_sweep(int dfd);   /* (true: locked) */
/* root_dir_lock_sweep for a run of writes (root_write_atomic) there: the
 * lock (when it was had) held by DFD until root_dir_release, which the caller calls before it
 * closes DFD; the writes in that directory meanwhile take it as theirs */
void root_dir_hold(int dfd);
void root_dir_release(void);

#endif
