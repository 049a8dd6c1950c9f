/* The operation queue from C: dependency graphs (chain, diamond, across queues
 * and loops), the limit of unfinished operations, cancellation before and
 * after the start, refused cycles and double adds, finishes from many threads,
 * waiting for all, and who owns what. */
#include "harness.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* ── a pool of threads that finish operations ── */

struct pool {
    struct harness_pool threads;
    atomic_int *executing;      /* decremented before each finish */
    atomic_int finish_failures;
    atomic_int double_ok;       /* a second finish that did not return E_STATE */
};

static void finish_operation(void *item, void *context) {
    struct pool *pool = context;
    outlive_operation *operation = item;
    if (pool->executing) atomic_fetch_sub(pool->executing, 1);
    if (outlive_operation_finish(operation) != OUTLIVE_OK) atomic_fetch_add(&pool->finish_failures, 1);
    if (outlive_operation_finish(operation) != OUTLIVE_E_STATE) atomic_fetch_add(&pool->double_ok, 1);
    outlive_operation_free(operation);  /* the reference the run took for this thread */
}

static void pool_start(struct pool *pool, atomic_int *executing) {
    atomic_init(&pool->finish_failures, 0);
    atomic_init(&pool->double_ok, 0);
    pool->executing = executing;
    harness_pool_start(&pool->threads, finish_operation, pool);
}

/* Hands a (retained) operation to a worker thread, which finishes it. */
static void pool_push(struct pool *pool, outlive_operation *operation) {
    harness_pool_push(&pool->threads, outlive_operation_retain(operation));
}

static void pool_stop(struct pool *pool) { harness_pool_stop(&pool->threads); }

/* ── a journal of starts and completions ── */

struct journal {
    struct pool *pool;          /* NULL: operations stay executing until the test finishes them */
    atomic_int started;
    atomic_int completed;
    atomic_int cancelled_completions;
    atomic_int executing;
    atomic_int max_executing;
    atomic_int released;
    atomic_int drained;
    int order[64];              /* ids in start order */
    int completion_order[64];
    outlive_operation *running[64];
    int hold_first;             /* the first hold_first started are handed to the pool together */
};

struct step {
    struct journal *journal;
    int id;
    int dependencies_finished_at_start;  /* all of its dependencies were FINISHED when it ran */
    int dependency_cancelled_at_start;   /* one of its dependencies was cancelled */
};

static void step_run(outlive_operation *operation, void *context) {
    struct step *step = context;
    struct journal *journal = step->journal;
    int executing = atomic_fetch_add(&journal->executing, 1) + 1;
    int max = atomic_load(&journal->max_executing);
    while (executing > max && !atomic_compare_exchange_weak(&journal->max_executing, &max, executing)) {}
    step->dependencies_finished_at_start = 1;
    for (size_t i = 0; i < outlive_operation_dependency_count(operation); i++) {
        outlive_operation *dependency = outlive_operation_dependency(operation, i);
        if (outlive_operation_get_state(dependency) != OUTLIVE_OPERATION_FINISHED) step->dependencies_finished_at_start = 0;
        if (outlive_operation_is_cancelled(dependency)) step->dependency_cancelled_at_start = 1;
    }
    int n = atomic_fetch_add(&journal->started, 1);
    if (n < 64) { journal->order[n] = step->id; journal->running[n] = operation; }
    if (!journal->pool) return;
    if (n + 1 < journal->hold_first) return;       /* held: all of them execute at once */
    if (n + 1 == journal->hold_first) {
        for (int i = 0; i < n; i++) pool_push(journal->pool, journal->running[i]);
    }
    pool_push(journal->pool, operation);
}

static void step_completion(outlive_operation *operation, bool cancelled, void *context) {
    (void)operation;
    struct step *step = context;
    struct journal *journal = step->journal;
    int n = atomic_fetch_add(&journal->completed, 1);
    if (n < 64) journal->completion_order[n] = step->id;
    if (cancelled) atomic_fetch_add(&journal->cancelled_completions, 1);
}

static void step_release(void *context) {
    struct step *step = context;
    atomic_fetch_add(&step->journal->released, 1);
}

static void on_drained(void *context) {
    struct journal *journal = context;
    atomic_fetch_add(&journal->drained, 1);
}

