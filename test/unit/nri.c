/* Unit tests: the NRI plugin's pure parts. The framing (formats/ttrpc.c):
 * what mux_put and ttrpc_put write, mux_in_feed reads back, in frames of
 * MUX_CHUNK bytes at most, whatever the chunks the bytes come in; lengths
 * over the limits refused. NRI's container as the decision reads a
 * config.json (engines/nri.c): env, annotations, a device plugin's /dev/null
 * bind mounts and nothing else, the cgroups path; ocidec's cache hook
 * recognised. Which runtimes take a plugin's CDI devices (nri_takes_cdi:
 * containerd 2.1 and later, CRI-O 1.34 and later, as ConfigureRequest
 * names them). NRI 0.11's container user: absent told from root's; the
 * groups a non-root process lacks for its group-only device nodes. */
#include "engines/nri.h"
#include "formats/ttrpc.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

struct got {
	size_t n;
	uint32_t conn, stream;
	size_t len;
	unsigned char first, last;
};

static int take(uint32_t conn, const struct ttrpc_msg *m, void *arg)
{
	struct got *g = arg;

	g->n++;
	g->conn = conn;
	g->stream = m->stream;
	g->len = m->len;
	g->first = m->len ? m->data[0] : 0;
	g->last = m->len ? m->data[m->len - 1] : 0;
	return 0;
}

static void framing(void)
{
	static const size_t sizes[] = { 0, 1, MUX_CHUNK - TTRPC_HDR, MUX_CHUNK - TTRPC_HDR + 1, 10000, 1u << 20 };
	static const size_t chunks[] = { 1, 7, 4096, 1u << 22 };

	for (size_t i = 0; i < N_CASES(sizes); i++) {
		unsigned char *body = malloc(sizes[i] + 1);
		struct bbuf msg = { 0 }, out = { 0 }, walk;
		struct mux_frame f;
		size_t frames = 0, biggest = 0;

		for (size_t k = 0; k < sizes[i]; k++)
			body[k] = (unsigned char)(k * 7 + 3);
		ttrpc_put(&msg, 77, TTRPC_RESPONSE, body, sizes[i]);
		mux_put(&out, MUX_PLUGIN, msg.p, msg.len);
		walk = out;
		while (mux_next(&walk, &f) > 0) {
			frames++;
			biggest = f.len > biggest ? f.len : biggest;
			walk.off += MUX_HDR + f.len;
		}
		CHECK(walk.off == walk.len && biggest <= MUX_CHUNK &&
			      frames == (TTRPC_HDR + sizes[i] + MUX_CHUNK - 1) / MUX_CHUNK,
		      "a %zu-byte message: %zu frames of %zu bytes at most", sizes[i], frames, biggest);
		for (size_t c = 0; c < N_CASES(chunks); c++) {
			struct mux_in in = { 0 };
			struct got g = { 0 };
			int r = 0;

			for (size_t off = 0; off < out.len && r == 0; off += chunks[c])
				r = mux_in_feed(&in, out.p + off, out.len - off < chunks[c] ? out.len - off : chunks[c],
						take, &g);
			CHECK(r == 0 && g.n == 1 && g.conn == MUX_PLUGIN && g.stream == 77 && g.len == sizes[i] &&
				      (!sizes[i] || (g.first == body[0] && g.last == body[sizes[i] - 1])),
			      "a %zu-byte message fed %zu bytes at a time: read back whole", sizes[i], chunks[c]);
			mux_in_free(&in);
		}
		bbuf_free(&msg);
		bbuf_free(&out);
		free(body);
	}
	{
		/* a frame, then a message, over the limits; another connection's frame dropped */
		unsigned char big[] = { 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff };
		unsigned char msg[] = { 0, 0, 0, 2, 0, 0, 0, 10, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 1, 0 };
		unsigned char other[] = { 0, 0, 0, 9, 0, 0, 0, 2, 'h', 'i' };
		struct mux_in in = { 0 };
		struct got g = { 0 };

		CHECK(mux_in_feed(&in, big, sizeof(big), take, &g) < 0, "a frame over MUX_MAX breaks the trunk");
		mux_in_free(&in);
		CHECK(mux_in_feed(&in, msg, sizeof(msg), take, &g) < 0 && g.n == 0,
		      "a message over TTRPC_MAX breaks the connection");
		mux_in_free(&in);
		CHECK(mux_in_feed(&in, other, sizeof(other), take, &g) == 0 && g.n == 0 && in.trunk.len == in.trunk.off,
		      "a frame for connection 9: dropped, as NRI's own mux drops it");
		mux_in_free(&in);
	}
}

static Nri__Pkg__Api__V1alpha1__Mount *mount(const char *dst, const char *type, const char *src, char **opts,
					     size_t nopts)
{
	Nri__Pkg__Api__V1alpha1__Mount *m = calloc(1, sizeof(*m));

	nri__pkg__api__v1alpha1__mount__init(m);
	m->destination = (char *)dst;
	m->type = (char *)type;
	m->source = (char *)src;
	m->options = opts;
	m->n_options = nopts;
	return m;
}

