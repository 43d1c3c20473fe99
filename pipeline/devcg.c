/* devcg.c: see devcg.h. */
#include "pipeline/devcg.h"

#include "safety/rootpath.h"
#include "base/log.h"
#include "pipeline/sdbus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The bits of linux/bpf.h used here (musl's headers have none of it). */
#define BPF_PROG_LOAD_ 5
#define BPF_PROG_ATTACH_ 8
#define BPF_PROG_GET_FD_BY_ID_ 13
#define BPF_OBJ_GET_INFO_BY_FD_ 15
#define BPF_PROG_QUERY_ 16
#define BPF_PROG_TYPE_CGROUP_DEVICE_ 15
#define BPF_CGROUP_DEVICE_ 6
#define BPF_F_ALLOW_MULTI_ 2u
#define BPF_F_REPLACE_ 4u
#define DEVCG_DEV_BLOCK 1
#define DEVCG_DEV_CHAR 2
#define MARKER 0x0c1dec00  /* "ocidec": the first instruction of our prefix */
#define MAX_INSNS 1000000  /* BPF_COMPLEXITY_LIMIT_INSNS: the most a privileged load takes */

struct insn {
	uint8_t code;
	uint8_t regs;    /* dst in the low nibble, src in the high */
	int16_t off;
	int32_t imm;
};

union attr {
	struct {
		uint32_t prog_type, insn_cnt;
		uint64_t insns, license;
		uint32_t log_level, log_size;
		uint64_t log_buf;
		uint32_t kern_version, prog_flags;
		char prog_name[16];
		uint32_t prog_ifindex, expected_attach_type;
	} load;
	struct {
		uint32_t target_fd, attach_bpf_fd, attach_type, attach_flags, replace_bpf_fd;
	} attach;
	struct {
		uint32_t target_fd, attach_type, query_flags, attach_flags;
		uint64_t prog_ids;
		uint32_t prog_cnt;
	} query;
	struct {
		uint32_t prog_id, next_id, open_flags;
	} getid;
	struct {
		uint32_t bpf_fd, info_len;
		uint64_t info;
	} info;
	char pad[128];
};

struct prog_info {
	uint32_t type, id;
	uint8_t tag[8];
	uint32_t jited_prog_len, xlated_prog_len;
	uint64_t jited_prog_insns, xlated_prog_insns;
	char rest[256];
};

static long bpf(int cmd, union attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static struct insn ins(uint8_t code, int dst, int src, int16_t off, int32_t imm)
{
	return (struct insn){ code, (uint8_t)(dst | src << 4), off, imm };
}

#define LDX_W(dst, src, off) ins(0x61, dst, src, off, 0)
#define AND_K(dst, imm) ins(0x54, dst, 0, 0, imm)
#define MOV64_K(dst, imm) ins(0xb7, dst, 0, 0, imm)
#define JNE_K(dst, imm, off) ins(0x55, dst, 0, off, imm)
#define EXIT() ins(0x95, 0, 0, 0, 0)

/* Our prefix: marker, count, the context loads, 5 instructions per rule. */
static size_t prefix_len(size_t n)
{
	return 6 + 5 * n;
}

static void make_prefix(struct insn *p, const struct devcg_rule *r, size_t n)
{
	size_t k = 0;

	p[k++] = MOV64_K(3, MARKER);
	p[k++] = MOV64_K(3, (int32_t)n);
	p[k++] = LDX_W(2, 1, 0);          /* access_type */
	p[k++] = AND_K(2, 0xffff);        /* the device type */
	p[k++] = LDX_W(4, 1, 4);          /* major */
	p[k++] = LDX_W(5, 1, 8);          /* minor */
	for (size_t i = 0; i < n; i++) {
		p[k++] = JNE_K(2, r[i].type == 'b' ? DEVCG_DEV_BLOCK : DEVCG_DEV_CHAR, 4);
		p[k++] = JNE_K(4, (int32_t)r[i].major, 3);
		p[k++] = JNE_K(5, (int32_t)r[i].minor, 2);
		p[k++] = MOV64_K(0, 1);
		p[k++] = EXIT();
	}
}

/* The rules of an existing prefix of ours at the start of P[N], or -1. */
static long read_prefix(const struct insn *p, size_t n, struct devcg_rule **out)
{
	size_t cnt;

	if (n < 2 || p[0].code != 0xb7 || p[0].imm != MARKER || p[1].code != 0xb7)
		return -1;
	cnt = (size_t)p[1].imm;
	if (cnt > 4096 || prefix_len(cnt) > n)
		return -1;
	*out = xcalloc(cnt ? cnt : 1, sizeof(**out));
	for (size_t i = 0; i < cnt; i++) {
		const struct insn *q = p + 6 + 5 * i;
		(*out)[i] = (struct devcg_rule){ q[0].imm == DEVCG_DEV_BLOCK ? 'b' : 'c',
						 (unsigned)q[1].imm, (unsigned)q[2].imm };
	}
	return (long)cnt;
}

static bool has_rule(const struct devcg_rule *r, size_t n, const struct devcg_rule *x)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].type == x->type && r[i].major == x->major && r[i].minor == x->minor)
			return true;
	return false;
}

