/* SPDX-License-Identifier: Apache-2.0 */
/* cuInit: the first call that can tell the driver refuses this process
 * (803, 804; kimg_driver_mismatch_init_failed, shim/diag.h). Passed through unchanged. */
#include <errno.h>

#include "hook.h"

CUresult kimg_w_cuInit(unsigned flags)
{
	CUresult (*real)(unsigned) = (CUresult(*)(unsigned))kimg_hook_get(KIMG_HOOK_cuInit);
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_NOT_INITIALIZED;
	/* before the real call: the log takes callbacks before cuInit [V], and
	 * cuInit's own failures are then in it */
	kimg_hook_logs_attach();
	CUresult r = real(flags);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS)) {
		kimg_shim_ensure_init();
		if (kimg_hooks_active())
			kimg_driver_mismatch_init_failed(r);
	}
	return r;
}
KIMG_EXPORT CUresult cuInit(unsigned flags) __attribute__((alias("kimg_w_cuInit")));
