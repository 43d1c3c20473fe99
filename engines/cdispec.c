/* cdispec.c: see cdispec.h. */
#include "engines/cdispec.h"

#include "pipeline/activate.h"
#include "devices/devices.h"
#include "pipeline/edits.h"
#include "engines/engines.h"
#include "formats/ldconfig.h"
#include "base/log.h"
#include "devices/mig.h"
#include "base/out.h"
#include "pipeline/plan.h"
#include "safety/rootfile.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define jadd edits_json_add

/* SPEC (when not NULL) at the lowest cdiVersion that expresses it, unless
 * --cdi-version named one: 1.1.0 where an edit has netDevices (CDI's
 * MinimumRequiredVersion), else as built. Returns SPEC. */
static cJSON *cdi_version_raise(cJSON *spec, const struct cdi_run *run)
{
	const cJSON *d;
	bool net;

	if (!spec || run->version_given)
		return spec;
	net = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "containerEdits"), "netDevices");
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(spec, "devices"))
		net |= cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "containerEdits"),
							"netDevices") != NULL;
	if (net)
		cJSON_ReplaceItemInObjectCaseSensitive(spec, "cdiVersion", cJSON_CreateString("1.1.0"));
	return spec;
}

/* A CDI device name: letters and digits first and last, "_-.:" between. */
static bool valid_device_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.:", s[i]))
			return false;
	return true;
}

/* The containerEdits of vendor V planned with SEL; NULL with *EMPTY when
 * there is nothing, NULL without it on error. */
static cJSON *plan_edits(const struct vendor *v, const struct plan_select *sel, const struct cdi_opts *co,
			 bool *empty, struct oerr *err)
{
	struct plan p = { 0 };
	struct plan_select by_path = *sel;   /* an engine mounts the spec's paths later */
	struct edits e;
	cJSON *j = NULL;

	*empty = false;
	by_path.by_path = true;
	if (plan_vendor(&p, v, &by_path, err) < 0)
		return NULL;
	edits_build(&p, &e);
	if (edits_empty(&e))
		*empty = true;
	else if (!(j = edits_cdi_json(&e, co, err)))
		oerr_prefix(err, "%s", v->name);
	edits_free(&e);
	plan_free(&p);
	return j;
}

static int add_device(cJSON *devices, const char *name, cJSON *edits)
{
	cJSON *d = jadd(devices, NULL, cJSON_CreateObject());

	jadd(d, "name", cJSON_CreateString(name));
	jadd(d, "containerEdits", edits);
	return 0;
}

struct uuids {
	struct strv names;     /* UUID, index, UUID, index, ... */
	const struct vendor *v;
};

static int note_uuid(const char *file, const char *uuid, int minor, int index, void *arg)
{
	(void)file;
	struct uuids *u = arg;

	(void)minor;
	if (!uuid)
		return 0;
	if (!valid_device_name(uuid)) {
		log_warn("%s: UUID '%s' is no CDI device name; left out", u->v->name, uuid);
		return 0;
	}
	strv_push(&u->names, uuid);
	strv_push_owned(&u->names, xasprintf("%d", index));
	return 0;
}

static int note_mig(const char *mig, const char *gpu, unsigned idx, unsigned gi, unsigned ci, void *arg)
{
	struct strv *names = arg;

	(void)gi;
	(void)ci;
	strv_push(names, mig);
	strv_push_owned(names, xasprintf("%s %u", gpu, idx));
	return 0;
}

/* The MIG devices of the MIG map (mig.h), each by its UUID and as
 * "G:M" (nvidia-smi -L's numbers, nvidia-ctk's names): its GPU's node and
 * its instances' cap nodes. A map that is not current gives none (said). */
static int add_mig_devices(const struct vendor *v, const struct cdi_run *run, cJSON *devices, struct oerr *err)
{
	struct strv names = { 0 };
	struct oerr why;
	int r = 0;

	if (mig_map_each(v, note_mig, &names, &why) < 0) {
		/* a warning only where the host has MIG instances, which the map
		 * would name; a node without MIG needs none (said at info) */
		if (vendor_mig_access(v)->n)
			log_warn("%s: no MIG devices in the spec: %s", v->name, why.msg);
		else
			log_info("%s: no MIG instance here, no MIG device in the spec (%s)", v->name, why.msg);
		return 0;
	}
	for (size_t k = 0; k + 1 < names.n && r == 0; k += 2) {
		_cleanup_free_ char *alias = NULL;
		struct mig_instance inst;
		struct selection mig_only = { .kind = SEL_NONE, .mig = &inst, .nmig = 1 };
		struct plan_select one = { .devices = &mig_only, .nodes_only = true };
		const char *sp = strchr(names.v[k + 1], ' ');
		_cleanup_free_ char *gpu = xstrndup(names.v[k + 1], (size_t)(sp - names.v[k + 1]));
		long gidx = vendor_uuid_index(v, gpu);
		bool nothing;
		cJSON *e;

		if (!valid_device_name(names.v[k]) || gidx < 0 || mig_resolve(v, names.v[k], &inst, &why) < 0) {
			log_warn("%s: MIG device %s left out: %s", v->name, names.v[k],
				 gidx < 0 ? "its GPU is not here" : !valid_device_name(names.v[k]) ? "no CDI name" : why.msg);
			continue;
		}
		e = plan_edits(v, &one, &run->co, &nothing, err);
		if (!e) {
			r = nothing ? 0 : -1;
			continue;
		}
		alias = xasprintf("%ld:%s", gidx, sp + 1);
		add_device(devices, alias, cJSON_Duplicate(e, true));
		add_device(devices, names.v[k], e);
	}
	strv_free(&names);
	return r;
}

