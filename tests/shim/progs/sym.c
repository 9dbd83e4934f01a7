/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol lookups and the driver's error log, driver API (tests/shim/symbols.sh,
 * tests/shim/driver_log.sh). Built twice, as drv.c: sym_direct (-DDIRECT,
 * linked against the fake libcuda.so.1) and sym_dl (dlopen only).
 *
 *   sym ACCESS OP FILE [NAME]
 * ACCESS: direct (sym_direct only) | dlsym | gpa (everything through
 *   cuGetProcAddress_v2 at 13000, as static cudart 13) | gpa-old (version
 *   3000: cuModuleGetGlobal's 32-bit ABI)
 * OP, each after cuInit and cuLibraryLoadData(FILE) (the wrapper around it):
 *   global | managed | unified   cuLibraryGetGlobal / Managed / UnifiedFunction(NAME)
 *   modglobal                    cuModuleLoadData(FILE), then cuModuleGetGlobal(NAME)
 *   kernel                       cuLibraryGetKernel(NAME)
 *   count                        cuLibraryGetKernelCount: an entry point kimg does not hook
 *   countkernel                  cuLibraryGetKernelCount, then cuLibraryGetKernel(NAME)
 *   countfork                    cuLibraryGetKernelCount, then fork: the child exits 1 at
 *                                once, the parent waits for it (and exits SYM_EXIT)
 *   ptx                          cuModuleLoadData(FILE) on its own (218 / 222 for refused PTX)
 *   pair                         two threads at once, after a barrier: cuLibraryGetGlobal(NAME)
 *                                on FILE, and cuLibraryGetKernel(SYM_KERNEL) on SYM_FILE2
 * Environment:
 *   SYM_APP_LOG=1     register the program's own log callback first (before
 *                     cuInit) and print each message it got: "app log: MSG"
 *                     (=malloc: the callback also calls malloc, once a message)
 *   SYM_THREADS=N     run OP on N threads at once (default: the main thread)
 *   SYM_EXIT=N        exit status at the end (default 0)
 * Prints "call: code" per call. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progutil.h"

typedef int CUresult;
typedef void (*log_cb)(void *, int, char *, size_t);
typedef CUresult (*gpa5_t)(const char *, void **, int, unsigned long long, int *);

static struct {
	CUresult (*init)(unsigned);
	CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
	CUresult (*get_global)(unsigned long long *, size_t *, void *, const char *);
	CUresult (*get_managed)(unsigned long long *, size_t *, void *, const char *);
	CUresult (*get_unified)(void **, void *, const char *);
	CUresult (*load_data)(void **, const void *);
	void *mod_global; /* _v2 (64-bit) or the CUDA 2.0 ABI, see old_abi */
	CUresult (*get_kernel)(void **, void *, const char *);
	CUresult (*kernel_count)(unsigned *, void *);
	CUresult (*logs_register)(log_cb, void *, void **);
} api;
static int old_abi;

