/* system: NVIDIA's `nvidia-ctk system` commands, for every vendor.
 *
 * See: ocidec-system(1); NVIDIA's cmd/nvidia-ctk/system. create-device-nodes
 * makes the character devices a vendor's device_numbers give (what
 * nvidia-modprobe makes: for a driver container, or a host whose driver
 * has made none yet). create-dev-char-symlinks gives each character device
 * of the vendors its /dev/char/MAJOR:MINOR link, the name by which systemd
 * finds the device of a unit's DeviceAllow= (udev makes links only for the
 * nodes it made itself).
 *
 * Every name is looked at before anything is made: one taken by something
 * else (a link, a file, another device) refuses the whole run, so a run
 * makes all it was asked for or nothing. Nothing is made through a link:
 * mknodat and symlinkat never follow the last component, a node's
 * directory is opened inside its root (rootpath.h), and a links directory
 * that is itself a link is refused.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "devices/devices.h"
#include "base/log.h"
#include "pipeline/plan.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char system_usage[] =
	"usage: ocidec system create-device-nodes [-c DIR] [--control-devices]\n"
	"           [--devices SEL] [--driver-root DIR] [--dev-root DIR] [--dry-run]\n"
	"           [VENDOR...]\n"
	"       ocidec system create-dev-char-symlinks [-c DIR] [--dev-char-path DIR]\n"
	"           [--driver-root DIR] [--create-all] [--create-device-nodes]\n"
	"           [--dry-run] [VENDOR...]\n"
	"\n"
	"NVIDIA's `nvidia-ctk system` commands, for the vendors named (default: all\n"
	"configured). Each node or link made is printed as the command making it.\n"
	"A name taken by anything else (a link, a file, another device) refuses the\n"
	"run before anything is made.\n"
	"\n"
	"create-device-nodes: the character devices of the vendors' device_numbers,\n"
	"mode 0666 as nvidia-modprobe makes them, majors from /proc/devices\n"
	"  -c, --config-dir DIR   vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"      --control-devices  the nodes of a fixed minor (nvidia.ini's nvidiactl,\n"
	"                         nvidia-modeset, nvidia-uvm, nvidia-uvm-tools)\n"
	"  -d, --devices SEL      the nodes of these devices: all, or indices such as\n"
	"                         0,2 (nvidia.ini: /dev/nvidiaN, N the GPU's minor)\n"
	"  -r, --driver-root DIR, --root DIR\n"
	"                         the vendors' driver_root, whatever their files say\n"
	"      --dev-root DIR     make the nodes in DIR/dev (default: the driver root)\n"
	"  -n, --dry-run          print what would be made; make nothing\n"
	"      --load-kernel-modules\n"
	"                         accepted, not done: ocidec runs no modprobe\n"
	"\n"
	"create-dev-char-symlinks: DIR/MAJOR:MINOR, a link to each character device\n"
	"of the vendors under their driver root (-c, -r, -n, --load-kernel-modules\n"
	"as above)\n"
	"      --dev-char-path DIR  where the links go (default /dev/char)\n"
	"      --create-all       also for the nodes of device_numbers not made yet\n"
	"      --create-device-nodes\n"
	"                         first make the nodes --control-devices makes\n"
	"      --watch            refused: NVIDIA's toolkit dropped it (1.18)\n"
	"\n"
	"Example: ocidec system create-device-nodes --control-devices --devices all\n";

/* One name to make: a node, or a link to LINK */
struct entry {
	int dirfd;          /* a node's directory (O_PATH, run.fds owns it); a
			     * link's is run.linkfd */
	char *name, *path;  /* its name there; its path, for people */
	unsigned major, minor;
	char *link;         /* a link's text; NULL: a character device */
	bool there;         /* there already, as it should be */
};

struct run {
	struct entry *e;
	size_t n;
	int *fds;
	size_t nfds;
	const char *linkdir;  /* create-dev-char-symlinks: where the links go, */
	int linkfd;           /* open (O_PATH), or -1: not there yet */
};

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].name);
		free(r->e[i].path);
		free(r->e[i].link);
	}
	free(r->e);
	for (size_t i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	free(r->fds);
	if (r->linkfd >= 0)
		close(r->linkfd);
}

struct opts {
	const char *dir, *driver_root, *dev_root;
	bool dry, modules, create_all, create_nodes;
};

/* NAME in the directory DIRFD (DIR, for people) to be the character device
 * MAJOR:MINOR, or a link to LINK: once per path (the first link to a
 * device kept; two vendors' nodes of one path and other numbers refused) */
