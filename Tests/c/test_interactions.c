/* The interaction queue from C: interactions start strictly one at a time, in
 * order, on the loop's thread, whichever threads finish them; suspension;
 * finishing twice; freeing with interactions waiting; the stall report. */
#include "harness.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* ── a pool of threads that finish tokens ── */

struct pool {
    struct harness_pool threads;
    atomic_int *running;        /* cleared before each finish */
    atomic_int finish_failures; /* a finish that did not return OK */
    atomic_int double_ok;       /* a second finish that did not return E_STATE */
};

static void finish_token(void *item, void *context) {
    struct pool *pool = context;
    outlive_interaction *token = item;
    atomic_store(pool->running, 0);
    if (outlive_interaction_finish(token) != OUTLIVE_OK) atomic_fetch_add(&pool->finish_failures, 1);
    /* Every thread also finishes its token again, racing with the others'
     * finishes and the next start: always OUTLIVE_E_STATE. */
    if (outlive_interaction_finish(token) != OUTLIVE_E_STATE) atomic_fetch_add(&pool->double_ok, 1);
}

static void pool_start(struct pool *pool, atomic_int *running) {
    atomic_init(&pool->finish_failures, 0);
    atomic_init(&pool->double_ok, 0);
    pool->running = running;
    harness_pool_start(&pool->threads, finish_token, pool);
}

static void pool_push(struct pool *pool, outlive_interaction *token) { harness_pool_push(&pool->threads, token); }

static void pool_stop(struct pool *pool) { harness_pool_stop(&pool->threads); }

/* ── sequential starts under finishes from 8 threads ── */

#define STRESS 10000

struct stress {
    struct pool pool;
    atomic_int running;
    atomic_int started;
    atomic_int overlaps;       /* a start while another ran */
    atomic_int out_of_order;
    atomic_int off_loop;
    pthread_t loop_thread;
};

struct stress_item { struct stress *stress; int index; };

static void stress_run(outlive_interaction *token, void *context) {
    struct stress_item *item = context;
    struct stress *stress = item->stress;
    if (!pthread_equal(pthread_self(), stress->loop_thread)) atomic_fetch_add(&stress->off_loop, 1);
    if (atomic_exchange(&stress->running, 1) != 0) atomic_fetch_add(&stress->overlaps, 1);
    if (atomic_fetch_add(&stress->started, 1) != item->index) atomic_fetch_add(&stress->out_of_order, 1);
    pool_push(&stress->pool, token);
}

static void test_ten_thousand_interactions_finished_from_8_threads_start_one_at_a_time_in_order(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    static struct stress stress;
    memset(&stress, 0, sizeof stress);
    stress.loop_thread = pthread_self();
    pool_start(&stress.pool, &stress.running);
    static struct stress_item items[STRESS];
    for (int i = 0; i < STRESS; i++) {
        items[i] = (struct stress_item){ &stress, i };
        CHECK_OK(outlive_interactions_add(queue, stress_run, &items[i], NULL));
    }
    int all = harness_dispatch_until(loop, &stress.started, STRESS, 120);
    /* Wait for the last finish too. */
    double deadline = harness_now() + 30;
    while (outlive_interactions_unfinished(queue) > 0 && harness_now() < deadline) outlive_loop_dispatch(loop, 10);
    pool_stop(&stress.pool);
    size_t left = outlive_interactions_unfinished(queue);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
    CHECK_MSG(all, "only %d of %d interactions started", atomic_load(&stress.started), STRESS);
    CHECK(left == 0);
    CHECK_MSG(atomic_load(&stress.overlaps) == 0, "%d interactions started while another ran", atomic_load(&stress.overlaps));
    CHECK(atomic_load(&stress.out_of_order) == 0);
    CHECK(atomic_load(&stress.off_loop) == 0);
    CHECK(atomic_load(&stress.pool.finish_failures) == 0);
    CHECK(atomic_load(&stress.pool.double_ok) == 0);
}

/* ── adds from many threads ── */

#define ADDERS 4
#define PER_ADDER 1000

struct adders {
    outlive_interactions *queue;
    atomic_int started;
    atomic_int running;
    atomic_int overlaps;
    atomic_int out_of_order;
    atomic_int add_failures;
    int last_seen[ADDERS];
};
struct added { struct adders *adders; int thread; int index; };

