/* SPDX-License-Identifier: Apache-2.0 */
/* core/elf_symbols.c: the function covering an address, from .symtab then
 * .dynsym (elf_symbols.h). Why it exists: dladdr cannot name main() or
 * static functions of a program built without -rdynamic, so the H200 run's
 * stack printed "?? (wrong_static+0x8e4d)".
 *
 * Real files: the nvcc fixtures (non-stripped PIE executables) against
 * the addresses nm prints, their stripped copies (fixtures.mk). Synthetic
 * files: selection rules and every malformed-table error, with its exact
 * code and file offset. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elf_symbols.h"
#include "testutil.h"

/* ---- nm as the independent oracle ---- */

/* Address and size of `name` per `nm -P [-D] --defined-only`; false when
 * nm does not list it. */
static bool nm_lookup(const char *fixture, const char *name, bool dynamic, uint64_t *value, uint64_t *size)
{
	const char *dir = getenv("KIMG_FIXTURES");
	char cmd[1200], line[512];
	bool found = false;
	snprintf(cmd, sizeof cmd, "nm -P %s --defined-only '%s/%s'", dynamic ? "-D" : "", dir ? dir : "build/fixtures",
		 fixture);
	FILE *p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "%s", cmd);
	while (!found && fgets(line, sizeof line, p)) {
		char sym[256], type;
		uint64_t v, s;
		if (sscanf(line, "%255s %c %" SCNx64 " %" SCNx64, sym, &type, &v, &s) == 4 && strcmp(sym, name) == 0) {
			*value = v;
			*size = s;
			found = true;
		}
	}
	pclose(p);
	return found;
}

static void expect_symbol(struct kimg_span elf, uint64_t vaddr, const char *name, uint64_t value, bool dynamic)
{
	struct kimg_elf_symbol sym;
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_elf_symbol_find(elf, vaddr, &sym, &err);
	ck_assert_msg(rc == 0, "0x%" PRIx64 ": %d %s", vaddr, rc, err.what);
	ck_assert_str_eq(sym.name, name);
	ck_assert_uint_eq(sym.value, value);
	ck_assert_uint_eq(sym.offset, vaddr - value);
	ck_assert_int_eq(sym.dynamic, dynamic);
}

/* The H200 case: main of a non-stripped executable, named from .symtab,
 * at its first byte, inside, and at its last byte. */
START_TEST(main_of_nvcc_executables_from_symtab)
{
	static const char *const exes[] = { "sm80_exe", "multi_exe" };
	for (unsigned i = 0; i < 2; i++) {
		uint64_t value, size;
		ck_assert_msg(nm_lookup(exes[i], "main", false, &value, &size), "nm: no main in %s", exes[i]);
		ck_assert_uint_gt(size, 2);
		struct kimg_span elf = fixture_load(exes[i]);
		expect_symbol(elf, value, "main", value, false);
		expect_symbol(elf, value + size / 2, "main", value, false);
		expect_symbol(elf, value + size - 1, "main", value, false);
		fixture_free(elf);
	}
}
END_TEST

/* One past main's end is not main (the next function, or none). */
START_TEST(address_past_a_function_is_not_in_it)
{
	uint64_t value, size;
	struct kimg_elf_symbol sym;
	ck_assert(nm_lookup("sm80_exe", "main", false, &value, &size));
	struct kimg_span elf = fixture_load("sm80_exe");
	int rc = kimg_elf_symbol_find(elf, value + size, &sym, NULL);
	ck_assert(rc == -KIMG_ENOTFOUND || (rc == 0 && strcmp(sym.name, "main") != 0 && sym.value == value + size));
	ck_assert_int_eq(kimg_elf_symbol_find(elf, 0, &sym, NULL), -KIMG_ENOTFOUND);
	fixture_free(elf);
}
END_TEST

/* Stripped executable: .symtab gone, .dynsym holds only imports, so
 * main cannot be named: -KIMG_ENOTFOUND with the address in the message. */
START_TEST(stripped_executable_gives_not_found)
{
	uint64_t value, size;
	struct kimg_elf_symbol sym;
	struct kimg_error err = { 0, 0, "" };
	ck_assert(nm_lookup("sm80_exe", "main", false, &value, &size));
	struct kimg_span elf = fixture_load("sm80_exe_stripped");
	ck_assert_int_eq(kimg_elf_symbol_find(elf, value, &sym, &err), -KIMG_ENOTFOUND);
	ck_assert_int_eq(err.code, -KIMG_ENOTFOUND);
	char want[64];
	snprintf(want, sizeof want, "host ELF: no function symbol covers 0x%" PRIx64, value);
	ck_assert_str_eq(err.what, want);
	ck_assert_ptr_null(sym.name);
	fixture_free(elf);
}
END_TEST

