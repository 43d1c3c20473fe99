/* ldconfig.c: see ldconfig.h. The structure follows glibc 2.36's
 * elf/ldconfig.c as Debian 12 builds it (the reference the tests compare
 * with): add_dir_1, add_glibc_hwcaps_subdirectories, search_dir,
 * create_links, parse_conf; the comments name where behaviour is glibc's on
 * purpose and where it is ours (loops, hostile names, device nodes). */
#include "formats/ldconfig.h"

#include "formats/elf.h"
#include "formats/ldcache.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <ctype.h>
#include <elf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *ldconfig_arch;

static const struct ldarch *ldarch_get(struct oerr *err)
{
	const struct ldarch *a = ldarch_find(ldconfig_arch);

	if (!a)
		oerr_usage(err, "OCIDEC_LDCACHE_ARCH=%s: not an architecture ldcache knows", ldconfig_arch);
	return a;
}

/* Bounds on what one ld.so.conf tree may make ocidec do (ocidec(1), SECURITY):
 * past one, a warning and the rest is ignored. */
#define MAX_CONF_SIZE (1024 * 1024)   /* bytes, all configuration files together */
#define MAX_CONF_FILES 256            /* configuration files read */
#define MAX_INCLUDES 1024             /* include patterns followed */
#define MAX_GLOB 256                  /* files one include pattern may match */
#define MAX_DIRS 4096                 /* directories in the list */
#define MAX_INCLUDE_DEPTH 32
#define FLAG_ANY (-1)
#define FLAG_LIBC4 0x0000
#define GENERATOR "ocidec " OCIDEC_VERSION

/* Debian's local-ldconfig-ignore-ld.so.diff: an existing link named after a
 * dynamic loader is not replaced. (The Debian list misses a comma after the
 * riscv64 names, so it never matches ld-linux-x32.so.2; nor do we.) */
static const char *const ld_sonames[] = {
	"ld-kfreebsd-x86-64.so.1", "ld-linux-aarch64.so.1", "ld-linux-aarch64_be.so.1",
	"ld-linux-armhf.so.3", "ld-linux-ia64.so.2", "ld-linux-mipsn8.so.1",
	"ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-linux.so.3", "ld.so.1",
	"ld64.so.1", "ld64.so.2",
};

/* Legacy hwcap subdirectories (glibc 2.36: sysdeps/x86/dl-procinfo.c as
 * ldconfig sees it, all of them "important"); bit numbers as path_hwcap
 * gives them. Other architectures: "tls" only. */
static const struct { const char *name; unsigned bit; bool x86; } legacy_hwcaps[] = {
	{ "sse2", 0, true }, { "x86_64", 1, true }, { "avx512_1", 2, true },
	{ "i586", 48, true }, { "i686", 49, true }, { "haswell", 50, true }, { "xeon_phi", 51, true },
	{ "tls", 63, false },
};

struct dir_entry {
	char *path;      /* as configured, trailing slashes removed */
	int flag;        /* FLAG_ANY, or a type from "DIR=libc6" */
	dev_t dev;
	ino_t ino;
	int hwcaps;      /* builder handle of a glibc-hwcaps subdirectory, or -1 */
};

struct dlib {
	char *name, *soname;
	int flag;
	bool is_link;
	unsigned isa_level;
};

struct state {
	const struct ldconfig *o;
	const struct ldarch *arch;
	struct dir_entry *d;
	size_t nd, capd;
	struct ldcache_builder b;
	dev_t conf_dev[MAX_INCLUDE_DEPTH];
	ino_t conf_ino[MAX_INCLUDE_DEPTH];
	unsigned conf_depth;
	size_t conf_files, conf_bytes, includes;
	bool conf_cut;            /* a bound was reached (warned once) */
	bool late;                /* the deadline passed */
	struct seen *seen;        /* the files read, by inode (seen_find) */
	size_t nseen, capseen;    /* (capseen: a power of two, or 0) */
};

/* A library file read once: what process_file found in it. A directory
 * lists a library twice (its SONAME link, the file), a tree often more
 * (/lib and /usr/lib): glibc's ldconfig reads each once too. */
struct seen {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int flag;
	unsigned isa_level;
	char *soname;             /* or NULL (process_file's) */
};

static size_t seen_slot(const struct state *st, const struct stat *sb)
{
	size_t h = ((size_t)sb->st_ino * 0x9e3779b97f4a7c15ULL) ^ (size_t)sb->st_dev, mask = st->capseen - 1;

	for (h &= mask;; h = (h + 1) & mask) {
		const struct seen *s = &st->seen[h];

		if (!s->ino || (s->ino == sb->st_ino && s->dev == sb->st_dev))
			return h;
	}
}

/* What the file SB describes was found to be, when it was read already
 * (unchanged since: same size and mtime) */
static const struct seen *seen_find(const struct state *st, const struct stat *sb)
{
	const struct seen *s;

	if (!st->capseen || !sb->st_ino)
		return NULL;
	s = &st->seen[seen_slot(st, sb)];
	return s->ino && s->size == sb->st_size && s->mtime.tv_sec == sb->st_mtim.tv_sec &&
	       s->mtime.tv_nsec == sb->st_mtim.tv_nsec ? s : NULL;
}

