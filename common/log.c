/* log.c: see log.h. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *log_prog = "ocidec";
int log_threshold = LOG_WARN;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_level_parse(const char *s)
{
	for (int i = 0; i < (int)(sizeof(level_names) / sizeof(*level_names)); i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

void log_msg(int level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	if (level > log_threshold)
		return;
	n = snprintf(line, sizeof(line), "%s: %s: ", log_prog, level_names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* One write per line, so lines from concurrent hooks do not interleave. */
	fprintf(stderr, "%s\n", line);
}
