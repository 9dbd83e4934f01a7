/* SPDX-License-Identifier: Apache-2.0 */
/* GPU product name -> compute capability, docs/rules.md §6 ([doc GPUS],
 * [doc LEGACY]). Names are matched after normalisation (gpus.h); aliases
 * cover the names the driver itself reports (Jetson: "Orin", "NVIDIA Tegra
 * X1"). */
#include <ctype.h>
#include <string.h>

#include "gpus.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct gpu_row {
	struct kimg_gpu gpu;
	const char *alias[4]; /* other spellings, NULL-padded */
};

#define G(n, s, fam) { { n, s, false, fam }, { NULL, NULL, NULL, NULL } }
#define GA(n, s, fam, a1) { { n, s, false, fam }, { a1, NULL, NULL, NULL } }
#define T(n, s, fam, a1, a2, a3) { { n, s, true, fam }, { a1, a2, a3, NULL } } /* Tegra */
#define T4(n, s, fam, a1, a2, a3, a4) { { n, s, true, fam }, { a1, a2, a3, a4 } }

static const struct gpu_row gpus[] = {
	/* 12.1 Blackwell: GB10 (DGX Spark) is integrated but not Tegra [§2.1, §6] */
	GA("GB10", 121, "Blackwell", "DGX Spark"), /* NVIDIA's CUDA GPUs page: "GB10 (DGX Spark)" */
	/* 12.0 Blackwell [§6] */
	GA("RTX PRO 6000 Blackwell", 120, "Blackwell", "RTX PRO 6000"),
	GA("RTX PRO 5000 Blackwell", 120, "Blackwell", "RTX PRO 5000"),
	GA("RTX PRO 4500 Blackwell", 120, "Blackwell", "RTX PRO 4500"),
	GA("RTX PRO 4000 Blackwell", 120, "Blackwell", "RTX PRO 4000"),
	GA("RTX PRO 2000 Blackwell", 120, "Blackwell", "RTX PRO 2000"),
	G("GeForce RTX 5090", 120, "Blackwell"),
	G("GeForce RTX 5080", 120, "Blackwell"),
	G("GeForce RTX 5070 Ti", 120, "Blackwell"),
	G("GeForce RTX 5070", 120, "Blackwell"),
	G("GeForce RTX 5060 Ti", 120, "Blackwell"),
	G("GeForce RTX 5060", 120, "Blackwell"),
	G("GeForce RTX 5050", 120, "Blackwell"),
	/* 11.0 Thor; 10.1 under CUDA 12.8-12.9 [§2.2, §6] */
	T4("Jetson AGX Thor", 110, "Blackwell", "Jetson T5000", "T5000", "Thor", "Jetson Thor"),
	T("Jetson T4000", 110, "Blackwell", "T4000", NULL, NULL),
	/* 10.3 Blackwell Ultra, 10.0 Blackwell [§6] */
	G("B300", 103, "Blackwell"),
	G("GB300", 103, "Blackwell"),
	G("B200", 100, "Blackwell"),
	G("GB200", 100, "Blackwell"),
	/* Not on NVIDIA's CUDA GPUs page: B100 is the same GB100 die as
	 * B200 (NVIDIA Blackwell architecture technical brief), so 10.0. */
	G("B100", 100, "Blackwell"),
	/* 9.0 Hopper [§6] */
	G("H100", 90, "Hopper"),
	G("H200", 90, "Hopper"),
	G("GH200", 90, "Hopper"),
	/* Export variants of the GH100 die (H100's), not on NVIDIA's CUDA GPUs
	 * page; nvidia-smi --query-gpu=compute_cap reports 9.0 for them in
	 * public bug reports (H20: flashinfer-ai/flashinfer#920, H800:
	 * deepseek-ai/DeepGEMM, whose kernels are sm_90a only, targets it). */
	G("H800", 90, "Hopper"),
	G("H20", 90, "Hopper"),
	/* 8.9 Ada [§6]; "RTX 6000 Ada" is not "Quadro RTX 6000" (7.5) */
	G("L4", 89, "Ada"),
	G("L40", 89, "Ada"),
	G("L40S", 89, "Ada"),
	/* AD102 die, as L40 (not on the CUDA GPUs page; export variant) */
	G("L20", 89, "Ada"),
	G("RTX 6000 Ada", 89, "Ada"),
	G("RTX 5000 Ada", 89, "Ada"),
	G("RTX 4500 Ada", 89, "Ada"),
	G("RTX 4000 Ada", 89, "Ada"),
	G("RTX 4000 SFF Ada", 89, "Ada"),
	G("RTX 2000 Ada", 89, "Ada"),
	G("GeForce RTX 4090", 89, "Ada"),
	G("GeForce RTX 4080", 89, "Ada"),
	G("GeForce RTX 4070 Ti", 89, "Ada"),
	G("GeForce RTX 4070", 89, "Ada"),
	G("GeForce RTX 4060 Ti", 89, "Ada"), /* 8.9, not 8.6 [§6 name traps] */
	G("GeForce RTX 4060", 89, "Ada"),
	G("GeForce RTX 4050", 89, "Ada"),
	/* 8.7 Ampere (Tegra); the driver names the device "Orin" */
	T("Jetson AGX Orin", 87, "Ampere", "Orin", NULL, NULL),
	T("Jetson Orin NX", 87, "Ampere", "Orin NX", NULL, NULL),
	T("Jetson Orin Nano", 87, "Ampere", "Orin Nano", NULL, NULL),
	/* 8.6 Ampere [§6] */
	G("A40", 86, "Ampere"),
	G("A10", 86, "Ampere"),
	G("A16", 86, "Ampere"),
	G("A2", 86, "Ampere"),
	GA("RTX A6000", 86, "Ampere", "A6000"), /* bug reports say "A6000" */
	G("RTX A5000", 86, "Ampere"),
	G("RTX A4000", 86, "Ampere"),
	G("RTX A3000", 86, "Ampere"),
	G("RTX A2000", 86, "Ampere"),
	G("GeForce RTX 3090 Ti", 86, "Ampere"),
	G("GeForce RTX 3090", 86, "Ampere"),
	G("GeForce RTX 3080 Ti", 86, "Ampere"),
	G("GeForce RTX 3080", 86, "Ampere"),
	G("GeForce RTX 3070 Ti", 86, "Ampere"),
	G("GeForce RTX 3070", 86, "Ampere"),
	G("GeForce RTX 3060 Ti", 86, "Ampere"),
	G("GeForce RTX 3060", 86, "Ampere"),
	G("GeForce RTX 3050 Ti", 86, "Ampere"),
	G("GeForce RTX 3050", 86, "Ampere"),
	/* 8.0 Ampere [§6] */
	G("A100", 80, "Ampere"),
	G("A30", 80, "Ampere"),
	/* GA100 die, as A100: the export variant (not on the CUDA GPUs page) */
	G("A800", 80, "Ampere"),
	/* 7.5 Turing [§6]; "Quadro RTX 6000" normalises to "rtx6000" */
	G("Tesla T4", 75, "Turing"),
	G("Quadro RTX 8000", 75, "Turing"),
	G("Quadro RTX 6000", 75, "Turing"),
	G("Quadro RTX 5000", 75, "Turing"),
	G("Quadro RTX 4000", 75, "Turing"),
	G("T1000", 75, "Turing"),
	G("T600", 75, "Turing"),
	G("T400", 75, "Turing"),
	G("TITAN RTX", 75, "Turing"),
	G("GeForce RTX 2080 Ti", 75, "Turing"),
	G("GeForce RTX 2080", 75, "Turing"),
	G("GeForce RTX 2070", 75, "Turing"),
	G("GeForce RTX 2060", 75, "Turing"),
	G("GeForce GTX 1660 Ti", 75, "Turing"),
	G("GeForce GTX 1660", 75, "Turing"),
	G("GeForce GTX 1650", 75, "Turing"),
	/* TU117 die, as GTX 1650 (laptop part, not on the CUDA GPUs page) */
	G("GeForce MX450", 75, "Turing"),
	/* 7.2 Volta (Tegra) */
	T("Jetson AGX Xavier", 72, "Volta", "Xavier", NULL, NULL),
	T("Jetson Xavier NX", 72, "Volta", "Xavier NX", NULL, NULL),
	/* 7.0 Volta [§6] */
	G("Tesla V100", 70, "Volta"),
	G("Quadro GV100", 70, "Volta"),
	G("TITAN V", 70, "Volta"),
	/* 6.2 Pascal (Tegra) */
	T("Jetson TX2", 62, "Pascal", NULL, NULL, NULL),
	/* 6.1 Pascal [§6]; "TITAN X (Pascal)" is not "GTX TITAN X" (5.2) */
	G("Tesla P40", 61, "Pascal"),
	G("Tesla P4", 61, "Pascal"),
	G("Quadro P6000", 61, "Pascal"),
	G("Quadro P5000", 61, "Pascal"),
	G("Quadro P4000", 61, "Pascal"),
	G("Quadro P2000", 61, "Pascal"),
	G("Quadro P1000", 61, "Pascal"),
	G("Quadro P620", 61, "Pascal"),
	G("Quadro P600", 61, "Pascal"),
	G("Quadro P400", 61, "Pascal"),
	G("TITAN Xp", 61, "Pascal"),
	G("TITAN X (Pascal)", 61, "Pascal"),
	G("GeForce GTX 1080 Ti", 61, "Pascal"),
	G("GeForce GTX 1080", 61, "Pascal"),
	G("GeForce GTX 1070 Ti", 61, "Pascal"),
	G("GeForce GTX 1070", 61, "Pascal"),
	G("GeForce GTX 1060", 61, "Pascal"),
	G("GeForce GTX 1050 Ti", 61, "Pascal"),
	G("GeForce GTX 1050", 61, "Pascal"),
	/* 6.0 Pascal [§6] */
	G("Tesla P100", 60, "Pascal"),
	G("Quadro GP100", 60, "Pascal"),
	/* 5.3 Maxwell (Tegra); the driver names the device "NVIDIA Tegra X1" */
	T("Jetson Nano", 53, "Maxwell", "Tegra X1", NULL, NULL),
	T("Jetson TX1", 53, "Maxwell", NULL, NULL, NULL),
	/* 5.2 Maxwell [§6] */
	G("Tesla M60", 52, "Maxwell"),
	G("Tesla M40", 52, "Maxwell"),
	G("Quadro M6000", 52, "Maxwell"),
	G("Quadro M5000", 52, "Maxwell"),
	G("Quadro M4000", 52, "Maxwell"),
	G("Quadro M2000", 52, "Maxwell"),
	G("GeForce GTX TITAN X", 52, "Maxwell"),
	G("GeForce GTX 980 Ti", 52, "Maxwell"),
	G("GeForce GTX 980", 52, "Maxwell"),
	G("GeForce GTX 970", 52, "Maxwell"),
	G("GeForce GTX 960", 52, "Maxwell"),
	G("GeForce GTX 950", 52, "Maxwell"),
	/* 5.0 Maxwell [§6]; the 9xxM mobile parts are 5.0, not 5.2 */
	G("Quadro K2200", 50, "Maxwell"),
	G("Quadro K1200", 50, "Maxwell"),
	G("Quadro K620", 50, "Maxwell"),
	G("GeForce GTX 750 Ti", 50, "Maxwell"),
	G("GeForce GTX 750", 50, "Maxwell"),
	G("GeForce GTX 960M", 50, "Maxwell"),
	G("GeForce GTX 950M", 50, "Maxwell"),
	G("GeForce 940M", 50, "Maxwell"),
};
#undef G
#undef GA
#undef T
#undef T4