static void container(void)
{
	char *env[] = { "PATH=/bin", "NVIDIA_VISIBLE_DEVICES=0,1" };
	char *rbind[] = { "rbind", "ro" }, *none[] = { "ro" };
	Nri__Pkg__Api__V1alpha1__Container__AnnotationsEntry a1, *anns[] = { &a1 };
	Nri__Pkg__Api__V1alpha1__Mount *mounts[] = {
		mount("/var/run/nvidia-container-devices/GPU-1", "bind", "/dev/null", none, 1),
		mount("/var/run/nvidia-container-devices/2", "", "/dev/null", rbind, 2),
		mount("/var/run/nvidia-container-devices/3", "tmpfs", "/dev/null", none, 1),
		mount("/var/run/nvidia-container-devices/4", "bind", "/etc/hostname", none, 1),
	};
	Nri__Pkg__Api__V1alpha1__LinuxContainer lc;
	Nri__Pkg__Api__V1alpha1__Hook hk, *hks[] = { &hk };
	Nri__Pkg__Api__V1alpha1__Hooks hooks;
	char *hargs[] = { "ocidec-hook", "--cdi", "--library", "/usr/lib/libx.so" };
	NriContainer c;
	struct oci_config oc;

	nri__pkg__api__v1alpha1__container__init(&c);
	nri__pkg__api__v1alpha1__container__annotations_entry__init(&a1);
	nri__pkg__api__v1alpha1__linux_container__init(&lc);
	a1.key = "ocidec.io/nvidia";
	a1.value = "all";
	c.env = env;
	c.n_env = 2;
	c.annotations = anns;
	c.n_annotations = 1;
	c.mounts = mounts;
	c.n_mounts = 4;
	lc.cgroups_path = "/kubepods/p1/c1";
	c.linux = &lc;
	nri_container_config(&c, &oc);
	CHECK(oc.env.n == 2 && strcmp(oci_env(&oc.env, "NVIDIA_VISIBLE_DEVICES"), "0,1") == 0, "the env, as process.env");
	CHECK(oc.ann.n == 2 && strcmp(oci_annotation(&oc.ann, "ocidec.io/nvidia"), "all") == 0, "the annotations");
	CHECK(oc.mounts.n == 2 && strcmp(oc.mounts.v[0], "/var/run/nvidia-container-devices/GPU-1") == 0 &&
		      strcmp(oc.mounts.v[1], "/var/run/nvidia-container-devices/2") == 0,
	      "the device plugin's list: bind mounts of /dev/null (type bind, or rbind among the options), not a "
	      "tmpfs named so, not another file");
	CHECK(oc.cgroups_path && strcmp(oc.cgroups_path, "/kubepods/p1/c1") == 0, "the cgroups path");
	CHECK(!oc.cap_sys_admin && !oc.root, "never privileged, no root: NRI says neither");
	oci_config_free(&oc);
	CHECK(!nri_edited(&c), "no hooks: not edited");
	nri__pkg__api__v1alpha1__hooks__init(&hooks);
	nri__pkg__api__v1alpha1__hook__init(&hk);
	hk.path = "/usr/local/ocidec/bin/ocidec";
	hk.args = hargs;
	hk.n_args = 4;
	hooks.create_container = hks;
	hooks.n_create_container = 1;
	c.hooks = &hooks;
	CHECK(nri_edited(&c), "ocidec's cache hook (a CDI spec of ocidec's): edited");
	hk.path = "/usr/bin/other";
	CHECK(!nri_edited(&c), "another program's hook with --cdi: not ocidec's");
	for (size_t i = 0; i < N_CASES(mounts); i++)
		free(mounts[i]);
}

/* nri_takes_cdi: containerd 2.0 carries NRI 0.8's field and drops it;
 * 2.1 and later inject the devices; CRI-O 1.32 and 1.33 (NRI 0.9) drop
 * it, 1.34 and later (its runtime_version is its bare version) inject
 * them; anything else is not taken to */
