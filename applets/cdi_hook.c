/* cdi-hook: the hook a CDI spec of ocidec's (ocidec cdi) and the runtime
 * shim's config.json edits run, at createContainer or prestart.
 *
 * See: ocidec-cdi-hook(1). The engine made the spec's mounts
 * and device nodes; this hook makes the driver's symlinks in the
 * container, the proc views, and adds the directories of the mounted
 * libraries to its ld.so.cache (inject_cache). No vendor config is read;
 * what to do is all on the command line, which the spec's author wrote.
 * Specs call it as `ocidec-hook --cdi` (hook.c passes that here).
 */
#include "applets/applet.h"
#include "pipeline/appprofile.h"
#include "pipeline/dryrun.h"
#include "pipeline/hookio.h"
#include "pipeline/inject.h"
#include "base/log.h"
#include "pipeline/oci.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cdi_hook_usage[] =
	"usage: ocidec cdi-hook [--library PATH]... [--folder DIR]... [--symlink PATH::TEXT]...\n"
	"                       [--proc-view DIR [--proc-set 'FILE NAME: VALUE'] [--proc-entry E]...]...\n"
	"                       [--cuda-compat DIR --host-driver-version V]\n"
	"                       [--chmod PATH... --chmod-mode MODE] [--application-profile FILE]\n"
	"                       [--log FILE] [--syslog SOCKET] [--dry-run] [-t SEC] [STAGE] < STATE\n"
	"\n"
	"The hook of a CDI spec (ocidec cdi) and of the runtime shim's edits, at\n"
	"createContainer or prestart (the default): the engine made the spec's mounts;\n"
	"the hook makes the SYMLINKs in the container and adds the directories of the\n"
	"LIBRARY mounts to its ld.so.cache. No vendor config is read. Specs spell it\n"
	"`ocidec-hook --cdi`.\n"
	"\n"
	"  --library PATH        the spec mounts a library at container path PATH\n"
	"  --symlink PATH::TEXT  make the link PATH -> TEXT in the container\n"
	"  --proc-view DIR       (the runtime shim's) DIR of the container's procfs\n"
	"                        becomes a read-only view of its files and of the\n"
	"                        directories under it that --proc-entry names\n"
	"  --proc-set 'FILE NAME: VALUE'\n"
	"                        in the view, line NAME of FILE reads VALUE\n"
	"  --proc-entry ENTRY    the directory ENTRY under the view is shown (a\n"
	"                        selected device's); every other entry is hidden\n"
	"  --folder DIR          a directory for the container's cache\n"
	"  --chmod PATH          a directory in the container given --chmod-mode's\n"
	"  --chmod-mode MODE     mode (octal, no set-id bits)\n"
	"  --cuda-compat DIR     CUDA's compat libraries in the image: first in the\n"
	"                        cache when DIR's libcuda.so.MAJOR.x is newer than\n"
	"  --host-driver-version V  the host driver's version V\n"
	"  --application-profile FILE  NVIDIA's driver application profile: FILE in\n"
	"                        the container limits EGL and Vulkan to the GPUs in\n"
	"                        its /dev (nvidiaN), when it has any\n"
	"  -l, --log FILE        also append messages to FILE\n"
	"      --syslog SOCKET   warnings and errors also to this system log socket\n"
	"                        (default " SYSLOG_DEFAULT "; none: not)\n"
	"  -n, --dry-run         print the links, cache directories and proc views\n"
	"  -t, --timeout SEC     give up (exit 1) after SEC seconds (default 10; 0: never)\n"
	"      --resolver fallback, --mount-api legacy\n"
	"                        tests: the code paths of older kernels\n"
	"\n"
	"The hook reads no environment variable: a runtime may hand it the container's.\n";

/* The container's rootfs from the state ST and config.json (BUF), then
 * the cache edits C. */
static int cdi_hook_apply(const struct oci_state *st, const char *buf, size_t len, const struct cache_edits *c,
			  struct oerr *err)
{
	struct oci_config oc;
	struct inject_opts io;
	int r;

