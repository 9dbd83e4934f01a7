/* SPDX-License-Identifier: Apache-2.0 */
/* How long this machine takes to start the driver and NVML, the two GPU
 * readings kimg-probe doctor and device make: dlopen + cuInit, dlopen +
 * nvmlInit_v2, each alone in a fresh process, then both at once on two
 * threads (evidence for probe/cmd_doctor.c's order; bench/README.md).
 * Usage: gpu_init_cost cu | nvml | both     (prints seconds) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *start_cuda(void *unused)
{
	(void)unused;
	double t0 = now_s();
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
	int rc = init ? init(0) : -1;
	printf("cuInit: rc %d, %.3f s\n", rc, now_s() - t0);
	return NULL;
}

static void *start_nvml(void *unused)
{
	(void)unused;
	double t0 = now_s();
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "nvmlInit_v2") : NULL;
	int rc = init ? init() : -1;
	printf("nvmlInit_v2: rc %d, %.3f s\n", rc, now_s() - t0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "both";
	double t0 = now_s();
	if (strcmp(what, "cu") == 0) {
		start_cuda(NULL);
	} else if (strcmp(what, "nvml") == 0) {
		start_nvml(NULL);
	} else {
		pthread_t t;
		pthread_create(&t, NULL, start_nvml, NULL);
		start_cuda(NULL);
		pthread_join(t, NULL);
	}
	printf("%s: %.3f s in all\n", what, now_s() - t0);
	return 0;
}