static int add(struct run *r, int dirfd, const char *dir, const char *name, unsigned major, unsigned minor,
	       const char *link, struct oerr *err)
{
	char *path = path_join_root(dir, name);

	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->e[i];

		if (strcmp(e->path, path) != 0)
			continue;
		if (link || (e->major == major && e->minor == minor)) {
			free(path);
			return 0;
		}
		oerr_usage(err, "%s: the vendor configs give it as %u:%u and as %u:%u", path, e->major, e->minor,
			   major, minor);
		free(path);
		return -1;
	}
	r->e = xreallocarray(r->e, r->n + 1, sizeof(*r->e));
	r->e[r->n++] = (struct entry){ dirfd, xstrdup(name), path, major, minor, link ? xstrdup(link) : NULL, false };
	return 0;
}

/* A device's minor, from its information file (vendor_uuid_each) */
struct minors {
	unsigned long *index;
	unsigned *minor;
	size_t n;
};

static void minors_push(struct minors *m, unsigned long index, unsigned minor)
{
	m->index = xreallocarray(m->index, m->n + 1, sizeof(*m->index));
	m->minor = xreallocarray(m->minor, m->n + 1, sizeof(*m->minor));
	m->index[m->n] = index;
	m->minor[m->n++] = minor;
}

static int add_minor(const char *file, const char *uuid, int minor, int index, void *arg)
{
	(void)uuid;
	if (minor < 0 || minor > 0xfffff || index < 0)
		log_warn("%s: Device Minor %d: not a minor", file, minor);
	else
		minors_push(arg, (unsigned long)index, (unsigned)minor);
	return 0;
}

/* The minors of V's devices SEL selects into *M (each index asked for must
 * be there) */
static int selected_minors(const struct vendor *v, const struct selection *sel, struct minors *m, struct oerr *err)
{
	struct minors all = { 0 };
	int r = 0;

	if (sel->kind != SEL_NONE)
		vendor_uuid_each(v, add_minor, &all);
	for (size_t i = 0; i < all.n; i++)
		if (selection_has(sel, all.index[i]))
			minors_push(m, all.index[i], all.minor[i]);
	for (size_t k = 0; sel->kind == SEL_SOME && k < sel->n && !r; k++) {
		size_t i = 0;

		while (i < all.n && all.index[i] != sel->idx[k])
			i++;
		if (i == all.n)
			r = oerr_usage(err, "%s: no device %lu: %s finds %zu", v->name, sel->idx[k],
				       v->device_uuids ? v->device_uuids : "(no device_uuids)", all.n);
	}
	free(all.index);
	free(all.minor);
	return r;
}

/* The major of D's driver, or -1 (ERR) when the kernel has none of it */
static long driver_major(const struct vendor *v, const struct device_number *d, const struct opts *o,
			 struct oerr *err)
{
	long major = char_major(d->drivers);

	if (major < 0)
		oerr_set(err, 0, "%s: %s: /proc/devices has no driver %s: is its kernel module loaded?%s", v->name,
			 d->node, d->drivers, o->modules ? " (ocidec loads none: --load-kernel-modules is accepted, "
							   "not done)" : "");
	return major;
}

/* Vendor V's device_numbers into R, in DEV_ROOT/dev (NULL: its driver
 * root): with CONTROL those of a fixed minor, each device SEL selects for
 * the per-device ones */
static int vendor_nodes(struct run *r, const struct vendor *v, const char *dev_root, bool control,
			const struct selection *sel, const struct opts *o, struct oerr *err)
{
	const char *root = dev_root ? dev_root : v->driver_root;
	_cleanup_free_ char *dir = path_join_root(root, "/dev");
	struct minors m = { 0 };
	int rootfd, dirfd, ret = 0;

	if (!v->device_numbers.n || !vendor_here(v))
		return 0;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	dirfd = rootfd < 0 ? -1 : root_open(rootfd, "/dev", O_PATH | O_DIRECTORY);
	if (dirfd < 0) {
		oerr_set(err, errno, "%s: %s", v->name, dir);
		if (rootfd >= 0)
			close(rootfd);
		return -1;
	}
	close(rootfd);
	r->fds = xreallocarray(r->fds, r->nfds + 1, sizeof(*r->fds));
	r->fds[r->nfds++] = dirfd;
	if (selected_minors(v, sel, &m, err) < 0)
		ret = -1;
	for (size_t i = 0; i < v->device_numbers.n && !ret; i++) {
		struct device_number d;
		long major = -1;

		device_number_parse(v->device_numbers.v[i], &d);  /* (checked when loaded) */
		if ((d.minor >= 0 ? control : m.n > 0) && (major = driver_major(v, &d, o, err)) < 0)
			ret = -1;
		if (major >= 0 && d.minor >= 0)
			ret = add(r, dirfd, dir, d.node, (unsigned)major, (unsigned)d.minor, NULL, err);
		for (size_t k = 0; major >= 0 && d.minor < 0 && k < m.n && !ret; k++) {
			const char *pct = strstr(d.node, "%u");
			_cleanup_free_ char *name = xasprintf("%.*s%u%s", (int)(pct - d.node), d.node, m.minor[k], pct + 2);

			ret = add(r, dirfd, dir, name, (unsigned)major, m.minor[k], NULL, err);
		}
		device_number_free(&d);
	}
	free(m.index);
	free(m.minor);
	return ret;
}

