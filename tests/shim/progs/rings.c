/* SPDX-License-Identifier: Apache-2.0 */
/* More live threads than libkimg keeps driver-log rings for (64,
 * shim/diag/driver_log.c), none of which the driver logged on: each loads
 * GOOD (cuModuleLoadData, which runs here) and stays alive; then one more
 * thread loads BAD, which the driver refuses and logs. A ring is a thread's
 * only once the driver logged on it, so the failing thread must still get
 * one, and its report carry the driver's lines.
 *
 *   rings N GOOD BAD   prints "good: K of N" and "bad: CODE" */
#include <pthread.h>

#include "progutil.h"

typedef int CUresult;
CUresult cuInit(unsigned flags);
CUresult cuModuleLoadData(void **mod, const void *image);

static const void *good, *bad;
static pthread_barrier_t loaded, done;
static int ok_count;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	void *mod = NULL;
	(void)arg;
	if (cuModuleLoadData(&mod, good) == 0) {
		pthread_mutex_lock(&count_lock);
		ok_count++;
		pthread_mutex_unlock(&count_lock);
	}
	pthread_barrier_wait(&loaded); /* every worker has loaded */
	pthread_barrier_wait(&done);   /* ... and stays alive until BAD was loaded */
	return NULL;
}

static void *failer(void *arg)
{
	void *mod = NULL;
	*(CUresult *)arg = cuModuleLoadData(&mod, bad);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: rings N GOOD BAD\n");
		return 2;
	}
	int n = atoi(argv[1]);
	good = read_all(argv[2], NULL);
	bad = read_all(argv[3], NULL);
	pthread_t *t = calloc((size_t)n, sizeof *t);
	if (!t || n < 1 || cuInit(0) != 0)
		return 2;
	pthread_barrier_init(&loaded, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 2;
	pthread_barrier_wait(&loaded);
	CUresult r = -1;
	pthread_t f;
	if (pthread_create(&f, NULL, failer, &r) != 0 || pthread_join(f, NULL) != 0)
		return 2;
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("good: %d of %d\nbad: %d\n", ok_count, n, r);
	return 0;
}
