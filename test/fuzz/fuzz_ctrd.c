/* libFuzzer target: the containerd drop-in made from `containerd config
 * dump`'s text (ctrd_dropin), and install's key set in it (ctrd_set_key). Any text: no crash, leak or undefined
 * behaviour; a drop-in, when made, declares the runtime's table and its
 * options table exactly once each (TOML refuses a table twice), the
 * options table starting with the shim as BinaryName; a version 3 one in
 * version 2's names (ctrd_as_version2) declares them under version 2's
 * plugin exactly once each and nothing under version 3's. */
#include "engines/ctrd.h"
#include "base/util.h"

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
		/* install --set-as-default on it: the key set once in its table,
		 * and a second time nothing changes (ctrd_set_key) */
		{
			char ctr[128], *set, *again;

			snprintf(ctr, sizeof(ctr), "plugins.%s.containerd", plugin);
			set = ctrd_set_key(out, ctr, "default_runtime_name", "\"ocidec\"");
			again = ctrd_set_key(set, ctr, "default_runtime_name", "\"ocidec\"");
			/* (a line of the input's own "key =value" spacing keeps it) */
			if (strcmp(set, again) != 0 || !strstr(set, "default_runtime_name") || !strstr(set, "\"ocidec\"\n"))
				abort();
			/* an install run again carries what the first set (ctrd_carry, ctrd_get_key) */
			{
				char *carried = ctrd_carry(xstrdup(out), set, version, "ocidec", NULL);
				char *v = ctrd_get_key(carried, ctr, "default_runtime_name");

				if (!v || strcmp(v, "\"ocidec\"") != 0)
					abort();
				free(v);
				free(carried);
			}
			free(set);
			free(again);
		}
		if (version == 3) {
			char *v2 = ctrd_as_version2(out), t2[128], o2[192];

			snprintf(t2, sizeof(t2), "\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.ocidec]\n");
			snprintf(o2, sizeof(o2), "\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.ocidec.options]\n"
				 "  BinaryName = \"/shim\"\n");
			if (count(v2, t2) != 1 || count(v2, o2) != 1 || strstr(v2, "\n[plugins.\"io.containerd.cri.v1.runtime\""))
				abort();
			free(v2);
		}
	}
	free(out);
	free(bin);
	return 0;
}
