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
#include "common/report.h"
#include "common/config.h"
#include "common/ctrd.h"
#include "common/engines.h"
#include "common/json.h"
#include "common/log.h"
#include "common/plan.h"
#include "common/rootfile.h"
#include "common/rootpath.h"

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
	"each engine's registration as that engine reads it (podman's hooks dirs,\n"
	"Docker's daemon.json and whether dockerd must reload or restart,\n"
	"containerd's configuration as `containerd config dump` prints it and\n"
	"whether containerd must restart), CDI specs gone stale, SELinux. Every\n"
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

#define TOOLKIT_RECORD "/usr/local/ocidec/install.json"
#define HOST_RECORD "/var/lib/ocidec/install.json"   /* ocidec install on the host itself */
#define NVIDIA_HOOK_USR "/usr/bin/nvidia-container-runtime-hook"   /* NVIDIA's own */
#define TOOLKIT_CONFIG_DIR "/usr/local/ocidec/etc/ocidec.d"   /* (install's default --prefix) */

struct checks {
	struct report rep;  /* what is found, as check and selinux-check say it (report.h) */
	bool registered;   /* an engine runs ocidec: a hook, a runtime or a spec of ours */
	char *docker_none; /* a running dockerd gives no docker run a vendor: why (a problem
			    * where no other engine runs ocidec either, else information) */
	int drivers;       /* vendors with a driver here */
	bool nvidia;       /* a vendor named nvidia (Docker's --gpus) */
	bool toolkit;      /* a toolkit container installed ocidec here (TOOLKIT_RECORD) */
	bool installed;    /* ocidec install has run here (TOOLKIT_RECORD or HOST_RECORD) */
	struct strv kinds, kind_vendors;  /* the CDI kinds of vendors with a driver here, and their names */
};

static bool host_stat(int root, const char *path, struct stat *st, bool follow)
{
	_cleanup_close_ int fd = follow ? root_open(root, path, O_PATH) : root_open(root, path, O_PATH | O_NOFOLLOW);

	return fd >= 0 && fstat(fd, st) == 0;
}

/* S as one shell word: as it is where it holds nothing a shell reads
 * otherwise, else in single quotes, a quote in it as '"'"' (a fix is
 * pasted into a shell; a file name must stay a name). malloc'd; NULL where
 * S holds a control character (the text output escapes it) */
static char *shell_word(const char *s)
{
	size_t n = 3;
	char *out, *o;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+-@%") == strlen(s))
		return xstrdup(s);
	/* a control character prints escaped: no word to paste */
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return NULL;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 5 : 1;
	o = out = xmalloc(n);
	*o++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {  /* (no backslash: the text output escapes those) */
			memcpy(o, "'\"'\"'", 5);
			o += 5;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* The install command that registers ENGINE's runtime NAME again */
static char *install_fix(const char *eng, const char *name)
{
	_cleanup_free_ char *q = name ? shell_word(name) : NULL;

	if (!name || strcmp(name, "ocidec") == 0 || !q)
		return xasprintf("ocidec install --runtime %s", eng);
	return xasprintf("ocidec install --runtime %s --runtime-name %s", eng, q);
}

/* What a runtime's binary PATH (in the host root) is: no shim's name at
 * all, ocidec's (ocidec-runtime, or NVIDIA's name linked to ocidec), or
 * NVIDIA's own nvidia-container-runtime; and whether it is there */
enum shim_kind { NOT_SHIM, OURS, OURS_GONE, NVIDIAS, NVIDIAS_GONE };

static enum shim_kind shim_kind(int root, const char *path)
{
	const char *base;
	bool ours_name;
	struct stat st;

	/* a bare name (NVIDIA's documents write "nvidia-container-runtime"):
	 * the first on dockerd's PATH, as dockerd finds it; none there: gone */
	if (path && !strchr(path, '/') && (strcmp(path, "ocidec-runtime") == 0 ||
					  strcmp(path, "nvidia-container-runtime") == 0)) {
		static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
						    "/sbin", "/bin" };

		for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
			_cleanup_free_ char *full = xasprintf("%s/%s", dirs[i], path);

			if (host_stat(root, full, &st, true))
				return shim_kind(root, full);
		}
		return path[0] == 'o' ? OURS_GONE : NVIDIAS_GONE;
	}
	base = path ? strrchr(path, '/') : NULL;
	ours_name = base && strcmp(base, "/ocidec-runtime") == 0;

	if (!base || (!ours_name && strcmp(base, "/nvidia-container-runtime") != 0))
		return NOT_SHIM;
	if (!host_stat(root, path, &st, false))
		return ours_name ? OURS_GONE : NVIDIAS_GONE;
	if (S_ISLNK(st.st_mode)) {
		_cleanup_free_ char *dir = xstrndup(path, (size_t)(base - path));
		_cleanup_close_ int dfd = root_open(root, *dir ? dir : "/", O_PATH | O_DIRECTORY);
		char text[PATH_MAX];
		ssize_t l = dfd >= 0 ? readlinkat(dfd, base + 1, text, sizeof(text) - 1) : -1;
		const char *tb;

		if (l < 0)
			return ours_name ? OURS_GONE : NVIDIAS_GONE;
		text[l] = '\0';
		tb = strrchr(text, '/') ? strrchr(text, '/') + 1 : text;
		ours_name |= strcmp(tb, "ocidec") == 0 || strcmp(tb, "ocidec-runtime") == 0;
		if (!host_stat(root, path, &st, true))
			return ours_name ? OURS_GONE : NVIDIAS_GONE;
	}
	return ours_name ? OURS : NVIDIAS;
}

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

