/* edits.c: see edits.h. */
#include "pipeline/edits.h"

#include "pipeline/cachehook.h"
#include "formats/elf.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Read-only, but for an ipc_writable directory the plan found safe to
 * write (plan.c: its host mount nosuid,nodev). A socket or FIFO works
 * through a read-only mount (connect and open for writing are no writes to
 * the mount), and the host's inodes stay as they are */
static unsigned flags_for(enum item_kind k)
{
	switch (k) {
	case KIND_DEVICES:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NOEXEC;
	case KIND_IPC:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NODEV | EDIT_NOEXEC;
	case KIND_IPC_WRITABLE:
		return EDIT_NOSUID | EDIT_NODEV | EDIT_NOEXEC;
	default:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NODEV;
	}
}

const char *edit_flags_text(unsigned f)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s%s%s%s", f & EDIT_RDONLY ? "ro" : "rw", f & EDIT_NOSUID ? ",nosuid" : "",
		 f & EDIT_NODEV ? ",nodev" : "", f & EDIT_NOEXEC ? ",noexec" : "");
	return buf;
}

void edits_libdir_add(struct strv *dirs, const char *library)
{
	char *d = path_dir(library);

	if (strv_contains(dirs, d))
		free(d);
	else
		strv_push_owned(dirs, d);
}

void edits_build(const struct plan *p, struct edits *e)
{
	memset(e, 0, sizeof(*e));
	e->compat_dir = p->compat_dir;
	e->app_profile = p->app_profile;
	e->compat_host = p->compat_host;
	e->views = p->views;
	e->nviews = p->nviews;
	e->netdevs = &p->netdevs;
	e->netdevs_some = p->netdevs_some;
	e->mounts = xcalloc(p->n ? p->n : 1, sizeof(*e->mounts));
	e->links = xcalloc(p->n ? p->n : 1, sizeof(*e->links));
	e->devices = xcalloc(p->n ? p->n : 1, sizeof(*e->devices));
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		struct edit_mount *m = &e->mounts[e->nmounts];
		size_t at = e->nmounts;

		m->it = it;
		m->destination = it->target ? it->target : it->path;
		m->source = it->target ? it->host_target : it->host;
		m->flags = flags_for(it->kind);
		for (size_t k = 0; k < e->nmounts; k++)
			if (strcmp(e->mounts[k].destination, m->destination) == 0)
				at = k;
		if (it->link_dirfd >= 0 && strstr(it->path, "::")) {
			/* the cache hook's --symlink PATH::TEXT could not say it */
			log_warn("%s: %s: a name with \"::\" in it: no link made there", it->vendor->name, it->path);
		} else if (it->link_dirfd >= 0) {
			char text[PATH_MAX];
			ssize_t l = readlinkat(it->link_dirfd, it->link_name, text, sizeof(text) - 1);

			if (l > 0) {
				const char *slash = strrchr(it->path, '/');
				_cleanup_free_ char *dir = xstrndup(it->path, slash > it->path ? (size_t)(slash - it->path) : 1);
				_cleanup_free_ char *lands = NULL;

				text[l] = '\0';
				lands = path_clean_join(dir, text);
				/* a chain (Debian's /usr/bin/nvidia-smi ->
				 * /etc/alternatives/... -> /usr/lib/nvidia/current/...):
				 * the container has only the target, so the link
				 * names it; one hop keeps the driver's own text */
				e->links[e->nlinks++] = (struct edit_link){ at, it->path,
					xstrdup(strcmp(lands, it->target) == 0 ? text : it->target) };
			}
		}
		if (at < e->nmounts) {  /* mounted already, for another name */
			memset(m, 0, sizeof(*m));
			continue;
		}
		if (it->kind == KIND_LIBRARIES)
			edits_libdir_add(&e->libdirs, m->destination);
		if (S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode))
			e->devices[e->ndevices++] = (struct edit_device){
				.path = m->destination, .host = m->source,
				.type = S_ISCHR(it->st.st_mode) ? 'c' : 'b',
				.major = major(it->st.st_rdev), .minor = minor(it->st.st_rdev),
				.mode = it->st.st_mode & 07777, .gid = it->st.st_gid,
				.cgroup = it->vendor->cgroup_devices,
			};
		e->nmounts++;
	}
}

