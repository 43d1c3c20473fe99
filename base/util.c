/* util.c: see util.h. */
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static void oerr_vset(struct oerr *e, int code, int errnum, const char *fmt, va_list ap)
{
	int n;

	e->code = code;
	e->errnum = errnum;
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	/* EXDEV is what every lookup that would leave its root, or the mounts
	 * allowed there, fails with (rootpath.h) */
	if (errnum && n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s",
			 errnum == EXDEV ? "leads out of the root file system or into another mount "
					   "(a volume, the host's /dev, /proc, /sys); refused"
					 : strerror(errnum));
}

int oerr_set(struct oerr *e, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	oerr_vset(e, EXIT_FAIL, errnum, fmt, ap);
	va_end(ap);
	errno = errnum;
	return -1;
}

int oerr_usage(struct oerr *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	oerr_vset(e, EXIT_USAGE, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int oerr_prefix(struct oerr *e, const char *fmt, ...)
{
	char ctx[sizeof(e->msg)], both[2 * sizeof(e->msg) + 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	snprintf(both, sizeof(both), "%s: %s", ctx, e->msg);
	memcpy(e->msg, both, sizeof(e->msg) - 1);
	e->msg[sizeof(e->msg) - 1] = '\0';
	return -1;
}

void cleanup_freep(void *p)
{
	free(*(void **)p);
}

void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

void *oom(void)
{
	static const char msg[] = "ocidec: fatal: out of memory\n";
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(EXIT_FAIL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? p : oom();
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	return p ? p : oom();
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	return p ? p : oom();
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		return oom();
	return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	return p ? p : oom();
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	return p ? p : oom();
}

char *xconcat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = xmalloc(la + lb + 1);

	memcpy(p, a, la);
	memcpy(p + la, b, lb + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	return n < 0 ? oom() : p;
}

void strv_push_owned(struct strv *s, char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xreallocarray(s->v, s->cap, sizeof(*s->v));
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *str)
{
	strv_push_owned(s, xstrdup(str));
}

void strv_split(struct strv *s, const char *text, const char *seps)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;

	for (char *t = strtok_r(copy, seps, &save); t; t = strtok_r(NULL, seps, &save))
		strv_push(s, t);
}

bool strv_contains(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(struct strv *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), strp_cmp);
}

char *strv_join(const struct strv *s, const char *sep)
{
	size_t n = 1, k = strlen(sep);
	char *out, *p;

	for (size_t i = 0; i < s->n; i++)
		n += strlen(s->v[i]) + k;
	p = out = xmalloc(n);
	*p = '\0';
	for (size_t i = 0; i < s->n; i++)
		p = stpcpy(stpcpy(p, i ? sep : ""), s->v[i]);
	return out;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int read_fd_reuse(int fd, size_t max, char **bufp, size_t *capp, size_t *lenp, struct oerr *e)
{
	size_t len = 0, cap = *capp;
	struct stat st;
	char *buf = *bufp;

	/* One allocation for a regular file; growth covers files that grow. A
	 * regular file of a known size that gave fewer bytes than asked is
	 * read to its end: no second read to see it (not /proc's files, of
	 * size 0, which give a page a read). */
	bool sized = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (size_t)st.st_size < max;

	if (sized && (size_t)st.st_size + 2 > cap)
		cap = (size_t)st.st_size + 2;
	if (cap < 64)
		cap = 4096;
	if (cap != *capp)
		*bufp = buf = xrealloc(buf, cap);
	*capp = cap;

	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			if (cap > max)
				return oerr_set(e, EFBIG, "larger than %zu bytes", max);
			*capp = cap *= 2;
			*bufp = buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return oerr_set(e, errno, "read");
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max)
			return oerr_set(e, EFBIG, "larger than %zu bytes", max);
		if (sized && len == (size_t)st.st_size && (size_t)r < cap - (len - (size_t)r) - 1)
			break;
	}
	buf[len] = '\0';
	*lenp = len;
	return 0;
}

int dir_each(int dirfd, void (*fn)(const char *name, void *arg), void *arg)
{
	/* struct linux_dirent64, as the kernel writes it */
	struct ent {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	_Alignas(8) char buf[2048];

	for (;;) {
		long n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		for (long off = 0; off < n;) {
			struct ent *d = (struct ent *)(buf + off);

			if (strcmp(d->name, ".") != 0 && strcmp(d->name, "..") != 0)
				fn(d->name, arg);
			off += d->reclen;
		}
	}
}

int self_exe(char *buf, size_t n)
{
	ssize_t l = readlink("/proc/self/exe", buf, n - 1);

	if (l <= 0) {
		if (l == 0)
			errno = ENOENT;
		return -1;
	}
	buf[l] = '\0';
	return 0;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int read_fd_all(int fd, size_t max, char **bufp, size_t *lenp, struct oerr *e)
{
	char *buf = NULL;
	size_t cap = 0;

	if (read_fd_reuse(fd, max, &buf, &cap, lenp, e) < 0) {
		free(buf);
		return -1;
	}
	*bufp = buf;
	return 0;
}

char *path_join_root(const char *root, const char *path)
{
	size_t rl = strlen(root);

	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	while (path[0] == '/' && path[1] == '/')
		path++;
	return xasprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
}

int mountinfo_each(int procfd, int (*fn)(const struct mountinfo_line *l, void *arg), void *arg)
{
	_cleanup_close_ int fd = openat(procfd, procfd == AT_FDCWD ? "/proc/self/mountinfo" : "self/mountinfo",
					O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct oerr err;
	size_t len;
	char *save = NULL;

	if (fd < 0 || read_fd_all(fd, 64 * 1024 * 1024, &buf, &len, &err) < 0)
		return -1;
	/* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER" */
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sep = strstr(line, " - "), *f[6] = { 0 }, *s2 = NULL, *end;
		struct mountinfo_line l;
		int r;

		if (!sep)
			continue;
		*sep = '\0';
		l.fstype = sep + 3;
		end = strchr(sep + 3, ' ');
		if (end)
			*end = '\0';
		f[0] = strtok_r(line, " ", &s2);
		for (int i = 1; i < 6 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &s2);
		if (!f[5])
			continue;
		l.id = strtoull(f[0], NULL, 10);
		l.point = f[4];
		l.optional = s2 ? s2 : "";
		if ((r = fn(&l, arg)) != 0)
			return r;
	}
	return 0;
}

struct find_fstype {
	const char *fstype;
	char *point;
};

static int find_fstype(const struct mountinfo_line *l, void *arg)
{
	struct find_fstype *f = arg;

	if (strcmp(l->fstype, f->fstype) != 0)
		return 0;
	f->point = xstrdup(l->point);
	return 1;
}

char *mountinfo_find(const char *fstype)
{
	struct find_fstype f = { fstype, NULL };

	mountinfo_each(AT_FDCWD, find_fstype, &f);
	return f.point;
}


/* The deadline is read off the SIGALRM backstop (armed for the timeout + 5 s)
 * the first time a loop asks, so the idle path, which asks nothing, pays no
 * clock read. */
#define DEADLINE_GRACE 5
static struct timespec deadline_ts;
static enum { DEADLINE_OFF, DEADLINE_PENDING, DEADLINE_SET } deadline_state;

bool deadline_passed(void)
{
	struct timespec now;
	struct itimerval it;

	if (deadline_state == DEADLINE_OFF)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (deadline_state == DEADLINE_PENDING) {
		if (getitimer(ITIMER_REAL, &it) < 0)
			memset(&it, 0, sizeof(it));
		deadline_ts = now;
		deadline_ts.tv_sec += it.it_value.tv_sec - DEADLINE_GRACE;
		deadline_ts.tv_nsec += it.it_value.tv_usec * 1000L;
		if (deadline_ts.tv_nsec >= 1000000000L) {
			deadline_ts.tv_sec++;
			deadline_ts.tv_nsec -= 1000000000L;
		}
		deadline_state = DEADLINE_SET;
	}
	return now.tv_sec > deadline_ts.tv_sec ||
	       (now.tv_sec == deadline_ts.tv_sec && now.tv_nsec >= deadline_ts.tv_nsec);
}

char *path_clean_join(const char *base, const char *path)
{
	char *in = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base, path);
	char *out = xmalloc(strlen(in) + 2);
	size_t o = 0;

	for (char *p = in; *p;) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;  /* the slash */
		} else {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	free(in);
	return out;
}

bool scan_num(const char **p, unsigned long *v, int base)
{
	char *end;

	*v = strtoul(*p, &end, base);
	if (end == *p)
		return false;
	*p = end;
	return true;
}

bool scan_word(const char **p, char *buf, size_t size)
{
	const char *s = *p;
	size_t n = 0;

	while (isspace((unsigned char)*s))
		s++;
	while (s[n] && !isspace((unsigned char)s[n]) && n + 1 < size)
		n++;
	if (!n)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*p = s + n;
	return true;
}

bool scan_u(const char **p, unsigned *v)
{
	unsigned long l;

	if (!scan_num(p, &l, 10))
		return false;
	*v = (unsigned)l;
	return true;
}

void *mem_find(const void *hay, size_t n, const void *needle, size_t k)
{
	const char *h = hay, *end = h + n;

	if (!k)
		return (void *)h;
	while (n >= k && (h = memchr(h, *(const char *)needle, n - k + 1))) {
		if (memcmp(h, needle, k) == 0)
			return (void *)h;
		n = (size_t)(end - ++h);
	}
	return NULL;
}

int cjson_sscanf(const char *s, const char *fmt, ...)
{
	va_list ap;
	double *d;
	char *end;

	if (strcmp(fmt, "%lg") != 0)
		abort();
	va_start(ap, fmt);
	d = va_arg(ap, double *);
	va_end(ap);
	*d = strtod(s, &end);
	return end != s;
}

bool scan_lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/* A path component ".." anywhere, or "." components, make a path malformed:
 * configs name places plainly. */
bool has_dot_component(const char *s)
{
	const char *c = s;

	while (*c) {
		size_t n;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return true;
		c += n;
	}
	return false;
}

char *path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash != path ? xstrndup(path, (size_t)(slash - path)) : xstrdup("/");
}

const char *escape_bytes(const char *s, char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (n == 0)
		return out;
	for (; *s && o + 1 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			out[o++] = (char)c;
		} else if (c == '\\') {
			if (o + 2 >= n)
				break;
			out[o++] = '\\';
			out[o++] = '\\';
		} else {
			if (o + 4 >= n)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

static void on_alarm(int sig)
{
	static const char msg[] = "ocidec: still running 5 s past the deadline (--timeout); gave up\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_FAIL);
	_exit(EXIT_FAIL);
}

int deadline_arm(const char *s)
{
	char *end;
	unsigned long sec = strtoul(s, &end, 10);

	if (!*s || *end || sec > 3600)
		return -1;
	deadline_arm_sec((unsigned)sec);
	return 0;
}

void deadline_arm_sec(unsigned sec)
{
	if (sec) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)sec + DEADLINE_GRACE);
	} else {
		alarm(0);
	}
	deadline_state = sec ? DEADLINE_PENDING : DEADLINE_OFF;
}


