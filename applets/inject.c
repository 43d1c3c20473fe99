/* inject: the hook's injection, driven from the command line.
 *
 * See: ocidec-inject(1). HPC engines (Sarus and the like) call it with the
 * devices the workload manager granted: `ocidec inject --pid PID VENDOR...`.
 * Without --rootfs the rootfs is "/" of the process's mount namespace.
 * With --environ FILE the vendors are the ones the environment in FILE
 * activates, decided as the hook decides from config.json's env (Enroot's
 * hook, 98-ocidec.sh: the container's environment); without --pid the
 * caller is in the container's mount namespace already and --rootfs is a
 * path here, before pivot_root (a runtime's hook such as Enroot's).
 */
#include "applets/applet.h"
#include "pipeline/activate.h"
#include "devices/config.h"
#include "pipeline/dryrun.h"
#include "pipeline/container.h"
#include "pipeline/inject.h"
#include "base/log.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char inject_usage[] =
	"usage: ocidec inject [-c DIR] --pid PID [--rootfs DIR] [--devices SEL]\n"
	"                     [--features LIST] [--dry-run] VENDOR...\n"
	"       ocidec inject [-c DIR] [--pid PID] --rootfs DIR --environ FILE [--no-cgroups]\n"
	"\n"
	"Inject VENDORs into the mount namespace of process PID, as the hook does;\n"
	"or the vendors the environment in FILE activates, as the hook decides them.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -p, --pid PID         the container's process (with --environ, default: the\n"
	"                        caller's namespaces, --rootfs a path here, before\n"
	"                        pivot_root, as a runtime's hook such as Enroot's)\n"
	"  -r, --rootfs DIR      its rootfs, as seen in its mount namespace (default /)\n"
	"  -e, --environ FILE    the container's environment, NAME=VALUE lines (- for\n"
	"                        stdin; the first of a name counts)\n"
	"      --no-cgroups      leave the device cgroup alone\n"
	"  -d, --devices SEL     all (default), none, or indices such as 0,2\n"
	"  -f, --features LIST   features, comma separated, or all (default: each\n"
	"                        vendor's driver_feature)\n"
	"  -n, --dry-run         print what would be done, change nothing\n"
	"      --format json     with --dry-run: the container edits as one JSON object\n"
	"  -t, --timeout SEC     give up (exit 1) after SEC seconds (default 10; 0: never)\n";

/* What inject's command line asks */
struct inject_args {
	const char *dir, *devices, *features, *environ;
	long pid;
	bool dry_run, json;
};

/* The command line into A and IO: EXIT_OK, or a usage error's status
 * (said) */
static int inject_options(int argc, char **argv, struct inject_args *a, struct inject_opts *io)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "rootfs", required_argument, NULL, 'r' },
		{ "devices", required_argument, NULL, 'd' },
		{ "features", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'F' },
		{ "environ", required_argument, NULL, 'e' },
		{ "no-cgroups", no_argument, NULL, 'G' },
		{ 0 },
	};
	char *end;
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:p:r:d:f:nt:e:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': a->dir = optarg; break;
		case 'p':
			errno = 0;
			a->pid = strtol(optarg, &end, 10);
			if (*end || errno || a->pid <= 0 || a->pid > 4194304)
				return applet_usage_error("--pid %s: not a process id", optarg);
			break;
		case 'r': io->rootfs = optarg; break;
		case 'e': a->environ = optarg; break;
		case 'G': io->no_cgroups = true; break;
		case 'd': a->devices = optarg; break;
		case 'f': a->features = optarg; break;
		case 'n': a->dry_run = true; break;
		case 'F':
			if (dry_run_format(optarg, &a->json) < 0)
				return applet_usage_error("--format %s: text or json", optarg);
			break;
		case 't':
			if (deadline_arm(optarg) < 0)
				return applet_usage_error("--timeout %s: not a number of seconds (0 to 3600)", optarg);
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (!a->pid && !a->environ)
		return applet_usage_error("--pid is required (or --environ, for the caller's namespaces)");
	if (a->environ && (a->devices || a->features))
		return applet_usage_error("--environ decides the devices and features: no --devices or --features");
	if (!a->pid) {
		/* Enroot's hook: in the container's namespaces, before pivot_root */
		if (io->rootfs[0] != '/' || strcmp(io->rootfs, "/") == 0)
			return applet_usage_error("--rootfs %s: the container's root, an absolute path (not /)",
						  io->rootfs);
		a->pid = getpid();
		io->standalone = true;
	}
	io->pid = (int)a->pid;
	return EXIT_OK;
}