/* Stripped library: its exported functions are still named, from .dynsym. */
START_TEST(stripped_library_names_exports_from_dynsym)
{
	uint64_t value, size;
	ck_assert(nm_lookup("libtwo.so", "_Z11tu_a_launchPf", true, &value, &size));
	struct kimg_span elf = fixture_load("libtwo_stripped.so");
	expect_symbol(elf, value + 1, "_Z11tu_a_launchPf", value, true);
	fixture_free(elf);
	/* not stripped: the same function comes from .symtab */
	elf = fixture_load("libtwo.so");
	expect_symbol(elf, value + 1, "_Z11tu_a_launchPf", value, false);
	fixture_free(elf);
}
END_TEST

/* ---- synthetic files ----
 * Sections: 0 null, 1 .text, 2 .symtab (link 3), 3 .strtab, 4 .dynsym
 * (link 5), 5 .dynstr, 6 .shstrtab. Symbols are (name, info, shndx,
 * value, size); info = binding << 4 | type. */

#define FUNC_G 0x12 /* STB_GLOBAL, STT_FUNC */
#define FUNC_L 0x02 /* STB_LOCAL, STT_FUNC */
#define FUNC_W 0x22 /* STB_WEAK, STT_FUNC */
#define IFUNC_G 0x1a
#define OBJ_G 0x11 /* STT_OBJECT */

struct tsym {
	const char *name;
	uint8_t info;
	uint16_t shndx;
	uint64_t value, size;
};

struct syn {
	uint8_t b[4096];
	uint64_t size, shoff;
};

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* Symbols then their string table at s->size; returns the table offset. */
static uint64_t syn_table(struct syn *s, const struct tsym *syms, unsigned n, uint64_t *str_off, uint64_t *str_size)
{
	uint64_t tab = s->size, str;
	memset(s->b + tab, 0, 24); /* null symbol */
	str = tab + 24 * (n + 1);
	uint64_t used = 1;
	s->b[str] = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *e = s->b + tab + 24 * (i + 1);
		size_t len = strlen(syms[i].name);
		put_u32(e, syms[i].name[0] ? (uint32_t)used : 0);
		e[4] = syms[i].info;
		e[5] = 0;
		put_u16(e + 6, syms[i].shndx);
		put_u64(e + 8, syms[i].value);
		put_u64(e + 16, syms[i].size);
		memcpy(s->b + str + used, syms[i].name, len + 1);
		used += len + 1;
	}
	*str_off = str;
	*str_size = used;
	s->size = str + used;
	return tab;
}

static void syn_shdr(struct syn *s, unsigned i, uint32_t name, uint32_t type, uint64_t addr, uint64_t off,
		     uint64_t size, uint32_t link, uint64_t entsize)
{
	uint8_t *h = s->b + s->shoff + 64 * i;
	put_u32(h, name);
	put_u32(h + 4, type);
	put_u64(h + 0x10, addr);
	put_u64(h + 0x18, off);
	put_u64(h + 0x20, size);
	put_u32(h + 0x28, link);
	put_u64(h + 0x38, entsize);
}

static uint64_t shdr_at(const struct syn *s, unsigned i) { return s->shoff + 64 * (uint64_t)i; }

static void syn_build(struct syn *s, const struct tsym *syms, unsigned n, const struct tsym *dyn, unsigned nd)
{
	static const char names[] = "\0.text\0.symtab\0.strtab\0.dynsym\0.dynstr\0.shstrtab";
	uint64_t st, st_off, st_size, dt, dt_off, dt_size, sh;
	memset(s, 0, sizeof *s);
	memcpy(s->b, "\x7f" "ELF\x02\x01\x01", 7);
	put_u16(s->b + 16, 3);    /* ET_DYN */
	put_u16(s->b + 18, 62);   /* EM_X86_64 */
	put_u16(s->b + 0x3A, 64); /* e_shentsize */
	put_u16(s->b + 0x3C, 7);
	put_u16(s->b + 0x3E, 6);
	s->size = 64;
	st = syn_table(s, syms, n, &st_off, &st_size);
	dt = syn_table(s, dyn, nd, &dt_off, &dt_size);
	sh = s->size;
	memcpy(s->b + sh, names, sizeof names);
	s->size = (sh + sizeof names + 7) & ~7ull;
	s->shoff = s->size;
	put_u64(s->b + 0x28, s->shoff);
	s->size += 7 * 64;
	syn_shdr(s, 1, 1, 8 /* NOBITS */, 0x1000, 0x1000, 0x1000, 0, 0);
	syn_shdr(s, 2, 7, 2, 0, st, 24 * (n + 1), 3, 24);
	syn_shdr(s, 3, 15, 3, 0, st_off, st_size, 0, 0);
	syn_shdr(s, 4, 23, 11, 0, dt, 24 * (nd + 1), 5, 24);
	syn_shdr(s, 5, 31, 3, 0, dt_off, dt_size, 0, 0);
	syn_shdr(s, 6, 39, 3, 0, sh, sizeof names, 0, 0);
}

