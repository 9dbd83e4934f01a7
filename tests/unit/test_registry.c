/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the handle registry (shim/diag/registry.c) and of the
 * module locator built on it (shim/diag/locate.c, shim/diag/bound.c): lookups by (kind, handle),
 * copied strings, overwrite of re-used handles, dropping (not failing)
 * when full, lock-free use from many threads (also run under TSan:
 * `make BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" ...`), the
 * function -> kernel -> library chain of docs/loading.md section 4, and
 * bounding images by readable memory so stale pointers cannot fault.
 * Links the diagnosis layer (build/libkimgdiag.a) as a library. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "diag_internal.h"
#include "fatbin.h"
#include "bound.h"
#include "locate.h"
#include "testutil.h"


static struct kimg_origin origin(const void *image, const char *path, const void *parent, const char *name)
{
	struct kimg_origin o = { image, path, parent, name };
	return o;
}

#define H(n) ((const void *)(uintptr_t)(n))

START_TEST(add_then_find_each_kind)
{
	for (int k = 0; k < KIMG_HANDLE_KIND_COUNT; k++) {
		struct kimg_origin o = origin(H(0x1000 + k), NULL, H(0x2000 + k), "kern"), got;
		kimg_registry_add((enum kimg_handle_kind)k, H(0x5000), &o);
		ck_assert(kimg_registry_find((enum kimg_handle_kind)k, H(0x5000), &got));
		ck_assert_ptr_eq(got.image, H(0x1000 + k));
		ck_assert_ptr_eq(got.parent, H(0x2000 + k));
		ck_assert_str_eq(got.name, "kern");
		ck_assert_ptr_null(got.path);
	}
	struct kimg_origin got;
	ck_assert(!kimg_registry_find(KIMG_HANDLE_MODULE, H(0x5001), &got));
	ck_assert(!kimg_registry_find(KIMG_HANDLE_MODULE, NULL, &got));
	ck_assert(!kimg_registry_find(KIMG_HANDLE_KIND_COUNT, H(0x5000), &got));
}
END_TEST

START_TEST(strings_are_copied)
{
	char name[32] = "_Z6kernelPf", path[32] = "/tmp/a.cubin";
	struct kimg_origin o = origin(NULL, path, NULL, name), got;
	kimg_registry_add(KIMG_HANDLE_MODULE, H(0x10), &o);
	memset(name, 'x', sizeof name - 1);
	memset(path, 'y', sizeof path - 1);
	ck_assert(kimg_registry_find(KIMG_HANDLE_MODULE, H(0x10), &got));
	ck_assert_str_eq(got.name, "_Z6kernelPf");
	ck_assert_str_eq(got.path, "/tmp/a.cubin");
	/* a name handed back by the registry is not copied a second time */
	struct kimg_registry_stats st1, st2;
	kimg_registry_get_stats(&st1);
	struct kimg_origin again = origin(NULL, NULL, H(0x10), got.name);
	kimg_registry_add(KIMG_HANDLE_FUNCTION, H(0x11), &again);
	kimg_registry_get_stats(&st2);
	ck_assert_uint_eq(st1.arena_used, st2.arena_used);
}
END_TEST

/* a module unloaded and another loaded at the same address */
START_TEST(re_added_handle_is_overwritten)
{
	struct kimg_origin a = origin(H(0xa), NULL, NULL, NULL), b = origin(NULL, "/x", NULL, NULL), got;
	kimg_registry_add(KIMG_HANDLE_LIBRARY, H(0x77), &a);
	kimg_registry_add(KIMG_HANDLE_LIBRARY, H(0x77), &b);
	ck_assert(kimg_registry_find(KIMG_HANDLE_LIBRARY, H(0x77), &got));
	ck_assert_ptr_null(got.image);
	ck_assert_str_eq(got.path, "/x");
	struct kimg_registry_stats st;
	kimg_registry_get_stats(&st);
	ck_assert_uint_eq(st.entries, 1);
}
END_TEST

