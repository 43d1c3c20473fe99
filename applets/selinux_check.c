/* selinux-check: is this host ready to run accelerator containers confined?
 *
 * See: ocidec(1), APPLETS. Reports the SELinux mode (selinuxfs, found through
 * /proc/self/mountinfo, or --selinuxfs DIR), whether the kernel's policy
 * knows ocidec_container_t (a write of a context naming it to selinuxfs's
 * `context` node, which the kernel refuses for an unknown type), the
 * booleans that matter where the policy has them, and whether every path
 * `list` prints carries the context the vendor config names. Each problem
 * comes with the command that fixes it. Plain lines, or --json. Exit 0 when
 * all is in order or SELinux is disabled, 1 otherwise.
 */
#include "common/applet.h"
#include "common/config.h"
#include "common/log.h"
#include "common/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cJSON.h"

const char selinux_check_usage[] =
	"usage: ocidec selinux-check [-c DIR] [--json] [--selinuxfs DIR] [VENDOR...]\n"
	"\n"
	"Report the SELinux mode, whether the policy has ocidec's module\n"
	"(ocidec_container_t), the container booleans, and whether the paths\n"
	"`ocidec list` prints carry the contexts the vendor configs name; say what\n"
	"to run for each problem. Exit 0 when all is in order or SELinux is\n"
	"disabled, 1 otherwise.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -j, --json            one JSON object instead of lines\n"
	"  -s, --selinuxfs DIR   selinuxfs is mounted at DIR (default: found in\n"
	"                        /proc/self/mountinfo)\n";

#define TYPE_CONTEXT "system_u:system_r:ocidec_container_t:s0"

static const char *const booleans[] = {
	"container_use_devices", "container_use_dri_devices", "container_manage_cgroup",
	"virt_use_nfs", NULL,
};

struct report {
	bool json;
	cJSON *root, *problems, *paths;
	int nproblems;
};

static void problem(struct report *r, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct report *r, const char *fix, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->nproblems++;
	if (r->json) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "problem", msg);
		cJSON_AddStringToObject(p, "fix", fix);
		cJSON_AddItemToArray(r->problems, p);
	} else {
		out("problem: %s\n  fix: %s\n", msg, fix);
	}
}


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
 * with an unknown type written to selinuxfs's context node. */
static bool type_known(const char *fs, int *why)
{
	_cleanup_free_ char *path = xasprintf("%s/context", fs);
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	bool ok;

	*why = 0;
	if (fd < 0) {
		*why = errno;
		return false;
	}
	ok = write(fd, TYPE_CONTEXT, strlen(TYPE_CONTEXT)) == (ssize_t)strlen(TYPE_CONTEXT);
	if (!ok)
		*why = errno;
	close(fd);
	return ok;
}

struct label_check {
	struct report *r;
	int checked;
};

static void check_one(const struct vendor *v, const struct plan_item *it, bool link, const char *path,
		      const char *want, void *arg)
{
	struct label_check *c = arg;
	char cur[256] = "", fix[512];
	ssize_t n;

	c->checked++;
	n = plan_getxattr(it, link, "security.selinux", cur, sizeof(cur) - 1);
	cur[n > 0 ? n : 0] = '\0';
	if (c->r->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", path);
		cJSON_AddStringToObject(o, "label", cur);
		cJSON_AddStringToObject(o, "expected", want);
		cJSON_AddBoolToObject(o, "ok", strcmp(cur, want) == 0);
		cJSON_AddItemToArray(c->r->paths, o);
	}
	if (strcmp(cur, want) != 0) {
		snprintf(fix, sizeof(fix), "ocidec relabel %s", v->name);
		problem(c->r, fix, "%s is labelled %s, %s expects %s", path, *cur ? cur : "<no context>", v->name,
			want);
	}
}

