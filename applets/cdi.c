/* cdi: the vendors as Container Device Interface specs.
 *
 * See: ocidec-cdi(1). One spec per vendor, built
 * from the same container edits the hook applies (edits.h): a device per
 * per-device node index, per UUID where the vendor has information files,
 * and "all"; each device's edits are its own nodes, the spec's common edits
 * carry the vendor's other devices, files, programs and libraries, and the
 * createContainer hook (ocidec hook --cdi) that makes the driver's links and
 * updates the container's cache. No field newer than the spec's cdiVersion
 * (0.5.0 by default; additionalGids from 0.7.0). The specs are built,
 * written and refreshed by engines/cdispec.c; here, the command line.
 */
#include "applets/applet.h"
#include "engines/cdispec.h"
#include "devices/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cdi_usage[] =
	"usage: ocidec cdi [-c DIR] [--cdi-version V] [--format json|yaml] [-o DIR|FILE]\n"
	"                  [--features LIST] [--hook-path PATH] [VENDOR...]\n"
	"       ocidec cdi --claim NAME --devices SEL [-o DIR|FILE] [OPTIONS] VENDOR\n"
	"       ocidec cdi --list [-c DIR] [VENDOR...]\n"
	"       ocidec cdi --refresh [-o DIR] [OPTIONS] [VENDOR...]\n"
	"       (nvidia-ctk cdi's generate and list: ocidec cdi generate ..., cdi list)\n"
	"\n"
	"Print (or write) one CDI spec per vendor (default: all configured): devices\n"
	"by index, by UUID where the vendor has them, and \"all\", for engines that\n"
	"read CDI specs (podman --device KIND=NAME, containerd, CRI-O).\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"      --cdi-version V   cdiVersion (default 0.5.0, 1.1.0 for network devices; 0.3.0 to 1.1.0)\n"
	"  -F, --format FORMAT   json (the default) or yaml\n"
	"  -o, --output DIR|FILE write DIR/KIND.json (.yaml: nvidia.com-gpu.json) for each vendor,\n"
	"                        or FILE for one vendor (a .yaml name means yaml),\n"
	"                        atomically; a FILE that is no regular file (a FIFO,\n"
	"                        /dev/stdout) is written through; default and -: stdout;\n"
	"                        a path not there without a .json/.yaml/.yml name is\n"
	"                        made, a directory\n"
	"  -f, --features LIST   features, comma separated, or all (default: each vendor's\n"
	"                        driver_feature, what the hook gives a container by default)\n"
	"      --hook-path PATH  the host's path of ocidec, which the spec's hook runs\n"
	"                        (default: this binary's)\n"
	"      --claim NAME      one device NAME (a DRA claim's) with all that --devices\n"
	"                        gives, kind VENDOR-DOMAIN/claim (nvidia.com/claim);\n"
	"                        -o DIR writes DIR/DOMAIN-claim_NAME.json (DRA drivers'\n"
	"                        transient specs: /var/run/cdi)\n"
	"  -d, --devices SEL     with --claim: the devices, as a container names them\n"
	"                        (indices, UUIDs, PCI addresses, MIG devices, all)\n"
	"      --list            the specs' device names, KIND=NAME a line, as engines\n"
	"                        take them (nvidia-ctk cdi list)\n"
	"      --refresh         each vendor's spec and management spec in DIR (-o;\n"
	"                        default /var/run/cdi) as they are now: written only\n"
	"                        when they change, removed when the vendor has nothing\n"
	"                        to give (its driver gone); another tool's untouched\n"
	"      --management      the management spec (management.KIND=all: every\n"
	"                        feature and device node) instead of the spec\n"
	"\n"
	"Example: ocidec cdi -o /etc/cdi nvidia && podman run --device nvidia.com/gpu=0 ...\n";

/* Where specs that last until the next boot go (CDI's dynamic directory) */
#define CDI_RUN_DIR "/var/run/cdi"

static const char *const versions[] = { "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0", NULL };