static void added_run(outlive_interaction *token, void *context) {
    struct added *item = context;
    struct adders *adders = item->adders;
    if (atomic_exchange(&adders->running, 1) != 0) atomic_fetch_add(&adders->overlaps, 1);
    /* Each thread's interactions start in the order that thread added them. */
    if (adders->last_seen[item->thread] != item->index - 1) atomic_fetch_add(&adders->out_of_order, 1);
    adders->last_seen[item->thread] = item->index;
    atomic_fetch_add(&adders->started, 1);
    atomic_store(&adders->running, 0);
    if (outlive_interaction_finish(token) != OUTLIVE_OK) atomic_fetch_add(&adders->add_failures, 1);
}

static struct added added_items[ADDERS][PER_ADDER];

static void *adder_main(void *argument) {
    struct added *items = argument;
    for (int i = 0; i < PER_ADDER; i++) {
        if (outlive_interactions_add(items[i].adders->queue, added_run, &items[i], NULL) != OUTLIVE_OK)
            atomic_fetch_add(&items[i].adders->add_failures, 1);
    }
    return NULL;
}

static void test_adds_from_many_threads_start_one_at_a_time_in_each_threads_order(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    static struct adders adders;
    memset(&adders, 0, sizeof adders);
    CHECK_OK(outlive_interactions_new(loop, &adders.queue));
    for (int t = 0; t < ADDERS; t++) {
        adders.last_seen[t] = -1;
        for (int i = 0; i < PER_ADDER; i++) added_items[t][i] = (struct added){ &adders, t, i };
    }
    pthread_t threads[ADDERS];
    for (int t = 0; t < ADDERS; t++) pthread_create(&threads[t], NULL, adder_main, added_items[t]);
    int all = harness_dispatch_until(loop, &adders.started, ADDERS * PER_ADDER, 60);
    for (int t = 0; t < ADDERS; t++) pthread_join(threads[t], NULL);
    outlive_interactions_free(adders.queue);
    outlive_loop_free(loop);
    CHECK_MSG(all, "only %d started", atomic_load(&adders.started));
    CHECK(atomic_load(&adders.overlaps) == 0);
    CHECK(atomic_load(&adders.out_of_order) == 0);
    CHECK(atomic_load(&adders.add_failures) == 0);
}

/* ── suspension ── */

struct recorder {
    atomic_int started;
    atomic_int released;
    outlive_interaction *tokens[16];
    int order[16];
};
struct recorded { struct recorder *recorder; int index; };

static void record_run(outlive_interaction *token, void *context) {
    struct recorded *item = context;
    int n = atomic_fetch_add(&item->recorder->started, 1);
    if (n < 16) { item->recorder->tokens[n] = token; item->recorder->order[n] = item->index; }
}

static void record_release(void *context) {
    struct recorded *item = context;
    atomic_fetch_add(&item->recorder->released, 1);
}

