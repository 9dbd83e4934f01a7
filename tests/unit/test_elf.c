/* SPDX-License-Identifier: Apache-2.0 */
/* core/elf64.c: the core's one ELF64 reader (elf64.h).
 *
 * Oracles that are not the code under test: ELF files laid out byte by
 * byte here from the gABI's ELF64 layout (offsets written as numbers, not
 * with the reader's constants), and the nvcc fixtures as readelf (binutils)
 * sees them: section count, table offset and every section's name, offset
 * and size. Every malformed header gets its exact code and file offset. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elf64.h"
#include "testutil.h"

/* ---- a hand-built ELF64 little-endian file ----
 * Layout: header [0, 64), section-name table at 64 ("\0.shstrtab\0.text\0"),
 * .text at 96 (16 bytes), section headers at 128: [0] null, [1] .shstrtab,
 * [2] .text; program headers at 320 (one PT_LOAD). */
#define NAMES_AT 64u
#define TEXT_AT 96u
#define SHOFF 128u
#define PHOFF 320u
#define FILE_SIZE (PHOFF + 56u)
static const char names[] = "\0.shstrtab\0.text"; /* 17 bytes with the final NUL */

struct file {
	uint8_t b[FILE_SIZE + 64];
	uint64_t size;
};

static uint8_t *shdr(struct file *f, unsigned i) { return f->b + SHOFF + 64 * i; }

static void build(struct file *f)
{
	memset(f, 0, sizeof *f);
	f->size = FILE_SIZE;
	memcpy(f->b, "\177ELF", 4);
	f->b[4] = 2; /* ELFCLASS64 */
	f->b[5] = 1; /* ELFDATA2LSB */
	f->b[6] = 1; /* EV_CURRENT */
	f->b[7] = 0x41;
	f->b[8] = 8;
	put_le16(f->b + 16, 2);      /* e_type EXEC */
	put_le16(f->b + 18, 190);    /* e_machine */
	put_le64(f->b + 32, PHOFF);  /* e_phoff */
	put_le64(f->b + 40, SHOFF);  /* e_shoff */
	put_le32(f->b + 48, 0x5a5a); /* e_flags */
	put_le16(f->b + 52, 64);     /* e_ehsize */
	put_le16(f->b + 54, 56);     /* e_phentsize */
	put_le16(f->b + 56, 1);      /* e_phnum */
	put_le16(f->b + 58, 64);     /* e_shentsize */
	put_le16(f->b + 60, 3);      /* e_shnum */
	put_le16(f->b + 62, 1);      /* e_shstrndx */
	memcpy(f->b + NAMES_AT, names, sizeof names);
	memset(f->b + TEXT_AT, 0xcc, 16);
	put_le32(shdr(f, 1) + 0, 1); /* ".shstrtab" */
	put_le32(shdr(f, 1) + 4, 3); /* SHT_STRTAB */
	put_le64(shdr(f, 1) + 24, NAMES_AT);
	put_le64(shdr(f, 1) + 32, sizeof names);
	put_le32(shdr(f, 2) + 0, 11); /* ".text" */
	put_le32(shdr(f, 2) + 4, 1);  /* SHT_PROGBITS */
	put_le64(shdr(f, 2) + 8, 6);  /* ALLOC | EXECINSTR */
	put_le64(shdr(f, 2) + 16, 0x401000);
	put_le64(shdr(f, 2) + 24, TEXT_AT);
	put_le64(shdr(f, 2) + 32, 16);
	put_le32(shdr(f, 2) + 40, 7);
	put_le32(shdr(f, 2) + 44, 9);
	put_le64(shdr(f, 2) + 56, 4);
	put_le32(f->b + PHOFF + 0, 1); /* PT_LOAD */
	put_le32(f->b + PHOFF + 4, 5); /* R | X */
	put_le64(f->b + PHOFF + 8, TEXT_AT);
	put_le64(f->b + PHOFF + 16, 0x401000);
	put_le64(f->b + PHOFF + 32, 16);
	put_le64(f->b + PHOFF + 40, 32);
}

static struct kimg_span span_of(const struct file *f) { return kimg_span_make(f->b, f->size); }

static void expect_open_error(struct file *f, int code, uint64_t offset, const char *what)
{
	struct kimg_elf e;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_elf_open(span_of(f), &e, &err), code);
	ck_assert_int_eq(err.code, code);
	ck_assert_uint_eq(err.offset, offset);
	ck_assert_str_eq(err.what, what);
}

