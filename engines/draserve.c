/* draserve.c: see draserve.h. */
#include "engines/draserve.h"

#include "engines/cdispec.h"
#include "engines/draclaim.h"
#include "engines/draslice.h"
#include "formats/json.h"
#include "safety/rootfile.h"
#include "base/cleanup.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECKPOINT "claims.json"

/* "/", for the checkpoints' absolute paths (opened once) */
static int host_root(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd;
}
#define CHECKPOINT_MAX (4u << 20)

/* The checkpoint of DRIVER: {"claims": {UID: {"namespace", "name",
 * "devices": [{"requests", "pool", "device", "cdi"}]}}}, an empty one
 * where there is none; one that cannot be read or is no such object is
 * said and started anew (what it held is fetched again) */
static cJSON *checkpoint_load(const struct dra_server *s, const char *driver, char *path, size_t n)
{
	_cleanup_free_ char *text = NULL;
	struct oerr err = { 0 };
	size_t len;
	cJSON *j = NULL;
	int r;

	snprintf(path, n, "%s/%s/" CHECKPOINT, s->plugin_dir, driver);
	r = root_read_file(host_root(), path, CHECKPOINT_MAX, &text, &len, NULL, &err);
	if (r < 0)
		log_warn("%s: %s: started anew", path, err.msg);
	else if (r == 1 && (!(j = json_parse_exact(text, len, NULL)) ||
			    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "claims")))) {
		log_warn("%s: not a checkpoint of ocidec's: started anew", path);
		cJSON_Delete(j);
		j = NULL;
	}
	if (!j && (!(j = cJSON_CreateObject()) || !cJSON_AddObjectToObject(j, "claims")))
		oom();
	return j;
}

static void checkpoint_save(const char *path, const cJSON *j)
{
	_cleanup_free_ char *text = cJSON_PrintUnformatted(j);
	struct oerr err = { 0 };

	if (!text)
		oom();
	if (root_write_atomic(host_root(), path, text, strlen(text), 0600, 0, &err) < 0)
		log_warn("%s: not written (%s): a claim is fetched again after a restart", path, err.msg);
}

static cJSON *strings_json(const struct strv *v)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < v->n; i++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(v->v[i])))
			oom();
	if (!a)
		oom();
	return a;
}

static void json_strings(const cJSON *a, struct strv *v)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, a)
		if (cJSON_IsString(e))
			strv_push(v, e->valuestring);
}

/* The claim kept for C (same namespace and name) into OUT: true */
static bool kept(const cJSON *claims, const struct dra_claim *c, struct dra_prepared *out)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(claims, c->uid), *d;
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "namespace"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));

	if (!ns || !name || strcmp(ns, c->ns) != 0 || strcmp(name, c->name) != 0)
		return false;
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(e, "devices")) {
		const char *pool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "pool"));
		const char *dev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "device"));
		struct dra_given *g;

		if (!pool || !dev)
			continue;
		g = dra_prepared_add(out, pool, dev);
		json_strings(cJSON_GetObjectItemCaseSensitive(d, "requests"), &g->requests);
		json_strings(cJSON_GetObjectItemCaseSensitive(d, "cdi"), &g->cdi_ids);
	}
	return true;
}

static int server_prepare(void *arg, const char *driver, const struct dra_claim *c, struct dra_prepared *out,
			  struct oerr *err)
{
	struct dra_server *s = arg;
	struct dra_claim_ref ref = { .ns = c->ns, .name = c->name, .uid = c->uid, .node = s->node, .driver = driver };
	_cleanup_dra_result_ struct dra_result r = { 0 };
	_cleanup_json_ cJSON *ck = NULL;
	cJSON *claims, *e, *devs;
	char path[4096];

