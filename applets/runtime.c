/* runtime: an OCI runtime shim for engines that read no hooks.d (Docker,
 * containerd): called exactly as runc is called.
 *
 * See: ocidec-runtime(1). For `create`, `run` and `restore`,
 * the bundle's config.json (the last --bundle, as the runtimes take it)
 * gets the container edits of the vendors it activates (the hook's
 * decision, activate.c): device nodes, their cgroup rules, bind
 * mounts, the cache hook; written atomically. Then, and for every other
 * subcommand at once, the real runtime is exec'd with the arguments
 * unchanged (ocidec's own --ocidec-config-dir taken out): its output and
 * exit status are the engine's.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "pipeline/container.h"
#include "formats/json.h"
#include "base/log.h"
#include "pipeline/plan.h"
#include "safety/rootfile.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* set in the real runtime's environment: seen again, a loop */
#define LOOP_MARK "OCIDEC_RUNTIME_CALLED"

const char runtime_usage[] =
	"usage: ocidec runtime [--ocidec-config-dir DIR] [--ocidec-syslog SOCKET] RUNC-ARGUMENTS...\n"
	"       ocidec runtime --ocidec-help\n"
	"\n"
	"An OCI runtime for Docker and containerd (argv[0] ocidec-runtime): `create`,\n"
	"`run` and `restore` add the container edits of the vendors the container\n"
	"activates to BUNDLE/config.json; then the real runtime runs with the same\n"
	"arguments (runc's and crun's global options understood).\n"
	"The real runtime: DIR/runtime.conf ([runtime] path = ...), else the first of\n"
	"runc and crun in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin.\n"
	"\n"
	"  --ocidec-config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  --ocidec-syslog SOCKET   the system log (default /dev/log; none: not)\n"
	"\n"
	"A refusal (a device the host does not have, a broken vendor file) fails\n"
	"the container with one line: on stderr, in the runtime's --log file in its\n"
	"--log-format (runc's JSON, which containerd reads into its error: docker\n"
	"run and a pod's events show it) and in the system log (journalctl -t ocidec).\n"
	"\n"
	"--version and --help print ocidec's, then the real runtime's; everything\n"
	"else is the real runtime's.\n";

/* The global options of runc and crun that take a value ("--root DIR" or
 * "--root=DIR"); the others (--debug, --systemd-cgroup) take none */
static bool global_takes_value(const char *a)
{
	static const char *const opts[] = { "log", "log-format", "log-level", "root", "criu", "rootless",
					    "cgroup-manager", NULL };

	a += strspn(a, "-");
	for (int i = 0; opts[i]; i++)
		if (strcmp(a, opts[i]) == 0)
			return true;
	return false;
}

/* The value of option NAME ("bundle", short S) among ARGS, or NULL; the
 * last one when it is given twice, as runc and crun take it */
static const char *option_value(char **args, int n, const char *name, char s)
{
	const char *v = NULL;

	for (int i = 0; i < n; i++) {
		const char *a = args[i], *k = a + strspn(a, "-");
		size_t kl = strlen(name);

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || k == a)
			continue;
		if (strncmp(k, name, kl) == 0 && (k[kl] == '=' || !k[kl]))
			v = k[kl] ? k + kl + 1 : (i + 1 < n ? args[i + 1] : NULL);
		else if (k[0] == s && (k[1] == '=' || !k[1]) && k - a == 1)
			v = k[1] ? k + 2 : (i + 1 < n ? args[i + 1] : NULL);
	}
	return v;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The real runtime, never this binary */
static int real_runtime(const char *dir, char **path, struct oerr *err)
{
	static const char *const names[] = { "runc", "crun", NULL };  /* in plan_binary_dirs, systemd's PATH */

	if (config_runtime(dir, path, err) < 0)
		return -1;
	if (*path) {
		if (same_file(*path, "/proc/self/exe")) {
			oerr_set(err, 0, "%s/runtime.conf: path %s is ocidec itself: refused (a loop)", dir, *path);
			free(*path);
			*path = NULL;
			return -1;
		}
		return 0;
	}
	for (int n = 0; names[n]; n++) {
		for (int d = 0; plan_binary_dirs[d]; d++) {
			char *p = xasprintf("%s/%s", plan_binary_dirs[d], names[n]);

			if (access(p, X_OK) == 0 && !same_file(p, "/proc/self/exe")) {
				*path = p;
				return 0;
			}
			free(p);
		}
	}
	return oerr_set(err, 0, "no runc or crun in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
			"(set path in %s/runtime.conf)", dir);
}

/* Does CONFIG have the cache hook of ocidec at SELF already (a create
 * tried again)? */