static void seen_add(struct state *st, const struct stat *sb, int flag, unsigned isa_level, const char *soname)
{
	struct seen *s;

	if (!sb->st_ino)
		return;
	if (2 * (st->nseen + 1) > st->capseen) {  /* grown: at most half full */
		struct seen *old = st->seen;
		size_t oldcap = st->capseen;

		st->capseen = oldcap ? 2 * oldcap : 256;
		st->seen = xcalloc(st->capseen, sizeof(*st->seen));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].ino) {
				struct stat k = { .st_dev = old[i].dev, .st_ino = old[i].ino };

				st->seen[seen_slot(st, &k)] = old[i];
			}
		free(old);
	}
	s = &st->seen[seen_slot(st, sb)];
	if (s->ino) {  /* the same inode, changed meanwhile: the newer answer */
		free(s->soname);
		st->nseen--;
	}
	*s = (struct seen){ sb->st_dev, sb->st_ino, sb->st_size, sb->st_mtim, flag, isa_level,
			    soname ? xstrdup(soname) : NULL };
	st->nseen++;
}

/* Past a bound: say so once, and ignore the rest. */
static bool conf_bound(struct state *st, bool over, const char *file, const char *what)
{
	if (!over)
		return false;
	if (!st->conf_cut)
		log_warn("%s: %s; the rest of the configuration is ignored", file, what);
	st->conf_cut = true;
	return true;
}

static bool too_late(struct state *st)
{
	if (!st->late && deadline_passed())
		st->late = true;
	return st->late;
}

static int legacy_bit(const struct state *st, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(legacy_hwcaps); i++)
		if ((!legacy_hwcaps[i].x86 || st->arch->classify == CL_X86) &&
		    strcmp(name, legacy_hwcaps[i].name) == 0)
			return (int)legacy_hwcaps[i].bit;
	return -1;
}

/* glibc's path_hwcap: the legacy hwcap bits named by the path's last components. */
static uint64_t path_hwcap(const struct state *st, const char *path)
{
	char *s = xstrdup(path), *p;
	uint64_t hwcap = 0;
	int bit;

	while ((p = strrchr(s, '/')) && (bit = legacy_bit(st, p + 1)) >= 0) {
		hwcap += 1ULL << bit;
		*p = '\0';
	}
	free(s);
	return hwcap;
}

/* glibc's _dl_is_dso. */
static bool is_dso(const char *name)
{
	return ((strncmp(name, "lib", 3) == 0 || strncmp(name, "ld-", 3) == 0) &&
		strstr(name, ".so") != NULL) ||
	       strncmp(name, "ld.so.", 6) == 0 || strncmp(name, "ld64.so.", 8) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A name a SONAME symlink or cache entry can safely be made from. */
static bool safe_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static void free_dlibs(struct dlib *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].soname);
	}
	free(l);
}

/* ---- the directory list ---- */

/* glibc's add_single_dir: a directory seen before (same inode) keeps its
 * place and takes the newer type. Takes PATH. */
static bool add_single_dir(struct state *st, char *path, int flag, const struct stat *sb, int hwcaps)
{
	for (size_t i = 0; i < st->nd; i++) {
		if (st->d[i].dev == sb->st_dev && st->d[i].ino == sb->st_ino) {
			st->d[i].flag = flag;
			free(path);
			return false;
		}
	}
	if (st->nd >= MAX_DIRS) {
		if (!st->conf_cut)
			log_warn("%s: more than %d library directories; the rest are ignored", path, MAX_DIRS);
		st->conf_cut = true;
		free(path);
		return false;
	}
	if (st->nd == st->capd) {
		st->capd = st->capd ? 2 * st->capd : 32;
		st->d = xreallocarray(st->d, st->capd, sizeof(*st->d));
	}
	st->d[st->nd++] = (struct dir_entry){ path, flag, sb->st_dev, sb->st_ino, hwcaps };
	return true;
}

/* Stat PATH inside the tree, following symlinks there. */
static int root_stat(const struct state *st, const char *path, struct stat *sb)
{
	int fd = root_open(st->o->rootfd, path, O_PATH);
	int r;

	if (fd < 0)
		return -1;
	r = fstat(fd, sb);
	close(fd);
	return r;
}

static void add_hwcaps_subdirs(struct state *st, const char *path, int flag)
{
	char *hw = xasprintf("%s/glibc-hwcaps", path);
	DIR *dir = root_opendir(st->o->rootfd, hw);
	struct dirent *de;

	if (!dir) {
		free(hw);
		return;
	}
	while ((de = readdir(dir))) {
		struct stat sb;
		char *sub;

		if (de->d_name[0] == '.' || de->d_type == DT_REG || strchr(de->d_name, ':'))
			continue;
		sub = xasprintf("%s/%s", hw, de->d_name);
		if (root_stat(st, sub, &sb) == 0 && S_ISDIR(sb.st_mode))
			add_single_dir(st, sub, flag, &sb, ldcache_builder_hwcaps(&st->b, de->d_name));
		else
			free(sub);
	}
	closedir(dir);
	free(hw);
}