/* The link's text for the node at PATH: relative where the node is below
 * the parent of the links' directory DIR ("../nvidia0" from /dev/char, as
 * udev writes them), else PATH (a driver root's /run/nvidia/driver/dev/..) */
static char *link_text(const char *dir, const char *path)
{
	_cleanup_free_ char *parent = path_dir(dir);
	size_t n = strcmp(parent, "/") ? strlen(parent) : 0;

	if (strncmp(path, parent, n) == 0 && path[n] == '/')
		return xasprintf("..%s", path + n);
	return xstrdup(path);
}

static int add_link(struct run *r, const char *node, unsigned major, unsigned minor, struct oerr *err)
{
	_cleanup_free_ char *text = link_text(r->linkdir, node);
	char name[32];

	snprintf(name, sizeof(name), "%u:%u", major, minor);
	return add(r, r->linkfd, r->linkdir, name, major, minor, text, err);
}

/* The links of vendor V: one to each character device of its plan (every
 * feature, every device), and with --create-all (or --create-device-nodes)
 * to the nodes of its device_numbers too, there or not */
static int vendor_links(struct run *r, const struct vendor *v, const struct opts *o, struct oerr *err)
{
	__attribute__((cleanup(plan_free))) struct plan plan = { 0 };
	struct plan_select sel = { .features = "all" };
	struct selection all = { .kind = o->create_all ? SEL_ALL : SEL_NONE };
	struct run possible = { .linkfd = -1 };
	int ret = 0;

	if (plan_vendor(&plan, v, &sel, err) < 0)
		return -1;
	for (size_t i = 0; i < plan.n && !ret; i++) {
		const struct plan_item *it = &plan.items[i];

		if (it->kind == KIND_DEVICES && S_ISCHR(it->st.st_mode))
			ret = add_link(r, it->host_target ? it->host_target : it->host, major(it->st.st_rdev),
				       minor(it->st.st_rdev), err);
	}
	if (!ret && (o->create_all || o->create_nodes))
		ret = vendor_nodes(&possible, v, NULL, true, &all, o, err);
	for (size_t i = 0; i < possible.n && !ret; i++)
		ret = add_link(r, possible.e[i].path, possible.e[i].major, possible.e[i].minor, err);
	run_free(&possible);
	return ret;
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISREG(m) ? "a file" : S_ISDIR(m) ? "a directory"
	       : S_ISCHR(m) ? "another character device" : S_ISBLK(m) ? "a block device" : "something else";
}

/* What is at each name now: nothing, or what it should be (there), or
 * else the run is refused. A link is right when it is ours (its text) or
 * leads to the device (udev's). */
static int check(struct run *r, struct oerr *err)
{
	for (size_t i = 0; i < r->n; i++) {
		struct entry *e = &r->e[i];
		int dfd = e->link ? r->linkfd : e->dirfd;
		dev_t dev = makedev(e->major, e->minor);
		struct stat st, to;
		char text[PATH_MAX];
		ssize_t n;

		if (dfd < 0)
			continue;
		if (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return oerr_set(err, errno, "%s", e->path);
		}
		if (!e->link)
			e->there = S_ISCHR(st.st_mode) && st.st_rdev == dev;
		else if (S_ISLNK(st.st_mode))
			e->there = ((n = readlinkat(dfd, e->name, text, sizeof(text) - 1)) >= 0 &&
				    (text[n] = '\0', strcmp(text, e->link) == 0)) ||
				   (fstatat(dfd, e->name, &to, 0) == 0 && S_ISCHR(to.st_mode) && to.st_rdev == dev);
		if (e->there)
			continue;
		if (e->link)
			return oerr_set(err, 0, "%s: refused: %s is there, not a link to %s (remove it, then run this "
					"again)", e->path, S_ISLNK(st.st_mode) ? "a link elsewhere" : kind_of(st.st_mode),
					e->link);
		return oerr_set(err, 0, "%s: refused: %s is there, not the character device %u:%u (remove it, then "
				"run this again)", e->path, kind_of(st.st_mode), e->major, e->minor);
	}
	return 0;
}

