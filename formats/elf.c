/* elf.c: see elf.h. The reading order and the decisions follow glibc 2.36's
 * elf/readelflib.c; unlike it, nothing is read that was not bounds-checked. */
#include "formats/elf.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GNU_PROPERTY_X86_ISA_1_NEEDED  /* (glibc's elf.h has it, musl's not) */
#define GNU_PROPERTY_X86_ISA_1_NEEDED 0xc0008002u
#endif
/* Where FIELD of the 64- or 32-bit TYPE (Ehdr, Phdr) is, by the width W
 * of an address (8 or 4); the file's bytes are read with rd(), in its
 * byte order. */
#define AT(w, type, field) ((w) == 8 ? offsetof(Elf64_##type, field) : offsetof(Elf32_##type, field))
#define NAME_MAX_LEN 4096
#define WINDOW 8192

/* The libraries that tell glibc's ldconfig an object is for libc6. */
static const char *const known_libs[] = { "libc.so.6", "libm.so.6", NULL };

/* Two windows on the file: the dynamic section and the string table it
 * points into usually lie apart, and the SONAME search alternates between
 * them. */
struct window {
	uint64_t off;
	size_t len;
	unsigned long used;
	unsigned char buf[WINDOW];
};

struct reader {
	const struct elf_source *src;
	unsigned char data;
	unsigned long clock;
	struct window w[2];
};

/* N bytes at OFF, or NULL when they are not all inside the file. */
static const unsigned char *get(struct reader *r, uint64_t off, size_t n)
{
	uint64_t size = r->src->size;
	size_t want, got = 0;
	struct window *w;

	if (n > WINDOW || off > size || n > size - off)
		return NULL;
	if (r->src->mem)
		return r->src->mem + off;
	for (int i = 0; i < 2; i++) {
		w = &r->w[i];
		if (w->len && off >= w->off && off + n <= w->off + w->len) {
			w->used = ++r->clock;
			return w->buf + (off - w->off);
		}
	}
	w = &r->w[r->w[0].used <= r->w[1].used ? 0 : 1];  /* the least recently used */
	want = size - off < WINDOW ? (size_t)(size - off) : WINDOW;
	while (got < want) {
		ssize_t k = pread(r->src->fd, w->buf + got, want - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;  /* the file shrank under us */
		got += (size_t)k;
	}
	w->off = off;
	w->len = got;
	w->used = ++r->clock;
	return got >= n ? w->buf : NULL;
}

static uint64_t rd(const struct reader *r, const unsigned char *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[r->data == 2 ? bytes - 1 - i : i] << (8 * i);
	return v;
}

/* The NUL-terminated string at OFF (at most NAME_MAX_LEN bytes). */
static char *get_str(struct reader *r, uint64_t off)
{
	char *s = NULL;
	size_t len = 0;

	for (;;) {
		uint64_t left = off <= r->src->size ? r->src->size - off : 0;
		size_t chunk = left < 256 ? (size_t)left : 256;
		const unsigned char *p = chunk ? get(r, off, chunk) : NULL;
		const unsigned char *nul;

		if (!p || len + chunk > NAME_MAX_LEN + 256) {
			free(s);
			return NULL;
		}
		nul = memchr(p, '\0', chunk);
		s = xrealloc(s, len + chunk + 1);
		memcpy(s + len, p, nul ? (size_t)(nul - p) : chunk);
		if (nul) {
			s[len + (nul - p)] = '\0';
			if (len + (nul - p) > NAME_MAX_LEN) {
				free(s);
				return NULL;
			}
			return s;
		}
		len += chunk;
		off += chunk;
	}
}

/* Is S in the NULL-terminated list T? */
static bool in_list(const char *s, const char *const *t)
{
	for (; t && *t; t++)
		if (strcmp(s, *t) == 0)
			return true;
	return false;
}

/* The x86 ISA level in a PT_GNU_PROPERTY segment, the way readelflib.c and
 * sysdeps/x86's read_gnu_property find it; anything malformed just ends the
 * search. */
static unsigned isa_level(struct reader *r, uint64_t start, uint64_t size, uint64_t align)
{
	uint64_t addr = align;  /* == sizeof(ElfW(Addr)): the caller checked */
	uint64_t pos = start;

	if (size > r->src->size)
		return 0;
	while (pos - start + 12 < size) {
		const unsigned char *n = get(r, pos, 16);
		uint64_t namesz, descsz, ptr, end;
		uint32_t last = 0;

		if (!n)
			return 0;
		namesz = rd(r, n + offsetof(Elf64_Nhdr, n_namesz), 4);  /* (the same in Elf32_Nhdr) */
		descsz = rd(r, n + offsetof(Elf64_Nhdr, n_descsz), 4);
		if (namesz == 4 && rd(r, n + offsetof(Elf64_Nhdr, n_type), 4) == NT_GNU_PROPERTY_TYPE_0 &&
		    memcmp(n + sizeof(Elf64_Nhdr), "GNU", 4) == 0) {
			if (descsz < 8 || descsz % addr)
				return 0;
			ptr = pos + 16;
			end = ptr + descsz;
			do {
				const unsigned char *p = get(r, ptr, 8);
				uint32_t type, datasz;

				if (!p)
					return 0;
				type = (uint32_t)rd(r, p, 4);
				datasz = (uint32_t)rd(r, p + 4, 4);
				if (type < last)
					return 0;
				ptr += 8;
				if (ptr + datasz > end)
					return 0;
				last = type;
				if (type > GNU_PROPERTY_X86_ISA_1_NEEDED)
					return 0;
				if (type == GNU_PROPERTY_X86_ISA_1_NEEDED) {
					uint32_t v;
					if (datasz != 4 || !(p = get(r, ptr, 4)) || !(v = (uint32_t)rd(r, p, 4)))
						return 0;
					return 31u - (unsigned)__builtin_clz(v);
				}
				ptr += (datasz + addr - 1) / addr * addr;
			} while (ptr <= end && end - ptr >= 8);
			return 0;  /* only the first NT_GNU_PROPERTY_TYPE_0 note counts */
		}
		pos += ((12 + namesz + align - 1) / align * align + descsz + align - 1) / align * align;
	}
	return 0;
}

struct phdr {
	uint64_t type, offset, vaddr, filesz, align;
};

/* Program header I (W: 4 or 8, the address size); -1 when outside the file. */
static int read_phdr(struct reader *r, uint64_t phoff, unsigned phentsize, unsigned i,
		     unsigned w, struct phdr *ph)
{
	const unsigned char *p = get(r, phoff + (uint64_t)i * phentsize, w == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr));

	if (!p)
		return -1;
	ph->type = rd(r, p + AT(w, Phdr, p_type), 4);
	ph->offset = rd(r, p + AT(w, Phdr, p_offset), w);
	ph->vaddr = rd(r, p + AT(w, Phdr, p_vaddr), w);
	ph->filesz = rd(r, p + AT(w, Phdr, p_filesz), w);
	ph->align = rd(r, p + AT(w, Phdr, p_align), w);
	return 0;
}

