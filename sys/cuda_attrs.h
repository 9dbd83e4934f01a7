/* SPDX-License-Identifier: Apache-2.0 */
/* CUdevice_attribute values kimg asks the driver for (cuda.h, CUDA 13;
 * stable since they were introduced), in one place (sys/cuda_device.c),
 * for kimg-probe and libkimg.so alike.
 * cuda.h itself is not included: kimg builds without a toolkit. */
#ifndef KIMG_SYS_CUDA_ATTRS_H
#define KIMG_SYS_CUDA_ATTRS_H

#define KIMG_ATTR_INTEGRATED 18 /* CU_DEVICE_ATTRIBUTE_INTEGRATED */
#define KIMG_ATTR_CC_MAJOR 75   /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define KIMG_ATTR_CC_MINOR 76   /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */

#endif
