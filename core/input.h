/* SPDX-License-Identifier: Apache-2.0 */
/* Finding device code in an input: host ELF files (executables, shared
 * objects, relocatable objects), static archives, and raw cubin, PTX and
 * fatbin files. Each place holding device code is a "module": one fatbin
 * container, or one raw cubin / PTX image. */
#ifndef KIMG_INPUT_H
#define KIMG_INPUT_H

#include "archive.h"
#include "error.h"
#include "span.h"

enum kimg_input_kind {
	KIMG_INPUT_UNKNOWN = 0,
	KIMG_INPUT_HOST_ELF, /* host ELF: EXEC, DYN or REL, any machine but EM_CUDA */
	KIMG_INPUT_ARCHIVE,  /* "!<arch>\n" static archive */
	KIMG_INPUT_CUBIN,    /* ELF with e_machine EM_CUDA (190) */
	KIMG_INPUT_FATBIN,   /* starts with the container magic */
	KIMG_INPUT_WRAPPER,  /* registration wrapper (in-memory only) */
	KIMG_INPUT_PTX,      /* text with a .version or .target directive */
	KIMG_INPUT_ZIP,      /* "PK\3\4": wheels and zips, read by the front end */
	KIMG_INPUT_KIND_COUNT
};

enum kimg_module_origin {
	KIMG_ORIGIN_NV_FATBIN = 0, /* section .nv_fatbin */
	KIMG_ORIGIN_RELFATBIN,     /* section __nv_relfatbin (-rdc) */
	KIMG_ORIGIN_WRAPPER,       /* reached through a .nvFatBinSegment wrapper */
	KIMG_ORIGIN_SCAN,          /* container magic found outside known sections */
	KIMG_ORIGIN_RAW,           /* the whole input is the module */
	KIMG_ORIGIN_COUNT
};

struct kimg_module_ref {
	enum kimg_input_kind kind;     /* KIMG_INPUT_FATBIN, _CUBIN or _PTX */
	enum kimg_module_origin origin;
	struct kimg_span bytes;        /* the module's bytes inside the input */
	uint64_t offset;               /* of bytes within the outermost input */
	const char *section;           /* section name, or NULL */
	const char *member;            /* archive member name (NUL-terminated copy
	                                  valid during the callback), or NULL */
};

/* Called once per module in input order; a non-zero return stops the walk
 * and is returned by kimg_input_for_each_module. */
typedef int (*kimg_module_fn)(void *ctx, const struct kimg_module_ref *mod);

enum kimg_input_kind kimg_input_classify(struct kimg_span in);
/* The same from a file's first bytes, for a walk that reads only a head
 * before deciding whether to open a file at all. whole: head is the whole
 * file. Returns true with *kind set when the rest of the file cannot
 * change kimg_input_classify's answer; false (*kind UNKNOWN) when more is
 * needed: head shorter than KIMG_INPUT_HEAD_MIN, or text whose leading
 * blank space and comments run past it (up to 64 KiB decide). */
#define KIMG_INPUT_HEAD_MIN 512u
#define KIMG_INPUT_HEAD_MAX (64u * 1024u)
bool kimg_input_classify_head(struct kimg_span head, bool whole, enum kimg_input_kind *kind);
/* Stable lower-case names, as kimg-probe writes them (docs/json-probe.md):
 * "elf", "archive", "fatbin", ...; "nv_fatbin", "relfatbin", "wrapper",
 * "scan", "raw". Out-of-range values give "unknown". */
const char *kimg_input_kind_name(enum kimg_input_kind kind);
const char *kimg_module_origin_name(enum kimg_module_origin origin);

/* Flags for kimg_input_for_each_module_ex. */
enum kimg_input_flag {
	/* Also search loaded data sections (.rodata, .lrodata, vendor sections
	 * such as libcublasLt's .cask_resource) for containers stored as plain
	 * data, loaded at run time through cuModuleLoadData (docs/format.md
	 * §1, §9). They yield KIMG_ORIGIN_SCAN modules. Off by default: cuobjdump
	 * --list-elf/--list-ptx does not list them, and it reads every byte of
	 * those sections (156 MB in libcublasLt.so.13). */
	KIMG_INPUT_SCAN_DATA = 1u << 0,
};
#define KIMG_INPUT_FLAGS_ALL ((unsigned)KIMG_INPUT_SCAN_DATA)

/* Byte ranges of an input known to hold only zeros: the holes of a
 * sparse file, as the front end learns them (lseek SEEK_HOLE). The walk
 * jumps over them wherever it would step through zeros (padding between
 * containers, empty wrapper slots, the --deep search) instead of reading
 * them, so a file with a 1 TiB hole costs what its data costs. Offsets in
 * the outermost input, sorted, not overlapping; wrong ranges make wrong
 * results, never out-of-bounds reads. */
struct kimg_zero_range {
	uint64_t start, end; /* [start, end) */
};
struct kimg_zero_ranges {
	const struct kimg_zero_range *r;
	size_t n;
};

/* Walk every module in `in`. Host ELF: containers in .nv_fatbin and
 * __nv_relfatbin (many back to back, zero padding between), and those only
 * reachable through .nvFatBinSegment wrappers; archives: each member in
 * turn. Malformed parts are reported through *err after the walk has
 * yielded every module it could: returns the number of modules, or a
 * negative error when the input itself is unusable. A partial result with
 * err->code != 0 means "these modules, then a problem". The same modules
 * as cuobjdump --list-elf/--list-ptx: no data-section search (flags 0). */
int kimg_input_for_each_module(struct kimg_span in, kimg_module_fn fn, void *ctx, struct kimg_error *err);

/* kimg_input_for_each_module with `flags` (enum kimg_input_flag, or-ed).
 * Unknown flag bits: -EINVAL (recorded in *err), nothing walked. Pure and
 * reentrant: no allocation, no state outside the call. */
int kimg_input_for_each_module_ex(struct kimg_span in, unsigned flags, kimg_module_fn fn, void *ctx,
				  struct kimg_error *err);

/* GNU thin archives: kimg_input_is_thin_archive and
 * kimg_thin_archive_for_each_member, in archive.h (included above). */

/* kimg_input_for_each_module_ex over an input whose `zeros` (may be NULL)
 * are known: the same modules, without reading those bytes. */
int kimg_input_for_each_module_zeros(struct kimg_span in, unsigned flags, const struct kimg_zero_ranges *zeros,
				     kimg_module_fn fn, void *ctx, struct kimg_error *err);

#endif