static bool edited(const cJSON *config, const char *self)
{
	const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(config, "hooks");
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(hooks, "createContainer"), *h;

	cJSON_ArrayForEach(h, cc) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(h, "path");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(h, "args");
		const cJSON *a1 = cJSON_GetArrayItem(args, 1);

		if (cJSON_IsString(path) && strcmp(path->valuestring, self) == 0 && cJSON_IsString(a1) &&
		    strcmp(a1->valuestring, "--cdi") == 0)
			return true;
	}
	return false;
}

/* CONFIG (the bundle's config.json, its text TEXT) with the edits E:
 * written back atomically, with its mode. */
static int write_edits(const char *config, const char *text, size_t len, const struct edits *e, struct oerr *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *out = NULL;
	struct stat st;
	char self[PATH_MAX];
	cJSON *json;
	ssize_t l = self_exe(self, sizeof(self));
	int r;

	if (l < 0 || root < 0 || stat(config, &st) < 0)
		return oerr_set(err, errno, "%s", l < 0 ? "/proc/self/exe" : config);
	json = json_parse_exact(text, len, NULL);  /* uint64 rlimits stay exact */
	if (!json)
		return oerr_set(err, 0, "%s: not JSON", config);
	if (edited(json, self)) {
		log_info("%s: has ocidec's edits already", config);
		cJSON_Delete(json);
		return 0;
	}
	if (edits_oci_apply(e, json, self, err) < 0) {
		cJSON_Delete(json);
		return oerr_prefix(err, "%s", config);
	}
	out = json_print_exact(json, 0);
	cJSON_Delete(json);
	/* atomic, not durable: the runtime reads it at once, and a crash
	 * loses the container with it */
	r = root_write_atomic(root, config, out, strlen(out), st.st_mode & 0777, false, err);
	return r;
}

/* create/run: the container's edits (container.h) into BUNDLE/config.json */
static int edit_bundle(const char *dir, const char *bundle, struct oerr *err)
{
	_cleanup_free_ char *config = xasprintf("%s/config.json", bundle), *text = NULL;
	struct container c;
	size_t len;
	int r;

	if (oci_config_read(bundle, &text, &len, err) < 0)
		return -1;
	r = container_decide(dir, NULL, bundle, text, len, &c, err);
	c.by_path = true;   /* runc mounts config.json's paths after we are gone */
	if (r == CONTAINER_ACTIVE)
		r = container_plan(&c, NULL, err) < 0 ? -1 : write_edits(config, text, len, &c.edits, err);
	container_free(&c);
	return r < 0 ? -1 : 0;
}

/* ERR where the engine reads a runtime's error: the runtime's --log file
 * (LOG; NULL: none), as runc writes it in --log-format FORMAT (json:
 * logrus's {"level":"error","msg":...,"time":...} line, which
 * containerd's runc shim reads back into its error: docker run and a pod's
 * events show it; text: logrus's key=value line); then stderr and the
 * system log (the dispatcher's applet_fail). Never through a link. */
static void log_refusal(const struct oerr *err, const char *log, const char *format)
{
	char line[4200], stamp[80];
	struct timespec ts;
	struct tm tm;

	if (log && *log) {
		_cleanup_close_ int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
						   O_CLOEXEC, 0644);
		struct stat st;

		clock_gettime(CLOCK_REALTIME, &ts);
		utc_time(ts.tv_sec, &tm);
		snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		escape_line(err->msg, line, sizeof(line), "");
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			char *text;

			if (format && strcmp(format, "text") == 0) {
				cJSON *msg = cJSON_CreateString(line);   /* a quoted string, as logrus quotes it */
				char *q = cJSON_PrintUnformatted(msg);

				text = xasprintf("time=\"%s\" level=error msg=%s\n", stamp, q ? q : "\"\"");
				free(q);
				cJSON_Delete(msg);
			} else {
				cJSON *o = cJSON_CreateObject();
				char *j;

				cJSON_AddStringToObject(o, "level", "error");
				cJSON_AddStringToObject(o, "msg", line);
				cJSON_AddStringToObject(o, "time", stamp);
				j = cJSON_PrintUnformatted(o);
				text = xasprintf("%s\n", j ? j : "{}");
				free(j);
				cJSON_Delete(o);
			}
			if (write_all(fd, text, strlen(text)) < 0)
				log_warn("%s: %s", log, strerror(errno));
			free(text);
		}
	}
}

/* The shim's command line: ocidec's options taken out, the rest runc's
 * (ARGS[0] left for the real runtime's name), CMD the subcommand's index
 * in ARGS (0: none), and the runtime's --log and --log-format, where a
 * refusal is written too (containerd and Docker show that file's last
 * error) */
struct shim_args {
	const char *dir, *log, *log_format;
	char **args;
	int n, cmd;
};

static void shim_args_free(struct shim_args *a)
{
	free(a->args);
}

