/* install: put ocidec on a host from a container (a driver or toolkit
 * container, a Kubernetes DaemonSet), and take it off again.
 *
 * See: ocidec-install(1). Everything happens under the host's
 * root directory (--host-root), every path resolved inside it
 * (rootpath.c: the host's absolute symlinks, /usr/local -> /var/usrlocal on
 * CoreOS, stay on the host). Two phases: every input is read and checked and
 * every file's new content computed first (bad input: exit 2, nothing
 * written); then the files are written, each atomically. PREFIX/install.json
 * records, before each write, what was made and what was changed (the
 * original kept as FILE.ocidec-orig, a hard link to the old inode: bytes,
 * mode, owner and label), so that --uninstall removes exactly what was added
 * and restores what was changed. A file that already has the content is not
 * touched: a second install changes nothing.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "engines/engine.h"
#include "engines/engines.h"
#include "engines/instcopy.h"
#include "engines/instapply.h"
#include "engines/instlock.h"
#include "engines/journal.h"
#include "devices/keycache.h"
#include "formats/json.h"
#include "formats/ldconfig.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


const char install_usage[] =
	"usage: ocidec install [--runtime LIST]... [--runtime-name NAME] [--set-as-default]\n"
	"           [--enable-cdi] [--restart] [--restart-timeout S] [--hooks-dir D]\n"
	"           [--lock-timeout S]\n"
	"       ocidec install --uninstall [--restart] [--restart-timeout S]\n"
	"       ocidec install --host-root DIR [--prefix P] [--driver-root PATH]\n"
	"           [--runtime LIST]... [--runtime-name NAME] [--set-as-default] [--enable-cdi]\n"
	"           [--hooks-dir D] [-c DIR] [--vendor NAME]... [--tenant-policy open|kubernetes]\n"
	"           [--wait] [--lock-timeout S]\n"
	"       ocidec install --host-root DIR [--prefix P] --uninstall\n"
	"\n"
	"On the host (no --host-root): registers this installed ocidec (the package's,\n"
	"or make install's: its ocidec-hook and ocidec-runtime beside it) and the\n"
	"configs it reads (" CONFIG_DIR_DEFAULT ") with each engine in LIST, copying\n"
	"nothing; the record in " HOST_STATE_DIR "/install.json.\n"
	"From a driver or toolkit container (--host-root DIR, the host's / as it\n"
	"sees it): copies this binary to P/bin/ocidec (links ocidec-hook,\n"
	"ocidec-runtime) and the vendor configs of -c DIR to P/etc/ocidec.d (which a\n"
	"binary in P/bin reads by default), then registers them; P/install.json\n"
	"records what was done.\n"
	"A changed file is kept as FILE.ocidec-orig. A second run changes nothing.\n"
	"One install or uninstall runs at a time on a host (a lock only root may open:\n"
	"/run/ocidec-install.lock). It says which engine must reload or restart.\n"
	"\n"
	"  --runtime LIST        engines, comma-separated, repeatable (default podman);\n"
	"                        `--runtime help` lists them, what each gets registered\n"
	"  --runtime-name NAME   Docker's and containerd's name of the shim (default ocidec;\n"
	"                        nvidia for scripts written for NVIDIA's toolkit)\n"
	"  --set-as-default      the engine's default runtime: Docker's default-runtime,\n"
	"                        containerd's default_runtime_name (docker run and pods\n"
	"                        without a runtime get their devices)\n"
	"  --enable-cdi          CDI on in the engine: Docker's features.cdi (Docker 25 and\n"
	"                        later), containerd's enable_cdi; podman and CRI-O need nothing\n"
	"  --restart             then restart the engines whose files changed (systemctl\n"
	"                        restart, their start limit reset first; where a reload\n"
	"                        does, systemctl try-reload-or-restart, or SIGHUP to dockerd\n"
	"                        without systemd), and wait until each answers on its socket;\n"
	"                        on the host only\n"
	"  --restart-timeout S   wait at most S seconds for each (default 60)\n"
	"  --hooks-dir D         the hooks dir, instead of the above\n"
	"  --host-root DIR       the host's root directory, from a container: copy, then register\n"
	"  --prefix P            (--host-root) where on the host (default /usr/local/ocidec)\n"
	"  --driver-root PATH    (--host-root) driver_root of every installed config (a host\n"
	"                        path; empty: the configs' own); container: each vendor's\n"
	"                        driver_container_root (nvidia.ini: /run/nvidia/driver), the\n"
	"                        others their own; auto: the same where that root is there,\n"
	"                        else the vendor's own, said\n"
	"  -c, --config-dir DIR  (--host-root) the configs to install (default " CONFIG_DIR_DEFAULT ")\n"
	"  --vendor NAMES        (--host-root) install these vendors only (comma-separated,\n"
	"                        repeatable; default all), with their other platforms'\n"
	"                        files (nvidia: nvidia-tegra.ini and nvidia-wsl.ini, inert\n"
	"                        where their platform is not)\n"
	"  --tenant-policy P     (--host-root) open (default): the configs as they are;\n"
	"                        kubernetes: a container without CAP_SYS_ADMIN selects devices\n"
	"                        only through a device plugin's mounts or annotation, never its\n"
	"                        own environment (selection, unprivileged_selection), and shares\n"
	"                        no writable IPC directory (unprivileged_ipc_writable = false)\n"
	"  --uninstall           remove what the record names, restore what was changed\n"
	"  --wait                after installing, wait for SIGTERM or SIGINT (with nri: as the\n"
	"                        NRI plugin, named NAME), then uninstall unless a newer install\n"
	"                        has taken over (a DaemonSet's container);\n"
	"                        SIGTERM while waiting for the lock ends it, nothing done\n"
	"  --lock-timeout S      wait at most S seconds for another install (default 120)\n";


struct inst {
	struct engine_plan p;      /* the host root, what was asked, the files to write */
	char owner[INSTLOCK_OWNER];  /* this install's token in install.json */
	bool tenant_kubernetes;    /* --tenant-policy kubernetes */
	char *bin;                 /* p.bin's (host mode: this binary's directory) */
	char *recorded_name;       /* p.recorded_name's */
	bool name_given;           /* --runtime-name */
	char *name_kept;           /* the runtime name the last install recorded */
	bool restart;              /* --restart */
	bool uninstalled;          /* --uninstall removed the record */
	unsigned lock_timeout;     /* --lock-timeout, seconds */
	unsigned restart_timeout;  /* --restart-timeout, seconds */
	char *state_path;
	struct journal j;          /* install.json (journal.h) */
	int changes;
};