/* The verifier's reason for refusing INSNS[N]: the load again with a log,
 * its last line that is not the statistics ("processed N insns ...") */
static void verifier_reason(const struct insn *insns, size_t n, char *out, size_t outlen)
{
	size_t size = 1 << 20;
	char *log = xcalloc(size, 1), *end, *line = NULL;
	union attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE_;
	a.load.insn_cnt = (uint32_t)n;
	a.load.insns = (uint64_t)(uintptr_t)insns;
	a.load.license = (uint64_t)(uintptr_t)"Apache";
	a.load.log_level = 1;
	a.load.log_size = (uint32_t)size;
	a.load.log_buf = (uint64_t)(uintptr_t)log;
	fd = (int)bpf(BPF_PROG_LOAD_, &a);
	if (fd >= 0)
		close(fd);
	log[size - 1] = '\0';
	/* the last line that is not the verifier's statistics */
	end = log + strlen(log);
	while (!line && end > log) {
		char *nl;

		while (end > log && end[-1] == '\n')
			end--;
		*end = '\0';
		nl = strrchr(log, '\n');
		line = nl ? nl + 1 : log;
		if (!*line || strncmp(line, "processed ", 10) == 0 || strncmp(line, "verification time", 17) == 0 ||
		    strncmp(line, "stack depth", 11) == 0)
			line = NULL;
		end = nl ? nl : log;
	}
	snprintf(out, outlen, "%s", line ? line : "");
	free(log);
}

/* One device program attached to the container's cgroup: the program
 * (OLD_FD), the one that replaces it (NEW_FD, -1: nothing to do) */
struct devprog {
	uint32_t id;
	int old_fd, new_fd;
};

/* Read the program PROG->id and load the one with the rules in front. */
static int prepare_prog(struct devprog *prog, const struct devcg_rule *rules, size_t n, const char *dir,
			struct oerr *err)
{
	union attr a;
	struct prog_info info;
	_cleanup_free_ struct insn *old = NULL, *new = NULL;
	_cleanup_free_ struct devcg_rule *have = NULL, *all = NULL;
	size_t nold, body, nall = 0, nnew;
	long nhave;

