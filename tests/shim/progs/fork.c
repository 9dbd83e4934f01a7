/* SPDX-License-Identifier: Apache-2.0 */
/* fork FILE KERNEL [quiet|busy]: load FILE with cuLibraryLoadData and look
 * KERNEL up (209 from the fake driver for an sm_80 cubin on its sm_90
 * device), then fork; the child does the same with the same bytes, so its
 * failure is of the very module its parent already reported. Prints
 * "parent: PID", "forked: PID" and (from the child) "child: PID"; exits 0
 * when both saw the driver's error.
 *   quiet  the child only exits (through exit(), so libkimg's destructor runs)
 *   busy   the parent's failure happens on a second thread, and the fork
 *          while that thread is still inside its report (the test makes the
 *          report's write block on a full FIFO): the child must not inherit
 *          a held lock
 *   early  fork before cuInit, then each process initialises CUDA and
 *          fails on its own: what a real driver supports (a child may not
 *          use a CUDA context its parent created, so the other modes need
 *          the stand-in driver) */
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progutil.h"

typedef int CUresult;
static CUresult (*init)(unsigned);
static CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
static CUresult (*get_kernel)(void **, void *, const char *);
static void *bytes;
static const char *kernel;

static CUresult fail_once(void)
{
	void *lib = NULL, *k = NULL;
	if (lib_load(&lib, bytes, NULL, NULL, 0, NULL, NULL, 0) != 0)
		return -1;
	return get_kernel(&k, lib, kernel);
}

static void *fail_thread(void *result)
{
	*(CUresult *)result = fail_once();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE KERNEL [quiet|busy]\n", argv[0]);
		return 2;
	}
	const char *mode = argc > 3 ? argv[3] : "";
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	init = (CUresult(*)(unsigned))dlsym(h, "cuInit");
	lib_load = (CUresult(*)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned))dlsym(
		h, "cuLibraryLoadData");
	get_kernel = (CUresult(*)(void **, void *, const char *))dlsym(h, "cuLibraryGetKernel");
	if (!init || !lib_load || !get_kernel)
		return 2;
	bytes = read_all(argv[1], NULL);
	kernel = argv[2];
	if (!strcmp(mode, "early")) {
		printf("parent: %ld\n", (long)getpid());
		fflush(stdout);
		pid_t early = fork();
		if (early < 0)
			return 2;
		CUresult mine = init(0) == 0 ? fail_once() : -1;
		if (early == 0) {
			printf("child: %ld\n", (long)getpid());
			exit(mine == 209 ? 0 : 1);
		}
		int st = 0;
		waitpid(early, &st, 0);
		return mine == 209 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	}
	if (init(0) != 0)
		return 2;
	CUresult parent = 0;
	pthread_t t;
	bool busy = !strcmp(mode, "busy");
	if (busy) {
		if (pthread_create(&t, NULL, fail_thread, &parent) != 0)
			return 2;
		sleep(1); /* the thread is inside its report by now */
	} else {
		parent = fail_once();
	}
	printf("parent: %ld\n", (long)getpid());
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0 && !strcmp(mode, "quiet")) {
		printf("child: %ld\n", (long)getpid());
		exit(0);
	}
	if (pid == 0) {
		CUresult child = fail_once();
		printf("child: %ld\n", (long)getpid());
		exit(child == 209 ? 0 : 1); /* exit, not _exit: the child's summary runs */
	}
	printf("forked: %ld\n", (long)pid);
	fflush(stdout);
	int status = 0;
	waitpid(pid, &status, 0);
	if (busy)
		pthread_join(t, NULL);
	return parent == 209 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