START_TEST(kinds_are_separate)
{
	struct kimg_origin a = origin(H(1), NULL, NULL, NULL), b = origin(H(2), NULL, NULL, NULL), got;
	kimg_registry_add(KIMG_HANDLE_MODULE, H(0x99), &a);
	kimg_registry_add(KIMG_HANDLE_LIBRARY, H(0x99), &b);
	ck_assert(kimg_registry_find(KIMG_HANDLE_MODULE, H(0x99), &got));
	ck_assert_ptr_eq(got.image, H(1));
	ck_assert(kimg_registry_find(KIMG_HANDLE_LIBRARY, H(0x99), &got));
	ck_assert_ptr_eq(got.image, H(2));
	ck_assert(!kimg_registry_find(KIMG_HANDLE_KERNEL, H(0x99), &got));
}
END_TEST

START_TEST(full_table_drops_and_counts)
{
	struct kimg_origin o = origin(H(1), NULL, NULL, NULL), got;
	for (uintptr_t i = 1; i <= 8192 + 100; i++)
		kimg_registry_add(KIMG_HANDLE_MODULE, H(i * 16), &o);
	struct kimg_registry_stats st;
	kimg_registry_get_stats(&st);
	ck_assert_uint_eq(st.entries + st.dropped, 8192 + 100);
	ck_assert_uint_ge(st.dropped, 100);
	ck_assert(kimg_registry_find(KIMG_HANDLE_MODULE, H(16), &got));
	/* the other kinds still work */
	kimg_registry_add(KIMG_HANDLE_LIBRARY, H(16), &o);
	ck_assert(kimg_registry_find(KIMG_HANDLE_LIBRARY, H(16), &got));
}
END_TEST

START_TEST(full_arena_drops_strings_not_entries)
{
	static char longname[KIMG_REGISTRY_MAX_STRING + 100];
	memset(longname, 'n', sizeof longname - 1);
	struct kimg_origin o = origin(H(1), NULL, NULL, longname), got;
	uintptr_t n = KIMG_REGISTRY_ARENA_SIZE / KIMG_REGISTRY_MAX_STRING + 10;
	for (uintptr_t i = 1; i <= n; i++)
		kimg_registry_add(KIMG_HANDLE_HOST_STUB, H(i * 16), &o);
	struct kimg_registry_stats st;
	kimg_registry_get_stats(&st);
	ck_assert_uint_ge(st.strings_dropped, 10);
	ck_assert_uint_eq(st.arena_used, KIMG_REGISTRY_ARENA_SIZE);
	ck_assert(kimg_registry_find(KIMG_HANDLE_HOST_STUB, H(16), &got));
	ck_assert_uint_eq(strlen(got.name), KIMG_REGISTRY_MAX_STRING - 1); /* cut, still terminated */
	ck_assert(kimg_registry_find(KIMG_HANDLE_HOST_STUB, H(n * 16), &got));
	ck_assert_ptr_null(got.name);
	ck_assert_ptr_eq(got.image, H(1));
}
END_TEST

/* ---- many threads: insert distinct handles, overwrite shared ones, read ---- */

#define THREADS 8
#define PER_THREAD 4000
static _Atomic int torn;

static void *writer(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	for (uintptr_t i = 0; i < PER_THREAD; i++) {
		uintptr_t h = (t * PER_THREAD + i + 1) * 8;
		struct kimg_origin o = origin(H(h), NULL, H(h + 1), NULL);
		kimg_registry_add(KIMG_HANDLE_FUNCTION, H(h), &o);
		/* everybody rewrites handle 0x42 with a consistent pair */
		uintptr_t v = t * 1000000 + i;
		struct kimg_origin s = origin(H(v), NULL, H(v + 1), NULL), got;
		kimg_registry_add(KIMG_HANDLE_KERNEL, H(0x42), &s);
		if (kimg_registry_find(KIMG_HANDLE_KERNEL, H(0x42), &got) && got.parent != H((uintptr_t)got.image + 1))
			atomic_fetch_add(&torn, 1);
	}
	return NULL;
}

