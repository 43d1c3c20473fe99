/* devices.c: see devices.h. */
#include "devices/devices.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The most paths one of a vendor's globs gives (a host has a few devices) */
enum { MAX_GLOB = 4096 };

static long long pci_address(const char *s, size_t n);

/* A pci_devices vendor's device: its sysfs directory (its name the PCI
 * address), its UUID (pci_uuid's first line; NULL: none), its nodes
 * ("/dev/dri/renderD128": the DEVNAME of each of its devices of the
 * pci_classes, drm and accel by default; sorted). */
struct pci_dev {
	char *dir;
	char *uuid;
	struct strv nodes;   /* each "/dev/NAME\tMAJOR:MINOR" (uevent's numbers) */
	long long bus;       /* its GPU's PCI address (pci_address's number): its own,
			      * or a partition's GPU's (-1: none) */
	char *module;        /* pci_module's first line (NULL: none) */
	struct strv netdevs; /* its network interfaces (pci_net's entries), sorted */
};


enum device_kind vendor_device_kind(const struct vendor *v)
{
	if (v->pci_devices.n)
		return DEVICES_PCI;
	if (v->device_uuids)
		return DEVICES_INFO;
	return v->per_device_nodes.n ? DEVICES_NODES : DEVICES_WHOLE;
}

bool vendor_has_mig(const struct vendor *v)
{
	return v->mig_minors && v->mig_caps;
}

/* The first line of DIR/NAME (at most 255 bytes), or NULL */
static char *first_line(const char *dir, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	char buf[256];
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? xstrdup(buf) : NULL;
}

/* A device node's name below /dev as the kernel gives it (uevent's
 * DEVNAME): relative, plain characters, no "." or ".." component */
static bool devname_valid(const char *s)
{
	return *s && *s != '/' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == strlen(s) &&
	       !has_dot_component(s) && !strstr(s, "//") && s[strlen(s) - 1] != '/';
}

/* The nodes of the class devices of DIR: DIR/CLASS/NAME/uevent's DEVNAME
 * (the kernel's name for the node below /dev) */
static void class_nodes(const char *dir, const char *class, struct strv *out)
{
	_cleanup_free_ char *cdir = xasprintf("%s/%s", dir, class);
	DIR *d = opendir(cdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *ev = NULL, *buf = NULL, *path = NULL;
		_cleanup_close_ int fd = -1;
		struct oerr err;
		char *save = NULL;
		size_t len;

		if (e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/uevent", cdir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0 || read_fd_all(fd, 16 * 1024, &buf, &len, &err) < 0)
			continue;
		const char *name = NULL;
		long major = -1, minor = -1;

		for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (strncmp(l, "DEVNAME=", 8) == 0 && devname_valid(l + 8))
				name = l + 8;
			else if (strncmp(l, "MAJOR=", 6) == 0)
				major = strtol(l + 6, NULL, 10);
			else if (strncmp(l, "MINOR=", 6) == 0)
				minor = strtol(l + 6, NULL, 10);
		}
		if (name && major >= 0 && minor >= 0)
			strv_push_owned(out, xasprintf("/dev/%s\t%ld:%ld", name, major, minor));
	}
	closedir(d);
}

static long long dir_address(const char *dir)
{
	const char *b = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;

	return pci_address(b, strlen(b));
}

static int cmp_pci(const void *a, const void *b)
{
	long long x = dir_address(*(char *const *)a), y = dir_address(*(char *const *)b);

	return x < y ? -1 : x > y;
}

/* ---- beyond PCI functions (issue 37): module IDs, network interfaces,
 * AMD's compute partitions ---- */

static void pci_dev_free(struct pci_dev *d)
{
	free(d->dir);
	free(d->uuid);
	free(d->module);
	strv_free(&d->nodes);
	strv_free(&d->netdevs);
	memset(d, 0, sizeof(*d));
}

/* D's module ID (pci_module's first line) and network interfaces (the
 * entries of pci_net, sorted), its GPU's PCI address BUS */
static void pci_dev_extra(const struct vendor *v, struct pci_dev *d, long long bus)
{
	d->bus = bus;
	d->module = v->pci_module ? first_line(d->dir, v->pci_module) : NULL;
	if (v->pci_net) {
		_cleanup_free_ char *ndir = xasprintf("%s/%s", d->dir, v->pci_net);
		DIR *nd = opendir(ndir);
		struct dirent *e;

		while (nd && (e = readdir(nd)) && d->netdevs.n < 64)
			if (e->d_name[0] != '.' && strlen(e->d_name) < 16 && devname_valid(e->d_name) &&
			    !strchr(e->d_name, '/'))
				strv_push(&d->netdevs, e->d_name);
		if (nd)
			closedir(nd);
		strv_sort(&d->netdevs);
	}
}

bool kfd_properties_parse(const char *text, size_t len, struct kfd_node *out)
{
	static const char *const names[] = { "drm_render_minor", "location_id", "domain", "unique_id" };
	unsigned long long *fields[] = { &out->render_minor, &out->location_id, &out->domain, &out->unique_id };
	unsigned found = 0;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < len) {
		size_t end = i;

		while (end < len && text[end] != '\n')
			end++;
		for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
			size_t nl = strlen(names[k]), j = i + nl, digits;
			unsigned long long val = 0;

			/* "NAME VALUE", the first such line (AMD's toolkit takes the first) */
			if (found & (1u << k) || end - i <= nl + 1 || memcmp(text + i, names[k], nl) != 0 || text[j] != ' ')
				continue;
			j++;
			for (digits = 0; j < end && text[j] >= '0' && text[j] <= '9'; j++, digits++) {
				unsigned long long d = (unsigned long long)(text[j] - '0');

				if (val > (~0ULL - d) / 10)
					break;  /* beyond 64 bits: not taken */
				val = val * 10 + d;
			}
			if (digits && j == end) {
				*fields[k] = val;
				found |= 1u << k;
			}
		}
		i = end + 1;
	}
	out->has_unique_id = found & 8;
	return (found & 7) == 7;
}