static void say(struct checks *r, enum status st, const char *what, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void advise(struct checks *r, enum status st, const char *what, const char *todo, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void say2(struct checks *r, enum status st, const char *what, const char *fix, const char *todo,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* a line whose fix is a command */
static void say(struct checks *r, enum status st, const char *what, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(r, st, what, fix, NULL, fmt, ap);
	va_end(ap);
}

/* a line whose fix is in words: no command does it */
static void advise(struct checks *r, enum status st, const char *what, const char *todo, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(r, st, what, NULL, todo, fmt, ap);
	va_end(ap);
}

static void say2(struct checks *r, enum status st, const char *what, const char *fix, const char *todo,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(r, st, what, fix, todo, fmt, ap);
	va_end(ap);
}

/* A problem ENGINE's daemon has until it reads its configuration again
 * (RESTART: a restart; else a reload), with FIRST (a command, NULL: none)
 * to run before: the command this host takes, or, without one, words */
static void say_apply(struct checks *r, int root, enum engine_id id, bool restart, const char *first,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void say_apply(struct checks *r, int root, enum engine_id id, bool restart, const char *first,
		      const char *fmt, ...)
{
	const struct engine *e = engine(id);
	_cleanup_free_ char *cmd = engine_apply_command(root, e, restart), *fix = NULL, *todo = NULL;
	va_list ap;

	if (cmd)
		fix = first ? xasprintf("%s && %s", first, cmd) : xstrdup(cmd);
	else {
		fix = first ? xstrdup(first) : NULL;
		todo = xasprintf("%s%s %s the way this host starts it (no systemd, no init script of its own here)",
				 first ? "then " : "", restart ? "restart" : "reload (or restart)", e->daemon);
	}
	va_start(ap, fmt);
	vsay(r, PROBLEM, e->name, fix, todo, fmt, ap);
	va_end(ap);
}

/* PID's FILE under PROC into BUF (SIZE, NUL-terminated); false: none */
static bool proc_read(int proc, const char *pid, const char *file, char *buf, size_t size)
{
	char path[300];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", pid, file);
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, size - 1) : -1;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The start of the oldest process named COMM (its /proc/PID/comm), in
 * nanoseconds since the epoch; 0: none runs.  The start is in clock
 * ticks since boot (/proc/PID/stat field 22); the boot clock read next to
 * the wall clock turns it into wall time to the tick (/proc/stat's btime
 * is whole seconds and would put the start up to two seconds early). */
static int64_t started(int proc, const char *comm)
{
	DIR *d = fdopendir(dup(proc));
	struct dirent *e;
	struct timespec now, boot;
	int64_t best = 0, base;
	long hz = sysconf(_SC_CLK_TCK);
	char buf[4096];

	if (!d)
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0) {
		closedir(d);
		return 0;
	}
	base = (now.tv_sec - boot.tv_sec) * INT64_C(1000000000) + (now.tv_nsec - boot.tv_nsec);
	if (hz <= 0)
		hz = 100;
	rewinddir(d);  /* the descriptor's offset is shared with PROC's */
	while ((e = readdir(d))) {
		char name[64];
		unsigned long long start;
		char *p;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !proc_read(proc, e->d_name, "comm", name, sizeof(name)))
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, comm) != 0 || !proc_read(proc, e->d_name, "stat", buf, sizeof(buf)))
			continue;
		/* the host's daemon: root's, in PID 1's namespace (not a user's
		 * program of that name, nor a kind node's containerd) */
		{
			struct stat ps;
			char lp[300], mine[64] = "", init[64] = "";
			ssize_t a, b;

			snprintf(lp, sizeof(lp), "%s/ns/pid", e->d_name);
			a = readlinkat(proc, lp, mine, sizeof(mine) - 1);
			b = readlinkat(proc, "1/ns/pid", init, sizeof(init) - 1);
			if (fstatat(proc, e->d_name, &ps, 0) < 0 || ps.st_uid != 0 ||
			    (a > 0 && b > 0 && (a != b || memcmp(mine, init, (size_t)a) != 0)))
				continue;
		}
		/* a containerd dockerd runs for itself reads dockerd's
		 * configuration, not the node's: not the node's containerd */
		p = strrchr(buf, ')');
		if (p && strcmp(comm, "containerd") == 0) {
			char ppid[24], parent[64];
			if (sscanf(p + 2, "%*c %23s", ppid) == 1 && proc_read(proc, ppid, "comm", parent, sizeof(parent)) &&
			    strncmp(parent, "dockerd\n", 8) == 0)
				continue;
		}
		/* field 22, after the command's closing parenthesis */
		for (int f = 2; p && f < 22; f++)
			p = strchr(p + 1, ' ');
		if (!p || sscanf(p + 1, "%llu", &start) != 1)
			continue;
		{
			int64_t t = base + (int64_t)(start / (unsigned long long)hz) * INT64_C(1000000000) +
				    (int64_t)(start % (unsigned long long)hz) * (INT64_C(1000000000) / hz);
			if (!best || t < best)
				best = t;
		}
	}
	closedir(d);
	return best;
}

/* Whether ST was modified after a daemon that started at SINCE (from
 * started()).  The start is known to a clock tick; a change within 50 ms
 * of it counts as before, the daemon had not read its files yet. */
static bool changed_after(const struct stat *st, int64_t since)
{
	return since && (int64_t)st->st_mtim.tv_sec * INT64_C(1000000000) + st->st_mtim.tv_nsec > since + INT64_C(50000000);
}


static char *host_read(int root, const char *path)
{
	struct oerr e;
	char *buf = NULL;
	size_t len;

	return root_read_file(root, path, 16u << 20, &buf, &len, NULL, &e) == 1 ? buf : NULL;
}

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

		r->nvidia |= vendor_answers(v, "NVIDIA_VISIBLE_DEVICES");
		struct oerr err;
		struct stat st;
		size_t devs = 0;

		/* the tenant policy: on a Kubernetes node (kubelet's directory)
		 * any pod sets its own environment */
		if ((v->unprivileged_selection & SRC_ENV) && host_stat(root, "/var/lib/kubelet", &st, true) &&
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
			bool there = host_stat(root, v->driver_root, &st, true);
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
				strv_push(&r->kinds, v->cdi_kind);
				strv_push(&r->kind_vendors, v->name);
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
			strv_push(&r->kinds, v->cdi_kind);
			strv_push(&r->kind_vendors, v->name);
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

/* ---- CDI specs ---- */

struct spec_paths {
	int root;
	size_t n, gone;
	char *first;   /* the first path gone */
};

static void spec_path(struct spec_paths *sp, const cJSON *o, const char *key, const char *fallback)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, key);
	struct stat st;

	if (!cJSON_IsString(p) && fallback)
		p = cJSON_GetObjectItemCaseSensitive(o, fallback);
	if (!cJSON_IsString(p) || p->valuestring[0] != '/' || sp->n >= 4096)
		return;
	sp->n++;
	if (!host_stat(sp->root, p->valuestring, &st, true) && sp->gone++ == 0)
		sp->first = xstrdup(p->valuestring);
}