START_TEST(header_fields_decoded)
{
	struct file f;
	struct kimg_elf_ehdr eh;
	build(&f);
	struct kimg_span s = span_of(&f);
	ck_assert(kimg_elf_ehdr_read(&s, &eh));
	ck_assert_mem_eq(eh.ident, f.b, 16);
	ck_assert_uint_eq(eh.type, 2);
	ck_assert_uint_eq(eh.machine, 190);
	ck_assert_uint_eq(eh.phoff, PHOFF);
	ck_assert_uint_eq(eh.shoff, SHOFF);
	ck_assert_uint_eq(eh.flags, 0x5a5a);
	ck_assert_uint_eq(eh.phentsize, 56);
	ck_assert_uint_eq(eh.phnum, 1);
	ck_assert_uint_eq(eh.shentsize, 64);
	ck_assert_uint_eq(eh.shnum, 3);
	ck_assert_uint_eq(eh.shstrndx, 1);
	/* one byte short of the 64-byte header: nothing decoded */
	s.size = 63;
	ck_assert(!kimg_elf_ehdr_read(&s, &eh));
	ck_assert_uint_eq(eh.shoff, 0);
	ck_assert_uint_eq(eh.machine, 0);
}
END_TEST

START_TEST(magic_and_foreign_files)
{
	struct file f;
	build(&f);
	ck_assert(kimg_elf_has_magic(span_of(&f)));
	ck_assert(!kimg_elf_is_foreign(span_of(&f)));
	ck_assert(!kimg_elf_has_magic(kimg_span_make(f.b, 3)));
	ck_assert(!kimg_elf_is_foreign(kimg_span_make(f.b, 5))); /* class and data not both there */
	f.b[4] = 1;                                              /* ELFCLASS32 */
	ck_assert(kimg_elf_is_foreign(span_of(&f)));
	f.b[4] = 2;
	f.b[5] = 2; /* ELFDATA2MSB */
	ck_assert(kimg_elf_is_foreign(span_of(&f)));
	f.b[0] = 0x7e;
	ck_assert(!kimg_elf_has_magic(span_of(&f)));
	ck_assert(!kimg_elf_is_foreign(span_of(&f))); /* not ELF at all */
}
END_TEST

START_TEST(open_reads_sections_by_index_and_name)
{
	struct file f;
	struct kimg_elf e;
	struct kimg_error err = { 0, 0, "" };
	build(&f);
	ck_assert_int_eq(kimg_elf_open(span_of(&f), &e, &err), 0);
	ck_assert_uint_eq(e.shoff, SHOFF);
	ck_assert_uint_eq(e.shnum, 3);
	ck_assert_uint_eq(e.names.size, sizeof names);
	struct kimg_elf_shdr h = kimg_elf_shdr(&e, 2);
	ck_assert_str_eq(kimg_elf_section_name(&e, &h), ".text");
	ck_assert_uint_eq(h.type, 1);
	ck_assert_uint_eq(h.flags, 6);
	ck_assert_uint_eq(h.addr, 0x401000);
	ck_assert_uint_eq(h.offset, TEXT_AT);
	ck_assert_uint_eq(h.size, 16);
	ck_assert_uint_eq(h.link, 7);
	ck_assert_uint_eq(h.info, 9);
	ck_assert_uint_eq(h.entsize, 4);
	ck_assert(kimg_elf_has_data(&e, &h));
	struct kimg_span text = kimg_elf_section_bytes(&e, &h);
	ck_assert_ptr_eq(text.data, f.b + TEXT_AT);
	ck_assert_uint_eq(text.size, 16);
	h = kimg_elf_shdr(&e, 1);
	ck_assert_str_eq(kimg_elf_section_name(&e, &h), ".shstrtab");
	h = kimg_elf_shdr(&e, 0);
	ck_assert_str_eq(kimg_elf_section_name(&e, &h), "");
	ck_assert_uint_eq(kimg_elf_shdr_offset(&e, 2), SHOFF + 128);
	/* a NOBITS section has no bytes, wherever it says they are */
	put_le32(shdr(&f, 2) + 4, 8);
	h = kimg_elf_shdr(&e, 2);
	ck_assert(!kimg_elf_has_data(&e, &h));
	ck_assert_uint_eq(kimg_elf_section_bytes(&e, &h).size, 0);
	/* no section headers (e_shoff 0): opens, with nothing in it */
	put_le64(f.b + 40, 0);
	ck_assert_int_eq(kimg_elf_open(span_of(&f), &e, &err), 0);
	ck_assert_uint_eq(e.shnum, 0);
}
END_TEST

