/* nri.c: see nri.h. */
#include "engines/nri.h"

#include "base/log.h"
#include "base/util.h"
#include "engines/cdispec.h"
#include "pipeline/activate.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

unsigned nri_said;

void nri_container_config(const NriContainer *c, struct oci_config *oc)
{
	memset(oc, 0, sizeof(*oc));
	for (size_t i = 0; i < c->n_env; i++)
		strv_push(&oc->env, c->env[i]);
	for (size_t i = 0; i < c->n_annotations; i++) {
		strv_push(&oc->ann, c->annotations[i]->key);
		strv_push(&oc->ann, c->annotations[i]->value);
	}
	/* a device plugin's device list (oci.c): bind mounts of /dev/null */
	for (size_t i = 0; i < c->n_mounts; i++) {
		const Nri__Pkg__Api__V1alpha1__Mount *m = c->mounts[i];
		bool bind = strcmp(m->type, "bind") == 0;

		for (size_t k = 0; k < m->n_options; k++)
			bind |= strcmp(m->options[k], "bind") == 0 || strcmp(m->options[k], "rbind") == 0;
		if (bind && strcmp(m->source, "/dev/null") == 0 && *m->destination)
			strv_push(&oc->mounts, m->destination);
	}
	if (c->linux && *c->linux->cgroups_path)
		oc->cgroups_path = xstrdup(c->linux->cgroups_path);
}

bool nri_edited(const NriContainer *c)
{
	const Nri__Pkg__Api__V1alpha1__Hooks *h = c->hooks;

	for (size_t i = 0; h && i < h->n_create_container; i++) {
		const Nri__Pkg__Api__V1alpha1__Hook *k = h->create_container[i];
		const char *base = strrchr(k->path, '/');

		base = base ? base + 1 : k->path;
		if (k->n_args > 1 && strcmp(k->args[1], "--cdi") == 0 &&
		    (strcmp(base, "ocidec") == 0 || strcmp(base, "ocidec-hook") == 0))
			return true;
	}
	return false;
}

/* The string members of the JSON object O (NULL: none) */
static const char *str(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(s) ? s->valuestring : "";
}

static long long num(const cJSON *o, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(n) ? (long long)n->valuedouble : 0;
}

/* The strings of the JSON array A, as protobuf-c's (*N, the array) */
static char **strings(const cJSON *a, size_t *n)
{
	char **v = xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
	const cJSON *s;

	*n = 0;
	cJSON_ArrayForEach(s, a)
		if (cJSON_IsString(s))
			v[(*n)++] = xstrdup(s->valuestring);
	return v;
}

static void *msg(size_t size, const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = xcalloc(1, size);

	protobuf_c_message_init(d, m);
	return m;
}
#define NEW(type, desc) ((type *)msg(sizeof(type), &(desc)))
#define API(name) Nri__Pkg__Api__V1alpha1__##name
#define DESC(name) nri__pkg__api__v1alpha1__##name##__descriptor

/* protobuf-c's "" for an unset string is its own constant, not ours to free */
static char *dup(const char *s)
{
	return *s ? xstrdup(s) : (char *)protobuf_c_empty_string;
}

/* Has the JSON array DEVS a node of TYPE MAJOR:MINOR? */
static bool has_node(const cJSON *devs, const char *type, long long major, long long minor)
{
	const cJSON *d;

	cJSON_ArrayForEach(d, devs)
		if (strcmp(str(d, "type"), type) == 0 && num(d, "major") == major && num(d, "minor") == minor)
			return true;
	return false;
}

