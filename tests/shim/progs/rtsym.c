/* SPDX-License-Identifier: Apache-2.0 */
/* A symbol-first program on the shared runtime, as nvcc builds one
 * (tests/shim/symbols.sh): its constructor registers the fatbin, the
 * kernel and the __constant__ table (__cudaRegisterVar), and main fills
 * the table with cudaMemcpyToSymbol before the first launch. Linked
 * against the fake libcudart.so.13, whose symbol APIs reach the driver's
 * cuLibraryGetGlobal (as cudart 13 does [V]).
 *
 *   rtsym FILE [launch | from | address | size]
 * launch: launch after the copy; from, address, size: the symbol's first
 * use is cudaMemcpyFromSymbol, cudaGetSymbolAddress or cudaGetSymbolSize
 * instead of cudaMemcpyToSymbol. Exits 1 when the first symbol call
 * fails, as a program checking its errors does. */
#include "progutil.h"

struct dim3 { unsigned x, y, z; };
void **__cudaRegisterFatBinary(void *wrapper);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
			    int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
		       size_t size, int constant, int global);
int cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind);
int cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind);
int cudaGetSymbolAddress(void **dev_ptr, const void *symbol);
int cudaGetSymbolSize(size_t *size, const void *symbol);
int cudaLaunchKernel(const void *func, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream);

static float coeffs[16]; /* the host shadow of __constant__ float coeffs[16] */
static void scale_stub(void) {}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [launch]\n", argv[0]);
		return 2;
	}
	static struct fatbin_wrapper w;
	w = make_wrapper(read_all(argv[1], NULL));
	void **handle = __cudaRegisterFatBinary(&w);
	__cudaRegisterFunction(handle, (const char *)(void *)scale_stub, "_Z5scalePf", "_Z5scalePf", -1, NULL, NULL,
			       NULL, NULL, NULL);
	__cudaRegisterVar(handle, (char *)coeffs, "coeffs", "coeffs", 0, sizeof coeffs, 1, 0);
	float table[16];
	for (int i = 0; i < 16; i++)
		table[i] = (float)i;
	const char *first = argc > 2 ? argv[2] : "to";
	int r;
	void *addr = NULL;
	size_t size = 0;
	if (strcmp(first, "from") == 0)
		printf("cudaMemcpyFromSymbol: %d\n", r = cudaMemcpyFromSymbol(table, coeffs, sizeof table, 0, 2));
	else if (strcmp(first, "address") == 0)
		printf("cudaGetSymbolAddress: %d\n", r = cudaGetSymbolAddress(&addr, coeffs));
	else if (strcmp(first, "size") == 0)
		printf("cudaGetSymbolSize: %d\n", r = cudaGetSymbolSize(&size, coeffs));
	else
		printf("cudaMemcpyToSymbol: %d\n", r = cudaMemcpyToSymbol(coeffs, table, sizeof table, 0, 1));
	if (r)
		return 1;
	if (strcmp(first, "launch") == 0) {
		struct dim3 g = { 1, 1, 1 }, b = { 16, 1, 1 };
		printf("cudaLaunchKernel: %d\n", cudaLaunchKernel((const void *)scale_stub, g, b, NULL, 0, NULL));
	}
	return 0;
}
