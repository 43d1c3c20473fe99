/* The Docker driver: ocidec's runtime in /etc/docker/daemon.json (merged
 * into the administrator's), Docker's default runtime and CDI where asked,
 * and NVIDIA's hook name for --gpus; check asks the running dockerd what
 * it read. See engine.h */
#include "engines/engine.h"
#include "engines/dockerjson.h"
#include "formats/json.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define NVIDIA_HOOK_USR "/usr/bin/nvidia-container-runtime-hook"   /* NVIDIA's own */

static const char *const docker_bins[] = { "/usr/local/bin/dockerd", "/usr/sbin/dockerd", "/usr/bin/dockerd",
					   "/bin/dockerd", NULL };

/* dockerd answers its API's /info */
static bool docker_answers(int root)
{
	cJSON *info = engine_docker_info(root);

	cJSON_Delete(info);
	return info != NULL;
}

/* docker.service wants containerd's started: a failed one is reset with it */
static const struct engine containerd_unit = { .name = "containerd", .unit = "containerd" };
static const struct engine docker = { .name = "docker", .daemon = "dockerd", .unit = "docker",
				      .pidfile = "/var/run/docker.pid", .bins = docker_bins,
				      .reload_loads_runtimes = true, .answers = docker_answers,
				      .needs = &containerd_unit };

extern const struct engine_ops engine_docker;

/* This run's: install made ocidec Docker's default runtime, CDI on (the
 * record keeps them); check found that no docker run gets a vendor (why,
 * said after every engine's lines) */
static bool made_default, made_cdi;
static char *docker_none;

/* KEY of the record J, a string (malloc'd), or NULL */
static char *recorded_string(const cJSON *j, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(j, key));

	return s ? xstrdup(s) : NULL;
}

/* Docker's --gpus runs the hook under NVIDIA's name, found on dockerd's
 * PATH when it starts; an NVIDIA toolkit's is left be */
static void plan_gpus_link(struct engine_plan *pl, struct engine_run *r)
{
	char text[PATH_MAX];
	_cleanup_free_ char *target = xasprintf("%s/ocidec", pl->bin);
	int l = engine_read_link(pl->root, NVIDIA_HOOK_LINK, text, sizeof(text));
	_cleanup_close_ int other = root_open(pl->root, "/usr/bin/nvidia-container-runtime-hook", O_PATH);

	if (other >= 0 || (l == 1 && strcmp(text, target) != 0) || l == 2)
		log_warn("an nvidia-container-runtime-hook is installed already: Docker's --gpus runs "
			 "that one");
	else if (l != 1) {  /* made now: dockerd finds it when it starts */
		engine_plan_link(pl, xstrdup(NVIDIA_HOOK_LINK), target);
		r->restart = true;
	} else
		engine_plan_link(pl, xstrdup(NVIDIA_HOOK_LINK), target);
}

/* A runtime name changed since the last install (--runtime-name): the
 * old entry goes from *CUR, and a default runtime that named it follows */
static int plan_renamed(struct engine_plan *pl, char **cur, const char *shim, struct oerr *err)
{
	_cleanup_free_ char *old = recorded_string(pl->recorded, "runtime_name");
	cJSON *dj = old && strcmp(old, pl->runtime_name) != 0 ? cJSON_Parse(*cur) : NULL;
	const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(dj, "runtimes"), old), "path"));
	const char *def = cJSON_GetStringValue(cJSON_GetObjectItem(dj, "default-runtime"));

	if (p && strcmp(p, shim) == 0) {
		char *k = docker_json_merge(*cur, old, NULL, err);

		if (!k) {
			cJSON_Delete(dj);
			return -1;
		}
		log_warn("%s: runtime \"%s\" of the last install renamed \"%s\"%s", DOCKER_JSON, old,
			 pl->runtime_name, def && strcmp(def, old) == 0 ? ", the default runtime too" : "");
		if (def && strcmp(def, old) == 0)
			made_default = true;
		free(*cur);
		*cur = k;
	}
	cJSON_Delete(dj);
	return 0;
}