/* The GPU's PCI address that a KFD node's domain and location_id give, as
 * pci_address's number (AMD's toolkit: the bus and device, function 0) */
static long long kfd_bus(const struct kfd_node *k)
{
	return k->domain > 0xffffffffULL ? -1
	       : (long long)(k->domain << 16 | ((k->location_id >> 8) & 0xff) << 8 | ((k->location_id >> 3) & 0x1f) << 3);
}

/* The render minor of a device's nodes ("/dev/dri/renderD130\t226:130":
 * its name's number, as AMD's toolkit reads it), or -1 */
static long render_minor(const struct pci_dev *d)
{
	for (size_t i = 0; i < d->nodes.n; i++) {
		const char *b = strrchr(d->nodes.v[i], '/'), *t = strchr(d->nodes.v[i], '\t');
		char *end;
		long m;

		if (!b || !t || strncmp(b + 1, "renderD", 7) != 0)
			continue;
		m = strtol(b + 8, &end, 10);
		if (end == t && m > 0)
			return m;
	}
	return -1;
}

struct part {
	struct pci_dev d;
	long minor;
	size_t group;   /* the order its GPU first appears in */
};

static int cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

/* The N PCI devices of *DEVS and V's partitions (partition_devices), as AMD's
 * toolkit lists them: each device whose render node is a KFD topology node,
 * grouped by that node's GPU (domain and location_id) in the order the GPUs
 * first appear (PCI devices in PCI order, then partitions in the glob's), each
 * group by render minor. No topology node at all (KFD not loaded): the PCI
 * devices as they are, no partition. Returns the new count. */
static size_t with_partitions(const struct vendor *v, struct pci_dev **devs, size_t n)
{
	_cleanup_free_ char *pat = xasprintf("%s/*/properties", v->partition_topology);
	struct strv props = { 0 }, g = { 0 };
	struct kfd_node *kn = NULL;
	struct part *all = NULL;
	long long *groups = NULL;
	size_t nk = 0, nall = 0, ngroups = 0, kept = 0;

	if (root_glob(HOST_ROOT, pat, &props, MAX_GLOB) < 0)
		log_warn("%s: partition_topology %s: more than %d nodes: partitions not taken", v->name,
			 v->partition_topology, MAX_GLOB);
	kn = xcalloc(props.n + 1, sizeof(*kn));
	for (size_t i = 0; i < props.n; i++) {
		_cleanup_close_ int fd = open(props.v[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		_cleanup_free_ char *buf = NULL;
		struct oerr err;
		size_t len;

		if (fd >= 0 && read_fd_all(fd, 64 * 1024, &buf, &len, &err) == 0 && kfd_properties_parse(buf, len, &kn[nk]) &&
		    kn[nk].render_minor > 0 && kn[nk].render_minor <= 0x7fffffff && kfd_bus(&kn[nk]) >= 0)
			nk++;
	}
	strv_free(&props);
	if (!nk) {
		free(kn);
		return n;
	}
	for (size_t i = 0; i < v->partition_devices.n; i++)
		if (root_glob(HOST_ROOT, v->partition_devices.v[i], &g, MAX_GLOB) < 0) {
			log_warn("%s: partition_devices %s: more than %d paths: partitions not taken", v->name,
				 v->partition_devices.v[i], MAX_GLOB);
			strv_free(&g);
			break;
		}
	strv_sort(&g);
	all = xcalloc(n + g.n + 1, sizeof(*all));
	groups = xcalloc(n + g.n + 1, sizeof(*groups));
	for (size_t i = 0; i < n + g.n; i++) {
		struct part *p = &all[nall];
		const struct kfd_node *k = NULL;
		size_t gi;

		if (i < n) {
			p->d = (*devs)[i];
			memset(&(*devs)[i], 0, sizeof(**devs));
		} else {
			if (i > n && strcmp(g.v[i - n], g.v[i - n - 1]) == 0)
				continue;  /* (two globs, one directory) */
			for (size_t c = 0; c < v->pci_classes.n; c++)
				class_nodes(g.v[i - n], v->pci_classes.v[c], &p->d.nodes);
			strv_sort(&p->d.nodes);
			p->d.dir = xstrdup(g.v[i - n]);
		}
		p->minor = render_minor(&p->d);
		for (size_t j = 0; j < nk && !k && p->minor > 0; j++)
			if (kn[j].render_minor == (unsigned long long)p->minor)
				k = &kn[j];
		if (!k) {  /* not KFD's: AMD's toolkit leaves it out */
			log_debug("%s: %s: no KFD topology node has its render node: left out", v->name, p->d.dir);
			pci_dev_free(&p->d);
			continue;
		}
		for (gi = 0; gi < ngroups && groups[gi] != kfd_bus(k); gi++)
			;
		if (gi == ngroups)
			groups[ngroups++] = kfd_bus(k);
		p->group = gi;
		if (i >= n) {  /* a partition: its GPU's address, unique ID (KFD's), module, interfaces */
			if (k->has_unique_id)
				p->d.uuid = xasprintf("%llx", k->unique_id);
			pci_dev_extra(v, &p->d, kfd_bus(k));
		}
		nall++;
	}
	strv_free(&g);
	qsort(all, nall, sizeof(*all), cmp_part);
	free(*devs);
	*devs = xcalloc(nall + 1, sizeof(**devs));
	for (size_t i = 0; i < nall; i++)
		(*devs)[kept++] = all[i].d;
	free(all);
	free(groups);
	free(kn);
	return kept;
}

/* Vendor V's pci_devices as the host has them now (vendor_pci_devices'
 * answer, read) */
static size_t read_pci_devices(const struct vendor *v, struct pci_dev **out)
{
	struct strv g = { 0 };
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < v->pci_devices.n; i++) {
		if (root_glob(HOST_ROOT, v->pci_devices.v[i], &g, MAX_GLOB) < 0) {
			/* cut short: a partial list would give an index another device */
			log_warn("%s: pci_devices %s: more than %d paths, or the deadline passed: no device taken",
				 v->name, v->pci_devices.v[i], MAX_GLOB);
			strv_free(&g);
			return 0;
		}
	}
	if (!g.n)
		return 0;
	qsort(g.v, g.n, sizeof(char *), cmp_pci);
	*out = xcalloc(g.n, sizeof(**out));
	for (size_t i = 0; i < g.n; i++) {
		struct pci_dev *d = &(*out)[n];

		/* a PCI address, once (two globs can match one device) */
		if (dir_address(g.v[i]) < 0 || (i && dir_address(g.v[i]) == dir_address(g.v[i - 1])))
			continue;
		for (size_t c = 0; c < v->pci_classes.n; c++)
			class_nodes(g.v[i], v->pci_classes.v[c], &d->nodes);
		if (!d->nodes.n)
			continue;
		strv_sort(&d->nodes);
		d->dir = xstrdup(g.v[i]);
		d->uuid = v->pci_uuid ? first_line(d->dir, v->pci_uuid) : NULL;
		pci_dev_extra(v, d, dir_address(d->dir));
		n++;
	}
	strv_free(&g);
	if (v->partition_topology)
		n = with_partitions(v, out, n);
	return n;
}

/* ---- the snapshot: a vendor's devices, read once a run ---- */

/* What vendor_uuid_each gives for one device */
struct inv_dev {
	char *file, *uuid;   /* uuid: NULL for a file without one (and for each of a
			      * partitioned GPU's devices: no one of them is it) */
	int minor, index;
	const struct pci_dev *pci;  /* pci_devices vendors: the device */
};
struct inventory {
	unsigned serial;      /* the vendor's (config.h) */
	struct pci_dev *pci;  /* pci_devices vendors: their devices */
	size_t npci;
	struct inv_dev *dev;
	size_t ndev;
	struct strv mig;      /* mig_caps vendors: each instance's access file */
	bool mig_read;
};
static struct inventory **inv;  /* (pointers: an answer stays where it is) */
static size_t ninv;

static void inv_add(struct inventory *in, const char *file, const char *uuid, int minor, int index)
{
	in->dev = xreallocarray(in->dev, in->ndev + 1, sizeof(*in->dev));
	in->dev[in->ndev++] = (struct inv_dev){ xstrdup(file), uuid ? xstrdup(uuid) : NULL, minor, index, NULL };
}

int info_file_each(const char *file, void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	char *save = NULL;
	struct oerr err;
	size_t len;

	if (fd < 0 || read_fd_all(fd, 64 * 1024, &buf, &len, &err) < 0)
		return -1;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *val = strchr(line, ':');

		if (!val)
			continue;
		*val++ = '\0';
		val += strspn(val, " \t");
		fn(line, val, arg);
	}
	return 0;
}

