/* ldcache.c: read glibc's ld.so.cache, trusting no offset in it. */
#include "formats/ldcache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_OLD "ld.so-1.7.0"
#define MAGIC_NEW "glibc-ld.so.cache1.1"
#define HDR_NEW_SIZE 48u
#define ENTRY_NEW_SIZE 24u
#define ENTRY_OLD_SIZE 12u
#define EXT_MAGIC 0xeaa42174u  /* (uint32_t) -358342284 */

/* The architectures (ldcache.h's struct ldarch): the one table of them */
static const char *const x86_interps[] = {
	"/lib/ld-linux-x86-64.so.2", "/lib/ld-linux.so.2", "/libx32/ld-linux-x32.so.2",
	"/lib64/ld-linux-x86-64.so.2", NULL,
};
static const char *const arm_interps[] = {
	"/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-aarch64_be.so.1",
	"/lib/ld-linux-aarch64_ilp32.so.1", "/lib/ld-linux-aarch64_be_ilp32.so.1",
	"/lib/ld-linux.so.3", "/lib/ld-linux-armhf.so.3", NULL,
};

static const struct ldarch arches[] = {
	{ "x86_64", "x86_64-linux-gnu", "x86_64", { "/lib64", "/usr/lib64" }, { "64", "x32" },
	  CL_X86, ELF_FLAG_LIBC6 | LDC_FLAG_X8664_LIB64, x86_interps, "i386" },
	{ "x32", "x86_64-linux-gnux32", "x32", { "/libx32", "/usr/libx32" }, { "64", "x32" },
	  CL_X86, ELF_FLAG_LIBC6 | LDC_FLAG_X8664_LIBX32, x86_interps, NULL },
	{ "i386", "i386-linux-gnu", "i386", { "/lib", "/usr/lib" }, { 0 }, CL_X86, ELF_FLAG_LIBC6, x86_interps, NULL },
	{ "aarch64", "aarch64-linux-gnu", "aarch64", { "/lib64", "/usr/lib64" }, { "64", "ilp32" },
	  CL_AARCH64, ELF_FLAG_LIBC6 | LDC_FLAG_AARCH64_LIB64, arm_interps, "armhf" },
	{ "armhf", "arm-linux-gnueabihf", "armhf", { "/lib", "/usr/lib" }, { 0 }, CL_ARM,
	  ELF_FLAG_LIBC6 | LDC_FLAG_ARM_LIBHF, arm_interps, NULL },
	{ "ppc64le", "powerpc64le-linux-gnu", "powerpc64le", { "/lib64", "/usr/lib64" }, { 0 },
	  CL_LIB64, ELF_FLAG_LIBC6 | LDC_FLAG_POWERPC_LIB64, NULL, NULL },
	{ "s390x", "s390x-linux-gnu", "s390x", { "/lib64", "/usr/lib64" }, { 0 }, CL_LIB64,
	  ELF_FLAG_LIBC6 | LDC_FLAG_S390_LIB64, NULL, NULL },
	{ "riscv64", "riscv64-linux-gnu", "riscv64", { "/lib64/lp64d", "/usr/lib64/lp64d" }, { 0 },
	  CL_LIB64, ELF_FLAG_LIBC6 | LDC_FLAG_RISCV_DOUBLE, NULL, NULL },
};

/* This build's architecture: its name in the table */
#if defined(__x86_64__) && defined(__ILP32__)
#define BUILD_ARCH "x32"
#elif defined(__x86_64__)
#define BUILD_ARCH "x86_64"
#elif defined(__aarch64__)
#define BUILD_ARCH "aarch64"
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
#define BUILD_ARCH "armhf"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BUILD_ARCH "ppc64le"
#elif defined(__s390x__)
#define BUILD_ARCH "s390x"
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
#define BUILD_ARCH "riscv64"
#elif defined(__i386__)
#define BUILD_ARCH "i386"
#else
#error "ocidec ldcache: add this architecture to arches[]"
#endif

