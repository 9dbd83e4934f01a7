/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/cuda_versions.c and core/cuda_libs.c: NVIDIA's
 * minor-version compatibility table (13.x >= 580, 12.x >= 525.60.13,
 * 11.x >= 450.80.02), the rule that a runtime of a newer major than the
 * driver gets 35, how CUDA libraries give their version away, and how a
 * CUDA version written "X.Y" is read. */
#include <string.h>

#include "testutil.h"
#include "cuda_libs.h"
#include "cuda_versions.h"

START_TEST(floors)
{
	ck_assert_str_eq(kimg_cuda_major_floor(13)->linux_driver, "580");
	ck_assert_str_eq(kimg_cuda_major_floor(12)->linux_driver, "525.60.13");
	ck_assert_str_eq(kimg_cuda_major_floor(12)->windows_driver, "528.33");
	ck_assert_str_eq(kimg_cuda_major_floor(11)->linux_driver, "450.80.02");
	ck_assert_str_eq(kimg_cuda_major_floor(13)->branch, "R580");
	ck_assert_ptr_null(kimg_cuda_major_floor(10)); /* no minor-version compatibility before 11 */
	ck_assert_ptr_null(kimg_cuda_major_floor(14));
	/* the table is sorted and every row complete */
	int last = 0;
	for (unsigned i = 0; kimg_cuda_major_floor_at(i); i++) {
		const struct kimg_cuda_major_floor *f = kimg_cuda_major_floor_at(i);
		ck_assert_int_gt(f->major, last);
		last = f->major;
		ck_assert(f->linux_driver && f->windows_driver && f->branch);
	}
	ck_assert_int_eq(last, 13);
}
END_TEST

struct judge_case {
	int major, minor, driver;
	enum kimg_runtime_outcome outcome;
	int error;
	const char *min_driver;
};

static const struct judge_case judges[] = {
	{ 13, -1, 12020, KIMG_RUNTIME_NEEDS_DRIVER, 35, "580" },       /* the case */
	{ 13, 0, 12090, KIMG_RUNTIME_NEEDS_DRIVER, 35, "580" },
	{ 13, -1, 13000, KIMG_RUNTIME_OK, 0, "580" },
	{ 13, 2, 13000, KIMG_RUNTIME_MINOR_COMPAT, 0, "580" },
	{ 12, 4, 12020, KIMG_RUNTIME_MINOR_COMPAT, 0, "525.60.13" },   /* runs, PTX 222 */
	{ 12, 4, 12040, KIMG_RUNTIME_OK, 0, "525.60.13" },
	{ 12, 8, 13000, KIMG_RUNTIME_OK, 0, "525.60.13" },             /* backward compatibility */
	{ 12, 0, 11080, KIMG_RUNTIME_NEEDS_DRIVER, 35, "525.60.13" },
	{ 11, 8, 11040, KIMG_RUNTIME_MINOR_COMPAT, 0, "450.80.02" },
	{ 10, 2, 10010, KIMG_RUNTIME_NEEDS_DRIVER, 35, "440.33" },    /* before 11: that release's driver */
	{ 10, 1, 10020, KIMG_RUNTIME_OK, 0, "418.39" },
	{ 13, -1, 0, KIMG_RUNTIME_UNKNOWN, 0, "580" },                 /* no driver given */
	{ -1, -1, 13000, KIMG_RUNTIME_UNKNOWN, 0, NULL },
};

START_TEST(judge_rows)
{
	const struct judge_case *c = &judges[_i];
	struct kimg_runtime_verdict v;
	kimg_runtime_judge(c->major, c->minor, c->driver, &v);
	ck_assert_msg(v.outcome == c->outcome, "%d.%d on %d: outcome %d, want %d", c->major, c->minor, c->driver,
		      v.outcome, c->outcome);
	ck_assert_int_eq(v.expected_error, c->error);
	if (c->min_driver)
		ck_assert_str_eq(v.min_driver, c->min_driver);
	else
		ck_assert_ptr_null(v.min_driver);
	ck_assert_ptr_nonnull(v.why);
}
END_TEST