/* The vendor's variables set to "void" in SPEC's common edits: an image
 * that carries one (CUDA's NVIDIA_VISIBLE_DEVICES=all) asks the hook,
 * where it is installed too, for nothing more than the spec gave */
static void add_void_env(const struct vendor *v, cJSON *spec)
{
	cJSON *common = cJSON_GetObjectItemCaseSensitive(spec, "containerEdits"), *env;

	if (!common)
		common = jadd(spec, "containerEdits", cJSON_CreateObject());
	env = jadd(common, "env", cJSON_CreateArray());
	for (size_t k = 0; k <= v->activation_aliases.n; k++) {
		_cleanup_free_ char *e = xconcat(k ? v->activation_aliases.v[k - 1] : v->activation_flag, "=void");
		jadd(env, NULL, cJSON_CreateString(e));
	}
}

/* A claim's spec (a DRA driver's): one device, CLAIM, with everything
 * vendor V gives for SEL (its common edits and the devices' own), kind
 * VENDOR-DOMAIN/claim; NULL (ERR) */
static cJSON *claim_spec(const struct vendor *v, const struct cdi_run *run, const char *claim, const char *sel,
			 struct oerr *err)
{
	_cleanup_free_ char *kind = NULL;
	struct selection devices;
	struct plan_select ps = { .features = run->features, .devices = &devices };
	cJSON *spec, *e;
	bool nothing;

	if (!valid_device_name(claim)) {
		oerr_usage(err, "--claim %s: not a CDI device name (letters and digits, then _-.:)", claim);
		return NULL;
	}
	if (strspn(sel, ", ") == strlen(sel)) {
		oerr_usage(err, "--devices '%s': no device: a claim names one at least", sel);
		return NULL;
	}
	if (vendor_select(v, sel, &devices, err) < 0)
		return NULL;
	if (devices.kind == SEL_NONE && !devices.nmig) {
		oerr_usage(err, "--devices '%s': no device: a claim names one at least", sel);
		return NULL;
	}
	/* each index one the vendor has (a container's start fails on one
	 * that is not; a claim is refused before) */
	if (devices.kind == SEL_SOME) {
		size_t n;
		_cleanup_free_ unsigned long *idx = plan_node_indices(v, &n);

		for (size_t t = 0; t < devices.n; t++) {
			bool have = false;
			for (size_t i = 0; i < n && !have; i++)
				have = idx[i] == devices.idx[t];
			if (!have) {
				oerr_set(err, 0, "%s: no device %lu: its node is not under driver_root %s", v->name,
					 devices.idx[t], v->driver_root);
				selection_free(&devices);
				return NULL;
			}
		}
	}
	e = plan_edits(v, &ps, &run->co, &nothing, err);
	selection_free(&devices);
	if (!e) {
		if (nothing)
			oerr_set(err, 0, "%s: --devices %s gives nothing under driver_root %s", v->name, sel, v->driver_root);
		return NULL;
	}
	kind = xasprintf("%.*s/claim", (int)strcspn(v->cdi_kind, "/"), v->cdi_kind);
	spec = cJSON_CreateObject();
	if (!spec)
		oom();
	jadd(spec, "cdiVersion", cJSON_CreateString(run->co.version));
	jadd(spec, "kind", cJSON_CreateString(kind));
	add_device(jadd(spec, "devices", cJSON_CreateArray()), claim, e);
	add_void_env(v, spec);
	return spec;
}

