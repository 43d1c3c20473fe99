/* oci.c: see oci.h. */
#include "pipeline/oci.h"

#include "base/cleanup.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cJSON.h"

/* Does the JSON text hold a string that C cannot hold: a NUL byte, or
 * the escape \u0000? ("all\u0000..." would be "all" to ocidec and the
 * whole string to the runtime.) Escapes are taken pairwise, so "\\u0000"
 * (a backslash, then text) is not one. */
static bool has_nul(const char *buf, size_t len)
{
	if (memchr(buf, '\0', len))
		return true;
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\\')
			continue;
		if (buf[i + 1] == 'u' && i + 5 < len && strncmp(buf + i + 2, "0000", 4) == 0)
			return true;
		i++;  /* the escaped character */
	}
	return false;
}

/* The next letter of the name at *S, advanced past it, as Go's
 * encoding/json (runc's, containerd's) matches a member to a struct's
 * field: in any case. ASCII letters folded, and the two letters that fold
 * to ASCII ones (U+017F, long s; U+212A, the Kelvin sign); every other
 * byte as it is (no field ocidec reads has another). */
static int fold_next(const unsigned char **s)
{
	const unsigned char *p = *s;

	if (p[0] == 0xc5 && p[1] == 0xbf) {
		*s += 2;
		return 's';
	}
	if (p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa) {
		*s += 3;
		return 'k';
	}
	*s += 1;
	return p[0] >= 'A' && p[0] <= 'Z' ? p[0] - 'A' + 'a' : p[0];
}