int (*char_class(const char *name, size_t n))(int)
{
	static const struct { const char *name; int (*is)(int); } classes[] = {
		{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank }, { "cntrl", iscntrl },
		{ "digit", isdigit }, { "graph", isgraph }, { "lower", islower }, { "print", isprint },
		{ "punct", ispunct }, { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
	};

	for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
		if (strlen(classes[i].name) == n && strncmp(name, classes[i].name, n) == 0)
			return classes[i].is;
	return NULL;
}

/* One bracket expression of a shell pattern at P (past '['), against C:
 * the end of the expression (past ']') with *HIT, or NULL when it does not
 * close (then '[' is itself) */
static const char *glob_bracket(const char *p, unsigned char c, bool *hit)
{
	bool neg = *p == '!' || *p == '^', first = true;

	*hit = false;
	if (neg)
		p++;
	for (; *p && (first || *p != ']'); first = false) {
		unsigned char lo, hi;

		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			/* "[:class:]", "[.c.]", "[=c=]": unclosed, the whole
			 * expression is none (its '[' itself); an unknown class or
			 * an element of more than one byte matches nothing */
			const char close[3] = { p[1], ']', '\0' };
			const char *end = p[2] ? strstr(p + 3, close) : NULL;
			size_t n = end ? (size_t)(end - p - 2) : 0;

			if (!end)
				return NULL;
			int (*is)(int) = p[1] == ':' ? char_class(p + 2, n) : NULL;

			if (is)
				*hit |= c < 128 && is(c);
			if (p[1] != ':' && n == 1)
				*hit |= (unsigned char)p[2] == c;
			p = end + 2;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		lo = hi = (unsigned char)*p++;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\' && p[1])
				p++;
			hi = (unsigned char)*p++;
		}
		*hit |= lo <= c && c <= hi;
	}
	if (*p != ']')
		return NULL;
	*hit ^= neg;
	return p + 1;
}