/* each driver with its run (engine.h) */
#define each_driver(i) (size_t i = 0; engine_drivers[i]; i++)

/* ---- what to write ---- */

/* The last install's record on this host (its install.json), or NULL */
static cJSON *recorded(struct inst *in)
{
	_cleanup_free_ char *text = engine_host_read(in->p.root, in->state_path);

	return text ? cJSON_Parse(text) : NULL;
}

/* An install run again keeps what the last one set: its runtime name
 * (unless --runtime-name), and what the drivers read of its record
 * (Docker's default runtime and CDI; containerd's drop-in carries its
 * own, ctrd_carry); only --uninstall takes them back */
static void carry_recorded(struct inst *in)
{
	cJSON *j = recorded(in);
	const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(j, "runtime_name"));

	if (!in->name_given && n && *n && strcmp(n, in->p.runtime_name) != 0) {
		free(in->name_kept);
		in->p.runtime_name = in->name_kept = xstrdup(n);
	}
	free(in->recorded_name);
	in->p.recorded_name = in->recorded_name = n && *n ? xstrdup(n) : NULL;
	cJSON_Delete((cJSON *)in->p.recorded);
	in->p.recorded = j;
}

/* What each engine asked needs written (its driver's plan) */
static int plan_engines(struct inst *in, struct oerr *err)
{
	for each_driver(i)
		if ((in->p.run[i].asked = engine_driver_asked(in->p.rts, i)) && engine_drivers[i]->plan &&
		    engine_drivers[i]->plan(&in->p, &in->p.run[i], err) < 0)
			return -1;
	return 0;
}

