/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA libraries and their CUDA versions (cuda_libs.h).
 *
 * Soname majors: cudart, NVRTC, nvJitLink, cuBLAS/cuBLASLt, CUPTI and
 * nvblas carry the CUDA major as their soname major (libcudart.so.13 in
 * CUDA 13.0, libnvrtc.so.12 in 12.x). The math libraries are versioned on
 * their own ("CUDA Toolkit Release Notes", component version tables):
 * cuFFT 10.x shipped with CUDA 11, 11.x with 12, 12.x with 13; cuSOLVER
 * 12.x with CUDA 13. cuRAND (.so.10) and cuSPARSE (.so.12) span several
 * CUDA majors, so their soname says nothing about the CUDA version. */
#include "cuda_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf64.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The embedded-string search reads these sections only, and only up to
 * this size: nvrtc keeps its banner in .rodata (a few MB). */
#define RELEASE_SCAN_MAX (64u << 20)

/* banner_in_host_data: where CUDA 13.0's libraries keep the release banner
 * (/usr/local/cuda/lib64, 2026-12-07): in .rodata for libnvrtc (13.0),
 * libnvJitLink (13.0) and libcupti (13.1); in .nv_fatbin only (the PTX and
 * cubins nvcc built) for cuBLAS, cuBLASLt, cuFFTW, cuSOLVER(Mg), cuSPARSE
 * and cuRAND, whose .rodata is up to 46 MB (cuBLASLt) with no banner: not
 * searched. */
static const struct kimg_cuda_lib_kind kinds[] = {
	{ "libcudart", "cudart", "CUDA runtime", true, true },
	{ "libnvrtc", "nvrtc", "NVRTC (runtime compiler)", false, true },
	{ "libnvrtc-builtins", "nvrtc-builtins", "NVRTC built-ins", false, true },
	{ "libnvJitLink", "nvjitlink", "nvJitLink (JIT linker)", false, true },
	{ "libcublas", "cublas", "cuBLAS", false, false },
	{ "libcublasLt", "cublaslt", "cuBLASLt", false, false },
	{ "libnvblas", "nvblas", "NVBLAS", false, false },
	{ "libcupti", "cupti", "CUPTI", false, true },
	{ "libcufft", "cufft", "cuFFT", false, false },
	{ "libcufftw", "cufftw", "cuFFTW", false, false },
	{ "libcusolver", "cusolver", "cuSOLVER", false, false },
	{ "libcusolverMg", "cusolvermg", "cuSOLVERMg", false, false },
	{ "libcusparse", "cusparse", "cuSPARSE", false, false },
	{ "libcurand", "curand", "cuRAND", false, false },
	{ "libnpp", "npp", "NPP", false, false },
};

/* soname major -> CUDA major; libraries not listed here map 1:1 when
 * listed in one_to_one, else the soname gives no CUDA version. */
static const char *const one_to_one[] = { "cudart", "nvrtc", "nvrtc-builtins", "nvjitlink", "cublas",
					  "cublaslt", "nvblas", "cupti" };
static const struct {
	const char *id;
	int soname_major, cuda_major;
} soname_map[] = {
	{ "cufft", 10, 11 }, { "cufft", 11, 12 }, { "cufft", 12, 13 },
	{ "cufftw", 10, 11 }, { "cufftw", 11, 12 }, { "cufftw", 12, 13 },
	{ "cusolver", 12, 13 }, { "cusolvermg", 12, 13 },
};

/* NVIDIA's packages whose version is the CUDA version (pip and conda). */
static const char *const cuda_versioned_packages[] = {
	"nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-nvjitlink", "nvidia-cuda-cupti",
	"cuda-cudart", "cuda-nvrtc", "libnvjitlink", "cuda-cupti", "libcudart", "libnvrtc",
};

const struct kimg_cuda_lib_kind *kimg_cuda_lib_kind_at(unsigned index)
{
	return index < ARRAY_SIZE(kinds) ? &kinds[index] : NULL;
}

static int cuda_major_of_soname(const char *id, int soname_major)
{
	for (size_t i = 0; i < ARRAY_SIZE(one_to_one); i++)
		if (strcmp(one_to_one[i], id) == 0)
			return soname_major;
	for (size_t i = 0; i < ARRAY_SIZE(soname_map); i++)
		if (strcmp(soname_map[i].id, id) == 0 && soname_map[i].soname_major == soname_major)
			return soname_map[i].cuda_major;
	return -1;
}

/* "12.4.127" -> 12, 4; "13" -> 13, -1. Returns the count of numbers read. */
static int parse_dotted(const char *s, int *major, int *minor)
{
	char *end;
	*major = *minor = -1;
	if (*s < '0' || *s > '9')
		return 0;
	long a = strtol(s, &end, 10);
	if (a > 999)
		return 0;
	*major = (int)a;
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return 1;
	long b = strtol(end + 1, &end, 10);
	if (b > 999)
		return 1;
	*minor = (int)b;
	return 2;
}

