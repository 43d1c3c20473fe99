/* libFuzzer target: the containerd drop-in made from `containerd config
 * dump`'s text (ctrd_dropin). Any text: no crash, leak or undefined
 * behaviour; a drop-in, when made, declares the runtime's table and its
 * options table exactly once each (TOML refuses a table twice), the
 * options table starting with the shim as BinaryName. */
#include "common/ctrd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int version = size && (data[0] & 1) ? 3 : 2;
	const char *plugin = version == 3 ? "\"io.containerd.cri.v1.runtime\"" : "\"io.containerd.grpc.v1.cri\"";
	char *bin = NULL, *out = ctrd_dropin((const char *)data, size, version, "ocidec", "/shim", &bin);
	char table[128], opts[192];

	if (out) {
		snprintf(table, sizeof(table), "\n[plugins.%s.containerd.runtimes.ocidec]\n", plugin);
		snprintf(opts, sizeof(opts), "\n[plugins.%s.containerd.runtimes.ocidec.options]\n  BinaryName = \"/shim\"\n",
			 plugin);
		if (count(out, table) != 1 || count(out, opts) != 1)
			abort();
	}
	free(out);
	free(bin);
	return 0;
}