/* Vendor V's spec, or NULL (ERR set; or nothing to give: *EMPTY). */
static cJSON *vendor_spec(const struct vendor *v, const struct cdi_run *run, bool *empty, struct oerr *err)
{
	static const struct selection no_device = { .kind = SEL_NONE };
	struct plan_select sel = { .features = run->features, .devices = &no_device };
	cJSON *spec, *devices, *common, *all;
	struct uuids u = { .v = v };
	unsigned long *idx;
	size_t n;
	bool none;

	*empty = false;
	if (!cdi_kind_valid(v->cdi_kind)) {
		oerr_usage(err, "%s: '%s' is no CDI kind (VENDOR/CLASS): set cdi_kind in %s", v->name,
			   v->cdi_kind, v->file);
		return NULL;
	}
	common = plan_edits(v, &sel, &run->co, &none, err);
	if (!common && !none)
		return NULL;
	spec = cJSON_CreateObject();
	if (!spec)
		oom();
	jadd(spec, "cdiVersion", cJSON_CreateString(run->co.version));
	jadd(spec, "kind", cJSON_CreateString(v->cdi_kind));
	devices = jadd(spec, "devices", cJSON_CreateArray());

	idx = plan_node_indices(v, &n);
	vendor_uuid_each(v, note_uuid, &u);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		const struct selection just = { .kind = SEL_SOME, .idx = &idx[i], .n = 1 };
		struct plan_select one = { .devices = &just, .nodes_only = true };
		cJSON *e;
		bool nothing;

		snprintf(name, sizeof(name), "%lu", idx[i]);
		e = plan_edits(v, &one, &run->co, &nothing, err);
		if (!e && !nothing)
			goto fail;
		if (!e)
			continue;
		add_device(devices, name, e);
		for (size_t k = 0; k + 1 < u.names.n; k += 2)
			if (strcmp(u.names.v[k + 1], name) == 0)
				add_device(devices, u.names.v[k], cJSON_Duplicate(e, true));
	}
	for (size_t k = 0; k + 1 < u.names.n; k += 2) {
		bool found = false;
		for (size_t i = 0; i < n && !found; i++)
			found = strtoul(u.names.v[k + 1], NULL, 10) == idx[i];
		if (!found)
			log_warn("%s: GPU %s: no device node with index %s; left out", v->name, u.names.v[k],
				 u.names.v[k + 1]);
	}
	if (vendor_has_mig(v) && v->mig_map && add_mig_devices(v, run, devices, err) < 0)
		goto fail;
	/* "all": every per-device node; a vendor without any gets its whole
	 * edits there (a device's edits may not be empty) */
	if (n) {
		static const struct selection all_devices = { .kind = SEL_ALL };
		struct plan_select every = { .devices = &all_devices, .nodes_only = true };
		bool nothing;

		all = plan_edits(v, &every, &run->co, &nothing, err);
		if (!all) {
			*empty = nothing;
			goto fail;
		}
		add_device(devices, "all", all);
		if (common)
			jadd(spec, "containerEdits", common);
		common = NULL;
	} else if (common) {
		add_device(devices, "all", common);
		common = NULL;
	} else {
		*empty = true;
		goto fail;
	}
	/* The vendor's variables set to "void": an image that carries one
	 * (CUDA's NVIDIA_VISIBLE_DEVICES=all) asks the hook, where it is
	 * installed too, for nothing more than the spec gave */
	add_void_env(v, spec);
	common = NULL;
	free(idx);
	strv_free(&u.names);
	return spec;
fail:
	cJSON_Delete(common);
	cJSON_Delete(spec);
	free(idx);
	strv_free(&u.names);
	return NULL;
}

/* V's management spec's kind: management.KIND (management.nvidia.com/gpu) */
static char *management_kind(const struct vendor *v)
{
	return xconcat("management.", v->cdi_kind);
}

/* V's management spec: kind management.KIND, one device "all" with every
 * feature and every device node (what a driver's management tools, a
 * device plugin or a monitor run with, as NVIDIA's management spec) */
static cJSON *management_spec(const struct vendor *v, const struct cdi_run *run, bool *empty, struct oerr *err)
{
	struct cdi_run all = *run;
	cJSON *spec, *devices, *d, *next;
	char *kind;

	all.features = "all";
	if (!(spec = vendor_spec(v, &all, empty, err)))
		return NULL;
	kind = management_kind(v);
	cJSON_ReplaceItemInObject(spec, "kind", cJSON_CreateString(kind));
	free(kind);
	devices = cJSON_GetObjectItem(spec, "devices");
	for (d = devices ? devices->child : NULL; d; d = next) {
		next = d->next;
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(d, "name"));

		if (!name || strcmp(name, "all") != 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(devices, d));
	}
	return spec;
}

/* YAML, block style, from the cJSON tree: strings are written as JSON
 * strings, which are YAML's double-quoted scalars. */
