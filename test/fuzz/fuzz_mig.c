/* libFuzzer target: mig_map_text (ocidec mig-map's reader of nvidia-smi -L
 * and -q output, which may come from a driver container, with process
 * names anyone writes). Any input: 0 or -1; on 0, the length said is the
 * text's, the text is the comment and the fingerprint (instances, boot)
 * then one line a MIG device: a "MIG-" name and four more fields, all
 * printable; no MIG UUID twice, no instance (GPU, GI, CI) twice. */
#include "devices/mig.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vendor v = { .name = "nvidia", .mig_caps = "/nonexistent/capabilities" };
	char *out = NULL, *save = NULL;
	static char seen[4096][2][128];
	static unsigned inst[4096][2];
	size_t n = 0, lines = 0, nseen = 0;
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
		if (lines < 3)
			continue;
		if (strncmp(l, "MIG-", 4) != 0 || sscanf(l, "%127s %127s %u %u %u %c", a, b, &x, &y, &z, &tail) != 5)
			abort();
		for (size_t k = 0; k < nseen; k++)
			if (strcasecmp(seen[k][0], a) == 0 ||
			    (strcasecmp(seen[k][1], b) == 0 && inst[k][0] == y && inst[k][1] == z))
				abort();
		if (nseen < 4096) {
			strcpy(seen[nseen][0], a);
			strcpy(seen[nseen][1], b);
			inst[nseen][0] = y;
			inst[nseen++][1] = z;
		}
	}
	if (lines < 3)
		abort();
	free(out);
	return 0;
}
