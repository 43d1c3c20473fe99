/* libFuzzer target: the ld.so.cache reader, and the writer on what it read.
 *
 * Any input must parse or be refused without a crash, leak or undefined
 * behaviour. What parses is written again (ldcache_build) and read back: the
 * writer must produce a cache its own reader accepts, with the same number
 * of entries, each key and path found again.
 */
#include "formats/ldcache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ldcache c, again;
	struct ldcache_builder b = { 0 };
	struct oerr err;
	char *buf = malloc(size ? size : 1), *out;
	size_t len;

	memcpy(buf, data, size);
	if (ldcache_parse(&c, buf, size, &err) < 0)
		return 0;
	for (size_t i = 0; i < c.n; i++) {
		char desc[128];
		ldcache_describe(&c.e[i], desc, sizeof(desc));
	}
	ldcache_builder_add_cache(&b, &c);
	if (ldcache_build(&b, "fuzz", &out, &len, &err) == 0) {
		if (ldcache_parse(&again, out, len, &err) < 0 || again.n != c.n)
			abort();
		for (size_t i = 0; i < again.n; i++)
			if (!again.e[i].key || !again.e[i].value)
				abort();
		ldcache_free(&again);
	}
	ldcache_builder_free(&b);
	ldcache_free(&c);
	return 0;
}
