/* SPDX-License-Identifier: Apache-2.0 */
/* NVML loaded once (nvml.h). */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazylib.h"
#include "rules_tables.h"

static struct kimg_nvml_api api;

/* All optional: each user checks what it needs (and says so its way). */
static const struct kimg_lazy_fn nvml_fns[] = {
	KIMG_LAZY_FN_OPTIONAL("nvmlInit_v2", api.init),
	KIMG_LAZY_FN_OPTIONAL("nvmlShutdown", api.shutdown),
	KIMG_LAZY_FN_OPTIONAL("nvmlSystemGetDriverVersion", api.driver_version),
	KIMG_LAZY_FN_OPTIONAL("nvmlSystemGetCudaDriverVersion_v2", api.cuda_driver_version),
	KIMG_LAZY_FN_OPTIONAL("nvmlSystemGetCudaDriverVersion", api.cuda_driver_version),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetCount_v2", api.count),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetHandleByIndex_v2", api.by_index),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetHandleByUUID", api.by_uuid),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetName", api.name),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetUUID", api.uuid),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetCudaComputeCapability", api.cc),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetMigMode", api.mig_mode),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetMaxMigDeviceCount", api.mig_count),
	KIMG_LAZY_FN_OPTIONAL("nvmlDeviceGetMigDeviceHandleByIndex", api.mig_handle),
};
static struct kimg_lazylib nvml = {
	.sonames = { "libnvidia-ml.so.1" }, .flags = RTLD_NOW, .fns = nvml_fns,
	.n_fns = sizeof nvml_fns / sizeof nvml_fns[0], .once = PTHREAD_ONCE_INIT,
};
const struct kimg_nvml_api *kimg_nvml(void)
{
	if (!kimg_lazylib_load(&nvml))
		return NULL;
	return &api;
}

bool kimg_nvml_first_visible_device(struct kimg_device *d)
{
	const struct kimg_nvml_api *n = kimg_nvml();
	if (!n || !n->init || !n->by_index || !n->cc || n->init() != 0)
		return false;
	void *dev = NULL;
	int major = 0, minor = 0;
	/* a cold path, once per process for the shim: getenv is fine here */
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (vis && (vis[0] == '\0' || vis[0] == '-'))
		return false; /* no visible device: nothing can run */
	if (vis && strncmp(vis, "GPU-", 4) == 0 && n->by_uuid) {
		char uuid[96];
		size_t len = strcspn(vis, ",");
		snprintf(uuid, sizeof uuid, "%.*s", (int)(len < sizeof uuid ? len : sizeof uuid - 1), vis);
		if (n->by_uuid(uuid, &dev) != 0)
			return false;
	} else {
		unsigned idx = 0;
		if (vis && vis[0] >= '0' && vis[0] <= '9')
			idx = (unsigned)strtoul(vis, NULL, 10);
		if (n->by_index(idx, &dev) != 0)
			return false;
	}
	if (n->cc(dev, &major, &minor) != 0)
		return false;
	memset(d, 0, sizeof *d);
	d->ordinal = 0;
	d->cc.sm = (uint16_t)(major * 10 + minor);
	d->tegra = false;
	if (!n->cuda_driver_version || n->cuda_driver_version(&d->driver_version) != 0)
		d->driver_version = 0;
	if (!n->name || n->name(dev, d->name, (unsigned)sizeof d->name) != 0)
		d->name[0] = '\0';
	d->name[sizeof d->name - 1] = '\0';
	return true;
}

int kimg_nvml_uniform_gpus(struct kimg_device *devs, size_t cap)
{
	const struct kimg_nvml_api *n = kimg_nvml();
	if (!n || !n->init || !n->count || !n->by_index || !n->name || !n->cc || getenv("CUDA_VISIBLE_DEVICES"))
		return -1;
	if (n->init() != 0)
		return -1;
	unsigned count = 0;
	int found = -1;
	if (n->count(&count) != 0 || count == 0 || count > cap)
		goto out;
	for (unsigned i = 0; i < count; i++) {
		struct kimg_device *d = &devs[i];
		void *dev = NULL;
		int major = 0, minor = 0;
		unsigned mig = 0, pending = 0;
		memset(d, 0, sizeof *d);
		if (n->by_index(i, &dev) != 0 || n->cc(dev, &major, &minor) != 0 ||
		    n->name(dev, d->name, (unsigned)sizeof d->name) != 0 || !d->name[0])
			goto out;
		d->name[sizeof d->name - 1] = '\0';
		/* MIG mode: CUDA sees instances, not the GPU. A GPU without MIG
		 * answers "not supported", which is not MIG. */
		if (n->mig_mode && n->mig_mode(dev, &mig, &pending) == 0 && mig != 0)
			goto out;
		d->cc.sm = (uint16_t)(major * 10 + minor);
		d->cc.variant = KIMG_VARIANT_PLAIN;
		d->ordinal = (int)i;
		if (kimg_sm_is_tegra(d->cc.sm) || (i > 0 && (d->cc.sm != devs[0].cc.sm || strcmp(d->name, devs[0].name) != 0)))
			goto out;
	}
	found = (int)count;
out:
	if (n->shutdown)
		n->shutdown();
	return found;
}