START_TEST(concurrent_add_and_find)
{
	pthread_t th[THREADS];
	for (uintptr_t t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, writer, (void *)t), 0);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	ck_assert_int_eq(atomic_load(&torn), 0);
	for (uintptr_t h = 8; h <= (uintptr_t)THREADS * PER_THREAD * 8; h += 8) {
		struct kimg_origin got;
		ck_assert_msg(kimg_registry_find(KIMG_HANDLE_FUNCTION, H(h), &got), "lost %lx", (unsigned long)h);
		ck_assert_ptr_eq(got.parent, H(h + 1));
	}
	struct kimg_registry_stats st;
	kimg_registry_get_stats(&st);
	ck_assert_uint_eq(st.entries, THREADS * PER_THREAD + 1);
	ck_assert_uint_eq(st.dropped, 0);
}
END_TEST

/* ---- locate: the registry chain of docs/loading.md section 4 ---- */

START_TEST(locate_follows_function_kernel_library)
{
	static const char image[] = "image bytes";
	struct kimg_origin lib = origin(image, NULL, NULL, NULL);
	struct kimg_origin kern = origin(NULL, NULL, H(0x11b), "_Z3addPf");
	struct kimg_origin fn = origin(NULL, NULL, H(0xce1), NULL);
	kimg_registry_add(KIMG_HANDLE_LIBRARY, H(0x11b), &lib);
	kimg_registry_add(KIMG_HANDLE_KERNEL, H(0xce1), &kern);
	kimg_registry_add(KIMG_HANDLE_FUNCTION, H(0xf00), &fn);
	struct kimg_failure f = { "cuLaunchKernel", 209, NULL, KIMG_HANDLE_FUNCTION, H(0xf00), NULL, NULL };
	struct kimg_located loc;
	ck_assert(kimg_locate(&f, &loc));
	ck_assert_ptr_eq(loc.image, image);
	ck_assert_str_eq(loc.kernel, "_Z3addPf");
	ck_assert_str_eq(loc.how, "cuLibraryLoadData");
	/* host stub -> registered fatbin */
	struct kimg_origin fat = origin(image, NULL, NULL, NULL), stub = origin(NULL, NULL, H(0xfa7), "_Z1kv");
	kimg_registry_add(KIMG_HANDLE_FATBIN, H(0xfa7), &fat);
	kimg_registry_add(KIMG_HANDLE_HOST_STUB, H(0x5705), &stub);
	struct kimg_failure g = { "cudaLaunchKernel", 209, NULL, KIMG_HANDLE_HOST_STUB, H(0x5705), NULL, NULL };
	ck_assert(kimg_locate(&g, &loc));
	ck_assert_ptr_eq(loc.image, image);
	ck_assert_str_eq(loc.how, "__cudaRegisterFatBinary");
	ck_assert_str_eq(loc.kernel, "_Z1kv");
	/* the call's own kernel name wins over the registry's */
	g.kernel = "_Z5otherv";
	ck_assert(kimg_locate(&g, &loc));
	ck_assert_str_eq(loc.kernel, "_Z5otherv");
}
END_TEST

START_TEST(locate_direct_and_broken_chain)
{
	struct kimg_failure f = { "cuModuleLoad", 209, NULL, KIMG_HANDLE_MODULE, NULL, NULL, "/tmp/x.cubin" };
	struct kimg_located loc;
	ck_assert(kimg_locate(&f, &loc));
	ck_assert_str_eq(loc.path, "/tmp/x.cubin");
	ck_assert_str_eq(loc.how, "cuModuleLoad");
	/* function whose module was never seen */
	struct kimg_origin fn = origin(NULL, NULL, H(0xdead0), NULL);
	kimg_registry_add(KIMG_HANDLE_FUNCTION, H(0xf01), &fn);
	struct kimg_failure g = { "cuLaunchKernel", 209, NULL, KIMG_HANDLE_FUNCTION, H(0xf01), NULL, NULL };
	ck_assert(!kimg_locate(&g, &loc));
	struct kimg_failure h = { "cuLaunchKernel", 209, NULL, KIMG_HANDLE_FUNCTION, H(0xf02), NULL, NULL };
	ck_assert(!kimg_locate(&h, &loc));
}
END_TEST

/* ---- readable memory and file offsets ---- */

