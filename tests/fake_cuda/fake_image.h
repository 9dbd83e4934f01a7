/* SPDX-License-Identifier: Apache-2.0 */
/* The stand-in driver's own reading of device code (included by fake_cuda.c
 * only): just enough of the fatbin container, the cubin ELF header and PTX
 * text to answer "does this module load on the fake device, and if not with
 * which error". It is written from the public descriptions of the formats
 * and of the driver's rules (NVIDIA's fatbinary.h layout, the CUDA
 * Programming Guide's compatibility rules, the PTX ISA release table) and
 * shares no code with core/: a bug planted in kimg's parsers or rules must
 * not make the fake driver agree with it (make mutation checks this).
 *
 * Deliberately small: no decompression (kind, arch, suffix and PTX ISA sit in
 * the entry header), one rule per statement of the guide, no caching. */
#ifndef FAKE_IMAGE_H
#define FAKE_IMAGE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { FI_OTHER, FI_PTX, FI_SASS };
enum { FI_PLAIN, FI_A, FI_F };
#define FI_MAX 64

struct fi_image {
	int kind;
	unsigned sm;      /* 90 for sm_90 / compute_90, 121 for sm_121 */
	int variant;      /* FI_PLAIN, FI_A, FI_F */
	unsigned isa;     /* PTX ISA as major*10+minor (90 = 9.0); 0 for cubins */
	int compressed;
	const uint8_t *data; /* stored payload */
	uint64_t size;
};

struct fi_device {
	unsigned sm;
	int driver;       /* cuDriverGetVersion: 13000 = CUDA 13.0 */
	int force_jit, disable_jit;
};

static uint64_t fi_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define FI_WRAPPER_MAGIC 0x466243B1u
#define FI_FATBIN_MAGIC 0xBA55ED50u