	ck = checkpoint_load(s, driver, path, sizeof(path));
	claims = cJSON_GetObjectItemCaseSensitive(ck, "claims");
	if (kept(claims, c, out)) {
		log_info("driver %s: claim %s/%s (%s): prepared before, the same answer", driver, c->ns, c->name, c->uid);
		return 0;
	}
	dra_prepared_free(out);
	if (dra_claim_prepare(s->k, s->cfg, &ref, &r, err) < 0)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(claims, c->uid);
	if (!(e = cJSON_AddObjectToObject(claims, c->uid)) || !cJSON_AddStringToObject(e, "namespace", c->ns) ||
	    !cJSON_AddStringToObject(e, "name", c->name) || !(devs = cJSON_AddArrayToObject(e, "devices")))
		oom();
	for (size_t i = 0; i < r.n; i++) {
		struct dra_given *g = dra_prepared_add(out, r.v[i].pool, r.v[i].device);
		cJSON *d = cJSON_CreateObject();

		strv_push(&g->requests, r.v[i].request);
		for (size_t k = 0; k < r.v[i].cdi.n; k++)
			strv_push(&g->cdi_ids, r.v[i].cdi.v[k]);
		if (!d || !cJSON_AddItemToArray(devs, d) || !cJSON_AddItemToObject(d, "requests", strings_json(&g->requests)) ||
		    !cJSON_AddStringToObject(d, "pool", g->pool) || !cJSON_AddStringToObject(d, "device", g->device) ||
		    !cJSON_AddItemToObject(d, "cdi", strings_json(&g->cdi_ids)))
			oom();
	}
	checkpoint_save(path, ck);
	return 0;
}

static int server_unprepare(void *arg, const char *driver, const struct dra_claim *c, struct oerr *err)
{
	struct dra_server *s = arg;
	_cleanup_json_ cJSON *ck = NULL;
	cJSON *claims;
	char path[4096];

	(void)err;
	ck = checkpoint_load(s, driver, path, sizeof(path));
	claims = cJSON_GetObjectItemCaseSensitive(ck, "claims");
	if (!cJSON_GetObjectItemCaseSensitive(claims, c->uid))
		return 0;  /* (unprepared before, or never ours: the same) */
	cJSON_DeleteItemFromObjectCaseSensitive(claims, c->uid);
	checkpoint_save(path, ck);
	return 0;
}

const struct dra_backend dra_server_backend = { .prepare = server_prepare, .unprepare = server_unprepare };

void dra_server_tick(void *arg)
{
	struct dra_server *s = arg;
	struct oerr err = { 0 };

	if (s->refresh > 0 && waitpid(s->refresh, NULL, WNOHANG) == s->refresh)
		s->refresh = 0;
	if (s->cdi_dir && s->refresh <= 0) {
		fflush(stdout);
		fflush(stderr);
		s->refresh = fork();
		if (s->refresh == 0) {
			sigset_t all;

			sigfillset(&all);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &all, NULL);
			_exit(cdi_refresh(s->config_dir, s->cdi_dir, s->hook));
		}
		if (s->refresh < 0)
			log_warn("the CDI refresh: fork: %s", strerror(errno));
	}
	if (s->publish && dra_publish(s->k, s->cfg, s->node, s->drivers, &err) < 0)
		log_warn("the node's resource slices: %s (again in a while)", err.msg);
	fflush(stdout);
}

void dra_server_end(struct dra_server *s, const char *const *drivers, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_json_ cJSON *ck = NULL;
		char path[4096];

		ck = checkpoint_load(s, drivers[i], path, sizeof(path));
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ck, "claims")) > 0) {
			log_info("driver %s: %s kept: claims prepared there", drivers[i], path);
			continue;
		}
		unlink(path);
		*strrchr(path, '/') = '\0';
		rmdir(path);  /* (its own, now empty; else left) */
	}
	/* (the CDI specs stay: containers of prepared claims and the NRI
	 * plugin's pods name them; the refresh keeps them, the toolkit's
	 * uninstall removes them) */
	if (s->refresh > 0)
		while (waitpid(s->refresh, NULL, 0) < 0 && errno == EINTR)
			;
	s->refresh = 0;
}
