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
	"       ocidec hook --cdi [--library PATH]... [--symlink PATH::TEXT]... < STATE\n"
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
	"      --resolver fallback, --mount-api legacy\n"
	"                        tests: the code paths of older kernels\n"
	"\n"
	"The hook reads no environment variable: a runtime may hand it the container's.\n";

/* The idle path, for every container on the host: can anything activate a
 * vendor? Each source needs its key in config.json's text (the activation
 * variable or an alias, the annotation, the device list directory) or
 * among the state's annotations; a text with a \\u escape could spell one
 * otherwise. When nothing can, the hook exits 0 having parsed no JSON and
 * checked no vendor file beyond its activation keys. */
static bool may_activate(const struct strv *keys, const struct oci_state *st, const char *text,
			 size_t len)
{
	bool first[256] = { false };

	if (memmem(text, len, "\\u", 2))
		return true;
	for (size_t i = 0; i < keys->n; i++)
		if (oci_annotation(&st->ann, keys->v[i]))
			return true;
	/* Every such key starts a JSON string: "NAME=value" in process.env, an
	 * annotation's name, a mount's destination. Every '"' is tried as a
	 * string's start, escaped or not: more than the strings, never fewer. */
	for (size_t i = 0; i < keys->n; i++)
		first[(unsigned char)keys->v[i][0]] = true;
	for (const char *p = text, *end = text + len; p + 1 < end; p++) {
		if (*p != '"' || !first[(unsigned char)p[1]])
			continue;
		for (size_t i = 0; i < keys->n; i++) {
			const char *k = keys->v[i];

			size_t kl = k[0] == p[1] ? strlen(k) : 0;

			if (kl && (size_t)(end - p - 1) >= kl && memcmp(p + 1, k, kl) == 0)
				return true;
		}
	}
	return false;
}

/* Does the container name a vendor by one of KEYS: an env variable, an
 * annotation (config.json's or the state's), a mount under a directory? */
static bool names_vendor(const struct strv *keys, const struct oci_config *oc, const struct strv *state_ann)
{
	for (size_t i = 0; i < keys->n; i++) {
		const char *k = keys->v[i];
		size_t kl = strlen(k);

		if (oci_env(&oc->env, k) || oci_annotation(&oc->ann, k) || oci_annotation(state_ann, k))
			return true;
		for (size_t m = 0; m < oc->mounts.n; m++)
			if (strncmp(oc->mounts.v[m], k, kl) == 0 && (oc->mounts.v[m][kl] == '/' || !oc->mounts.v[m][kl]))
				return true;
	}
	return false;
}

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
	if (st->pid <= 0 && !io->dry_run) {
		oci_config_free(&oc);
		return oerr_set(err, 0, "container state: no \"pid\"");
	}
	io->pid = st->pid;
	io->rootfs = oc.root;
	io->rootfs_is_host_path = true;
	io->in_container = st->pid > 0 && st->pid == (int)getppid();
	r = inject_cache(c, io, err);
	if (r < 0)
		oerr_prefix(err, "container %s", st->id);
	oci_config_free(&oc);
	return r;
}

static int cache_edits_done(struct cache_edits *c, int status)
{
	strv_free(&c->libraries);
	strv_free(&c->links);
	return status;
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
		{ 0 },
	};
	const char *dir = CONFIG_DIR_DEFAULT, *stage = "prestart";
	struct oci_state st;
	struct oci_config oc;
	struct config cfg;
	struct activation *act = NULL;
	struct inject_opts io = { 0 };
	struct cache_edits ce = { 0 };
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
				return cache_edits_done(&ce, applet_usage_error("--library %s: not an absolute path",
										 optarg));
			strv_push(&ce.libraries, optarg);
			break;
		case 'Y':
			if (add_link(&ce, optarg) < 0)
				return cache_edits_done(&ce, applet_usage_error("--symlink %s: not PATH::TEXT with "
										 "an absolute PATH", optarg));
			break;
		default: return cache_edits_done(&ce, applet_bad_option(o, argc, argv));
		}
	}
	if (!cdi && (ce.libraries.n || ce.links.n))
		return cache_edits_done(&ce, applet_usage_error("--library and --symlink go with --cdi"));
	if (cdi && io.json)
		return cache_edits_done(&ce, applet_usage_error("--format json: not with --cdi"));
	if (optind < argc)
		stage = argv[optind++];
	if (optind < argc)
		return cache_edits_done(&ce, applet_usage_error("one STAGE at most"));
	if (strcmp(stage, "poststart") == 0 || strcmp(stage, "poststop") == 0 ||
	    strcmp(stage, "startContainer") == 0)
		return cache_edits_done(&ce, EXIT_OK);
	if (strcmp(stage, "prestart") != 0 && strcmp(stage, "createRuntime") != 0 &&
	    strcmp(stage, "createContainer") != 0)
		return cache_edits_done(&ce, applet_usage_error("unknown stage '%s'", stage));

	if (read_fd_all(STDIN_FILENO, OCI_STATE_MAX, &buf, &len, &err) < 0) {
		oerr_prefix(&err, "container state on stdin");
		return cache_edits_done(&ce, applet_fail(&err));
	}
	if (oci_state_parse(buf, len, &st, &err) < 0) {
		free(buf);
		return cache_edits_done(&ce, applet_fail(&err));
	}
	free(buf);
	if (oci_bundle_read(&st, &buf, &len, &err) < 0) {
		oci_state_free(&st);
		return cache_edits_done(&ce, applet_fail(&err));
	}
	if (cdi) {
		status = hook_cdi(&st, buf, len, &ce, &io, &err) < 0 ? applet_fail(&err) : EXIT_OK;
		free(buf);
		oci_state_free(&st);
		cache_edits_done(&ce, 0);
		return io.dry_run ? applet_finish_stdout(status) : status;
	}
	if (buf) {
		struct strv keys = { 0 };
		bool idle = config_activation_keys(dir, &keys) == 0 && !may_activate(&keys, &st, buf, len);

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
	/* A vendor file that cannot be loaded fails the containers that name
	 * it; the others start, and the log says what is wrong. */
	config_load_each(&cfg, dir);
	for (size_t i = 0; i < cfg.nbroken; i++) {
		if (names_vendor(&cfg.broken[i].keys, &oc, &st.ann)) {
			status = applet_fail(&cfg.broken[i].err);
			config_free(&cfg);
			oci_config_free(&oc);
			oci_state_free(&st);
			return status;
		}
		log_warn("%s (ignored: the container names no vendor of it)", cfg.broken[i].err.msg);
	}
	act = xcalloc(cfg.n ? cfg.n : 1, sizeof(*act));
	nact = activate(&cfg, &oc, &st.ann, act, &err);
	if (nact < 0) {
		status = applet_fail(&err);
	} else if (nact == 0) {
		status = EXIT_OK;
	} else if (st.pid <= 0 && !io.dry_run) {
		oerr_set(&err, 0, "container state: no \"pid\"");
		status = applet_fail(&err);
	} else {
		io.pid = st.pid;
		io.rootfs = oc.root;
		io.rootfs_is_host_path = true;
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
