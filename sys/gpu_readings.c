/* Three readings of each GPU (gpu_readings.h). */
#include "gpu_readings.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "gpus.h"

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_count_fn)(unsigned *);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_str_fn)(void *, char *, unsigned);
typedef int (*nvml_cc_fn)(void *, int *, int *);
typedef int (*nvml_mig_mode_fn)(void *, unsigned *, unsigned *);
typedef int (*nvml_mig_count_fn)(void *, unsigned *);
typedef int (*nvml_mig_handle_fn)(void *, unsigned, void **);
typedef int (*cu_uuid_fn)(unsigned char *, int);
typedef int (*cu_get_fn)(int *, int);

struct nvml_gpu {
	char name[96], uuid[80];
	unsigned cc;
	int mig_mode;
	char (*mig_uuids)[80];
	unsigned n_mig;
};

/* "GPU-" uuid text without its prefix, for comparing with CUDA's bytes. */
static const char *uuid_body(const char *u)
{
	return strncmp(u, "GPU-", 4) == 0 || strncmp(u, "MIG-", 4) == 0 ? u + 4 : u;
}

static void format_uuid(const unsigned char b[16], const char *prefix, char *out, size_t size)
{
	snprintf(out, size,
		 "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix, b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static int read_nvml(struct nvml_gpu *out, int cap, char *err, size_t err_size)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, err_size, "libnvidia-ml.so.1 cannot be loaded");
		return -1;
	}
	nvml_void_fn init = (nvml_void_fn)dlsym(h, "nvmlInit_v2");
	nvml_void_fn shutdown = (nvml_void_fn)dlsym(h, "nvmlShutdown");
	nvml_count_fn count = (nvml_count_fn)dlsym(h, "nvmlDeviceGetCount_v2");
	nvml_handle_fn handle = (nvml_handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	nvml_str_fn name = (nvml_str_fn)dlsym(h, "nvmlDeviceGetName");
	nvml_str_fn uuid = (nvml_str_fn)dlsym(h, "nvmlDeviceGetUUID");
	nvml_cc_fn cc = (nvml_cc_fn)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	nvml_mig_mode_fn mig_mode = (nvml_mig_mode_fn)dlsym(h, "nvmlDeviceGetMigMode");
	nvml_mig_count_fn mig_count = (nvml_mig_count_fn)dlsym(h, "nvmlDeviceGetMaxMigDeviceCount");
	nvml_mig_handle_fn mig_handle = (nvml_mig_handle_fn)dlsym(h, "nvmlDeviceGetMigDeviceHandleByIndex");
	unsigned n = 0;
	int rc;
	if (!init || !count || !handle || !name || !uuid) {
		snprintf(err, err_size, "libnvidia-ml.so.1 lacks an entry point (nvmlInit_v2 ...)");
		dlclose(h);
		return -1;
	}
	if ((rc = init()) != 0) {
		snprintf(err, err_size, "nvmlInit failed (NVML error %d)", rc);
		dlclose(h);
		return -1;
	}
	if ((rc = count(&n)) != 0) {
		snprintf(err, err_size, "nvmlDeviceGetCount failed (NVML error %d)", rc);
		n = 0;
	}
	int k = 0;
	for (unsigned i = 0; i < n && k < cap; i++) {
		void *d = NULL;
		struct nvml_gpu *g = &out[k++];
		memset(g, 0, sizeof *g);
		g->mig_mode = -1;
		if (handle(i, &d) != 0)
			continue;
		name(d, g->name, sizeof g->name);
		uuid(d, g->uuid, sizeof g->uuid);
		int major = 0, minor = 0;
		if (cc && cc(d, &major, &minor) == 0 && major > 0)
			g->cc = (unsigned)(major * 10 + minor);
		unsigned cur = 0, pend = 0;
		if (mig_mode && mig_mode(d, &cur, &pend) == 0)
			g->mig_mode = cur ? 1 : 0;
		unsigned max = 0;
		if (g->mig_mode == 1 && mig_count && mig_handle && mig_count(d, &max) == 0 && max > 0 && max <= 64 &&
		    (g->mig_uuids = calloc(max, sizeof *g->mig_uuids)) != NULL)
			for (unsigned m = 0; m < max; m++) {
				void *md = NULL;
				if (mig_handle(d, m, &md) == 0 && uuid(md, g->mig_uuids[g->n_mig], sizeof g->mig_uuids[0]) == 0)
					g->n_mig++;
			}
	}
	if (shutdown)
		shutdown();
	dlclose(h);
	return k;
}

/* CUDA's UUID of each visible device, "" when the driver cannot say. */
static void cuda_uuids(struct kimg_gpu_inventory *inv)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		return;
	cu_uuid_fn u2 = (cu_uuid_fn)dlsym(h, "cuDeviceGetUuid_v2");
	cu_uuid_fn u1 = (cu_uuid_fn)dlsym(h, "cuDeviceGetUuid");
	cu_get_fn get = (cu_get_fn)dlsym(h, "cuDeviceGet");
	cu_uuid_fn u = u2 ? u2 : u1;
	for (int i = 0; u && get && i < inv->n; i++) {
		unsigned char b[16];
		int dev = 0;
		if (get(&dev, inv->gpus[i].ordinal) == 0 && u(b, dev) == 0)
			format_uuid(b, "GPU-", inv->gpus[i].uuid, sizeof inv->gpus[i].uuid);
	}
	/* kept loaded, as kimg_driver_query does */
}

