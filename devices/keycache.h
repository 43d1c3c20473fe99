/* keycache.h: the idle path's index of the activation keys.
 *
 * Every container on the host runs the hook (or the runtime shim), and most
 * ask for nothing: deciding that should not parse every vendor file. The
 * keys config_activation_keys finds in a config directory are kept in
 * KEYCACHE_DIR/keys-DEV-INO (the directory's device and inode) with the
 * stamps of the directory and of each *.ini file they came from (inode,
 * size, mtime and ctime to the nanosecond); an index is trusted only while
 * every stamp is unchanged, is owned by the caller, written by no one else,
 * and is written only when every stamp is older than KEYCACHE_SETTLE
 * seconds (an edit within one clock tick of the scan cannot hide), and
 * trusted for KEYCACHE_TTL seconds at most: an edit no stamp shows (a
 * second write through a shared mapping whose page is still dirty; a
 * network file system's cached attributes) is seen within that time. The
 * index names the ocidec version that wrote it (another version's keys may
 * differ). A miss, or no usable KEYCACHE_DIR (rootless, a read-only /run),
 * is the full scan, as without the index. Indexes not written for
 * KEYCACHE_SWEEP seconds are removed when another one is written.
 */
#ifndef OCIDEC_KEYCACHE_H
#define OCIDEC_KEYCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

#define KEYCACHE_DIR "/run/ocidec"
/* KEYCACHE_DIR (ocidec's run directory: the indexes, the MIG map, the NRI
 * plugin's control socket), open (O_DIRECTORY, never through a link), when
 * it is the caller's and no one else may write it (CREATE: made 0755 when
 * missing); else -1 */
int run_dirfd(bool create);
struct stat;
/* The index's name for the config directory DIR ("keys-DEV-INO"), in NAME */
void keycache_name(const struct stat *dir, char name[64]);
/* The first line of an index: the format, and the version that wrote it */
#define KEYCACHE_MAGIC "ocidec activation keys 2 " OCIDEC_VERSION "\n"
enum { KEYCACHE_SETTLE = 2, KEYCACHE_TTL = 60, KEYCACHE_SWEEP = 3600, KEYCACHE_MAX = 4096 };

/* Keys, each with its length: as.v[0..as.n) and len[0..as.n) point into
 * MEM and TEXT (the index's own text, when it was used: the idle path
 * allocates as little as it can); as is a read-only view, never
 * strv_free'd */
struct keyset {
	struct strv as;
	const size_t *len;
	void *mem, *text;
};
void keyset_free(struct keyset *k);

/* config_activation_keys(DIR, ...) through the index (made on a miss):
 * 0 with the keys (none for a missing DIR), -1 when a file cannot be
 * scanned. */
int keycache_keys(const char *dir, struct keyset *keys);

/* The index of the configs an install put under PREFIX/etc/ocidec.d on
 * the host root ROOT (the hook's and the shim's, in the host's
 * /run/ocidec), removed: it goes with them */
void keycache_forget(int root, const char *prefix);

/* The text of an index, read record by record: FN(KIND, STAMP, STRING,
 * its LENGTH, ARG) for the directory ('d', STRING NULL), each file ('f',
 * its name) and each key ('k', STAMP NULL), in that order, then a last line
 * "end"; the strings point into TEXT, which it changes (a NUL over each
 * newline). -1 when TEXT is not a whole
 * index (of this version) or FN returns nonzero.
 * Exposed for the fuzz target and the unit tests. */
struct keycache_stamp {
	unsigned long long dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns;
};
int keycache_walk(char *text, size_t len,
		  int (*fn)(char kind, const struct keycache_stamp *st, const char *s, size_t n, void *arg), void *arg);

#endif