	memset(&a, 0, sizeof(a));
	a.getid.prog_id = prog->id;
	prog->old_fd = (int)bpf(BPF_PROG_GET_FD_BY_ID_, &a);
	if (prog->old_fd < 0)
		return oerr_set(err, errno, "%s: device program %u", dir, prog->id);
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)prog->old_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (bpf(BPF_OBJ_GET_INFO_BY_FD_, &a) < 0 || info.xlated_prog_len == 0)
		return oerr_set(err, errno, "%s: reading device program %u", dir, prog->id);
	nold = info.xlated_prog_len / sizeof(struct insn);
	if (nold > MAX_INSNS)
		return oerr_set(err, 0, "%s: device program %u has %zu instructions, more than the kernel loads "
				"(%d)", dir, prog->id, nold, MAX_INSNS);
	old = xcalloc(nold, sizeof(*old));
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	info.xlated_prog_len = (uint32_t)(nold * sizeof(struct insn));
	info.xlated_prog_insns = (uint64_t)(uintptr_t)old;
	a.info.bpf_fd = (uint32_t)prog->old_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (bpf(BPF_OBJ_GET_INFO_BY_FD_, &a) < 0) {
		/* the kernel copies a program out in one allocation: the largest
		 * ones (half a million instructions) it cannot */
		return oerr_set(err, errno, "%s: reading device program %u (%zu instructions): nothing changed",
				dir, prog->id, nold);
	}

	/* A prefix of ours already there: merge, and stop if nothing is new. */
	nhave = read_prefix(old, nold, &have);
	body = nhave < 0 ? 0 : prefix_len((size_t)nhave);
	all = xcalloc(n + (nhave > 0 ? (size_t)nhave : 0) + 1, sizeof(*all));
	for (long i = 0; i < nhave; i++)
		all[nall++] = have[i];
	for (size_t i = 0; i < n; i++)
		if (!has_rule(all, nall, &rules[i]))
			all[nall++] = rules[i];
	if (nhave >= 0 && (size_t)nhave == nall) {
		log_debug("%s: device program %u allows the devices already", dir, prog->id);
		return 0;
	}
	nnew = prefix_len(nall) + nold - body;
	if (nnew > MAX_INSNS)
		return oerr_set(err, 0, "%s: device program %u (%zu instructions) with %zu device rules in front "
				"would have %zu, more than the kernel loads (%d): nothing changed", dir, prog->id,
				nold - body, nall, nnew, MAX_INSNS);
	new = xcalloc(nnew, sizeof(*new));
	make_prefix(new, all, nall);
	memcpy(new + prefix_len(nall), old + body, (nold - body) * sizeof(*new));

	/* No log on the way that works: the verifier's log of a runtime's
	 * program (hundreds of instructions) overflows any small buffer, and
	 * an overflow fails the load (ENOSPC) */
	memset(&a, 0, sizeof(a));
	a.load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE_;
	a.load.insn_cnt = (uint32_t)nnew;
	a.load.insns = (uint64_t)(uintptr_t)new;
	a.load.license = (uint64_t)(uintptr_t)"Apache";
	snprintf(a.load.prog_name, sizeof(a.load.prog_name), "ocidec_devices");
	prog->new_fd = (int)bpf(BPF_PROG_LOAD_, &a);
	if (prog->new_fd < 0) {
		char why[512];
		int e = errno;

		verifier_reason(new, nnew, why, sizeof(why));
		return oerr_set(err, e, "%s: loading the device program (%zu instructions)%s%s: nothing changed", dir,
				nnew, *why ? ": " : "", why);
	}
	return 0;
}

/* Put PROG's replacement in its place (or, ROLLBACK, the original back). */
static int attach_prog(int cgfd, const struct devprog *prog, bool rollback)
{
	union attr a;

	memset(&a, 0, sizeof(a));
	a.attach.target_fd = (uint32_t)cgfd;
	a.attach.attach_bpf_fd = (uint32_t)(rollback ? prog->old_fd : prog->new_fd);
	a.attach.attach_type = BPF_CGROUP_DEVICE_;
	a.attach.attach_flags = BPF_F_ALLOW_MULTI_ | BPF_F_REPLACE_;
	a.attach.replace_bpf_fd = (uint32_t)(rollback ? prog->new_fd : prog->old_fd);
	return (int)bpf(BPF_PROG_ATTACH_, &a);
}