/* Match "<stem>[.alt].so[.digits...]" against the table; the longest stem
 * wins implicitly because the text before ".so" must equal the stem. */
static const struct kimg_cuda_lib_kind *match_name(const char *base, const char **after_so)
{
	const char *so = strstr(base, ".so");
	if (!so || (so[3] != '\0' && so[3] != '.'))
		return NULL;
	size_t stem_len = (size_t)(so - base);
	if (stem_len > 4 && memcmp(so - 4, ".alt", 4) == 0)
		stem_len -= 4; /* libnvrtc.alt.so.13 */
	/* auditwheel's renamed copies: "libcudart-e409450e.so.11.0" (8 hex digits) */
	if (stem_len > 9 && base[stem_len - 9] == '-') {
		bool hex = true;
		for (size_t i = stem_len - 8; i < stem_len && hex; i++)
			hex = (base[i] >= '0' && base[i] <= '9') || (base[i] >= 'a' && base[i] <= 'f');
		if (hex)
			stem_len -= 9;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strlen(kinds[i].stem) == stem_len && memcmp(kinds[i].stem, base, stem_len) == 0) {
			*after_so = so[3] == '.' ? so + 4 : so + 3;
			/* only digits and dots may follow */
			for (const char *p = *after_so; *p; p++)
				if ((*p < '0' || *p > '9') && *p != '.')
					return NULL;
			return &kinds[i];
		}
	return NULL;
}

/* NUL-terminated string at off inside the section strtab, or NULL. */
static const char *section_string(const struct kimg_elf *e, uint32_t strtab_index, uint64_t off)
{
	if (strtab_index == 0 || strtab_index >= e->shnum)
		return NULL;
	struct kimg_elf_shdr st = kimg_elf_shdr(e, strtab_index);
	return kimg_elf_string(kimg_elf_section_bytes(e, &st), off, NULL);
}

static void read_soname(const struct kimg_elf *e, const struct kimg_elf_shdr *h, char *out, size_t size)
{
	struct kimg_span dynamic = kimg_elf_section_bytes(e, h);
	uint64_t tag, val;
	for (uint64_t j = 0; j < (1u << 20) / KIMG_ELF_DYN_SIZE && kimg_elf_dyn_read(&dynamic, j, &tag, &val); j++) {
		if (tag == KIMG_DT_NULL)
			return;
		if (tag == KIMG_DT_SONAME) {
			const char *s = section_string(e, h->link, val);
			if (s)
				snprintf(out, size, "%s", s);
			return;
		}
	}
}

/* Highest "<stem>.so.N[.M]" among the version definitions. */
static void read_verdef(const struct kimg_elf *e, const struct kimg_elf_shdr *h, const char *stem,
			int *major, int *minor)
{
	uint64_t at = 0;
	size_t stem_len = strlen(stem);
	for (unsigned n = 0; n < 256 && at + 20 <= h->size; n++) {
		uint16_t cnt = 0;
		uint32_t aux = 0, next = 0, name = 0;
		kimg_span_u16(&e->in, h->offset + at + 6, &cnt);
		kimg_span_u32(&e->in, h->offset + at + 12, &aux);
		kimg_span_u32(&e->in, h->offset + at + 16, &next);
		if (cnt > 0 && aux <= h->size - at && h->size - at - aux >= 8) {
			kimg_span_u32(&e->in, h->offset + at + aux, &name);
			const char *s = section_string(e, h->link, name);
			int a, b;
			if (s && strncmp(s, stem, stem_len) == 0 && strncmp(s + stem_len, ".so.", 4) == 0 &&
			    parse_dotted(s + stem_len + 4, &a, &b) > 0 && (a > *major || (a == *major && b > *minor))) {
				*major = a;
				*minor = b;
			}
		}
		if (next == 0 || next > h->size - at)
			return;
		at += next;
	}
}

/* "Cuda compilation tools, release 13.0, V13.0.88" */
static bool read_release(struct kimg_span sec, int *major, int *minor)
{
	static const char banner[] = "Cuda compilation tools, release ";
	const size_t n = sizeof banner - 1;
	const uint8_t *p = sec.data, *end = sec.data + sec.size;
	while (p && (size_t)(end - p) > n) {
		const uint8_t *hit = memmem(p, (size_t)(end - p), banner, n);
		if (!hit)
			return false;
		char digits[16];
		size_t k = 0;
		for (const uint8_t *q = hit + n; q < end && k < sizeof digits - 1 && ((*q >= '0' && *q <= '9') || *q == '.');
		     q++)
			digits[k++] = (char)*q;
		digits[k] = '\0';
		if (parse_dotted(digits, major, minor) == 2)
			return true;
		p = hit + n;
	}
	return false;
}

