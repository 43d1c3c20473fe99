/* ldcache.h: glibc's ld.so.cache ("glibc-ld.so.cache1.1"), read and written.
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
 *
 * The writer produces what glibc 2.36's ldconfig writes by default (the new
 * format alone): entries in the order the loader's binary search needs
 * (elf/cache.c's compare), the string table sorted and tail-merged as
 * elf/stringtable.c does it, the extension directory after it. Given the same
 * entries, the bytes are glibc's up to the generator string, which names us.
 */
#ifndef OCIDEC_LDCACHE_H
#define OCIDEC_LDCACHE_H

#include <stdint.h>

#include "formats/elf.h"
#include "base/util.h"

#define LDCACHE_MAX_SIZE (64u * 1024 * 1024)

/* Entry flags: type in the low byte, ABI ("required") in the high byte. */
#define LDC_FLAG_TYPE_MASK     0x00ff  /* ELF_FLAG_LIBC6 (elf.h) and the like */
#define LDC_FLAG_REQUIRED_MASK 0xff00  /* what the loader requires: */
#define LDC_FLAG_X8664_LIB64   0x0300
#define LDC_FLAG_S390_LIB64    0x0400
#define LDC_FLAG_POWERPC_LIB64 0x0500
#define LDC_FLAG_X8664_LIBX32  0x0800
#define LDC_FLAG_ARM_LIBHF     0x0900
#define LDC_FLAG_AARCH64_LIB64 0x0a00
#define LDC_FLAG_ARM_LIBSF     0x0b00
#define LDC_FLAG_RISCV_DOUBLE  0x1000  /* glibc's FLAG_RISCV_FLOAT_ABI_DOUBLE */
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

/* An architecture as glibc's ldconfig sees it (glibc 2.36's
 * sysdeps/unix/sysv/linux/ARCH/{readelflib.c,dl-cache.h,ldconfig.h}): the
 * Debian multiarch triplet, the directories an upstream build (Fedora,
 * RHEL, SUSE) trusts and the siblings its add_system_dir adds to a
 * ".../lib", musl's loader name, how a library's flags are found, the flags
 * of its own libraries, the interpreters that mark libc6 objects, and the
 * 32-bit architecture whose libraries its hosts also run. One table of them
 * (ldcache.c), this build's among them. */
enum ldarch_classify { CL_X86, CL_AARCH64, CL_ARM, CL_LIB64 };
struct ldarch {
	const char *name, *triplet, *musl;
	const char *upstream[2];
	const char *siblings[3];
	enum ldarch_classify classify;
	int flags;
	const char *const *interps;
	const char *compat32;  /* an arch's name (i386 on x86_64), or NULL */
};
/* The architecture NAME ("x86_64", "aarch64", ...), this build's for NULL
 * or "", or NULL when there is none of that name */
const struct ldarch *ldarch_find(const char *name);
/* The flags of libraries the dynamic loader of the architecture ocidec
 * was built for uses (0x0303 on x86-64): this build's architecture. */
int32_t ldcache_host_flags(void);
/* The flags of the 32-bit libraries this build's host also runs (i386 on
 * x86-64, armhf on aarch64), or -1 when it has none. */
int32_t ldcache_host32_flags(void);

/* "libc6,x86-64" and the like, as ldconfig -p prints them (without parens). */
void ldcache_describe(const struct ldcache_entry *e, char *out, size_t outsz);

/* glibc's _dl_cache_libcmp: names compared with digit runs as numbers. */
int ldcache_libcmp(const char *p1, const char *p2);

/* Collects entries for a new cache; zero-initialise it. */
struct ldcache_builder {
	struct ldcache_new_entry *e;
	size_t n, cap;
	struct ldcache_hwcaps_dir *hw;
	size_t nhw, hwcap_cap;
};

/* Register a glibc-hwcaps subdirectory name (its string goes into the table
 * even when no library in it is added, as glibc's does); returns its handle. */
int ldcache_builder_hwcaps(struct ldcache_builder *b, const char *name);
/* Add an entry. HWCAPS is a handle from ldcache_builder_hwcaps or -1 (then
 * HWCAP is the legacy hwcap mask of the directory, ISA_LEVEL unused). Entries
 * that compare equal keep the order they were added in. */
void ldcache_builder_add(struct ldcache_builder *b, const char *soname, const char *path,
			 int32_t flags, unsigned isa_level, uint64_t hwcap, int hwcaps);
/* Add an entry read from an existing cache (its hwcaps subdirectory and ISA
 * level kept), after those already added. */
void ldcache_builder_add_entry(struct ldcache_builder *b, const struct ldcache_entry *e);
/* Add every entry of an existing cache, after those already added. */
void ldcache_builder_add_cache(struct ldcache_builder *b, const struct ldcache *c);
/* The cache file's bytes. */
int ldcache_build(struct ldcache_builder *b, const char *generator, char **out, size_t *len,
		  struct oerr *err);
void ldcache_builder_free(struct ldcache_builder *b);

#endif