const struct ldarch *ldarch_find(const char *name)
{
	static const struct ldarch *build;

	if (!name || !*name) {
		if (!build)
			build = ldarch_find(BUILD_ARCH);
		return build;
	}
	for (size_t i = 0; i < sizeof(arches) / sizeof(*arches); i++)
		if (strcmp(arches[i].name, name) == 0)
			return &arches[i];
	return NULL;
}

int32_t ldcache_host_flags(void)
{
	return ldarch_find(NULL)->flags;
}

int32_t ldcache_host32_flags(void)
{
	const struct ldarch *a = ldarch_find(NULL), *c = a->compat32 ? ldarch_find(a->compat32) : NULL;

	return c ? c->flags : -1;
}

static uint32_t rd32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL-terminated string at BASE+OFF inside the buffer, or NULL. */
static const char *str_at(const struct ldcache *c, size_t base, uint32_t off)
{
	size_t pos = base + off;

	if (pos < base || pos >= c->size || !memchr(c->buf + pos, '\0', c->size - pos))
		return NULL;
	return c->buf + pos;
}

static void parse_extensions(struct ldcache *c, uint32_t ext_off,
			     const char **hwcaps_off, size_t *nhwcaps)
{
	uint32_t count;

	*hwcaps_off = NULL;
	*nhwcaps = 0;
	/* Extensions are optional: a damaged directory is ignored, as glibc does. */
	if (ext_off == 0 || ext_off % 4 || (size_t)ext_off + 8 > c->size ||
	    rd32(c->buf + ext_off) != EXT_MAGIC)
		return;
	count = rd32(c->buf + ext_off + 4);
	if (count > (c->size - ext_off - 8) / 16)
		return;
	for (uint32_t i = 0; i < count; i++) {
		const char *s = c->buf + ext_off + 8 + (size_t)i * 16;
		uint32_t tag = rd32(s), off = rd32(s + 8), size = rd32(s + 12);

		if ((size_t)off + size > c->size)
			continue;
		if (tag == 0) {
			c->generator = c->buf + off;
			c->generator_len = strnlen(c->generator, size);
		} else if (tag == 1 && size > 0 && size % 4 == 0 && off % 4 == 0) {
			*hwcaps_off = c->buf + off;
			*nhwcaps = size / 4;
		}
	}
}

static int parse(struct ldcache *c, char *buf, size_t size, struct oerr *err)
{
	size_t base = 0, n;
	const char *hwcaps = NULL;
	size_t nhwcaps = 0;
	uint8_t order;

	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->size = size;
	if (size >= 16 && memcmp(buf, MAGIC_OLD, strlen(MAGIC_OLD)) == 0) {
		/* compat format: skip the old table, the new one follows, 8-aligned */
		uint32_t nold = rd32(buf + 12);
		if (nold > (size - 16) / ENTRY_OLD_SIZE)
			return oerr_set(err, 0, "corrupt cache: old table larger than the file");
		base = (16 + (size_t)nold * ENTRY_OLD_SIZE + 7) & ~(size_t)7;
	}
	if (size < base + HDR_NEW_SIZE || memcmp(buf + base, MAGIC_NEW, strlen(MAGIC_NEW)) != 0)
		return oerr_set(err, 0, "not a glibc ld.so.cache (no \"" MAGIC_NEW "\" header)");
	n = rd32(buf + base + 20);
	order = (uint8_t)buf[base + 28] & 3;
	if (order == 1)
		return oerr_set(err, 0, "cache is marked invalid");
	if (order != 0 && order != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3))
		return oerr_set(err, 0, "cache is of the other byte order");
	if (n > (size - base - HDR_NEW_SIZE) / ENTRY_NEW_SIZE)
		return oerr_set(err, 0, "corrupt cache: %zu entries do not fit in %zu bytes", n, size);
	parse_extensions(c, rd32(buf + base + 32), &hwcaps, &nhwcaps);

	c->e = xcalloc(n, sizeof(*c->e));
	for (size_t i = 0; i < n; i++) {
		const char *p = buf + base + HDR_NEW_SIZE + i * ENTRY_NEW_SIZE;
		struct ldcache_entry *e = &c->e[i];

		e->flags = (int32_t)rd32(p);
		e->key = str_at(c, base, rd32(p + 4));
		e->value = str_at(c, base, rd32(p + 8));
		e->osversion = rd32(p + 12);
		e->hwcap = rd64(p + 16);
		if (!e->key || !e->value)
			return oerr_set(err, 0, "corrupt cache: entry %zu points outside the file", i);
		if (((e->hwcap >> 32) & ~0x3ffULL) == (LDC_HWCAP_EXTENSION >> 32)) {
			uint32_t idx = (uint32_t)e->hwcap;
			if (idx < nhwcaps)
				e->hwcaps_subdir = str_at(c, base, rd32(hwcaps + (size_t)idx * 4));
		}
	}
	c->n = n;
	return 0;
}

