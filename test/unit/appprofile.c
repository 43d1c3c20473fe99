/* Unit tests: app_profile_gpu_name and app_profile_text
 * (pipeline/appprofile.c), against NVIDIA's update-application-profile's
 * node pattern and its expected profiles. */
#include "pipeline/appprofile.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
	static const struct { const char *name; bool gpu; } names[] = {
		{ "nvidia0", true }, { "nvidia12", true }, { "nvidia63", true }, { "nvidia", false },
		{ "nvidiactl", false }, { "nvidia-uvm", false }, { "nvidia-modeset", false },
		{ "nvidia-caps", false }, { "nvidia0a", false }, { "nvidia-0", false }, { "xnvidia0", false },
		{ "nvidia-nvswitch0", false }, { "", false },
	};
	static const struct { uint64_t mask; const char *want; } texts[] = {
		{ 1, "{\"profiles\":[{\"name\":\"_container_\",\"settings\":[\"EGLVisibleDGPUDevices\",0x1]}],"
		     "\"rules\":[{\"pattern\":[],\"profile\":\"_container_\"}]}" },
		{ 1 << 8, "{\"profiles\":[{\"name\":\"_container_\",\"settings\":[\"EGLVisibleDGPUDevices\",0x100]}],"
			  "\"rules\":[{\"pattern\":[],\"profile\":\"_container_\"}]}" },
		{ (1 << 0) | (1 << 15), "{\"profiles\":[{\"name\":\"_container_\",\"settings\":[\"EGLVisibleDGPUDevices\","
					"0x8001]}],\"rules\":[{\"pattern\":[],\"profile\":\"_container_\"}]}" },
		{ (uint64_t)1 << 63, "{\"profiles\":[{\"name\":\"_container_\",\"settings\":[\"EGLVisibleDGPUDevices\","
				     "0x8000000000000000]}],\"rules\":[{\"pattern\":[],\"profile\":\"_container_\"}]}" },
	};

	for (size_t i = 0; i < N_CASES(names); i++)
		CHECK(app_profile_gpu_name(names[i].name) == names[i].gpu, "'%s' %s a GPU's node", names[i].name,
		   names[i].gpu ? "is" : "is not");
	for (size_t i = 0; i < N_CASES(texts); i++) {
		char *t = app_profile_text(texts[i].mask);

		CHECK(strcmp(t, texts[i].want) == 0, "mask 0x%llx: %s", (unsigned long long)texts[i].mask, t);
		free(t);
	}
	return done();
}