static int fi_is_elf(const uint8_t *p, uint64_t n)
{
	return n >= 64 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

/* Extent of in-memory code handed to cuModuleLoadData & co: a registration
 * wrapper (follow its data pointer), a container (16 + fatSize), a cubin (the
 * end of its last section or header table) or NUL-terminated PTX text. */
static int fi_extent(const void *image, const uint8_t **code, uint64_t *size)
{
	const uint8_t *p = image;
	if (!p)
		return -1;
	uint32_t magic = (uint32_t)fi_le(p, 4);
	if (magic == FI_WRAPPER_MAGIC) {
		const void *data;
		memcpy(&data, p + 8, sizeof data);
		if (!data || data == image)
			return -1;
		return fi_extent(data, code, size);
	}
	*code = p;
	if (magic == FI_FATBIN_MAGIC) {
		*size = fi_le(p + 6, 2) + fi_le(p + 8, 8);
		return 0;
	}
	if (fi_is_elf(p, 64)) {
		uint64_t end = 64, shoff = fi_le(p + 0x28, 8), phoff = fi_le(p + 0x20, 8);
		unsigned shnum = (unsigned)fi_le(p + 0x3C, 2), shent = (unsigned)fi_le(p + 0x3A, 2);
		unsigned phnum = (unsigned)fi_le(p + 0x38, 2), phent = (unsigned)fi_le(p + 0x36, 2);
		if (shoff > ((uint64_t)1 << 30) || phoff > ((uint64_t)1 << 30))
			return -1; /* a header no real cubin has: an invalid image, not a wild read */
		if (shoff + (uint64_t)shnum * shent > end)
			end = shoff + (uint64_t)shnum * shent;
		if (phoff + (uint64_t)phnum * phent > end)
			end = phoff + (uint64_t)phnum * phent;
		for (unsigned i = 0; i < shnum && shent >= 64; i++) {
			const uint8_t *sh = p + shoff + (uint64_t)i * shent;
			uint64_t e = fi_le(sh + 0x18, 8) + fi_le(sh + 0x20, 8);
			if (fi_le(sh + 4, 4) != 8 /* SHT_NOBITS */ && e > end)
				end = e;
		}
		for (unsigned i = 0; i < phnum && phent >= 56; i++) {
			const uint8_t *ph = p + phoff + (uint64_t)i * phent;
			uint64_t e = fi_le(ph + 8, 8) + fi_le(ph + 0x20, 8);
			if (e > end)
				end = e;
		}
		*size = end;
		return 0;
	}
	*size = strnlen((const char *)p, (size_t)1 << 30);
	return 0;
}

/* ".version 9.0" / ".target sm_90a" of PTX text: the ISA and the highest
 * target (a module with several targets needs every feature of the highest). */
static const uint8_t *fi_find(const uint8_t *p, uint64_t n, const char *s)
{
	size_t k = strlen(s);
	return n >= k ? memmem(p, (size_t)n, s, k) : NULL;
}

static int fi_ptx(const uint8_t *p, uint64_t n, struct fi_image *img)
{
	const uint8_t *v = fi_find(p, n, ".version");
	const uint8_t *end = p + n;
	unsigned major = 0, minor = 0;
	if (!v)
		return -1;
	v += 8;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (v < end && *v >= '0' && *v <= '9')
		major = major * 10 + (unsigned)(*v++ - '0');
	if (v >= end || *v++ != '.' || v >= end || *v < '0' || *v > '9')
		return -1;
	minor = (unsigned)(*v - '0');
	img->kind = FI_PTX;
	img->isa = major * 10 + minor;
	img->sm = 0;
	for (const uint8_t *t = p; (t = fi_find(t, (uint64_t)(end - t), ".target")) != NULL;) {
		t += 7;
		while (t < end && (*t == ' ' || *t == '\t'))
			t++;
		if (end - t < 4 || memcmp(t, "sm_", 3) != 0)
			continue;
		unsigned sm = 0;
		const uint8_t *d = t + 3;
		while (d < end && *d >= '0' && *d <= '9')
			sm = sm * 10 + (unsigned)(*d++ - '0');
		if (sm > img->sm) {
			img->sm = sm;
			img->variant = d < end && *d == 'a' ? FI_A : d < end && *d == 'f' ? FI_F : FI_PLAIN;
		}
	}
	img->data = p;
	img->size = n;
	return img->sm ? 0 : -1;
}

/* A cubin's SM and `a` mark from its ELF header: the ABI comes from
 * EI_ABIVERSION (7 = V1: SM in bits 0-7, 0x800 = sm_XYa; 8 = V2: SM in bits
 * 8-15, no reliable suffix) or else from EI_OSABI (0x33 V1, 0x41 V2). */
static int fi_cubin(const uint8_t *p, uint64_t n, struct fi_image *img)
{
	if (!fi_is_elf(p, n) || p[4] != 2 /* ELFCLASS64 */ || fi_le(p + 18, 2) != 190 /* EM_CUDA */)
		return -1;
	uint32_t flags = (uint32_t)fi_le(p + 0x30, 4);
	int v1 = p[8] == 7 || (p[8] != 8 && p[7] == 0x33);
	int v2 = p[8] == 8 || (p[8] != 7 && p[7] == 0x41);
	if (!v1 && !v2)
		return -1;
	img->kind = FI_SASS;
	img->sm = v1 ? (flags & 0xff) : ((flags >> 8) & 0xff);
	img->variant = v1 && (flags & 0x800) ? FI_A : FI_PLAIN;
	img->data = p;
	img->size = n;
	return 0;
}

/* Entries of one container: 64-byte headers, kind at 0, header size at 4,
 * stored size at 8, compressed size at 0x10, code version (minor, major) at
 * 0x18/0x1A, SM at 0x1C, flags at 0x28 (0x100000 `a`, 0x200000 `f`,
 * 0x1000/0x2000/0x8000 compressed). A broken header is an invalid image. */
static int fi_fatbin(const uint8_t *p, uint64_t n, struct fi_image *imgs)
{
	if (n < 16)
		return -1;
	uint64_t hs = fi_le(p + 6, 2), end = hs + fi_le(p + 8, 8), pos = hs;
	int count = 0;
	if (fi_le(p + 4, 2) != 1 || end > n)
		return -1;
	while (pos + 64 <= end && count < FI_MAX) {
		const uint8_t *e = p + pos;
		uint64_t ehs = fi_le(e + 4, 4), size = fi_le(e + 8, 8), flags = fi_le(e + 0x28, 8);
		unsigned kind = (unsigned)fi_le(e, 2);
		if (kind == 0 || ehs < 64 || ehs > end - pos || size > end - pos - ehs)
			return -1;
		struct fi_image *img = &imgs[count++];
		memset(img, 0, sizeof *img);
		img->kind = kind == 1 ? FI_PTX : kind == 2 ? FI_SASS : FI_OTHER;
		img->sm = (unsigned)fi_le(e + 0x1C, 4);
		img->variant = (flags & 0x100000) ? FI_A : (flags & 0x200000) ? FI_F : FI_PLAIN;
		if (img->kind == FI_PTX)
			img->isa = (unsigned)(fi_le(e + 0x1A, 2) * 10 + fi_le(e + 0x18, 2));
		img->compressed = (flags & 0xB000) != 0;
		img->data = e + ehs;
		img->size = img->compressed ? fi_le(e + 0x10, 4) : size;
		pos += ehs + size;
	}
	return count;
}

/* Every image of the module at p (a container, a cubin or PTX text); -1
 * for bytes that are no device code. *raw_ptx: the module is PTX text. */
static int fi_collect(const uint8_t *p, uint64_t n, struct fi_image *imgs, int *raw_ptx)
{
	*raw_ptx = 0;
	memset(&imgs[0], 0, sizeof imgs[0]);
	if (n >= 4 && fi_le(p, 4) == FI_FATBIN_MAGIC)
		return fi_fatbin(p, n, imgs);
	if (fi_is_elf(p, n))
		return fi_cubin(p, n, &imgs[0]) < 0 ? -1 : 1;
	*raw_ptx = 1;
	return fi_ptx(p, n, &imgs[0]) < 0 ? -1 : 1;
}

/* ---- the driver's rules, one statement of the Programming Guide each ---- */

/* Tegra parts by compute capability: binary compatibility does not cross
 * the desktop/Tegra line, nor hold among Tegra parts. (GB10, 12.1, is an
 * integrated GPU but not one of these: it runs desktop sm_120 code.) */
static int fi_tegra_cc(unsigned sm)
{
	return sm == 53 || sm == 62 || sm == 72 || sm == 87 || sm == 101 || sm == 110;
}

static int fi_sass_runs(const struct fi_image *img, unsigned dev)
{
	int same_major = img->sm / 10 == dev / 10, minor_ok = dev % 10 >= img->sm % 10;
	if (img->variant == FI_A)
		return img->sm == dev; /* one CC exactly */
	if (img->variant == FI_F)
		return same_major && minor_ok; /* forward within the family */
	if (fi_tegra_cc(img->sm) || fi_tegra_cc(dev))
		return img->sm == dev || (img->sm == 101 && dev == 110); /* Thor's two numbers */
	return same_major && minor_ok;
}

static int fi_ptx_usable(const struct fi_image *img, unsigned dev)
{
	if (img->variant == FI_A)
		return img->sm == dev;
	if (img->variant == FI_F)
		return img->sm / 10 == dev / 10 && dev % 10 >= img->sm % 10;
	return img->sm <= dev; /* any newer CC, any major, Tegra included */
}

/* The newest PTX ISA a driver's JIT knows: that of the CUDA version it
 * reports (PTX ISA release notes). */
static unsigned fi_driver_isa(int driver)
{
	static const struct { int cuda; unsigned isa; } table[] = {
		{ 13020, 92 }, { 13010, 91 }, { 13000, 90 }, { 12090, 88 }, { 12080, 87 }, { 12070, 86 },
		{ 12050, 85 }, { 12040, 84 }, { 12030, 83 }, { 12020, 82 }, { 12010, 81 }, { 12000, 80 },
		{ 11080, 78 }, { 11000, 70 },
	};
	if (driver >= 13000)
		return 90 + (unsigned)(driver % 1000) / 10;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (driver >= table[i].cuda)
			return table[i].isa;
	return 60;
}

/* Preference among images that can run: the exact `a` code, then the
 * highest target. */
static int fi_better(const struct fi_image *a, const struct fi_image *b)
{
	if (!b)
		return 1;
	if ((a->variant == FI_A) != (b->variant == FI_A))
		return a->variant == FI_A;
	return a->sm > b->sm;
}

/* 0 or the CUresult for loading imgs[0..n) on dev; *chosen = the image used. */
static int fi_decide(const struct fi_image *imgs, int n, int raw_ptx, const struct fi_device *dev,
		     const struct fi_image **chosen)
{
	const struct fi_image *sass = NULL, *ptx = NULL;
	*chosen = NULL;
	for (int i = 0; i < n; i++) {
		if (imgs[i].kind == FI_SASS && !dev->force_jit && fi_sass_runs(&imgs[i], dev->sm) &&
		    fi_better(&imgs[i], sass))
			sass = &imgs[i];
		if (imgs[i].kind == FI_PTX && fi_ptx_usable(&imgs[i], dev->sm) && fi_better(&imgs[i], ptx))
			ptx = &imgs[i];
	}
	if (sass) {
		*chosen = sass; /* a cubin that fits always wins over PTX */
		return 0;
	}
	if (!ptx)
		return raw_ptx ? 218 : 209; /* raw PTX for a newer target: CUDA_ERROR_INVALID_PTX */
	if (dev->disable_jit)
		return 223; /* CUDA_ERROR_JIT_COMPILATION_DISABLED */
	if (ptx->isa > fi_driver_isa(dev->driver))
		return 222; /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
	*chosen = ptx;
	return 0;
}

/* Kernel lookup in the chosen image: a cubin has a ".text.NAME" section per
 * function; PTX declares ".entry NAME". Compressed images answer yes. */
static int fi_has_kernel(const struct fi_image *img, const char *name)
{
	size_t k = strlen(name);
	if (img->compressed || !img->data)
		return 1;
	if (img->kind == FI_PTX) {
		const uint8_t *p = img->data, *end = p + img->size;
		while ((p = fi_find(p, (uint64_t)(end - p), ".entry")) != NULL) {
			p += 6;
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if ((size_t)(end - p) > k && memcmp(p, name, k) == 0 &&
			    (p[k] == '(' || p[k] == ' ' || p[k] == '\t' || p[k] == '\n'))
				return 1;
		}
		return 0;
	}
	const uint8_t *e = img->data;
	uint64_t n = img->size, shoff = fi_le(e + 0x28, 8);
	unsigned shnum = (unsigned)fi_le(e + 0x3C, 2), shstr = (unsigned)fi_le(e + 0x3E, 2);
	if (shstr >= shnum || shoff > n || (uint64_t)shnum * 64 > n - shoff)
		return 1;
	uint64_t str_off = fi_le(e + shoff + (uint64_t)shstr * 64 + 0x18, 8);
	uint64_t str_size = fi_le(e + shoff + (uint64_t)shstr * 64 + 0x20, 8);
	if (str_off > n || str_size > n - str_off)
		return 1;
	for (unsigned i = 0; i < shnum; i++) {
		uint64_t at = fi_le(e + shoff + (uint64_t)i * 64, 4);
		const char *s = (const char *)e + str_off + at;
		if (at + 6 + k < str_size && memcmp(s, ".text.", 6) == 0 && memcmp(s + 6, name, k) == 0 &&
		    s[6 + k] == '\0')
			return 1;
	}
	return 0;
}

/* "sm_90a" / "compute_100f" */
static void fi_arch_name(const struct fi_image *img, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s_%u%s", img->kind == FI_PTX ? "compute" : "sm", img->sm,
		 img->variant == FI_A ? "a" : img->variant == FI_F ? "f" : "");
}

#endif
