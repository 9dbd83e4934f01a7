/* SPDX-License-Identifier: Apache-2.0 */
/* Advice for a PTX input the JIT linker refused (link_fix.h).
 *
 * Two reasons have link-specific answers (compat-rules: P3 target above
 * the device, P4 ISA above the driver's JIT); each row's text takes the
 * same values in the same order, filled from the device and the worst
 * PTX image of the input. */
#include <stdio.h>

#include "link_fix.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Every row uses arguments 1 and 2 (printf needs no gap before the
 * last one it reads). Arguments, in order: image target ("compute_100"), device compute
 * ("compute_90"), PTX ISA ("9.9"), CUDA that introduced it ("13.1" or
 * "a CUDA newer than kimg knows"), driver's CUDA ("13.0"), driver's max
 * ISA ("9.0"), minimum driver for the PTX's CUDA (">= 590.xx" or ""). */
static const struct {
	enum kimg_reason reason;
	const char *fmt;
} rows[] = {
	{ KIMG_REASON_PTX_NEWER_THAN_DEVICE,
	  "The linker JIT-compiles PTX for this GPU only, and this PTX targets %1$s: generate it for %2$s or lower "
	  "(nvcc -ptx -arch=%2$s, NVRTC --gpu-architecture=%2$s; numba-cuda and CuPy take it from the device "
	  "unless told otherwise), or add SASS for this GPU instead of PTX." },
	{ KIMG_REASON_PTX_ISA_TOO_NEW,
	  "This PTX (.target %1$s) is ISA %3$s, written by %4$s (the nvcc or NVRTC that produced it, e.g. the "
	  "nvidia-cuda-nvrtc wheel numba-cuda or CuPy uses); this driver (CUDA %5$s) JIT-compiles ISA %6$s at most: "
	  "produce the PTX with CUDA %5$s or older (an NVRTC that matches the driver, for %2$s), upgrade the "
	  "driver%7$s, or install the forward-compatibility package (cuda-compat, data center GPUs only)." },
};

static void fmt_cuda(char *buf, size_t size, int version)
{
	if (version > 0)
		snprintf(buf, size, "%d.%d", version / 1000, version % 1000 / 10);
	else
		snprintf(buf, size, "?");
}

size_t kimg_link_fix_for(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
			 const struct kimg_image *imgs, size_t n, char *buf, size_t size)
{
	if (!buf || size == 0)
		return 0;
	buf[0] = '\0';
	if (!dev || !verdict || verdict->outcome != KIMG_OUTCOME_CANNOT_RUN)
		return 0;
	const char *fmt = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(rows) && !fmt; i++)
		if (rows[i].reason == verdict->reason)
			fmt = rows[i].fmt;
	if (!fmt)
		return 0;
	/* the PTX image that decided: the newest ISA, else the first */
	const struct kimg_image *ptx = NULL;
	for (size_t i = 0; i < n; i++)
		if (imgs[i].kind == KIMG_IMAGE_PTX && (!ptx || imgs[i].ptx_isa > ptx->ptx_isa))
			ptx = &imgs[i];
	char target[32] = "?", compute[32], isa[16] = "?", isa_cuda[48], drv_cuda[16], drv_isa[16], min_drv[48] = "";
	struct kimg_image dev_img = { .kind = KIMG_IMAGE_PTX, .arch = dev->cc };
	dev_img.arch.variant = KIMG_VARIANT_PLAIN;
	kimg_image_arch_name(&dev_img, compute, sizeof compute);
	if (ptx) {
		kimg_image_arch_name(ptx, target, sizeof target);
		snprintf(isa, sizeof isa, "%u.%u", (unsigned)KIMG_ISA_MAJOR(ptx->ptx_isa), (unsigned)KIMG_ISA_MINOR(ptx->ptx_isa));
	}
	int isa_cuda_v = ptx ? kimg_ptx_isa_cuda_version(ptx->ptx_isa) : 0;
	if (isa_cuda_v > 0) {
		char v[16];
		fmt_cuda(v, sizeof v, isa_cuda_v);
		snprintf(isa_cuda, sizeof isa_cuda, "CUDA %s or newer", v);
		const char *d = kimg_cuda_min_driver(isa_cuda_v);
		if (d)
			snprintf(min_drv, sizeof min_drv, " to %s or newer", d);
	} else {
		snprintf(isa_cuda, sizeof isa_cuda, "a CUDA newer than kimg knows");
	}
	fmt_cuda(drv_cuda, sizeof drv_cuda, dev->driver_version);
	uint16_t max_isa = kimg_driver_max_ptx_isa(dev->driver_version);
	if (max_isa)
		snprintf(drv_isa, sizeof drv_isa, "%u.%u", (unsigned)KIMG_ISA_MAJOR(max_isa), (unsigned)KIMG_ISA_MINOR(max_isa));
	else
		snprintf(drv_isa, sizeof drv_isa, "?");
	int len = snprintf(buf, size, fmt, target, compute, isa, isa_cuda, drv_cuda, drv_isa, min_drv);
	if (len < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)len < size ? (size_t)len : size - 1;
}