START_TEST(open_rejects_bad_headers_exactly)
{
	struct file f;
	build(&f);
	f.size = 63;
	expect_open_error(&f, -KIMG_ETRUNC, 0, "host ELF: 63 bytes, shorter than the ELF header");
	build(&f);
	f.b[4] = 1;
	expect_open_error(&f, -KIMG_ENOTSUP, 4, "32-bit ELF file (class 1): kimg reads 64-bit little-endian ELF only");
	build(&f);
	f.b[5] = 2;
	expect_open_error(&f, -KIMG_ENOTSUP, 5, "big-endian ELF file: kimg reads 64-bit little-endian ELF only");
	build(&f);
	put_le16(f.b + 58, 40);
	expect_open_error(&f, -KIMG_EFORMAT, 0x3A, "host ELF: e_shentsize 40, expected 64");
	build(&f);
	put_le64(f.b + 40, FILE_SIZE - 63); /* section 0 cut */
	expect_open_error(&f, -KIMG_ETRUNC, 0x28, "host ELF: section headers at 313 past the end");
	build(&f);
	put_le64(f.b + 40, UINT64_MAX - 7); /* e_shoff + 64 wraps */
	expect_open_error(&f, -KIMG_ETRUNC, 0x28, "host ELF: section headers at 18446744073709551608 past the end");
}
END_TEST

START_TEST(open_rejects_truncated_tables)
{
	struct file f;
	build(&f);
	/* a table of 4 where 3 fit before the program headers, cut at the end */
	put_le16(f.b + 60, 4);
	f.size = SHOFF + 64 * 4 - 1;
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF, "host ELF: 4 section headers pass the end");
	build(&f);
	put_le16(f.b + 60, 0xfff0);
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF, "host ELF: 65520 section headers pass the end");
}
END_TEST

/* Extended numbering: e_shnum 0 takes the count from section 0's sh_size,
 * e_shstrndx 0xffff the index from its sh_link; a count whose table size
 * wraps 64 bits (2^58 + 3 entries of 64 bytes is 192 mod 2^64) is cut, not
 * believed. */
START_TEST(extended_numbering_and_overflowing_counts)
{
	struct file f;
	struct kimg_elf e;
	struct kimg_error err = { 0, 0, "" };
	build(&f);
	put_le16(f.b + 60, 0);
	put_le64(shdr(&f, 0) + 32, 3);
	put_le16(f.b + 62, 0xffff);
	put_le32(shdr(&f, 0) + 40, 1);
	ck_assert_int_eq(kimg_elf_open(span_of(&f), &e, &err), 0);
	ck_assert_uint_eq(e.shnum, 3);
	ck_assert_str_eq((const char *)e.names.data + 11, ".text");
	put_le64(shdr(&f, 0) + 32, ((uint64_t)1 << 58) + 3);
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF, "host ELF: 288230376151711747 section headers pass the end");
	put_le64(shdr(&f, 0) + 32, UINT64_MAX);
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF, "host ELF: 18446744073709551615 section headers pass the end");

	struct kimg_elf_ehdr eh;
	struct kimg_elf_shdr sh0;
	memset(&eh, 0, sizeof eh);
	memset(&sh0, 0, sizeof sh0);
	sh0.size = 70000;
	sh0.link = 69999;
	sh0.info = 100000;
	eh.shnum = 5;
	eh.shstrndx = 4;
	eh.phnum = 2;
	ck_assert(!kimg_elf_needs_section0(&eh));
	ck_assert_uint_eq(kimg_elf_shnum(&eh, &sh0), 5);
	ck_assert_uint_eq(kimg_elf_shstrndx(&eh, &sh0), 4);
	ck_assert_uint_eq(kimg_elf_phnum(&eh, &sh0), 2);
	eh.shnum = 0;
	eh.shstrndx = 0xffff;
	eh.phnum = 0xffff;
	ck_assert(kimg_elf_needs_section0(&eh));
	ck_assert_uint_eq(kimg_elf_shnum(&eh, &sh0), 70000);
	ck_assert_uint_eq(kimg_elf_shstrndx(&eh, &sh0), 69999);
	ck_assert_uint_eq(kimg_elf_phnum(&eh, &sh0), 100000);
}
END_TEST