/* An information file's minor and UUID (read_uuid_files) */
struct uuid_file {
	int minor;
	char *uuid;
};

static void uuid_file_line(const char *key, const char *value, void *arg)
{
	struct uuid_file *u = arg;

	if (strcmp(key, "Device Minor") == 0)
		u->minor = atoi(value);
	else if (strcmp(key, "GPU UUID") == 0) {
		free(u->uuid);
		u->uuid = xstrdup(value);
	}
}

/* V's device_uuids files read into IN: each with its minor, in the glob's
 * (PCI bus) order */
static void read_uuid_files(const struct vendor *v, struct inventory *in)
{
	struct strv g = { 0 };
	int position = 0;

	if (root_glob(HOST_ROOT, v->device_uuids, &g, MAX_GLOB) < 0) {
		/* cut short: a partial list would give an index another device */
		log_warn("%s: device_uuids %s: more than %d files, or the deadline passed: no device taken", v->name,
			 v->device_uuids, MAX_GLOB);
		strv_free(&g);
		return;
	}
	for (size_t i = 0; i < g.n; i++) {
		struct uuid_file u = { -1, NULL };

		if (info_file_each(g.v[i], uuid_file_line, &u) == 0 && u.minor >= 0)
			inv_add(in, g.v[i], u.uuid, u.minor, v->device_index_bus ? position++ : u.minor);
		free(u.uuid);
	}
	strv_free(&g);
}

/* V's devices: read the first time they are asked for in this run, the
 * same answers after (a device that comes or goes meanwhile cannot shift
 * an index between two questions of one container's plan) */
