/* Modules doctor does not count as failures: code a library carries for
 * other GPUs and selects at run time by the GPU's compute capability.
 *
 * A module that cannot run on a GPU is "dispatched for other GPUs" when
 * another module of the same file runs there, and either every image in
 * it is arch- or family-specific (sm_100a, sm_120f: such code is only
 * ever chosen on its own GPUs), or the file is one of NVIDIA's libraries
 * that carry per-GPU modules and pick among them (measured on an H200
 * with PyTorch 2.11+cu130: libcublasLt 1185 such modules, cuDNN's engine
 * libraries 797, cuSPARSELt 644, cuSPARSE, NCCL, cuBLAS, cuFFT a few each,
 * while every workload ran). This is doctor's interim rule until the core
 * judges a file's modules together for `check` too (issue 10); the table
 * and the rule then come from there. */
#include <string.h>

#include "doctor.h"

static const char *const dispatching_libraries[] = {
	"libcublasLt.so", "libcublas.so",   "libcudnn",     "libcusparseLt.so", "libcusparse.so",
	"libcufft.so",    "libcufftw.so",   "libnccl.so",   "libnvshmem",       "libcusolver.so",
	"libcurand.so",   "libcutensor.so", "libnvjpeg.so", "libcudss.so",
};

bool probe_doctor_library_dispatches(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof dispatching_libraries / sizeof dispatching_libraries[0]; i++)
		if (strncmp(base, dispatching_libraries[i], strlen(dispatching_libraries[i])) == 0)
			return true;
	return false;
}

bool probe_doctor_module_dispatched(const struct probe_module *m, bool library_dispatches, bool other_module_runs)
{
	if (!other_module_runs)
		return false;
	if (library_dispatches)
		return true;
	for (size_t i = 0; i < m->n_imgs; i++)
		if (m->imgs[i].arch.variant != KIMG_VARIANT_A && m->imgs[i].arch.variant != KIMG_VARIANT_F)
			return false;
	return m->n_imgs > 0;
}
