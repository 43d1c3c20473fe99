/* libFuzzer target: glob_match (the vendors' globs over sysfs and /proc,
 * root_glob's components) against glibc's fnmatch, the reference: the
 * input is read as a recipe, a pattern from '*', '?', bracket expressions,
 * escapes and literals, then a name over the bytes it uses (a leading '.'
 * included). Both must give the same answer. FNM_PERIOD's rule (a leading
 * '.' only by a '.') is applied here, on fnmatch(..., 0): glibc's own
 * FNM_PERIOD misses matches ("*?[.]*" and "c.x"; musl's, which ocidec
 * used before, and POSIX match). Brackets are whole: glibc and musl part
 * ways on a stray '[' before a '.' or ':' ("[[.-[^.]"). */
#include "base/util.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const parts[] = {
		"*", "?", "a", "b", ".", "-", ":", "0", "[ab]", "[!a]", "[^.]", "[a-c]", "[]a]", "[[:digit:]]",
		"[!]]", "\\*", "\\a", "\\[", "]", "[*]", "[0-9]", "**", "[.]", "[[:alpha:][:digit:]]",
	};
	static const char alphabet[] = "ab.-:0c*[]?9";
	char pat[256], name[64];
	size_t i = 0, k = 0, n = 0, parts_n = i < size ? 1 + data[i++] % 12 : 1;
	int ref;
	bool ours;

	for (size_t p = 0; p < parts_n; p++) {
		const char *s = parts[i < size ? data[i++] % (sizeof(parts) / sizeof(*parts)) : 0];

		if (k + strlen(s) + 1 < sizeof(pat)) {
			memcpy(pat + k, s, strlen(s));
			k += strlen(s);
		}
	}
	pat[k] = '\0';
	while (i < size && n + 1 < sizeof(name))
		name[n++] = alphabet[data[i++] % (sizeof(alphabet) - 1)];
	name[n] = '\0';
	ref = name[0] == '.' && pat[0] != '.' && strncmp(pat, "\\.", 2) != 0 ? FNM_NOMATCH : fnmatch(pat, name, 0);
	ours = glob_match(pat, name);
	if (ours != (ref == 0)) {
		fprintf(stderr, "glob_match(\"%s\", \"%s\") = %d, fnmatch %d\n", pat, name, ours, ref);
		abort();
	}
	return 0;
}