/* glibc's add_dir_1: "PATH" or "PATH=TYPE". */
static void add_dir(struct state *st, const char *line, const char *from, unsigned lineno)
{
	static const struct { const char *name; int flag; } types[] = {
		{ "libc4", FLAG_LIBC4 }, { "libc5", ELF_FLAG_LIBC5 },
		{ "libc6", ELF_FLAG_LIBC6 }, { "glibc2", ELF_FLAG_LIBC6 },
	};
	char *path = xstrdup(line), *eq = strchr(path, '=');
	int flag = FLAG_ANY;
	size_t len;
	struct stat sb;

	if (eq) {
		*eq++ = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(types); i++)
			if (strcmp(eq, types[i].name) == 0)
				flag = types[i].flag;
		if (flag == FLAG_ANY)
			log_warn("%s:%u: %s is not a known library type", from, lineno, eq);
	}
	len = strlen(path);
	if (len >= PATH_MAX) {
		log_warn("%s:%u: a path longer than %d bytes; ignored", from, lineno, PATH_MAX);
		free(path);
		return;
	}
	while (len > 0 && isspace((unsigned char)path[len - 1]))
		path[--len] = '\0';
	while (len > 0 && path[len - 1] == '/')
		path[--len] = '\0';
	if (len == 0 || root_stat(st, path, &sb) < 0) {
		free(path);
		return;
	}
	if (add_single_dir(st, path, flag, &sb, -1))
		add_hwcaps_subdirs(st, st->d[st->nd - 1].path, flag);
}

static void parse_conf(struct state *st, const char *file);

static void parse_include(struct state *st, const char *file, unsigned lineno, const char *pattern)
{
	struct strv found = { 0 };
	char *pat;

	if (conf_bound(st, ++st->includes > MAX_INCLUDES, file, "more than 1024 include patterns") ||
	    conf_bound(st, strlen(pattern) >= PATH_MAX, file, "an include pattern longer than PATH_MAX") ||
	    too_late(st))
		return;
	if (pattern[0] == '/') {
		pat = xstrdup(pattern);
	} else {  /* relative to the including file, as glibc does after chroot */
		const char *slash = strrchr(file, '/');
		pat = slash ? xasprintf("%.*s/%s", (int)(slash - file), file, pattern)
			    : xasprintf("/%s", pattern);
	}
	if (root_glob(st->o->rootfd, pat, &found, MAX_GLOB) < 0 && !deadline_passed())
		log_warn("%s:%u: include %s: more than %d matches or too much to search; the rest ignored",
			 file, lineno, pattern, MAX_GLOB);
	for (size_t i = 0; i < found.n && !st->conf_cut && !too_late(st); i++)
		parse_conf(st, found.v[i]);
	strv_free(&found);
	free(pat);
}

/* glibc's parse_conf, reading FILE inside the tree. */
static void parse_conf(struct state *st, const char *file)
{
	_cleanup_close_ int pfd = -1, fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat sb;
	struct oerr err;
	size_t len;
	unsigned lineno = 0;
	char *line, *next;

	if (conf_bound(st, st->conf_files >= MAX_CONF_FILES, file, "more than 256 configuration files") ||
	    too_late(st))
		return;
	pfd = root_open(st->o->rootfd, file, O_PATH);
	if (pfd < 0) {
		if (errno != ENOENT)
			log_warn("ignoring configuration file that cannot be opened: %s: %s", file,
				 strerror(errno));
		return;
	}
	fd = reopen_regular(st->o->rootfd, pfd, &sb);
	if (fd == -2)
		return;  /* a directory matched by an include glob: glibc reads nothing either */
	if (fd < 0) {
		log_warn("ignoring configuration file that cannot be opened: %s: %s", file, strerror(errno));
		return;
	}
	for (unsigned i = 0; i < st->conf_depth; i++) {
		if (st->conf_dev[i] == sb.st_dev && st->conf_ino[i] == sb.st_ino) {
			log_warn("%s includes itself; the inner include is ignored", file);
			return;
		}
	}
	if (st->conf_depth == MAX_INCLUDE_DEPTH) {
		log_warn("%s: includes nested more than %d deep; ignored", file, MAX_INCLUDE_DEPTH);
		return;
	}
	st->conf_files++;
	if (read_fd_all(fd, MAX_CONF_SIZE - st->conf_bytes, &buf, &len, &err) < 0) {
		conf_bound(st, true, file, "configuration files larger than 1 MiB together");
		return;
	}
	st->conf_bytes += len;
	st->conf_dev[st->conf_depth] = sb.st_dev;
	st->conf_ino[st->conf_depth++] = sb.st_ino;
	for (line = buf; line && line < buf + len && !st->conf_cut && !too_late(st); line = next) {
		char *cp, *word;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = '\0';
		++lineno;
		*strchrnul(line, '#') = '\0';
		for (cp = line; isspace((unsigned char)*cp); cp++)
			;
		if (!*cp)
			continue;
		if (strncmp(cp, "include", 7) == 0 && isblank((unsigned char)cp[7])) {
			cp += 8;
			while ((word = strsep(&cp, " \t")))
				if (*word)
					parse_include(st, file, lineno, word);
		} else if (strncasecmp(cp, "hwcap", 5) == 0 && isblank((unsigned char)cp[5])) {
			log_warn("%s:%u: hwcap directive ignored", file, lineno);
		} else {
			add_dir(st, cp, file, lineno);
		}
	}
	st->conf_depth--;
}

