/* libFuzzer target: hostfiles_parse (NVIDIA's CSV lists of host files, as
 * a hook reads them from a driver root). Any input: no crash; every item a
 * known kind and a path without NUL that is absolute, or a bare device
 * name; never more items than lines; the answer of each line alone is the
 * answer within the file. */
#include "devices/hostfiles.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct count {
	size_t items, bad;
};

static void on_item(void *arg, int line, enum item_kind kind, const char *path)
{
	struct count *c = arg;

	if (line < 1 || kind >= KIND_COUNT || !*path)
		abort();
	if (path[0] != '/' && (kind != KIND_DEVICES || strchr(path, '/')))
		abort();
	if (path[strlen(path) - 1] == ' ' || path[strlen(path) - 1] == '\t')
		abort();
	c->items++;
}

static void on_bad(void *arg, int line, const char *why)
{
	struct count *c = arg;

	if (line < 1 || !why || !*why)
		abort();
	c->bad++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct count c = { 0 }, one = { 0 };
	size_t lines = 1, n;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	n = hostfiles_parse((const char *)data, size, 1000000, on_item, on_bad, &c);
	if (n != c.items || c.items + c.bad > lines)
		abort();
	/* line by line, the same answers */
	for (const uint8_t *s = data, *end = data + size; s < end;) {
		const uint8_t *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		enum item_kind kind;
		char *path = NULL;
		const char *why;
		int r = hostfiles_line((const char *)s, len, &kind, &path, &why);

		one.items += r == 1;
		one.bad += r == -1;
		free(path);
		s += len + (nl != NULL);
	}
	if (one.items != c.items || one.bad != c.bad)
		abort();
	return 0;
}
