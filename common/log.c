/* log.c: see log.h. */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *log_prog = "ocidec";
int log_threshold = LOG_WARN;
static int log_fd = -1;

int log_open_file(const char *path)
{
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	return log_fd < 0 ? -1 : 0;
}

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_level_parse(const char *s)
{
	for (int i = 0; i < (int)(sizeof(level_names) / sizeof(*level_names)); i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

static void write_file_line(const char *line)
{
	char stamped[2200];
	struct timespec ts;
	struct tm tm;
	int saved = errno, k;

	if (log_fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	k = snprintf(stamped, sizeof(stamped), "%04d-%02d-%02dT%02d:%02d:%02dZ [%d] %s\n",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     (int)getpid(), line);
	if (k > 0 && write(log_fd, stamped, (size_t)k < sizeof(stamped) ? (size_t)k : sizeof(stamped) - 1) < 0)
		errno = saved;
	errno = saved;
}

void log_file_only(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	if (log_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s: ", log_prog);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	write_file_line(line);
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
	write_file_line(line);
}
