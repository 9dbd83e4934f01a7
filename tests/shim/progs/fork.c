/* fork FILE KERNEL [quiet]: load FILE with cuLibraryLoadData and look KERNEL up
 * (209 from the fake driver for an sm_80 cubin on its sm_90 device), then
 * fork; the child does the same with the same bytes, so its failure is of
 * the very module its parent already reported. Prints "parent: PID" and
 * "child: PID"; exits 0 when both saw the driver's error. With "quiet"
 * the child only exits (through exit(), so libkimg's destructor runs). */
#include <sys/wait.h>
#include <unistd.h>

#include "progutil.h"

typedef int CUresult;
static CUresult (*init)(unsigned);
static CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
static CUresult (*get_kernel)(void **, void *, const char *);

static CUresult fail_once(const void *bytes, const char *kernel)
{
	void *lib = NULL, *k = NULL;
	if (lib_load(&lib, bytes, NULL, NULL, 0, NULL, NULL, 0) != 0)
		return -1;
	return get_kernel(&k, lib, kernel);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE KERNEL\n", argv[0]);
		return 2;
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	init = (CUresult(*)(unsigned))dlsym(h, "cuInit");
	lib_load = (CUresult(*)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned))dlsym(
		h, "cuLibraryLoadData");
	get_kernel = (CUresult(*)(void **, void *, const char *))dlsym(h, "cuLibraryGetKernel");
	if (!init || !lib_load || !get_kernel || init(0) != 0)
		return 2;
	void *bytes = read_all(argv[1], NULL);
	CUresult parent = fail_once(bytes, argv[2]);
	printf("parent: %ld\n", (long)getpid());
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0 && argc > 3 && !strcmp(argv[3], "quiet")) {
		printf("child: %ld\n", (long)getpid());
		exit(0);
	}
	if (pid == 0) {
		CUresult child = fail_once(bytes, argv[2]);
		printf("child: %ld\n", (long)getpid());
		exit(child == 209 ? 0 : 1); /* exit, not _exit: the child's summary runs */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return parent == 209 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
