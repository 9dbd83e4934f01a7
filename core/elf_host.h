/* Host ELF64 section headers, shared by the readers of host files:
 * input_elf.c (device code inside executables and libraries) and
 * elf_symbols.c (function names for stack frames). Internal: hidden like
 * everything not marked for export.
 *
 * kimg_host_elf_open validates, in order (docs/design.md §5): the ELF header, the
 * section header table (extended numbering, docs/format.md §9), the
 * section-name table and every section's name offset. After it succeeds
 * the accessors below never read outside the table. */
#ifndef KIMG_ELF_HOST_H
#define KIMG_ELF_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "elf_defs.h"
#include "error.h"
#include "span.h"


struct kimg_elf_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t entsize;
};

struct kimg_host_elf {
	struct kimg_span in;
	uint64_t shoff, shnum;  /* shnum 0: the file has no section headers */
	struct kimg_span names; /* section-name table, ends in NUL */
};

/* An ELF file this tool cannot read: 32-bit or big-endian (x86 objects
 * valgrind ships, other machines' files). Walks of directories, wheels
 * and archives skip them as they skip other non-device files; named on
 * the command line they are an error (kimg_host_elf_open says which). */
bool kimg_elf_is_foreign(struct kimg_span in);

/* Open `in` (whose ELF magic the caller has seen): 0, or -KIMG_ETRUNC,
 * -KIMG_EFORMAT, -KIMG_ENOTSUP (32-bit, big-endian) with err naming the
 * field; offsets in err are relative to `in`. */
int kimg_host_elf_open(struct kimg_span in, struct kimg_host_elf *e, struct kimg_error *err);

/* Section header i < e->shnum (inline: input_elf.c calls it per wrapper). */
static inline struct kimg_elf_shdr kimg_host_elf_shdr(const struct kimg_host_elf *e, uint64_t i)
{
	struct kimg_elf_shdr h = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t at = e->shoff + i * KIMG_ELF_SHDR_SIZE;
	kimg_span_u32(&e->in, at + 0x00, &h.name);
	kimg_span_u32(&e->in, at + 0x04, &h.type);
	kimg_span_u64(&e->in, at + 0x08, &h.flags);
	kimg_span_u64(&e->in, at + 0x10, &h.addr);
	kimg_span_u64(&e->in, at + 0x18, &h.offset);
	kimg_span_u64(&e->in, at + 0x20, &h.size);
	kimg_span_u32(&e->in, at + 0x28, &h.link);
	kimg_span_u32(&e->in, at + 0x2C, &h.info);
	kimg_span_u64(&e->in, at + 0x38, &h.entsize);
	return h;
}

/* Names were checked to start inside the table, which ends in NUL. */
static inline const char *kimg_host_elf_name(const struct kimg_host_elf *e, const struct kimg_elf_shdr *h)
{
	return (const char *)e->names.data + h->name;
}

/* The section occupies bytes of the file, all inside it. */
static inline bool kimg_host_elf_has_data(const struct kimg_host_elf *e, const struct kimg_elf_shdr *h)
{
	return h->type != KIMG_SHT_NOBITS && kimg_span_has(&e->in, h->offset, h->size);
}

#endif