/* ---- uninstall ---- */

static int uninstall(struct inst *in, struct oerr *err)
{
	int have = journal_load(&in->j, in->p.root, in->state_path, err), n;

	struct strv files = { 0 };

	if (have < 0)
		return -1;
	if (!have) {  /* uninstalled already, or never installed: nothing to undo */
		out("ocidec install: nothing to uninstall (no install record %s)\n", in->state_path);
		return 0;
	}
	have = engine_check_record(&in->p, &in->j, in->state_path, &files, err);
	strv_free(&files);
	if (have < 0)
		return -1;
	if (!in->p.host_mode)   /* the idle path's index of the configs goes with them */
		keycache_forget(in->p.root, in->p.prefix);
	/* what the record says each engine needs when it is taken back */
	for each_driver(i)
		if (engine_drivers[i]->undoing)
			engine_drivers[i]->undoing(&in->p.run[i], in->j.state);
	n = cJSON_GetArraySize(in->j.files);
	for (int i = n - 1; i >= 0; i--) {
		if (instapply_undo(&in->p, &in->j, cJSON_GetArrayItem(in->j.files, i), in->state_path, out, err) < 0)
			return -1;
		cJSON_DeleteItemFromArray(in->j.files, i);
		if (journal_save(&in->j, err) < 0)
			return -1;
	}
	{
		_cleanup_free_ char *dir = path_dir(in->state_path);
		_cleanup_close_ int dfd = root_open(in->p.root, dir, O_PATH | O_DIRECTORY);
		if (dfd < 0 || unlinkat(dfd, "install.json", 0) < 0)
			return oerr_set(err, errno, "%s", in->state_path);
		in->uninstalled = true;
	}
	n = cJSON_GetArraySize(in->j.dirs);
	for (int i = n - 1; i >= 0; i--) {
		const char *d = cJSON_GetStringValue(cJSON_GetArrayItem(in->j.dirs, i));
		if (d && engine_clean_path(d) && journal_remove_dir(&in->j, i))
			out("removed %s/\n", d);
	}
	if (!in->restart)
		engine_mark_unread(&in->p);
	out("ocidec install: uninstalled from %s\n", in->p.prefix);
	engine_hints(&in->p, in->restart, "without ocidec's runtime", out);
	engine_uninstalled(&in->p, in->j.state, out);
	return 0;
}

/* ---- main ---- */

