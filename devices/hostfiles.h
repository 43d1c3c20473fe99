/* hostfiles.h: NVIDIA's CSV lists of host files for containers (Jetson's
 * L4T: the .csv files of /etc/nvidia-container-runtime/host-files-for-container.d,
 * lines "TYPE, PATH": dev, lib, sym, dir), read as a vendor's items (a
 * feature's csv_files key, plan.c). A list is trusted as a vendor file is
 * (hostfiles_read); the parsers are pure. */
#ifndef OCIDEC_HOSTFILES_H
#define OCIDEC_HOSTFILES_H

#include <stddef.h>

#include "devices/config.h"

/* One line (LINE, N bytes, no newline): 1 with *KIND and *PATH (malloc'd)
 * an item; 0 for a blank or '#' comment line; -1 with *WHY (static text)
 * for a line that is not "TYPE, PATH". The path is everything after the
 * first comma, blanks trimmed (a path may hold commas, as NVIDIA's parser
 * allows); dev takes a bare name under /dev or an absolute path, the
 * others an absolute path. lib and sym are libraries (their directory goes
 * into the container's cache) when the name has ".so", else single files;
 * dir a directory. */
int hostfiles_line(const char *line, size_t n, enum item_kind *kind, char **path, const char **why);

/* Every line of BUF (LEN bytes): FN(ARG, line number, kind, path) for each
 * item, BAD(ARG, line number, why) for each line that is none. At most
 * MAX items (the rest ignored); the number of items given. */
size_t hostfiles_parse(const char *buf, size_t len, size_t max,
		       void (*fn)(void *arg, int line, enum item_kind kind, const char *path),
		       void (*bad)(void *arg, int line, const char *why), void *arg);

/* The list at PATH in the driver root ROOTFD (a path with no link left:
 * root_realpath's), at most MAX bytes, into *BUF and *LEN, held to the
 * vendor files' rule (config_check_owner): root's, and written by no one
 * else, in a directory of root's that no one else may write. 1 read; 0
 * not there; -1 (ERR naming the file, SHOWN_ROOT in front of PATH: the
 * driver root as the administrator sees it, "" for /) when it cannot be
 * read or is refused: EXIT_USAGE, nothing read. */
int hostfiles_read(int rootfd, const char *path, const char *shown_root, size_t max, char **buf, size_t *len,
		   struct oerr *err);

#endif