static int docker_plan(struct engine_plan *pl, struct engine_run *r, struct oerr *err)
{
	_cleanup_free_ char *shim = xasprintf("%s/ocidec-runtime", pl->bin);
	/* what the last install set stays set, unless --uninstall */
	bool cdi_asked = pl->enable_cdi || cJSON_IsTrue(cJSON_GetObjectItem(pl->recorded, "docker_cdi"));
	_cleanup_free_ char *cur = NULL;
	struct stat st;
	size_t len;
	int have = engine_read_file(pl->root, DOCKER_JSON, &cur, &len, &st, err);
	char *j;

	made_default = pl->set_default || cJSON_IsTrue(cJSON_GetObjectItem(pl->recorded, "docker_default"));
	if (have < 0)
		return -1;
	if (have) {  /* a runtime of that name that is not ocidec's: replaced, said */
		cJSON *dj = cJSON_Parse(cur);
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(dj, "runtimes"), pl->runtime_name), "path"));

		if (p && strcmp(p, shim) != 0)
			log_warn("%s: Docker's runtime \"%s\" ran %s: it runs %s now (--uninstall puts it back)",
				 DOCKER_JSON, pl->runtime_name, p, shim);
		cJSON_Delete(dj);
	}
	if (have && plan_renamed(pl, &cur, shim, err) < 0)
		return -1;
	j = docker_json_merge(have ? cur : NULL, pl->runtime_name, shim, err);
	/* Docker has CDI from 25 on (its daemon.json ignores the feature
	 * before: said, not set) */
	made_cdi = cdi_asked;
	if (made_cdi) {
		/* the running dockerd's own word, else its binary's */
		cJSON *info = engine_docker_info(pl->root);
		const char *sv = cJSON_GetStringValue(cJSON_GetObjectItem(info, "ServerVersion"));
		int v = sv && *sv >= '0' && *sv <= '9' ? atoi(sv) : engine_version(pl->root, &docker);

		cJSON_Delete(info);
		if (v >= 0 && v < 25) {
			log_warn("docker: Docker %d has no CDI (Docker 25 or later): not enabled; docker run "
				 "--device VENDOR/KIND=N needs 25, the runtime and --gpus work without", v);
			made_cdi = false;
		}
	}
	if (j && (made_default || made_cdi)) {
		char *k = docker_json_set(j, made_default ? pl->runtime_name : NULL, made_cdi, err);
		free(j);
		j = k;
	}
	if (!j)
		return -1;
	engine_plan_add(pl, xstrdup(DOCKER_JSON), j, strlen(j), have ? st.st_mode & 07777 : 0644, &engine_docker);
	r->planned = true;
	/* CDI is a feature, which dockerd reads when it starts only */
	r->restart |= made_cdi;
	if (pl->has_nvidia)
		plan_gpus_link(pl, r);
	return 0;
}

/* what uninstall takes out of a daemon.json edited since: ours */
static void docker_record(const struct engine_run *r, cJSON *state)
{
	if (!r->planned)
		return;
	cJSON_DeleteItemFromObject(state, "docker_default");
	cJSON_DeleteItemFromObject(state, "docker_cdi");
	if (made_default)
		cJSON_AddTrueToObject(state, "docker_default");
	if (made_cdi)
		cJSON_AddTrueToObject(state, "docker_cdi");
}

/* CDI turned off again: Docker reads features when it starts. And
 * ocidec's default runtime taken back: on SIGHUP dockerd takes a default
 * runtime only where daemon.json names one (Docker 26), so one the file no
 * longer names stays ocidec's until it restarts */
static void docker_undoing(struct engine_run *r, const cJSON *state)
{
	r->restart |= cJSON_IsTrue(cJSON_GetObjectItem(state, "docker_cdi")) ||
		      cJSON_IsTrue(cJSON_GetObjectItem(state, "docker_default"));
}

static char *docker_take_out(const char *cur, const cJSON *state, struct oerr *err)
{
	bool docker_cdi = cJSON_IsTrue(cJSON_GetObjectItem(state, "docker_cdi"));
	char *edited, *k;

	edited = docker_json_merge(cur, engine_state_runtime_name(state), NULL, err);
	if (!edited || !(cJSON_IsTrue(cJSON_GetObjectItem(state, "docker_default")) || docker_cdi))
		return edited;
	k = docker_json_unset(edited, engine_state_runtime_name(state), docker_cdi, err);
	free(edited);
	return k;
}

/* a daemon.json of ours alone: {} */
static bool docker_empty(const char *text)
{
	return strspn(text, " \t\n{}") == strlen(text);
}

