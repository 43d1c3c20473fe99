/* require.c: see require.h. */
#include "pipeline/require.h"

#include "base/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = strtoul(a, (char **)&a, 10), y = strtoul(b, (char **)&b, 10);

		if (x != y)
			return x < y ? -1 : 1;
		a += *a == '.';
		b += *b == '.';
		if ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b)))
			break;
	}
	return 0;
}

static bool version_valid(const char *s, size_t n)
{
	bool digit = false;

	for (size_t i = 0; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			digit = true;
		else if (s[i] != '.' || !digit || i + 1 == n)
			return false;
		else
			digit = false;
	}
	return n && n < 32;
}

/* One factor, S (N bytes): 1 holds, 0 does not, 2 a property left out, -1
 * malformed or -2 a value unknown (*WHY) */
static int factor(const char *s, size_t n, const struct require_props *p, char **why)
{
	static const char *const ops[] = { "!=", "<=", ">=", "==", "<", ">", "=" };
	size_t name = 0, op = 0;
	const char *value = NULL;
	char ver[32];
	int c;

	while (name < n && (isalnum((unsigned char)s[name]) || s[name] == '_'))
		name++;
	for (size_t i = 0; name && i < ARRAY_SIZE(ops) && !op; i++)
		if (n - name >= strlen(ops[i]) && memcmp(s + name, ops[i], strlen(ops[i])) == 0)
			op = i + 1;
	if (name == 4 && memcmp(s, "cuda", 4) == 0)
		value = p->cuda;
	else if (name == 6 && memcmp(s, "driver", 6) == 0)
		value = p->driver;
	else if (op && n > name + strlen(ops[op - 1]))
		return 2;  /* a property only NVML knows (arch, brand): left out */
	if (!op || !version_valid(s + name + strlen(ops[op - 1]), n - name - strlen(ops[op - 1]))) {
		*why = xasprintf("'%.*s' is no condition (PROPERTY OP VERSION, as cuda>=12.0)", (int)(n > 64 ? 64 : n), s);
		return -1;
	}
	if (!value) {
		*why = xasprintf("the driver's %.*s version is not known here", (int)name, s);
		return -2;
	}
	memcpy(ver, s + name + strlen(ops[op - 1]), n - name - strlen(ops[op - 1]));
	ver[n - name - strlen(ops[op - 1])] = '\0';
	c = version_cmp(value, ver);
	switch (op) {
	case 1: return c != 0;
	case 2: return c <= 0;
	case 3: return c >= 0;
	case 4: case 7: return c == 0;
	case 5: return c < 0;
	default: return c > 0;
	}
}

int require_eval(const char *expr, const struct require_props *p, char **why)
{
	const char *s = expr;
	bool any_term = false;
	char *unknown = NULL;

	*why = NULL;
	for (;;) {
		bool counted = false, is_false = false, is_unknown = false;
		size_t tl;

		s += strspn(s, " \t");
		tl = strcspn(s, " \t");
		if (!tl)
			break;
		/* a term: every factor it has that the hook can tell holds */
		for (const char *f = s, *end = s + tl; f < end;) {
			const char *comma = memchr(f, ',', (size_t)(end - f));
			size_t fl = (size_t)((comma ? comma : end) - f);
			char *w = NULL;
			int r = fl ? factor(f, fl, p, &w) : 2;

			if (r == -1) {
				free(unknown);
				*why = w;
				return -1;  /* malformed */
			}
			if (r == -2) {
				free(unknown);
				unknown = w;
				is_unknown = true;
			} else if (r != 2) {
				counted = true;
				is_false |= r == 0;
			}
			f += fl + 1;
		}
		s += tl;
		if (!counted && !is_unknown)
			continue;  /* nothing here the hook can tell */
		any_term = true;
		if (!is_false && !is_unknown) {
			free(unknown);
			return 1;
		}
	}
	if (!any_term) {
		free(unknown);
		return 1;
	}
	if (unknown) {
		*why = unknown;
		return -1;
	}
	*why = xstrdup(expr);
	return 0;
}

/* The last valid version after the mark that starts in [FROM, TO) */
static char *last_in(const char *buf, size_t len, size_t from, size_t to)
{
	static const char mark[] = "Cuda compilation tools, release ";
	const char *p = buf + from, *stop = buf + to, *end = buf + len;
	char *found = NULL;

	/* a match must start before STOP: no chunk reads past the next one's mark */
	while (p < stop && (p = mem_find(p, (size_t)(stop - p) + sizeof(mark) - 1 > (size_t)(end - p) ? (size_t)(end - p)
					  : (size_t)(stop - p) + sizeof(mark) - 1, mark, sizeof(mark) - 1)) && p < stop) {
		const char *v = p + sizeof(mark) - 1, *e = v;

		while (e < end && e - v < 32 && (isdigit((unsigned char)*e) || *e == '.'))
			e++;
		if (e < end && *e == ',' && version_valid(v, (size_t)(e - v))) {
			free(found);
			found = xstrndup(v, (size_t)(e - v));
		}
		p = v;
	}
	return found;
}

char *require_cuda_version(const char *buf, size_t len)
{
	/* from the end, a MiB at a time: libcuda keeps its compiler's strings
	 * near the end of .rodata (1.8 MB before the end of 535's 29 MB), so
	 * a container with requirements reads a little, not all of it; the
	 * result is the last valid mark's either way */
	const size_t chunk = 1 << 20;
	size_t to = len;

	while (to > 0) {
		size_t from = to > chunk ? to - chunk : 0;
		char *v = last_in(buf, len, from, to);

		if (v)
			return v;
		to = from;
	}
	return NULL;
}