/* Vendor and line words that do not identify a product; dropped as whole
 * words at the start, so "NVIDIA GeForce RTX 4090" and "RTX 4090" agree. */
static const char *const noise_words[] = { "nvidia", "geforce", "tesla", "quadro" };

enum { NAME_MAX_LEN = 128 };

/* Lower-case alphanumeric words separated by single spaces, noise words at
 * the start removed. Spaces are kept as boundaries for prefix matching and
 * skipped when comparing. Returns false when the name is too long. */
static bool normalize(const char *in, char out[NAME_MAX_LEN])
{
	size_t n = 0;
	bool pending_space = false;
	for (const char *p = in; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (!isalnum(c)) {
			pending_space = n > 0;
			continue;
		}
		if (pending_space) {
			if (n + 1 >= NAME_MAX_LEN)
				return false;
			out[n++] = ' ';
			pending_space = false;
		}
		if (n + 1 >= NAME_MAX_LEN)
			return false;
		out[n++] = (char)tolower(c);
	}
	out[n] = '\0';

	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < ARRAY_SIZE(noise_words); i++) {
			size_t len = strlen(noise_words[i]);
			if (strncmp(out, noise_words[i], len) == 0 && (out[len] == ' ' || out[len] == '\0')) {
				size_t skip = out[len] == ' ' ? len + 1 : len;
				memmove(out, out + skip, strlen(out + skip) + 1);
				again = true;
			}
		}
	}
	return true;
}