/* The vendors NAMES (N of them) into C as a container's decision would
 * have them: 0, or -1 (ERR) */
static int inject_vendors(struct container *c, const struct inject_args *a, char *const *names, int n,
			  struct oerr *err)
{
	if (config_load_named(&c->cfg, a->dir, names, n, err) < 0)
		return -1;
	c->act = xcalloc((size_t)n, sizeof(*c->act));
	for (int i = 0; i < n; i++) {
		struct activation *act = &c->act[c->nact++];

		*act = (struct activation){ .v = config_vendor(&c->cfg, names[i]),
					    .features = a->features ? xstrdup(a->features) : NULL,
					    .source = xstrdup("command line") };
		if (selection_parse(a->devices, &act->sel, err) < 0)
			return -1;
	}
	return 0;
}

/* The environment in FILE (- : stdin), NAME=VALUE lines (a CR before the
 * newline dropped), into ENV, the first of a name kept: 0, or -1 (ERR). Read
 * as a stream, 64 MiB at most (a user's environment and an image's); lines
 * of no such form skipped; a NUL byte is no environment. */
#define ENVIRON_MAX (64u << 20)
static int read_environ(const char *file, struct strv *env, struct oerr *err)
{
	int fd = strcmp(file, "-") == 0 ? dup(STDIN_FILENO) : open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;
	FILE *f;
	int r = 0;

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return oerr_set(err, errno, "--environ %s", file);
	}
	while (!r && (n = getline(&line, &cap, f)) >= 0) {
		size_t name = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		bool seen = false;

		total += (size_t)n;
		if (total > ENVIRON_MAX) {
			r = oerr_usage(err, "--environ %s: more than %u MiB", file, ENVIRON_MAX >> 20);
			break;
		}
		if (strlen(line) != (size_t)n) {
			r = oerr_usage(err, "--environ %s: a NUL byte: not NAME=VALUE lines", file);
			break;
		}
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!name || line[name] != '=')
			continue;
		for (size_t i = 0; i < env->n && !seen; i++)
			seen = strncmp(env->v[i], line, name + 1) == 0;
		if (!seen)
			strv_push(env, line);
	}
	if (!r && ferror(f))
		r = oerr_set(err, errno, "--environ %s", file);
	fclose(f);
	return r;
}

/* The vendors the environment in A's file activates, into C as the hook's
 * decision has them: CONTAINER_ACTIVE, CONTAINER_NONE, or -1 (ERR) */
static int environ_vendors(struct container *c, const struct inject_args *a, struct oerr *err)
{
	_cleanup_strv_ struct strv ann = { 0 };

	if (read_environ(a->environ, &c->oc.env, err) < 0)
		return -1;
	c->oc.cap_sys_admin = true;  /* the runtime's own call */
	return container_decide_config(a->dir, &ann, NULL, c, err);
}

APPLET_MAIN(inject)
{
	struct inject_args a = { .dir = config_dir_default() };
	struct inject_opts io = { .rootfs = "/" };
	__attribute__((cleanup(container_free))) struct container c = { 0 };
	int status;

	deadline_arm_sec(TIMEOUT_DEFAULT);
	if ((status = inject_options(argc, argv, &a, &io)) != EXIT_OK)
		return status;
	if (kill((pid_t)a.pid, 0) < 0 && errno == ESRCH)
		return oerr_set(err, 0, "--pid %ld: no such process", a.pid);
	if (a.environ) {
		if (optind != argc)
			return applet_usage_error("--environ decides the vendors: name none");
		if ((status = environ_vendors(&c, &a, err)) < 0)
			return APPLET_FAILED;
		if (status == CONTAINER_NONE) {
			log_debug("no vendor asked for: nothing to do");
			return EXIT_OK;
		}
	} else if (optind == argc)
		return applet_usage_error("name at least one VENDOR");
	if (!a.devices)
		a.devices = "all";
	if ((!a.environ && inject_vendors(&c, &a, argv + optind, argc - optind, err) < 0) ||
	    container_plan(&c, NULL, err) < 0 ||
	    (a.dry_run ? dry_run_print(&c.edits, &io, a.json, err) : inject(&c.edits, &io, err)) < 0)
		return APPLET_FAILED;
	return a.dry_run ? applet_finish_stdout(EXIT_OK) : EXIT_OK;
}
