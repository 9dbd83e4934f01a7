/* Dispatch of one module that cannot run (dispatch.h). The library table
 * is the one `kimg-probe check` uses for whole files; its rows and
 * sources are the same measurements. */
#include <string.h>

#include "dispatch.h"
#include "rules.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A row matches a file whose last path component starts with `prefix`
 * followed by ".", "_" or "-" (libcublasLt.so.13, libcudnn_cnn.so.9,
 * libnvshmem_host.so.3). Source of the counts: kimg-probe check of a
 * healthy PyTorch 2.11+cu130 environment on an H200 (driver 580.159.04),
 * where every workload ran while these libraries held modules only for
 * other GPUs; NCCL and cuDNN also measured through libkimg.so (issue 11:
 * NCCL probes its sm_100f kernels with cudaFuncGetAttributes and ignores
 * the 209; cuDNN's precompiled engines under CUDA_MODULE_LOADING=EAGER). */
static const struct {
	const char *prefix;
	const char *library;
	const char *source;
} libraries[] = {
	{ "libcublasLt", "cuBLASLt", "picks kernels by the device's SM; 1185 modules for sm_100/103/120 only" },
	{ "libcublas", "cuBLAS", "routes GEMMs through cuBLASLt's per-SM selection; 2 modules" },
	{ "libcudnn", "cuDNN", "engines chosen per device by its heuristics; 797 + 2 modules, 363 eager load failures" },
	{ "libcusparseLt", "cuSPARSELt", "selects kernels per SM; 644 modules for other GPUs" },
	{ "libcusparse", "cuSPARSE", "selects kernels per SM; 20 modules for other GPUs" },
	{ "libcufft", "cuFFT", "plans select kernels per SM; 1 module for other GPUs" },
	{ "libnccl", "NCCL", "loads the device code for the GPU it runs on; 4 sm_100f modules, probed and ignored" },
	{ "libnvshmem", "NVSHMEM", "ships device code per architecture and loads the running GPU's" },
};

static bool prefix_matches(const char *base, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(base, prefix, n) == 0 && (base[n] == '.' || base[n] == '_' || base[n] == '-');
}

const char *kimg_dispatch_selecting_library(const char *file)
{
	if (!file)
		return NULL;
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	for (size_t i = 0; i < ARRAY_SIZE(libraries); i++)
		if (prefix_matches(base, libraries[i].prefix))
			return libraries[i].library;
	return NULL;
}

/* F1: every loadable image is `a` or `f` code that does not fit dev.
 * LTO-IR and unknown entries are never loaded and do not count; a module
 * of only those is not dispatch. */
static bool only_specific_code_for_others(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev)
{
	size_t loadable = 0;
	for (size_t i = 0; i < n; i++) {
		if (imgs[i].kind != KIMG_IMAGE_SASS && imgs[i].kind != KIMG_IMAGE_PTX)
			continue;
		loadable++;
		if (imgs[i].arch.variant != KIMG_VARIANT_A && imgs[i].arch.variant != KIMG_VARIANT_F)
			return false;
		struct kimg_image_verdict v;
		kimg_rules_check_image(&imgs[i], dev, &v);
		if (v.outcome != KIMG_OUTCOME_CANNOT_RUN)
			return false;
	}
	return loadable > 0;
}

void kimg_dispatch_judge_module(const char *file, const struct kimg_image *imgs, size_t n,
				const struct kimg_device *dev, bool file_runs_here, struct kimg_dispatch_verdict *out)
{
	out->dispatched = false;
	out->library = NULL;
	if (!file_runs_here || !dev || (!imgs && n > 0)) {
		out->rule = "F0";
		return;
	}
	if (only_specific_code_for_others(imgs, n, dev)) {
		out->dispatched = true;
		out->rule = "F1";
		return;
	}
	out->library = kimg_dispatch_selecting_library(file);
	out->dispatched = out->library != NULL;
	out->rule = out->dispatched ? "F2" : "F3";
}
