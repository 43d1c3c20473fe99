/* Unit tests: the DRA driver's pure parts (engines/draclaim.c). DNS labels
 * and semantic versions as the API server checks them; driver and device
 * names made and read back; a ResourceClaim's allocation mapped to our
 * vendors' devices, other drivers' results left out, each refusal with the
 * claim named; an API server's name looked up in an /etc/hosts
 * (engines/kubeapi.c). */
#include "engines/draclaim.h"
#include "engines/kubeapi.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

static void labels(void)
{
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "gpu-0", true }, { "a", true }, { "0", true }, { "node1", true },
		{ "", false }, { "-a", false }, { "a-", false }, { "A", false }, { "a.b", false }, { "a_b", false },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true },   /* 63 */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false },  /* 64 */
	};

	for (size_t i = 0; i < N_CASES(cases); i++)
		CHECK(dra_dns_label(cases[i].s) == cases[i].ok, "DNS label '%s': %s", cases[i].s, cases[i].ok ? "yes" : "no");
}

static void semvers(void)
{
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "550.54.15", true }, { "1.2.3", true }, { "0.0.0", true }, { "1.2.3-rc.1", true },
		{ "1.2.3-rc.1+b7", true }, { "1.2.3+build.007", true }, { "1.2.3-alpha-1", true }, { "1.2.3-0a", true },
		{ "535.104.05", false }, { "01.2.3", false }, { "1.2", false }, { "1.2.3.4", false }, { "v1.2.3", false },
		{ "1.2.3-", false }, { "1.2.3-01", false }, { "1.2.3+", false }, { "1.2.3-a..b", false },
		{ "1.2.3-a.", false }, { "1.2.3 ", false }, { "", false }, { "1.2.3-a+b+c", false },
		{ "1.2.3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false },  /* 65 */
	};

	for (size_t i = 0; i < N_CASES(cases); i++)
		CHECK(dra_semver(cases[i].s) == cases[i].ok, "semver '%s': %s", cases[i].s, cases[i].ok ? "yes" : "no");
}

static struct vendor vendor(const char *name, const char *kind)
{
	struct vendor v = { 0 };

	v.name = (char *)name;
	v.cdi_kind = (char *)kind;
	v.driver_root = (char *)"/nonexistent";
	return v;
}

static void names(void)
{
	struct vendor nv = vendor("nvidia", "nvidia.com/gpu"), demo = vendor("Demo_X", "ocidec.io/demo");
	struct vendor odd = vendor("a.b", "x.io/My_Class..v2"), bare = vendor("zz", "x.io/__");
	struct vendor longname = vendor("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x.io/d");  /* 54 */
	char *s;

	s = dra_driver_name(&nv);
	CHECK(s && strcmp(s, "nvidia.ocidec.io") == 0, "nvidia's driver: nvidia.ocidec.io (%s)", s);
	free(s);
	s = dra_driver_name(&demo);
	CHECK(s && strcmp(s, "demo-x.ocidec.io") == 0, "Demo_X's driver: demo-x.ocidec.io (%s)", s);
	free(s);
	s = dra_driver_name(&odd);
	CHECK(s && strcmp(s, "a-b.ocidec.io") == 0, "a.b's driver: a-b.ocidec.io (%s)", s);
	free(s);
	CHECK(!dra_driver_name(&longname), "a name of 54 characters: no driver (63 in all)");
	s = dra_device_name(&nv, 3);
	CHECK(strcmp(s, "gpu-3") == 0, "nvidia.com/gpu's 3: gpu-3 (%s)", s);
	free(s);
	s = dra_device_name(&odd, 12);
	CHECK(strcmp(s, "my-class-v2-12") == 0 && dra_dns_label(s), "x.io/My_Class..v2's 12: my-class-v2-12 (%s)", s);
	free(s);
	s = dra_device_name(&bare, 0);
	CHECK(strcmp(s, "dev-0") == 0, "a class of no letter: dev-0 (%s)", s);
	free(s);
	CHECK(dra_device_index(&nv, "gpu-3") == 3 && dra_device_index(&nv, "gpu-0") == 0, "gpu-3 is 3, gpu-0 0");
	CHECK(dra_device_index(&nv, "gpu-03") < 0 && dra_device_index(&nv, "gpu-") < 0 &&
		      dra_device_index(&nv, "gpu-3x") < 0 && dra_device_index(&nv, "demo-3") < 0 &&
		      dra_device_index(&nv, "gpu3") < 0 && dra_device_index(&nv, "gpu-99999") < 0 &&
		      dra_device_index(&nv, "gpu-4097") < 0,
	      "no index: a leading zero, none, a suffix, another class, no dash, beyond 4096");
	CHECK(dra_device_index(&nv, "gpu-4096") == 4096, "gpu-4096 is the last");
}

