/* selinux-check: is this host ready to run accelerator containers confined?
 *
 * See: ocidec-selinux-check(1). Reports the SELinux mode (selinuxfs, found through
 * /proc/self/mountinfo, or --selinuxfs DIR), whether the kernel's policy
 * knows ocidec_container_t (a write of a context naming it to selinuxfs's
 * `context` node, which the kernel refuses for an unknown type), the
 * booleans that matter where the policy has them, and whether every path
 * `list` prints carries the context the vendor config names (its type and
 * level: what the kernel decides by) or, where none is named, whether the
 * kernel lets a confined container use it (selinuxfs's access node). It tells the
 * two bases apart: Fedora's policy (RHEL, CoreOS) with container-selinux,
 * whose virt module has virt_sandbox_use_all_caps, and refpolicy (Debian);
 * the container module's name and priority come from the policy store
 * (ROOT/var/lib/selinux/TYPE/active/modules), its release range from the
 * booleans it declares (the store keeps modules compressed, with no version
 * to read without a bzip2 decoder). Each problem
 * comes with the command that fixes it. The findings are one JSON object,
 * printed as it is (--json) or as lines. Exit 0 when all is in order or
 * SELinux is disabled, 1 when a problem was found, 3 when the labels
 * could not be read (nothing said about them).
 */
#include "applets/applet.h"
#include "base/report.h"
#include "devices/config.h"
#include "formats/ere.h"
#include "base/log.h"
#include "pipeline/plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cJSON.h"

const char selinux_check_usage[] =
	"usage: ocidec selinux-check [-c DIR] [--json] [--selinuxfs DIR] [--root DIR] [VENDOR...]\n"
	"\n"
	"Report the SELinux mode, the policy's base (Fedora/RHEL with\n"
	"container-selinux, or refpolicy) and container module, whether the\n"
	"policy has ocidec's module (ocidec_container_t), the container\n"
	"booleans, and whether the paths\n"
	"`ocidec list` prints carry the contexts the vendor configs name (type and\n"
	"level), or, where none is named, may be used by a confined container (the\n"
	"kernel asked); say what to run for each problem. Exit 0 when all is in order or SELinux is\n"
	"disabled, 1 when a problem was found, 3 when a check could not be made.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -j, --json            one JSON object instead of lines\n"
	"  -s, --selinuxfs DIR   selinuxfs is mounted at DIR (default: found in\n"
	"                        /proc/self/mountinfo)\n"
	"  -r, --root DIR        the policy's config and store under DIR (default /)\n"
	"      --policy-label PATH  print the label the policy's file contexts give PATH\n"
	"                        (what restorecon would set) and exit\n";

#define TYPE_CONTEXT "system_u:system_r:ocidec_container_t:s0"

/* The booleans that matter for accelerator containers, where the policy
 * has them: container-selinux's (and virt's) on Fedora/RHEL, refpolicy's
 * container module's on Debian. */
static const char *const booleans[] = {
	"container_use_devices", "container_use_xserver_devices", "container_use_dri_devices",
	"container_manage_cgroup", "virt_sandbox_use_all_caps", "virt_use_nfs",
	"container_use_nfs", "container_mounton_non_security", NULL,
};

/* The base, told by the booleans its modules declare */
struct base {
	const char *name;       /* "container-selinux" or "refpolicy", NULL: no container module */
	const char *release;    /* container-selinux's release range, from its booleans */
	const char *fix;        /* installs ocidec's module there */
	char *type;             /* SELINUXTYPE */
	const char *module;     /* "container" */
	int priority;           /* of the container module in the store, -1: not found */
};

/* The findings (report.h): --json's object carries mode, selinuxfs,
 * policy, base, container_module, ocidec_container_t, booleans and paths
 * besides them */
struct selinux_run {
	struct report rep;
	cJSON *paths;
	const char *fs, *store;   /* selinuxfs; the policy's directory (ROOT/etc/selinux/TYPE) */
	int unasked;              /* paths the kernel could not be asked about */
	bool known;               /* the loaded policy has ocidec_container_t */
};