static void shim_args(int argc, char **argv, struct shim_args *a)
{
	*a = (struct shim_args){ .dir = config_dir_default(), .args = xcalloc((size_t)argc + 1, sizeof(char *)), .n = 1 };
	for (int i = 1; i < argc; i++) {
		if (!a->cmd && strcmp(argv[i], "--ocidec-config-dir") == 0 && i + 1 < argc) {
			a->dir = argv[++i];
			continue;
		}
		if (!a->cmd && strncmp(argv[i], "--ocidec-config-dir=", 20) == 0) {
			a->dir = argv[i] + 20;
			continue;
		}
		if (!a->cmd && strcmp(argv[i], "--ocidec-syslog") == 0 && i + 1 < argc) {
			log_syslog(argv[++i]);
			continue;
		}
		a->args[a->n++] = argv[i];
		if (a->cmd || argv[i][0] != '-') {
			if (!a->cmd && argv[i][0] != '-')
				a->cmd = a->n - 1;
			continue;
		}
		{
			const char *k = argv[i] + strspn(argv[i], "-"), *eq = strchr(argv[i], '=');
			const char *val = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;

			if (strncmp(k, "log", 3) == 0 && (k[3] == '=' || !k[3]))
				a->log = val;
			else if (strncmp(k, "log-format", 10) == 0 && (k[10] == '=' || !k[10]))
				a->log_format = val;
		}
		if (!strchr(argv[i], '=') && global_takes_value(argv[i]) && i + 1 < argc)
			a->args[a->n++] = argv[++i];
	}
}

/* --version and --help before any subcommand: ocidec's own first, then
 * the real runtime's (Docker reads the last "version" line, runc's) */
static void shim_version_help(const struct shim_args *a, const char *real)
{
	for (int i = 1; i < (a->cmd ? a->cmd : a->n); i++) {
		if (strcmp(a->args[i], "--version") == 0 || strcmp(a->args[i], "-v") == 0) {
			out("ocidec-runtime %s (ocidec's shim: the vendors' devices, then %s)\n", OCIDEC_VERSION, real);
			fflush(stdout);
			return;
		}
		if (strcmp(a->args[i], "--help") == 0 || strcmp(a->args[i], "-h") == 0) {
			out("%s\nThe real runtime, %s:\n\n", applet_usage(current_applet), real);
			fflush(stdout);
			return;
		}
	}
}

/* create, run and restore: the bundle's config.json edited (its path made
 * absolute: relative to the working directory). 0, or -1 (ERR) */
static int shim_edit(const struct shim_args *a, struct oerr *err)
{
	const char *sub = a->cmd ? a->args[a->cmd] : "", *bundle;
	_cleanup_free_ char *abs = NULL;
	char cwd[PATH_MAX];

	if (strcmp(sub, "create") != 0 && strcmp(sub, "run") != 0 && strcmp(sub, "restore") != 0)
		return 0;
	bundle = option_value(a->args + a->cmd + 1, a->n - a->cmd - 1, "bundle", 'b');
	if (!bundle || bundle[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return oerr_set(err, errno, "the working directory (the bundle)");
		bundle = abs = bundle ? xasprintf("%s/%s", cwd, bundle) : xstrdup(cwd);
	}
	return edit_bundle(a->dir, bundle, err);
}

APPLET_MAIN(runtime)
{
	__attribute__((cleanup(shim_args_free))) struct shim_args a = { 0 };
	_cleanup_free_ char *real = NULL;

	/* a refusal also to the system log: journalctl -t ocidec */
	log_syslog(SYSLOG_DEFAULT);
	if (argc > 1 && strcmp(argv[1], "--ocidec-help") == 0) {
		out("%s", applet_usage(current_applet));
		return applet_finish_stdout(EXIT_OK);
	}
	/* nvidia-ctk runtime configure, as an NVIDIA user types it to this
	 * runtime's name: no runc command of that name, said where it is */
	if (argc > 1 && strcmp(argv[1], "configure") == 0)
		return applet_usage_error("configure: this is the runtime shim the engines run; registering it with "
					  "them (nvidia-ctk runtime configure's work) is ocidec install --runtime "
					  "docker,containerd (ocidec-install(1))");
	shim_args(argc, argv, &a);
	/* a real runtime that leads back here (a wrapper calling
	 * ocidec-runtime) would loop for ever */
	if (getenv(LOOP_MARK))
		oerr_set(err, 0, "called again by the real runtime it ran (a wrapper that calls ocidec-runtime?): "
			 "refused; name the real runc or crun in %s/runtime.conf", a.dir);
	else if (real_runtime(a.dir, &real, err) == 0) {
		a.args[0] = strrchr(real, '/') + 1;
		shim_version_help(&a, real);
		if (shim_edit(&a, err) == 0) {
			setenv(LOOP_MARK, "1", 1);
			execv(real, a.args);
			oerr_set(err, errno, "%s", real);
		}
	}
	log_refusal(err, a.log, a.log_format);
	return APPLET_FAILED;
}
