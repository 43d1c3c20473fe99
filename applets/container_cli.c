/* container-cli: NVIDIA's nvidia-container-cli (libnvidia-container's
 * command line), as the HPC runtimes call it.
 *
 * See: ocidec-container-cli(1). Enroot's 98-nvidia.sh, Apptainer's --nvccli
 * and NVIDIA's legacy hook run `nvidia-container-cli [GLOBAL] configure
 * --device=... --compute --utility ... ROOTFS`. Their flags are made the
 * environment an OCI container would carry (NVIDIA_VISIBLE_DEVICES,
 * NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_*, NVIDIA_MIG_*_DEVICES,
 * NVIDIA_IMEX_CHANNELS), and that environment goes through the one
 * decision and plan every engine's container takes: every vendor file
 * answering those variables (nvidia.ini, or the Jetson's or WSL2's, the
 * IMEX channels') decides and is planned as for the hook, then injected
 * (inject.c) into ROOTFS. ld.so.cache is written by ocidec, never by
 * running an ldconfig (--ldconfig is accepted and not run).
 *
 * Without --pid, as NVIDIA's: the parent's mount namespace; when it is
 * ours (Enroot, Apptainer), ROOTFS is a path here, before pivot_root.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "pipeline/container.h"
#include "devices/devices.h"
#include "pipeline/inject.h"
#include "base/log.h"
#include "pipeline/plan.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char container_cli_usage[] =
	"usage: ocidec container-cli [GLOBAL OPTIONS] configure [OPTIONS] ROOTFS\n"
	"       ocidec container-cli [GLOBAL OPTIONS] list [OPTIONS]\n"
	"       ocidec container-cli [GLOBAL OPTIONS] info [--csv]\n"
	"\n"
	"NVIDIA's nvidia-container-cli (ocidec answers to that name), for Enroot,\n"
	"Pyxis, Apptainer (--nvccli) and NVIDIA's legacy hook: their flags become the\n"
	"NVIDIA_* environment, decided and planned as any container's under the\n"
	"vendor files that answer it.\n"
	"\n"
	"Global options:\n"
	"  -r, --root PATH        the driver root (the vendor files' driver_root)\n"
	"  -d, --debug FILE       also append every message to FILE\n"
	"  -k, --load-kmods, -n, --no-pivot, -u, --user[=UID:GID], -l, --ldcache FILE,\n"
	"      --no-create-imex-channels\n"
	"                         accepted: ocidec loads no module, runs as its caller,\n"
	"                         reads DRIVER_ROOT/etc/ld.so.cache, creates no node\n"
	"      --ocidec-config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"\n"
	"configure: give the container whose root is ROOTFS the driver\n"
	"  -p, --pid PID          the container's process (default: the parent; in\n"
	"                         its mount namespace, ROOTFS before pivot_root)\n"
	"  -d, --device ID        GPUs: indices, UUIDs, PCI addresses, MIG names, all\n"
	"                         (repeatable; none given: no GPU, the driver's files)\n"
	"  -c, --compute, -u, --utility, -v, --video, -g, --graphics, -D, --display,\n"
	"      --ngx, --compat32  the capabilities (the vendor file's features)\n"
	"  -r, --require EXPR     a requirement on the driver (cuda>=12.2 ...)\n"
	"      --mig-config ID, --mig-monitor ID   MIG capability nodes\n"
	"      --imex-channel CH  IMEX channels (nvidia-imex.ini)\n"
	"      --no-cgroups       leave the device cgroup alone\n"
	"      --no-cntlibs, --cuda-compat-mode disabled   no CUDA forward compatibility\n"
	"  -l, --ldconfig PATH    accepted, not run: ocidec writes the cache itself\n"
	"      --no-devbind, --no-persistenced, --no-fabricmanager, --no-gsp-firmware,\n"
	"      --cuda-compat-mode ldconfig|mount\n"
	"                         accepted: the vendor file says what is given\n"
	"\n"
	"list: print the driver's files, as configure would give them\n"
	"  -d, --device ID, -l, --libraries, -b, --binaries, -i, --ipcs,\n"
	"  -f, --firmwares, --compat32, --mig-config ID, --mig-monitor ID,\n"
	"      --imex-channel CH\n"
	"\n"
	"info: the driver's and CUDA's versions and each GPU\n"
	"      --csv              as CSV\n";

/* The global options, and what the command makes of the rest */
struct cli {
	const char *dir, *root;
	struct strv devices, caps, requires, mig_config, mig_monitor, imex;
	const char *rootfs;
	long pid;
	bool no_cgroups, no_compat, csv;
	unsigned list;  /* LIST_* bits; 0: everything */
	bool all_devices; /* list without --device: every GPU, as NVIDIA's */
};
enum { LIST_LIBS = 1, LIST_BINS = 2, LIST_IPCS = 4, LIST_FIRMWARE = 8 };

