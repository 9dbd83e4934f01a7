/* SPDX-License-Identifier: Apache-2.0 */
/* The hook table: one row per interposed entry point (hook.h), its real
 * pointer slots, and the two look-ups by exported name and by the
 * (name, version, flags) a driver entry-point query asks for. A new hook is
 * one enum value in hook.h, one row here and its wrapper in hook_*.c. */
#include <string.h>

#include "hook.h"

/* One row per (name, variant), as the driver's cuGetProcAddress answers
 * ([V] on 580.159.04, see is_export_of below): flag 2 selects the _ptsz
 * export, and "cuGetProcAddress" asked with version >= 12000 is the
 * 5-argument cuGetProcAddress_v2. min_version only separates variants;
 * the driver itself refuses names older than their introduction (it
 * returns NULL, which is passed on untouched). Runtime rows have no base:
 * they are reached by symbol only. */
#define RT(name) [KIMG_HOOK_##name] = { #name, NULL, 0, 0, (void *)kimg_w_##name }
const struct kimg_hook kimg_hook_table[KIMG_HOOK_COUNT] = {
	[KIMG_HOOK_cuModuleLoad] = { "cuModuleLoad", "cuModuleLoad", 0, 0, (void *)kimg_w_cuModuleLoad },
	[KIMG_HOOK_cuModuleLoadData] = { "cuModuleLoadData", "cuModuleLoadData", 0, 0,
					 (void *)kimg_w_cuModuleLoadData },
	[KIMG_HOOK_cuModuleLoadDataEx] = { "cuModuleLoadDataEx", "cuModuleLoadDataEx", 0, 0,
					   (void *)kimg_w_cuModuleLoadDataEx },
	[KIMG_HOOK_cuModuleLoadFatBinary] = { "cuModuleLoadFatBinary", "cuModuleLoadFatBinary", 0, 0,
					      (void *)kimg_w_cuModuleLoadFatBinary },
	[KIMG_HOOK_cuLibraryLoadData] = { "cuLibraryLoadData", "cuLibraryLoadData", 0, 0,
					  (void *)kimg_w_cuLibraryLoadData },
	[KIMG_HOOK_cuLibraryLoadFromFile] = { "cuLibraryLoadFromFile", "cuLibraryLoadFromFile", 0, 0,
					      (void *)kimg_w_cuLibraryLoadFromFile },
	[KIMG_HOOK_cuModuleGetFunction] = { "cuModuleGetFunction", "cuModuleGetFunction", 0, 0,
					    (void *)kimg_w_cuModuleGetFunction },
	[KIMG_HOOK_cuLibraryGetKernel] = { "cuLibraryGetKernel", "cuLibraryGetKernel", 0, 0,
					   (void *)kimg_w_cuLibraryGetKernel },
	[KIMG_HOOK_cuLibraryGetModule] = { "cuLibraryGetModule", "cuLibraryGetModule", 0, 0,
					   (void *)kimg_w_cuLibraryGetModule },
	[KIMG_HOOK_cuKernelGetFunction] = { "cuKernelGetFunction", "cuKernelGetFunction", 0, 0,
					    (void *)kimg_w_cuKernelGetFunction },
	[KIMG_HOOK_cuLaunchKernel] = { "cuLaunchKernel", "cuLaunchKernel", 0, 0, (void *)kimg_w_cuLaunchKernel },
	[KIMG_HOOK_cuLaunchKernel_ptsz] = { "cuLaunchKernel_ptsz", "cuLaunchKernel", 1, 0,
					    (void *)kimg_w_cuLaunchKernel_ptsz },
	[KIMG_HOOK_cuLaunchKernelEx] = { "cuLaunchKernelEx", "cuLaunchKernelEx", 0, 0,
					 (void *)kimg_w_cuLaunchKernelEx },
	[KIMG_HOOK_cuLaunchKernelEx_ptsz] = { "cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", 1, 0,
					      (void *)kimg_w_cuLaunchKernelEx_ptsz },
	[KIMG_HOOK_cuLaunchCooperativeKernel] = { "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 0, 0,
						  (void *)kimg_w_cuLaunchCooperativeKernel },
	[KIMG_HOOK_cuLaunchCooperativeKernel_ptsz] = { "cuLaunchCooperativeKernel_ptsz",
						       "cuLaunchCooperativeKernel", 1, 0,
						       (void *)kimg_w_cuLaunchCooperativeKernel_ptsz },
	[KIMG_HOOK_cuGetProcAddress] = { "cuGetProcAddress", "cuGetProcAddress", 0, 0,
					 (void *)kimg_w_cuGetProcAddress },
	[KIMG_HOOK_cuGetProcAddress_v2] = { "cuGetProcAddress_v2", "cuGetProcAddress", 0,
					    KIMG_GET_PROC_ADDRESS_V2_VERSION, (void *)kimg_w_cuGetProcAddress_v2 },
	[KIMG_HOOK_cuLinkCreate] = { "cuLinkCreate", "cuLinkCreate", 0, 0, (void *)kimg_w_cuLinkCreate },
	[KIMG_HOOK_cuLinkCreate_v2] = { "cuLinkCreate_v2", "cuLinkCreate", 0, KIMG_LINK_V2_VERSION,
					(void *)kimg_w_cuLinkCreate_v2 },
	[KIMG_HOOK_cuLinkAddData] = { "cuLinkAddData", "cuLinkAddData", 0, 0, (void *)kimg_w_cuLinkAddData },
	[KIMG_HOOK_cuLinkAddData_v2] = { "cuLinkAddData_v2", "cuLinkAddData", 0, KIMG_LINK_V2_VERSION,
					 (void *)kimg_w_cuLinkAddData_v2 },
	[KIMG_HOOK_cuLinkAddFile] = { "cuLinkAddFile", "cuLinkAddFile", 0, 0, (void *)kimg_w_cuLinkAddFile },
	[KIMG_HOOK_cuLinkAddFile_v2] = { "cuLinkAddFile_v2", "cuLinkAddFile", 0, KIMG_LINK_V2_VERSION,
					 (void *)kimg_w_cuLinkAddFile_v2 },
	[KIMG_HOOK_cuLinkComplete] = { "cuLinkComplete", "cuLinkComplete", 0, 0, (void *)kimg_w_cuLinkComplete },
	[KIMG_HOOK_cuLinkDestroy] = { "cuLinkDestroy", "cuLinkDestroy", 0, 0, (void *)kimg_w_cuLinkDestroy },
	[KIMG_HOOK_cuInit] = { "cuInit", "cuInit", 0, 0, (void *)kimg_w_cuInit },
	[KIMG_HOOK_cuLibraryGetGlobal] = { "cuLibraryGetGlobal", "cuLibraryGetGlobal", 0, 0,
					   (void *)kimg_w_cuLibraryGetGlobal },
	[KIMG_HOOK_cuLibraryGetManaged] = { "cuLibraryGetManaged", "cuLibraryGetManaged", 0, 0,
					    (void *)kimg_w_cuLibraryGetManaged },
	[KIMG_HOOK_cuLibraryGetUnifiedFunction] = { "cuLibraryGetUnifiedFunction", "cuLibraryGetUnifiedFunction", 0,
						    0, (void *)kimg_w_cuLibraryGetUnifiedFunction },
	[KIMG_HOOK_cuModuleGetGlobal] = { "cuModuleGetGlobal", "cuModuleGetGlobal", 0, 0,
					  (void *)kimg_w_cuModuleGetGlobal },
	[KIMG_HOOK_cuModuleGetGlobal_v2] = { "cuModuleGetGlobal_v2", "cuModuleGetGlobal", 0,
					     KIMG_MODULE_GET_GLOBAL_V2_VERSION, (void *)kimg_w_cuModuleGetGlobal_v2 },
	RT(__cudaRegisterFatBinary),
	RT(__cudaRegisterFunction),
	RT(cudaLaunchKernel),
	RT(cudaLaunchKernel_ptsz),
	RT(cudaLaunchKernelExC),
	RT(cudaLaunchKernelExC_ptsz),
	RT(cudaLaunchCooperativeKernel),
	RT(cudaLaunchCooperativeKernel_ptsz),
	RT(cudaFuncGetAttributes),
	RT(cudaGetFuncBySymbol),
	RT(cudaGetDriverEntryPoint),
	RT(cudaGetDriverEntryPoint_ptsz),
	RT(cudaGetDriverEntryPointByVersion),
	RT(cudaGetDriverEntryPointByVersion_ptsz),
	RT(__cudaRegisterVar),
	RT(__cudaRegisterManagedVar),
	RT(cudaMemcpyToSymbol),
	RT(cudaMemcpyToSymbol_ptds),
	RT(cudaMemcpyFromSymbol),
	RT(cudaMemcpyFromSymbol_ptds),
	RT(cudaMemcpyToSymbolAsync),
	RT(cudaMemcpyToSymbolAsync_ptsz),
	RT(cudaMemcpyFromSymbolAsync),
	RT(cudaMemcpyFromSymbolAsync_ptsz),
	RT(cudaGetSymbolAddress),
	RT(cudaGetSymbolSize),
	RT(cudaRuntimeGetVersion),
};
#undef RT

_Atomic(void *) kimg_hook_real[KIMG_HOOK_COUNT];

int kimg_hook_find_symbol(const char *name)
{
	for (int i = 0; i < KIMG_HOOK_COUNT; i++)
		if (strcmp(kimg_hook_table[i].symbol, name) == 0)
			return i;
	return -1;
}

int kimg_hook_find_proc(const char *base, int version, unsigned long long flags)
{
	int want_ptsz = (flags & KIMG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	int best = -1, best_ptsz = -1;
	for (int i = 0; i < KIMG_HOOK_COUNT; i++) {
		const struct kimg_hook *h = &kimg_hook_table[i];
		if (!h->base || strcmp(h->base, base) != 0 || h->min_version > version)
			continue;
		/* A name without a _ptsz twin answers flag 2 with its only variant. */
		if (h->ptsz) {
			if (want_ptsz && (best_ptsz < 0 || h->min_version > kimg_hook_table[best_ptsz].min_version))
				best_ptsz = i;
		} else if (best < 0 || h->min_version > kimg_hook_table[best].min_version) {
			best = i;
		}
	}
	return best_ptsz >= 0 ? best_ptsz : best;
}
