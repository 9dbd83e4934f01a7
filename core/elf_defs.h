/* Every ELF64 constant kimg reads, in one place: the subset of the ELF
 * specification (and of NVIDIA's CUDA ELF extensions, docs/format.md §10)
 * that the host-ELF walk (elf_host.c, input_elf.c, elf_symbols.c,
 * cuda_libs.c), the cubin reader (cubin.c) and the extent code (extent.c,
 * input.c) use. KIMG_-prefixed so that no file clashes with the system's
 * <elf.h>, and not named elf.h: with -Icore that would shadow <elf.h> for
 * the system headers too (<link.h> includes it). */
#ifndef KIMG_ELF_DEFS_H
#define KIMG_ELF_DEFS_H

/* sizes of the ELF64 structures */
#define KIMG_ELF_EHDR_SIZE 64u
#define KIMG_ELF_SHDR_SIZE 64u
#define KIMG_ELF_PHDR_SIZE 56u
#define KIMG_ELF_SYM_SIZE 24u
#define KIMG_ELF_PN_XNUM 0xffff     /* e_phnum escape: the count is in section 0 */

/* e_ident, e_type, e_machine */
#define KIMG_ELFCLASS64 2
#define KIMG_ELFDATA2LSB 1
#define KIMG_ET_REL 1
#define KIMG_ET_EXEC 2
#define KIMG_EM_CUDA 190u

/* section indices, types and flags */
#define KIMG_SHN_UNDEF 0u
#define KIMG_SHN_XINDEX 0xffffu
#define KIMG_SHT_NULL 0u
#define KIMG_SHT_PROGBITS 1u
#define KIMG_SHT_SYMTAB 2u
#define KIMG_SHT_STRTAB 3u
#define KIMG_SHT_DYNAMIC 6u
#define KIMG_SHT_NOBITS 8u
#define KIMG_SHT_DYNSYM 11u
#define KIMG_SHT_GNU_VERDEF 0x6ffffffdu
#define KIMG_SHF_ALLOC 0x2u
#define KIMG_SHF_EXECINSTR 0x4u

/* symbols */
#define KIMG_STT_FUNC 2u
#define KIMG_STT_GNU_IFUNC 10u
#define KIMG_STB_LOCAL 0u
#define KIMG_STB_GLOBAL 1u
#define KIMG_STB_WEAK 2u

/* dynamic section tags */
#define KIMG_DT_NULL 0
#define KIMG_DT_SONAME 14

/* CUDA's ELF extensions (docs/format.md §10): the two ABI generations of
 * e_ident[EI_OSABI] / [EI_ABIVERSION], the "a" (accelerator) flag of ABI
 * V1, and the kernel-entry mark in st_other */
#define KIMG_ELFOSABI_CUDA_V1 0x33
#define KIMG_ELFOSABI_CUDA_V2 0x41
#define KIMG_ELFABIVERSION_CUDA_V1 7
#define KIMG_ELFABIVERSION_CUDA_V2 8
#define KIMG_EF_CUDA_ACCELERATORS_V1 0x800
#define KIMG_STO_CUDA_ENTRY 0x10

#endif