/* The links' directory R->linkdir, opened into R->linkfd (-1: not there;
 * with MAKE it is made): refused when it is a symbolic link, which would
 * put the links where it leads */
static int open_link_dir(struct run *r, bool make, struct oerr *err)
{
	struct stat st;
	int rootfd;

	if (lstat(r->linkdir, &st) == 0 && !S_ISDIR(st.st_mode))
		return oerr_set(err, 0, "%s: refused: %s, not a directory", r->linkdir, kind_of(st.st_mode));
	r->linkfd = open(r->linkdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->linkfd >= 0 || errno != ENOENT)
		return r->linkfd >= 0 ? 0 : oerr_set(err, errno, "%s", r->linkdir);
	if (!make)
		return 0;
	if ((rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return oerr_set(err, errno, "/");
	r->linkfd = root_mkdirs(rootfd, r->linkdir, 0, NULL, NULL, err);
	close(rootfd);
	return r->linkfd < 0 ? -1 : 0;
}

/* Make what is not there, each said as the command that makes it */
static int make(struct run *r, bool dry, struct oerr *err)
{
	/* the mode as given, 0666 as nvidia-modprobe's, whatever our umask */
	umask(0);
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->e[i];
		char path[1024], text[1024];

		if (e->there)
			continue;
		escape_bytes(e->path, path, sizeof(path));
		if (e->link)
			out("ln -s %s %s\n", escape_bytes(e->link, text, sizeof(text)), path);
		else
			out("mknod -m 0666 %s c %u %u\n", path, e->major, e->minor);
		if (dry)
			continue;
		if (e->link && r->linkfd < 0 && open_link_dir(r, true, err) < 0)
			return -1;
		if ((e->link ? symlinkat(e->link, r->linkfd, e->name)
			     : mknodat(e->dirfd, e->name, S_IFCHR | 0666, makedev(e->major, e->minor))) < 0)
			return oerr_set(err, errno, "%s", e->path);
	}
	return 0;
}

/* OPTARG, a directory's absolute path (trailing slashes dropped), or NULL
 * (said) */
static const char *dir_arg(const char *option, char *optarg_)
{
	size_t n = strlen(optarg_);

	if (optarg_[0] != '/' || has_dot_component(optarg_)) {
		applet_usage_error("%s %s: not an absolute path without . or ..", option, optarg_);
		return NULL;
	}
	while (n > 1 && optarg_[n - 1] == '/')
		optarg_[--n] = '\0';
	return optarg_;
}

/* The configs of O, the vendors NAMES (N; none: every one) given
 * --driver-root */
static int load(struct config *cfg, const struct opts *o, char **names, int n, struct oerr *err)
{
	if (config_load_named(cfg, o->dir, names, n, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->n; i++) {
		vendor_log_level(&cfg->vendors[i]);
		if (o->driver_root && vendor_named(&cfg->vendors[i], names, n)) {
			free(cfg->vendors[i].driver_root);
			cfg->vendors[i].driver_root = xstrdup(o->driver_root);
		}
	}
	return 0;
}

static int create_device_nodes(int argc, char **argv, struct oerr *err)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "control-devices", no_argument, NULL, 'C' },
		{ "devices", required_argument, NULL, 'd' },
		{ "driver-root", required_argument, NULL, 'r' },
		{ "root", required_argument, NULL, 'r' },
		{ "dev-root", required_argument, NULL, 'D' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "load-kernel-modules", no_argument, NULL, 'K' },
		{ 0 },
	};
	__attribute__((cleanup(selection_free))) struct selection devices = { .kind = SEL_NONE };
	struct opts o = { .dir = config_dir_default() };
	_cleanup_config_ struct config cfg = { 0 };
	__attribute__((cleanup(run_free))) struct run r = { .linkfd = -1 };
	bool control = false;
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:d:r:n", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.dir = optarg; break;
		case 'C': control = true; break;
		case 'd':
			selection_free(&devices);
			if (selection_parse(optarg, &devices, err) < 0)
				return APPLET_FAILED;
			break;
		case 'r':
			if (!(o.driver_root = dir_arg("--driver-root", optarg)))
				return EXIT_USAGE;
			break;
		case 'D':
			if (!(o.dev_root = dir_arg("--dev-root", optarg)))
				return EXIT_USAGE;
			break;
		case 'n': o.dry = true; break;
		case 'K': o.modules = true; break;
		default: return applet_bad_option(c, argc, argv);
		}
	}
	if (!control && devices.kind == SEL_NONE)
		return applet_usage_error("create-device-nodes: nothing to make: --control-devices, --devices SEL, or both");
	if (load(&cfg, &o, argv + optind, argc - optind, err) < 0)
		return APPLET_FAILED;
	for (size_t i = 0; !ret && i < cfg.n; i++) {
		const struct vendor *v = &cfg.vendors[i];

		if (!vendor_named(v, argv + optind, argc - optind))
			continue;
		if (!v->device_numbers.n && optind < argc)
			ret = oerr_usage(err, "%s: %s has no device_numbers: ocidec knows no numbers of its nodes", v->name,
					 v->file);
		else
			ret = vendor_nodes(&r, v, o.dev_root, control, &devices, &o, err);
	}
	if (ret < 0 || check(&r, err) < 0 || make(&r, o.dry, err) < 0)
		return APPLET_FAILED;
	return applet_finish_stdout(EXIT_OK);
}