static void devices(const cJSON *config, API(ContainerAdjustment) *a)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(config, "linux");
	const cJSON *devs = cJSON_GetObjectItemCaseSensitive(l, "devices");
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "resources"), "devices");
	const cJSON *d;
	API(LinuxContainerAdjustment) *la;

	if (!cJSON_GetArraySize(devs) && !cJSON_GetArraySize(rules))
		return;
	a->linux = la = NEW(API(LinuxContainerAdjustment), DESC(linux_container_adjustment));
	la->devices = xcalloc((size_t)cJSON_GetArraySize(devs) + 1, sizeof(*la->devices));
	/* NRI adds each node's cgroup rule itself (its access from the mode) */
	cJSON_ArrayForEach(d, devs) {
		API(LinuxDevice) *n = NEW(API(LinuxDevice), DESC(linux_device));

		n->path = dup(str(d, "path"));
		n->type = dup(str(d, "type"));
		n->major = num(d, "major");
		n->minor = num(d, "minor");
		n->file_mode = NEW(API(OptionalFileMode), DESC(optional_file_mode));
		n->file_mode->value = (uint32_t)num(d, "fileMode") & 0777;
		n->uid = NEW(API(OptionalUInt32), DESC(optional_uint32));
		n->uid->value = (uint32_t)num(d, "uid");
		n->gid = NEW(API(OptionalUInt32), DESC(optional_uint32));
		n->gid->value = (uint32_t)num(d, "gid");
		la->devices[la->n_devices++] = n;
	}
	/* the rules of nodes that come as bind mounts (a user namespace of the
	 * container's own, a driver root other than /): NRI's resources,
	 * which NRI applies from 0.10 on and earlier versions drop (said) */
	cJSON_ArrayForEach(d, rules) {
		API(LinuxDeviceCgroup) *g;

		if (has_node(devs, str(d, "type"), num(d, "major"), num(d, "minor")))
			continue;
		if (!la->resources) {
			if (!(nri_said & NRI_SAID_USERNS_RULES))
				log_warn("a user-namespaced container's device nodes come as bind mounts: their cgroup "
					 "rules go as NRI resources, which runtimes with NRI before 0.10 (containerd "
					 "1.7) drop: the container may not open them there (the shim or CDI gives them)");
			nri_said |= NRI_SAID_USERNS_RULES;
			la->resources = NEW(API(LinuxResources), DESC(linux_resources));
			la->resources->devices = xcalloc((size_t)cJSON_GetArraySize(rules), sizeof(*la->resources->devices));
		}
		g = NEW(API(LinuxDeviceCgroup), DESC(linux_device_cgroup));
		g->allow = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "allow"));
		g->type = dup(str(d, "type"));
		g->major = NEW(API(OptionalInt64), DESC(optional_int64));
		g->major->value = num(d, "major");
		g->minor = NEW(API(OptionalInt64), DESC(optional_int64));
		g->minor->value = num(d, "minor");
		g->access = dup(str(d, "access"));
		la->resources->devices[la->resources->n_devices++] = g;
	}
}

static void mounts(const cJSON *config, API(ContainerAdjustment) *a)
{
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(config, "mounts"), *m;

	a->mounts = xcalloc((size_t)cJSON_GetArraySize(ms) + 1, sizeof(*a->mounts));
	cJSON_ArrayForEach(m, ms) {
		API(Mount) *n = NEW(API(Mount), DESC(mount));

		n->destination = dup(str(m, "destination"));
		n->type = dup(str(m, "type"));
		n->source = dup(str(m, "source"));
		n->options = strings(cJSON_GetObjectItemCaseSensitive(m, "options"), &n->n_options);
		a->mounts[a->n_mounts++] = n;
	}
}

static void hooks(const cJSON *config, API(ContainerAdjustment) *a)
{
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "hooks"),
							    "createContainer");
	const cJSON *h;

	if (!cJSON_GetArraySize(cc))
		return;
	a->hooks = NEW(API(Hooks), DESC(hooks));
	a->hooks->create_container = xcalloc((size_t)cJSON_GetArraySize(cc), sizeof(*a->hooks->create_container));
	cJSON_ArrayForEach(h, cc) {
		API(Hook) *n = NEW(API(Hook), DESC(hook));

		n->path = dup(str(h, "path"));
		n->args = strings(cJSON_GetObjectItemCaseSensitive(h, "args"), &n->n_args);
		n->env = strings(cJSON_GetObjectItemCaseSensitive(h, "env"), &n->n_env);
		a->hooks->create_container[a->hooks->n_create_container++] = n;
	}
}

int nri_adjustment(const struct edits *e, const NriContainer *c, const char *hook_path, NriAdjustment *a,
		   struct oerr *err)
{
	cJSON *config = cJSON_CreateObject(), *linux_, *ns = NULL;
	int r = -1;

