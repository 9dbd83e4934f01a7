/* SPDX-License-Identifier: Apache-2.0 */
/* File-level rules (file_rules.h): the -rdc JIT link (R1, R2) and the
 * dispatch of modules for other GPUs (F0-F3). Pure: no state, no
 * allocation, no I/O. */
#include "file_rules.h"

#include <errno.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- libraries that select modules per GPU (F2) ----
 * A row matches a file whose last path component starts with `prefix`
 * followed by one of ".", "_" or "-" (libcublasLt.so.13, libcudnn_cnn.so.9,
 * libnvshmem_host.so.3), so "libcublas" does not swallow "libcublasLt" by
 * accident: rows are distinct libraries, and both happen to dispatch.
 * Sources: "H200" is the kimg-probe check of a healthy PyTorch 2.11+cu130
 * environment (driver 580.159.04) where every workload ran while these
 * libraries held modules only for other GPUs (counts from that run). */
static const struct {
	const char *prefix;
	const char *library;
	const char *source;
} dispatch_libs[] = {
	{ "libcublasLt", "cuBLASLt",
	  "cuBLASLt picks its kernels by the device's SM at run time; H200: 1185 modules for sm_100/103/120 only" },
	{ "libcublas", "cuBLAS", "cuBLAS routes GEMMs through cuBLASLt's per-SM kernel selection; H200: 2 modules" },
	{ "libcudnn", "cuDNN",
	  "cuDNN 9 engines are chosen per device by its heuristics; H200: 797 modules in libcudnn_engines_precompiled, 2 in libcudnn_cnn" },
	{ "libcusparseLt", "cuSPARSELt", "cuSPARSELt selects kernels per SM; H200: 644 modules for other GPUs" },
	{ "libcusparse", "cuSPARSE", "cuSPARSE selects kernels per SM; H200: 20 modules for other GPUs" },
	{ "libcufft", "cuFFT", "cuFFT plans select kernels per SM; H200: 1 module for other GPUs" },
	{ "libnccl", "NCCL", "NCCL loads the device code for the GPU it runs on; H200: 4 sm_100f modules" },
	{ "libnvshmem", "NVSHMEM",
	  "NVSHMEM, like NCCL which builds on the same per-GPU loading, ships device code per architecture; "
	  "its cubins were not counted in the H200 run (unverified row)" },
};

static bool prefix_matches(const char *base, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(base, prefix, n) == 0 && (base[n] == '.' || base[n] == '_' || base[n] == '-');
}

const char *kimg_dispatch_library(const char *file)
{
	if (!file)
		return NULL;
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	for (size_t i = 0; i < ARRAY_SIZE(dispatch_libs); i++)
		if (prefix_matches(base, dispatch_libs[i].prefix))
			return dispatch_libs[i].library;
	return NULL;
}

static const char *const fate_ids[KIMG_FATE_COUNT] = {
	[KIMG_FATE_RUNS] = "runs",
	[KIMG_FATE_DISPATCHED] = "dispatched",
	[KIMG_FATE_FAILS] = "fails",
	[KIMG_FATE_NOT_JUDGED] = "not_judged",
};

const char *kimg_fate_id(enum kimg_module_fate fate)
{
	return (unsigned)fate < KIMG_FATE_COUNT ? fate_ids[fate] : "unknown";
}

/* ---- predicates ---- */

static bool runs(const struct kimg_module_verdict *v)
{
	return v->outcome != KIMG_OUTCOME_CANNOT_RUN;
}

/* F1: every loadable image is `a` or `f` code (none of it fits, or the
 * module would run). LTO-IR and unknown entries are never loaded and do
 * not count; a module of only those is not dispatch. */
static bool only_specific_images(const struct kimg_image *imgs, size_t n)
{
	size_t loadable = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kimg_image *img = &imgs[i];
		if (img->kind != KIMG_IMAGE_SASS && img->kind != KIMG_IMAGE_PTX)
			continue;
		loadable++;
		if (img->arch.variant != KIMG_VARIANT_A && img->arch.variant != KIMG_VARIANT_F)
			return false;
	}
	return loadable > 0;
}

/* R1: a link input the driver can JIT-link on dev holds PTX that this
 * device's JIT accepts (P1/P2 fits). */
static bool has_jit_ptx(const struct kimg_file_module *m, const struct kimg_device *dev)
{
	for (size_t i = 0; i < m->n_imgs; i++) {
		struct kimg_image_verdict v;
		if (m->imgs[i].kind != KIMG_IMAGE_PTX)
			continue;
		kimg_rules_check_image(&m->imgs[i], dev, &v);
		if (v.outcome == KIMG_OUTCOME_PTX_JIT)
			return true;
	}
	return false;
}

