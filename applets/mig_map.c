/* mig-map: the MIG map the hook reads to resolve MIG-<uuid> and G:M.
 *
 * See: ocidec-mig-map(1). NVML alone knows a MIG device's UUID and index;
 * the hook is static and loads no driver library. So when MIG is set up
 * (nvidia-smi mig -cgi ..., NVIDIA's MIG manager, mig-parted), this is run
 * with nvidia-smi's own output: `nvidia-smi -L` gives each MIG device's
 * UUID and index, `nvidia-smi -q` each index's GPU and compute instance.
 * The map also holds the instances /proc showed when it was made: the hook
 * takes nothing from a map older than the MIG layout.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "base/log.h"
#include "devices/mig.h"
#include "safety/rootfile.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char mig_map_usage[] =
	"usage: ocidec mig-map [-c DIR] [-o FILE] --nvidia-smi PATH [VENDOR]\n"
	"       ocidec mig-map [-c DIR] [-o FILE] [VENDOR] < nvidia-smi output\n"
	"       ocidec mig-map --invalidate [-c DIR] [VENDOR]\n"
	"\n"
	"Make the MIG map VENDOR's config names (mig_map; default: the one vendor\n"
	"that has MIG) from the output of `nvidia-smi -L` and `nvidia-smi -q`, read\n"
	"from standard input (both, in either order), with the MIG instances /proc\n"
	"shows now (the output must name exactly those). Run it whenever MIG is set\n"
	"up anew; the hook refuses MIG devices by UUID or index from a map older\n"
	"than the MIG layout or this boot. --invalidate removes the map (before MIG\n"
	"is set up anew: an instance made again with the same IDs looks the same).\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"      --nvidia-smi PATH run PATH -L, then PATH -q -i UUID for each GPU, each\n"
	"                        read on its own up to its Processes (anyone's process\n"
	"                        names, which could forge text): use this one\n"
	"  -o, --output FILE     write FILE (- for standard output) instead of mig_map\n"
	"      --invalidate      remove the map: MIG devices by UUID or index are\n"
	"                        refused until it is made again\n"
	"\n"
	"From standard input, a process name holding newlines can forge a GPU's\n"
	"section: the map is then refused (never wrong) until that process ends.\n"
	"\n"
	"Example: ocidec mig-map --nvidia-smi /usr/bin/nvidia-smi\n";

/* PATH's output with ARGS (stdout; stderr left to ours, stdin /dev/null)
 * into *TEXT (at most 16 MiB); it must exit 0 */
static int run_smi(const char *path, char *const *args, char **text, size_t *len, struct oerr *err)
{
	int p[2], status = 0;
	pid_t pid;
	int r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return oerr_set(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return oerr_set(err, errno, "fork");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0)
			_exit(126);
		execvp(path, args);
		_exit(127);
	}
	close(p[1]);
	r = read_fd_all(p[0], 16 << 20, text, len, err);
	close(p[0]);
	if (r < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return oerr_prefix(err, "%s %s", path, args[1]);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(*text);
		*text = NULL;
		return oerr_set(err, 0, "%s %s%s%s%s%s: %s %d", path, args[1], args[2] ? " " : "", args[2] ? args[2] : "",
				args[2] && args[3] ? " " : "", args[2] && args[3] ? args[3] : "",
				WIFEXITED(status) ? "exit status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	return 0;
}

/* nvidia-smi -L, then -q -i UUID for each GPU it lists, each cut at its
 * first "Processes" line: what a process name could forge is never read.
 * Into *TEXT: -L's text, then each GPU's. */
static int smi_texts(const char *smi, char **text, size_t *len, struct oerr *err)
{
	char *const list_args[] = { (char *)smi, (char *)"-L", NULL };
	_cleanup_free_ char *list = NULL;
	struct strv gpus = { 0 };
	char *all, *save = NULL;
	size_t n, total;
	int r = 0;

	if (run_smi(smi, list_args, &list, &n, err) < 0)
		return -1;
	all = xstrdup(list);
	total = n;
	for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *u = strstr(line, "(UUID: GPU-"), *end = u ? strchr(u, ')') : NULL;
		/* -L's GPU lines, never indented; its text holds no process's */
		if (strncmp(line, "GPU ", 4) == 0 && end)
			strv_push_owned(&gpus, xstrndup(u + 7, (size_t)(end - u - 7)));
	}
	for (size_t i = 0; i < gpus.n && r == 0; i++) {
		char *const q_args[] = { (char *)smi, (char *)"-q", (char *)"-i", gpus.v[i], NULL };
		_cleanup_free_ char *q = NULL;
		size_t ql;
		char *cut;

		if ((r = run_smi(smi, q_args, &q, &ql, err)) < 0)
			break;
		/* a GPU's processes come last in its section */
		for (cut = q; cut && *cut; cut = strchr(cut, '\n') ? strchr(cut, '\n') + 1 : NULL) {
			size_t ind = strspn(cut, " \t");
			if (strncmp(cut + ind, "Processes", 9) == 0 && (cut[ind + 9] == '\n' || !cut[ind + 9])) {
				*cut = '\0';
				break;
			}
		}
		ql = strlen(q);
		all = xrealloc(all, total + ql + 2);
		memcpy(all + total, q, ql);
		total += ql;
		if (total && all[total - 1] != '\n')
			all[total++] = '\n';
		all[total] = '\0';
	}
	strv_free(&gpus);
	if (r < 0) {
		free(all);
		return -1;
	}
	*text = all;
	*len = total;
	return 0;
}