/* The first line of DIR/NAME, or NULL. */
static char *read_node(const char *dir, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct oerr err;
	char *buf;
	size_t len;

	if (fd < 0 || read_fd_all(fd, 4096, &buf, &len, &err) < 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Does the policy know the type? The kernel refuses (EINVAL) a context
 * with an unknown type written to selinuxfs's context node: 1 known, 0
 * not; -1 (ERR) when the node could not be asked. */
static int type_known(const char *fs, struct oerr *err)
{
	_cleanup_free_ char *path = xasprintf("%s/context", fs);
	_cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return oerr_set(err, errno, "%s: the policy's types cannot be asked", path);
	if (write(fd, TYPE_CONTEXT, strlen(TYPE_CONTEXT)) == (ssize_t)strlen(TYPE_CONTEXT))
		return 1;
	if (errno == EINVAL)
		return 0;
	return oerr_set(err, errno, "%s: the policy's types cannot be asked", path);
}

static bool has_node(const char *fs, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", fs, name);

	return access(path, F_OK) == 0;
}

/* SELINUXTYPE= in ROOT/etc/selinux/config, or "targeted" */
static char *policy_type(const char *root)
{
	_cleanup_free_ char *path = xasprintf("%s/etc/selinux/config", root);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct oerr err;
	size_t len;

	if (fd >= 0 && read_fd_all(fd, 65536, &buf, &len, &err) == 0)
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			l += strspn(l, " \t");
			if (strncmp(l, "SELINUXTYPE=", 12) == 0) {
				size_t n = strcspn(l + 12, " \t\r\n");
				if (n && memchr(l + 12, '/', n) == NULL)
					return xstrndup(l + 12, n);
			}
		}
	return xstrdup("targeted");
}

/* The highest priority ROOT/var/lib/selinux/TYPE/active/modules/P/NAME
 * (the one semodule uses), or -1 */
static int module_priority(const char *root, const char *type, const char *name)
{
	_cleanup_free_ char *dir = xasprintf("%s/var/lib/selinux/%s/active/modules", root, type);
	DIR *d = opendir(dir);
	struct dirent *e;
	int best = -1;

	while (d && (e = readdir(d))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		_cleanup_free_ char *path = NULL;

		if (*end || end == e->d_name || p <= best || p > 999)
			continue;
		path = xasprintf("%s/%s/%s", dir, e->d_name, name);
		if (access(path, F_OK) == 0)
			best = (int)p;
	}
	if (d)
		closedir(d);
	return best;
}

static void find_base(const char *fs, const char *root, struct base *b)
{
	b->type = policy_type(root);
	b->module = "container";
	b->priority = module_priority(root, b->type, "container");
	if (has_node(fs, "booleans/virt_sandbox_use_all_caps")) {
		b->name = "container-selinux";
		b->release = has_node(fs, "booleans/container_use_xserver_devices") ? "v2.2xx or later"
			     : has_node(fs, "booleans/container_use_devices")       ? "v2.17x to v2.2xx"
										      : "v2.167 or earlier";
		b->fix = "dnf install ocidec-selinux (CoreOS: semodule -i ocidec.cil, built for its container-selinux)";
	} else if (b->priority > 0 || has_node(fs, "booleans/container_mounton_non_security")) {
		b->name = "refpolicy";
		b->release = NULL;
		b->fix = "make -C selinux && semodule -i selinux/ocidec.pp";
	} else {
		b->name = NULL;
		b->fix = "make -C selinux && semodule -i selinux/ocidec.pp";
	}
}

/* A context's type and level ("u:r:TYPE:LEVEL" -> "TYPE:LEVEL"): what the
 * kernel decides access by. The SELinux user is the creator's for device
 * nodes (unconfined_u), and restorecon without -F never changes it. */
static const char *type_level(const char *ctx)
{
	const char *c = strchr(ctx, ':');

	c = c ? strchr(c + 1, ':') : NULL;
	return c ? c + 1 : ctx;
}

/* The type of CTX, into BUF */
static const char *type_of(const char *ctx, char *buf, size_t n)
{
	const char *t = type_level(ctx);
	char raw[256];

	/* escaped: a label is whatever the file's owner set */
	snprintf(raw, sizeof(raw), "%.*s", (int)strcspn(t, ":"), t);
	return escape_bytes(raw, buf, n);
}

/* STORE/contexts/files/NAME's text (at most 16 MiB), or NULL */
static char *policy_file(const char *store, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/contexts/files/%s", store, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct oerr err;
	char *buf = NULL;
	size_t len;

	return fd >= 0 && read_fd_all(fd, 16u << 20, &buf, &len, &err) == 0 ? buf : NULL;
}

/* PATH with the policy's equivalences applied (file_contexts.subs, then
 * .subs_dist: "ALIAS REAL" lines, /lib -> /usr/lib on Debian, /var/run ->
 * /run), as libselinux rewrites a key before the lookup */
static char *fc_subs(const char *store, const char *path)
{
	static const char *const files[] = { "file_contexts.subs", "file_contexts.subs_dist" };

	for (size_t f = 0; f < 2; f++) {
		_cleanup_free_ char *buf = policy_file(store, files[f]);
		char *save = NULL;

		if (!buf)
			continue;
		for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *s2 = NULL, *alias, *real;
			size_t al;

			line += strspn(line, " \t");
			if (*line == '#' || !(alias = strtok_r(line, " \t", &s2)) || !(real = strtok_r(NULL, " \t", &s2)))
				continue;
			al = strlen(alias);
			if (al > 1 && strncmp(path, alias, al) == 0 && (path[al] == '/' || !path[al]))
				return xasprintf("%s%s", real, path + al);
		}
	}
	return xstrdup(path);
}

