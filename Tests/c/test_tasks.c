/* The task queue from C, in one process: order, backoff, timeout, dead tasks
 * and retry, groups, listing, and bad input that must get a precise status and
 * store nothing. Handlers are registered at run time (outlive_handler_register). */
#include "harness.h"
#include <math.h>
#include <time.h>
#include <unistd.h>

static char calls[64][64];
static int call_count;
static int fail_remaining;
static outlive_handler *kept_completion;

static void remember(const outlive_object *label) {
    if (call_count < 64) snprintf(calls[call_count++], 64, "%s", label ? outlive_object_string(label) : "-");
}

static void finish(const outlive_handler *completion, bool success) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", success);
    if (!success) outlive_args_set_string(args, "error", "refused");
    outlive_handler_call(completion, args);
    outlive_args_free(args);
}

static void local_record(const outlive_object *label) { remember(label); }

static void local_judge(const outlive_object *label, const outlive_handler *completion) {
    remember(label);
    const char *text = outlive_object_string(label);
    bool fail = (text && strncmp(text, "fail", 4) == 0) || fail_remaining > 0;
    if (fail_remaining > 0) fail_remaining--;
    finish(completion, !fail);
}

static void local_keep(const outlive_object *label, const outlive_handler *completion) {
    remember(label);
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    outlive_handler_copy(completion, &kept_completion);
}

/* The member's handler: notes whether its group start was still stored when it ran. */
static outlive_store *probe_store;
static char probe_start_id[OUTLIVE_ID_SIZE];
static int start_stored_when_member_ran = -1;

static void local_member_probe(const outlive_object *label) {
    remember(label);
    outlive_task_list *list = NULL;
    if (outlive_task_list_new(probe_store, NULL, 0, &list) != OUTLIVE_OK) return;
    start_stored_when_member_ran = 0;
    for (size_t i = 0; i < outlive_task_list_count(list); i++)
        if (!strcmp(outlive_task_list_id(list, i), probe_start_id)) start_stored_when_member_ran = 1;
    outlive_task_list_free(list);
}

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static outlive_store *open_queue(const char *dir) {
    static bool registered;
    if (!registered) {
        registered = true;
        outlive_handler_register("local_record", "ID label", (void (*)(void))local_record);
        outlive_handler_register("local_judge", "ID label, HANDLER completion", (void (*)(void))local_judge);
        outlive_handler_register("local_keep", "ID label, HANDLER completion", (void (*)(void))local_keep);
        outlive_handler_register("local_member_probe", "ID label", (void (*)(void))local_member_probe);
    }
    call_count = 0;
    fail_remaining = 0;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "app", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    /* No automatic runs: the tests start them. */
    outlive_tasks_set_triggers(store, 0, 1e6);
    return store;
}

/* A handler value of `handler` with its `label` bound (NULL on failure). */
static outlive_handler *labeled(const char *handler, const char *label) {
    outlive_args *args = NULL;
    outlive_handler *work = NULL;
    if (outlive_args_new(&args) == OUTLIVE_OK && outlive_args_set_string(args, "label", label) == OUTLIVE_OK)
        outlive_handler_new(handler, NULL, args, &work);
    outlive_args_free(args);
    return work;
}

static outlive_status add(outlive_store *store, const char *handler, const char *label, const char *start,
                          const char *member, char out_id[OUTLIVE_ID_SIZE]) {
    outlive_handler *work = labeled(handler, label);
    const char *members[1] = { member };
    outlive_status status = outlive_task_add(store, work, start, member ? members : NULL, member ? 1 : 0, out_id);
    outlive_handler_free(work);
    return status;
}

static size_t pending(outlive_store *store) {
    size_t count = 999;
    outlive_tasks_count(store, &count);
    return count;
}

/* Dispatches until the queue has `target` pending tasks and `calls_wanted` calls were made. */
static bool run_until(outlive_store *store, size_t target, int calls_wanted) {
    double deadline = monotonic() + 20;
    while (monotonic() < deadline) {
        if (outlive_loop_dispatch(outlive_store_loop(store), 20) != OUTLIVE_OK) return false;
        if (pending(store) == target && call_count >= calls_wanted) {
            for (int i = 0; i < 5; i++) outlive_loop_dispatch(outlive_store_loop(store), 0);
            return true;
        }
    }
    return false;
}