void edits_free(struct edits *e)
{
	for (size_t i = 0; i < e->nlinks; i++)
		free(e->links[i].text);
	free(e->links);
	free(e->mounts);
	free(e->devices);
	strv_free(&e->libdirs);
	memset(e, 0, sizeof(*e));
}

struct devcg_rule *edits_rules(const struct edits *e, size_t *n)
{
	struct devcg_rule *rules = xcalloc(e->ndevices ? e->ndevices : 1, sizeof(*rules));

	*n = 0;
	for (size_t i = 0; i < e->ndevices; i++)
		if (e->devices[i].cgroup)
			rules[(*n)++] = (struct devcg_rule){ e->devices[i].type, e->devices[i].major,
							     e->devices[i].minor };
	return rules;
}

/* The SONAME of library mount M and the link the cache points at (the
 * SONAME in the library's directory, as ldconfig makes it): 0, or -1 when
 * the file is no ELF library this build reads. */
static int cache_entry(const struct edit_mount *m, char **soname, char **path)
{
	struct stat st;
	_cleanup_close_ int fd = reopen_regular(AT_FDCWD, m->it->fd, &st);
	struct elf_source src = { .fd = fd, .size = (uint64_t)st.st_size };
	struct elf_info info;
	struct oerr err;
	const char *slash = strrchr(m->destination, '/');
	int r = -1;

	if (fd < 0)
		return -1;
	if (elf_read(&src, NULL, &info, &err) == ELF_OK) {
		*soname = xstrdup(info.soname ? info.soname : slash + 1);
		*path = xasprintf("%.*s/%s", (int)(slash - m->destination), m->destination, *soname);
		r = 0;
	}
	elf_info_free(&info);
	return r;
}

/* The text outputs: every name escaped (escape_bytes), so that a file
 * name in a driver root holding a newline or an ESC forges no line and no
 * terminal sequence. */
#define ESC_MAX (PATH_MAX * 4 + 1)
static const char *esc(const char *s, char *buf)
{
	return escape_bytes(s, buf, ESC_MAX);
}

void edits_line(struct strv *lines, const char *what, const char *a, const char *b)
{
	static char x[ESC_MAX], y[ESC_MAX];

	strv_push_owned(lines, b ? xasprintf("%s %s %s", what, esc(a, x), esc(b, y)) : xasprintf("%s %s", what, esc(a, x)));
}

void edits_line_procview(struct strv *lines, const char *dir, const struct strv *entries)
{
	static char a[ESC_MAX];
	_cleanup_strv_ struct strv words = { 0 };

	strv_push(&words, "procview");
	strv_push(&words, esc(dir, a));
	for (size_t k = 0; k < entries->n; k++)
		strv_push(&words, esc(entries->v[k], a));
	strv_push_owned(lines, strv_join(&words, " "));
}

void edits_text_mounts(const struct edits *e, struct strv *lines)
{
	static char a[ESC_MAX], b[ESC_MAX];

	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];

		strv_push_owned(lines, xasprintf("mount %s %s %s", esc(m->source, a), esc(m->destination, b),
						 edit_flags_text(m->flags)));
		for (size_t k = 0; k < e->nlinks; k++)
			if (e->links[k].mount == i)
				edits_line(lines, "symlink", e->links[k].path, e->links[k].text);
	}
	for (size_t i = 0; i < e->nviews; i++)
		edits_line_procview(lines, e->views[i].vendor->proc_view, &e->views[i].entries);
}

void edits_text_cache(const struct edits *e, struct strv *lines)
{
	for (size_t i = 0; i < e->libdirs.n; i++)
		edits_line(lines, "ldcache", e->libdirs.v[i], NULL);
	for (size_t i = 0; i < e->nmounts; i++) {
		char *soname, *path;

		if (e->mounts[i].it->kind != KIND_LIBRARIES || cache_entry(&e->mounts[i], &soname, &path) < 0)
			continue;
		edits_line(lines, "ldcache-entry", soname, path);
		free(soname);
		free(path);
	}
}

cJSON *edits_json_add(cJSON *to, const char *key, cJSON *item)
{
	if (!item)
		oom();
	if (key)
		cJSON_AddItemToObject(to, key, item);
	else
		cJSON_AddItemToArray(to, item);
	return item;
}

