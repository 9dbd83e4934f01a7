/* SPDX-License-Identifier: Apache-2.0 */
/* core/input_elf.c at scale: many .nvFatBinSegment wrappers and many
 * containers in a host ELF built here in memory (no fixture needed).
 * Reference: docs/format.md §2 (wrappers: each
 * container reached once), §1 and §9 (the data scan, opt-in through
 * KIMG_INPUT_SCAN_DATA, skips what wrappers reached). The fixture-based
 * walks are in test_input.c. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "fatbin.h"
#include "input.h"


/* One 88-byte container: 16-byte header, one 64-byte SASS entry (sm_80),
 * 8 payload bytes (§4, §5). */
#define SYN_CONT 88u
#define SYN_BASE 0x10000u /* vaddr = SYN_BASE + file offset, as in an ET_DYN */

static void syn_container(uint8_t *p)
{
	memset(p, 0, SYN_CONT);
	put_le32(p, KIMG_FATBIN_MAGIC);
	put_le16(p + 4, 1);
	put_le16(p + 6, 16);
	put_le64(p + 8, 64 + 8);
	put_le16(p + 16, 2);       /* kind: ELF */
	put_le16(p + 18, 0x0101);  /* entry format */
	put_le32(p + 20, 64);      /* header_size */
	put_le64(p + 24, 8);       /* size */
	put_le16(p + 16 + 0x18, 8);
	put_le16(p + 16 + 0x1A, 1);
	put_le32(p + 16 + 0x1C, 80);
	put_le64(p + 16 + 0x28, 0x11);
}

struct syn {
	unsigned pad;      /* empty sections before .rodata: every section-header walk pays for them */
	unsigned lead;     /* bytes before the first container (unaligned when not a multiple of 8) */
	unsigned n_cont;   /* containers back to back in .rodata */
	unsigned n_wrap;   /* wrappers; wrapper k leads to container syn_target(k) */
	unsigned n_dist;   /* distinct targets: containers [0, n_dist) in a shuffled order */
	bool tail;         /* .rodata ends with 3 bytes of a magic (50 ed 55) */
};

/* Wrapper k: a permutation of [0, n_dist) (7919 is prime, coprime with the
 * n_dist used), then the first wrappers' targets again (duplicates), and
 * wrapper 1 is an empty slot (magic 0, data 0). */
static int syn_target(const struct syn *c, unsigned k)
{
	if (k == 1)
		return -1;
	return (int)((uint64_t)(k % c->n_dist) * 7919u % c->n_dist);
}

static uint64_t syn_rodata_off(void) { return 64; }

static uint64_t syn_cont_off(const struct syn *c, unsigned i) { return syn_rodata_off() + c->lead + (uint64_t)i * SYN_CONT; }

static struct kimg_span syn_build(const struct syn *c)
{
	static const char names[] = "\0.rodata\0.nvFatBinSegment\0.shstrtab\0.pad";
	uint64_t ro = syn_rodata_off(), ro_size = c->lead + (uint64_t)c->n_cont * SYN_CONT + (c->tail ? 3 : 0);
	uint64_t seg = (ro + ro_size + 7) & ~7ull, seg_size = 24ull * c->n_wrap;
	uint64_t str = seg + seg_size, shoff = (str + sizeof names + 7) & ~7ull;
	unsigned shnum = 1 + c->pad + 3;
	uint64_t size = shoff + 64ull * shnum;
	uint8_t *p = calloc(1, size), *h;
	ck_assert(p != NULL);

	memcpy(p, "\177ELF\2\1\1", 7);
	put_le16(p + 0x10, 3);  /* ET_DYN */
	put_le16(p + 0x12, 62); /* EM_X86_64 */
	put_le64(p + 0x28, shoff);
	put_le16(p + 0x34, 64);
	put_le16(p + 0x3A, 64);
	put_le16(p + 0x3C, (uint16_t)shnum);
	put_le16(p + 0x3E, (uint16_t)(shnum - 1));
	for (unsigned i = 0; i < c->n_cont; i++)
		syn_container(p + syn_cont_off(c, i));
	if (c->tail)
		memcpy(p + ro + ro_size - 3, "\x50\xed\x55", 3);
	for (unsigned k = 0; k < c->n_wrap; k++) {
		int t = syn_target(c, k);
		if (t < 0)
			continue;
		put_le32(p + seg + 24ull * k, KIMG_FATBIN_WRAPPER_MAGIC);
		put_le32(p + seg + 24ull * k + 4, 1);
		put_le64(p + seg + 24ull * k + 8, SYN_BASE + syn_cont_off(c, (unsigned)t));
	}
	memcpy(p + str, names, sizeof names);
	for (unsigned i = 1; i <= c->pad; i++) {
		h = p + shoff + 64ull * i;
		put_le32(h, 36);      /* ".pad" */
		put_le32(h + 4, 1);   /* PROGBITS, not SHF_ALLOC, empty */
		put_le64(h + 0x18, str);
	}
	h = p + shoff + 64ull * (1 + c->pad);
	put_le32(h, 1);           /* .rodata */
	put_le32(h + 4, 1);
	put_le64(h + 8, 0x2);     /* SHF_ALLOC */
	put_le64(h + 0x10, SYN_BASE + ro);
	put_le64(h + 0x18, ro);
	put_le64(h + 0x20, ro_size);
	h += 64;
	put_le32(h, 9);           /* .nvFatBinSegment */
	put_le32(h + 4, 1);
	put_le64(h + 8, 0x3);     /* SHF_WRITE | SHF_ALLOC */
	put_le64(h + 0x10, SYN_BASE + seg);
	put_le64(h + 0x18, seg);
	put_le64(h + 0x20, seg_size);
	h += 64;
	put_le32(h, 26);          /* .shstrtab */
	put_le32(h + 4, 3);
	put_le64(h + 0x18, str);
	put_le64(h + 0x20, sizeof names);
	return kimg_span_make(p, size);
}