	if (oci_container_config(st, buf, len, &oc, err) < 0)
		return -1;
	/* crun runs the hook as a child of the container's first process,
	 * which is PID 1 of the container's PID namespace (where the hook
	 * runs too): without a pid, only that is a container's hook */
	if (st->pid <= 0 && getppid() != 1) {
		oci_config_free(&oc);
		return oerr_set(err, 0, "container state: no \"pid\", and the hook is not in the container's mount "
				"namespace (only crun's createContainer hooks come without one)");
	}
	/* A createContainer hook runs in the container's mount namespace,
	 * before pivot_root: runc's as a child of the container's process
	 * (whose pid the state gives), crun's with "pid" 0 (it runs the hook
	 * from inside the container's PID namespace, where the state's
	 * numbers mean nothing). Either way the rootfs is at its path here. */
	io = (struct inject_opts){ .pid = st->pid, .rootfs = oc.root, .rootfs_is_host_path = true,
				   .in_container = st->pid <= 0 || st->pid == (int)getppid() };
	r = inject_cache(c, &io, err);
	if (r < 0)
		oerr_prefix(err, "container %s", st->id);
	oci_config_free(&oc);
	return r;
}

/* NVIDIA's flag NAME ("--link", "-link", "--link=V") at ARGV[*I]: its
 * value (the next argument, or after '='), *I moved past it; NULL if
 * ARGV[*I] is not that flag */
static const char *nv_flag(int argc, char **argv, int *i, const char *name)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	a += a[0] == '-';
	a += a[0] == '-';
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

int cdi_hook_nvidia_argv(int argc, char ***argvp)
{
	char **argv = *argvp, **out;
	const char *sub = NULL, *v, *compat = "/usr/local/cuda/compat", *host = NULL, *mode = NULL;
	int n = 0, i = 1;
	size_t commas = 0;

	/* NVIDIA's list flags (--link, --folder, --path) take "a,b" as two
	 * values, as its CLI library splits them: room for each */
	for (int k = 1; k < argc; k++)
		for (const char *c = argv[k]; *c; c++)
			commas += *c == ',';
	out = xcalloc((size_t)argc * 2 + 2 * commas + 16, sizeof(*out));

	out[n++] = (char *)"ocidec-cdi-hook";
	for (; i < argc && argv[i][0] == '-'; i++)  /* NVIDIA's --debug, --quiet */
		log_debug("NVIDIA's option %s ignored", argv[i]);  /* (log_debug may not evaluate it) */
	sub = i < argc ? argv[i++] : "";
	for (; i < argc; i++) {
		if (strcmp(sub, "create-symlinks") == 0 && (v = nv_flag(argc, argv, &i, "link"))) {
			_cleanup_free_ char *links = xstrdup(v);

			for (char *save = NULL, *one = strtok_r(links, ",", &save); one; one = strtok_r(NULL, ",", &save)) {
				const char *sep = strstr(one, "::");

				if (!sep || strstr(sep + 2, "::")) {
					log_warn("nvidia-cdi-hook create-symlinks --link %s: not TARGET::LINK; ignored", one);
					continue;
				}
				out[n++] = (char *)"--symlink";
				out[n++] = xasprintf("%s::%.*s", sep + 2, (int)(sep - one), one);
			}
		} else if (strcmp(sub, "update-ldcache") == 0 && (v = nv_flag(argc, argv, &i, "folder"))) {
			for (char *save = NULL, *one = strtok_r(xstrdup(v), ",", &save); one; one = strtok_r(NULL, ",", &save)) {
				out[n++] = (char *)"--folder";
				out[n++] = one;
			}
		} else if (strcmp(sub, "enable-cuda-compat") == 0 && (v = nv_flag(argc, argv, &i, "host-driver-version"))) {
			host = v;
		} else if (strcmp(sub, "enable-cuda-compat") == 0 &&
			   (v = nv_flag(argc, argv, &i, "cuda-compat-container-root"))) {
			compat = v;
		} else if (strcmp(sub, "chmod") == 0 && (v = nv_flag(argc, argv, &i, "mode"))) {
			mode = v;
		} else if (strcmp(sub, "chmod") == 0 && (v = nv_flag(argc, argv, &i, "path"))) {
			for (char *save = NULL, *one = strtok_r(xstrdup(v), ",", &save); one; one = strtok_r(NULL, ",", &save)) {
				out[n++] = (char *)"--chmod";
				out[n++] = one;
			}
		} else if ((v = nv_flag(argc, argv, &i, "container-spec")) || (v = nv_flag(argc, argv, &i, "ldconfig-path")) ||
			   (v = nv_flag(argc, argv, &i, "host-cuda-version"))) {
			log_debug("NVIDIA's option %s ignored", v);  /* a test's, or ldconfig: none is run */
		} else {
			log_debug("nvidia-cdi-hook %s: argument %s ignored", sub, argv[i]);
		}
	}
	if (strcmp(sub, "enable-cuda-compat") == 0 && host) {
		out[n++] = (char *)"--cuda-compat";
		out[n++] = (char *)compat;
		out[n++] = (char *)"--host-driver-version";
		out[n++] = (char *)host;
	} else if (strcmp(sub, "disable-device-node-modification") == 0) {
		out[n++] = (char *)"--proc-view";
		out[n++] = (char *)"/proc/driver/nvidia";
		out[n++] = (char *)"--proc-set";
		out[n++] = (char *)"params ModifyDeviceFiles: 0";
		out[n++] = (char *)"--proc-entry";
		out[n++] = (char *)"gpus/*";  /* every GPU's entry, as NVIDIA's leaves them */
	} else if (strcmp(sub, "update-application-profile") == 0) {
		out[n++] = (char *)"--application-profile";
		out[n++] = (char *)APP_PROFILE_DEFAULT;
	} else if (strcmp(sub, "chmod") == 0 && mode) {
		out[n++] = (char *)"--chmod-mode";
		out[n++] = (char *)mode;
	} else if (strcmp(sub, "create-symlinks") != 0 && strcmp(sub, "update-ldcache") != 0 &&
		   strcmp(sub, "enable-cuda-compat") != 0) {
		log_warn("nvidia-cdi-hook %s: not a hook ocidec answers: nothing done (the container starts, as "
			 "with NVIDIA's own)", *sub ? sub : "(none)");
		free(out);
		return 0;
	}
	*argvp = out;  /* the process's until it ends */
	return n;
}