static const struct inventory *inventory(const struct vendor *v)
{
	struct inventory *in;

	for (size_t i = 0; i < ninv; i++)
		if (inv[i]->serial == v->serial)
			return inv[i];
	inv = xreallocarray(inv, ninv + 1, sizeof(*inv));
	in = inv[ninv++] = xcalloc(1, sizeof(*in));
	in->serial = v->serial;
	switch (vendor_device_kind(v)) {
	case DEVICES_PCI:
		in->npci = read_pci_devices(v, &in->pci);
		for (size_t i = 0; i < in->npci; i++) {
			_cleanup_free_ char *file = xasprintf("%s/uevent", in->pci[i].dir);
			const struct pci_dev *d = &in->pci[i];
			bool shared = (i && in->pci[i - 1].bus == d->bus) || (i + 1 < in->npci && in->pci[i + 1].bus == d->bus);

			inv_add(in, file, d->bus >= 0 && shared ? NULL : d->uuid, (int)i, (int)i);
			in->dev[in->ndev - 1].pci = d;
		}
		break;
	case DEVICES_INFO:
		read_uuid_files(v, in);
		break;
	case DEVICES_NODES:
	case DEVICES_WHOLE:
		break;
	}
	return in;
}

void devices_forget(void)
{
	for (size_t i = 0; i < ninv; i++) {
		struct inventory *in = inv[i];

		for (size_t k = 0; k < in->npci; k++)
			pci_dev_free(&in->pci[k]);
		free(in->pci);
		for (size_t k = 0; k < in->ndev; k++) {
			free(in->dev[k].file);
			free(in->dev[k].uuid);
		}
		free(in->dev);
		strv_free(&in->mig);
		free(in);
	}
	free(inv);
	inv = NULL;
	ninv = 0;
}

const struct strv *vendor_mig_access(const struct vendor *v)
{
	struct inventory *in = (struct inventory *)inventory(v);

	if (!in->mig_read && vendor_has_mig(v)) {
		_cleanup_free_ char *pat = xasprintf("%s/gpu*/mig/gi*/ci*/access", v->mig_caps);

		root_glob(HOST_ROOT, pat, &in->mig, 65536);
	}
	in->mig_read = true;
	return &in->mig;
}

static size_t vendor_pci_devices(const struct vendor *v, const struct pci_dev **out)
{
	const struct inventory *in = inventory(v);

	*out = in->pci;
	return in->npci;
}

int vendor_uuid_each(const struct vendor *v,
		     int (*fn)(const char *file, const char *uuid, int minor, int index, void *arg),
		     void *arg)
{
	const struct inventory *in = inventory(v);
	int r = 0;

	for (size_t i = 0; i < in->ndev && r == 0; i++)
		r = fn(in->dev[i].file, in->dev[i].uuid, in->dev[i].minor, in->dev[i].index, arg);
	return r;
}

struct uuid_find {
	const char *uuid;     /* find by UUID (or PCI address: pci, -1 if none) */
	long found;
	long long pci;
};

/* A PCI address, "DOMAIN:BUS:DEV.FN" in hex ("0000:3b:00.0", NVML's
 * "00000000:3B:00.0"; "3b:00.0" is domain 0), as one number; -1 if S is
 * none (all of it read) */
static long long pci_address(const char *s, size_t n)
{
	unsigned long long part[4] = { 0 };
	int k = 0;
	char seps[4] = { 0 };
	size_t i = 0;

	if (!n)
		return -1;
	while (i < n && k < 4) {
		size_t start = i;
		unsigned long long v = 0;

		while (i < n && isxdigit((unsigned char)s[i]) && i - start < 8) {
			int c = tolower((unsigned char)s[i++]);
			v = v * 16 + (unsigned long long)(isdigit(c) ? c - '0' : c - 'a' + 10);
		}
		if (i == start)
			return -1;
		part[k] = v;
		seps[k++] = i < n ? s[i] : '\0';
		if (i < n)
			i++;
	}
	if (i != n || s[n - 1] == ':' || s[n - 1] == '.')
		return -1;
	if (k == 4 && seps[0] == ':' && seps[1] == ':' && seps[2] == '.' && !seps[3])  /* domain given */
		return part[0] > 0xffffffffULL || part[1] > 0xff || part[2] > 0x1f || part[3] > 7 ? -1
		       : (long long)(part[0] << 16 | part[1] << 8 | part[2] << 3 | part[3]);
	if (k == 3 && seps[0] == ':' && seps[1] == '.' && !seps[2])
		return part[0] > 0xff || part[1] > 0x1f || part[2] > 7 ? -1
		       : (long long)(part[0] << 8 | part[1] << 3 | part[2]);
	return -1;
}

/* A hexadecimal ID ("0x1a2b...", "1a2b..."; AMD's unique_id): its value
 * in *OUT, when S is one */
static bool hex_id(const char *s, unsigned long long *out)
{
	size_t n;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strspn(s, "0123456789abcdefABCDEF");
	if (!n || n > 16 || s[n])
		return false;
	*out = strtoull(s, NULL, 16);
	return true;
}

static int uuid_match(const char *file, const char *uuid, int minor, int index, void *arg)
{
	struct uuid_find *f = arg;
	bool hit;

	/* by UUID, or by PCI address (the directory the file is in, as
	 * NVIDIA's toolkit takes NVIDIA_VISIBLE_DEVICES=BUSID) */
	const char *end = strrchr(file, '/'), *start = end;
	unsigned long long a, b;

	(void)minor;
	while (start && start > file && start[-1] != '/')
		start--;
	hit = (uuid && strcasecmp(uuid, f->uuid) == 0) || (uuid && hex_id(uuid, &a) && hex_id(f->uuid, &b) && a == b) ||
	      (f->pci >= 0 && end && end > start && pci_address(start, (size_t)(end - start)) == f->pci);
	if (!hit)
		return 0;
	f->found = index;
	return 1;
}

/* The index of the device whose information file says "GPU UUID: UUID"
 * (NVIDIA's /proc/driver/nvidia/gpus/ * /information), or whose directory
 * is the PCI address UUID, or -1. */
