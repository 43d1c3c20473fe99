/* Unit tests: the small text functions that stand where libc's stood or
 * where a mistake would open a path (base/util.c, formats/ere.c,
 * devices/keycache.c): glob_match (fnmatch's answers), ere_search
 * (regexec's), utc_time (gmtime_r's), path_clean_join, path_join_root,
 * has_dot_component, escape_bytes, keycache_walk, utf8_valid, memchr2
 * (a byte loop's answers). */
#include "formats/ere.h"
#include "devices/keycache.h"
#include "base/util.h"
#include "test/unit/tap.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_glob_match(void)
{
	static const struct { const char *pat, *name; bool want; } t[] = {
		{ "*:*:*.*", "0000:03:00.0", true },   /* amd.ini's pci_devices */
		{ "*:*:*.*", "module", false },
		{ "*", ".hidden", false },             /* a leading dot by name only */
		{ ".*", ".hidden", true },
		{ "?hidden", ".hidden", false },
		{ "[.]hidden", ".hidden", false },
		{ "a*", "a.b", true },
		{ "gpu*", "gpu0", true },
		{ "gi*", "gi10", true },
		{ "renderD[0-9]*", "renderD128", true },
		{ "card[!0]", "card1", true },
		{ "card[!0]", "card0", false },
		{ "card[^0]", "card0", false },
		{ "[]a]", "]", true },
		{ "[[:digit:]]x", "7x", true },
		{ "[[:digit:]]x", "ax", false },
		{ "[[:nosuch:]]", "a", false },
		{ "\\*", "*", true },
		{ "\\*", "a", false },
		{ "[ab", "[ab", true },                /* an unclosed '[' is itself */
		{ "*a*b*c*", "xaxbxcx", true },
		{ "*a*b*c*", "xaxcxbx", false },
		{ "", "", true },
		{ "", "a", false },
		{ "**", "", true },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		bool got = glob_match(t[i].pat, t[i].name);
		int ref = fnmatch(t[i].pat, t[i].name, FNM_PERIOD) == 0;

		CHECK(got == t[i].want && (got == ref || t[i].name[0] == '.'),
		      "glob_match(\"%s\", \"%s\") = %d (want %d, fnmatch %d)", t[i].pat, t[i].name, got, t[i].want, ref);
	}
}