/* Docker keeps a container's runtime by name (given at docker run, or the
 * default one when it was made): where daemon.json no longer has that name
 * (not NVIDIA's given back under it), those do not start */
static char *docker_uninstalled(int root, const cJSON *state)
{
	_cleanup_free_ char *text = NULL;
	struct stat st;
	struct oerr ignored;
	size_t len;
	cJSON *j = engine_read_file(root, DOCKER_JSON, &text, &len, &st, &ignored) > 0 ? cJSON_Parse(text) : NULL;
	const char *name = engine_state_runtime_name(state);
	char *note = NULL;

	if (!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "runtimes"), name))
		note = xasprintf("ocidec install: Docker's containers made with runtime \"%s\" (docker run --runtime %s, "
				 "or while it was the default) do not start again: remove them and run them anew", name,
				 name);
	cJSON_Delete(j);
	return note;
}

/* Does the running dockerd (INFO: its answer to /info) read CDI specs?
 * Docker 25 and later list CDISpecDirs where its CDI is on. */
static bool docker_cdi_on(const cJSON *info)
{
	const cJSON *dirs = cJSON_GetObjectItem(info, "CDISpecDirs");

	return cJSON_IsArray(dirs) && cJSON_GetArraySize(dirs) > 0;
}

/* Is the running dockerd one that has CDI (Docker 25 or later)? */
static bool docker_has_cdi(const cJSON *info)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(info, "ServerVersion"));

	return v && atoi(v) >= 25;
}

/* Does nothing on this host give a docker run a vendor: no runtime of
 * ocidec's (the caller knows), the running dockerd's CDI off (INFO), and
 * no hook for --gpus on its PATH? */
static bool docker_gives_nothing(int root, const cJSON *info)
{
	struct stat st;

	return info && !docker_cdi_on(info) && !engine_host_stat(root, NVIDIA_HOOK_LINK, &st, true) &&
	       !engine_host_stat(root, NVIDIA_HOOK_USR, &st, true);
}

/* No daemon.json: what the running dockerd (INFO, SINCE its start) has */
static void docker_without_file(struct engine_check *c, const cJSON *info, int64_t since)
{
	const struct engine *dk = &docker;
	int root = c->root;
	const char *running;

	/* a running dockerd that says its CDI is off: no docker run gets
	 * a vendor (--gpus: "could not select device driver") */
	running = info ? cJSON_GetStringValue(cJSON_GetObjectItem(info, "DefaultRuntime")) : NULL;
	/* a default runtime of an install whose file is gone since (an
	 * uninstall that removed it): runc once dockerd restarts */
	if (running && strcmp(running, "runc") != 0)
		engine_say_apply(c, dk, true, NULL, "the running dockerd has the default runtime \"%s\" "
			  "(no " DOCKER_JSON ": runc once it restarts, a reload keeps it)", running);
	else if (docker_gives_nothing(root, info))
		docker_none = xstrdup("dockerd runs without " DOCKER_JSON ", its CDI off, no hook for --gpus: "
					 "no docker run gets a vendor");
	else if (since > 0 || engine_installed(root, dk))
		engine_say(c, ENGINE_INFO, "docker", "ocidec install --runtime docker",
		    "%s without " DOCKER_JSON ": docker run gets no vendor but through CDI (Docker 25 or "
		    "later, its CDI on)", since > 0 ? "dockerd runs" : "dockerd is installed");
}

/* daemon.json's runtimes RT (DEF its default one) that run a shim: said;
 * what the running dockerd (INFO) has not read of them into LAG; true:
 * one of ocidec's */
static bool docker_runtimes(struct engine_check *c, const cJSON *rt, const char *def, const cJSON *info,
			    struct strv *lag)
{
	int root = c->root;
	const cJSON *e;
	bool any = false;

