/* keycache.c: see keycache.h.
 *
 * The index is text, one record a line:
 *   ocidec activation keys 2 VERSION
 *   d DEV INO SIZE MTIME_S MTIME_NS CTIME_S CTIME_NS        the directory
 *   f DEV INO SIZE MTIME_S MTIME_NS CTIME_S CTIME_NS NAME   each *.ini, in name order
 *   k KEY                                                   each key
 *   end
 */
#include "devices/keycache.h"

#include "devices/config.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char magic[] = KEYCACHE_MAGIC;

static void stamp_of(const struct stat *st, struct keycache_stamp *s)
{
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->size = (unsigned long long)st->st_size;
	s->mtime_s = (unsigned long long)st->st_mtim.tv_sec;
	s->mtime_ns = (unsigned long long)st->st_mtim.tv_nsec;
	s->ctime_s = (unsigned long long)st->st_ctim.tv_sec;
	s->ctime_ns = (unsigned long long)st->st_ctim.tv_nsec;
}

static bool stamp_eq(const struct keycache_stamp *a, const struct keycache_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_s == b->mtime_s &&
	       a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

/* ---- the text ---- */

/* One " NUMBER" at *P (decimal, no sign, at most 20 digits, no overflow),
 * *P moved past it (by hand, and nineteen digits before any overflow test:
 * the general scanners cost the idle path a sixth of its instructions for
 * the index's 140 numbers) */
static int parse_num(char **p, unsigned long long *v)
{
	const char *s = *p + 1;
	unsigned long long n = 0;
	size_t i = 0;
	unsigned d;

	if (**p != ' ')
		return -1;
	for (; i < 19 && (d = (unsigned)(s[i] - '0')) <= 9; i++)
		n = n * 10 + d;
	if (!i)
		return -1;
	if ((d = (unsigned)(s[i] - '0')) <= 9) {  /* a twentieth: the one that can overflow */
		if (n > ULLONG_MAX / 10 || (n == ULLONG_MAX / 10 && d > ULLONG_MAX % 10) ||
		    (unsigned)(s[i + 1] - '0') <= 9)
			return -1;
		n = n * 10 + d;
		i++;
	}
	*v = n;
	*p = (char *)s + i;
	return 0;
}

static int parse_stamp(char **p, struct keycache_stamp *s)
{
	return parse_num(p, &s->dev) < 0 || parse_num(p, &s->ino) < 0 || parse_num(p, &s->size) < 0 ||
	       parse_num(p, &s->mtime_s) < 0 || parse_num(p, &s->mtime_ns) < 0 || parse_num(p, &s->ctime_s) < 0 ||
	       parse_num(p, &s->ctime_ns) < 0 ? -1 : 0;
}

int keycache_walk(char *text, size_t len,
		  int (*fn)(char kind, const struct keycache_stamp *st, const char *s, size_t n, void *arg), void *arg)
{
	char *line, *nl, *end = text + len;
	const char *last = NULL;
	char state = 0;  /* the last kind read */

	if (len < sizeof(magic) - 1 || memcmp(text, magic, sizeof(magic) - 1) != 0)
		return -1;
	for (line = text + sizeof(magic) - 1; line < end; line = nl + 1) {
		struct keycache_stamp st;
		char *p = line + 1;

		/* every line ends, and no byte is a NUL: a cut index is no index */
		if (!(nl = (char *)memchr2(line, (size_t)(end - line), '\n', '\0')) || !*nl)
			return -1;
		*nl = '\0';
		if (line[0] == 'd' && !state) {
			if (parse_stamp(&p, &st) < 0 || *p || fn('d', &st, NULL, 0, arg))
				return -1;
		} else if (line[0] == 'f' && (state == 'd' || state == 'f')) {
			if (parse_stamp(&p, &st) < 0 || *p != ' ' || !p[1] || memchr(p + 1, '/', (size_t)(nl - p - 1)) ||
			    (last && strcmp(last, p + 1) >= 0) || fn('f', &st, p + 1, (size_t)(nl - p - 1), arg))
				return -1;  /* (in name order, each once) */
			last = p + 1;
		} else if (line[0] == 'k' && state && state != 'e' && line[1] == ' ' && line[2]) {
			if (fn('k', NULL, line + 2, (size_t)(nl - line - 2), arg))
				return -1;
		} else if (strcmp(line, "end") == 0 && state && state != 'e') {
			;  /* the last line: what comes after it is no index */
		} else {
			return -1;
		}
		state = line[0];
	}
	return state == 'e' ? 0 : -1;
}

/* BUF of *LEN bytes, growing: FMT appended */
static void put(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			oom();
		if (*buf && (size_t)n < *cap - *len)
			break;
		*cap = (*cap + (size_t)n + 1) * 2;
		*buf = xrealloc(*buf, *cap);
	}
	*len += (size_t)n;
}

