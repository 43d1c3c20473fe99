/* draslice.c: the node's devices as ResourceSlices, published
 * (draslice.h) */
#include "engines/draslice.h"
#include "engines/draclaim.h"
#include "engines/kubeapi.h"
#include "base/cleanup.h"
#include "base/log.h"
#include "base/out.h"
#include "devices/devices.h"
#include "formats/json.h"
#include "pipeline/plan.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OBJ's member NAME as a string (NULL: none, or not a string) */
static const char *jstr(const cJSON *obj, const char *name)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static cJSON *jadd(cJSON *obj, const char *name, cJSON *item)
{
	if (!item)
		oom();
	if (name)
		cJSON_AddItemToObject(obj, name, item);
	else
		cJSON_AddItemToArray(obj, item);
	return item;
}

/* An attribute NAME of type TYPE ("int", "string", "version") */
static void attr(cJSON *attrs, const char *name, const char *type, cJSON *value)
{
	jadd(jadd(attrs, name, cJSON_CreateObject()), type, value);
}

/* A string attribute where VALUE is one the API takes (1 to 64 printable
 * ASCII characters) */
static void attr_string(cJSON *attrs, const char *name, const char *value)
{
	size_t n = value ? strlen(value) : 0;

	if (n == 0 || n > 64)
		return;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)value[i] < 0x20 || (unsigned char)value[i] >= 0x7f)
			return;
	attr(attrs, name, "string", cJSON_CreateString(value));
}

static void model_line(const char *key, const char *value, void *arg)
{
	char **model = arg;

	if (!*model && strcmp(key, "Model") == 0)
		*model = xstrndup(value, strcspn(value, "\n"));
}

/* The PCIe root complex of the PCI device at ADDR ("pci0000:3a"), as the
 * host's sysfs links it; NULL where it does not */
static char *pcie_root(const char *addr)
{
	_cleanup_free_ char *link = xconcat("/sys/bus/pci/devices/", addr);
	char real[PATH_MAX];
	const char *p;

	if (!realpath(link, real) || strncmp(real, "/sys/devices/pci", 16) != 0)
		return NULL;
	p = real + strlen("/sys/devices/");
	return xstrndup(p, strcspn(p, "/"));
}