/* A new operation for step, with its completion. NULL on failure. */
static outlive_operation *make_step(struct step *step) {
    outlive_operation *operation = NULL;
    if (outlive_operation_new(step_run, step, step_release, &operation) != OUTLIVE_OK) return NULL;
    if (outlive_operation_set_completion(operation, step_completion, step, NULL) != OUTLIVE_OK) return NULL;
    return operation;
}

static int position(const int *order, int count, int id) {
    for (int i = 0; i < count; i++) if (order[i] == id) return i;
    return -1;
}

/* ── dependency graphs ── */

static void test_chain_runs_in_dependency_order_whatever_the_add_order(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, OUTLIVE_OPERATIONS_UNLIMITED, &queue));
    struct pool pool;
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    pool_start(&pool, &journal.executing);
    journal.pool = &pool;
    struct step steps[5];
    outlive_operation *ops[5];
    for (int i = 0; i < 5; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
        if (i > 0) CHECK_OK(outlive_operation_add_dependency(ops[i], ops[i - 1]));
    }
    for (int i = 4; i >= 0; i--) CHECK_OK(outlive_operations_add(queue, ops[i]));
    CHECK_OK(outlive_operations_set_drained(queue, on_drained, &journal, NULL));
    CHECK(harness_dispatch_until(loop, &journal.drained, 1, 10));
    pool_stop(&pool);
    CHECK(atomic_load(&journal.started) == 5);
    for (int i = 0; i < 5; i++) {
        CHECK(journal.order[i] == i);
        CHECK(journal.completion_order[i] == i);
        CHECK(steps[i].dependencies_finished_at_start);
        CHECK(outlive_operation_get_state(ops[i]) == OUTLIVE_OPERATION_FINISHED);
        CHECK(outlive_operation_dependency_count(ops[i]) == 0);  /* released when it finished */
    }
    CHECK(atomic_load(&pool.finish_failures) == 0 && atomic_load(&pool.double_ok) == 0);
    CHECK(outlive_operations_unfinished(queue) == 0);
    for (int i = 0; i < 5; i++) outlive_operation_free(ops[i]);
    CHECK(atomic_load(&journal.released) == 5);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_diamond_joins_after_both_branches_which_run_together(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, OUTLIVE_OPERATIONS_UNLIMITED, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);  /* no pool: the test finishes each one */
    struct step steps[4];
    outlive_operation *ops[4];
    for (int i = 0; i < 4; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
    }
    /* 0 → {1, 2} → 3 */
    CHECK_OK(outlive_operation_add_dependency(ops[1], ops[0]));
    CHECK_OK(outlive_operation_add_dependency(ops[2], ops[0]));
    CHECK_OK(outlive_operation_add_dependency(ops[3], ops[1]));
    CHECK_OK(outlive_operation_add_dependency(ops[3], ops[2]));
    CHECK_OK(outlive_operation_add_dependency(ops[3], ops[2]));  /* again: same as once */
    CHECK(outlive_operation_dependency_count(ops[3]) == 2);
    for (int i = 3; i >= 0; i--) CHECK_OK(outlive_operations_add(queue, ops[i]));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    harness_dispatch_for(loop, 0.05);
    CHECK(atomic_load(&journal.started) == 1 && journal.order[0] == 0);
    CHECK_OK(outlive_operation_finish(ops[0]));
    CHECK(harness_dispatch_until(loop, &journal.started, 3, 10));
    CHECK(outlive_operation_get_state(ops[1]) == OUTLIVE_OPERATION_EXECUTING);
    CHECK(outlive_operation_get_state(ops[2]) == OUTLIVE_OPERATION_EXECUTING);
    CHECK(outlive_operation_get_state(ops[3]) == OUTLIVE_OPERATION_WAITING);
    CHECK_OK(outlive_operation_finish(ops[2]));
    harness_dispatch_for(loop, 0.05);
    CHECK(outlive_operation_get_state(ops[3]) == OUTLIVE_OPERATION_WAITING);
    CHECK_OK(outlive_operation_finish(ops[1]));
    CHECK(harness_dispatch_until(loop, &journal.started, 4, 10));
    CHECK(journal.order[3] == 3 && steps[3].dependencies_finished_at_start);
    CHECK_OK(outlive_operation_finish(ops[3]));
    CHECK(harness_dispatch_until(loop, &journal.completed, 4, 10));
    CHECK(atomic_load(&journal.cancelled_completions) == 0);
    for (int i = 0; i < 4; i++) outlive_operation_free(ops[i]);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
    CHECK(atomic_load(&journal.released) == 4);
}

