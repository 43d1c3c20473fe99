/* Unit tests: what ocidec writes into the engines' files and what it
 * decides on an image's word (engines/dockerjson.c, engines/ctrd.c,
 * pipeline/require.c): daemon.json merged and given back, containerd's
 * import line added and taken out, NVIDIA_REQUIRE_* expressions. */
#include "engines/ctrd.h"
#include "engines/dockerjson.h"
#include "pipeline/require.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

static void test_docker_json(void)
{
	static const char *const texts[] = {
		"", "{}", "{\"log-level\": \"warn\", \"max-concurrent-downloads\": 3.50}\n",
		"{\n    \"runtimes\": {\n        \"runc2\": {\"path\": \"/usr/bin/runc\"}\n    }\n}\n",
		"{\"default-runtime\": \"runc\", \"features\": {\"buildkit\": true}}",
	};
	struct oerr err;

	for (size_t i = 0; i < N_CASES(texts); i++) {
		char *added = docker_json_merge(texts[i], "ocidec", "/usr/bin/ocidec-runtime", &err);
		char *set = added ? docker_json_set(added, "ocidec", true, &err) : NULL;
		char *unset = set ? docker_json_unset(set, "ocidec", true, &err) : NULL;
		char *back = unset ? docker_json_merge(unset, "ocidec", NULL, &err) : NULL;

		CHECK(added && strstr(added, "\"ocidec\"") && strstr(added, "/usr/bin/ocidec-runtime"),
		      "daemon.json %zu: the runtime added", i);
		CHECK(set && strstr(set, "\"default-runtime\": \"ocidec\"") && strstr(set, "\"cdi\": true"),
		      "daemon.json %zu: the default runtime and CDI set", i);
		/* given back: every key of the user's as it was (a number's text too) */
		CHECK(back && !strstr(back, "ocidec") && (!strstr(texts[i], "3.50") || strstr(back, "3.50")) &&
			      (!strstr(texts[i], "runc2") || strstr(back, "runc2")) &&
			      (!strstr(texts[i], "buildkit") || strstr(back, "buildkit")),
		      "daemon.json %zu: taken out again, the rest kept", i);
		free(added), free(set), free(unset), free(back);
	}
	CHECK(!docker_json_merge("[1]", "ocidec", "/x", &err) && err.code == EXIT_USAGE,
	      "daemon.json: not an object is refused (%s)", err.msg);
	CHECK(!docker_json_merge("{\"runtimes\": 3}", "ocidec", "/x", &err) && err.code == EXIT_USAGE,
	      "daemon.json: runtimes not an object is refused (%s)", err.msg);
}

static void test_ctrd_import(void)
{
	static const char *const texts[] = {
		"version = 2\n",
		"version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n[plugins]\n",
		"# a comment\nversion = 3\n\n[plugins.\"io.containerd.cri.v1.runtime\"]\n  x = 1\n",
	};
	const char *dropin = "/etc/containerd/conf.d/99-ocidec.toml";

	for (size_t i = 0; i < N_CASES(texts); i++) {
		char *added = ctrd_add_import(texts[i], dropin);
		char *again = added ? ctrd_add_import(added, dropin) : NULL;
		char *back = added ? ctrd_remove_import(added, dropin) : NULL;

		CHECK(added && strstr(added, dropin) && ctrd_top_key(added, "imports"),
		      "config.toml %zu: the drop-in imported", i);
		CHECK(again && added && strcmp(again, added) == 0, "config.toml %zu: imported once", i);
		CHECK(back && strcmp(back, texts[i]) == 0, "config.toml %zu: taken out, the text as it was", i);
		free(added), free(again), free(back);
	}
}

static void test_require(void)
{
	static const struct require_props p550 = { "12.4", "550.54.15" }, nocuda = { NULL, "535.261.03" };
	static const struct { const char *expr; const struct require_props *p; int want; } t[] = {
		{ "cuda>=12.0", &p550, 1 },
		{ "cuda>=12.5", &p550, 0 },
		{ "cuda>=12.5 driver>=550", &p550, 1 },       /* terms: any */
		{ "cuda>=12.0,driver<550", &p550, 0 },        /* factors: all */
		{ "cuda>=12.0 brand=tesla,driver>=535", &p550, 1 },
		{ "driver=550.54.15", &p550, 1 },
		{ "driver!=550.54.15", &p550, 0 },
		{ "cuda>=12.10", &p550, 0 },                  /* 12.4 < 12.10 */
		{ "cuda>=12.0", &nocuda, -1 },                /* unknown: told */
		{ "cuda>>12", &p550, -1 },                    /* malformed */
		{ "", &p550, 1 },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		char *why = NULL;
		int r = require_eval(t[i].expr, t[i].p, &why);

		CHECK(r == t[i].want && (r == 1) == (why == NULL), "require_eval(\"%s\") = %d%s%s", t[i].expr, r,
		      why ? ": " : "", why ? why : "");
		free(why);
	}
	CHECK(version_cmp("12.2", "12.10") < 0 && version_cmp("535.261.03", "535.98") > 0 &&
		      version_cmp("12", "12.0") == 0,
	      "version_cmp: dotted numbers, a missing part 0");
}

int main(void)
{
	test_docker_json();
	test_ctrd_import();
	test_require();
	return done();
}
