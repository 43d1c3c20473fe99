/* check: why would an accelerator container not get its devices here?
 *
 * See: ocidec-check(1). Each engine's registration is checked as
 * that engine reads it: podman's hooks dirs (its default, or the
 * containers.conf drop-in ocidec install writes), Docker's daemon.json and
 * whether the running dockerd started before it changed, containerd's
 * configuration as `containerd config dump` prints it (the CRI plugin's
 * default runtime, ocidec's runtime and its binary) and whether containerd
 * started before it changed. Then the vendor configs, their driver roots
 * and device nodes, the cgroup layout, SELinux. Every problem with the
 * command that fixes it; text, or --json. Nothing is changed.
 */
#include "applets/applet.h"
#include "base/report.h"
#include "devices/config.h"
#include "engines/engine.h"
#include "engines/engines.h"
#include "base/log.h"
#include "pipeline/plan.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

const char check_usage[] =
	"usage: ocidec check [-c DIR] [--host-root DIR] [--json]\n"
	"\n"
	"Tells why an accelerator container would not get its devices on this host:\n"
	"the vendor configs, their driver roots and device nodes, the cgroup layout,\n"
	"each engine's registration as that engine reads it, and whether the engine\n"
	"must reload or restart (`ocidec install --runtime help` lists the engines),\n"
	"CDI specs gone stale, SELinux. Every\n"
	"problem with the command\n"
	"that fixes it. Exit 0: ready; 1: problems found; 3: could not check.\n"
	"Nothing is changed.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"      --host-root DIR   the host's root directory as this process sees it\n"
	"                        (a toolkit container's /host; default /); without -c,\n"
	"                        the configs in its " CONFIG_DIR_DEFAULT "\n"
	"      --json            one JSON object: {\"problems\": N, \"checks\": [...]}\n";

enum status { OK = REPORT_OK, INFO = REPORT_INFO, PROBLEM = REPORT_PROBLEM };

#define TOOLKIT_RECORD PREFIX_DEFAULT "/install.json"
#define HOST_RECORD HOST_STATE_DIR "/install.json"   /* ocidec install on the host itself */
#define TOOLKIT_CONFIG_DIR "/usr/local/ocidec/etc/ocidec.d"   /* (install's default --prefix) */

struct checks {
	struct engine_check ec;  /* what the engine drivers find and are told (engine.h); first */
	struct report rep;  /* what is found, as check and selinux-check say it (report.h) */
	int drivers;       /* vendors with a driver here */
	bool toolkit;      /* a toolkit container installed ocidec here (TOOLKIT_RECORD); ec.installed:
			    * ocidec install has run here (TOOLKIT_RECORD or HOST_RECORD) */
};

/* One check's line: its status, what it is about, and how to fix it: FIX a
 * command to paste (it works as printed, on this host, in the state the
 * line describes), TODO what to do where no command does it (NULL: none) */
static void vsay(struct checks *r, enum status st, const char *what, const char *fix, const char *todo,
		 const char *fmt, va_list ap)
{
	_cleanup_free_ char *moved = NULL;

	/* a node a toolkit container installed: that container installs
	 * again, not ocidec on the host (its own record would clash) */
	if (r->toolkit && fix && strncmp(fix, "ocidec install", 14) == 0) {
		moved = xasprintf("run the toolkit container that installed ocidec here again (its record: "
				  TOOLKIT_RECORD "); where ocidec is installed on the host itself, this is: %s%s%s", fix,
				  todo ? "; " : "", todo ? todo : "");
		fix = NULL;
		todo = moved;
	}
	report_vadd(&r->rep, (enum report_status)st, what, fix, todo, fmt, ap);
}

/* the engine drivers' lines (engine.h) */
static void engine_line(struct engine_check *c, enum engine_status st, const char *what, const char *fix,
			const char *todo, const char *fmt, va_list ap)
{
	vsay((struct checks *)c, (enum status)st, what, fix, todo, fmt, ap);
}

/* a line whose fix is a command (say), in words (advise), or both (say2):
 * the engine drivers' (engine.h), which come back to vsay */