/* The device programs attached to the v2 cgroup DIR (open at CGFD):
 * their ids in IDS (*CNT of them); -1 (ERR) when more are attached than
 * fit, 0 with *CNT 0 when none can be queried. */
static int query_progs(int cgfd, const char *dir, uint32_t ids[DEVCG_MAX_PROGS], uint32_t *cnt, struct oerr *err)
{
	union attr a;

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)cgfd;
	a.query.attach_type = BPF_CGROUP_DEVICE_;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = DEVCG_MAX_PROGS;
	*cnt = 0;
	if (bpf(BPF_PROG_QUERY_, &a) < 0) {
		if (errno == ENOSPC)  /* more than fit: none is left unpatched silently */
			return oerr_set(err, 0, "%s: %u device programs attached, more than %d: nothing changed", dir,
					a.query.prog_cnt, DEVCG_MAX_PROGS);
		log_debug("%s: no device programs to query: %s", dir, strerror(errno));
		return 0;
	}
	*cnt = a.query.prog_cnt < DEVCG_MAX_PROGS ? a.query.prog_cnt : DEVCG_MAX_PROGS;
	return 0;
}

/* T's v2 cgroup: every attached device program (devcg_target found
 * them) gets the rules in front. All replacements are loaded before the
 * first is attached, and a failed attach puts the originals back: all or
 * nothing. */
static int devcg2_allow(const struct devcg_target *t, const struct devcg_rule *rules, size_t n, struct oerr *err)
{
	struct devprog progs[DEVCG_MAX_PROGS];
	const char *dir = t->v2_dir;
	uint32_t cnt = t->v2_progs;
	int cgfd = t->v2_fd, r = 0;

	for (uint32_t i = 0; i < cnt; i++)
		progs[i] = (struct devprog){ t->v2_ids[i], -1, -1 };
	for (uint32_t i = 0; i < cnt && r == 0; i++)
		r = prepare_prog(&progs[i], rules, n, dir, err);
	for (uint32_t i = 0; i < cnt && r == 0; i++) {
		if (progs[i].new_fd < 0)
			continue;
		if (attach_prog(cgfd, &progs[i], false) < 0) {
			r = oerr_set(err, errno, "%s: replacing device program %u: nothing changed", dir, progs[i].id);
			while (i-- > 0)
				if (progs[i].new_fd >= 0 && attach_prog(cgfd, &progs[i], true) < 0)
					log_warn("%s: putting device program %u back: %s", dir, progs[i].id,
						  strerror(errno));
			break;
		}
		log_info("%s: device program %u replaced, the devices allowed in front of it", dir, progs[i].id);
	}
	for (uint32_t i = 0; i < cnt; i++) {
		if (progs[i].old_fd >= 0)
			close(progs[i].old_fd);
		if (progs[i].new_fd >= 0)
			close(progs[i].new_fd);
	}
	return r;
}

static bool v1_allows_all(const char *cg)
{
	_cleanup_free_ char *path = xasprintf("/sys/fs/cgroup/devices%s/devices.list", cg);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[16];
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (r <= 0)
		return false;
	buf[r] = '\0';
	return strcmp(buf, "a *:* rwm\n") == 0;
}

/* Is UNIT a directory of the cgroup path CG ("/a/UNIT/b" or "/a/UNIT")? */
static bool cgroup_in_unit(const char *cg, const char *unit)
{
	size_t n = strlen(unit);

	for (const char *p = cg; (p = strchr(p, '/')); p++)
		if (strncmp(p + 1, unit, n) == 0 && (p[1 + n] == '/' || p[1 + n] == '\0'))
			return true;
	return false;
}

/* The systemd driver: the unit systemd keeps the device policy of. Told
 * first: it fails before anything else changed. */
