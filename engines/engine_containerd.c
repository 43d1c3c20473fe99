/* The containerd driver: ocidec's runtime in a drop-in,
 * /etc/containerd/conf.d/ocidec.toml, made from `containerd config dump`
 * (the node's CRI settings kept, the default runtime's options
 * inherited) and imported by config.toml; check reads containerd's
 * configuration as that dump prints it. See engine.h */
#include "engines/engine.h"
#include "engines/ctrd.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const ctrd_bins[] = { "/usr/local/sbin/containerd", "/usr/local/bin/containerd",
					 "/usr/sbin/containerd", "/usr/bin/containerd", "/sbin/containerd",
					 "/bin/containerd", "/opt/bin/containerd", NULL };

/* containerd takes a connection on its socket */
static bool ctrd_answers(int root)
{
	static const char *const socks[] = { "/run/containerd/containerd.sock", NULL };
	int s = engine_connect(root, socks);

	if (s >= 0)
		close(s);
	return s >= 0;
}

static const struct engine containerd = { .name = "containerd", .daemon = "containerd", .unit = "containerd",
					  .bins = ctrd_bins, .answers = ctrd_answers, .config = CONTAINERD_TOML };

extern const struct engine_ops engine_containerd;

/* the BinaryName of the runtime NAME in a dump (ctrd_runtimes) */
struct named_rt {
	const char *name;
	char *binary;
};

static void on_named_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct named_rt *n = arg;

	(void)type;
	if (strcmp(name, n->name) == 0 && binary && !n->binary)
		n->binary = xstrdup(binary);
}

/* The drop-in's text from the node's configuration DUMP (DLEN bytes, of
 * *VERSION, config.toml's own FILE_VERSION): ocidec's runtime (its
 * BinaryName the default runtime's, *BINARY), what an earlier install set,
 * the default runtime and CDI where asked; NULL with ERR */
static char *plan_dropin(struct engine_plan *pl, const char *dump, size_t dlen, int *version, int file_version,
			 const char *shim, char **binary, struct oerr *err)
{
	char *t;

	t = ctrd_dropin(dump, dlen, *version, pl->runtime_name, shim, binary);
	if (!t) {
		oerr_usage(err, "%s: containerd's configuration has no CRI plugin section "
			   "(`containerd config dump`): not registered", CONTAINERD_TOML);
		return NULL;
	}
	/* containerd 2.x with a config.toml still of version 2: the
	 * drop-in in that version's names (containerd converts a file of
	 * its own version only); from here on, the drop-in's version */
	if (*version >= 3 && file_version && file_version < 3) {
		char *k = ctrd_as_version2(t);
		free(t);
		t = k;
		*version = 2;
	}
	{
		/* what an earlier install set stays set (as Docker's default-runtime) */
		_cleanup_free_ char *old = NULL;
		size_t ol;
		struct stat ost;
		struct oerr oe;

		if (engine_read_file(pl->root, CONTAINERD_DROPIN, &old, &ol, &ost, &oe) > 0 && strncmp(old, "# ocidec install:", 17) == 0)
			t = ctrd_carry(t, old, *version, pl->runtime_name, pl->recorded_name);
	}
	{
		const char *cri = *version >= 3 ? "plugins.\"io.containerd.cri.v1.runtime\""
						: "plugins.\"io.containerd.grpc.v1.cri\"";
		_cleanup_free_ char *ctr = xasprintf("%s.containerd", cri), *q = xasprintf("\"%s\"", pl->runtime_name);
		char *k;

		/* a pod without a runtime handler runs ocidec's; CDI devices
		 * (the CRI field, DRA, the device plugin's CDI names) */
		if (pl->set_default) {
			k = ctrd_set_key(t, ctr, "default_runtime_name", q);
			free(t);
			t = k;
		}
		/* containerd's dump lists every key it knows: 1.6 has no CDI */
		if (pl->enable_cdi && !mem_find(dump, dlen, "enable_cdi", 10)) {
			log_warn("containerd: this containerd has no CDI (enable_cdi: containerd 1.7 or later): "
				 "not enabled");
		} else if (pl->enable_cdi) {
			k = ctrd_set_key(t, cri, "enable_cdi", "true");
			free(t);
			t = k;
		}
	}
	return t;
}