/* A file_contexts regex's literal start (escapes resolved) into STEM, as
 * libselinux's stem: a path that does not start with it cannot match.
 * *META: any unescaped regex character (an entry without one is exact,
 * and outranks every regex). The character before ? * { is optional: not
 * in the stem; a top-level | leaves no stem. */
static void fc_stem(const char *re, char *stem, size_t n, bool *meta)
{
	size_t k = 0;
	bool stop = false;

	*meta = false;
	for (const char *c = re; *c; c++) {
		if (*c == '\\' && c[1]) {
			c++;
			if (!stop && k + 1 < n)
				stem[k++] = *c;
			continue;
		}
		if (strchr(".^$?*+|[({", *c)) {
			*meta = true;
			if (!stop && (*c == '?' || *c == '*' || *c == '{') && k)
				k--;
			stop = true;
			if (*c == '|')
				k = 0;
			continue;
		}
		if (!stop && k + 1 < n)
			stem[k++] = *c;
	}
	stem[k] = '\0';
	if (strchr(re, '|'))
		stem[0] = '\0';
}

/* The label the policy's file contexts give PATH (of mode MODE), as
 * restorecon would (libselinux's label_file): the key rewritten by the
 * equivalences, then the last matching entry, an exact one before any
 * regex; NULL when none matches. Read from STORE/contexts/files/
 * file_contexts (and .local), POSIX extended regular expressions anchored
 * at both ends (ere.h), each entry's literal stem tried first. */