#define add edits_json_add

static void add_str(cJSON *to, const char *key, const char *s)
{
	add(to, key, cJSON_CreateString(s));
}

static void add_num(cJSON *to, const char *key, double n)
{
	add(to, key, cJSON_CreateNumber(n));
}

/* "options": ["bind", "ro", "nosuid", ...] of a bind mount with FLAGS */
static void add_options(cJSON *o, unsigned flags)
{
	_cleanup_free_ char *text = xstrdup(edit_flags_text(flags));
	cJSON *opts = add(o, "options", cJSON_CreateArray());
	char *save = NULL;

	add_str(opts, NULL, "bind");
	for (char *t = strtok_r(text, ",", &save); t; t = strtok_r(NULL, ",", &save))
		add_str(opts, NULL, t);
}

static bool is_device(const struct edit_mount *m)
{
	return S_ISCHR(m->it->st.st_mode) || S_ISBLK(m->it->st.st_mode);
}

/* What E leaves to the cache hook, typed (cachehook.h) */
static void edits_cache(const struct edits *e, struct cache_edits *c)
{
	for (size_t i = 0; i < e->nmounts; i++)
		if (e->mounts[i].it->kind == KIND_LIBRARIES)
			strv_push(&c->libraries, e->mounts[i].destination);
	for (size_t i = 0; i < e->nlinks; i++) {
		strv_push(&c->links, e->links[i].path);
		strv_push(&c->links, e->links[i].text);
	}
	if (e->compat_dir && e->compat_host && e->libdirs.n) {
		c->compat_dir = xstrdup(e->compat_dir);
		c->compat_host = xstrdup(e->compat_host);
	}
	if (e->app_profile)
		c->app_profile = xstrdup(e->app_profile);
	for (size_t i = 0; i < e->nviews; i++) {
		struct cache_view *v = cachehook_view_add(c, e->views[i].vendor->proc_view,
							  e->views[i].vendor->proc_view_set);

		for (size_t k = 0; k < e->views[i].entries.n; k++)
			strv_push(&v->entries, e->views[i].entries.v[k]);
	}
}

/* The cache hook's object for E: {"path": HOOK_PATH, "args": ["ocidec-hook",
 * "--cdi", then cachehook_args()]}, or NULL when E has no library, link or
 * proc view. */
static cJSON *cache_hook(const struct edits *e, const char *hook_path)
{
	_cleanup_cache_edits_ struct cache_edits c = CACHE_EDITS_INIT;
	struct strv argv = { 0 };
	cJSON *hook, *args;

	if (!e->nlinks && !e->libdirs.n && !e->nviews && !e->app_profile)
		return NULL;
	hook = cJSON_CreateObject();
	if (!hook)
		oom();
	add_str(hook, "path", hook_path);
	args = add(hook, "args", cJSON_CreateArray());
	add_str(args, NULL, "ocidec-hook");
	add_str(args, NULL, "--cdi");
	edits_cache(e, &c);
	cachehook_args(&c, &argv);
	for (size_t i = 0; i < argv.n; i++)
		add_str(args, NULL, argv.v[i]);
	strv_free(&argv);
	/* an env of its own: a createContainer hook without one runs with
	 * the container's (runc), an image's LD_PRELOAD among it: NVIDIA's
	 * CVE-2025-23266 */
	add_str(add(hook, "env", cJSON_CreateArray()), NULL, "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	return hook;
}

/* The device nodes' groups (not root's) to the array GIDS, each once */
/* The device nodes' groups (not root's) to the array GIDS, each once; with
 * MAPS (a config's linux.gidMappings: a user namespace) each as the
 * container sees it, and one the namespace does not map left out, said
 * (setgroups would refuse it and the container not start) */
static void add_gids(const struct edits *e, cJSON *gids, const cJSON *maps)
{
	for (size_t i = 0; i < e->ndevices; i++) {
		double gid = e->devices[i].gid;
		bool there = e->devices[i].gid == 0, mapped = !cJSON_IsArray(maps) || !maps->child;

		for (const cJSON *m = cJSON_IsArray(maps) ? maps->child : NULL; m && !mapped && !there; m = m->next) {
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "containerID");
			const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "hostID");
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "size");

			if (cJSON_IsNumber(c) && cJSON_IsNumber(h) && cJSON_IsNumber(n) && gid >= h->valuedouble &&
			    gid < h->valuedouble + n->valuedouble) {
				gid = c->valuedouble + (gid - h->valuedouble);
				mapped = true;
			}
		}
		if (!mapped && !there) {
			log_warn("%s: group %u is not mapped in the container's user namespace: not added to the "
				 "process's groups", e->devices[i].path, e->devices[i].gid);
			continue;
		}
		for (const cJSON *g = gids->child; g && !there; g = g->next)
			there = cJSON_IsNumber(g) && g->valuedouble == gid;
		if (!there)
			add(gids, NULL, cJSON_CreateNumber(gid));
	}
}