static void test_suspended_queue_starts_nothing_until_resumed_and_running_one_goes_on(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded items[3] = { { &recorder, 0 }, { &recorder, 1 }, { &recorder, 2 } };
    CHECK_OK(outlive_interactions_suspend(queue));
    for (int i = 0; i < 3; i++) CHECK_OK(outlive_interactions_add(queue, record_run, &items[i], NULL));
    harness_dispatch_for(loop, 0.2);
    CHECK(atomic_load(&recorder.started) == 0);
    CHECK(outlive_interactions_unfinished(queue) == 3);

    CHECK_OK(outlive_interactions_resume(queue));
    CHECK(harness_dispatch_until(loop, &recorder.started, 1, 10));
    /* The view disappears while the first interaction runs: it is not stopped
     * and can be finished, but the next one waits. */
    CHECK_OK(outlive_interactions_suspend(queue));
    CHECK_OK(outlive_interactions_suspend(queue));
    CHECK_OK(outlive_interaction_finish(recorder.tokens[0]));
    harness_dispatch_for(loop, 0.2);
    CHECK(atomic_load(&recorder.started) == 1);
    CHECK(outlive_interactions_unfinished(queue) == 2);

    CHECK_OK(outlive_interactions_resume(queue));
    CHECK(harness_dispatch_until(loop, &recorder.started, 2, 10));
    CHECK(recorder.order[1] == 1);
    CHECK_OK(outlive_interaction_finish(recorder.tokens[1]));
    CHECK(harness_dispatch_until(loop, &recorder.started, 3, 10));
    CHECK(recorder.order[2] == 2);
    CHECK_OK(outlive_interaction_finish(recorder.tokens[2]));
    CHECK(outlive_interactions_unfinished(queue) == 0);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

/* ── finishing ── */

static void finish_at_once(outlive_interaction *token, void *context) {
    struct recorded *item = context;
    record_run(token, context);
    if (outlive_interaction_finish(token) != OUTLIVE_OK) item->recorder->order[15] = -1;
}

static void test_second_finish_is_state_error_and_changes_nothing(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded items[2] = { { &recorder, 0 }, { &recorder, 1 } };
    CHECK_OK(outlive_interactions_add(queue, record_run, &items[0], NULL));
    CHECK_OK(outlive_interactions_add(queue, record_run, &items[1], NULL));
    CHECK(harness_dispatch_until(loop, &recorder.started, 1, 10));
    outlive_interaction *first = recorder.tokens[0];
    CHECK_OK(outlive_interaction_finish(first));
    CHECK_STATUS(outlive_interaction_finish(first), OUTLIVE_E_STATE);
    CHECK(harness_dispatch_until(loop, &recorder.started, 2, 10));
    /* The stale token cannot finish the running second interaction. */
    CHECK_STATUS(outlive_interaction_finish(first), OUTLIVE_E_STATE);
    CHECK(outlive_interactions_unfinished(queue) == 1);
    CHECK_STATUS(outlive_interaction_finish(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_interaction_finish(recorder.tokens[1]));
    CHECK(outlive_interactions_unfinished(queue) == 0);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

static void test_interaction_finished_inside_its_run_lets_the_next_start(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded items[5];
    for (int i = 0; i < 5; i++) {
        items[i] = (struct recorded){ &recorder, i };
        CHECK_OK(outlive_interactions_add(queue, finish_at_once, &items[i], record_release));
    }
    CHECK(harness_dispatch_until(loop, &recorder.started, 5, 10));
    CHECK(recorder.order[15] == 0);
    for (int i = 0; i < 5; i++) CHECK(recorder.order[i] == i);
    CHECK(atomic_load(&recorder.released) == 5);
    CHECK(outlive_interactions_unfinished(queue) == 0);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

/* ── freeing ── */

static void test_freeing_queue_releases_waiting_contexts_without_running_them(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded items[5];
    for (int i = 0; i < 5; i++) {
        items[i] = (struct recorded){ &recorder, i };
        CHECK_OK(outlive_interactions_add(queue, record_run, &items[i], record_release));
    }
    CHECK(harness_dispatch_until(loop, &recorder.started, 1, 10));
    CHECK(atomic_load(&recorder.released) == 0);
    outlive_interactions_free(queue);
    /* The four waiting ones are released at once, none ran. */
    CHECK(atomic_load(&recorder.released) == 4);
    /* The running one is not interrupted: its finish works and releases it. */
    CHECK_OK(outlive_interaction_finish(recorder.tokens[0]));
    CHECK(atomic_load(&recorder.released) == 5);
    CHECK_STATUS(outlive_interaction_finish(recorder.tokens[0]), OUTLIVE_E_STATE);
    harness_dispatch_for(loop, 0.1);
    CHECK(atomic_load(&recorder.started) == 1);
    outlive_loop_free(loop);
}

static void test_freeing_queue_before_any_dispatch_runs_nothing(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded items[3];
    for (int i = 0; i < 3; i++) {
        items[i] = (struct recorded){ &recorder, i };
        CHECK_OK(outlive_interactions_add(queue, record_run, &items[i], record_release));
    }
    outlive_interactions_free(queue);
    CHECK(atomic_load(&recorder.released) == 3);
    harness_dispatch_for(loop, 0.1);
    CHECK(atomic_load(&recorder.started) == 0);
    outlive_loop_free(loop);
}

/* ── stall report ── */

struct stall {
    atomic_int reports;
    outlive_interaction *reported;
    double seconds;
    int finish_status;
    atomic_int released;
};

static void on_stall(outlive_interaction *stalled, double seconds, void *context) {
    struct stall *stall = context;
    stall->reported = stalled;
    stall->seconds = seconds;
    /* A watchdog may finish the stalled interaction. */
    stall->finish_status = outlive_interaction_finish(stalled);
    atomic_fetch_add(&stall->reports, 1);
}

static void stall_release(void *context) {
    struct stall *stall = context;
    atomic_fetch_add(&stall->released, 1);
}

static void test_interaction_never_finished_is_reported_as_stalled(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct stall stall;
    memset(&stall, 0, sizeof stall);
    stall.finish_status = -1;
    CHECK_OK(outlive_interactions_set_stall_report(queue, 0.05, on_stall, &stall, stall_release));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded forgotten = { &recorder, 0 }, prompt = { &recorder, 1 };
    CHECK_OK(outlive_interactions_add(queue, record_run, &forgotten, NULL));    /* never finished by its owner */
    CHECK_OK(outlive_interactions_add(queue, finish_at_once, &prompt, NULL));  /* finished at once: not reported */
    CHECK(harness_dispatch_until(loop, &stall.reports, 1, 10));
    CHECK(stall.reported == recorder.tokens[0]);
    CHECK(stall.seconds == 0.05);
    CHECK(stall.finish_status == OUTLIVE_OK);
    CHECK(harness_dispatch_until(loop, &recorder.started, 2, 10));
    harness_dispatch_for(loop, 0.2);
    CHECK(atomic_load(&stall.reports) == 1);
    CHECK(atomic_load(&stall.released) == 0);
    outlive_interactions_free(queue);
    CHECK(atomic_load(&stall.released) == 1);
    outlive_loop_free(loop);
}

static void test_replacing_stall_report_releases_previous_context(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct stall first, second;
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    CHECK_OK(outlive_interactions_set_stall_report(queue, 1, on_stall, &first, stall_release));
    CHECK_OK(outlive_interactions_set_stall_report(queue, 2, on_stall, &second, stall_release));
    CHECK(atomic_load(&first.released) == 1);
    CHECK_OK(outlive_interactions_set_stall_report(queue, 0, NULL, NULL, NULL));
    CHECK(atomic_load(&second.released) == 1);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

/* ── bad input ── */

static void test_bad_arguments_get_precise_status_and_change_nothing(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *queue = NULL;
    CHECK_STATUS(outlive_interactions_new(NULL, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(queue == NULL);
    CHECK_STATUS(outlive_interactions_new(loop, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_interactions_new(loop, &queue));
    struct recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    struct recorded item = { &recorder, 0 };
    CHECK_STATUS(outlive_interactions_add(NULL, record_run, &item, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_interactions_add(queue, NULL, &item, record_release), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(atomic_load(&recorder.released) == 0);
    CHECK(outlive_interactions_unfinished(queue) == 0);
    CHECK_STATUS(outlive_interactions_suspend(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_interactions_resume(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    struct stall stall;
    memset(&stall, 0, sizeof stall);
    CHECK_STATUS(outlive_interactions_set_stall_report(queue, -1, on_stall, &stall, stall_release), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_interactions_set_stall_report(queue, 0.0 / 0.0, on_stall, &stall, stall_release), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_interactions_set_stall_report(NULL, 1, on_stall, &stall, stall_release), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(atomic_load(&stall.released) == 0);
    CHECK(strstr(outlive_last_error(), "queue") != NULL);
    /* A number that was never a token. */
    CHECK_STATUS(outlive_interaction_finish((outlive_interaction *)(uintptr_t)0x7fffffffffffULL), OUTLIVE_E_STATE);
    CHECK(outlive_interactions_unfinished(NULL) == 0);
    outlive_interactions_free(NULL);
    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

HARNESS_MAIN(
    T(test_ten_thousand_interactions_finished_from_8_threads_start_one_at_a_time_in_order),
    T(test_adds_from_many_threads_start_one_at_a_time_in_each_threads_order),
    T(test_suspended_queue_starts_nothing_until_resumed_and_running_one_goes_on),
    T(test_second_finish_is_state_error_and_changes_nothing),
    T(test_interaction_finished_inside_its_run_lets_the_next_start),
    T(test_freeing_queue_releases_waiting_contexts_without_running_them),
    T(test_freeing_queue_before_any_dispatch_runs_nothing),
    T(test_interaction_never_finished_is_reported_as_stalled),
    T(test_replacing_stall_report_releases_previous_context),
    T(test_bad_arguments_get_precise_status_and_change_nothing),
)
