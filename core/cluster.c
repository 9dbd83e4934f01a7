/* SPDX-License-Identifier: Apache-2.0 */
/* What the three cluster readers share (cluster.h): product names through
 * the GPU-name table, driver releases to CUDA versions, copying names. */
#include "cluster.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpus.h"
#include "rules_tables.h"

void kimg_cluster_copy(char *dst, size_t size, const char *src, size_t len)
{
	if (size == 0)
		return;
	size_t n = len < size - 1 ? len : size - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c; /* a name cannot move the cursor */
	}
	dst[n] = '\0';
}

/* Suffixes a product label carries that are no part of the GPU's name:
 * GFD's MIG single strategy ("-MIG-1g.5gb", k8s-device-plugin
 * docs/gpu-feature-discovery), the device plugin's time-slicing rename
 * ("-SHARED"). */
static size_t cut_suffixes(const char *p, size_t len, char *mig, size_t mig_size)
{
	if (len >= 7 && strncasecmp(p + len - 7, "-SHARED", 7) == 0)
		len -= 7;
	for (size_t i = 0; i + 5 <= len; i++) {
		if ((p[i] == '-' || p[i] == ' ') && strncasecmp(p + i + 1, "MIG", 3) == 0 &&
		    (p[i + 4] == '-' || p[i + 4] == ' ')) {
			kimg_cluster_copy(mig, mig_size, p + i + 5, len - i - 5);
			return i;
		}
	}
	return len;
}

const struct kimg_gpu *kimg_name_cache_lookup(struct kimg_name_cache *cache, const char *name)
{
	if (!cache)
		return kimg_gpu_lookup(name);
	for (unsigned i = 0; i < cache->n; i++)
		if (strcmp(cache->rows[i].name, name) == 0)
			return cache->rows[i].gpu;
	const struct kimg_gpu *g = kimg_gpu_lookup(name);
	if (strlen(name) < sizeof cache->rows[0].name) {
		unsigned slot = cache->n < KIMG_NAME_CACHE_ROWS ? cache->n++ : cache->next++ % KIMG_NAME_CACHE_ROWS;
		snprintf(cache->rows[slot].name, sizeof cache->rows[slot].name, "%s", name);
		cache->rows[slot].gpu = g;
	}
	return g;
}

bool kimg_cluster_gpu_set_product(struct kimg_cluster_gpu *g, const char *product, size_t len)
{
	return kimg_cluster_gpu_set_product_cached(g, product, len, NULL);
}

bool kimg_cluster_gpu_set_product_cached(struct kimg_cluster_gpu *g, const char *product, size_t len,
					 struct kimg_name_cache *cache)
{
	char name[96];
	kimg_cluster_copy(g->product, sizeof g->product, product, len);
	size_t keep = cut_suffixes(g->product, strlen(g->product), g->mig, sizeof g->mig);
	kimg_cluster_copy(name, sizeof name, g->product, keep);
	const struct kimg_gpu *t = kimg_name_cache_lookup(cache, name);
	if (!t)
		return false;
	g->sm = t->sm;
	g->tegra = t->tegra;
	snprintf(g->model, sizeof g->model, "%s", t->name);
	return true;
}

/* "535.104.05" against "535.54.03": numeric, field by field. */
static int compare_release(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = 0, y = 0;
		while (*a >= '0' && *a <= '9')
			x = x * 10 + (unsigned long)(*a++ - '0');
		while (*b >= '0' && *b <= '9')
			y = y * 10 + (unsigned long)(*b++ - '0');
		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if ((*a && (*a < '0' || *a > '9')) || (*b && (*b < '0' || *b > '9')))
			break;
	}
	return 0;
}

int kimg_driver_release_cuda_version(const char *release)
{
	unsigned major, minor;
	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2 || major == 0)
		return 0;
	for (const char *p = release; *p; p++)
		if (!(*p >= '0' && *p <= '9') && *p != '.')
			return 0;
	/* Rows without a public GA driver (12.7, reported by R565) are
	 * skipped: such a driver reads as the CUDA before, whose PTX ISA it
	 * surely accepts. */
	int best = 0, cuda;
	const char *driver;
	for (size_t i = 0; kimg_cuda_driver_row(i, &cuda, &driver); i++)
		if (driver && compare_release(release, driver) >= 0)
			best = cuda;
	return best;
}