static void yaml_scalar(FILE *f, const cJSON *v)
{
	char *t;

	if ((cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child) {
		fputs(cJSON_IsArray(v) ? "[]" : "{}", f);
		return;
	}
	t = cJSON_PrintUnformatted(v);
	if (!t)
		oom();
	fputs(t, f);
	free(t);
}

static bool yaml_is_block(const cJSON *v)
{
	return (cJSON_IsArray(v) || cJSON_IsObject(v)) && v->child;
}

/* N (a non-empty array or object) at INDENT; FIRST_DONE: the first line's
 * indentation is written already ("- "). */
static void yaml_block(FILE *f, const cJSON *n, int indent, bool first_done)
{
	for (const cJSON *c = n->child; c; c = c->next) {
		if (c != n->child || !first_done)
			fprintf(f, "%*s", indent, "");
		if (cJSON_IsArray(n)) {
			fputs("- ", f);
			if (yaml_is_block(c)) {
				yaml_block(f, c, indent + 2, true);
				continue;
			}
		} else {
			fprintf(f, "%s:", c->string);
			if (yaml_is_block(c)) {
				fputc('\n', f);
				yaml_block(f, c, indent + 2, false);
				continue;
			}
			fputc(' ', f);
		}
		yaml_scalar(f, c);
		fputc('\n', f);
	}
}

/* The spec's text, new */
static char *spec_text(const cJSON *spec, bool yaml)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!yaml) {
		char *j = cJSON_Print(spec);
		if (!j)
			oom();
		text = xconcat(j, "\n");
		free(j);
		return text;
	}
	f = open_memstream(&text, &len);
	if (!f)
		oom();
	fputs("---\n", f);
	yaml_block(f, spec, 0, false);
	if (fclose(f) != 0)
		oom();
	return text;
}

bool cdi_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool cdi_ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* The descriptor N of "/dev/fd/N" or "/proc/self/fd/N" exactly (digits
 * only, nothing after), of "/dev/stdout" (1) and "/dev/stderr" (2); -1
 * for anything else */
static int fd_name(const char *s)
{
	const char *d = strncmp(s, "/dev/fd/", 8) == 0 ? s + 8 : strncmp(s, "/proc/self/fd/", 14) == 0 ? s + 14 : NULL;
	char *end;
	long n;

	if (strcmp(s, "/dev/stdout") == 0)
		return 1;
	if (strcmp(s, "/dev/stderr") == 0)
		return 2;
	if (!d || !*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9)
		return -1;
	n = strtol(d, &end, 10);
	return (int)n;
}

/* The caller's own descriptor PATH names (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, or a link whose whole text is one of those): N, else
 * -1 */
static int own_descriptor(const char *path)
{
	char text[64];
	ssize_t n;
	int fd = fd_name(path);

	if (fd >= 0)
		return fd;
	n = readlink(path, text, sizeof(text) - 1);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return fd_name(text);
}

static int write_fd(int fd, const char *path, const char *text, struct oerr *err)
{
	size_t len = strlen(text), done = 0;

	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return oerr_set(err, errno, "%s", path);
		done += (size_t)n;
	}
	return 0;
}

/* TEXT to PATH (absolute, or relative to the working directory), by
 * atomic replacement: a new inode renamed over whatever is at PATH, a
 * symlink or FIFO included (whoever may write a spec directory must not
 * make root write through a link, or hang on a FIFO). Only THROUGH (an
 * explicit -o FILE) writes through: to the caller's own descriptor it
 * names (-o /dev/stdout: that descriptor itself, nothing opened), or to a
 * character device or FIFO that PATH itself is (never through a link to
 * one). */
static int write_spec(const char *path, const char *text, bool through, struct oerr *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *abs = NULL;
	char cwd[PATH_MAX];
	struct stat st;
	int own = through ? own_descriptor(path) : -1;

	if (own >= 0) {
		if (fstat(own, &st) < 0)
			return oerr_set(err, errno, "%s", path);
		if (S_ISDIR(st.st_mode))
			return oerr_set(err, EISDIR, "%s", path);
		return write_fd(own, path, text, err);
	}
	if (through && lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		_cleanup_close_ int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		struct stat now;

		if (fd < 0)
			return oerr_set(err, errno, "%s", path);
		if (fstat(fd, &now) < 0 || (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT) || now.st_rdev != st.st_rdev ||
		    now.st_ino != st.st_ino || now.st_dev != st.st_dev)
			return oerr_set(err, 0, "%s: changed while opened", path);
		return write_fd(fd, path, text, err);
	}
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return oerr_set(err, EISDIR, "%s", path);
	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return oerr_set(err, errno, "the working directory");
		abs = xasprintf("%s/%s", cwd, path);
		path = abs;
	}
	if (root < 0)
		return oerr_set(err, errno, "/");
	return root_write_atomic(root, path, text, strlen(text), 0644, true, err);
}

/* The names of the features LIST selects for V (NULL: driver_feature),
 * comma-separated */