#ifdef DIRECT
CUresult cuInit(unsigned);
CUresult cuLibraryLoadData(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
CUresult cuLibraryGetGlobal(unsigned long long *, size_t *, void *, const char *);
CUresult cuLibraryGetManaged(unsigned long long *, size_t *, void *, const char *);
CUresult cuLibraryGetUnifiedFunction(void **, void *, const char *);
CUresult cuModuleLoadData(void **, const void *);
CUresult cuModuleGetGlobal_v2(unsigned long long *, size_t *, void *, const char *);
CUresult cuLibraryGetKernel(void **, void *, const char *);
CUresult cuLibraryGetKernelCount(unsigned *, void *);
CUresult cuLogsRegisterCallback(log_cb, void *, void **);
static void get_direct(void)
{
	api.init = cuInit;
	api.lib_load = cuLibraryLoadData;
	api.get_global = cuLibraryGetGlobal;
	api.get_managed = cuLibraryGetManaged;
	api.get_unified = cuLibraryGetUnifiedFunction;
	api.load_data = cuModuleLoadData;
	api.mod_global = (void *)cuModuleGetGlobal_v2;
	api.get_kernel = cuLibraryGetKernel;
	api.kernel_count = cuLibraryGetKernelCount;
	api.logs_register = cuLogsRegisterCallback;
}
#endif

static const char *const names[] = { "cuInit", "cuLibraryLoadData", "cuLibraryGetGlobal", "cuLibraryGetManaged",
				     "cuLibraryGetUnifiedFunction", "cuModuleLoadData", "cuModuleGetGlobal",
				     "cuLibraryGetKernel", "cuLibraryGetKernelCount", "cuLogsRegisterCallback" };

static void get_by(void *h, gpa5_t gpa, int version)
{
	void *p[sizeof names / sizeof names[0]] = { 0 };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		int st = 0;
		if (gpa)
			gpa(names[i], &p[i], strcmp(names[i], "cuLogsRegisterCallback") == 0 ? 12090 : version, 0, &st);
		else
			p[i] = dlsym(h, strcmp(names[i], "cuModuleGetGlobal") == 0 ? "cuModuleGetGlobal_v2" : names[i]);
	}
	memcpy(&api.init, &p[0], sizeof p[0]);
	memcpy(&api.lib_load, &p[1], sizeof p[0]);
	memcpy(&api.get_global, &p[2], sizeof p[0]);
	memcpy(&api.get_managed, &p[3], sizeof p[0]);
	memcpy(&api.get_unified, &p[4], sizeof p[0]);
	memcpy(&api.load_data, &p[5], sizeof p[0]);
	api.mod_global = p[6];
	memcpy(&api.get_kernel, &p[7], sizeof p[0]);
	memcpy(&api.kernel_count, &p[8], sizeof p[0]);
	memcpy(&api.logs_register, &p[9], sizeof p[0]);
}

/* The program's own callback: copies, never allocates (it runs under the
 * failing allocator too). Printed at the end, in order. */
static char app_lines[64][256];
static int app_count;
static void app_log(void *data, int level, char *msg, size_t len)
{
	int i = __atomic_fetch_add(&app_count, 1, __ATOMIC_RELAXED);
	if (i >= 64)
		return;
	size_t n = len < 255 ? len : 255;
	/* SYM_APP_LOG=malloc: a callback that allocates (the failing
	 * allocator's own check: it must see this one) */
	if (data) {
		void *volatile p = malloc(16);
		if (!p)
			n = n > 0 ? n : 0;
		free(p);
	}
	memcpy(app_lines[i], msg, n);
	app_lines[i][n] = '\0';
}

static const char *op, *file, *name;
static void *image;
static struct fatbin_wrapper wrapper, wrapper2;
static pthread_barrier_t pair_barrier;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *call, CUresult r)
{
	pthread_mutex_lock(&print_lock);
	printf("%s: %d\n", call, r);
	pthread_mutex_unlock(&print_lock);
}

