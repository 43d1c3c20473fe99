/* Unit tests: base/arena.c, the static build's first allocations, here
 * on their own: this program defines the __real_* functions the linker's
 * --wrap gives the static build (the C library's, counted) and includes the
 * file with OCIDEC_ARENA set. */
#define OCIDEC_ARENA 1
#include "base/arena.c"

#include "test/unit/tap.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int real_mallocs, real_callocs, real_reallocs, real_frees;

void *__real_malloc(size_t n) { real_mallocs++; return malloc(n); }
void *__real_calloc(size_t n, size_t size) { real_callocs++; return calloc(n, size); }
void *__real_realloc(void *p, size_t n) { real_reallocs++; return realloc(p, n); }
void __real_free(void *p) { real_frees++; free(p); }

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* Does FN(ARG) end the process with SIGABRT? */
static bool aborts(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void grow_by_realloc(void *p) { (void)__wrap_realloc(p, 64); }

int main(void)
{
	unsigned char *a, *b, *c, *p;
	void *big, *q;
	size_t off;

	a = __wrap_malloc(10);
	b = __wrap_malloc(0);
	CHECK(a && in_arena(a) && (uintptr_t)a % ARENA_ALIGN == 0, "a small block comes from the arena, aligned");
	CHECK(b && in_arena(b) && b != a && (uintptr_t)b % ARENA_ALIGN == 0, "malloc(0): a block of its own");
	CHECK(real_mallocs == 0, "no call to the C library's malloc for them");
	memset(a, 0xff, 10);
	__wrap_free(a);
	c = __wrap_malloc(10);
	CHECK(c != a, "a freed block is never handed out again");
	CHECK(real_frees == 0, "free of an arena block: nothing to the C library");
	__wrap_free(NULL);
	CHECK(real_frees == 0, "free(NULL): nothing");

	/* realloc: the newest block grows in place, keeps its bytes */
	memcpy(c, "0123456789", 10);
	p = __wrap_realloc(c, 200);
	CHECK(p == c && memcmp(p, "0123456789", 10) == 0, "the newest block grows in place, its bytes kept");
	CHECK(all_zero(p + 16, 184), "what it grew over is zero");
	q = __wrap_realloc(p, 8);
	CHECK(q == p, "shrinking keeps the block");
	/* an older block moves, copied */
	memcpy(b, "x", 1);
	q = __wrap_realloc(b, 100);
	CHECK(q != b && in_arena(q) && ((unsigned char *)q)[0] == 'x', "an older block moves when it grows, copied");
	CHECK(__wrap_realloc(NULL, 5) != NULL && real_reallocs == 0, "realloc(NULL, n) is malloc(n)");

	/* calloc: zero, even right after a block that shrank */
	p = __wrap_malloc(64);
	memset(p, 0xaa, 64);
	(void)__wrap_realloc(p, 16);
	q = __wrap_calloc(4, 16);
	CHECK(q && in_arena(q) && all_zero(q, 64), "calloc after a shrunk block: zero");
	errno = 0;
	CHECK(__wrap_calloc(SIZE_MAX / 2, 4) == NULL && errno == ENOMEM, "calloc's size overflow: NULL, ENOMEM");

	/* the large: the C library's */
	big = __wrap_malloc(ARENA_OBJ_MAX + 1);
	CHECK(big && !in_arena(big) && real_mallocs == 1, "a block over ARENA_OBJ_MAX: the C library's malloc");
	big = __wrap_realloc(big, ARENA_OBJ_MAX + 100);
	CHECK(big && !in_arena(big) && real_reallocs == 1, "its realloc: the C library's");
	__wrap_free(big);
	CHECK(real_frees == 1, "its free: the C library's");
	p = __wrap_malloc(32);
	q = __wrap_realloc(p, ARENA_OBJ_MAX + 1);
	CHECK(q && !in_arena(q) && real_mallocs == 2, "an arena block grown past ARENA_OBJ_MAX moves to the C library's");
	free(q);

	/* a corrupted header stops the run rather than copy by it */
	p = __wrap_malloc(32);
	(void)__wrap_malloc(32);
	off = (size_t)(p - arena);
	memset(p - ARENA_ALIGN, 0x7f, sizeof(size_t));
	CHECK(aborts(grow_by_realloc, p), "realloc of a block whose header was overrun: abort (offset %zu)", off);
	memset(p - ARENA_ALIGN, 0, sizeof(size_t));
	memcpy(p - ARENA_ALIGN, &(size_t){ 32 }, sizeof(size_t));
	CHECK(aborts(grow_by_realloc, arena + arena_top + ARENA_ALIGN), "realloc of a pointer past the last block: abort");

	/* spent: the C library's, calloc still zero */
	while ((p = __wrap_malloc(ARENA_OBJ_MAX)) && in_arena(p))
		;
	CHECK(p && !in_arena(p), "the arena spent: the C library's malloc");
	free(p);
	q = __wrap_calloc(1, 100);
	CHECK(q && (in_arena(q) || all_zero(q, 100)), "calloc when the arena is (nearly) spent: zero");
	if (q && !in_arena(q))
		free(q);
	while ((q = __wrap_malloc(16)) && in_arena(q))
		;
	CHECK(q && !in_arena(q), "and for the smallest blocks once no byte is left");
	free(q);
	q = __wrap_calloc(1, 100);
	CHECK(q && !in_arena(q) && all_zero(q, 100), "calloc past the arena: the C library's, zero");
	free(q);
	return done();
}
