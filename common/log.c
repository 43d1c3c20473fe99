/* log.c: see log.h. */
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *log_prog = "ocidec";
int log_threshold = LOG_WARN;
static int log_fd = -1;

/* Non-blocking, so a FIFO planted at PATH cannot hold the hook (and the
 * container's creation) forever; then it must be a regular file. */
int log_open_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		      0600);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;  /* "not a regular file" */
		return -1;
	}
	log_fd = fd;
	return 0;
}

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_level_parse(const char *s)
{
	for (int i = 0; i < (int)ARRAY_SIZE(level_names); i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

static void write_file_line(const char *line)
{
	char stamped[4400];
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
	char msg[2048], line[4200];
	va_list ap;

	if (log_fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape_line(msg, line, sizeof(line), "");
	write_file_line(line);
}

void escape_line(const char *msg, char *line, size_t n, const char *level)
{
	int k = snprintf(line, n, "%s: %s%s", log_prog, level, *level ? ": " : "");

	if (k > 0 && (size_t)k < n)
		escape_bytes(msg, line + k, n - (size_t)k);
}

void log_msg(int level, const char *fmt, ...)
{
	char msg[2048], line[4200];
	va_list ap;

	if (level > log_threshold)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Every byte a container could have chosen is escaped here, once for
	 * every message: no forged line, no terminal escape. */
	escape_line(msg, line, sizeof(line), level_names[level]);
	/* One write per line, so lines from concurrent hooks do not interleave. */
	fprintf(stderr, "%s\n", line);
	write_file_line(line);
}
