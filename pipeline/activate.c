/* activate.c: see activate.h. */
#include "pipeline/activate.h"

#include "devices/devices.h"

#include "base/log.h"
#include "devices/mig.h"
#include "safety/rootpath.h"
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* devices_select's MIG names: mig.c's (the device layer knows no MIG) */
static int mig_device(const struct vendor *v, const char *tok, struct mig_instance *m, struct oerr *err)
{
	if (!m)
		return mig_name(tok);
	return mig_resolve(v, tok, m, err) < 0 ? -1 : 0;
}

int vendor_select(const struct vendor *v, const char *value, struct selection *sel, struct oerr *err)
{
	memset(sel, 0, sizeof(*sel));
	if (strcmp(value, "all") == 0)
		return 0;
	if (strcmp(value, "none") == 0) {
		sel->kind = SEL_NONE;
		return 0;
	}
	return devices_select(v, value, false, mig_device, sel, err);
}

/* Variable K of the NVARS vendor V's environment request reads:
 * activation_flag, its aliases, module_env last */
static const char *env_var(const struct vendor *v, size_t k, size_t nvars)
{
	if (v->module_env && k == nvars - 1)
		return v->module_env;
	return k ? v->activation_aliases.v[k - 1] : v->activation_flag;
}

/* The deadline passed at turn TURN of a loop over ENV: -1 (ERR), else 0 */
static int env_deadline(const struct vendor *v, const struct strv *env, size_t turn, struct oerr *err)
{
	if (!deadline_passed_at(turn))
		return 0;
	return oerr_set(err, 0, "%s: the deadline passed while reading the container's environment (%zu entries)",
			v->name, env->n);
}

/* The most entries of one variable a container's environment may have:
 * each is read as a device list, and an engine that appends a variable the
 * image has leaves two or three, while a tenant's 100,000 would take
 * seconds (the NRI plugin has 1 s for a container). More: refused. */
enum { ENV_ENTRIES_MAX = 64 };

/* VAR's entries in ENV are at most ENV_ENTRIES_MAX: 0, or -1 (ERR: how
 * many; or the deadline passed while they were counted) */
static int env_entries_bounded(const struct vendor *v, const struct strv *env, const char *var, struct oerr *err)
{
	size_t vl = strlen(var), n = 0;

	for (size_t i = 0; i < env->n; i++) {
		if (env_deadline(v, env, i, err) < 0)
			return -1;
		n += strncmp(env->v[i], var, vl) == 0 && env->v[i][vl] == '=';
	}
	if (n > ENV_ENTRIES_MAX)
		return oerr_set(err, 0, "%s: the container's environment: %zu entries of %s, more than %d", v->name, n,
				var, ENV_ENTRIES_MAX);
	return 0;
}

/* The environment's request: each of activation_flag and
 * activation_aliases that is set (not empty) can only narrow it, so no
 * variable widens what another gives: an image's ENV OCI_NVIDIA=all under
 * the device plugin's NVIDIA_VISIBLE_DEVICES=GPU-x gets GPU-x, and a CDI
 * spec's NVIDIA_VISIBLE_DEVICES=void turns the image's OCI_NVIDIA=all off.
 * *OUT: the selection, *ASKED true; *ASKED false when nothing is asked,
 * one says "void", or lists have no device in common (said). *VARS: "A=x"
 * or "A=x B=y", for the logs. -1: a device the vendor does not have, more
 * than ENV_ENTRIES_MAX entries of one variable, or the deadline passed. */
