/* Named queues from C, in one process (handles of their own each): priorities
 * in ordered and parallel queues, one runner per ordered queue, groups in a
 * parallel queue, served queues running at once while the default queue keeps
 * its triggers, a handle that serves nothing, the queue list's counts, and bad
 * input that gets a precise status and stores nothing. */
#include "harness.h"
#include <math.h>
#include <stdatomic.h>
#include <unistd.h>

static char calls[64][64];
static _Atomic int call_count;
static outlive_handler *held[8];
static int held_count;

static void remember(const outlive_object *label) {
    int index = atomic_load(&call_count);
    if (index < 64) snprintf(calls[index], 64, "%s", label ? outlive_object_string(label) : "-");
    atomic_fetch_add(&call_count, 1);
}

static void queues_record(const outlive_object *label) { remember(label); }

static void queues_fail(const outlive_object *label, const outlive_handler *completion) {
    remember(label);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", false);
    outlive_handler_call(completion, args);
    outlive_args_free(args);
}

/* Keeps the attempt open: the test completes it later (complete_held). */
static void queues_hold(const outlive_object *label, const outlive_handler *completion) {
    remember(label);
    if (held_count < 8) outlive_handler_copy(completion, &held[held_count++]);
}

static void complete_held(int index) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    outlive_handler_call(held[index], args);
    outlive_args_free(args);
    outlive_handler_free(held[index]);
    held[index] = NULL;
}

static outlive_store *open_store(const char *dir, const char *process) {
    static bool registered;
    if (!registered) {
        registered = true;
        outlive_handler_register("queues_record", "ID label", (void (*)(void))queues_record);
        outlive_handler_register("queues_hold", "ID label, HANDLER completion", (void (*)(void))queues_hold);
        outlive_handler_register("queues_fail", "ID label, HANDLER completion", (void (*)(void))queues_fail);
    }
    outlive_store *store = NULL;
    if (outlive_store_open(dir, process, NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    return store;
}

static void reset(void) {
    atomic_store(&call_count, 0);
    for (int i = 0; i < held_count; i++) outlive_handler_free(held[i]);
    held_count = 0;
}

static outlive_status enqueue(outlive_store *store, const char *handler, const char *label, const char *queue, int32_t priority,
                              const char *group_start, const char *member) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", label);
    outlive_handler *work = NULL;
    outlive_handler_new(handler, NULL, args, &work);
    outlive_args_free(args);
    const char *members[1] = { member };
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = queue;
    options.priority = priority;
    options.group_start = group_start;
    options.group_members = member ? members : NULL;
    options.group_member_count = member ? 1 : 0;
    outlive_status status = outlive_task_enqueue(store, work, &options, NULL, NULL);
    outlive_handler_free(work);
    return status;
}

static void dispatch_all(outlive_store **stores, int count, double seconds) {
    double deadline = harness_now() + seconds;
    while (harness_now() < deadline)
        for (int i = 0; i < count; i++) outlive_loop_dispatch(outlive_store_loop(stores[i]), 5);
}

static bool queue_counts(outlive_store *store, const char *queue, size_t *pending, size_t *running, size_t *dead) {
    outlive_queue_list *list = NULL;
    if (outlive_queue_list_new(store, NULL, 0, &list) != OUTLIVE_OK) return false;
    bool found = false;
    for (size_t i = 0; i < outlive_queue_list_count(list); i++) {
        if (strcmp(outlive_queue_list_name(list, i), queue) != 0) continue;
        *pending = outlive_queue_list_pending(list, i);
        *running = outlive_queue_list_running(list, i);
        *dead = outlive_queue_list_dead(list, i);
        found = true;
    }
    outlive_queue_list_free(list);
    return found;
}

static void check_priority_order(outlive_queue_kind kind) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "work", kind));
    const char *labels[] = { "p0-first", "p5-first", "pminus1", "p5-second", "p10", "p0-second" };
    const int32_t priorities[] = { 0, 5, -1, 5, 10, 0 };
    for (int i = 0; i < 6; i++) CHECK_OK(enqueue(store, "queues_record", labels[i], "work", priorities[i], NULL, NULL));
    CHECK_OK(outlive_queue_serve(store, "work", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 6, 10));
    const char *expected[] = { "p10", "p5-first", "p5-second", "p0-first", "p0-second", "pminus1" };
    for (int i = 0; i < 6; i++) CHECK_MSG(strcmp(calls[i], expected[i]) == 0, "call %d was %.60s, expected %s", i, calls[i], expected[i]);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_higher_priority_starts_first_then_order_of_addition_in_an_ordered_queue(void) {
    check_priority_order(OUTLIVE_QUEUE_ORDERED);
}

