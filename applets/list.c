/* list: print the host paths the vendors would inject.
 *
 * See: ocidec-list(1). Made for `ocidec list | restorecon -v -f -`, like
 * `nvidia-container-cli -k list`: every existing path, driver_root prefixed,
 * one absolute path per line, each once, nothing else on stdout. A listed
 * symlink is printed, then the file it resolves to inside the driver root,
 * so restorecon labels the file a container really opens.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "base/log.h"
#include "pipeline/plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char list_usage[] =
	"usage: ocidec list [-c DIR] [--devices SEL] [--features LIST] [--restorecon] [VENDOR...]\n"
	"\n"
	"Print every existing host path the vendors (default: all configured) would\n"
	"inject, driver_root prefixed, one per line, each once. A symlink is followed\n"
	"by the file it resolves to.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -d, --devices SEL     per-device nodes: all, none or indices such as 0,2\n"
	"                        (default: every node that exists)\n"
	"  -f, --features LIST   features, comma separated, or all (the default)\n"
	"  -R, --restorecon      only what restorecon may label: not the vendors whose\n"
	"                        driver_root is not / (ocidec relabel labels those)\n"
	"\n"
	"Example: ocidec list --restorecon | restorecon -v -f -\n";

static void print_once(struct strv *seen, const char *path)
{
	if (strv_contains(seen, path))
		return;
	/* restorecon -f reads one path a line and knows no escapes: a name
	 * with a control character (a newline forges a line) is left out */
	for (const char *c = path; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			log_warn("%s: a name with a control character: not listed", path);  /* (escaped) */
			strv_push(seen, path);
			return;
		}
	}
	strv_push(seen, path);
	out("%s\n", path);
}

/* what is below DIR (not through links, at most 16 levels and 10,000
 * entries: a driver's data directory, not a file system), in readdir's
 * order, each directory before what is in it: 1 once cut short (said) */
static int print_tree_at(struct strv *seen, const char *dir, int level, size_t *n)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!r && (e = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		if (++*n > 10000 || level > 16) {
			log_warn("%s: more than 10,000 entries or 16 levels below a listed directory: the rest not listed", path);
			r = 1;
			break;
		}
		print_once(seen, path);
		if (e->d_type == DT_DIR ||
		    (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISDIR(st.st_mode)))
			r = print_tree_at(seen, path, level + 1, n);
	}
	closedir(d);
	return r;
}

static void print_tree(struct strv *seen, const char *dir)
{
	size_t n = 0;

	print_tree_at(seen, dir, 1, &n);
}

/* The plan of the vendors of CFG that NAMES (N of them; none: all) name,
 * by SEL, into PLAN; with FOR_RESTORECON, those under a driver root left
 * out (said). 0, or -1 (ERR) */
static int list_plan(const struct config *cfg, char *const *names, int n, const struct plan_select *sel,
		     bool for_restorecon, struct plan *plan, struct oerr *err)
{
	for (size_t i = 0; i < cfg->n; i++)
		vendor_log_level(&cfg->vendors[i]);
	for (size_t i = 0; i < cfg->n; i++) {
		const struct vendor *v = &cfg->vendors[i];

		if (!vendor_named(v, names, n))
			continue;
		/* restorecon labels by the policy's file contexts, which give a
		 * driver container's root (/run/nvidia/driver) /run's label: no
		 * container may read that */
		if (for_restorecon && strcmp(v->driver_root, "/") != 0) {
			log_warn("%s: driver_root %s not listed for restorecon (the policy labels a driver root by "
				 "where it is, /run's or /tmp's label, which no container may read): ocidec relabel %s",
				 v->name, v->driver_root, v->name);
			continue;
		}
		if (plan_vendor(plan, v, sel, err) < 0)
			return -1;
	}
	return 0;
}

/* Each host path of PLAN once, a directory's files too: restorecon -f
 * labels each line's path, not what is below it */
static void list_print(const struct plan *plan)
{
	_cleanup_strv_ struct strv seen = { 0 };

	for (size_t i = 0; i < plan->n; i++) {
		const struct plan_item *it = &plan->items[i];

		print_once(&seen, it->host);
		if (it->host_target)
			print_once(&seen, it->host_target);
		if (it->kind == KIND_DIRECTORIES && S_ISDIR(it->st.st_mode))
			print_tree(&seen, it->host_target ? it->host_target : it->host);
	}
}

APPLET_MAIN(list)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "devices", required_argument, NULL, 'd' },
		{ "features", required_argument, NULL, 'f' },
		{ "restorecon", no_argument, NULL, 'R' },
		{ 0 },
	};
	const char *dir = config_dir_default();
	__attribute__((cleanup(selection_free))) struct selection devices = { 0 };
	struct plan_select sel = { .features = "all" };
	_cleanup_config_ struct config cfg = { 0 };
	__attribute__((cleanup(plan_free))) struct plan plan = { 0 };
	int o;
	bool for_restorecon = false;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:d:f:R", opts, NULL)) != -1) {
		switch (o) {
		case 'R': for_restorecon = true; break;
		case 'c': dir = optarg; break;
		case 'd':
			selection_free(&devices);
			if (selection_parse(optarg, &devices, err) < 0)
				return APPLET_FAILED;
			sel.devices = &devices;
			break;
		case 'f': sel.features = optarg; break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (config_load_named(&cfg, dir, argv + optind, argc - optind, err) < 0 ||
	    list_plan(&cfg, argv + optind, argc - optind, &sel, for_restorecon, &plan, err) < 0)
		return APPLET_FAILED;
	list_print(&plan);
	return applet_finish_stdout(EXIT_OK);
}
