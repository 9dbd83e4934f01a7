/* SPDX-License-Identifier: Apache-2.0 */
/* core/input.c, core/input_elf.c, core/archive.c: finding device code.
 * Reference: docs/format.md §1-2 (sections, wrappers),
 * §4 (containers back to back), §9 (walking without trusting the input). */
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fatbin.h"
#include "input.h"

#define MAX_MODS 16

struct mod {
	enum kimg_input_kind kind;
	enum kimg_module_origin origin;
	uint64_t offset, size;
	char section[32], member[64];
	char images[160]; /* "sm_80 sm_90 compute_90" */
	bool bytes_match;  /* bytes.data == input + offset */
};

struct mods {
	struct kimg_span in;
	struct mod m[MAX_MODS];
	int n;
	int stop_after; /* return 7 from this module on (0: never) */
	struct kimg_error err;
	int rc;
};

static int collect_cb(void *ctx, const struct kimg_module_ref *ref)
{
	struct mods *ms = ctx;
	struct mod *m;
	ck_assert_int_lt(ms->n, MAX_MODS);
	m = &ms->m[ms->n++];
	m->kind = ref->kind;
	m->origin = ref->origin;
	m->offset = ref->offset;
	m->size = ref->bytes.size;
	m->bytes_match = ref->bytes.data == ms->in.data + ref->offset;
	snprintf(m->section, sizeof m->section, "%s", ref->section ? ref->section : "");
	snprintf(m->member, sizeof m->member, "%s", ref->member ? ref->member : "");
	m->images[0] = '\0';
	if (ref->kind == KIMG_INPUT_FATBIN) {
		struct kimg_fatbin fb;
		struct kimg_image img;
		uint64_t cursor = 0;
		ck_assert_int_eq(kimg_fatbin_open(ref->bytes, 0, &fb, NULL), 0);
		while (kimg_fatbin_next(&fb, &cursor, &img, NULL) == 1) {
			char name[32];
			size_t len = strlen(m->images);
			kimg_image_arch_name(&img, name, sizeof name);
			snprintf(m->images + len, sizeof m->images - len, "%s%s", len ? " " : "", name);
		}
	}
	return ms->stop_after && ms->n >= ms->stop_after ? 7 : 0;
}

static void walk_ex(struct kimg_span in, unsigned flags, struct mods *ms)
{
	memset(ms, 0, sizeof *ms);
	ms->in = in;
	ms->rc = kimg_input_for_each_module_ex(in, flags, collect_cb, ms, &ms->err);
}

static void walk(struct kimg_span in, struct mods *ms)
{
	memset(ms, 0, sizeof *ms);
	ms->in = in;
	ms->rc = kimg_input_for_each_module(in, collect_cb, ms, &ms->err);
}

static uint64_t get_u64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Section header of the section named `name` in a host ELF64 (test side,
 * trusting the fixture). */
static uint8_t *find_shdr(uint8_t *elf, const char *name)
{
	uint64_t shoff = get_u64(elf + 0x28);
	unsigned shnum = get_u16(elf + 0x3C), shstrndx = get_u16(elf + 0x3E);
	const uint8_t *strtab = elf + get_u64(elf + shoff + shstrndx * 64 + 0x18);
	for (unsigned i = 0; i < shnum; i++) {
		uint8_t *h = elf + shoff + i * 64;
		if (strcmp((const char *)strtab + (h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24), name) == 0)
			return h;
	}
	ck_abort_msg("no section %s", name);
	return NULL;
}

/* ---- classification ---- */

static const struct {
	const char *file;
	enum kimg_input_kind kind;
} classified[] = {
	{ "multi_exe", KIMG_INPUT_HOST_ELF }, { "libtwo.so", KIMG_INPUT_HOST_ELF },
	{ "tu_a.o", KIMG_INPUT_HOST_ELF },    { "libtwo.a", KIMG_INPUT_ARCHIVE },
	{ "sm80.cubin", KIMG_INPUT_CUBIN },   { "sm100f.cubin", KIMG_INPUT_CUBIN },
	{ "multi.fatbin", KIMG_INPUT_FATBIN }, { "compute80.ptx", KIMG_INPUT_PTX },
	{ "compute90a.ptx", KIMG_INPUT_PTX },
};

START_TEST(classify_recognises_each_fixture_kind)
{
	struct kimg_span f = fixture_load(classified[_i].file);
	ck_assert_msg(kimg_input_classify(f) == classified[_i].kind, "%s", classified[_i].file);
	fixture_free(f);
}
END_TEST

/* The PTX sniff reads no byte past its input: each text ends at a page
 * followed by PROT_NONE memory, where a read one byte too far crashes
 * (a mutant reading p[i + 1] for a "/" that is the last byte did; with
 * the next byte a "/" it also took the end for a comment). None of these
 * is PTX: each ends before an answer. */
START_TEST(ptx_sniff_reads_nothing_past_the_input)
{
	static const char *const texts[] = { "   /", "  \t/", "/* a *", "\n\t.version", ".tar" };
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	memset(p, '/', 2 * (size_t)page);
	ck_assert_int_eq(mprotect(p + page, (size_t)page, PROT_NONE), 0);
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		size_t len = strlen(texts[k]);
		uint8_t *at = p + page - len;
		memcpy(at, texts[k], len);
		ck_assert_msg(kimg_input_classify(kimg_span_make(at, len)) == KIMG_INPUT_UNKNOWN, "%s", texts[k]);
	}
	munmap(p, 2 * (size_t)page);
}
END_TEST

