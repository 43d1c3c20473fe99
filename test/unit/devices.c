/* Unit tests: the device layer's typed selection (devices/devices.c) and
 * what activation makes of a container's value (vendor_select, for a
 * vendor whose devices are plain indices: no inventory is read); the
 * bounds on a container's environment (entries of one variable, the
 * deadline); the snapshot of a vendor's devices, let go and read anew;
 * the inventory as device values (vendor_devices). */
#include "pipeline/activate.h"
#include "devices/devices.h"
#include "test/unit/tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void test_parse(void)
{
	static const struct { const char *text, *want; } t[] = {
		{ "all", "all" }, { "none", "none" }, { "0", "0" }, { "2,0", "2,0" }, { "1 1,1", "1" },
		{ "0, 3\t7", "0,3,7" }, { ",", "none" }, { "x", NULL }, { "-1", NULL }, { "1234567890", NULL },
		{ "0,GPU-1", NULL }, { "0-3", NULL },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct selection s;
		struct oerr err;
		int r = selection_parse(t[i].text, &s, &err);
		char *text = r == 0 ? selection_text(&s) : NULL;

		if (!t[i].want)
			CHECK(r < 0 && err.code == EXIT_USAGE && strstr(err.msg, "invalid device selection"),
			      "selection_parse(\"%s\") refused: %s", t[i].text, r < 0 ? err.msg : text);
		else
			CHECK(r == 0 && strcmp(text, t[i].want) == 0, "selection_parse(\"%s\") = %s", t[i].text,
			      text ? text : err.msg);
		free(text);
		if (r == 0)
			selection_free(&s);
	}
}

static void test_select(void)
{
	static const struct { const char *value, *want; } t[] = {
		{ "all", "all" }, { "none", "none" }, { "0,2", "0,2" }, { "2,0,2", "0,2" }, { "0-3", "0,1,2,3" },
		{ "3-3, 1", "1,3" }, { "4096", "4096" }, { "3-1", NULL }, { "0-4097", NULL }, { "4097", NULL },
		{ "GPU-8b6a2c1e-0000-0000-0000-000000000000", NULL },
	};
	struct vendor v = { .name = (char *)"unit" };

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct selection s;
		struct oerr err;
		int r = vendor_select(&v, t[i].value, &s, &err);
		char *text = r == 0 ? selection_text(&s) : NULL;

		if (!t[i].want)
			CHECK(r < 0, "vendor_select(\"%s\") refused: %s", t[i].value, r < 0 ? err.msg : text);
		else
			CHECK(r == 0 && strcmp(text, t[i].want) == 0 && (s.kind != SEL_SOME || s.n > 0),
			      "vendor_select(\"%s\") = %s", t[i].value, text ? text : err.msg);
		free(text);
		if (r == 0)
			selection_free(&s);
	}
}

static void test_set(void)
{
	bool bits[8] = { false, true, false, false, false, false, true, false }, none[8] = { false };
	struct mig_instance m = { 1, 2, 0 };
	struct selection s = { 0 };
	char *text;

	CHECK(selection_has(&s, 5), "a zeroed selection is all of them");
	selection_set(&s, bits, 8);
	CHECK(s.kind == SEL_SOME && s.n == 2 && selection_has(&s, 1) && selection_has(&s, 6) && !selection_has(&s, 0),
	      "selection_set: the bits set, ascending");
	selection_add_mig(&s, &m);
	selection_add_mig(&s, &m);
	text = selection_text(&s);
	CHECK(s.nmig == 1 && strcmp(text, "1,6, MIG 1/2/0") == 0, "a MIG device once: %s", text);
	free(text);
	selection_set(&s, none, 8);
	CHECK(s.kind == SEL_NONE && s.nmig == 1 && !selection_has(&s, 1), "no bit: none, its MIG device kept");
	selection_free(&s);
}

/* KFD's topology properties (AMD's partitions): the three fields that
 * place a render node, each the first line naming it, decimal only */