static int install(struct inst *in, struct oerr *err)
{
	_cleanup_free_ char *cdir = xasprintf("%s/etc/ocidec.d/", in->p.prefix);
	int have = journal_load(&in->j, in->p.root, in->state_path, err);
	bool pending = false;

	if (have < 0)
		return -1;
	/* the latest install owns the record: a --wait that is not it (a
	 * DaemonSet's old pod, during a surge) does not uninstall */
	if (!cJSON_IsString(cJSON_GetObjectItem(in->j.state, "owner")) ||
	    strcmp(cJSON_GetObjectItem(in->j.state, "owner")->valuestring, in->owner) != 0 ||
	    strcmp(engine_state_runtime_name(in->j.state), in->p.runtime_name) != 0) {
		cJSON_DeleteItemFromObject(in->j.state, "owner");
		cJSON_AddStringToObject(in->j.state, "owner", in->owner);
		cJSON_DeleteItemFromObject(in->j.state, "runtime_name");
		cJSON_AddStringToObject(in->j.state, "runtime_name", in->p.runtime_name);
		in->changes += have > 0;
	}
	/* an earlier --restart that could not: still to do (its hint, this
	 * run's --restart) */
	pending = engine_pending(&in->p, in->j.state);
	engine_record(&in->p, in->j.state);
	if (instapply_prefix(&in->p, &in->j, err) < 0)
		return -1;
	for (size_t i = 0; i < in->p.n; i++) {
		int r = instapply_action(&in->p, &in->j, &in->p.a[i], out, err);

		if (r < 0)
			return -1;
		in->changes += r;
	}
	/* configs an earlier install put there that this one does not */
	for (int i = cJSON_GetArraySize(in->j.files) - 1; i >= 0; i--) {
		cJSON *e = cJSON_GetArrayItem(in->j.files, i);
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		bool keep = !p || strncmp(p, cdir, strlen(cdir)) != 0;

		for (size_t k = 0; k < in->p.n && !keep; k++)
			keep = strcmp(in->p.a[k].path, p) == 0;
		if (keep)
			continue;
		if (instapply_undo(&in->p, &in->j, e, in->state_path, out, err) < 0)
			return -1;
		cJSON_DeleteItemFromArray(in->j.files, i);
		in->changes++;
	}
	/* what an earlier --restart left undone: this run's hint or
	 * --restart; said once without --restart, then off the record */
	if (pending && !in->restart)
		cJSON_DeleteItemFromObject(in->j.state, "pending");
	if (!have || in->changes || (pending && !in->restart))
		if (journal_save(&in->j, err) < 0)
			return -1;
	if (in->changes && in->p.host_mode)
		out("ocidec install: %d change%s: %s/ocidec registered, as it is installed (the record in %s)\n",
		    in->changes, in->changes == 1 ? "" : "s", in->bin, in->state_path);
	else if (in->changes)
		out("ocidec install: %d change%s under %s\n", in->changes, in->changes == 1 ? "" : "s", in->p.prefix);
	else
		out("ocidec install: nothing to change\n");
	engine_hints(&in->p, in->restart, NULL, out);
	return 0;
}

/* --restart after the engines' files changed: each of them, and every
 * one that could not be named in the error */
static int restart_engines(struct inst *in, struct oerr *err)
{
	cJSON *pending = NULL;
	char *failed = engine_restart_changed(&in->p, in->restart_timeout, out, &pending);

	/* an install record: what is pending goes in it (uninstall has none left) */
	if (in->j.state && cJSON_GetObjectItem(in->j.state, "files") && !in->uninstalled) {
		struct oerr e2;

		cJSON_DeleteItemFromObject(in->j.state, "pending");
		if (pending)
			cJSON_AddItemToObject(in->j.state, "pending", pending), pending = NULL;
		if (journal_save(&in->j, &e2) < 0 && !failed)
			failed = xstrdup(e2.msg);
	}
	cJSON_Delete(pending);
	if (failed) {
		oerr_set(err, 0, "%s", failed);
		free(failed);
		return -1;
	}
	return 0;
}

/* Is the install on the host still this one (its record names our owner
 * token)? */
static bool owned(struct inst *in)
{
	struct oerr e;
	int have = journal_load(&in->j, in->p.root, in->state_path, &e);
	const char *o = have > 0 ? cJSON_GetStringValue(cJSON_GetObjectItem(in->j.state, "owner")) : NULL;
	bool r = o ? strcmp(o, in->owner) == 0 : have > 0;

	journal_free(&in->j);
	return r;
}

/* The options that go together, as the usage says; EXIT_OK or the usage
 * error's status */