START_TEST(classify_small_and_synthetic_inputs)
{
	static const char ptx_after_comments[] = "//\n// Generated\n//\n\n\t.version 9.0\n.target sm_90\n";
	static const char not_ptx[] = "this mentions .version but not at a line start\n";
	static const uint8_t wrapper[24] = { 0xb1, 0x43, 0x62, 0x46, 1 };
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(NULL, 0)), KIMG_INPUT_UNKNOWN);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make("\177EL", 3)), KIMG_INPUT_UNKNOWN);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make("PK\3\4rest", 8)), KIMG_INPUT_ZIP);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(wrapper, 24)), KIMG_INPUT_WRAPPER);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(ptx_after_comments, sizeof ptx_after_comments - 1)),
			 KIMG_INPUT_PTX);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(not_ptx, sizeof not_ptx - 1)), KIMG_INPUT_UNKNOWN);
	/* Source files that carry PTX in a string are not PTX (numba's tests in
	 * a site-packages walk were taken for compute_XX modules): only blank
	 * space and comments may come before the first directive. */
	static const char py_with_ptx[] = "import numba\nPTX = '''\n.version 8.4\n.target sm_100a\n'''\n";
	static const char block_comment_first[] = "/* a\n * block */ .version 8.0\n.target sm_80\n";
	static const char open_comment[] = "/* never closed .version 8.0\n";
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(py_with_ptx, sizeof py_with_ptx - 1)), KIMG_INPUT_UNKNOWN);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(block_comment_first, sizeof block_comment_first - 1)),
			 KIMG_INPUT_PTX);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(open_comment, sizeof open_comment - 1)), KIMG_INPUT_UNKNOWN);
	/* "*" after a first character that is not "/" opens no comment: text
	 * before the directive, so not PTX (a make mutants survivor took any
	 * "?*" for a comment's start) */
	static const char star_not_comment[] = "x* */.version 9.0\n.target sm_90\n";
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(star_not_comment, sizeof star_not_comment - 1)),
			 KIMG_INPUT_UNKNOWN);
	/* The names kimg-probe prints (docs/json-probe.md "kind" and "origin"). */
	ck_assert_str_eq(kimg_input_kind_name(KIMG_INPUT_HOST_ELF), "elf");
	ck_assert_str_eq(kimg_input_kind_name(KIMG_INPUT_ARCHIVE), "archive");
	ck_assert_str_eq(kimg_input_kind_name((enum kimg_input_kind)99), "unknown");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_NV_FATBIN), "nv_fatbin");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_RELFATBIN), "relfatbin");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_WRAPPER), "wrapper");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_SCAN), "scan");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_RAW), "raw");
	ck_assert_str_eq(kimg_module_origin_name(KIMG_ORIGIN_COUNT), "unknown");
}
END_TEST

/* kimg_input_classify_head on every prefix of in: undecided, or the
 * answer of kimg_input_classify on the whole of in (the oracle is the
 * classifier of whole files, pinned by the tests above). Returns the
 * shortest prefix that decides. */
static size_t head_agrees_on_every_prefix(struct kimg_span in)
{
	enum kimg_input_kind whole = kimg_input_classify(in), kind;
	size_t first = SIZE_MAX;
	for (size_t n = 0; n <= in.size; n++) {
		bool all = n == in.size;
		if (kimg_input_classify_head(kimg_span_make(in.data, n), all, &kind)) {
			ck_assert_msg(kind == whole, "prefix %zu of %llu: kind %d, whole file %d", n,
				      (unsigned long long)in.size, kind, whole);
			if (first == SIZE_MAX)
				first = n;
		} else {
			ck_assert_msg(!all, "the whole input must decide");
			ck_assert_int_eq(kind, KIMG_INPUT_UNKNOWN);
		}
	}
	return first;
}

START_TEST(a_head_decides_as_the_whole_file_or_asks_for_more)
{
	/* The walk of a tree reads 4 KiB of each file and decides from that
	 * whether to open it: every prefix must agree with the whole file. */
	static const char *const texts[] = {
		"//\n// Generated\n//\n\n\t.version 9.0\n.target sm_90\n",
		"import numba\nPTX = '''\n.version 8.4\n'''\n",
		"/* a\n * block */ .version 8.0\n.target sm_80\n",
		"/* never closed .version 8.0\n",
		".versionX 8.0\n",
		".target\tsm_90\n",
		"   /",
		"// only a comment",
		"\n\n\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		head_agrees_on_every_prefix(kimg_span_make(texts[i], strlen(texts[i])));
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(texts[0], strlen(texts[0]))), KIMG_INPUT_PTX);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(texts[5], strlen(texts[5]))), KIMG_INPUT_PTX);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(texts[4], strlen(texts[4]))), KIMG_INPUT_UNKNOWN);
	/* A prefix shorter than KIMG_INPUT_HEAD_MIN never decides, a whole
	 * file always does. */
	enum kimg_input_kind kind;
	ck_assert(!kimg_input_classify_head(kimg_span_make("\177ELF\2\1", 6), false, &kind));
	ck_assert(kimg_input_classify_head(kimg_span_make(NULL, 0), true, &kind));
	ck_assert_int_eq(kind, KIMG_INPUT_UNKNOWN);
	/* Blank space past 64 KiB: text of unknown kind, decided at 64 KiB
	 * as kimg_input_classify decides it. */
	size_t big = KIMG_INPUT_HEAD_MAX + 100;
	char *blank = malloc(big);
	ck_assert_ptr_nonnull(blank);
	memset(blank, ' ', big);
	memcpy(blank + big - 13, ".version 9.0\n", 13);
	ck_assert(!kimg_input_classify_head(kimg_span_make(blank, 4096), false, &kind));
	ck_assert(kimg_input_classify_head(kimg_span_make(blank, KIMG_INPUT_HEAD_MAX), false, &kind));
	ck_assert_int_eq(kind, KIMG_INPUT_UNKNOWN);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(blank, big)), KIMG_INPUT_UNKNOWN);
	/* A comment that ends past 4 KiB, PTX after it: decided only there. */
	memset(blank, ' ', big);
	memcpy(blank, "/*", 2);
	memcpy(blank + 6000, "*/\n.version 9.0\n", 16);
	ck_assert_uint_gt(head_agrees_on_every_prefix(kimg_span_make(blank, 6016)), 6000);
	ck_assert_int_eq(kimg_input_classify(kimg_span_make(blank, 6016)), KIMG_INPUT_PTX);
	free(blank);
}
END_TEST

