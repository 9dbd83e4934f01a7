/* SPDX-License-Identifier: Apache-2.0 */
/* CUresult / cudaError_t numbers kimg explains: docs/rules.md §9.
 * Driver and runtime numbers are identical since CUDA 10.1; a NULL name
 * means that API has no such code (98 and 35 are runtime-only). */
#include <stddef.h>

#include "cuda_errors.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum err_class {
	ERR_OTHER = 0,
	ERR_IMAGE,          /* always an image problem [§1, §5] */
	ERR_IMAGE_IF_RULES, /* an image problem only when the rules find a mismatch */
};

static const struct {
	int code;
	const char *driver;
	const char *runtime;
	const char *text;
	enum err_class cls;
} errors[] = {
	{ 0, "CUDA_SUCCESS", "cudaSuccess", "no error", ERR_OTHER },
	{ 34, "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary",
	  "stub libcuda loaded instead of the driver", ERR_OTHER },
	{ 35, NULL, "cudaErrorInsufficientDriver", "driver older than the runtime", ERR_OTHER },
	{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "cudaErrorCallRequiresNewerDriver",
	  "API needs a newer driver", ERR_OTHER },
	/* 98: "device function missing or not built for this arch" - also a
	 * plain missing symbol, so only with a rules mismatch [§9] */
	{ 98, NULL, "cudaErrorInvalidDeviceFunction",
	  "device function missing or not built for this arch", ERR_IMAGE_IF_RULES },
	{ 100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "no CUDA-capable device", ERR_OTHER },
	{ 101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", "invalid device ordinal", ERR_OTHER },
	{ 200, "CUDA_ERROR_INVALID_IMAGE", "cudaErrorInvalidKernelImage",
	  "device kernel image is invalid", ERR_IMAGE },
	{ 209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice",
	  "no kernel image suitable for the device", ERR_IMAGE },
	{ 218, "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPtx", "PTX JIT compilation failed", ERR_IMAGE },
	{ 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound",
	  "PTX JIT compiler library not found", ERR_IMAGE },
	{ 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion",
	  "PTX from a newer, unsupported toolchain", ERR_IMAGE },
	{ 223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "cudaErrorJitCompilationDisabled",
	  "PTX JIT disabled", ERR_IMAGE },
	{ 224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "cudaErrorUnsupportedExecAffinity",
	  "exec affinity not supported (not image-related)", ERR_OTHER },
	{ 225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "cudaErrorUnsupportedDevSideSync",
	  "PTX uses unsupported device-side cudaDeviceSynchronize", ERR_OTHER },
	{ 300, "CUDA_ERROR_INVALID_SOURCE", "cudaErrorInvalidSource", "device kernel source invalid", ERR_IMAGE },
	{ 301, "CUDA_ERROR_FILE_NOT_FOUND", "cudaErrorFileNotFound", "file not found", ERR_OTHER },
	{ 302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "cudaErrorSharedObjectSymbolNotFound",
	  "shared-object symbol not found", ERR_OTHER },
	{ 303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "cudaErrorSharedObjectInitFailed",
	  "shared-object initialisation failed", ERR_OTHER },
	/* 500: seen for a Tegra device with desktop-only cubins [§5, BNB-1930] */
	{ 500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "named symbol not found", ERR_IMAGE_IF_RULES },
	{ 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch",
	  "display driver and CUDA driver mismatch", ERR_OTHER },
	{ 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice",
	  "forward-compatibility libcuda on an unsupported GPU", ERR_OTHER },
};

static int find(int code)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

const char *kimg_cuda_error_name(int code)
{
	int i = find(code);
	return i < 0 ? NULL : errors[i].driver;
}

const char *kimg_cuda_runtime_error_name(int code)
{
	int i = find(code);
	return i < 0 ? NULL : errors[i].runtime;
}

const char *kimg_cuda_error_text(int code)
{
	int i = find(code);
	return i < 0 ? NULL : errors[i].text;
}

/* What the driver means by each image-class code when the image rules alone
 * do not explain it (docs/rules.md §1, §5; docs/format.md §6, §13). */
static const struct {
	int code;
	const char *cause;
} causes[] = {
	{ 98, "no kernel of that name in a module the driver could use; with no fitting image "
	      "this is an architecture mismatch" },
	{ 200, "the driver could not read the image: it is corrupt or truncated, or compressed with a "
	       "scheme this driver predates (zstd-compressed fatbins, CUDA 12.4+, need driver 550.54.14 or newer)" },
	{ 209, "no cubin or PTX in the module can run on this GPU with this driver" },
	{ 218, "the driver's PTX JIT rejected the PTX: its target is newer than the GPU, or it uses "
	       "instructions this GPU lacks" },
	{ 221, "the PTX JIT compiler library (libnvidia-ptxjitcompiler.so.1) could not be loaded: install the "
	       "driver's JIT library (often missing in containers and Jetson images) or ship SASS for this GPU" },
	{ 222, "the PTX's .version is newer than this driver's JIT accepts: update the driver or ship SASS" },
	{ 223, "PTX JIT is disabled (CUDA_DISABLE_PTX_JIT / CUDA_DISABLE_JIT) and no cubin fits this GPU" },
	{ 300, "the image's code does not match what its fatbin header declares (a payload of another GPU "
	       "generation behind a selectable header)" },
	{ 500, "named symbol not found; with no fitting image this is an architecture mismatch (seen on "
	       "Tegra GPUs with desktop-only cubins)" },
};

const char *kimg_cuda_error_cause(int code)
{
	for (size_t i = 0; i < ARRAY_SIZE(causes); i++)
		if (causes[i].code == code)
			return causes[i].cause;
	return NULL;
}

bool kimg_cuda_error_is_image_class(int code)
{
	int i = find(code);
	return i >= 0 && errors[i].cls != ERR_OTHER;
}

bool kimg_cuda_error_needs_confirmation(int code)
{
	int i = find(code);
	return i >= 0 && errors[i].cls == ERR_IMAGE_IF_RULES;
}