cJSON *dra_slice_devices(const struct vendor *v, size_t *n)
{
	_cleanup_close_ int rootfd = open(v->driver_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_devices_ struct devices ds = { 0 };
	_cleanup_free_ char *driver = NULL, *cuda = NULL;
	_cleanup_free_ unsigned long *idx = NULL;
	size_t nidx;
	cJSON *devices = cJSON_CreateArray();

	if (!devices)
		oom();
	*n = 0;
	plan_driver_versions(v, &driver, &cuda);
	if (driver && !dra_semver(driver)) {
		log_debug("%s: driver version %s is no semantic version: no driverVersion attribute", v->name, driver);
		free(driver);
		driver = NULL;
	}
	idx = vendor_node_indices(v, &nidx);
	if (rootfd >= 0)
		vendor_devices(v, rootfd, NULL, false, &ds);
	for (size_t i = 0; i < nidx; i++) {
		const struct device *d = NULL;
		_cleanup_free_ char *name = dra_device_name(v, idx[i]), *model = NULL, *root = NULL;
		cJSON *dev, *attrs;

		if (*n == DRA_SLICE_MAX_DEVICES) {
			log_warn("%s: more than %d devices: the slice lists the first %d", v->name, DRA_SLICE_MAX_DEVICES,
				 DRA_SLICE_MAX_DEVICES);
			break;
		}
		for (size_t k = 0; k < ds.n && !d; k++)
			if (ds.v[k].index == (long)idx[i])
				d = &ds.v[k];
		dev = jadd(devices, NULL, cJSON_CreateObject());
		jadd(dev, "name", cJSON_CreateString(name));
		attrs = jadd(dev, "attributes", cJSON_CreateObject());
		attr(attrs, "index", "int", cJSON_CreateNumber((double)idx[i]));
		if (d && d->uuid)
			attr_string(attrs, "uuid", d->uuid);
		if (d && d->dir && d->bus >= 0) {
			const char *addr = strrchr(d->dir, '/') ? strrchr(d->dir, '/') + 1 : d->dir;

			attr_string(attrs, "pciBusID", addr);
			if ((root = pcie_root(addr)))
				attr_string(attrs, "resource.kubernetes.io/pcieRoot", root);
		}
		if (d && d->dir && vendor_device_kind(v) == DEVICES_INFO) {
			_cleanup_free_ char *info = xconcat(d->dir, "/information");

			info_file_each(info, model_line, &model);
			attr_string(attrs, "productName", model);
		}
		if (driver)
			attr(attrs, "driverVersion", "version", cJSON_CreateString(driver));
		(*n)++;
	}
	return devices;
}

cJSON *dra_slice_new(const char *driver, const char *node, const char *node_uid, long long generation,
		     cJSON *devices, const char *name, const char *resource_version)
{
	cJSON *s = cJSON_CreateObject(), *meta, *owner, *spec, *pool;

	if (!s)
		oom();
	jadd(s, "apiVersion", cJSON_CreateString("resource.k8s.io/v1"));
	jadd(s, "kind", cJSON_CreateString("ResourceSlice"));
	meta = jadd(s, "metadata", cJSON_CreateObject());
	if (name) {
		jadd(meta, "name", cJSON_CreateString(name));
	} else {
		_cleanup_free_ char *gen = xasprintf("%.200s-%.*s-", node, (int)strcspn(driver, "."), driver);

		jadd(meta, "generateName", cJSON_CreateString(gen));
	}
	if (resource_version)
		jadd(meta, "resourceVersion", cJSON_CreateString(resource_version));
	owner = jadd(jadd(meta, "ownerReferences", cJSON_CreateArray()), NULL, cJSON_CreateObject());
	jadd(owner, "apiVersion", cJSON_CreateString("v1"));
	jadd(owner, "kind", cJSON_CreateString("Node"));
	jadd(owner, "name", cJSON_CreateString(node));
	jadd(owner, "uid", cJSON_CreateString(node_uid));
	spec = jadd(s, "spec", cJSON_CreateObject());
	jadd(spec, "driver", cJSON_CreateString(driver));
	jadd(spec, "nodeName", cJSON_CreateString(node));
	pool = jadd(spec, "pool", cJSON_CreateObject());
	jadd(pool, "name", cJSON_CreateString(node));
	jadd(pool, "generation", cJSON_CreateNumber((double)generation));
	jadd(pool, "resourceSliceCount", cJSON_CreateNumber(1));
	jadd(spec, "devices", devices);
	return s;
}

static bool ours(const char *driver)
{
	size_t n = strlen(driver), d = strlen("." DRA_DOMAIN);

	return n > d && strcmp(driver + n - d, "." DRA_DOMAIN) == 0;
}

int dra_slices_parse(const char *text, size_t len, const char *node, cJSON **doc, struct dra_slice_seen **seen,
		     size_t *n, struct oerr *err)
{
	const cJSON *items, *it;

	*seen = NULL;
	*n = 0;
	*doc = json_parse_exact(text, len, NULL);
	items = cJSON_GetObjectItemCaseSensitive(*doc, "items");
	if (!cJSON_IsObject(*doc) || !(cJSON_IsArray(items) || cJSON_IsNull(items)))
		return oerr_usage(err, "the API server's list of resource slices is no JSON object with items");
	cJSON_ArrayForEach(it, items) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *spec = cJSON_GetObjectItemCaseSensitive(it, "spec");
		const cJSON *gen = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "pool"),
								     "generation");
		const char *driver = jstr(spec, "driver"), *on = jstr(spec, "nodeName");
		struct dra_slice_seen *s;

		if (!driver || !on || strcmp(on, node) != 0 || !ours(driver))
			continue;
		if (!jstr(meta, "name") || !jstr(meta, "resourceVersion") || !cJSON_IsNumber(gen) ||
		    !(gen->valuedouble >= 0 && gen->valuedouble < 9e15)) {
			free(*seen);
			*seen = NULL;
			*n = 0;
			return oerr_usage(err, "the API server lists a resource slice of %s without its name, "
					  "resourceVersion or pool generation", driver);
		}
		*seen = xreallocarray(*seen, *n + 1, sizeof(**seen));
		s = &(*seen)[(*n)++];
		s->name = jstr(meta, "name");
		s->driver = driver;
		s->resource_version = jstr(meta, "resourceVersion");
		s->generation = (long long)gen->valuedouble;
		s->slice = it;
	}
	return 0;
}