START_TEST(a_head_of_each_fixture_decides_within_4_kib)
{
	struct kimg_span f = fixture_load(classified[_i].file);
	uint64_t n = f.size < 4096 ? f.size : 4096;
	enum kimg_input_kind kind;
	ck_assert_msg(kimg_input_classify_head(kimg_span_make(f.data, n), n == f.size, &kind) &&
			      kind == classified[_i].kind,
		      "%s: a 4 KiB head decides %d", classified[_i].file, kind);
	head_agrees_on_every_prefix(kimg_span_make(f.data, f.size < 8192 ? f.size : 8192));
	fixture_free(f);
}
END_TEST

/* ---- the module walk on real files ---- */

/* One expected module: origin, section, member, images. */
struct want {
	enum kimg_module_origin origin;
	const char *section, *member, *images;
};

static const struct {
	const char *file;
	unsigned flags; /* kimg_input_for_each_module_ex flags */
	int n;
	struct want m[4];
} walks[] = {
	/* §2 [V]: a CUDA 13 executable has the device-link stub container
	 * (.symtab-only cubins) and then the real one, both in .nv_fatbin. */
	{ "multi_exe", 0, 2, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80 sm_90 sm_90a sm_100a sm_100f sm_120" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "",
		  "sm_80 sm_90 compute_90 sm_90a compute_90a sm_100a sm_100f compute_100f sm_120" } } },
	{ "ptxonly_exe", 0, 2, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "compute_80" } } },
	{ "sm80_exe", 0, 2, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80" } } },
	/* §2 [V]: -rdc: linked cubins in .nv_fatbin, one container per TU in __nv_relfatbin */
	{ "rdc_exe", 0, 3, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80 sm_90" },
		{ KIMG_ORIGIN_RELFATBIN, "__nv_relfatbin", "", "sm_80 sm_90" },
		{ KIMG_ORIGIN_RELFATBIN, "__nv_relfatbin", "", "sm_80 sm_90" } } },
	/* two TUs with different arch sets, plus the device-link stub */
	{ "libtwo.so", 0, 3, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_75" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_90 compute_90" } } },
	{ "libtwo.a", 0, 2, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "tu_a.o", "sm_80" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "tu_b.o", "sm_90 compute_90" } } },
	{ "tu_a.o", 0, 1, { { KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80" } } },
	{ "rdc_main.o", 0, 1, { { KIMG_ORIGIN_RELFATBIN, "__nv_relfatbin", "", "sm_80" } } },
	{ "lto.o", 0, 1, { { KIMG_ORIGIN_RELFATBIN, "__nv_relfatbin", "", "lto_90" } } },
	{ "multi.fatbin", 0, 1, { { KIMG_ORIGIN_RAW, "", "",
		"sm_80 sm_90 compute_90 sm_90a compute_90a sm_100a sm_100f compute_100f sm_120" } } },
	/* §1: a blob in .rodata (cuModuleLoadData data) is not device code that
	 * cuobjdump --list-elf lists: the default walk leaves data sections
	 * alone, the data scan (KIMG_INPUT_SCAN_DATA) finds it. */
	{ "embedded.o", 0, 0, { { 0 } } },
	{ "embedded.o", KIMG_INPUT_SCAN_DATA, 1, { { KIMG_ORIGIN_SCAN, ".rodata", "",
		"sm_80 sm_90 compute_90 sm_90a compute_90a sm_100a sm_100f compute_100f sm_120" } } },
	/* §2: a wrapper pointing outside .nv_fatbin; reached once, not again by the scan */
	{ "wrapped.so", 0, 1, { { KIMG_ORIGIN_WRAPPER, ".rodata", "",
		"sm_80 sm_90 compute_90 sm_90a compute_90a sm_100a sm_100f compute_100f sm_120" } } },
	{ "wrapped.so", KIMG_INPUT_SCAN_DATA, 1, { { KIMG_ORIGIN_WRAPPER, ".rodata", "",
		"sm_80 sm_90 compute_90 sm_90a compute_90a sm_100a sm_100f compute_100f sm_120" } } },
	/* the data scan adds nothing where there is no data blob */
	{ "libtwo.so", KIMG_INPUT_SCAN_DATA, 3, {
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_75" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_80" },
		{ KIMG_ORIGIN_NV_FATBIN, ".nv_fatbin", "", "sm_90 compute_90" } } },
};

START_TEST(walk_finds_exactly_the_expected_modules)
{
	struct kimg_span f = fixture_load(walks[_i].file);
	struct mods ms;
	walk_ex(f, walks[_i].flags, &ms);
	ck_assert_msg(ms.rc == walks[_i].n, "%s (flags %u): rc %d (%s)", walks[_i].file, walks[_i].flags, ms.rc,
		      ms.err.what);
	ck_assert_int_eq(ms.err.code, 0);
	ck_assert_int_eq(ms.n, walks[_i].n);
	for (int i = 0; i < ms.n; i++) {
		const struct want *w = &walks[_i].m[i];
		ck_assert_int_eq(ms.m[i].kind, KIMG_INPUT_FATBIN);
		ck_assert_int_eq(ms.m[i].origin, w->origin);
		ck_assert_str_eq(ms.m[i].section, w->section);
		ck_assert_str_eq(ms.m[i].member, w->member);
		ck_assert_str_eq(ms.m[i].images, w->images);
		ck_assert_msg(ms.m[i].bytes_match, "module %d bytes not at input + offset", i);
		if (i > 0)
			ck_assert_uint_gt(ms.m[i].offset, ms.m[i - 1].offset);
	}
	fixture_free(f);
}
END_TEST

START_TEST(raw_cubin_and_ptx_are_one_module_each)
{
	static const char *const files[] = { "sm80.cubin", "compute80.ptx" };
	static const enum kimg_input_kind kinds[] = { KIMG_INPUT_CUBIN, KIMG_INPUT_PTX };
	for (int i = 0; i < 2; i++) {
		struct kimg_span f = fixture_load(files[i]);
		struct mods ms;
		walk(f, &ms);
		ck_assert_int_eq(ms.rc, 1);
		ck_assert_int_eq(ms.m[0].kind, kinds[i]);
		ck_assert_int_eq(ms.m[0].origin, KIMG_ORIGIN_RAW);
		ck_assert_uint_eq(ms.m[0].offset, 0);
		ck_assert_uint_eq(ms.m[0].size, f.size);
		fixture_free(f);
	}
}
END_TEST

START_TEST(lto_entries_are_ltoir_kind)
{
	struct kimg_span f = fixture_load("lto.o");
	struct mods ms;
	struct kimg_fatbin fb;
	struct kimg_image img;
	uint64_t cursor = 0;
	walk(f, &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(kimg_fatbin_open(f, ms.m[0].offset, &fb, NULL), 0);
	ck_assert_int_eq(kimg_fatbin_next(&fb, &cursor, &img, NULL), 1);
	ck_assert_int_eq(img.kind, KIMG_IMAGE_LTOIR);
	ck_assert_uint_eq(img.flags, 0x18011); /* §7 [V] */
	fixture_free(f);
}
END_TEST

START_TEST(a_nonzero_callback_return_stops_the_walk)
{
	struct kimg_span f = fixture_load("rdc_exe");
	struct mods ms;
	memset(&ms, 0, sizeof ms);
	ms.in = f;
	ms.stop_after = 2;
	ck_assert_int_eq(kimg_input_for_each_module(f, collect_cb, &ms, NULL), 7);
	ck_assert_int_eq(ms.n, 2);
	/* fn NULL just counts */
	ck_assert_int_eq(kimg_input_for_each_module(f, NULL, NULL, NULL), 3);
	fixture_free(f);
}
END_TEST

/* ---- host ELF: malformed ---- */

START_TEST(host_elf_truncated_anywhere_is_etrunc)
{
	struct kimg_span f = fixture_load("multi_exe");
	/* precondition: the section header table ends the file */
	ck_assert_uint_eq(get_u64(f.data + 0x28) + 64u * get_u16(f.data + 0x3C), f.size);
	for (uint64_t cut = 4; cut < f.size; cut += (cut < 256 ? 1 : 4099)) {
		struct kimg_error e;
		int rc = kimg_input_for_each_module(kimg_span_make(f.data, cut), NULL, NULL, &e);
		ck_assert_msg(rc == -KIMG_ETRUNC, "cut %llu: rc %d", (unsigned long long)cut, rc);
		ck_assert_int_eq(e.code, -KIMG_ETRUNC);
	}
	fixture_free(f);
}
END_TEST

static const struct {
	const char *what;
	unsigned off, width;
	uint64_t value;
	int rc;
} ehdr_corruptions[] = {
	{ "ELFCLASS32", 4, 1, 1, -KIMG_ENOTSUP },
	{ "big-endian", 5, 1, 2, -KIMG_ENOTSUP },
	{ "e_shentsize 32", 0x3A, 2, 32, -KIMG_EFORMAT },
	{ "e_shstrndx out of range", 0x3E, 2, 500, -KIMG_EFORMAT },
	{ "e_shstrndx 0", 0x3E, 2, 0, -KIMG_EFORMAT },
	{ "e_shoff past EOF", 0x28, 8, 1ull << 40, -KIMG_ETRUNC },
	{ "e_shoff wraps", 0x28, 8, UINT64_MAX - 16, -KIMG_ETRUNC },
	{ "e_shnum too large", 0x3C, 2, 0xfff0, -KIMG_ETRUNC },
};

START_TEST(host_elf_header_corruptions_have_exact_codes)
{
	struct kimg_span f = fixture_load("tu_a.o");
	uint8_t *p = copy_of(f);
	struct kimg_error e;
	uint8_t *field = p + ehdr_corruptions[_i].off;
	if (ehdr_corruptions[_i].width == 1)
		*field = (uint8_t)ehdr_corruptions[_i].value;
	else if (ehdr_corruptions[_i].width == 2)
		put_le16(field, (uint16_t)ehdr_corruptions[_i].value);
	else
		put_le64(field, ehdr_corruptions[_i].value);
	ck_assert_msg(kimg_input_for_each_module(kimg_span_make(p, f.size), NULL, NULL, &e) == ehdr_corruptions[_i].rc,
		      "%s", ehdr_corruptions[_i].what);
	ck_assert_int_eq(e.code, ehdr_corruptions[_i].rc);
	ck_assert_str_ne(e.what, "");
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(a_section_name_outside_the_name_table_is_eformat)
{
	struct kimg_span f = fixture_load("tu_a.o");
	uint8_t *p = copy_of(f);
	put_le32(find_shdr(p, ".rodata"), 0x7fffffff);
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make(p, f.size), NULL, NULL, NULL), -KIMG_EFORMAT);
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(extended_section_numbering_gives_the_same_walk)
{
	struct kimg_span f = fixture_load("tu_a.o");
	uint8_t *p = copy_of(f);
	uint64_t shoff = get_u64(p + 0x28);
	struct mods ms;
	/* gABI: e_shnum 0 -> sh_size of section 0; e_shstrndx SHN_XINDEX -> sh_link */
	put_le64(p + shoff + 0x20, get_u16(p + 0x3C));
	put_le32(p + shoff + 0x28, get_u16(p + 0x3E));
	put_le16(p + 0x3C, 0);
	put_le16(p + 0x3E, 0xffff);
	walk(kimg_span_make(p, f.size), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_str_eq(ms.m[0].images, "sm_80");
	ck_assert_str_eq(ms.m[0].section, ".nv_fatbin");
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(a_fatbin_section_past_eof_is_reported_and_skipped)
{
	struct kimg_span f = fixture_load("multi_exe");
	uint8_t *p = copy_of(f);
	uint8_t *h = find_shdr(p, ".nv_fatbin");
	struct mods ms;
	put_le64(h + 0x18, f.size - 8); /* sh_offset: the data now passes EOF */
	walk(kimg_span_make(p, f.size), &ms);
	ck_assert_int_eq(ms.rc, 0);
	ck_assert_int_eq(ms.n, 0);
	ck_assert_int_eq(ms.err.code, -KIMG_ETRUNC);
	ck_assert_ptr_nonnull(strstr(ms.err.what, ".nv_fatbin"));
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(a_bad_second_container_keeps_the_first_and_reports_the_offset)
{
	struct kimg_span f = fixture_load("multi_exe");
	uint8_t *p = copy_of(f);
	struct mods ms;
	walk(f, &ms);
	ck_assert_int_eq(ms.rc, 2);
	uint64_t second = ms.m[1].offset;
	put_le32(p + second, 0xdeadbeef);
	walk(kimg_span_make(p, f.size), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_EFORMAT);
	ck_assert_uint_eq(ms.err.offset, second);
	/* a fatSize running past the section end */
	memcpy(p, f.data, f.size);
	put_le64(p + second + 8, 1ull << 32);
	walk(kimg_span_make(p, f.size), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_ETRUNC);
	ck_assert_uint_eq(ms.err.offset, second);
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(a_bad_wrapper_magic_is_eformat_and_keeps_the_sections)
{
	struct kimg_span f = fixture_load("libtwo.so");
	uint8_t *p = copy_of(f);
	uint8_t *h = find_shdr(p, ".nvFatBinSegment");
	struct mods ms;
	put_le32(p + get_u64(h + 0x18), 0x11111111);
	walk(kimg_span_make(p, f.size), &ms);
	ck_assert_int_eq(ms.rc, 3);
	ck_assert_int_eq(ms.err.code, -KIMG_EFORMAT);
	ck_assert_uint_eq(ms.err.offset, get_u64(h + 0x18));
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(scan_ignores_false_magic_hits)
{
	struct kimg_span f = fixture_load("embedded.o");
	uint8_t *p = copy_of(f);
	struct mods ms;
	walk_ex(f, KIMG_INPUT_SCAN_DATA, &ms);
	ck_assert_int_eq(ms.rc, 1);
	/* break the first entry: the magic alone must not count */
	put_le16(p + ms.m[0].offset + 16 + 2, 0x0202);
	walk_ex(kimg_span_make(p, f.size), KIMG_INPUT_SCAN_DATA, &ms);
	ck_assert_int_eq(ms.rc, 0);
	ck_assert_int_eq(ms.err.code, 0);
	free(p);
	fixture_free(f);
}
END_TEST

/* Known zero ranges (a sparse file's holes, issue 12 item 10) are jumped
 * over, never read: the hole here is PROT_NONE memory, which any read
 * would turn into a crash. Two containers with 16 pages of hole between
 * them, padding zeros around it: the same two modules as a plain walk of
 * the same bytes with the hole filled with zeros. */
START_TEST(known_zero_ranges_are_jumped_not_read)
{
	struct kimg_span fat = fixture_load("multi.fatbin");
	long page = sysconf(_SC_PAGESIZE);
	uint64_t hole_start = (fat.size + 100 + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	uint64_t hole_end = hole_start + 16 * (uint64_t)page, total = hole_end + 24 + fat.size;
	uint8_t *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	memcpy(p, fat.data, fat.size);
	memcpy(p + hole_end + 24, fat.data, fat.size);
	struct mods plain, holed;
	walk(kimg_span_make(p, total), &plain);
	ck_assert_int_eq(plain.rc, 2);
	ck_assert_int_eq(mprotect(p + hole_start, hole_end - hole_start, PROT_NONE), 0);
	struct kimg_zero_range r[] = { { fat.size + 40, hole_end + 8 } };
	struct kimg_zero_ranges zeros = { r, 1 };
	memset(&holed, 0, sizeof holed);
	holed.in = kimg_span_make(p, total);
	holed.rc = kimg_input_for_each_module_zeros(holed.in, 0, &zeros, collect_cb, &holed, &holed.err);
	ck_assert_int_eq(holed.rc, 2);
	ck_assert_int_eq(holed.err.code, 0);
	ck_assert_uint_eq(holed.m[1].offset, hole_end + 24);
	ck_assert_uint_eq(holed.m[1].size, plain.m[1].size);
	ck_assert_str_eq(holed.m[1].images, plain.m[1].images);
	/* Ranges past the end or over everything stay inside the input. */
	struct kimg_zero_range wide[] = { { fat.size, UINT64_MAX } };
	struct kimg_zero_ranges all = { wide, 1 };
	ck_assert_int_eq(kimg_input_for_each_module_zeros(holed.in, 0, &all, NULL, NULL, NULL), 1);
	munmap(p, total);
	fixture_free(fat);
}
END_TEST

/* GNU thin archives (issue 12 item 9): tests/fixtures/committed/thin_two.a
 * is `ar rcT lib/libthin.a obj/tu_a.o obj/tu_b.o` (binutils 2.40) of the
 * two fixture objects; `ar tv` lists ../obj/tu_a.o (10696 bytes) and
 * ../obj/tu_b.o (11496). The core lists them; their bytes are not in it. */
struct thin_list {
	int n;
	char name[4][64];
	uint64_t size[4];
};

static int thin_cb(void *ctx, const char *path, uint64_t size)
{
	struct thin_list *l = ctx;
	if (l->n < 4) {
		snprintf(l->name[l->n], sizeof l->name[0], "%s", path);
		l->size[l->n] = size;
	}
	l->n++;
	return 0;
}

START_TEST(thin_archive_members_are_listed_not_walked)
{
	FILE *fp = fopen("tests/fixtures/committed/thin_two.a", "rb");
	ck_assert_ptr_nonnull(fp);
	static uint8_t b[4096];
	size_t n = fread(b, 1, sizeof b, fp);
	fclose(fp);
	struct kimg_span in = kimg_span_make(b, n);
	struct thin_list l = { 0 };
	struct kimg_error e = { 0, 0, "" };
	ck_assert(kimg_input_is_thin_archive(in));
	ck_assert_int_eq(kimg_input_classify(in), KIMG_INPUT_ARCHIVE);
	ck_assert_int_eq(kimg_thin_archive_for_each_member(in, thin_cb, &l, &e), 2);
	ck_assert_str_eq(l.name[0], "../obj/tu_a.o");
	ck_assert_uint_eq(l.size[0], 10696);
	ck_assert_str_eq(l.name[1], "../obj/tu_b.o");
	ck_assert_uint_eq(l.size[1], 11496);
	/* The walk cannot open files: it says so instead of reading headers as data. */
	struct mods ms;
	walk(in, &ms);
	ck_assert_int_eq(ms.rc, -KIMG_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(ms.err.what, "thin archive"));
	/* Every prefix fails cleanly or lists fewer members. */
	for (size_t cut = 0; cut < n; cut++) {
		struct thin_list p = { 0 };
		int rc = kimg_thin_archive_for_each_member(kimg_span_make(b, cut), thin_cb, &p, &e);
		ck_assert_msg(rc < 0 || rc <= 2, "prefix %zu: %d", cut, rc);
	}
	/* A regular archive is not a thin one. */
	struct kimg_span reg = fixture_load("libtwo.a");
	ck_assert(!kimg_input_is_thin_archive(reg));
	ck_assert_int_eq(kimg_thin_archive_for_each_member(reg, thin_cb, &l, &e), -KIMG_EFORMAT);
	fixture_free(reg);
}
END_TEST

/* Synthetic thin archives, member names as GNU ar writes them (ar.h: a
 * short name ends with '/', the header is 60 bytes, a thin archive holds
 * no member data): a two-letter name "ab/" is member "ab"; a BSD "#1/N"
 * name (kept in member data, which a thin archive lacks) is refused. */
static size_t thin_header(char *at, const char *name, unsigned size)
{
	char h[61];
	snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10u`\n", name, "0", "0", "0", "644", size);
	memcpy(at, h, 60);
	return 60;
}

START_TEST(thin_archive_short_and_bsd_names)
{
	char b[8 + 3 * 60];
	struct thin_list l = { 0 };
	struct kimg_error e = { 0, 0, "" };
	size_t n = 8;
	memcpy(b, "!<thin>\n", 8);
	n += thin_header(b + n, "ab/", 7);
	n += thin_header(b + n, "x/", 9);
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), 2);
	ck_assert_str_eq(l.name[0], "ab");
	ck_assert_uint_eq(l.size[0], 7);
	ck_assert_str_eq(l.name[1], "x");
	n += thin_header(b + n, "#1/4", 4);
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	ck_assert_str_eq(e.what, "thin archive: bad member name");
}
END_TEST

/* ar.h's header as text: name, then the size field as given (ten bytes,
 * decimal, space padded), then the two-byte terminator as given. */
static size_t thin_raw(char *at, const char *name, const char *size, const char *fmag)
{
	char h[64];
	snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10s%.2s", name, "0", "0", "0", "644", size, fmag);
	memcpy(at, h, 60);
	return 60;
}

static int stop_at_second(void *ctx, const char *path, uint64_t size)
{
	int *n = ctx;
	(void)path;
	(void)size;
	return ++*n == 2 ? 42 : 0;
}

/* Hostile thin archives, each refused where its fault is (ar.h: the size
 * is decimal, the header ends with "`\n"; GNU "/N" names index the "//"
 * table, whose entries end with "/\n"), and the callback's stop returned
 * as it is. */
START_TEST(thin_archive_hostile_headers)
{
	static char b[8 + 8 * 60 + 64];
	struct thin_list l = { 0 };
	struct kimg_error e = { 0, 0, "" };
	size_t n = 8;
	memcpy(b, "!<thin>\n", 8);
	n += thin_raw(b + n, "ok/", "5", "`\n");
	size_t bad_at = n;
	n += thin_raw(b + n, "x/", "12a", "`\n");
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	ck_assert_str_eq(e.what, "thin archive: bad member header");
	ck_assert_uint_eq(e.offset, bad_at);
	thin_raw(b + bad_at, "x/", "", "`\n"); /* no digits */
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	thin_raw(b + bad_at, "x/", "3", "'\n"); /* terminator wrong in its first byte */
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	thin_raw(b + bad_at, "x/", "3", "` "); /* and in its second */
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	thin_raw(b + bad_at, "x/", "3", "`\n");
	memset(&l, 0, sizeof l);
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), 2);
	ck_assert_uint_eq(l.size[1], 3);
	/* one byte of padding at the end is no member; two bytes are a cut header */
	b[n] = '\n';
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n + 1), thin_cb, &l, &e), 2);
	b[n + 1] = '\n';
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n + 2), thin_cb, &l, &e), -KIMG_ETRUNC);
	ck_assert_str_eq(e.what, "thin archive: member header truncated");
	ck_assert_uint_eq(e.offset, n);
	b[n] = 'x';
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n + 1), thin_cb, &l, &e), -KIMG_ETRUNC);
	/* the callback's stop */
	int seen = 0;
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), stop_at_second, &seen, &e), 42);
	ck_assert_int_eq(seen, 2);
	/* no callback: counted all the same */
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), NULL, NULL, &e), 2);

	/* GNU long names: an odd-sized "//" table (padded to even), then
	 * "/0" and "/12" into it; "/40" is past it */
	n = 8;
	static const char names[] = "dir/long.o/\nsub/other.o/\n";
	n += thin_raw(b + n, "//", "25", "`\n");
	memcpy(b + n, names, 25);
	n += 25;
	b[n++] = '\n';
	n += thin_raw(b + n, "/0", "10", "`\n");
	n += thin_raw(b + n, "/12", "11", "`\n");
	memset(&l, 0, sizeof l);
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), 2);
	ck_assert_str_eq(l.name[0], "dir/long.o");
	ck_assert_uint_eq(l.size[0], 10);
	ck_assert_str_eq(l.name[1], "sub/other.o");
	ck_assert_uint_eq(l.size[1], 11);
	bad_at = n;
	n += thin_raw(b + n, "/25", "1", "`\n");
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	ck_assert_str_eq(e.what, "thin archive: bad member name");
	ck_assert_uint_eq(e.offset, bad_at);
	thin_raw(b + bad_at, "/24", "1", "`\n"); /* the table's last byte: a name of nothing */
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n), thin_cb, &l, &e), -KIMG_EFORMAT);
	/* a table longer than what is left */
	n = 8;
	n += thin_raw(b + n, "//", "99", "`\n");
	ck_assert_int_eq(kimg_thin_archive_for_each_member(kimg_span_make(b, n + 10), thin_cb, &l, &e), -KIMG_ETRUNC);
	ck_assert_str_eq(e.what, "thin archive: table of 99 bytes passes the end");
}
END_TEST