struct loop_thread { outlive_loop *loop; atomic_int stop; };

static void *dispatch_main(void *argument) {
    struct loop_thread *thread = argument;
    while (!atomic_load(&thread->stop)) outlive_loop_dispatch(thread->loop, 20);
    return NULL;
}

static void test_dependency_across_queues_on_different_loops(void) {
    outlive_loop *loop_a = NULL, *loop_b = NULL;
    CHECK_OK(outlive_loop_new(&loop_a));
    CHECK_OK(outlive_loop_new(&loop_b));
    outlive_operations *queue_a = NULL, *queue_b = NULL;
    CHECK_OK(outlive_operations_new(loop_a, 1, &queue_a));
    CHECK_OK(outlive_operations_new(loop_b, 1, &queue_b));
    struct pool pool;
    struct journal journal_a, journal_b;
    memset(&journal_a, 0, sizeof journal_a);
    memset(&journal_b, 0, sizeof journal_b);
    pool_start(&pool, NULL);
    journal_a.pool = journal_b.pool = &pool;
    /* a0 → b0 → a1 → b1: alternating queues, each on its own loop and thread. */
    struct step steps[4] = { { &journal_a, 0, 0, 0 }, { &journal_b, 1, 0, 0 }, { &journal_a, 2, 0, 0 }, { &journal_b, 3, 0, 0 } };
    outlive_operation *ops[4];
    for (int i = 0; i < 4; i++) {
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
        if (i > 0) CHECK_OK(outlive_operation_add_dependency(ops[i], ops[i - 1]));
    }
    CHECK_OK(outlive_operations_add(queue_b, ops[3]));
    CHECK_OK(outlive_operations_add(queue_a, ops[2]));
    CHECK_OK(outlive_operations_add(queue_b, ops[1]));
    CHECK_OK(outlive_operations_add(queue_a, ops[0]));
    struct loop_thread thread_b = { loop_b, 0 };
    pthread_t b;
    pthread_create(&b, NULL, dispatch_main, &thread_b);
    double deadline = harness_now() + 10;
    while (outlive_operation_get_state(ops[3]) != OUTLIVE_OPERATION_FINISHED && harness_now() < deadline)
        outlive_loop_dispatch(loop_a, 20);
    CHECK(harness_dispatch_until(loop_a, &journal_a.completed, 2, 10));
    atomic_store(&thread_b.stop, 1);
    pthread_join(b, NULL);
    pool_stop(&pool);
    CHECK(outlive_operation_get_state(ops[3]) == OUTLIVE_OPERATION_FINISHED);
    for (int i = 0; i < 4; i++) CHECK(steps[i].dependencies_finished_at_start);
    CHECK(journal_a.order[0] == 0 && journal_a.order[1] == 2);
    CHECK(journal_b.order[0] == 1 && journal_b.order[1] == 3);
    for (int i = 0; i < 4; i++) outlive_operation_free(ops[i]);
    outlive_operations_free(queue_a);
    outlive_operations_free(queue_b);
    outlive_loop_free(loop_a);
    outlive_loop_free(loop_b);
}

/* ── the limit ── */

