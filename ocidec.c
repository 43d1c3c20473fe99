/* ocidec: give containers the host's accelerators (multi-call binary).
 *
 * The applet runs by argv[0]'s basename ("list", "ocidec-list"), else by
 * the first argument ("ocidec list"), or by another name applets.def
 * gives it (NVIDIA's, with NVIDIA's command line made the applet's).
 * --help and --version are handled here, once for every applet; what
 * else differs between applets is their flags in applets.def: the
 * dispatcher knows no applet by name. Exit codes: 0 success, 1 failure, 2 bad usage or
 * invalid config.
 */
#include "applets/applet.h"
#include "pipeline/inject.h"
#include "formats/ldconfig.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sorted by name (applets/applets.def): looked up with bsearch. */
const struct applet applets[] = {
#define APPLET(name, fn, flags, summary) { name, fn##_main, APPLET_USAGE(fn), flags, summary },
#define ALIAS(name, fn, argv_fn)
#define OPTION_ALIAS(name, option, fn)
#include "applets/applets.def"
#undef APPLET
#undef ALIAS
#undef OPTION_ALIAS
};
const unsigned napplets = sizeof(applets) / sizeof(*applets);
const struct applet *current_applet;

/* Other names: the applet (by its main) and the command line's rewrite */
static const struct alias {
	char name[32];  /* (in the table: see struct applet) */
	int (*main)(int argc, char **argv, struct oerr *err);
	int (*argv_fn)(int argc, char ***argv);
} aliases[] = {
#define APPLET(name, fn, flags, summary)
#define ALIAS(name, fn, argv_fn) { name, fn##_main, argv_fn },
#define OPTION_ALIAS(name, option, fn)
#include "applets/applets.def"
#undef APPLET
#undef ALIAS
#undef OPTION_ALIAS
};

/* (not static: tools/usagez.c packs every NAME_usage of the objects) */
extern const char main_usage[];
const char main_usage[] =
	"usage: ocidec APPLET [ARGS...]\n"
	"       ocidec --list | --version | --help | -h | help\n"
	"\n"
	"Gives containers the host's accelerators: device nodes, driver libraries,\n"
	"binaries and IPC sockets, as vendor INI files in /etc/ocidec/ocidec.d say.\n"
	"An applet also runs when ocidec is called by its name or as ocidec-APPLET.\n"
	"`ocidec APPLET --help` describes one. Exit status: 0 success, 1 failure,\n"
	"2 bad usage or an invalid config file.\n"
	"\n"
	"Applets:\n";

#ifdef OCIDEC_USAGEZ
extern const unsigned char usagez[];
extern const unsigned usagez_size, main_usagez;

/* The text at AT in the packed texts (tools/usagez.c says how they are
 * packed), all of them unpacked on the first call */
static const char *usagez_text(unsigned at)
{
	static char *text;
	const unsigned char *p = usagez;

	if (!text) {
		text = xmalloc(usagez_size);
		for (unsigned i = 0, len, back; i < usagez_size;) {
			unsigned b = *p++;

			if (b < 0x80) {
				text[i++] = b;
				continue;
			}
			if (b < 0xc0) {
				len = (b >> 3 & 7) + 3, back = ((b & 7) << 8 | p[0]) + 1, p += 1;
			} else {
				len = (b & 0x3f) + 3, back = (p[0] << 8 | p[1]) + 1, p += 2;
			}
			for (; len && i < usagez_size && back <= i; len--, i++)
				text[i] = text[i - back];
		}
	}
	return text + at;
}

const char *applet_usage(const struct applet *a)
{
	return usagez_text(*a->usage);
}
#define MAIN_USAGE usagez_text(main_usagez)
#else
const char *applet_usage(const struct applet *a)
{
	return a->usage;
}
#define MAIN_USAGE main_usage
#endif

/* The usage and the applets, to F */
static void print_usage(FILE *f)
{
	fputs(MAIN_USAGE, f);
	for (unsigned i = 0; i < napplets; i++)
		fprintf(f, "  %-14s %s\n", applets[i].name, applets[i].summary);
}

static int cmp_applet(const void *key, const void *a)
{
	return strcmp(key, ((const struct applet *)a)->name);
}

static const struct applet *find_applet(const char *name)
{
	if (strncmp(name, "ocidec-", 7) == 0)
		name += 7;
	return bsearch(name, applets, napplets, sizeof(*applets), cmp_applet);
}

/* Spellings of an applet by an option of another (applets.def) */
static const struct option_alias {
	char name[16], option[16];  /* (in the table: see struct applet) */
	int (*main)(int argc, char **argv, struct oerr *err);
} option_aliases[] = {
#define APPLET(name, fn, flags, summary)
#define ALIAS(name, fn, argv_fn)
#define OPTION_ALIAS(name, option, fn) { name, option, fn##_main },
#include "applets/applets.def"
#undef APPLET
#undef ALIAS
#undef OPTION_ALIAS
};

