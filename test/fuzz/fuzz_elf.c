/* libFuzzer target: the ELF reader (formats/elf.c).
 *
 * The first byte picks the source: memory, or a memfd read with pread
 * through the reader's window (the path real files take). Any input must be
 * read or refused without a crash, leak or undefined behaviour.
 */
#include "formats/elf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int memfd = -1;
	struct elf_source src = { .fd = -1 };
	struct elf_info info;
	struct oerr err;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (memfd < 0 && (memfd = memfd_create("fuzz-elf", MFD_CLOEXEC)) < 0)
			abort();
		if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
			abort();
		src.fd = memfd;
	} else {
		src.mem = data + 1;
	}
	src.size = size - 1;
	static const char *const interps[] = { "/lib64/ld-linux-x86-64.so.2", NULL };
	if (elf_read(&src, interps, &info, &err) == ELF_OK && info.soname && !info.soname[0] && info.libc > 3)
		abort();
	elf_info_free(&info);
	/* the note reader (CUDA's compat libcuda): NUL-free text of the length said */
	{
		size_t len = 0;
		char *note = elf_note(&src, ".note.cuda.fwd_compatibility", "NVIDIA Corporation", &len);

		if (note && (strlen(note) != len || len > 4096))
			abort();
		free(note);
	}
	return 0;
}