static int env_read(const struct vendor *v, const struct strv *env, struct selection *out, bool *asked,
		    char **vars, struct oerr *err)
{
	enum { MAXDEV = SELECT_MAX_INDEX + 1 };
	static bool in[MAXDEV], keep[MAXDEV];
	_cleanup_selection_ struct selection mig = { 0 };  /* the MIG devices every variable names */
	bool listed = false, none = false, off = false;
	size_t nset = 0;

	memset(out, 0, sizeof(*out));
	*asked = false;
	*vars = NULL;
	/* every entry of every variable: an engine that appends a variable
	 * the image has (a CDI spec's void) leaves both */
	size_t nvars = v->activation_aliases.n + 1 + !!v->module_env;  /* module_env last */

	for (size_t e = 0; e < env->n * nvars; e++) {
		size_t k = e / env->n;
		bool module = v->module_env && k == nvars - 1;
		const char *var = env_var(v, k, nvars);
		const char *val = env->v[e % env->n];
		size_t vl = strlen(var);
		struct selection vs;
		char *old;

		/* each entry is a device list to read: a tenant's 100,000 of
		 * them would hold the plugin (and the hook) for seconds */
		if ((e % env->n == 0 && env_entries_bounded(v, env, var, err) < 0) || env_deadline(v, env, e, err) < 0)
			return -1;
		if (strncmp(val, var, vl) != 0 || val[vl] != '=' || !val[vl + 1])
			continue;
		val += vl + 1;
		/* the device plugin's volume-mounts strategy names the list's
		 * directory: the list is the mounts, not this */
		if (strncmp(val, v->device_list_dir, strlen(v->device_list_dir)) == 0 &&
		    strspn(val + strlen(v->device_list_dir), "/") == strlen(val + strlen(v->device_list_dir)))
			continue;
		/* the names and values for the logs, bounded: a config.json of
		 * 100,000 entries costs linear time, not quadratic */
		old = *vars;
		if (!old)
			*vars = xasprintf("%s=%.128s", var, val);
		else if (strlen(old) < 256)
			*vars = xasprintf("%s %s=%.128s%s", old, var, val, strlen(old) + strlen(var) + strlen(val) >= 254 ? " ..." : "");
		if (*vars != old)
			free(old);
		nset++;
		/* a switch (activation_value): its value, or nothing */
		if (v->activation_value) {
			if (strcmp(val, v->activation_value) != 0 && strcmp(val, "void") != 0) {
				vendor_log_level(v);
				log_info("%s: %s=%.64s asks nothing (only %s activates it)", v->name, var, val,
					 v->activation_value);
			}
			off |= strcmp(val, v->activation_value) != 0;
			continue;
		}
		if (strcmp(val, "void") == 0) {
			off = true;
			continue;
		}
		if (strcasecmp(val, "all") == 0 && !v->env_all) {
			log_warn("%s: %s=%s selects nothing: name the devices (env_all = false)", v->name, var, val);
			off = true;
			continue;
		}
		if (strcasecmp(val, "all") == 0)  /* AMD's toolkit takes All and ALL too */
			continue;
		if (strcmp(val, "none") == 0) {
			none = true;
			continue;
		}
		if (devices_select(v, val, module, mig_device, &vs, err) < 0)
			return -1;
		memset(in, 0, sizeof(in));
		for (size_t i = 0; vs.kind == SEL_SOME && i < vs.n; i++)
			in[vs.idx[i] % MAXDEV] = true;
		for (size_t i = 0; i < MAXDEV; i++)
			keep[i] = listed ? keep[i] && in[i] : in[i];
		/* MIG devices: those every variable names */
		if (!listed) {
			mig.mig = vs.mig;
			mig.nmig = vs.nmig;
			vs.mig = NULL;
		} else {
			size_t kept = 0;

			for (size_t i = 0; i < mig.nmig; i++) {
				bool both = false;

				for (size_t j = 0; j < vs.nmig && !both; j++)
					both = mig_instance_eq(&mig.mig[i], &vs.mig[j]);
				if (both)
					mig.mig[kept++] = mig.mig[i];
			}
			mig.nmig = kept;
		}
		selection_free(&vs);
		listed = true;
	}
	if (!nset || off || none || !listed) {
		if (!nset || off)
			return 0;
		*asked = true;
		out->kind = none ? SEL_NONE : SEL_ALL;
		return 0;
	}
	selection_set(out, keep, MAXDEV);
	out->mig = mig.mig;   /* (SEL_NONE with MIG devices: those alone) */
	out->nmig = mig.nmig;
	mig = (struct selection){ 0 };
	if (out->kind == SEL_NONE && !out->nmig) {
		log_warn("%s: %s: no device in common: none given", v->name, *vars);
		selection_free(out);
		return 0;
	}
	*asked = true;
	return 0;
}