static void test_higher_priority_starts_first_then_order_of_addition_in_a_parallel_queue(void) {
    check_priority_order(OUTLIVE_QUEUE_PARALLEL);
}

static void test_a_task_of_higher_priority_added_during_a_run_starts_before_the_rest(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "work", OUTLIVE_QUEUE_ORDERED));
    CHECK_OK(enqueue(store, "queues_hold", "held", "work", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_record", "low-1", "work", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_record", "low-2", "work", 0, NULL, NULL));
    CHECK_OK(outlive_queue_serve(store, "work", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 1, 10));
    CHECK(strcmp(calls[0], "held") == 0);
    /* Added while the run holds its cursor past it: it still goes first. */
    CHECK_OK(enqueue(store, "queues_record", "urgent", "work", 9, NULL, NULL));
    harness_dispatch_for(outlive_store_loop(store), 0.1);
    CHECK(atomic_load(&call_count) == 1);
    complete_held(0);
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 4, 10));
    CHECK(strcmp(calls[1], "urgent") == 0 && strcmp(calls[2], "low-1") == 0 && strcmp(calls[3], "low-2") == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_each_ordered_queue_has_its_own_runner_and_one_at_a_time(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *stores[3] = { open_store(dir, "x-runner"), open_store(dir, "y-runner"), open_store(dir, "x-second") };
    CHECK(stores[0] && stores[1] && stores[2]);
    CHECK_OK(outlive_queue_declare(stores[0], "x", OUTLIVE_QUEUE_ORDERED));
    CHECK_OK(outlive_queue_declare(stores[0], "y", OUTLIVE_QUEUE_ORDERED));
    for (int i = 0; i < 3; i++) CHECK_OK(outlive_queue_serve(stores[i], "default", 0));
    CHECK_OK(enqueue(stores[0], "queues_hold", "x1", "x", 0, NULL, NULL));
    CHECK_OK(enqueue(stores[0], "queues_record", "x2", "x", 0, NULL, NULL));
    CHECK_OK(enqueue(stores[0], "queues_record", "y1", "y", 0, NULL, NULL));
    CHECK_OK(outlive_queue_serve(stores[0], "x", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(stores[0]), &call_count, 1, 10));
    CHECK_OK(outlive_queue_serve(stores[1], "y", 1));
    CHECK_OK(outlive_queue_serve(stores[2], "x", 1));
    dispatch_all(stores, 3, 0.3);
    /* y has a runner of its own: y1 ran while x's claim is held. x2 did not:
     * x's runner is the first handle while its attempt is under way. */
    int ran_y = 0, ran_x2 = 0;
    for (int i = 0; i < atomic_load(&call_count); i++) {
        if (!strcmp(calls[i], "y1")) ran_y++;
        if (!strcmp(calls[i], "x2")) ran_x2++;
    }
    CHECK_MSG(ran_y == 1, "y1 ran %d times while x was held", ran_y);
    CHECK_MSG(ran_x2 == 0, "x2 ran in another handle while x's runner held the queue");
    complete_held(0);
    dispatch_all(stores, 3, 0.5);
    ran_x2 = 0;
    for (int i = 0; i < atomic_load(&call_count); i++) if (!strcmp(calls[i], "x2")) ran_x2++;
    CHECK_MSG(ran_x2 == 1, "x2 ran %d times once x's runner let go", ran_x2);
    for (int i = 0; i < 3; i++) outlive_store_close(stores[i]);
    harness_remove_store(dir);
}

static void test_a_group_start_holds_its_members_back_in_a_parallel_queue(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "work", OUTLIVE_QUEUE_PARALLEL));
    /* The member has the higher priority, and the start is held open. */
    CHECK_OK(enqueue(store, "queues_hold", "identify", "work", 0, "profile:A", NULL));
    CHECK_OK(enqueue(store, "queues_record", "track", "work", 5, NULL, "profile:A"));
    CHECK_OK(enqueue(store, "queues_record", "other", "work", 0, NULL, NULL));
    CHECK_OK(outlive_queue_serve(store, "work", 4));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 2, 10));
    harness_dispatch_for(outlive_store_loop(store), 0.2);
    CHECK(atomic_load(&call_count) == 2);
    for (int i = 0; i < 2; i++) CHECK(strcmp(calls[i], "track") != 0);
    complete_held(0);
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 3, 10));
    CHECK(strcmp(calls[2], "track") == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_a_served_queue_runs_at_once_while_the_default_queue_keeps_its_triggers(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_tasks_set_triggers(store, 0, 1e6));
    CHECK_OK(outlive_queue_declare(store, "now", OUTLIVE_QUEUE_ORDERED));
    CHECK_OK(outlive_queue_serve(store, "now", 1));
    CHECK_OK(enqueue(store, "queues_record", "in-default", NULL, 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_record", "in-now", "now", 0, NULL, NULL));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 1, 10));
    harness_dispatch_for(outlive_store_loop(store), 0.2);
    CHECK(atomic_load(&call_count) == 1 && strcmp(calls[0], "in-now") == 0);
    /* Naming the default queue serves it at once too. */
    CHECK_OK(outlive_queue_serve(store, "default", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 2, 10));
    CHECK(strcmp(calls[1], "in-default") == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_a_handle_that_serves_nothing_adds_but_never_runs(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "producer");
    CHECK(store != NULL);
    CHECK_OK(outlive_tasks_set_triggers(store, 1, 0));
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "work", OUTLIVE_QUEUE_PARALLEL));
    CHECK_OK(enqueue(store, "queues_record", "a", NULL, 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_record", "b", "work", 0, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(store));
    harness_dispatch_for(outlive_store_loop(store), 0.3);
    CHECK(atomic_load(&call_count) == 0);
    size_t pending = 0, running = 9, dead = 9;
    CHECK(queue_counts(store, "default", &pending, &running, &dead));
    CHECK(pending == 1 && running == 0 && dead == 0);
    CHECK(queue_counts(store, "work", &pending, &running, &dead));
    CHECK(pending == 1 && running == 0 && dead == 0);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 2);
    for (size_t i = 0; i < 2; i++) CHECK(outlive_task_list_attempts(list, i) == 0);
    outlive_task_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_the_queue_list_counts_pending_running_and_dead_tasks_per_queue(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "b-parallel", OUTLIVE_QUEUE_PARALLEL));
    CHECK_OK(outlive_queue_declare(store, "a-ordered", OUTLIVE_QUEUE_ORDERED));
    /* Declaring again with the same kind is fine; with the other kind it is not. */
    CHECK_OK(outlive_queue_declare(store, "a-ordered", OUTLIVE_QUEUE_ORDERED));
    CHECK_STATUS(outlive_queue_declare(store, "a-ordered", OUTLIVE_QUEUE_PARALLEL), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_queue_declare(store, "default", OUTLIVE_QUEUE_PARALLEL), OUTLIVE_E_STATE);
    outlive_queue_list *list = NULL;
    CHECK_OK(outlive_queue_list_new(store, NULL, 0, &list));
    CHECK(outlive_queue_list_count(list) == 3);
    CHECK(strcmp(outlive_queue_list_name(list, 0), "a-ordered") == 0 && outlive_queue_list_kind(list, 0) == OUTLIVE_QUEUE_ORDERED);
    CHECK(strcmp(outlive_queue_list_name(list, 1), "b-parallel") == 0 && outlive_queue_list_kind(list, 1) == OUTLIVE_QUEUE_PARALLEL);
    CHECK(strcmp(outlive_queue_list_name(list, 2), "default") == 0);
    CHECK(outlive_queue_list_name(list, 3) == NULL && outlive_queue_list_pending(list, 3) == 0);
    outlive_queue_list_free(list);
    CHECK_OK(outlive_queue_list_new(store, "a-ordered", 1, &list));
    CHECK(outlive_queue_list_count(list) == 1 && strcmp(outlive_queue_list_name(list, 0), "b-parallel") == 0);
    outlive_queue_list_free(list);
    outlive_queue_list_free(NULL);
    CHECK(outlive_queue_list_count(NULL) == 0);

    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.max_attempts = 1;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    CHECK_OK(enqueue(store, "queues_hold", "held", "b-parallel", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_record", "r1", "b-parallel", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_fail", "doomed", "b-parallel", 0, NULL, NULL));
    size_t pending = 0, running = 0, dead = 0;
    CHECK(queue_counts(store, "b-parallel", &pending, &running, &dead));
    CHECK(pending == 3 && running == 0 && dead == 0);
    CHECK_OK(outlive_queue_serve(store, "b-parallel", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 1, 10));
    CHECK(queue_counts(store, "b-parallel", &pending, &running, &dead));
    CHECK(pending == 2 && running == 1 && dead == 0);
    complete_held(0);
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 3, 10));
    harness_dispatch_for(outlive_store_loop(store), 0.1);
    CHECK(queue_counts(store, "b-parallel", &pending, &running, &dead));
    CHECK_MSG(pending == 0 && running == 0 && dead == 1, "%zu %zu %zu", pending, running, dead);
    CHECK(queue_counts(store, "a-ordered", &pending, &running, &dead));
    CHECK(pending == 0 && running == 0 && dead == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Past a fold of the counts (64 adds), the tasks run below the counted mark:
 * a claim writes no counter (running tasks are counted from their rows), so
 * the list must still split what is not ended into pending and running, and
 * a task that dies or completes must leave its queue's counts exact. */
static void test_the_queue_counts_stay_exact_for_tasks_claimed_below_the_counted_mark(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "many", OUTLIVE_QUEUE_PARALLEL));
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.max_attempts = 1;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    CHECK_OK(enqueue(store, "queues_hold", "held-0", "many", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_hold", "held-1", "many", 0, NULL, NULL));
    CHECK_OK(enqueue(store, "queues_fail", "doomed", "many", 0, NULL, NULL));
    for (int i = 0; i < 97; i++) {
        char label[16];
        snprintf(label, sizeof label, "r%d", i);
        CHECK_OK(enqueue(store, "queues_record", label, "many", 0, NULL, NULL));
    }
    size_t pending = 0, running = 0, dead = 0, total = 0;
    CHECK(queue_counts(store, "many", &pending, &running, &dead));
    CHECK(pending == 100 && running == 0 && dead == 0);
    CHECK_OK(outlive_queue_serve(store, "many", 2));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 2, 10));
    harness_dispatch_for(outlive_store_loop(store), 0.1);
    CHECK_MSG(atomic_load(&call_count) == 2, "%d calls", atomic_load(&call_count));
    CHECK(queue_counts(store, "many", &pending, &running, &dead));
    CHECK_MSG(pending == 98 && running == 2 && dead == 0, "%zu %zu %zu", pending, running, dead);
    CHECK_OK(outlive_tasks_count(store, &total));
    CHECK(total == 100);
    complete_held(0);
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, 100, 20));
    harness_dispatch_for(outlive_store_loop(store), 0.1);
    CHECK(queue_counts(store, "many", &pending, &running, &dead));
    CHECK_MSG(pending == 0 && running == 1 && dead == 1, "%zu %zu %zu", pending, running, dead);
    CHECK_OK(outlive_tasks_count(store, &total));
    CHECK(total == 1);
    complete_held(1);
    harness_dispatch_for(outlive_store_loop(store), 0.2);
    CHECK(queue_counts(store, "many", &pending, &running, &dead));
    CHECK_MSG(pending == 0 && running == 0 && dead == 1, "%zu %zu %zu", pending, running, dead);
    CHECK_OK(outlive_tasks_count(store, &total));
    CHECK(total == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_bad_queue_input_gets_precise_statuses_and_stores_nothing(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    char long_name[OUTLIVE_QUEUE_MAX_NAME_SIZE + 2];
    memset(long_name, 'q', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    const char *malformed[] = { "", "has space", "slash/name", "semi;colon", "\xff\xfe", long_name };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        CHECK_STATUS(outlive_queue_declare(store, malformed[i], OUTLIVE_QUEUE_PARALLEL), OUTLIVE_E_INVALID_ARGUMENT);
        CHECK_STATUS(outlive_queue_serve(store, malformed[i], 1), OUTLIVE_E_INVALID_ARGUMENT);
        CHECK_STATUS(enqueue(store, "queues_record", "x", malformed[i], 0, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
        outlive_queue_list *list = NULL;
        if (malformed[i][0]) CHECK_STATUS(outlive_queue_list_new(store, malformed[i], 0, &list), OUTLIVE_E_INVALID_ARGUMENT);
        CHECK(list == NULL);
    }
    CHECK_STATUS(outlive_queue_declare(store, NULL, OUTLIVE_QUEUE_PARALLEL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_declare(NULL, "fine", OUTLIVE_QUEUE_PARALLEL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_declare(store, "fine", (outlive_queue_kind)0), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_declare(store, "fine", (outlive_queue_kind)3), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_serve(store, NULL, 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_serve(store, "default", OUTLIVE_QUEUE_MAX_LIMIT + 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_serve(store, "default", (size_t)-1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_queue_list_new(store, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    /* A well-formed name that was never declared, where a queue must exist. */
    CHECK_STATUS(outlive_queue_serve(store, "undeclared", 1), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_queue_serve(store, "undeclared", 0), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(enqueue(store, "queues_record", "x", "undeclared", 0, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    CHECK(strstr(outlive_last_error(), "undeclared") != NULL);
    /* Times: negative, NaN, infinite, or both given. */
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_handler *work = NULL;
    CHECK_OK(outlive_handler_new("queues_record", NULL, args, &work));
    outlive_args_free(args);
    const double bad_times[] = { -1, -1e-9, NAN, INFINITY, -INFINITY };
    for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; i++) {
        outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
        options.due_at = bad_times[i];
        char id[OUTLIVE_ID_SIZE] = "untouched";
        CHECK_STATUS(outlive_task_enqueue(store, work, &options, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
        CHECK(strcmp(id, "untouched") == 0);
        options.due_at = 0;
        options.delay_seconds = bad_times[i];
        CHECK_STATUS(outlive_task_enqueue(store, work, &options, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    }
    outlive_task_options both = OUTLIVE_TASK_OPTIONS_INIT;
    both.due_at = 1e9;
    both.delay_seconds = 1;
    CHECK_STATUS(outlive_task_enqueue(store, work, &both, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler_free(work);
    /* Nothing stored: no task, no queue but the default one. */
    size_t count = 9;
    CHECK_OK(outlive_tasks_count(store, &count));
    CHECK(count == 0);
    outlive_queue_list *list = NULL;
    CHECK_OK(outlive_queue_list_new(store, NULL, 0, &list));
    CHECK(outlive_queue_list_count(list) == 1 && strcmp(outlive_queue_list_name(list, 0), "default") == 0);
    CHECK(outlive_queue_list_pending(list, 0) == 0);
    outlive_queue_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* A step learns the handler names of the queue's ready tasks before it claims
 * (on PostgreSQL CandidateSQL.namesAtOnce of them a statement): with more
 * names than one statement returns, and one that resolves nowhere among them,
 * the tasks still start in the queue's order — added from the last name to
 * the first, so that a step that knew only the first names would start one
 * of theirs first — and the other waits. */
static void test_tasks_of_more_handler_names_than_one_lookup_returns_all_run(void) {
    reset();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store != NULL);
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "names", OUTLIVE_QUEUE_PARALLEL));
    enum { NAMES = 40 };
    char name[64];
    for (int i = NAMES - 1; i >= 0; i--) {
        snprintf(name, sizeof name, "queues_many.%02d", i);
        CHECK_OK(outlive_handler_register(name, "ID label", (void (*)(void))queues_record));
        CHECK_OK(enqueue(store, name, name, "names", 0, NULL, NULL));
        /* Between two resolved names in the walk's order. */
        if (i == 20) CHECK_OK(enqueue(store, "queues_many.20x", "unresolved", "names", 0, NULL, NULL));
    }
    CHECK_OK(outlive_queue_serve(store, "names", 1));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &call_count, NAMES, 30));
    dispatch_all(&store, 1, 0.3);
    CHECK_MSG(call_count == NAMES, "%d calls for %d tasks of resolved names", (int)call_count, NAMES);
    for (int i = 0; i < NAMES; i++) {
        snprintf(name, sizeof name, "queues_many.%02d", NAMES - 1 - i);
        CHECK_MSG(strcmp(calls[i], name) == 0, "call %d was %.60s, expected %s", i, calls[i], name);
    }
    size_t pending = 0, running = 0, dead = 0;
    CHECK(queue_counts(store, "names", &pending, &running, &dead));
    CHECK_MSG(pending == 1 && running == 0 && dead == 0, "pending %zu, running %zu, dead %zu", pending, running, dead);
    for (int i = 0; i < NAMES; i++) {
        snprintf(name, sizeof name, "queues_many.%02d", i);
        outlive_handler_unregister(name);
    }
    outlive_store_close(store);
    harness_remove_store(dir);
}

HARNESS_MAIN(
    T(test_tasks_of_more_handler_names_than_one_lookup_returns_all_run),
    T(test_higher_priority_starts_first_then_order_of_addition_in_an_ordered_queue),
    T(test_higher_priority_starts_first_then_order_of_addition_in_a_parallel_queue),
    T(test_a_task_of_higher_priority_added_during_a_run_starts_before_the_rest),
    T(test_each_ordered_queue_has_its_own_runner_and_one_at_a_time),
    T(test_a_group_start_holds_its_members_back_in_a_parallel_queue),
    T(test_a_served_queue_runs_at_once_while_the_default_queue_keeps_its_triggers),
    T(test_a_handle_that_serves_nothing_adds_but_never_runs),
    T(test_the_queue_list_counts_pending_running_and_dead_tasks_per_queue),
    T(test_the_queue_counts_stay_exact_for_tasks_claimed_below_the_counted_mark),
    T(test_bad_queue_input_gets_precise_statuses_and_stores_nothing),
)