void kimg_gpu_inventory_read(struct kimg_gpu_inventory *inv)
{
	struct kimg_device devs[KIMG_GPU_READINGS_MAX];
	struct kimg_error err = { 0, 0, "" };
	memset(inv, 0, sizeof *inv);
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (vis) {
		inv->visible_set = true;
		snprintf(inv->visible_devices, sizeof inv->visible_devices, "%s", vis);
	}
	int n = kimg_driver_query(&inv->driver, devs, KIMG_GPU_READINGS_MAX, &err);
	inv->cuda_count = n;
	if (n < 0) {
		snprintf(inv->cuda_error, sizeof inv->cuda_error, "%s", err.what);
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct kimg_gpu_reading *g = &inv->gpus[inv->n++];
		memset(g, 0, sizeof *g);
		g->ordinal = devs[i].ordinal;
		g->nvml_index = -1;
		g->mig_mode = -1;
		g->cc_driver = devs[i].cc.sm;
		g->tegra = devs[i].tegra;
		snprintf(g->name, sizeof g->name, "%s", devs[i].name);
		const struct kimg_gpu *t = kimg_gpu_lookup(devs[i].name);
		g->cc_table = t ? t->sm : 0;
	}
	cuda_uuids(inv);
	struct nvml_gpu nv[KIMG_GPU_READINGS_MAX];
	int nn = read_nvml(nv, KIMG_GPU_READINGS_MAX, inv->nvml_error, sizeof inv->nvml_error);
	inv->nvml_count = nn;
	for (int k = 0; k < nn; k++) {
		bool matched = false;
		for (int i = 0; i < n; i++) {
			struct kimg_gpu_reading *g = &inv->gpus[i];
			if (!g->uuid[0])
				continue;
			bool whole = strcmp(uuid_body(g->uuid), uuid_body(nv[k].uuid)) == 0;
			bool mig = false;
			for (unsigned m = 0; m < nv[k].n_mig && !whole && !mig; m++)
				mig = strcmp(uuid_body(g->uuid), uuid_body(nv[k].mig_uuids[m])) == 0;
			if (!whole && !mig)
				continue;
			matched = true;
			g->nvml_index = k;
			g->cc_nvml = nv[k].cc;
			g->mig_mode = nv[k].mig_mode;
			if (mig) {
				snprintf(g->parent_uuid, sizeof g->parent_uuid, "%s", nv[k].uuid);
				memcpy(g->uuid, "MIG-", 4);
			} else {
				snprintf(g->uuid, sizeof g->uuid, "%s", nv[k].uuid);
			}
		}
		if (!matched && inv->n < KIMG_GPU_READINGS_MAX) {
			struct kimg_gpu_reading *g = &inv->gpus[inv->n++];
			memset(g, 0, sizeof *g);
			g->ordinal = -1;
			g->nvml_index = k;
			g->cc_nvml = nv[k].cc;
			g->mig_mode = nv[k].mig_mode;
			snprintf(g->name, sizeof g->name, "%s", nv[k].name);
			snprintf(g->uuid, sizeof g->uuid, "%s", nv[k].uuid);
			const struct kimg_gpu *t = kimg_gpu_lookup(nv[k].name);
			g->cc_table = t ? t->sm : 0;
		}
		free(nv[k].mig_uuids);
	}
}

bool kimg_gpu_reading_disagrees(const struct kimg_gpu_reading *g)
{
	unsigned v[3] = { g->cc_driver, g->cc_nvml, g->cc_table }, first = 0;
	for (int i = 0; i < 3; i++) {
		if (!v[i])
			continue;
		if (!first)
			first = v[i];
		else if (v[i] != first)
			return true;
	}
	return false;
}