static int unit_allow(const char *unit, const struct devcg_rule *rules, size_t n, struct oerr *err)
{
	if (access(SDBUS_SOCKET, F_OK) < 0) {
		log_warn("systemd: %s: no %s here: the devices are the cgroup's only, until systemd next applies "
			 "the unit's own rules", unit, SDBUS_SOCKET);
		return 0;
	}
	return sdbus_allow_devices(SDBUS_SOCKET, unit, rules, n, err) < 0 ? -1 : 0;
}

void devcg_target_free(struct devcg_target *t)
{
	free(t->unit);
	free(t->v1_allow);
	free(t->v2_dir);
	if (t->v2_fd >= 0)
		close(t->v2_fd);
	memset(t, 0, sizeof(*t));
	t->v2_fd = -1;
}

/* The lines of a /proc/PID/cgroup text that place a process's devices:
 * the v1 devices controller's path, the unified hierarchy's, systemd's
 * named one (each NULL where the file has none). BUF is cut up. */
struct cgpaths {
	const char *v1, *v2, *sd;
};

static void cgroup_paths(char *buf, struct cgpaths *c)
{
	char *save = NULL;

	memset(c, 0, sizeof(*c));
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *s2 = NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (c1 == line + 1 && line[0] == '0' && c2 == c1 + 1)
			c->v2 = c2 + 1;
		if (strcmp(c1 + 1, "name=systemd") == 0)
			c->sd = c2 + 1;
		for (char *ctl = strtok_r(c1 + 1, ",", &s2); ctl; ctl = strtok_r(NULL, ",", &s2))
			if (strcmp(ctl, "devices") == 0)
				c->v1 = c2 + 1;
	}
}

/* Is a cgroup path of the container (MINE: this process's own, the
 * runtime's that runs the hook) shared with it? */
static bool same_cgroup(const char *theirs, const char *mine)
{
	return theirs && mine && strcmp(theirs, mine) == 0;
}

