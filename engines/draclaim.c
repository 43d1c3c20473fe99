/* draclaim.c: DRA's names for ocidec's devices, and a claim's allocation as
 * the devices to prepare (draclaim.h) */
#include "engines/draclaim.h"
#include "engines/cdispec.h"
#include "engines/kubeapi.h"
#include "base/cleanup.h"
#include "devices/devices.h"
#include "formats/json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dra_dns_label(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return false;
	return s[0] != '-' && s[n - 1] != '-';
}

/* One dot-separated identifier of a version's part at *P (up to a '.', '-'
 * after the core, '+' or the end): alphanumerics and '-', NUMERIC: digits
 * only with no leading zero, LEADING: a number of digits alone must not
 * have one (a prerelease's) */
static bool semver_ident(const char **p, bool numeric, bool leading)
{
	const char *s = *p;
	size_t n = strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-");
	size_t d = strspn(s, "0123456789");

	if (numeric)
		n = d;
	if (n == 0)
		return false;
	if ((numeric || (leading && d == n)) && d > 1 && s[0] == '0')
		return false;
	*p = s + n;
	return true;
}

/* The dot-separated identifiers after *P's '-' or '+' */
static bool semver_idents(const char **p, bool leading)
{
	do {
		(*p)++;
		if (!semver_ident(p, false, leading))
			return false;
	} while (**p == '.');
	return true;
}

bool dra_semver(const char *s)
{
	if (strlen(s) > 64)
		return false;
	for (int i = 0; i < 3; i++)
		if (!semver_ident(&s, true, false) || (i < 2 && *s++ != '.'))
			return false;
	if (*s == '-' && !semver_idents(&s, true))
		return false;
	if (*s == '+' && !semver_idents(&s, false))
		return false;
	return *s == '\0';
}

char *dra_driver_name(const struct vendor *v)
{
	_cleanup_free_ char *label = xstrdup(v->name);

	for (char *c = label; *c; c++)
		*c = *c == '_' || *c == '.' ? '-' : (char)tolower((unsigned char)*c);
	if (strlen(label) > 63 - strlen("." DRA_DOMAIN) || !dra_dns_label(label))
		return NULL;
	return xasprintf("%s." DRA_DOMAIN, label);
}

/* V's device class as a DNS label's start: its CDI kind's class, lower
 * case, other characters '-', at most 40 ("dev" where nothing is left) */
static char *device_class(const struct vendor *v)
{
	const char *kind = v->cdi_kind ? v->cdi_kind : "", *slash = strrchr(kind, '/');
	const char *c = slash ? slash + 1 : kind;
	char buf[41];
	size_t n = 0;

	for (; *c && n < sizeof(buf) - 1; c++) {
		char ch = (char)tolower((unsigned char)*c);

		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789", ch))
			ch = '-';
		if (ch != '-' || (n && buf[n - 1] != '-'))
			buf[n++] = ch;
	}
	while (n && buf[n - 1] == '-')
		n--;
	buf[n] = '\0';
	return xstrdup(n ? buf : "dev");
}

char *dra_device_name(const struct vendor *v, unsigned long index)
{
	_cleanup_free_ char *class = device_class(v);

	return xasprintf("%s-%lu", class, index);
}

long dra_device_index(const struct vendor *v, const char *name)
{
	_cleanup_free_ char *class = device_class(v);
	size_t n = strlen(class), d;
	const char *num = name + n + 1;

	if (strncmp(name, class, n) != 0 || name[n] != '-')
		return -1;
	d = strspn(num, "0123456789");
	if (d == 0 || d > 4 || num[d] || (d > 1 && num[0] == '0'))
		return -1;
	long index = strtol(num, NULL, 10);
	return index <= SELECT_MAX_INDEX ? index : -1;
}

void dra_result_free(struct dra_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].request);
		free(r->v[i].driver);
		free(r->v[i].pool);
		free(r->v[i].device);
		strv_free(&r->v[i].cdi);
	}
	free(r->v);
	free(r->uid);
	memset(r, 0, sizeof(*r));
}

