/* appprofile.h: NVIDIA's driver application profile of a container (what
 * NVIDIA's CDI hook update-application-profile writes): the GPUs a
 * container has, as EGLVisibleDGPUDevices, so that EGL and Vulkan see only
 * those. The container's /dev is read (its char devices named nvidiaN, the
 * minor's bit in a 64-bit mask), then the profile file written inside the
 * rootfs, confined as every path there.
 */
#ifndef OCIDEC_APPPROFILE_H
#define OCIDEC_APPPROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

/* NVIDIA's file, under the container's root */
#define APP_PROFILE_DEFAULT "/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf"

/* Is NAME a physical GPU's node name, nvidia[0-9]+ (not nvidiactl,
 * nvidia-uvm, nvidia-caps)? */
bool app_profile_gpu_name(const char *name);
/* The profile's text for MASK (bit N: the GPU of minor N), as NVIDIA's:
 * {"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",0x...]}],...} */
char *app_profile_text(uint64_t mask);
/* The mask of the container's GPUs: its /dev's nvidiaN char devices (minor
 * under 64; others said and left out); 0: none */
uint64_t app_profile_mask(int rootfd);
/* The profile PATH written in the container whose root is ROOTFD when it
 * has a GPU: 0 (also when it has none: nothing written), -1 (ERR) */
int app_profile_write(int rootfd, const char *path, struct oerr *err);

#endif
