/* ere.c: see ere.h.
 *
 * The expression is compiled into a Thompson NFA (states in one array,
 * linked by index; a fragment's dangling exits are a list threaded through
 * the exits themselves), then run over the string one byte at a time with
 * the set of states it can be in: time linear in the string's length times
 * the expression's. A bounded repetition "X{N,M}" is X parsed again for
 * each copy (no state is ever copied).
 */
#include "formats/ere.h"

#include "base/util.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { DUP_MAX = 255, MAX_STATES = 100000 };

enum op { O_CHAR, O_ANY, O_SET, O_SPLIT, O_EPS, O_BOL, O_EOL, O_MATCH };

struct state {
	unsigned char op, c;
	int set;        /* O_SET: index into sets */
	int out, out1;  /* next states; -1: none (an exit to patch) */
};

struct nfa {
	struct state *st;
	size_t n, cap;
	uint8_t (*sets)[32];
	size_t nsets, capsets;
	const char *p;  /* the parser's position */
	bool bad;
};

/* A fragment: its start, and its exits as a list of slots (state * 2 +
 * which exit), each holding the next slot's number, -1 at the end; TAIL
 * the list's last slot (joining two lists costs one step, not a walk) */
struct frag {
	int start, exits, tail;
};

static int add(struct nfa *a, enum op op, int out, int out1)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct state *st = a->n >= MAX_STATES ? NULL : realloc(a->st, cap * sizeof(*st));

		if (!st) {
			a->bad = true;
			return -1;
		}
		a->st = st;
		a->cap = cap;
	}
	a->st[a->n] = (struct state){ .op = (unsigned char)op, .out = out, .out1 = out1 };
	return (int)a->n++;
}

static int *slot(struct nfa *a, int s)
{
	return s % 2 ? &a->st[s / 2].out1 : &a->st[s / 2].out;
}

static void patch(struct nfa *a, int exits, int to)
{
	while (exits >= 0) {
		int *p = slot(a, exits);

		exits = *p;
		*p = to;
	}
}

/* F's exits and G's, one list (F's start) */
static struct frag join(struct nfa *a, struct frag f, struct frag g)
{
	if (f.exits < 0)
		return (struct frag){ f.start, g.exits, g.tail };
	if (g.exits >= 0) {
		*slot(a, f.tail) = g.exits;
		f.tail = g.tail;
	}
	return f;
}

/* A state with one open exit, as a fragment */
static struct frag single(struct nfa *a, enum op op)
{
	int s = add(a, op, -1, -1);

	return (struct frag){ s, s < 0 ? -1 : s * 2, s < 0 ? -1 : s * 2 };
}

static struct frag concat(struct nfa *a, struct frag f, struct frag g)
{
	patch(a, f.exits, g.start);
	return (struct frag){ f.start, g.exits, g.tail };
}

static struct frag star(struct nfa *a, struct frag f)
{
	int s = add(a, O_SPLIT, f.start, -1);

	if (s < 0)
		return f;
	patch(a, f.exits, s);
	return (struct frag){ s, s * 2 + 1, s * 2 + 1 };
}

static struct frag plus(struct nfa *a, struct frag f)
{
	int s = add(a, O_SPLIT, f.start, -1);

	if (s < 0)
		return f;
	patch(a, f.exits, s);
	return (struct frag){ f.start, s * 2 + 1, s * 2 + 1 };
}

static struct frag quest(struct nfa *a, struct frag f)
{
	int s = add(a, O_SPLIT, f.start, -1);

	if (s < 0)
		return f;
	return join(a, (struct frag){ s, f.exits, f.tail }, (struct frag){ s, s * 2 + 1, s * 2 + 1 });
}

static struct frag parse_alt(struct nfa *a);
static struct frag set_state(struct nfa *a, uint8_t *set);

/* "[:NAME:]" at P (past "[:"): the class's bytes into SET; the end */
static const char *bracket_class(const char *p, uint8_t *set, bool *bad)
{
	const char *end = strstr(p, ":]");
	int (*is)(int) = end ? char_class(p, (size_t)(end - p)) : NULL;

	if (!is) {
		*bad = true;
		return p;
	}
	for (int c = 1; c < 128; c++)  /* (the C locale) */
		if (is(c))
			set[c / 8] |= (uint8_t)(1 << (c % 8));
	return end + 2;
}

/* A bracket expression at a->p (past '['), as an O_SET state */
static struct frag bracket(struct nfa *a)
{
	uint8_t set[32] = { 0 };
	const char *p = a->p;
	bool neg = false, first = true;