static char *feature_names(const struct vendor *v, const char *list)
{
	_cleanup_free_ bool *sel = xcalloc(v->nfeatures ? v->nfeatures : 1, sizeof(*sel));
	_cleanup_strv_ struct strv names = { 0 };
	struct oerr e;

	if (vendor_select_features(v, list, sel, &e) < 0)
		return xstrdup("?");
	for (size_t f = 0; f < v->nfeatures; f++)
		if (sel[f])
			strv_push(&names, v->features[f].name);
	return strv_join(&names, ",");
}

/* A spec's file name in a directory: KIND with '-' for '/', .json or .yaml */
static char *spec_file(const char *kind, bool yaml)
{
	char *f = xasprintf("%s.%s", kind, yaml ? "yaml" : "json");

	*strchr(f, '/') = '-';
	return f;
}

/* Does TEXT (a spec, ours or another tool's, JSON or YAML) give KIND? */
static bool spec_gives_kind(const char *text, const char *kind)
{
	/* how cJSON, our YAML and other tools write it: before and after KIND */
	static const char *const forms[][2] = {
		{ "\"kind\":\t\"", "\"" }, { "\"kind\": \"", "\"" }, { "\"kind\":\"", "\"" },
		{ "\nkind: \"", "\"" }, { "\nkind: ", "\n" }, { "\nkind: '", "'" },
	};
	bool found = false;

	for (size_t i = 0; i < ARRAY_SIZE(forms) && !found; i++) {
		_cleanup_free_ char *f = xasprintf("%s%s%s", forms[i][0], kind, forms[i][1]);

		found = strstr(text, f) != NULL || (f[0] == '\n' && strncmp(text, f + 1, strlen(f + 1)) == 0);
	}
	return found;
}

/* --refresh: the spec TEXT (NULL: none, for V has nothing) as NAME in the
 * directory DFD (DIR), made true: written only when what is there differs
 * (or is not root's file, 0644), atomically; a spec of KIND there (ours:
 * that name is what we write) removed when there is none to give, and in
 * the other format (.json, .yaml) always (CDI refuses a device defined
 * twice). Said, a line each. 0, or -1 (ERR) */
/* cdi_refresh's: an unchanged spec goes unsaid (a refresh every few seconds) */
static bool refresh_quiet;

static int refresh_one(const struct vendor *v, int dfd, const char *dir, const char *name, const char *other,
		       const char *kind, const char *text, struct oerr *err)
{
	const char *files[2] = { name, other };

	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *rel = xconcat("/", files[i]), *cur = NULL;
		struct oerr ignored;
		struct stat st;
		size_t len;
		int there = root_read_file(dfd, rel, 16 << 20, &cur, &len, &st, &ignored);

		if (i == 0 && text && there == 1 && len == strlen(text) && memcmp(cur, text, len) == 0 &&
		    st.st_uid == geteuid() && (st.st_mode & 07777) == 0644) {
			if (!refresh_quiet)
				out("%s: %s/%s unchanged\n", v->name, dir, name);
			continue;
		}
		if (i == 0 && text) {
			if (root_write_atomic(dfd, rel, text, strlen(text), 0644, true, err) < 0)
				return oerr_prefix(err, "%s", dir);
			out("%s: wrote %s/%s\n", v->name, dir, name);
			continue;
		}
		if (there != 1 || !spec_gives_kind(cur, kind))
			continue;
		if (unlinkat(dfd, files[i], 0) < 0 && errno != ENOENT)
			return oerr_set(err, errno, "%s/%s", dir, files[i]);
		if (i == 0)
			out("%s: removed %s/%s: nothing under its driver_root %s to give\n", v->name, dir, files[i],
			    v->driver_root);
		else
			out("%s: removed %s/%s: the other format of %s\n", v->name, dir, files[i], name);
	}
	return 0;
}

/* --refresh for vendor V: its spec and its management spec in the
 * directory DFD (DIR) as they are now. 0, or -1 (ERR) */
static int refresh_vendor(const struct vendor *v, const struct cdi_run *run, int dfd, const char *dir, struct oerr *err)
{
	/* a vendor given only beside another (only_with: NVIDIA's gated
	 * features) has no management spec: the other's has the driver */
	for (int m = 0; m < (v->only_with.n ? 1 : 2); m++) {
		_cleanup_free_ char *kind = m ? management_kind(v) : xstrdup(v->cdi_kind);
		_cleanup_free_ char *file = spec_file(kind, run->yaml), *other = spec_file(kind, !run->yaml), *text = NULL;
		bool empty = false;
		cJSON *spec = cdi_version_raise(m ? management_spec(v, run, &empty, err) : vendor_spec(v, run, &empty, err), run);

		if (!spec && !empty)
			return -1;
		if (spec)
			text = spec_text(spec, run->yaml);
		cJSON_Delete(spec);
		if (refresh_one(v, dfd, dir, file, other, kind, text, err) < 0)
			return -1;
	}
	return 0;
}