static void put_stamp(char **buf, size_t *len, size_t *cap, char what, const struct keycache_stamp *s)
{
	put(buf, len, cap, "%c %llu %llu %llu %llu %llu %llu %llu", what, s->dev, s->ino, s->size, s->mtime_s,
	    s->mtime_ns, s->ctime_s, s->ctime_ns);
}

/* ---- the file ---- */

/* V in decimal at P; the end (no printf on the idle path) */
static char *put_u(char *p, unsigned long long v)
{
	char d[24];
	size_t n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = d[--n];
	return p;
}

int run_dirfd(bool create)
{
	struct stat st;
	int fd;

	/* 0755: the directory holds other files of ocidec's that a rootless
	 * hook reads (nvidia.ini's mig_map); the indexes themselves are 0600 */
	if (create && mkdir(KEYCACHE_DIR, 0755) < 0 && errno != EEXIST)
		return -1;
	fd = openat(AT_FDCWD, KEYCACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct sweep {
	int dirfd;
	time_t before;
};

static void sweep_one(const char *name, void *arg)
{
	const struct sweep *s = arg;
	struct stat st;

	if ((strncmp(name, "keys-", 5) == 0 || strncmp(name, ".tmp-keys-", 10) == 0) &&
	    fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtim.tv_sec < s->before)
		unlinkat(s->dirfd, name, 0);
}

/* TEXT as the index NAME: written whole under another name, then renamed
 * over it (a hook reading at the same time sees the old one or the new
 * one); the stale ones swept first. Failures leave no index. */
static void cache_write(const char *name, const char *text, size_t len)
{
	_cleanup_close_ int dirfd = run_dirfd(true);
	char tmp[96];
	struct sweep s;
	int fd;

	if (dirfd < 0)
		return;
	s = (struct sweep){ .dirfd = dirfd, .before = wall_clock() - KEYCACHE_SWEEP };
	dir_each(dirfd, sweep_one, &s);
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%ld", name, (long)getpid());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write_all(fd, text, len) < 0 || close(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0)
		unlinkat(dirfd, tmp, 0);
}

/* The index NAME read into BUF (SIZE bytes): its length, when it and its
 * directory are the caller's and written by no one else, it fits, and it
 * is younger than KEYCACHE_TTL; else -1 */
static ssize_t cache_read(const char *name, char *buf, size_t size)
{
	_cleanup_close_ int dirfd = run_dirfd(false);
	struct stat st;
	long long now;
	ssize_t n;
	int fd;

	if (dirfd < 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size <= 0 || (size_t)st.st_size > size ||
	    (now = wall_clock()) < 0 || st.st_mtim.tv_sec < now - KEYCACHE_TTL) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	return n == st.st_size ? n : -1;
}

/* Walking an index against the directory open at DIRFD (stamped DIR),
 * its keys into KEYS: the pointers, then the lengths, in one block that
 * grows in place (nothing else is allocated during the walk: the arena's
 * newest block, base/arena.c) */
struct validate {
	int dirfd;
	const struct keycache_stamp *dir;
	struct keyset *keys;
	size_t cap;
};

static int validate_one(char kind, const struct keycache_stamp *s, const char *str, size_t n, void *arg)
{
	struct validate *v = arg;
	struct keycache_stamp now;
	struct stat st;
	struct keyset *k = v->keys;

	switch (kind) {
	case 'd': return !stamp_eq(s, v->dir);
	case 'f':
		if (fstatat(v->dirfd, str, &st, 0) < 0)
			return -1;
		stamp_of(&st, &now);
		return !stamp_eq(s, &now);
	default:
		if (k->as.n + 1 >= v->cap) {
			size_t cap = v->cap ? v->cap * 2 : 64;
			char **p = xrealloc(k->mem, cap * (sizeof(char *) + sizeof(size_t)));

			memmove(p + cap, p + v->cap, k->as.n * sizeof(size_t));  /* (the lengths, after the pointers) */
			k->mem = k->as.v = p;
			k->len = (size_t *)(p + cap);
			v->cap = cap;
		}
		((size_t *)k->len)[k->as.n] = n;
		k->as.v[k->as.n++] = (char *)str;  /* (into the index's text, which the keys keep) */
		k->as.v[k->as.n] = NULL;
		return 0;
	}
}

/* Does the index TEXT (LEN bytes) still describe the directory open at
 * DIRFD (stamped DIR)? Its keys into KEYS when it does, pointing into TEXT. */
static bool cache_use(char *text, size_t len, int dirfd, const struct keycache_stamp *dir, struct keyset *keys)
{
	struct validate v = { .dirfd = dirfd, .dir = dir, .keys = keys };

	if (keycache_walk(text, len, validate_one, &v) < 0) {
		keyset_free(keys);
		return false;
	}
	return true;
}

/* Is the stamp older than the settling time before NOW? */
static bool settled(const struct keycache_stamp *s, time_t now)
{
	return (long long)s->mtime_s < (long long)now - KEYCACHE_SETTLE &&
	       (long long)s->ctime_s < (long long)now - KEYCACHE_SETTLE;
}

/* KEYS (N of them) copied into *K: one allocation */
static void keyset_of(const char *const *keys, size_t n, struct keyset *k)
{
	size_t size = (n + 1) * sizeof(char *) + n * sizeof(size_t), *len;
	char *p;

	for (size_t i = 0; i < n; i++)
		size += strlen(keys[i]) + 1;
	k->mem = xmalloc(size);
	k->as = (struct strv){ .v = k->mem, .n = n };
	k->len = len = (size_t *)(k->as.v + n + 1);
	p = (char *)(len + n);
	for (size_t i = 0; i < n; i++) {
		len[i] = strlen(keys[i]);
		k->as.v[i] = memcpy(p, keys[i], len[i] + 1);
		p += len[i] + 1;
	}
	k->as.v[n] = NULL;
}

void keyset_free(struct keyset *k)
{
	free(k->mem);
	free(k->text);
	memset(k, 0, sizeof(*k));
}

/* The full scan of DIRFD (stamped DIR) into KEYS, and its index NAME
 * written when every stamp has settled */
static int scan(int dirfd, const struct keycache_stamp *dir, const char *name, struct keyset *ks)
{
	struct strv names = { 0 }, k = { 0 }, *keys = &k;
	_cleanup_free_ struct stat *stats = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0, cap = 0;
	time_t now = (time_t)wall_clock();
	bool write = settled(dir, now);
	int r = config_activation_keys_at(dirfd, &names, &stats, keys);

	if (r < 0)
		write = false;
	put(&text, &len, &cap, "%s", magic);
	put_stamp(&text, &len, &cap, 'd', dir);
	put(&text, &len, &cap, "\n");
	for (size_t i = 0; write && i < names.n; i++) {
		struct keycache_stamp s;

		stamp_of(&stats[i], &s);
		write = settled(&s, now) && !strpbrk(names.v[i], "\n/");
		put_stamp(&text, &len, &cap, 'f', &s);
		put(&text, &len, &cap, " %s\n", names.v[i]);
	}
	for (size_t i = 0; write && i < keys->n; i++) {
		write = keys->v[i][0] && !strchr(keys->v[i], '\n');
		put(&text, &len, &cap, "k %s\n", keys->v[i]);
	}
	put(&text, &len, &cap, "end\n");
	if (write && len <= KEYCACHE_MAX)
		cache_write(name, text, len);
	keyset_of((const char *const *)keys->v, keys->n, ks);
	strv_free(&names);
	strv_free(keys);
	return r;
}

void keycache_name(const struct stat *dir, char name[64])
{
	struct keycache_stamp ds;
	char *p;

	stamp_of(dir, &ds);
	p = put_u((char *)memcpy(name, "keys-", 5) + 5, ds.dev);  /* "keys-DEV-INO" */
	*p++ = '-';
	*put_u(p, ds.ino) = '\0';
}

int keycache_keys(const char *dir, struct keyset *keys)
{
	_cleanup_close_ int dirfd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct keycache_stamp ds;
	struct stat st;
	char name[64];
	_cleanup_free_ char *buf = NULL;
	ssize_t n;

	memset(keys, 0, sizeof(*keys));
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -1;  /* no configuration directory: nothing activates */
	if (fstat(dirfd, &st) < 0)
		return -1;
	stamp_of(&st, &ds);
	keycache_name(&st, name);
	buf = xmalloc(KEYCACHE_MAX);  /* (not on the stack: one page fewer to fault in) */
	if ((n = cache_read(name, buf, KEYCACHE_MAX)) > 0 && cache_use(buf, (size_t)n, dirfd, &ds, keys)) {
		keys->text = buf;  /* (the keys point into it) */
		buf = NULL;
		return 0;
	}
	return scan(dirfd, &ds, name, keys);
}

void keycache_forget(int root, const char *prefix)
{
	_cleanup_free_ char *cdir = xasprintf("%s/etc/ocidec.d", prefix);
	_cleanup_close_ int dfd = root_open(root, cdir, O_PATH | O_DIRECTORY);
	_cleanup_close_ int run = dfd < 0 ? -1 : root_open(root, KEYCACHE_DIR, O_PATH | O_DIRECTORY);
	struct stat st;
	char name[64];

	if (run < 0 || fstat(dfd, &st) < 0)
		return;
	keycache_name(&st, name);
	unlinkat(run, name, 0);
}
