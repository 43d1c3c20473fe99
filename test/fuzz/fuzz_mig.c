/* libFuzzer target: mig_map_text (ocidec mig-map's reader of nvidia-smi -L
 * and -q output, which may come from a driver container). Any input: 0 or
 * -1; on 0, the length said is the text's, the text is the header then one
 * line a MIG device: a "MIG-" name and four more fields, all printable. */
#include "common/mig.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vendor v = { .name = "nvidia", .mig_caps = "/nonexistent/capabilities" };
	char *out = NULL, *save = NULL;
	size_t n = 0, lines = 0;
	struct oerr err;

	if (mig_map_text(&v, (const char *)data, size, &out, &n, &err) < 0)
		return 0;
	if (strlen(out) != n)
		abort();
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
		char a[128], b[128], tail;
		unsigned x, y, z;

		for (const char *c = l; *c; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				abort();
		if (lines < 2)
			continue;
		if (strncmp(l, "MIG-", 4) != 0 || sscanf(l, "%127s %127s %u %u %u %c", a, b, &x, &y, &z, &tail) != 5)
			abort();
	}
	if (lines < 2)
		abort();
	free(out);
	return 0;
}