static void test_tasks_run_in_order_and_success_deletes_them(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    const char *labels[] = { "a", "b", "c", "d" };
    for (int i = 0; i < 4; i++) CHECK_OK(add(store, i % 2 ? "local_judge" : "local_record", labels[i], NULL, NULL, NULL));
    CHECK(pending(store) == 4);
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 4));
    CHECK(call_count == 4);
    for (int i = 0; i < 4; i++) CHECK(!strcmp(calls[i], labels[i]));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_batch_adds_in_one_transaction_and_lists_in_order(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_handler *work = NULL;
    outlive_handler_new("local_record", NULL, NULL, &work);
    const char *members[2] = { "g1", "g2" };
    outlive_task_spec specs[3] = {
        { OUTLIVE_TASK_SPEC_VERSION, work, "g1", NULL, 0 },
        { OUTLIVE_TASK_SPEC_VERSION, work, NULL, members, 2 },
        { OUTLIVE_TASK_SPEC_VERSION, work, NULL, NULL, 0 },
    };
    char ids[3 * OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_tasks_add_batch(store, specs, 3, ids));
    outlive_task_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK(!strcmp(outlive_task_list_id(list, i), ids + i * OUTLIVE_ID_SIZE));
        CHECK(!strcmp(outlive_task_list_handler_name(list, i), "local_record"));
        CHECK(outlive_task_list_state(list, i) == OUTLIVE_TASK_PENDING && outlive_task_list_attempts(list, i) == 0 && outlive_task_list_last_error(list, i) == NULL);
        CHECK(outlive_task_list_next_attempt(list, i) == 0 && outlive_task_list_created(list, i) > 1e9);
    }
    CHECK(outlive_task_list_group_start(list, 0) && !strcmp(outlive_task_list_group_start(list, 0), "g1") && outlive_task_list_group_member_count(list, 0) == 0);
    CHECK(outlive_task_list_group_start(list, 1) == NULL && outlive_task_list_group_member_count(list, 1) == 2);
    CHECK(!strcmp(outlive_task_list_group_member(list, 1, 0), "g1") && !strcmp(outlive_task_list_group_member(list, 1, 1), "g2"));
    outlive_task_list_free(list);
    /* Paging: after the first id. */
    CHECK_OK(outlive_task_list_new(store, ids, 1, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 1 && !strcmp(outlive_task_list_id(list, 0), ids + OUTLIVE_ID_SIZE));
    outlive_task_list_free(list);
    /* A batch with one bad task stores none. */
    outlive_task_spec bad[2] = { { OUTLIVE_TASK_SPEC_VERSION, work, NULL, NULL, 0 }, { OUTLIVE_TASK_SPEC_VERSION, work, "", NULL, 0 } };
    CHECK_STATUS(outlive_tasks_add_batch(store, bad, 2, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "tasks[1]") != NULL);
    CHECK(pending(store) == 3);
    outlive_handler_free(work);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_failure_backs_off_and_the_task_runs_again_by_itself(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.initial_backoff = 0.2;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    fail_remaining = 1;
    CHECK_OK(add(store, "local_judge", "flaky", NULL, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 1, 1));
    outlive_task_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 1 && outlive_task_list_state(list, 0) == OUTLIVE_TASK_PENDING && outlive_task_list_attempts(list, 0) == 1);
    CHECK(outlive_task_list_last_error(list, 0) && !strcmp(outlive_task_list_last_error(list, 0), "refused"));
    CHECK(outlive_task_list_next_attempt(list, 0) > 0);
    outlive_task_list_free(list);
    /* No run_now: the task coming due starts a run. */
    CHECK(run_until(store, 0, 2));
    CHECK(call_count == 2);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_no_completion_within_timeout_fails_and_late_completion_is_ignored(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.timeout = 0.2;
    policy.initial_backoff = 1000;
    policy.max_backoff = 1000;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    CHECK_OK(add(store, "local_keep", "silent", NULL, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(store));
    outlive_task_list *list = NULL;
    size_t count = 0;
    double deadline = monotonic() + 20;
    bool failed = false;
    while (!failed && monotonic() < deadline) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
        CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
        count = outlive_task_list_count(list);
        failed = count == 1 && outlive_task_list_last_error(list, 0) != NULL;
        if (failed) CHECK_MSG(strstr(outlive_task_list_last_error(list, 0), "timeout") != NULL, "last error: %s", outlive_task_list_last_error(list, 0));
        if (failed) CHECK(outlive_task_list_state(list, 0) == OUTLIVE_TASK_PENDING && outlive_task_list_next_attempt(list, 0) > 0);
        outlive_task_list_free(list);
    }
    CHECK(failed);
    CHECK(kept_completion != NULL);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    CHECK_STATUS(outlive_handler_call(kept_completion, args), OUTLIVE_E_STATE);
    outlive_args_free(args);
    CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
    CHECK(pending(store) == 1);
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_dead_task_is_kept_listed_and_retryable(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.initial_backoff = 0;
    policy.max_backoff = 0;
    policy.max_attempts = 3;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(add(store, "local_judge", "fail-always", NULL, NULL, id));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 3));
    size_t dead = 0;
    CHECK_OK(outlive_tasks_count_dead(store, &dead));
    CHECK(dead == 1 && call_count == 3);
    outlive_task_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 1 && !strcmp(outlive_task_list_id(list, 0), id) && outlive_task_list_state(list, 0) == OUTLIVE_TASK_DEAD && outlive_task_list_attempts(list, 0) == 3);
    outlive_task_list_free(list);
    /* Dead tasks do not run. */
    CHECK_OK(outlive_tasks_run_now(store));
    for (int i = 0; i < 5; i++) CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 10));
    CHECK(call_count == 3);
    CHECK_STATUS(outlive_task_retry(store, "not-an-id"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_retry(store, "00000000-0000-4000-8000-000000000000"), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_task_retry(store, id));
    CHECK_STATUS(outlive_task_retry(store, id), OUTLIVE_E_STATE);
    CHECK(pending(store) == 1);
    CHECK_OK(outlive_tasks_count_dead(store, &dead));
    CHECK(dead == 0);
    policy.max_attempts = 1;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 4));
    CHECK_OK(outlive_task_delete(store, id));
    CHECK_STATUS(outlive_task_delete(store, id), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_tasks_count_dead(store, &dead));
    CHECK(dead == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_failed_group_start_skips_members_and_the_rest_runs(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.initial_backoff = 1000;
    policy.max_backoff = 1000;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    char start_id[OUTLIVE_ID_SIZE];
    CHECK_OK(add(store, "local_judge", "fail-identify-A", "profile:A", NULL, start_id));
    CHECK_OK(add(store, "local_judge", "track-A", NULL, "profile:A", NULL));
    CHECK_OK(add(store, "local_judge", "push-Z", NULL, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 2, 2));
    CHECK(call_count == 2 && !strcmp(calls[0], "fail-identify-A") && !strcmp(calls[1], "push-Z"));
    /* Deleting the failed start lets the member run. */
    CHECK_OK(outlive_task_delete(store, start_id));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 3));
    CHECK(!strcmp(calls[2], "track-A"));
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Quick handlers run in batches (claimed together, ended in one transaction):
 * order still holds, and a group start ends its batch, so that its member,
 * next in the queue, starts right after it and only once its success is
 * committed (the start is no longer stored when the member runs). */