static void takes_cdi(void)
{
	static const struct { const char *rt; bool want; } t[] = {
		{ "containerd v2.1.9", true }, { "containerd 2.1.9+ds1-5", true }, { "containerd v2.2.7", true },
		{ "containerd v2.10.0", true }, { "containerd v3.0.0", true }, { "containerd v2.1.0-rc.1", true },
		{ "containerd v2.0.5", false }, { "containerd 1.7.24~ds1-6", false }, { "containerd v1.6.20", false },
		{ "containerd ", false }, { "containerd v", false }, { "containerd v2", false }, { "containerd vx.1", false },
		{ "containerdv2.1.0", false }, { "", false }, { "CONTAINERD v2.1.0", false }, { "containerd v2.", false },
		{ "containerd v+2.1", false }, { "containerd  2.1.0", false },
		{ "cri-o 1.34.0", true }, { "cri-o 1.36.3", true }, { "cri-o 1.100.0", true }, { "cri-o 2.0.0", true },
		{ "cri-o v1.35.1", true }, { "cri-o 1.34.0-dev", true }, { "cri-o 1.33.13", false },
		{ "cri-o 1.32.0", false }, { "cri-o 1.3.40", false }, { "cri-o 0.99.0", false }, { "cri-o ", false },
		{ "cri-o 1", false }, { "cri-o x.34", false }, { "CRI-O 1.34.0", false }, { "crio 1.34.0", false },
		{ "podman 5.8.0", false },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		CHECK(nri_takes_cdi(t[i].rt) == t[i].want, "nri_takes_cdi(\"%s\"): %s", t[i].rt, t[i].want ? "yes" : "no");
}

/* NRI 0.11's Container.user as the runtime sends it (field 21): absent
 * (NRI before 0.11, containerd 2.2) NULL, root's (an empty message, as Go
 * writes uid 0 and no groups) not NULL; nri_groups_lacking's decision:
 * root, the node's group as the gid or among the additional gids reach a
 * group-only node, a user without it does not, a node others may open
 * or of group root asks nothing, each group once; no user: every one */
static void groups(void)
{
	/* id "c1"; then user { uid 1000, gid 1000, additional_gids [44, 7] } */
	static const uint8_t none[] = { 0x0a, 2, 'c', '1' };
	static const uint8_t root[] = { 0x0a, 2, 'c', '1', 0xaa, 0x01, 0 };
	static const uint8_t user[] = { 0x0a, 2, 'c', '1', 0xaa, 0x01, 10, 0x08, 0xe8, 0x07, 0x10, 0xe8, 0x07,
					0x1a, 2, 44, 7 };
	struct edit_device devs[] = {
		{ .path = "/dev/demo0", .mode = 0660, .gid = 44 },
		{ .path = "/dev/demo1", .mode = 0660, .gid = 44 },
		{ .path = "/dev/democtl", .mode = 0666, .gid = 45 },
		{ .path = "/dev/render", .mode = 0660, .gid = 109 },
		{ .path = "/dev/root", .mode = 0600, .gid = 0 },
	};
	struct edits e = { .devices = devs, .ndevices = N_CASES(devs) };
	Nri__Pkg__Api__V1alpha1__User u;
	uint32_t add[] = { 7, 109 };
	unsigned gids[N_CASES(devs)];
	NriContainer *c;
	size_t n;

	c = nri__pkg__api__v1alpha1__container__unpack(NULL, sizeof(none), none);
	CHECK(c && !c->user, "no field 21 (NRI before 0.11): no user, not root's");
	nri__pkg__api__v1alpha1__container__free_unpacked(c, NULL);
	c = nri__pkg__api__v1alpha1__container__unpack(NULL, sizeof(root), root);
	CHECK(c && c->user && c->user->uid == 0 && c->user->gid == 0 && c->user->n_additional_gids == 0,
	      "an empty field 21: root's user, not none");
	nri__pkg__api__v1alpha1__container__free_unpacked(c, NULL);
	c = nri__pkg__api__v1alpha1__container__unpack(NULL, sizeof(user), user);
	CHECK(c && c->user && c->user->uid == 1000 && c->user->gid == 1000 && c->user->n_additional_gids == 2 &&
		      c->user->additional_gids[0] == 44 && c->user->additional_gids[1] == 7,
	      "uid 1000, gid 1000, additional gids 44 and 7 (packed)");
	CHECK(c && nri_groups_lacking(&e, c->user, gids) == 1 && gids[0] == 109,
	      "in group 44 (an additional gid): lacks 109 only");
	nri__pkg__api__v1alpha1__container__free_unpacked(c, NULL);

	nri__pkg__api__v1alpha1__user__init(&u);
	u.uid = 1000;
	u.gid = 1000;
	n = nri_groups_lacking(&e, &u, gids);
	CHECK(n == 2 && gids[0] == 44 && gids[1] == 109,
	      "uid 1000 with no group: lacks 44 (once for its two nodes) and 109, not 45 (0666) nor root's");
	u.gid = 44;
	n = nri_groups_lacking(&e, &u, gids);
	CHECK(n == 1 && gids[0] == 109, "gid 44 (runAsGroup): lacks 109 only");
	u.gid = 1000;
	u.additional_gids = add;
	u.n_additional_gids = N_CASES(add);
	n = nri_groups_lacking(&e, &u, gids);
	CHECK(n == 1 && gids[0] == 44, "additional gids 7 and 109: lacks 44 only");
	u.uid = 0;
	u.n_additional_gids = 0;
	CHECK(nri_groups_lacking(&e, &u, gids) == 0, "root (uid 0) lacks nothing");
	n = nri_groups_lacking(&e, NULL, gids);
	CHECK(n == 2 && gids[0] == 44 && gids[1] == 109, "no user sent: every group-only node's group, each once");
	e.ndevices = 0;
	CHECK(nri_groups_lacking(&e, NULL, gids) == 0, "no device nodes: nothing");
}

int main(void)
{
	framing();
	container();
	takes_cdi();
	groups();
	return done();
}
