/* NVIDIA MIG devices: their names resolved to instances, the MIG map
 * (mig.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/devices.h"
#include "devices/mig.h"
#include "safety/rootpath.h"

enum { MAP_MAX = 1 << 20, NAME_MAX_ = 127 };

bool mig_name(const char *tok)
{
	size_t g = strspn(tok, "0123456789");

	if (strncasecmp(tok, "MIG-", 4) == 0)  /* libnvidia-container's case-insensitive prefix */
		return true;
	/* "G:M": digits, a colon, digits (never a PCI address: "3b:00.0") */
	return g && g <= 4 && tok[g] == ':' && strspn(tok + g + 1, "0123456789") == strlen(tok + g + 1) &&
	       strlen(tok + g + 1) && strlen(tok + g + 1) <= 4;
}

char *mig_cap_proc(const char *cap)
{
	const char *slash = strchr(cap, '/');

	if (!slash)
		return xasprintf("mig/%s", cap);
	return xasprintf("%.*s/mig%s", (int)(slash - cap), cap, slash);
}

long mig_cap_minor(const struct vendor *v, const char *cap)
{
	_cleanup_close_ int fd = open(v->mig_minors, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	size_t len, cl = strlen(cap);
	struct oerr err;

	if (fd < 0 || read_fd_all(fd, MAP_MAX, &buf, &len, &err) < 0)
		return -1;
	for (char *line = buf, *eol; line < buf + len; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(buf + len - line));
		if (!eol)
			eol = buf + len;
		if ((size_t)(eol - line) > cl + 1 && strncmp(line, cap, cl) == 0 && line[cl] == ' ') {
			char *end;
			long m = strtol(line + cl + 1, &end, 10);

			return end == eol && m >= 0 && m < (1 << 20) ? m : -1;
		}
	}
	return -1;
}

char *mig_instances(const struct vendor *v)
{
	const struct strv *g = vendor_mig_access(v);
	_cleanup_strv_ struct strv names = { 0 };
	size_t pl;

	if (!g->n)
		return xstrdup("-");
	pl = strlen(v->mig_caps) + 1;
	for (size_t i = 0; i < g->n; i++) {
		const char *p = g->v[i] + pl, *m = strstr(p, "/mig/");
		size_t l = strlen(p) - strlen("/access");

		strv_push_owned(&names, m ? xasprintf("%.*s/%.*s", (int)(m - p), p, (int)(l - (size_t)(m + 5 - p)), m + 5)
					  : xstrndup(p, l));
	}
	strv_sort(&names);
	return strv_join(&names, " ");
}

/* This boot's ID: a map from another boot is stale whatever /proc shows */
static char *boot_id(void)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct oerr err;
	size_t len;

	if (fd < 0 || read_fd_all(fd, 128, &buf, &len, &err) < 0)
		return xstrdup("-");
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(*buf ? buf : "-");
}

char *mig_fingerprint(const struct vendor *v)
{
	_cleanup_free_ char *now = mig_instances(v), *boot = boot_id();

	return xasprintf("instances %s\nboot %s\n", now, boot);
}

/* The map's text, if it is safe to read (a regular file of root's that no
 * one else may write: owned_by_root, the overflow uid of rootless podman's
 * user namespace only in a directory no one else may write) and current (made this boot, its
 * instances those /proc shows). ERR without the vendor's name. */
static int read_map(const struct vendor *v, char **text, size_t *len, struct oerr *err)
{
	_cleanup_close_ int fd = -1, dfd = -1;
	_cleanup_free_ char *now = NULL, *dir = NULL;
	struct stat st, ds;
	const char *eol;
	size_t nl;

	if (!v->mig_map)
		return oerr_set(err, 0, "MIG devices by UUID or index need the MIG map (mig_map)");
	dir = path_dir(v->mig_map);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = dfd < 0 ? -1 : openat(dfd, strrchr(v->mig_map, '/') + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return oerr_set(err, errno, "the MIG map %s (made by ocidec mig-map when MIG is set up)", v->mig_map);
	if (fstat(fd, &st) < 0 || fstat(dfd, &ds) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 022) ||
	    !owned_by_root(&st, &ds))
		return oerr_set(err, 0, "the MIG map %s is not a regular file of root's that only root may write",
				v->mig_map);
	if (read_fd_all(fd, MAP_MAX, text, len, err) < 0)
		return oerr_prefix(err, "the MIG map %s", v->mig_map);
	now = mig_fingerprint(v);
	nl = strlen(now);
	/* after the comment line: the fingerprint */
	eol = memchr(*text, '\n', *len);
	if (!eol || (size_t)(*len - (size_t)(eol + 1 - *text)) < nl || strncmp(eol + 1, now, nl) != 0) {
		free(*text);
		*text = NULL;
		now[strcspn(now, "\n")] = '\0';
		return oerr_set(err, 0, "the MIG map %s is stale: MIG was set up anew, or the host rebooted, since "
				"it was made (now: %.200s): run ocidec mig-map --nvidia-smi nvidia-smi",
				v->mig_map, now + strlen("instances "));
	}
	return 0;
}