/* OBJ's member NAME as a string (NULL: none, or not a string) */
static const char *jstr(const cJSON *obj, const char *name)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The vendor of CFG whose driver name is DRIVER (REF->driver's alone where
 * given), or NULL */
static const struct vendor *our_vendor(const struct config *cfg, const struct dra_claim_ref *ref, const char *driver)
{
	if (ref->driver && strcmp(ref->driver, driver) != 0)
		return NULL;
	for (size_t i = 0; i < cfg->n; i++) {
		_cleanup_free_ char *name = dra_driver_name(&cfg->vendors[i]);

		if (name && strcmp(name, driver) == 0)
			return &cfg->vendors[i];
	}
	return NULL;
}

/* OBJ's member NAME where it is a list (NULL: none, or no list) */
static const cJSON *jlist(const cJSON *obj, const char *name)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsArray(a) ? a : NULL;
}

/* Does the allocation's node selector SEL leave NODE out? Only a selector
 * whose every term names its nodes (matchFields metadata.name In) can say:
 * a term of labels alone may hold NODE. */
static bool other_node(const cJSON *sel, const char *node, char *seen, size_t seenlen)
{
	const cJSON *terms = jlist(sel, "nodeSelectorTerms"), *t;

	if (cJSON_GetArraySize(terms) == 0)
		return false;
	cJSON_ArrayForEach(t, terms) {
		const cJSON *fields = jlist(t, "matchFields"), *f, *val;
		bool named = false, here = false;

		cJSON_ArrayForEach(f, fields) {
			const char *key = jstr(f, "key"), *op = jstr(f, "operator");

			if (!key || strcmp(key, "metadata.name") != 0 || !op || strcmp(op, "In") != 0)
				continue;
			named = true;
			cJSON_ArrayForEach(val, jlist(f, "values")) {
				if (!cJSON_IsString(val))
					continue;
				if (strcmp(val->valuestring, node) == 0)
					here = true;
				else if (!seen[0])
					snprintf(seen, seenlen, "%.100s", val->valuestring);
			}
		}
		if (!named || here)
			return false;
	}
	return true;
}

/* A peer's string fit for one line (printable ASCII, at most 100) */
static const char *shown(const char *s, char *buf, size_t n)
{
	return escape_bytes(s, buf, n);
}