	cJSON_ArrayForEach(e, rt) {
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		enum engine_shim k = engine_shim_kind(root, p);
		_cleanup_free_ char *fix = NULL;

		if (k == NOT_SHIM)
			continue;
		fix = engine_install_fix("docker", e->string);
		if (k == NVIDIAS) {
			engine_say(c, ENGINE_INFO, "docker", NULL, "runtime \"%s\": %s is NVIDIA's, not ocidec's (%s makes it ocidec's)",
			    e->string, p, fix);
			continue;
		}
		any = true;
		if (k != OURS) {
			engine_say(c, ENGINE_PROBLEM, "docker", fix, "runtime \"%s\": %s is not there%s", e->string, p,
			    k == NVIDIAS_GONE ? " (NVIDIA's toolkit removed?)" : "");
			continue;
		}
		engine_say(c, ENGINE_OK, "docker", NULL, "runtime \"%s\": %s (docker run --runtime %s)%s", e->string, p, e->string,
		    def && strcmp(def, e->string) == 0 ? ", the default runtime" : "");
		c->registered = true;
		if (info) {
			const char *has = cJSON_GetStringValue(cJSON_GetObjectItem(
				cJSON_GetObjectItem(cJSON_GetObjectItem(info, "Runtimes"), e->string), "path"));
			if (!has || strcmp(has, p) != 0)
				strv_push_owned(lag, xasprintf("%s runtime \"%s\" (" DOCKER_JSON " changed since it "
								"read it)", has ? "runs another binary as" : "has no",
								e->string));
		}
	}
	return any;
}

/* Does the running dockerd (process PID of the host's /proc PROC)
 * resolve --gpus by CDI first (a Docker after moby#50228: where its CDI is
 * on and nvidia-cdi-hook is on its PATH at its start, --gpus asks for the
 * CDI devices of kind nvidia.com/gpu, and runs no hook)? Told by the name
 * it looks for, in the text of the binary it runs (an upgrade's new file
 * is not what runs): an older dockerd has no such string. -1: not read */