int mig_map_each(const struct vendor *v, int (*fn)(const char *mig, const char *gpu, unsigned idx,
						    unsigned gi, unsigned ci, void *arg),
		 void *arg, struct oerr *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	char *save = NULL;
	int r = 0;

	if (read_map(v, &text, &len, err) < 0)
		return -1;
	for (char *line = strtok_r(text, "\n", &save); line && !r; line = strtok_r(NULL, "\n", &save)) {
		char mig[NAME_MAX_ + 1], gpu[NAME_MAX_ + 1];
		unsigned idx, gi, ci;
		const char *q = line;

		/* MIG GPU IDX GI CI, nothing after */
		if (scan_word(&q, mig, sizeof(mig)) && scan_word(&q, gpu, sizeof(gpu)) && scan_u(&q, &idx) &&
		    scan_u(&q, &gi) && scan_u(&q, &ci) && !q[strspn(q, " \t\n\v\f\r")] &&
		    strncmp(mig, "MIG-", 4) == 0)
			r = fn(mig, gpu, idx, gi, ci, arg);
	}
	return r < 0 ? -1 : 0;
}

struct map_find {
	const char *mig;   /* by MIG UUID, */
	const char *gpu;   /* or by GPU UUID and index */
	unsigned idx, gi, ci;
	char gpu_found[NAME_MAX_ + 1];
	bool found;
};

static int map_find(const char *mig, const char *gpu, unsigned idx, unsigned gi, unsigned ci, void *arg)
{
	struct map_find *f = arg;

	if (f->mig ? strcasecmp(mig, f->mig) != 0 : strcasecmp(gpu, f->gpu) != 0 || idx != f->idx)
		return 0;
	snprintf(f->gpu_found, sizeof(f->gpu_found), "%s", gpu);
	f->gi = gi;
	f->ci = ci;
	f->found = true;
	return 1;
}

struct index_uuid {
	long index;
	char uuid[NAME_MAX_ + 1];
};

static int index_uuid(const char *file, const char *uuid, int minor, int index, void *arg)
{
	struct index_uuid *u = arg;

	(void)file;
	(void)minor;
	if (index != u->index || !uuid)
		return 0;
	snprintf(u->uuid, sizeof(u->uuid), "%s", uuid);
	return 1;
}