/* env_read, *VARS freed on failure */
static int env_request(const struct vendor *v, const struct strv *env, struct selection *out, bool *asked,
		       char **vars, struct oerr *err)
{
	if (env_read(v, env, out, asked, vars, err) == 0)
		return 0;
	free(*vars);
	*vars = NULL;
	return -1;
}

/* Keep the feature names the vendor knows; "all" stays "all". */
static char *filter_features(const struct vendor *v, const char *value, const char *var)
{
	_cleanup_free_ char *copy = xstrdup(value);
	_cleanup_strv_ struct strv keep = { 0 };
	char *save = NULL;

	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (strcmp(tok, "all") == 0)
			return xstrdup("all");
		if (!vendor_feature(v, tok)) {
			log_warn("%s: %s names unknown feature '%s'; ignored", v->name, var, tok);
			continue;
		}
		strv_push(&keep, tok);
	}
	return keep.n ? strv_join(&keep, ",") : NULL;  /* nothing usable: the defaults */
}

/* The device list a device plugin mounted: every mount destination
 * DIR/ID (NVIDIA's volume-mounts strategy), IDs joined by commas; NULL
 * when there is none. */
static char *mounted_devices(const struct vendor *v, const struct strv *mounts)
{
	size_t dl = strlen(v->device_list_dir);
	_cleanup_strv_ struct strv ids = { 0 };

	for (size_t i = 0; i < mounts->n; i++) {
		const char *d = mounts->v[i], *id = d + dl + 1;
		if (strncmp(d, v->device_list_dir, dl) != 0 || d[dl] != '/' || !*id || strchr(id, '/'))
			continue;
		strv_push(&ids, id);
	}
	return ids.n ? strv_join(&ids, ",") : NULL;
}

/* The image's requirements on vendor V's driver (require.h) into OUT:
 * every requirements_env variable's value, and for a legacy image (the
 * legacy variable set, PREFIX"CUDA" not) cuda>=ITS MAJOR.MINOR; none when
 * the disable variable is true, as strconv.ParseBool reads it. -1 (ERR): a
 * legacy version that is none, or more than 64 requirements. */
static int requirements(const struct vendor *v, const struct strv *env, struct strv *out, struct oerr *err)
{
	const char *off = v->requirements_disable_env ? oci_env(env, v->requirements_disable_env) : NULL;
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	size_t pl = v->requirements_env ? strlen(v->requirements_env) : 0;
	_cleanup_free_ char *cuda_var = NULL;
	const char *legacy;

	if (!pl)
		return 0;
	for (size_t i = 0; off && i < ARRAY_SIZE(yes); i++)
		if (strcmp(off, yes[i]) == 0) {
			log_info("%s: %s=%s: the image's requirements are not checked", v->name,
				 v->requirements_disable_env, off);
			return 0;
		}
	for (size_t i = 0; i < env->n; i++) {
		const char *e = env->v[i], *eq = strchr(e, '=');

		if (strncmp(e, v->requirements_env, pl) != 0 || !eq || !eq[1] ||
		    (eq - e == (ptrdiff_t)pl + 7 && strncmp(e + pl, "JETPACK", 7) == 0))
			continue;
		if (out->n == 64)
			return oerr_set(err, 0, "%s: more than 64 %s* requirements", v->name, v->requirements_env);
		strv_push(out, eq + 1);
	}
	cuda_var = xconcat(v->requirements_env, "CUDA");
	legacy = v->requirements_legacy_env ? oci_env(env, v->requirements_legacy_env) : NULL;
	if (legacy && *legacy && !oci_env(env, cuda_var)) {
		char *end;
		unsigned long major = strtoul(legacy, &end, 10), minor = 0;

		if (end == legacy || (*end && *end != '.'))
			return oerr_set(err, 0, "%s: %s=%.64s is no version", v->name, v->requirements_legacy_env, legacy);
		if (*end == '.')
			minor = strtoul(end + 1, NULL, 10);
		strv_push_owned(out, xasprintf("cuda>=%lu.%lu", major, minor));
	}
	return 0;
}