START_TEST(compat_package)
{
	char b[32];
	ck_assert_str_eq(kimg_cuda_compat_package(13, -1, b, sizeof b), "cuda-compat-13-0");
	ck_assert_str_eq(kimg_cuda_compat_package(12, 4, b, sizeof b), "cuda-compat-12-4");
}
END_TEST

struct lib_case {
	const char *name;
	const char *id;          /* NULL: not a CUDA library */
	int major, minor;
	const char *source;
};

static const struct lib_case libs[] = {
	{ "libcudart.so.13", "cudart", 13, -1, "soname" },
	{ "libcudart.so.12.4.127", "cudart", 12, 4, "file name" },
	{ "libcudart-e409450e.so.11.0", "cudart", 11, 0, "file name" }, /* auditwheel's renamed copy */
	{ "libnvrtc.so.13", "nvrtc", 13, -1, "soname" },
	{ "libnvrtc.alt.so.13", "nvrtc", 13, -1, "soname" },
	{ "libnvrtc-builtins.so.13.0", "nvrtc-builtins", 13, 0, "file name" },
	{ "libnvJitLink.so.12", "nvjitlink", 12, -1, "soname" },
	{ "libcublasLt.so.13", "cublaslt", 13, -1, "soname" },
	{ "libcublas.so.12", "cublas", 12, -1, "soname" },
	{ "libcufft.so.12", "cufft", 13, -1, "soname" },   /* cuFFT 12.x ships with CUDA 13 */
	{ "libcufft.so.11", "cufft", 12, -1, "soname" },
	{ "libcufft.so.10", "cufft", 11, -1, "soname" },   /* CUDA 11's release notes: cuFFT 10.x */
	{ "libcufftw.so.10", "cufftw", 11, -1, "soname" }, /* cuFFTW follows cuFFT's versions */
	{ "libcufftw.so.11", "cufftw", 12, -1, "soname" },
	{ "libcufftw.so.12", "cufftw", 13, -1, "soname" },
	{ "libcusolver.so.12", "cusolver", 13, -1, "soname" },     /* cuSOLVER 12.x: CUDA 13 */
	{ "libcusolverMg.so.12", "cusolvermg", 13, -1, "soname" },
	{ "libcusolver.so.11", "cusolver", -1, -1, NULL },         /* 11.x spans CUDA 11 and 12 */
	{ "libcurand.so.10", "curand", -1, -1, NULL },     /* spans CUDA majors */
	{ "libcudart.so", "cudart", -1, -1, NULL },        /* dev link: the ELF would say */
	{ "libcudart_static.a", NULL, 0, 0, NULL },
	{ "libcudart.so.13.bak", NULL, 0, 0, NULL },
	{ "libfoo.so.13", NULL, 0, 0, NULL },
	{ "libcuda.so.1", NULL, 0, 0, NULL },              /* the driver, not a runtime */
};

START_TEST(lib_rows)
{
	const struct lib_case *c = &libs[_i];
	struct kimg_cuda_lib lib;
	bool ok = kimg_cuda_lib_identify(c->name, kimg_span_make(NULL, 0), &lib);
	ck_assert_msg(ok == (c->id != NULL), "%s: recognised %d", c->name, ok);
	if (!ok)
		return;
	ck_assert_str_eq(lib.kind->id, c->id);
	ck_assert_msg(lib.cuda_major == c->major && lib.cuda_minor == c->minor, "%s: %d.%d, want %d.%d", c->name,
		      lib.cuda_major, lib.cuda_minor, c->major, c->minor);
	if (c->source)
		ck_assert_str_eq(lib.source, c->source);
	else
		ck_assert_ptr_null(lib.source);
}
END_TEST

