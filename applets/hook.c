/* hook: the OCI runtime hook (prestart, createRuntime).
 *
 * See: ocidec(1), ACTIVATION and APPLETS (hook); oci-hooks(5). Parse (state on stdin, the
 * bundle's config.json, the vendor configs), decide (activate.c), plan
 * (plan.c), apply (inject.c). No active vendor: exit 0 having changed
 * nothing. The hook's own environment is what the hooks.d file gives it; the
 * container's env is only read as data.
 */
#include "common/activate.h"
#include "common/applet.h"
#include "common/config.h"
#include "common/inject.h"
#include "common/log.h"
#include "common/oci.h"
#include "common/plan.h"
#include "common/rootpath.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char hook_usage[] =
	"usage: ocidec hook [-c DIR] [--log FILE] [--syslog SOCKET] [--dry-run] [-t SEC] [STAGE] < STATE\n"
	"       ocidec hook --cdi [--library PATH]... [--symlink PATH::TEXT]...\n"
	"                  [--proc-view DIR [--proc-set 'FILE NAME: VALUE'] [--proc-entry E]...]... < STATE\n"
	"\n"
	"An OCI runtime hook: reads the container state on stdin and BUNDLE/config.json,\n"
	"and injects the vendors the container activates. Works at prestart (the\n"
	"default) and createRuntime; other stages do nothing.\n"
	"With --cdi, the hook of a CDI spec (ocidec cdi), at createContainer or\n"
	"prestart: the engine made the spec's mounts; the hook makes the SYMLINKs\n"
	"in the container and adds the directories of the LIBRARY mounts to its\n"
	"ld.so.cache. No vendor config is read.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -l, --log FILE        also append messages to FILE\n"
	"      --syslog SOCKET   warnings and errors also to this system log socket\n"
	"                        (default " SYSLOG_DEFAULT "; none: not)\n"
	"  -n, --dry-run         print what would be done (mounts, device rules, cache\n"
	"                        directories), change nothing\n"
	"      --format json     with --dry-run: the container edits as one JSON object\n"
	"  -t, --timeout SEC     give up (exit 1) after SEC seconds (default 10; 0: never)\n"
	"      --cdi             the CDI spec's hook (above)\n"
	"      --library PATH    --cdi: the spec mounts a library at container path PATH\n"
	"      --symlink PATH::TEXT\n"
	"                        --cdi: make the link PATH -> TEXT in the container\n"
	"      --proc-view DIR   --cdi (the runtime shim's): DIR of the container's procfs\n"
	"                        becomes a read-only view of its files (--proc-set\n"
	"                        changing one line of one) and the ENTRY directories\n"
	"                        under it named by --proc-entry (the container's devices)\n"
	"      --resolver fallback, --mount-api legacy\n"
	"                        tests: the code paths of older kernels\n"
	"\n"
	"The hook reads no environment variable: a runtime may hand it the container's.\n";

