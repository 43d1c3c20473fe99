/* libFuzzer target: the hooks_dir lines of containers.conf and crio.conf
 * (conf_hooks_dir_names, the narrow TOML shape install and check read),
 * and a YAML CDI spec's top-level kind (yaml_top_scalar, check's).
 * Any text: no crash, leak or undefined behaviour; the text with a last
 * line setting hooks_dir to one directory after it, that directory is
 * named and the key set; a directory quoted nowhere in the text is named
 * only where that line names it. */
#include "engines/engines.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1), *with;
	bool set = false, named;

	memcpy(text, data, size);
	text[size] = '\0';
	named = conf_hooks_dir_names(text, "/fuzz/never/there", &set);
	if (named && !strstr(text, "/fuzz/never/there"))
		abort();
	with = xasprintf("%s\nhooks_dir = [\"/fuzz/last\"]\n", text);
	set = false;
	if (!conf_hooks_dir_names(with, "/fuzz/last", &set) || !set)
		abort();
	free(with);
	/* the kind: no more than what the text holds; one put first is it */
	{
		char *k = yaml_top_scalar(text, "kind"), *first;

		if (k && (!*k || !strstr(text, k) || strlen(k) > 255))
			abort();
		free(k);
		first = xasprintf("kind: \"fuzz.io/x\"\n%s", text);
		k = yaml_top_scalar(first, "kind");
		if (!k || strcmp(k, "fuzz.io/x") != 0)
			abort();
		free(k);
		free(first);
	}
	free(text);
	return 0;
}