static struct kimg_span syn_span(const struct syn *s) { return kimg_span_make(s->b, s->size); }

static void expect_error(const struct syn *s, uint64_t size, int code, uint64_t offset, const char *what)
{
	struct kimg_elf_symbol sym;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_elf_symbol_find(kimg_span_make(s->b, size), 0x1010, &sym, &err), code);
	ck_assert_int_eq(err.code, code);
	ck_assert_uint_eq(err.offset, offset);
	ck_assert_str_eq(err.what, what);
}

static const struct tsym base_syms[] = {
	{ "outer", FUNC_G, 1, 0x1000, 0x100 },
	{ "data", OBJ_G, 1, 0x1000, 0x1000 },        /* not a function */
	{ "imported", FUNC_G, 0, 0x1000, 0x1000 },   /* undefined */
	{ "", FUNC_G, 1, 0x1000, 0x1000 },           /* nameless */
	{ "inner_local", FUNC_L, 1, 0x1010, 0x10 },  /* starts later: wins inside it */
	{ "inner", FUNC_G, 1, 0x1010, 0x10 },        /* alias, global: preferred */
	{ "inner_weak", FUNC_W, 1, 0x1010, 0x10 },
	{ "label", FUNC_L, 1, 0x1080, 0 },           /* size 0: only its own address */
	{ "resolver", IFUNC_G, 1, 0x1200, 0x20 },
};
#define N_BASE (sizeof base_syms / sizeof base_syms[0])
static const struct tsym dyn_syms[] = {
	{ "exported", FUNC_G, 1, 0x1300, 0x40 },
	{ "outer_dyn", FUNC_G, 1, 0x1000, 0x100 }, /* .symtab covers 0x1000: never reached */
};

/* Selection rules of kimg_elf_symbol_find (elf_symbols.h). */
START_TEST(selection_innermost_then_binding_then_dynsym)
{
	static struct syn s;
	syn_build(&s, base_syms, N_BASE, dyn_syms, 2);
	struct kimg_span e = syn_span(&s);
	expect_symbol(e, 0x1000, "outer", 0x1000, false);
	expect_symbol(e, 0x100f, "outer", 0x1000, false);
	expect_symbol(e, 0x1010, "inner", 0x1010, false);   /* global over local and weak */
	expect_symbol(e, 0x101f, "inner", 0x1010, false);
	expect_symbol(e, 0x1020, "outer", 0x1000, false);   /* past inner: outer again */
	expect_symbol(e, 0x1080, "label", 0x1080, false);   /* zero size, exact */
	expect_symbol(e, 0x1081, "outer", 0x1000, false);   /* zero size covers nothing else */
	expect_symbol(e, 0x1210, "resolver", 0x1200, false); /* STT_GNU_IFUNC counts */
	expect_symbol(e, 0x1300, "exported", 0x1300, true); /* not in .symtab: .dynsym */
	struct kimg_elf_symbol sym;
	ck_assert_int_eq(kimg_elf_symbol_find(e, 0x1100, &sym, NULL), -KIMG_ENOTFOUND);
	ck_assert_int_eq(kimg_elf_symbol_find(e, 0xfff, &sym, NULL), -KIMG_ENOTFOUND);
}
END_TEST

/* Local and weak aliases alone: weak beats local; equal ranks: first. */
START_TEST(selection_weak_over_local_first_of_equals)
{
	static const struct tsym syms[] = {
		{ "l", FUNC_L, 1, 0x1000, 0x10 },
		{ "w", FUNC_W, 1, 0x1000, 0x10 },
		{ "w2", FUNC_W, 1, 0x1000, 0x10 },
	};
	static struct syn s;
	syn_build(&s, syms, 3, NULL, 0);
	expect_symbol(syn_span(&s), 0x1004, "w", 0x1000, false);
}
END_TEST