static char *fc_lookup(const char *store, const char *orig, mode_t mode)
{
	static const char *const files[] = { "file_contexts", "file_contexts.local" };
	static const struct { const char *flag; mode_t fmt; } kinds[] = {
		{ "--", S_IFREG }, { "-d", S_IFDIR }, { "-c", S_IFCHR }, { "-b", S_IFBLK },
		{ "-l", S_IFLNK }, { "-s", S_IFSOCK }, { "-p", S_IFIFO },
	};
	_cleanup_free_ char *path = fc_subs(store, orig);
	char *exact = NULL, *rx = NULL;

	for (size_t f = 0; f < 2; f++) {
		_cleanup_free_ char *buf = policy_file(store, files[f]);
		char *save = NULL;

		if (!buf)
			continue;
		for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *w[3] = { NULL, NULL, NULL }, *s2 = NULL, stem[4096];
			int nw = 0;
			bool meta;

			line += strspn(line, " \t");
			if (*line == '#' || !*line)
				continue;
			for (char *t = strtok_r(line, " \t", &s2); t && nw < 3; t = strtok_r(NULL, " \t", &s2))
				w[nw++] = t;
			if (nw < 2)
				continue;
			if (nw == 3) {  /* a file type */
				bool match = false;
				for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++)
					match |= strcmp(w[1], kinds[k].flag) == 0 && (mode & S_IFMT) == kinds[k].fmt;
				if (!match)
					continue;
				w[1] = w[2];
			}
			fc_stem(w[0], stem, sizeof(stem), &meta);
			if (strncmp(stem, path, strlen(stem)) != 0)
				continue;
			{
				/* anchored as libselinux does, "^" and "$" around the text */
				_cleanup_free_ char *anchored = xasprintf("^%s$", w[0]);

				if (ere_search(anchored, path) != 1)
					continue;
			}
			if (meta) {
				free(rx);
				rx = xstrdup(w[1]);
			} else {
				free(exact);
				exact = xstrdup(w[1]);
			}
		}
	}
	if (exact) {
		free(rx);
		return exact;
	}
	return rx;
}

/* The numbers selinuxfs gives class CLASS and its PERMS ("read open"):
 * the class's index, the permission bits; false when it has none */
static bool class_bits(const char *fs, const char *class, const char *perms, unsigned *index, unsigned *bits)
{
	_cleanup_free_ char *ipath = xasprintf("class/%s/index", class), *idx = read_node(fs, ipath);
	_cleanup_free_ char *copy = xstrdup(perms);
	char *save = NULL;

	if (!idx)
		return false;
	*index = (unsigned)strtoul(idx, NULL, 10);
	*bits = 0;
	for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		_cleanup_free_ char *ppath = xasprintf("class/%s/perms/%s", class, p), *v = read_node(fs, ppath);
		unsigned long b = v ? strtoul(v, NULL, 10) : 0;

		if (b >= 1 && b <= 32)
			*bits |= 1u << (b - 1);
	}
	return true;
}

/* One question to the kernel: may SCON do WANT (bits of class INDEX) on
 * TCON? The allowed bits in *ALLOWED; 0, or -1 with errno (EINVAL: a
 * context the loaded policy does not know) */
static int ask(const char *fs, const char *scon, const char *tcon, unsigned index, unsigned *allowed)
{
	_cleanup_free_ char *path = xasprintf("%s/access", fs), *req = xasprintf("%s %s %u", scon, tcon, index);
	_cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC);
	unsigned long a, d;
	const char *q;
	char reply[256];
	struct statfs sf;
	ssize_t n;

	if (fd < 0 || fstatfs(fd, &sf) < 0 || sf.f_type != 0xf97cff8c /* SELINUX_MAGIC */)
		return errno = ENODEV, -1;
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) || (n = read(fd, reply, sizeof(reply) - 1)) <= 0)
		return -1;
	reply[n] = '\0';
	q = reply;
	if (!scan_num(&q, &a, 16) || !scan_num(&q, &d, 16))
		return errno = EPROTO, -1;
	*allowed = (unsigned)a;
	return 0;
}

/* May a confined accelerator container (ocidec_container_t, with a
 * container's categories: two containers' apart, so that a file of one
 * container's categories is not taken for everyone's) do PERMS on a CLASS
 * labelled TCON? The kernel's answer (selinuxfs's access node, as
 * libselinux's security_compute_av asks it): 1 yes, 0 no (*MISSING the
 * permissions it lacks), -1 it could not be asked, -2 TCON is no context
 * of the loaded policy (the kernel treats such a file as unlabeled_t). */
