/* Unit tests: base/fastnum.c, the static build's strtod for the idle
 * path's numbers, against the C library's strtod: the same value (to the
 * bit, -0 included) and the same end, for every input, whether the fast
 * path takes it or hands it on. */
#define OCIDEC_ARENA 1
#include "base/fastnum.c"

#include "test/unit/tap.h"

#include <string.h>

static int real_calls;

double __real_strtod(const char *restrict s, char **restrict end)
{
	real_calls++;
	return strtod(s, end);
}

static void same(const char *s, bool fast)
{
	char *e1 = NULL, *e2 = NULL;
	int before = real_calls;
	double a = __wrap_strtod(s, &e1), b = strtod(s, &e2);

	CHECK(memcmp(&a, &b, sizeof(a)) == 0 && e1 == e2 && (real_calls == before) == fast,
	   "\"%s\": %.17g (end +%td), the C library's %.17g (end +%td), %s", s, a, e1 - s, b, e2 - s,
	   fast ? "read here" : "handed on");
}

int main(void)
{
	static const char *const fast[] = {
		"0", "7", "-0", "-1", "12345", "4294967296", "999999999999999", "-999999999999999",
		"007", "42,", "42}", "42 ", "42\n", "1-2", "12a", "1_000",
	};
	static const char *const handed[] = {
		"", "-", "+1", " 1", "1.5", "1e3", "1E3", "0x1f", "0X1F", "1p3", "9999999999999999",
		"12345678901234567890", "-1.0", "inf", "nan", "-inf", ".5", "1.", "--1",
	};

	for (size_t i = 0; i < sizeof(fast) / sizeof(*fast); i++)
		same(fast[i], true);
	for (size_t i = 0; i < sizeof(handed) / sizeof(*handed); i++)
		same(handed[i], false);
	{  /* no end pointer asked for */
		CHECK(__wrap_strtod("123", NULL) == 123.0, "no end pointer: 123");
	}
	return done();
}