/* the host paths of one containerEdits: device nodes, mounts, hooks */
static void edits_paths(struct spec_paths *sp, const cJSON *edits)
{
	const cJSON *i;

	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "deviceNodes"))
		spec_path(sp, i, "hostPath", "path");
	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "mounts"))
		spec_path(sp, i, "hostPath", NULL);
	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "hooks"))
		spec_path(sp, i, "path", NULL);
}

/* Specs gone stale: every host path a spec in /etc/cdi or /var/run/cdi
 * names (a driver upgrade takes libcuda.so.535.x away, and each container
 * given a device of the spec fails to start) must be there. JSON specs
 * (ocidec's, and any other vendor's); a YAML one is not read. */
/* The devices of SPEC (of kind KIND, at PATH) into SEEN ("KIND=NAME", the
 * spec's path, ...): one another spec gave already is said once a pair of
 * specs. The CDI library (every engine's) drops a device two specs of one
 * directory define, and every container asking for it fails: a problem;
 * across directories the later one (/var/run/cdi) wins, the other's is
 * shadowed: information, with the command that removes the /etc/cdi
 * copy (stale after the next driver upgrade, whatever it alone names). */
static void cdi_clashes(struct checks *r, const cJSON *spec, const char *kind, const char *path, struct strv *seen)
{
	const cJSON *dev;
	const char *said = NULL;

	cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(spec, "devices")) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dev, "name"));
		_cleanup_free_ char *id = name ? xasprintf("%s=%s", kind, name) : NULL;
		size_t i;

		if (!id)
			continue;
		for (i = 0; i + 1 < seen->n && strcmp(seen->v[i], id) != 0; i += 2)
			;
		if (i + 1 >= seen->n) {
			if (seen->n < 2 * 4096)
				strv_push(seen, id), strv_push(seen, path);
		} else if (!said || strcmp(said, seen->v[i + 1]) != 0) {
			const char *other = seen->v[i + 1], *s1 = strrchr(other, '/'), *s2 = strrchr(path, '/');
			bool one_dir = s1 && s2 && s1 - other == s2 - path && strncmp(other, path, (size_t)(s1 - other)) == 0;
			/* the fix removes the /etc/cdi copy (the refresh keeps /var/run/cdi) */
			_cleanup_free_ char *q = shell_word(strncmp(path, "/etc/", 5) == 0 ? path : other);
			_cleanup_free_ char *fix = q ? xasprintf("rm %s", q) : NULL;

			said = other;
			if (one_dir)
				say(r, PROBLEM, "cdi", fix, "%s and %s both give %s (and maybe more): engines drop a "
				    "device two specs of one directory define, and every container asking for it "
				    "fails; keep one", other, path, id);
			else
				say(r, INFO, "cdi", fix, "%s and %s both give %s (and maybe more): the engines take "
				    "%s's, the other's is shadowed (and goes stale at the next driver upgrade); keep "
				    "one (ocidec's refresh keeps /var/run/cdi)", other, path, id, "/var/run/cdi");
		}
	}
}

/* A YAML spec (SPECS: path, kind pairs, in the engines' order) of the kind
 * of another spec: in one directory the engines drop every device both
 * name (NVIDIA's spec and ocidec's name theirs alike: 0, all, the UUIDs);
 * across directories /var/run/cdi's shadows /etc/cdi's. The YAML one is
 * the one to remove (nvidia-ctk's, ocidec's own are JSON). */
static void yaml_clashes(struct checks *r, const struct strv *specs)
{
	for (size_t i = 0; i + 1 < specs->n; i += 2) {
		const char *p = specs->v[i], *e = strrchr(p, '.');

		if (!e || strcmp(e, ".json") == 0)
			continue;
		for (size_t j = 0; j + 1 < specs->n; j += 2) {
			const char *o = specs->v[j], *s1 = strrchr(o, '/'), *s2 = strrchr(p, '/');
			bool one_dir = s1 - o == s2 - p && strncmp(o, p, (size_t)(s1 - o)) == 0;
			_cleanup_free_ char *q = NULL, *fix = NULL;

			if (j == i || strcmp(specs->v[j + 1], specs->v[i + 1]) != 0 || (j < i && strrchr(o, '.') &&
			    strcmp(strrchr(o, '.'), ".json") != 0))
				continue;
			q = shell_word(p);
			fix = q ? xasprintf("rm %s", q) : NULL;
			if (one_dir)
				say(r, PROBLEM, "cdi", fix, "%s and %s are both specs of %s in one directory: the engines "
				    "drop every device both name (0, all, the UUIDs: likely all), and every container "
				    "asking for one fails; keep one", p, o, specs->v[i + 1]);
			else
				say(r, INFO, "cdi", fix, "%s and %s are both specs of %s: where both name a device the "
				    "engines take /var/run/cdi's, the other's is shadowed (and goes stale at the next "
				    "driver upgrade); keep one (ocidec's refresh keeps /var/run/cdi)", p, o,
				    specs->v[i + 1]);
			break;
		}
	}
}