#define SEL(node) "\"nodeSelector\": {\"nodeSelectorTerms\": [{\"matchFields\": [{\"key\": \"metadata.name\", " \
		  "\"operator\": \"In\", \"values\": [\"" node "\"]}]}]}"
#define RES(drv, pool, dev) "{\"request\": \"r\", \"driver\": \"" drv "\", \"pool\": \"" pool "\", \"device\": \"" dev "\"}"
#define CLAIM(uid, results, sel) "{\"metadata\": {\"uid\": \"" uid "\"}, \"status\": {\"allocation\": " \
		"{\"devices\": {\"results\": [" results "]}" sel "}}}"

static void claims(void)
{
	struct vendor vs[2] = { vendor("nvidia", "nvidia.com/gpu"), vendor("demo", "ocidec.io/demo") };
	struct config cfg = { .vendors = vs, .n = 2 };
	struct dra_claim_ref ref = { .ns = "ns", .name = "c", .uid = "u1", .node = "n1" };
	static const struct {
		const char *json, *err;  /* ERR: the refusal's text, NULL: taken */
		size_t n;                /* taken: the devices of ours */
	} cases[] = {
		{ CLAIM("u1", RES("nvidia.ocidec.io", "n1", "gpu-1") "," RES("demo.ocidec.io", "n1", "demo-0"), "," SEL("n1")),
		  NULL, 2 },
		{ CLAIM("u1", RES("nic.example.com", "n9", "whatever") "," RES("nvidia.ocidec.io", "n1", "gpu-0"), ""), NULL,
		  1 },
		{ CLAIM("u1", RES("nic.example.com", "n1", "x"), ""), NULL, 0 },
		{ CLAIM("u1", "", ""), NULL, 0 },
		{ CLAIM("u2", RES("nvidia.ocidec.io", "n1", "gpu-1"), ""),
		  "claim ns/c: its UID is u2, not u1 (the claim was made anew)", 0 },
		{ "{\"metadata\": {\"uid\": \"u1\"}, \"status\": {}}", "claim ns/c: not allocated", 0 },
		{ CLAIM("u1", RES("nvidia.ocidec.io", "n1", "gpu-1"), "," SEL("n2")),
		  "claim ns/c: allocated on another node (n2), not n1", 0 },
		{ CLAIM("u1", RES("nvidia.ocidec.io", "n2", "gpu-1"), ""),
		  "claim ns/c: device gpu-1 of nvidia.ocidec.io is in pool n2, not this node's (n1)", 0 },
		{ CLAIM("u1", RES("nvidia.ocidec.io", "n1", "demo-1"), ""), "claim ns/c: nvidia.ocidec.io has no device demo-1",
		  0 },
		{ CLAIM("u1", "{\"driver\": \"nvidia.ocidec.io\"}", ""),
		  "claim ns/c: an allocation result without its request, driver, pool and device", 0 },
		{ "{\"metadata\": {}}", "claim ns/c: no metadata.uid", 0 },
		{ "[1]", "claim ns/c: the API server's answer is no JSON object", 0 },
		{ "{\"metadata\": {\"uid\": \"u1\"", "claim ns/c: the API server's answer is no JSON object", 0 },
		{ CLAIM("u1", RES("nvidia.ocidec.io", "n1", "gpu-\\u001b[2J"), ""),
		  "claim ns/c: nvidia.ocidec.io has no device gpu-\\x1b[2J", 0 },
	};

	for (size_t i = 0; i < N_CASES(cases); i++) {
		struct dra_result r;
		struct oerr err = { 0 };
		int rc = dra_claim_parse(cases[i].json, strlen(cases[i].json), &cfg, &ref, &r, &err);

		if (cases[i].err)
			CHECK(rc < 0 && err.code == EXIT_USAGE && strcmp(err.msg, cases[i].err) == 0 && !r.v,
			      "claim %zu refused: %s (%s)", i, cases[i].err, rc < 0 ? err.msg : "taken");
		else
			CHECK(rc == 0 && r.n == cases[i].n && strcmp(r.uid, "u1") == 0, "claim %zu: %zu devices of ours (%s)",
			      i, cases[i].n, rc < 0 ? err.msg : "taken");
		dra_result_free(&r);
	}
	/* the first case's mapping: vendor and index */
	struct dra_result r;
	struct oerr err;
	const char *j = cases[0].json;

	CHECK(dra_claim_parse(j, strlen(j), &cfg, &ref, &r, &err) == 0 && r.n == 2 && r.v[0].v == &vs[0] &&
		      r.v[0].index == 1 && r.v[1].v == &vs[1] && r.v[1].index == 0 && strcmp(r.v[1].request, "r") == 0 &&
		      strcmp(r.v[1].pool, "n1") == 0 && strcmp(r.v[1].device, "demo-0") == 0,
	      "gpu-1 is nvidia's 1, demo-0 demo's 0");
	dra_result_free(&r);
	/* one driver asked: the other's results left out */
	ref.driver = "demo.ocidec.io";
	CHECK(dra_claim_parse(j, strlen(j), &cfg, &ref, &r, &err) == 0 && r.n == 1 && r.v[0].v == &vs[1],
	      "the kubelet's call for demo.ocidec.io: demo's device alone");
	dra_result_free(&r);
	/* no UID asked: any */
	ref.driver = NULL;
	ref.uid = NULL;
	j = cases[4].json;
	CHECK(dra_claim_parse(j, strlen(j), &cfg, &ref, &r, &err) == 0 && r.n == 1, "no UID given: any");
	dra_result_free(&r);
}