static void cli_free(struct cli *c)
{
	strv_free(&c->devices);
	strv_free(&c->caps);
	strv_free(&c->requires);
	strv_free(&c->mig_config);
	strv_free(&c->mig_monitor);
	strv_free(&c->imex);
}

static int global_options(int argc, char **argv, struct cli *c)
{
	static const struct option opts[] = {
		{ "debug", required_argument, NULL, 'd' },
		{ "load-kmods", no_argument, NULL, 'k' },
		{ "no-pivot", no_argument, NULL, 'n' },
		{ "user", optional_argument, NULL, 'u' },
		{ "root", required_argument, NULL, 'r' },
		{ "ldcache", required_argument, NULL, 'l' },
		{ "no-create-imex-channels", no_argument, NULL, 'I' },
		{ "ocidec-config-dir", required_argument, NULL, 'C' },
		{ 0 },
	};
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:d:knu::r:l:", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			if (log_open_file(optarg) < 0)
				log_warn("%s: cannot open the debug file: %s", optarg, strerror(errno));
			else
				log_threshold = LOG_DEBUG;
			break;
		case 'r':
			if (optarg[0] != '/')
				return applet_usage_error("--root %s: not an absolute path", optarg);
			c->root = optarg;
			break;
		case 'C': c->dir = optarg; break;
		case 'k': case 'n': case 'u': case 'l': case 'I':
			log_debug("NVIDIA's option %s ignored", argv[optind - 1]);
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	return EXIT_OK;
}

/* One value, or several joined by commas (repeated flags), onto L */
static void push_list(struct strv *l, const char *value)
{
	if (*value)
		strv_push(l, value);
}

static int configure_options(int argc, char **argv, struct cli *c)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'd' },
		{ "require", required_argument, NULL, 'r' },
		{ "ldconfig", required_argument, NULL, 'l' },
		{ "compute", no_argument, NULL, 'c' },
		{ "utility", no_argument, NULL, 'u' },
		{ "video", no_argument, NULL, 'v' },
		{ "graphics", no_argument, NULL, 'g' },
		{ "display", no_argument, NULL, 'D' },
		{ "ngx", no_argument, NULL, 'X' },
		{ "compat32", no_argument, NULL, '3' },
		{ "no-cgroups", no_argument, NULL, 'G' },
		{ "no-devbind", no_argument, NULL, 'B' },
		{ "no-cntlibs", no_argument, NULL, 'L' },
		{ "cuda-compat-mode", required_argument, NULL, 'M' },
		{ "mig-config", required_argument, NULL, 'm' },
		{ "mig-monitor", required_argument, NULL, 'o' },
		{ "imex-channel", required_argument, NULL, 'i' },
		{ "no-persistenced", no_argument, NULL, 'P' },
		{ "no-fabricmanager", no_argument, NULL, 'F' },
		{ "no-gsp-firmware", no_argument, NULL, 'W' },
		{ 0 },
	};
	static const struct { char opt; const char *cap; } caps[] = {
		{ 'c', "compute" }, { 'u', "utility" }, { 'v', "video" }, { 'g', "graphics" },
		{ 'D', "display" }, { 'X', "ngx" }, { '3', "compat32" },
	};
	char *end;
	int o;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":p:d:r:l:cuvgD", opts, NULL)) != -1) {
		bool cap = false;

		for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			if (caps[i].opt == o) {
				if (!strv_contains(&c->caps, caps[i].cap))
					strv_push(&c->caps, caps[i].cap);
				cap = true;
			}
		}
		if (cap)
			continue;
		switch (o) {
		case 'p':
			errno = 0;
			c->pid = strtol(optarg, &end, 10);
			if (*end || errno || c->pid <= 0 || c->pid > 4194304)
				return applet_usage_error("--pid %s: not a process id", optarg);
			break;
		case 'd': push_list(&c->devices, optarg); break;
		case 'r': strv_push(&c->requires, optarg); break;
		case 'm': push_list(&c->mig_config, optarg); break;
		case 'o': push_list(&c->mig_monitor, optarg); break;
		case 'i': push_list(&c->imex, optarg); break;
		case 'G': c->no_cgroups = true; break;
		case 'L': c->no_compat = true; break;
		case 'M':
			if (strcmp(optarg, "disabled") == 0)
				c->no_compat = true;
			else if (strcmp(optarg, "ldconfig") != 0 && strcmp(optarg, "mount") != 0)
				return applet_usage_error("--cuda-compat-mode %s: ldconfig, mount or disabled", optarg);
			break;
		case 'l':
			/* @PATH: the host's ldconfig, PATH: the container's. Neither
			 * is run: the cache is written by ocidec, inside ROOTFS. */
			log_debug("--ldconfig %s: not run (ocidec writes the container's ld.so.cache)", optarg);
			break;
		case 'B': case 'P': case 'F': case 'W':
			log_info("NVIDIA's option %s ignored: the vendor file says what a container is given",
				 argv[optind - 1]);
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return applet_usage_error(optind == argc ? "configure: name the container's ROOTFS" :
					  "configure: one ROOTFS");
	c->rootfs = argv[optind];
	if (c->rootfs[0] != '/' || strcmp(c->rootfs, "/") == 0)
		return applet_usage_error("configure: %s: invalid rootfs directory (an absolute path, not /)",
					  c->rootfs);
	return EXIT_OK;
}