/* The launch error of a -rdc program whose linked module has no image for
 * the GPU and no PTX to JIT-link: CUDA_ERROR_NOT_FOUND / cudaErrorSymbolNotFound,
 * measured on an H200 (CUDA 13.0, driver 580) for code=sm_80 and for
 * compute_100 PTX alike. */
#define RDC_LAUNCH_ERROR 500

static void set(struct kimg_module_judgement *j, enum kimg_module_fate fate, const char *rule, const char *library)
{
	j->fate = fate;
	j->rule = rule;
	j->library = library;
}

int kimg_rules_judge_file(const char *file, const struct kimg_file_module *mods, size_t n,
			  const struct kimg_device *dev, unsigned flags, struct kimg_module_judgement *out)
{
	if (!out || !dev || (!mods && n > 0) || (flags & ~(unsigned)KIMG_FILE_STRICT))
		return -EINVAL;

	size_t link_inputs = 0, jit_inputs = 0;
	for (size_t i = 0; i < n; i++)
		if (mods[i].role == KIMG_ROLE_LINK_INPUT) {
			link_inputs++;
			jit_inputs += has_jit_ptx(&mods[i], dev);
		}
	bool jit_link = link_inputs > 0 && jit_inputs == link_inputs;

	/* Module verdicts, then R1 on the loaded modules of -rdc files. */
	bool any_runs = false;
	for (size_t i = 0; i < n; i++) {
		struct kimg_module_judgement *j = &out[i];
		memset(j, 0, sizeof *j);
		j->verdict.selected = -1;
		if (mods[i].role != KIMG_ROLE_LOADED) {
			set(j, KIMG_FATE_NOT_JUDGED, NULL, NULL);
			continue;
		}
		kimg_rules_check_module(mods[i].imgs, mods[i].n_imgs, dev, NULL, &j->verdict);
		if (!runs(&j->verdict) && jit_link) {
			j->verdict.outcome = KIMG_OUTCOME_JIT_LINK;
			j->verdict.expected_error = 0;
			j->verdict.rule = "R1";
			set(j, KIMG_FATE_RUNS, "R1", NULL);
		} else {
			set(j, runs(&j->verdict) ? KIMG_FATE_RUNS : KIMG_FATE_FAILS, NULL, NULL);
		}
		any_runs |= j->fate == KIMG_FATE_RUNS;
	}

	/* The modules that still cannot run: dispatched (F1, F2) when other
	 * modules of the file run, so that a library with -rdc inputs (NCCL,
	 * NVSHMEM) keeps its modules for other GPUs excused; else R2 in -rdc
	 * files, F0 or F3. */
	bool strict = flags & KIMG_FILE_STRICT;
	const char *library = strict ? NULL : kimg_dispatch_library(file);
	int fails = 0;
	for (size_t i = 0; i < n; i++) {
		struct kimg_module_judgement *j = &out[i];
		if (j->fate == KIMG_FATE_FAILS) {
			if (any_runs && !strict && only_specific_images(mods[i].imgs, mods[i].n_imgs)) {
				set(j, KIMG_FATE_DISPATCHED, "F1", NULL);
			} else if (any_runs && library) {
				set(j, KIMG_FATE_DISPATCHED, "F2", library);
			} else if (link_inputs > 0) {
				j->verdict.expected_error = RDC_LAUNCH_ERROR;
				set(j, KIMG_FATE_FAILS, "R2", NULL);
			} else {
				set(j, KIMG_FATE_FAILS, any_runs ? "F3" : "F0", NULL);
			}
		}
		fails += j->fate == KIMG_FATE_FAILS;
	}
	return fails;
}

/* The caller says the module cannot run; an image that fits after all
 * (sm_90a on 9.0) is not code for other GPUs, whatever the caller thinks. */
static bool any_image_fits(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev)
{
	for (size_t i = 0; i < n; i++) {
		struct kimg_image_verdict v;
		kimg_rules_check_image(&imgs[i], dev, &v);
		if (v.outcome != KIMG_OUTCOME_CANNOT_RUN)
			return true;
	}
	return false;
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
	if (only_specific_images(imgs, n) && !any_image_fits(imgs, n, dev)) {
		out->dispatched = true;
		out->rule = "F1";
		return;
	}
	out->library = kimg_dispatch_library(file);
	out->dispatched = out->library != NULL;
	out->rule = out->dispatched ? "F2" : "F3";
}
