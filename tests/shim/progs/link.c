/* SPDX-License-Identifier: Apache-2.0 */
/* JIT-linker test program: one link of one input through cuLinkCreate,
 * cuLinkAddData / cuLinkAddFile, cuLinkComplete, cuLinkDestroy, as
 * numba-cuda and CuPy do it; or cuModuleLoadDataEx with JIT options.
 * Built twice like drv.c: link_direct (linked against the fake libcuda,
 * cuda.h's default _v2 names) and link_dl (dlopen only).
 *
 *   link ACCESS OP FILE [NAME]
 * ACCESS: direct (link_direct only: the linked _v2 symbols)
 *         dlsym   dlsym(handle, "cuLinkCreate") ..., the pre-6.5 names
 *         dlsym2  dlsym(handle, "cuLinkCreate_v2") ...
 *         gpa     cuGetProcAddress_v2("cuLinkCreate", 12000): the driver's _v2
 * OP:     data    cuLinkAddData(PTX bytes of FILE, name NAME)
 *         file    cuLinkAddFile(FILE)
 *         two     a good PTX input (FILE) first, then NAME as a second file
 *         twodata as two, the second input NAME's bytes by cuLinkAddData ("bad.ptx")
 *         samebuf FILE's bytes added twice from one buffer, as "first.ptx" then NAME
 *         modex   cuModuleLoadDataEx(FILE) with an error log buffer
 * Prints "call: code" per call, "log: TEXT" for the error log, and the
 * owner of each function pointer ("libkimg" when wrapped). */
#include "progutil.h"

typedef int CUresult;
typedef CUresult (*gpa5_t)(const char *, void **, int, unsigned long long, int *);

struct link_api {
	CUresult (*init)(unsigned);
	CUresult (*create)(unsigned, int *, void **, void **);
	CUresult (*add_data)(void *, int, void *, size_t, const char *, unsigned, int *, void **);
	CUresult (*add_file)(void *, int, const char *, unsigned, int *, void **);
	CUresult (*complete)(void *, void **, size_t *);
	CUresult (*destroy)(void *);
	CUresult (*load_ex)(void **, const void *, unsigned, int *, void **);
};

#ifdef DIRECT
CUresult cuInit(unsigned);
CUresult cuLinkCreate_v2(unsigned, int *, void **, void **);
CUresult cuLinkAddData_v2(void *, int, void *, size_t, const char *, unsigned, int *, void **);
CUresult cuLinkAddFile_v2(void *, int, const char *, unsigned, int *, void **);
CUresult cuLinkComplete(void *, void **, size_t *);
CUresult cuLinkDestroy(void *);
CUresult cuModuleLoadDataEx(void **, const void *, unsigned, int *, void **);
#endif

static const char *const plain[] = { "cuInit", "cuLinkCreate", "cuLinkAddData", "cuLinkAddFile", "cuLinkComplete",
				     "cuLinkDestroy", "cuModuleLoadDataEx" };
static const char *const v2[] = { "cuInit", "cuLinkCreate_v2", "cuLinkAddData_v2", "cuLinkAddFile_v2",
				  "cuLinkComplete", "cuLinkDestroy", "cuModuleLoadDataEx" };
#define N_FN (sizeof plain / sizeof plain[0])

#define CU_JIT_INPUT_PTX 1
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

int main(int argc, char **argv)
{
	struct link_api a;
	void **slots = (void **)&a;
	memset(&a, 0, sizeof a);
	if (argc < 4) {
		fprintf(stderr, "usage: %s ACCESS OP FILE [NAME]\n", argv[0]);
		return 2;
	}
	const char *access = argv[1], *op = argv[2], *file = argv[3], *name = argc > 4 ? argv[4] : "input.ptx";
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 2;
	if (!strcmp(access, "dlsym") || !strcmp(access, "dlsym2")) {
		const char *const *names = access[5] ? v2 : plain;
		for (size_t i = 0; i < N_FN; i++)
			slots[i] = dlsym(h, names[i]);
	} else if (!strcmp(access, "gpa")) {
		gpa5_t g = (gpa5_t)dlsym(h, "cuGetProcAddress_v2");
		int st;
		for (size_t i = 0; i < N_FN; i++)
			if (g(plain[i], &slots[i], 12000, 0, &st) != 0)
				slots[i] = NULL;
	}
#ifdef DIRECT
	else if (!strcmp(access, "direct")) {
		a.init = cuInit;
		a.create = cuLinkCreate_v2;
		a.add_data = cuLinkAddData_v2;
		a.add_file = cuLinkAddFile_v2;
		a.complete = cuLinkComplete;
		a.destroy = cuLinkDestroy;
		a.load_ex = cuModuleLoadDataEx;
	}
#endif
	else
		return 2;
	for (size_t i = 1; i < N_FN; i++)
		printf("%s owner: %s\n", plain[i], owner_of(slots[i]));
	if (!a.init || a.init(0) != 0)
		return 2;

	static char log[512];
	int opts[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[2] = { log, (void *)(uintptr_t)sizeof log };
	CUresult r;
	if (!strcmp(op, "modex")) {
		void *mod = NULL;
		void *bytes = read_all(file, NULL);
		printf("cuModuleLoadDataEx: %d\n", r = a.load_ex(&mod, bytes, 2, opts, vals));
		printf("log: %s", log);
		return r == 0 ? 0 : 1;
	}
	void *state = NULL;
	printf("cuLinkCreate: %d\n", r = a.create(2, opts, vals, &state));
	if (r)
		return 1;
	if (!strcmp(op, "data")) {
		size_t size = 0;
		void *bytes = read_all(file, &size);
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes, size + 1, name, 0, NULL, NULL));
	} else if (!strcmp(op, "file")) {
		printf("cuLinkAddFile: %d\n", r = a.add_file(state, CU_JIT_INPUT_PTX, file, 0, NULL, NULL));
	} else if (!strcmp(op, "two")) {
		size_t size = 0;
		void *bytes = read_all(file, &size);
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes, size + 1, "good.ptx", 0, NULL, NULL));
		printf("cuLinkAddFile: %d\n", r = a.add_file(state, CU_JIT_INPUT_PTX, name, 0, NULL, NULL));
	} else if (!strcmp(op, "samebuf")) {
		size_t size = 0;
		void *bytes = read_all(file, &size);
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes, size + 1, "first.ptx", 0, NULL, NULL));
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes, size + 1, name, 0, NULL, NULL));
	} else if (!strcmp(op, "twodata")) {
		size_t size = 0, size2 = 0;
		void *bytes = read_all(file, &size), *bytes2 = read_all(name, &size2);
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes, size + 1, "good.ptx", 0, NULL, NULL));
		printf("cuLinkAddData: %d\n", r = a.add_data(state, CU_JIT_INPUT_PTX, bytes2, size2 + 1, "bad.ptx", 0, NULL, NULL));
	}
	if (r == 0) {
		void *cubin = NULL;
		size_t size = 0;
		printf("cuLinkComplete: %d\n", r = a.complete(state, &cubin, &size));
	}
	if (log[0])
		printf("log: %s", log);
	printf("cuLinkDestroy: %d\n", a.destroy(state));
	return r == 0 ? 0 : 1;
}
