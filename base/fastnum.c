/* fastnum.c: strtod for the one number on the idle path.
 *
 * cJSON reads every JSON number with strtod, and the hook's state has one:
 * "pid". musl's strtod (its decimal scanner) takes an 8 KB frame on the
 * stack and reads a table of its own: three page faults of the hook of a
 * container that asks for nothing, a tenth of what that run costs beyond
 * its exec (bench/hook.sh). The static build is therefore linked with
 * -Wl,--wrap=strtod (the Makefile's ARENA_WRAP, OCIDEC_ARENA): a plain
 * decimal integer of at most 15 digits, with an optional '-', is read
 * here (every such integer is exactly a double); anything else (a sign,
 * leading space, a fraction, an exponent, hex, inf, nan, more digits) goes
 * to the C library's. The sanitizer build and the unit layer call the C
 * library's directly; test/unit/fastnum.c compares the two.
 */
#ifdef OCIDEC_ARENA
#include <stdbool.h>
#include <stdlib.h>

double __real_strtod(const char *restrict s, char **restrict end);
double __wrap_strtod(const char *restrict s, char **restrict end);

double __wrap_strtod(const char *restrict s, char **restrict end)
{
	const char *p = s + (*s == '-');
	unsigned long long v = 0;
	size_t n = 0;
	char c;

	while ((c = p[n]) >= '0' && c <= '9' && n < 16)
		v = v * 10 + (unsigned)(c - '0'), n++;
	/* a digit string that goes on as a number of another shape ("1.5",
	 * "1e3", "0x1f", "0p1", "1" then more digits) is the C library's */
	if (!n || n > 15 || c == '.' || c == 'e' || c == 'E' || c == 'x' || c == 'X' || c == 'p' || c == 'P')
		return __real_strtod(s, end);
	if (end)
		*end = (char *)(p + n);
	return *s == '-' ? -(double)v : (double)v;
}
#endif
