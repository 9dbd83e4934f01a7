/* SPDX-License-Identifier: Apache-2.0 */
/* The compatibility facts of docs/rules.md as const tables: the words a
 * verdict is made of (outcome, reason) and the facts that are public
 * (Tegra CCs, PTX ISA per driver, minimum drivers), which rules.h passes
 * on, then the accessors only rules.c, fix.c and the tests use. Below
 * rules.h: it includes nothing of the rules, so the tables and the rules
 * that apply them (rules.c) do not include each other. */
#ifndef KIMG_RULES_TABLES_H
#define KIMG_RULES_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "image.h"

enum kimg_outcome {
	KIMG_OUTCOME_SASS = 0,   /* runs as a cubin */
	KIMG_OUTCOME_PTX_JIT,    /* runs after the driver JIT-compiles PTX */
	KIMG_OUTCOME_CANNOT_RUN,
	KIMG_OUTCOME_JIT_LINK,   /* runs after the driver JIT-links relocatable PTX
	                            (-rdc files; only kimg_rules_judge_file gives it) */
	KIMG_OUTCOME_COUNT
};

/* Why an image (or a module) fits or does not. Rule keys in brackets refer
 * to docs/rules.md. */
enum kimg_reason {
	KIMG_REASON_FITS = 0,            /* usable */
	KIMG_REASON_DIFFERENT_MAJOR,     /* cubin of another major [S1] */
	KIMG_REASON_MINOR_TOO_HIGH,      /* cubin for a later minor of the same major [S1] */
	KIMG_REASON_TEGRA_MISMATCH,      /* cubin across the Tegra / desktop boundary [S2] */
	KIMG_REASON_ARCH_SPECIFIC,       /* 'a' code for another CC [S3, P2] */
	KIMG_REASON_FAMILY,              /* 'f' code outside its family [S4, P2] */
	KIMG_REASON_PTX_NEWER_THAN_DEVICE, /* PTX target above the device [P3] */
	KIMG_REASON_PTX_ISA_TOO_NEW,     /* PTX .version above the driver's JIT [P4, P5] */
	KIMG_REASON_JIT_DISABLED,        /* CUDA_DISABLE_PTX_JIT [P6] */
	KIMG_REASON_SASS_IGNORED,        /* CUDA_FORCE_PTX_JIT ignores cubins [P6] */
	KIMG_REASON_NOT_LOADABLE,        /* LTO-IR / unknown entries are never loaded */
	KIMG_REASON_SHADOWED,            /* usable, but the driver picks another image */
	KIMG_REASON_NO_IMAGE,            /* module-level: no image at all */
	KIMG_REASON_COUNT
};

/* ---- public facts (rules.h passes them on) ---- */

/* Human text for a reason, e.g. "cubin for another major version". */
const char *kimg_reason_text(enum kimg_reason reason);
/* Stable identifier for JSON, e.g. "different_major". */
const char *kimg_reason_id(enum kimg_reason reason);
const char *kimg_outcome_id(enum kimg_outcome outcome); /* "sass", "ptx_jit", "cannot_run" */

/* Tegra (integrated) compute capabilities: 5.3 6.2 7.2 8.7 10.1 11.0. */
bool kimg_sm_is_tegra(unsigned sm);

/* Newest PTX ISA a driver accepts, from its CUDA version (13000 -> 900);
 * 0 when the version is unknown, older or newer than the table. */
uint16_t kimg_driver_max_ptx_isa(int driver_version);
/* The CUDA versions kimg_driver_max_ptx_isa knows (7000 and the newest
 * row): outside them a driver's PTX limit is unknown. */
int kimg_ptx_isa_table_oldest_cuda(void);
int kimg_ptx_isa_table_newest_cuda(void);
/* CUDA version that introduced a PTX ISA (900 -> 13000), 0 if unknown. */
int kimg_ptx_isa_cuda_version(uint16_t isa);
/* Minimum Linux driver for a CUDA version ("580.65.06"), NULL if unknown. */
const char *kimg_cuda_min_driver(int cuda_version);
/* Row index of that table, oldest first: its CUDA version and GA Linux
 * driver (NULL where none is public); false past the end. */
bool kimg_cuda_driver_row(size_t index, int *cuda_version, const char **driver);

/* ---- for rules.c, fix.c and the tests ---- */

/* ---- per-image decision order (docs/rules.md §1, §2, §3) ---- */

/* What a decision row may look at: the image, the device and the values
 * derived once per check so the predicates stay one-liners. */
struct kimg_rule_ctx {
	const struct kimg_image *img;
	const struct kimg_device *dev;
	unsigned img_sm;    /* image SM after renumbering (sm_101 -> 110 on an 11.0 device) */
	unsigned dev_sm;
	bool dev_tegra;     /* from the CC (kimg_sm_is_tegra), see rules.c for why */
	uint16_t max_isa;   /* kimg_driver_max_ptx_isa(); 0 = no limit known */
};

struct kimg_rule_row {
	const char *key;                 /* "S1", "P4", ... (docs/rules.md) */
	bool (*applies)(const struct kimg_rule_ctx *ctx);
	enum kimg_outcome outcome;
	enum kimg_reason reason;
};

/* Rows in decision order; the first row whose predicate holds decides.
 * The last rows always match, so every image gets exactly one row. */
size_t kimg_rule_row_count(void);
const struct kimg_rule_row *kimg_rule_row_at(size_t index);

/* Index of the deciding row for one image (tests use it to prove every row
 * is reachable). */
size_t kimg_rules_decide(const struct kimg_image *img, const struct kimg_device *dev);

/* ---- facts the predicates and the fix generator read ---- */

/* SM an image is judged as on this device: the Thor renumbering
 * (sm_101* became sm_110* with PTX ISA 9.0, docs/rules.md §2.1/§2.2)
 * lets sm_101, sm_101a and sm_101f code run on an 11.0 device. */
unsigned kimg_sm_alias(unsigned img_sm, unsigned dev_sm);

/* True when an `f` target (sm, e.g. 100) covers the device SM (§2.2). */
bool kimg_family_covers(unsigned family_sm, unsigned dev_sm);

/* Rank of a module-level failure reason: higher is more telling
 * (docs/rules.md §1: 223 over 222 over 209). */
int kimg_reason_rank(enum kimg_reason reason);

/* Expected CUresult for an image that cannot run for this reason. */
int kimg_reason_error(enum kimg_reason reason);

/* §7: which toolkits can emit a target offline. */
struct kimg_toolkit_target {
	uint16_t sm;
	uint8_t variant;          /* enum kimg_arch_variant */
	int first_toolkit;        /* CUDA version that added it: 11080 */
	int last_toolkit;         /* last CUDA version that emits it; 0 = current */
	const char *source;
};
/* Row for (sm, variant), NULL when no toolkit has that target (sm_86a). */
const struct kimg_toolkit_target *kimg_toolkit_target_find(unsigned sm, enum kimg_arch_variant variant);

#endif