int mig_resolve(const struct vendor *v, const char *tok, struct mig_instance *out, struct oerr *err)
{
	struct map_find f = { 0 };
	_cleanup_free_ char *ci_file = NULL, *gi_file = NULL;
	unsigned gi = 0, ci = 0;
	long idx, minor;
	struct stat st;

	if (!vendor_has_mig(v))
		return oerr_set(err, 0, "%s: '%.64s' names a MIG device: MIG is not set up for this vendor (mig_minors)",
				v->name, tok);
	if (strncasecmp(tok, "MIG-GPU-", 8) == 0) {
		/* MIG-GPU-<uuid>/GI/CI: the instance is in the name */
		const char *slash = strchr(tok, '/'), *q = slash;
		_cleanup_free_ char *gpu = NULL;

		if (!slash || slash - tok > NAME_MAX_ || !scan_lit(&q, "/") || !scan_u(&q, &gi) || !scan_lit(&q, "/") ||
		    !scan_u(&q, &ci) || *q ||
		    strspn(slash + 1, "0123456789/") != strlen(slash + 1))
			return oerr_set(err, 0, "%s: no MIG device '%.64s'", v->name, tok);
		gpu = xstrndup(tok + 4, (size_t)(slash - tok - 4));
		idx = vendor_uuid_index(v, gpu);
	} else {
		struct index_uuid u = { -1, "" };

		if (strncasecmp(tok, "MIG-", 4) == 0) {
			f.mig = tok;
		} else {
			u.index = strtol(tok, NULL, 10);
			vendor_uuid_each(v, index_uuid, &u);
			if (!u.uuid[0])
				return oerr_set(err, 0, "%s: no MIG device '%.64s': no GPU %ld", v->name, tok, u.index);
			f.gpu = u.uuid;
			f.idx = (unsigned)strtoul(strchr(tok, ':') + 1, NULL, 10);
		}
		if (mig_map_each(v, map_find, &f, err) < 0)
			return oerr_prefix(err, "%s: MIG device '%.64s'", v->name, tok);
		if (!f.found)
			return oerr_set(err, 0, "%s: no MIG device '%.64s' in the MIG map %s (one made since MIG was set "
					"up anew? ocidec mig-map --nvidia-smi nvidia-smi)", v->name, tok, v->mig_map);
		gi = f.gi;
		ci = f.ci;
		idx = vendor_uuid_index(v, f.gpu_found);
	}
	minor = idx < 0 ? -1 : vendor_index_minor(v, (unsigned long)idx);
	if (minor < 0)
		return oerr_set(err, 0, "%s: no MIG device '%.64s': its GPU is not here", v->name, tok);
	gi_file = xasprintf("%s/gpu%ld/mig/gi%u/access", v->mig_caps, minor, gi);
	ci_file = xasprintf("%s/gpu%ld/mig/gi%u/ci%u/access", v->mig_caps, minor, gi, ci);
	if (stat(gi_file, &st) < 0 || stat(ci_file, &st) < 0)
		return oerr_set(err, 0, "%s: no MIG device '%.64s': GPU %ld has no instance gi%u/ci%u (%s)", v->name,
				tok, idx, gi, ci, ci_file);
	*out = (struct mig_instance){ (unsigned long)idx, gi, ci };
	return 0;
}

/* ---- ocidec mig-map: nvidia-smi's text ---- */

struct smi_dev {
	char gpu[NAME_MAX_ + 1];
	char mig[NAME_MAX_ + 1];   /* -L: its UUID; "" for a -q record */
	unsigned idx, gi, ci;
	size_t section;            /* -q: its GPU's section */
	bool have_gi, have_ci;
};