static void test_ere_search(void)
{
	/* file_contexts entries, anchored as libselinux anchors them */
	/* (glibc's regcomp reads \d \w \s as the letters: musl's and PCRE's,
	 * which libselinux uses, are the reference there) */
	static const struct { const char *re, *s; int want; } t[] = {
		{ "^/usr/lib(64)?/nvidia/.+\\.so(\\..*)?$", "/usr/lib64/nvidia/libcuda.so.1", 1 },
		{ "^/usr/lib(64)?/nvidia/.+\\.so(\\..*)?$", "/usr/lib64/nvidia/libcuda.a", 0 },
		{ "^/dev/nvidia.*$", "/dev/nvidia0", 1 },
		{ "^/dev/dri/renderD[0-9]+$", "/dev/dri/renderD128", 1 },
		{ "^/dev/dri/renderD[0-9]+$", "/dev/dri/card0", 0 },
		{ "^/etc/selinux/([^/]*/)?policy(/.*)?$", "/etc/selinux/targeted/policy/policy.33", 1 },
		{ "^/opt/(.*/)?bin(/.*)?$", "/opt/a/b/bin/x", 1 },
		{ "^/var/run|/run$", "/var/run/x", 1 },   /* a top-level '|': as libselinux reads it */
		{ "^/var/run|/run$", "/x/run", 1 },
		{ "^a{2,3}$", "aaa", 1 },
		{ "^a{2,3}$", "aaaa", 0 },
		{ "^(ab){0,2}c$", "ababc", 1 },
		{ "^[-\\+]$", "\\", 1 },                /* a '\' in brackets is itself */
		{ "^[[:digit:]]+$", "123", 1 },
		{ "^(a*)*b$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 0 },  /* no backtracking blow-up */
		{ "^/etc/rc\\.d/init\\.d/((audio-entropyd)|(haveged)|(jitterentropy-rngd))$", "/etc/rc.d/init.d/haveged", 1 },
		{ "^/dev/nvidia\\d+$", "/dev/nvidia1", 1 },        /* \\d \\w \\s as musl's regcomp and PCRE */
		{ "^/dev/nvidia\\d+$", "/dev/nvidiadd", 0 },
		{ "^\\w+\\s\\S$", "a_1 x", 1 },
		{ "^\\W$", "a", 0 },
		{ "a\\b", "a", -1 },                              /* an assertion: refused */
		{ "\\<a", "a", -1 },
		{ "(", "x", -1 },
		{ "a)", "a", -1 },   /* (musl refused these, as PCRE does; glibc reads them) */
		{ "*a", "a", -1 },
		{ "a{256}", "a", -1 },
		{ "[[:nosuch:]]", "a", -1 },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		int got = ere_search(t[i].re, t[i].s), ref = -1;
		regex_t re;

		if (regcomp(&re, t[i].re, REG_EXTENDED | REG_NOSUB) == 0) {
			ref = regexec(&re, t[i].s, 0, NULL, 0) == 0;
			regfree(&re);
		}
		CHECK(got == t[i].want && (t[i].want < 0 || ref < 0 || got == ref || strstr(t[i].re, "\\d")),
		      "ere_search(\"%s\", \"%s\") = %d (want %d, regexec %d)",
		      t[i].re, t[i].s, got, t[i].want, ref);
	}
}

/* Expressions of every length up to 300 literals: the state array grows
 * (64, 128, 256...) at every point of the compilation at one of them (a
 * review found a store into the array a realloc had moved) */
static void test_ere_growth(void)
{
	char re[400], s[400];
	bool ok = true;

	for (int n = 1; n <= 300 && ok; n++) {
		memset(re, 'a', (size_t)n);
		memcpy(re + n, "(b|c)$", 7);
		memset(s, 'a', (size_t)n);
		memcpy(s + n, "c", 2);
		ok = ere_search(re, s) == 1 && ere_search(re, s + 1) == 0;
	}
	CHECK(ok, "ere_search: expressions of 1 to 300 literals and a group, as the state array grows");
}

static void test_utc_time(void)
{
	static const long long t[] = {
		0, 1, 59, 86399, 86400, 951782400 /* 2000-02-29 */, 951868800 /* 2000-03-01 */, 1709164800,
		4107542400 /* 2100-03-01 */, 1764115200, 253402300799 /* 9999-12-31 23:59:59 */, -1, -86401,
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		time_t tt = (time_t)t[i];
		struct tm a, b;

		utc_time(t[i], &a);
		gmtime_r(&tt, &b);
		CHECK(a.tm_year == b.tm_year && a.tm_mon == b.tm_mon && a.tm_mday == b.tm_mday && a.tm_hour == b.tm_hour &&
		      a.tm_min == b.tm_min && a.tm_sec == b.tm_sec && a.tm_wday == b.tm_wday && a.tm_yday == b.tm_yday,
		      "utc_time(%lld) = %04d-%02d-%02dT%02d:%02d:%02d wday %d yday %d, as gmtime_r", t[i],
		      a.tm_year + 1900, a.tm_mon + 1, a.tm_mday, a.tm_hour, a.tm_min, a.tm_sec, a.tm_wday, a.tm_yday);
	}
}

static void test_paths(void)
{
	static const struct { const char *base, *path, *want; } clean[] = {
		{ "/b", "rootfs", "/b/rootfs" },
		{ "/b", "/abs", "/abs" },
		{ "/b/", "./x//y/", "/b/x/y" },
		{ "/b", "../../..", "/" },
		{ "/b", "a/../../c", "/c" },
		{ "/", ".", "/" },
	};
	static const struct { const char *root, *path, *want; } join[] = {
		{ "/", "/a", "/a" }, { "/r", "/a", "/r/a" }, { "/r/", "/a", "/r/a" }, { "/r", "a", "/r/a" },
		{ "/r", "//a", "/r/a" },
	};
	static const struct { const char *s; bool want; } dots[] = {
		{ "/a/b", false }, { "/a/../b", true }, { "./a", true }, { "a/.", true }, { "/a/..b", false },
		{ "/a/.b/", false }, { "..", true },
	};
	char out[64];

	for (size_t i = 0; i < N_CASES(clean); i++) {
		char *got = path_clean_join(clean[i].base, clean[i].path);

		CHECK(strcmp(got, clean[i].want) == 0, "path_clean_join(\"%s\", \"%s\") = \"%s\"", clean[i].base,
		      clean[i].path, got);
		free(got);
	}
	for (size_t i = 0; i < N_CASES(join); i++) {
		char *got = path_join_root(join[i].root, join[i].path);

		CHECK(strcmp(got, join[i].want) == 0, "path_join_root(\"%s\", \"%s\") = \"%s\"", join[i].root,
		      join[i].path, got);
		free(got);
	}
	for (size_t i = 0; i < N_CASES(dots); i++)
		CHECK(has_dot_component(dots[i].s) == dots[i].want, "has_dot_component(\"%s\") = %d", dots[i].s,
		      !dots[i].want);
	CHECK(strcmp(escape_bytes("a\nb\\c\x1b", out, sizeof(out)), "a\\x0ab\\\\c\\x1b") == 0,
	      "escape_bytes: a newline, a backslash and an escape forge nothing (\"%s\")", out);
}

static int count(char kind, const struct keycache_stamp *st, const char *s, size_t n, void *arg)
{
	(void)st, (void)s, (void)n;
	((int *)arg)[kind == 'd' ? 0 : kind == 'f' ? 1 : 2]++;
	return 0;
}

/* memchr2 against a byte loop: every length to 40 and every offset of
 * the two bytes (first, second, both, neither), with bytes around them
 * that are one off (the borrow of the eight-at-a-time test), and the
 * lengths the word loop leaves a tail of */
static const char *naive2(const char *p, size_t n, char a, char b)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] == a || p[i] == b)
			return p + i;
	return NULL;
}

