/* SPDX-License-Identifier: Apache-2.0 */
/* Three readings of each GPU (gpu_readings.h). */
#include "gpu_readings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpus.h"
#include "nvml.h"

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

/* NVML's reading of each GPU into out, and the driver's release into
 * release (left "" where NVML cannot say), in one NVML session. */
static int read_nvml(struct nvml_gpu *out, int cap, char *release, size_t release_size, char *err, size_t err_size)
{
	const struct kimg_nvml_api *nv = kimg_nvml();
	if (!nv) {
		snprintf(err, err_size, "libnvidia-ml.so.1 cannot be loaded");
		return -1;
	}
	unsigned n = 0;
	int rc;
	if (!nv->init) {
		snprintf(err, err_size, "libnvidia-ml.so.1 lacks an entry point (nvmlInit_v2 ...)");
		return -1;
	}
	if ((rc = nv->init()) != 0) {
		snprintf(err, err_size, "nvmlInit failed (NVML error %d)", rc);
		return -1;
	}
	/* NVML knows the release even where procfs is hidden (containers). */
	char buf[96] = "";
	if (nv->driver_version && nv->driver_version(buf, sizeof buf) == 0 && buf[0])
		snprintf(release, release_size, "%s", buf);
	if (!nv->count || !nv->by_index || !nv->name || !nv->uuid) {
		snprintf(err, err_size, "libnvidia-ml.so.1 lacks an entry point (nvmlInit_v2 ...)");
		if (nv->shutdown)
			nv->shutdown();
		return -1;
	}
	if ((rc = nv->count(&n)) != 0) {
		/* no count, no second reading: said, as a failed init is (it was
		 * once written here and dropped, NVML then listing 0 GPUs) */
		snprintf(err, err_size, "nvmlDeviceGetCount failed (NVML error %d)", rc);
		if (nv->shutdown)
			nv->shutdown();
		return -1;
	}
	int k = 0;
	for (unsigned i = 0; i < n && k < cap; i++) {
		void *d = NULL;
		struct nvml_gpu *g = &out[k++];
		memset(g, 0, sizeof *g);
		g->mig_mode = -1;
		if (nv->by_index(i, &d) != 0)
			continue;
		nv->name(d, g->name, sizeof g->name);
		nv->uuid(d, g->uuid, sizeof g->uuid);
		int major = 0, minor = 0;
		if (nv->cc && nv->cc(d, &major, &minor) == 0 && major > 0)
			g->cc = (unsigned)(major * 10 + minor);
		unsigned cur = 0, pend = 0;
		if (nv->mig_mode && nv->mig_mode(d, &cur, &pend) == 0)
			g->mig_mode = cur ? 1 : 0;
		unsigned max = 0;
		if (g->mig_mode == 1 && nv->mig_count && nv->mig_handle && nv->mig_count(d, &max) == 0 && max > 0 &&
		    max <= 64 && (g->mig_uuids = calloc(max, sizeof *g->mig_uuids)) != NULL)
			for (unsigned m = 0; m < max; m++) {
				void *md = NULL;
				if (nv->mig_handle(d, m, &md) == 0 &&
				    nv->uuid(md, g->mig_uuids[g->n_mig], sizeof g->mig_uuids[0]) == 0)
					g->n_mig++;
			}
	}
	if (nv->shutdown)
		nv->shutdown();
	return k;
}

/* CUDA's UUID of each visible device, "" when the driver cannot say. */
static void cuda_uuids(struct kimg_gpu_inventory *inv)
{
	const struct kimg_cu_api *cu;
	if (kimg_driver_api_load(&cu, NULL) < 0 || !cu->cuDeviceGetUuid)
		return;
	for (int i = 0; i < inv->n; i++) {
		unsigned char b[16];
		int dev = 0;
		if (cu->cuDeviceGet(&dev, inv->gpus[i].ordinal) == 0 && cu->cuDeviceGetUuid(b, dev) == 0)
			format_uuid(b, "GPU-", inv->gpus[i].uuid, sizeof inv->gpus[i].uuid);
	}
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
	/* The driver's devices, then NVML's readings and the release in one
	 * NVML session (each start of NVML opens every GPU). */
	int n = kimg_driver_devices(&inv->driver, devs, KIMG_GPU_READINGS_MAX, &err);
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
	char release[sizeof inv->driver.release] = "";
	int nn = read_nvml(nv, KIMG_GPU_READINGS_MAX, release, sizeof release, inv->nvml_error, sizeof inv->nvml_error);
	/* A release only for a driver that answered its version: NVML's,
	 * else procfs'. */
	if (inv->driver.cuda_version != 0) {
		if (release[0])
			memcpy(inv->driver.release, release, sizeof release);
		else
			kimg_driver_release_from_proc(inv->driver.release, sizeof inv->driver.release);
	}
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