/* FEAT (taken) less the features an unprivileged container may not ask for. */
static char *allowed_features(const struct vendor *v, char *feat)
{
	const struct strv *ok = &v->unprivileged_features;
	struct strv keep = { 0 };
	char *res, *save = NULL;

	if (!feat || !ok->n || strv_contains(ok, "all"))
		return feat;
	if (strcmp(feat, "all") == 0) {
		log_warn("%s: features 'all' asked for; a container without CAP_SYS_ADMIN gets the allowed ones only (unprivileged_features)",
			 v->name);
		for (size_t i = 0; i < ok->n; i++)
			strv_push(&keep, ok->v[i]);
	} else {
		for (char *tok = strtok_r(feat, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (strv_contains(ok, tok))
				strv_push(&keep, tok);
			else
				log_warn("%s: feature '%s' dropped: a container without CAP_SYS_ADMIN may not ask for it (unprivileged_features)",
					 v->name, tok);
		}
	}
	free(feat);
	res = keep.n ? strv_join(&keep, ",") : NULL;
	strv_free(&keep);
	return res;
}

/* MIG's config and monitor caps (mig_config_env, mig_monitor_env), as
 * NVIDIA's toolkit gives them: for "all" only, to a container with
 * CAP_SYS_ADMIN given whole GPUs (never one given MIG devices: the config
 * cap reconfigures the GPU under the other instances' tenants), and only
 * where the tenant policy lets the environment select (ALLOWED). */
static int mig_caps(const struct vendor *v, const struct oci_config *oc, unsigned allowed, const struct activation *a,
		    unsigned *caps, struct oerr *err)
{
	const char *names[2] = { v->mig_config_env, v->mig_monitor_env };

	for (unsigned i = 0; i < 2; i++) {
		const char *val = names[i] ? oci_env(&oc->env, names[i]) : NULL;
		const char *what = i ? "monitor" : "config";

		if (!val || !*val || strcmp(val, "void") == 0 || strcmp(val, "none") == 0)
			continue;
		if (!(allowed & SRC_ENV)) {
			log_warn("%s: %s=%.64s ignored: the vendor takes no selection from the environment here "
				 "(unprivileged_selection, selection)", v->name, names[i], val);
			continue;
		}
		if (!oc->cap_sys_admin)
			return oerr_set(err, 0, "%s: %s=%.64s: MIG's %s cap only for a container with CAP_SYS_ADMIN",
					v->name, names[i], val, what);
		if (strcasecmp(val, "all") != 0)
			return oerr_set(err, 0, "%s: %s=%.64s: only 'all' (the %s cap of the GPUs the container is given)",
					v->name, names[i], val, what);
		if (a->sel.nmig)
			return oerr_set(err, 0, "%s: %s=all with MIG devices selected (%lu/%u/%u%s): MIG's %s cap only "
					"with whole GPUs", v->name, names[i], a->sel.mig[0].gpu, a->sel.mig[0].gi,
					a->sel.mig[0].ci, a->sel.nmig > 1 ? ", ..." : "", what);
		if (a->sel.kind == SEL_NONE) {
			log_warn("%s: %s=all: no GPU given, no %s cap", v->name, names[i], what);
			continue;
		}
		*caps |= 1u << i;
	}
	return 0;
}

/* A request from source S that this container may not use: said, ignored. */
static bool refused(const struct vendor *v, unsigned allowed, unsigned s, const char *what, bool privileged)
{
	if (allowed & s)
		return false;
	if (privileged || !(v->selection & s))
		log_warn("%s: %s ignored: the vendor takes no device selection from '%s' (selection)", v->name,
			 what, source_name(s));
	else
		log_warn("%s: %s ignored: the vendor takes no device selection from '%s' for a container without CAP_SYS_ADMIN (unprivileged_selection)",
			 v->name, what, source_name(s));
	return true;
}

static bool names_vendor(const struct strv *keys, const struct oci_config *oc, const struct strv *state_ann);

/* Is ANN (annotations: key, value, ...) a Kubernetes container's? Its CRI
 * runtime marks each: CRI-O io.kubernetes.cri-o.*, containerd
 * io.kubernetes.cri.* (a tenant can add such a key, never remove one). */
static bool kubernetes_container(const struct strv *ann)
{
	for (size_t i = 0; ann && i + 1 < ann->n; i += 2)
		if (strncmp(ann->v[i], "io.kubernetes.cri-o.", 20) == 0 ||
		    strncmp(ann->v[i], "io.kubernetes.cri.", 18) == 0)
			return true;
	return false;
}

/* May the container's annotation KEY=VAL be its pod's, which the pod's
 * tenant writes? An NRI request carries the pod: equal to the pod's own,
 * it is the pod's (the runtime copied it). The hook and the shim see a
 * Kubernetes container without its pod, and its engine may have copied it:
 * CRI-O copies every pod annotation into each container's, containerd those
 * its pod_annotations names. The reason, or NULL when it is the container's
 * own (kubelet's: a device plugin's answer). */
static const char *pod_may_have_set(const struct oci_config *oc, const struct strv *state_ann, const char *key,
				    const char *val)
{
	const char *p;

	if (oc->nri) {
		p = oci_annotation(&oc->pod_ann, key);
		return p && strcmp(p, val) == 0 ? "the pod's own, which its tenant writes" : NULL;
	}
	return kubernetes_container(&oc->ann) || kubernetes_container(state_ann)
		       ? "a Kubernetes container's annotation, which may be its pod's (CRI-O copies them all)"
		       : NULL;
}

/* Does the container name V at all (names_vendor: one of its variables,
 * its annotation, its device plugin's list)? Only then is V's platform
 * looked at (vendor_here opens the driver root), not for every container
 * that names another vendor. */
static bool names_this_vendor(const struct vendor *v, const struct oci_config *oc, const struct strv *state_ann)
{
	struct strv keys = { 0 };
	bool named;

	strv_push(&keys, v->activation_flag);
	for (size_t k = 0; k < v->activation_aliases.n; k++)
		strv_push(&keys, v->activation_aliases.v[k]);
	if (v->module_env)
		strv_push(&keys, v->module_env);
	strv_push(&keys, v->annotation);
	strv_push(&keys, v->device_list_dir);
	named = names_vendor(&keys, oc, state_ann);
	strv_free(&keys);
	return named;
}

/* Is vendor V's only_with met among the N activations ACT (another of
 * them one of the vendors it names)? */
static bool accompanied(const struct vendor *v, const struct activation *act, size_t n)
{
	if (!v->only_with.n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (act[i].v != v && strv_contains(&v->only_with, act[i].v->name))
			return true;
	return false;
}

/* The N activations ACT less those whose only_with is not met (said, as
 * NVIDIA's toolkit's gated features: nothing without a GPU request), until
 * none is dropped (one may accompany another); how many are kept */
static int only_with_kept(struct activation *act, int n)
{
	for (bool dropped = true; dropped;) {
		dropped = false;
		for (int i = 0; i < n; i++) {
			const struct vendor *v = act[i].v;
			_cleanup_free_ char *names = NULL;

			if (accompanied(v, act, (size_t)n))
				continue;
			names = strv_join(&v->only_with, ", ");
			log_warn("%s: %s ignored: the container asks for none of %s (only_with)", v->name, act[i].source,
				 names);
			activation_free(&act[i], 1);
			memmove(&act[i], &act[i + 1], (size_t)(n - i - 1) * sizeof(*act));
			n--;
			i--;
			dropped = true;
		}
	}
	return n;
}

int activate(const struct config *cfg, const struct oci_config *oc, const struct strv *state_ann,
	     struct activation *act, struct oerr *err)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n; i++) {
		const struct vendor *v = &cfg->vendors[i];
		unsigned allowed = oc->cap_sys_admin ? v->selection : v->unprivileged_selection;
		const char *val = NULL, *ann, *var = NULL, *feat;
		_cleanup_free_ char *mounted = mounted_devices(v, &oc->mounts), *what = NULL;
		struct selection envsel = { 0 };
		bool asked = false;
		unsigned src = 0;

		/* another vendor file serves this platform (WSL2, a Jetson):
		 * this one asks nothing of the container, nor refuses it */
		if ((v->only_where.n || v->not_where.n) && names_this_vendor(v, oc, state_ann) && !vendor_here(v))
			continue;
		/* the device plugin's mounts, then the annotation, then env */
		if (mounted) {
			what = xasprintf("the device list mounted in %s", v->device_list_dir);
			if (!refused(v, allowed, SRC_MOUNTS, what, oc->cap_sys_admin)) {
				val = mounted;
				src = SRC_MOUNTS;
				var = v->device_list_dir;
			}
			free(what);
			what = NULL;
		}
		ann = oci_annotation(&oc->ann, v->annotation);
		if (!ann)
			ann = oci_annotation(state_ann, v->annotation);
		if (!val && ann && *ann) {
			const char *pods = NULL;

			what = xasprintf("annotation %s", v->annotation);
			/* where the tenant's own environment may not select, nor
			 * may what its pod says */
			if ((allowed & SRC_ANNOTATION) && !(allowed & SRC_ENV) &&
			    (pods = pod_may_have_set(oc, state_ann, v->annotation, ann)))
				log_warn("%s: %s ignored: %s; a container without CAP_SYS_ADMIN takes no device "
					 "selection from what its tenant writes (unprivileged_selection): a device plugin's "
					 "list or CDI selects", v->name, what, pods);
			else if (!refused(v, allowed, SRC_ANNOTATION, what, oc->cap_sys_admin)) {
				val = ann;
				src = SRC_ANNOTATION;
				var = v->annotation;
			}
		}
		if (!val) {
			free(what);
			what = NULL;
			if (!(allowed & SRC_ENV)) {
				/* refused before any value is read further: the
				 * first variable set, for the warning */
				for (size_t k = 0; !what && k <= v->activation_aliases.n + !!v->module_env; k++) {
					const char *name = k > v->activation_aliases.n ? v->module_env
							   : k ? v->activation_aliases.v[k - 1] : v->activation_flag;
					const char *e = oci_env(&oc->env, name);
					if (e && *e && strcmp(e, "void") != 0 && strcmp(e, v->device_list_dir) != 0)
						what = xasprintf("%s=%.128s", name, e);
				}
				if (what)
					refused(v, allowed, SRC_ENV, what, oc->cap_sys_admin);
			} else if (env_request(v, &oc->env, &envsel, &asked, &what, err) < 0) {
				activation_free(act, (size_t)n);
				return -1;
			} else if (asked) {
				val = "(env)";  /* (the selection is envsel's) */
				src = SRC_ENV;
				var = what;
			}
		}
		if (!val || !*val || strcmp(val, "void") == 0) {
			selection_free(&envsel);
			continue;
		}
		/* a switch (activation_value): the annotation and the mounted
		 * list say its value too, or nothing */
		if (v->activation_value && src != SRC_ENV && strcmp(val, v->activation_value) != 0) {
			vendor_log_level(v);
			log_info("%s: %s says '%.64s': asks nothing (only %s activates it)", v->name,
				 src == SRC_MOUNTS ? "the device list" : v->annotation, val, v->activation_value);
			continue;
		}
		act[n] = (struct activation){ .v = v, .sel = envsel };
		if (src != SRC_ENV && !v->activation_value && vendor_select(v, val, &act[n].sel, err) < 0) {
			activation_free(act, (size_t)n + 1);
			return -1;
		}
		if (mig_caps(v, oc, oc->cap_sys_admin ? v->selection : v->unprivileged_selection, &act[n],
			     &act[n].mig_caps, err) < 0) {
			activation_free(act, (size_t)n + 1);
			return -1;
		}
		feat = v->feature_env ? oci_env(&oc->env, v->feature_env) : NULL;
		if (feat && *feat)
			act[n].features = filter_features(v, feat, v->feature_env);
		if (!oc->cap_sys_admin)
			act[n].features = allowed_features(v, act[n].features);
		act[n].source = xasprintf("%s %s", source_name(src), var);
		if (requirements(v, &oc->env, &act[n].requires, err) < 0) {
			activation_free(act, (size_t)n + 1);
			return -1;
		}
		n++;
	}
	return only_with_kept(act, n);
}