START_TEST(lib_from_package)
{
	struct kimg_cuda_lib lib;
	ck_assert(kimg_cuda_lib_identify("libcudart.so.12", kimg_span_make(NULL, 0), &lib));
	ck_assert(kimg_cuda_lib_version_from_package(&lib, "nvidia-cuda-runtime-cu12", "12.4.127"));
	ck_assert_int_eq(lib.cuda_minor, 4);
	ck_assert(kimg_cuda_lib_identify("libcudart.so.12", kimg_span_make(NULL, 0), &lib));
	ck_assert(kimg_cuda_lib_version_from_package(&lib, "nvidia_cuda_runtime_cu12", "12.6.77")); /* dist-info spelling */
	ck_assert_int_eq(lib.cuda_minor, 6);
	ck_assert(!kimg_cuda_lib_version_from_package(&lib, "nvidia-cuda-runtimex", "12.6.77"));
	ck_assert_str_eq(lib.source, "package version");
	/* a package of another major than the file is not believed */
	ck_assert(kimg_cuda_lib_identify("libcudart.so.12", kimg_span_make(NULL, 0), &lib));
	ck_assert(!kimg_cuda_lib_version_from_package(&lib, "cuda-cudart", "13.0.96"));
	ck_assert(!kimg_cuda_lib_version_from_package(&lib, "torch", "2.5.1"));
}
END_TEST

/* The ELF sources on a real library: the toolkit's libcudart.so.N (13 for
 * CUDA 13, 12 for a 12.9 toolkit) under a name that says nothing (its
 * DT_SONAME does). */
START_TEST(lib_soname_from_elf)
{
	const char *home = getenv("CUDA_HOME");
	static const char *const roots[] = { "", "/usr/local/cuda" };
	char path[1024] = "";
	int major = 0;
	FILE *f = NULL;
	for (int r = 0; r < 2 && !f; r++)
		for (int m = 13; m >= 12 && !f; m--) {
			const char *root = r == 0 ? home : roots[r];
			if (!root)
				continue;
			snprintf(path, sizeof path, "%s/lib64/libcudart.so.%d", root, m);
			if ((f = fopen(path, "rb")) != NULL)
				major = m;
		}
	ck_assert_msg(f != NULL, "no libcudart.so.13 / .12 under $CUDA_HOME or /usr/local/cuda (the toolkit of the fixtures)");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n);
	ck_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	struct kimg_cuda_lib lib;
	char want[32];
	snprintf(want, sizeof want, "libcudart.so.%d", major);
	ck_assert(kimg_cuda_lib_identify("libcudart.so", kimg_span_make(buf, (uint64_t)n), &lib));
	ck_assert_str_eq(lib.soname, want);
	ck_assert_int_eq(lib.cuda_major, major);
	ck_assert_str_eq(lib.source, "soname");
	/* truncated copies never read outside the span */
	for (long cut = 0; cut < n; cut += n / 97 + 1)
		kimg_cuda_lib_identify("libcudart.so", kimg_span_make(buf, (uint64_t)cut), &lib);
	free(buf);
}
END_TEST

/* Where the release banner is read: a hand-built ELF whose .rodata holds
 * the banner of CUDA 13.0's libnvrtc.so.13 ("Cuda compilation tools,
 * release 13.0, V13.0.88", at 3,991,472 bytes into its .rodata). Named as
 * that nvrtc, it gives 13.0 as the real one does; named as cuBLASLt, whose
 * banners are in .nv_fatbin only (78 of "13.0"), the .rodata is not read and
 * the answer is the real libcublasLt.so.13's: 13.x from the soname. A minor
 * in the file name is never overridden by the banner. */
#define RO_AT 64u
#define RO_SIZE 64u
#define RO_NAMES_AT (RO_AT + RO_SIZE)
#define RO_SHOFF 256u
static const char ro_names[] = "\0.shstrtab\0.rodata"; /* 19 bytes with the final NUL */

static struct kimg_span rodata_elf(uint8_t *b, const char *banner)
{
	memset(b, 0, RO_SHOFF + 3 * 64);
	memcpy(b, "\177ELF", 4);
	b[4] = 2; /* ELFCLASS64 */
	b[5] = 1; /* ELFDATA2LSB */
	b[6] = 1;
	put_le16(b + 16, 3);  /* ET_DYN */
	put_le16(b + 18, 62); /* x86-64 */
	put_le32(b + 20, 1);
	put_le64(b + 40, RO_SHOFF);
	put_le16(b + 52, 64);
	put_le16(b + 58, 64);
	put_le16(b + 60, 3);
	put_le16(b + 62, 1);
	memcpy(b + RO_AT + 8, banner, strlen(banner));
	memcpy(b + RO_NAMES_AT, ro_names, sizeof ro_names);
	uint8_t *sh = b + RO_SHOFF + 64;
	put_le32(sh + 0, 1); /* ".shstrtab" */
	put_le32(sh + 4, 3); /* SHT_STRTAB */
	put_le64(sh + 24, RO_NAMES_AT);
	put_le64(sh + 32, sizeof ro_names);
	sh += 64;
	put_le32(sh + 0, 11); /* ".rodata" */
	put_le32(sh + 4, 1);  /* SHT_PROGBITS */
	put_le64(sh + 8, 2);  /* SHF_ALLOC */
	put_le64(sh + 24, RO_AT);
	put_le64(sh + 32, RO_SIZE);
	return kimg_span_make(b, RO_SHOFF + 3 * 64);
}