#define say(r, st, ...) engine_say(&(r)->ec, (enum engine_status)(st), __VA_ARGS__)
#define advise(r, st, ...) engine_advise(&(r)->ec, (enum engine_status)(st), __VA_ARGS__)
#define say2(r, st, ...) engine_say2(&(r)->ec, (enum engine_status)(st), __VA_ARGS__)

/* ---- the vendors ---- */

/* ROOT if ONE is NULL (the first) or the same; else "" (several) */
static const char *same_root(const char *one, const char *root)
{
	return !one || strcmp(one, root) == 0 ? root : "";
}

static void check_configs(struct checks *r, const char *dir, int root, bool at_slash)
{
	struct config cfg;
	struct plan_select sel = { .features = "all" };
	/* the vendors this host does not have: one line for all of them (the
	 * package ships a file for each vendor; most hosts have one) */
	struct strv absent = { 0 }, unloaded = { 0 };
	const char *absent_root = NULL, *unloaded_root = NULL;

	config_load_each(&cfg, dir);
	for (size_t i = 0; i < cfg.nbroken; i++)
		advise(r, PROBLEM, "config", "correct the line named, then check again (meanwhile only the "
		       "containers that ask for that vendor fail)", "%s", cfg.broken[i].err.msg);
	if (!cfg.n && !cfg.nbroken)
		advise(r, PROBLEM, "config", "put the vendor configs there (the package's, or NAME.ini files as "
		       "ocidec(1) describes)", "no vendor config in %s", dir);
	for (size_t i = 0; i < cfg.n; i++) {
		const struct vendor *v = &cfg.vendors[i];
		struct plan plan = { 0 };

		r->ec.nvidia |= vendor_answers(v, "NVIDIA_VISIBLE_DEVICES");
		struct oerr err;
		struct stat st;
		size_t devs = 0;

		/* the tenant policy: on a Kubernetes node (kubelet's directory)
		 * any pod sets its own environment */
		if ((v->unprivileged_selection & SRC_ENV) && engine_host_stat(root, "/var/lib/kubelet", &st, true) &&
		    S_ISDIR(st.st_mode))
			advise(r, PROBLEM, v->name,
			    "in the vendor file: selection = mounts annotation env and unprivileged_selection = mounts "
			    "annotation (what ocidec install --tenant-policy kubernetes writes)",
			    "a container without CAP_SYS_ADMIN selects devices through its own environment "
			    "(unprivileged_selection has env): on this Kubernetes node any pod gets any device by "
			    "setting the variable");

		/* given only beside another vendor (only_with): one of those is
		 * configured, or it never activates */
		if (v->only_with.n) {
			bool any = false;

			for (size_t k = 0; k < v->only_with.n && !any; k++)
				any = config_vendor(&cfg, v->only_with.v[k]) != NULL;
			if (!any) {
				_cleanup_free_ char *names = strv_join(&v->only_with, ", ");

				advise(r, PROBLEM, v->name, "install the vendor file it goes with beside it (ocidec install "
				       "--vendor NAME brings it along)", "given only beside %s (only_with in %s), none of "
				       "which is configured in %s: no container gets it through the hook", names, v->file, dir);
			}
		}
		/* a feature's own file whose devices this host lacks (only_with
		 * and only_where: NVIDIA's gated features without their
		 * driver): information, as on most hosts */
		if (at_slash && v->only_with.n && !vendor_here(v)) {
			strv_push(&unloaded, v->name);
			unloaded_root = same_root(unloaded_root, v->driver_root);
			continue;
		}
		/* another platform's file (only_where, not_where): fine where a
		 * vendor of the same kind serves this one; a problem where it is
		 * the only one of its kind */
		if (at_slash && !vendor_here(v)) {
			bool siblings;
			const struct vendor *w = config_kind_here(&cfg, v, &siblings);

			if (w || siblings)
				say(r, INFO, v->name, NULL, "not this platform's (%s%s%s in %s): %s%s", v->only_where.n ? "only_where" : "",
				    v->only_where.n && v->not_where.n ? ", " : "", v->not_where.n ? "not_where" : "", v->file,
				    w ? "served here by " : "nor is any other vendor file of ", w ? w->name : v->cdi_kind);
			else
				advise(r, PROBLEM, v->name, "install the vendor file of this platform beside it (NVIDIA's: the "
				       "shipped nvidia-tegra.ini, nvidia-wsl.ini, which ocidec install --vendor nvidia brings)",
				       "not this platform's (%s in %s), and no other vendor file serves %s: a container "
				       "asking for it gets nothing", v->only_where.n ? "only_where" : "not_where", v->file,
				       v->cdi_kind);
			continue;
		}
		{
			bool there = engine_host_stat(root, v->driver_root, &st, true);
			const char *why = !there ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory" : NULL;

			if (why) {
				advise(r, PROBLEM, v->name, "install the driver, or start the driver container that "
				       "provides it, or correct driver_root", "driver_root %s: %s", v->driver_root, why);
				continue;
			}
		}
		if (!at_slash) {  /* the files under it: only in this process's own view */
			say(r, OK, v->name, NULL, "driver_root %s is there", v->driver_root);
			r->drivers++;
			if (v->cdi_kind) {
				strv_push(&r->ec.kinds, v->cdi_kind);
				strv_push(&r->ec.kind_vendors, v->name);
			}
			continue;
		}

		if (plan_vendor(&plan, v, &sel, &err) < 0) {
			advise(r, PROBLEM, v->name, "correct the vendor file or its driver root", "%s", err.msg);
			plan_free(&plan);
			continue;
		}
		for (size_t k = 0; k < plan.n; k++)
			if (stat(plan.items[k].host, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
				devs++;
		if (!plan.n) {
			strv_push(&absent, v->name);
			absent_root = same_root(absent_root, v->driver_root);
		} else if (!devs)
			advise(r, PROBLEM, v->name, "load the driver's kernel module, which makes the device nodes "
			       "(NVIDIA's: nvidia-modprobe, or nvidia-smi once)",
			    "no device node under %s (%zu files otherwise)", v->driver_root, plan.n);
		else
			say(r, OK, v->name, NULL, "driver_root %s: %zu device node%s, %zu path%s in all", v->driver_root,
			    devs, devs == 1 ? "" : "s", plan.n, plan.n == 1 ? "" : "s");
		if (plan.n && v->cdi_kind) {
			strv_push(&r->ec.kinds, v->cdi_kind);
			strv_push(&r->ec.kind_vendors, v->name);
		}
		r->drivers += plan.n > 0;
		plan_free(&plan);
	}
	if (absent.n || unloaded.n) {
		_cleanup_free_ char *a = strv_join(&absent, ", "), *u = strv_join(&unloaded, ", ");

		say(r, INFO, "vendors", NULL, "not here%s%s%s%s%s%s%s%s%s%s: a container asking for one gets nothing of it",
		    absent.n ? ": " : "", absent.n ? a : "", absent.n ? " (nothing under " : "",
		    absent.n ? (absent_root && *absent_root ? absent_root : "their driver roots") : "",
		    absent.n ? ")" : "", unloaded.n ? (absent.n ? "; " : ": ") : "", unloaded.n ? u : "",
		    unloaded.n ? " (their drivers not loaded: none of their only_where under " : "",
		    unloaded.n ? (unloaded_root && *unloaded_root ? unloaded_root : "their driver roots") : "",
		    unloaded.n ? ")" : "");
	}
	strv_free(&absent);
	strv_free(&unloaded);
	config_free(&cfg);
}

/* ---- the host ---- */

static void check_cgroups(struct checks *r, int root)
{
	struct statfs sf;
	char exe[PATH_MAX] = "";
	bool systemd = readlink("/proc/1/exe", exe, sizeof(exe) - 1) > 0 && strstr(exe, "systemd");
	const char *layout = "none";

	(void)root;
	if (statfs("/sys/fs/cgroup", &sf) == 0) {
		if (sf.f_type == 0x63677270)  /* CGROUP2_SUPER_MAGIC */
			layout = "v2 (unified)";
		else if (statfs("/sys/fs/cgroup/unified", &sf) == 0 && sf.f_type == 0x63677270)
			layout = "hybrid (v1 controllers, v2 mounted)";
		else
			layout = "v1";
	}
	say(r, INFO, "cgroups", NULL, "%s; PID 1 %s: engines %s", layout, systemd ? "is systemd" : "is not systemd",
	    systemd ? "default to the systemd cgroup driver" : "use cgroupfs");
}

static void check_selinux(struct checks *r)
{
	char c = 0;
	_cleanup_close_ int fd = open("/sys/fs/selinux/enforce", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &c, 1) != 1)
		return;
	say(r, INFO, "selinux", c == '1' ? "ocidec selinux-check (labels, module, booleans)" : NULL, "%s",
	    c == '1' ? "enforcing: containers need the vendor's labels and a domain that may use them" :
		       "permissive");
}

/* Does any engine run ocidec here? When none does: the engines this host
 * has, as --runtime names them, in the fix */
static void check_registered(struct checks *r, int root)
{
	_cleanup_free_ char *list = NULL, *fix = NULL;

	if (r->ec.registered)
		return;
	list = engine_words(",", root);
	fix = *list ? xasprintf("ocidec install --runtime %s", list) : NULL;
	say2(r, PROBLEM, "engines", fix, fix ? NULL : "install an engine ocidec registers with (ocidec install "
	     "--runtime help), then ocidec install --runtime ENGINE", "no engine runs ocidec here: no hooks.d file, runtime "
	     "or CDI spec of ocidec's");
}

/* Every check of the host root ROOT (HOST its path; PROC the host's
 * /proc) and the configs in DIR (NULL: the host's) */
static void check_all(struct checks *r, const char *dir, const char *host, int root, int proc)
{
	_cleanup_free_ char *host_dir = NULL;
	struct stat st;

	{
		bool host_rec = engine_host_stat(root, HOST_RECORD, &st, false);
		bool tk = engine_host_stat(root, TOOLKIT_RECORD, &st, false);

		r->toolkit = tk && !host_rec;
		r->ec.installed = tk || host_rec;
	}
	/* the host's configs, not this process's: a toolkit container's view;
	 * where a toolkit container installed ocidec, those it copied (what
	 * the binary it installed reads) */
	if (!dir && strcmp(host, "/") != 0) {
		dir = host_dir = xasprintf("%s%s", host, r->toolkit ? TOOLKIT_CONFIG_DIR : CONFIG_DIR_DEFAULT);
		say(r, INFO, "config", NULL, "the host's vendor configs, %s%s (-c DIR for others)", dir,
		    r->toolkit ? ", which the toolkit's install copied" : "");
	}
	check_configs(r, dir ? dir : config_dir_default(), root, strcmp(host, "/") == 0);
	check_cgroups(r, root);
	r->ec.root = root;
	r->ec.proc = proc;
	for (size_t i = 0; engine_drivers[i]; i++)
		if (engine_drivers[i]->check)
			engine_drivers[i]->check(&r->ec);
	engine_check_cdi(&r->ec);
	/* what a driver kept to say after every engine's lines (Docker that
	 * gives nothing) */
	for (size_t i = 0; engine_drivers[i]; i++)
		if (engine_drivers[i]->check_last)
			engine_drivers[i]->check_last(&r->ec);
	check_selinux(r);
	if (!r->drivers)
		advise(r, PROBLEM, "drivers", "install a vendor's driver (or start its driver container), or a "
		       "vendor config for the device this host has", "no driver found here for any configured "
		       "vendor: a container that asks for one fails");
	check_registered(r, root);
}

APPLET_MAIN(check)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "host-root", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	const char *dir = NULL, *host = "/";
	struct checks r = { .ec.say = engine_line };
	bool json = false;
	int o, root, proc, status;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'R': host = optarg; break;
		case 'j': json = true; break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (optind < argc)
		return applet_usage_error("unexpected argument '%s'", argv[optind]);
	report_init(&r.rep, json);
	root = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || proc < 0) {  /* nothing checked: 3, neither ready nor a problem found */
		oerr_set(err, errno, "%s", root < 0 ? host : "/proc");
		err->code = EXIT_UNKNOWN;
		status = applet_fail(err);  /* said, then the (empty) report */
	} else {
		check_all(&r, dir, host, root, proc);
		status = EXIT_OK;
	}
	status = report_finish(&r.rep, status, "ready", "not ready (each with its fix above)");
	strv_free(&r.ec.kinds);
	strv_free(&r.ec.kind_vendors);
	if (root >= 0)
		close(root);
	if (proc >= 0)
		close(proc);
	return applet_finish_stdout(status);
}
