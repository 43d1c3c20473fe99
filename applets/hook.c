/* hook: the OCI runtime hook (prestart, createRuntime).
 *
 * See: ocidec-hook(1), ocidec(1) (ACTIVATION); oci-hooks(5). The state on
 * stdin and the bundle's config.json, to the edits (container.h), applied
 * (inject.c) or printed (pipeline/dryrun.c). No active vendor: exit 0 having
 * changed nothing. The hook's own environment is what the hooks.d file gives it; the
 * container's env is only read as data.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "pipeline/dryrun.h"
#include "pipeline/hookio.h"
#include "pipeline/container.h"
#include "pipeline/inject.h"
#include "base/log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char hook_usage[] =
	"usage: ocidec hook [-c DIR] [--log FILE] [--syslog SOCKET] [--dry-run [--format json]] [-t SEC]\n"
	"                   [STAGE] < STATE\n"
	"\n"
	"An OCI runtime hook: reads the container state on stdin and BUNDLE/config.json,\n"
	"and injects the vendors the container activates. Works at prestart (the\n"
	"default) and createRuntime; other stages do nothing.\n"
	"`ocidec hook --cdi ...` is `ocidec cdi-hook ...` (the spelling CDI specs use).\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -l, --log FILE        also append messages to FILE\n"
	"      --syslog SOCKET   warnings and errors also to this system log socket\n"
	"                        (default " SYSLOG_DEFAULT "; none: not)\n"
	"  -n, --dry-run         print what would be done (mounts, device rules, cache\n"
	"                        directories), change nothing\n"
	"      --format json     with --dry-run: the container edits as one JSON object\n"
	"  -t, --timeout SEC     give up (exit 1) after SEC seconds (default 10; 0: never)\n"
	"      --resolver fallback, --mount-api legacy\n"
	"                        tests: the code paths of older kernels\n"
	"\n"
	"The hook reads no environment variable: a runtime may hand it the container's.\n";

int hook_nvidia_argv(int argc, char ***argvp)
{
	char **argv = *argvp;
	const char *stage = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-') {
			if (!stage)
				stage = a;
			continue;
		}
		/* -config FILE, -config=FILE, --debug, ...: NVIDIA's, meaningless here */
		if ((strcmp(a, "-config") == 0 || strcmp(a, "--config") == 0) && i + 1 < argc) {
			i++;  /* (log_debug may not evaluate its arguments) */
			log_debug("NVIDIA's option %s %s ignored", a, argv[i]);
		} else
			log_debug("NVIDIA's option %s ignored", a);
	}
	if (!stage || (strcmp(stage, "prestart") != 0 && strcmp(stage, "createRuntime") != 0)) {
		log_debug("%s: nothing to do", stage ? stage : "no stage");
		return 0;
	}
	argv[0] = (char *)"ocidec-hook";
	argv[1] = (char *)stage;
	argv[2] = NULL;
	return 2;
}

/* The edits applied to the container of state ST, or (DRY_RUN) printed */
static int hook_apply(const struct oci_state *st, const struct container *c, bool dry_run, bool json,
		      struct oerr *err)
{
	struct inject_opts io = {
		.pid = st->pid, .rootfs = c->oc.root, .rootfs_is_host_path = true,
		.cgroups_path = c->oc.cgroups_path, .in_container = st->pid == (int)getppid(),
	};

	/* pci_net's interfaces: a runtime moves them (linux.netDevices), before
	 * any hook; a hook that moved a host's NIC would leave it in a
	 * namespace that no one gives back if the container fails to start */
	if (c->edits.netdevs && c->edits.netdevs->n)
		log_warn("network interfaces %s%s not moved into the container: the hook does not move them "
			 "(the runtime shim and CDI specs give them to the runtime as netDevices)",
			 c->edits.netdevs->v[0], c->edits.netdevs->n > 1 ? " ..." : "");
	if (dry_run)
		return dry_run_print(&c->edits, &io, json, err);
	if (inject(&c->edits, &io, err) < 0)
		return oerr_prefix(err, "container %s", st->id);
	return 0;
}

APPLET_MAIN(hook)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'F' },
		HOOKIO_LONG_OPTS,
		{ 0 },
	};
	const char *dir = NULL;
	struct oci_state st;
	struct container c;
	char *buf;
	size_t len;
	int o, r;
	bool dry_run = false, json = false;

	opterr = 0;
	log_syslog(SYSLOG_DEFAULT);
	deadline_arm_sec(TIMEOUT_DEFAULT);
	while ((o = getopt_long(argc, argv, ":c:" HOOKIO_SHORT_OPTS, opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'F':
			if (dry_run_format(optarg, &json) < 0)
				return applet_usage_error("--format %s: text or json", optarg);
			break;
		default:
			if ((r = hookio_option(o, optarg, &dry_run, err)) < 0)
				return applet_usage_error("%s", err->msg);
			if (r > 0)
				return applet_bad_option(o, argc, argv);
		}
	}
	if ((r = hookio_stage(argc, argv, err)) <= 0)
		return r < 0 ? applet_usage_error("%s", err->msg) : EXIT_OK;
	if (!dir)
		dir = config_dir_default();
	if (hookio_input(&st, &buf, &len, err) < 0)
		return APPLET_FAILED;
	r = container_decide(dir, &st, st.bundle, buf, len, &c, err);
	free(buf);
	/* The idle path ends here, without giving back memory it took
	 * (the munmap calls cost more than the rest of the exit) */
	if (r == CONTAINER_IDLE)
		_exit(EXIT_OK);
	if (r == CONTAINER_ACTIVE && st.pid <= 0 && !dry_run)
		r = oerr_set(err, 0, "container state: no \"pid\" (crun's createContainer hooks get none: "
			     "the vendor hook runs at prestart or createRuntime)");
	if (r == CONTAINER_ACTIVE)
		r = container_plan(&c, st.id, err) < 0 ? -1 : hook_apply(&st, &c, dry_run, json, err);
	container_free(&c);
	oci_state_free(&st);
	if (r < 0)
		return APPLET_FAILED;
	return dry_run ? applet_finish_stdout(EXIT_OK) : EXIT_OK;
}