/* "   Key      : value" -> KEY and VALUE trimmed; false if no colon */
static bool key_value(char *line, char **key, char **value)
{
	char *colon = strchr(line, ':'), *e;

	if (!colon)
		return false;
	*colon = '\0';
	*key = line + strspn(line, " \t");
	for (e = colon; e > *key && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	*value = colon + 1 + strspn(colon + 1, " \t");
	for (e = *value + strlen(*value); e > *value && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	return true;
}

/* An ID nvidia-smi prints (GPU-..., MIG-..., MIG-GPU-.../1/0): letters,
 * digits, '-' and '/' only, so that a map line is its five fields */
static bool valid_id(const char *s, size_t n)
{
	if (!n || n > NAME_MAX_)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '/')
			return false;
	return true;
}

/* the UUID in "... (UUID: X)" into OUT */
static bool paren_uuid(const char *line, char *out)
{
	const char *u = strstr(line, "(UUID: "), *end;

	if (!u)
		return false;
	u += 7;
	end = strchr(u, ')');
	if (!end || !valid_id(u, (size_t)(end - u)))
		return false;
	snprintf(out, NAME_MAX_ + 1, "%.*s", (int)(end - u), u);
	return true;
}

/* "GPU 00000000:3B:00.0": nvidia-smi -q's section of a GPU */
static bool section_line(const char *line)
{
	const char *a = line + 4;

	return strncmp(line, "GPU ", 4) == 0 && strlen(a) >= 7 && strspn(a, "0123456789abcdefABCDEF:.") == strlen(a) &&
	       strchr(a, ':') && strchr(a, '.');
}

int mig_map_text(const struct vendor *v, const char *text, size_t len, char **out, size_t *n, struct oerr *err)
{
	enum { MAX_GPUS = 1024, MAX_MIG = 4096 };
	_cleanup_free_ char *copy = xstrndup(text, len), *now = mig_fingerprint(v);
	_cleanup_free_ struct smi_dev *listed = NULL, *queried = NULL;
	_cleanup_free_ char (*section)[NAME_MAX_ + 1] = NULL;   /* -q: each "GPU BUSID" section's GPU UUID */
	_cleanup_free_ char *res = NULL;
	size_t nl = 0, nq = 0, ns = 0, cap;
	char gpu_l[NAME_MAX_ + 1] = "", *save = NULL;
	int mig_indent = -1;
	struct smi_dev *rec = NULL;
	bool processes = false;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int indent = (int)strspn(line, " \t");
		char *key, *value, tmp[NAME_MAX_ + 1];
		unsigned u;
		const char *q;

		/* nvidia-smi -L: "GPU 0: NAME (UUID: GPU-...)", then
		 * "  MIG 1g.10gb  Device  0: (UUID: MIG-...)" */
		if (indent == 0 && strncmp(line, "GPU ", 4) == 0 && paren_uuid(line, tmp)) {
			snprintf(gpu_l, sizeof(gpu_l), "%s", tmp);
			continue;
		}
		if (indent > 0 && strncmp(line + indent, "MIG ", 4) == 0 && paren_uuid(line, tmp) &&
		    strncmp(tmp, "MIG-", 4) == 0 &&
		    (q = strstr(line, "Device ")) && (q += 7, scan_u(&q, &u))) {
			if (!gpu_l[0])
				return oerr_set(err, 0, "nvidia-smi -L: MIG device %u before any GPU", u);
			for (size_t k = 0; k < nl; k++)
				if (strcasecmp(listed[k].mig, tmp) == 0 ||
				    (strcasecmp(listed[k].gpu, gpu_l) == 0 && listed[k].idx == u))
					return oerr_set(err, 0, "nvidia-smi -L: MIG device %s (%s, device %u) given "
							"twice", tmp, gpu_l, u);
			if (nl == MAX_MIG)
				return oerr_set(err, 0, "nvidia-smi -L: more than %d MIG devices", MAX_MIG);
			listed = xreallocarray(listed, nl + 1, sizeof(*listed));
			listed[nl] = (struct smi_dev){ .idx = u };
			snprintf(listed[nl].gpu, sizeof(listed[nl].gpu), "%s", gpu_l);
			snprintf(listed[nl].mig, sizeof(listed[nl].mig), "%s", tmp);
			nl++;
			continue;
		}
		/* nvidia-smi -q: a section "GPU 00000000:3B:00.0" for each GPU,
		 * its "GPU UUID : GPU-..." line and its "MIG Device" blocks
		 * (Index, GPU Instance ID, Compute Instance ID indented below)
		 * in any order; nothing after its "Processes" (their names are
		 * anyone's text) until the next section */
		if (indent == 0 && section_line(line)) {
			if (ns == MAX_GPUS)
				return oerr_set(err, 0, "nvidia-smi -q: more than %d GPUs", MAX_GPUS);
			section = xreallocarray(section, ns + 1, sizeof(*section));
			section[ns++][0] = '\0';
			rec = NULL;
			processes = false;
			continue;
		}
		if (processes)
			continue;
		if (rec && indent <= mig_indent)
			rec = NULL;
		if (ns && strcmp(line + indent, "Processes") == 0) {
			processes = true;
			rec = NULL;
			continue;
		}
		if (strcmp(line + indent, "MIG Device") == 0 && ns) {
			if (nq == MAX_MIG)
				return oerr_set(err, 0, "nvidia-smi -q: more than %d MIG devices", MAX_MIG);
			queried = xreallocarray(queried, nq + 1, sizeof(*queried));
			rec = &queried[nq++];
			*rec = (struct smi_dev){ .idx = (unsigned)-1, .section = ns - 1 };
			mig_indent = indent;
			continue;
		}
		if (!key_value(line, &key, &value))
			continue;
		if (strcmp(key, "GPU UUID") == 0 && ns && valid_id(value, strlen(value)) && !rec) {
			if (section[ns - 1][0])
				return oerr_set(err, 0, "nvidia-smi -q: a GPU section with two UUIDs (%s)", value);
			for (size_t k = 0; k + 1 < ns; k++)
				if (strcasecmp(section[k], value) == 0)
					return oerr_set(err, 0, "nvidia-smi -q: GPU %s given twice", value);
			snprintf(section[ns - 1], sizeof(section[ns - 1]), "%s", value);
		} else if (rec && (q = value, scan_u(&q, &u))) {
			if (strcmp(key, "Index") == 0)
				rec->idx = u;
			else if (strcmp(key, "GPU Instance ID") == 0)
				rec->gi = u, rec->have_gi = true;
			else if (strcmp(key, "Compute Instance ID") == 0)
				rec->ci = u, rec->have_ci = true;
		}
	}
	/* each record's GPU: its section's UUID; one record a device */
	for (size_t k = 0; k < nq; k++) {
		snprintf(queried[k].gpu, sizeof(queried[k].gpu), "%s", section[queried[k].section]);
		for (size_t j = 0; j < k; j++)
			if (queried[k].gpu[0] && strcasecmp(queried[j].gpu, queried[k].gpu) == 0 &&
			    queried[j].idx == queried[k].idx)
				return oerr_set(err, 0, "nvidia-smi -q: MIG device %u of %s given twice", queried[k].idx,
						queried[k].gpu);
	}
	cap = 256 + strlen(now) + nl * (3 * NAME_MAX_);
	res = xmalloc(cap);
	*n = (size_t)snprintf(res, cap, "# ocidec MIG map (ocidec mig-map): MIG UUID, GPU UUID, index, GI, CI\n%s", now);
	for (size_t i = 0; i < nl; i++) {
		unsigned gi = 0, ci = 0;
		const char *slash = strchr(listed[i].mig, '/'), *q = slash;
		bool ok = false;

		/* the old form has the instance in its name: /GI/CI */
		if (strncmp(listed[i].mig, "MIG-GPU-", 8) == 0 && slash && scan_lit(&q, "/") && scan_u(&q, &gi) &&
		    scan_lit(&q, "/") && scan_u(&q, &ci) && !*q)
			ok = true;
		for (size_t k = 0; k < nq && !ok; k++) {
			if (queried[k].gpu[0] && strcasecmp(queried[k].gpu, listed[i].gpu) == 0 &&
			    queried[k].idx == listed[i].idx && queried[k].have_gi && queried[k].have_ci) {
				gi = queried[k].gi;
				ci = queried[k].ci;
				ok = true;
			}
		}
		if (!ok)
			return oerr_set(err, 0, "MIG device %s (%s, device %u): nvidia-smi -q gives no GPU and compute "
					"instance for it: give the output of both nvidia-smi -L and nvidia-smi -q",
					listed[i].mig, listed[i].gpu, listed[i].idx);
		*n += (size_t)snprintf(res + *n, cap - *n, "%s %s %u %u %u\n", listed[i].mig, listed[i].gpu,
				       listed[i].idx, gi, ci);
		listed[i].gi = gi;
		listed[i].ci = ci;
		for (size_t j = 0; j < i; j++)
			if (strcasecmp(listed[j].gpu, listed[i].gpu) == 0 && listed[j].gi == gi && listed[j].ci == ci)
				return oerr_set(err, 0, "MIG devices %s and %s are the same instance (%s gi%u/ci%u)",
						listed[j].mig, listed[i].mig, listed[i].gpu, gi, ci);
	}
	*out = res;
	res = NULL;
	return 0;
}