static int containerd_plan(struct engine_plan *pl, struct engine_run *run, struct oerr *err)
{
	_cleanup_free_ char *shim = xasprintf("%s/ocidec-runtime", pl->bin);
	_cleanup_free_ char *cur = NULL, *plain = NULL, *dump = NULL, *binary = NULL;
	struct stat st;
	size_t len, dlen;
	int have = engine_read_file(pl->root, CONTAINERD_TOML, &cur, &len, &st, err), version = 2, file_version = 0;
	const char *v;
	char *t;

	if (have < 0)
		return -1;
	/* config.toml's own version (none: 1, as containerd reads it) */
	if (have)
		file_version = (v = ctrd_top_key(cur, "version")) && (v = strchr(v, '=')) ? atoi(v + 1) : 1;
	/* the node's configuration as containerd reads it, without ours:
	 * our import line out, and our drop-in itself aside meanwhile
	 * (an imports glob such as conf.d/\*.toml would still read it,
	 * and freeze the CRI section it holds); the host lock keeps
	 * other installs out */
	plain = have ? ctrd_remove_import(cur, CONTAINERD_DROPIN) : NULL;
	{
		_cleanup_close_ int dfd = root_open(pl->root, "/etc/containerd/conf.d", O_PATH | O_DIRECTORY);
		bool aside = dfd >= 0 && renameat(dfd, "ocidec.toml", dfd, "ocidec.toml.ocidec-aside") == 0;
		int r = ctrd_dump(pl->root, &containerd, plain, &dump, &dlen, err);

		if (aside && renameat(dfd, "ocidec.toml.ocidec-aside", dfd, "ocidec.toml") < 0)
			return oerr_set(err, errno, "%s: putting it back", CONTAINERD_DROPIN);
		if (r < 0)
			return -1;
	}
	if ((v = ctrd_version(dump, dlen)))
		version = atoi(v);
	{  /* a runtime of that name that is not ocidec's (NVIDIA's): replaced, said */
		struct named_rt nr = { .name = pl->runtime_name };
		_cleanup_free_ char *def = NULL;

		if (ctrd_runtimes(dump, dlen, version, &def, on_named_runtime, &nr) == 0 && nr.binary &&
		    strcmp(nr.binary, shim) != 0)
			log_warn("containerd: runtime \"%s\" ran %s: it runs %s now (--uninstall puts it back)",
				 pl->runtime_name, nr.binary, shim);
		free(nr.binary);
	}
	t = plan_dropin(pl, dump, dlen, &version, file_version, shim, &binary, err);
	if (!t)
		return -1;
	/* config.toml's mode: the CRI section may hold registry credentials */
	engine_plan_add(pl, xstrdup(CONTAINERD_DROPIN), t, strlen(t), have ? st.st_mode & 0777 : 0644, NULL);
	if (binary && (binary[0] != '/' || strcmp(strrchr(binary, '/'), "/ocidec-runtime") == 0 ||
		       strcmp(strrchr(binary, '/'), "/nvidia-container-runtime") == 0)) {
		log_warn("%s: the default runtime's BinaryName %s is %s: the shim runs runc from PATH",
			 CONTAINERD_TOML, binary, binary[0] != '/' ? "not an absolute path" : "a shim itself");
		free(binary);
		binary = NULL;
	}
	if (binary) {  /* the node's runc is another binary: the shim runs it */
		char *rc = xasprintf("# ocidec install: the runtime containerd's default runtime ran\n"
				     "[runtime]\npath = %s\n", binary);
		engine_plan_add(pl, pl->host_mode ? xasprintf("%s/runtime.conf", pl->cdir)
					     : xasprintf("%s/etc/ocidec.d/runtime.conf", pl->prefix),
			   rc, strlen(rc), 0644, NULL);
	}
	/* containerd itself loads the result, or nothing is written */
	{
		_cleanup_free_ char *ctr = xasprintf("plugins.\"%s\".containerd",
						     version >= 3 ? "io.containerd.cri.v1.runtime"
								  : "io.containerd.grpc.v1.cri"),
				    *q = xasprintf("\"%s\"", pl->runtime_name),
				    *d = ctrd_get_key(t, ctr, "default_runtime_name");

		if (ctrd_verify(pl->root, &containerd, plain, have ? file_version : version, t, pl->runtime_name, shim,
				d && strcmp(d, q) == 0, err) < 0)
			return -1;
	}
	t = have ? ctrd_add_import(cur, CONTAINERD_DROPIN) : ctrd_new_config(CONTAINERD_DROPIN, version);
	engine_plan_add(pl, xstrdup(CONTAINERD_TOML), t, strlen(t), have ? st.st_mode & 07777 : 0644,
		   &engine_containerd);
	(void)run;
	return 0;
}