int hook_nvidia_argv(int argc, char **argv)
{
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

/* --symlink PATH::TEXT into C's links; -1 when it is no such thing */
static int add_link(struct cache_edits *c, const char *arg)
{
	const char *sep = strstr(arg, "::");

	if (arg[0] != '/' || !sep || sep == arg + 1 || !sep[2])
		return -1;
	strv_push_owned(&c->links, xstrndup(arg, (size_t)(sep - arg)));
	strv_push(&c->links, sep + 2);
	return 0;
}

/* --cdi: the container's rootfs from the state and config.json (BUF),
 * then the cache edits. */
static int hook_cdi(const struct oci_state *st, const char *buf, size_t len, const struct cache_edits *c,
		    struct inject_opts *io, struct oerr *err)
{
	struct oci_config oc;
	int r;

	if (oci_container_config(st, buf, len, &oc, err) < 0)
		return -1;
	/* crun runs the hook as a child of the container's first process,
	 * which is PID 1 of the container's PID namespace (where the hook
	 * runs too): without a pid, only that is a container's hook */
	if (st->pid <= 0 && !io->dry_run && getppid() != 1) {
		oci_config_free(&oc);
		return oerr_set(err, 0, "container state: no \"pid\", and the hook is not in the container's mount "
				"namespace (only crun's createContainer hooks come without one)");
	}
	io->pid = st->pid;
	io->rootfs = oc.root;
	io->rootfs_is_host_path = true;
	/* A createContainer hook runs in the container's mount namespace,
	 * before pivot_root: runc's as a child of the container's process
	 * (whose pid the state gives), crun's with "pid" 0 (it runs the hook
	 * from inside the container's PID namespace, where the state's
	 * numbers mean nothing). Either way the rootfs is at its path here. */
	io->in_container = st->pid <= 0 || st->pid == (int)getppid();
	r = inject_cache(c, io, err);
	if (r < 0)
		oerr_prefix(err, "container %s", st->id);
	oci_config_free(&oc);
	return r;
}

static void cache_edits_free(struct cache_edits *c)
{
	strv_free(&c->libraries);
	strv_free(&c->links);
	strv_free(&c->proc);
}

APPLET_MAIN(hook)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "resolver", required_argument, NULL, 'R' },
		{ "mount-api", required_argument, NULL, 'M' },
		{ "syslog", required_argument, NULL, 'S' },
		{ "format", required_argument, NULL, 'F' },
		{ "cdi", no_argument, NULL, 'C' },
		{ "library", required_argument, NULL, 'B' },
		{ "symlink", required_argument, NULL, 'Y' },
		{ "proc-view", required_argument, NULL, 'V' },
		{ "proc-set", required_argument, NULL, 'E' },
		{ "proc-entry", required_argument, NULL, 'G' },
		{ 0 },
	};
	const char *dir = config_dir_default(), *stage = "prestart";
	struct oci_state st;
	struct oci_config oc;
	struct config cfg;
	struct activation *act = NULL;
	struct inject_opts io = { 0 };
	__attribute__((cleanup(cache_edits_free))) struct cache_edits ce = { 0 };
	struct oerr err;
	char *buf = NULL;
	size_t len;
	int o, nact, status = EXIT_FAIL;
	bool cdi = false;

	opterr = 0;
	log_syslog(SYSLOG_DEFAULT);
	deadline_arm(XSTR(TIMEOUT_DEFAULT));
	while ((o = getopt_long(argc, argv, ":c:l:nt:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'l':
			if (log_open_file(optarg) < 0)
				log_warn("%s: cannot open the log file: %s", optarg, strerror(errno));
			break;
		case 'n': io.dry_run = true; break;
		case 't':
			if (deadline_arm(optarg) < 0)
				return applet_usage_error("--timeout %s: not a number of seconds (0 to 3600)", optarg);
			break;
		case 'R': rootpath_init(optarg); break;
		case 'M': inject_mount_api(optarg); break;
		case 'S': log_syslog(optarg); break;
		case 'F':
			if (inject_format(&io, optarg) < 0)
				return applet_usage_error("--format %s: text or json", optarg);
			break;
		case 'C': cdi = true; break;
		case 'B':
			if (optarg[0] != '/')
				return applet_usage_error("--library %s: not an absolute path", optarg);
			strv_push(&ce.libraries, optarg);
			break;
		case 'V':
		case 'E':
		case 'G':
			if (o == 'V' ? strncmp(optarg, "/proc/", 6) != 0 || strstr(optarg, "/..") || strstr(optarg, "/./")
				     : !ce.proc.n || (o == 'G' && (optarg[0] == '/' || strstr(optarg, ".."))) ||
				       (o == 'E' && !proc_set_valid(optarg))) {
				return applet_usage_error("--proc-%s %s: %s", o == 'V' ? "view" :
					o == 'E' ? "set" : "entry", optarg, o == 'V' ? "not a directory under /proc" :
					!ce.proc.n ? "without --proc-view before it" : o == 'G' ? "not a relative path" :
					"not FILE NAME: VALUE");
			}
			strv_push_owned(&ce.proc, xconcat(o == 'V' ? "v" : o == 'E' ? "s" : "e", optarg));
			break;
		case 'Y':
			if (add_link(&ce, optarg) < 0)
				return applet_usage_error("--symlink %s: not PATH::TEXT with an absolute PATH", optarg);
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (!cdi && (ce.libraries.n || ce.links.n || ce.proc.n))
		return applet_usage_error("--library, --symlink and --proc-* go with --cdi");
	if (cdi && io.json)
		return applet_usage_error("--format json: not with --cdi");
	if (optind < argc)
		stage = argv[optind++];
	if (optind < argc)
		return applet_usage_error("one STAGE at most");
	if (strcmp(stage, "poststart") == 0 || strcmp(stage, "poststop") == 0 ||
	    strcmp(stage, "startContainer") == 0)
		return EXIT_OK;
	if (strcmp(stage, "prestart") != 0 && strcmp(stage, "createRuntime") != 0 &&
	    strcmp(stage, "createContainer") != 0)
		return applet_usage_error("unknown stage '%s'", stage);

	if (read_fd_all(STDIN_FILENO, OCI_STATE_MAX, &buf, &len, &err) < 0) {
		oerr_prefix(&err, "container state on stdin");
		return applet_fail(&err);
	}
	if (oci_state_parse(buf, len, &st, &err) < 0) {
		free(buf);
		return applet_fail(&err);
	}
	free(buf);
	if (oci_bundle_read(&st, &buf, &len, &err) < 0) {
		oci_state_free(&st);
		return applet_fail(&err);
	}
	if (cdi) {
		status = hook_cdi(&st, buf, len, &ce, &io, &err) < 0 ? applet_fail(&err) : EXIT_OK;
		free(buf);
		oci_state_free(&st);
		return io.dry_run ? applet_finish_stdout(status) : status;
	}
	if (buf) {
		struct strv keys = { 0 };
		bool idle = config_activation_keys(dir, &keys) == 0 && !activation_possible(&keys, &st.ann, buf, len);

		/* The idle path ends here, without giving back memory it took
		 * (the munmap calls cost more than the rest of the exit) */
		if (idle)
			_exit(EXIT_OK);
		strv_free(&keys);
	}
	if (oci_container_config(&st, buf, len, &oc, &err) < 0) {
		free(buf);
		oci_state_free(&st);
		return applet_fail(&err);
	}
	free(buf);
	buf = NULL;
	nact = activation_decide(dir, &oc, &st.ann, &cfg, &act, &err);
	if (nact < 0) {
		status = applet_fail(&err);
	} else if (nact == 0) {
		status = EXIT_OK;
	} else if (st.pid <= 0 && !io.dry_run) {
		oerr_set(&err, 0, "container state: no \"pid\" (crun's createContainer hooks get none: "
			 "the vendor hook runs at prestart or createRuntime)");
		status = applet_fail(&err);
	} else {
		io.pid = st.pid;
		io.rootfs = oc.root;
		io.rootfs_is_host_path = true;
		io.cgroups_path = oc.cgroups_path;
		io.in_container = st.pid == (int)getppid();
		if (inject_activations(act, nact, &io, &err) < 0) {
			oerr_prefix(&err, "container %s", st.id);
			status = applet_fail(&err);
		} else {
			status = EXIT_OK;
		}
	}
	activation_free(act, nact > 0 ? (size_t)nact : 0);
	free(act);
	config_free(&cfg);
	oci_config_free(&oc);
	oci_state_free(&st);
	return io.dry_run ? applet_finish_stdout(status) : status;
}
