/* hostfiles.c: NVIDIA's CSV lists of host files (hostfiles.h) */
#include "devices/hostfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safety/rootfile.h"
#include "safety/rootpath.h"
#include "base/util.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* does the last component of PATH (N bytes) hold ".so"? */
static bool names_library(const char *path, size_t n)
{
	const char *base = path;

	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			base = path + i + 1;
	for (const char *s = base; s + 3 <= path + n; s++)
		if (memcmp(s, ".so", 3) == 0 && (s + 3 == path + n || s[3] == '.'))
			return true;
	return false;
}

int hostfiles_line(const char *line, size_t n, enum item_kind *kind, char **path, const char **why)
{
	const char *comma, *t = line, *te, *p, *pe = line + n;

	*path = NULL;
	while (t < pe && blank(*t))
		t++;
	if (t == pe || *t == '#')
		return 0;
	if (memchr(line, '\0', n)) {
		*why = "a NUL byte in the line";
		return -1;
	}
	comma = memchr(t, ',', (size_t)(pe - t));
	if (!comma) {
		*why = "not TYPE, PATH";
		return -1;
	}
	for (te = comma; te > t && blank(te[-1]); te--)
		;
	for (p = comma + 1; p < pe && blank(*p); p++)
		;
	while (pe > p && blank(pe[-1]))
		pe--;
	if (p == pe) {
		*why = "no path after the comma";
		return -1;
	}
#define IS(s) ((size_t)(te - t) == sizeof(s) - 1 && memcmp(t, s, sizeof(s) - 1) == 0)
	if (IS("dev"))
		*kind = KIND_DEVICES;
	else if (IS("lib") || IS("sym"))
		*kind = names_library(p, (size_t)(pe - p)) ? KIND_LIBRARIES : KIND_MISC;
	else if (IS("dir"))
		*kind = KIND_DIRECTORIES;
	else {
		*why = "the type is none of dev, lib, sym, dir";
		return -1;
	}
#undef IS
	if (*p != '/' && *kind != KIND_DEVICES) {
		*why = "the path is not absolute";
		return -1;
	}
	if (*p != '/' && memchr(p, '/', (size_t)(pe - p))) {
		*why = "a device is a bare name under /dev or an absolute path";
		return -1;
	}
	*path = xstrndup(p, (size_t)(pe - p));
	return 1;
}

size_t hostfiles_parse(const char *buf, size_t len, size_t max,
		       void (*fn)(void *arg, int line, enum item_kind kind, const char *path),
		       void (*bad)(void *arg, int line, const char *why), void *arg)
{
	size_t given = 0;
	int lineno = 0;

	for (const char *s = buf, *end = buf + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		enum item_kind kind;
		char *path;
		const char *why;
		int r = hostfiles_line(s, n, &kind, &path, &why);

		lineno++;
		if (r < 0)
			bad(arg, lineno, why);
		else if (r > 0 && given < max) {
			fn(arg, lineno, kind, path);
			given++;
		}
		free(path);
		s += n + (nl != NULL);
	}
	return given;
}

int hostfiles_read(int rootfd, const char *path, const char *shown_root, size_t max, char **buf, size_t *len,
		   struct oerr *err)
{
	_cleanup_free_ char *dir = path_dir(path), *shown = xconcat(shown_root, path),
			    *shown_dir = xconcat(shown_root, dir);
	_cleanup_close_ int dfd = root_open(rootfd, dir, O_PATH | O_DIRECTORY);
	const char *base = strrchr(path, '/') + 1;
	struct stat st, ds, ps;
	int got;

	*buf = NULL;
	if (dfd < 0)
		return errno == ENOENT ? 0 : oerr_set(err, errno, "%s", shown_dir);
	if (fstat(dfd, &ds) < 0)
		return oerr_set(err, errno, "%s", shown_dir);
	/* the file in the directory checked (its descriptor the root: no
	 * rename elsewhere swaps another in) */
	got = root_read_file(dfd, base, max, buf, len, &st, err);
	if (got < 0 && strncmp(err->msg, base, strlen(base)) == 0) {  /* "BASE: why": the whole name */
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg + strlen(base));
		snprintf(err->msg, sizeof(err->msg), "%s%s", shown, why);
	}
	if (got <= 0)
		return got;
	if (config_check_owner(shown, &st, &ds, err) == 0 &&
	    config_check_owner(shown_dir, &ds, fstatat(dfd, "..", &ps, 0) == 0 ? &ps : NULL, err) == 0)
		return 1;
	free(*buf);
	*buf = NULL;
	return -1;
}