static void test_at_most_max_unfinished_operations_execute_at_once(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 3, &queue));
    struct pool pool;
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    pool_start(&pool, &journal.executing);
    journal.pool = &pool;
    journal.hold_first = 3;  /* so that the limit is reached for sure, not by timing */
    struct step steps[40];
    for (int i = 0; i < 40; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        outlive_operation *operation = make_step(&steps[i]);
        CHECK(operation);
        CHECK_OK(outlive_operations_add(queue, operation));
        outlive_operation_free(operation);  /* the queue holds its own reference */
    }
    CHECK_OK(outlive_operations_set_drained(queue, on_drained, &journal, NULL));
    CHECK(harness_dispatch_until(loop, &journal.drained, 1, 20));
    pool_stop(&pool);
    CHECK(atomic_load(&journal.completed) == 40);
    CHECK_MSG(atomic_load(&journal.max_executing) == 3, "max executing %d", atomic_load(&journal.max_executing));
    for (int i = 0; i < 40; i++) CHECK(position(journal.order, 40, i) == i);  /* FIFO among ready ones */
    CHECK(atomic_load(&journal.released) == 40);  /* dropped by the queue after completion */
    CHECK(atomic_load(&pool.finish_failures) == 0 && atomic_load(&pool.double_ok) == 0);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_max_unfinished_zero_means_no_limit(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[50];
    outlive_operation *ops[50];
    for (int i = 0; i < 50; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
        CHECK_OK(outlive_operations_add(queue, ops[i]));
    }
    CHECK(harness_dispatch_until(loop, &journal.started, 50, 10));
    CHECK(outlive_operations_unfinished(queue) == 50);
    for (int i = 0; i < 50; i++) CHECK_OK(outlive_operation_finish(ops[i]));
    CHECK(outlive_operations_unfinished(queue) == 0);
    CHECK(harness_dispatch_until(loop, &journal.completed, 50, 10));
    for (int i = 0; i < 50; i++) outlive_operation_free(ops[i]);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

/* ── many threads ── */

static void test_thousand_operations_finished_from_8_threads_all_complete_once(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 16, &queue));
    struct pool pool;
    static struct journal journal;
    memset(&journal, 0, sizeof journal);
    pool_start(&pool, &journal.executing);
    journal.pool = &pool;
    static struct step steps[1000];
    outlive_operation *previous = NULL;
    for (int i = 0; i < 1000; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        outlive_operation *operation = make_step(&steps[i]);
        CHECK(operation);
        /* Every tenth depends on the one before: chains through the parallel ones. */
        if (previous && i % 10 == 0) CHECK_OK(outlive_operation_add_dependency(operation, previous));
        CHECK_OK(outlive_operations_add(queue, operation));
        outlive_operation_free(previous);
        previous = operation;
    }
    outlive_operation_free(previous);
    CHECK_OK(outlive_operations_set_drained(queue, on_drained, &journal, NULL));
    CHECK(harness_dispatch_until(loop, &journal.drained, 1, 60));
    pool_stop(&pool);
    CHECK(atomic_load(&journal.started) == 1000);
    CHECK(atomic_load(&journal.completed) == 1000);
    CHECK(atomic_load(&journal.max_executing) <= 16);
    for (int i = 0; i < 1000; i++) CHECK(steps[i].dependencies_finished_at_start);
    CHECK(atomic_load(&pool.finish_failures) == 0);
    CHECK(atomic_load(&pool.double_ok) == 0);
    CHECK(atomic_load(&journal.released) == 1000);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

/* ── cancellation ── */

