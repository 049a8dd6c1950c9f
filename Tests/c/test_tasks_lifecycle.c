/* What happens to one task, across real processes (tasks_lifecycle_peer):
 * unique keys under concurrent adders, cancellation of pending and running
 * tasks, results and progress delivered as signals (also to a process started
 * after the task finished), the add and its result consumer in one commit
 * (a kill -9 loop), and bad input that gets a precise status and stores nothing. */
#include "harness.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char log_path[4096];
static outlive_store *current;

/* What this process's result consumer (local_result) received, in order. */
struct delivery {
    uint64_t version;
    bool terminated;
    char task_id[OUTLIVE_ID_SIZE];
    char outcome[32];
    char error[256];
    char url[128];
};
static struct delivery deliveries[32];
static _Atomic int delivery_count;
static _Atomic int terminated_count;
static outlive_handler *kept_completion;
static outlive_status extra_status;

static void copy_text(char *into, size_t size, const outlive_object *value) {
    snprintf(into, size, "%s", value ? outlive_object_string(value) : "");
}

static void local_result(uint64_t version, bool terminated, const outlive_object *task_id, const outlive_object *outcome,
                         const outlive_object *error, const outlive_object *url) {
    int n = delivery_count;
    if (n >= 32) return;
    struct delivery *d = &deliveries[n];
    d->version = version;
    d->terminated = terminated;
    copy_text(d->task_id, sizeof d->task_id, task_id);
    copy_text(d->outcome, sizeof d->outcome, outcome);
    copy_text(d->error, sizeof d->error, error);
    copy_text(d->url, sizeof d->url, url);
    delivery_count = n + 1;
    if (terminated) terminated_count++;
}

static void complete(const outlive_handler *completion, bool success, const char *extra_name, outlive_status *out) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", success);
    if (!success) outlive_args_set_string(args, "error", "broken");
    if (extra_name) outlive_args_set_string(args, extra_name, "value");
    outlive_status status = outlive_handler_call(completion, args);
    if (out) *out = status;
    outlive_args_free(args);
}

static void local_fail(const outlive_handler *completion) { complete(completion, false, NULL, NULL); }

static void local_keep(const outlive_handler *completion) {
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    outlive_handler_copy(completion, &kept_completion);
}

/* A completion whose extra argument is one the result binds: refused, and the
 * attempt goes on; the second completion ends it. */
static void local_reserved_extra(const outlive_handler *completion) {
    complete(completion, true, "cancelled", &extra_status);
    complete(completion, true, "note", NULL);
}

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static outlive_store *open_store(const char *dir) {
    static bool registered;
    if (!registered) {
        registered = true;
        outlive_handler_register("local_result", "UINTEGER version, BOOL terminated, ID? task_id, ID? outcome, ID? error, ID? url",
                                 (void (*)(void))local_result);
        outlive_handler_register("local_fail", "HANDLER completion", (void (*)(void))local_fail);
        outlive_handler_register("local_keep", "HANDLER completion", (void (*)(void))local_keep);
        outlive_handler_register("local_reserved_extra", "HANDLER completion", (void (*)(void))local_reserved_extra);
    }
    delivery_count = 0;
    terminated_count = 0;
    harness_store_side_file(dir, ".log", log_path, sizeof log_path);
    unlink(log_path);
    setenv("LIFECYCLE_LOG", log_path, 1);
    unsetenv("LIFECYCLE_AWAIT_REPORTS");
    current = NULL;
    if (outlive_store_open(dir, "app", NULL, NULL, &current) != OUTLIVE_OK) return NULL;
    outlive_tasks_set_triggers(current, 0, 1e6);   /* the tests start runs */
    return current;
}

static void close_store(const char *dir) {
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    outlive_store_close(current);
    current = NULL;
    unlink(log_path);
    harness_remove_store(dir);
}

static outlive_handler *plain(const char *name) {
    outlive_handler *handler = NULL;
    outlive_handler_new(name, NULL, NULL, &handler);
    return handler;
}

/* Enqueues handler `name` with a unique key (nullable) and, with `signal`, a
 * result consumer `consumer` (nullable) of that lifetime. */
