/* Compatibility rules: can this image, or this module, run on this device?
 * The rules are data tables (rules_tables.c) applied in the driver's order
 * (docs/rules.md section 1); every verdict names the
 * table row that decided it. */
#ifndef KIMG_RULES_H
#define KIMG_RULES_H

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

struct kimg_image_verdict {
	enum kimg_outcome outcome;
	enum kimg_reason reason;
	const char *rule;        /* table row key that decided: "S1", "S2", "P4", ... */
};

struct kimg_module_verdict {
	enum kimg_outcome outcome;
	enum kimg_reason reason;  /* FITS, or the most telling reason none fits */
	int selected;             /* index of the image the driver would use, -1 if none */
	int expected_error;       /* CUresult the driver would give: 0, 209, 222, 223 ... */
	const char *rule;
};

/* One image on one device. */
void kimg_rules_check_image(const struct kimg_image *img, const struct kimg_device *dev,
			    struct kimg_image_verdict *out);

/* A module's images on one device: per-image verdicts into per[] (n items,
 * may be NULL) and the driver's selection (compatible cubin first, nearest
 * arch; then PTX) into *out. Pure; no allocation. */
void kimg_rules_check_module(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
			     struct kimg_image_verdict *per, struct kimg_module_verdict *out);

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

#endif