static void test_cancelled_before_start_never_runs_and_counts_as_finished_for_dependents(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[3];
    outlive_operation *ops[3];
    for (int i = 0; i < 3; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
        if (i > 0) CHECK_OK(outlive_operation_add_dependency(ops[i], ops[i - 1]));
        CHECK_OK(outlive_operations_add(queue, ops[i]));
    }
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    /* 1 waits for 0: cancelling it does not finish it before 0 did. */
    CHECK_OK(outlive_operation_cancel(ops[1]));
    CHECK_OK(outlive_operation_cancel(ops[1]));
    CHECK(outlive_operation_is_cancelled(ops[1]));
    CHECK(outlive_operation_get_state(ops[1]) == OUTLIVE_OPERATION_WAITING);
    CHECK_STATUS(outlive_operation_finish(ops[1]), OUTLIVE_E_STATE);
    CHECK_OK(outlive_operation_finish(ops[0]));
    CHECK(outlive_operation_get_state(ops[1]) == OUTLIVE_OPERATION_FINISHED);
    CHECK(harness_dispatch_until(loop, &journal.started, 2, 10));
    CHECK(journal.order[1] == 2);  /* 1 never ran */
    CHECK(steps[2].dependency_cancelled_at_start && steps[2].dependencies_finished_at_start);
    CHECK_OK(outlive_operation_finish(ops[2]));
    CHECK(harness_dispatch_until(loop, &journal.completed, 3, 10));
    CHECK(journal.completion_order[0] == 0 && journal.completion_order[1] == 1 && journal.completion_order[2] == 2);
    CHECK(atomic_load(&journal.cancelled_completions) == 1);
    for (int i = 0; i < 3; i++) outlive_operation_free(ops[i]);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_operation_cancelled_before_it_is_added_completes_without_running(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 1, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[2] = { { &journal, 0, 0, 0 }, { &journal, 1, 0, 0 } };
    outlive_operation *cancelled = make_step(&steps[0]);
    outlive_operation *after = make_step(&steps[1]);
    CHECK(cancelled && after);
    CHECK_OK(outlive_operation_add_dependency(after, cancelled));
    CHECK_OK(outlive_operation_cancel(cancelled));
    CHECK(outlive_operation_get_state(cancelled) == OUTLIVE_OPERATION_NEW);
    CHECK_OK(outlive_operations_add(queue, cancelled));
    CHECK(outlive_operation_get_state(cancelled) == OUTLIVE_OPERATION_FINISHED);
    CHECK_OK(outlive_operations_add(queue, after));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    CHECK(journal.order[0] == 1 && steps[1].dependency_cancelled_at_start);
    CHECK_OK(outlive_operation_finish(after));
    CHECK(harness_dispatch_until(loop, &journal.completed, 2, 10));
    CHECK(atomic_load(&journal.cancelled_completions) == 1);
    outlive_operation_free(cancelled);
    outlive_operation_free(after);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_running_operation_sees_cancellation_and_still_must_finish(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[2] = { { &journal, 0, 0, 0 }, { &journal, 1, 0, 0 } };
    outlive_operation *running = make_step(&steps[0]);
    outlive_operation *dependent = make_step(&steps[1]);
    CHECK(running && dependent);
    CHECK_OK(outlive_operation_add_dependency(dependent, running));
    CHECK_OK(outlive_operations_add(queue, running));
    CHECK_OK(outlive_operations_add(queue, dependent));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    CHECK_OK(outlive_operation_cancel(running));
    CHECK(outlive_operation_is_cancelled(running));
    CHECK(outlive_operation_get_state(running) == OUTLIVE_OPERATION_EXECUTING);
    harness_dispatch_for(loop, 0.05);
    CHECK(atomic_load(&journal.started) == 1 && atomic_load(&journal.completed) == 0);
    CHECK_OK(outlive_operation_finish(running));
    CHECK(harness_dispatch_until(loop, &journal.started, 2, 10));
    CHECK(steps[1].dependency_cancelled_at_start);
    CHECK_OK(outlive_operation_finish(dependent));
    CHECK(harness_dispatch_until(loop, &journal.completed, 2, 10));
    CHECK(atomic_load(&journal.cancelled_completions) == 1);
    /* A finished operation cannot be cancelled; it stays not cancelled. */
    CHECK_STATUS(outlive_operation_cancel(dependent), OUTLIVE_E_STATE);
    CHECK(!outlive_operation_is_cancelled(dependent));
    outlive_operation_free(running);
    outlive_operation_free(dependent);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_cancel_all_cancels_waiting_ones_and_marks_running_ones(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 1, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[4];
    outlive_operation *ops[4];
    for (int i = 0; i < 4; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
        CHECK_OK(outlive_operations_add(queue, ops[i]));
    }
    CHECK_OK(outlive_operations_set_drained(queue, on_drained, &journal, NULL));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    CHECK_OK(outlive_operations_cancel_all(queue));
    CHECK(outlive_operation_get_state(ops[0]) == OUTLIVE_OPERATION_EXECUTING);
    for (int i = 1; i < 4; i++) CHECK(outlive_operation_get_state(ops[i]) == OUTLIVE_OPERATION_FINISHED);
    CHECK(outlive_operations_unfinished(queue) == 1);
    CHECK_OK(outlive_operation_finish(ops[0]));
    CHECK(harness_dispatch_until(loop, &journal.drained, 1, 10));
    CHECK(atomic_load(&journal.started) == 1);
    CHECK(atomic_load(&journal.completed) == 4 && atomic_load(&journal.cancelled_completions) == 4);
    for (int i = 0; i < 4; i++) outlive_operation_free(ops[i]);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

/* Cancels race with starts and finishes: every operation ends exactly once,
 * either run and finished, or never run and completed as cancelled. */
#define RACE 2000
struct race {
    outlive_operation *ops[RACE];
    atomic_int runs[RACE];
    atomic_int completions[RACE];
    atomic_int completed_without_run_not_cancelled;
    atomic_int completed;
    struct pool *pool;
};
struct race_item { struct race *race; int index; };

static void race_run(outlive_operation *operation, void *context) {
    struct race_item *item = context;
    atomic_fetch_add(&item->race->runs[item->index], 1);
    pool_push(item->race->pool, operation);
}

static void race_completion(outlive_operation *operation, bool cancelled, void *context) {
    (void)operation;
    struct race_item *item = context;
    atomic_fetch_add(&item->race->completions[item->index], 1);
    if (!cancelled && atomic_load(&item->race->runs[item->index]) == 0)
        atomic_fetch_add(&item->race->completed_without_run_not_cancelled, 1);
    atomic_fetch_add(&item->race->completed, 1);
}

static void *race_cancel_main(void *argument) {
    struct race *race = argument;
    unsigned seed = (unsigned)(uintptr_t)pthread_self();
    for (int i = 0; i < RACE / 2; i++) {
        int index = (int)(rand_r(&seed) % RACE);
        outlive_status status = outlive_operation_cancel(race->ops[index]);
        if (status != OUTLIVE_OK && status != OUTLIVE_E_STATE) abort();
    }
    return NULL;
}

static void test_cancels_racing_with_starts_and_finishes_end_each_operation_exactly_once(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 4, &queue));
    struct pool pool;
    pool_start(&pool, NULL);
    static struct race race;
    memset(&race, 0, sizeof race);
    race.pool = &pool;
    static struct race_item items[RACE];
    for (int i = 0; i < RACE; i++) {
        items[i] = (struct race_item){ &race, i };
        CHECK_OK(outlive_operation_new(race_run, &items[i], NULL, &race.ops[i]));
        CHECK_OK(outlive_operation_set_completion(race.ops[i], race_completion, &items[i], NULL));
        if (i >= 3 && i % 3 == 0) CHECK_OK(outlive_operation_add_dependency(race.ops[i], race.ops[i - 3]));
        CHECK_OK(outlive_operations_add(queue, race.ops[i]));
    }
    pthread_t cancellers[4];
    for (int i = 0; i < 4; i++) pthread_create(&cancellers[i], NULL, race_cancel_main, &race);
    int all = harness_dispatch_until(loop, &race.completed, RACE, 60);
    for (int i = 0; i < 4; i++) pthread_join(cancellers[i], NULL);
    harness_dispatch_for(loop, 0.05);
    pool_stop(&pool);
    CHECK_MSG(all, "only %d of %d completed", atomic_load(&race.completed), RACE);
    CHECK(atomic_load(&race.completed) == RACE);
    int cancelled_unrun = 0;
    for (int i = 0; i < RACE; i++) {
        CHECK(atomic_load(&race.runs[i]) <= 1);
        CHECK(atomic_load(&race.completions[i]) == 1);
        CHECK(outlive_operation_get_state(race.ops[i]) == OUTLIVE_OPERATION_FINISHED);
        if (atomic_load(&race.runs[i]) == 0) {
            CHECK(outlive_operation_is_cancelled(race.ops[i]));
            cancelled_unrun++;
        }
    }
    CHECK(atomic_load(&race.completed_without_run_not_cancelled) == 0);
    CHECK(atomic_load(&pool.finish_failures) == 0 && atomic_load(&pool.double_ok) == 0);
    CHECK(outlive_operations_unfinished(queue) == 0);
    for (int i = 0; i < RACE; i++) outlive_operation_free(race.ops[i]);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
    fprintf(stderr, "  (%d of %d cancelled before they ran)\n", cancelled_unrun, RACE);
}

/* ── refused changes ── */

static void test_cycles_are_refused_and_change_nothing(void) {
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[3];
    outlive_operation *ops[3];
    for (int i = 0; i < 3; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
    }
    CHECK_STATUS(outlive_operation_add_dependency(ops[0], ops[0]), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_operation_add_dependency(ops[1], ops[0]));
    CHECK_STATUS(outlive_operation_add_dependency(ops[0], ops[1]), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "cycle") != NULL);
    CHECK_OK(outlive_operation_add_dependency(ops[2], ops[1]));
    CHECK_STATUS(outlive_operation_add_dependency(ops[0], ops[2]), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(outlive_operation_dependency_count(ops[0]) == 0);
    CHECK(outlive_operation_dependency_count(ops[1]) == 1);
    CHECK(outlive_operation_dependency_count(ops[2]) == 1);
    CHECK(outlive_operation_dependency(ops[2], 0) == ops[1]);
    CHECK(outlive_operation_dependency(ops[2], 1) == NULL);
    for (int i = 0; i < 3; i++) outlive_operation_free(ops[i]);
    CHECK(atomic_load(&journal.released) == 3);
}

static void test_adding_twice_or_to_two_queues_is_refused(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *first = NULL, *second = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &first));
    CHECK_OK(outlive_operations_new(loop, 0, &second));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[2] = { { &journal, 0, 0, 0 }, { &journal, 1, 0, 0 } };
    outlive_operation *operation = make_step(&steps[0]);
    outlive_operation *other = make_step(&steps[1]);
    CHECK(operation && other);
    CHECK_STATUS(outlive_operation_finish(operation), OUTLIVE_E_STATE);  /* NEW: not started */
    CHECK_OK(outlive_operations_add(first, operation));
    CHECK_STATUS(outlive_operations_add(first, operation), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_operations_add(second, operation), OUTLIVE_E_STATE);
    CHECK(strstr(outlive_last_error(), "queue") != NULL);
    CHECK_STATUS(outlive_operation_add_dependency(operation, other), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_operation_set_completion(operation, NULL, NULL, NULL), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_operation_finish(operation), OUTLIVE_E_STATE);  /* WAITING: not started */
    CHECK(outlive_operations_unfinished(first) == 1 && outlive_operations_unfinished(second) == 0);
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    harness_dispatch_for(loop, 0.05);
    CHECK(atomic_load(&journal.started) == 1);
    CHECK_OK(outlive_operation_finish(operation));
    CHECK_STATUS(outlive_operation_finish(operation), OUTLIVE_E_STATE);
    CHECK(harness_dispatch_until(loop, &journal.completed, 1, 10));
    outlive_operation_free(operation);
    outlive_operation_free(other);
    outlive_operations_free(first);
    outlive_operations_free(second);
    outlive_loop_free(loop);
    CHECK(atomic_load(&journal.released) == 2);
}

