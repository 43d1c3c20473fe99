/* Unit tests: which vendors activate() gives a container, for switches
 * (activation_value: NVIDIA's NVIDIA_GDS=enabled) and vendors given only
 * beside another (only_with: NVIDIA's gated features only with GPUs), from
 * its environment, annotations and a device plugin's mounts. The vendors
 * are made here: no file, no driver root is read. */
#include "pipeline/activate.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

/* A vendor NAME answering FLAG; VALUE its activation_value (NULL: the
 * value selects devices); WITH its only_with, NULL or names separated by
 * spaces */
static void make_vendor(struct vendor *v, const char *name, const char *flag, const char *value, const char *with)
{
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->activation_flag = xstrdup(flag);
	v->activation_value = value ? xstrdup(value) : NULL;
	v->annotation = xconcat("ocidec.io/", name);
	v->device_list_dir = xconcat("/var/run/ocidec-devices/", name);
	v->cdi_kind = xconcat("ocidec.io/", name);
	v->driver_root = xstrdup("/");
	v->env_all = true;
	v->selection = v->unprivileged_selection = SRC_ENV | SRC_ANNOTATION | SRC_MOUNTS;
	if (with) {
		char *copy = xstrdup(with), *save = NULL;

		for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
			strv_push(&v->only_with, t);
		free(copy);
	}
}

static void free_vendor(struct vendor *v)
{
	free(v->name);
	free(v->activation_flag);
	free(v->activation_value);
	free(v->annotation);
	free(v->device_list_dir);
	free(v->cdi_kind);
	free(v->driver_root);
	strv_free(&v->only_with);
}

/* The names of the vendors activate() gives the container OC (freed), in
 * the config's order, separated by spaces; "error: ..." when it fails */
static char *names_of(const struct config *cfg, struct oci_config *oc)
{
	struct strv names = { 0 }, state = { 0 };
	struct activation *act = xcalloc(cfg->n, sizeof(*act));
	struct oerr err;
	char *res;
	int n = activate(cfg, oc, &state, act, &err);

	if (n < 0) {
		res = xconcat("error: ", err.msg);
	} else {
		for (int i = 0; i < n; i++)
			strv_push(&names, act[i].v->name);
		res = strv_join(&names, " ");
		activation_free(act, (size_t)n);
	}
	free(act);
	strv_free(&names);
	oci_config_free(oc);
	return res;
}

/* The names of the vendors activate() gives for ENV (entries separated by
 * spaces), ANN ("key=value") and MOUNT (a destination), in the config's
 * order, separated by spaces; "error: ..." when it fails */
static char *active(const struct config *cfg, const char *env, const char *ann, const char *mount)
{
	struct oci_config oc = { .cap_sys_admin = true };
	char *copy = xstrdup(env), *save = NULL;

	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		strv_push(&oc.env, t);
	free(copy);
	if (ann) {
		const char *eq = strchr(ann, '=');

		strv_push_owned(&oc.ann, xstrndup(ann, (size_t)(eq - ann)));
		strv_push(&oc.ann, eq + 1);
	}
	if (mount)
		strv_push(&oc.mounts, mount);
	return names_of(cfg, &oc);
}

static void test_gated(void)
{
	/* as the shipped files: nvidia-gds.ini sorts before nvidia.ini, so
	 * a vendor is dropped after the one it goes with was judged */
	struct vendor v[4];
	struct config cfg = { .vendors = v, .n = 4 };
	static const struct { const char *env, *ann, *mount, *want; } t[] = {
		/* a GPU request and the switch: both */
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=enabled", NULL, NULL, "nvidia-gds nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=enabled NVIDIA_GDRCOPY=enabled", NULL, NULL,
		  "nvidia-gdrcopy nvidia-gds nvidia" },
		/* none: the driver, no GPU, still a request (NVIDIA's "none" lists [""]) */
		{ "NVIDIA_VISIBLE_DEVICES=none NVIDIA_GDS=enabled", NULL, NULL, "nvidia-gds nvidia" },
		/* no GPU request: nothing of it (void, empty, unset) */
		{ "NVIDIA_GDS=enabled", NULL, NULL, "" },
		{ "NVIDIA_VISIBLE_DEVICES=void NVIDIA_GDS=enabled", NULL, NULL, "" },
		{ "NVIDIA_VISIBLE_DEVICES= NVIDIA_GDS=enabled", NULL, NULL, "" },
		/* only "enabled", exactly, as NVIDIA's toolkit compares */
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=true", NULL, NULL, "nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=Enabled", NULL, NULL, "nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=all", NULL, NULL, "nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=0", NULL, NULL, "nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=void", NULL, NULL, "nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=", NULL, NULL, "nvidia" },
		/* an appended entry that says otherwise turns it off (a CDI spec's void) */
		{ "NVIDIA_VISIBLE_DEVICES=all NVIDIA_GDS=enabled NVIDIA_GDS=void", NULL, NULL, "nvidia" },
		/* the GPU request from the annotation or the device plugin's list */
		{ "NVIDIA_GDS=enabled", "ocidec.io/nvidia=0", NULL, "nvidia-gds nvidia" },
		{ "NVIDIA_GDS=enabled", NULL, "/var/run/ocidec-devices/nvidia/0", "nvidia-gds nvidia" },
		/* the switch's own annotation: its value, or nothing */
		{ "NVIDIA_VISIBLE_DEVICES=all", "ocidec.io/nvidia-gds=enabled", NULL, "nvidia-gds nvidia" },
		{ "NVIDIA_VISIBLE_DEVICES=all", "ocidec.io/nvidia-gds=all", NULL, "nvidia" },
		/* a vendor given beside one given beside another: the chain holds or falls whole */
		{ "NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=enabled X_AFTER_GDS=1", NULL, NULL, "nvidia-gds nvidia x" },
		{ "NVIDIA_VISIBLE_DEVICES=0 X_AFTER_GDS=1", NULL, NULL, "nvidia" },
		{ "NVIDIA_GDS=enabled X_AFTER_GDS=1", NULL, NULL, "" },
		/* a container that asks for nothing */
		{ "PATH=/bin", NULL, NULL, "" },
	};

	make_vendor(&v[0], "nvidia-gdrcopy", "NVIDIA_GDRCOPY", "enabled", "nvidia nvidia-wsl");
	make_vendor(&v[1], "nvidia-gds", "NVIDIA_GDS", "enabled", "nvidia-wsl nvidia");
	make_vendor(&v[2], "nvidia", "NVIDIA_VISIBLE_DEVICES", NULL, NULL);
	make_vendor(&v[3], "x", "X_AFTER_GDS", NULL, "nvidia-gds");
	for (size_t i = 0; i < N_CASES(t); i++) {
		char *got = active(&cfg, t[i].env, t[i].ann, t[i].mount);

		CHECK(strcmp(got, t[i].want) == 0, "%s%s%s%s%s: [%s]", t[i].env, t[i].ann ? ", annotation " : "",
		      t[i].ann ? t[i].ann : "", t[i].mount ? ", mount " : "", t[i].mount ? t[i].mount : "", got);
		free(got);
	}
	for (size_t i = 0; i < cfg.n; i++)
		free_vendor(&v[i]);
}