static void check_cdi(struct checks *r, int root)
{
	static const char *const dirs[] = { "/etc/cdi", "/var/run/cdi" };
	_cleanup_strv_ struct strv seen = { 0 }, specs = { 0 };  /* specs: path, kind */

	for (size_t d = 0; d < 2; d++) {
		_cleanup_close_ int fd = root_open(root, dirs[d], O_RDONLY | O_DIRECTORY);
		struct strv names = { 0 };
		DIR *dir;
		struct dirent *de;

		if (fd < 0 || !(dir = fdopendir(fd)))
			continue;
		fd = -1;
		while ((de = readdir(dir)) && names.n < 256)
			if (de->d_name[0] != '.')
				strv_push(&names, de->d_name);
		closedir(dir);
		strv_sort(&names);
		for (size_t k = 0; k < names.n; k++) {
			_cleanup_free_ char *path = xasprintf("%s/%s", dirs[d], names.v[k]), *text = NULL;
			struct spec_paths sp = { .root = root };
			const char *ext = strrchr(names.v[k], '.');
			const cJSON *dev, *kind;
			cJSON *spec;

			if (!ext || (strcmp(ext, ".json") != 0 && strcmp(ext, ".yaml") != 0 && strcmp(ext, ".yml") != 0))
				continue;
			{
				/* as the engines read it: through a link (in the host
				 * root), a regular file; at most 4 MiB here */
				_cleanup_close_ int pfd = root_open(root, path, O_PATH), sfd = -1;
				struct stat st;
				struct oerr e;
				size_t tl;
				const char *why = NULL;

				/* looked at before it is opened: a device node is never opened */
				if (pfd < 0 || fstat(pfd, &st) < 0)
					why = strerror(errno);
				else if (!S_ISREG(st.st_mode))
					why = "not a regular file";
				else if ((sfd = reopen_regular(root, pfd, &st)) < 0) {
					why = sfd == -2 ? "not a regular file" : strerror(errno);
					sfd = -1;
				}
				else if (st.st_size > (4 << 20))
					why = "larger than 4 MiB: not read";
				else if (read_fd_all(sfd, 4 << 20, &text, &tl, &e) < 0)
					why = "cannot be read";
				/* a YAML spec (nvidia-ctk's): only its kind, from its
				 * top-level kind: line, for the clash below */
				if (!why && strcmp(ext, ".json") != 0) {
					_cleanup_free_ char *yk = yaml_top_scalar(text, "kind");

					say(r, INFO, "cdi", NULL, "%s (%s): a YAML spec, not read: its paths are not checked",
					    path, yk ? yk : "no kind: line");
					if (yk)
						strv_push(&specs, path), strv_push(&specs, yk);
					continue;
				}
				spec = why ? NULL : cJSON_Parse(text);
				if (!spec) {
					advise(r, PROBLEM, "cdi", "correct it, or remove it: engines refuse a spec they "
					       "cannot read (podman drops it, containerd fails the container)", "%s: %s",
					       path, why ? why : "not a JSON spec");
					continue;
				}
			}
			kind = cJSON_GetObjectItemCaseSensitive(spec, "kind");
			if (cJSON_IsString(kind)) {
				cdi_clashes(r, spec, kind->valuestring, path, &seen);
				strv_push(&specs, path), strv_push(&specs, kind->valuestring);
			}
			edits_paths(&sp, cJSON_GetObjectItemCaseSensitive(spec, "containerEdits"));
			cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(spec, "devices"))
				edits_paths(&sp, cJSON_GetObjectItemCaseSensitive(dev, "containerEdits"));
			if (sp.gone) {
				/* one of a vendor's with a driver here: ocidec makes it
				 * anew; another tool's, that tool */
				_cleanup_free_ char *fix = NULL;

				for (size_t i = 0; i < r->kinds.n && !fix && cJSON_IsString(kind); i++)
					if (strcmp(r->kinds.v[i], kind->valuestring) == 0) {
						_cleanup_free_ char *qp = shell_word(path),
								    *qv = shell_word(r->kind_vendors.v[i]);
						if (qp && qv)
							fix = xasprintf("ocidec cdi -o %s %s", qp, qv);
					}
				say2(r, PROBLEM, "cdi", fix, fix ? NULL : "make it again with the tool that wrote it "
				     "(NVIDIA's: nvidia-ctk cdi generate --output FILE), or remove it",
				     "%s (%s): stale: %zu of the %zu host paths it names are gone (%s first): every "
				     "container given a device of it fails to start", path,
				     cJSON_IsString(kind) ? kind->valuestring : "no kind", sp.gone, sp.n, sp.first);
			}
			else if ((r->registered = true))
				say(r, OK, "cdi", NULL, "%s (%s): the %zu host paths it names are there", path,
				    cJSON_IsString(kind) ? kind->valuestring : "no kind", sp.n);
			free(sp.first);
			cJSON_Delete(spec);
		}
		strv_free(&names);
	}
	yaml_clashes(r, &specs);
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

/* ---- the engines ---- */

/* Is this hooks.d file's hook ocidec's (the hook under any of its names)? */
static bool is_ocidec_hook(const char *text, char **path)
{
	cJSON *j = cJSON_Parse(text);
	const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "hook"), "path"));
	const char *base = p ? strrchr(p, '/') : NULL;
	bool r = base && (strcmp(base, "/ocidec-hook") == 0 || strcmp(base, "/ocidec") == 0);

	if (r)
		*path = xstrdup(p);
	cJSON_Delete(j);
	return r;
}