static void test_kfd(void)
{
	static const struct {
		const char *text;
		bool ok;
		unsigned long long minor, loc, dom, uid;
		bool has_uid;
	} t[] = {
		{ "cpu_cores_count 0\nlocation_id 1280\ndomain 0\ndrm_render_minor 130\nunique_id 1234605616436508552\n",
		  true, 130, 1280, 0, 1234605616436508552ULL, true },
		{ "drm_render_minor 128\nlocation_id 34048\ndomain 1", true, 128, 34048, 1, 0, false },
		{ "drm_render_minor 128\nlocation_id 34048\n", false, 0, 0, 0, 0, false },          /* no domain */
		{ "drm_render_minor 0x80\nlocation_id 1\ndomain 0\n", false, 0, 0, 0, 0, false },  /* not decimal */
		{ "drm_render_minor  128\nlocation_id 1\ndomain 0\n", false, 0, 0, 0, 0, false },  /* two blanks */
		{ "xdrm_render_minor 5\ndrm_render_minor 6\nlocation_id 1\ndomain 0\n", true, 6, 1, 0, 0, false },
		{ "drm_render_minor 7\ndrm_render_minor 8\nlocation_id 1\ndomain 0\n", true, 7, 1, 0, 0, false },
		{ "drm_render_minor 99999999999999999999999\nlocation_id 1\ndomain 0\n", false, 0, 0, 0, 0, false },
		{ "drm_render_minor 18446744073709551615\nlocation_id 1\ndomain 0\n", true, 18446744073709551615ULL, 1, 0, 0, false },
		{ "", false, 0, 0, 0, 0, false },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct kfd_node k;
		bool ok = kfd_properties_parse(t[i].text, strlen(t[i].text), &k);

		CHECK(ok == t[i].ok && (!ok || (k.render_minor == t[i].minor && k.location_id == t[i].loc &&
						 k.domain == t[i].dom && k.has_unique_id == t[i].has_uid &&
						 k.unique_id == t[i].uid)),
		      "kfd_properties_parse case %zu: %d minor %llu location %llu", i, ok, k.render_minor, k.location_id);
	}
}

/* activate() for one vendor answering OCI_UNIT, given N entries of ENTRY
 * (and nothing else): the number of vendors active, or -1 with ERR */
static int active_with(size_t n, const char *entry, struct oerr *err)
{
	struct vendor v = { .name = (char *)"unit", .activation_flag = (char *)"OCI_UNIT",
			    .annotation = (char *)"ocidec.io/unit", .device_list_dir = (char *)"/var/run/unit",
			    .driver_root = (char *)"/", .env_all = true,
			    .selection = SRC_ENV, .unprivileged_selection = SRC_ENV };
	struct config cfg = { .vendors = &v, .n = 1 };
	struct oci_config oc = { 0 };
	struct strv state = { 0 };
	struct activation act[1];
	int r;

	strv_push(&oc.env, "PATH=/bin");
	for (size_t i = 0; i < n; i++)
		strv_push(&oc.env, entry);
	r = activate(&cfg, &oc, &state, act, err);
	if (r > 0)
		activation_free(act, (size_t)r);
	oci_config_free(&oc);
	return r;
}

static void test_env_bounds(void)
{
	struct oerr err;
	int r;

	CHECK(active_with(64, "OCI_UNIT=0", &err) == 1, "64 entries of one variable: taken");
	r = active_with(65, "OCI_UNIT=0", &err);
	CHECK(r < 0 && strcmp(err.msg, "unit: the container's environment: 65 entries of OCI_UNIT, more than 64") == 0,
	      "65 entries of one variable: refused, saying so: %s", r < 0 ? err.msg : "taken");
	CHECK(active_with(100000, "OCI_UNITX=0", &err) == 0, "100000 entries of another variable: nothing asked");
	/* the deadline passed (the NRI plugin's 1 s): the loop over the
	 * environment stops and says where it was */
	deadline_arm_sec(1);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 50000000 }, NULL);
	r = active_with(1000, "OCI_UNIT=0", &err);
	deadline_arm_sec(0);
	CHECK(r < 0 && strcmp(err.msg, "unit: the deadline passed while reading the container's environment "
			      "(1001 entries)") == 0,
	      "past the deadline: refused, saying what it read: %s", r < 0 ? err.msg : "taken");
}