/* A, or the applet an option alias makes of its command line */
static const struct applet *option_alias(const struct applet *a, int argc, char **argv)
{
	for (unsigned i = 0; i < ARRAY_SIZE(option_aliases); i++) {
		if (strcmp(option_aliases[i].name, a->name) != 0)
			continue;
		for (int k = 1; k < argc && strcmp(argv[k], "--") != 0; k++) {
			if (strcmp(argv[k], option_aliases[i].option) != 0)
				continue;
			for (unsigned n = 0; n < napplets; n++)
				if (applets[n].main == option_aliases[i].main)
					return &applets[n];
		}
	}
	return a;
}

int applet_fail(const struct oerr *e)
{
	return log_oerr(e);
}

int applet_usage_error(const char *fmt, ...)
{
	char msg[2048];
	char *line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = xasprintf("%s: %s (see %s --help)", log_prog, msg, log_prog);
	log_stderr_line(line);
	free(line);
	return EXIT_USAGE;
}

int applet_bad_option(int o, int argc, char **argv)
{
	const char *opt = optind - 1 < argc ? argv[optind - 1] : argv[argc - 1];

	if (o == ':')
		return applet_usage_error("option '%s' needs an argument", opt);
	return applet_usage_error("unknown option '%s'", opt);
}

int applet_finish_stdout(int status)
{
	int e = out_flush();

	if (!e || e == EPIPE)
		return status;  /* EPIPE: the reader is gone, `ocidec list | head` */
	fprintf(stderr, "%s: write error: %s\n", log_prog, strerror(e));
	return EXIT_FAIL;
}

/* The test switches OCIDEC_RESOLVE, OCIDEC_MOUNT_API and OCIDEC_LDCACHE_ARCH
 * are read for every applet but the hook: a runtime may hand a hook the
 * container's environment (a hook entry without "env", a createContainer
 * hook: runc runs those with the image's env), and nothing an image sets
 * may change what the hook does. The hook drops its environment before
 * anything could read it (the C library's TZ included); it takes the same
 * switches as options, which only the hook's entry sets. */
static void env_switches(const struct applet *a)
{
	if (a->flags & APPLET_OWN_ENV) {
		clearenv();
		return;
	}
	rootpath_init(getenv("OCIDEC_RESOLVE"));
	inject_mount_api(getenv("OCIDEC_MOUNT_API"));
	ldconfig_arch = getenv("OCIDEC_LDCACHE_ARCH");
}

/* A's main, its failure said once */
static int run_main(const struct applet *a, int argc, char **argv)
{
	struct oerr err = { 0 };
	int r = a->main(argc, argv, &err);

	return r == APPLET_FAILED ? applet_finish_stdout(applet_fail(&err)) : r;
}

static int run(const struct applet *a, int argc, char **argv)
{
	static char prog[64];

	a = option_alias(a, argc, argv);
	current_applet = a;
	if (!(a->flags & APPLET_LATE_PROC))
		proc_open();  /* the host's /proc, before anything else */
	env_switches(a);
	/* ("ocidec NAME": no printf on the hook's idle path) */
	memcpy(prog, "ocidec ", 7);
	strncpy(prog + 7, a->name, sizeof(prog) - 8);
	log_prog = prog;
	/* the runtime passes its arguments to runc: --version and --help are runc's */
	if (a->flags & APPLET_OWN_ARGS)
		return run_main(a, argc, argv);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		out("%s", applet_usage(a));
		return applet_finish_stdout(EXIT_OK);
	}
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		out("ocidec %s\n", OCIDEC_VERSION);
		return applet_finish_stdout(EXIT_OK);
	}
	return run_main(a, argc, argv);
}

int main(int argc, char **argv)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	const struct applet *a;

	base = base ? base + 1 : (argc > 0 ? argv[0] : "ocidec");
	/* A closed stdout pipe is an EPIPE to handle, not a signal to die of. */
	signal(SIGPIPE, SIG_IGN);

	a = find_applet(base);
	if (a)
		return run(a, argc, argv);
	for (unsigned i = 0; i < ARRAY_SIZE(aliases); i++) {
		if (strcmp(base, aliases[i].name) != 0)
			continue;
		for (unsigned k = 0; k < napplets; k++) {
			if (applets[k].main != aliases[i].main)
				continue;
			if (aliases[i].argv_fn && !(argc = aliases[i].argv_fn(argc, &argv)))
				return EXIT_OK;
			return run(&applets[k], argc, argv);
		}
	}
	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		out("ocidec %s\n", OCIDEC_VERSION);
		return applet_finish_stdout(EXIT_OK);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		print_usage(stdout);
		return applet_finish_stdout(EXIT_OK);
	}
	if (strcmp(argv[1], "--list") == 0) {
		for (unsigned i = 0; i < napplets; i++)
			out("%s\n", applets[i].name);
		return applet_finish_stdout(EXIT_OK);
	}
	a = find_applet(argv[1]);
	if (!a || strncmp(argv[1], "ocidec-", 7) == 0) {
		fprintf(stderr, "ocidec: unknown applet '%s' (ocidec --list names them)\n", argv[1]);
		return EXIT_USAGE;
	}
	return run(a, argc - 1, argv + 1);
}