	if (*p == '^') {
		neg = true;
		p++;
	}
	while (*p && (first || *p != ']') && !a->bad) {
		unsigned lo, hi;

		first = false;
		if (p[0] == '[' && p[1] == ':') {
			p = bracket_class(p + 2, set, &a->bad);
			continue;
		}
		if (p[0] == '[' && (p[1] == '.' || p[1] == '=') && p[2] && p[3] == p[1] && p[4] == ']') {
			lo = (unsigned char)p[2];  /* a collating element or an equivalence class of one byte */
			p += 5;
		} else {
			lo = (unsigned char)*p++;
		}
		hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			hi = (unsigned char)p[1];
			p += 2;
			if (hi < lo)
				a->bad = true;  /* (regcomp: REG_ERANGE) */
		}
		for (unsigned c = lo; c <= hi; c++)
			set[c / 8] |= (uint8_t)(1 << (c % 8));
	}
	if (*p != ']' || a->bad) {
		a->bad = true;
		return (struct frag){ -1, -1, -1 };
	}
	a->p = p + 1;
	if (neg)
		for (size_t i = 0; i < sizeof(set); i++)
			set[i] = (uint8_t)~set[i];
	return set_state(a, set);
}

/* SET (256 bits) as an O_SET state */
static struct frag set_state(struct nfa *a, uint8_t *set)
{
	struct frag f;

	set[0] &= (uint8_t)~1;  /* never the NUL that ends the string */
	if (a->nsets == a->capsets) {
		size_t cap = a->capsets ? a->capsets * 2 : 8;
		uint8_t(*sets)[32] = realloc(a->sets, cap * sizeof(*sets));

		if (!sets) {
			a->bad = true;
			return (struct frag){ -1, -1, -1 };
		}
		a->sets = sets;
		a->capsets = cap;
	}
	memcpy(a->sets[a->nsets], set, sizeof(*a->sets));
	f = single(a, O_SET);
	if (f.start >= 0)
		a->st[f.start].set = (int)a->nsets++;
	return f;
}

static struct frag parse_atom(struct nfa *a)
{
	char c = *a->p;
	struct frag f;

	switch (c) {
	case '(':
		a->p++;
		f = parse_alt(a);
		if (*a->p != ')')
			a->bad = true;
		else
			a->p++;
		return f;
	case '[': a->p++; return bracket(a);
	case '.': a->p++; return single(a, O_ANY);
	case '^': a->p++; return single(a, O_BOL);
	case '$': a->p++; return single(a, O_EOL);
	case '*': case '+': case '?': case '{': case '\0':
		a->bad = true;  /* a repetition of nothing */
		return (struct frag){ -1, -1, -1 };
	case '\\':
		c = a->p[1];
		if (strchr("dDwWsS", c) && c) {
			/* the classes regcomp (musl's) and PCRE read: \d \w \s, and
			 * their complements */
			uint8_t set[32] = { 0 };
			int (*is)(int) = tolower(c) == 'd' ? isdigit : tolower(c) == 's' ? isspace : isalnum;

			for (int b = 1; b < 256; b++)
				if (b < 128 && (is(b) || (tolower(c) == 'w' && b == '_')))
					set[b / 8] |= (uint8_t)(1 << (b % 8));
			if (isupper((unsigned char)c))
				for (size_t i = 0; i < sizeof(set); i++)
					set[i] = (uint8_t)~set[i];
			a->p += 2;
			return set_state(a, set);
		}
		if (!c || isalnum((unsigned char)c) || strchr("<>`'", c)) {
			/* an assertion (\b, \<) or an escape others read otherwise:
			 * refused, as an expression this cannot read the same */
			a->bad = true;
			return (struct frag){ -1, -1, -1 };
		}
		a->p++;
		/* fall through */
	default:
		a->p++;
		f = single(a, O_CHAR);
		if (f.start >= 0)
			a->st[f.start].c = (unsigned char)c;
		return f;
	}
}

/* "{N}", "{N,}" or "{N,M}" at a->p: N and M (-1: no bound); false when
 * it is not one */
static bool bounds(struct nfa *a, int *n, int *m)
{
	const char *p = a->p + 1;
	char *end;
	long lo, hi;

	if (!isdigit((unsigned char)*p))
		return false;
	lo = strtol(p, &end, 10);
	hi = lo;
	if (*end == ',') {
		p = end + 1;
		hi = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
		if (hi == -1)
			end = (char *)p;
	}
	if (*end != '}' || lo > DUP_MAX || hi > DUP_MAX || (hi >= 0 && hi < lo))
		return false;
	*n = (int)lo;
	*m = (int)hi;
	a->p = end + 1;
	return true;
}

/* An atom and its repetitions, the repetitions read only up to STOP when
 * it is not NULL (a copy for a bounded repetition) */
static struct frag parse_repeat(struct nfa *a, const char *stop)
{
	const char *from = a->p;
	struct frag f = parse_atom(a);

	while (!a->bad && (!stop || a->p < stop)) {
		const char *here = a->p;
		int n, m;

		if (*a->p == '*' || *a->p == '+' || *a->p == '?') {
			f = *a->p == '*' ? star(a, f) : *a->p == '+' ? plus(a, f) : quest(a, f);
			a->p++;
			continue;
		}
		if (*a->p != '{')
			break;
		if (!bounds(a, &n, &m)) {
			a->bad = true;
			break;
		}
		{
			const char *after = a->p;
			/* each further copy: FROM..HERE parsed again */
#define COPY() (a->p = from, parse_repeat(a, here))
			struct frag r;

			if (n == 0) {
				r = single(a, O_EPS);
				if (m != 0)
					r = concat(a, r, m < 0 ? star(a, f) : quest(a, f));
				for (int i = 1; m > 0 && i < m && !a->bad; i++)
					r = concat(a, r, quest(a, COPY()));
			} else {
				r = f;
				for (int i = 1; i < n && !a->bad; i++)
					r = concat(a, r, COPY());
				if (m < 0 && !a->bad)
					r = concat(a, r, star(a, COPY()));
				for (int i = n; m > 0 && i < m && !a->bad; i++)
					r = concat(a, r, quest(a, COPY()));
			}
#undef COPY
			f = r;
			a->p = after;
		}
	}
	return f;
}