/* An NVIDIA information file of DIR's GPU BUS: UUID, minor MINOR */
static void info_file(const char *dir, const char *bus, const char *uuid, int minor)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, bus);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/information", dir, bus);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "Model: Fake\nGPU UUID: %s\nDevice Minor: %d\n", uuid, minor);
		fclose(f);
	}
}

/* One picture of the host while it is kept (a GPU that comes meanwhile
 * shifts no index); devices_forget lets it go, freeing it all (the
 * sanitizers' leak check), and the next question reads the host anew */
static void test_forget(void)
{
	static const char *const buses[] = { "0000:3b:00.0", "0000:86:00.0" };
	char dir[] = "/tmp/ocidec-unit-gpus.XXXXXX", *glob;
	struct vendor v = { .name = (char *)"unit", .serial = 7 };

	if (!CHECK(mkdtemp(dir) != NULL, "a temporary directory"))
		return;
	v.device_uuids = glob = xasprintf("%s/*/information", dir);
	info_file(dir, buses[0], "GPU-aaaa", 0);
	CHECK(vendor_uuid_index(&v, "GPU-aaaa") == 0 && vendor_uuid_index(&v, "GPU-bbbb") == -1, "one GPU read");
	info_file(dir, buses[1], "GPU-bbbb", 1);
	CHECK(vendor_uuid_index(&v, "GPU-bbbb") == -1, "a GPU that came later: not in the snapshot kept");
	devices_forget();
	CHECK(vendor_uuid_index(&v, "GPU-bbbb") == 1 && vendor_uuid_index(&v, "GPU-aaaa") == 0,
	      "let go: the host read anew, both GPUs there");
	for (int i = 0; i < 1000; i++) {   /* a plugin's many containers, each config a new serial */
		v.serial++;
		(void)vendor_uuid_index(&v, "GPU-aaaa");
		devices_forget();
	}
	devices_forget();
	CHECK(vendor_uuid_index(&v, "GPU-aaaa") == 0, "1000 snapshots made and let go, twice let go at the end");
	devices_forget();
	for (size_t i = 0; i < N_CASES(buses); i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s/information", dir, buses[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", dir, buses[i]);
		rmdir(path);
	}
	rmdir(dir);
	free(glob);
}

/* A MIG resolver that knows every "MIG-" name and resolves none */
static int unit_mig(const struct vendor *v, const char *tok, struct mig_instance *m, struct oerr *err)
{
	if (!m)
		return strncmp(tok, "MIG-", 4) == 0;
	return oerr_set(err, 0, "%s: no MIG device '%s'", v->name, tok);
}

/* devices_select, the ID syntax, for a vendor with no inventory: what
 * each token gives, and each refusal's words */
static void test_devices_select(void)
{
	static const struct { const char *value; bool module; const char *want; } t[] = {
		{ "0", false, "0" }, { "3,1", false, "1,3" }, { "0-2,1", false, "0,1,2" }, { "4096", false, "4096" },
		{ "", false, "none" }, { " , ", false, "none" }, { "0-0", false, "0" },
		{ "2-1", false, "error: unit: device range '2-1' is backwards or beyond 4096" },
		{ "0-4097", false, "error: unit: device range '0-4097' is backwards or beyond 4096" },
		{ "00001-2", false, "error: unit: no device '00001-2'" },
		{ "4097", false, "error: unit: no device '4097'" },
		{ "abcdef012", false, "error: unit: no device 'abcdef012'" },
		{ "0,GPU-x", false, "error: unit: no device 'GPU-x'" },
		{ "1", true, "error: unit: no module '1' (UNIT_MODULES)" },
		{ "MIG-GPU-x/1/0", false, "error: unit: no MIG device 'MIG-GPU-x/1/0'" },
	};
	struct vendor v = { .name = (char *)"unit", .module_env = (char *)"UNIT_MODULES" };

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct selection s;
		struct oerr err;
		int r = devices_select(&v, t[i].value, t[i].module, unit_mig, &s, &err);
		char *text = r == 0 ? selection_text(&s) : xconcat("error: ", err.msg);

		if (t[i].want)
			CHECK(strcmp(text, t[i].want) == 0, "devices_select(\"%s\"%s) = %s", t[i].value,
			      t[i].module ? ", module" : "", text);
		else
			CHECK(r < 0 && s.kind == SEL_ALL && !s.nmig, "devices_select(\"%s\") refused, nothing left: %s",
			      t[i].value, text);
		free(text);
		if (r == 0)
			selection_free(&s);
	}
}