void activation_free(struct activation *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		selection_free(&a[i].sel);
		free(a[i].features);
		free(a[i].source);
		strv_free(&a[i].requires);
	}
}

/* The idle path, for every container on the host: can anything activate a
 * vendor? Each source needs its key in config.json's text (the activation
 * variable or an alias, the annotation, the device list directory) or
 * among the state's annotations; a text with a \\u escape could spell one
 * otherwise. When nothing can, the hook exits 0 having parsed no JSON and
 * checked no vendor file beyond its activation keys. */
/* TEXT's \uXXXX escapes of ASCII characters and its \/ decoded, everything else as
 * it is, into a copy (*N bytes): a key a config.json spells with escapes
 * reads plainly there. Decoding an escaped backslash's "u0041" too, or a
 * '"', only adds candidate strings: more than the strings, never fewer. */
static char *decode_ascii_escapes(const char *text, size_t len, size_t *n)
{
	char *out = xmalloc(len + 1);
	size_t o = 0, i = 0;

	while (i < len) {
		const char *bs = memchr(text + i, '\\', len - i);
		size_t run = bs ? (size_t)(bs - (text + i)) : len - i;
		unsigned v = 0;
		bool hex;

		memcpy(out + o, text + i, run);   /* up to the next backslash, as it is */
		o += run;
		i += run;
		if (i >= len)
			break;
		hex = i + 5 < len && text[i + 1] == 'u';
		for (size_t k = 2; hex && k < 6; k++) {
			char c = text[i + k];
			v = v * 16 + (unsigned)(c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
						c >= 'A' && c <= 'F' ? c - 'A' + 10 : (hex = false, 0));
		}
		if (hex && v > 0 && v < 0x80) {
			out[o++] = (char)v;
			i += 6;
		} else if (i + 1 < len && text[i + 1] == '/') {
			out[o++] = '/';
			i += 2;
		} else {
			out[o++] = text[i++];
		}
	}
	out[o] = '\0';
	*n = o;
	return out;
}

