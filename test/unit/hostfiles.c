/* Unit tests: hostfiles_line and hostfiles_parse (common/hostfiles.c),
 * NVIDIA's CSV lists of host files, against lines as L4T ships them and
 * as NVIDIA's own parser takes or refuses them (its mount_spec tests). */
#include "common/hostfiles.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

static void test_line(void)
{
	static const struct { const char *line; int want; enum item_kind kind; const char *path; } t[] = {
		{ "dev, /dev/nvhost-ctrl", 1, KIND_DEVICES, "/dev/nvhost-ctrl" },
		{ "dev, nvhost-ctrl", 1, KIND_DEVICES, "nvhost-ctrl" },       /* JetPack 4's bare names */
		{ "dev ,/a/path", 1, KIND_DEVICES, "/a/path" },
		{ "dev ,/a/path,with,commas", 1, KIND_DEVICES, "/a/path,with,commas" },
		{ "lib, /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1", 1, KIND_LIBRARIES,
		  "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1" },
		{ "lib, /usr/lib/aarch64-linux-gnu/tegra/libnvos.so", 1, KIND_LIBRARIES,
		  "/usr/lib/aarch64-linux-gnu/tegra/libnvos.so" },
		{ "lib, /usr/lib/aarch64-linux-gnu/tegra/nvidia_icd.json", 1, KIND_MISC,
		  "/usr/lib/aarch64-linux-gnu/tegra/nvidia_icd.json" },
		{ "lib, /usr/lib/aarch64-linux-gnu/tegra/weston/weston", 1, KIND_MISC,
		  "/usr/lib/aarch64-linux-gnu/tegra/weston/weston" },
		{ "lib, /usr/lib/x.solib", 1, KIND_MISC, "/usr/lib/x.solib" },   /* ".so" not a suffix there */
		{ "lib, /usr/lib/a.so.d/x", 1, KIND_MISC, "/usr/lib/a.so.d/x" }, /* in a directory's name only */
		{ "sym, /usr/lib/aarch64-linux-gnu/libcuda.so", 1, KIND_LIBRARIES, "/usr/lib/aarch64-linux-gnu/libcuda.so" },
		{ "dir, /usr/local/cuda", 1, KIND_DIRECTORIES, "/usr/local/cuda" },
		{ "  dir ,  /usr/src/x  \r", 1, KIND_DIRECTORIES, "/usr/src/x" },
		{ "\tlib,\t/x.so\t", 1, KIND_LIBRARIES, "/x.so" },
		{ "", 0, 0, NULL },
		{ "   \r", 0, 0, NULL },
		{ "# a comment, with a comma", 0, 0, NULL },
		{ "\t", 0, 0, NULL },
		{ ",", -1, 0, NULL },
		{ "dev,", -1, 0, NULL },
		{ "dev,   ", -1, 0, NULL },
		{ "not-dev ,/a/path", -1, 0, NULL },
		{ "Dev, /dev/x", -1, 0, NULL },                /* NVIDIA's types are lower case */
		{ "lib /usr/lib/x.so", -1, 0, NULL },
		{ "lib, usr/lib/x.so", -1, 0, NULL },
		{ "dir, relative", -1, 0, NULL },
		{ "dev, dri/card0", -1, 0, NULL },             /* a bare name has no slash */
		{ ", /x", -1, 0, NULL },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		enum item_kind kind = KIND_COUNT;
		char *path = NULL;
		const char *why = NULL;
		int r = hostfiles_line(t[i].line, strlen(t[i].line), &kind, &path, &why);
		bool ok = r == t[i].want;

		if (ok && r == 1)
			ok = kind == t[i].kind && path && strcmp(path, t[i].path) == 0;
		if (ok && r == -1)
			ok = why && *why && !path;
		if (ok && r == 0)
			ok = !path;
		CHECK(ok, "hostfiles_line(\"%s\") = %d (%s)", t[i].line, r, r == 1 ? path : r ? why : "skipped");
		free(path);
	}
	/* a NUL inside the line is no path */
	{
		char *path = NULL;
		const char *why = NULL;
		CHECK(hostfiles_line("dev, /dev/a\0b", 13, &(enum item_kind){ 0 }, &path, &why) == -1 && !path,
		      "a NUL byte in a line is refused");
	}
}

struct seen {
	char text[512];
	int items, bad;
};

static void on_item(void *arg, int line, enum item_kind kind, const char *path)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%d:%s:%s;", line, item_kind_key[kind], path);
	s->items++;
}

static void on_bad(void *arg, int line, const char *why)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%d!%s;", line, why);
	s->bad++;
}

static void test_parse(void)
{
	const char csv[] = "dev, /dev/nvmap\r\n\n# c\nlibs, /x\nlib, /usr/lib/libnvos.so\ndir, /opt/x";
	struct seen s = { 0 };
	size_t n = hostfiles_parse(csv, sizeof(csv) - 1, 100, on_item, on_bad, &s);

	CHECK(n == 3 && s.items == 3 && s.bad == 1, "hostfiles_parse: 3 items, 1 bad line (%zu, %d)", n, s.bad);
	CHECK(strcmp(s.text, "1:devices:/dev/nvmap;4!the type is none of dev, lib, sym, dir;5:libraries:/usr/lib/libnvos.so;"
			     "6:directories:/opt/x;") == 0, "each by its line number, the last without a newline: %s", s.text);
	memset(&s, 0, sizeof(s));
	n = hostfiles_parse(csv, sizeof(csv) - 1, 2, on_item, on_bad, &s);
	CHECK(n == 2 && s.items == 2 && s.bad == 1, "at most MAX items; bad lines still said (%zu)", n);
	memset(&s, 0, sizeof(s));
	n = hostfiles_parse("", 0, 10, on_item, on_bad, &s);
	CHECK(n == 0 && !s.items && !s.bad, "an empty file: nothing");
}

int main(void)
{
	test_line();
	test_parse();
	return done();
}