long vendor_uuid_index(const struct vendor *v, const char *uuid)
{
	struct uuid_find f = { uuid, -1, pci_address(uuid, strlen(uuid)) };

	vendor_uuid_each(v, uuid_match, &f);
	return f.found;
}

static size_t vendor_id_indices(const struct vendor *v, const char *id, bool module, bool *set, size_t max)
{
	const struct inventory *in = inventory(v);
	long long bus = pci_address(id, strlen(id));
	unsigned long long a, b;
	size_t n = 0;

	/* a GPU by its unique ID (any of its devices': a partition's is KFD's)
	 * or its address: each of its devices */
	for (size_t i = 0; i < in->ndev && !module && bus < 0; i++) {
		const struct pci_dev *d = in->dev[i].pci;

		if (d && d->uuid && d->bus >= 0 &&
		    (strcasecmp(d->uuid, id) == 0 || (hex_id(d->uuid, &a) && hex_id(id, &b) && a == b)))
			bus = d->bus;
	}
	for (size_t i = 0; i < in->ndev; i++) {
		const struct pci_dev *d = in->dev[i].pci;
		const char *u = d ? d->uuid : in->dev[i].uuid;
		bool hit;

		if (module)
			hit = d && d->module && strcmp(d->module, id) == 0;
		else if (d)
			hit = (bus >= 0 && d->bus == bus) ||
			      (u && (strcasecmp(u, id) == 0 || (hex_id(u, &a) && hex_id(id, &b) && a == b)));
		else {
			struct uuid_find f = { id, -1, bus };

			hit = uuid_match(in->dev[i].file, u, in->dev[i].minor, in->dev[i].index, &f) == 1;
		}
		if (hit && in->dev[i].index >= 0 && (size_t)in->dev[i].index < max) {
			n++;   /* (one named before too: "GPU-x,GPU-x", "0,GPU-x") */
			set[in->dev[i].index] = true;
		}
	}
	return n;
}

void vendor_device_dirs(const struct vendor *v, const struct selection *sel, struct strv *out)
{
	enum device_kind k = vendor_device_kind(v);
	const struct inventory *in;

	if ((k != DEVICES_INFO && k != DEVICES_PCI) || (sel && sel->kind == SEL_NONE))
		return;
	in = inventory(v);
	for (size_t i = 0; i < in->ndev; i++) {
		const char *file = in->dev[i].file, *end = strrchr(file, '/');

		/* (a device's index names its minor: device_index = bus, the
		 * INDEXth file's; else the index is the minor) */
		if ((!sel || selection_has(sel, (unsigned long)in->dev[i].index)) && end && end > file)
			strv_push_owned(out, xstrndup(file, (size_t)(end - file)));
	}
}

void vendor_device_buses(const struct vendor *v, const struct selection *sel, struct strv *out)
{
	struct strv dirs = { 0 };

	vendor_device_dirs(v, sel, &dirs);
	for (size_t i = 0; i < dirs.n; i++)
		strv_push(out, strrchr(dirs.v[i], '/') ? strrchr(dirs.v[i], '/') + 1 : dirs.v[i]);
	strv_free(&dirs);
}

long vendor_index_minor(const struct vendor *v, unsigned long index)
{
	const struct inventory *in;

	if (!v->device_index_bus)
		return (long)index;
	in = inventory(v);
	for (size_t i = 0; i < in->ndev && index <= 65535; i++)
		if ((unsigned long)in->dev[i].index == index)
			return in->dev[i].minor;
	return -1;
}

long char_major(const char *names)
{
	_cleanup_close_ int fd = openat(proc_fd, "devices", O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len, best = (size_t)-1;
	char *save = NULL;
	bool chr = false;
	struct oerr err;
	long found = -1;

	if (fd < 0 || read_fd_all(fd, 64 * 1024, &buf, &len, &err) < 0)
		return -1;
	/* "Character devices:", its lines "%3d NAME", then "Block devices:" */
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *name;
		unsigned long major = strtoul(l, &name, 10);
		size_t k = 0;

		if (!isdigit((unsigned char)l[strspn(l, " ")]) || *name != ' ') {
			chr = strcmp(l, "Character devices:") == 0;
			continue;
		}
		if (!chr || major > 4095)  /* (12 bits: the kernel's most) */
			continue;
		name++;
		for (const char *n = names; k < best; k++) {
			size_t nl = strcspn(n, "|");

			if (strlen(name) == nl && memcmp(name, n, nl) == 0) {
				best = k;
				found = (long)major;
			}
			if (!n[nl])
				break;
			n += nl + 1;
		}
	}
	return found;
}

/* ---- selections ---- */

bool selection_has(const struct selection *s, unsigned long index)
{
	if (s->kind == SEL_ALL)
		return true;
	for (size_t i = 0; s->kind == SEL_SOME && i < s->n; i++)
		if (s->idx[i] == index)
			return true;
	return false;
}

void selection_add(struct selection *s, unsigned long index)
{
	if (s->kind == SEL_SOME && selection_has(s, index))
		return;
	if (s->kind != SEL_SOME) {
		s->kind = SEL_SOME;
		s->n = 0;
	}
	s->idx = xreallocarray(s->idx, s->n + 1, sizeof(*s->idx));
	s->idx[s->n++] = index;
}

void selection_set(struct selection *s, const bool *bits, size_t n)
{
	size_t k = 0;

	free(s->idx);
	s->idx = NULL;
	s->n = 0;
	for (size_t i = 0; i < n; i++)
		k += bits[i];
	s->kind = k ? SEL_SOME : SEL_NONE;
	if (k)
		s->idx = xcalloc(k, sizeof(*s->idx));
	for (size_t i = 0; i < n; i++)
		if (bits[i])
			s->idx[s->n++] = i;
}