bool glob_match(const char *pat, const char *name)
{
	const char *star = NULL, *resume = NULL, *n = name;

	/* one '*' remembered: on a mismatch, it takes one more character */
	for (;;) {
		bool hit;
		const char *next;

		if (*pat == '*') {
			if (n == name && *n == '.')
				return false;  /* a leading dot only by name */
			while (*pat == '*')
				pat++;
			star = pat;
			resume = n;
			continue;
		}
		if (!*n) {
			if (!*pat)
				return true;
			goto retry;
		}
		switch (*pat) {
		case '\0':
			goto retry;
		case '?':
			if (n == name && *n == '.')
				return false;
			pat++, n++;
			continue;
		case '[':
			if (n == name && *n == '.')
				return false;
			next = glob_bracket(pat + 1, (unsigned char)*n, &hit);
			if (!next) {
				if (*n != '[')
					goto retry;
				pat++, n++;  /* an unclosed '[' is itself */
				continue;
			}
			if (!hit)
				goto retry;
			pat = next, n++;
			continue;
		case '\\':
			if (pat[1])
				pat++;
			/* fall through */
		default:
			if (*pat != *n)
				goto retry;
			pat++, n++;
			continue;
		}
retry:
		if (!star || !*resume)
			return false;
		pat = star;
		n = ++resume;
	}
}