static void check_labels(struct report *r, const struct config *cfg, int argc, char **argv,
			 int *checked, struct oerr *err, int *status)
{
	struct label_check c = { .r = r };

	if (plan_label_walk(cfg, argv + optind, argc - optind, check_one, &c, err) < 0)
		*status = applet_fail(err);
	*checked += c.checked;
}

APPLET_MAIN(selinux_check)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "selinuxfs", required_argument, NULL, 's' },
		{ 0 },
	};
	const char *dir = config_dir_default();
	_cleanup_free_ char *fs = NULL, *enforce = NULL;
	struct report r = { 0 };
	struct config cfg;
	struct oerr err;
	const char *mode;
	int o, status = EXIT_OK, checked = 0, why;
	bool known;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:js:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'j': r.json = true; break;
		case 's': free(fs); fs = xstrdup(optarg); break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (config_load_named(&cfg, dir, argv + optind, argc - optind, &err) < 0)
		return applet_fail(&err);
	if (!fs)
		fs = mountinfo_find("selinuxfs");
	if (fs)
		enforce = read_node(fs, "enforce");
	mode = !enforce ? "disabled" : strcmp(enforce, "1") == 0 ? "enforcing" : "permissive";
	if (r.json) {
		r.root = cJSON_CreateObject();
		cJSON_AddStringToObject(r.root, "mode", mode);
		if (fs && enforce)
			cJSON_AddStringToObject(r.root, "selinuxfs", fs);
		r.problems = cJSON_CreateArray();
		r.paths = cJSON_CreateArray();
	} else if (!enforce) {
		out("SELinux: disabled (no selinuxfs%s%s); nothing to check\n", fs ? " at " : " mounted",
		    fs ? fs : "");
	} else {
		out("SELinux: %s (selinuxfs at %s)\n", mode, fs);
	}

	if (enforce) {
		cJSON *bools = r.json ? cJSON_CreateObject() : NULL;

		known = type_known(fs, &why);
		if (r.json)
			cJSON_AddBoolToObject(r.root, "ocidec_container_t", known);
		if (known)
			out(r.json ? "" : "policy: ocidec_container_t is loaded\n");
		else
			problem(&r, "make -C selinux && semodule -i selinux/ocidec.pp",
				"the policy does not know ocidec_container_t (%s)", strerror(why));
		for (const char *const *b = booleans; *b; b++) {
			_cleanup_free_ char *name = xasprintf("booleans/%s", *b);
			_cleanup_free_ char *val = read_node(fs, name);
			bool on;
			if (!val)
				continue;
			on = val[0] == '1';
			if (r.json)
				cJSON_AddBoolToObject(bools, *b, on);
			else
				out("boolean %s: %s\n", *b, on ? "on" : "off");
			if (strcmp(*b, "container_use_devices") == 0 && on)
				problem(&r, "setsebool -P container_use_devices off",
					"container_use_devices is on: every container may use every device; "
					"ocidec_container_t needs no such boolean");
		}
		if (r.json)
			cJSON_AddItemToObject(r.root, "booleans", bools);
		check_labels(&r, &cfg, argc, argv, &checked, &err, &status);
		if (!r.json && status == EXIT_OK)
			out("labels: %d path%s checked\n", checked, checked == 1 ? "" : "s");
	}
	if (r.json) {
		char *s;
		cJSON_AddItemToObject(r.root, "paths", r.paths);
		cJSON_AddItemToObject(r.root, "problems", r.problems);
		cJSON_AddBoolToObject(r.root, "ok", r.nproblems == 0 && status == EXIT_OK);
		s = cJSON_PrintUnformatted(r.root);
		out("%s\n", s);
		free(s);
		cJSON_Delete(r.root);
	} else if (enforce && status == EXIT_OK) {
		out(r.nproblems ? "%d problem%s\n" : "all in order\n", r.nproblems, r.nproblems == 1 ? "" : "s");
	}
	config_free(&cfg);
	if (status == EXIT_OK && r.nproblems)
		status = EXIT_FAIL;
	return applet_finish_stdout(status);
}
