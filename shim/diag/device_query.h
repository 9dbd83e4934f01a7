/* SPDX-License-Identifier: Apache-2.0 */
/* The device facts of the diagnosis (device_query.c). Two askings, kept
 * apart on purpose: a failure is judged against the device of the current
 * context at the time of the failure, a load against a cached answer that
 * may come from NVML before the driver is up. */
#ifndef KIMG_SHIM_DEVICE_QUERY_H
#define KIMG_SHIM_DEVICE_QUERY_H

#include <stdbool.h>

#include "device.h"

/* The current context's device, else device 0 (what the runtime would
 * pick), asked of the driver now; false when it cannot say. */
bool kimg_device_query(struct kimg_device *d);

/* The device a load is for: the current context's, else device 0, from
 * the driver once it is initialised; before that (a fatbin registered at
 * import time) from NVML, for the first device in CUDA_VISIBLE_DEVICES.
 * Facts are cached per device. False when neither can say. */
bool kimg_load_device(struct kimg_device *d);

#endif