static void read_elf(struct kimg_span bytes, struct kimg_cuda_lib *lib)
{
	struct kimg_elf e;
	if (!kimg_elf_has_magic(bytes) || kimg_elf_open(bytes, &e, NULL) != 0)
		return;
	int vd_major = -1, vd_minor = -1, rel_major = -1, rel_minor = -1;
	/* the banner is read only where it can decide: no minor from the file name yet */
	bool want_release = lib->kind->banner_in_host_data && lib->cuda_minor < 0;
	for (uint64_t i = 0; i < e.shnum; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(&e, i);
		if (!kimg_elf_has_data(&e, &h))
			continue;
		if (h.type == KIMG_SHT_DYNAMIC && !lib->soname[0])
			read_soname(&e, &h, lib->soname, sizeof lib->soname);
		else if (h.type == KIMG_SHT_GNU_VERDEF)
			read_verdef(&e, &h, lib->kind->stem, &vd_major, &vd_minor);
		else if (want_release && rel_major < 0 && h.type == KIMG_SHT_PROGBITS && h.size <= RELEASE_SCAN_MAX &&
			 strcmp(kimg_elf_section_name(&e, &h), ".rodata") == 0)
			read_release(kimg_elf_section_bytes(&e, &h), &rel_major, &rel_minor);
	}
	if (lib->soname[0]) {
		const char *after = NULL;
		int a, b;
		if (match_name(lib->soname, &after) == lib->kind && parse_dotted(after, &a, &b) > 0 && lib->soname_major < 0)
			lib->soname_major = a;
	}
	if (lib->cuda_minor < 0 && rel_major > 0 && (lib->cuda_major < 0 || lib->cuda_major == rel_major)) {
		lib->cuda_major = rel_major;
		lib->cuda_minor = rel_minor;
		lib->source = "embedded release string";
		return;
	}
	if (lib->cuda_major >= 0)
		return;
	if (lib->soname_major >= 0 && (lib->cuda_major = cuda_major_of_soname(lib->kind->id, lib->soname_major)) >= 0) {
		lib->source = "soname";
		return;
	}
	if (vd_major >= 0 && (lib->cuda_major = cuda_major_of_soname(lib->kind->id, vd_major)) >= 0) {
		/* libcudart.so.11.0 version nodes name the minor too, where soname == CUDA */
		lib->cuda_minor = vd_major == lib->cuda_major ? vd_minor : -1;
		lib->source = "symbol version";
	}
}

bool kimg_cuda_lib_identify(const char *basename, struct kimg_span bytes, struct kimg_cuda_lib *out)
{
	const char *after = NULL;
	memset(out, 0, sizeof *out);
	out->soname_major = out->cuda_major = out->cuda_minor = -1;
	if (!basename || !(out->kind = match_name(basename, &after)))
		return false;
	snprintf(out->file_version, sizeof out->file_version, "%s", after);
	int a, b, n = parse_dotted(after, &a, &b);
	if (n > 0) {
		out->soname_major = a;
		int cuda = cuda_major_of_soname(out->kind->id, a);
		/* a full file version ("12.4.127") is the CUDA version only where the soname is */
		if (cuda >= 0) {
			out->cuda_major = cuda;
			out->cuda_minor = cuda == a && n == 2 ? b : -1;
			out->source = n == 2 && cuda == a ? "file name" : "soname";
		}
	}
	read_elf(bytes, out);
	return true;
}

/* Package names compare as PEP 503 normalises them: case and the
 * separators - _ . do not matter ("nvidia_cuda_runtime_cu12"). */
static bool name_prefix(const char *name, const char *prefix)
{
	size_t i = 0;
	for (; prefix[i]; i++) {
		char a = name[i], b = prefix[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (a == '_' || a == '.')
			a = '-';
		if (a != b)
			return false;
	}
	return name[i] == '\0' || name[i] == '-' || name[i] == '_' || name[i] == '.';
}

bool kimg_cuda_lib_version_from_package(struct kimg_cuda_lib *lib, const char *name, const char *version)
{
	if (!name || !version)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(cuda_versioned_packages); i++) {
		if (!name_prefix(name, cuda_versioned_packages[i]))
			continue;
		int a, b;
		if (parse_dotted(version, &a, &b) != 2)
			return false;
		if (lib->cuda_major >= 0 && lib->cuda_major != a)
			return false; /* the package says something else than the file: trust the file */
		lib->cuda_major = a;
		lib->cuda_minor = b;
		lib->source = "package version";
		return true;
	}
	return false;
}
