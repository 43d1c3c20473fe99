/* Unit tests: formats/grpc.c's pure parts (gRPC's message prefix, the
 * grpc-message percent-encoding) and engines/draplugin.c's driver names. */
#include "formats/grpc.h"
#include "engines/draplugin.h"

#include "test/unit/tap.h"

#include <string.h>

static void parse(const char *what, const uint8_t *p, size_t n, size_t max, int want, size_t want_len)
{
	const uint8_t *msg = NULL;
	size_t len = 0;
	const char *why = "";
	int got = grpc_unary_parse(p, n, max, &msg, &len, &why);

	CHECK(got == want && (got != GRPC_OK || (msg == p + GRPC_PREFIX && len == want_len)),
	      "%s: status %d (want %d), %zu bytes, %s", what, got, want, len, got == GRPC_OK ? "ok" : why);
}

int main(void)
{
	static const uint8_t ok3[] = { 0, 0, 0, 0, 3, 'a', 'b', 'c' }, empty[] = { 0, 0, 0, 0, 0 },
			     comp[] = { 1, 0, 0, 0, 1, 'x' }, flag2[] = { 2, 0, 0, 0, 0 },
			     short_[] = { 0, 0, 0, 0, 4, 'a' }, two[] = { 0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0 },
			     huge[] = { 0, 0xff, 0xff, 0xff, 0xff }, cut[] = { 0, 0, 0 };
	static const struct {
		const char *in, *out;
		size_t n;
	} enc[] = {
		{ "plain text: ok", "plain text: ok", 64 },
		{ "100% sure", "100%25 sure", 64 },
		{ "line\nbreak\t", "line%0Abreak%09", 64 },
		{ "\x7f\xc3\xa9", "%7F%C3%A9", 64 },
		{ "", "", 64 },
		{ "abcdef", "abc", 4 },          /* cut, NUL-terminated */
		{ "ab%cd", "ab", 5 },            /* an escape never split */
	};
	static const struct {
		const char *name;
		bool ok;
	} names[] = {
		{ "gpu.nvidia.ocidec.io", true }, { "a", true }, { "a-b.c0", true }, { "0.9", true },
		{ "", false }, { "Gpu.io", false }, { "-a.io", false }, { "a-.io", false }, { "a..io", false },
		{ ".a", false }, { "a.", false }, { "a_b", false }, { "a/b", false }, { "a.-b", false },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io", false }, /* a label of 64 */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io", true },  /* of 63 */
	};
	uint8_t pre[GRPC_PREFIX];
	char out[64];

	parse("three bytes", ok3, sizeof(ok3), 100, GRPC_OK, 3);
	parse("an empty message", empty, sizeof(empty), 100, GRPC_OK, 0);
	parse("at the bound", ok3, sizeof(ok3), 3, GRPC_OK, 3);
	parse("over the bound", ok3, sizeof(ok3), 2, GRPC_RESOURCE_EXHAUSTED, 0);
	parse("a length of 4 GiB - 1", huge, sizeof(huge), GRPC_MSG_MAX, GRPC_RESOURCE_EXHAUSTED, 0);
	parse("compressed", comp, sizeof(comp), 100, GRPC_UNIMPLEMENTED, 0);
	parse("flag 2", flag2, sizeof(flag2), 100, GRPC_INVALID_ARGUMENT, 0);
	parse("cut short", short_, sizeof(short_), 100, GRPC_INVALID_ARGUMENT, 0);
	parse("two messages", two, sizeof(two), 100, GRPC_INVALID_ARGUMENT, 0);
	parse("a prefix cut short", cut, sizeof(cut), 100, GRPC_INVALID_ARGUMENT, 0);
	parse("nothing", cut, 0, 100, GRPC_INVALID_ARGUMENT, 0);

	grpc_prefix_put(pre, 0x01020304);
	CHECK(memcmp(pre, "\0\1\2\3\4", 5) == 0, "prefix: flag 0, the length big-endian");
	grpc_prefix_put(pre, 3);
	parse("a prefix put, read back", (const uint8_t[]){ pre[0], pre[1], pre[2], pre[3], pre[4], 'a', 'b', 'c' }, 8,
	      100, GRPC_OK, 3);

	for (size_t i = 0; i < N_CASES(enc); i++) {
		size_t n = grpc_percent_encode(enc[i].in, out, enc[i].n);

		CHECK(strcmp(out, enc[i].out) == 0 && n == strlen(out), "percent-encode \"%s\" in %zu: \"%s\"",
		      enc[i].in, enc[i].n, out);
	}
	CHECK(grpc_percent_encode("x", out, 0) == 0, "percent-encode into nothing: nothing written");

	for (size_t i = 0; i < N_CASES(names); i++)
		CHECK(dra_driver_name_ok(names[i].name) == names[i].ok, "driver name \"%s\": %s", names[i].name,
		      names[i].ok ? "taken" : "refused");
	{
		char long_name[300];

		memset(long_name, 'a', sizeof(long_name) - 1);
		long_name[sizeof(long_name) - 1] = '\0';
		for (size_t i = 60; i < sizeof(long_name) - 1; i += 61)
			long_name[i] = '.';
		CHECK(!dra_driver_name_ok(long_name), "a driver name of 299 bytes (labels of 60): refused");
		long_name[253] = '\0';
		CHECK(dra_driver_name_ok(long_name) == (long_name[252] != '.'), "one of 253: taken");
	}
	return done();
}
