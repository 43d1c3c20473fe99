/* elf.h: what ldconfig needs to know about a shared object, read from a
 * file no byte of which is trusted.
 *
 * Reads the ELF header (class, byte order, type, machine, flags), the
 * program headers, PT_INTERP, the x86 ISA level from the PT_GNU_PROPERTY
 * note, and the dynamic section's DT_SONAME and DT_NEEDED names, the way
 * glibc's ldconfig (elf/readelflib.c) reads them: the same SONAME and the same
 * libc classification for every well-formed file. Every offset and size is
 * checked against the file's length; reads go through pread(2) (a file a
 * container shrinks while we read gives an error, never SIGBUS) or a memory
 * buffer (the fuzz harness).
 */
#ifndef OCIDEC_ELF_H
#define OCIDEC_ELF_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

/* glibc's library type flags (low byte of an ld.so.cache entry's flags). */
#define ELF_FLAG_ELF   0x0001  /* ELF, libc unknown */
#define ELF_FLAG_LIBC5 0x0002
#define ELF_FLAG_LIBC6 0x0003

enum elf_result {
	ELF_OK = 0,
	ELF_NOT_ELF,      /* no ELF magic */
	ELF_NOT_DSO,      /* ELF, but not ET_DYN, or no dynamic string table */
	ELF_BAD,          /* damaged or hostile: err says what */
};

struct elf_source {
	int fd;                       /* read with pread when mem is NULL */
	const unsigned char *mem;
	uint64_t size;
};

struct elf_info {
	unsigned char class;   /* 1: 32-bit, 2: 64-bit */
	unsigned char data;    /* 1: little endian, 2: big endian */
	uint16_t type;
	uint16_t machine;
	uint32_t eflags;
	char *soname;          /* DT_SONAME, or NULL */
	int libc;              /* ELF_FLAG_*: from PT_INTERP and DT_NEEDED, as glibc decides */
	unsigned isa_level;    /* x86: highest bit of GNU_PROPERTY_X86_ISA_1_NEEDED */
};

/* Read SRC. INTERPS (NULL-terminated) are the program interpreters that
 * mark an object as libc6 for the architecture ldconfig works for. On
 * ELF_BAD, ERR holds a reason (no file name). INFO is filled as far as it
 * got; free it with elf_info_free in every case. */
enum elf_result elf_read(const struct elf_source *src, const char *const *interps,
			 struct elf_info *info, struct oerr *err);
void elf_info_free(struct elf_info *info);

/* The description of the first note of SRC's section SECTION (SHT_NOTE)
 * when its owner is OWNER, up to its first NUL (*LEN bytes), or NULL (no
 * such section or note, or one that does not fit the file; at most 4 KiB).
 * CUDA's compat libcuda carries ".note.cuda.fwd_compatibility", owner
 * "NVIDIA Corporation": a JSON object naming the driver branches it
 * supports. */
char *elf_note(const struct elf_source *src, const char *section, const char *owner, size_t *len);

#endif