START_TEST(table_bounds_cannot_overflow)
{
	uint8_t b[256] = { 0 };
	struct kimg_span s = kimg_span_make(b, sizeof b);
	ck_assert(kimg_elf_table_fits(&s, 0, 4, 64));
	ck_assert(kimg_elf_table_fits(&s, 64, 3, 64));
	ck_assert(!kimg_elf_table_fits(&s, 65, 3, 64));
	ck_assert(kimg_elf_table_fits(&s, 256, 0, 64));
	ck_assert(!kimg_elf_table_fits(&s, 257, 0, 64));
	ck_assert(!kimg_elf_table_fits(&s, 0, ((uint64_t)1 << 58) + 1, 64)); /* 64 * count wraps to 64 */
	ck_assert(!kimg_elf_table_fits(&s, 0, UINT64_MAX, 56));
	ck_assert(!kimg_elf_table_fits(&s, UINT64_MAX, 1, 64));
	ck_assert(!kimg_elf_table_fits(&s, 0, 1, 0));
}
END_TEST

START_TEST(shstrndx_out_of_range_or_unusable)
{
	struct file f;
	build(&f);
	put_le16(f.b + 62, 3);
	expect_open_error(&f, -KIMG_EFORMAT, 0x3E, "host ELF: section-name table index 3 of 3");
	put_le16(f.b + 62, 0);
	expect_open_error(&f, -KIMG_EFORMAT, 0x3E, "host ELF: section-name table index 0 of 3");
	build(&f);
	put_le16(f.b + 60, 0);
	put_le64(shdr(&f, 0) + 32, 3);
	put_le16(f.b + 62, 0xffff);
	put_le32(shdr(&f, 0) + 40, 70000); /* the escape, pointing past the table */
	expect_open_error(&f, -KIMG_EFORMAT, 0x3E, "host ELF: section-name table index 70000 of 3");
	build(&f);
	put_le32(shdr(&f, 1) + 4, 8); /* NOBITS */
	expect_open_error(&f, -KIMG_EFORMAT, SHOFF + 64, "host ELF: section-name table has no contents");
	build(&f);
	put_le64(shdr(&f, 1) + 32, 0);
	expect_open_error(&f, -KIMG_EFORMAT, SHOFF + 64, "host ELF: section-name table has no contents");
	build(&f);
	put_le64(shdr(&f, 1) + 24, FILE_SIZE - 10);
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF + 64, "host ELF: section-name table [366, +17) past the end");
	build(&f);
	put_le64(shdr(&f, 1) + 24, UINT64_MAX - 3); /* offset + size wraps */
	expect_open_error(&f, -KIMG_ETRUNC, SHOFF + 64,
			  "host ELF: section-name table [18446744073709551612, +17) past the end");
	build(&f);
	f.b[NAMES_AT + sizeof names - 1] = 'x';
	expect_open_error(&f, -KIMG_EFORMAT, NAMES_AT, "host ELF: section-name table not NUL-terminated");
}
END_TEST

START_TEST(name_offsets_past_the_string_table)
{
	struct file f;
	build(&f);
	put_le32(shdr(&f, 2), sizeof names); /* one past the last byte */
	expect_open_error(&f, -KIMG_EFORMAT, SHOFF + 128, "host ELF: section 2 name offset 17 outside the name table");
	put_le32(shdr(&f, 2), UINT32_MAX);
	expect_open_error(&f, -KIMG_EFORMAT, SHOFF + 128,
			  "host ELF: section 2 name offset 4294967295 outside the name table");
	put_le32(shdr(&f, 2), sizeof names - 1); /* the final NUL: an empty name */
	struct kimg_elf e;
	ck_assert_int_eq(kimg_elf_open(span_of(&f), &e, NULL), 0);
	struct kimg_elf_shdr h = kimg_elf_shdr(&e, 2);
	ck_assert_str_eq(kimg_elf_section_name(&e, &h), "");
}
END_TEST