/* Each spec file in DFD (its name .json or .yaml, not hidden), its text
 * (at most MAX bytes; one that cannot be read skipped) handed to FN */
static void each_spec(int dfd, size_t max, void (*fn)(const char *name, const char *text, void *arg), void *arg)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		_cleanup_free_ char *rel = xconcat("/", e->d_name), *text = NULL;
		struct oerr ignored;
		size_t len;

		if (e->d_name[0] != '.' && (cdi_ends_with(e->d_name, ".json") || cdi_ends_with(e->d_name, ".yaml")) &&
		    root_read_file(dfd, rel, max, &text, &len, NULL, &ignored) == 1)
			fn(e->d_name, text, arg);
	}
	closedir(d);
}

struct clash_walk {
	const struct vendor *v;
	const char *dir;
	char *ours, *ours2;
};

static void on_clash(const char *name, const char *text, void *arg)
{
	struct clash_walk *w = arg;

	if (strcmp(name, w->ours) != 0 && strcmp(name, w->ours2) != 0 && spec_gives_kind(text, w->v->cdi_kind))
		log_warn("%s: %s/%s gives kind %s too: an engine refuses a device two specs define (remove one: "
			 "NVIDIA's refresh, nvidia-cdi-refresh, writes nvidia.yaml there)", w->v->name, w->dir, name,
			 w->v->cdi_kind);
}

/* Another tool's spec in DFD (DIR) that gives V's kind too: said (an
 * engine refuses every device both define, NVIDIA's nvidia-cdi-refresh
 * writing nvidia.yaml beside ours, say) */
static void refresh_clashes(const struct vendor *v, const struct cdi_run *run, int dfd, const char *dir)
{
	struct clash_walk w = { v, dir, spec_file(v->cdi_kind, run->yaml), spec_file(v->cdi_kind, !run->yaml) };

	each_spec(dfd, 1 << 20, on_clash, &w);
	free(w.ours);
	free(w.ours2);
}

struct orphan_walk {
	const struct config *cfg;
	int dfd;
	const char *dir;
};

static void on_orphan(const char *name, const char *text, void *arg)
{
	struct orphan_walk *w = arg;
	bool yaml = cdi_ends_with(name, ".yaml"), given = false;
	_cleanup_free_ char *kind = NULL, *named = NULL;

	if (!strstr(text, "ocidec-hook"))
		return;
	if (yaml)
		kind = yaml_top_scalar(text, "kind");
	else {
		cJSON *j = cJSON_Parse(text);
		const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "kind"));

		kind = k && strchr(k, '/') ? xstrdup(k) : NULL;
		cJSON_Delete(j);
	}
	if (!kind || !strchr(kind, '/') || strcmp((named = spec_file(kind, yaml)), name) != 0)
		return;
	for (size_t i = 0; i < w->cfg->n && !given; i++) {
		_cleanup_free_ char *m = management_kind(&w->cfg->vendors[i]);

		given = strcmp(w->cfg->vendors[i].cdi_kind, kind) == 0 || strcmp(m, kind) == 0;
	}
	if (!given && unlinkat(w->dfd, name, 0) == 0)
		out("removed %s/%s: no vendor config gives %s any more\n", w->dir, name, kind);
}

/* --refresh of every vendor: a spec of ours in DFD (DIR) (named as we name
 * them, its hook ocidec's) whose kind no vendor config of CFG gives any
 * more (the vendor's file removed) goes too, or engines would go on giving
 * its devices. Not while a config is broken: it may be that vendor's. */
static void refresh_orphans(const struct config *cfg, int dfd, const char *dir)
{
	struct orphan_walk w = { cfg, dfd, dir };

	if (!cfg->nbroken)
		each_spec(dfd, 16 << 20, on_orphan, &w);
}