static int cmp_fold(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	while (*x && *y) {
		int cx = fold_next(&x), cy = fold_next(&y);

		if (cx != cy)
			return cx - cy;
	}
	return (*x != 0) - (*y != 0);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_name_fold(const void *a, const void *b)
{
	return cmp_fold(*(const char *const *)a, *(const char *const *)b);
}

/* The objects of a runtime spec that Go reads as maps, whose keys it takes
 * as they are ("a" and "A" two annotations): the others are structs
 * (annotations; linux.sysctl, .resources.unified, .resources.rdma,
 * .netDevices, .timeOffsets) */
static bool go_map(const char *name)
{
	return name && (strcmp(name, "annotations") == 0 || strcmp(name, "sysctl") == 0 ||
			strcmp(name, "unified") == 0 || strcmp(name, "netDevices") == 0 || strcmp(name, "rdma") == 0 ||
			strcmp(name, "timeOffsets") == 0);
}

/* Two member names of one object under ITEM that are one to the runtime,
 * in *A and *B (and true), or false. Go's encoding/json (runc,
 * containerd) takes the last of them, and a struct's field by its name
 * in any case; cJSON's lookups take the first of exactly the name: such a
 * document would mean one thing to the runtime and another to ocidec.
 * As deep as cJSON parses (CJSON_NESTING_LIMIT). */
static bool duplicate_key(const cJSON *item, int depth, const char **a, const char **b)
{
	if (depth > CJSON_NESTING_LIMIT)
		return false;
	for (; item; item = item->next) {
		if (cJSON_IsObject(item) && item->child) {
			/* the names sorted: a duplicate is a neighbour (n log n, an
			 * object may have many members); a few compared pairwise */
			int (*cmp)(const void *, const void *) = go_map(item->string) ? cmp_name : cmp_name_fold;
			const char *few[16], **names = few;
			size_t n = 0, k = 0;
			bool found = false;

			for (const cJSON *x = item->child; x; x = x->next)
				n++;
			if (n > 16)
				names = xcalloc(n, sizeof(*names));
			for (const cJSON *x = item->child; x; x = x->next)
				names[k++] = x->string ? x->string : "";
			if (n <= 16) {
				for (size_t i = 0; i < n && !found; i++)
					for (size_t j = i + 1; j < n && !found; j++)
						if ((found = cmp(&names[i], &names[j]) == 0))
							*a = names[i], *b = names[j];
			} else {
				qsort(names, n, sizeof(*names), cmp);
				for (k = 1; k < n && !found; k++)
					if ((found = cmp(&names[k - 1], &names[k]) == 0))
						*a = names[k - 1], *b = names[k];
				free(names);
			}
			if (found)
				return true;
		}
		if (item->child && duplicate_key(item->child, depth + 1, a, b))
			return true;
	}
	return false;
}

static int parse_json(const char *buf, size_t len, cJSON **out, struct oerr *err)
{
	const char *dup, *dup2;
	const char *end = NULL;

	if (has_nul(buf, len))
		return oerr_set(err, 0, "a string holds a NUL character (U+0000), which ocidec refuses");
	*out = cJSON_ParseWithLengthOpts(buf, len, &end, false);
	if (!*out) {
		size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
		return oerr_set(err, 0, "invalid JSON at byte %zu", at);
	}
	if (!cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		return oerr_set(err, 0, "not a JSON object");
	}
	if (duplicate_key(*out, 0, &dup, &dup2)) {
		if (strcmp(dup, dup2) == 0)
			oerr_set(err, 0, "the key \"%s\" is given twice in one object (runtimes read the last, ocidec "
				 "would read the first): refused", dup);
		else
			oerr_set(err, 0, "the keys \"%s\" and \"%s\" are one to a runtime (Go's JSON matches a name in any "
				 "case, and reads the last), two to ocidec: refused", dup, dup2);
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* A string member, or NULL; present but not a string is an error. */
static int get_str(const cJSON *o, const char *key, const char **out, struct oerr *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return oerr_set(err, 0, "\"%s\" is not a string", key);
	*out = v->valuestring;
	return 0;
}

static int get_annotations(const cJSON *o, struct strv *ann, struct oerr *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "annotations"), *e;

	if (!a || cJSON_IsNull(a))
		return 0;
	if (!cJSON_IsObject(a))
		return oerr_set(err, 0, "\"annotations\" is not an object");
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			return oerr_set(err, 0, "annotation \"%s\" is not a string", e->string);
		strv_push(ann, e->string);
		strv_push(ann, e->valuestring);
	}
	return 0;
}

/* ST from the parsed state J; on failure ST holds what was read so far */
static int state_fill(const cJSON *j, struct oci_state *st, struct oerr *err)
{
	const cJSON *pid;
	const char *s;

	if (get_str(j, "id", &s, err) < 0)
		return -1;
	st->id = xstrdup(s ? s : "");
	if (get_str(j, "bundle", &s, err) < 0)
		return -1;
	if (!s && get_str(j, "bundlePath", &s, err) < 0)
		return -1;
	if (!s || !*s)
		return oerr_set(err, 0, "no \"bundle\"");
	if (s[0] != '/')
		return oerr_set(err, 0, "\"bundle\" is not an absolute path: %s", s);
	st->bundle = xstrdup(s);
	if (get_str(j, "root", &s, err) < 0)
		return -1;
	if (s && *s) {
		st->root = path_clean_join(st->bundle, s);
		if (strcmp(st->root, "/") == 0)
			return oerr_set(err, 0, "\"root\" is the host's / (%s)", s);
	}
	pid = cJSON_GetObjectItemCaseSensitive(j, "pid");
	if (pid && !cJSON_IsNull(pid)) {
		if (!cJSON_IsNumber(pid) || pid->valuedouble < 0 || pid->valuedouble > INT_MAX ||
		    pid->valuedouble != (double)(int)pid->valuedouble)
			return oerr_set(err, 0, "\"pid\" is not a process id");
		st->pid = (int)pid->valuedouble;
	}
	return get_annotations(j, &st->ann, err);
}

int oci_state_parse(const char *buf, size_t len, struct oci_state *st, struct oerr *err)
{
	_cleanup_json_ cJSON *j = NULL;

	memset(st, 0, sizeof(*st));
	if (parse_json(buf, len, &j, err) < 0)
		return oerr_prefix(err, "container state");
	if (state_fill(j, st, err) < 0) {
		oci_state_free(st);
		return oerr_prefix(err, "container state");
	}
	return 0;
}

static const cJSON *get_obj(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsObject(v) ? v : NULL;
}


/* Mount E (of config.json) a bind mount of the host's null device: its
 * type "bind", or "bind"/"rbind" among its options, and /dev/null here the
 * character device 1:3 (a tmpfs whose source text reads "/dev/null" is no
 * device plugin's list) */
static bool null_bind(const cJSON *e)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type"), *o;
	bool bind = cJSON_IsString(t) && strcmp(t->valuestring, "bind") == 0;
	static int is_null = -1;
	struct stat st;

	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(e, "options"))
		bind |= cJSON_IsString(o) && (strcmp(o->valuestring, "bind") == 0 || strcmp(o->valuestring, "rbind") == 0);
	if (!bind)
		return false;
	if (is_null < 0)
		is_null = stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
			  minor(st.st_rdev) == 3;
	return is_null == 1;
}

