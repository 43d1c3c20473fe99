/* inject: the hook's injection, driven from the command line.
 *
 * See: ocidec-inject(1). HPC engines (Sarus and the like) call it with the
 * devices the workload manager granted: `ocidec inject --pid PID VENDOR...`.
 * Without --rootfs the rootfs is "/" of the process's mount namespace.
 */
#include "applets/applet.h"
#include "applets/dryrun.h"
#include "common/activate.h"
#include "common/config.h"
#include "common/container.h"
#include "common/inject.h"
#include "common/log.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char inject_usage[] =
	"usage: ocidec inject [-c DIR] --pid PID [--rootfs DIR] [--devices SEL]\n"
	"                     [--features LIST] [--dry-run] VENDOR...\n"
	"\n"
	"Inject VENDORs into the mount namespace of process PID, as the hook does.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -p, --pid PID         the container's process\n"
	"  -r, --rootfs DIR      its rootfs, as seen in its mount namespace (default /)\n"
	"  -d, --devices SEL     all (default), none, or indices such as 0,2\n"
	"  -f, --features LIST   features, comma separated, or all (default: each\n"
	"                        vendor's driver_feature)\n"
	"  -n, --dry-run         print what would be done, change nothing\n"
	"      --format json     with --dry-run: the container edits as one JSON object\n"
	"  -t, --timeout SEC     give up (exit 1) after SEC seconds (default 10; 0: never)\n";

/* What inject's command line asks */
struct inject_args {
	const char *dir, *devices, *features;
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
		{ 0 },
	};
	char *end;
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:p:r:d:f:nt:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': a->dir = optarg; break;
		case 'p':
			errno = 0;
			a->pid = strtol(optarg, &end, 10);
			if (*end || errno || a->pid <= 0 || a->pid > 4194304)
				return applet_usage_error("--pid %s: not a process id", optarg);
			break;
		case 'r': io->rootfs = optarg; break;
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
	if (!a->pid)
		return applet_usage_error("--pid is required");
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

APPLET_MAIN(inject)
{
	struct inject_args a = { .dir = config_dir_default(), .devices = "all" };
	struct inject_opts io = { .rootfs = "/" };
	__attribute__((cleanup(container_free))) struct container c = { 0 };
	int status;

	deadline_arm_sec(TIMEOUT_DEFAULT);
	if ((status = inject_options(argc, argv, &a, &io)) != EXIT_OK)
		return status;
	if (kill((pid_t)a.pid, 0) < 0 && errno == ESRCH)
		return oerr_set(err, 0, "--pid %ld: no such process", a.pid);
	if (optind == argc)
		return applet_usage_error("name at least one VENDOR");
	if (inject_vendors(&c, &a, argv + optind, argc - optind, err) < 0 || container_plan(&c, NULL, err) < 0 ||
	    (a.dry_run ? dry_run_print(&c.edits, &io, a.json, err) : inject(&c.edits, &io, err)) < 0)
		return APPLET_FAILED;
	return a.dry_run ? applet_finish_stdout(EXIT_OK) : EXIT_OK;
}