/* A word of eight bytes C (the "has a zero byte" test: Hacker's Delight
 * 6-1; its lowest set bit is the first such byte, its higher ones may not
 * be, which is all memchr2 reads) */
#define BYTES8(c) ((uint64_t)(unsigned char)(c) * 0x0101010101010101ull)
static uint64_t zero_bytes(uint64_t x)
{
	return (x - BYTES8(1)) & ~x & BYTES8(0x80);
}

const char *memchr2(const char *p, size_t n, char a, char b)
{
	const char *end = p + n;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (uint64_t w, m; (size_t)(end - p) >= 8; p += 8) {
		memcpy(&w, p, 8);
		if ((m = zero_bytes(w ^ BYTES8(a)) | zero_bytes(w ^ BYTES8(b))))
			return p + __builtin_ctzll(m) / 8;
	}
#endif
	for (; p < end; p++)
		if (*p == a || *p == b)
			return p;
	return NULL;
}

bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p, n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 :
					      c >= 0xf0 && c <= 0xf4 ? 3 : 4;
		unsigned lo = 0x80, hi = 0xbf;

		if (n == 4)
			return false;
		/* the second byte's range: no overlong form, no surrogate, nothing past U+10FFFF */
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		else if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		p++;
		for (unsigned i = 0; i < n; i++, p++, lo = 0x80, hi = 0xbf)
			if (*p < lo || *p > hi)
				return false;
	}
	return true;
}

long long wall_clock(void)
{
	struct timespec ts;

#if defined(SYS_clock_gettime) && __SIZEOF_LONG__ == 8  /* the kernel's timespec is ours */
	if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) == 0)
		return (long long)ts.tv_sec;
#else  /* (32-bit musl: SYS_clock_gettime64, whose timespec differs) */
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		return (long long)ts.tv_sec;
#endif
	return -1;
}

void utc_time(long long t, struct tm *tm)
{
	/* days since 1970-01-01 to the civil date (H. Hinnant's algorithm) */
	long long days = t / 86400, secs = t % 86400, era, doe, yoe, doy, mp;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	memset(tm, 0, sizeof(*tm));
	tm->tm_hour = (int)(secs / 3600);
	tm->tm_min = (int)(secs / 60 % 60);
	tm->tm_sec = (int)(secs % 60);
	tm->tm_wday = (int)((days % 7 + 11) % 7);  /* 1970-01-01: a Thursday */
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	tm->tm_mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->tm_mon = (int)(mp < 10 ? mp + 2 : mp - 10);
	tm->tm_year = (int)(yoe + era * 400 + (tm->tm_mon < 2) - 1900);
	{
		static const short before[] = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
		long long y = tm->tm_year + 1900LL;
		bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

		tm->tm_yday = before[tm->tm_mon] + tm->tm_mday - 1 + (leap && tm->tm_mon > 1);
	}
}

bool root_owned(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* S as one shell word: as it is where it holds nothing a shell reads
 * otherwise, else in single quotes, a quote in it as '"'"' (a fix is
 * pasted into a shell; a file name must stay a name). malloc'd; NULL where
 * S holds a control character (the text output escapes it) */
char *shell_word(const char *s)
{
	size_t n = 3;
	char *out, *o;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+-@%") == strlen(s))
		return xstrdup(s);
	/* a control character prints escaped: no word to paste */
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return NULL;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 5 : 1;
	o = out = xmalloc(n);
	*o++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {  /* (no backslash: the text output escapes those) */
			memcpy(o, "'\"'\"'", 5);
			o += 5;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}