static int check_args(const struct inst *in, const char *host, const char *hooks_dir, const char *driver_root,
		      bool undo, bool wait)
{
	struct oerr e;

	(void)host;
	if (!engine_clean_path(in->p.prefix) || strcmp(in->p.prefix, "/") == 0)
		return applet_usage_error("--prefix %s: not a clean absolute path", in->p.prefix);
	if (hooks_dir && !engine_clean_path(hooks_dir))
		return applet_usage_error("--hooks-dir %s: not a clean absolute path", hooks_dir);
	if (driver_root && !engine_clean_path(driver_root) && strcmp(driver_root, "/") != 0 && strcmp(driver_root, "auto") != 0 &&
	    strcmp(driver_root, "container") != 0)
		return applet_usage_error("--driver-root %s: not a clean absolute path", driver_root);
	if (undo && wait)
		return applet_usage_error("--uninstall and --wait: one or the other");
	if (engine_runtime_name_check(in->p.runtime_name, &e) < 0)
		return applet_usage_error("%s", e.msg);
	return EXIT_OK;
}

static void inst_free(struct inst *in)
{
	engine_plan_free(&in->p);
	free(in->name_kept);
	free(in->recorded_name);
	free(in->bin);
	free(in->state_path);
	journal_free(&in->j);
}

/* An engine asked for that needs nothing registered (NRI) without
 * --wait: what runs it (0) */
static int engine_notes(const struct inst *in)
{
	for each_driver(i)
		if ((in->p.rts & engine_driver_rts(engine_drivers[i])) && engine_drivers[i]->note)
			out("%s\n", engine_drivers[i]->note);
	return 0;
}

/* --wait, installed: the lock let go, then at SIGTERM or SIGINT the install
 * undone, unless a newer one owns the prefix now. With NRI the plugin runs
 * meanwhile: started again when it fails, not when it handed its
 * connection over to a newer pod's plugin. */
static int wait_uninstall(struct inst *in, const char *host, bool nri, sigset_t *sigs, int *lockfd, struct oerr *err)
{
	struct engine_serve s = { .host = host, .prefix = in->p.prefix, .bin = in->bin, .name = in->p.runtime_name };
	int sig;

	applet_finish_stdout(EXIT_OK);
	close(*lockfd);
	*lockfd = -1;
	sig = engine_wait(sigs, nri ? &s : NULL);
	journal_free(&in->j);
	if (instlock_take(in->p.root, host, in->lock_timeout, NULL, NULL, lockfd, out, err) < 0)
		return -1;
	if (!owned(in)) {
		out("ocidec install: signal %d: a newer install owns %s: left in place\n", sig, in->p.prefix);
		return 0;
	}
	out("ocidec install: signal %d: uninstalling\n", sig);
	if (nri)   /* the specs its plugin kept true go with it */
		engine_nri_specs_off(&s);
	return uninstall(in, err);
}

/* What install's command line asks, besides what goes into struct inst */
struct install_args {
	const char *host, *cdir, *driver_root, *hooks_dir;
	const char *toolkit_opt;   /* an option of the copying (toolkit container's) mode */
	struct strv vendors;
	bool undo, wait, runtimes;  /* (runtimes: --runtime help) */
	unsigned rts;
};

/* The command line into IN and A: EXIT_OK, or a usage error's status
 * (said) */