START_TEST(readable_run_stops_at_unmapped_memory)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	munmap(m + 2 * page, (size_t)page);
	ck_assert_uint_eq(kimg_readable_run(m, UINT64_MAX), (uint64_t)2 * page);
	ck_assert_uint_eq(kimg_readable_run(m + 10, 100), 100);
	mprotect(m + page, (size_t)page, PROT_NONE);
	ck_assert_uint_eq(kimg_readable_run(m, UINT64_MAX), (uint64_t)page);
	munmap(m, (size_t)page * 2);
	ck_assert_uint_eq(kimg_readable_run(m, 16), 0);
	ck_assert_uint_eq(kimg_readable_run(NULL, 16), 0);
}
END_TEST

START_TEST(image_bound_on_fatbin_and_stale_pointers)
{
	struct kimg_span fb = fixture_load("multi.fatbin");
	const void *target;
	uint64_t size;
	struct kimg_error err = { 0 };
	ck_assert_int_eq(kimg_image_bound(fb.data, (uint64_t)4 << 30, &target, &size, &err), 0);
	ck_assert_ptr_eq(target, fb.data);
	ck_assert_uint_eq(size, fb.size);

	/* a registration wrapper {magic, version, data, filename} */
	struct { uint32_t magic, version; const void *data, *name; } wrap = { KIMG_FATBIN_WRAPPER_MAGIC, 1, fb.data, NULL };
	ck_assert_int_eq(kimg_image_bound(&wrap, (uint64_t)4 << 30, &target, &size, &err), 0);
	ck_assert_ptr_eq(target, fb.data);
	ck_assert_uint_eq(size, fb.size);

	/* the image was freed (unmapped) after loading: an error, not a fault */
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m, (size_t)page);
	ck_assert_int_eq(kimg_image_bound(m, (uint64_t)4 << 30, &target, &size, &err), -KIMG_ETRUNC);
	wrap.data = m;
	ck_assert_int_eq(kimg_image_bound(&wrap, (uint64_t)4 << 30, &target, &size, &err), -KIMG_ETRUNC);
	/* a container whose declared size passes its mapping */
	char *c = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(c + page, (size_t)page); /* a hole right after: the run is one page */
	memcpy(c, fb.data, 16);
	ck_assert_uint_gt(fb.size, (uint64_t)page);
	ck_assert_int_lt(kimg_image_bound(c, (uint64_t)4 << 30, &target, &size, &err), 0);
	munmap(c, (size_t)page);
	fixture_free(fb);
}
END_TEST

/* bytes the file holds at a known place: the offset must point at them */
static const char marker[] = "kimg-locate-file-marker-5f3a9c";

START_TEST(locate_file_maps_address_to_file_offset)
{
	char path[512];
	uint64_t off = 0;
	bool known = false;
	ck_assert(kimg_locate_file(marker + 4, path, sizeof path, &off, &known));
	ck_assert(known);
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	ck_assert_str_eq(path, exe); /* the main program, named through /proc/self/exe */
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	char buf[sizeof marker];
	ck_assert_int_eq(fseek(f, (long)off - 4, SEEK_SET), 0);
	ck_assert_uint_eq(fread(buf, 1, sizeof marker, f), sizeof marker);
	fclose(f);
	ck_assert_str_eq(buf, marker);
	/* heap memory belongs to no file */
	char *heap = malloc(64);
	ck_assert(!kimg_locate_file(heap, path, sizeof path, &off, &known));
	free(heap);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("registry");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, add_then_find_each_kind);
	tcase_add_test(tc, strings_are_copied);
	tcase_add_test(tc, re_added_handle_is_overwritten);
	tcase_add_test(tc, kinds_are_separate);
	tcase_add_test(tc, full_table_drops_and_counts);
	tcase_add_test(tc, full_arena_drops_strings_not_entries);
	tcase_add_test(tc, concurrent_add_and_find);
	tcase_add_test(tc, locate_follows_function_kernel_library);
	tcase_add_test(tc, locate_direct_and_broken_chain);
	tcase_add_test(tc, readable_run_stops_at_unmapped_memory);
	tcase_add_test(tc, image_bound_on_fatbin_and_stale_pointers);
	tcase_add_test(tc, locate_file_maps_address_to_file_offset);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
