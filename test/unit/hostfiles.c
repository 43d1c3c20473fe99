/* Unit tests: hostfiles_line and hostfiles_parse (devices/hostfiles.c),
 * NVIDIA's CSV lists of host files, against lines as L4T ships them and
 * as NVIDIA's own parser takes or refuses them (its mount_spec tests). */
#include "devices/hostfiles.h"
#include "safety/rootpath.h"
#include "test/unit/tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* hostfiles_read in a driver root of the test's own (mkdtemp): the vendor
 * files' rule, and every message naming the whole file as the
 * administrator sees it (the driver root in front) */
static void test_read(void)
{
	char root[] = "/tmp/ocidec-unit-hostfiles-XXXXXX", path[128];
	const char *shown = "/drv";
	char *buf = NULL;
	size_t len = 0;
	struct oerr e;
	int rootfd, r, fd;

	rootpath_init(NULL);  /* (the dispatcher's first step: /proc opened) */
	if (!mkdtemp(root)) {
		CHECK(false, "mkdtemp");
		return;
	}
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/lists", root);
	mkdir(path, 0755);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/lists/a.csv", root);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		CHECK(write(fd, "dev, /dev/x\n", 12) == 12, "the list written");
		close(fd);
	}
	chmod(path, 0644);

	r = hostfiles_read(rootfd, "/lists/a.csv", shown, 1024, &buf, &len, &e);
	CHECK(r == 1 && buf && len == 12 && memcmp(buf, "dev, /dev/x\n", 12) == 0, "a list of root's read (%d)", r);
	free(buf);
	r = hostfiles_read(rootfd, "/lists/none.csv", shown, 1024, &buf, &len, &e);
	CHECK(r == 0 && !buf, "a list not there: 0 (%d)", r);
	r = hostfiles_read(rootfd, "/nodir/a.csv", shown, 1024, &buf, &len, &e);
	CHECK(r == 0 && !buf, "nor its directory: 0 (%d)", r);

	chmod(path, 0664);
	r = hostfiles_read(rootfd, "/lists/a.csv", shown, 1024, &buf, &len, &e);
	CHECK(r == -1 && !buf && e.code == EXIT_USAGE &&
	      strcmp(e.msg, "/drv/lists/a.csv: refused: writable by group or others (mode 0664)") == 0,
	      "a list others may write: refused (%s)", e.msg);
	chmod(path, 0644);
	snprintf(path, sizeof(path), "%s/lists", root);
	chmod(path, 01777);
	r = hostfiles_read(rootfd, "/lists/a.csv", "", 1024, &buf, &len, &e);
	CHECK(r == -1 && !buf && e.code == EXIT_USAGE &&
	      strcmp(e.msg, "/lists: refused: writable by group or others (mode 1777)") == 0,
	      "in a directory others may write (sticky or not): refused (%s)", e.msg);
	chmod(path, 0755);
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/lists/a.csv", root);
		CHECK(chown(path, 1000, 1000) == 0, "chown");
		r = hostfiles_read(rootfd, "/lists/a.csv", shown, 1024, &buf, &len, &e);
		CHECK(r == -1 && !buf && strcmp(e.msg, "/drv/lists/a.csv: refused: owned by uid 1000, not root") == 0,
		      "a list not root's: refused (%s)", e.msg);
		CHECK(chown(path, 0, 0) == 0, "chown back");
	}

	/* one that cannot be read: the whole name, and no refusal (EXIT_FAIL) */
	snprintf(path, sizeof(path), "%s/lists/d.csv", root);
	mkdir(path, 0755);
	r = hostfiles_read(rootfd, "/lists/d.csv", shown, 1024, &buf, &len, &e);
	CHECK(r == -1 && !buf && e.code != EXIT_USAGE && strncmp(e.msg, "/drv/lists/d.csv: ", 18) == 0,
	      "a directory named .csv: not read, named whole (%s)", e.msg);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/lists/a.csv", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lists", root);
	rmdir(path);
	rmdir(root);
	close(rootfd);
}

int main(void)
{
	test_line();
	test_parse();
	test_read();
	return done();
}
