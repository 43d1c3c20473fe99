/* ldcache.h: glibc's ld.so.cache ("glibc-ld.so.cache1.1"), read side.
 *
 * Layout (all integers in host byte order, as glibc writes them):
 *   header, 48 bytes: magic "glibc-ld.so.cache" "1.1", nlibs, len_strings,
 *     flags (byte order: 2 little, 3 big), 3 pad, extension_offset, 3 unused
 *   nlibs entries, 24 bytes: int32 flags, uint32 key, uint32 value,
 *     uint32 osversion, uint64 hwcap
 *   string table; key/value offsets count from the new header's start
 *   optional extension directory at extension_offset (a file offset):
 *     generator string (tag 0), glibc-hwcaps subdirectory names (tag 1)
 * An old "ld.so-1.7.0" table may come first (compat format); it is skipped.
 */
#ifndef OCIDEC_LDCACHE_H
#define OCIDEC_LDCACHE_H

#include <stdint.h>

#include "common/util.h"

#define LDCACHE_MAX_SIZE (64u * 1024 * 1024)

/* Entry flags: type in the low byte, ABI ("required") in the high byte. */
#define LDC_FLAG_TYPE_MASK     0x00ff
#define LDC_FLAG_ELF_LIBC6     0x0003
#define LDC_FLAG_REQUIRED_MASK 0xff00
#define LDC_HWCAP_EXTENSION    (1ULL << 62)

struct ldcache_entry {
	int32_t flags;
	const char *key;           /* SONAME */
	const char *value;         /* path */
	uint32_t osversion;
	uint64_t hwcap;
	const char *hwcaps_subdir; /* glibc-hwcaps name when hwcap uses the extension */
};

struct ldcache {
	char *buf;
	size_t size;
	size_t n;
	struct ldcache_entry *e;
	const char *generator;     /* "ldconfig (GNU libc) ...", not terminated */
	size_t generator_len;
};

/* Parse BUF[SIZE], which C takes over (on error it is freed at once). */
int ldcache_parse(struct ldcache *c, char *buf, size_t size, struct oerr *err);
/* Read and parse an open cache file. */
int ldcache_load_fd(struct ldcache *c, int fd, struct oerr *err);
void ldcache_free(struct ldcache *c);

/* The flags of libraries the host's dynamic loader uses (0x0303 on x86-64). */
int32_t ldcache_host_flags(void);

/* "libc6,x86-64" and the like, as ldconfig -p prints them (without parens). */
void ldcache_describe(const struct ldcache_entry *e, char *out, size_t outsz);

#endif