/* The network interfaces (CDI 1.1's netDevices: each moved into the
 * container under its host name), or said when cdiVersion has none */
static void add_netdevs_cdi(const struct edits *e, const struct cdi_opts *o, cJSON *edits)
{
	static bool said;
	cJSON *nd;

	if (!e->netdevs || !e->netdevs->n)
		return;
	if (!o->net_devices) {
		if (!said)
			log_warn("network interfaces %s%s left out: cdiVersion %s has no netDevices (1.1.0 has)",
				 e->netdevs->v[0], e->netdevs->n > 1 ? " ..." : "", o->version);
		said = true;
		return;
	}
	nd = add(edits, "netDevices", cJSON_CreateArray());
	for (size_t i = 0; i < e->netdevs->n; i++) {
		cJSON *n = add(nd, NULL, cJSON_CreateObject());

		add_str(n, "hostInterfaceName", e->netdevs->v[i]);
		add_str(n, "name", e->netdevs->v[i]);
	}
}

cJSON *edits_cdi_json(const struct edits *e, const struct cdi_opts *o, struct oerr *err)
{
	cJSON *edits = cJSON_CreateObject(), *nodes = NULL, *mounts = NULL, *hook;

	if (!edits)
		oom();
	for (size_t i = 0; i < e->ndevices; i++) {
		const struct edit_device *d = &e->devices[i];
		char type[2] = { d->type, '\0' };
		cJSON *n;

		if (o->rootless && strcmp(d->host, d->path) != 0)
			continue;  /* a bind mount, below */
		if (!o->host_paths && strcmp(d->host, d->path) != 0) {
			cJSON_Delete(edits);
			return oerr_set(err, 0, "%s: on the host at %s: cdiVersion %s has no hostPath for device "
					"nodes (0.5.0 has)", d->path, d->host, o->version), NULL;
		}
		nodes = nodes ? nodes : add(edits, "deviceNodes", cJSON_CreateArray());
		n = add(nodes, NULL, cJSON_CreateObject());
		add_str(n, "path", d->path);
		if (o->host_paths)
			add_str(n, "hostPath", d->host);
		add_str(n, "type", type);
		add_num(n, "major", d->major);
		add_num(n, "minor", d->minor);
		if (d->gid)
			add_num(n, "gid", d->gid);
	}
	if (nodes && o->gids) {
		cJSON *gids = add(edits, "additionalGids", cJSON_CreateArray());

		add_gids(e, gids, NULL);
		if (!gids->child)
			cJSON_DeleteItemFromObjectCaseSensitive(edits, "additionalGids");
	} else if (nodes) {
		static bool said;

		for (size_t i = 0; i < e->ndevices && !said; i++) {
			if (!e->devices[i].gid || (e->devices[i].mode & 0006) == 0006)
				continue;
			said = true;
			log_warn("%s: group %u only: a non-root container needs that group (--group-add %u), "
				 "which cdiVersion 0.7.0 adds itself (--cdi-version 0.7.0)", e->devices[i].host,
				 e->devices[i].gid, e->devices[i].gid);
		}
	}
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];
		cJSON *n;

		if (is_device(m) && !(o->rootless && strcmp(m->source, m->destination) != 0))
			continue;
		mounts = mounts ? mounts : add(edits, "mounts", cJSON_CreateArray());
		n = add(mounts, NULL, cJSON_CreateObject());
		add_str(n, "hostPath", m->source);
		add_str(n, "containerPath", m->destination);
		add_options(n, m->flags);
	}
	/* the hook: the libraries for the cache, the driver's links */
	if ((hook = cache_hook(e, o->hook_path))) {
		add_str(hook, "hookName", "createContainer");
		add(add(edits, "hooks", cJSON_CreateArray()), NULL, hook);
	}
	add_netdevs_cdi(e, o, edits);
	return edits;
}

