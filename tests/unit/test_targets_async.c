/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/targets_async.c, check's --sm lists parsed on a
 * thread of their own: which lists need it (native named as a whole
 * item), and the query finishing before or after the walk's first job
 * asks. probe_parse_targets is a stand-in here (the real one asks the
 * driver): it blocks until the case lets it answer, so each order of
 * events is made, not hoped for. A lost callback (the hang of issue 23:
 * native.sh waited for ever) fails here within seconds. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "testutil.h"
#include "probe.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool may_answer;
static int answer_n;
static _Atomic int parse_calls;
static struct probe_target answer_targets[2];

/* the stand-in: waits for the case, then answers answer_n targets */
int probe_parse_targets(char *const *lists, int n_lists, int driver_version, struct probe_target **targets)
{
	(void)lists;
	(void)n_lists;
	(void)driver_version;
	atomic_fetch_add(&parse_calls, 1);
	pthread_mutex_lock(&gate_lock);
	while (!may_answer)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	*targets = answer_n > 0 ? malloc(sizeof answer_targets) : NULL;
	if (*targets)
		memcpy(*targets, answer_targets, sizeof answer_targets);
	return answer_n;
}

static void answer(int n)
{
	pthread_mutex_lock(&gate_lock);
	answer_n = n;
	may_answer = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

static void setup(void)
{
	may_answer = false;
	answer_n = 0;
	atomic_store(&parse_calls, 0);
	memset(answer_targets, 0, sizeof answer_targets);
	answer_targets[0].dev.cc.sm = 90;
	answer_targets[1].dev.cc.sm = 80;
}

static _Atomic int called;
static void on_done(void *arg)
{
	atomic_fetch_add(&called, 1);
	*(int *)arg = 1;
}

static bool wait_called(int want, unsigned ms)
{
	for (unsigned i = 0; i < ms && atomic_load(&called) < want; i++) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	return atomic_load(&called) >= want;
}

START_TEST(needed_only_for_native)
{
	char *yes[][1] = { { "native" }, { "8.0,native" }, { "native,9.0" } };
	char *no[][1] = { { "8.0" }, { "nativex" }, { "xnative" }, { "9.0,natives" }, { "" } };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_msg(probe_targets_async_needed(yes[i], 1), "%s", yes[i][0]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert_msg(!probe_targets_async_needed(no[i], 1), "%s", no[i][0]);
	char *two[] = { "8.0", "native" };
	ck_assert(probe_targets_async_needed(two, 2));
	char *null_list[] = { NULL };
	ck_assert(!probe_targets_async_needed(null_list, 1));
}
END_TEST

/* The query ends after the first job asked: the callback comes from the
 * query's thread, once, and wait returns its targets. */
START_TEST(query_after_first_job)
{
	setup();
	atomic_store(&called, 0);
	char *lists[] = { "native" };
	struct probe_targets_async *a = probe_targets_async_start(lists, 1, 0);
	ck_assert_ptr_nonnull(a);
	int flag = 0;
	probe_targets_async_on_done(a, on_done, &flag);
	ck_assert_int_eq(atomic_load(&called), 0); /* not yet known */
	ck_assert(!probe_targets_async_failed(a));
	answer(2);
	ck_assert_msg(wait_called(1, 5000), "the callback never came");
	ck_assert_int_eq(flag, 1);
	struct probe_target *t = NULL;
	ck_assert_int_eq(probe_targets_async_wait(a, &t), 2);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t[0].dev.cc.sm, 90);
	ck_assert_uint_eq(t[1].dev.cc.sm, 80);
	ck_assert(!probe_targets_async_failed(a));
	struct probe_target *t2 = NULL;
	ck_assert_int_eq(probe_targets_async_end(a, &t2), 2);
	ck_assert_ptr_eq(t2, t);
	ck_assert_int_eq(atomic_load(&called), 1);
	ck_assert_int_eq(atomic_load(&parse_calls), 1);
	free(t);
}
END_TEST

/* The query ended before the first job asked: the callback is called at
 * once, on the asking thread. */
START_TEST(query_before_first_job)
{
	setup();
	atomic_store(&called, 0);
	char *lists[] = { "native" };
	answer(1);
	struct probe_targets_async *a = probe_targets_async_start(lists, 1, 0);
	ck_assert_ptr_nonnull(a);
	struct probe_target *t = NULL;
	ck_assert_int_eq(probe_targets_async_wait(a, &t), 1);
	int flag = 0;
	probe_targets_async_on_done(a, on_done, &flag);
	ck_assert_int_eq(atomic_load(&called), 1);
	ck_assert_int_eq(flag, 1);
	struct probe_target *t2 = NULL;
	ck_assert_int_eq(probe_targets_async_end(a, &t2), 1);
	ck_assert_int_eq(atomic_load(&called), 1);
	free(t2);
}
END_TEST

/* A query that fails (no GPU): -1 from wait and end, failed() true, and
 * the callback still comes, so nobody waits for ever. */
START_TEST(query_fails)
{
	setup();
	atomic_store(&called, 0);
	char *lists[] = { "native" };
	struct probe_targets_async *a = probe_targets_async_start(lists, 1, 0);
	ck_assert_ptr_nonnull(a);
	int flag = 0;
	probe_targets_async_on_done(a, on_done, &flag);
	answer(-1);
	ck_assert_msg(wait_called(1, 5000), "the callback never came for a failed query");
	struct probe_target *t = (struct probe_target *)1;
	ck_assert_int_eq(probe_targets_async_wait(a, &t), -1);
	ck_assert_ptr_null(t);
	ck_assert(probe_targets_async_failed(a));
	ck_assert_int_eq(probe_targets_async_end(a, &t), -1);
	ck_assert_ptr_null(t);
}
END_TEST

static Suite *targets_async_suite(void)
{
	Suite *s = suite_create("targets_async");
	TCase *tc = tcase_create("async");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, needed_only_for_native);
	tcase_add_test(tc, query_after_first_job);
	tcase_add_test(tc, query_before_first_job);
	tcase_add_test(tc, query_fails);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(targets_async_suite());
}