START_TEST(section_and_program_headers_by_index)
{
	struct file f;
	struct kimg_elf_shdr sh;
	struct kimg_elf_phdr ph;
	build(&f);
	struct kimg_span s = span_of(&f);
	ck_assert(kimg_elf_shdr_read(&s, SHOFF, 2, &sh));
	ck_assert_uint_eq(sh.offset, TEXT_AT);
	/* past the bytes, at an absurd index, from an absurd table: false, zeroed */
	ck_assert(!kimg_elf_shdr_read(&s, SHOFF, 4, &sh)); /* 128 + 4 * 64 + 64 > 376 */
	ck_assert_uint_eq(sh.offset, 0);
	ck_assert_uint_eq(sh.type, 0);
	ck_assert(!kimg_elf_shdr_read(&s, SHOFF, UINT64_MAX, &sh));
	ck_assert(!kimg_elf_shdr_read(&s, SHOFF, ((uint64_t)1 << 58), &sh)); /* 128 + 2^64: wraps to 128 */
	ck_assert(!kimg_elf_shdr_read(&s, UINT64_MAX - 63, 1, &sh));
	ck_assert(kimg_elf_phdr_read(&s, PHOFF, 0, &ph));
	ck_assert_uint_eq(ph.type, 1);
	ck_assert_uint_eq(ph.flags, 5);
	ck_assert_uint_eq(ph.offset, TEXT_AT);
	ck_assert_uint_eq(ph.vaddr, 0x401000);
	ck_assert_uint_eq(ph.filesz, 16);
	ck_assert_uint_eq(ph.memsz, 32);
	ck_assert(!kimg_elf_phdr_read(&s, PHOFF, 1, &ph));
	ck_assert_uint_eq(ph.offset, 0);
	ck_assert(!kimg_elf_phdr_read(&s, PHOFF + 1, 0, &ph));
	ck_assert(!kimg_elf_phdr_read(&s, PHOFF, ((uint64_t)1 << 61), &ph)); /* 56 * 2^61 wraps to 0 */
}
END_TEST

START_TEST(symbols_dynamic_entries_and_strings)
{
	uint8_t t[24 * 2 + 10];
	struct kimg_elf_sym sym;
	memset(t, 0, sizeof t);
	put_le32(t + 24 + 0, 7);
	t[24 + 4] = 0x12; /* GLOBAL FUNC */
	t[24 + 5] = 0x10;
	put_le16(t + 24 + 6, 0xfff1);
	put_le64(t + 24 + 8, 0x1234);
	put_le64(t + 24 + 16, 0x40);
	struct kimg_span s = kimg_span_make(t, sizeof t);
	ck_assert(kimg_elf_sym_read(&s, 1, &sym));
	ck_assert_uint_eq(sym.name, 7);
	ck_assert_uint_eq(KIMG_ELF_ST_BIND(sym.info), 1);
	ck_assert_uint_eq(KIMG_ELF_ST_TYPE(sym.info), 2);
	ck_assert_uint_eq(sym.other, 0x10);
	ck_assert_uint_eq(sym.shndx, 0xfff1);
	ck_assert_uint_eq(sym.value, 0x1234);
	ck_assert_uint_eq(sym.size, 0x40);
	ck_assert(!kimg_elf_sym_read(&s, 2, &sym)); /* 10 trailing bytes are no symbol */
	ck_assert_uint_eq(sym.value, 0);
	ck_assert(!kimg_elf_sym_read(&s, UINT64_MAX / 24 + 1, &sym));

	uint64_t tag, val;
	put_le64(t + 16, 14);
	put_le64(t + 24, 0x99);
	ck_assert(kimg_elf_dyn_read(&s, 1, &tag, &val));
	ck_assert_uint_eq(tag, 14);
	ck_assert_uint_eq(val, 0x99);
	ck_assert(kimg_elf_dyn_read(&s, 2, &tag, &val));
	ck_assert(!kimg_elf_dyn_read(&s, 3, &tag, &val)); /* 58 bytes: three entries */
	ck_assert_uint_eq(tag, 0);

	static const char strtab[] = "\0main\0tail";
	struct kimg_span st = kimg_span_make(strtab, sizeof strtab - 1); /* "tail" not terminated */
	size_t len = 99;
	ck_assert_str_eq(kimg_elf_string(st, 1, &len), "main");
	ck_assert_uint_eq(len, 4);
	ck_assert_str_eq(kimg_elf_string(st, 0, &len), "");
	ck_assert_uint_eq(len, 0);
	ck_assert_ptr_null(kimg_elf_string(st, 6, &len));
	ck_assert_ptr_null(kimg_elf_string(st, sizeof strtab - 1, NULL));
	ck_assert_ptr_null(kimg_elf_string(st, UINT64_MAX, NULL));
	ck_assert_ptr_null(kimg_elf_string(kimg_span_make(NULL, 0), 0, NULL));
}
END_TEST

/* ---- the fixtures, as readelf sees them ---- */

struct readelf_section {
	char name[64];
	uint64_t offset, size;
};