/* Every module checked as it comes: the expected origin and offset in
 * order (wrappers first, each distinct target once, in wrapper order; then
 * the scan, in section order, skipping what wrappers reached). */
struct syn_check {
	const struct syn *c;
	unsigned n;          /* modules seen */
	unsigned wrap_k;     /* next wrapper to consider */
	unsigned scan_i;     /* next container the scan may yield */
	bool *reached;       /* containers reached through a wrapper */
	char bad[200];       /* first mismatch */
};

static int syn_check_cb(void *ctx, const struct kimg_module_ref *ref)
{
	struct syn_check *sc = ctx;
	const struct syn *c = sc->c;
	enum kimg_module_origin origin = KIMG_ORIGIN_WRAPPER;
	uint64_t want = 0;

	while (sc->wrap_k < c->n_wrap) {
		int t = syn_target(c, sc->wrap_k++);
		if (t >= 0 && !sc->reached[t]) {
			sc->reached[t] = true;
			want = syn_cont_off(c, (unsigned)t);
			goto check;
		}
	}
	origin = KIMG_ORIGIN_SCAN;
	while (sc->scan_i < c->n_cont && sc->reached[sc->scan_i])
		sc->scan_i++;
	want = syn_cont_off(c, sc->scan_i++);
check:
	if (!sc->bad[0] && (ref->origin != origin || ref->offset != want || ref->bytes.size != SYN_CONT ||
			    strcmp(ref->section, ".rodata") != 0))
		snprintf(sc->bad, sizeof sc->bad, "module %u: origin %d offset %llu size %llu, want origin %d offset %llu",
			 sc->n, ref->origin, (unsigned long long)ref->offset, (unsigned long long)ref->bytes.size, origin,
			 (unsigned long long)want);
	sc->n++;
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Small: the bounded target list (<= 64), an unaligned first container, a
 * cut magic ending .rodata. Large: past the list, 2,000 sections ahead of
 * .rodata. The large one took minutes when each wrapper and each scanned
 * container searched all wrappers, each walking the section headers
 * (libcublasLt.so.13: 542 ms); now it is linear in the wrappers per lookup. */
static const struct syn syn_cases[] = {
	{ .pad = 3, .lead = 3, .n_cont = 40, .n_wrap = 24, .n_dist = 20, .tail = true },
	{ .pad = 2000, .lead = 0, .n_cont = 3000, .n_wrap = 1600, .n_dist = 1500, .tail = false },
};

START_TEST(many_wrappers_and_containers_each_module_once_in_order)
{
	const struct syn *c = &syn_cases[_i];
	struct kimg_span in = syn_build(c);
	struct kimg_error err;
	struct timespec t0;
	double took;

	for (unsigned flags = 0; flags <= KIMG_INPUT_SCAN_DATA; flags += KIMG_INPUT_SCAN_DATA) {
		struct syn_check sc = { c, 0, 0, 0, calloc(c->n_cont, sizeof(bool)), "" };
		unsigned want = flags ? c->n_cont : c->n_dist;
		ck_assert(sc.reached != NULL);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int rc = kimg_input_for_each_module_ex(in, flags, syn_check_cb, &sc, &err);
		took = ms_since(&t0);
		ck_assert_msg(rc == (int)want, "flags %u: rc %d, want %u (%s)", flags, rc, want, err.what);
		ck_assert_int_eq(err.code, 0);
		ck_assert_msg(sc.bad[0] == '\0', "flags %u: %s", flags, sc.bad);
		ck_assert_uint_eq(sc.n, want);
		/* Generous: ~10 ms here; the quadratic lookup took minutes. */
		ck_assert_msg(took < 2000.0, "flags %u: %.0f ms", flags, took);
		free(sc.reached);
	}
	free((void *)in.data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("input_elf");
	TCase *tc = tcase_create("scale");
	tcase_add_loop_test(tc, many_wrappers_and_containers_each_module_once_in_order, 0,
			    sizeof syn_cases / sizeof syn_cases[0]);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