static int list_options(int argc, char **argv, struct cli *c)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "libraries", no_argument, NULL, 'l' },
		{ "binaries", no_argument, NULL, 'b' },
		{ "ipcs", no_argument, NULL, 'i' },
		{ "firmwares", no_argument, NULL, 'f' },
		{ "compat32", no_argument, NULL, '3' },
		{ "mig-config", required_argument, NULL, 'm' },
		{ "mig-monitor", required_argument, NULL, 'o' },
		{ "imex-channel", required_argument, NULL, 'I' },
		{ "no-persistenced", no_argument, NULL, 'P' },
		{ "no-fabricmanager", no_argument, NULL, 'F' },
		{ 0 },
	};
	int o;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":d:lbif", opts, NULL)) != -1) {
		switch (o) {
		case 'd': push_list(&c->devices, optarg); break;
		case 'l': c->list |= LIST_LIBS; break;
		case 'b': c->list |= LIST_BINS; break;
		case 'i': c->list |= LIST_IPCS; break;
		case 'f': c->list |= LIST_FIRMWARE; break;
		case '3': break;  /* the 32-bit libraries: listed with the others */
		case 'm': push_list(&c->mig_config, optarg); break;
		case 'o': push_list(&c->mig_monitor, optarg); break;
		case 'I': push_list(&c->imex, optarg); break;
		case 'P': case 'F': break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (optind != argc)
		return applet_usage_error("list: no argument expected (%s)", argv[optind]);
	return EXIT_OK;
}

/* NAME=the list joined by commas onto ENV, when the list has any */
static void env_list(struct strv *env, const char *name, const struct strv *l)
{
	_cleanup_free_ char *v = NULL;

	if (!l->n)
		return;
	v = strv_join(l, ",");
	strv_push_owned(env, xasprintf("%s=%s", name, v));
}

/* The container the command line describes, decided and planned as any
 * engine's container: CONTAINER_ACTIVE (C planned), CONTAINER_NONE, or -1 */
static int cli_container(const struct cli *cli, const char *caps, struct container *c, struct oerr *err)
{
	_cleanup_strv_ struct strv ann = { 0 };
	int r;

	if (cli->devices.n)
		env_list(&c->oc.env, "NVIDIA_VISIBLE_DEVICES", &cli->devices);
	else
		strv_push(&c->oc.env, cli->all_devices ? "NVIDIA_VISIBLE_DEVICES=all" : "NVIDIA_VISIBLE_DEVICES=none");
	strv_push_owned(&c->oc.env, xasprintf("NVIDIA_DRIVER_CAPABILITIES=%s", caps));
	for (size_t i = 0; i < cli->requires.n; i++)
		strv_push_owned(&c->oc.env, xasprintf("NVIDIA_REQUIRE_CLI_%zu=%s", i, cli->requires.v[i]));
	env_list(&c->oc.env, "NVIDIA_MIG_CONFIG_DEVICES", &cli->mig_config);
	env_list(&c->oc.env, "NVIDIA_MIG_MONITOR_DEVICES", &cli->mig_monitor);
	env_list(&c->oc.env, "NVIDIA_IMEX_CHANNELS", &cli->imex);
	/* the engine's own call (its tenant policy applies all the same) */
	c->oc.cap_sys_admin = true;
	config_root_override = (struct config_root_override){ "NVIDIA_VISIBLE_DEVICES", cli->root };
	r = container_decide_config(cli->dir, &ann, NULL, c, err);
	if (r < 0)
		return -1;
	if (r == CONTAINER_NONE)
		return oerr_set(err, 0, "no vendor file in %s answers NVIDIA_VISIBLE_DEVICES here (nvidia.ini, "
				"nvidia-tegra.ini, nvidia-wsl.ini): nothing to give", cli->dir);
	/* no capability flag: NVIDIA gives the GPUs' nodes and the driver's
	 * control node (nvidia.ini's feature control), no library */
	for (int i = 0; i < c->nact && !*caps; i++) {
		const struct vendor *v = c->act[i].v;

		if (v->feature_env && strcmp(v->feature_env, "NVIDIA_DRIVER_CAPABILITIES") == 0) {
			free(c->act[i].features);
			c->act[i].features = xstrdup(vendor_feature(v, "control") ? "control" : "");
		}
	}
	return container_plan(c, NULL, err) < 0 ? -1 : CONTAINER_ACTIVE;
}

/* Is PID's mount namespace ours? */
static bool same_mount_ns(long pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
	return stat("/proc/self/ns/mnt", &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int configure(struct cli *cli, struct oerr *err)
{
	__attribute__((cleanup(container_free))) struct container c = { 0 };
	_cleanup_free_ char *caps = strv_join(&cli->caps, ",");
	struct inject_opts io = { .rootfs = cli->rootfs, .rootfs_is_host_path = true, .no_cgroups = cli->no_cgroups };
	long pid = cli->pid ? cli->pid : (long)getppid();

	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return oerr_set(err, 0, "--pid %ld: no such process", pid);
	if (cli_container(cli, caps, &c, err) < 0)
		return APPLET_FAILED;
	if (cli->no_compat)
		c.edits.compat_dir = NULL;
	io.pid = (int)pid;
	io.standalone = same_mount_ns(pid);
	log_debug("configure %s: %s", cli->rootfs, io.standalone ? "in this mount namespace" :
		  "in the process's mount namespace");
	return inject(&c.edits, &io, err) < 0 ? APPLET_FAILED : EXIT_OK;
}

static bool is_firmware(const struct plan_item *it)
{
	return it->kind == KIND_MISC && strstr(it->path, "/firmware/");
}

static int list(struct cli *cli, struct oerr *err)
{
	__attribute__((cleanup(container_free))) struct container c = { 0 };
	_cleanup_strv_ struct strv seen = { 0 };
	unsigned want = cli->list ? cli->list : LIST_LIBS | LIST_BINS | LIST_IPCS | LIST_FIRMWARE;

	cli->all_devices = !cli->devices.n;
	if (cli_container(cli, "all", &c, err) < 0)
		return APPLET_FAILED;
	/* NVIDIA's order: the nodes (everything listed, or --device given),
	 * libraries, firmware, sockets; each file as it is, the one a link
	 * names after it */
	for (int pass = 0; pass < 5; pass++) {
		for (size_t i = 0; i < c.plan.n; i++) {
			const struct plan_item *it = &c.plan.items[i];
			bool take = (pass == 0 && (!cli->list || cli->devices.n) && it->kind == KIND_DEVICES) ||
				    (pass == 1 && (want & LIST_BINS) && it->kind == KIND_BINARIES) ||
				    (pass == 2 && (want & LIST_LIBS) && it->kind == KIND_LIBRARIES) ||
				    (pass == 3 && (want & LIST_FIRMWARE) && is_firmware(it)) ||
				    (pass == 4 && (want & LIST_IPCS) &&
				     (it->kind == KIND_IPC || it->kind == KIND_IPC_WRITABLE));
			const char *path = it->host_target ? it->host_target : it->host;

			if (!take || strv_contains(&seen, path))
				continue;
			strv_push(&seen, path);
			out("%s\n", path);
		}
	}
	return applet_finish_stdout(EXIT_OK);
}

/* The "KEY: value" lines of an information file (NVIDIA's
 * /proc/driver/nvidia/gpus/BUS/information) that info prints */
struct gpu_info {
	char model[128], bus[64];
};

static void information_line(const char *key, const char *value, void *arg)
{
	struct gpu_info *g = arg;

	if (strcmp(key, "Model") == 0)
		snprintf(g->model, sizeof(g->model), "%s", value);
	else if (strcmp(key, "Bus Location") == 0)
		snprintf(g->bus, sizeof(g->bus), "%s", value);
}

static int info_device(const char *file, const char *uuid, int minor, int index, void *arg)
{
	const bool *csv = arg;
	struct gpu_info g = { "", "" };

	info_file_each(file, information_line, &g);
	if (!g.bus[0]) {  /* the file's directory is the GPU's PCI address */
		const char *end = strrchr(file, '/'), *start = end;

		while (start && start > file && start[-1] != '/')
			start--;
		if (start && end > start)
			snprintf(g.bus, sizeof(g.bus), "%.*s", (int)(end - start), start);
	}
	if (*csv)
		out("%d,%d,%s,%s,%s\n", index, minor, g.model, uuid ? uuid : "", g.bus);
	else
		out("\nDevice Index:   %d\nDevice Minor:   %d\nModel:          %s\nGPU UUID:       %s\n"
		    "Bus Location:   %s\n", index, minor, g.model, uuid ? uuid : "", g.bus);
	return 0;
}

static int info(struct cli *cli, struct oerr *err)
{
	__attribute__((cleanup(config_free))) struct config cfg = { 0 };
	bool any = false;

	config_root_override = (struct config_root_override){ "NVIDIA_VISIBLE_DEVICES", cli->root };
	if (config_load(&cfg, cli->dir, err) < 0)
		return APPLET_FAILED;
	for (size_t i = 0; i < cfg.n; i++) {
		const struct vendor *v = &cfg.vendors[i];
		_cleanup_free_ char *driver = NULL, *cuda = NULL;

		if (!vendor_answers(v, "NVIDIA_VISIBLE_DEVICES") || !vendor_here(v))
			continue;
		any = true;
		plan_driver_versions(v, &driver, &cuda);
		if (cli->csv)
			out("NVRM version,CUDA version\n%s,%s\n\nDevice Index,Device Minor,Model,GPU UUID,"
			    "Bus Location\n", driver ? driver : "", cuda ? cuda : "");
		else
			out("NVRM version:   %s\nCUDA version:   %s\n", driver ? driver : "unknown",
			    cuda ? cuda : "unknown");
		vendor_uuid_each(v, info_device, &cli->csv);
		break;  /* one driver serves NVIDIA's names on a machine */
	}
	if (!any)
		return oerr_set(err, 0, "no vendor file in %s answers NVIDIA_VISIBLE_DEVICES here", cli->dir);
	return applet_finish_stdout(EXIT_OK);
}

APPLET_MAIN(container_cli)
{
	__attribute__((cleanup(cli_free))) struct cli cli = { .dir = config_dir_default() };
	const char *cmd;
	int status;

	deadline_arm_sec(TIMEOUT_DEFAULT);
	if ((status = global_options(argc, argv, &cli)) != EXIT_OK)
		return status;
	if (optind == argc)
		return applet_usage_error("name a command: configure, list or info");
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "configure") == 0) {
		if ((status = configure_options(argc, argv, &cli)) != EXIT_OK)
			return status;
		return configure(&cli, err);
	}
	if (strcmp(cmd, "list") == 0) {
		if ((status = list_options(argc, argv, &cli)) != EXIT_OK)
			return status;
		return list(&cli, err);
	}
	if (strcmp(cmd, "info") == 0) {
		cli.csv = argc > 1 && strcmp(argv[1], "--csv") == 0;
		if (argc > (cli.csv ? 2 : 1))
			return applet_usage_error("info: only --csv is known (%s)", argv[cli.csv ? 2 : 1]);
		return info(&cli, err);
	}
	return applet_usage_error("unknown command '%s': configure, list or info", cmd);
}
