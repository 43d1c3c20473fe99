/* What an install may have written, which alone its --uninstall touches
 * (the drivers' files, the prefix's): see engine.h */
#include "engines/engine.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <string.h>

bool engine_clean_path(const char *p)
{
	return p[0] == '/' && !strstr(p, "/../") && !strstr(p, "/./") && !strstr(p, "//") &&
	       strcspn(p, "\n\r\t \";#\\") == strlen(p) &&
	       !(strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0);
}

/* The record is a file on the host like any other, and --uninstall acts
 * only on what an install writes, whatever the record says: files under
 * the prefix, the engines' files above, a hooks dir's ocidec.json
 * (--hooks-dir's), and the directories above them. */
static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* PATH as the host resolves it: its directory's canonical path inside the
 * host root (its symlinks followed there, as uninstall's opens follow
 * them) and its name; PATH itself when the directory is not there */
static char *host_canon(const struct engine_plan *p, const char *path)
{
	_cleanup_free_ char *dir = path_dir(path), *real = NULL;

	if (root_realpath(p->root, dir, &real) < 0)
		return xstrdup(path);
	return xasprintf("%s%s", strcmp(real, "/") == 0 ? "" : real, strrchr(path, '/'));
}

/* Does TEST(F, ARG) hold for F, a file a driver writes, as the host
 * resolves it? */
static bool engine_file(const struct engine_plan *p, bool (*test)(const char *f, const char *arg), const char *arg)
{
	for (size_t i = 0; engine_drivers[i]; i++)
		for (size_t k = 0; engine_drivers[i]->files && engine_drivers[i]->files[k]; k++) {
			_cleanup_free_ char *f = host_canon(p, engine_drivers[i]->files[k]);

			if (test(f, arg))
				return true;
		}
	return false;
}

static bool same(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* PATH (canonical, CPREFIX the prefix's canonical path) is one an install
 * writes: below the prefix, an engine file, or an ocidec.json holding the
 * hook of this prefix (--hooks-dir's, wherever that was) */
static bool install_file(const struct engine_plan *p, const char *path, const char *cprefix)
{
	const char *base = strrchr(path, '/');

	if (below(path, cprefix))
		return true;
	if (p->host_mode && p->cdir) {  /* the shim's runtime.conf, in the config dir it reads */
		_cleanup_free_ char *rc = xasprintf("%s/runtime.conf", p->cdir), *c = host_canon(p, rc);
		if (strcmp(path, c) == 0)
			return true;
	}
	if (engine_file(p, same, path))
		return true;
	if (base && strcmp(base, "/ocidec.json") == 0) {
		_cleanup_free_ char *text = NULL, *hook = xasprintf("\"%s/ocidec-hook\"", p->bin);
		struct stat st;
		size_t len;
		struct oerr e;
		int have = root_read_file(p->root, path, 64u << 20, &text, &len, &st, &e);

		return have == 0 || (have > 0 && strstr(text, hook));
	}
	return false;
}

int engine_check_record(const struct engine_plan *p, const struct journal *j, const char *state_path, struct strv *files,
			struct oerr *err)
{
	_cleanup_free_ char *cprefix = NULL;
	const cJSON *e;

	if (root_realpath(p->root, p->prefix, &cprefix) < 0)
		cprefix = xstrdup(p->prefix);
	cJSON_ArrayForEach(e, j->files) {
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		_cleanup_free_ char *canon = NULL;

		if (!path || !engine_clean_path(path))
			return oerr_usage(err, "%s: an entry without a clean \"path\"", state_path);
		canon = host_canon(p, path);
		if (!install_file(p, canon, cprefix))
			return oerr_usage(err, "%s names %s%s%s, which no install writes: nothing changed",
					  state_path, path, strcmp(canon, path) ? ", that is " : "",
					  strcmp(canon, path) ? canon : "");
		strv_push(files, canon);
	}
	cJSON_ArrayForEach(e, j->dirs) {
		const char *d = cJSON_GetStringValue(e);
		_cleanup_free_ char *canon = NULL;
		bool ok = d && engine_clean_path(d) && strcmp(d, "/") != 0;

		if (ok && root_realpath(p->root, d, &canon) < 0)
			canon = xstrdup(d);
		ok = ok && (strcmp(canon, cprefix) == 0 || below(canon, cprefix) || below(cprefix, canon));
		ok = ok || (canon && engine_file(p, below, canon));
		for (size_t i = 0; !ok && canon && i < files->n; i++)
			ok = below(files->v[i], canon);
		if (!ok)
			return oerr_usage(err, "%s names the directory %s, which no install makes: nothing changed",
					  state_path, d ? d : "(not a string)");
	}
	return 0;
}
