/* What a toolkit container's install copies onto the host, under its
 * prefix: this binary (and the names the engines run it by) and the vendor
 * configs. See instcopy.h */
#include "engines/instcopy.h"
#include "devices/config.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INSTCOPY_MAX (64u << 20)

/* Is V named, or another platform's file of a named vendor (its
 * only_where, the same CDI kind: --vendor nvidia brings nvidia-tegra.ini
 * and nvidia-wsl.ini, inert where their platform is not), or a vendor
 * only given beside a named one (only_with: NVIDIA's gated features,
 * nvidia-gds.ini and its kin, inert where their nodes are not)? */
static bool named_or_sibling(const struct config *cfg, const struct vendor *v, char *const *names, int nnames)
{
	if (vendor_named(v, names, nnames))
		return true;
	for (size_t i = 0; (v->only_where.n || v->only_with.n) && i < cfg->n; i++) {
		const struct vendor *w = &cfg->vendors[i];

		if (w != v && vendor_named(w, names, nnames) &&
		    (strcmp(w->cdi_kind, v->cdi_kind) == 0 || strv_contains(&v->only_with, w->name)))
			return true;
	}
	return false;
}

/* --driver-root auto and container: the vendor's driver container's root
 * (its driver_container_root: NVIDIA's GPU Operator's /run/nvidia/driver)
 * for a vendor that has one; the others keep their own (MOFED's and the
 * other vendors' drivers are the node's). container: that root, there or
 * not yet (the hook reads the driver root at each container: the driver
 * container's files are used once it has put them there). auto: that root
 * where its /usr is there when the install runs, else the vendor's own:
 * where its parent is there but not it (NVIDIA's /run/nvidia: after a boot
 * the driver pod takes minutes), waited for, 10 minutes at most in all
 * (C->waited), rather than the node's own driver taken for good. Said
 * either way, for the pod's log. Any other DRIVER_ROOT: that path, for
 * every vendor; NULL: the vendor's own. */
#define DRIVER_ROOT_WAIT 600
static const char *vendor_driver_root(const struct engine_plan *p, struct instcopy *c, const struct vendor *v)
{
	const char *dc = v->driver_container_root;
	_cleanup_free_ char *usr = NULL, *parent = NULL;
	const char *driver_root = c->driver_root;
	_cleanup_close_ int fd = -1, op = -1;

	if (!driver_root || (strcmp(driver_root, "auto") != 0 && strcmp(driver_root, "container") != 0))
		return driver_root;
	if (!dc)
		return NULL;
	if (strcmp(driver_root, "container") == 0) {
		c->say("ocidec install: %s: driver root %s, its driver container's (--driver-root container)\n", v->name, dc);
		return dc;
	}
	usr = xasprintf("%s/usr", dc);
	parent = path_dir(dc);
	fd = root_open(p->root, usr, O_PATH | O_DIRECTORY);
	op = fd < 0 ? root_open(p->root, parent, O_PATH | O_DIRECTORY) : -1;
	if (fd < 0 && op >= 0 && c->waited < DRIVER_ROOT_WAIT) {
		c->say("ocidec install: %s: waiting for its driver container's root at %s (%s is there; --driver-root "
		    "auto)\n", v->name, dc, parent);
		fflush(stdout);
		for (; c->waited < DRIVER_ROOT_WAIT && fd < 0; c->waited++) {
			sleep(1);
			fd = root_open(p->root, usr, O_PATH | O_DIRECTORY);
		}
	}
	if (fd >= 0) {
		c->say("ocidec install: %s: driver root %s: its driver container's root is there (--driver-root auto)\n",
		    v->name, dc);
		return dc;
	}
	c->say("ocidec install: %s: driver root: its own (no driver container's root at %s; --driver-root auto)\n",
	    v->name, dc);
	return NULL;
}

