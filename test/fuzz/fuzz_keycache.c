/* libFuzzer target: keycache_walk (the idle path's index, read back from
 * /run/ocidec). Any input: no crash; what it accepts is one directory
 * record, then files in strictly increasing name order without a '/',
 * then keys, none empty; and a second walk of an accepted text (its
 * newlines now NULs, restored) sees the same records. */
#include "devices/keycache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	char last;
	size_t n;
	unsigned long long sum;
	char prev[256];
};

static int record(char kind, const struct keycache_stamp *st, const char *s, size_t n, void *arg)
{
	struct seen *w = arg;

	if ((kind == 'd') != (w->last == 0) || (kind == 'f' && w->last == 'k') || (kind != 'k') != (st != NULL) ||
	    (kind == 'd') != (s == NULL))
		abort();
	if (kind != 'd' && (!*s || strchr(s, '\n') || strlen(s) != n))
		abort();
	if (kind == 'f') {
		if (strchr(s, '/') || (w->last == 'f' && strcmp(w->prev, s) >= 0))
			abort();
		strncpy(w->prev, s, sizeof(w->prev) - 1);
	}
	if (st)
		w->sum += st->dev ^ st->ino ^ st->size ^ st->mtime_s ^ st->mtime_ns ^ st->ctime_s ^ st->ctime_ns;
	w->last = kind;
	w->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *copy = malloc(size + 1);
	struct seen a = { 0 }, b = { 0 };

	if (!text || !copy)
		abort();
	memcpy(text, data, size);
	memcpy(copy, data, size);
	if (keycache_walk(text, size, record, &a) == 0) {
		if (a.n == 0 || keycache_walk(copy, size, record, &b) != 0 || a.n != b.n || a.sum != b.sum)
			abort();
	}
	free(text);
	free(copy);
	return 0;
}