/* A key and its length, in the order of the hash of its first two bytes */
struct key_at {
	const char *k;
	size_t len;
};

/* The bucket of a string whose first two bytes are A and B (B 0 for a key
 * of one byte), and its bit in a filter of 4096 */
static unsigned key_hash(unsigned char a, unsigned char b)
{
	return (a * 31u + b) & 255;
}

static unsigned key_bit(unsigned char a, unsigned char b)
{
	return (a * 131u + b * 7u) & 4095;
}

/* The top bit of each byte of W (in memory order: the lowest first) that
 * is C, and no other (exact, unlike memchr2's first-only test) */
static uint64_t byte_is(uint64_t w, char c)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
	uint64_t x = w ^ ((uint64_t)(unsigned char)c * 0x0101010101010101ull);

	return ~(((x & low7) + low7) | x | low7);
}

/* Can a key of KEYS (their lengths LENS, or NULL) start a string of TEXT
 * (LEN bytes), or is it one of the state's annotations? -1 when ESCAPES is
 * set and TEXT holds an escape decode_ascii_escapes reads (\uXXXX, \/):
 * the decoded text is the one to look in. */
static int activation_possible_plain(const struct strv *keys, const size_t *lens, const struct strv *state_ann,
				     const char *text, size_t len, bool escapes)
{
	/* the keys of bucket H: by[at[H]] .. by[at[H + 1] - 1]; bits: the
	 * filter, each key's key_bit set (32 and 64 bits: the idle path's
	 * stack stays in one page) */
	uint32_t at[257] = { 0 };
	uint64_t bits[4096 / 64] = { 0 };
	_cleanup_free_ struct key_at *by = NULL;
	bool short_keys = false;
	const char *end = text + len;
	const char bs = escapes ? '\\' : '"';

	for (size_t i = 0; i < keys->n; i++)
		if (oci_annotation(state_ann, keys->v[i]))
			return true;
	if (!keys->n || keys->n > UINT32_MAX)
		return keys->n > 0;
	for (size_t i = 0; i < keys->n; i++) {
		const unsigned char *k = (const unsigned char *)keys->v[i];
		unsigned b = key_bit(k[0], k[0] ? k[1] : 0);

		at[key_hash(k[0], k[0] ? k[1] : 0)]++;
		bits[b / 64] |= 1ull << (b % 64);
		short_keys |= !k[0] || !k[1];
	}
	for (size_t h = 1; h < 257; h++)  /* at[H]: where bucket H ends */
		at[h] += at[h - 1];
	by = xmalloc(keys->n * sizeof(*by));
	for (size_t i = keys->n; i-- > 0;) {  /* at[H]: where it starts, after */
		const unsigned char *k = (const unsigned char *)keys->v[i];

		by[--at[key_hash(k[0], k[0] ? k[1] : 0)]] =
			(struct key_at){ keys->v[i], lens ? lens[i] : strlen(keys->v[i]) };
	}
	/* Every such key starts a JSON string: "NAME=value" in process.env, an
	 * annotation's name, a mount's destination. Every '"' is tried as a
	 * string's start, escaped or not: more than the strings, never fewer.
	 * The quotes (and backslashes) are found eight bytes at a time, the
	 * last few one by one. */
	for (const char *p = text; p < end; p += 8) {
		uint64_t m = 0;

		if (end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			m = byte_is(w, '"') | byte_is(w, bs);
		} else {
			for (size_t i = 0; i < (size_t)(end - p); i++)
				m |= (uint64_t)(p[i] == '"' || p[i] == bs) << (i * 8 + 7);
		}
		for (; m; m &= m - 1) {
			const char *q = p + __builtin_ctzll(m) / 8;
			size_t left = (size_t)(end - q - 1);
			unsigned b;

			if (!left)
				break;
			if (*q != '"') {  /* a backslash */
				if (q[1] == 'u' || q[1] == '/')
					return -1;
				continue;
			}
			b = key_bit((unsigned char)q[1], left > 1 ? (unsigned char)q[2] : 0);
			if (bits[b / 64] & (1ull << (b % 64))) {
				unsigned h = key_hash((unsigned char)q[1], left > 1 ? (unsigned char)q[2] : 0);

				for (size_t j = at[h]; j < at[h + 1]; j++)
					if (by[j].len <= left && memcmp(q + 1, by[j].k, by[j].len) == 0)
						return true;
			}
			/* a key of one byte (an env name "X"), whatever follows it */
			for (size_t j = 0; short_keys && j < keys->n; j++)
				if (by[j].len <= 1 && (!by[j].len || q[1] == by[j].k[0]))
					return true;
		}
	}
	return false;
}

