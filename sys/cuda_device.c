/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's answer about one device (cuda_device.h). */
#include "cuda_device.h"

#include <string.h>

#include "cuda_attrs.h"
#include "rules.h"

#define CUDA_ERROR_NO_DEVICE 100

int kimg_cu_current_device(const struct kimg_cu_api *api, int *dev)
{
	int count = 0, rc;
	if (!api->cuDeviceGetCount)
		return -1;
	if ((rc = api->cuDeviceGetCount(&count)) != 0)
		return rc;
	if (count <= 0)
		return CUDA_ERROR_NO_DEVICE;
	if (api->cuCtxGetDevice && api->cuCtxGetDevice(dev) == 0)
		return 0;
	/* no current context (a failed load before any): device 0 is what the
	 * runtime would have picked; its handle is the driver's to give */
	if (!api->cuDeviceGet)
		return -1;
	return api->cuDeviceGet(dev, 0);
}

int kimg_cu_device_facts(const struct kimg_cu_api *api, int dev, struct kimg_device *out, bool *integrated)
{
	struct kimg_device d;
	int major = 0, minor = 0, igpu = 0, rc;
	if (!api->cuDeviceGetAttribute)
		return -1;
	if ((rc = api->cuDeviceGetAttribute(&major, KIMG_ATTR_CC_MAJOR, dev)) != 0 ||
	    (rc = api->cuDeviceGetAttribute(&minor, KIMG_ATTR_CC_MINOR, dev)) != 0)
		return rc;
	if (api->cuDeviceGetAttribute(&igpu, KIMG_ATTR_INTEGRATED, dev) != 0)
		igpu = 0;
	memset(&d, 0, sizeof d);
	d.ordinal = dev;
	d.cc.sm = (uint16_t)(major * 10 + minor);
	d.cc.variant = KIMG_VARIANT_PLAIN;
	d.tegra = igpu && kimg_sm_is_tegra(d.cc.sm);
	if (!api->cuDriverGetVersion || api->cuDriverGetVersion(&d.driver_version) != 0)
		d.driver_version = 0;
	if (!api->cuDeviceGetName || api->cuDeviceGetName(d.name, (int)sizeof d.name, dev) != 0)
		d.name[0] = '\0';
	d.name[sizeof d.name - 1] = '\0';
	*out = d;
	if (integrated)
		*integrated = igpu != 0;
	return 0;
}
