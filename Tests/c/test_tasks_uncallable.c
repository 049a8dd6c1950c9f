/* Tasks that can never run as stored are not left to fail quietly: a call
 * whose stored arguments do not fit the handler's signature goes dead at its
 * first attempt (not after max_attempts retries over hours), and a task whose
 * handler name resolves nowhere in the running process is reported — a
 * warning per run, and its last error for `outlive tasks` — while it waits. */
#include "harness.h"
#include <time.h>

static int calls;
static char logged[8192];

static void uncallable_takes_count(int64_t count) {
    (void)count;
    calls++;
}

static void keep_log(outlive_log_level level, const char *message, void *context) {
    (void)level;
    (void)context;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

/* The last 600 bytes of the log, for a failure message. */
static const char *log_tail(void) {
    size_t used = strlen(logged);
    return used > 600 ? logged + used - 600 : logged;
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
        outlive_handler_register("uncallable_takes_count", "INTEGER count", (void (*)(void))uncallable_takes_count);
    }
    calls = 0;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "app", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    outlive_tasks_set_triggers(store, 0, 1e6);
    return store;
}

/* Adds a task of `handler` bound with `bound` (NULL: no arguments). */
static void add(outlive_store *store, const char *handler, outlive_args *bound, char out_id[OUTLIVE_ID_SIZE]) {
    outlive_handler *work = NULL;
    CHECK_OK(outlive_handler_new(handler, NULL, bound, &work));
    CHECK_OK(outlive_task_add(store, work, NULL, NULL, 0, out_id));
    outlive_handler_free(work);
    outlive_args_free(bound);
}

static size_t count_dead(outlive_store *store) {
    size_t dead = 0;
    outlive_tasks_count_dead(store, &dead);
    return dead;
}

static void test_a_call_that_can_never_succeed_is_dead_at_its_first_attempt(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.initial_backoff = 0;
    policy.max_backoff = 0;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));   /* 20 attempts, at once: a retry would show */
    char missing[OUTLIVE_ID_SIZE], mismatched[OUTLIVE_ID_SIZE], good[OUTLIVE_ID_SIZE];
    add(store, "uncallable_takes_count", NULL, missing);
    outlive_args *wrong = NULL;
    outlive_args_new(&wrong);
    outlive_args_set_string(wrong, "count", "three");
    add(store, "uncallable_takes_count", wrong, mismatched);
    outlive_args *right = NULL;
    outlive_args_new(&right);
    outlive_args_set_integer(right, "count", 3);
    add(store, "uncallable_takes_count", right, good);
    CHECK_OK(outlive_tasks_run_now(store));
    size_t pending = 3;
    double deadline = monotonic() + 20;
    while ((pending > 0 || calls < 1) && monotonic() < deadline) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
        CHECK_OK(outlive_tasks_count(store, &pending));
    }
    CHECK(pending == 0 && calls == 1 && count_dead(store) == 2);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 2);
    for (size_t i = 0; i < outlive_task_list_count(list); i++) {
        const char *error = outlive_task_list_last_error(list, i);
        CHECK(outlive_task_list_state(list, i) == OUTLIVE_TASK_DEAD);
        CHECK_MSG(outlive_task_list_attempts(list, i) == 1, "attempts: %u", outlive_task_list_attempts(list, i));
        CHECK_MSG(error && strstr(error, "cannot be called"), "last error: %s", error ? error : "(none)");
        bool is_missing = !strcmp(outlive_task_list_id(list, i), missing);
        CHECK(is_missing || !strcmp(outlive_task_list_id(list, i), mismatched));
    }
    outlive_task_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_a_task_of_a_name_declared_nowhere_here_is_reported_and_waits(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_queue(dir);
    CHECK(store);
    logged[0] = '\0';
    CHECK_OK(outlive_log_set_handler(keep_log, OUTLIVE_LOG_WARNING, NULL, NULL));
    char first[OUTLIVE_ID_SIZE], second[OUTLIVE_ID_SIZE];
    add(store, "uncallable_misspeled", NULL, first);
    add(store, "uncallable_misspeled", NULL, second);
    CHECK_OK(outlive_tasks_run_now(store));
    double deadline = monotonic() + 20;
    while (!strstr(logged, "uncallable_misspeled") && monotonic() < deadline)
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
    for (int i = 0; i < 5; i++) CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 10));
    CHECK_MSG(strstr(logged, "no handler of that name is declared in this process"), "log:\n%s", log_tail());
    /* Once per run, not once per task. */
    const char *again = strstr(strstr(logged, "uncallable_misspeled") + 1, "uncallable_misspeled");
    CHECK_MSG(again == NULL, "log:\n%s", log_tail());
    /* A second run says it again. */
    logged[0] = '\0';
    CHECK_OK(outlive_tasks_run_now(store));
    deadline = monotonic() + 20;
    while (!strstr(logged, "uncallable_misspeled") && monotonic() < deadline)
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
    CHECK_MSG(strstr(logged, "uncallable_misspeled"), "log:\n%s", log_tail());
    outlive_log_set_handler(NULL, OUTLIVE_LOG_WARNING, NULL, NULL);

    /* Both wait, not attempted, neither failed nor dead; the first says why. */
    size_t pending = 0;
    CHECK_OK(outlive_tasks_count(store, &pending));
    CHECK(pending == 2 && count_dead(store) == 0);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 2 && !strcmp(outlive_task_list_id(list, 0), first));
    const char *error = outlive_task_list_last_error(list, 0);
    CHECK_MSG(error && strstr(error, "no handler named uncallable_misspeled is declared in process app"), "last error: %s",
              error ? error : "(none)");
    for (size_t i = 0; i < 2; i++) {
        CHECK(outlive_task_list_state(list, i) == OUTLIVE_TASK_PENDING && outlive_task_list_attempts(list, i) == 0);
    }
    outlive_task_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
}

HARNESS_MAIN(
    T(test_a_call_that_can_never_succeed_is_dead_at_its_first_attempt),
    T(test_a_task_of_a_name_declared_nowhere_here_is_reported_and_waits),
)