static void check_podman(struct checks *r, int root)
{
	static const char *const dirs[] = { HOOKS_DIR_USR, HOOKS_DIR_ETC, NULL };
	const struct engine *pm = engine(ENGINE_PODMAN), *cr = engine(ENGINE_CRIO);
	bool found = false, podman = engine_installed(root, pm), crio = engine_installed(root, cr);

	for (int i = 0; dirs[i]; i++) {
		DIR *dd = root_opendir(root, dirs[i]);
		struct dirent *e;

		while (dd && (e = readdir(dd))) {
			_cleanup_free_ char *file = xasprintf("%s/%s", dirs[i], e->d_name);
			_cleanup_free_ char *text = NULL, *hook = NULL;
			struct stat st;
			bool rp, rc;

			if (strlen(e->d_name) < 6 || strcmp(e->d_name + strlen(e->d_name) - 5, ".json") != 0 ||
			    !(text = host_read(root, file)) || !is_ocidec_hook(text, &hook))
				continue;
			found = true;
			rp = engine_reads_hooks_dir(root, pm, dirs[i], NULL);
			rc = engine_reads_hooks_dir(root, cr, dirs[i], NULL);
			if (!host_stat(root, hook, &st, true) || !(st.st_mode & 0111))
				say(r, PROBLEM, "podman", "ocidec install --runtime podman",
				    "%s names the hook %s, which is not there: podman starts containers without it, "
				    "and without a word", file, hook);
			else if (!rp && !rc)
				say(r, podman || crio ? PROBLEM : INFO, "podman", "ocidec install --runtime podman",
				    "%s: podman does not read %s (its hooks_dir is elsewhere)", file, dirs[i]);
			else {
				say(r, OK, "podman", NULL, "the hook %s, from %s (%s it)", hook, file,
				    rp && rc ? "podman and CRI-O read" : rp ? "podman reads" : "CRI-O reads");
				r->registered = true;
			}
		}
		if (dd)
			closedir(dd);
	}
	if (!found && (podman || crio))
		say(r, INFO, "podman", "ocidec install --runtime podman",
		    "no hooks.d file of ocidec's: %s containers get no vendor through the hook (CDI's "
		    "--device VENDOR-KIND=all still works where a spec is)", podman ? "podman" : "CRI-O");
}

/* Does the running dockerd (INFO: its answer to /info) read CDI specs?
 * Docker 25 and later list CDISpecDirs where its CDI is on. */
static bool docker_cdi_on(const cJSON *info)
{
	const cJSON *dirs = cJSON_GetObjectItem(info, "CDISpecDirs");

	return cJSON_IsArray(dirs) && cJSON_GetArraySize(dirs) > 0;
}

/* Is the running dockerd one that has CDI (Docker 25 or later)? */
static bool docker_has_cdi(const cJSON *info)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(info, "ServerVersion"));

	return v && atoi(v) >= 25;
}

/* Does nothing on this host give a docker run a vendor: no runtime of
 * ocidec's (the caller knows), the running dockerd's CDI off (INFO), and
 * no hook for --gpus on its PATH? */
static bool docker_gives_nothing(int root, const cJSON *info)
{
	struct stat st;

	return info && !docker_cdi_on(info) && !host_stat(root, NVIDIA_HOOK_LINK, &st, true) &&
	       !host_stat(root, NVIDIA_HOOK_USR, &st, true);
}

/* An engine installed here whose daemon does not run (SINCE 0), where
 * systemd runs the host: its unit's state. A failed unit (its start limit
 * hit by restarts, a configuration the daemon refused) starts nothing
 * until it is reset, its socket's first use included: a problem, with the
 * commands that start it again. One merely stopped is the operator's
 * choice: nothing said. */
static void check_unit(struct checks *r, int root, enum engine_id id, int64_t since)
{
	const struct engine *e = engine(id);
	char st[64] = "", sock[64] = "", dep[64] = "";
	_cleanup_free_ char *fix = NULL;
	bool sock_failed, dep_failed;

	if (since > 0 || !engine_installed(root, e) || engine_unit_state(root, e, "service", st, sizeof(st)) < 0)
		return;
	if (strcmp(st, "failed") != 0) {
		if (strcmp(st, "inactive") != 0)
			say(r, INFO, e->name, NULL, "%s does not run: %s.service is %s (systemd)", e->daemon, e->unit, st);
		return;
	}
	sock_failed = engine_unit_state(root, e, "socket", sock, sizeof(sock)) == 0 && strcmp(sock, "failed") == 0;
	/* dockerd needs containerd, which its unit wants started: one failed
	 * too is reset with it, or dockerd's start fails again */
	dep_failed = id == ENGINE_DOCKER && engine_unit_state(root, engine(ENGINE_CONTAINERD), "service", dep,
								sizeof(dep)) == 0 && strcmp(dep, "failed") == 0;
	fix = xasprintf("systemctl reset-failed %s%s.service%s%s%s && systemctl start %s.service",
			dep_failed ? "containerd.service " : "", e->unit, sock_failed ? " " : "",
			sock_failed ? e->unit : "", sock_failed ? ".socket" : "", e->unit);
	say(r, PROBLEM, e->name, fix, "%s.service failed (systemd; journalctl -u %s.service says why): %s does not run, "
	    "and systemd starts it for no one until the unit is reset", e->unit, e->unit, e->daemon);
}