int cdi_refresh_all(const struct cdi_run *run, char *const *names, int n)
{
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_close_ int dfd = open(run->output, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct oerr err;
	struct stat st;
	int status = EXIT_OK;

	if (dfd < 0 || fstat(dfd, &st) < 0) {
		oerr_set(&err, errno, "%s", run->output);
		return log_oerr(&err);
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		oerr_set(&err, 0, "%s: not the caller's alone (owner %u, mode %04o): no spec written there", run->output,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return log_oerr(&err);
	}
	root_dir_hold(dfd);  /* one refresh at a time (the .path unit and a hand's) */
	config_load_each(&cfg, run->dir);
	for (size_t i = 0; i < cfg.nbroken; i++)
		status = log_oerr(&cfg.broken[i].err);
	for (int i = 0; i < n; i++)
		if (!config_vendor(&cfg, names[i]) && oerr_usage(&err, "no vendor '%s' in %s", names[i], run->dir) < 0)
			status = log_oerr(&err);
	for (size_t i = 0; i < cfg.n; i++) {
		const struct vendor *v = &cfg.vendors[i];

		if (!vendor_named(v, names, n))
			continue;
		/* another platform's file: the spec of its kind is the file's
		 * that serves this one (its siblings share the file name); one
		 * that none serves goes (the plan is empty) */
		if (!vendor_here(v) && config_kind_here(&cfg, v, NULL)) {
			log_debug("%s: not this platform's: its kind's spec is another vendor file's", v->name);
			continue;
		}
		vendor_log_level(v);
		if (refresh_vendor(v, run, dfd, run->output, &err) < 0)
			status = log_oerr(&err);
		refresh_clashes(v, run, dfd, run->output);
	}
	if (!n)
		refresh_orphans(&cfg, dfd, run->output);
	root_dir_release();
	return status ? EXIT_FAIL : EXIT_OK;
}

int cdi_write_specs(const struct config *cfg, char *const *names, int n, const struct cdi_run *run,
		    const char *output, bool to_dir, struct oerr *err)
{
	int written = 0;
	struct strv absent = { 0 };

	for (size_t i = 0; i < cfg->n; i++) {
		const struct vendor *v = &cfg->vendors[i];
		_cleanup_free_ char *text = NULL, *path = NULL;
		bool empty;
		cJSON *spec;

		if (!vendor_named(v, names, n))
			continue;
		if (!vendor_here(v)) {
			log_debug("%s: not this platform's (only_where, not_where): no spec", v->name);
			continue;
		}
		empty = false;
		spec = cdi_version_raise(run->claim ? claim_spec(v, run, run->claim, run->devices, err)
					 : run->management ? management_spec(v, run, &empty, err)
					 : vendor_spec(v, run, &empty, err), run);
		if (!spec && empty) {
			/* a vendor named: said; of all, one line for those this
			 * host does not have (the package ships every vendor's
			 * file; most hosts have one), at info */
			if (n)
				log_warn("%s: nothing under driver_root %s: no spec", v->name, v->driver_root);
			else
				strv_push(&absent, v->name);
			continue;
		}
		if (!spec) {
			strv_free(&absent);
			return -1;
		}
		if (run->list) {  /* what engines take: --device KIND=NAME */
			const cJSON *d;
			const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(spec, "kind"));

			cJSON_ArrayForEach(d, cJSON_GetObjectItem(spec, "devices"))
				out("%s=%s\n", kind, cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")));
			cJSON_Delete(spec);
			written++;
			continue;
		}
		text = spec_text(spec, run->yaml);
		cJSON_Delete(spec);
		written++;
		if (!output) {
			out("%s", text);
			continue;
		}
		if (to_dir && run->claim) {
			path = xasprintf("%s/%.*s-claim_%s.%s", output, (int)strcspn(v->cdi_kind, "/"), v->cdi_kind,
					 run->claim, run->yaml ? "yaml" : "json");
		} else if (to_dir) {
			_cleanup_free_ char *kind = run->management ? management_kind(v) : NULL;
			_cleanup_free_ char *file = spec_file(kind ? kind : v->cdi_kind, run->yaml);

			path = xasprintf("%s/%s", output, file);
		}
		if (write_spec(path ? path : output, text, !path, err) < 0) {
			strv_free(&absent);
			return -1;
		}
		if (path || own_descriptor(output) != 1) {  /* stdout is no spec: say what it holds */
			_cleanup_free_ char *feats = feature_names(v, run->management ? "all" : run->features);

			out("%s: wrote %s: features %s%s\n", v->name, path ? path : output, feats,
			    run->features || run->management ? "" : " (its driver_feature, what the hook gives by default; "
								     "--features all for every one)");
		}
	}
	if (absent.n) {
		_cleanup_free_ char *list = strv_join(&absent, ", ");

		log_info("not here (nothing under their driver roots): %s: no spec", list);
	}
	strv_free(&absent);
	return written;
}

int cdi_refresh(const char *config_dir, const char *out_dir, const char *hook_path)
{
	struct cdi_run run = { .dir = config_dir, .output = out_dir, .refresh = true,
			       .co = { .version = "0.5.0", .host_paths = true, .net_devices = true,
				       .hook_path = hook_path } };
	int level = log_threshold, r;

	if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
		log_warn("%s: %s: no CDI spec refreshed", out_dir, strerror(errno));
		return EXIT_FAIL;
	}
	refresh_quiet = true;
	r = cdi_refresh_all(&run, NULL, 0);
	refresh_quiet = false;
	fflush(stdout);
	log_threshold = level;   /* (a vendor's log_level) */
	return r;
}

int cdi_unrefresh(const char *config_dir, const char *out_dir)
{
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_close_ int dfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0)
		return EXIT_OK;
	root_dir_hold(dfd);
	config_load_each(&cfg, config_dir);
	for (size_t i = 0; i < cfg.n; i++)
		for (int m = 0; m < 4; m++) {
			_cleanup_free_ char *kind = m / 2 ? management_kind(&cfg.vendors[i]) : xstrdup(cfg.vendors[i].cdi_kind);
			_cleanup_free_ char *file = spec_file(kind, m % 2), *rel = xconcat("/", file), *text = NULL;
			struct oerr ignored;
			struct stat st;
			size_t len;

			if (root_read_file(dfd, rel, 16 << 20, &text, &len, &st, &ignored) == 1 &&
			    spec_gives_kind(text, kind) && strstr(text, "ocidec-hook") && unlinkat(dfd, file, 0) == 0)
				out("%s: removed %s/%s\n", cfg.vendors[i].name, out_dir, file);
		}
	root_dir_release();
	fflush(stdout);
	return EXIT_OK;
}