static void *run_op(void *arg)
{
	void *lib = NULL, *mod = NULL, *k = NULL;
	unsigned long long d = 0;
	size_t bytes = 0;
	unsigned count = 0;
	void *fp = NULL;
	if (strcmp(op, "ptx") == 0) {
		say("cuModuleLoadData", api.load_data(&mod, image));
		return NULL;
	}
	if (strcmp(op, "modglobal") == 0) {
		CUresult r = api.load_data(&mod, &wrapper);
		say("cuModuleLoadData", r);
		if (r)
			return NULL;
		if (old_abi) {
			unsigned d32 = 0, b32 = 0;
			r = ((CUresult(*)(unsigned *, unsigned *, void *, const char *))api.mod_global)(&d32, &b32, mod, name);
		} else {
			r = ((CUresult(*)(unsigned long long *, size_t *, void *, const char *))api.mod_global)(&d, &bytes, mod,
													  name);
		}
		say("cuModuleGetGlobal", r);
		return NULL;
	}
	if (strcmp(op, "pair") == 0) {
		int second = arg != NULL;
		api.lib_load(&lib, second ? &wrapper2 : &wrapper, NULL, NULL, 0, NULL, NULL, 0);
		pthread_barrier_wait(&pair_barrier);
		if (second)
			say("cuLibraryGetKernel", api.get_kernel(&k, lib, getenv("SYM_KERNEL") ? getenv("SYM_KERNEL") : "k"));
		else
			say("cuLibraryGetGlobal", api.get_global(&d, &bytes, lib, name));
		return NULL;
	}
	say("cuLibraryLoadData", api.lib_load(&lib, &wrapper, NULL, NULL, 0, NULL, NULL, 0));
	if (strcmp(op, "global") == 0)
		say("cuLibraryGetGlobal", api.get_global(&d, &bytes, lib, name));
	else if (strcmp(op, "managed") == 0)
		say("cuLibraryGetManaged", api.get_managed(&d, &bytes, lib, name));
	else if (strcmp(op, "unified") == 0)
		say("cuLibraryGetUnifiedFunction", api.get_unified(&fp, lib, name));
	else if (strcmp(op, "kernel") == 0)
		say("cuLibraryGetKernel", api.get_kernel(&k, lib, name));
	else if (strcmp(op, "count") == 0)
		say("cuLibraryGetKernelCount", api.kernel_count(&count, lib));
	else if (strcmp(op, "countfork") == 0) {
		say("cuLibraryGetKernelCount", api.kernel_count(&count, lib));
		fflush(stdout);
		pid_t child = fork();
		if (child == 0)
			exit(1);
		int status = 0;
		waitpid(child, &status, 0);
		say("child exit", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (strcmp(op, "countkernel") == 0) {
		say("cuLibraryGetKernelCount", api.kernel_count(&count, lib));
		say("cuLibraryGetKernel", api.get_kernel(&k, lib, name));
	}
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s ACCESS OP FILE [NAME]\n", argv[0]);
		return 2;
	}
	const char *access = argv[1];
	op = argv[2];
	file = argv[3];
	name = argc > 4 ? argv[4] : "coeffs";
	image = read_all(file, NULL);
	wrapper = make_wrapper(image);
#ifdef DIRECT
	if (strcmp(access, "direct") == 0)
		get_direct();
	else
#endif
	{
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "no libcuda.so.1: %s\n", dlerror());
			return 2;
		}
		if (strcmp(access, "dlsym") == 0) {
			get_by(h, NULL, 0);
		} else {
			gpa5_t gpa = (gpa5_t)dlsym(h, "cuGetProcAddress_v2");
			old_abi = strcmp(access, "gpa-old") == 0;
			get_by(h, gpa, old_abi ? 3000 : 13000);
			printf("cuModuleGetGlobal: %s\n", owner_of(api.mod_global));
		}
	}
	if (getenv("SYM_APP_LOG") && api.logs_register)
		say("cuLogsRegisterCallback",
		    api.logs_register(app_log, strcmp(getenv("SYM_APP_LOG"), "malloc") == 0 ? (void *)1 : NULL, NULL));
	say("cuInit", api.init(0));
	int threads = getenv("SYM_THREADS") ? atoi(getenv("SYM_THREADS")) : 0;
	if (strcmp(op, "pair") == 0) {
		if (!getenv("SYM_FILE2")) {
			fprintf(stderr, "pair needs SYM_FILE2\n");
			return 2;
		}
		wrapper2 = make_wrapper(read_all(getenv("SYM_FILE2"), NULL));
		pthread_barrier_init(&pair_barrier, NULL, 2);
		pthread_t a, b;
		pthread_create(&a, NULL, run_op, NULL);
		pthread_create(&b, NULL, run_op, (void *)1);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (threads > 0) {
		pthread_t t[16];
		threads = threads > 16 ? 16 : threads;
		for (int i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, run_op, NULL);
		for (int i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	} else {
		run_op(NULL);
	}
	for (int i = 0; i < app_count && i < 64; i++)
		printf("app log: %s\n", app_lines[i]);
	fflush(stdout);
	return getenv("SYM_EXIT") ? atoi(getenv("SYM_EXIT")) : 0;
}