static void check_docker(struct checks *r, int root, int proc)
{
	const struct engine *dk = engine(ENGINE_DOCKER);
	_cleanup_free_ char *text = host_read(root, DOCKER_JSON);
	const char *stop = NULL;
	cJSON *j = text ? json_parse_exact(text, strlen(text), &stop) : NULL, *rt, *e, *info = NULL;
	const char *def = NULL, *running;
	int64_t since;
	struct stat st;
	bool any = false, cdi = false, restart = false, hook_said = false, silent;
	struct strv lag = { 0 };  /* what the running dockerd has not read yet */

	since = started(proc, dk->daemon);
	check_unit(r, root, ENGINE_DOCKER, since);
	/* the running dockerd, asked what it read; one that runs and does not
	 * answer on root's socket where it listens by default fails every
	 * docker command (a -H of its own elsewhere: not known here) */
	info = since > 0 ? engine_docker_info(root) : NULL;
	silent = since > 0 && !info && geteuid() == 0 && ((host_stat(root, "/run/docker.sock", &st, false) &&
		 S_ISSOCK(st.st_mode) && st.st_uid == 0) || (host_stat(root, "/var/run/docker.sock", &st, false) &&
		 S_ISSOCK(st.st_mode) && st.st_uid == 0));
	if (silent)
		say_apply(r, root, ENGINE_DOCKER, true, NULL, "dockerd runs but does not answer on /run/docker.sock "
			  "(3 s): every docker command fails (its log says why: journalctl -u docker.service)");
	if (!text) {
		/* a running dockerd that says its CDI is off: no docker run gets
		 * a vendor (--gpus: "could not select device driver") */
		running = info ? cJSON_GetStringValue(cJSON_GetObjectItem(info, "DefaultRuntime")) : NULL;
		/* a default runtime of an install whose file is gone since (an
		 * uninstall that removed it): runc once dockerd restarts */
		if (running && strcmp(running, "runc") != 0)
			say_apply(r, root, ENGINE_DOCKER, true, NULL, "the running dockerd has the default runtime \"%s\" "
				  "(no " DOCKER_JSON ": runc once it restarts, a reload keeps it)", running);
		else if (docker_gives_nothing(root, info))
			r->docker_none = xstrdup("dockerd runs without " DOCKER_JSON ", its CDI off, no hook for --gpus: "
						 "no docker run gets a vendor");
		else if (since > 0 || engine_installed(root, dk))
			say(r, INFO, "docker", "ocidec install --runtime docker",
			    "%s without " DOCKER_JSON ": docker run gets no vendor but through CDI (Docker 25 or "
			    "later, its CDI on)", since > 0 ? "dockerd runs" : "dockerd is installed");
		cJSON_Delete(info);
		return;
	}
	if (!cJSON_IsObject(j)) {
		_cleanup_free_ char *where = j ? NULL : json_where(text, stop);
		advise(r, PROBLEM, "docker", "correct " DOCKER_JSON " (dockerd refuses to start with it)",
		       DOCKER_JSON " is %s%s", j ? "JSON, but no object" : "no JSON: it stops at ", where ? where : "");
		cJSON_Delete(j);
		return;
	}
	rt = cJSON_GetObjectItem(j, "runtimes");
	def = cJSON_GetStringValue(cJSON_GetObjectItem(j, "default-runtime"));
	cdi = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "features"), "cdi"));
	cJSON_ArrayForEach(e, rt) {
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		enum shim_kind k = shim_kind(root, p);
		_cleanup_free_ char *fix = NULL;

		if (k == NOT_SHIM)
			continue;
		fix = install_fix("docker", e->string);
		if (k == NVIDIAS) {
			say(r, INFO, "docker", NULL, "runtime \"%s\": %s is NVIDIA's, not ocidec's (%s makes it ocidec's)",
			    e->string, p, fix);
			continue;
		}
		any = true;
		if (k != OURS) {
			say(r, PROBLEM, "docker", fix, "runtime \"%s\": %s is not there%s", e->string, p,
			    k == NVIDIAS_GONE ? " (NVIDIA's toolkit removed?)" : "");
			continue;
		}
		say(r, OK, "docker", NULL, "runtime \"%s\": %s (docker run --runtime %s)%s", e->string, p, e->string,
		    def && strcmp(def, e->string) == 0 ? ", the default runtime" : "");
		r->registered = true;
		if (info) {
			const char *has = cJSON_GetStringValue(cJSON_GetObjectItem(
				cJSON_GetObjectItem(cJSON_GetObjectItem(info, "Runtimes"), e->string), "path"));
			if (!has || strcmp(has, p) != 0)
				strv_push_owned(&lag, xasprintf("%s runtime \"%s\" (" DOCKER_JSON " changed since it "
								"read it)", has ? "runs another binary as" : "has no",
								e->string));
		}
	}
	if (!any && docker_gives_nothing(root, info))
		r->docker_none = xstrdup(DOCKER_JSON " names no runtime of ocidec's, the running dockerd has CDI off, "
					 "no hook for --gpus: no docker run gets a vendor");
	else if (!any)
		say(r, INFO, "docker", "ocidec install --runtime docker",
		    DOCKER_JSON " names no runtime of ocidec's: docker run gets no vendor but through CDI");
	if (info) {
		running = cJSON_GetStringValue(cJSON_GetObjectItem(info, "DefaultRuntime"));

		if (def && running && strcmp(def, running) != 0)
			strv_push_owned(&lag, xasprintf("has the default runtime \"%s\" (" DOCKER_JSON " says \"%s\")",
							running, def));
		/* one the file no longer names: runc once dockerd restarts (a
		 * reload keeps what it has) */
		else if (!def && running && strcmp(running, "runc") != 0) {
			strv_push_owned(&lag, xasprintf("has the default runtime \"%s\" (" DOCKER_JSON " names none: runc "
							"once it restarts, a reload keeps it)", running));
			restart = true;
		}
		/* (Docker 25 and later list CDISpecDirs where CDI is on; it reads
		 * features at its start only) */
		if (any && !cdi && !docker_cdi_on(info) && r->kinds.n && docker_has_cdi(info))
			advise(r, INFO, "docker", "ocidec install --runtime docker --enable-cdi --restart", "its CDI is off: "
			       "docker run --device %s=... fails (could not select device driver \"cdi\"); "
			       "--gpus and the runtime work without it", r->kinds.v[0]);
		if (cdi && !docker_cdi_on(info)) {
			strv_push(&lag, "has CDI off (" DOCKER_JSON "'s features.cdi, read at its start; Docker 25 or "
				  "later)");
			restart = true;
		}
	} else if (since > 0 && !silent && any && host_stat(root, DOCKER_JSON, &st, false) && changed_after(&st, since)) {
		/* no answer on its socket: by the file's time, which only a
		 * restart moves (a reload leaves dockerd's start as it was) */
		if (geteuid() != 0)
			advise(r, INFO, "docker", "run ocidec check as root", "not root: the running dockerd was not "
			       "asked what it read (its socket is root's), and " DOCKER_JSON " changed since it started");
		else {
			strv_push(&lag, "started before " DOCKER_JSON " last changed (its socket did not answer)");
			restart = true;
		}
	}
	/* Docker's --gpus runs nvidia-container-runtime-hook, looked up on
	 * dockerd's PATH when it starts */
	if (r->nvidia && (any || def)) {
		struct stat hs, ls;
		const char *hook = NVIDIA_HOOK_LINK;

		if (!host_stat(root, hook, &hs, true))
			hook = NVIDIA_HOOK_USR;
		if (!host_stat(root, hook, &hs, true)) {
			say_apply(r, root, ENGINE_DOCKER, true, "ocidec install --runtime docker",
				  "no nvidia-container-runtime-hook on dockerd's PATH: docker run --gpus fails (\"could "
				  "not select device driver\")");
			hook_said = true;
		/* (the link's own time: made since dockerd started) */
		} else if (host_stat(root, hook, &ls, false) && changed_after(&ls, since)) {
			strv_push(&lag, "started before nvidia-container-runtime-hook was there: --gpus fails (\"could "
				  "not select device driver\")");
			restart = true;
		}
	}
	/* one line, one command, for all the running dockerd has not read */
	if (lag.n && !hook_said) {
		_cleanup_free_ char *all = strv_join(&lag, "; and ");
		say_apply(r, root, ENGINE_DOCKER, restart, NULL, "the running dockerd %s", all);
	}
	strv_free(&lag);
	cJSON_Delete(info);
	cJSON_Delete(j);
}