/* `readelf -S -W`: the count and table offset from its first line, then
 * name, offset and size per section; the number of sections read. */
static unsigned readelf_sections(const char *fixture, uint64_t *count, uint64_t *shoff, struct readelf_section *out,
				 unsigned max)
{
	const char *dir = getenv("KIMG_FIXTURES");
	char cmd[1200], line[512];
	unsigned n = 0;
	snprintf(cmd, sizeof cmd, "readelf -S -W '%s/%s' 2>/dev/null", dir ? dir : "build/fixtures", fixture);
	FILE *p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "%s", cmd);
	*count = *shoff = 0;
	while (fgets(line, sizeof line, p)) {
		unsigned idx;
		char name[64], type[64];
		uint64_t addr, off, size;
		if (sscanf(line, "There are %" SCNu64 " section headers, starting at offset 0x%" SCNx64, count, shoff) == 2)
			continue;
		const char *close = strchr(line, ']');
		if (sscanf(line, " [%u]", &idx) != 1 || !close || idx >= max)
			continue;
		if (idx == 0) {
			out[0].name[0] = '\0';
			out[0].offset = out[0].size = 0;
		} else if (sscanf(close + 1, "%63s %63s %" SCNx64 " %" SCNx64 " %" SCNx64, name, type, &addr, &off,
				  &size) == 5) {
			snprintf(out[idx].name, sizeof out[idx].name, "%s", name);
			out[idx].offset = off;
			out[idx].size = size;
		} else {
			continue;
		}
		n = idx + 1 > n ? idx + 1 : n;
	}
	pclose(p);
	return n;
}

START_TEST(fixtures_match_readelf)
{
	static const char *const files[] = { "sm80_exe", "sm80_exe_stripped", "libtwo.so", "embedded.o", "sm80.cubin",
					     "sm90a.cubin", "sm100f.cubin" };
	static struct readelf_section want[128];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		uint64_t count, shoff;
		unsigned n = readelf_sections(files[i], &count, &shoff, want, 128);
		ck_assert_msg(n > 2 && n == count, "%s: readelf listed %u of %" PRIu64 " sections", files[i], n, count);
		struct kimg_span s = fixture_load(files[i]);
		struct kimg_elf e;
		struct kimg_error err = { 0, 0, "" };
		ck_assert_msg(kimg_elf_open(s, &e, &err) == 0, "%s: %s", files[i], err.what);
		ck_assert_uint_eq(e.shnum, count);
		ck_assert_uint_eq(e.shoff, shoff);
		for (unsigned k = 1; k < n; k++) {
			struct kimg_elf_shdr h = kimg_elf_shdr(&e, k);
			ck_assert_msg(strcmp(kimg_elf_section_name(&e, &h), want[k].name) == 0, "%s [%u]: %s, readelf %s",
				      files[i], k, kimg_elf_section_name(&e, &h), want[k].name);
			ck_assert_uint_eq(h.offset, want[k].offset);
			ck_assert_uint_eq(h.size, want[k].size);
		}
		/* every truncation of the header or the section table is an error, never a crash */
		for (uint64_t cut = 0; cut < s.size; cut += cut < 64 ? 1 : 997) {
			struct kimg_span part = kimg_span_make(s.data, cut);
			int rc = kimg_elf_open(part, &e, &err);
			if (cut < shoff + 64 * count)
				ck_assert_msg(rc == -KIMG_ETRUNC, "%s cut at %" PRIu64 ": %d", files[i], cut, rc);
		}
		fixture_free(s);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("elf");
	TCase *t = tcase_create("synthetic");
	tcase_add_test(t, header_fields_decoded);
	tcase_add_test(t, magic_and_foreign_files);
	tcase_add_test(t, open_reads_sections_by_index_and_name);
	tcase_add_test(t, open_rejects_bad_headers_exactly);
	tcase_add_test(t, open_rejects_truncated_tables);
	tcase_add_test(t, extended_numbering_and_overflowing_counts);
	tcase_add_test(t, table_bounds_cannot_overflow);
	tcase_add_test(t, shstrndx_out_of_range_or_unusable);
	tcase_add_test(t, name_offsets_past_the_string_table);
	tcase_add_test(t, section_and_program_headers_by_index);
	tcase_add_test(t, symbols_dynamic_entries_and_strings);
	suite_add_tcase(s, t);
	t = tcase_create("fixtures");
	tcase_add_test(t, fixtures_match_readelf);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