static void test_batches_keep_order_and_a_member_waits_for_its_start_s_committed_success(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    probe_store = store;
    start_stored_when_member_ran = -1;
    CHECK_OK(outlive_tasks_set_completion_batch(store, OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH));
    char label[16];
    /* Enough quick tasks first that the run's batches grow to the limit. */
    for (int i = 0; i < 40; i++) {
        snprintf(label, sizeof label, "w%02d", i);
        CHECK_OK(add(store, "local_record", label, NULL, NULL, NULL));
    }
    CHECK_OK(add(store, "local_record", "start", "g", NULL, probe_start_id));
    CHECK_OK(add(store, "local_member_probe", "member", NULL, "g", NULL));
    CHECK_OK(add(store, "local_record", "after-1", NULL, NULL, NULL));
    CHECK_OK(add(store, "local_record", "after-2", NULL, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 44));
    CHECK_MSG(call_count == 44, "%d calls", call_count);
    for (int i = 0; i < 40; i++) {
        snprintf(label, sizeof label, "w%02d", i);
        CHECK_MSG(!strcmp(calls[i], label), "call %d was %.16s", i, calls[i]);
    }
    CHECK(!strcmp(calls[40], "start") && !strcmp(calls[41], "member"));
    CHECK(!strcmp(calls[42], "after-1") && !strcmp(calls[43], "after-2"));
    CHECK_MSG(start_stored_when_member_ran == 0, "the group start was %s when its member ran",
              start_stored_when_member_ran == 1 ? "still stored" : "not looked up");
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* A batch that reaches the end of the queue before it is full: the pass that
 * started tasks is followed by another from the top, which must find the
 * tasks this step claimed taken, not claim them a second time. Two handler
 * names, their tasks interleaved, so that the step merges two reads ahead. */
static void test_a_batch_that_reaches_the_end_of_the_queue_runs_each_task_once(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    CHECK_OK(outlive_tasks_set_completion_batch(store, OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH));
    char label[16];
    for (int i = 0; i < 12; i++) {
        snprintf(label, sizeof label, "t%02d", i);
        CHECK_OK(add(store, i % 2 ? "local_judge" : "local_record", label, NULL, NULL, NULL));
    }
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 12));
    /* Dispatches more: a task claimed twice would be called again. */
    for (int i = 0; i < 10; i++) outlive_loop_dispatch(outlive_store_loop(store), 10);
    CHECK_MSG(call_count == 12, "%d calls", call_count);
    for (int i = 0; i < 12 && i < call_count; i++) {
        snprintf(label, sizeof label, "t%02d", i);
        CHECK_MSG(!strcmp(calls[i], label), "call %d was %.16s", i, calls[i]);
    }
    CHECK(pending(store) == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Each chained task adds the next, as a busy producer would: the run goes on
 * across dispatches instead of holding one outlive_loop_dispatch() call until
 * the queue is empty, so the host's loop keeps turning. */
#define CHAIN_LENGTH 1000
static outlive_store *chain_store;
static int chain_ran;

static void local_chain(void) {
    if (++chain_ran >= CHAIN_LENGTH) return;
    outlive_handler *next = NULL;
    outlive_handler_new("local_chain", NULL, NULL, &next);
    outlive_task_add(chain_store, next, NULL, NULL, 0, NULL);
    outlive_handler_free(next);
}

static void test_a_long_run_hands_the_loop_back_between_dispatches(void) {
    const char *dir = harness_store_location();
    outlive_handler_register("local_chain", "", local_chain);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, &options, &chain_store));
    outlive_tasks_set_triggers(chain_store, 0, 1e6);
    chain_ran = 0;
    outlive_handler *first = NULL;
    outlive_handler_new("local_chain", NULL, NULL, &first);
    CHECK_OK(outlive_task_add(chain_store, first, NULL, NULL, 0, NULL));
    outlive_handler_free(first);
    CHECK_OK(outlive_tasks_run_now(chain_store));
    CHECK_OK(outlive_loop_dispatch(outlive_store_loop(chain_store), 0));
    int in_first_dispatch = chain_ran;
    int dispatches = 1;
    size_t left = 999;
    double deadline = monotonic() + 60;
    /* The last task's success is recorded in a later step than its call. */
    while ((chain_ran < CHAIN_LENGTH || left > 0) && monotonic() < deadline) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(chain_store), 100));
        CHECK_OK(outlive_tasks_count(chain_store, &left));
        dispatches++;
    }
    CHECK_MSG(in_first_dispatch >= 1 && in_first_dispatch < CHAIN_LENGTH,
              "the first dispatch ran %d of %d chained tasks", in_first_dispatch, CHAIN_LENGTH);
    CHECK_MSG(chain_ran == CHAIN_LENGTH && left == 0, "%d of %d ran in %d dispatches, %zu left",
              chain_ran, CHAIN_LENGTH, dispatches, left);
    outlive_store_close(chain_store);
    harness_remove_store(dir);
}

