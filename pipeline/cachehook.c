/* cachehook.c: see cachehook.h. */
#include "pipeline/cachehook.h"

#include "devices/config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void cache_edits_free(struct cache_edits *c)
{
	strv_free(&c->libraries);
	strv_free(&c->links);
	for (size_t i = 0; i < c->nviews; i++) {
		free(c->views[i].dir);
		free(c->views[i].set);
		strv_free(&c->views[i].entries);
	}
	free(c->views);
	free(c->compat_dir);
	free(c->compat_host);
	strv_free(&c->folders);
	strv_free(&c->chmod);
	free(c->app_profile);
	*c = (struct cache_edits)CACHE_EDITS_INIT;
}

struct cache_view *cachehook_view_add(struct cache_edits *c, const char *dir, const char *set)
{
	struct cache_view *v;

	c->views = xreallocarray(c->views, c->nviews + 1, sizeof(*c->views));
	v = &c->views[c->nviews++];
	*v = (struct cache_view){ .dir = xstrdup(dir), .set = set ? xstrdup(set) : NULL };
	return v;
}

static const char *opt_name(int o)
{
	static const struct option opts[] = { CACHEHOOK_LONG_OPTS };

	for (size_t i = 0; i < sizeof(opts) / sizeof(*opts); i++)
		if (opts[i].val == o)
			return opts[i].name;
	return "?";
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* What is wrong with ARG for option O, or NULL */
static const char *invalid(const struct cache_edits *c, int o, const char *arg)
{
	const char *sep;

	switch (o) {
	case CACHEHOOK_LIBRARY:
	case CACHEHOOK_FOLDER:
	case CACHEHOOK_CHMOD:
		return arg[0] == '/' ? NULL : "not an absolute path";
	case CACHEHOOK_CUDA_COMPAT:
	case CACHEHOOK_APP_PROFILE:
		return arg[0] == '/' && !has_dot_component(arg) && !has_control(arg) && arg[strlen(arg) - 1] != '/' ?
			NULL : "not an absolute path";
	case CACHEHOOK_HOST_DRIVER:
		return isdigit((unsigned char)arg[0]) ? NULL : "not a version";
	case CACHEHOOK_SYMLINK:
		sep = strstr(arg, "::");
		return arg[0] == '/' && sep && sep != arg + 1 && sep[2] ? NULL : "not PATH::TEXT with an absolute PATH";
	case CACHEHOOK_PROC_VIEW:
		return proc_view_valid(arg) ? NULL : "not a directory under /proc";
	case CACHEHOOK_PROC_SET:
	case CACHEHOOK_PROC_ENTRY:
		if (!c->nviews)
			return "without --proc-view before it";
		if (o == CACHEHOOK_PROC_ENTRY)
			return *arg && arg[0] != '/' && !has_dot_component(arg) && !has_control(arg) ? NULL :
				"not a relative path";
		return proc_set_valid(arg) ? NULL : "not FILE NAME: VALUE";
	case CACHEHOOK_CHMOD_MODE: {
		char *end;
		unsigned long m = strtoul(arg, &end, 8);

		return *arg && !*end && m <= 0777 && isdigit((unsigned char)arg[0]) ? NULL :
			"not an octal mode up to 0777";
	}
	}
	return NULL;
}

int cachehook_option(struct cache_edits *c, int o, const char *arg, struct oerr *err)
{
	const char *bad;
	char **slot = NULL;

	if (o < CACHEHOOK_LIBRARY || o > CACHEHOOK_APP_PROFILE)
		return 1;
	if ((bad = invalid(c, o, arg)))
		return oerr_usage(err, "--%s %s: %s", opt_name(o), arg, bad);
	switch (o) {
	case CACHEHOOK_LIBRARY: strv_push(&c->libraries, arg); break;
	case CACHEHOOK_FOLDER: strv_push(&c->folders, arg); break;
	case CACHEHOOK_CHMOD: strv_push(&c->chmod, arg); break;
	case CACHEHOOK_CUDA_COMPAT: slot = &c->compat_dir; break;
	case CACHEHOOK_HOST_DRIVER: slot = &c->compat_host; break;
	case CACHEHOOK_APP_PROFILE: slot = &c->app_profile; break;
	case CACHEHOOK_CHMOD_MODE: c->chmod_mode = (int)strtoul(arg, NULL, 8); break;
	case CACHEHOOK_SYMLINK: {
		const char *sep = strstr(arg, "::");

		strv_push_owned(&c->links, xstrndup(arg, (size_t)(sep - arg)));
		strv_push(&c->links, sep + 2);
		break;
	}
	case CACHEHOOK_PROC_VIEW: cachehook_view_add(c, arg, NULL); break;
	case CACHEHOOK_PROC_SET: slot = &c->views[c->nviews - 1].set; break;
	case CACHEHOOK_PROC_ENTRY: strv_push(&c->views[c->nviews - 1].entries, arg); break;
	}
	if (slot) {  /* the last one given counts */
		free(*slot);
		*slot = xstrdup(arg);
	}
	return 0;
}

int cachehook_check(const struct cache_edits *c, struct oerr *err)
{
	if (c->chmod.n && c->chmod_mode < 0)
		return oerr_usage(err, "--chmod needs --chmod-mode");
	return 0;
}

bool cachehook_empty(const struct cache_edits *c)
{
	return !c->libraries.n && !c->links.n && !c->nviews && !c->folders.n && !c->chmod.n &&
	       !(c->compat_dir && c->compat_host) && !c->app_profile;
}

/* --OPT VALUE to ARGS */
static void arg2(struct strv *args, int o, const char *value)
{
	strv_push_owned(args, xconcat("--", opt_name(o)));
	strv_push(args, value);
}

void cachehook_args(const struct cache_edits *c, struct strv *args)
{
	for (size_t i = 0; i < c->libraries.n; i++)
		arg2(args, CACHEHOOK_LIBRARY, c->libraries.v[i]);
	for (size_t i = 0; i + 1 < c->links.n; i += 2) {
		_cleanup_free_ char *l = xasprintf("%s::%s", c->links.v[i], c->links.v[i + 1]);

		arg2(args, CACHEHOOK_SYMLINK, l);
	}
	if (c->compat_dir && c->compat_host) {
		arg2(args, CACHEHOOK_CUDA_COMPAT, c->compat_dir);
		arg2(args, CACHEHOOK_HOST_DRIVER, c->compat_host);
	}
	for (size_t i = 0; i < c->folders.n; i++)
		arg2(args, CACHEHOOK_FOLDER, c->folders.v[i]);
	for (size_t i = 0; i < c->chmod.n; i++)
		arg2(args, CACHEHOOK_CHMOD, c->chmod.v[i]);
	if (c->chmod_mode >= 0) {
		char mode[8];

		mode[0] = '0';
		for (int k = 0; k < 3; k++)
			mode[1 + k] = (char)('0' + ((c->chmod_mode >> (6 - 3 * k)) & 7));
		mode[4] = '\0';
		arg2(args, CACHEHOOK_CHMOD_MODE, mode);
	}
	if (c->app_profile)
		arg2(args, CACHEHOOK_APP_PROFILE, c->app_profile);
	for (size_t i = 0; i < c->nviews; i++) {
		const struct cache_view *v = &c->views[i];

		arg2(args, CACHEHOOK_PROC_VIEW, v->dir);
		if (v->set)
			arg2(args, CACHEHOOK_PROC_SET, v->set);
		for (size_t k = 0; k < v->entries.n; k++)
			arg2(args, CACHEHOOK_PROC_ENTRY, v->entries.v[k]);
	}
}
