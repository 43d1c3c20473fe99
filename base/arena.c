/* arena.c: a run's first small allocations, from a static arena.
 *
 * Every container on a host execs the hook, and most ask for nothing: that
 * run reads the state and config.json and allocates a few kilobytes. musl's
 * malloc starts each run with brk, mmap and munmap calls and pages it reads
 * before it writes (two faults each), which cost more than the rest of the
 * idle path. The static binary is therefore linked with
 * -Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc (Makefile,
 * OCIDEC_ARENA): an allocation of at most ARENA_OBJ_MAX bytes comes from
 * one mapping of ARENA_SIZE bytes while they last (one system call a run; a
 * fault only for a page first written, once), anything else from musl's
 * malloc. musl's own calloc (reached only when the arena cannot serve that
 * size) may call malloc, which the wrap sends here again: the arena refuses
 * the same size again, and musl's allocator answers, as its calloc expects.
 *
 * A bump allocator, on purpose: nothing in the arena is ever handed out
 * twice (free is a no-op there; only the newest block may grow in place),
 * and what lies past the last block was never written, so there is no free list for a heap overflow or a double free to
 * corrupt, and a dangling pointer never aliases a newer object. The one
 * header (the block's size, before it) is checked against the arena's
 * bounds before realloc copies by it. The few kilobytes a long run leaves
 * unreused are bounded by ARENA_SIZE. The sanitizer build and the unit
 * layer keep the C library's allocator (no wrapping); test/unit/arena.c
 * tests this file on its own.
 */
#ifdef OCIDEC_ARENA
#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { ARENA_SIZE = 64 * 1024, ARENA_OBJ_MAX = 16 * 1024, ARENA_ALIGN = 16 };

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* The arena: ARENA_SIZE bytes mapped at the first allocation, where the
 * kernel's address randomization puts them (a static buffer would lie at
 * one address in every run of this non-PIE binary), its bookkeeping here
 * in .bss, away from it: no overrun of a block reaches it */
static unsigned char *arena;
static enum { ARENA_UNMAPPED, ARENA_MAPPED, ARENA_NONE } arena_state;
static size_t arena_top;   /* the first free byte */
static size_t arena_last;  /* the newest block's header */

/* Is the arena there (mapped now if it is not yet)? */
static bool arena_ready(void)
{
	if (arena_state == ARENA_UNMAPPED) {
		void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		arena_state = p == MAP_FAILED ? ARENA_NONE : ARENA_MAPPED;
		arena = p == MAP_FAILED ? NULL : p;
	}
	if (arena_top > ARENA_SIZE)
		abort();
	return arena_state == ARENA_MAPPED;
}

static bool in_arena(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)arena;

	return arena && a >= lo && a < lo + ARENA_SIZE;
}

/* The usable size of block P (in the arena); a header this file did not
 * write (a heap overflow ran over it) stops the run */
static size_t block_size(const unsigned char *p)
{
	size_t off = (size_t)(p - arena), n;

	if (off < ARENA_ALIGN || off % ARENA_ALIGN || off > arena_top)
		abort();
	memcpy(&n, p - ARENA_ALIGN, sizeof(n));
	if (n > arena_top - off || n % ARENA_ALIGN)
		abort();
	return n;
}

static size_t round_up(size_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

/* N bytes from the arena, or NULL when they do not fit */
static void *arena_take(size_t n)
{
	size_t sz, need;
	unsigned char *p;

	if (n > ARENA_OBJ_MAX || !arena_ready())
		return NULL;
	sz = round_up(n ? n : 1);
	need = sz + ARENA_ALIGN;
	if (need > ARENA_SIZE - arena_top)
		return NULL;
	p = arena + arena_top + ARENA_ALIGN;
	memcpy(p - ARENA_ALIGN, &sz, sizeof(sz));
	arena_last = arena_top;
	arena_top += need;
	return p;
}

void *__wrap_malloc(size_t n)
{
	void *p = arena_take(n);

	return p ? p : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	/* the arena past its last block was never handed out: still zero */
	p = arena_take(n * size);
	return p ? p : __real_calloc(n, size);
}

void __wrap_free(void *p)
{
	if (p && !in_arena(p))
		__real_free(p);
}

void *__wrap_realloc(void *p, size_t n)
{
	unsigned char *b = p, *q;
	size_t old, off;

	if (!p)
		return __wrap_malloc(n);
	if (!in_arena(p))
		return __real_realloc(p, n);
	old = block_size(b);
	off = (size_t)(b - arena);
	if (n <= old)
		return p;
	/* the newest block grows in place (arena_top never goes back: what
	 * lies past it was never handed out, and calloc relies on that) */
	if (off == arena_last + ARENA_ALIGN && n <= ARENA_OBJ_MAX &&
	    round_up(n) <= ARENA_SIZE - off) {
		size_t sz = round_up(n);

		memcpy(b - ARENA_ALIGN, &sz, sizeof(sz));
		arena_top = off + sz;
		return p;
	}
	if (!(q = __wrap_malloc(n)))
		return NULL;
	memcpy(q, p, old < n ? old : n);
	return q;
}
#endif
