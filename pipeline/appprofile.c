/* appprofile.c: see appprofile.h */
#include "pipeline/appprofile.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool app_profile_gpu_name(const char *name)
{
	const char *d = name + strlen("nvidia");

	return strncmp(name, "nvidia", strlen("nvidia")) == 0 && *d && strspn(d, "0123456789") == strlen(d);
}

char *app_profile_text(uint64_t mask)
{
	return xasprintf("{\"profiles\":[{\"name\":\"_container_\",\"settings\":[\"EGLVisibleDGPUDevices\",0x%llx]}],"
			 "\"rules\":[{\"pattern\":[],\"profile\":\"_container_\"}]}",
			 (unsigned long long)mask);
}

uint64_t app_profile_mask(int rootfd)
{
	int fd = root_open(rootfd, "/dev", O_RDONLY | O_DIRECTORY);
	uint64_t mask = 0;
	size_t seen = 0;
	DIR *d;
	struct dirent *de;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) && seen++ < 4096) {
		struct stat st;
		unsigned m;

		if (!app_profile_gpu_name(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISCHR(st.st_mode))
			continue;
		m = minor(st.st_rdev);
		if (m >= 64) {
			log_warn("/dev/%s: minor %u: not in the application profile (minors 0 to 63)", de->d_name, m);
			continue;
		}
		mask |= (uint64_t)1 << m;
	}
	closedir(d);
	return mask;
}

int app_profile_write(int rootfd, const char *path, struct oerr *err)
{
	uint64_t mask = app_profile_mask(rootfd);
	_cleanup_free_ char *dir = NULL, *text = NULL;
	_cleanup_close_ int pfd = -1;
	const char *name = strrchr(path, '/');

	if (!mask) {
		log_debug("no GPU in the container's /dev: no application profile");
		return 0;
	}
	if (path[0] != '/' || !name || !name[1])
		return oerr_usage(err, "%s: the application profile: not an absolute file path", path);
	dir = xstrndup(path, (size_t)(name - path));
	pfd = root_mkdirs(rootfd, *dir ? dir : "/", 0, NULL, NULL, err);
	if (pfd < 0)
		return oerr_prefix(err, "the application profile");
	/* a new inode renamed over the name, as the ld.so.cache is written:
	 * what the image put there (a block device node, a FIFO) is replaced,
	 * never opened for writing */
	text = app_profile_text(mask);
	if (root_write_atomic(rootfd, path, text, strlen(text), 0444, false, err) < 0)
		return oerr_prefix(err, "the application profile");
	log_info("%s: EGLVisibleDGPUDevices 0x%llx", path, (unsigned long long)mask);
	return 0;
}