int instcopy_configs(struct engine_plan *p, struct instcopy *c, struct oerr *err)
{
	const char *cdir = c->cdir;
	char *const *names = c->names;
	int nnames = c->nnames;
	struct config cfg;
	int r = 0;

	if (config_load_named(&cfg, cdir, names, nnames, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg.n && r == 0; i++) {
		const struct vendor *v = &cfg.vendors[i];
		_cleanup_close_ int fd = open(v->file, O_RDONLY | O_CLOEXEC);
		char *text = NULL;
		size_t len;

		if (!named_or_sibling(&cfg, v, names, nnames))
			continue;
		if (fd < 0 || read_fd_all(fd, INSTCOPY_MAX, &text, &len, err) < 0) {
			r = fd < 0 ? oerr_set(err, errno, "%s", v->file) : oerr_prefix(err, "%s", v->file);
			break;
		}
		{
			const char *root = vendor_driver_root(p, c, v);

			if (root)
				text = config_set_vendor_key(text, "driver_root", root);
		}
		/* a shared node: only what the device plugin or the runtime
		 * set selects devices; privileged pods (the device plugin's,
		 * the operator's) keep the environment */
		if (c->tenant_kubernetes) {
			text = config_set_vendor_key(text, "selection", "mounts annotation env");
			text = config_set_vendor_key(text, "unprivileged_selection", "mounts annotation");
			/* a tenant's pod shares no writable host directory */
			text = config_set_vendor_key(text, "unprivileged_ipc_writable", "false");
		}
		len = strlen(text);
		engine_plan_add(p, xasprintf("%s/etc/ocidec.d/%s", p->prefix, strrchr(v->file, '/') + 1), text, len,
			   0644, NULL);
		p->has_nvidia |= vendor_answers(v, "NVIDIA_VISIBLE_DEVICES");
	}
	if (r == 0 && cfg.n == 0)
		r = oerr_usage(err, "%s: no vendor config to install", cdir);
	config_free(&cfg);
	return r;
}

int instcopy_binary(struct engine_plan *p, struct oerr *err)
{
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len;

	if (fd < 0 || read_fd_all(fd, INSTCOPY_MAX, &buf, &len, err) < 0)
		return fd < 0 ? oerr_set(err, errno, "/proc/self/exe") : oerr_prefix(err, "/proc/self/exe");
	engine_plan_add(p, xasprintf("%s/bin/ocidec", p->prefix), buf, len, 0755, NULL);
	engine_plan_link(p, xasprintf("%s/bin/ocidec-hook", p->prefix), "ocidec");
	engine_plan_link(p, xasprintf("%s/bin/ocidec-runtime", p->prefix), "ocidec");
	/* (NVIDIA's CDI hook name: the --nvidia-cdi-hook-path of NVIDIA's DRA
	 * driver, whose specs run it as nvidia-cdi-hook SUBCOMMAND) */
	engine_plan_link(p, xasprintf("%s/bin/nvidia-cdi-hook", p->prefix), "ocidec");
	return 0;
}

/* Host mode: this binary, where it is installed (the package's, make
 * install's): BIN its directory, where ocidec-hook and ocidec-runtime must
 * be this binary too (the names the engines run it by), root's and
 * writable by no one else (the engines run it as root) */
int instcopy_host_binary(char **bin, struct oerr *err)
{
	static const char *const names[] = { "ocidec-hook", "ocidec-runtime" };
	char exe[PATH_MAX];
	struct stat self, st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || stat("/proc/self/exe", &self) < 0)
		return oerr_set(err, errno, "/proc/self/exe");
	exe[n] = '\0';
	*bin = path_dir(exe);
	if (!root_owned(&self))
		return oerr_usage(err, "%s is not root's, or others may write it: the engines would run it as root; "
				  "install it (the package, or make install) and run that one", exe);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", *bin, names[i]);

		if (stat(p, &st) < 0 || st.st_dev != self.st_dev || st.st_ino != self.st_ino)
			return oerr_usage(err, "%s is not this ocidec (%s): run the installed ocidec, whose %s is "
					  "beside it (the package, or make install), or give --host-root to copy this "
					  "one onto a host", p, exe, names[i]);
	}
	return 0;
}

/* Host mode: does the config dir hold a vendor of NVIDIA's (Docker's --gpus
 * hook name then)? */
bool instcopy_host_nvidia(const char *cdir)
{
	struct config cfg;
	bool nvidia = false;

	config_load_each(&cfg, cdir);
	for (size_t i = 0; i < cfg.n; i++)
		nvidia |= vendor_answers(&cfg.vendors[i], "NVIDIA_VISIBLE_DEVICES");
	config_free(&cfg);
	return nvidia;
}
