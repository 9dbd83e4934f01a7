/* SPDX-License-Identifier: Apache-2.0 */
/* The C API of api/kimg.h from a program that links libkimgapi.so as a
 * user would (-lkimgapi, only the installed header), for tests/api/api.sh.
 *
 *   ask [--bytes|--loaded SYMBOL] [--strict] [--deep] [--json] FILE SM [DRIVER]
 *   ask --threads N FILE SM     N threads ask the same question 50 times each;
 *                               prints "same" when every answer's JSON is the first's
 *   ask --no-why FILE SM        why passed as NULL with a size (kimg.h: it may be NULL)
 *
 * Default output: "rc runs error" on the first line, then the reason, the
 * fix, and one line per module and target: "m t outcome image reason rule
 * error fate file_rule library fix_cmake". --bytes reads FILE into memory
 * (kimg_can_run_bytes); --loaded dlopens FILE and asks about the module
 * holding SYMBOL (kimg_can_run_loaded). A failed question: "rc why". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kimg.h"

static const char *file, *sm, *driver;
static unsigned flags;
static const char *first_json;
static int same = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *s(const char *p)
{
	return p && p[0] ? p : "-";
}

static void *asker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++) {
		struct kimg_answer *a = NULL;
		char why[256];
		int rc = kimg_can_run_file(file, sm, driver, flags, &a, why, sizeof why);
		pthread_mutex_lock(&lock);
		if (rc != 0 || strcmp(kimg_answer_json(a), first_json) != 0)
			same = 0;
		pthread_mutex_unlock(&lock);
		kimg_answer_free(a);
	}
	return NULL;
}

static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n == cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 65536)))
			break;
		size_t got = fread(buf + n, 1, cap - n, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	*size = n;
	return buf;
}

int main(int argc, char **argv)
{
	int i = 1, threads = 0, json = 0, bytes = 0, no_why = 0;
	const char *loaded = NULL;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (strcmp(argv[i], "--bytes") == 0)
			bytes = 1;
		else if (strcmp(argv[i], "--loaded") == 0 && i + 1 < argc)
			loaded = argv[++i];
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--strict") == 0)
			flags |= KIMG_ASK_STRICT;
		else if (strcmp(argv[i], "--deep") == 0)
			flags |= KIMG_ASK_DEEP;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--no-why") == 0)
			no_why = 1;
		else if (strcmp(argv[i], "--flags") == 0 && i + 1 < argc)
			flags = (unsigned)strtoul(argv[++i], NULL, 0);
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: ask [--bytes|--loaded SYMBOL|--threads N] [--strict] [--deep] [--json] [--no-why] FILE SM [DRIVER]\n");
		return 2;
	}
	file = argv[i];
	sm = strcmp(argv[i + 1], "NULL") == 0 ? NULL : argv[i + 1];
	driver = argc - i > 2 ? argv[i + 2] : NULL;
	if (kimg_api_version() != KIMG_API_VERSION) {
		printf("version mismatch: header %d, library %d\n", KIMG_API_VERSION, kimg_api_version());
		return 3;
	}
	struct kimg_answer *a = (struct kimg_answer *)1; /* must come back NULL on failure */
	char why[512] = "unchanged";
	int rc;
	if (bytes) {
		size_t size = 0;
		char *buf = slurp(file, &size);
		rc = kimg_can_run_bytes(buf, size, file, sm, driver, flags, &a, why, sizeof why);
		free(buf);
	} else if (loaded) {
		void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
		void *addr = h ? dlsym(h, loaded) : NULL;
		if (!addr) {
			printf("dlopen/dlsym: %s\n", dlerror());
			return 3;
		}
		rc = kimg_can_run_loaded(addr, sm, driver, flags, &a, why, sizeof why);
	} else {
		rc = kimg_can_run_file(file, sm, driver, flags, &a, no_why ? NULL : why, sizeof why);
	}
	if (rc != 0) {
		printf("%d %s%s\n", rc, why, a ? " (answer not NULL)" : "");
		return 1;
	}
	if (threads > 0) {
		pthread_t t[64];
		first_json = kimg_answer_json(a);
		if (threads > 64)
			threads = 64;
		for (int k = 0; k < threads; k++)
			pthread_create(&t[k], NULL, asker, NULL);
		for (int k = 0; k < threads; k++)
			pthread_join(t[k], NULL);
		printf("%s\n", same ? "same" : "different");
		kimg_answer_free(a);
		return 0;
	}
	if (json) {
		printf("%s\n", kimg_answer_json(a));
		kimg_answer_free(a);
		return 0;
	}
	printf("%d %d %d\n%s\n%s\n", rc, kimg_answer_runs(a), kimg_answer_error(a), kimg_answer_reason(a),
	       s(kimg_answer_fix(a)));
	for (size_t m = 0; m < kimg_answer_module_count(a); m++)
		for (size_t t = 0; t < kimg_answer_target_count(a); t++) {
			struct kimg_verdict_info v;
			struct kimg_target_info ti;
			if (kimg_answer_verdict(a, m, t, &v) != 0 || kimg_answer_target(a, t, &ti) != 0) {
				printf("verdict %zu %zu: -EINVAL\n", m, t);
				continue;
			}
			printf("%zu %s %s %s %s %s %d %s %s %s %s\n", m, ti.sm, s(v.outcome), s(v.image), s(v.reason), s(v.rule),
			       v.expected_error, v.fate, s(v.file_rule), s(v.library), s(v.fix_cmake));
		}
	struct kimg_verdict_info v;
	if (kimg_answer_verdict(a, kimg_answer_module_count(a), 0, &v) != -22)
		printf("verdict past the end: not -EINVAL\n");
	kimg_answer_free(a);
	return 0;
}