static struct frag parse_concat(struct nfa *a)
{
	struct frag f = { -1, -1, -1 };
	bool any = false;

	while (*a->p && *a->p != '|' && *a->p != ')' && !a->bad) {
		struct frag g = parse_repeat(a, NULL);

		f = any ? concat(a, f, g) : g;
		any = true;
	}
	return any ? f : single(a, O_EPS);
}

static struct frag parse_alt(struct nfa *a)
{
	struct frag f = parse_concat(a);

	while (*a->p == '|' && !a->bad) {
		struct frag g;
		int s;

		a->p++;
		g = parse_concat(a);
		s = add(a, O_SPLIT, f.start, g.start);
		if (s < 0)
			break;
		f = join(a, (struct frag){ s, f.exits, f.tail }, g);
	}
	return f;
}

/* ---- the run ---- */

struct run {
	const struct nfa *a;
	int *list, *stack;
	size_t n;
	unsigned *mark, gen;
};

/* State S and what it reaches without a byte, at POS of a string of LEN,
 * into the run's list */
static void reach(struct run *r, int s, size_t pos, size_t len)
{
	size_t top = 0;

	r->stack[top++] = s;
	while (top) {
		const struct state *st;

		s = r->stack[--top];
		if (s < 0 || r->mark[s] == r->gen)
			continue;
		r->mark[s] = r->gen;
		st = &r->a->st[s];
		switch (st->op) {
		case O_SPLIT:
			r->stack[top++] = st->out1;
			r->stack[top++] = st->out;
			break;
		case O_EPS: r->stack[top++] = st->out; break;
		case O_BOL: if (pos == 0) r->stack[top++] = st->out; break;
		case O_EOL: if (pos == len) r->stack[top++] = st->out; break;
		default: r->list[r->n++] = s;
		}
	}
}

static bool takes(const struct nfa *a, const struct state *st, unsigned char c)
{
	switch (st->op) {
	case O_CHAR: return st->c == c;
	case O_ANY: return true;
	case O_SET: return a->sets[st->set][c / 8] & (1 << (c % 8));
	default: return false;
	}
}

int ere_search(const char *pattern, const char *s)
{
	struct nfa a = { .p = pattern };
	struct frag f = parse_alt(&a);
	size_t len = strlen(s);
	struct run cur = { .a = &a }, next = { .a = &a };
	int match = -1, m, head, tail;

	if (*a.p)  /* an unopened ')' */
		a.bad = true;
	/* somewhere in S: any bytes before and after ("(.*)PATTERN(.*)") */
	m = add(&a, O_MATCH, -1, -1);
	head = add(&a, O_SPLIT, f.start, -1);
	tail = add(&a, O_SPLIT, m, -1);
	if (a.bad || tail < 0 || f.start < 0)
		goto out;
	{
		/* (each add may move a.st: its result first, then the store) */
		int any_head = add(&a, O_ANY, head, -1), any_tail = add(&a, O_ANY, tail, -1);

		if (a.bad)
			goto out;
		a.st[head].out1 = any_head;
		a.st[tail].out1 = any_tail;
	}
	patch(&a, f.exits, tail);
	f.start = head;
	cur.list = malloc(a.n * sizeof(int));
	next.list = malloc(a.n * sizeof(int));
	cur.stack = next.stack = malloc(2 * a.n * sizeof(int) + 2 * sizeof(int));
	cur.mark = next.mark = calloc(a.n, sizeof(unsigned));
	if (!cur.list || !next.list || !cur.stack || !cur.mark)
		goto out;
	cur.gen = 1;
	reach(&cur, f.start, 0, len);
	for (size_t i = 0; i < len && cur.n; i++) {
		next.n = 0;
		next.gen = cur.gen + 1;
		for (size_t k = 0; k < cur.n; k++)
			if (takes(&a, &a.st[cur.list[k]], (unsigned char)s[i]))
				reach(&next, a.st[cur.list[k]].out, i + 1, len);
		{
			int *t = cur.list;

			cur.list = next.list;
			next.list = t;
			cur.n = next.n;
			cur.gen = next.gen;
		}
	}
	match = 0;
	for (size_t k = 0; k < cur.n; k++)
		if (a.st[cur.list[k]].op == O_MATCH)
			match = 1;
out:
	free(cur.list);
	free(next.list);
	free(cur.stack);
	free(cur.mark);
	free(a.st);
	free(a.sets);
	return match;
}