static int install_options(int argc, char **argv, struct inst *in, struct install_args *a)
{
	_cleanup_free_ char *bad = NULL;
	static const struct option opts[] = {
		{ "host-root", required_argument, NULL, 'R' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "driver-root", required_argument, NULL, 'D' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "hooks-dir", required_argument, NULL, 'H' },
		{ "config-dir", required_argument, NULL, 'c' },
		{ "vendor", required_argument, NULL, 'v' },
		{ "uninstall", no_argument, NULL, 'U' },
		{ "wait", no_argument, NULL, 'W' },
		{ "runtime-name", required_argument, NULL, 'N' },
		{ "tenant-policy", required_argument, NULL, 'T' },
		{ "lock-timeout", required_argument, NULL, 'L' },
		{ "set-as-default", no_argument, NULL, 'd' },
		{ "enable-cdi", no_argument, NULL, 'C' },
		{ "restart", no_argument, NULL, 'X' },
		{ "restart-timeout", required_argument, NULL, 'Y' },
		{ 0 },
	};
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		switch (o) {
		case 'R': a->host = optarg; break;
		case 'P': in->p.prefix = optarg, a->toolkit_opt = "--prefix"; break;
		case 'D':  /* empty: the configs' own (a ConfigMap's unset value) */
			if (*optarg)
				a->driver_root = optarg, a->toolkit_opt = "--driver-root";
			break;
		case 'H': a->hooks_dir = optarg; break;
		case 'c': a->cdir = optarg, a->toolkit_opt = "-c"; break;
		case 'v': strv_split(&a->vendors, optarg, ", "), a->toolkit_opt = "--vendor"; break;
		case 'd': in->p.set_default = true; break;
		case 'C': in->p.enable_cdi = true; break;
		case 'X': in->restart = true; break;
		case 'U': a->undo = true; break;
		case 'W': a->wait = true, a->toolkit_opt = "--wait"; break;
		case 'N': in->p.runtime_name = optarg, in->name_given = true; break;
		case 'L':
		case 'Y': {
			char *end;
			unsigned long t = strtoul(optarg, &end, 10);
			if (!*optarg || *end || t > 86400)
				return applet_usage_error("--%s %s: seconds, 0 to 86400", o == 'L' ? "lock-timeout" :
							  "restart-timeout", optarg);
			*(o == 'L' ? &in->lock_timeout : &in->restart_timeout) = (unsigned)t;
			break;
		}
		case 'T':
			if (strcmp(optarg, "kubernetes") != 0 && strcmp(optarg, "open") != 0)
				return applet_usage_error("--tenant-policy %s: open or kubernetes", optarg);
			in->tenant_kubernetes = strcmp(optarg, "kubernetes") == 0;
			a->toolkit_opt = "--tenant-policy";
			break;
		case 'r':
			if (strcmp(optarg, "help") == 0) {
				a->runtimes = true;
				break;
			}
			if ((bad = engine_runtime_words(optarg, &a->rts))) {
				_cleanup_free_ char *words = engine_words(", ", -1);
				return applet_usage_error("--runtime %s: not one of %s", bad, words);
			}
			break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (optind < argc)
		return applet_usage_error("unexpected argument '%s'", argv[optind]);
	/* the record's engines are given back together: one alone would leave
	 * the others naming ocidec with no record left to undo them */
	if (a->undo && a->rts)
		return applet_usage_error("--uninstall gives back every engine the install record names: no --runtime "
					  "with it");
	if ((o = check_args(in, a->host, a->hooks_dir, a->driver_root, a->undo, a->wait)) != EXIT_OK)
		return o;
	if (in->restart && a->host && strcmp(a->host, "/") != 0)
		return applet_usage_error("--restart: the engines of a host root (%s) are its own to restart", a->host);
	return EXIT_OK;
}

/* Where IN installs to: on the host itself (no --host-root), this installed
 * binary and its config dir registered where they are, nothing copied,
 * the record in /var/lib/ocidec; from a toolkit container, its copies
 * under --prefix. EXIT_OK, a usage error's status (said), or -1 (ERR) */
static int install_where(struct inst *in, struct install_args *a, struct oerr *err)
{
	in->p.host_mode = !a->host;
	if (!in->p.host_mode) {
		in->bin = xasprintf("%s/bin", in->p.prefix);
		return EXIT_OK;
	}
	if (a->toolkit_opt && strcmp(a->toolkit_opt, "--wait") == 0)
		return applet_usage_error("--wait: installed until SIGTERM is the toolkit container's "
					  "(--host-root DIR, a DaemonSet's pod); on the host, an install stays until "
					  "ocidec install --uninstall");
	if (a->toolkit_opt)
		return applet_usage_error("%s: copying configs is the toolkit container's (--host-root DIR); on "
					  "the host, ocidec registers itself and its %s as they are (edit them there)",
					  a->toolkit_opt, a->cdir);
	a->host = "/";
	in->p.prefix = HOST_STATE_DIR;
	in->p.cdir = a->cdir;
	if (!a->undo && instcopy_host_binary(&in->bin, err) < 0)
		return -1;
	if (a->undo) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		in->bin = path_dir(exe);
	}
	/* the host's engines are root's; a user's own dockerd (rootless
	 * Docker) reads that user's daemon.json, which the user edits: said,
	 * instead of the lock's "permission denied" */
	if (geteuid() != 0)
		return oerr_set(err, 0, "registering ocidec with the host's engines is root's: run it as root. A "
				"user's rootless dockerd is registered by that user, in its own daemon.json "
				"($XDG_CONFIG_HOME/docker/daemon.json): \"runtimes\": {\"ocidec\": {\"path\": "
				"\"%s/ocidec-runtime\"}} (ocidec-install(1), ROOTLESS DOCKER)",
				in->bin);
	in->p.has_nvidia = instcopy_host_nvidia(in->p.cdir);
	return EXIT_OK;
}