static int docker_cdi_gpus(int proc, const char *pid)
{
	char exe[32];
	_cleanup_close_ int fd = -1;
	struct stat st;
	void *m;
	int r;

	snprintf(exe, sizeof(exe), "%s/exe", pid);
	if (!*pid || (fd = openat(proc, exe, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size <= 0)
		return -1;
	if ((m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		return -1;
	r = memmem(m, (size_t)st.st_size, "nvidia-cdi-hook", 15) != NULL;
	munmap(m, (size_t)st.st_size);
	return r;
}

/* Which way the running dockerd (started at SINCE; INFO its /info, or
 * NULL) gives an NVIDIA GPU to docker run --gpus: CDI's specs or the hook */
static void docker_gpus_path(struct engine_check *c, const cJSON *info, int64_t since)
{
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin",
					    "/bin", NULL };
	const char *version = cJSON_GetStringValue(cJSON_GetObjectItem(info, "ServerVersion"));
	char vers[40];
	char hook[64] = "", why[160], pid[16];
	struct stat st;
	int first;

	/* (its version where it answered /info) */
	snprintf(vers, sizeof(vers), "%s%.24s", version ? "dockerd " : "the running dockerd", version ? version : "");
	version = vers;
	engine_started_pid(c->proc, &docker, pid);
	first = docker_cdi_gpus(c->proc, pid);
	for (const char *const *d = dirs; *d && !*hook; d++) {
		snprintf(hook, sizeof(hook), "%s/nvidia-cdi-hook", *d);
		if (!engine_host_stat(c->root, hook, &st, true))
			*hook = '\0';
	}
	if (first == 1 && *hook && !info) {
		engine_say(c, ENGINE_INFO, "docker", NULL, "docker run --gpus, an NVIDIA GPU: through CDI where its CDI is on (not known: "
			   "it did not answer on /run/docker.sock), else through the hook nvidia-container-runtime-hook");
		return;
	}
	if (first == 1 && docker_cdi_on(info) && *hook && !(engine_host_stat(c->root, hook, &st, false) &&
							    engine_changed_after(&st, since))) {
		engine_say(c, ENGINE_INFO, "docker", NULL, "docker run --gpus, an NVIDIA GPU: through CDI, the specs of kind nvidia.com/gpu "
			   "in its CDI directories, no hook (%s resolves --gpus by CDI first: its CDI on, %s on "
			   "its PATH)", version, hook);
		return;
	}
	if (first < 0)
		snprintf(why, sizeof(why), "its binary not read%s: whether it resolves --gpus by CDI first is not known",
			 geteuid() ? " (not root)" : "");
	else if (!first)
		snprintf(why, sizeof(why), "%s has no CDI-first --gpus, a later Docker's where nvidia-cdi-hook "
			 "is on its PATH", version);
	else if (!docker_cdi_on(info))
		snprintf(why, sizeof(why), "its CDI is off");
	else if (!*hook)
		snprintf(why, sizeof(why), "no nvidia-cdi-hook on its PATH (ocidec's is not there: CDI first would need "
			 "one)");
	else
		snprintf(why, sizeof(why), "%s appeared after dockerd started, which looks for it at its start", hook);
	engine_say(c, ENGINE_INFO, "docker", NULL, "docker run --gpus, an NVIDIA GPU: through the hook nvidia-container-runtime-hook%s (%s)",
		   engine_host_stat(c->root, NVIDIA_HOOK_LINK, &st, true) || engine_host_stat(c->root, NVIDIA_HOOK_USR, &st, true)
			   ? "" : ", which is not on its PATH: --gpus fails", why);
}

static void docker_check(struct engine_check *c)
{
	int root = c->root, proc = c->proc;
	const struct engine *dk = &docker;
	_cleanup_free_ char *text = engine_host_read(root, DOCKER_JSON);
	const char *stop = NULL;
	cJSON *j = text ? json_parse_exact(text, strlen(text), &stop) : NULL, *rt, *info = NULL;
	const char *def = NULL, *running;
	int64_t since;
	struct stat st;
	bool any = false, cdi = false, restart = false, hook_said = false, silent;
	struct strv lag = { 0 };  /* what the running dockerd has not read yet */

	since = engine_started(proc, dk);
	engine_check_unit(c, dk, since);
	/* the running dockerd, asked what it read; one that runs and does not
	 * answer on root's socket where it listens by default fails every
	 * docker command (a -H of its own elsewhere: not known here) */
	info = since > 0 ? engine_docker_info(root) : NULL;
	silent = since > 0 && !info && geteuid() == 0 && ((engine_host_stat(root, "/run/docker.sock", &st, false) &&
		 S_ISSOCK(st.st_mode) && st.st_uid == 0) || (engine_host_stat(root, "/var/run/docker.sock", &st, false) &&
		 S_ISSOCK(st.st_mode) && st.st_uid == 0));
	if (silent)
		engine_say_apply(c, dk, true, NULL, "dockerd runs but does not answer on /run/docker.sock "
			  "(3 s): every docker command fails (its log says why: journalctl -u docker.service)");
	if (c->nvidia && since > 0)
		docker_gpus_path(c, info, since);
	if (!text) {
		docker_without_file(c, info, since);
		cJSON_Delete(info);
		return;
	}
	if (!cJSON_IsObject(j)) {
		_cleanup_free_ char *where = j ? NULL : json_where(text, stop);
		engine_advise(c, ENGINE_PROBLEM, "docker", "correct " DOCKER_JSON " (dockerd refuses to start with it)",
		       DOCKER_JSON " is %s%s", j ? "JSON, but no object" : "no JSON: it stops at ", where ? where : "");
		cJSON_Delete(j);
		cJSON_Delete(info);
		return;
	}
	rt = cJSON_GetObjectItem(j, "runtimes");
	def = cJSON_GetStringValue(cJSON_GetObjectItem(j, "default-runtime"));
	cdi = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "features"), "cdi"));
	any = docker_runtimes(c, rt, def, info, &lag);
	if (!any && docker_gives_nothing(root, info))
		docker_none = xstrdup(DOCKER_JSON " names no runtime of ocidec's, the running dockerd has CDI off, "
					 "no hook for --gpus: no docker run gets a vendor");
	else if (!any)
		engine_say(c, ENGINE_INFO, "docker", "ocidec install --runtime docker",
		    DOCKER_JSON " names no runtime of ocidec's: docker run gets no vendor but through CDI");
	if (info) {
		running = cJSON_GetStringValue(cJSON_GetObjectItem(info, "DefaultRuntime"));

		if (def && running && strcmp(def, running) != 0)
			strv_push_owned(&lag, xasprintf("has the default runtime \"%s\" (" DOCKER_JSON " says \"%s\")",
							running, def));
		/* one the file no longer names: runc once dockerd restarts (a
		 * reload keeps what it has) */
		else if (!def && running && strcmp(running, "runc") != 0) {
			strv_push_owned(&lag, xasprintf("has the default runtime \"%s\" (" DOCKER_JSON " names none: runc "
							"once it restarts, a reload keeps it)", running));
			restart = true;
		}
		/* (Docker 25 and later list CDISpecDirs where CDI is on; it reads
		 * features at its start only) */
		if (any && !cdi && !docker_cdi_on(info) && c->kinds.n && docker_has_cdi(info))
			engine_advise(c, ENGINE_INFO, "docker", "ocidec install --runtime docker --enable-cdi --restart", "its CDI is off: "
			       "docker run --device %s=... fails (could not select device driver \"cdi\"); "
			       "--gpus and the runtime work without it", c->kinds.v[0]);
		if (cdi && !docker_cdi_on(info)) {
			strv_push(&lag, "has CDI off (" DOCKER_JSON "'s features.cdi, read at its start; Docker 25 or "
				  "later)");
			restart = true;
		}
	} else if (since > 0 && !silent && any && engine_host_stat(root, DOCKER_JSON, &st, false) &&
		   engine_changed_after(&st, since)) {
		/* no answer on its socket: by the file's time, which only a
		 * restart moves (a reload leaves dockerd's start as it was) */
		if (geteuid() != 0)
			engine_advise(c, ENGINE_INFO, "docker", "run ocidec check as root", "not root: the running dockerd was not "
			       "asked what it read (its socket is root's), and " DOCKER_JSON " changed since it started");
		else {
			strv_push(&lag, "started before " DOCKER_JSON " last changed (its socket did not answer)");
			restart = true;
		}
	}
	/* Docker's --gpus runs nvidia-container-runtime-hook, looked up on
	 * dockerd's PATH when it starts */
	if (c->nvidia && (any || def)) {
		struct stat hs, ls;
		const char *hook = NVIDIA_HOOK_LINK;

		if (!engine_host_stat(root, hook, &hs, true))
			hook = NVIDIA_HOOK_USR;
		if (!engine_host_stat(root, hook, &hs, true)) {
			engine_say_apply(c, dk, true, "ocidec install --runtime docker",
				  "no nvidia-container-runtime-hook on dockerd's PATH: docker run --gpus fails (\"could "
				  "not select device driver\")");
			hook_said = true;
		/* (the link's own time: made since dockerd started) */
		} else if (engine_host_stat(root, hook, &ls, false) && engine_changed_after(&ls, since)) {
			strv_push(&lag, "started before nvidia-container-runtime-hook was there: --gpus fails (\"could "
				  "not select device driver\")");
			restart = true;
		}
	}
	/* one line, one command, for all the running dockerd has not read */
	if (lag.n && !hook_said) {
		_cleanup_free_ char *all = strv_join(&lag, "; and ");
		engine_say_apply(c, dk, restart, NULL, "the running dockerd %s", all);
	}
	strv_free(&lag);
	cJSON_Delete(info);
	cJSON_Delete(j);
}