static int kernel_allows(const char *fs, const char *tcon, const char *class, const char *perms, char *missing,
			 size_t mn)
{
	static const char *const levels[] = { ":s0:c1,c2", ":s0:c3,c4" };
	_cleanup_free_ char *mls = read_node(fs, "mls"), *copy = xstrdup(perms);
	bool is_mls = mls && strcmp(mls, "1") == 0;
	unsigned index, want, allowed = ~0u;
	char *save = NULL;
	size_t len = 0;

	if (!class_bits(fs, class, perms, &index, &want) || !want)
		return -1;
	for (const char *c = tcon; *c; c++)  /* one field of the request */
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return -2;
	for (size_t l = 0; l < (is_mls ? 2u : 1u); l++) {
		_cleanup_free_ char *scon = xasprintf("system_u:system_r:ocidec_container_t%s", is_mls ? levels[l] : "");
		unsigned one;

		if (ask(fs, scon, tcon, index, &one) < 0)
			return errno == EINVAL ? -2 : -1;
		allowed &= one;
	}
	missing[0] = '\0';
	for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		unsigned one, bit;

		if (class_bits(fs, class, p, &one, &bit) && bit && !(allowed & bit))
			len += (size_t)snprintf(missing + len, len < mn ? mn - len : 0, "%s%s", len ? " " : "", p);
	}
	return (allowed & want) == want;
}

/* Does PATH read as itself in a shell command (a fix to copy)? */
static bool shell_safe(const char *path)
{
	return strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-:@,=") == strlen(path);
}

/* What a container does with IT: the class and permissions to ask */
static void needs(const struct plan_item *it, const char **class, const char **perms)
{
	mode_t m = it->st.st_mode;

	if (S_ISCHR(m) || S_ISBLK(m)) {
		*class = S_ISCHR(m) ? "chr_file" : "blk_file";
		*perms = "read write open ioctl getattr map";  /* GPUs are mapped */
	} else if (S_ISDIR(m)) {
		*class = "dir";
		*perms = it->kind == KIND_IPC_WRITABLE ? "read search open getattr write add_name" : "read search open getattr";
	} else if (S_ISSOCK(m)) {
		*class = "sock_file";
		*perms = "write getattr";
	} else if (S_ISFIFO(m)) {
		*class = "fifo_file";
		*perms = "read write open getattr";
	} else {
		*class = "file";
		*perms = it->kind == KIND_BINARIES ? "read open getattr execute execute_no_trans map"
			 : it->kind == KIND_LIBRARIES ? "read open getattr execute map" : "read open getattr";
	}
}