/* The run cdi_refresh makes: what the spec it writes is built with */
static void refresh_run(struct cdi_run *run, const char *out_dir, const char *hook_path)
{
	*run = (struct cdi_run){ .output = out_dir, .refresh = true,
				 .co = { .version = "0.5.0", .host_paths = true, .net_devices = true,
					 .hook_path = hook_path } };
}

int cdi_spec_current(const struct vendor *v, const char *dir, const char *hook_path, struct oerr *why)
{
	_cleanup_free_ char *file = spec_file(v->cdi_kind, false), *text = NULL, *cur = NULL;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *rel = xconcat("/", file);
	struct cdi_run run;
	struct oerr ignored;
	struct stat st;
	bool empty = false;
	size_t len;
	cJSON *spec;

	if (!cdi_kind_valid(v->cdi_kind))
		return oerr_set(why, 0, "'%s' is no CDI kind", v->cdi_kind), 0;
	if (dfd < 0 || root_read_file(dfd, rel, 16 << 20, &cur, &len, &st, &ignored) != 1)
		return oerr_set(why, 0, "no spec %s/%s (ocidec cdi --refresh writes it)", dir, file), 0;
	refresh_run(&run, dir, hook_path);
	spec = cdi_version_raise(vendor_spec(v, &run, &empty, why), &run);
	if (!spec)
		return empty ? oerr_set(why, 0, "its spec would give nothing"), 0 : -1;
	text = spec_text(spec, false);
	cJSON_Delete(spec);
	if (len != strlen(text) || memcmp(cur, text, len) != 0)
		return oerr_set(why, 0, "%s/%s is not the spec of the devices as they are now (the refresh "
				"rewrites it)", dir, file), 0;
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return oerr_set(why, 0, "%s/%s is not root's alone", dir, file), 0;
	return 1;
}

struct mig_names {
	const struct vendor *v;
	const struct mig_instance *want;
	char *name;
};

static int find_mig(const char *mig, const char *gpu, unsigned idx, unsigned gi, unsigned ci, void *arg)
{
	struct mig_names *m = arg;
	struct mig_instance inst;
	struct oerr ignored;

	(void)gpu;
	(void)idx;
	(void)gi;
	(void)ci;
	if (!m->name && valid_device_name(mig) && mig_resolve(m->v, mig, &inst, &ignored) == 0 &&
	    mig_instance_eq(&inst, m->want))
		m->name = xstrdup(mig);
	return 0;
}

int cdi_device_names(const struct vendor *v, const struct selection *sel, struct strv *names, struct oerr *why)
{
	for (size_t i = 0; i < sel->nmig; i++) {
		struct mig_names m = { .v = v, .want = &sel->mig[i] };
		struct oerr e;

		if (mig_map_each(v, find_mig, &m, &e) < 0)
			return oerr_set(why, 0, "no MIG devices in the spec: %s", e.msg);
		if (!m.name)
			return oerr_set(why, 0, "MIG device %lu/%u/%u: not in the MIG map", sel->mig[i].gpu, sel->mig[i].gi,
					sel->mig[i].ci);
		strv_push_owned(names, xasprintf("%s=%s", v->cdi_kind, m.name));
		free(m.name);
	}
	if (sel->kind == SEL_ALL) {
		strv_push_owned(names, xasprintf("%s=all", v->cdi_kind));
	} else if (sel->kind == SEL_SOME) {
		size_t n;
		_cleanup_free_ unsigned long *idx = plan_node_indices(v, &n);

		for (size_t i = 0; i < sel->n; i++) {
			bool found = false;

			for (size_t k = 0; k < n && !found; k++)
				found = idx[k] == sel->idx[i];
			if (!found)
				return oerr_set(why, 0, "device %lu has no node of its own in the spec", sel->idx[i]);
			strv_push_owned(names, xasprintf("%s=%lu", v->cdi_kind, sel->idx[i]));
		}
	}
	if (!names->n)
		return oerr_set(why, 0, "it selects no device (CDI names none)");
	return 0;
}
