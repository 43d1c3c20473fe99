/* The hooks-dir driver, podman's and CRI-O's: an oci-hooks(5) file,
 * ocidec.json, where they read it (/usr/share/containers/oci/hooks.d, or
 * where /usr is read-only /etc's and a containers.conf.d / crio.conf.d
 * drop-in naming both); nothing to restart, each container reads it. See
 * engine.h */
#include "engines/engine.h"
#include "safety/rootpath.h"
#include "hooks_json.h"  /* $(B)/gen: conf/hooks.d/ocidec.json */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define HOOKS_JSON_PATH "\"/usr/libexec/oci/hooks.d/ocidec-hook\""

/* its words' bits (engine_run.asked) */
enum { PODMAN = 1, CRIO = 2 };

static const char *const podman_bins[] = { "/usr/local/bin/podman", "/usr/bin/podman", "/bin/podman", NULL };
static const char *const crio_bins[] = { "/usr/local/bin/crio", "/usr/bin/crio", "/bin/crio", NULL };
/* containers.conf(5), containers-config(5): the system's files, then the
 * administrator's; the rootful drop-ins (the engine that runs hooks as
 * root) */
static const char *const podman_confs[] = { "/usr/share/containers/containers.conf",
					    "/usr/share/containers/containers.conf.d",
					    "/usr/share/containers/containers.rootful.conf.d",
					    "/etc/containers/containers.conf",
					    "/etc/containers/containers.conf.d",
					    "/etc/containers/containers.rootful.conf.d", NULL };
static const char *const crio_confs[] = { "/etc/crio/crio.conf", "/etc/crio/crio.conf.d", NULL };

/* CRI-O takes a connection on its socket */
static bool crio_answers(int root)
{
	static const char *const socks[] = { "/var/run/crio/crio.sock", "/run/crio/crio.sock", NULL };
	int s = engine_connect(root, socks);

	if (s >= 0)
		close(s);
	return s >= 0;
}

/* podman runs no daemon; CRI-O reads hooks_dir when it starts (the hooks
 * dir itself it watches) */
static const struct engine podman = { .name = "podman", .bins = podman_bins, .confs = podman_confs,
				      .hooks_table = "engine" };
static const struct engine crio = { .name = "crio", .daemon = "crio", .unit = "crio", .bins = crio_bins,
				    .confs = crio_confs, .hooks_table = "crio.runtime", .answers = crio_answers };

/* conf/hooks.d/ocidec.json, the package's, naming BIN/ocidec-hook */
static char *hooks_json(const char *bin)
{
	const char *at = strstr(hooks_json_template, HOOKS_JSON_PATH);

	if (!at)  /* the build checks the template (test/install.bats) */
		abort();
	return xasprintf("%.*s\"%s/ocidec-hook\"%s", (int)(at - hooks_json_template), hooks_json_template, bin,
			 at + strlen(HOOKS_JSON_PATH));
}

/* Can files be written under PATH on the host (its nearest existing
 * directory on a read-write mount)? CoreOS's /usr is read-only. */
static bool host_writable(int root, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);

	for (;;) {
		_cleanup_close_ int fd = root_open(root, p, O_RDONLY | O_DIRECTORY);
		struct statvfs sv;
		char *slash;

		if (fd >= 0)
			return fstatvfs(fd, &sv) == 0 && !(sv.f_flag & ST_RDONLY);
		if (errno != ENOENT || !(slash = strrchr(p, '/')) || !p[1])
			return false;
		slash[slash == p] = '\0';  /* "/usr" -> "/" */
	}
}

static int hooksdir_plan(struct engine_plan *pl, struct engine_run *r, struct oerr *err)
{
	const char *hooks_dir = pl->hooks_dir;
	char *j = hooks_json(pl->bin);

	/* podman and CRI-O read /usr/share/containers/oci/hooks.d unless
	 * their configuration says otherwise; where /usr is read-only,
	 * /etc's hooks dir and a drop-in naming both */
	if (!hooks_dir && !host_writable(pl->root, HOOKS_DIR_USR)) {
		const char *dirs = "[\"" HOOKS_DIR_USR "\", \"" HOOKS_DIR_ETC "\"]";
		const struct engine *pm = &podman, *cr = &crio;
		bool pset = (r->asked & PODMAN) && engine_sets_hooks_dir(pl->root, pm, PODMAN_DROPIN);
		bool cset = (r->asked & CRIO) && engine_sets_hooks_dir(pl->root, cr, CRIO_DROPIN);
		bool petc = pset && engine_reads_hooks_dir(pl->root, pm, HOOKS_DIR_ETC, PODMAN_DROPIN);
		bool cetc = cset && engine_reads_hooks_dir(pl->root, cr, HOOKS_DIR_ETC, CRIO_DROPIN);

		hooks_dir = HOOKS_DIR_ETC;
		/* a hooks_dir of the administrator's (OpenShift's CRI-O lists
		 * /run/containers/oci/hooks.d): a drop-in would replace it */
		if ((pset && !petc) || (cset && !cetc)) {
			free(j);
			return oerr_usage(err, "%s is read-only and the %s configuration sets its own hooks_dir "
					  "without %s: add %s there, or name one of its directories with --hooks-dir",
					  HOOKS_DIR_USR, pset && !petc ? "podman" : "CRI-O", HOOKS_DIR_ETC, HOOKS_DIR_ETC);
		}
		if ((r->asked & PODMAN) && !pset) {
			char *t = xasprintf("# ocidec install: podman reads the hooks dir ocidec's hook is in\n"
					    "[engine]\nhooks_dir = %s\n", dirs);
			engine_plan_add(pl, xstrdup(PODMAN_DROPIN), t, strlen(t), 0644, NULL);
		}
		if ((r->asked & CRIO) && !cset) {
			char *t = xasprintf("# ocidec install: CRI-O reads the hooks dir ocidec's hook is in\n"
					    "[crio.runtime]\nhooks_dir = %s\n", dirs);
			engine_plan_add(pl, xstrdup(CRIO_DROPIN), t, strlen(t), 0644, NULL);
		}
	}
	engine_plan_add(pl, xasprintf("%s/ocidec.json", hooks_dir ? hooks_dir : HOOKS_DIR_USR), j, strlen(j), 0644,
		   NULL);
	return 0;
}