/* The command line into RUN: EXIT_OK, or a usage error's status (said) */
static int cdi_options(int argc, char **argv, struct cdi_run *run)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "cdi-version", required_argument, NULL, 'V' },
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "features", required_argument, NULL, 'f' },
		{ "hook-path", required_argument, NULL, 'H' },
		{ "claim", required_argument, NULL, 'C' },
		{ "devices", required_argument, NULL, 'd' },
		{ "list", no_argument, NULL, 'l' },
		{ "refresh", no_argument, NULL, 'U' },
		{ "management", no_argument, NULL, 'M' },
		{ 0 },
	};
	struct stat st;
	int o, i;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:F:o:f:d:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': run->dir = optarg; break;
		case 'V':
			for (i = 0; versions[i] && strcmp(versions[i], optarg) != 0; i++)
				;
			if (!versions[i])
				return applet_usage_error("--cdi-version %s: not one of 0.3.0 ... 1.1.0", optarg);
			run->co.version = versions[i];
			run->version_given = true;
			break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "yaml") != 0)
				return applet_usage_error("--format %s: json or yaml", optarg);
			run->format = optarg;
			break;
		case 'o': run->output = strcmp(optarg, "-") == 0 ? NULL : optarg; break;  /* -: standard output */
		case 'f': run->features = optarg; break;
		case 'C': run->claim = optarg; break;
		case 'd': run->devices = optarg; break;
		case 'l': run->list = true; break;
		case 'U': run->refresh = true; break;
		case 'M': run->management = true; break;
		case 'H':
			if (optarg[0] != '/')
				return applet_usage_error("--hook-path %s: not an absolute path", optarg);
			run->co.hook_path = optarg;
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	run->co.host_paths = strcmp(run->co.version, "0.5.0") >= 0;
	run->co.gids = strcmp(run->co.version, "0.7.0") >= 0;
	/* netDevices (1.1.0): with the default version, a spec that has them
	 * says 1.1.0 (cdi_version_raise) */
	run->co.net_devices = !run->version_given || strcmp(run->co.version, "1.1.0") >= 0;
	/* a user's spec is for a rootless engine, which binds each node from
	 * its container path on the host */
	run->co.rootless = geteuid() != 0;
	if (!run->co.hook_path) {
		if (self_exe(run->self, sizeof(run->self)) < 0)
			return applet_usage_error("/proc/self/exe: %s: give --hook-path", strerror(errno));
		run->co.hook_path = run->self;
	}
	if (run->refresh && (run->list || run->claim))
		return applet_usage_error("--refresh writes every spec of the vendors: no --list or --claim");
	if (run->management && (run->claim || run->refresh))
		return applet_usage_error("--management: not with --claim or --refresh (which writes it with the spec)");
	if (run->refresh && !run->output)
		run->output = CDI_RUN_DIR;
	if (run->refresh && run->output[0] != '/') {  /* (its files are written in the root, by absolute path) */
		if (!getcwd(run->cwd, sizeof(run->cwd)) || strlen(run->cwd) + strlen(run->output) + 2 > sizeof(run->cwd))
			return applet_usage_error("--refresh -o %s: give an absolute path", run->output);
		strcat(strcat(run->cwd, "/"), run->output);
		run->output = run->cwd;
	}
	if (run->refresh && mkdir(run->output, 0755) < 0 && errno != EEXIST)  /* (a tmpfs after a boot) */
		return applet_usage_error("--refresh -o %s: %s", run->output, strerror(errno));
	/* -o PATH that is not there and names no spec file (.json, .yaml,
	 * .yml) is a directory: `cdi -o /etc/cdi` on a node without one makes
	 * it (a file there would be no CDI directory an engine could watch) */
	if (run->output && !run->list && lstat(run->output, &st) < 0 && errno == ENOENT &&
	    !cdi_ends_with_nocase(run->output, ".json") && !cdi_ends_with_nocase(run->output, ".yaml") &&
	    !cdi_ends_with_nocase(run->output, ".yml") &&
	    mkdir(run->output, 0755) < 0) {
		struct oerr e;

		oerr_set(&e, errno, "-o %s: can't make the directory (no .json or .yaml name: a directory is meant)",
			 run->output);
		return applet_fail(&e);
	}
	run->to_dir = run->output && stat(run->output, &st) == 0 && S_ISDIR(st.st_mode);
	if (run->refresh && !run->to_dir)
		return applet_usage_error("--refresh -o %s: not a directory", run->output);
	run->yaml = run->format ? strcmp(run->format, "yaml") == 0
				: run->output && !run->to_dir &&
					  (cdi_ends_with(run->output, ".yaml") || cdi_ends_with(run->output, ".yml"));
	if (run->list && run->output)
		return applet_usage_error("--list prints the device names: no -o");
	if (!run->claim != !run->devices)
		return applet_usage_error("--claim and --devices go together");
	if (run->claim && argc - optind != 1)
		return applet_usage_error("--claim: name one VENDOR");
	return EXIT_OK;
}

APPLET_MAIN(cdi)
{
	/* features: the vendors' driver_feature */
	struct cdi_run run = { .dir = config_dir_default(), .co = { .version = "0.5.0" } };
	_cleanup_config_ struct config cfg = { 0 };
	int written, named, status;
	bool generate = false;
	char *nvidia[] = { (char *)"nvidia", NULL }, **names;

	/* nvidia-ctk cdi's verbs, as an NVIDIA user types them: generate is
	 * what cdi does (NVIDIA's vendor where none is named, as nvidia-ctk
	 * writes NVIDIA's spec), list is --list (no vendor is named so) */
	if (argc > 1 && strcmp(argv[1], "generate") == 0) {
		argv[1] = argv[0];
		argv++, argc--;
		generate = true;
	} else if (argc > 1 && strcmp(argv[1], "list") == 0) {
		argv[1] = (char *)"--list";
	}
	if ((status = cdi_options(argc, argv, &run)) != EXIT_OK)
		return status;
	named = argc - optind;
	names = argv + optind;
	if (generate && !named) {
		names = nvidia;
		named = 1;
	}
	if (run.refresh)
		return applet_finish_stdout(cdi_refresh_all(&run, names, named));
	if (config_load_named(&cfg, run.dir, names, named, err) < 0)
		return APPLET_FAILED;
	if (run.output && !run.to_dir && (named > 1 || (named == 0 && cfg.n != 1)))
		return applet_usage_error("-o %s: not a directory: name one VENDOR to write one file", run.output);
	for (size_t i = 0; i < cfg.n; i++)
		if (vendor_named(&cfg.vendors[i], names, named))
			vendor_log_level(&cfg.vendors[i]);
	written = cfg.n ? cdi_write_specs(&cfg, names, named, &run, run.output, run.to_dir, err) : 0;
	if (written > 0)
		return applet_finish_stdout(EXIT_OK);
	if (written == 0 && cfg.n == 0)
		oerr_usage(err, "%s has no vendor file (NAME.ini): no spec", run.dir);
	else if (written == 0)
		oerr_set(err, 0, "no vendor has anything to give: none of their files is under their driver_root: "
			 "no spec");
	return APPLET_FAILED;
}
