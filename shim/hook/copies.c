/* SPDX-License-Identifier: Apache-2.0 */
/* Two copies of libkimg.so in one process (an image that preloads one, a
 * launcher that adds another; /etc/ld.so.preload plus kimg-run): only the
 * first copy in load order acts, every later one passes each call straight
 * through, and no copy takes another's wrapper for the real function.
 *
 * How copies find each other without an exported symbol (the version
 * script exports only the hooks) and without the environment (inherited
 * across exec, where the pid stays the same, and writable by the program):
 * each copy carries a private ELF note, "kimg" type KIMG_NOTE_TYPE, in its
 * PT_NOTE segment. dl_iterate_phdr lists loaded objects in load order
 * (program, preloads, needed libraries, dlopen'ed ones), so every copy,
 * whenever it asks, sees the same first carrier of the note: that one owns
 * the process. The answer needs no shared state and no lock, survives
 * fork, and is right for copies that are dlopen'ed later (they come after
 * every earlier copy). A copy of an older kimg without the note cannot
 * take part; that is the one case left. */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "copies.h"

#define KIMG_NOTE_TYPE 0x4b494d47u /* "KIMG" */

struct kimg_note {
	uint32_t namesz, descsz, type;
	char name[8];  /* "kimg" padded to 4-byte alignment */
	uint32_t desc; /* format of this note: 1 */
};

/* In .note.kimg: the assembler makes a .note* section SHT_NOTE and the
 * linker puts it in the PT_NOTE segment next to the build id. */
__attribute__((section(".note.kimg"), used, aligned(4))) static const struct kimg_note kimg_note = {
	5, 4, KIMG_NOTE_TYPE, "kimg", 1
};

/* Is [start, start+len) inside a readable PT_LOAD of the object? A PT_NOTE
 * outside one is not mapped and must not be read. */
static bool mapped(const struct dl_phdr_info *info, uintptr_t start, uintptr_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (start >= lo && len <= ph->p_memsz && start - lo <= ph->p_memsz - len)
			return true;
	}
	return false;
}

/* The address of the object's kimg note, or NULL. */
static const void *find_note(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		uintptr_t at = info->dlpi_addr + ph->p_vaddr, left = ph->p_memsz;
		if (!mapped(info, at, left))
			continue;
		uintptr_t align = ph->p_align == 8 ? 8 : 4;
		while (left >= 12) {
			const uint32_t *h = (const uint32_t *)at;
			uintptr_t name = (h[0] + align - 1) & ~(align - 1);
			uintptr_t desc = (h[1] + align - 1) & ~(align - 1);
			if (name > left - 12 || desc > left - 12 - name)
				break;
			if (h[2] == KIMG_NOTE_TYPE && h[0] == 5 && memcmp((const char *)(h + 3), "kimg", 5) == 0)
				return h;
			at += 12 + name + desc;
			left -= 12 + name + desc;
		}
	}
	return NULL;
}

bool kimg_copies_is_kimg(const struct dl_phdr_info *info)
{
	return find_note(info) != NULL;
}

struct first_copy {
	const void *note;
	const char *name;
};

static int find_first(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct first_copy *f = ctx;
	(void)size;
	f->note = find_note(info);
	f->name = info->dlpi_name;
	return f->note != NULL; /* stop at the first copy */
}

bool kimg_copies_this_one_acts(char *first, size_t size)
{
	struct first_copy f = { NULL, NULL };
	dl_iterate_phdr(find_first, &f);
	/* no note found at all cannot happen (this copy has one); act then */
	if (!f.note || f.note == &kimg_note)
		return true;
	if (first && size)
		snprintf(first, size, "%s", f.name && f.name[0] ? f.name : "?");
	return false;
}

struct address_owner {
	uintptr_t address;
	int found; /* 0 not found, 1 a copy of libkimg, 2 another object */
};

static int find_owner(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct address_owner *o = ctx;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && o->address >= lo && o->address - lo < ph->p_memsz) {
			o->found = kimg_copies_is_kimg(info) ? 1 : 2;
			return 1;
		}
	}
	return 0;
}

bool kimg_copies_address_is_kimg(const void *address)
{
	struct address_owner o = { (uintptr_t)address, 0 };
	if (address)
		dl_iterate_phdr(find_owner, &o);
	return o.found == 1;
}