int dra_claim_parse(const char *text, size_t len, const struct config *cfg, const struct dra_claim_ref *ref,
		    struct dra_result *out, struct oerr *err)
{
	_cleanup_json_ cJSON *claim = json_parse_exact(text, len, NULL);
	const cJSON *meta, *alloc, *results, *res;
	const char *uid;
	char other[128] = "", b1[128], b2[128];

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(claim))
		return oerr_usage(err, "claim %s/%s: the API server's answer is no JSON object", ref->ns, ref->name);
	meta = cJSON_GetObjectItemCaseSensitive(claim, "metadata");
	uid = jstr(meta, "uid");
	if (!uid)
		return oerr_usage(err, "claim %s/%s: no metadata.uid", ref->ns, ref->name);
	if (ref->uid && ref->uid[0] && strcmp(uid, ref->uid) != 0)
		return oerr_usage(err, "claim %s/%s: its UID is %s, not %s (the claim was made anew)", ref->ns,
				  ref->name, shown(uid, b1, sizeof(b1)), shown(ref->uid, b2, sizeof(b2)));
	alloc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "status"), "allocation");
	if (!cJSON_IsObject(alloc))
		return oerr_usage(err, "claim %s/%s: not allocated", ref->ns, ref->name);
	if (other_node(cJSON_GetObjectItemCaseSensitive(alloc, "nodeSelector"), ref->node, other, sizeof(other)))
		return oerr_usage(err, "claim %s/%s: allocated on another node (%s), not %s", ref->ns, ref->name,
				  shown(other, b1, sizeof(b1)), ref->node);
	results = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(alloc, "devices"), "results");
	if (results && !cJSON_IsArray(results))
		return oerr_usage(err, "claim %s/%s: status.allocation.devices.results is no list", ref->ns, ref->name);
	out->uid = xstrdup(uid);
	cJSON_ArrayForEach(res, results) {
		const char *request = jstr(res, "request"), *driver = jstr(res, "driver"), *pool = jstr(res, "pool");
		const char *device = jstr(res, "device");
		const struct vendor *v;
		struct dra_device *d;
		long index;

		if (!request || !driver || !pool || !device) {
			dra_result_free(out);
			return oerr_usage(err, "claim %s/%s: an allocation result without its request, driver, pool "
					  "and device", ref->ns, ref->name);
		}
		if (!(v = our_vendor(cfg, ref, driver)))
			continue;  /* another driver's part of the claim */
		if (strcmp(pool, ref->node) != 0) {
			dra_result_free(out);
			return oerr_usage(err, "claim %s/%s: device %s of %s is in pool %s, not this node's (%s)", ref->ns,
					  ref->name, shown(device, b1, sizeof(b1)), driver, shown(pool, b2, sizeof(b2)),
					  ref->node);
		}
		if ((index = dra_device_index(v, device)) < 0) {
			dra_result_free(out);
			return oerr_usage(err, "claim %s/%s: %s has no device %s", ref->ns, ref->name, driver,
					  shown(device, b1, sizeof(b1)));
		}
		out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
		d = &out->v[out->n++];
		memset(d, 0, sizeof(*d));
		d->request = xstrdup(request);
		d->driver = xstrdup(driver);
		d->pool = xstrdup(pool);
		d->device = xstrdup(device);
		d->v = v;
		d->index = (unsigned long)index;
	}
	return 0;
}

int dra_claim_resolve(const struct dra_claim_ref *ref, struct dra_result *r, struct oerr *err)
{
	for (size_t i = 0; i < r->n; i++) {
		struct dra_device *d = &r->v[i];
		size_t n;
		bool have = false;
		_cleanup_free_ unsigned long *idx = vendor_node_indices(d->v, &n);
		const struct selection one = { .kind = SEL_SOME, .idx = &d->index, .n = 1 };
		struct oerr why;

		for (size_t k = 0; k < n && !have; k++)
			have = idx[k] == d->index;
		if (!have)
			return oerr_usage(err, "claim %s/%s: %s: no device %s on this node (nothing under %s for it)",
					  ref->ns, ref->name, d->driver, d->device, d->v->driver_root);
		if (cdi_device_names(d->v, &one, &d->cdi, &why) < 0)
			return oerr_usage(err, "claim %s/%s: %s: device %s: %s", ref->ns, ref->name, d->driver, d->device,
					  why.msg);
	}
	return 0;
}

int dra_claim_prepare(struct kube *k, const struct config *cfg, const struct dra_claim_ref *ref,
		      struct dra_result *out, struct oerr *err)
{
	_cleanup_free_ char *path = NULL, *body = NULL;
	size_t len;
	int status;

	memset(out, 0, sizeof(*out));
	if (!dra_dns_label(ref->ns) || strlen(ref->name) > 253 ||
	    strspn(ref->name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(ref->name) || !ref->name[0])
		return oerr_usage(err, "claim %s/%s: not a namespace and a claim's name", ref->ns, ref->name);
	path = xasprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ref->ns, ref->name);
	if (kube_request(k, "GET", path, NULL, &status, &body, &len, err) < 0)
		return oerr_prefix(err, "claim %s/%s", ref->ns, ref->name);
	if (status != 200) {
		_cleanup_free_ char *why = kube_status_text(status, body, len);

		return oerr_usage(err, "claim %s/%s: the API server answers %s", ref->ns, ref->name, why);
	}
	if (dra_claim_parse(body, len, cfg, ref, out, err) < 0)
		return -1;
	if (dra_claim_resolve(ref, out, err) < 0) {
		dra_result_free(out);
		return -1;
	}
	return 0;
}