/* Is this hooks.d file's hook ocidec's (the hook under any of its names)? */
static bool is_ocidec_hook(const char *text, char **path)
{
	cJSON *j = cJSON_Parse(text);
	const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "hook"), "path"));
	const char *base = p ? strrchr(p, '/') : NULL;
	bool r = base && (strcmp(base, "/ocidec-hook") == 0 || strcmp(base, "/ocidec") == 0);

	if (r)
		*path = xstrdup(p);
	cJSON_Delete(j);
	return r;
}

static void hooksdir_check(struct engine_check *c)
{
	int root = c->root;
	static const char *const dirs[] = { HOOKS_DIR_USR, HOOKS_DIR_ETC, NULL };
	const struct engine *pm = &podman, *cr = &crio;
	bool found = false, has_podman = engine_installed(root, pm), has_crio = engine_installed(root, cr);
	/* the engine the lines are of: podman, unless only CRI-O is here */
	bool cri = has_crio && !has_podman;
	const char *who = cri ? "crio" : "podman", *fix = cri ? "ocidec install --runtime crio" :
		"ocidec install --runtime podman", *name = cri ? "CRI-O" : "podman";
	struct stat st;

	for (int i = 0; dirs[i]; i++) {
		DIR *dd = root_opendir(root, dirs[i]);
		struct dirent *e;

		while (dd && (e = readdir(dd))) {
			_cleanup_free_ char *file = xasprintf("%s/%s", dirs[i], e->d_name);
			_cleanup_free_ char *text = NULL, *hook = NULL;
			bool rp, rc;

			if (strlen(e->d_name) < 6 || strcmp(e->d_name + strlen(e->d_name) - 5, ".json") != 0 ||
			    !(text = engine_host_read(root, file)) || !is_ocidec_hook(text, &hook))
				continue;
			found = true;
			rp = engine_reads_hooks_dir(root, pm, dirs[i], NULL);
			rc = engine_reads_hooks_dir(root, cr, dirs[i], NULL);
			if (!engine_host_stat(root, hook, &st, true) || !(st.st_mode & 0111))
				engine_say(c, ENGINE_PROBLEM, who, fix,
				    "%s names the hook %s, which is not there: %s starts containers without it, "
				    "and without a word", file, hook, name);
			else if (!rp && !rc)
				engine_say(c, has_podman || has_crio ? ENGINE_PROBLEM : ENGINE_INFO, who, fix,
				    "%s: %s does not read %s (its hooks_dir is elsewhere)", file, name, dirs[i]);
			else {
				engine_say(c, ENGINE_OK, who, NULL, "the hook %s, from %s (%s it)", hook, file,
				    rp && rc ? "podman and CRI-O read" : rp ? "podman reads" : "CRI-O reads");
				c->registered = true;
			}
		}
		if (dd)
			closedir(dd);
	}
	if (!found && (has_podman || has_crio))
		engine_say(c, ENGINE_INFO, who, fix,
		    "no hooks.d file of ocidec's: %s containers get no vendor through the hook (CDI's "
		    "--device VENDOR-KIND=all still works where a spec is)", name);
	/* CRI-O reads hooks_dir (install's drop-in) when it starts */
	if (engine_host_stat(root, CRIO_DROPIN, &st, false) &&
	    engine_changed_after(&st, engine_started(c->proc, &crio)))
		engine_say_apply(c, &crio, true, NULL, "crio started before " CRIO_DROPIN " last changed: it reads "
				 "hooks_dir from it when it starts, and ocidec's hook is in a hooks dir it does not read yet");
}

static const char *const hooksdir_files[] = { HOOKS_DIR_USR "/ocidec.json", HOOKS_DIR_ETC "/ocidec.json", PODMAN_DROPIN,
					       CRIO_DROPIN, NULL };

const struct engine_ops engine_hooksdir = {
	.name = "hooksdir",
	.usage = "  podman, crio  an oci-hooks(5) file where they read it: " HOOKS_DIR_USR ", or where\n"
		 "                /usr is read-only " HOOKS_DIR_ETC ", and a containers.conf.d /\n"
		 "                crio.conf.d drop-in\n",
	.words = (const struct engine_word[]){ { "podman", PODMAN, &podman }, { "crio", CRIO, &crio },
					      { "cri-o", CRIO, &crio }, { NULL, 0, NULL } },
	/* CRI-O reads its hooks_dir drop-in when it starts; podman, each
	 * container */
	.daemon = &crio,
	.files = hooksdir_files,
	.reads = (const char *const[]){ CRIO_DROPIN, NULL },
	.hint = "its hooks_dir (" CRIO_DROPIN ")",
	.plan = hooksdir_plan,
	.check = hooksdir_check,
};