bool activation_possible(const struct strv *keys, const size_t *lens, const struct strv *state_ann, const char *text,
			 size_t len)
{
	size_t n;
	_cleanup_free_ char *plain = NULL;
	int r = activation_possible_plain(keys, lens, state_ann, text, len, true);

	if (r >= 0)
		return r;
	/* a key spelled with escapes: looked for in the decoded text (no JSON
	 * parse on the idle path, whatever the nesting of config.json) */
	plain = decode_ascii_escapes(text, len, &n);
	return activation_possible_plain(keys, lens, state_ann, plain, n, false) != 0;
}

/* Does the container name a vendor by one of KEYS: an env variable, an
 * annotation (config.json's or the state's), a mount under a directory? */
static bool names_vendor(const struct strv *keys, const struct oci_config *oc, const struct strv *state_ann)
{
	for (size_t i = 0; i < keys->n; i++) {
		const char *k = keys->v[i];
		size_t kl = strlen(k);

		if (oci_env(&oc->env, k) || oci_annotation(&oc->ann, k) || oci_annotation(state_ann, k))
			return true;
		for (size_t m = 0; m < oc->mounts.n; m++)
			if (strncmp(oc->mounts.v[m], k, kl) == 0 && (oc->mounts.v[m][kl] == '/' || !oc->mounts.v[m][kl]))
				return true;
	}
	return false;
}

int activation_decide(const char *dir, const struct oci_config *oc, const struct strv *state_ann,
		      struct config *cfg, struct activation **act, struct oerr *err)
{
	/* A vendor file that cannot be loaded fails the containers that name
	 * it; the others start, and the log says what is wrong. */
	config_load_each(cfg, dir);
	*act = xcalloc(cfg->n ? cfg->n : 1, sizeof(**act));
	for (size_t i = 0; i < cfg->nbroken; i++) {
		if (names_vendor(&cfg->broken[i].keys, oc, state_ann)) {
			*err = cfg->broken[i].err;
			return -1;
		}
		log_warn("%s (ignored: the container names no vendor of it)", cfg->broken[i].err.msg);
	}
	return activate(cfg, oc, state_ann, *act, err);
}