/* The inventory as values (vendor_devices): a per_device_nodes vendor's
 * devices, all (every number its nodes have in the driver root) or those
 * named (each with the node of its number, there or not: STRICT for a
 * container), none; why a container's device that is not there fails
 * (device_absent); the indices list and cdi ask for (vendor_node_indices) */
static void test_inventory(void)
{
	char dir[] = "/tmp/ocidec-unit-nodes.XXXXXX", path[512];
	static const char *const names[] = { "unit0", "unit2", "unitx", "other1" };
	struct vendor v = { .name = (char *)"unit", .serial = 4242 };
	struct vendor whole = { .name = (char *)"whole", .serial = 4243, .driver_root = (char *)"/" };
	unsigned long two[] = { 1, 2 };
	const struct selection some = { .kind = SEL_SOME, .idx = two, .n = 2 }, none = { .kind = SEL_NONE };
	struct devices ds = { 0 };
	struct oerr err;
	unsigned long *idx;
	size_t n;
	int rootfd;

	if (!CHECK(mkdtemp(dir) != NULL, "a temporary directory"))
		return;
	snprintf(path, sizeof(path), "%s/dev", dir);
	mkdir(path, 0755);
	for (size_t i = 0; i < N_CASES(names); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/dev/%s", dir, names[i]);
		if ((f = fopen(path, "w")))
			fclose(f);
	}
	v.driver_root = dir;
	strv_push(&v.per_device_nodes, "unit%u");
	rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	vendor_devices(&v, rootfd, NULL, true, &ds);
	CHECK(ds.n == 2 && ds.v[0].index == 0 && ds.v[1].index == 2 && ds.v[0].nnodes == 1 &&
	      strcmp(ds.v[1].nodes[0].path, "/dev/unit2") == 0 && ds.v[1].nodes[0].minor == -1 && !ds.v[0].strict &&
	      !ds.v[0].dir && !ds.v[0].netdevs,
	      "all: the devices whose nodes are there, no more (%zu)", ds.n);
	devices_free(&ds);
	vendor_devices(&v, rootfd, &some, true, &ds);
	CHECK(ds.n == 2 && ds.v[0].index == 1 && ds.v[0].minor == 1 && ds.v[0].strict &&
	      strcmp(ds.v[0].nodes[0].path, "/dev/unit1") == 0 && ds.v[1].index == 2,
	      "two named: each its node, there or not, strict for a container");
	CHECK(device_absent(&v, &ds.v[0], &err) < 0 && strstr(err.msg, "unit: no device 1: ") &&
	      strstr(err.msg, "/dev/unit1 not found (this host has 0, 2)"), "device_absent: %s", err.msg);
	devices_free(&ds);
	vendor_devices(&v, rootfd, &some, false, &ds);
	CHECK(ds.n == 2 && !ds.v[0].strict, "not a container's: never strict");
	devices_free(&ds);
	vendor_devices(&v, rootfd, &none, true, &ds);
	CHECK(ds.n == 0, "none: no device");
	vendor_devices(&whole, rootfd, NULL, true, &ds);
	CHECK(ds.n == 0, "a vendor without per-device nodes: no device");
	idx = vendor_node_indices(&v, &n);
	CHECK(n == 2 && idx[0] == 0 && idx[1] == 2, "vendor_node_indices: 0, 2 (%zu)", n);
	free(idx);
	close(rootfd);
	for (size_t i = 0; i < N_CASES(names); i++) {
		snprintf(path, sizeof(path), "%s/dev/%s", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/dev", dir);
	rmdir(path);
	rmdir(dir);
	strv_free(&v.per_device_nodes);
	devices_forget();
}

int main(void)
{
	test_parse();
	test_select();
	test_devices_select();
	test_set();
	test_kfd();
	test_env_bounds();
	test_forget();
	test_inventory();
	return done();
}