struct ctrd_seen {
	struct checks *r;
	int root;
	char **def;      /* the default runtime's name, once the dump is read */
	bool has_def, any;
};

static void on_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct ctrd_seen *s = arg;
	enum shim_kind k = shim_kind(s->root, binary);
	_cleanup_free_ char *fix = NULL;

	if (strcmp(name, *s->def ? *s->def : "runc") == 0)
		s->has_def = true;
	if (k == NOT_SHIM)
		return;
	fix = install_fix("containerd", name);
	if (k == NVIDIAS) {
		say(s->r, INFO, "containerd", NULL, "runtime \"%s\": %s is NVIDIA's, not ocidec's (%s makes it "
		    "ocidec's)", name, binary, fix);
		return;
	}
	s->any = true;
	if (k != OURS)
		say(s->r, PROBLEM, "containerd", fix, "runtime \"%s\": %s is not there%s", name, binary,
		    k == NVIDIAS_GONE ? " (NVIDIA's toolkit removed?)" : "");
	else if ((s->r->registered = true))
		say(s->r, OK, "containerd", NULL, "runtime \"%s\" (%s): %s (a RuntimeClass with handler %s)%s", name,
		    type ? type : "no type", binary, name,
		    strcmp(name, *s->def ? *s->def : "runc") == 0 ? ", the default runtime" : "");
}

/* ocidec's runtime in a drop-in: its name and shim (the runtime whose
 * BinaryName is ocidec-runtime or nvidia-container-runtime) */
struct ours {
	int root;
	char *name, *shim;
};

static void on_our_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct ours *o = arg;
	enum shim_kind k = shim_kind(o->root, binary);

	(void)type;
	if (!o->name && (k == OURS || k == OURS_GONE)) {
		o->name = xstrdup(name);
		o->shim = xstrdup(binary);
	}
}

/* containerd 1.x replaces a plugin's section with an imported file's
 * whole: the drop-in install made carries the node's CRI section as it was
 * then. One that differs from the drop-in install would make now (from
 * config.toml CONF without our import) shadows the administrator's later
 * CRI edits: containerd ignores them. */
static void check_ctrd_shadow(struct checks *r, int root, const char *conf)
{
	_cleanup_free_ char *dropin = host_read(root, "/etc/containerd/conf.d/ocidec.toml"), *plain = NULL;
	_cleanup_free_ char *dump = NULL, *fresh = NULL, *binary = NULL, *def = NULL;
	struct ours o = { .root = root };
	struct oerr err;
	size_t len;

	if (!dropin || !strstr(conf, "/etc/containerd/conf.d/ocidec.toml"))
		return;
	if (ctrd_runtimes(dropin, strlen(dropin), 2, &def, on_our_runtime, &o) < 0 || !o.name)
		goto out;
	plain = ctrd_remove_import(conf, "/etc/containerd/conf.d/ocidec.toml");
	/* what containerd makes of config.toml without our import (a copy of
	 * it beside config.toml for the moment of the dump, as install does) */
	if (ctrd_dump(root, plain, &dump, &len, &err) < 0)
		goto out;
	fresh = ctrd_dropin(dump, len, 2, o.name, o.shim, &binary);
	if (fresh)  /* what install set on top of it (--set-as-default, --enable-cdi) */
		fresh = ctrd_carry(fresh, dropin, 2, o.name, NULL);
	if (fresh && strcmp(fresh, dropin) != 0)
		say_apply(r, root, ENGINE_CONTAINERD, true, "ocidec install --runtime containerd",
		    "/etc/containerd/conf.d/ocidec.toml carries the CRI section config.toml had when ocidec was "
		    "installed, and containerd 1.x takes the drop-in's whole: config.toml's CRI settings changed "
		    "since, and containerd ignores them");
out:
	free(o.name);
	free(o.shim);
}