/* Docker that gives nothing: a problem until ocidec install has run
 * (right after the package's install); after, the engines it was given
 * are the operator's choice, and this node may not mean Docker for its
 * accelerators (an NRI or containerd node also running dockerd) */
static void docker_check_last(struct engine_check *c)
{
	if (!docker_none)
		return;
	engine_say(c, c->installed ? ENGINE_INFO : ENGINE_PROBLEM, "docker", "ocidec install --runtime docker", "%s%s",
		   docker_none, c->nvidia ? " (--gpus: \"could not select device driver\")" : "");
	free(docker_none);
	docker_none = NULL;
}

static const char *const docker_files[] = { NVIDIA_HOOK_LINK, DOCKER_JSON, NULL };

const struct engine_ops engine_docker = {
	.name = "docker",
	.usage = "  docker        runtime NAME in /etc/docker/daemon.json (and NVIDIA's hook name for\n"
		 "                --gpus, with nvidia.ini)\n",
	.words = (const struct engine_word[]){ { "docker", 1, &docker }, { NULL, 0, NULL } },
	.daemon = &docker,
	.files = docker_files,
	.merged = DOCKER_JSON,
	.merge = "docker",
	.plan = docker_plan,
	.record = docker_record,
	.undoing = docker_undoing,
	.take_out = docker_take_out,
	.empty = docker_empty,
	.uninstalled = docker_uninstalled,
	.check = docker_check,
	.check_last = docker_check_last,
};