int devcg_target(int pid, const char *cgroups_path, struct devcg_target *t, struct oerr *err)
{
	char path[64];
	_cleanup_free_ char *unit = NULL, *buf = NULL, *mine = NULL;
	_cleanup_close_ int fd = -1, self = -1;
	struct cgpaths c, own = { 0 };
	bool v1_shared, v2_shared, sd_shared;
	size_t len, ml;
	struct oerr e2;

	memset(t, 0, sizeof(*t));
	t->v2_fd = -1;
	/* only the initial user namespace controls device cgroups (a hook
	 * rootless podman runs has none to give, nor a rule to need) */
	if (!in_initial_userns()) {
		log_debug("not in the initial user namespace: the device cgroup is left to the runtime");
		return 0;
	}
	if (pid <= 0) {
		log_info("no pid (a dry run): the container's device cgroup is not known");
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return oerr_set(err, errno, "%s", path);
	if (read_fd_all(fd, 64 * 1024, &buf, &len, err) < 0)
		return oerr_prefix(err, "%s", path);
	cgroup_paths(buf, &c);

	/* a container in the very devices cgroup of the process that runs
	 * this (its runtime's: podman --cgroups=disabled, a runtime told to
	 * make none) has none of its own: rules added there would open the
	 * devices to every process of its caller's cgroup. Only the lines
	 * that place devices count: a container that differs from its caller
	 * in another controller alone (memory, pids) still shares this one. */
	self = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (self >= 0 && read_fd_all(self, 64 * 1024, &mine, &ml, &e2) == 0)
		cgroup_paths(mine, &own);
	v1_shared = same_cgroup(c.v1, own.v1);
	v2_shared = same_cgroup(c.v2, own.v2);
	sd_shared = same_cgroup(c.sd, own.sd);
	if ((v1_shared || v2_shared) && (!c.v1 || v1_shared) && (!c.v2 || v2_shared)) {
		log_info("the container (pid %d) has no cgroup of its own, it is in its runtime's: its device "
			 "cgroup left as it is (the runtime's rules decide)", pid);
		return 0;
	}
	if (v1_shared)
		log_info("the container (pid %d) is in its runtime's devices cgroup %s, not one of its own: no rules "
			 "there (the runtime's decide)", pid, c.v1);
	if (v2_shared)
		log_info("the container (pid %d) is in its runtime's cgroup2 %s, not one of its own: its device "
			 "programs left as they are (the runtime's rules decide)", pid, c.v2);

	/* the unit is the container's when the process is in it (a
	 * cgroupsPath of systemd's form under a cgroupfs runtime is not) */
	unit = sdbus_unit(cgroups_path);
	if (unit && ((c.v2 && !v2_shared && cgroup_in_unit(c.v2, unit)) ||
		     (c.sd && !sd_shared && cgroup_in_unit(c.sd, unit))))
		t->unit = xstrdup(unit);
	else if (unit)
		log_debug("%s: not the cgroup of process %d: no systemd unit to tell", unit, pid);

	/* v1: the root cgroup allows everything and takes no rules; so does a
	 * cgroup whose list is "a *:* rwm" (a rootless container's, which is
	 * its user's session: left as it is) */
	if (c.v1 && !v1_shared && strcmp(c.v1, "/") != 0 && !v1_allows_all(c.v1))
		t->v1_allow = xasprintf("/sys/fs/cgroup/devices%s/devices.allow", c.v1);

	/* v2: the device programs attached to the container's cgroup */
	if (c.v2 && !v2_shared) {
		_cleanup_free_ char *mnt = mountinfo_find("cgroup2");

		if (mnt) {
			t->v2_dir = xasprintf("%s%s", mnt, c.v2);
			t->v2_fd = open(t->v2_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (t->v2_fd >= 0 && query_progs(t->v2_fd, t->v2_dir, t->v2_ids, &t->v2_progs, err) < 0) {
			devcg_target_free(t);
			return -1;
		}
	}
	return 0;
}

int devcg_allow(const struct devcg_target *t, const struct devcg_rule *rules, size_t n, struct oerr *err)
{
	int r = 0;

	if (!n)
		return 0;
	if (t->unit)
		r = unit_allow(t->unit, rules, n, err);
	for (size_t i = 0; t->v1_allow && i < n && r == 0; i++) {
		char rule[64];
		int afd;

		snprintf(rule, sizeof(rule), "%c %u:%u rwm", rules[i].type, rules[i].major, rules[i].minor);
		afd = open(t->v1_allow, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (afd < 0 || write(afd, rule, strlen(rule)) < 0)
			r = oerr_set(err, errno, "the container's device cgroup: %s: %s", t->v1_allow, rule);
		else
			log_info("cgroup: allowed %s", rule);
		if (afd >= 0)
			close(afd);
	}
	if (r == 0 && t->v2_progs)
		r = devcg2_allow(t, rules, n, err);
	return r;
}

void devcg_describe(const struct devcg_target *t, const struct devcg_rule *rules, size_t n, struct strv *lines)
{
	for (size_t i = 0; t->unit && i < n; i++)
		strv_push_owned(lines, xasprintf("systemd %s DeviceAllow=/dev/%s/%u:%u rwm", t->unit,
						 rules[i].type == 'b' ? "block" : "char", rules[i].major, rules[i].minor));
	for (size_t i = 0; t->v1_allow && i < n; i++)
		strv_push_owned(lines, xasprintf("cgroup %s %c %u:%u rwm", t->v1_allow, rules[i].type, rules[i].major,
						 rules[i].minor));
	for (uint32_t p = 0; p < t->v2_progs; p++)
		for (size_t i = 0; i < n; i++)
			strv_push_owned(lines, xasprintf("cgroup2 %s %c %u:%u rwm", t->v2_dir, rules[i].type,
							 rules[i].major, rules[i].minor));
}