static bool is_dir(const struct state *st, const char *path)
{
	struct stat sb;
	return root_stat(st, path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* glibc's add_system_dir for this architecture: x86-64's "/lib64" also
 * brings "/lib" and "/libx32", and so on. */
static void add_system_dir(struct state *st, const char *dir)
{
	const char *const *sib = st->arch->siblings;
	char *path = xstrdup(dir);
	size_t len = strlen(path);

	for (size_t i = 0; sib[i]; i++) {
		size_t sl = strlen(sib[i]);
		if (len >= 4 + sl && strncmp(path + len - 4 - sl, "/lib", 4) == 0 &&
		    strcmp(path + len - sl, sib[i]) == 0) {
			path[len -= sl] = '\0';
			break;
		}
	}
	add_dir(st, path, "<builtin>", 0);
	if (ends_with(path, "/lib")) {
		for (size_t i = 0; sib[i]; i++) {
			char *p = xasprintf("%s%s", path, sib[i]);
			add_dir(st, p, "<builtin>", 0);
			free(p);
		}
	}
	free(path);
}

/* The trusted directories. A Debian-style tree (it has the multiarch
 * directory) gets Debian's list, which has no lib64; any other gets
 * upstream glibc's. */
static void add_trusted_dirs(struct state *st)
{
	char *ma = xasprintf("/lib/%s", st->arch->triplet);
	char *uma = xasprintf("/usr/lib/%s", st->arch->triplet);

	if (is_dir(st, ma) || is_dir(st, uma)) {
		add_dir(st, ma, "<builtin>", 0);
		add_dir(st, uma, "<builtin>", 0);
		add_dir(st, "/lib", "<builtin>", 0);
		add_dir(st, "/usr/lib", "<builtin>", 0);
	} else {
		for (size_t i = 0; i < 2; i++)
			add_system_dir(st, st->arch->upstream[i]);
	}
	free(ma);
	free(uma);
}

/* ---- scanning a directory ---- */

static bool is_ld_soname(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(ld_sonames); i++)
		if (strcmp(s, ld_sonames[i]) == 0)
			return true;
	return false;
}

/* glibc's create_links: make SONAME -> LIBNAME in the directory, unless a
 * correct link is there, or SONAME is a file, or it is a loader's name. */
static void create_link(struct state *st, int dirfd, const char *path, const char *libname,
			const char *soname)
{
	_cleanup_free_ char *full_so = xasprintf("%s/%s", path, soname), *full_lib = xasprintf("%s/%s", path, libname);
	struct stat so, lib, lso;

	if (root_stat(st, full_so, &so) == 0) {
		if (root_stat(st, full_lib, &lib) < 0) {
			log_warn("can't stat %s", full_lib);
			return;
		}
		if (is_ld_soname(soname) || (so.st_dev == lib.st_dev && so.st_ino == lib.st_ino))
			return;
		if (fstatat(dirfd, soname, &lso, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(lso.st_mode)) {
			log_warn("%s is not a symbolic link", full_so);
			return;
		}
	}
	if (root_symlink_atomic(dirfd, soname, libname) < 0)
		log_warn("can't link %s to %s: %s", full_so, libname, strerror(errno));
}

/* glibc's process_file: classify one file. 0 with FLAG and SONAME (maybe
 * NULL) set; -1 to skip it. FD is open for reading, SB its status. */
static int process_file(const struct state *st, int fd, const struct stat *sb, const char *file,
			const char *name, int *flag, unsigned *isa_level, char **soname)
{
	unsigned char head[512];
	ssize_t n;
	struct elf_source src = { .fd = fd, .size = (uint64_t)sb->st_size };
	struct elf_info info;
	struct oerr err;
	enum elf_result r;

	*soname = NULL;
	*isa_level = 0;
	if (sb->st_size < 64) {  /* sizeof(Elf64_Ehdr), as the 64-bit ldconfig checks */
		n = pread(fd, head, 4, 0);
		if (sb->st_size == 0)
			log_warn("file %s is empty, not checked", file);
		else if (n > 0 && memcmp(head, "\177ELF", (size_t)n) == 0)
			log_warn("file %s is too small, not checked", file);
		return -1;
	}
	r = elf_read(&src, st->arch->interps, &info, &err);
	if (r == ELF_NOT_ELF) {
		elf_info_free(&info);
		if ((n = pread(fd, head, sizeof(head), 0)) < 0) {
			log_warn("cannot read %s: %s", file, strerror(errno));
			return -1;
		}
		/* a.out (ZMAGIC, QMAGIC): libc4, the name up to the major number */
		if (n >= 2 && ((head[0] | head[1] << 8) == 0413 || (head[0] | head[1] << 8) == 0314)) {
			char *major, *dot;
			*soname = xstrdup(name);
			if ((major = strstr(*soname, ".so.")) && (dot = strchr(major + 4, '.')))
				*dot = '\0';
			*flag = FLAG_LIBC4;
			return 0;
		}
		if (!mem_find(head, (size_t)n, "GROUP", 5) && !mem_find(head, (size_t)n, "GNU ld script", 13) &&
		    !ends_with(file, "-gdb.py"))
			log_warn("%s is not an ELF file - it has the wrong magic bytes at the start", file);
		return -1;
	}
	if (r == ELF_BAD) {
		log_warn("%s: %s; skipped", file, err.msg);
		elf_info_free(&info);
		return -1;
	}
	if (info.data != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 1 : 2)) {
		log_warn("%s is for the other byte order; skipped", file);
		elf_info_free(&info);
		return -1;
	}
	if (r == ELF_NOT_DSO) {
		elf_info_free(&info);
		return -1;
	}
	*flag = info.libc;
	switch (st->arch->classify) {
	case CL_X86:
		if (info.machine == EM_X86_64)
			*flag = (info.class == 2 ? LDC_FLAG_X8664_LIB64 : LDC_FLAG_X8664_LIBX32) | ELF_FLAG_LIBC6;
		else if (!(info.machine == EM_386 && info.class == 1)) {
			log_warn("%s is for unknown machine %u", file, info.machine);
			elf_info_free(&info);
			return -1;
		}
		*isa_level = info.isa_level;
		break;
	case CL_AARCH64:
	case CL_ARM:
		if (info.class == 2 && st->arch->classify == CL_AARCH64) {
			*flag = LDC_FLAG_AARCH64_LIB64 | ELF_FLAG_LIBC6;
		} else if (info.class == 1 && (info.eflags & EF_ARM_EABIMASK) == EF_ARM_EABI_VER5) {
			if (info.eflags & EF_ARM_ABI_FLOAT_HARD)
				*flag = LDC_FLAG_ARM_LIBHF | ELF_FLAG_LIBC6;
			else if (info.eflags & EF_ARM_ABI_FLOAT_SOFT)
				*flag = LDC_FLAG_ARM_LIBSF | ELF_FLAG_LIBC6;
			else
				*flag = ELF_FLAG_LIBC6;
		}
		break;
	case CL_LIB64:
		if (info.class == 2)
			*flag = st->arch->flags;
		break;
	}
	*soname = info.soname;
	info.soname = NULL;
	elf_info_free(&info);
	return 0;
}

/* glibc's search_dir, for the directory at index IDX of the list. */
/* One directory being scanned: what search_dir's phases share. */
struct scan {
	struct state *st;
	const char *path;
	int dfd, dflag, hwcaps;
	struct dlib *libs;
	size_t nlibs, caplibs;
	uint32_t *slot;  /* libs by SONAME: an open-addressed table of index + 1, caplibs * 2 of them */
};

/* Phase 1, for one directory entry NAME: is it a library (*LIB filled, 1),
 * a legacy hwcap subdirectory (queued for later, 0), or nothing (0)? */
static int scan_entry(struct scan *sc, const char *name, unsigned char d_type, struct dlib *lib)
{
	struct state *st = sc->st;
	const struct ldconfig *o = st->o;
	size_t len = strlen(name);
	bool is_link, isdir;
	struct stat lsb, sb;
	int pfd, fd, flag;
	unsigned isa_level;
	char file[PATH_MAX], *soname;
	const struct seen *seen;

	if (d_type != DT_UNKNOWN && d_type != DT_LNK && d_type != DT_REG && d_type != DT_DIR)
		return 0;
	if (!is_dso(name) && (d_type == DT_REG || (sc->hwcaps < 0 && legacy_bit(st, name) < 0)))
		return 0;
	if (ends_with(name, ".#prelink#") || (len >= 17 && memcmp(name + len - 17, ".#prelink#.", 11) == 0))
		return 0;
	/* d_type where the file system gives it, as glibc does: one syscall
	 * less per file */
	if (d_type == DT_UNKNOWN) {
		if (fstatat(sc->dfd, name, &lsb, AT_SYMLINK_NOFOLLOW) < 0) {
			log_warn("cannot lstat %s/%s: %s", sc->path, name, strerror(errno));
			return 0;
		}
	} else {
		lsb.st_mode = DTTOIF(d_type);
	}
	if ((size_t)snprintf(file, sizeof(file), "%s/%s", sc->path, name) >= sizeof(file)) {
		log_warn("%s/%s: name too long; skipped", sc->path, name);
		return 0;
	}
	is_link = S_ISLNK(lsb.st_mode);
	pfd = -1;
	if (is_link) {
		pfd = root_open(o->rootfd, file, O_PATH);
		if (pfd < 0 || fstat(pfd, &sb) < 0) {
			/* a stale link (or one leaving the tree): glibc removes *.so.* ones */
			if (pfd >= 0)
				close(pfd);
			if (!o->no_links && strstr(name, ".so."))
				unlinkat(sc->dfd, name, 0);
			return 0;
		}
		isdir = S_ISDIR(sb.st_mode);
		lsb.st_dev = sb.st_dev;
		lsb.st_ino = sb.st_ino;
	} else {
		isdir = S_ISDIR(lsb.st_mode);
	}
	if (sc->hwcaps < 0 && isdir && legacy_bit(st, name) >= 0) {
		if (pfd >= 0)
			close(pfd);
		if (!is_link && fstatat(sc->dfd, name, &lsb, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		add_single_dir(st, xstrdup(file), sc->dflag, &lsb, -1);  /* scanned later */
		return 0;
	}
	if (!S_ISREG(lsb.st_mode) && !is_link)
		return 0;
	if (pfd < 0 && (pfd = openat(sc->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0 && fstat(pfd, &sb) < 0) {
		close(pfd);
		pfd = -1;
	}
	/* (a known inode on a mount the container's root may not read from:
	 * reopen_regular_stat refuses it below, as for any file there) */
	if ((seen = pfd < 0 || !S_ISREG(sb.st_mode) ? NULL : seen_find(st, &sb)) && root_confined(o->rootfd) &&
	    root_check_mount(o->rootfd, pfd) < 0)
		seen = NULL;
	if (seen) {
		close(pfd);
		flag = seen->flag;
		isa_level = seen->isa_level;
		soname = seen->soname ? xstrdup(seen->soname) : NULL;
	} else {
		fd = pfd < 0 ? -1 : reopen_regular_stat(o->rootfd, pfd, &sb);
		if (pfd >= 0)
			close(pfd);
		if (fd < 0) {
			if (fd == -1 && !(is_link && errno == ENOENT && strstr(file, ".so")))
				log_warn("cannot open %s: %s", file, strerror(errno));
			else if (fd == -2 && !isdir)
				log_warn("%s is not a regular file; skipped", file);
			return 0;
		}
		flag = FLAG_ANY;
		if (process_file(st, fd, &sb, file, name, &flag, &isa_level, &soname) < 0) {
			close(fd);
			return 0;
		}
		close(fd);
		if (flag != FLAG_LIBC4)  /* (a.out's SONAME is made from the name) */
			seen_add(st, &sb, flag, isa_level, soname);
	}
	if (!soname)
		soname = xstrdup(name);
	if (!safe_name(soname)) {
		log_warn("%s: SONAME \"%s\" is not a file name; skipped", file, soname);
		free(soname);
		return 0;
	}
	/* A link counts as itself only when it is the SONAME link or the
	 * development link ("libfoo.so" -> the SONAME); else it is an
	 * implementation file like any other. */
	if (is_link && strcmp(name, soname) != 0 && (!ends_with(name, ".so") || strncmp(name, soname, len) != 0))
		is_link = false;
	if (is_link) {
		free(soname);
		soname = xstrdup(name);
	}
	if (flag == ELF_FLAG_ELF && (sc->dflag == ELF_FLAG_LIBC5 || sc->dflag == ELF_FLAG_LIBC6))
		flag = sc->dflag;
	*lib = (struct dlib){ xstrdup(name), soname, flag, is_link, isa_level };
	return 1;
}

/* Phase 2: one entry per SONAME: a file beats a link, else the newer name
 * wins. Takes LIB's strings. */
/* FNV-1a of S: the SONAME table's hash */
static uint32_t soname_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Where SONAME is in SC's table, or the empty slot it would take
 * (glibc's search_dir compares it with every library found so far: a
 * directory of 640 took 440,000 string compares) */
static uint32_t *soname_slot(struct scan *sc, const char *soname)
{
	size_t mask = sc->caplibs * 2 - 1, i = soname_hash(soname) & mask;

	while (sc->slot[i] && strcmp(sc->libs[sc->slot[i] - 1].soname, soname) != 0)
		i = (i + 1) & mask;
	return &sc->slot[i];
}

static void merge_lib(struct scan *sc, struct dlib *lib)
{
	struct dlib *l;
	uint32_t *slot;

	if (sc->nlibs == sc->caplibs) {  /* (grown before it is full: the table stays half empty) */
		if (sc->caplibs >= UINT32_MAX / 4)
			oom();
		sc->caplibs = sc->caplibs ? 2 * sc->caplibs : 32;
		sc->libs = xreallocarray(sc->libs, sc->caplibs, sizeof(*sc->libs));
		free(sc->slot);
		sc->slot = xcalloc(sc->caplibs * 2, sizeof(*sc->slot));
		for (size_t i = 0; i < sc->nlibs; i++)
			*soname_slot(sc, sc->libs[i].soname) = (uint32_t)i + 1;
	}
	slot = soname_slot(sc, lib->soname);
	if (!*slot) {
		sc->libs[sc->nlibs++] = *lib;
		*slot = (uint32_t)sc->nlibs;
		return;
	}
	l = &sc->libs[*slot - 1];
	if ((!lib->is_link && l->is_link) || (lib->is_link == l->is_link && ldcache_libcmp(l->name, lib->name) < 0)) {
		if (l->flag != lib->flag) {
			if (l->flag == ELF_FLAG_ELF && (lib->flag == ELF_FLAG_LIBC5 || lib->flag == ELF_FLAG_LIBC6))
				l->flag = lib->flag;
			else if ((l->flag == ELF_FLAG_LIBC5 || l->flag == ELF_FLAG_LIBC6) && lib->flag == ELF_FLAG_ELF)
				l->flag = lib->flag;
			else
				log_warn("libraries %s and %s in directory %s have same soname but different type",
					 l->name, lib->name, sc->path);
		}
		free(l->name);
		l->name = lib->name;
		lib->name = NULL;
		l->is_link = lib->is_link;
		l->isa_level = lib->isa_level;
	}
	free(lib->name);
	free(lib->soname);
}

/* Phase 3: the SONAME links and the cache entries. glibc keeps the list
 * newest first: walk it backwards. */
static void emit_libs(struct scan *sc)
{
	struct state *st = sc->st;
	uint64_t hwcap = sc->hwcaps < 0 ? path_hwcap(st, sc->path) : 0;

	if (sc->nlibs && sc->hwcaps < 0 && !st->o->no_links)
		root_dir_lock_sweep(sc->dfd);
	for (size_t i = sc->nlibs; i-- > 0;) {
		struct dlib *l = &sc->libs[i];
		const char *filename = l->name;
		char *full;

		if (sc->hwcaps < 0) {
			if (!l->is_link && !st->o->no_links)
				create_link(st, sc->dfd, sc->path, l->name, l->soname);
			filename = l->soname;
		}
		full = xasprintf("%s/%s", sc->path, filename);
		ldcache_builder_add(&st->b, l->soname, full, l->flag, l->isa_level, hwcap, sc->hwcaps);
		free(full);
	}
}

static void search_dir(struct state *st, size_t idx)
{
	char *path = xstrdup(st->d[idx].path);
	struct scan sc = { .st = st, .path = path, .dflag = st->d[idx].flag, .hwcaps = st->d[idx].hwcaps };
	DIR *dir = root_opendir(st->o->rootfd, path);
	struct dirent *de;
	struct dlib lib;

	if (!dir) {
		if (errno != ENOENT && errno != ENOTDIR)
			log_warn("can't open directory %s: %s", path, strerror(errno));
		free(path);
		return;
	}
	sc.dfd = dirfd(dir);
	while (!too_late(st) && (de = readdir(dir)))
		if (scan_entry(&sc, de->d_name, de->d_type, &lib) > 0)
			merge_lib(&sc, &lib);
	emit_libs(&sc);
	free_dlibs(sc.libs, sc.nlibs);
	free(sc.slot);
	closedir(dir);
	free(path);
}

/* ---- writing ---- */

/* Write the cache, unless it would be the bytes of OLD (a second run:
 * nothing is written, so a read-only rootfs is fine). */
static int write_cache(struct state *st, const struct ldcache *old, struct oerr *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (ldcache_build(&st->b, GENERATOR, &buf, &len, err) < 0)
		return -1;
	if (old && len == old->size && memcmp(buf, old->buf, len) == 0)
		return 0;
	return root_write_atomic(st->o->rootfd, st->o->cache, buf, len, 0644, ROOT_SYNC_FILE, err);
}

static void state_free(struct state *st)
{
	for (size_t i = 0; i < st->nd; i++)
		free(st->d[i].path);
	free(st->d);
	ldcache_builder_free(&st->b);
	for (size_t i = 0; i < st->capseen; i++)
		free(st->seen[i].soname);
	free(st->seen);
}

static int check_dirs(const struct ldconfig *o, struct oerr *err)
{
	for (size_t i = 0; i < o->ndirs; i++)
		if (o->dirs[i][0] != '/')
			return oerr_usage(err, "relative path `%s' used to build cache", o->dirs[i]);
	return 0;
}

static void add_cmdline_dirs(struct state *st)
{
	for (size_t i = 0; i < st->o->ndirs; i++)
		add_dir(st, st->o->dirs[i], "<cmdline>", 0);
}

static void search_all(struct state *st, size_t from)
{
	for (size_t i = from; i < st->nd; i++)  /* the list grows as legacy subdirectories turn up */
		search_dir(st, i);
}

int ldconfig_rebuild(const struct ldconfig *o, struct oerr *err)
{
	struct state st = { .o = o };
	int r;

	if (check_dirs(o, err) < 0 || !(st.arch = ldarch_get(err)))
		return -1;
	add_cmdline_dirs(&st);
	parse_conf(&st, o->conf);
	add_trusted_dirs(&st);
	search_all(&st, 0);
	r = st.late ? oerr_set(err, 0, "%s: not written: the deadline (--timeout) passed", o->cache) : write_cache(&st, NULL, err);
	state_free(&st);
	return r;
}

/* ---- the fast path ---- */

static int load_cache(const struct ldconfig *o, struct ldcache *c, bool *missing, struct oerr *err)
{
	_cleanup_close_ int pfd = -1, fd = -1;
	struct stat sb;

	*missing = false;
	pfd = root_open(o->rootfd, o->cache, O_PATH);
	if (pfd < 0) {
		*missing = errno == ENOENT;
		return oerr_set(err, errno, "%s", o->cache);
	}
	fd = reopen_regular(o->rootfd, pfd, &sb);
	if (fd == -2)
		return oerr_set(err, 0, "%s: not a regular file", o->cache);
	if (fd < 0)
		return oerr_set(err, errno, "%s", o->cache);
	if (ldcache_load_fd(c, fd, err) < 0)
		return oerr_prefix(err, "%s", o->cache);
	return 0;
}

struct dir_id {
	char *dir;
	bool scanned;  /* one of the directories just scanned (same inode) */
};

/* Was the directory holding PATH one of those just scanned? Answers are
 * kept per directory: a cache names few of them. */
static bool in_scanned_dir(struct state *st, struct dir_id **ids, size_t *nids, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	struct stat sb;
	bool scanned = false;
	char *dir;

	for (size_t i = 0; i < *nids; i++)
		if (strlen((*ids)[i].dir) == dlen && strncmp((*ids)[i].dir, path, dlen) == 0)
			return (*ids)[i].scanned;
	dir = xstrndup(path, dlen);
	if (root_stat(st, dlen ? dir : "/", &sb) == 0)
		for (size_t i = 0; i < st->nd && !scanned; i++)
			scanned = st->d[i].dev == sb.st_dev && st->d[i].ino == sb.st_ino;
	*ids = xreallocarray(*ids, *nids + 1, sizeof(**ids));
	(*ids)[(*nids)++] = (struct dir_id){ dir, scanned };
	return scanned;
}

int ldconfig_add(const struct ldconfig *o, struct oerr *err)
{
	struct state st = { .o = o };
	struct ldcache old;
	struct oerr lerr;
	struct dir_id *ids = NULL;
	size_t nids = 0;
	bool missing;
	int musl, r;

	if (check_dirs(o, err) < 0 || !(st.arch = ldarch_get(err)))
		return -1;
	musl = ldconfig_musl_path(o, err);
	if (musl < 0)
		return -1;
	if (load_cache(o, &old, &missing, &lerr) < 0) {
		if (musl && missing)
			return 0;  /* a musl tree without glibc's cache: the path file is all */
		if (!missing)
			log_warn("%s; rebuilding it", lerr.msg);
		return ldconfig_rebuild(o, err);
	}
	add_cmdline_dirs(&st);
	search_all(&st, 0);
	if (st.late) {
		ldcache_free(&old);
		state_free(&st);
		return oerr_set(err, 0, "%s: not written: the deadline (--timeout) passed", o->cache);
	}
	/* The old entries after the new: on equal keys, DIRs come first, as in
	 * a rebuild with DIRs on the command line; those from a directory just
	 * scanned are replaced. */
	for (size_t i = 0; i < old.n; i++)
		if (!in_scanned_dir(&st, &ids, &nids, old.e[i].value))
			ldcache_builder_add_entry(&st.b, &old.e[i]);
	for (size_t i = 0; i < nids; i++)
		free(ids[i].dir);
	free(ids);
	r = write_cache(&st, &old, err);
	ldcache_free(&old);
	state_free(&st);
	return r;
}

/* ---- musl ---- */

/* The path file's old directories, kept only where they are absolute paths
 * of directories that exist in the tree: what is written back is a list the
 * hook made, never the bytes of whatever file the image put there. */
static void musl_keep_dirs(const struct ldconfig *o, char *text, struct strv *dirs)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(text, ":\n", &save); tok && dirs->n < 256; tok = strtok_r(NULL, ":\n", &save)) {
		int fd;
		if (tok[0] != '/' || strlen(tok) >= PATH_MAX || strv_contains(dirs, tok))
			continue;
		fd = root_open(o->rootfd, tok, O_PATH | O_DIRECTORY);
		if (fd < 0) {
			log_debug("%s in the musl path file: %s; dropped", tok, strerror(errno));
			continue;
		}
		close(fd);
		strv_push(dirs, tok);
	}
}

int ldconfig_musl_path(const struct ldconfig *o, struct oerr *err)
{
	const struct ldarch *arch = ldarch_get(err);
	_cleanup_close_ int lfd = -1, pfd = -1, fd = -1;
	_cleanup_free_ char *old = NULL, *loader = NULL, *pathfile = NULL;
	struct strv dirs = { 0 };
	struct stat sb;
	size_t len = 0, n0;
	char *text;
	int r = 1;

	if (!arch)
		return -1;
	loader = xasprintf("/lib/ld-musl-%s.so.1", arch->musl);
	pathfile = xasprintf("/etc/ld-musl-%s.path", arch->musl);
	lfd = root_open(o->rootfd, loader, O_PATH | O_NOFOLLOW);
	if (lfd < 0)
		return 0;
	pfd = root_open(o->rootfd, pathfile, O_PATH);
	if (pfd >= 0) {
		fd = reopen_regular(o->rootfd, pfd, &sb);
		if (fd < 0)
			return oerr_set(err, fd == -2 ? 0 : errno, "%s%s", pathfile,
					fd == -2 ? ": not a regular file" : "");
		if (read_fd_all(fd, 64 * 1024, &old, &len, err) < 0)
			return oerr_prefix(err, "%s", pathfile);
		musl_keep_dirs(o, old, &dirs);
	} else if (errno == ENOENT) {
		/* musl's built-in path, which a path file replaces */
		strv_push(&dirs, "/lib");
		strv_push(&dirs, "/usr/local/lib");
		strv_push(&dirs, "/usr/lib");
	} else {
		return oerr_set(err, errno, "%s", pathfile);
	}
	n0 = dirs.n;
	for (size_t i = 0; i < o->ndirs; i++)
		if (!strv_contains(&dirs, o->dirs[i]))
			strv_push(&dirs, o->dirs[i]);
	if (dirs.n > n0) {
		size_t total = 1;
		for (size_t i = 0; i < dirs.n; i++)
			total += strlen(dirs.v[i]) + 1;
		text = xmalloc(total);
		text[0] = '\0';
		for (size_t i = 0, off = 0; i < dirs.n; i++)
			off += (size_t)sprintf(text + off, "%s\n", dirs.v[i]);
		if (root_write_atomic(o->rootfd, pathfile, text, strlen(text), 0644, true, err) < 0)
			r = -1;
		free(text);
	}
	strv_free(&dirs);
	return r;
}

/* The drop-in's name for DIR: "00-ocidec" + DIR with '/' as '-' + ".conf" */
static char *dropin_name(const char *dir)
{
	char *name = xasprintf("/etc/ld.so.conf.d/00-ocidec%s.conf", dir);

	for (char *p = name + strlen("/etc/ld.so.conf.d/"); *p; p++)
		if (*p == '/')
			*p = '-';
	return name;
}

/* Is FILE in the tree a regular file holding exactly TEXT? */
static bool holds(int rootfd, const char *file, const char *text)
{
	_cleanup_close_ int pfd = root_open(rootfd, file, O_PATH | O_NOFOLLOW), fd = -1;
	char buf[PATH_MAX + 2];
	struct stat st;
	size_t len = strlen(text);
	ssize_t n;

	fd = pfd < 0 ? -1 : reopen_regular(rootfd, pfd, &st);
	if (fd < 0 || (size_t)st.st_size != len || len >= sizeof(buf))
		return false;
	n = read(fd, buf, sizeof(buf));
	return n == (ssize_t)len && memcmp(buf, text, len) == 0;
}

int ldconfig_dropin(const struct ldconfig *o, struct oerr *err)
{
	_cleanup_close_ int d = root_open(o->rootfd, "/etc/ld.so.conf.d", O_PATH | O_DIRECTORY | O_NOFOLLOW);

	if (d < 0)
		return 0;  /* no such convention in this image */
	for (size_t i = 0; i < o->ndirs; i++) {
		_cleanup_free_ char *name = dropin_name(o->dirs[i]);
		_cleanup_free_ char *text = xasprintf("%s\n", o->dirs[i]);

		if (strlen(o->dirs[i]) >= PATH_MAX || holds(o->rootfd, name, text))
			continue;
		if (root_write_atomic(o->rootfd, name, text, strlen(text), 0644, true, err) < 0) {
			if (err->errnum == EROFS)
				return 0;  /* a read-only rootfs: nor can its ldconfig write */
			return -1;
		}
	}
	return 0;
}