APPLET_MAIN(cdi_hook)
{
	static const struct option opts[] = {
		HOOKIO_LONG_OPTS,
		CACHEHOOK_LONG_OPTS,
		{ "cdi", no_argument, NULL, 'C' },
		{ 0 },
	};
	_cleanup_cache_edits_ struct cache_edits ce = CACHE_EDITS_INIT;
	struct oci_state st;
	char *buf;
	size_t len;
	int o, r;
	bool dry_run = false;

	opterr = 0;
	log_syslog(SYSLOG_DEFAULT);
	deadline_arm_sec(TIMEOUT_DEFAULT);
	while ((o = getopt_long(argc, argv, ":" HOOKIO_SHORT_OPTS, opts, NULL)) != -1) {
		if (o == 'C')  /* `ocidec-hook --cdi`, the specs' spelling */
			continue;
		if ((r = cachehook_option(&ce, o, optarg, err)) < 0)
			return applet_usage_error("%s", err->msg);
		if (r > 0 && (r = hookio_option(o, optarg, &dry_run, err)) < 0)
			return applet_usage_error("%s", err->msg);
		if (r > 0)
			return applet_bad_option(o, argc, argv);
	}
	if (cachehook_check(&ce, err) < 0)
		return applet_usage_error("%s", err->msg);
	if ((r = hookio_stage(argc, argv, err)) <= 0)
		return r < 0 ? applet_usage_error("%s", err->msg) : EXIT_OK;
	if (dry_run) {
		dry_run_print_cache(&ce);
		return applet_finish_stdout(EXIT_OK);
	}
	if (hookio_input(&st, &buf, &len, err) < 0)
		return APPLET_FAILED;
	r = cdi_hook_apply(&st, buf, len, &ce, err);
	free(buf);
	oci_state_free(&st);
	return r < 0 ? APPLET_FAILED : EXIT_OK;
}