START_TEST(unknown_walk_flags_are_einval_and_walk_nothing)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	struct mods ms;
	walk_ex(f, 0x80, &ms);
	ck_assert_int_eq(ms.rc, -EINVAL);
	ck_assert_int_eq(ms.err.code, -EINVAL);
	ck_assert_int_eq(ms.n, 0);
	ck_assert_ptr_nonnull(strstr(ms.err.what, "0x80"));
	fixture_free(f);
}
END_TEST

/* ---- raw inputs: malformed ---- */

START_TEST(raw_inputs_errors_have_exact_codes)
{
	static const uint8_t wrapper[24] = { 0xb1, 0x43, 0x62, 0x46, 1 };
	struct kimg_span fat = fixture_load("multi.fatbin");
	struct kimg_error e;
	struct mods ms;
	uint8_t *two = calloc(1, 2 * fat.size + 8);

	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make(NULL, 0), NULL, NULL, &e), -KIMG_EUNKNOWN);
	ck_assert_str_eq(e.what, "empty input");
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make("garbage!", 8), NULL, NULL, &e), -KIMG_EUNKNOWN);
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make("PK\3\4xxxx", 8), NULL, NULL, &e), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make(wrapper, 24), NULL, NULL, &e), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make(fat.data, fat.size - 1), NULL, NULL, &e),
			 -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_input_for_each_module(kimg_span_make(fat.data, 10), NULL, NULL, &e), -KIMG_ETRUNC);
	/* a .fatbin file of two containers, the second cut short: one, then ETRUNC */
	memcpy(two, fat.data, fat.size);
	memcpy(two + fat.size + 8, fat.data, fat.size);
	walk(kimg_span_make(two, 2 * fat.size + 8), &ms);
	ck_assert_int_eq(ms.rc, 2);
	ck_assert_uint_eq(ms.m[1].offset, fat.size + 8);
	walk(kimg_span_make(two, 2 * fat.size), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_ETRUNC);
	ck_assert_uint_eq(ms.err.offset, fat.size + 8);
	free(two);
	fixture_free(fat);
}
END_TEST

