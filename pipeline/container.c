/* container.c: see container.h. */
#include "pipeline/container.h"

#include "devices/keycache.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <stdlib.h>
#include <string.h>

int container_decide(const char *dir, const struct oci_state *st, const char *bundle, const char *text,
		     size_t len, struct container *c, struct oerr *err)
{
	static const struct strv no_ann;
	const struct strv *ann = st ? &st->ann : &no_ann;

	memset(c, 0, sizeof(*c));
	if (text) {
		struct keyset keys;
		bool idle = keycache_keys(dir, &keys) == 0 && !activation_possible(&keys.as, keys.len, ann, text, len);

		keyset_free(&keys);
		if (idle)
			return CONTAINER_IDLE;
	}
	proc_open();  /* (the hook's, first used from here on) */
	if (st ? oci_container_config(st, text, len, &c->oc, err) < 0 : oci_config_parse(text, len, bundle, &c->oc, err) < 0)
		return st ? -1 : oerr_prefix(err, "%s/config.json", bundle ? bundle : ".");
	return container_decide_config(dir, ann, st && st->id && *st->id ? st->id : NULL, c, err);
}

int container_decide_config(const char *dir, const struct strv *ann, const char *id, struct container *c,
			    struct oerr *err)
{
	c->nact = activation_decide(dir, &c->oc, ann, &c->cfg, &c->act, err);
	if (c->nact < 0 && id)  /* one line that names the container */
		return oerr_prefix(err, "container %s", id);
	if (c->nact <= 0)
		return c->nact < 0 ? -1 : CONTAINER_NONE;
	return CONTAINER_ACTIVE;
}

int container_plan(struct container *c, const char *id, struct oerr *err)
{
	for (int i = 0; i < c->nact; i++) {
		const struct activation *a = &c->act[i];
		struct plan_select sel = { .features = a->features, .devices = &a->sel, .container = true,
					   .privileged = c->oc.cap_sys_admin, .by_path = c->by_path,
					   .requires = &a->requires, .mig_caps = a->mig_caps };
		_cleanup_free_ char *devices = selection_text(&a->sel);

		vendor_log_level(a->v);
		log_info("%s: active (%s), devices %s, features %s", a->v->name, a->source, devices,
			 a->features ? a->features : "(driver_feature)");
		if (plan_vendor(&c->plan, a->v, &sel, err) < 0)
			return id ? oerr_prefix(err, "container %s", id) : -1;
	}
	edits_build(&c->plan, &c->edits);
	return 0;
}

void container_free(struct container *c)
{
	edits_free(&c->edits);
	plan_free(&c->plan);
	activation_free(c->act, c->nact > 0 ? (size_t)c->nact : 0);
	free(c->act);
	config_free(&c->cfg);
	oci_config_free(&c->oc);
	memset(c, 0, sizeof(*c));
}