static void hosts(void)
{
	static const char text[] =
		"# comment localhost\n"
		"127.0.0.1\tlocalhost api # apiserver\n"
		"::1 ip6-localhost LocalHost\r\n"
		"not-an-address api\n"
		"10.0.0.1\n"
		"   \n"
		"10.96.0.1 kubernetes kubernetes.default.svc #api\n"
		"10.0.0.2 xkubernetes kubernetes.default\n"
		"10.0.0.3 api";  /* no newline at the end */
	static const struct {
		const char *name;
		size_t n;
		const char *first;  /* the first address, as bytes */
		size_t firstlen;
	} cases[] = {
		{ "localhost", 2, "\x7f\0\0\x01", 4 },
		{ "LOCALHOST", 2, "\x7f\0\0\x01", 4 },
		{ "ip6-localhost", 1, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16 },
		{ "api", 2, "\x7f\0\0\x01", 4 },
		{ "kubernetes.default.svc", 1, "\x0a\x60\0\x01", 4 },
		{ "kubernetes", 1, "\x0a\x60\0\x01", 4 },
		{ "apiserver", 0, NULL, 0 },   /* in a comment only */
		{ "comment", 0, NULL, 0 },
		{ "kubernetes.default.sv", 0, NULL, 0 },
		{ "not-an-address", 0, NULL, 0 },
		{ "10.0.0.1", 0, NULL, 0 },
		{ "", 0, NULL, 0 },
	};
	unsigned char addrs[KUBE_HOSTS_MAX][16];
	size_t lens[KUBE_HOSTS_MAX], n;

	for (size_t i = 0; i < N_CASES(cases); i++) {
		n = kube_hosts_lookup(text, cases[i].name, addrs, lens, KUBE_HOSTS_MAX);
		CHECK(n == cases[i].n && (!n || (lens[0] == cases[i].firstlen &&
						 memcmp(addrs[0], cases[i].first, lens[0]) == 0)),
		      "hosts: '%s': %zu addresses, the first of %zu bytes", cases[i].name, cases[i].n, cases[i].firstlen);
	}
	/* api: 127.0.0.1 and the last line's 10.0.0.3, in the file's order */
	n = kube_hosts_lookup(text, "api", addrs, lens, KUBE_HOSTS_MAX);
	CHECK(n == 2 && lens[1] == 4 && memcmp(addrs[1], "\x0a\0\0\x03", 4) == 0, "hosts: api's second address is 10.0.0.3");
	/* at most MAX */
	n = kube_hosts_lookup("1.1.1.1 a\n2.2.2.2 a\n3.3.3.3 a\n", "a", addrs, lens, 2);
	CHECK(n == 2 && memcmp(addrs[1], "\x02\x02\x02\x02", 4) == 0, "hosts: at most MAX addresses, the first ones");
	/* a word too long to be a name is skipped, the line's later names still read */
	char long_line[600];
	memset(long_line, 'x', sizeof(long_line));
	memcpy(long_line, "1.2.3.4 ", 8);
	strcpy(long_line + 500, " kube\n");
	n = kube_hosts_lookup(long_line, "kube", addrs, lens, KUBE_HOSTS_MAX);
	CHECK(n == 1 && memcmp(addrs[0], "\x01\x02\x03\x04", 4) == 0, "hosts: a name after a word too long is found");
	CHECK(kube_hosts_lookup("", "a", addrs, lens, KUBE_HOSTS_MAX) == 0, "hosts: an empty file names nothing");
}

int main(void)
{
	hosts();
	labels();
	semvers();
	names();
	claims();
	return done();
}