int ldcache_parse(struct ldcache *c, char *buf, size_t size, struct oerr *err)
{
	if (parse(c, buf, size, err) == 0)
		return 0;
	ldcache_free(c);
	return -1;
}

int ldcache_load_fd(struct ldcache *c, int fd, struct oerr *err)
{
	char *buf;
	size_t len;

	memset(c, 0, sizeof(*c));
	if (read_fd_all(fd, LDCACHE_MAX_SIZE, &buf, &len, err) < 0)
		return -1;
	return ldcache_parse(c, buf, len, err);
}

void ldcache_free(struct ldcache *c)
{
	free(c->buf);
	free(c->e);
	memset(c, 0, sizeof(*c));
}

void ldcache_describe(const struct ldcache_entry *e, char *out, size_t outsz)
{
	static const char *const abi[] = {
		[0x01] = ",64bit", [0x02] = ",IA-64", [0x03] = ",x86-64", [0x04] = ",64bit",
		[0x05] = ",64bit", [0x06] = ",N32", [0x07] = ",64bit", [0x08] = ",x32",
		[0x09] = ",hard-float", [0x0a] = ",AArch64", [0x0b] = ",soft-float",
		[0x0c] = ",nan2008", [0x0d] = ",N32,nan2008", [0x0e] = ",64bit,nan2008",
		[0x0f] = ",soft-float", [0x10] = ",double-float", [0x11] = ",soft-float",
		[0x12] = ",double-float",
	};
	static const char *const type[] = { "libc4", "ELF", "libc5", "libc6" };
	unsigned t = e->flags & LDC_FLAG_TYPE_MASK;
	unsigned r = (e->flags & LDC_FLAG_REQUIRED_MASK) >> 8;
	char abibuf[16] = "";
	int n;

	if (r < sizeof(abi) / sizeof(*abi) && abi[r])
		snprintf(abibuf, sizeof(abibuf), "%s", abi[r]);
	else if (r)
		snprintf(abibuf, sizeof(abibuf), ",%d", (int)(e->flags & LDC_FLAG_REQUIRED_MASK));
	n = snprintf(out, outsz, "%s%s", t < 4 ? type[t] : "unknown", abibuf);
	if (n < 0 || (size_t)n >= outsz)
		return;
	if (e->hwcaps_subdir)
		snprintf(out + n, outsz - n, ", hwcap: \"%s\"", e->hwcaps_subdir);
	else if (e->hwcap)
		snprintf(out + n, outsz - n, ", hwcap: %#.16" PRIx64, e->hwcap);
}

/* ---- writing ---- */

struct ldcache_new_entry {
	char *lib, *path;
	int32_t flags;
	unsigned isa_level;
	uint64_t hwcap;
	int hwcaps;          /* handle, or -1 */
	int bits_hwcap;
	size_t seq;
	uint32_t lib_off, path_off;
};

struct ldcache_hwcaps_dir {
	char *name;
	bool used;
	uint32_t index, off;
};

