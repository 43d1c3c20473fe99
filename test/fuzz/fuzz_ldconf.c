/* libFuzzer target: an image's ld.so.conf, as the hook's cache rebuild
 * reads it (ldconfig_rebuild in a tree). The input is up to three files,
 * separated by NUL bytes: /etc/ld.so.conf, /etc/ld.so.conf.d/a.conf and
 * /etc/ld.so.conf.d/b.conf of a small tree in $OCIDEC_FUZZ_TMP (run.sh's,
 * removed after; else /dev/shm) (include globs,
 * cycles, long paths, "..", whatever the bytes say). No crash, leak or
 * undefined behaviour; the rebuild succeeds or fails with a message, and
 * nothing appears outside the tree. */
#include "formats/ldconfig.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tree[4096];
static int rootfd = -1;

static void put(const char *path, const uint8_t *p, size_t n)
{
	int fd = openat(rootfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		abort();
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = { "etc/ld.so.conf", "etc/ld.so.conf.d/a.conf", "etc/ld.so.conf.d/b.conf" };
	struct ldconfig o = { .conf = "/etc/ld.so.conf", .cache = "/etc/ld.so.cache", .no_links = true };
	struct oerr err;
	size_t at = 0;

	if (rootfd < 0) {
		const char *tmp = getenv("OCIDEC_FUZZ_TMP");

		snprintf(tree, sizeof(tree), "%s/ldconf.XXXXXX", tmp && *tmp ? tmp : "/dev/shm");
		if (!mkdtemp(tree))
			abort();
		rootfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
		mkdirat(rootfd, "etc", 0755);
		mkdirat(rootfd, "etc/ld.so.conf.d", 0755);
		mkdirat(rootfd, "lib", 0755);
		mkdirat(rootfd, "usr", 0755);
		mkdirat(rootfd, "usr/lib", 0755);
		mkdirat(rootfd, "opt", 0755);
		log_threshold = -1;  /* quiet */
	}
	for (size_t i = 0; i < 3; i++) {
		const uint8_t *nul = at <= size ? memchr(data + at, '\0', size - at) : NULL;
		size_t n = nul ? (size_t)(nul - (data + at)) : (at <= size ? size - at : 0);

		put(files[i], data + at, n);
		at += n + 1;
	}
	o.rootfd = rootfd;
	if (ldconfig_rebuild(&o, &err) < 0 && !err.msg[0])
		abort();
	return 0;
}
