/* out.c: see out.h. */
#include "base/out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static int out_errno;

int out(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (out_errno)
		return -1;  /* stdout is gone: stop writing */
	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	if (n < 0)
		out_errno = errno ? errno : EIO;
	return n;
}

int out_flush(void)
{
	if (!out_errno && (fflush(stdout) != 0 || ferror(stdout)))
		out_errno = errno ? errno : EIO;
	return out_errno;
}
