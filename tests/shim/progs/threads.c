/* SPDX-License-Identifier: Apache-2.0 */
/* Many threads through the static-cudart path at once: each resolves the
 * driver through dlsym + cuGetProcAddress_v2 itself (racing on libkimg's
 * first resolution of every slot), loads a good (multi.fatbin) or a bad
 * (sm80.cubin) library, and launches. Built with -fsanitize=thread
 * against a TSan build of libkimg; TSan must report nothing.
 *
 *   threads GOOD BAD KERNEL   prints "threads: ok N failures" */
#include <pthread.h>

#include "progutil.h"

typedef int CUresult;
typedef CUresult (*gpa5_t)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*lib_load_t)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
typedef CUresult (*get_kernel_t)(void **, void *, const char *);
typedef CUresult (*kernel_fn_t)(void **, void *);
typedef CUresult (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			     void **, void **);

#define THREADS 16
#define LAUNCHES 2000

static struct fatbin_wrapper good;
static const void *bad;
static const char *kernel;
static pthread_barrier_t start;
static int failures[THREADS], wrong[THREADS];

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	pthread_barrier_wait(&start);
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa5_t gpa = h ? (gpa5_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
	lib_load_t lib_load = NULL;
	get_kernel_t get_kernel = NULL;
	kernel_fn_t kernel_fn = NULL;
	launch_t launch = NULL;
	int st;
	if (!gpa || gpa("cuLibraryLoadData", (void **)&lib_load, 13000, 0, &st) ||
	    gpa("cuLibraryGetKernel", (void **)&get_kernel, 13000, 0, &st) ||
	    gpa("cuKernelGetFunction", (void **)&kernel_fn, 13000, 0, &st) ||
	    gpa("cuLaunchKernel", (void **)&launch, 13000, (id & 1) ? 2 : 0, &st)) {
		wrong[id]++;
		return NULL;
	}
	int is_bad = id % 4 == 3;
	void *lib = NULL, *k = NULL, *f = NULL;
	if (lib_load(&lib, is_bad ? bad : &good, NULL, NULL, 0, NULL, NULL, 0) != 0) {
		wrong[id]++;
		return NULL;
	}
	CUresult r = get_kernel(&k, lib, kernel);
	if (is_bad) {
		failures[id] += r == 209;
		wrong[id] += r != 209;
		return NULL;
	}
	if (r != 0 || kernel_fn(&f, k) != 0) {
		wrong[id]++;
		return NULL;
	}
	for (int i = 0; i < LAUNCHES; i++)
		wrong[id] += launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != 0;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	good = make_wrapper(read_all(argv[1], NULL));
	bad = read_all(argv[2], NULL); /* a raw cubin goes in as is */
	kernel = argv[3];
	pthread_t t[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	int nfail = 0, nwrong = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		nfail += failures[i];
		nwrong += wrong[i];
	}
	printf("threads: %s %d failures\n", nwrong ? "WRONG" : "ok", nfail);
	return nwrong ? 1 : 0;
}