static void test_memchr2(void)
{
	char buf[48];
	size_t bad = 0, runs = 0;
	static const char fill[] = { 'x', '"' + 1, '"' - 1, '\\' + 1, 0x01, (char)0x80, (char)0xa2, 0 };

	for (size_t f = 0; f < sizeof(fill); f++)
		for (size_t n = 0; n <= 40; n++)
			for (size_t i = 0; i <= n; i++)
				for (size_t j = 0; j <= n; j++) {
					memset(buf, fill[f], sizeof(buf));
					if (i < n)
						buf[i] = '"';
					if (j < n)
						buf[j] = '\\';
					runs++;
					bad += memchr2(buf, n, '"', '\\') != naive2(buf, n, '"', '\\') ||
					       memchr2(buf + 1, n ? n - 1 : 0, '\\', '\\') != naive2(buf + 1, n ? n - 1 : 0, '\\', '\\');
				}
	CHECK(bad == 0, "memchr2 as a byte loop: %zu of %zu cases differ", bad, runs);
}

static void test_keycache_walk(void)
{
	static const struct { const char *text; int d, f, k; } t[] = {
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nf 1 3 3 4 5 6 7 a.ini\nf 1 4 3 4 5 6 7 b.ini\nk OCI_A\nend\n", 1, 2, 1 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nend\n", 1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk OCI_A\n", -1, 0, 0 },                 /* no end: cut at a line */
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nend\nk OCI_B\n", -1, 0, 0 },          /* after the end */
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nf 1 3 3 4 5 6 7 b.ini\nf 1 4 3 4 5 6 7 a.ini\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nf 1 3 3 4 5 6 7 ../x.ini\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk OCI_A", -1, 0, 0 },     /* cut */
		{ KEYCACHE_MAGIC "k OCI_A\nend\n", -1, 0, 0 },              /* no directory */
		{ "ocidec activation keys 1\nd 1 2 3 4 5 6 7\nend\n", -1, 0, 0 },  /* another format */
		{ "ocidec activation keys 2 0.0.0-other\nd 1 2 3 4 5 6 7\nend\n", -1, 0, 0 },  /* another version's */
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 -7\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk OCI_A\nf 1 3 3 4 5 6 7 a.ini\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk \nend\n", -1, 0, 0 },
		/* the numbers: twenty digits up to the largest, not one more */
		{ KEYCACHE_MAGIC "d 1 18446744073709551615 3 4 5 6 7\nend\n", 1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 18446744073709551616 3 4 5 6 7\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 99999999999999999999 3 4 5 6 7\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 000000000000000000001 3 4 5 6 7\nend\n", -1, 0, 0 },
		{ KEYCACHE_MAGIC "d 1 1234567890123456789 3 4 5 6 7\nend\n", 1, 0, 0 },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		char *text = strdup(t[i].text);
		int n[3] = { 0 }, r = keycache_walk(text, strlen(text), count, n);

		if (t[i].d < 0)
			CHECK(r == -1, "keycache_walk refuses case %zu", i);
		else
			CHECK(r == 0 && n[0] == t[i].d && n[1] == t[i].f && n[2] == t[i].k,
			      "keycache_walk case %zu: %d directory, %d files, %d keys", i, n[0], n[1], n[2]);
		free(text);
	}
	{  /* a NUL in a line: no index */
		char text[] = KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk OCI\0A\nend\n";
		char whole[] = KEYCACHE_MAGIC "d 1 2 3 4 5 6 7\nk OCI_A\nend\n";
		int n[3] = { 0 };

		CHECK(keycache_walk(text, sizeof(text) - 1, count, n) == -1 &&
		      keycache_walk(whole, sizeof(whole) - 1, count, n) == 0, "keycache_walk refuses a NUL in a line");
	}
}

static void test_utf8_valid(void)
{
	static const struct { const char *s; bool want; } t[] = {
		{ "", true }, { "/usr/lib/libcuda.so.1", true },
		{ "caf\xc3\xa9", true },                 /* U+00E9 */
		{ "\xe2\x82\xac", true },               /* U+20AC */
		{ "\xf0\x9f\x98\x80", true },           /* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", true },           /* U+10FFFF */
		{ "/non\xff" "ex", false },
		{ "\xc0\xaf", false },                   /* overlong '/' */
		{ "\xe0\x80\xaf", false },               /* overlong */
		{ "\xed\xa0\x80", false },               /* a surrogate */
		{ "\xf4\x90\x80\x80", false },           /* past U+10FFFF */
		{ "\xc3", false },                       /* cut short */
		{ "\xe2\x82", false },
		{ "\x80", false },                       /* a continuation alone */
	};

	for (size_t i = 0; i < N_CASES(t); i++)
		CHECK(utf8_valid(t[i].s) == t[i].want, "utf8_valid case %zu: %s", i, t[i].want ? "valid" : "refused");
}

int main(void)
{
	test_utf8_valid();
	test_glob_match();
	test_ere_search();
	test_ere_growth();
	test_utc_time();
	test_paths();
	test_keycache_walk();
	test_memchr2();
	return done();
}