enum match { NO_MATCH = 0, PREFIX_MATCH, EXACT_MATCH };

/* Compare key and name, both normalised, ignoring spaces. A prefix match
 * counts only at a word or letter/digit boundary of the name, so "a10"
 * is not a prefix of "a100" and "t4" not of "t400", while "rtx 4060
 * laptop gpu" still finds "rtx 4060". */
static enum match match_key(const char *key, const char *name)
{
	const char *k = key, *s = name;
	char last = 0;
	if (!*key)
		return NO_MATCH;
	for (;;) {
		while (*k == ' ')
			k++;
		while (*s == ' ')
			s++;
		if (!*k)
			break;
		if (*k != *s)
			return NO_MATCH;
		last = *k++;
		s++;
	}
	if (!*s)
		return EXACT_MATCH;
	bool boundary = s[-1] == ' ' || isdigit((unsigned char)last) != isdigit((unsigned char)*s);
	return boundary ? PREFIX_MATCH : NO_MATCH;
}

const struct kimg_gpu *kimg_gpu_lookup(const char *name)
{
	char want[NAME_MAX_LEN], key[NAME_MAX_LEN];
	if (!name || !normalize(name, want) || !want[0])
		return NULL;

	const struct kimg_gpu *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < ARRAY_SIZE(gpus); i++) {
		const char *names[] = { gpus[i].gpu.name, gpus[i].alias[0], gpus[i].alias[1], gpus[i].alias[2],
					gpus[i].alias[3] };
		for (size_t j = 0; j < ARRAY_SIZE(names); j++) {
			if (!names[j] || !normalize(names[j], key))
				continue;
			enum match m = match_key(key, want);
			if (m == EXACT_MATCH)
				return &gpus[i].gpu;
			size_t len = strlen(key);
			if (m == PREFIX_MATCH && len > best_len) {
				best = &gpus[i].gpu;
				best_len = len;
			}
		}
	}
	return best;
}

const struct kimg_gpu *kimg_gpu_at(size_t index)
{
	return index < ARRAY_SIZE(gpus) ? &gpus[index].gpu : NULL;
}

/* Every compute capability NVIDIA has given a GPU or a compiler target:
 * the compute-capability tables of the CUDA C++ Programming Guide and the
 * CUDA GPUs / legacy GPUs pages (1.0-7.2), 8.8 and 10.1 as nvcc targets
 * only (10.1 is Thor under CUDA 12.8-12.9, 11.0 from 13.0). */
static const uint16_t known_ccs[] = {
	10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75,
	80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121,
};

bool kimg_cc_is_known(unsigned sm)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_ccs); i++)
		if (known_ccs[i] == sm)
			return true;
	return false;
}