/* The one vendor of CFG with MIG (of NAMES, N of them; none: any) into
 * *V: EXIT_OK, or a usage error's status (said) */
static int mig_vendor(const struct config *cfg, char *const *names, int n, const char *dir,
		      const struct vendor **v)
{
	*v = NULL;
	for (size_t i = 0; i < cfg->n; i++) {
		if (!cfg->vendors[i].mig_minors || !vendor_named(&cfg->vendors[i], names, n))
			continue;
		if (*v)
			return applet_usage_error("%s and %s both have MIG: name one", (*v)->name, cfg->vendors[i].name);
		*v = &cfg->vendors[i];
	}
	return *v ? EXIT_OK : applet_usage_error("no vendor in %s has MIG (mig_minors)", dir);
}

/* --invalidate: V's map removed (the hook refuses MIG devices by UUID
 * until it is made again) */
static int map_invalidate(const struct vendor *v, struct oerr *err)
{
	if (!v->mig_map)
		return applet_usage_error("%s: no mig_map in its config", v->name);
	if (unlink(v->mig_map) < 0 && errno != ENOENT)
		return oerr_set(err, errno, "%s", v->mig_map);
	log_info("%s: the MIG map %s removed", v->name, v->mig_map);
	return EXIT_OK;
}

/* V's map made from nvidia-smi's output (SMI run, or stdin) and written to
 * OUTPUT ("-": stdout) as root's alone; its directory made (/run/ocidec
 * after a boot). EXIT_OK, a usage error's status, or -1 (ERR) */
static int map_write(const struct vendor *v, const char *output, const char *smi, struct oerr *err)
{
	_cleanup_free_ char *in = NULL, *text = NULL, *parent = NULL;
	_cleanup_close_ int root = -1;
	size_t len, n;

	if (!output)
		return applet_usage_error("%s: no mig_map in its config: give -o FILE", v->name);
	if (strcmp(output, "-") != 0 && output[0] != '/')
		return applet_usage_error("-o %s: an absolute path, or -", output);
	if ((smi ? smi_texts(smi, &in, &len, err) : read_fd_all(STDIN_FILENO, 16 << 20, &in, &len, err)) < 0 ||
	    mig_map_text(v, in, len, &text, &n, err) < 0 || mig_map_current(v, text, err) < 0)
		return -1;
	if (strcmp(output, "-") == 0) {
		out("%s", text);
		return EXIT_OK;
	}
	parent = path_dir(output);
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return oerr_set(err, errno, "%s", parent);
	if ((root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return oerr_set(err, errno, "/");
	if (root_write_atomic(root, output, text, n, 0644, true, err) < 0)
		return -1;
	log_info("%s: the MIG map, %s", v->name, output);
	return EXIT_OK;
}

APPLET_MAIN(mig_map)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "invalidate", no_argument, NULL, 'I' },
		{ "nvidia-smi", required_argument, NULL, 'S' },
		{ 0 },
	};
	const char *dir = config_dir_default(), *output = NULL, *smi = NULL;
	const struct vendor *v;
	_cleanup_config_ struct config cfg = { 0 };
	int o, status;
	bool invalidate = false;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:o:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'o': output = optarg; break;
		case 'I': invalidate = true; break;
		case 'S': smi = optarg; break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (argc - optind > 1)
		return applet_usage_error("one vendor at most");
	if (config_load_named(&cfg, dir, argv + optind, argc - optind, err) < 0)
		return APPLET_FAILED;
	if ((status = mig_vendor(&cfg, argv + optind, argc - optind, dir, &v)) != EXIT_OK)
		return status;
	status = invalidate ? map_invalidate(v, err) : map_write(v, output ? output : v->mig_map, smi, err);
	return status == APPLET_FAILED ? status : applet_finish_stdout(status);
}