int ldcache_libcmp(const char *p1, const char *p2)
{
	while (*p1 != '\0') {
		if (*p1 >= '0' && *p1 <= '9') {
			if (*p2 >= '0' && *p2 <= '9') {
				/* glibc uses int here; unsigned wraps the same way, without UB */
				unsigned v1 = (unsigned)(*p1++ - '0'), v2 = (unsigned)(*p2++ - '0');
				while (*p1 >= '0' && *p1 <= '9')
					v1 = v1 * 10 + (unsigned)(*p1++ - '0');
				while (*p2 >= '0' && *p2 <= '9')
					v2 = v2 * 10 + (unsigned)(*p2++ - '0');
				if (v1 != v2)
					return (int)(v1 - v2);
			} else {
				return 1;
			}
		} else if (*p2 >= '0' && *p2 <= '9') {
			return -1;
		} else if (*p1 != *p2) {
			return *p1 - *p2;
		} else {
			++p1;
			++p2;
		}
	}
	return *p1 - *p2;
}

int ldcache_builder_hwcaps(struct ldcache_builder *b, const char *name)
{
	for (size_t i = 0; i < b->nhw; i++)
		if (strcmp(b->hw[i].name, name) == 0)
			return (int)i;
	if (b->nhw == b->hwcap_cap) {
		b->hwcap_cap = b->hwcap_cap ? 2 * b->hwcap_cap : 8;
		b->hw = xreallocarray(b->hw, b->hwcap_cap, sizeof(*b->hw));
	}
	b->hw[b->nhw] = (struct ldcache_hwcaps_dir){ .name = xstrdup(name) };
	return (int)b->nhw++;
}

void ldcache_builder_add(struct ldcache_builder *b, const char *soname, const char *path,
			 int32_t flags, unsigned isa_level, uint64_t hwcap, int hwcaps)
{
	struct ldcache_new_entry *e;

	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->e = xreallocarray(b->e, b->cap, sizeof(*b->e));
	}
	e = &b->e[b->n];
	*e = (struct ldcache_new_entry){
		.lib = xstrdup(soname), .path = xstrdup(path), .flags = flags,
		.isa_level = isa_level, .hwcap = hwcaps >= 0 ? 0 : hwcap, .hwcaps = hwcaps,
		.bits_hwcap = __builtin_popcountll(hwcaps >= 0 ? 0 : hwcap), .seq = b->n,
	};
	if (hwcaps >= 0)
		b->hw[hwcaps].used = true;
	b->n++;
}

void ldcache_builder_add_entry(struct ldcache_builder *b, const struct ldcache_entry *e)
{
	if (e->hwcaps_subdir)
		ldcache_builder_add(b, e->key, e->value, e->flags, (unsigned)(e->hwcap >> 32) & 0x3ff, 0,
				    ldcache_builder_hwcaps(b, e->hwcaps_subdir));
	else
		ldcache_builder_add(b, e->key, e->value, e->flags, 0, e->hwcap, -1);
}

void ldcache_builder_add_cache(struct ldcache_builder *b, const struct ldcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		ldcache_builder_add_entry(b, &c->e[i]);
}

void ldcache_builder_free(struct ldcache_builder *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->e[i].lib);
		free(b->e[i].path);
	}
	for (size_t i = 0; i < b->nhw; i++)
		free(b->hw[i].name);
	free(b->e);
	free(b->hw);
	memset(b, 0, sizeof(*b));
}

/* elf/cache.c's compare, with the order of addition as the last key (glibc
 * keeps a sorted list and inserts after equal entries). qsort has no
 * context argument: the hwcaps names come through this. */
static const struct ldcache_builder *sorting;

static int entry_cmp(const void *a, const void *b)
{
	const struct ldcache_new_entry *e1 = a, *e2 = b;
	int res = ldcache_libcmp(e2->lib, e1->lib);

	if (res != 0)
		return res;
	if (e1->flags != e2->flags)
		return e1->flags < e2->flags ? 1 : -1;
	if ((e1->hwcaps >= 0) != (e2->hwcaps >= 0))
		return e1->hwcaps >= 0 ? -1 : 1;
	if (e1->hwcaps >= 0 && (res = strcmp(sorting->hw[e1->hwcaps].name,
					     sorting->hw[e2->hwcaps].name)) != 0)
		return res;
	if (e1->bits_hwcap != e2->bits_hwcap)
		return e2->bits_hwcap > e1->bits_hwcap ? 1 : -1;
	if (e1->hwcap != e2->hwcap)
		return e2->hwcap > e1->hwcap ? 1 : -1;
	return e1->seq < e2->seq ? -1 : e1->seq > e2->seq;
}