static char *containerd_take_out(const char *cur, const cJSON *state, struct oerr *err)
{
	(void)state, (void)err;
	return ctrd_remove_import(cur, CONTAINERD_DROPIN);
}

/* a config.toml of ours alone: its version line (ctrd_new_config) */
static bool containerd_empty(const char *text)
{
	return strspn(text, " \t\n") == strlen(text) || strcmp(text, "version = 2\n") == 0 ||
	       strcmp(text, "version = 3\n") == 0;
}

struct ctrd_seen {
	struct engine_check *c;
	int root;
	char **def;      /* the default runtime's name, once the dump is read */
	bool has_def, any;
};

static void on_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct ctrd_seen *s = arg;
	enum engine_shim k = engine_shim_kind(s->root, binary);
	_cleanup_free_ char *fix = NULL;

	if (strcmp(name, *s->def ? *s->def : "runc") == 0)
		s->has_def = true;
	if (k == NOT_SHIM)
		return;
	fix = engine_install_fix("containerd", name);
	if (k == NVIDIAS) {
		engine_say(s->c, ENGINE_INFO, "containerd", NULL, "runtime \"%s\": %s is NVIDIA's, not ocidec's (%s makes it "
		    "ocidec's)", name, binary, fix);
		return;
	}
	s->any = true;
	if (k != OURS)
		engine_say(s->c, ENGINE_PROBLEM, "containerd", fix, "runtime \"%s\": %s is not there%s", name, binary,
		    k == NVIDIAS_GONE ? " (NVIDIA's toolkit removed?)" : "");
	else if ((s->c->registered = true))
		engine_say(s->c, ENGINE_OK, "containerd", NULL, "runtime \"%s\" (%s): %s (a RuntimeClass with handler %s)%s", name,
		    type ? type : "no type", binary, name,
		    strcmp(name, *s->def ? *s->def : "runc") == 0 ? ", the default runtime" : "");
}

/* ocidec's runtime in a drop-in: its name and shim (the runtime whose
 * BinaryName is ocidec-runtime or nvidia-container-runtime) */
struct ours {
	int root;
	char *name, *shim;
};

static void on_our_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct ours *o = arg;
	enum engine_shim k = engine_shim_kind(o->root, binary);

	(void)type;
	if (!o->name && (k == OURS || k == OURS_GONE)) {
		o->name = xstrdup(name);
		o->shim = xstrdup(binary);
	}
}

/* Does NAME match the glob PAT of * and ? (Go's filepath.Match, as
 * containerd's imports: a leading dot is no different)? The last * taken
 * back one character at a time: no pattern makes it slow */