static void test_bad_input_gets_precise_statuses_and_stores_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_handler *work = NULL;
    outlive_handler_new("local_record", NULL, NULL, &work);
    char id[OUTLIVE_ID_SIZE];
    const char bad_utf8[] = { 'g', (char)0xC3, 0 };
    const char *members_with_null[1] = { NULL };
    char long_group[OUTLIVE_TASK_MAX_GROUP_ID_SIZE + 2];
    memset(long_group, 'x', sizeof long_group - 1);
    long_group[sizeof long_group - 1] = 0;
    outlive_task_spec spec_for_size = { OUTLIVE_TASK_SPEC_VERSION, work, NULL, NULL, 0 };
    CHECK_STATUS(outlive_task_add(NULL, work, NULL, NULL, 0, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_completion_batch(NULL, 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_completion_batch(store, 0), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "completion batch") != NULL);
    CHECK_STATUS(outlive_tasks_set_completion_batch(store, OUTLIVE_TASK_MAX_COMPLETION_BATCH + 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, NULL, NULL, NULL, 0, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, work, bad_utf8, NULL, 0, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "group_start") != NULL);
    CHECK_STATUS(outlive_task_add(store, work, "", NULL, 0, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, work, long_group, NULL, 0, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, work, NULL, NULL, 1, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, work, NULL, members_with_null, 1, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "group_members[0]") != NULL);
    CHECK_STATUS(outlive_task_add(store, work, NULL, members_with_null, OUTLIVE_TASK_MAX_GROUP_MEMBERS + 1, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_add_batch(store, NULL, 1, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_add(store, work, NULL, members_with_null, (size_t)-1, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_add_batch(store, &spec_for_size, (size_t)-1, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_triggers(store, (size_t)-1, 1), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_task_spec spec = { OUTLIVE_TASK_SPEC_VERSION, work, NULL, NULL, 0 };
    CHECK_STATUS(outlive_tasks_add_batch(store, &spec, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler *invalidated = NULL;
    outlive_handler_new("local_record", NULL, NULL, &invalidated);
    CHECK_OK(outlive_handler_invalidate(invalidated, NULL));
    CHECK_STATUS(outlive_task_add(store, invalidated, NULL, NULL, 0, id), OUTLIVE_E_INVALIDATED);
    outlive_handler_free(invalidated);

    CHECK_STATUS(outlive_tasks_run_now(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_triggers(store, 1, NAN), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_triggers(store, 1, -1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_triggers(store, 1, INFINITY), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_count(store, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_count_dead(NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    CHECK_STATUS(outlive_tasks_set_policy(store, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    policy.version = 99;
    CHECK_STATUS(outlive_tasks_set_policy(store, &policy), OUTLIVE_E_INVALID_ARGUMENT);
    policy.version = OUTLIVE_TASK_POLICY_VERSION;
    policy.timeout = NAN;
    CHECK_STATUS(outlive_tasks_set_policy(store, &policy), OUTLIVE_E_INVALID_ARGUMENT);
    policy.timeout = 60;
    policy.max_attempts = 0;
    CHECK_STATUS(outlive_tasks_set_policy(store, &policy), OUTLIVE_E_INVALID_ARGUMENT);
    policy.max_attempts = 5;
    policy.max_backoff = policy.initial_backoff / 2;
    CHECK_STATUS(outlive_tasks_set_policy(store, &policy), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_concurrency(store, 0), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_tasks_set_concurrency(store, 100000), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_task_list *list = (outlive_task_list *)1;
    size_t count = 7;
    CHECK_STATUS(outlive_task_list_new(store, "nope", 10, &list), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_list_new(store, NULL, 10, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_list_new(store, "00000000-0000-4000-8000-000000000000", 10, &list), OUTLIVE_E_NOT_FOUND);
    CHECK(list == (outlive_task_list *)1 && count == 7);  /* outputs untouched on failure */
    CHECK_STATUS(outlive_task_delete(store, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_delete(store, bad_utf8), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_task_list_free(NULL);

    CHECK(pending(store) == 0);
    /* An empty queue lists as an empty list; limit 0 is no limit, as in every list. */
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &list));
    count = outlive_task_list_count(list);
    CHECK(list != NULL && count == 0 && outlive_task_list_id(list, 0) == NULL);
    outlive_task_list_free(list);
    outlive_handler_free(work);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* `handler` serialized, in a buffer of the caller's (its size in *size). */
static bool serialized(const outlive_handler *handler, unsigned char *out, size_t capacity, size_t *size) {
    void *bytes = NULL;
    if (outlive_handler_serialize(handler, &bytes, size) != OUTLIVE_OK || *size > capacity) return false;
    memcpy(out, bytes, *size);
    outlive_free(bytes);
    return true;
}

static void test_a_task_added_as_serialized_bytes_runs_as_one_added_as_a_handler(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    unsigned char bytes[256];
    size_t size = 0;
    char ids[3][OUTLIVE_ID_SIZE];
    const char *labels[] = { "first", "second", "third" };
    /* Without options, with a priority, and through a handle's add between them. */
    outlive_handler *work = labeled("local_record", labels[0]);
    CHECK(work && serialized(work, bytes, sizeof bytes, &size));
    CHECK_OK(outlive_task_enqueue_serialized(store, bytes, size, NULL, ids[0], NULL));
    outlive_handler_free(work);
    CHECK_OK(add(store, "local_record", labels[1], NULL, NULL, ids[1]));
    work = labeled("local_judge", labels[2]);
    CHECK(work && serialized(work, bytes, sizeof bytes, &size));
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.unique_key = "only-one";
    bool existing = true;
    CHECK_OK(outlive_task_enqueue_serialized(store, bytes, size, &options, ids[2], &existing));
    CHECK(!existing);
    /* The key is held: nothing added, the holder's id returned. */
    char holder[OUTLIVE_ID_SIZE] = "";
    CHECK_OK(outlive_task_enqueue_serialized(store, bytes, size, &options, holder, &existing));
    CHECK(existing && !strcmp(holder, ids[2]));
    outlive_handler_free(work);
    CHECK(pending(store) == 3);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 3);
    for (size_t i = 0; i < 3 && i < outlive_task_list_count(list); i++) CHECK(!strcmp(outlive_task_list_id(list, i), ids[i]));
    CHECK(!strcmp(outlive_task_list_handler_name(list, 2), "local_judge"));
    outlive_task_list_free(list);
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(run_until(store, 0, 3));
    for (int i = 0; i < 3; i++) CHECK_MSG(!strcmp(calls[i], labels[i]), "call %d: %.60s", i, calls[i]);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_bad_serialized_handlers_get_precise_statuses_and_store_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    unsigned char good[256], bad[256];
    size_t size = 0;
    outlive_handler *work = labeled("local_record", "label");
    CHECK(work && serialized(work, good, sizeof good, &size));
    char id[OUTLIVE_ID_SIZE] = "untouched";
    CHECK_STATUS(outlive_task_enqueue_serialized(NULL, good, size, NULL, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_enqueue_serialized(store, NULL, size, NULL, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_enqueue_serialized(store, NULL, 0, NULL, id, NULL), OUTLIVE_E_CORRUPT);
    CHECK_STATUS(outlive_task_enqueue_serialized(store, good, (size_t)-1, NULL, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    /* Every truncation, and a byte past the end. */
    for (size_t cut = 0; cut < size; cut++)
        CHECK_STATUS(outlive_task_enqueue_serialized(store, good, cut, NULL, id, NULL), OUTLIVE_E_CORRUPT);
    memcpy(bad, good, size);
    bad[size] = 0;
    CHECK_STATUS(outlive_task_enqueue_serialized(store, bad, size + 1, NULL, id, NULL), OUTLIVE_E_CORRUPT);
    CHECK(strstr(outlive_last_error(), "trailing") != NULL);
    /* A newer format, a bad magic, a name the handlers' rules refuse. */
    memcpy(bad, good, size);
    bad[3] = 2;
    CHECK_STATUS(outlive_task_enqueue_serialized(store, bad, size, NULL, id, NULL), OUTLIVE_E_VERSION);
    bad[3] = good[3];
    bad[0] = 'X';
    CHECK_STATUS(outlive_task_enqueue_serialized(store, bad, size, NULL, id, NULL), OUTLIVE_E_CORRUPT);
    memcpy(bad, good, size);
    bad[6] = ' ';  /* " ocal_record": a byte no handler name has */
    CHECK_STATUS(outlive_task_enqueue_serialized(store, bad, size, NULL, id, NULL), OUTLIVE_E_CORRUPT);
    /* An invalidated handler, and one of the library's own. */
    memcpy(bad, good, size);
    bad[4] |= 1;
    CHECK_STATUS(outlive_task_enqueue_serialized(store, bad, size, NULL, id, NULL), OUTLIVE_E_INVALIDATED);
    outlive_handler *own = NULL;
    unsigned char own_bytes[256];
    size_t own_size = 0;
    CHECK_OK(outlive_handler_new("outlive.task_completion", NULL, NULL, &own));
    CHECK(serialized(own, own_bytes, sizeof own_bytes, &own_size));
    CHECK_STATUS(outlive_task_enqueue_serialized(store, own_bytes, own_size, NULL, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "library's own") != NULL);
    outlive_handler_free(own);
    /* The options are checked as outlive_task_enqueue checks them. */
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.version = 99;
    CHECK_STATUS(outlive_task_enqueue_serialized(store, good, size, &options, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.version = OUTLIVE_TASK_OPTIONS_VERSION;
    options.queue = "never-declared";
    CHECK_STATUS(outlive_task_enqueue_serialized(store, good, size, &options, id, NULL), OUTLIVE_E_NOT_FOUND);
    options.queue = NULL;
    options.delay_seconds = -1;
    CHECK_STATUS(outlive_task_enqueue_serialized(store, good, size, &options, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(!strcmp(id, "untouched"));
    CHECK(pending(store) == 0);
    /* Every byte changed in turn: a status for each, never a crash, and the
     * queue holds exactly the tasks the calls said they added. */
    size_t added = 0;
    for (size_t at = 0; at < size; at++) {
        for (unsigned flip = 1; flip < 256; flip <<= 1) {
            memcpy(bad, good, size);
            bad[at] ^= (unsigned char)flip;
            outlive_status status = outlive_task_enqueue_serialized(store, bad, size, NULL, NULL, NULL);
            CHECK_MSG(status == OUTLIVE_OK || status == OUTLIVE_E_CORRUPT || status == OUTLIVE_E_VERSION ||
                      status == OUTLIVE_E_INVALIDATED || status == OUTLIVE_E_INVALID_ARGUMENT,
                      "byte %zu ^ %u: status %d", at, flip, (int)status);
            if (status == OUTLIVE_OK) added++;
        }
    }
    CHECK(added > 0 && pending(store) == added);
    outlive_handler_free(work);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* What SQLite's triggers refuse (a task or an ordered queue's runner claimed
 * by a run the store no longer registers), PostgreSQL refuses by foreign keys
 * on the runs: a handle whose run another process ended starts no task of a
 * parallel queue nor of an ordered one, and a live handle runs them. */
static void test_a_run_the_store_no_longer_has_starts_no_task_on_postgresql(void) {
    POSTGRESQL_ONLY();
    const char *dir = harness_store_location();
    outlive_store *ended = open_queue(dir);
    CHECK(ended);
    CHECK_OK(outlive_queue_declare(ended, "wide", OUTLIVE_QUEUE_PARALLEL));
    CHECK_OK(outlive_queue_serve(ended, "wide", 4));
    char sql[512];
    snprintf(sql, sizeof sql, "DELETE FROM outlive_runs WHERE run_id = '%s'", outlive_store_run_id(ended));
    CHECK(harness_psql(dir, sql, NULL, 0));
    outlive_handler *work = labeled("local_record", "never here");
    CHECK(work);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "wide";
    CHECK_OK(outlive_task_enqueue(ended, work, &options, NULL, NULL));
    CHECK_OK(outlive_task_enqueue(ended, work, NULL, NULL, NULL));
    outlive_handler_free(work);
    CHECK_OK(outlive_tasks_run_now(ended));
    harness_dispatch_for(outlive_store_loop(ended), 1.0);
    CHECK_MSG(call_count == 0, "a run the store no longer has ran %d task(s)", call_count);
    outlive_store_close(ended);
    outlive_store *live = open_queue(dir);
    CHECK(live);
    CHECK_OK(outlive_queue_serve(live, "wide", 4));
    CHECK_OK(outlive_tasks_run_now(live));
    CHECK(run_until(live, 0, 2));
    CHECK(call_count == 2);
    outlive_store_close(live);
}

/* The fence of an attempt (its task, its token and its run): a run that
 * others declared dead while its attempt was in flight (the server ended its
 * lock session, as a cut link would) completes it late, after another run
 * took the task over: the late completion is refused and changes nothing of
 * the attempt that runs now, which alone ends the task. */
static void test_a_run_declared_dead_completes_late_and_overwrites_nothing_on_postgresql(void) {
    POSTGRESQL_ONLY();
    const char *dir = harness_store_location();
    outlive_store *victim = open_queue(dir);
    CHECK(victim);
    CHECK_OK(outlive_queue_declare(victim, "wide", OUTLIVE_QUEUE_PARALLEL));
    outlive_handler *work = labeled("local_keep", "taken over");
    CHECK(work);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "wide";
    CHECK_OK(outlive_task_enqueue(victim, work, &options, NULL, NULL));
    outlive_handler_free(work);
    CHECK_OK(outlive_queue_serve(victim, "wide", 4));
    for (int round = 0; round < 400 && call_count == 0; round++) CHECK_OK(outlive_loop_dispatch(outlive_store_loop(victim), 20));
    CHECK_MSG(call_count == 1 && kept_completion, "the victim started %d task(s)", call_count);
    outlive_handler *late = kept_completion;
    kept_completion = NULL;
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN outlive_runs r "
             "ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid = r.lock_key::bigint::oid "
             "AND l.classid = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) WHERE r.run_id = '%s'",
             outlive_store_run_id(victim));
    CHECK(harness_psql(dir, sql, NULL, 0));
    /* Another handle ends the dead run (its attempt returns to ready) and takes
     * the task over; it checks the runs every second (the bound's least, 2 s). */
    call_count = 0;
    outlive_store *rescuer = NULL;
    outlive_store_options quick = OUTLIVE_STORE_OPTIONS_INIT;
    quick.liveness_seconds = 2;
    CHECK_OK(outlive_store_open(dir, "rescuer", NULL, &quick, &rescuer));
    CHECK_OK(outlive_tasks_set_triggers(rescuer, 0, 1e6));
    CHECK_OK(outlive_queue_serve(rescuer, "wide", 4));
    for (int round = 0; round < 1500 && call_count == 0; round++) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(rescuer), 20));
    }
    CHECK_MSG(call_count == 1 && kept_completion, "the rescuer started %d task(s)", call_count);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", false);
    outlive_args_set_string(args, "error", "late");
    CHECK_STATUS(outlive_handler_call(late, args), OUTLIVE_E_STATE);
    outlive_args_free(args);
    outlive_handler_free(late);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(rescuer, NULL, 10, &list));
    CHECK(outlive_task_list_count(list) == 1 && outlive_task_list_state(list, 0) == OUTLIVE_TASK_RUNNING);
    CHECK_MSG(!outlive_task_list_last_error(list, 0) || !strstr(outlive_task_list_last_error(list, 0), "late"),
              "%s", outlive_task_list_last_error(list, 0));
    outlive_task_list_free(list);
    finish(kept_completion, true);
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    CHECK(run_until(rescuer, 0, 1));
    size_t dead = 99;
    CHECK_OK(outlive_tasks_count_dead(rescuer, &dead));
    CHECK(dead == 0);
    outlive_store_close(rescuer);
    outlive_store_close(victim);
}

/* The store's schema is untrusted input: the task queue's own trigger
 * function, changed, is refused like any function Outlive did not make. */
static void test_a_changed_count_trigger_function_is_refused_on_postgresql(void) {
    POSTGRESQL_ONLY();
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_store_close(store);
    CHECK(harness_psql(dir, "CREATE OR REPLACE FUNCTION outlive_tasks_counted_count() RETURNS trigger LANGUAGE plpgsql "
                             "AS 'BEGIN RETURN NULL; END'", NULL, 0));
    CHECK_STATUS(outlive_store_open(dir, "app", NULL, NULL, &store), OUTLIVE_E_CORRUPT);
    CHECK_MSG(strstr(outlive_last_error(), "did not make"), "%s", outlive_last_error());
}

HARNESS_MAIN(
    T(test_tasks_run_in_order_and_success_deletes_them),
    T(test_batch_adds_in_one_transaction_and_lists_in_order),
    T(test_failure_backs_off_and_the_task_runs_again_by_itself),
    T(test_no_completion_within_timeout_fails_and_late_completion_is_ignored),
    T(test_dead_task_is_kept_listed_and_retryable),
    T(test_failed_group_start_skips_members_and_the_rest_runs),
    T(test_a_long_run_hands_the_loop_back_between_dispatches),
    T(test_batches_keep_order_and_a_member_waits_for_its_start_s_committed_success),
    T(test_a_batch_that_reaches_the_end_of_the_queue_runs_each_task_once),
    T(test_bad_input_gets_precise_statuses_and_stores_nothing),
    T(test_a_task_added_as_serialized_bytes_runs_as_one_added_as_a_handler),
    T(test_bad_serialized_handlers_get_precise_statuses_and_store_nothing),
    T(test_a_run_the_store_no_longer_has_starts_no_task_on_postgresql),
    T(test_a_run_declared_dead_completes_late_and_overwrites_nothing_on_postgresql),
    T(test_a_changed_count_trigger_function_is_refused_on_postgresql),
)