static void check_one(const struct vendor *v, const struct plan_item *it, bool link, const char *path,
		      const char *want, void *arg)
{
	struct selinux_run *r = arg;
	char cur[4096] = "", missing[256], have[128], need[128];
	_cleanup_free_ char *fix = NULL;
	const char *class, *perms;
	bool dev = S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode);
	cJSON *o;
	ssize_t n;
	int a = -1;

	if (link && !want)
		return;  /* a link's own label: what reading it needs, not the container's use */
	n = plan_getxattr(it, link, "security.selinux", cur, sizeof(cur) - 1);
	cur[n > 0 ? n : 0] = '\0';
	needs(it, &class, &perms);
	/* no attribute at all: no SELinux kernel labels these files (one
	 * answers every file's with its in-core context) */
	if (!link && *cur && r->known)
		a = kernel_allows(r->fs, cur, class, perms, missing, sizeof(missing));
	o = cJSON_CreateObject();
	report_json_str(o, "path", path);
	report_json_str(o, "label", cur);
	if (want)
		report_json_str(o, "expected", want);
	else
		cJSON_AddNullToObject(o, "expected");
	if (a == -2) {
		cJSON_AddBoolToObject(o, "ok", false);
		cJSON_AddItemToArray(r->paths, o);
		fix = shell_safe(path) ? xasprintf("restorecon -F %s, or ocidec relabel %s", path, v->name)
				       : xasprintf("ocidec relabel %s (a name a shell would misread: no command given)", v->name);
		report_add(&r->rep, REPORT_PROBLEM, "labels", fix, NULL, "%s is labelled %s, which the loaded policy "
			   "does not know: the kernel treats it as unlabeled_t, which no container may use (%s needs it)",
			   path, cur, v->name);
		return;
	}
	if (want) {
		/* as the kernel decides: type and level, not the SELinux user or
		 * role; and then, labelled as configured, what the kernel says */
		bool same = strcmp(type_level(cur), type_level(want)) == 0;

		cJSON_AddBoolToObject(o, "ok", same && a != 0);
		cJSON_AddItemToArray(r->paths, o);
		if (!same) {
			fix = xasprintf("ocidec relabel %s", v->name);
			report_add(&r->rep, REPORT_PROBLEM, "labels", fix, NULL, "%s is labelled %s, %s expects %s", path,
				   *cur ? cur : "<no context>", v->name, want);
		} else if (a == 0) {
			fix = xasprintf("the module is missing a rule for %s (type %s): ocidec selinux-check's base and "
					"module, or selinux_%s_context in %s", class, type_of(cur, have, sizeof(have)),
					dev ? "device" : "file", v->file);
			report_add(&r->rep, REPORT_PROBLEM, "labels", fix, NULL, "%s is labelled %s as %s asks, and still a "
				   "confined container (ocidec_container_t) may not %s it", path, cur, v->name, missing);
		}
		return;
	}
	if (a < 0) {
		r->unasked++;
		cJSON_AddNullToObject(o, "ok");
		cJSON_AddItemToArray(r->paths, o);
		return;
	}
	cJSON_AddBoolToObject(o, "ok", a == 1);
	cJSON_AddItemToArray(r->paths, o);
	if (a == 1)
		return;
	{
		/* the policy's label, for a path it labels: restorecon's. Under a
		 * driver root other than / restorecon would give the policy's
		 * label for that place (/run's for /run/nvidia/driver), no
		 * container's to read: the vendor config's contexts there */
		const char *inside = strcmp(v->driver_root, "/") == 0 ? NULL : v->driver_root;
		_cleanup_free_ char *policy = inside ? NULL : fc_lookup(r->store, path, it->st.st_mode);
		char pm[256];
		bool policy_ok = policy && strcmp(policy, "<<none>>") != 0 &&
				 kernel_allows(r->fs, policy, class, perms, pm, sizeof(pm)) == 1;

		if (policy_ok) {
			fix = shell_safe(path) ? xasprintf("restorecon -F %s", path)
					       : xasprintf("restorecon -F on that file (a name a shell would misread: quote it)");
			report_add(&r->rep, REPORT_PROBLEM, "labels", fix, NULL, "%s is labelled %s (type %s): a confined "
				   "container (ocidec_container_t) may not %s it (%s needs it); the policy's label for it is "
				   "%s (type %s)", path, cur,
				type_of(cur, have, sizeof(have)), missing, v->name, policy, type_of(policy, need, sizeof(need)));
		} else {
			fix = dev ? xasprintf("selinux_device_context in %s (the type the policy gives such devices) and "
					      "ocidec relabel %s", v->file, v->name)
				  : xasprintf("selinux_file_context = system_u:object_r:ocidec_driver_file_t:s0 in %s (readable "
					      "by ocidec_container_t alone) and ocidec relabel %s", v->file, v->name);
			report_add(&r->rep, REPORT_PROBLEM, "labels", fix, NULL, "%s is labelled %s (type %s): a confined "
				   "container (ocidec_container_t) may not %s it (%s needs it)%s%s%s", path, cur,
				   type_of(cur, have, sizeof(have)), missing, v->name,
				inside ? "; under a driver root restorecon would give it the policy's label for that place, "
					 "no container's to read either" : policy ? "; the policy's own label for it, " : "",
				!inside && policy ? policy : "", !inside && policy ? ", would not do either" : "");
		}
	}
}