/* The vendors activate() gives an unprivileged container under the
 * Kubernetes tenant policy (install --tenant-policy kubernetes:
 * unprivileged_selection = mounts annotation) for its annotations ANN
 * ("k=v k=v"), its pod's POD (NULL: the hook or the shim, which see no pod;
 * else an NRI request's) */
static char *active_pod(const struct config *cfg, const char *ann, const char *pod)
{
	struct oci_config oc = { .nri = pod != NULL };

	for (int k = 0; k < 2; k++) {
		char *copy = xstrdup(k ? (pod ? pod : "") : ann), *save = NULL;

		for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(t, '=');

			strv_push_owned(k ? &oc.pod_ann : &oc.ann, xstrndup(t, (size_t)(eq - t)));
			strv_push(k ? &oc.pod_ann : &oc.ann, eq + 1);
		}
		free(copy);
	}
	return names_of(cfg, &oc);
}

static void test_pod_annotations(void)
{
	struct vendor v[2];
	struct config cfg = { .vendors = v, .n = 2 };
	static const struct { const char *ann, *pod, *want; } t[] = {
		/* no Kubernetes container (podman --annotation, runc): the annotation selects */
		{ "ocidec.io/nvidia=0", NULL, "nvidia" },
		{ "ocidec.io/nvidia-mofed=enabled ocidec.io/nvidia=0", NULL, "nvidia-mofed nvidia" },
		/* the hook or the shim under CRI-O or containerd: it may be the pod's */
		{ "io.kubernetes.cri-o.SandboxID=p1 ocidec.io/nvidia=all", NULL, "" },
		{ "io.kubernetes.cri.container-type=container ocidec.io/nvidia=all", NULL, "" },
		{ "io.kubernetes.cri-o.SandboxID=p1 ocidec.io/nvidia-mofed=enabled", NULL, "" },
		/* NRI: the pod's own (equal), not; the container's own (kubelet's,
		 * a device plugin's), yes */
		{ "ocidec.io/nvidia=all", "ocidec.io/nvidia=all", "" },
		{ "ocidec.io/nvidia-mofed=enabled ocidec.io/nvidia=0", "ocidec.io/nvidia-mofed=enabled", "nvidia" },
		{ "ocidec.io/nvidia=0", "", "nvidia" },
		{ "ocidec.io/nvidia=0", "ocidec.io/nvidia=all", "nvidia" },
		{ "ocidec.io/nvidia=0", "other=0", "nvidia" },
	};

	make_vendor(&v[0], "nvidia-mofed", "NVIDIA_MOFED", "enabled", "nvidia");
	make_vendor(&v[1], "nvidia", "NVIDIA_VISIBLE_DEVICES", NULL, NULL);
	for (size_t i = 0; i < cfg.n; i++)
		v[i].unprivileged_selection = SRC_ANNOTATION | SRC_MOUNTS;
	for (size_t i = 0; i < N_CASES(t); i++) {
		char *got = active_pod(&cfg, t[i].ann, t[i].pod);

		CHECK(strcmp(got, t[i].want) == 0, "annotations %s, %s%s: [%s]", t[i].ann, t[i].pod ? "NRI, pod's " : "hook",
		      t[i].pod ? t[i].pod : "", got);
		free(got);
	}
	/* a privileged container (its environment selects): as before */
	for (size_t i = 0; i < cfg.n; i++)
		v[i].unprivileged_selection = v[i].selection;
	{
		char *got = active_pod(&cfg, "io.kubernetes.cri-o.SandboxID=p1 ocidec.io/nvidia=all", NULL);

		CHECK(strcmp(got, "nvidia") == 0, "where the environment selects, so does the pod's annotation: [%s]", got);
		free(got);
	}
	for (size_t i = 0; i < cfg.n; i++)
		free_vendor(&v[i]);
}

int main(void)
{
	test_gated();
	test_pod_annotations();
	return done();
}
