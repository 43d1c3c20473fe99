/* log.h: leveled messages to stderr ("ocidec APPLET: LEVEL: ...") and,
 * when one is opened, a log file (appended, one write per line, with a
 * timestamp and the pid); warnings and errors also to the system log when
 * the applet turns it on (the hook does, by default). stdout is never used for logging. */
#ifndef OCIDEC_LOG_H
#define OCIDEC_LOG_H

#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern const char *log_prog;  /* "ocidec APPLET", set by the dispatcher */
extern int log_threshold;

int log_level_parse(const char *s);  /* -1 when not a level name */
/* Also append to PATH: O_APPEND, O_NOFOLLOW (a symlink is refused),
 * O_NONBLOCK, 0600; anything but a regular file is refused (EINVAL). */
int log_open_file(const char *path);
/* A line for the log file only (the caller printed it to stderr already). */
void log_file_only(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: LEVEL: MSG" into LINE (size N) with MSG escaped (escape_bytes):
 * every line ocidec prints or logs goes through here. */
void escape_line(const char *msg, char *line, size_t n, const char *level);
/* Warnings and errors also go to the system log at PATH (a datagram
 * socket, "/dev/log"); NULL or "none": not. log_syslog_connect connects at
 * once (before entering another mount namespace). */
#define SYSLOG_DEFAULT "/dev/log"
void log_syslog(const char *path);
void log_syslog_connect(void);
/* LINE (escaped already) to the system log as an error. */
/* LINE and its newline to stderr in one write(2) */
void log_stderr_line(const char *line);
void log_error_line(const char *line);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* E said as an error, "PROG: MESSAGE" (escaped): to stderr, the log file
 * and the system log, one write each; E's exit code (EXIT_FAIL without
 * one). How every failure that a run ends with, or goes on after, is said. */
struct oerr;
int log_oerr(const struct oerr *e);

#define log_debug(...) do { if (log_threshold >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)
#define log_info(...)  do { if (log_threshold >= LOG_INFO) log_msg(LOG_INFO, __VA_ARGS__); } while (0)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)

#endif
