/* ldcache.c: read glibc's ld.so.cache, trusting no offset in it. */
#include "common/ldcache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_OLD "ld.so-1.7.0"
#define MAGIC_NEW "glibc-ld.so.cache1.1"
#define HDR_NEW_SIZE 48u
#define ENTRY_NEW_SIZE 24u
#define ENTRY_OLD_SIZE 12u
#define EXT_MAGIC 0xeaa42174u  /* (uint32_t) -358342284 */

/* The library flags the host's loader accepts, per architecture. */
#if defined(__x86_64__) && defined(__ILP32__)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0800)  /* x32 */
#elif defined(__x86_64__)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0300)  /* x86-64 */
#elif defined(__aarch64__)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0a00)  /* AArch64 */
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0900)  /* hard-float */
#elif defined(__powerpc64__)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0500)
#elif defined(__s390x__)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x0400)
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
#define HOST_FLAGS (LDC_FLAG_ELF_LIBC6 | 0x1000)
#else
#define HOST_FLAGS LDC_FLAG_ELF_LIBC6              /* i386 and other 32-bit */
#endif

int32_t ldcache_host_flags(void)
{
	return HOST_FLAGS;
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