int mig_map_current(const struct vendor *v, const char *map, struct oerr *err)
{
	_cleanup_free_ char *copy = xstrdup(map), *now = mig_instances(v);
	struct strv got = { 0 };
	char *save = NULL, *joined;
	int r = 0;

	for (char *line = strtok_r(copy, "\n", &save); line && !r; line = strtok_r(NULL, "\n", &save)) {
		char mig[NAME_MAX_ + 1], gpu[NAME_MAX_ + 1];
		unsigned idx, gi, ci;
		long gidx, minor;
		const char *q = line;

		if (!scan_word(&q, mig, sizeof(mig)) || !scan_word(&q, gpu, sizeof(gpu)) || !scan_u(&q, &idx) ||
		    !scan_u(&q, &gi) || !scan_u(&q, &ci) || strncmp(mig, "MIG-", 4) != 0)
			continue;
		gidx = vendor_uuid_index(v, gpu);
		minor = gidx < 0 ? -1 : vendor_index_minor(v, (unsigned long)gidx);
		if (minor < 0)
			r = oerr_set(err, 0, "nvidia-smi names GPU %s, which this host's driver does not show", gpu);
		else
			strv_push_owned(&got, xasprintf("gpu%ld/gi%u/ci%u", minor, gi, ci));
	}
	strv_sort(&got);
	joined = strv_join(&got, " ");
	if (!r && strcmp(got.n ? joined : "-", now) != 0)
		r = oerr_set(err, 0, "nvidia-smi's output gives the instances %.300s, the driver shows %.300s now: "
			     "run nvidia-smi again (MIG was set up anew meanwhile?)", got.n ? joined : "none", now);
	free(joined);
	strv_free(&got);
	return r;
}