struct strref {
	const char *s;
	size_t len;
	uint32_t *slot;
};

/* elf/stringtable.c's finalize_compare: reversed strings in descending
 * order, a string before its own suffixes, so tails can be shared. */
static int strref_cmp(const void *a, const void *b)
{
	const struct strref *l = a, *r = b;
	size_t n = l->len < r->len ? l->len : r->len;

	for (size_t i = 1; i <= n; i++) {
		unsigned char lc = (unsigned char)l->s[l->len - i], rc = (unsigned char)r->s[r->len - i];
		if (lc != rc)
			return rc - lc;
	}
	if (l->len == r->len)
		return 0;
	return l->len < r->len ? 1 : -1;
}

static int hw_name_cmp(const void *a, const void *b)
{
	const struct ldcache_hwcaps_dir *const *l = a, *const *r = b;
	return strcmp((*l)->name, (*r)->name);
}

static void put32(char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

#define GENERATOR_TAG 0
#define HWCAPS_TAG 1

/* What ldcache_build's phases share. */
struct layout {
	struct strref *refs;     /* every string, sorted: entries' names and paths, hwcaps names */
	size_t nrefs, strsize;
	struct ldcache_hwcaps_dir **used;  /* the hwcaps directories entries use, by name */
	size_t nused;
	uint64_t entries_end;    /* where the string table starts */
};

/* The entries sorted as glibc sorts them, and every string they and the
 * hwcaps directories name. */
static void collect_strings(struct ldcache_builder *b, struct layout *l)
{
	l->nrefs = 2 * b->n + b->nhw;
	l->refs = xcalloc(l->nrefs ? l->nrefs : 1, sizeof(*l->refs));
	sorting = b;
	if (b->n)
		qsort(b->e, b->n, sizeof(*b->e), entry_cmp);
	for (size_t i = 0; i < b->n; i++) {
		l->refs[2 * i] = (struct strref){ b->e[i].lib, strlen(b->e[i].lib), &b->e[i].lib_off };
		l->refs[2 * i + 1] = (struct strref){ b->e[i].path, strlen(b->e[i].path), &b->e[i].path_off };
	}
	for (size_t i = 0; i < b->nhw; i++)
		l->refs[2 * b->n + i] = (struct strref){ b->hw[i].name, strlen(b->hw[i].name), &b->hw[i].off };
}

/* Offsets: equal strings share one, a suffix of the string before it
 * points into that one. */
static int place_strings(struct layout *l, struct oerr *err)
{
	struct strref *refs = l->refs;
	size_t prev = SIZE_MAX;

	if (l->nrefs)
		qsort(refs, l->nrefs, sizeof(*refs), strref_cmp);
	for (size_t i = 0, off = 0; i < l->nrefs; i++) {
		if (prev != SIZE_MAX && strref_cmp(&refs[prev], &refs[i]) == 0) {
			*refs[i].slot = *refs[prev].slot;
			continue;
		}
		if (prev == SIZE_MAX)
			off = 0;
		else if (refs[prev].len >= refs[i].len &&
			 memcmp(refs[prev].s + refs[prev].len - refs[i].len, refs[i].s, refs[i].len) == 0)
			off = *refs[prev].slot + refs[prev].len - refs[i].len;
		else
			off = *refs[prev].slot + refs[prev].len + 1;
		if (off + refs[i].len + 1 > UINT32_MAX - l->entries_end)
			return oerr_set(err, 0, "string table is too large");
		*refs[i].slot = (uint32_t)off;
		l->strsize = off + refs[i].len + 1;
		prev = i;
	}
	return 0;
}

/* The hwcaps directories in use, sorted by name, numbered in that order. */
static void index_hwcaps(struct ldcache_builder *b, struct layout *l)
{
	l->used = xcalloc(b->nhw ? b->nhw : 1, sizeof(*l->used));
	for (size_t i = 0; i < b->nhw; i++)
		if (b->hw[i].used)
			l->used[l->nused++] = &b->hw[i];
	if (l->nused)
		qsort(l->used, l->nused, sizeof(*l->used), hw_name_cmp);
	for (size_t i = 0; i < l->nused; i++)
		l->used[i]->index = (uint32_t)i;
}

/* The header, the entries and the strings into BUF. */
static void write_entries(const struct ldcache_builder *b, const struct layout *l, size_t ext_off, char *buf)
{
	memcpy(buf, MAGIC_NEW, strlen(MAGIC_NEW));
	put32(buf + 20, (uint32_t)b->n);
	put32(buf + 24, (uint32_t)l->strsize);
	buf[28] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3;
	put32(buf + 32, (uint32_t)ext_off);
	for (size_t i = 0; i < b->n; i++) {
		const struct ldcache_new_entry *e = &b->e[i];
		uint64_t hwcap = e->hwcaps < 0 ? e->hwcap
			: LDC_HWCAP_EXTENSION | (uint64_t)(e->isa_level & 0x3ff) << 32 | b->hw[e->hwcaps].index;
		char *p = buf + HDR_NEW_SIZE + i * ENTRY_NEW_SIZE;

		put32(p, (uint32_t)e->flags);
		put32(p + 4, (uint32_t)l->entries_end + e->lib_off);
		put32(p + 8, (uint32_t)l->entries_end + e->path_off);
		memcpy(p + 16, &hwcap, 8);
	}
	for (size_t i = 0; i < l->nrefs; i++)
		memcpy(buf + l->entries_end + *l->refs[i].slot, l->refs[i].s, l->refs[i].len);
}

/* The extension: the generator string, and the hwcaps directories' names
 * when entries use them. */
static void write_extension(const struct layout *l, size_t ext_off, const char *generator, char *buf,
			    size_t total)
{
	size_t gen_len = strlen(generator);
	char *p = buf + ext_off;

	put32(p, EXT_MAGIC);
	put32(p + 4, l->nused ? 2 : 1);
	put32(p + 8, GENERATOR_TAG);
	put32(p + 16, (uint32_t)(ext_off + 8 + 16 * (l->nused ? 2 : 1) + 4 * l->nused));
	put32(p + 20, (uint32_t)gen_len);
	if (l->nused) {
		put32(p + 24, HWCAPS_TAG);
		put32(p + 32, (uint32_t)(ext_off + 40));
		put32(p + 36, (uint32_t)(4 * l->nused));
		for (size_t i = 0; i < l->nused; i++)
			put32(p + 40 + 4 * i, (uint32_t)l->entries_end + l->used[i]->off);
	}
	memcpy(buf + total - gen_len, generator, gen_len);
}

int ldcache_build(struct ldcache_builder *b, const char *generator, char **out, size_t *len,
		  struct oerr *err)
{
	struct layout l = { .entries_end = HDR_NEW_SIZE + (uint64_t)b->n * ENTRY_NEW_SIZE };
	size_t ext_off, total;
	int r = -1;

	collect_strings(b, &l);
	if (place_strings(&l, err) < 0)
		goto out;
	index_hwcaps(b, &l);
	ext_off = ((size_t)l.entries_end + l.strsize + 3) & ~(size_t)3;
	total = ext_off + 8 + 16 * (l.nused ? 2 : 1) + 4 * l.nused + strlen(generator);
	if (total > LDCACHE_MAX_SIZE) {
		oerr_set(err, 0, "cache would be larger than %u bytes", LDCACHE_MAX_SIZE);
		goto out;
	}
	*out = xcalloc(1, total);
	*len = total;
	write_entries(b, &l, ext_off, *out);
	write_extension(&l, ext_off, generator, *out, total);
	r = 0;
out:
	free(l.refs);
	free(l.used);
	return r;
}