/* ---- archives ---- */

struct ar {
	uint8_t *p;
	size_t n;
};

static void ar_raw(struct ar *a, const void *data, size_t len)
{
	a->p = realloc(a->p, a->n + len + 1);
	ck_assert(a->p != NULL);
	memcpy(a->p + a->n, data, len);
	a->n += len;
}

/* One member; `name` is the raw 16-byte name field content. */
static void ar_member(struct ar *a, const char *name, const void *data, size_t len)
{
	char hdr[61];
	snprintf(hdr, sizeof hdr, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0", "0", "0", "644", len);
	ar_raw(a, hdr, 60);
	ar_raw(a, data, len);
	if (len & 1)
		ar_raw(a, "\n", 1);
}

START_TEST(gnu_long_names_bsd_names_and_symbol_tables)
{
	struct kimg_span ta = fixture_load("tu_a.o"), tb = fixture_load("tu_b.o");
	static const char longnames[] = "a_rather_long_member_name_tu_a.o/\nsecond_long_name_tu_b.o/\n";
	struct ar a = { NULL, 0 };
	uint8_t *bsd = malloc(20 + tb.size);
	struct mods ms;

	ar_raw(&a, "!<arch>\n", 8);
	ar_member(&a, "/", "\0\0\0\0", 4);
	ar_member(&a, "/SYM64/", "\0\0\0\0\0\0\0\0", 8);
	ar_member(&a, "//", longnames, sizeof longnames - 1);
	ar_member(&a, "/0", ta.data, ta.size);
	memcpy(bsd, "bsd_member_b.o\0\0\0\0\0\0", 20);
	memcpy(bsd + 20, tb.data, tb.size);
	ar_member(&a, "#1/20", bsd, 20 + tb.size);
	ar_member(&a, "notes.txt/", "hello", 5);
	ar_member(&a, "/34", tb.data, tb.size);
	walk(kimg_span_make(a.p, a.n), &ms);
	ck_assert_int_eq(ms.err.code, 0);
	ck_assert_int_eq(ms.rc, 3);
	ck_assert_str_eq(ms.m[0].member, "a_rather_long_member_name_tu_a.o");
	ck_assert_str_eq(ms.m[0].images, "sm_80");
	ck_assert_str_eq(ms.m[1].member, "bsd_member_b.o");
	ck_assert_str_eq(ms.m[1].images, "sm_90 compute_90");
	ck_assert_str_eq(ms.m[2].member, "second_long_name_tu_b.o");
	for (int i = 0; i < 3; i++)
		ck_assert(ms.m[i].bytes_match);
	free(a.p);
	free(bsd);
	fixture_free(ta);
	fixture_free(tb);
}
END_TEST

START_TEST(archive_problems_have_exact_codes_and_keep_earlier_members)
{
	struct kimg_span ta = fixture_load("tu_a.o"), tb = fixture_load("tu_b.o"), lib = fixture_load("libtwo.a");
	struct ar a = { NULL, 0 };
	uint8_t *bad = copy_of(tb);
	struct mods ms;
	size_t after_first;

	/* a nested archive is not walked: ELIMIT, the rest still is */
	ar_raw(&a, "!<arch>\n", 8);
	ar_member(&a, "tu_a.o/", ta.data, ta.size);
	after_first = a.n;
	ar_member(&a, "inner.a/", lib.data, lib.size);
	ar_member(&a, "tu_b.o/", tb.data, tb.size);
	walk(kimg_span_make(a.p, a.n), &ms);
	ck_assert_int_eq(ms.rc, 2);
	ck_assert_int_eq(ms.err.code, -KIMG_ELIMIT);
	ck_assert_uint_eq(ms.err.offset, after_first + 60);
	ck_assert_ptr_nonnull(strstr(ms.err.what, "inner.a"));
	ck_assert_ptr_nonnull(strstr(ms.err.what, "nested archive not walked"));

	/* truncated inside the second member */
	walk(kimg_span_make(a.p, after_first + 100), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_ETRUNC);
	ck_assert_uint_eq(ms.err.offset, after_first);
	walk(kimg_span_make(a.p, after_first + 30), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_ETRUNC);

	/* a broken member header terminator */
	a.p[after_first + 58] = 'x';
	walk(kimg_span_make(a.p, a.n), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_int_eq(ms.err.code, -KIMG_EFORMAT);
	free(a.p);

	/* a malformed member is reported with its name; the others are walked */
	a.p = NULL, a.n = 0;
	put_le16(bad + 0x3A, 32); /* e_shentsize */
	ar_raw(&a, "!<arch>\n", 8);
	ar_member(&a, "tu_b.o/", bad, tb.size);
	ar_member(&a, "tu_a.o/", ta.data, ta.size);
	walk(kimg_span_make(a.p, a.n), &ms);
	ck_assert_int_eq(ms.rc, 1);
	ck_assert_str_eq(ms.m[0].member, "tu_a.o");
	ck_assert_int_eq(ms.err.code, -KIMG_EFORMAT);
	ck_assert_ptr_nonnull(strstr(ms.err.what, "member tu_b.o: "));
	ck_assert_uint_eq(ms.err.offset, 8 + 60 + 0x3A);

	/* a long-name reference with no "//" table */
	free(a.p);
	a.p = NULL, a.n = 0;
	ar_raw(&a, "!<arch>\n", 8);
	ar_member(&a, "/5", ta.data, ta.size);
	walk(kimg_span_make(a.p, a.n), &ms);
	ck_assert_int_eq(ms.rc, -KIMG_EFORMAT); /* nothing yielded: unusable */
	ck_assert_int_eq(ms.err.code, -KIMG_EFORMAT);
	free(a.p);
	free(bad);
	fixture_free(ta);
	fixture_free(tb);
	fixture_free(lib);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("classify");
	tcase_add_loop_test(tc, classify_recognises_each_fixture_kind, 0, sizeof classified / sizeof classified[0]);
	tcase_add_test(tc, classify_small_and_synthetic_inputs);
	tcase_add_test(tc, ptx_sniff_reads_nothing_past_the_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("walk");
	tcase_add_loop_test(tc, walk_finds_exactly_the_expected_modules, 0, sizeof walks / sizeof walks[0]);
	tcase_add_test(tc, raw_cubin_and_ptx_are_one_module_each);
	tcase_add_test(tc, a_head_decides_as_the_whole_file_or_asks_for_more);
	tcase_add_loop_test(tc, a_head_of_each_fixture_decides_within_4_kib, 0, sizeof classified / sizeof classified[0]);
	tcase_add_test(tc, lto_entries_are_ltoir_kind);
	tcase_add_test(tc, a_nonzero_callback_return_stops_the_walk);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_add_test(tc, host_elf_truncated_anywhere_is_etrunc);
	tcase_add_loop_test(tc, host_elf_header_corruptions_have_exact_codes, 0,
			    sizeof ehdr_corruptions / sizeof ehdr_corruptions[0]);
	tcase_add_test(tc, a_section_name_outside_the_name_table_is_eformat);
	tcase_add_test(tc, extended_section_numbering_gives_the_same_walk);
	tcase_add_test(tc, a_fatbin_section_past_eof_is_reported_and_skipped);
	tcase_add_test(tc, a_bad_second_container_keeps_the_first_and_reports_the_offset);
	tcase_add_test(tc, a_bad_wrapper_magic_is_eformat_and_keeps_the_sections);
	tcase_add_test(tc, scan_ignores_false_magic_hits);
	tcase_add_test(tc, known_zero_ranges_are_jumped_not_read);
	tcase_add_test(tc, thin_archive_members_are_listed_not_walked);
	tcase_add_test(tc, thin_archive_short_and_bsd_names);
	tcase_add_test(tc, thin_archive_hostile_headers);
	tcase_add_test(tc, unknown_walk_flags_are_einval_and_walk_nothing);
	tcase_add_test(tc, raw_inputs_errors_have_exact_codes);
	suite_add_tcase(s, tc);
	tc = tcase_create("archive");
	tcase_add_test(tc, gnu_long_names_bsd_names_and_symbol_tables);
	tcase_add_test(tc, archive_problems_have_exact_codes_and_keep_earlier_members);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