/* OBJ's member KEY, made as NEW (an object or array) when missing; NULL
 * when it is there but of another type */
static cJSON *member(cJSON *obj, const char *key, bool array)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!m)
		return add(obj, key, array ? cJSON_CreateArray() : cJSON_CreateObject());
	return (array ? cJSON_IsArray(m) : cJSON_IsObject(m)) ? m : NULL;
}

/* Whether NAME is a virtual network interface of this network namespace
 * (no device under it: ethtool's driver info names no bus, as for dummy,
 * veth, ifb): the kernel destroys such an interface with the network
 * namespace it is in, where it gives a device's interface back to its
 * first network namespace. False where there is no such interface here
 * (the runtime says so) or the kernel does not answer. */
static bool netdev_virtual(int sock, const char *name)
{
	struct {
		uint32_t cmd;
		char driver[32], version[32], fw_version[32], bus_info[32], erom_version[32], reserved2[12];
		uint32_t n_priv_flags, n_stats, testinfo_len, eedump_len, regdump_len;
	} info = {.cmd = 0x3 /* ETHTOOL_GDRVINFO */};
	struct ifreq ifr = {0};

	if (sock < 0 || strlen(name) >= sizeof(ifr.ifr_name))
		return false;
	memcpy(ifr.ifr_name, name, strlen(name) + 1);
	if (ioctl(sock, SIOCGIFINDEX, &ifr) < 0)
		return false;
	ifr.ifr_data = (void *)&info;
	if (ioctl(sock, 0x8946 /* SIOCETHTOOL */, &ifr) < 0)
		return errno == EOPNOTSUPP;  /* no driver info and no parent device */
	return !info.bus_info[0];
}

/* The network interfaces into LINUX_'s netDevices ("HOST": {"name":
 * "HOST"}; crun 1.28 moves them, runc 1.3.6 ignores the member), where the
 * container has a network namespace of its own (a new one). On the host's
 * (no network namespace in the config), nothing moves: where all the
 * vendor's devices were asked for, the container sees what it asked for
 * (every interface is there: Habana's `docker run --net=host`); where some
 * were, it would see the others' too, and cannot have its own alone:
 * refused. Another's namespace, at a path (a pod's): left out, said. */
static int oci_netdevs(const struct edits *e, cJSON *linux_, struct oerr *err)
{
	const cJSON *ns;
	bool own = false, shared = false;
	cJSON *nd;
	int sock;

	if (!e->netdevs || !e->netdevs->n)
		return 0;
	cJSON_ArrayForEach(ns, cJSON_GetObjectItemCaseSensitive(linux_, "namespaces")) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ns, "type"), *p = cJSON_GetObjectItemCaseSensitive(ns, "path");

		if (!cJSON_IsString(t) || strcmp(t->valuestring, "network") != 0)
			continue;
		if (!cJSON_IsString(p) || !*p->valuestring)
			own = true;
		else
			shared = true;
	}
	if (!own && !shared && e->netdevs_some)
		return oerr_set(err, 0, "network interfaces %s%s: the devices asked for cannot have them alone in the host's "
			 "network namespace, which the container shares (it would see every device's): give it a network "
			 "namespace of its own, or ask for all devices", e->netdevs->v[0], e->netdevs->n > 1 ? " ..." : "");
	if (!own && !shared) {
		log_info("network interfaces %s%s: in the host's network namespace, which the container shares",
			 e->netdevs->v[0], e->netdevs->n > 1 ? " ..." : "");
		return 0;
	}
	if (!own) {
		log_warn("network interfaces %s%s left out: the container joins another's network namespace",
			 e->netdevs->v[0], e->netdevs->n > 1 ? " ..." : "");
		return 0;
	}
	if (!(nd = member(linux_, "netDevices", false)))
		return oerr_set(err, 0, "config.json: linux.netDevices is not what the runtime spec says");
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (size_t i = 0; i < e->netdevs->n; i++) {
		cJSON *o;

		if (cJSON_GetObjectItemCaseSensitive(nd, e->netdevs->v[i]))
			continue;  /* the container's own entry for it stays */
		o = add(nd, e->netdevs->v[i], cJSON_CreateObject());
		add_str(o, "name", e->netdevs->v[i]);
		if (netdev_virtual(sock, e->netdevs->v[i]))
			log_warn("network interface %s is a virtual one: it goes with the container's network namespace when the container ends, not back here",
				 e->netdevs->v[i]);
	}
	if (sock >= 0)
		close(sock);
	return 0;
}