/* Dynamic entry I of the section at OFF; -1 when outside the file. */
static int read_dyn(struct reader *r, uint64_t off, uint64_t i, unsigned w, uint64_t *tag, uint64_t *val)
{
	const unsigned char *p = get(r, off + i * 2 * w, 2 * w);  /* (an Elf64_Dyn or Elf32_Dyn) */

	if (!p)
		return -1;
	*tag = rd(r, p + AT(w, Dyn, d_tag), w);
	*val = rd(r, p + AT(w, Dyn, d_un), w);
	return 0;
}

static enum elf_result bad(struct oerr *err, const char *what)
{
	oerr_set(err, 0, "%s", what);
	return ELF_BAD;
}

/* What elf_read's phases share. */
struct scan {
	struct reader r;
	const struct elf_source *src;
	struct elf_info *info;
	uint64_t phoff, dyn_off, dyn_size, strtab;
	unsigned phentsize, phnum, w;
};

/* The ELF header: class, byte order, type, machine, flags, where the
 * program headers are. */
static enum elf_result read_header(struct scan *s, struct oerr *err)
{
	struct elf_info *info = s->info;
	const unsigned char *h;
	unsigned w;

	if (!(h = get(&s->r, 0, EI_NIDENT)) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return ELF_NOT_ELF;
	info->class = h[EI_CLASS];
	info->data = s->r.data = h[EI_DATA];
	if (info->class != 1 && info->class != 2)
		return bad(err, "unknown ELF class");
	if (info->data != 1 && info->data != 2)
		return bad(err, "unknown ELF byte order");
	w = s->w = info->class == 2 ? 8 : 4;
	if (!(h = get(&s->r, 0, w == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))))
		return bad(err, "truncated ELF header");
	info->type = (uint16_t)rd(&s->r, h + AT(w, Ehdr, e_type), 2);
	info->machine = (uint16_t)rd(&s->r, h + AT(w, Ehdr, e_machine), 2);
	if (info->type != ET_DYN)
		return ELF_NOT_DSO;
	info->eflags = (uint32_t)rd(&s->r, h + AT(w, Ehdr, e_flags), 4);
	s->phoff = rd(&s->r, h + AT(w, Ehdr, e_phoff), w);
	s->phentsize = (unsigned)rd(&s->r, h + AT(w, Ehdr, e_phentsize), 2);
	s->phnum = (unsigned)rd(&s->r, h + AT(w, Ehdr, e_phnum), 2);
	if (s->phnum && s->phentsize < (w == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return bad(err, "impossible program header size");
	if (s->phoff > s->src->size || (s->phnum && (uint64_t)s->phnum * s->phentsize > s->src->size - s->phoff))
		return bad(err, "program headers outside the file");
	return ELF_OK;
}

/* The program headers: the dynamic section, the interpreter (glibc's
 * makes a libc6 library), the x86 ISA level. */
static enum elf_result read_phdrs(struct scan *s, const char *const *interps, struct oerr *err)
{
	struct elf_info *info = s->info;

	info->libc = ELF_FLAG_ELF;
	for (unsigned i = 0; i < s->phnum; i++) {
		struct phdr ph;

		if (read_phdr(&s->r, s->phoff, s->phentsize, i, s->w, &ph) < 0)
			return bad(err, "truncated program header");
		if (ph.type == PT_DYNAMIC) {
			s->dyn_off = ph.offset;
			s->dyn_size = ph.filesz;
		} else if (ph.type == PT_INTERP) {
			char *interp = get_str(&s->r, ph.offset);
			if (!interp)
				return bad(err, "PT_INTERP outside the file");
			if (in_list(interp, interps))
				info->libc = ELF_FLAG_LIBC6;
			free(interp);
		} else if (ph.type == PT_GNU_PROPERTY && ph.align == s->w) {
			info->isa_level = isa_level(&s->r, ph.offset, ph.filesz, ph.align);
		}
	}
	return s->dyn_size == 0 ? ELF_NOT_DSO : ELF_OK;
}

/* The first DT_STRTAB, mapped to a file offset through its PT_LOAD. */
static enum elf_result find_strtab(struct scan *s, struct oerr *err)
{
	for (uint64_t i = 0;; i++) {
		uint64_t tag, val, loadoff = 0;

		if (read_dyn(&s->r, s->dyn_off, i, s->w, &tag, &val) < 0)
			return bad(err, "dynamic section outside the file");
		if (tag == DT_NULL)
			return ELF_NOT_DSO;
		if (tag != DT_STRTAB)
			continue;
		for (unsigned j = 0; j < s->phnum; j++) {
			struct phdr ph;
			if (read_phdr(&s->r, s->phoff, s->phentsize, j, s->w, &ph) < 0)
				return bad(err, "truncated program header");
			if (ph.type == PT_LOAD && val >= ph.vaddr && val - ph.vaddr < ph.filesz) {
				loadoff = ph.vaddr - ph.offset;
				break;
			}
		}
		s->strtab = val - loadoff;
		if (s->strtab > s->src->size)
			return bad(err, "dynamic string table outside the file");
		return ELF_OK;
	}
}

/* DT_NEEDED and DT_SONAME, stopping where glibc stops. */
static enum elf_result read_names(struct scan *s, struct oerr *err)
{
	struct elf_info *info = s->info;

	for (uint64_t i = 0;; i++) {
		uint64_t tag, val;
		char *name;

		if (read_dyn(&s->r, s->dyn_off, i, s->w, &tag, &val) < 0)
			return bad(err, "dynamic section outside the file");
		if (tag == DT_NULL)
			break;
		if (tag != DT_NEEDED && tag != DT_SONAME)
			continue;
		if (s->strtab + val < s->strtab || !(name = get_str(&s->r, s->strtab + val)))
			return bad(err, "dynamic string outside the file");
		if (tag == DT_NEEDED) {
			if (info->libc == ELF_FLAG_ELF && in_list(name, known_libs))
				info->libc = ELF_FLAG_LIBC6;
			free(name);
		} else {
			free(info->soname);
			info->soname = name;
		}
		if (info->soname && info->libc != ELF_FLAG_ELF)
			break;
	}
	return ELF_OK;
}

enum elf_result elf_read(const struct elf_source *src, const char *const *interps,
			 struct elf_info *info, struct oerr *err)
{
	struct scan s = { .src = src, .info = info };
	enum elf_result r;

	memset(info, 0, sizeof(*info));
	s.r.src = src;
	s.r.data = 0;
	s.r.clock = 0;
	s.r.w[0].len = s.r.w[1].len = 0;
	s.r.w[0].used = s.r.w[1].used = 0;
	if ((r = read_header(&s, err)) != ELF_OK || (r = read_phdrs(&s, interps, err)) != ELF_OK ||
	    (r = find_strtab(&s, err)) != ELF_OK)
		return r;
	return read_names(&s, err);
}

void elf_info_free(struct elf_info *info)
{
	free(info->soname);
	info->soname = NULL;
}

char *elf_note(const struct elf_source *src, const char *section, const char *owner, size_t *len)
{
	struct reader r = { .src = src };
	const unsigned char *h, *sh, *n;
	uint64_t shoff, stroff = 0, strsize = 0;
	unsigned w, shentsize, shnum, shstrndx;
	char *desc;

	if (!(h = get(&r, 0, EI_NIDENT)) || memcmp(h, ELFMAG, SELFMAG) != 0 || (h[EI_CLASS] != 1 && h[EI_CLASS] != 2) ||
	    (h[EI_DATA] != 1 && h[EI_DATA] != 2))
		return NULL;
	r.data = h[EI_DATA];
	w = h[EI_CLASS] == 2 ? 8 : 4;
	if (!(h = get(&r, 0, w == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))))
		return NULL;
	shoff = rd(&r, h + AT(w, Ehdr, e_shoff), w);
	shentsize = (unsigned)rd(&r, h + AT(w, Ehdr, e_shentsize), 2);
	shnum = (unsigned)rd(&r, h + AT(w, Ehdr, e_shnum), 2);
	shstrndx = (unsigned)rd(&r, h + AT(w, Ehdr, e_shstrndx), 2);
	if (!shnum || shstrndx >= shnum || shentsize < (w == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    shoff > src->size || (uint64_t)shnum * shentsize > src->size - shoff)
		return NULL;
	/* the section names */
	if (!(sh = get(&r, shoff + (uint64_t)shstrndx * shentsize, shentsize)))
		return NULL;
	stroff = rd(&r, sh + AT(w, Shdr, sh_offset), w);
	strsize = rd(&r, sh + AT(w, Shdr, sh_size), w);
	if (stroff > src->size || strsize > src->size - stroff)
		return NULL;
	for (unsigned i = 0; i < shnum; i++) {
		uint64_t name, off, size, align, namesz, descsz, descoff;
		_cleanup_free_ char *sname = NULL, *nname = NULL;

		if (!(sh = get(&r, shoff + (uint64_t)i * shentsize, shentsize)) ||
		    rd(&r, sh + AT(w, Shdr, sh_type), 4) != SHT_NOTE)
			continue;
		name = rd(&r, sh + AT(w, Shdr, sh_name), 4);
		off = rd(&r, sh + AT(w, Shdr, sh_offset), w);
		size = rd(&r, sh + AT(w, Shdr, sh_size), w);
		align = rd(&r, sh + AT(w, Shdr, sh_addralign), w) == 8 ? 8 : 4;
		if (name >= strsize || !(sname = get_str(&r, stroff + name)) || strcmp(sname, section) != 0)
			continue;
		/* its first note: "OWNER\0" then the description */
		if (off > src->size || size > src->size - off || size < 12 || !(n = get(&r, off, 12)))
			return NULL;
		namesz = rd(&r, n, 4);
		descsz = rd(&r, n + 4, 4);
		if (!namesz || namesz > 256 || !descsz || descsz > 4096)
			return NULL;
		descoff = 12 + ((namesz + align - 1) & ~(align - 1));
		if (descoff + descsz > size || !(n = get(&r, off + 12, (size_t)namesz)))
			return NULL;
		nname = xstrndup((const char *)n, (size_t)namesz);
		if (strcmp(nname, owner) != 0 || !(n = get(&r, off + descoff, (size_t)descsz)))
			return NULL;
		desc = xstrndup((const char *)n, (size_t)descsz);
		*len = strlen(desc);
		return desc;
	}
	return NULL;
}