static bool import_match(const char *pat, const char *name)
{
	const char *star = NULL, *from = NULL;

	while (*name) {
		if (*pat == '*') {
			star = pat++;
			from = name;
		} else if (*pat == '?' || *pat == *name) {
			pat++, name++;
		} else if (star) {
			pat = star + 1;
			name = ++from;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* CONF, config.toml's text without our import, as containerd reads it
 * without our drop-in, no host file moved: an imports glob that matches
 * the drop-in (conf.d/\*.toml) given as the files it matches but ours,
 * sorted as containerd's glob lists them. malloc'd */
static char *without_dropin(int root, const char *conf)
{
	const char *imp = ctrd_top_key(conf, "imports"), *br = imp ? strchr(imp, '[') : NULL;
	const char *end = br ? strchr(br, ']') : NULL;
	char *text = xstrdup(conf);

	for (const char *q = br ? strchr(br, '"') : NULL; q && q < end; q = strchr(strchr(q + 1, '"') + 1, '"')) {
		_cleanup_free_ char *glob = xstrndup(q + 1, strcspn(q + 1, "\"\n"));
		const char *slash = strrchr(glob, '/');
		_cleanup_free_ char *dir = slash ? xstrndup(glob, (size_t)(slash - glob)) : NULL;
		_cleanup_free_ char *abs = dir && dir[0] != '/' ? xasprintf("/etc/containerd/%s", dir) : NULL;
		_cleanup_strv_ struct strv keep = { 0 };
		DIR *dd;
		struct dirent *d;
		char *k;

		if (q[1 + strlen(glob)] != '"')
			break;
		/* (a glob of another shape, [...] or \\: left as it is) */
		if (!dir || strpbrk(dir, "*?[\\") || !strpbrk(slash, "*?") || strpbrk(slash, "[\\") ||
		    strcmp(abs ? abs : dir, "/etc/containerd/conf.d") != 0 || !import_match(slash + 1, "ocidec.toml") ||
		    !(dd = root_opendir(root, "/etc/containerd/conf.d")))
			continue;
		while ((d = readdir(dd)))
			if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") && strcmp(d->d_name, "ocidec.toml") &&
			    import_match(slash + 1, d->d_name))
				strv_push_owned(&keep, xasprintf("\"%s/%s\"", dir, d->d_name));
		closedir(dd);
		qsort(keep.v, keep.n, sizeof(*keep.v), by_name);
		if (!keep.n) {
			k = ctrd_remove_import(text, glob);
		} else {
			_cleanup_free_ char *list = strv_join(&keep, ", "), *quoted = xasprintf("\"%s\"", glob);
			const char *at = strstr(text, quoted);

			k = at ? xasprintf("%.*s%s%s", (int)(at - text), text, list, at + strlen(quoted)) : xstrdup(text);
		}
		free(text);
		text = k;
	}
	return text;
}

/* containerd 1.x replaces a plugin's section with an imported file's
 * whole: the drop-in install made carries the node's CRI section as it was
 * then. One that differs from the drop-in install would make now (from
 * config.toml CONF without our import) shadows the administrator's later
 * CRI edits: containerd ignores them. */
static void ctrd_check_shadow(struct engine_check *c, int root, const char *conf)
{
	_cleanup_free_ char *dropin = engine_host_read(root, CONTAINERD_DROPIN), *plain = NULL, *alone = NULL;
	_cleanup_free_ char *dump = NULL, *fresh = NULL, *binary = NULL, *def = NULL;
	struct ours o = { .root = root };
	struct oerr err;
	size_t len;

	if (!dropin || !strstr(conf, CONTAINERD_DROPIN))
		return;
	if (ctrd_runtimes(dropin, strlen(dropin), 2, &def, on_our_runtime, &o) < 0 || !o.name)
		goto out;
	plain = ctrd_remove_import(conf, CONTAINERD_DROPIN);
	/* what containerd makes of config.toml without our drop-in (a copy of
	 * it beside config.toml for the moment of the dump, its imports glob
	 * without ours: install moves the drop-in aside, check touches no host
	 * file) */
	alone = without_dropin(root, plain);
	if (ctrd_dump(root, &containerd, alone, &dump, &len, &err) < 0)
		goto out;
	fresh = ctrd_dropin(dump, len, 2, o.name, o.shim, &binary);
	if (fresh)  /* what install set on top of it (--set-as-default, --enable-cdi) */
		fresh = ctrd_carry(fresh, dropin, 2, o.name, NULL);
	if (fresh && strcmp(fresh, dropin) != 0)
		engine_say_apply(c, &containerd, true, "ocidec install --runtime containerd",
		    "/etc/containerd/conf.d/ocidec.toml carries the CRI section config.toml had when ocidec was "
		    "installed, and containerd 1.x takes the drop-in's whole: config.toml's CRI settings changed "
		    "since, and containerd ignores them");
out:
	free(o.name);
	free(o.shim);
}

static void containerd_check(struct engine_check *c)
{
	int root = c->root, proc = c->proc;
	_cleanup_free_ char *conf = engine_host_read(root, CONTAINERD_TOML), *dump = NULL, *def = NULL;
	struct ctrd_seen seen = { .c = c, .root = root };
	struct oerr err;
	struct stat st;
	int64_t since;
	size_t len;
	int version = 2;

	if (!engine_installed(root, &containerd) || !ctrd_binary(root, &containerd))
		return;
	since = engine_started(proc, &containerd);
	engine_check_unit(c, &containerd, since);
	if (geteuid() != 0) {
		engine_advise(c, ENGINE_INFO, "containerd", "run ocidec check as root", "not root: containerd's "
			      "configuration not read (containerd config dump runs in the host root)");
		return;
	}
	if (ctrd_dump_as(root, &containerd, conf, true, &dump, &len, &err) < 0) {
		engine_advise(c, ENGINE_PROBLEM, "containerd", "correct /etc/containerd/config.toml: containerd will "
			      "not start with it", "%s", err.msg);
		return;
	}
	{
		const char *v = ctrd_version(dump, len);
		if (v)
			version = atoi(v);
	}
	seen.def = &def;
	if (ctrd_runtimes(dump, len, version, &def, on_runtime, &seen) < 0) {
		engine_say(c, ENGINE_INFO, "containerd", NULL, "no CRI plugin configured (`containerd config dump`)");
		return;
	}
	if (!seen.has_def)
		engine_advise(c, ENGINE_PROBLEM, "containerd", "give the default runtime its table in config.toml again, or make "
		       "ocidec's the default (ocidec install --runtime containerd --set-as-default)",
		    "default_runtime_name \"%s\" has no runtime table: the CRI plugin does not load, no pod starts",
		    def ? def : "runc");
	/* a config.toml of version 1 on containerd 1.x: install refuses it
	 * until it is converted, so the fix converts first */
	if (!seen.any && conf && !ctrd_top_key(conf, "version") && version < 3)
		engine_say(c, ENGINE_INFO, "containerd", CTRD_V1_CONVERT " && ocidec install --runtime containerd",
		    "no runtime runs ocidec-runtime (a RuntimeClass's handler; pods that use CDI need none); "
		    "config.toml is of version 1, which containerd 1.x imports no drop-in into: converted first");
	else if (!seen.any)
		engine_say(c, ENGINE_INFO, "containerd", "ocidec install --runtime containerd",
		    "no runtime runs ocidec-runtime (a RuntimeClass's handler; pods that use CDI need none)");
	/* the CDI devices a pod asks for (the CRI's CDI field, a device
	 * plugin's CDI answer, DRA): none while CDI is off (containerd 1.7's
	 * default), and the pod starts all the same */
	if (c->kinds.n && mem_find(dump, len, "enable_cdi = false", 18))
		engine_advise(c, ENGINE_INFO, "containerd", "ocidec install --runtime containerd --enable-cdi --restart",
		       "its CDI is off (enable_cdi = false): a pod asking for a CDI device (%s=...: the CRI's CDI field, a device "
		       "plugin's CDI answer) starts without it", c->kinds.v[0]);
	/* a pod's own annotations reach its containers where pod_annotations
	 * lets them: the vendors' (ocidec.io/...) would select devices */
	for (const char *l = dump, *end = dump + len; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l)), *k = l + strspn(l, " \t");
		size_t ll = eol ? (size_t)(eol - l) : (size_t)(end - l);

		/* (containerd 2.x's dump quotes with ', 1.x's with ") */
		if (strncmp(k, "pod_annotations", 15) == 0 &&
		    (mem_find(l, ll, "\"ocidec.io/", 11) || mem_find(l, ll, "\"*\"", 3) ||
		     mem_find(l, ll, "'ocidec.io/", 11) || mem_find(l, ll, "'*'", 3))) {
			engine_advise(c, ENGINE_PROBLEM, "containerd", "take ocidec.io/ and \"*\" out of pod_annotations (the device "
			       "plugin's container annotations need only container_annotations)",
			    "a runtime's pod_annotations pass a pod's own ocidec.io/ annotations to its containers: any "
			    "pod selects devices with them (%.*s)", (int)(ll - (size_t)(k - l)), k);
			break;
		}
		l += ll + 1;
	}
	if (version < 3 && conf)
		ctrd_check_shadow(c, root, conf);
	if ((engine_host_stat(root, CONTAINERD_TOML, &st, false) && engine_changed_after(&st, since)) ||
	    (engine_host_stat(root, CONTAINERD_DROPIN, &st, false) && engine_changed_after(&st, since)) ||
	    (engine_host_stat(root, CTRD_RESTART_MARK, &st, false) && engine_changed_after(&st, since)))
		engine_say_apply(c, &containerd, true, NULL,
			  "containerd started before its configuration last changed: it runs the old one");
}

static const char *const containerd_files[] = { CONTAINERD_TOML, CONTAINERD_DROPIN, NULL };

const struct engine_ops engine_containerd = {
	.name = "containerd",
	.usage = "  containerd    runtime NAME: /etc/containerd/conf.d/ocidec.toml from `containerd config\n"
		 "                dump` (the node's CRI settings kept, the default runtime's options\n"
		 "                inherited), imported by /etc/containerd/config.toml\n",
	.words = (const struct engine_word[]){ { "containerd", 1, &containerd }, { NULL, 0, NULL } },
	.daemon = &containerd,
	.files = containerd_files,
	.reads = (const char *const[]){ CONTAINERD_DROPIN, NULL },
	/* a running containerd runs ocidec's runtime still until it
	 * restarts, and nothing it answers says so: a mark in /run (gone with
	 * a reboot), for ocidec check and the package's removal */
	.restart_mark = CTRD_RESTART_MARK,
	.merged = CONTAINERD_TOML,
	.merge = "toml",
	.plan = containerd_plan,
	.take_out = containerd_take_out,
	.empty = containerd_empty,
	.check = containerd_check,
};
