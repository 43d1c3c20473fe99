/* util.h: error object, cleanup helpers, allocation wrappers, string lists.
 *
 * Library code never prints or exits (allocation failure aside): it returns -1
 * and fills a struct oerr; callers add context on the way up and only the
 * applet's main prints, as "ocidec APPLET: message".
 */
#ifndef OCIDEC_UTIL_H
#define OCIDEC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Exit codes (ocidec(1), EXIT STATUS): 0 success; 1 the operation failed
 * (for a checking applet: a problem was found); 2 bad usage or an invalid
 * config; 3 a checking applet could not check (it says nothing of what it
 * could not read). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_UNKNOWN = 3 };

struct oerr {
	int code;       /* EXIT_FAIL or EXIT_USAGE (bad usage, invalid config) */
	int errnum;     /* the errno behind it, or 0: callers test this, never errno */
	char msg[1024];
};

/* Set the error (errnum 0: no strerror suffix); return -1. errno is set
 * to ERRNUM too, for callers of functions that report both ways. */
int oerr_set(struct oerr *e, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, with exit code EXIT_USAGE: bad usage or invalid config. */
int oerr_usage(struct oerr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Put "CONTEXT: " in front of the message; return -1. */
int oerr_prefix(struct oerr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void cleanup_freep(void *p);
void cleanup_closep(int *fd);
#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof(*(a)))

/* Allocation failure ends the process: there is no sane way on. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
/* Out of memory: one line, exit 1 (typed to end an expression). */
void *oom(void);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A + B in a new string (no printf: the hook's idle path uses it) */
char *xconcat(const char *a, const char *b);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable NULL-terminated list of owned strings. */
struct strv {
	char **v;
	size_t n, cap;
};
void strv_push(struct strv *s, const char *str);
void strv_push_owned(struct strv *s, char *str);
/* Each word of TEXT between SEPS (any of them, none empty) pushed */
void strv_split(struct strv *s, const char *text, const char *seps);
bool strv_contains(const struct strv *s, const char *str);
void strv_free(struct strv *s);
#define _cleanup_strv_ __attribute__((cleanup(strv_free)))
/* S's strings in strcmp order */
void strv_sort(struct strv *s);
/* S's strings with SEP between them, malloc'd */
char *strv_join(const struct strv *s, const char *sep);

/* This binary's path (/proc/self/exe) into BUF (N bytes): 0, or -1 with
 * errno. What hooks in config.json and CDI specs name. */
int self_exe(char *buf, size_t n);
/* Write all N bytes at P to FD (EINTR retried): 0, or -1 with errno. */
int write_all(int fd, const void *p, size_t n);
/* Read a whole file from FD, at most MAX bytes (larger: EFBIG). NUL-terminated. */
int read_fd_all(int fd, size_t max, char **buf, size_t *len, struct oerr *e);
/* The same into *BUF of *CAP bytes (NULL, 0 at first), grown as needed and
 * kept, for reading many files with one allocation; the caller frees *BUF
 * whatever the result. */
int read_fd_reuse(int fd, size_t max, char **buf, size_t *cap, size_t *len, struct oerr *e);
/* Call FN for each name in the directory open at DIRFD (its offset moves),
 * "." and ".." left out; read with getdents64 into a buffer on the stack.
 * -1 (errno) when the directory cannot be read. */
int dir_each(int dirfd, void (*fn)(const char *name, void *arg), void *arg);

/* One line of mountinfo, split (the strings point into the line). */
struct mountinfo_line {
	unsigned long long id;
	const char *point;      /* mount point */
	const char *optional;   /* the optional fields ("shared:1 master:2"), maybe "" */
	const char *fstype;
};
/* Call FN for each line of "self/mountinfo" under PROCFD (the /proc to ask:
 * after setns, the host's /proc held from before still shows the namespace
 * entered), until it returns nonzero; returns that, 0 at the end, -1 when
 * the file cannot be read. */
int mountinfo_each(int procfd, int (*fn)(const struct mountinfo_line *l, void *arg), void *arg);
/* The mount point of the first file system of type FSTYPE in
 * /proc/self/mountinfo, or NULL. */
char *mountinfo_find(const char *fstype);


/* Whether the deadline of the whole run (the hook's --timeout, set by
 * deadline_arm) has passed: checked in every loop whose length an input
 * decides. Never, without deadline_arm or with 0. */
bool deadline_passed(void);
/* deadline_passed at turn TURN of a loop whose turns cost little (a
 * container's environment, entry by entry): the clock read one turn in
 * 256, the first included */
static inline bool deadline_passed_at(size_t turn)
{
	return (turn & 255) == 0 && deadline_passed();
}
/* The hook's and inject's --timeout SECONDS (default 10, 0: none): the
 * deadline, and SIGALRM 5 s after it as a backstop (one line, exit 1).
 * -1 when S is not a number from 0 to 3600. */
#define TIMEOUT_DEFAULT 10
#define XSTR_(x) #x
#define XSTR(x) XSTR_(x)
int deadline_arm(const char *s);
/* The same, with SEC a number (at most 3600) */
void deadline_arm_sec(unsigned sec);

/* PATH made absolute against BASE (when relative) and cleaned lexically, as
 * Go's filepath.Join/Clean do it (the runtime's reading of root.path): no
 * ".", "..", or repeated "/"; ".." at "/" stays at "/". */
char *path_clean_join(const char *base, const char *path);
/* The directory of PATH (a path in a root), allocated: "/" for "/NAME" and
 * for a NAME without a slash. */
char *path_dir(const char *path);
/* sscanf's conversions for the few small parsers, without sscanf (4 KB of
 * the C library): scan_num is " %lu" (" %lx" for BASE 16: blanks, a sign,
 * digits, strtoul's reading), scan_word " %Ns" (blanks, then at most SIZE -
 * 1 bytes up to a blank, NUL-terminated), scan_lit the literal LIT; each
 * reads at *P and moves *P past what it took, false (*P unmoved) where
 * there is none. */
bool scan_num(const char **p, unsigned long *v, int base);
bool scan_word(const char **p, char *buf, size_t size);
bool scan_lit(const char **p, const char *lit);
/* scan_num into an unsigned, " %u" */
bool scan_u(const char **p, unsigned *v);
/* memmem(HAY, N, NEEDLE, K), simply (memchr, then memcmp): the C
 * library's two-way search is 1.2 KB, for needles of a few bytes */
void *mem_find(const void *hay, size_t n, const void *needle, size_t k);
/* cJSON's one sscanf, "%lg" (print_number reads back the number it
 * printed): the static build compiles cJSON with sscanf named this (the
 * Makefile), so the C library's scanf stays out of the binary. Another
 * format aborts. */
int cjson_sscanf(const char *s, const char *fmt, ...);
/* Has path S a "." or ".." component? */
bool has_dot_component(const char *s);
/* Does NAME (one path component) match the shell pattern PAT, as
 * fnmatch(PAT, NAME, FNM_PERIOD) in the C locale: '*', '?', bracket
 * expressions ('!' or '^' negates; ranges; "[:digit:]" and the other
 * classes), '\' escaping; a leading '.' matched only by a '.'. */
bool glob_match(const char *pat, const char *name);
/* The ctype test of the POSIX class NAME (N bytes: "digit", "alpha", ...;
 * the C locale), or NULL: what glob_match and ere.c read in "[:NAME:]" */
int (*char_class(const char *name, size_t n))(int);
/* T (seconds since the epoch) as UTC into *TM, as gmtime_r does (which
 * pulls musl's time zone code into the static binary) */
struct tm;
void utc_time(long long t, struct tm *tm);
/* The wall clock in seconds, by one system call: the vDSO's clock costs a
 * short run (the idle hook) more than it saves, two pages faulted in and
 * its symbols read, for the one reading such a run makes. -1 when there
 * is none. */
long long wall_clock(void);

/* Is the file of *ST root's and writable by no one else (what may be run,
 * or trusted, as root)? */
struct stat;
bool root_owned(const struct stat *st);

/* S with every byte that is not printable ASCII written as \xNN, and "\"
 * as "\\": a value from a container can forge no line and no terminal
 * escape. Into OUT (size N), truncated; returns OUT. */
const char *escape_bytes(const char *s, char *out, size_t n);
/* Is S well-formed UTF-8 (no overlong form, no surrogate, nothing past
 * U+10FFFF)? What a JSON string may hold as it is */
bool utf8_valid(const char *s);

/* The first byte of P's N that is A or B, NULL if none: memchr for two
 * bytes, eight at a time (the idle path's scans of config.json and of its
 * index) */
const char *memchr2(const char *p, size_t n, char a, char b);


/* Join a root prefix and an absolute path: ("/", "/a") -> "/a", ("/r", "/a") -> "/r/a". */
char *path_join_root(const char *root, const char *path);

/* S as one shell word (a fix to paste): as it is, or single-quoted;
 * malloc'd; NULL where S holds a control character */
char *shell_word(const char *s);

#endif