	nri__pkg__api__v1alpha1__container_adjustment__init(a);
	if (!config || !(linux_ = cJSON_AddObjectToObject(config, "linux")) ||
	    !(ns = cJSON_AddArrayToObject(linux_, "namespaces")) || !cJSON_AddObjectToObject(config, "process"))
		oom();
	/* (the user namespace: the nodes' ids; the network one: where a
	 * device's interfaces would go, edits.c) */
	for (size_t i = 0; c->linux && i < c->linux->n_namespaces; i++) {
		const Nri__Pkg__Api__V1alpha1__LinuxNamespace *n = c->linux->namespaces[i];
		cJSON *o;

		if (strcmp(n->type, "user") != 0 && strcmp(n->type, "network") != 0)
			continue;
		if (!(o = cJSON_CreateObject()) || !cJSON_AddStringToObject(o, "type", n->type) ||
		    (n->path && *n->path && !cJSON_AddStringToObject(o, "path", n->path)) || !cJSON_AddItemToArray(ns, o))
			oom();
	}
	if (edits_oci_apply(e, config, hook_path, err) < 0)
		goto out;
	devices(config, a);
	mounts(config, a);
	hooks(config, a);
	r = 0;
out:
	cJSON_Delete(config);
	if (r < 0)
		nri_adjustment_free(a);
	return r;
}

size_t nri_groups_lacking(const struct edits *e, const API(User) *u, unsigned *gids)
{
	size_t n = 0;

	for (size_t i = 0; i < e->ndevices; i++) {
		unsigned gid = e->devices[i].gid;
		bool has = !gid || (e->devices[i].mode & 0006) == 0006 || (u && (u->uid == 0 || u->gid == gid));

		for (size_t k = 0; u && !has && k < u->n_additional_gids; k++)
			has = u->additional_gids[k] == gid;
		for (size_t k = 0; !has && k < n; k++)
			has = gids[k] == gid;
		if (!has)
			gids[n++] = gid;
	}
	return n;
}

void nri_say_groups(const struct edits *e, const NriContainer *c, const char *what)
{
	_cleanup_free_ unsigned *gids = xcalloc(e->ndevices + 1, sizeof(*gids));
	const API(User) *u = c->user;
	size_t n;

	/* a user namespace of its own: the user's ids are the container's,
	 * the nodes' groups the host's (NRI says nothing of the mapping) */
	for (size_t i = 0; u && c->linux && i < c->linux->n_namespaces; i++)
		if (strcmp(c->linux->namespaces[i]->type, "user") == 0)
			u = NULL;
	n = nri_groups_lacking(e, u, gids);
	if (n && !u) {
		if (!(nri_said & NRI_SAID_GROUPS))
			log_warn("a device node of group %u only: NRI cannot add that group to the container's process, "
				 "and %s: a non-root container needs runAsGroup or supplementalGroups %u",
				 gids[0], c->user ? "a container of its own user namespace has ids not the host's"
					: "this runtime does not send the container's user (NRI 0.11's: containerd 2.3, "
					  "CRI-O 1.36)", gids[0]);
		nri_said |= NRI_SAID_GROUPS;
		return;
	}
	/* the process's groups are the OCI spec's (the runtime's, from the
	 * pod): nothing in the image adds one; said, not refused (a node of
	 * the vendor's it may never open: AMD's card nodes of group video
	 * beside the render nodes of group render) */
	for (size_t k = 0; k < n; k++) {
		struct strv paths = { 0 };
		_cleanup_free_ char *list = NULL;

		for (size_t i = 0; i < e->ndevices; i++)
			if (e->devices[i].gid == gids[k])
				strv_push(&paths, e->devices[i].path);
		list = strv_join(&paths, ", ");
		strv_free(&paths);
		log_warn("container %s: its process (uid %u, gid %u) is neither root nor in group %u of %s (no "
			 "access for others): it cannot open it, and NRI cannot add the group; the pod needs "
			 "runAsGroup or supplementalGroups %u", what, u->uid, u->gid, gids[k], list, gids[k]);
	}
}

bool nri_takes_cdi(const char *runtime)
{
	/* the first release of each that injects them: containerd 2.1
	 * ("containerd v2.1.9", Debian's "containerd 2.1.9+ds1-5"); CRI-O
	 * 1.34 ("cri-o 1.34.0": 1.32 and 1.33 carry the field and drop it) */
	static const struct { const char *name; unsigned long major, minor; } first[] = {
		{ "containerd ", 2, 1 },
		{ "cri-o ", 1, 34 },
	};
	unsigned long major, minor;
	char *end;

	for (size_t i = 0; i < sizeof(first) / sizeof(*first); i++) {
		size_t n = strlen(first[i].name);

		if (strncmp(runtime, first[i].name, n) != 0)
			continue;
		runtime += n + (runtime[n] == 'v');
		major = strtoul(runtime, &end, 10);
		if (end == runtime || !isdigit((unsigned char)*runtime) || *end != '.' ||
		    !isdigit((unsigned char)end[1]))
			return false;
		minor = strtoul(end + 1, &end, 10);
		return major > first[i].major || (major == first[i].major && minor >= first[i].minor);
	}
	return false;
}