START_TEST(lib_release_banner)
{
	static uint8_t b[RO_SHOFF + 3 * 64];
	struct kimg_span in = rodata_elf(b, "Cuda compilation tools, release 13.0, V13.0.88");
	struct kimg_cuda_lib lib;
	ck_assert(kimg_cuda_lib_identify("libnvrtc.so.13", in, &lib));
	ck_assert_int_eq(lib.cuda_major, 13);
	ck_assert_int_eq(lib.cuda_minor, 0);
	ck_assert_str_eq(lib.source, "embedded release string");
	ck_assert(kimg_cuda_lib_identify("libnvJitLink.so.13", in, &lib));
	ck_assert_str_eq(lib.source, "embedded release string");
	ck_assert(kimg_cuda_lib_identify("libcublasLt.so.13", in, &lib));
	ck_assert_int_eq(lib.cuda_major, 13);
	ck_assert_int_eq(lib.cuda_minor, -1);
	ck_assert_str_eq(lib.source, "soname");
	ck_assert(kimg_cuda_lib_identify("libcurand.so.10", in, &lib)); /* spans majors: stays unknown */
	ck_assert_int_eq(lib.cuda_major, -1);
	ck_assert_ptr_null(lib.source);
	in = rodata_elf(b, "Cuda compilation tools, release 13.1, V13.1.80");
	ck_assert(kimg_cuda_lib_identify("libnvrtc-builtins.so.13.0", in, &lib));
	ck_assert_int_eq(lib.cuda_minor, 0);
	ck_assert_str_eq(lib.source, "file name");
}
END_TEST

/* kimg_cuda_version_parse: "X.Y" as --driver and the device documents
 * write it, against cuDriverGetVersion()'s numbering written out by hand
 * (1000 x major + 10 x minor). */
static const struct { const char *text; int want; } versions[] = {
	{ "12.4", 12040 }, { "13.0", 13000 }, { "7.0", 7000 }, { "11.8", 11080 }, { "99.9", 99090 },
	{ "13", -1 },      /* a bare major */
	{ "1.23", -1 },    /* two digits of minor */
	{ "12.4.1", -1 },  /* a third part */
	{ "12.4x", -1 }, { "12.", -1 }, { ".4", -1 }, { "", -1 }, { "x12.4", -1 },
	{ "0.5", -1 },     /* no CUDA 0 */
	{ "100.0", -1 },   /* beyond two digits of major */
	{ "-1.0", -1 },    /* %u wraps it above 99 */
	{ NULL, -1 },
};

START_TEST(version_rows)
{
	ck_assert_msg(kimg_cuda_version_parse(versions[_i].text) == versions[_i].want, "\"%s\": %d, want %d",
		      versions[_i].text ? versions[_i].text : "(null)", kimg_cuda_version_parse(versions[_i].text),
		      versions[_i].want);
}
END_TEST

static Suite *versions_suite(void)
{
	Suite *s = suite_create("cuda_versions");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, floors);
	tcase_add_loop_test(tc, version_rows, 0, (int)(sizeof versions / sizeof versions[0]));
	tcase_add_loop_test(tc, judge_rows, 0, (int)(sizeof judges / sizeof judges[0]));
	tcase_add_test(tc, compat_package);
	tcase_add_loop_test(tc, lib_rows, 0, (int)(sizeof libs / sizeof libs[0]));
	tcase_add_test(tc, lib_from_package);
	tcase_add_test(tc, lib_soname_from_elf);
	tcase_add_test(tc, lib_release_banner);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(versions_suite());
}
