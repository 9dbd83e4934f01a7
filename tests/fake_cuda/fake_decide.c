/* The fake driver's decisions: which image of a module the device can
 * use, and the CUresult a real driver would give, using kimg's own core
 * (input classification, fatbin iteration, rules) against a device
 * described by FAKE_CUDA_SM / FAKE_CUDA_TEGRA / FAKE_CUDA_DRIVER and the
 * driver's own CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "fake_cuda.h"
#include "fatbin.h"
#include "input.h"
#include "ptx.h"
#include "rules.h"

#define MAX_IMAGES 64

int fake_env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

static void fake_device(struct kimg_device *dev)
{
	memset(dev, 0, sizeof *dev);
	dev->cc.sm = (uint16_t)fake_env_int("FAKE_CUDA_SM", 90);
	dev->tegra = fake_env_int("FAKE_CUDA_TEGRA", 0) != 0;
	dev->driver_version = fake_env_int("FAKE_CUDA_DRIVER", 13000);
	dev->force_ptx_jit = fake_env_int("CUDA_FORCE_PTX_JIT", fake_env_int("CUDA_FORCE_JIT", 0)) != 0;
	dev->disable_ptx_jit = fake_env_int("CUDA_DISABLE_PTX_JIT", fake_env_int("CUDA_DISABLE_JIT", 0)) != 0;
	dev->ordinal = 0;
}

/* Images of the one module at `code` (size bytes), or -1 when it is not
 * device code at all. */
static int collect(struct kimg_span in, struct kimg_image *imgs)
{
	struct kimg_error err = { 0 };
	int n = 0;
	switch (kimg_input_classify(in)) {
	case KIMG_INPUT_FATBIN: {
		struct kimg_fatbin fb;
		uint64_t cursor = 0;
		if (kimg_fatbin_open(in, 0, &fb, &err) < 0)
			return -1;
		while (n < MAX_IMAGES && kimg_fatbin_next(&fb, &cursor, &imgs[n], &err) == 1)
			n++;
		return n;
	}
	case KIMG_INPUT_CUBIN: {
		struct kimg_cubin_info ci;
		if (kimg_cubin_parse(in, &ci, &err) < 0)
			return -1;
		memset(&imgs[0], 0, sizeof imgs[0]);
		imgs[0].kind = KIMG_IMAGE_SASS;
		imgs[0].arch.sm = ci.sm;
		imgs[0].arch.variant = ci.sm_a_v1 ? KIMG_VARIANT_A : KIMG_VARIANT_PLAIN;
		imgs[0].payload = in;
		return 1;
	}
	case KIMG_INPUT_PTX: {
		struct kimg_ptx_info pi;
		if (kimg_ptx_parse(in, &pi, &err) < 0)
			return -1;
		memset(&imgs[0], 0, sizeof imgs[0]);
		imgs[0].kind = KIMG_IMAGE_PTX;
		imgs[0].arch = pi.target;
		imgs[0].ptx_isa = pi.isa;
		imgs[0].payload = in;
		return 1;
	}
	default:
		return -1;
	}
}

/* 0 or the CUresult the driver gives for this code on the fake device;
 * *selected gets the chosen image. 200 CUDA_ERROR_INVALID_IMAGE for bytes
 * that are no device code. */
int fake_decide(const uint8_t *code, uint64_t size, struct kimg_image *selected)
{
	struct kimg_image imgs[MAX_IMAGES];
	struct kimg_device dev;
	struct kimg_module_verdict v;
	int n = collect(kimg_span_make(code, size), imgs);
	if (n < 0)
		return 200;
	fake_device(&dev);
	kimg_rules_check_module(imgs, (size_t)n, &dev, NULL, &v);
	if (v.expected_error == 0 && selected && v.selected >= 0)
		*selected = imgs[v.selected];
	return v.expected_error;
}

/* In-memory code: a registration wrapper, container, cubin or PTX text. */
int fake_span_of_memory(const void *image, const uint8_t **code, uint64_t *size)
{
	struct kimg_error err = { 0 };
	const void *target;
	if (kimg_memory_image_extent(image, (uint64_t)1 << 30, &target, size, &err) < 0)
		return 200;
	*code = target;
	return 0;
}

uint8_t *fake_read_file(const char *path, uint64_t *size)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1); /* + NUL for PTX */
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (uint64_t)n;
	return buf;
}

/* Is `name` a kernel of the image the driver selected? Only uncompressed
 * images are searched; others answer yes. */
struct find { const char *name; int found; };
static int on_name(void *ctx, const char *name, size_t len)
{
	struct find *f = ctx;
	if (strlen(f->name) == len && memcmp(f->name, name, len) == 0)
		f->found = 1;
	return 0;
}

int fake_has_kernel(const uint8_t *code, uint64_t size, const char *name)
{
	struct kimg_image img;
	struct kimg_error err = { 0 };
	struct find f = { name, 0 };
	if (!name)
		return 0;
	memset(&img, 0, sizeof img);
	if (fake_decide(code, size, &img) != 0 || img.compression != KIMG_COMPRESS_NONE || !img.payload.data)
		return 1;
	int rc = img.kind == KIMG_IMAGE_SASS ? kimg_cubin_for_each_kernel(img.payload, on_name, &f, &err)
					     : kimg_ptx_for_each_entry(img.payload, on_name, &f, &err);
	return rc < 0 ? 1 : f.found;
}