int nri_cdi_adjustment(const struct activation *act, int nact, const NriContainer *c, const char *dir,
		       const char *hook_path, NriAdjustment *a, struct oerr *why)
{
	struct strv names = { 0 };

	nri__pkg__api__v1alpha1__container_adjustment__init(a);
	for (size_t i = 0; c->linux && i < c->linux->n_namespaces; i++)
		if (strcmp(c->linux->namespaces[i]->type, "user") == 0)
			return oerr_set(why, 0, "a user namespace of its own (its nodes go as bind mounts)");
	for (int i = 0; i < nact; i++) {
		const struct activation *t = &act[i];
		int cur;

		if (t->features || t->mig_caps) {
			strv_free(&names);
			return oerr_set(why, 0, "%s: %s asked of it, which its spec does not give", t->v->name,
					t->features ? "features" : "MIG caps");
		}
		if ((cur = cdi_spec_current(t->v, dir, hook_path, why)) <= 0 ||
		    cdi_device_names(t->v, &t->sel, &names, why) < 0) {
			strv_free(&names);
			return oerr_prefix(why, "%s", t->v->name);
		}
	}
	a->cdi_devices = xcalloc(names.n + 1, sizeof(*a->cdi_devices));
	for (size_t i = 0; i < names.n; i++) {
		API(CDIDevice) *d = NEW(API(CDIDevice), DESC(cdidevice));

		d->name = xstrdup(names.v[i]);
		a->cdi_devices[a->n_cdi_devices++] = d;
	}
	strv_free(&names);
	return 0;
}

static void free_str(char *s)
{
	if (s != protobuf_c_empty_string)
		free(s);
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void nri_adjustment_free(NriAdjustment *a)
{
	if (a->linux) {
		for (size_t i = 0; i < a->linux->n_devices; i++) {
			API(LinuxDevice) *d = a->linux->devices[i];

			free_str(d->path);
			free_str(d->type);
			free(d->file_mode);
			free(d->uid);
			free(d->gid);
			free(d);
		}
		free(a->linux->devices);
		if (a->linux->resources) {
			for (size_t i = 0; i < a->linux->resources->n_devices; i++) {
				API(LinuxDeviceCgroup) *g = a->linux->resources->devices[i];

				free_str(g->type);
				free_str(g->access);
				free(g->major);
				free(g->minor);
				free(g);
			}
			free(a->linux->resources->devices);
			free(a->linux->resources);
		}
		free(a->linux);
	}
	for (size_t i = 0; i < a->n_mounts; i++) {
		API(Mount) *m = a->mounts[i];

		free_str(m->destination);
		free_str(m->type);
		free_str(m->source);
		free_strings(m->options, m->n_options);
		free(m);
	}
	free(a->mounts);
	if (a->hooks) {
		for (size_t i = 0; i < a->hooks->n_create_container; i++) {
			API(Hook) *h = a->hooks->create_container[i];

			free_str(h->path);
			free_strings(h->args, h->n_args);
			free_strings(h->env, h->n_env);
			free(h);
		}
		free(a->hooks->create_container);
		free(a->hooks);
	}
	for (size_t i = 0; i < a->n_cdi_devices; i++) {
		free_str(a->cdi_devices[i]->name);
		free(a->cdi_devices[i]);
	}
	free(a->cdi_devices);
	nri__pkg__api__v1alpha1__container_adjustment__init(a);
}

void nri_pod_config(const Nri__Pkg__Api__V1alpha1__PodSandbox *pod, struct oci_config *oc)
{
	oc->nri = true;
	for (size_t i = 0; pod && i < pod->n_annotations; i++) {
		strv_push(&oc->pod_ann, pod->annotations[i]->key);
		strv_push(&oc->pod_ann, pod->annotations[i]->value);
	}
}