/* C from the parsed config.json J; on failure C holds what was read so far */
static int config_fill(const cJSON *j, const char *bundle, struct oci_config *c, struct oerr *err)
{
	const cJSON *root, *process, *a, *e;
	const char *path;

	root = get_obj(j, "root");
	if (root && get_str(root, "path", &path, err) < 0)
		return -1;
	if (!root || !path || !*path)
		return oerr_set(err, 0, "no \"root\".\"path\"");
	/* as runc reads it: joined to the bundle and cleaned lexically, so
	 * "x/.." is the bundle whatever symlink x is */
	c->root = path_clean_join(bundle, path);
	if (strcmp(c->root, "/") == 0)
		return oerr_set(err, 0, "\"root\".\"path\" is the host's / (%s)", path);
	process = get_obj(j, "process");
	a = process ? cJSON_GetObjectItemCaseSensitive(process, "env") : NULL;
	if (a && !cJSON_IsArray(a))
		return oerr_set(err, 0, "\"process\".\"env\" is not an array");
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			return oerr_set(err, 0, "\"process\".\"env\" holds a non-string");
		strv_push(&c->env, e->valuestring);
	}
	a = process ? get_obj(process, "capabilities") : NULL;
	a = a ? cJSON_GetObjectItemCaseSensitive(a, "bounding") : NULL;
	cJSON_ArrayForEach(e, a)
		if (cJSON_IsString(e) && strcmp(e->valuestring, "CAP_SYS_ADMIN") == 0)
			c->cap_sys_admin = true;
	/* a device plugin's device list: mounts of /dev/null (NVIDIA's
	 * volume-mounts strategy), which a pod cannot make itself without a
	 * hostPath; a pod's own volume at the same place is not one */
	a = cJSON_GetObjectItemCaseSensitive(j, "mounts");
	cJSON_ArrayForEach(e, a) {
		const char *dst = NULL, *src = NULL;
		if (cJSON_IsObject(e) && get_str(e, "destination", &dst, err) == 0 && dst &&
		    get_str(e, "source", &src, err) == 0 && src && strcmp(src, "/dev/null") == 0 && null_bind(e))
			strv_push(&c->mounts, dst);
	}
	a = get_obj(j, "linux");
	if (a && get_str(a, "cgroupsPath", &path, err) < 0)
		return -1;
	if (a && path)
		c->cgroups_path = xstrdup(path);
	return get_annotations(j, &c->ann, err);
}

int oci_config_parse(const char *buf, size_t len, const char *bundle, struct oci_config *c,
		     struct oerr *err)
{
	_cleanup_json_ cJSON *j = NULL;

	memset(c, 0, sizeof(*c));
	if (parse_json(buf, len, &j, err) < 0)
		return -1;
	if (config_fill(j, bundle, c, err) < 0) {
		oci_config_free(c);
		return -1;
	}
	return 0;
}

int oci_config_read(const char *bundle, char **buf, size_t *len, struct oerr *err)
{
	_cleanup_free_ char *path = xasprintf("%s/config.json", bundle);
	_cleanup_close_ int fd = -1;

	*buf = NULL;
	/* (openat: musl's open follows O_CLOEXEC with an fcntl for kernels
	 * older than 2.6.23, one system call more on the idle path) */
	fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return oerr_set(err, errno, "%s", path);  /* the hook looks at err->errnum */
	if (read_fd_all(fd, OCI_CONFIG_MAX, buf, len, err) < 0)
		return oerr_prefix(err, "%s", path);
	return 0;
}

int oci_bundle_read(const struct oci_state *st, char **buf, size_t *len, struct oerr *err)
{
	if (oci_config_read(st->bundle, buf, len, err) == 0)
		return 0;
	/* crun's state carries the rootfs: with a bundle we may not read
	 * (podman --userns nomap), annotations can still activate */
	if (err->errnum != EACCES || !st->root)
		return -1;
	log_info("%s; going on with the state's root and annotations", err->msg);
	*buf = NULL;
	*len = 0;
	return 0;
}

int oci_container_config(const struct oci_state *st, const char *buf, size_t len, struct oci_config *c,
			 struct oerr *err)
{
	if (!buf) {
		memset(c, 0, sizeof(*c));
		c->root = xstrdup(st->root);
		return 0;
	}
	if (oci_config_parse(buf, len, st->bundle, c, err) < 0)
		return oerr_prefix(err, "%s/config.json", st->bundle);
	if (st->root) {
		free(c->root);
		c->root = xstrdup(st->root);
	}
	return 0;
}

void oci_state_free(struct oci_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->root);
	strv_free(&st->ann);
	memset(st, 0, sizeof(*st));
}

void oci_config_free(struct oci_config *c)
{
	free(c->root);
	free(c->cgroups_path);
	strv_free(&c->env);
	strv_free(&c->ann);
	strv_free(&c->mounts);
	strv_free(&c->pod_ann);
	memset(c, 0, sizeof(*c));
}

const char *oci_env(const struct strv *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

const char *oci_annotation(const struct strv *ann, const char *key)
{
	for (size_t i = 0; i + 1 < ann->n; i += 2)
		if (strcmp(ann->v[i], key) == 0)
			return ann->v[i + 1];
	return NULL;
}
