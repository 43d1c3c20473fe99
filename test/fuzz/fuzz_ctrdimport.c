/* libFuzzer target: install's edit of containerd's config.toml (the
 * import of its drop-in). Any text: no crash, leak or undefined behaviour;
 * the edit is idempotent, and taking the import out again gives the text
 * back byte for byte: nothing of the node's configuration changes. */
#include "engines/ctrd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DROPIN "/etc/containerd/conf.d/ocidec.toml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *added, *again, *removed;

	memcpy(text, data, size);
	text[size] = '\0';
	if (strlen(text) != size || strstr(text, "\"" DROPIN "\"")) {
		free(text);
		return 0;
	}
	added = ctrd_add_import(text, DROPIN);
	again = ctrd_add_import(added, DROPIN);
	removed = ctrd_remove_import(added, DROPIN);
	if (strcmp(again, added) != 0 || strcmp(removed, text) != 0 || !strstr(added, "\"" DROPIN "\"") ||
	    strstr(strstr(added, "\"" DROPIN "\"") + 1, "\"" DROPIN "\""))
		abort();
	free(text), free(added), free(again), free(removed);
	return 0;
}
