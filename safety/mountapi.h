/* mountapi.h: the new mount API (Linux 5.2; mount_setattr 5.12) as raw
 * syscalls, which musl's headers lack: mounting by descriptor, never by a
 * path a container could change. */
#ifndef OCIDEC_MOUNTAPI_H
#define OCIDEC_MOUNTAPI_H

#include <stdint.h>
#include <sys/syscall.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define OPEN_TREE_CLONE_ 1
#define MOVE_MOUNT_F_EMPTY_PATH_ 0x04
#define MOVE_MOUNT_T_EMPTY_PATH_ 0x40
#define MOUNT_ATTR_RDONLY_ 0x01
#define MOUNT_ATTR_NOSUID_ 0x02
#define MOUNT_ATTR_NODEV_ 0x04
#define MOUNT_ATTR_NOEXEC_ 0x08
#define FSOPEN_CLOEXEC_ 1
#define FSCONFIG_SET_STRING_ 1
#define FSCONFIG_CMD_CREATE_ 6
#define FSMOUNT_CLOEXEC_ 1
#define MS_PRIVATE_ (1 << 18)
#define TMPFS_MAGIC_ 0x01021994

struct mount_attr_ {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

#endif
