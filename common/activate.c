/* activate.c: see activate.h. */
#include "common/activate.h"

#include "common/log.h"
#include "common/rootpath.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The minor of the device whose information file says "GPU UUID: UUID"
 * (NVIDIA's /proc/driver/nvidia/gpus/ * /information), or -1. */
static int uuid_minor(const struct vendor *v, const char *uuid)
{
	glob_t g;
	int minor = -1;

	if (!v->device_uuids || glob(v->device_uuids, 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc && minor < 0; i++) {
		_cleanup_close_ int fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		_cleanup_free_ char *buf = NULL;
		struct oerr err;
		size_t len;
		int m = -1;
		bool match = false;

		if (fd < 0 || read_fd_all(fd, 64 * 1024, &buf, &len, &err) < 0)
			continue;
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			char *val = strchr(line, ':');
			if (!val)
				continue;
			*val++ = '\0';
			val += strspn(val, " \t");
			if (strcmp(line, "Device Minor") == 0)
				m = atoi(val);
			else if (strcmp(line, "GPU UUID") == 0)
				match = strcasecmp(val, uuid) == 0;
		}
		if (match)
			minor = m;
	}
	globfree(&g);
	return minor;
}

/* "0,GPU-xxxx,2" -> "0,1,2": UUIDs mapped to indices. */
static int map_devices(const struct vendor *v, const char *value, char **out, struct oerr *err)
{
	_cleanup_free_ char *copy = xstrdup(value);
	size_t cap = strlen(value) * 4 + 16, len = 0;
	char *res = xmalloc(cap), *save = NULL;

	res[0] = '\0';
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		long idx;
		char *end;

		errno = 0;
		idx = strtol(tok, &end, 10);
		if (*end || errno || idx < 0 || idx > 4096) {
			idx = uuid_minor(v, tok);
			if (idx < 0) {
				free(res);
				return oerr_set(err, 0, "%s: no device '%s'", v->name, tok);
			}
		}
		len += (size_t)snprintf(res + len, cap - len, "%s%ld", len ? "," : "", idx);
	}
	if (!len) {
		free(res);
		res = xstrdup("none");
	}
	*out = res;
	return 0;
}

/* Keep the feature names the vendor knows; "all" stays "all". */
static char *filter_features(const struct vendor *v, const char *value, const char *var)
{
	_cleanup_free_ char *copy = xstrdup(value);
	size_t cap = strlen(value) + 2, len = 0;
	char *res = xmalloc(cap), *save = NULL;

	res[0] = '\0';
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (strcmp(tok, "all") == 0) {
			free(res);
			return xstrdup("all");
		}
		if (!vendor_feature(v, tok)) {
			log_warn("%s: %s names unknown feature '%s'; ignored", v->name, var, tok);
			continue;
		}
		len += (size_t)snprintf(res + len, cap - len, "%s%s", len ? "," : "", tok);
	}
	if (!len) {
		free(res);
		return NULL;  /* nothing usable: the defaults */
	}
	return res;
}

int activate(const struct config *cfg, const struct oci_config *oc, const struct strv *state_ann,
	     struct activation *act, struct oerr *err)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n; i++) {
		const struct vendor *v = &cfg->vendors[i];
		const char *val, *src = NULL, *var = NULL, *feat;
		bool from_env = false;

		val = oci_annotation(&oc->ann, v->annotation);
		if (!val)
			val = oci_annotation(state_ann, v->annotation);
		if (val) {
			src = "annotation";
			var = v->annotation;
		} else {
			val = oci_env(&oc->env, v->activation_flag);
			var = v->activation_flag;
			for (size_t k = 0; !val && k < v->activation_aliases.n; k++)
				val = oci_env(&oc->env, var = v->activation_aliases.v[k]);
			src = "env";
			from_env = true;
		}
		if (!val || !*val || strcmp(val, "void") == 0)
			continue;
		if (from_env && v->env_needs_cap_sys_admin && !oc->cap_sys_admin) {
			log_warn("%s: %s=%s ignored: the container has no CAP_SYS_ADMIN, and env requests need it (use the annotation %s)",
				 v->name, var, val, v->annotation);
			continue;
		}
		act[n] = (struct activation){ .v = v };
		if (strcmp(val, "all") == 0 || strcmp(val, "none") == 0)
			act[n].devices = xstrdup(val);
		else if (map_devices(v, val, &act[n].devices, err) < 0) {
			activation_free(act, (size_t)n);
			return -1;
		}
		feat = v->feature_env ? oci_env(&oc->env, v->feature_env) : NULL;
		if (feat && *feat)
			act[n].features = filter_features(v, feat, v->feature_env);
		act[n].source = xasprintf("%s %s", src, var);
		n++;
	}
	return n;
}

void activation_free(struct activation *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].devices);
		free(a[i].features);
		free(a[i].source);
	}
}