/* Does the slice the server has (SEEN) say what WANT does: the same
 * driver, node, pool, owner and devices (the generation aside)? */
static bool same_slice(const cJSON *seen, const cJSON *want)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(seen, "spec");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(want, "spec");
	static const char *const fields[] = { "driver", "nodeName", "devices" };
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(a, "pool"), *pb = cJSON_GetObjectItemCaseSensitive(b, "pool");

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a, fields[i]),
				   cJSON_GetObjectItemCaseSensitive(b, fields[i]), true))
			return false;
	if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(pa, "name"), cJSON_GetObjectItemCaseSensitive(pb, "name"),
			   true) ||
	    !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(pa, "resourceSliceCount"),
			   cJSON_GetObjectItemCaseSensitive(pb, "resourceSliceCount"), true))
		return false;
	return cJSON_Compare(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(seen, "metadata"),
							     "ownerReferences"),
			     cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(want, "metadata"),
							     "ownerReferences"),
			     true);
}

/* The Node NODE's uid, from the API server */
static char *node_uid(struct kube *k, const char *node, struct oerr *err)
{
	_cleanup_free_ char *path = xasprintf("/api/v1/nodes/%s", node);
	_cleanup_json_ cJSON *n = NULL;
	const char *uid;

	if (kube_json(k, "GET", path, NULL, &n, NULL, err) < 0)
		return oerr_prefix(err, "node %s", node), NULL;
	uid = jstr(cJSON_GetObjectItemCaseSensitive(n, "metadata"), "uid");
	if (!uid || !uid[0] || strlen(uid) > 128) {
		oerr_usage(err, "node %s: the API server's Node has no metadata.uid", node);
		return NULL;
	}
	return xstrdup(uid);
}

static int delete_slice(struct kube *k, const struct dra_slice_seen *s, const char *why, struct oerr *err)
{
	_cleanup_free_ char *path = xasprintf("/apis/resource.k8s.io/v1/resourceslices/%s", s->name);
	int code;

	if (kube_json(k, "DELETE", path, NULL, NULL, &code, err) < 0 && code != 404)
		return oerr_prefix(err, "%s: slice %s", s->driver, s->name);
	out("%s: slice %s deleted (%s)\n", s->driver, s->name, why);
	return 0;
}

/* Vendor V's slice (DRIVER) made what it has now, given the slices SEEN
 * (N): created, updated or left alone; a second slice of it deleted */
static int publish_vendor(struct kube *k, const struct vendor *v, const char *driver, const char *node,
			  const char *uid, const struct dra_slice_seen *seen, size_t n, struct oerr *err)
{
	size_t ndev, first = n;
	cJSON *devices = dra_slice_devices(v, &ndev);
	_cleanup_json_ cJSON *want = NULL;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(seen[i].driver, driver) != 0)
			continue;
		if (first == n && ndev)
			first = i;
		else if (delete_slice(k, &seen[i], ndev ? "a second slice of the driver" : "no device here", err) < 0)
			return cJSON_Delete(devices), -1;
	}
	if (!ndev) {
		cJSON_Delete(devices);
		return 0;
	}
	if (first == n) {
		want = dra_slice_new(driver, node, uid, 1, devices, NULL, NULL);
		_cleanup_json_ cJSON *made = NULL;
		if (kube_json(k, "POST", "/apis/resource.k8s.io/v1/resourceslices", want, &made, NULL, err) < 0)
			return oerr_prefix(err, "%s: creating its slice", driver);
		out("%s: slice %s created (%zu device%s, generation 1)\n", driver,
		    jstr(cJSON_GetObjectItemCaseSensitive(made, "metadata"), "name") ?: "?", ndev, ndev == 1 ? "" : "s");
		return 0;
	}
	want = dra_slice_new(driver, node, uid, seen[first].generation, devices, seen[first].name,
			     seen[first].resource_version);
	if (same_slice(seen[first].slice, want))
		return 0;
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
								      cJSON_GetObjectItemCaseSensitive(want, "spec"), "pool"),
							      "generation"),
			     (double)(seen[first].generation + 1));
	_cleanup_free_ char *path = xasprintf("/apis/resource.k8s.io/v1/resourceslices/%s", seen[first].name);
	if (kube_json(k, "PUT", path, want, NULL, NULL, err) < 0)
		return oerr_prefix(err, "%s: updating slice %s", driver, seen[first].name);
	out("%s: slice %s updated (%zu device%s, generation %lld)\n", driver, seen[first].name, ndev,
	    ndev == 1 ? "" : "s", seen[first].generation + 1);
	return 0;
}

