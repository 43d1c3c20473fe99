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

APPLET_MAIN(inject)
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
	const char *dir = config_dir_default(), *devices = "all", *features = NULL;
	struct inject_opts io = { .rootfs = "/" };
	struct container c = { 0 };
	struct oerr err;
	char *end;
	long pid = 0;
	int o, status;
	bool dry_run = false, json = false;

	opterr = 0;
	deadline_arm_sec(TIMEOUT_DEFAULT);
	while ((o = getopt_long(argc, argv, ":c:p:r:d:f:nt:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (*end || errno || pid <= 0 || pid > 4194304)
				return applet_usage_error("--pid %s: not a process id", optarg);
			break;
		case 'r': io.rootfs = optarg; break;
		case 'd': devices = optarg; break;
		case 'f': features = optarg; break;
		case 'n': dry_run = true; break;
		case 'F':
			if (dry_run_format(optarg, &json) < 0)
				return applet_usage_error("--format %s: text or json", optarg);
			break;
		case 't':
			if (deadline_arm(optarg) < 0)
				return applet_usage_error("--timeout %s: not a number of seconds (0 to 3600)", optarg);
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (!pid)
		return applet_usage_error("--pid is required");
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		oerr_set(&err, 0, "--pid %ld: no such process", pid);
		return applet_fail(&err);
	}
	if (optind == argc)
		return applet_usage_error("name at least one VENDOR");
	if (config_load_named(&c.cfg, dir, argv + optind, argc - optind, &err) < 0)
		return applet_fail(&err);
	/* the vendors named, as a container's decision would have them */
	c.act = xcalloc((size_t)(argc - optind), sizeof(*c.act));
	for (int i = optind; i < argc; i++) {
		struct activation *a = &c.act[c.nact++];

		*a = (struct activation){ .v = config_vendor(&c.cfg, argv[i]),
					  .features = features ? xstrdup(features) : NULL,
					  .source = xstrdup("command line") };
		if (selection_parse(devices, &a->sel, &err) < 0) {
			container_free(&c);
			return applet_fail(&err);
		}
	}
	io.pid = (int)pid;
	status = container_plan(&c, NULL, &err);
	if (status == 0)
		status = dry_run ? dry_run_print(&c.edits, &io, json, &err) : inject(&c.edits, &io, &err);
	container_free(&c);
	status = status < 0 ? applet_fail(&err) : EXIT_OK;
	return dry_run ? applet_finish_stdout(status) : status;
}