START_TEST(no_section_headers_not_found)
{
	static struct syn s;
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u64(s.b + 0x28, 0);
	expect_error(&s, s.size, -KIMG_ENOTFOUND, 0, "host ELF: no function symbol covers 0x1010");
}
END_TEST

START_TEST(not_elf_and_bad_headers)
{
	static struct syn s;
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	expect_error(&s, 3, -KIMG_EFORMAT, 0, "host ELF: not an ELF file");
	expect_error(&s, 63, -KIMG_ETRUNC, 0, "host ELF: 63 bytes, shorter than the ELF header");
	s.b[4] = 1;
	expect_error(&s, s.size, -KIMG_ENOTSUP, 4, "32-bit ELF file (class 1): kimg reads 64-bit little-endian ELF only");
	s.b[4] = 2;
	s.b[5] = 2;
	expect_error(&s, s.size, -KIMG_ENOTSUP, 5, "big-endian ELF file: kimg reads 64-bit little-endian ELF only");
	s.b[5] = 1;
	s.b[0] = 0x7e;
	expect_error(&s, s.size, -KIMG_EFORMAT, 0, "host ELF: not an ELF file");
	s.b[0] = 0x7f;
	/* section table cut: the shared reader's error (elf64.c) */
	char what[120];
	snprintf(what, sizeof what, "host ELF: 7 section headers pass the end");
	expect_error(&s, s.size - 1, -KIMG_ETRUNC, s.shoff, what);
}
END_TEST

START_TEST(malformed_symbol_tables_exact_errors)
{
	static struct syn s;
	char what[120];
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u64(s.b + shdr_at(&s, 2) + 0x38, 16);
	expect_error(&s, s.size, -KIMG_EFORMAT, shdr_at(&s, 2) + 0x38, "host ELF: .symtab entry size 16, expected 24");

	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u64(s.b + shdr_at(&s, 2) + 0x20, 24 * 3 + 1);
	expect_error(&s, s.size, -KIMG_EFORMAT, shdr_at(&s, 2) + 0x20, "host ELF: .symtab size 73 not a multiple of 24");

	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u64(s.b + shdr_at(&s, 2) + 0x18, s.size - 24);
	snprintf(what, sizeof what, "host ELF: .symtab [%llu, +240) past the end", (unsigned long long)(s.size - 24));
	expect_error(&s, s.size, -KIMG_ETRUNC, shdr_at(&s, 2) + 0x18, what);

	/* the limit is checked before the bytes: no 400 MiB file needed */
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u64(s.b + shdr_at(&s, 2) + 0x20, 24 * (KIMG_ELF_SYMBOLS_MAX + 1));
	expect_error(&s, s.size, -KIMG_ELIMIT, shdr_at(&s, 2) + 0x20,
		     "host ELF: .symtab has 16777217 symbols, limit 16777216");

	syn_build(&s, base_syms, N_BASE, NULL, 0);
	put_u32(s.b + shdr_at(&s, 2) + 0x28, 7);
	expect_error(&s, s.size, -KIMG_EFORMAT, shdr_at(&s, 2) + 0x28, "host ELF: .symtab links to section 7 of 7");
	put_u32(s.b + shdr_at(&s, 2) + 0x28, 0);
	expect_error(&s, s.size, -KIMG_EFORMAT, shdr_at(&s, 2) + 0x28, "host ELF: .symtab links to section 0 of 7");
	put_u32(s.b + shdr_at(&s, 2) + 0x28, 1); /* .text: NOBITS, not a string table */
	expect_error(&s, s.size, -KIMG_EFORMAT, shdr_at(&s, 1),
		     "host ELF: string table of .symtab (section 1) is not one");

	syn_build(&s, base_syms, N_BASE, NULL, 0);
	uint64_t str_end = 0;
	put_u64(s.b + shdr_at(&s, 3) + 0x18, s.size - 2);
	snprintf(what, sizeof what, "host ELF: string table [%llu, +", (unsigned long long)(s.size - 2));
	{
		struct kimg_elf_symbol sym;
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(kimg_elf_symbol_find(syn_span(&s), 0x1010, &sym, &err), -KIMG_ETRUNC);
		ck_assert_uint_eq(err.offset, shdr_at(&s, 3) + 0x18);
		ck_assert_int_eq(strncmp(err.what, what, strlen(what)), 0);
	}

	/* string table whose last byte is not NUL */
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	uint64_t st_off, st_size;
	memcpy(&st_off, s.b + shdr_at(&s, 3) + 0x18, 8);
	memcpy(&st_size, s.b + shdr_at(&s, 3) + 0x20, 8);
	str_end = st_off + st_size - 1;
	s.b[str_end] = 'x';
	expect_error(&s, s.size, -KIMG_EFORMAT, str_end, "host ELF: string table of .symtab not NUL-terminated");

	/* a covering symbol's name starts past its string table */
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	memcpy(&st_off, s.b + shdr_at(&s, 2) + 0x18, 8);
	put_u32(s.b + st_off + 24 * 6, 5000); /* entry 6: "inner", chosen at 0x1010 */
	expect_error(&s, s.size, -KIMG_EFORMAT, st_off + 24 * 6,
		     "host ELF: .symtab symbol 6 name offset 5000 outside its string table");

	/* a name offset at a NUL inside the table is an empty name: skipped */
	syn_build(&s, base_syms, N_BASE, NULL, 0);
	uint32_t nul_at;
	memcpy(&nul_at, s.b + st_off + 24 * 5, 4); /* "inner_local": its NUL follows */
	put_u32(s.b + st_off + 24 * 6, nul_at + (uint32_t)strlen("inner_local"));
	put_u32(s.b + st_off + 24 * 7, nul_at + (uint32_t)strlen("inner_local"));
	expect_symbol(syn_span(&s), 0x1010, "inner_local", 0x1010, false);
}
END_TEST