int edits_oci_apply(const struct edits *e, cJSON *config, const char *hook_path, struct oerr *err)
{
	cJSON *linux_ = member(config, "linux", false), *devs, *res, *rules, *mounts, *hooks, *cc, *hook;
	size_t nrules;
	struct devcg_rule *r;
	bool userns;

	if (!linux_ || !(devs = member(linux_, "devices", true)) || !(res = member(linux_, "resources", false)) ||
	    !(rules = member(res, "devices", true)) || !(mounts = member(config, "mounts", true)) ||
	    !(hooks = member(config, "hooks", false)) || !(cc = member(hooks, "createContainer", true)))
		return oerr_set(err, 0, "config.json: linux, linux.devices, linux.resources.devices, mounts or "
				"hooks.createContainer is not what the runtime spec says");
	/* In a user namespace of its own the runtime cannot make a node: it
	 * binds the host's file at the node's container path, which a driver
	 * root other than / (a driver container's) does not have. There the
	 * node is a bind mount of the driver root's, read-only as the hook's,
	 * with its cgroup rule. So too where the runtime itself runs in a user
	 * namespace (rootless Docker and containerd: RootlessKit's), whatever
	 * config.json says. */
	userns = !in_initial_userns();
	{
		const cJSON *ns;

		cJSON_ArrayForEach(ns, cJSON_GetObjectItemCaseSensitive(linux_, "namespaces")) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(ns, "type");
			userns |= cJSON_IsString(t) && strcmp(t->valuestring, "user") == 0;
		}
	}
	for (size_t i = 0; i < e->ndevices; i++) {
		const struct edit_device *d = &e->devices[i];
		char type[2] = { d->type, '\0' };
		cJSON *o, *next;

		if (userns && strcmp(d->host, d->path) != 0)
			continue;  /* a bind mount, below */
		for (cJSON *x = devs->child; x; x = next) {  /* the image's entry for the path goes */
			cJSON *p = cJSON_GetObjectItemCaseSensitive(x, "path");
			next = x->next;
			if (cJSON_IsString(p) && strcmp(p->valuestring, d->path) == 0)
				cJSON_Delete(cJSON_DetachItemViaPointer(devs, x));
		}
		o = add(devs, NULL, cJSON_CreateObject());
		add_str(o, "path", d->path);
		add_str(o, "type", type);
		add_num(o, "major", d->major);
		add_num(o, "minor", d->minor);
		add_num(o, "fileMode", d->mode);
		add_num(o, "uid", 0);
		add_num(o, "gid", d->gid);
	}
	if (e->ndevices) {  /* the nodes' groups, for a non-root process */
		cJSON *proc = member(config, "process", false), *user = NULL, *gids = NULL;
		bool made = false;

		if (proc) {
			made = !cJSON_GetObjectItemCaseSensitive(proc, "user");
			user = member(proc, "user", false);
		}
		if (user && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(user, "additionalGids")))
			cJSON_DeleteItemFromObjectCaseSensitive(user, "additionalGids");  /* null: none */
		gids = user ? member(user, "additionalGids", true) : NULL;
		if (!gids)
			return oerr_set(err, 0, "config.json: process, process.user or its additionalGids is not "
					"what the runtime spec says");
		if (made) {  /* the spec's required members, as runc takes a missing user */
			add_num(user, "uid", 0);
			add_num(user, "gid", 0);
		}
		add_gids(e, gids, cJSON_GetObjectItemCaseSensitive(linux_, "gidMappings"));
		if (!gids->child && made)
			cJSON_DeleteItemFromObjectCaseSensitive(proc, "user");  /* gids with it */
		else if (!gids->child)
			cJSON_DeleteItemFromObjectCaseSensitive(user, "additionalGids");
	}
	r = edits_rules(e, &nrules);
	for (size_t i = 0; i < nrules; i++) {
		char type[2] = { r[i].type, '\0' };
		cJSON *o = add(rules, NULL, cJSON_CreateObject());

		add(o, "allow", cJSON_CreateTrue());
		add_str(o, "type", type);
		add_num(o, "major", r[i].major);
		add_num(o, "minor", r[i].minor);
		add_str(o, "access", "rwm");
	}
	free(r);
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];
		cJSON *o;

		if (is_device(m) && !(userns && strcmp(m->source, m->destination) != 0))
			continue;
		o = add(mounts, NULL, cJSON_CreateObject());
		add_str(o, "destination", m->destination);
		add_str(o, "type", "bind");
		add_str(o, "source", m->source);
		add_options(o, m->flags);
	}
	if ((hook = cache_hook(e, hook_path)))
		add(cc, NULL, hook);
	return oci_netdevs(e, linux_, err);
}

