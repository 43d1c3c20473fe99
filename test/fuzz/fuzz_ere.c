/* libFuzzer target: ere_search (selinux-check's file_contexts matcher)
 * against glibc's regcomp/regexec, the reference. The input is read as a
 * recipe: an expression from the ERE syntax file_contexts use (literals,
 * escapes, '.', brackets, classes, groups, '|', '*', '+', '?', bounds,
 * '^', '$'), then a string over the bytes it names. Whenever glibc
 * compiles the expression, both must give the same answer. Kept short and
 * without what glibc's regcomp gets wrong or slow (bounds and anchors
 * inside groups): musl's answers, which ocidec had before, agree there. */
#include "formats/ere.h"

#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct gen {
	const uint8_t *d;
	size_t n, i;
	char out[512];
	size_t k;
};

static unsigned take(struct gen *g, unsigned mod)
{
	return g->i < g->n ? g->d[g->i++] % mod : 0;
}

static void put(struct gen *g, const char *s)
{
	size_t l = strlen(s);

	if (g->k + l < 96)  /* (short: the reference's time grows fast with length) */
		memcpy(g->out + g->k, s, l), g->k += l;
}

static void alt(struct gen *g, int depth);

static void atom(struct gen *g, int depth, int *quantifiable)
{
	static const char *const lit[] = { "a", "b", "/", "\\.", "-", "\\+", "\\_", "1" };
	static const char *const br[] = { "[ab]", "[^/]", "[a-c]", "[[:digit:]]", "[]a]", "[^]/]", "[-\\+]", "[0-9]" };

	*quantifiable = 1;
	switch (take(g, depth > 3 ? 4 : 7)) {
	case 0: case 1: put(g, lit[take(g, 8)]); break;
	case 2: put(g, "."); break;
	case 3: put(g, br[take(g, 8)]); break;
	case 4:
		/* anchors outside groups only: glibc's regexec errs on one inside
		 * a repeated group ("($|x+){2}a" matching what musl, PCRE and
		 * POSIX do not) */
		if (depth > 0) {
			put(g, "b");
			break;
		}
		put(g, take(g, 2) ? "^" : "$");
		*quantifiable = 0;
		break;
	default: put(g, "("); alt(g, depth + 1); put(g, ")"); break;
	}
}

static void piece(struct gen *g, int depth)
{
	static const char *const q[] = { "*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}", "{0}" };
	int quantifiable;

	atom(g, depth, &quantifiable);
	/* (bounds only outside any group: glibc's regcomp takes exponential
	 * time on nested ones, and the reference must answer) */
	if (quantifiable && take(g, 3) == 0)
		put(g, q[take(g, depth > 0 ? 3 : 8)]);
}

static void alt(struct gen *g, int depth)
{
	unsigned branches = 1 + take(g, 3);

	for (unsigned b = 0; b < branches; b++) {
		unsigned pieces = 1 + take(g, 4);

		if (b)
			put(g, "|");
		for (unsigned p = 0; p < pieces; p++)
			piece(g, depth);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char alphabet[] = "ab/.-+_1c";
	struct gen g = { .d = data, .n = size };
	char s[64];
	size_t sl = 0;
	regex_t re;
	int ref, ours;

	alt(&g, 0);
	g.out[g.k] = '\0';
	while (g.i < g.n && sl + 1 < sizeof(s))
		s[sl++] = alphabet[g.d[g.i++] % (sizeof(alphabet) - 1)];
	s[sl] = '\0';
	if (regcomp(&re, g.out, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	ref = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	ours = ere_search(g.out, s);
	if (ours != ref) {
		fprintf(stderr, "ere_search(\"%s\", \"%s\") = %d, glibc %d\n", g.out, s, ours, ref);
		abort();
	}
	return 0;
}
