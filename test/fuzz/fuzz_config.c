/* libFuzzer target: the vendor config loader (devices/config.c on inih),
 * with every check it makes: the input is split at "\n%%\n" into up to
 * three INI files of one config directory (so duplicate vendors across
 * files are reached), loaded, and freed. Any input must load or be refused
 * with an error naming a file, without a crash, leak or undefined behaviour.
 */
#include "devices/config.h"
#include "base/log.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void put(int i, const uint8_t *p, size_t n)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/v%d.ini", dir, i);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || fchmod(fd, 0644) < 0)
		abort();
	close(fd);
}

static void cleanup(void)
{
	char path[96];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/v%d.ini", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	struct oerr err;
	size_t start = 0;
	int files = 0;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/ocidec-fuzz-config-%d", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
		if (mkdir(dir, 0755) < 0)
			abort();
		atexit(cleanup);
		log_threshold = LOG_ERROR;
	}
	for (int i = 0; i < 3; i++) {
		char path[96];
		snprintf(path, sizeof(path), "%s/v%d.ini", dir, i);
		unlink(path);
	}
	for (size_t i = 0; i + 4 <= size && files < 2; i++) {
		if (memcmp(data + i, "\n%%\n", 4) == 0) {
			put(files++, data + start, i - start);
			start = i + 4;
		}
	}
	put(files, data + start, size - start);
	if (config_load(&cfg, dir, &err) == 0) {
		for (size_t i = 0; i < cfg.n; i++) {
			bool sel[64];
			struct oerr e2;
			if (cfg.vendors[i].nfeatures <= 64)
				vendor_select_features(&cfg.vendors[i], "all", sel, &e2);
		}
		config_free(&cfg);
	} else if (!err.msg[0]) {
		abort();  /* a refusal always says why */
	}
	return 0;
}