bool edits_empty(const struct edits *e)
{
	return e->nmounts == 0 && e->nlinks == 0;
}

cJSON *edits_json(const struct edits *e)
{
	cJSON *root = cJSON_CreateObject(), *a, *o;
	size_t nrules;
	struct devcg_rule *rules = edits_rules(e, &nrules);

	if (!root)
		oom();
	a = add(root, "mounts", cJSON_CreateArray());
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];

		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "source", m->source);
		add_str(o, "destination", m->destination);
		add_options(o, m->flags);
	}
	a = add(root, "symlinks", cJSON_CreateArray());
	for (size_t i = 0; i < e->nlinks; i++) {
		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "path", e->links[i].path);
		add_str(o, "target", e->links[i].text);
	}
	a = add(root, "devices", cJSON_CreateArray());
	for (size_t i = 0; i < e->ndevices; i++) {
		const struct edit_device *d = &e->devices[i];
		char type[2] = { d->type, '\0' };

		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "path", d->path);
		add_str(o, "hostPath", d->host);
		add_str(o, "type", type);
		add_num(o, "major", d->major);
		add_num(o, "minor", d->minor);
		add_num(o, "fileMode", d->mode);
	}
	a = add(root, "deviceRules", cJSON_CreateArray());
	for (size_t i = 0; i < nrules; i++) {
		char type[2] = { rules[i].type, '\0' };

		o = add(a, NULL, cJSON_CreateObject());
		add(o, "allow", cJSON_CreateTrue());
		add_str(o, "type", type);
		add_num(o, "major", rules[i].major);
		add_num(o, "minor", rules[i].minor);
		add_str(o, "access", "rwm");
	}
	a = add(root, "procViews", cJSON_CreateArray());
	for (size_t i = 0; i < e->nviews; i++) {
		cJSON *x = add(a, NULL, cJSON_CreateObject()), *en;

		add_str(x, "path", e->views[i].vendor->proc_view);
		if (e->views[i].vendor->proc_view_set)
			add_str(x, "set", e->views[i].vendor->proc_view_set);
		en = add(x, "entries", cJSON_CreateArray());
		for (size_t k = 0; k < e->views[i].entries.n; k++)
			add_str(en, NULL, e->views[i].entries.v[k]);
	}
	o = add(root, "ldcache", cJSON_CreateObject());
	a = add(o, "directories", cJSON_CreateArray());
	for (size_t i = 0; i < e->libdirs.n; i++)
		add_str(a, NULL, e->libdirs.v[i]);
	a = add(o, "entries", cJSON_CreateArray());
	for (size_t i = 0; i < e->nmounts; i++) {
		char *soname, *path;
		cJSON *x;

		if (e->mounts[i].it->kind != KIND_LIBRARIES || cache_entry(&e->mounts[i], &soname, &path) < 0)
			continue;
		x = add(a, NULL, cJSON_CreateObject());
		add_str(x, "soname", soname);
		add_str(x, "path", path);
		free(soname);
		free(path);
	}
	free(rules);
	return root;
}
