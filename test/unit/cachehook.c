/* Unit tests: the cache hook's command line (pipeline/cachehook.c): what
 * cachehook_args writes, getopt_long and cachehook_option read back the
 * same, as the cdi-hook applet reads it; each wrong argument refused with
 * its line; the options' codes meet none of the hooks' own. */
#include "pipeline/cachehook.h"
#include "pipeline/hookio.h"
#include "test/unit/tap.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct option opts[] = {
	HOOKIO_LONG_OPTS,
	CACHEHOOK_LONG_OPTS,
	{ "cdi", no_argument, NULL, 'C' },
	{ 0 },
};

/* ARGS read as the applet reads its command line into *C: 0, or -1 with
 * ERR */
static int parse(const struct strv *args, struct cache_edits *c, struct oerr *err)
{
	char **argv = calloc(args->n + 2, sizeof(*argv));
	int o, r = 0;

	argv[0] = (char *)"ocidec-hook";
	for (size_t i = 0; i < args->n; i++)
		argv[i + 1] = args->v[i];
	optind = 0;  /* (glibc: start over) */
	opterr = 0;
	while (r == 0 && (o = getopt_long((int)args->n + 1, argv, ":" HOOKIO_SHORT_OPTS, opts, NULL)) != -1)
		if ((r = cachehook_option(c, o, optarg, err)) > 0)
			r = oerr_usage(err, "not a cache hook option: %d", o);
	free(argv);
	return r < 0 ? -1 : cachehook_check(c, err);
}

static bool strv_eq(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same(const struct cache_edits *a, const struct cache_edits *b)
{
	if (!strv_eq(&a->libraries, &b->libraries) || !strv_eq(&a->links, &b->links) ||
	    !strv_eq(&a->folders, &b->folders) || !strv_eq(&a->chmod, &b->chmod) || a->chmod_mode != b->chmod_mode ||
	    !str_eq(a->compat_dir, b->compat_dir) || !str_eq(a->compat_host, b->compat_host) || a->nviews != b->nviews)
		return false;
	for (size_t i = 0; i < a->nviews; i++)
		if (!str_eq(a->views[i].dir, b->views[i].dir) || !str_eq(a->views[i].set, b->views[i].set) ||
		    !strv_eq(&a->views[i].entries, &b->views[i].entries))
			return false;
	return true;
}

static void test_round_trip(void)
{
	struct cache_edits in = CACHE_EDITS_INIT, out = CACHE_EDITS_INIT, empty = CACHE_EDITS_INIT;
	struct cache_view *v;
	struct strv args = { 0 };
	struct oerr err;

	CHECK(cachehook_empty(&empty), "nothing asked: empty");
	strv_push(&in.libraries, "/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01");
	strv_push(&in.libraries, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01");
	strv_push(&in.links, "/usr/lib/x86_64-linux-gnu/libcuda.so");  /* a link's text with "::" in it too */
	strv_push(&in.links, "libcuda.so.1");
	strv_push(&in.links, "/odd/name");
	strv_push(&in.links, "a::b");
	in.compat_dir = strdup("/usr/local/cuda/compat");
	in.compat_host = strdup("535.183.01");
	strv_push(&in.folders, "/usr/lib/extra");
	strv_push(&in.chmod, "/dev/dri");
	in.chmod_mode = 0755;
	v = cachehook_view_add(&in, "/proc/driver/nvidia", "params ModifyDeviceFiles: 0");
	strv_push(&v->entries, "gpus/0000:01:00.0");
	strv_push(&v->entries, "gpus/0000:41:00.0");
	cachehook_view_add(&in, "/proc/driver/other", NULL);
	CHECK(!cachehook_empty(&in), "a full one: not empty");
	cachehook_args(&in, &args);
	CHECK(parse(&args, &out, &err) == 0, "what cachehook_args wrote reads back (%zu arguments)", args.n);
	CHECK(same(&in, &out), "the same edits: libraries, links, compat, folders, chmod and its mode, two views");
	CHECK(out.links.n == 4 && strcmp(out.links.v[2], "/odd/name") == 0 && strcmp(out.links.v[3], "a::b") == 0,
	      "a link's text may hold \"::\" (the first one splits; its path never does: edits.c makes no such link)");
	cache_edits_free(&in);
	cache_edits_free(&out);
	strv_free(&args);
}

static void test_refused(void)
{
	static const struct { const char *const argv[6]; const char *line; } t[] = {
		{ { "--library", "lib" }, "--library lib: not an absolute path" },
		{ { "--folder", "x/y" }, "--folder x/y: not an absolute path" },
		{ { "--chmod", "dev" }, "--chmod dev: not an absolute path" },
		{ { "--chmod", "/dev/dri" }, "--chmod needs --chmod-mode" },
		{ { "--chmod-mode", "999" }, "--chmod-mode 999: not an octal mode up to 0777" },
		{ { "--chmod-mode", "" }, "--chmod-mode : not an octal mode up to 0777" },
		{ { "--chmod-mode", "-1" }, "--chmod-mode -1: not an octal mode up to 0777" },
		{ { "--cuda-compat", "/a/../b" }, "--cuda-compat /a/../b: not an absolute path" },
		{ { "--host-driver-version", "x" }, "--host-driver-version x: not a version" },
		{ { "--symlink", "a::b" }, "--symlink a::b: not PATH::TEXT with an absolute PATH" },
		{ { "--symlink", "/a::" }, "--symlink /a::: not PATH::TEXT with an absolute PATH" },
		{ { "--symlink", "/::b" }, "--symlink /::b: not PATH::TEXT with an absolute PATH" },
		{ { "--proc-view", "/sys/x" }, "--proc-view /sys/x: not a directory under /proc" },
		{ { "--proc-view", "/proc/driver/*" }, "--proc-view /proc/driver/*: not a directory under /proc" },
		{ { "--proc-entry", "gpus/0" }, "--proc-entry gpus/0: without --proc-view before it" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "../x" },
		  "--proc-entry ../x: not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "/gpus" },
		  "--proc-entry /gpus: not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "." },
		  "--proc-entry .: not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "gpus/." },
		  "--proc-entry gpus/.: not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "" },
		  "--proc-entry : not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-entry", "gpus/a\tb" },
		  "--proc-entry gpus/a\tb: not a relative path" },
		{ { "--proc-view", "/proc/driver/nvidia", "--proc-set", "params" },
		  "--proc-set params: not FILE NAME: VALUE" },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct cache_edits c = CACHE_EDITS_INIT;
		struct strv args = { 0 };
		struct oerr err = { 0 };

		for (size_t k = 0; t[i].argv[k]; k++)
			strv_push(&args, t[i].argv[k]);
		CHECK(parse(&args, &c, &err) < 0 && strcmp(err.msg, t[i].line) == 0 && err.code == EXIT_USAGE,
		      "refused: %s (said: %s)", t[i].line, err.msg);
		cache_edits_free(&c);
		strv_free(&args);
	}
}

/* Two options with one code: getopt_long gives the first, the second is
 * never read (cdi-hook's --chmod once took --mount-api's 'M') */
static void test_codes(void)
{
	size_t n = N_CASES(opts) - 1;

	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			CHECK(opts[i].val != opts[k].val, "--%s and --%s have codes of their own", opts[i].name,
			      opts[k].name);
}

int main(void)
{
	test_round_trip();
	test_refused();
	test_codes();
	return done();
}