/* A bad .dynsym is only read when .symtab has no answer. */
START_TEST(dynsym_read_only_when_needed)
{
	static struct syn s;
	struct kimg_elf_symbol sym;
	syn_build(&s, base_syms, N_BASE, dyn_syms, 2);
	put_u64(s.b + shdr_at(&s, 4) + 0x38, 0);
	expect_symbol(syn_span(&s), 0x1000, "outer", 0x1000, false);
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_elf_symbol_find(syn_span(&s), 0x1300, &sym, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "host ELF: .dynsym entry size 0, expected 24");
}
END_TEST

/* Two .symtab sections, the second malformed: the first one's match at
 * 0x1010 is not handed out with the error (found by fuzz_elf_symbols). */
START_TEST(an_error_after_a_match_leaves_no_symbol)
{
	static struct syn s;
	struct kimg_elf_symbol sym;
	struct kimg_error err = { 0, 0, "" };
	syn_build(&s, base_syms, N_BASE, dyn_syms, 2);
	put_u32(s.b + shdr_at(&s, 4) + 4, 2); /* .dynsym made SHT_SYMTAB */
	put_u64(s.b + shdr_at(&s, 4) + 0x38, 0);
	memset(&sym, 0x55, sizeof sym);
	ck_assert_int_eq(kimg_elf_symbol_find(syn_span(&s), 0x1010, &sym, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "host ELF: .dynsym entry size 0, expected 24");
	ck_assert_ptr_null(sym.name);
	ck_assert_uint_eq(sym.value, 0);
}
END_TEST

/* Every prefix of a valid file: an error or the right answer, no crash
 * (ASan/fuzzing cover the rest: tests/fuzz/fuzz_elf_symbols.c). */
START_TEST(every_truncation_is_an_error)
{
	static struct syn s;
	syn_build(&s, base_syms, N_BASE, dyn_syms, 2);
	for (uint64_t n = 0; n < s.size; n++) {
		struct kimg_elf_symbol sym;
		int rc = kimg_elf_symbol_find(kimg_span_make(s.b, n), 0x1010, &sym, NULL);
		ck_assert_msg(rc == -KIMG_ETRUNC || rc == -KIMG_EFORMAT || rc == -KIMG_ENOTFOUND, "size %llu: %d",
			      (unsigned long long)n, rc);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("elf_symbols");
	TCase *t = tcase_create("fixtures");
	tcase_add_test(t, main_of_nvcc_executables_from_symtab);
	tcase_add_test(t, address_past_a_function_is_not_in_it);
	tcase_add_test(t, stripped_executable_gives_not_found);
	tcase_add_test(t, stripped_library_names_exports_from_dynsym);
	suite_add_tcase(s, t);
	t = tcase_create("synthetic");
	tcase_add_test(t, selection_innermost_then_binding_then_dynsym);
	tcase_add_test(t, selection_weak_over_local_first_of_equals);
	tcase_add_test(t, no_section_headers_not_found);
	tcase_add_test(t, not_elf_and_bad_headers);
	tcase_add_test(t, malformed_symbol_tables_exact_errors);
	tcase_add_test(t, dynsym_read_only_when_needed);
	tcase_add_test(t, every_truncation_is_an_error);
	tcase_add_test(t, an_error_after_a_match_leaves_no_symbol);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