/* The policy: its base and container module, ocidec's type, the booleans,
 * then the labels of the paths of the configs CFG (VENDORS, N of them;
 * none: all); -1 (ERR) when the labels could not be read. */
static int check_policy(struct selinux_run *r, const char *fs, const char *root, const struct config *cfg,
			char *const *vendors, int n, struct oerr *err)
{
	cJSON *m = cJSON_CreateObject(), *bools, *root_json = r->rep.root;
	struct base base = { 0 };
	_cleanup_free_ char *store = NULL;
	int known, w;

	find_base(fs, root, &base);
	cJSON_AddStringToObject(root_json, "policy", base.type);
	if (base.name)
		cJSON_AddStringToObject(root_json, "base", base.name);
	else
		cJSON_AddNullToObject(root_json, "base");
	cJSON_AddItemToObject(root_json, "container_module", m);
	cJSON_AddStringToObject(m, "name", base.module);
	cJSON_AddNumberToObject(m, "priority", base.priority);
	if (base.release)
		cJSON_AddStringToObject(m, "release", base.release);
	if (base.name && strcmp(base.name, "container-selinux") == 0)
		report_add(&r->rep, REPORT_INFO, "policy", NULL, NULL, "%s, Fedora/RHEL/CoreOS base with "
			   "container-selinux (%s, by its booleans)", base.type, base.release);
	else if (base.name)
		report_add(&r->rep, REPORT_INFO, "policy", NULL, NULL, "%s, refpolicy base (Debian)", base.type);
	else
		report_add(&r->rep, REPORT_PROBLEM, "policy", "Fedora, RHEL: dnf install container-selinux; Debian: "
			   "semodule -i container.pp (built from selinux-policy-src)", NULL, "%s, no container module: "
			   "no container_t for ocidec_container_t to build on", base.type);
	if (base.priority > 0)
		report_add(&r->rep, REPORT_INFO, "policy", NULL, NULL, "container module %s at priority %d", base.module,
			   base.priority);
	store = xasprintf("%s/etc/selinux/%s", root, base.type);
	r->fs = fs;
	r->store = store;
	free(base.type);
	known = type_known(fs, err);
	if (known < 0)
		return -1;
	cJSON_AddBoolToObject(root_json, "ocidec_container_t", known);
	r->known = known;
	if (known)
		report_add(&r->rep, REPORT_OK, "policy", NULL, NULL, "ocidec_container_t is loaded");
	else
		report_add(&r->rep, REPORT_PROBLEM, "policy", base.fix, NULL, "the policy does not know "
			   "ocidec_container_t (%s)", strerror(EINVAL));
	bools = cJSON_AddObjectToObject(root_json, "booleans");
	for (const char *const *b = booleans; *b; b++) {
		_cleanup_free_ char *name = xasprintf("booleans/%s", *b);
		_cleanup_free_ char *val = read_node(fs, name);
		bool on = val && val[0] == '1';

		if (!val)
			continue;
		cJSON_AddBoolToObject(bools, *b, on);
		if (on && strcmp(*b, "container_use_devices") == 0)
			report_add(&r->rep, REPORT_PROBLEM, "boolean", "setsebool -P container_use_devices off", NULL,
				   "container_use_devices is on: every container may use every device; "
				   "ocidec_container_t needs no such boolean");
		else if (on && strcmp(*b, "container_use_xserver_devices") == 0)
			report_add(&r->rep, REPORT_PROBLEM, "boolean", "setsebool -P container_use_xserver_devices off",
				   NULL, "container_use_xserver_devices is on: every container_t may use the NVIDIA "
				   "devices; ocidec_container_t needs no such boolean");
		else
			report_add(&r->rep, REPORT_INFO, "boolean", NULL, NULL, "%s %s", *b, on ? "on" : "off");
	}
	w = plan_label_walk(cfg, vendors, n, true, check_one, r, err);
	r->store = NULL;
	if (w < 0)
		return -1;
	w = cJSON_GetArraySize(r->paths);
	report_add(&r->rep, REPORT_OK, "labels", NULL, NULL, "%d path%s checked", w, w == 1 ? "" : "s");
	if (r->unasked)
		report_add(&r->rep, REPORT_INFO, "labels", NULL, NULL, "%d path%s not checked: no context named, and no "
			   "kernel policy with ocidec_container_t to ask (selinuxfs's access node)", r->unasked,
			   r->unasked == 1 ? "" : "s");
	return 0;
}