void selection_add_mig(struct selection *s, const struct mig_instance *m)
{
	for (size_t i = 0; i < s->nmig; i++)
		if (mig_instance_eq(&s->mig[i], m))
			return;
	s->mig = xreallocarray(s->mig, s->nmig + 1, sizeof(*s->mig));
	s->mig[s->nmig++] = *m;
}

void selection_free(struct selection *s)
{
	free(s->idx);
	free(s->mig);
	memset(s, 0, sizeof(*s));
}

int selection_parse(const char *text, struct selection *s, struct oerr *err)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;

	memset(s, 0, sizeof(*s));
	if (strcmp(text, "all") == 0)
		return 0;
	s->kind = SEL_NONE;
	if (strcmp(text, "none") == 0)
		return 0;
	for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (!isdigit((unsigned char)tok[0]) || strspn(tok, "0123456789") != strlen(tok) || strlen(tok) > 9) {
			oerr_usage(err, "invalid device selection '%s' (all, none or indices)", tok);
			selection_free(s);
			return -1;
		}
		selection_add(s, strtoul(tok, NULL, 10));
	}
	return 0;
}

char *selection_text(const struct selection *s)
{
	size_t len = 0, cap = 16 + s->n * 11 + s->nmig * 36;
	char *out = xmalloc(cap);

	out[0] = '\0';
	if (s->kind != SEL_SOME)
		len = (size_t)snprintf(out, cap, "%s", s->kind == SEL_ALL ? "all" : "none");
	for (size_t i = 0; s->kind == SEL_SOME && i < s->n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%lu", i ? "," : "", s->idx[i]);
	for (size_t i = 0; i < s->nmig; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%lu/%u/%u", i ? "," : ", MIG ", s->mig[i].gpu,
					s->mig[i].gi, s->mig[i].ci);
	return out;
}

/* The node patterns (per_device_nodes) */

/* Per-device node pattern ("nvidia%u" or "/dev/dri/renderD%u") split into
 * directory, prefix and suffix. */
static void split_pattern(const char *pat, char **dir, char **prefix, char **suffix)
{
	_cleanup_free_ char *full = pat[0] == '/' ? xstrdup(pat) : xasprintf("/dev/%s", pat);
	char *slash = strrchr(full, '/');
	char *pct = strstr(slash, "%u");

	*dir = slash == full ? xstrdup("/") : xstrndup(full, slash - full);
	*prefix = xstrndup(slash + 1, pct - slash - 1);
	*suffix = xstrdup(pct + 2);
}

static int cmp_index(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}

/* The indices of the nodes per-device pattern PAT matches in the driver
 * root (ROOTFD), sorted, into IDX (at most MAX; more are said); their
 * number */
static size_t node_pattern_indices(int rootfd, const struct vendor *v, const char *pat, unsigned long *idx, size_t max)
{
	_cleanup_free_ char *dir = NULL, *prefix = NULL, *suffix = NULL;
	_cleanup_dir_ DIR *d = NULL;
	size_t pl, sl, n = 0;
	struct dirent *de;

	split_pattern(pat, &dir, &prefix, &suffix);
	pl = strlen(prefix);
	sl = strlen(suffix);
	d = root_opendir(rootfd, dir);
	if (!d) {
		log_debug("%s: no per-device nodes: %s: %s", v->name, dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		const char *s = de->d_name;
		size_t digits, len = strlen(s);

		if (len <= pl + sl || strncmp(s, prefix, pl) != 0 || strcmp(s + len - sl, suffix) != 0)
			continue;
		digits = strspn(s + pl, "0123456789");
		if (digits == 0 || digits != len - pl - sl || digits > 9)
			continue;
		if (n == max) {  /* said, never silent */
			log_warn("%s: more than %zu per-device nodes under %s: the first %zu taken", v->name, max,
				 dir, max);
			break;
		}
		idx[n++] = strtoul(s + pl, NULL, 10);
	}
	qsort(idx, n, sizeof(*idx), cmp_index);
	return n;
}

static char *node_pattern_path(const char *pat, unsigned long index)
{
	_cleanup_free_ char *dir = NULL, *prefix = NULL, *suffix = NULL;

	split_pattern(pat, &dir, &prefix, &suffix);
	return xasprintf("%s/%s%lu%s", strcmp(dir, "/") ? dir : "", prefix, index, suffix);
}

unsigned long *vendor_node_indices(const struct vendor *v, size_t *n)
{
	_cleanup_close_ int rootfd = open(v->driver_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_devices_ struct devices ds = { 0 };
	unsigned long *idx;

	*n = 0;
	vendor_devices(v, rootfd, NULL, false, &ds);
	idx = xcalloc(ds.n + 1, sizeof(*idx));
	for (size_t i = 0; i < ds.n; i++)
		if (ds.v[i].index >= 0)  /* (device_index = bus: a node no information file has is none) */
			idx[(*n)++] = (unsigned long)ds.v[i].index;
	qsort(idx, *n, sizeof(*idx), cmp_index);
	return idx;
}

/* The device IDs a container names */

/* One token of devices_select's VALUE into SET (indices) or S (MIG
 * devices); *LOOKUPS counts those by ID */
static int select_token(const struct vendor *v, const char *tok, bool module, devices_mig_fn *mig, bool *set,
			size_t max, struct selection *s, size_t *lookups, struct oerr *err)
{
	size_t d1 = strspn(tok, "0123456789"), hex = strspn(tok, "0123456789abcdefABCDEF");
	long idx = -1;
	char *end;

	/* module_env: module IDs (Habana's HABANA_VISIBLE_MODULES), each
	 * the device whose pci_module file says it */
	if (module) {
		if (++*lookups > 64)
			return oerr_set(err, 0, "%s: more than 64 devices named by ID", v->name);
		if (!vendor_id_indices(v, tok, true, set, max))
			return oerr_set(err, 0, "%s: no module '%.64s' (%s)", v->name, tok, v->module_env);
		return 0;
	}
	/* a range of indices, "0-3" (AMD's syntax) */
	if (d1 && d1 <= 4 && tok[d1] == '-' && strspn(tok + d1 + 1, "0123456789") == strlen(tok + d1 + 1) &&
	    strlen(tok + d1 + 1) && strlen(tok + d1 + 1) <= 4) {
		long lo = strtol(tok, NULL, 10), hi = strtol(tok + d1 + 1, NULL, 10);

		if (lo > hi || hi > SELECT_MAX_INDEX)
			return oerr_set(err, 0, "%s: device range '%s' is backwards or beyond 4096", v->name, tok);
		for (long i = lo; i <= hi; i++)
			set[i] = true;
		return 0;
	}
	/* a MIG device: its GPU instance and compute instance (the caller's
	 * resolver, mig.h's) */
	if (mig && mig(v, tok, NULL, NULL) == 1) {
		struct mig_instance m;

		if (++*lookups > 64)
			return oerr_set(err, 0, "%s: more than 64 devices named by ID", v->name);
		if (mig(v, tok, &m, err) < 0)
			return -1;
		selection_add_mig(s, &m);
		return 0;
	}
	if (!(hex > 8 && !tok[hex])) {
		errno = 0;
		idx = strtol(tok, &end, 10);
		if (*end || errno || idx < 0 || idx > SELECT_MAX_INDEX)
			idx = -1;
	}
	if (idx >= 0) {
		set[idx] = true;
		return 0;
	}
	if (++*lookups > 64)
		return oerr_set(err, 0, "%s: more than 64 devices named by ID", v->name);
	/* a GPU's ID or address: every partition of it */
	if (!vendor_id_indices(v, tok, false, set, max))
		return oerr_set(err, 0, "%s: no device '%.64s'", v->name, tok);
	return 0;
}

int devices_select(const struct vendor *v, const char *value, bool module, devices_mig_fn *mig,
		   struct selection *sel, struct oerr *err)
{
	enum { MAXDEV = SELECT_MAX_INDEX + 1 };
	_cleanup_free_ char *copy = xstrdup(value);
	_cleanup_free_ bool *set = xcalloc(MAXDEV, sizeof(*set));
	_cleanup_selection_ struct selection s = { 0 };
	char *save = NULL;
	size_t lookups = 0, turn = 0;

	memset(sel, 0, sizeof(*sel));
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (deadline_passed_at(turn++))
			return oerr_set(err, 0, "%s: the deadline passed while reading the devices the container names",
					v->name);
		if (select_token(v, tok, module, mig, set, MAXDEV, &s, &lookups, err) < 0)
			return -1;
	}
	selection_set(&s, set, MAXDEV);
	*sel = s;
	s = (struct selection){ 0 };
	return 0;
}

/* ---- the inventory as values (devices.h: struct device) ---- */

struct device *devices_add(struct devices *out, long index)
{
	struct device *d;

	out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
	d = &out->v[out->n++];
	*d = (struct device){ .index = index, .minor = -1, .bus = -1 };
	return d;
}

struct device_node *device_add_node(struct device *d, char *path, long major, long minor)
{
	d->nodes = xreallocarray(d->nodes, d->nnodes + 1, sizeof(*d->nodes));
	d->nodes[d->nnodes] = (struct device_node){ .path = path, .major = major, .minor = minor };
	return &d->nodes[d->nnodes++];
}

void devices_free(struct devices *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		struct device *d = &ds->v[i];

		for (size_t k = 0; k < d->nnodes; k++) {
			free(d->nodes[k].path);
			free(d->nodes[k].label);
			free(d->nodes[k].proc);
			free(d->nodes[k].absent);
		}
		free(d->nodes);
		free(d->dir);
		free(d->error);
	}
	free(ds->v);
	memset(ds, 0, sizeof(*ds));
}

void device_info(const struct vendor *v, struct device *d)
{
	const struct inventory *in;

	if (vendor_device_kind(v) != DEVICES_INFO || d->minor < 0)
		return;
	in = inventory(v);
	for (size_t i = 0; i < in->ndev; i++) {
		const char *file = in->dev[i].file, *slash = strrchr(file, '/');

		if (in->dev[i].minor != d->minor || !slash)
			continue;
		d->dir = xstrndup(file, (size_t)(slash - file));
		d->uuid = in->dev[i].uuid;
		d->bus = dir_address(d->dir);
		if (d->index < 0)
			d->index = in->dev[i].index;
		return;
	}
}

/* pci_devices: device I of the N in DEVS, its nodes with the numbers the
 * kernel gave them */
static void pci_device(struct devices *out, const struct pci_dev *devs, size_t n, unsigned long i, bool strict)
{
	struct device *d = devices_add(out, (long)i);

	d->strict = strict;
	if (i >= n)
		return;  /* (device_absent: "finds N") */
	d->minor = (long)i;
	d->dir = xstrdup(devs[i].dir);
	d->uuid = devs[i].uuid;
	d->bus = devs[i].bus;
	d->netdevs = &devs[i].netdevs;
	for (size_t k = 0; k < devs[i].nodes.n; k++) {
		const char *node = devs[i].nodes.v[k], *nums = strchr(node, '\t');
		unsigned long major = nums ? strtoul(nums + 1, NULL, 10) : 0;
		unsigned long minor = nums && strchr(nums, ':') ? strtoul(strchr(nums, ':') + 1, NULL, 10) : 0;

		device_add_node(d, xstrndup(node, strcspn(node, "\t")), (long)major, (long)minor);
	}
}

void vendor_devices(const struct vendor *v, int rootfd, const struct selection *sel, bool container,
		    struct devices *out)
{
	enum { MAX = 1024 };  /* nodes per pattern */
	bool whole = !sel || sel->kind == SEL_ALL;
	size_t np = v->per_device_nodes.n, nall = 0, n;
	_cleanup_free_ size_t *counts = NULL;
	_cleanup_free_ unsigned long *idx = NULL, *all = NULL;

	if (sel && sel->kind == SEL_NONE)
		return;
	if (vendor_device_kind(v) == DEVICES_PCI) {
		const struct pci_dev *devs;

		n = vendor_pci_devices(v, &devs);
		if (!n && container)
			log_warn("%s: active, but pci_devices (%s ...) finds no device with a node", v->name,
				 v->pci_devices.v[0]);
		for (size_t i = 0; i < (whole ? n : sel->n); i++)
			pci_device(out, devs, n, whole ? i : sel->idx[i], container && !whole);
		return;
	}
	/* DEVICES_WHOLE, or device_uuids with no node of their own: none */
	if (!np || (whole && rootfd < 0))
		return;
	/* per_device_nodes: the devices SEL names, each its nodes of its minor
	 * (device_index = bus: the information files' "Device Minor"); all:
	 * every number any pattern's nodes have in the driver root, each a
	 * device with the nodes found of that number */
	if (whole) {
		counts = xcalloc(np, sizeof(*counts));
		idx = xcalloc(np * MAX, sizeof(*idx));
		all = xcalloc(np * MAX + 1, sizeof(*all));
		for (size_t p = 0; p < np; p++) {
			counts[p] = node_pattern_indices(rootfd, v, v->per_device_nodes.v[p], idx + p * MAX, MAX);
			memcpy(all + nall, idx + p * MAX, counts[p] * sizeof(*idx));
			nall += counts[p];
		}
		qsort(all, nall, sizeof(*all), cmp_index);
	}
	for (size_t s = 0; s < (whole ? nall : sel->n); s++) {
		unsigned long num = whole ? all[s] : sel->idx[s];
		struct device *d;

		if (whole && s && num == all[s - 1])
			continue;
		d = devices_add(out, whole && v->device_index_bus ? -1 : (long)num);
		d->strict = container && !whole;
		d->minor = whole ? (long)num : vendor_index_minor(v, num);
		if (d->minor < 0)
			continue;  /* (device_absent: "lists no such device") */
		device_info(v, d);
		for (size_t p = 0; p < np; p++)
			if (!whole || bsearch(&num, idx + p * MAX, counts[p], sizeof(*idx), cmp_index))
				device_add_node(d, node_pattern_path(v->per_device_nodes.v[p], (unsigned long)d->minor), -1, -1);
	}
}

bool device_node_fits(const struct vendor *v, const struct device_node *n, const struct stat *st, bool link)
{
	if (n->minor < 0 || (S_ISCHR(st->st_mode) && !link && (n->major < 0 || (long)major(st->st_rdev) == n->major) &&
			     (long)minor(st->st_rdev) == n->minor))
		return true;
	if (n->label)
		log_warn("%s: %s: %s under driver_root %s is not the character device of minor %ld: left out", v->name,
			 n->label, n->path, v->driver_root, n->minor);
	else
		log_warn("%s: skipped %s: not the character device %ld:%ld the kernel made", v->name, n->path, n->major,
			 n->minor);
	return false;
}

/* The indices of V's per-device nodes, "0, 1" (at most 32, then "..."),
 * or "none": what a refusal names */
static char *indices_text(const struct vendor *v)
{
	size_t n = 0, len = 0;
	_cleanup_free_ unsigned long *idx = vendor_node_indices(v, &n);
	char *out;

	if (!n)
		return xstrdup("no device nodes");
	out = xmalloc(n * 12 + 8);
	for (size_t i = 0; i < n && i < 32; i++)
		len += (size_t)sprintf(out + len, "%s%lu", i ? ", " : "", idx[i]);
	if (n > 32)
		strcpy(out + len, ", ...");
	return out;
}

int device_absent(const struct vendor *v, const struct device *d, struct oerr *err)
{
	_cleanup_free_ char *have = NULL;

	if (vendor_device_kind(v) == DEVICES_PCI) {
		const struct pci_dev *devs;

		if (d->nnodes)
			return oerr_set(err, 0, "%s: no device %ld: none of its nodes (%s ...) is under driver_root %s",
					v->name, d->index, d->nodes[0].path, v->driver_root);
		return oerr_set(err, 0, "%s: no device %ld: %s finds %zu", v->name, d->index,
				v->partition_devices.n ? "pci_devices with partition_devices" : "pci_devices",
				vendor_pci_devices(v, &devs));
	}
	if (d->minor < 0 || !d->nnodes)
		return oerr_set(err, 0, "%s: no device %ld: %s lists no such device (device_index = bus)", v->name,
				d->index, v->device_uuids);
	/* asked for by name, and not there: the container would run without
	 * it (NVIDIA's hook fails the same way) */
	have = indices_text(v);
	return oerr_set(err, 0, "%s: no device %ld: %s%s not found (this host has %s)", v->name, d->index,
			strcmp(v->driver_root, "/") ? v->driver_root : "", d->nodes[0].path, have);
}