/* ── freeing and ownership ── */

static void test_freeing_queue_cancels_waiting_operations_and_unblocks_other_queues(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *doomed = NULL, *other = NULL;
    CHECK_OK(outlive_operations_new(loop, 1, &doomed));
    CHECK_OK(outlive_operations_new(loop, 0, &other));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step steps[4];
    outlive_operation *ops[4];
    for (int i = 0; i < 4; i++) {
        steps[i] = (struct step){ &journal, i, 0, 0 };
        ops[i] = make_step(&steps[i]);
        CHECK(ops[i]);
    }
    /* doomed: 0 (runs), 1 and 2 (wait for room); other: 3 depends on 2. */
    CHECK_OK(outlive_operation_add_dependency(ops[3], ops[2]));
    for (int i = 0; i < 3; i++) CHECK_OK(outlive_operations_add(doomed, ops[i]));
    CHECK_OK(outlive_operations_add(other, ops[3]));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    outlive_operations_free(doomed);
    CHECK(outlive_operation_is_cancelled(ops[1]) && outlive_operation_is_cancelled(ops[2]));
    CHECK(outlive_operation_get_state(ops[2]) == OUTLIVE_OPERATION_FINISHED);
    CHECK(harness_dispatch_until(loop, &journal.started, 2, 10));
    CHECK(journal.order[1] == 3 && steps[3].dependency_cancelled_at_start);
    /* The running one of the freed queue can still be finished. */
    CHECK(outlive_operation_get_state(ops[0]) == OUTLIVE_OPERATION_EXECUTING);
    CHECK_OK(outlive_operation_finish(ops[0]));
    CHECK_OK(outlive_operation_finish(ops[3]));
    CHECK(harness_dispatch_until(loop, &journal.completed, 1, 10));
    harness_dispatch_for(loop, 0.05);
    CHECK(atomic_load(&journal.completed) == 1);  /* only 3: the freed queue calls nothing */
    for (int i = 0; i < 4; i++) outlive_operation_free(ops[i]);
    CHECK(atomic_load(&journal.released) == 4);
    outlive_operations_free(other);
    outlive_loop_free(loop);
}