/* The install (or uninstall) A asks, one at a time on a host (a
 * DaemonSet's rolling update: the old pod uninstalling while the new one
 * installs): 0, or -1 (ERR) */
static int install_run(struct inst *in, struct install_args *a, struct oerr *err)
{
	struct instcopy copy;
	_cleanup_close_ int lockfd = -1;
	sigset_t sigs;
	int sig = 0;

	in->p.bin = in->bin;
	in->p.root = open(a->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	in->state_path = xasprintf("%s/install.json", in->p.prefix);
	if (in->p.root < 0)
		return oerr_set(err, errno, "--host-root %s", a->host);
	if ((a->wait && instlock_wait_prepare(&sigs, in->owner, err) < 0) ||
	    instlock_take(in->p.root, a->host, in->lock_timeout, a->wait ? &sigs : NULL, &sig, &lockfd, out,
			  err) < 0)
		return -1;
	if (a->undo)
		return uninstall(in, err) < 0 || (in->restart && restart_engines(in, err) < 0) ? -1 : 0;
	/* everything read and checked before anything is written */
	copy = (struct instcopy){ .cdir = a->cdir, .names = a->vendors.v, .nnames = (int)a->vendors.n,
				  .driver_root = a->driver_root, .tenant_kubernetes = in->tenant_kubernetes, .say = out };
	in->p.rts = a->rts ? a->rts : engine_runtime_word("podman");
	in->p.hooks_dir = a->hooks_dir;
	carry_recorded(in);
	return (!in->p.host_mode && (instcopy_binary(&in->p, err) < 0 || instcopy_configs(&in->p, &copy, err) < 0)) ||
	       plan_engines(in, err) < 0 || install(in, err) < 0 ||
	       (in->restart && restart_engines(in, err) < 0) ||
	       (!a->wait && engine_notes(in)) ||
	       (a->wait && wait_uninstall(in, a->host, a->rts & engine_driver_rts(&engine_nri), &sigs, &lockfd, err) < 0) ? -1 : 0;
}

static void install_args_free(struct install_args *a)
{
	strv_free(&a->vendors);
}

APPLET_MAIN(install)
{
	__attribute__((cleanup(inst_free))) struct inst in = { .p = { .root = -1, .prefix = PREFIX_DEFAULT,
								       .runtime_name = "ocidec" },
							       .owner = "install",
							       .lock_timeout = 120,
							       .restart_timeout = 60 };
	__attribute__((cleanup(install_args_free))) struct install_args a = { .cdir = config_dir_default() };
	int status;

	if ((status = install_options(argc, argv, &in, &a)) != EXIT_OK)
		return status;
	if (a.runtimes) {
		engine_usage();
		return applet_finish_stdout(EXIT_OK);
	}
	if ((status = install_where(&in, &a, err)) != EXIT_OK)
		return status;
	if (install_run(&in, &a, err) < 0)
		return APPLET_FAILED;
	return applet_finish_stdout(EXIT_OK);
}
