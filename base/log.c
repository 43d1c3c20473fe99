/* log.c: see log.h. */
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* The system log: a datagram socket, connected before the first message
 * (or by log_syslog_connect, before a setns makes the path mean another
 * namespace's); a send that fails is dropped, never waited on. */
static const char *syslog_path;
static int syslog_fd = -1;

void log_syslog(const char *path)
{
	syslog_path = path && strcmp(path, "none") != 0 ? path : NULL;
	if (syslog_fd >= 0)
		close(syslog_fd);
	syslog_fd = -1;
}

void log_syslog_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int saved = errno;

	if (!syslog_path || syslog_fd >= 0 || strlen(syslog_path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, syslog_path);
	syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (syslog_fd >= 0 && connect(syslog_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(syslog_fd);
		syslog_fd = -1;
		syslog_path = NULL;  /* no syslog here: do not try again */
	}
	errno = saved;
}

/* "<PRI>Mmm dd hh:mm:ss ocidec[PID]: LINE" (RFC 3164), facility daemon */
static void write_syslog_line(int level, const char *line)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char msg[4400];
	struct tm tm;
	time_t now;
	int k, saved = errno;

	log_syslog_connect();
	if (syslog_fd < 0)
		return;
	now = time(NULL);
	utc_time(now, &tm);  /* never the TZ files: they may be the container's by then */
	k = snprintf(msg, sizeof(msg), "<%d>%s %2d %02d:%02d:%02d ocidec[%d]: %s", 3 * 8 + (level == LOG_ERROR ? 3 : 4),
		     mon[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid(), line);
	if (k > 0)
		(void)!send(syslog_fd, msg, (size_t)k < sizeof(msg) ? (size_t)k : sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	errno = saved;
}

/* One write per line, so lines from concurrent hooks do not interleave
 * (stdio's unbuffered stderr makes a line several writes under musl) */
void log_stderr_line(const char *line)
{
	size_t n = strlen(line);
	char stack[4608], *buf = n < sizeof(stack) ? stack : xmalloc(n + 1);
	int saved = errno;

	memcpy(buf, line, n);
	buf[n] = '\n';
	if (write(STDERR_FILENO, buf, n + 1) < 0)
		errno = saved;
	if (buf != stack)
		free(buf);
	errno = saved;
}

void log_error_line(const char *line)
{
	write_syslog_line(LOG_ERROR, line);
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
	utc_time(ts.tv_sec, &tm);
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
	log_stderr_line(line);
	write_file_line(line);
	if (level <= LOG_WARN)
		write_syslog_line(level, line);
}

int log_oerr(const struct oerr *e)
{
	char line[4200];

	escape_line(e->msg, line, sizeof(line), "");
	log_stderr_line(line);
	log_file_only("error: %s", e->msg);
	log_error_line(line);
	return e->code ? e->code : EXIT_FAIL;
}