static void test_queue_keeps_operation_alive_until_completion_after_caller_frees_it(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step step = { &journal, 0, 0, 0 };
    outlive_operation *operation = make_step(&step);
    CHECK(operation);
    CHECK(outlive_operation_retain(operation) == operation);
    outlive_operation_free(operation);
    CHECK_OK(outlive_operations_add(queue, operation));
    outlive_operation_free(operation);  /* our reference: the queue's keeps it */
    CHECK(atomic_load(&journal.released) == 0);
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    CHECK_OK(outlive_operation_finish(journal.running[0]));
    CHECK(harness_dispatch_until(loop, &journal.completed, 1, 10));
    CHECK(atomic_load(&journal.released) == 1);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_completion_context_is_released_once_after_the_completion(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step step = { &journal, 0, 0, 0 };
    outlive_operation *operation = NULL;
    CHECK_OK(outlive_operation_new(step_run, &step, NULL, &operation));
    CHECK_OK(outlive_operation_set_completion(operation, step_completion, &step, step_release));
    CHECK_OK(outlive_operation_set_completion(operation, step_completion, &step, step_release));
    CHECK(atomic_load(&journal.released) == 1);  /* the replaced one */
    CHECK_OK(outlive_operations_add(queue, operation));
    CHECK(harness_dispatch_until(loop, &journal.started, 1, 10));
    CHECK_OK(outlive_operation_finish(operation));
    CHECK(harness_dispatch_until(loop, &journal.completed, 1, 10));
    CHECK(atomic_load(&journal.released) == 2);
    outlive_operation_free(operation);
    CHECK(atomic_load(&journal.released) == 2);
    CHECK(atomic_load(&journal.completed) == 1);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

static void test_bad_arguments_get_precise_status(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_STATUS(outlive_operations_new(NULL, 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operations_new(loop, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operations_new(loop, SIZE_MAX, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(queue == NULL);
    outlive_operation *operation = NULL;
    CHECK_STATUS(outlive_operation_new(NULL, NULL, NULL, &operation), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operation_new(step_run, NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(operation == NULL);
    CHECK_STATUS(outlive_operation_add_dependency(NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operations_add(NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operation_finish(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operation_cancel(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operation_set_completion(NULL, NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operations_cancel_all(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_operations_set_drained(NULL, on_drained, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(!outlive_operation_is_cancelled(NULL));
    CHECK(outlive_operation_get_state(NULL) == OUTLIVE_OPERATION_NEW);
    CHECK(outlive_operation_dependency_count(NULL) == 0);
    CHECK(outlive_operation_dependency(NULL, 0) == NULL);
    CHECK(outlive_operation_retain(NULL) == NULL);
    CHECK(outlive_operations_unfinished(NULL) == 0);
    outlive_operation_free(NULL);
    outlive_operations_free(NULL);
    CHECK_OK(outlive_operations_new(loop, 0, &queue));
    struct journal journal;
    memset(&journal, 0, sizeof journal);
    struct step step = { &journal, 0, 0, 0 };
    CHECK_OK(outlive_operation_new(step_run, &step, step_release, &operation));
    CHECK_STATUS(outlive_operation_add_dependency(operation, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "dependency") != NULL);
    CHECK_STATUS(outlive_operations_add(queue, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_operation_free(operation);
    CHECK(atomic_load(&journal.released) == 1);
    outlive_operations_free(queue);
    outlive_loop_free(loop);
}

HARNESS_MAIN(
    T(test_chain_runs_in_dependency_order_whatever_the_add_order),
    T(test_diamond_joins_after_both_branches_which_run_together),
    T(test_dependency_across_queues_on_different_loops),
    T(test_at_most_max_unfinished_operations_execute_at_once),
    T(test_max_unfinished_zero_means_no_limit),
    T(test_thousand_operations_finished_from_8_threads_all_complete_once),
    T(test_cancelled_before_start_never_runs_and_counts_as_finished_for_dependents),
    T(test_operation_cancelled_before_it_is_added_completes_without_running),
    T(test_running_operation_sees_cancellation_and_still_must_finish),
    T(test_cancel_all_cancels_waiting_ones_and_marks_running_ones),
    T(test_cancels_racing_with_starts_and_finishes_end_each_operation_exactly_once),
    T(test_cycles_are_refused_and_change_nothing),
    T(test_adding_twice_or_to_two_queues_is_refused),
    T(test_freeing_queue_cancels_waiting_operations_and_unblocks_other_queues),
    T(test_queue_keeps_operation_alive_until_completion_after_caller_frees_it),
    T(test_completion_context_is_released_once_after_the_completion),
    T(test_bad_arguments_get_precise_status),
)