int dra_publish(struct kube *k, const struct config *cfg, const char *node, const struct strv *only,
		struct oerr *err)
{
	_cleanup_free_ char *uid = NULL, *path = NULL, *body = NULL;
	_cleanup_free_ struct dra_slice_seen *seen = NULL;
	_cleanup_json_ cJSON *doc = NULL;
	struct strv drivers = { 0 };
	size_t n, len;
	int status, r = -1;

	if (!(uid = node_uid(k, node, err)))
		return -1;
	path = xasprintf("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%%3D%s", node);
	if (kube_request(k, "GET", path, NULL, &status, &body, &len, err) < 0)
		return oerr_prefix(err, "listing the node's resource slices");
	if (status != 200) {
		_cleanup_free_ char *why = kube_status_text(status, body, len);

		return oerr_usage(err, "listing the node's resource slices: the API server answers %s", why);
	}
	if (dra_slices_parse(body, len, node, &doc, &seen, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->n; i++) {
		const struct vendor *v = &cfg->vendors[i];
		char *driver = dra_driver_name(v);

		if (!driver) {
			log_warn("%s: its name makes no DRA driver name (a DNS label): no slice", v->name);
			continue;
		}
		if (only && !strv_contains(only, driver)) {
			free(driver);
			continue;
		}
		strv_push_owned(&drivers, driver);
		if (publish_vendor(k, v, driver, node, uid, seen, n, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!strv_contains(&drivers, seen[i].driver) && delete_slice(k, &seen[i], "no such vendor here", err) < 0)
			goto out;
	r = 0;
out:
	strv_free(&drivers);
	return r;
}

cJSON *dra_device_classes(const struct config *cfg)
{
	cJSON *list = cJSON_CreateObject(), *items;

	if (!list || !cJSON_AddStringToObject(list, "apiVersion", "v1") || !cJSON_AddStringToObject(list, "kind", "List") ||
	    !(items = cJSON_AddArrayToObject(list, "items")))
		oom();
	for (size_t i = 0; i < cfg->n; i++) {
		_cleanup_free_ char *driver = dra_driver_name(&cfg->vendors[i]);
		_cleanup_free_ char *cel = driver ? xasprintf("device.driver == \"%s\"", driver) : NULL;
		cJSON *c, *m, *sel, *one;

		if (!driver)
			continue;
		if (!(c = cJSON_CreateObject()) || !cJSON_AddItemToArray(items, c) ||
		    !cJSON_AddStringToObject(c, "apiVersion", "resource.k8s.io/v1") ||
		    !cJSON_AddStringToObject(c, "kind", "DeviceClass") || !(m = cJSON_AddObjectToObject(c, "metadata")) ||
		    !cJSON_AddStringToObject(m, "name", driver) ||
		    !(sel = cJSON_AddArrayToObject(cJSON_AddObjectToObject(c, "spec"), "selectors")) ||
		    !(one = cJSON_CreateObject()) || !cJSON_AddItemToArray(sel, one) ||
		    !cJSON_AddStringToObject(cJSON_AddObjectToObject(one, "cel"), "expression", cel))
			oom();
	}
	return list;
}
