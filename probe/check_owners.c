/* SPDX-License-Identifier: Apache-2.0 */
/* The package that installed each checked file (extras.h), and the read
 * ahead of the owners index while the walk begins. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "glibc_pins.h"
#include "check_run.h"
#include "file.h"
#include "gate.h"
#include "image.h"
#include "thread.h"

/* The owners index reads package records lazily: one thread at a time. */
static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;

/* With worker threads, the owning-package index of the directories named
 * on the command line is read by a thread of its own while the GPUs are
 * asked and the tree is listed (the RECORDs of a Python environment name
 * some 70,000 files: a tenth of a second). Lookups wait for it on
 * owners_lock; what they find is the same. */
struct check_prewarm {
	struct probe_extras *x;
	char *const *paths;
	int n_paths;
	struct probe_thread thread;
};

static void *prewarm_owners(void *arg)
{
	struct check_prewarm *p = arg;
	pthread_mutex_lock(&owners_lock);
	for (int i = 0; i < p->n_paths; i++) {
		struct stat st;
		if (kimg_file_stat(p->paths[i], &st, true) == 0 && S_ISDIR(st.st_mode))
			probe_extras_prepare_owners(p->x, p->paths[i]);
	}
	pthread_mutex_unlock(&owners_lock);
	return NULL;
}

struct check_prewarm *check_owners_prewarm(struct probe_extras *x, char *const *paths, int n_paths)
{
	struct check_prewarm *p = malloc(sizeof *p);
	if (!p)
		return NULL;
	*p = (struct check_prewarm){ x, paths, n_paths, { 0 } };
	if (!probe_thread_create(&p->thread, prewarm_owners, p, PROBE_THREAD_INLINE_NEVER)) {
		free(p);
		return NULL; /* the lookups read what they need themselves */
	}
	return p;
}

void check_owners_prewarm_end(struct check_prewarm *p)
{
	if (!p)
		return;
	probe_thread_join(&p->thread);
	free(p);
}

const struct kimg_pkg *check_owner_of(struct probe_extras *x, const char *path)
{
	const struct kimg_pkg *image_pkg;
	if (probe_image_owner(path, &image_pkg))
		return image_pkg; /* a file of a container image: its own records only */
	probe_wait_lock(&owners_lock); /* the index may be being read */
	const struct kimg_pkg *pkg = probe_extras_owner(x, path);
	pthread_mutex_unlock(&owners_lock);
	return pkg;
}