/* MIG cap CAP ("gpu0/gi1/access", "config") as a node of D: the character
 * device of the minor mig_minors gives (nvidia-caps's), its proc file.
 * STRICT: required (a MIG device's, a cap asked for): one that is not
 * there, or has no minor, fails the plan; else left out. */
static void cap_node(const struct vendor *v, struct device *d, const char *cap, bool strict)
{
	long m = mig_cap_minor(v, cap);
	_cleanup_free_ char *proc = mig_cap_proc(cap);
	struct device_node *n;
	const char *pct = strstr(v->mig_nodes, "%u");  /* (config.c: mig_nodes has one) */

	if (m < 0) {
		if (strict)
			device_add_node(d, NULL, -1, -1)->absent =
				xasprintf("%s: MIG cap %s: no minor in %s", v->name, cap, v->mig_minors);
		return;
	}
	n = device_add_node(d, xasprintf("/dev/%.*s%ld%s", (int)(pct - v->mig_nodes), v->mig_nodes, m, pct + 2), -1, m);
	n->label = xasprintf("MIG cap %s", cap);
	n->proc = xasprintf("%s/%s", v->mig_caps, proc);
	if (strict)
		n->absent = xasprintf("%s: MIG cap %s: no character device %s of minor %ld under driver_root %s "
				      "(nvidia-modprobe -f %s/%s makes it)", v->name, cap, n->path, m, v->driver_root,
				      v->mig_caps, proc);
}

void mig_devices(const struct vendor *v, int rootfd, const struct selection *sel, unsigned caps, struct devices *out)
{
	static const char *const global[2] = { "config", "monitor" };

	if (!vendor_has_mig(v))
		return;
	for (size_t i = 0; sel && i < sel->nmig; i++) {
		const struct mig_instance *m = &sel->mig[i];
		unsigned long gpu[1] = { m->gpu };
		const struct selection one = { .kind = SEL_SOME, .idx = gpu, .n = 1 };
		long minor = vendor_index_minor(v, m->gpu);
		struct devices g = { 0 };
		struct device *d;

		if (minor >= 0)
			vendor_devices(v, rootfd, &one, true, &g);
		d = devices_add(out, (long)m->gpu);
		if (g.n) {  /* its GPU's device, taken whole: its nodes first */
			*d = g.v[0];
			g.n = 0;
		} else if (minor >= 0) {  /* (a vendor without per-device nodes: its GPU still) */
			d->minor = minor;
			device_info(v, d);
		}
		devices_free(&g);
		if (minor < 0) {
			d->error = xasprintf("%s: MIG device %lu/%u/%u: no GPU", v->name, m->gpu, m->gi, m->ci);
			continue;
		}
		_cleanup_free_ char *gcap = xasprintf("gpu%ld/gi%u/access", minor, m->gi);
		_cleanup_free_ char *ccap = xasprintf("gpu%ld/gi%u/ci%u/access", minor, m->gi, m->ci);
		cap_node(v, d, gcap, true);
		cap_node(v, d, ccap, true);
	}
	if (!sel || sel->kind == SEL_ALL) {  /* every GPU whole: every instance the driver shows */
		_cleanup_free_ char *now = mig_instances(v);
		char *save = NULL;

		for (char *t = strtok_r(now, " ", &save); t && strcmp(t, "-") != 0; t = strtok_r(NULL, " ", &save)) {
			unsigned g, gi, ci;
			const char *q = t;

			if (!scan_lit(&q, "gpu") || !scan_u(&q, &g) || !scan_lit(&q, "/gi") || !scan_u(&q, &gi) ||
			    !scan_lit(&q, "/ci") || !scan_u(&q, &ci))
				continue;
			_cleanup_free_ char *gcap = xasprintf("gpu%u/gi%u/access", g, gi);
			_cleanup_free_ char *ccap = xasprintf("gpu%u/gi%u/ci%u/access", g, gi, ci);
			struct device *d = devices_add(out, -1);

			cap_node(v, d, gcap, false);
			cap_node(v, d, ccap, false);
		}
	}
	for (unsigned k = 0; k < 2; k++)
		if (caps & (1u << k))
			cap_node(v, devices_add(out, -1), global[k], true);
}