static int create_dev_char_symlinks(int argc, char **argv, struct oerr *err)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "dev-char-path", required_argument, NULL, 'P' },
		{ "driver-root", required_argument, NULL, 'r' },
		{ "create-all", no_argument, NULL, 'A' },
		{ "create-device-nodes", no_argument, NULL, 'N' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "load-kernel-modules", no_argument, NULL, 'K' },
		{ "watch", no_argument, NULL, 'W' },
		{ 0 },
	};
	const struct selection none = { .kind = SEL_NONE };
	struct opts o = { .dir = config_dir_default() };
	_cleanup_config_ struct config cfg = { 0 };
	__attribute__((cleanup(run_free))) struct run r = { .linkdir = "/dev/char", .linkfd = -1 };
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:r:n", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.dir = optarg; break;
		case 'P':
			if (!(r.linkdir = dir_arg("--dev-char-path", optarg)))
				return EXIT_USAGE;
			break;
		case 'r':
			if (!(o.driver_root = dir_arg("--driver-root", optarg)))
				return EXIT_USAGE;
			break;
		case 'A': o.create_all = true; break;
		case 'N': o.create_nodes = true; break;
		case 'n': o.dry = true; break;
		case 'K': o.modules = true; break;
		/* a daemon recreating links on inotify events: NVIDIA's was never
		 * tested and went in its 1.18; a run when nodes are made does it */
		case 'W':
			return applet_usage_error("--watch: not supported (NVIDIA's toolkit dropped it in 1.18): run this "
						  "again once nodes are made");
		default: return applet_bad_option(c, argc, argv);
		}
	}
	if (open_link_dir(&r, false, err) < 0 || load(&cfg, &o, argv + optind, argc - optind, err) < 0)
		return APPLET_FAILED;
	for (size_t i = 0; i < cfg.n; i++) {
		const struct vendor *v = &cfg.vendors[i];

		if (vendor_named(v, argv + optind, argc - optind) &&
		    ((o.create_nodes && vendor_nodes(&r, v, NULL, true, &none, &o, err) < 0) ||
		     vendor_links(&r, v, &o, err) < 0))
			return APPLET_FAILED;
	}
	if (check(&r, err) < 0 || make(&r, o.dry, err) < 0)
		return APPLET_FAILED;
	return applet_finish_stdout(EXIT_OK);
}

APPLET_MAIN(system)
{
	if (argc > 1 && strcmp(argv[1], "create-device-nodes") == 0)
		return create_device_nodes(argc - 1, argv + 1, err);
	if (argc > 1 && strcmp(argv[1], "create-dev-char-symlinks") == 0)
		return create_dev_char_symlinks(argc - 1, argv + 1, err);
	if (argc < 2)
		return applet_usage_error("name a command: create-device-nodes or create-dev-char-symlinks");
	return applet_usage_error("unknown command '%s': create-device-nodes or create-dev-char-symlinks", argv[1]);
}