static void check_containerd(struct checks *r, int root, int proc)
{
	_cleanup_free_ char *conf = host_read(root, "/etc/containerd/config.toml"), *dump = NULL, *def = NULL;
	struct ctrd_seen seen = { .r = r, .root = root };
	struct oerr err;
	struct stat st;
	int64_t since;
	size_t len;
	int version = 2;

	if (!engine_installed(root, engine(ENGINE_CONTAINERD)) || !ctrd_binary(root))
		return;
	since = started(proc, "containerd");
	check_unit(r, root, ENGINE_CONTAINERD, since);
	if (geteuid() != 0) {
		advise(r, INFO, "containerd", "run ocidec check as root", "not root: containerd's configuration not read "
		    "(containerd config dump runs in the host root)");
		return;
	}
	if (ctrd_dump_as(root, conf, true, &dump, &len, &err) < 0) {
		advise(r, PROBLEM, "containerd", "correct /etc/containerd/config.toml: containerd will not start with it",
		       "%s", err.msg);
		return;
	}
	{
		const char *v = ctrd_version(dump, len);
		if (v)
			version = atoi(v);
	}
	seen.def = &def;
	if (ctrd_runtimes(dump, len, version, &def, on_runtime, &seen) < 0) {
		say(r, INFO, "containerd", NULL, "no CRI plugin configured (`containerd config dump`)");
		return;
	}
	if (!seen.has_def)
		advise(r, PROBLEM, "containerd", "give the default runtime its table in config.toml again, or make "
		       "ocidec's the default (ocidec install --runtime containerd --set-as-default)",
		    "default_runtime_name \"%s\" has no runtime table: the CRI plugin does not load, no pod starts",
		    def ? def : "runc");
	/* a config.toml of version 1 on containerd 1.x: install refuses it
	 * until it is converted, so the fix converts first */
	if (!seen.any && conf && !ctrd_top_key(conf, "version") && version < 3)
		say(r, INFO, "containerd", CTRD_V1_CONVERT " && ocidec install --runtime containerd",
		    "no runtime runs ocidec-runtime (a RuntimeClass's handler; pods that use CDI need none); "
		    "config.toml is of version 1, which containerd 1.x imports no drop-in into: converted first");
	else if (!seen.any)
		say(r, INFO, "containerd", "ocidec install --runtime containerd",
		    "no runtime runs ocidec-runtime (a RuntimeClass's handler; pods that use CDI need none)");
	/* the CDI devices a pod asks for (the CRI's CDI field, a device
	 * plugin's CDI answer, DRA): none while CDI is off (containerd 1.7's
	 * default), and the pod starts all the same */
	if (r->kinds.n && memmem(dump, len, "enable_cdi = false", 18))
		advise(r, INFO, "containerd", "ocidec install --runtime containerd --enable-cdi --restart", "its CDI is off "
		       "(enable_cdi = false): a pod asking for a CDI device (%s=...: the CRI's CDI field, a device "
		       "plugin's CDI answer) starts without it", r->kinds.v[0]);
	/* a pod's own annotations reach its containers where pod_annotations
	 * lets them: the vendors' (ocidec.io/...) would select devices */
	for (const char *l = dump, *end = dump + len; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l)), *k = l + strspn(l, " \t");
		size_t ll = eol ? (size_t)(eol - l) : (size_t)(end - l);

		if (strncmp(k, "pod_annotations", 15) == 0 &&
		    (memmem(l, ll, "\"ocidec.io/", 11) || memmem(l, ll, "\"*\"", 3))) {
			advise(r, PROBLEM, "containerd", "take ocidec.io/ and \"*\" out of pod_annotations (the device "
			       "plugin's container annotations need only container_annotations)",
			    "a runtime's pod_annotations pass a pod's own ocidec.io/ annotations to its containers: any "
			    "pod selects devices with them (%.*s)", (int)(ll - (size_t)(k - l)), k);
			break;
		}
		l += ll + 1;
	}
	if (version < 3 && conf)
		check_ctrd_shadow(r, root, conf);
	if ((host_stat(root, "/etc/containerd/config.toml", &st, false) && changed_after(&st, since)) ||
	    (host_stat(root, "/etc/containerd/conf.d/ocidec.toml", &st, false) && changed_after(&st, since)) ||
	    (host_stat(root, CTRD_RESTART_MARK, &st, false) && changed_after(&st, since)))
		say_apply(r, root, ENGINE_CONTAINERD, true, NULL,
			  "containerd started before its configuration last changed: it runs the old one");
}

/* Does any engine run ocidec here? When none does: the engines this host
 * has, as --runtime names them, in the fix */
static void check_registered(struct checks *r, int root)
{
	_cleanup_strv_ struct strv names = { 0 };
	_cleanup_free_ char *list = NULL, *fix = NULL;

	if (r->registered)
		return;
	for (int i = 0; i < ENGINE_COUNT; i++)
		if (engine_installed(root, engine(i)))
			strv_push(&names, engine(i)->name);
	list = strv_join(&names, ",");
	fix = names.n ? xasprintf("ocidec install --runtime %s", list) : NULL;
	say2(r, PROBLEM, "engines", fix, fix ? NULL : "install an engine (podman, CRI-O, Docker, containerd), "
	     "then ocidec install --runtime ENGINE", "no engine runs ocidec here: no hooks.d file, runtime "
	     "or CDI spec of ocidec's");
}

/* Every check of the host root ROOT (HOST its path; PROC the host's
 * /proc) and the configs in DIR (NULL: the host's) */
static void check_all(struct checks *r, const char *dir, const char *host, int root, int proc)
{
	_cleanup_free_ char *host_dir = NULL;
	struct stat st;

	{
		bool host_rec = host_stat(root, HOST_RECORD, &st, false), tk = host_stat(root, TOOLKIT_RECORD, &st, false);

		r->toolkit = tk && !host_rec;
		r->installed = tk || host_rec;
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
	check_podman(r, root);
	check_docker(r, root, proc);
	check_containerd(r, root, proc);
	check_cdi(r, root);
	/* Docker that gives nothing: a problem until ocidec install has run
	 * (right after the package's install); after, the engines it was
	 * given are the operator's choice, and this node may not mean Docker
	 * for its accelerators (an NRI or containerd node also running
	 * dockerd) */
	if (r->docker_none) {
		say(r, r->installed ? INFO : PROBLEM, "docker", "ocidec install --runtime docker", "%s%s", r->docker_none,
		    r->nvidia ? " (--gpus: \"could not select device driver\")" : "");
		free(r->docker_none);
		r->docker_none = NULL;
	}
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
	struct checks r = { 0 };
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
	strv_free(&r.kinds);
	strv_free(&r.kind_vendors);
	if (root >= 0)
		close(root);
	if (proc >= 0)
		close(proc);
	return applet_finish_stdout(status);
}