static outlive_status enqueue(const char *name, const char *key, const char *signal, const char *consumer,
                              outlive_lifetime lifetime, char out_id[OUTLIVE_ID_SIZE], bool *out_existing) {
    outlive_handler *work = plain(name);
    outlive_handler *reader = consumer ? plain(consumer) : NULL;
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.unique_key = key;
    options.result_signal = signal;
    options.result_consumer = reader;
    if (reader) options.result_lifetime = lifetime;
    outlive_status status = outlive_task_enqueue(current, work, &options, out_id, out_existing);
    outlive_handler_free(work);
    outlive_handler_free(reader);
    return status;
}

static pid_t spawn(const char *const *args, int *out_stdout) {
    char program[4096];
    snprintf(program, sizeof program, "%s/tasks_lifecycle_peer", harness_bin_dir());
    int pipe_fds[2] = { -1, -1 };
    if (out_stdout && pipe(pipe_fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (out_stdout) {
            dup2(pipe_fds[1], STDOUT_FILENO);
            close(pipe_fds[0]);
            close(pipe_fds[1]);
        }
        const char *argv[16] = { program };
        for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
        execv(program, (char *const *)argv);
        _exit(127);
    }
    if (out_stdout) {
        close(pipe_fds[1]);
        *out_stdout = pipe_fds[0];
    }
    return pid;
}

static int wait_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a peer to its end; its first line of output goes into `line`. */
static int run_peer(const char *const *args, char *line, size_t size) {
    int out = -1;
    pid_t pid = spawn(args, line ? &out : NULL);
    if (pid < 0) return -1;
    if (line) {
        ssize_t got = read(out, line, size - 1);
        line[got > 0 ? got : 0] = 0;
        line[strcspn(line, "\n")] = 0;
        close(out);
    }
    return wait_exit(pid);
}

/* Whether the log holds a line that starts with `prefix`, waiting at most `seconds`. */
static bool log_has(const char *prefix, double seconds) {
    double deadline = monotonic() + seconds;
    do {
        FILE *file = fopen(log_path, "r");
        if (file) {
            char line[1024];
            bool found = false;
            while (!found && fgets(line, sizeof line, file)) found = strncmp(line, prefix, strlen(prefix)) == 0;
            fclose(file);
            if (found) return true;
        }
        usleep(5000);
    } while (monotonic() < deadline);
    return false;
}

static bool dispatch_until_terminated(int want, double seconds) {
    return harness_dispatch_until(outlive_store_loop(current), &terminated_count, want, seconds);
}

static size_t pending_count(void) {
    size_t pending = 99;
    outlive_tasks_count(current, &pending);
    return pending;
}

/* ── unique keys ─────────────────────────────────────────────────────────── */

static void test_four_processes_adding_the_same_keys_store_one_task_per_key(void) {
    enum { KEYS = 40, ADDERS = 4 };
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char results[4200];
    harness_store_side_file(dir, ".adds", results, sizeof results);
    unlink(results);
    const char *args[] = { dir, "adder", "add-unique", "40", results, NULL };
    pid_t adders[ADDERS];
    for (int i = 0; i < ADDERS; i++) adders[i] = spawn(args, NULL);
    for (int i = 0; i < ADDERS; i++) CHECK(wait_exit(adders[i]) == 0);

    /* Every adder got, for each key, the one task holding it; one of them added it. */
    char ids[KEYS][OUTLIVE_ID_SIZE];
    int added[KEYS] = {0}, seen[KEYS] = {0};
    memset(ids, 0, sizeof ids);
    FILE *file = fopen(results, "r");
    CHECK(file);
    char key[64], id[OUTLIVE_ID_SIZE];
    int existing = 0, lines = 0;
    while (fscanf(file, "%63s %36s %d", key, id, &existing) == 3) {
        int n = atoi(key + 4);
        CHECK(n >= 0 && n < KEYS);
        if (!ids[n][0]) snprintf(ids[n], OUTLIVE_ID_SIZE, "%s", id);
        CHECK_MSG(strcmp(ids[n], id) == 0, "%s was answered with two tasks: %s and %s", key, ids[n], id);
        if (!existing) added[n]++;
        seen[n]++;
        lines++;
    }
    fclose(file);
    unlink(results);
    CHECK(lines == KEYS * ADDERS);
    for (int n = 0; n < KEYS; n++) CHECK_MSG(added[n] == 1 && seen[n] == ADDERS, "key-%d added %d times", n, added[n]);

    CHECK(pending_count() == KEYS);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(current, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == KEYS);
    for (size_t i = 0; i < KEYS; i++) {
        const char *listed = outlive_task_list_unique_key(list, i);
        CHECK(listed && strncmp(listed, "key-", 4) == 0);
        CHECK(strcmp(outlive_task_list_id(list, i), ids[atoi(listed + 4)]) == 0);
        CHECK(strcmp(outlive_task_list_queue(list, i), "default") == 0 && outlive_task_list_priority(list, i) == 0);
        CHECK(!outlive_task_list_cancelled(list, i) && outlive_task_list_result_signal(list, i) == NULL);
    }
    outlive_task_list_free(list);
    close_store(dir);
}

static void test_a_dead_or_cancelled_task_no_longer_holds_its_key(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.max_attempts = 1;
    CHECK_OK(outlive_tasks_set_policy(current, &policy));
    char signal[OUTLIVE_ID_SIZE], first[OUTLIVE_ID_SIZE], again[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    bool existing = true;
    CHECK_OK(enqueue("local_fail", "k", signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, first, &existing));
    CHECK(!existing);
    CHECK_OK(enqueue("local_fail", "k", NULL, NULL, 0, again, &existing));
    CHECK(existing && strcmp(first, again) == 0);
    CHECK(pending_count() == 1);

    /* It dies: its death is its result, and the key is free. */
    CHECK_OK(outlive_tasks_run_now(current));
    CHECK(dispatch_until_terminated(1, 10));
    struct delivery *d = &deliveries[delivery_count - 1];
    CHECK(strcmp(d->outcome, "dead") == 0 && strcmp(d->error, "broken") == 0 && strcmp(d->task_id, first) == 0);
    size_t dead = 0;
    CHECK_OK(outlive_tasks_count_dead(current, &dead));
    CHECK(dead == 1);
    CHECK_STATUS(outlive_task_cancel(current, first, NULL), OUTLIVE_E_STATE);
    char second[OUTLIVE_ID_SIZE], third[OUTLIVE_ID_SIZE];
    CHECK_OK(enqueue("lifecycle_never", "k", NULL, NULL, 0, second, &existing));
    CHECK(!existing && strcmp(second, first) != 0);
    /* The dead one cannot take its key back while the new one holds it. */
    CHECK_STATUS(outlive_task_retry(current, first), OUTLIVE_E_STATE);

    /* A cancelled task frees the key at once. */
    bool running = true;
    CHECK_OK(outlive_task_cancel(current, second, &running));
    CHECK(!running);
    CHECK_OK(enqueue("lifecycle_never", "k", NULL, NULL, 0, third, &existing));
    CHECK(!existing && strcmp(third, second) != 0);
    CHECK(pending_count() == 1);
    close_store(dir);
}

static void test_a_result_consumer_added_with_a_held_key_waits_for_the_holders_result(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], other[OUTLIVE_ID_SIZE], first[OUTLIVE_ID_SIZE], again[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_signal_new_id(other);
    bool existing = true;
    CHECK_OK(enqueue("lifecycle_never", "report:A", signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, first, &existing));
    CHECK_OK(enqueue("lifecycle_never", "report:A", other, "local_result", OUTLIVE_LIFETIME_THIS_RUN, again, &existing));
    CHECK(existing && strcmp(first, again) == 0);
    size_t consumers = 0;
    CHECK_OK(outlive_signal_lookup(current, signal, NULL, &consumers, NULL));
    CHECK(consumers == 2);
    CHECK_STATUS(outlive_signal_lookup(current, other, NULL, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    /* Both hear of its end. */
    CHECK_OK(outlive_task_cancel(current, first, NULL));
    CHECK(dispatch_until_terminated(2, 10));
    CHECK(strcmp(deliveries[0].outcome, "cancelled") == 0 && strcmp(deliveries[1].outcome, "cancelled") == 0);
    close_store(dir);
}

/* ── cancellation ────────────────────────────────────────────────────────── */

static void test_a_pending_task_cancelled_from_another_process_never_runs(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], due[OUTLIVE_ID_SIZE], later[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    CHECK_OK(enqueue("lifecycle_record_never", NULL, signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, due, NULL));
    outlive_handler *work = plain("local_fail");
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.delay_seconds = 1000;   /* waiting for its due time */
    CHECK_OK(outlive_task_enqueue(current, work, &options, later, NULL));
    outlive_handler_free(work);
    CHECK(pending_count() == 2);

    char line[256];
    const char *cancel_due[] = { dir, "other", "cancel", due, NULL };
    CHECK(run_peer(cancel_due, line, sizeof line) == 0);
    CHECK_MSG(strcmp(line, "OUTLIVE_OK 0") == 0, "cancel said %s", line);
    const char *cancel_later[] = { dir, "other", "cancel", later, NULL };
    CHECK(run_peer(cancel_later, line, sizeof line) == 0);
    CHECK_MSG(strcmp(line, "OUTLIVE_OK 0") == 0, "cancel said %s", line);
    CHECK(pending_count() == 0);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(current, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 0);
    outlive_task_list_free(list);

    /* The consumer learns it, terminating; the signal's record goes with it. */
    CHECK(dispatch_until_terminated(1, 10));
    CHECK(delivery_count == 1 && strcmp(deliveries[0].outcome, "cancelled") == 0 && strcmp(deliveries[0].task_id, due) == 0);
    CHECK_STATUS(outlive_signal_lookup(current, signal, NULL, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    /* A second cancel finds nothing; a run starts nothing. */
    CHECK_STATUS(outlive_task_cancel(current, due, NULL), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_task_is_cancelled(current, due, &(bool){false}), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_tasks_run_now(current));
    harness_dispatch_for(outlive_store_loop(current), 0.1);
    size_t dead = 9;
    CHECK_OK(outlive_tasks_count_dead(current, &dead));
    CHECK(dead == 0);
    close_store(dir);
}

static void test_a_running_task_in_another_process_sees_its_cancellation_and_its_completion_is_ignored(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    CHECK_OK(enqueue("lifecycle_wait_cancel", "job", signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, id, NULL));
    const char *args[] = { dir, "worker", "run", "30", NULL };
    pid_t worker = spawn(args, NULL);
    char started[128];
    snprintf(started, sizeof started, "started %s", id);
    CHECK(log_has(started, 20));

    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(current, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 1 && outlive_task_list_state(list, 0) == OUTLIVE_TASK_RUNNING);
    CHECK(!outlive_task_list_cancelled(list, 0));
    outlive_task_list_free(list);

    bool running = false, cancelled = false;
    CHECK_OK(outlive_task_cancel(current, id, &running));
    CHECK(running);
    CHECK_STATUS(outlive_task_cancel(current, id, &running), OUTLIVE_E_STATE);
    CHECK_OK(outlive_task_is_cancelled(current, id, &cancelled));
    CHECK(cancelled);
    /* Only now may the handler complete (see lifecycle_wait_cancel). */
    char release[sizeof log_path + 16];
    snprintf(release, sizeof release, "%s.release", log_path);
    FILE *released = fopen(release, "w");
    CHECK(released && fclose(released) == 0);

    CHECK(wait_exit(worker) == 0);
    unlink(release);
    CHECK(log_has("saw-cancel", 0));
    CHECK_MSG(log_has("completion OUTLIVE_OK", 10), "the cancelled attempt's completion was refused");
    CHECK(dispatch_until_terminated(1, 10));
    CHECK(strcmp(deliveries[delivery_count - 1].outcome, "cancelled") == 0);
    CHECK(strcmp(deliveries[delivery_count - 1].task_id, id) == 0);
    CHECK_STATUS(outlive_task_is_cancelled(current, id, &cancelled), OUTLIVE_E_NOT_FOUND);
    CHECK(pending_count() == 0);
    close_store(dir);
}

/* ── results and progress ────────────────────────────────────────────────── */

static void test_a_result_reaches_a_process_started_after_the_task_finished(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    /* lifecycle_report resolves in no process alive now but the worker, which
     * is not an "app": the consumer waits for a later run of "app". */
    CHECK_OK(enqueue("lifecycle_progress", NULL, signal, "lifecycle_report", OUTLIVE_LIFETIME_PROCESS, id, NULL));
    const char *run[] = { dir, "worker", "run", "30", NULL };
    CHECK(run_peer(run, NULL, 0) == 0);
    CHECK(log_has("progress-completed OUTLIVE_OK", 0));
    CHECK(pending_count() == 0);
    uint64_t version = 0;
    size_t consumers = 0;
    bool terminated = false;
    CHECK_OK(outlive_signal_lookup(current, signal, &version, &consumers, &terminated));
    CHECK_MSG(version == 4 && consumers == 1 && terminated, "version %llu, %zu consumers", (unsigned long long)version, consumers);
    CHECK(!log_has("report", 0));

    const char *receive[] = { dir, "app", "receive", "30", NULL };
    CHECK(run_peer(receive, NULL, 0) == 0);
    char expected[256];
    snprintf(expected, sizeof expected, "report 4 1 %s success https://example.org/result -", id);
    CHECK_MSG(log_has(expected, 0), "the later process did not receive the result");
    CHECK_STATUS(outlive_signal_lookup(current, signal, NULL, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    close_store(dir);
}

static void test_progress_reaches_a_consumer_in_order_before_the_result(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    CHECK_OK(enqueue("lifecycle_progress", NULL, signal, "lifecycle_report", OUTLIVE_LIFETIME_PROCESS, id, NULL));
    const char *receive[] = { dir, "app", "receive", "30", NULL };
    pid_t receiver = spawn(receive, NULL);
    setenv("LIFECYCLE_AWAIT_REPORTS", "1", 1);
    const char *run[] = { dir, "worker", "run", "30", NULL };
    int worker = run_peer(run, NULL, 0);
    unsetenv("LIFECYCLE_AWAIT_REPORTS");
    CHECK(wait_exit(receiver) == 0);
    CHECK(worker == 0);

    FILE *file = fopen(log_path, "r");
    CHECK(file);
    char line[1024];
    int reports = 0;
    unsigned long long last = 0;
    bool ordered = true, final_last = false;
    while (fgets(line, sizeof line, file)) {
        unsigned long long version;
        int terminated;
        char task[64], outcome[64], url[128], step[16];
        if (sscanf(line, "report %llu %d %63s %63s %127s %15s", &version, &terminated, task, outcome, url, step) != 6) continue;
        reports++;
        ordered = ordered && version > last && !final_last;
        last = version;
        if (terminated) final_last = version == 4 && strcmp(outcome, "success") == 0 && strcmp(task, id) == 0;
        else ordered = ordered && atoi(step) == (int)version;
    }
    fclose(file);
    CHECK_MSG(reports == 4 && ordered && final_last, "%d reports, ordered %d, final last %d", reports, ordered, final_last);
    close_store(dir);
}

/* ── the add and its consumer: one commit ────────────────────────────────── */

static void test_a_task_and_its_result_consumer_exist_together_after_any_kill(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    int rounds = getenv("OUTLIVE_LIFECYCLE_KILLS") ? atoi(getenv("OUTLIVE_LIFECYCLE_KILLS")) : 25;
    unsigned seed = (unsigned)getpid();
    for (int round = 0; round < rounds; round++) {
        int out = -1;
        const char *args[] = { dir, "adder", "enqueue-loop", NULL };
        pid_t adder = spawn(args, &out);
        char ready[16] = "";
        ssize_t got = read(out, ready, 6);
        if (got != 6 || strncmp(ready, "READY", 5) != 0) {
            close(out);
            CHECK_MSG(false, "round %d: the adder did not start (read %zd, exit %d)", round, got, wait_exit(adder));
        }
        usleep(1000 + (unsigned)(rand_r(&seed) % 20000));
        kill(adder, SIGKILL);
        close(out);
        CHECK(wait_exit(adder) == 128 + SIGKILL);
    }
    /* Every task has its one consumer, every consumer its task. */
    outlive_task_list *tasks = NULL;
    outlive_signal_consumer_list *consumers = NULL;
    CHECK_OK(outlive_task_list_new(current, NULL, 0, &tasks));
    CHECK_OK(outlive_signal_consumer_list_new(current, NULL, NULL, 0, &consumers));
    size_t task_count = outlive_task_list_count(tasks), consumer_count = outlive_signal_consumer_list_count(consumers);
    bool matched = task_count == consumer_count && task_count > 0;
    for (size_t i = 0; matched && i < task_count; i++) {
        const char *signal = outlive_task_list_result_signal(tasks, i);
        size_t found = 0;
        for (size_t c = 0; signal && c < consumer_count; c++) found += strcmp(outlive_signal_consumer_list_signal_id(consumers, c), signal) == 0;
        matched = found == 1;
    }
    outlive_task_list_free(tasks);
    outlive_signal_consumer_list_free(consumers);
    CHECK_MSG(matched, "%zu tasks, %zu consumers after %d kills", task_count, consumer_count, rounds);
    close_store(dir);
}

/* ── bad input ───────────────────────────────────────────────────────────── */

static void test_bad_options_get_a_precise_status_and_store_nothing(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *work = plain("lifecycle_never"), *reader = plain("local_result");
    char long_key[OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE + 2];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = 0;
    const char *bad_keys[] = { "", long_key, "\xff\xfe" };
    for (size_t i = 0; i < 3; i++) {
        outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
        options.unique_key = bad_keys[i];
        CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    }
    long_key[OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE] = 0;   /* the longest allowed */
    const char *bad_signals[] = { "", "not-a-signal", "0123456789abcdef0123456789abcdef0123g", "\xff" };
    for (size_t i = 0; i < 4; i++) {
        outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
        options.result_signal = bad_signals[i];
        CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    }
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.result_consumer = reader;   /* without a signal */
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.result_signal = signal;
    options.result_lifetime = (outlive_lifetime)9;
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.result_lifetime = OUTLIVE_LIFETIME_THIS_RUN;
    options.result_delivery = (outlive_delivery)7;
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.result_delivery = 0;
    options.result_scope = "";
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.result_scope = NULL;
    options.result_consumer = (const outlive_handler *)current;   /* not a handler */
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.result_consumer = NULL;   /* a lifetime for no consumer */
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler *own = plain("outlive.task_completion");
    options.result_consumer = own;
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler_free(own);
    outlive_handler *spent = plain("local_result");
    CHECK_OK(outlive_handler_invalidate(spent, NULL));
    options.result_consumer = spent;
    CHECK_STATUS(outlive_task_enqueue(current, work, &options, NULL, NULL), OUTLIVE_E_INVALIDATED);
    outlive_handler_free(spent);

    /* Nothing stored: no task, no signal, no consumer. */
    CHECK(pending_count() == 0);
    outlive_signal_list *signals = NULL;
    CHECK_OK(outlive_signal_list_new(current, NULL, 0, &signals));
    CHECK(outlive_signal_list_count(signals) == 0);
    outlive_signal_list_free(signals);

    /* The longest key is accepted. */
    outlive_task_options longest = OUTLIVE_TASK_OPTIONS_INIT;
    longest.unique_key = long_key;
    bool existing = true;
    CHECK_OK(outlive_task_enqueue(current, work, &longest, NULL, &existing));
    CHECK(!existing);
    outlive_handler_free(work);
    outlive_handler_free(reader);
    close_store(dir);
}

static void test_bad_task_ids_get_a_precise_status(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    bool out = false;
    CHECK_STATUS(outlive_task_cancel(NULL, "00000000-0000-4000-8000-000000000000", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_cancel(current, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_cancel(current, "nope", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_cancel(current, "\xff", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_cancel(current, "00000000-0000-4000-8000-000000000000", &out), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_task_is_cancelled(current, "00000000-0000-4000-8000-000000000000", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_is_cancelled(current, "nope", &out), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_task_is_cancelled(current, "00000000-0000-4000-8000-000000000000", &out), OUTLIVE_E_NOT_FOUND);
    CHECK(!out);
    close_store(dir);
}

static void test_a_completion_with_a_reserved_extra_argument_is_refused_and_changes_nothing(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    extra_status = OUTLIVE_OK;
    CHECK_OK(enqueue("local_reserved_extra", NULL, signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL));
    CHECK_OK(outlive_tasks_run_now(current));
    CHECK(dispatch_until_terminated(1, 10));
    CHECK_MSG(extra_status == OUTLIVE_E_INVALID_ARGUMENT, "got %s", outlive_status_name(extra_status));
    CHECK(strcmp(deliveries[delivery_count - 1].outcome, "success") == 0);
    close_store(dir);
}

static void test_a_running_task_cancelled_here_ends_cancelled_whatever_its_completion_says(void) {
    const char *dir = harness_store_location();
    CHECK(open_store(dir));
    char signal[OUTLIVE_ID_SIZE], id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    CHECK_OK(enqueue("local_keep", "job", signal, "local_result", OUTLIVE_LIFETIME_THIS_RUN, id, NULL));
    CHECK_OK(outlive_tasks_run_now(current));
    for (int i = 0; i < 100 && !kept_completion; i++) outlive_loop_dispatch(outlive_store_loop(current), 10);
    CHECK(kept_completion);
    bool running = false;
    CHECK_OK(outlive_task_cancel(current, id, &running));
    CHECK(running);
    outlive_task_list *list = NULL;
    CHECK_OK(outlive_task_list_new(current, NULL, 0, &list));
    CHECK(outlive_task_list_count(list) == 1 && outlive_task_list_cancelled(list, 0));
    CHECK(outlive_task_list_state(list, 0) == OUTLIVE_TASK_RUNNING && strcmp(outlive_task_list_result_signal(list, 0), signal) == 0);
    outlive_task_list_free(list);
    /* Cancelled, it no longer holds its key, though it still runs. */
    char next[OUTLIVE_ID_SIZE];
    bool existing = true;
    CHECK_OK(enqueue("lifecycle_never", "job", NULL, NULL, 0, next, &existing));
    CHECK(!existing);
    complete(kept_completion, true, "url", NULL);
    CHECK(dispatch_until_terminated(1, 10));
    CHECK(strcmp(deliveries[0].outcome, "cancelled") == 0 && deliveries[0].url[0] == 0);
    CHECK(pending_count() == 1);   /* the new one */
    size_t dead = 9;
    CHECK_OK(outlive_tasks_count_dead(current, &dead));
    CHECK(dead == 0);
    /* A second completion of the ended attempt is refused, as after any end. */
    outlive_status again = OUTLIVE_OK;
    complete(kept_completion, true, NULL, &again);
    CHECK(again == OUTLIVE_E_STATE);
    close_store(dir);
}

HARNESS_MAIN(
    T(test_four_processes_adding_the_same_keys_store_one_task_per_key),
    T(test_a_dead_or_cancelled_task_no_longer_holds_its_key),
    T(test_a_result_consumer_added_with_a_held_key_waits_for_the_holders_result),
    T(test_a_pending_task_cancelled_from_another_process_never_runs),
    T(test_a_running_task_in_another_process_sees_its_cancellation_and_its_completion_is_ignored),
    T(test_a_running_task_cancelled_here_ends_cancelled_whatever_its_completion_says),
    T(test_a_result_reaches_a_process_started_after_the_task_finished),
    T(test_progress_reaches_a_consumer_in_order_before_the_result),
    T(test_a_task_and_its_result_consumer_exist_together_after_any_kill),
    T(test_bad_options_get_a_precise_status_and_store_nothing),
    T(test_bad_task_ids_get_a_precise_status),
    T(test_a_completion_with_a_reserved_extra_argument_is_refused_and_changes_nothing),
)
