/* tap.h: the C unit tests' one helper. Each test/unit/NAME.c is a program
 * of tables of cases; CHECK(cond, what...) prints one TAP line per case
 * ("ok N - what" or "not ok N - what"), done() prints the plan and returns
 * the exit status (1 when a case failed). test/unit.bats runs them. */
#ifndef OCIDEC_TAP_H
#define OCIDEC_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3))) static bool CHECK(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	tap_failed += !ok;
	return ok;
}

static int done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}

#define N_CASES(t) (sizeof(t) / sizeof(*(t)))

#endif
