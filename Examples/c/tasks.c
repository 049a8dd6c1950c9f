/* The task queue: durable background work (a handler each) run in order by
 * one runner at a time across all processes, retried with backoff, grouped,
 * and kept as "dead" when it keeps failing — never dropped silently.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o tasks Examples/c/tasks.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./tasks /tmp/tasks-example
 */
#include <inttypes.h>
#include <outlive.h>
#include <stdio.h>

/* A task handler that succeeds when it returns (it declares no completion).
 * task_id and attempt are bound by the library at call time. */
OUTLIVE_HANDLER(upload, OUTLIVE_ID(file), OUTLIVE_INTEGER(attempt)) {
    printf("upload %s (attempt %" PRId64 ")\n", outlive_object_string(file), attempt);
}

/* A handler that declares `completion` ends its attempt by calling it, exactly
 * once, with success (BOOL) and optionally error (ID) — from any thread or
 * process, now or later. "identify" fails its first attempt. */
OUTLIVE_HANDLER(identify, OUTLIVE_ID(profile), OUTLIVE_INTEGER(attempt), OUTLIVE_HANDLER_ARG(completion)) {
    bool ok = attempt > 1;
    printf("identify %s (attempt %" PRId64 "): %s\n", outlive_object_string(profile), attempt,
           ok ? "ok" : "server unavailable");
    outlive_args *result = NULL;
    outlive_args_new(&result);
    outlive_args_set_bool(result, "success", ok);
    if (!ok) outlive_args_set_string(result, "error", "server unavailable");
    outlive_handler_call(completion, result);
    outlive_args_free(result);
}

/* A member of the group "profile:A": never runs while the task that starts
 * that group is stored, so it waits for identify to succeed. */
OUTLIVE_HANDLER(track, OUTLIVE_ID(profile), OUTLIVE_ID(event)) {
    printf("track %s for %s\n", outlive_object_string(event), outlive_object_string(profile));
}

/* Always fails: dead after max_attempts. */
OUTLIVE_HANDLER(doomed, OUTLIVE_HANDLER_ARG(completion)) {
    outlive_args *result = NULL;
    outlive_args_new(&result);
    outlive_args_set_bool(result, "success", false);
    outlive_args_set_string(result, "error", "gone for good");
    outlive_handler_call(completion, result);
    outlive_args_free(result);
}

static outlive_handler *make(const char *name, const char *key, const char *value) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    if (key) outlive_args_set_string(bound, key, value);
    outlive_handler *handler = NULL;
    outlive_handler_new(name, NULL, bound, &handler);
    outlive_args_free(bound);
    return handler;
}

static void add(outlive_store *store, outlive_handler *work, const char *group_start, const char *member) {
    const char *members[1] = {member};
    if (outlive_task_add(store, work, group_start, member ? members : NULL, member ? 1 : 0, NULL) != OUTLIVE_OK)
        fprintf(stderr, "task_add: %s\n", outlive_last_error());
    outlive_handler_free(work);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "tasks-example", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    /* Quick retries for the example (defaults: 1 s doubling to 1 h, 20 attempts). */
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.initial_backoff = 0.05;
    policy.max_backoff = 0.2;
    policy.max_attempts = 3;
    outlive_tasks_set_policy(store, &policy);

    add(store, make("identify", "profile", "A"), "profile:A", NULL);
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "profile", "A");
    outlive_args_set_string(bound, "event", "opened the app");
    outlive_handler *tracking = NULL;
    outlive_handler_new("track", NULL, bound, &tracking);
    outlive_args_free(bound);
    add(store, tracking, NULL, "profile:A");
    add(store, make("upload", "file", "notes.txt"), NULL, NULL);
    add(store, make("doomed", NULL, NULL), NULL, NULL);

    size_t pending, dead = 0;
    outlive_tasks_count(store, &pending);
    printf("tasks pending: %zu\n", pending);

    /* Runs start by themselves (10 pending, or 30 s after an add); ask for one
     * now. It happens on the store's loop, inside outlive_loop_dispatch(). */
    outlive_tasks_run_now(store);
    for (int round = 0; round < 200 && (pending > 0); round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        outlive_tasks_count(store, &pending);
    }
    outlive_tasks_count_dead(store, &dead);
    printf("tasks pending: %zu, dead: %zu\n", pending, dead);

    /* A dead task is kept and listed with its last error, until retried or deleted. */
    outlive_task_list *tasks = NULL;
    if (outlive_task_list_new(store, NULL, 100, &tasks) == OUTLIVE_OK) {
        for (size_t i = 0; i < outlive_task_list_count(tasks); i++) {
            printf("listed: %s %s after %" PRIu32 " attempts: %s\n", outlive_task_list_handler_name(tasks, i),
                   outlive_task_list_state(tasks, i) == OUTLIVE_TASK_DEAD ? "dead" : "not dead", outlive_task_list_attempts(tasks, i),
                   outlive_task_list_last_error(tasks, i) ? outlive_task_list_last_error(tasks, i) : "-");
            outlive_task_delete(store, outlive_task_list_id(tasks, i));
        }
        outlive_task_list_free(tasks);
    }
    outlive_store_close(store);
    return 0;
}