/* --policy-label PATH: what restorecon would give PATH, from the file
 * contexts of the policy under ROOT */
static int policy_label(const char *root, const char *path)
{
	_cleanup_free_ char *type = policy_type(root);
	_cleanup_free_ char *store = xasprintf("%s/etc/selinux/%s", root, type);
	_cleanup_free_ char *ctx = NULL;
	struct stat st;

	if (path[0] != '/')
		return applet_usage_error("--policy-label %s: an absolute path", path);
	ctx = fc_lookup(store, path, lstat(path, &st) == 0 ? st.st_mode : S_IFREG);
	out("%s\n", ctx ? ctx : "<<none>>");
	return applet_finish_stdout(EXIT_OK);
}

/* Every check into R: SELinux's mode at selinuxfs FS (NULL: none), then
 * the policy under ROOT and the labels of the configs CFG (VENDORS, N of
 * them). EXIT_OK, or EXIT_UNKNOWN (or a usage error's) when a check could
 * not be made, said (a check not made is not a problem found) */
static int selinux_check_all(struct selinux_run *r, const char *fs, const char *root, const struct config *cfg,
			     char *const *vendors, int n, struct oerr *err)
{
	_cleanup_free_ char *enforce = fs ? read_node(fs, "enforce") : NULL;
	const char *mode = !enforce ? "disabled" : strcmp(enforce, "1") == 0 ? "enforcing" : "permissive";

	cJSON_AddStringToObject(r->rep.root, "mode", mode);
	if (!enforce) {
		report_add(&r->rep, REPORT_INFO, "selinux", NULL, NULL, "disabled (no selinuxfs %s%s): nothing to check",
			   fs ? "at " : "mounted", fs ? fs : "");
		return EXIT_OK;
	}
	cJSON_AddStringToObject(r->rep.root, "selinuxfs", fs);
	report_add(&r->rep, REPORT_INFO, "selinux", NULL, NULL, "%s (selinuxfs at %s)", mode, fs);
	if (check_policy(r, fs, root, cfg, vendors, n, err) == 0)
		return EXIT_OK;
	if (err->code != EXIT_USAGE)
		err->code = EXIT_UNKNOWN;
	return applet_fail(err);  /* said before the report, which goes on */
}

APPLET_MAIN(selinux_check)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "selinuxfs", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, 'r' },
		{ "policy-label", required_argument, NULL, 'L' },
		{ 0 },
	};
	const char *dir = config_dir_default(), *root = "/", *lookup = NULL;
	_cleanup_free_ char *fs = NULL;
	struct selinux_run r = { 0 };
	_cleanup_config_ struct config cfg = { 0 };
	int o, status;
	bool json = false;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:js:r:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'r': root = optarg; break;
		case 'L': lookup = optarg; break;
		case 'j': json = true; break;
		case 's': free(fs); fs = xstrdup(optarg); break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (lookup)
		return policy_label(root, lookup);
	if (config_load_named(&cfg, dir, argv + optind, argc - optind, err) < 0)
		return APPLET_FAILED;
	report_init(&r.rep, json);
	r.paths = cJSON_CreateArray();
	if (!fs)
		fs = mountinfo_find("selinuxfs");
	status = selinux_check_all(&r, fs, root, &cfg, argv + optind, argc - optind, err);
	cJSON_AddItemToObject(r.rep.root, "paths", r.paths);
	status = report_finish(&r.rep, status, "all in order", "each with its fix above");
	return applet_finish_stdout(status);
}
