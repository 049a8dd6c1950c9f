/* A task's completion across real processes, and the library's own handlers
 * out of reach of stored data:
 * - exactly one completion per attempt, whichever process sends it: the
 *   second, from another process, is OUTLIVE_E_STATE and changes nothing
 *   (it used to return OK and override the first: failure, then success,
 *   deleted the task);
 * - a task row crafted in the database (SQLite, or psql) that names the built-in
 *   outlive.task_completion with a `store` of its choosing does not make the
 *   runner open, let alone create, a store at that path;
 * - a completion names only a store this process has open. */
#include "harness.h"
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether the store at `location` exists: its directory, or its schema. */
static bool store_exists(const char *location) {
    if (!harness_postgresql()) return access(location, F_OK) == 0;
    char count[64] = "";
    const char *name = strstr(location, "outlive_store=");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_namespace WHERE nspname = 'outlive_%s'", name ? name + strlen("outlive_store=") : "main");
    return !harness_psql(location, sql, count, sizeof count) || strcmp(count, "0") != 0;
}

/* Removes the store at `location`: its directory, or its schema. */
static bool drop_store(const char *location) {
    if (!harness_postgresql()) {
        harness_remove_store(location);
        return true;
    }
    const char *name = strstr(location, "outlive_store=");
    char sql[256];
    snprintf(sql, sizeof sql, "DROP SCHEMA outlive_%s CASCADE", name ? name + strlen("outlive_store=") : "main");
    return harness_psql(location, sql, NULL, 0);
}

/* Another store's location beside `location`, never made. */
static void victim_of(const char *location, char *victim, size_t size) {
    snprintf(victim, size, harness_postgresql() ? "%s_victim" : "%s-victim", location);
}

/* The completion of the attempt running now, kept by `keeper` and also
 * written, serialized, to completion_path for another process. */
static outlive_handler *kept;
static _Atomic int keeper_calls;
static char completion_path[4200];

/* Writes `completion`, serialized, to completion_path for another process. */
static void write_completion(const outlive_handler *completion) {
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_handler_serialize(completion, &bytes, &size) != OUTLIVE_OK) return;
    FILE *file = fopen(completion_path, "wb");
    if (file) {
        fwrite(bytes, 1, size, file);
        fclose(file);
    }
    outlive_free(bytes);
}

OUTLIVE_HANDLER(completion_keeper, OUTLIVE_HANDLER_ARG(completion)) {
    if (outlive_handler_copy(completion, &kept) != OUTLIVE_OK) kept = NULL;
    write_completion(completion);
    keeper_calls++;
}

static outlive_status complete_here(bool success, const char *error) {
    outlive_args *args = NULL;
    if (outlive_args_new(&args) != OUTLIVE_OK) return OUTLIVE_E_NO_MEMORY;
    outlive_args_set_bool(args, "success", success);
    if (error) outlive_args_set_string(args, "error", error);
    outlive_status status = outlive_handler_call(kept, args);
    outlive_args_free(args);
    return status;
}

/* The exit code of child `pid` once it ended (128 + the signal that ended it; -1: not waited for). */
static int exit_code_of(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs tasks_worker DIR completer --complete FILE 0|1; its exit code (0: OK,
 * 2: the completion failed). */
static int complete_elsewhere(const char *dir, bool success) {
    char program[4096];
    snprintf(program, sizeof program, "%s/tasks_worker", harness_bin_dir());
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDERR_FILENO);
        execl(program, program, dir, "completer", "--complete", completion_path, success ? "1" : "0", (char *)NULL);
        _exit(127);
    }
    return exit_code_of(pid);
}

/* Opens a store in `dir` (the process name "runner") with one task of
 * `handler`, and runs it until `calls` shows its handler was called; NULL if
 * any of it failed. The loop is not dispatched afterwards. */
static outlive_store *run_one_task(const char *dir, const char *handler, _Atomic int *calls) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "runner", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    outlive_tasks_set_triggers(store, 0, 1e6);
    outlive_handler *work = NULL;
    outlive_status added = outlive_handler_new(handler, NULL, NULL, &work);
    if (added == OUTLIVE_OK) added = outlive_task_add(store, work, NULL, NULL, 0, NULL);
    outlive_handler_free(work);
    if (added != OUTLIVE_OK || outlive_tasks_run_now(store) != OUTLIVE_OK ||
        !harness_dispatch_until(outlive_store_loop(store), calls, 1, 30)) {
        outlive_store_close(store);
        return NULL;
    }
    return store;
}

/* Opens a store in `dir` with one task of completion_keeper, runs it until its
 * handler was called, and leaves the attempt waiting for its completion. The
 * loop is not dispatched afterwards until the test says so, so that the runner
 * records nothing in between. */
static outlive_store *start_attempt(const char *dir) {
    harness_store_side_file(dir, ".completion", completion_path, sizeof completion_path);
    unlink(completion_path);
    kept = NULL;
    keeper_calls = 0;
    return run_one_task(dir, "completion_keeper", &keeper_calls);
}

/* The one stored task, after the loop ran long enough to record the attempt. */
static bool only_task(outlive_store *store, outlive_task_state *state, char *last_error, size_t size) {
    for (int round = 0; round < 200; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        outlive_task_list *list = NULL;
        if (outlive_task_list_new(store, NULL, 10, &list) != OUTLIVE_OK) return false;
        size_t count = outlive_task_list_count(list);
        bool settled = count != 1 || outlive_task_list_state(list, 0) != OUTLIVE_TASK_RUNNING;
        if (settled) {
            if (count == 1) {
                const char *error = outlive_task_list_last_error(list, 0);
                *state = outlive_task_list_state(list, 0);
                snprintf(last_error, size, "%s", error ? error : "");
            }
            outlive_task_list_free(list);
            return count == 1;
        }
        outlive_task_list_free(list);
    }
    return false;
}

static void test_second_completion_from_another_process_is_refused_and_the_first_stands(void) {
    const char *dir = harness_store_location();
    outlive_store *store = start_attempt(dir);
    CHECK(store != NULL);
    CHECK_OK(complete_here(false, "the first completion said no"));
    /* Before the runner recorded anything: the other process's success must not override it. */
    CHECK_MSG(complete_elsewhere(dir, true) == 2, "a second completion from another process was accepted");
    outlive_task_state state = OUTLIVE_TASK_RUNNING;
    char error[512] = "";
    CHECK_MSG(only_task(store, &state, error, sizeof error), "the task is gone: the second completion overrode the first");
    CHECK(state == OUTLIVE_TASK_PENDING);
    CHECK_MSG(strstr(error, "the first completion said no") != NULL, "last_error is \"%s\"", error);
    outlive_handler_free(kept);
    outlive_store_close(store);
    unlink(completion_path);
    harness_remove_store(dir);
}

static void test_completion_in_the_runner_after_one_from_another_process_is_refused(void) {
    const char *dir = harness_store_location();
    outlive_store *store = start_attempt(dir);
    CHECK(store != NULL);
    CHECK(complete_elsewhere(dir, false) == 0);
    CHECK_STATUS(complete_here(true, NULL), OUTLIVE_E_STATE);
    outlive_task_state state = OUTLIVE_TASK_RUNNING;
    char error[512] = "";
    CHECK_MSG(only_task(store, &state, error, sizeof error), "the task is gone: the runner's late success overrode the other process's failure");
    CHECK(state == OUTLIVE_TASK_PENDING);
    outlive_handler_free(kept);
    outlive_store_close(store);
    unlink(completion_path);
    harness_remove_store(dir);
}

static void test_two_other_processes_complete_once(void) {
    const char *dir = harness_store_location();
    outlive_store *store = start_attempt(dir);
    CHECK(store != NULL);
    CHECK(complete_elsewhere(dir, true) == 0);
    CHECK(complete_elsewhere(dir, false) == 2);
    CHECK_STATUS(complete_here(false, "too late"), OUTLIVE_E_STATE);
    size_t pending = 1;
    for (int round = 0; round < 200 && pending != 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        CHECK_OK(outlive_tasks_count(store, &pending));
    }
    CHECK_MSG(pending == 0, "the first completion (a success) did not end the task");
    outlive_handler_free(kept);
    outlive_store_close(store);
    unlink(completion_path);
    harness_remove_store(dir);
}

/* Runs handler_caller, which opens no store: it deserializes the completion
 * from completion_path and calls it. Its output says the call's status. */
static bool complete_from_a_process_without_the_store(const char *expected_status) {
    char command[8600];
    snprintf(command, sizeof command, "%s/handler_caller - '%s' 'call success=B:1' 2>/dev/null", harness_bin_dir(),
             completion_path);
    FILE *pipe = popen(command, "r");
    if (!pipe) return false;
    char output[4096] = "";
    size_t got = fread(output, 1, sizeof output - 1, pipe);
    output[got] = 0;
    pclose(pipe);
    char line[128];
    snprintf(line, sizeof line, "call -> %s", expected_status);
    return strstr(output, line) != NULL;
}

static void test_a_process_that_never_opened_the_store_completes_the_attempt(void) {
    const char *dir = harness_store_location();
    outlive_store *store = start_attempt(dir);
    CHECK(store != NULL);
    CHECK_MSG(complete_from_a_process_without_the_store("OUTLIVE_OK"),
              "a completion called in a process without the store open was refused");
    size_t pending = 1;
    for (int round = 0; round < 200 && pending != 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        CHECK_OK(outlive_tasks_count(store, &pending));
    }
    CHECK_MSG(pending == 0, "the other process's success did not end the task");
    CHECK_STATUS(complete_here(false, "too late"), OUTLIVE_E_STATE);
    outlive_handler_free(kept);
    outlive_store_close(store);
    /* With the store gone, the same completion creates nothing where it was. */
    CHECK(drop_store(dir));
    CHECK(complete_from_a_process_without_the_store("OUTLIVE_E_STATE"));
    CHECK_MSG(!store_exists(dir), "a completion created a store where one had been");
    unlink(completion_path);
}

/* The bytes of outlive.task_completion bound with a store of the data's choosing. */
static void *crafted_completion(const char *victim, size_t *size) {
    outlive_args *args = NULL;
    if (outlive_args_new(&args) != OUTLIVE_OK) return NULL;
    outlive_args_set_string(args, "store", victim);
    outlive_args_set_string(args, "task_id", "00000000-0000-4000-8000-000000000001");
    outlive_args_set_string(args, "claim", "00000000-0000-4000-8000-000000000002");
    outlive_args_set_bool(args, "success", true);
    outlive_handler *handler = NULL;
    outlive_status made = outlive_handler_new("outlive.task_completion", NULL, args, &handler);
    outlive_args_free(args);
    void *bytes = NULL;
    if (made != OUTLIVE_OK || outlive_handler_serialize(handler, &bytes, size) != OUTLIVE_OK) bytes = NULL;
    outlive_handler_free(handler);
    return bytes;
}

static void test_crafted_task_naming_the_completion_built_in_creates_no_store(void) {
    const char *dir = harness_store_location();
    char victim[4300];
    victim_of(dir, victim, sizeof victim);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "runner", NULL, NULL, &store));
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.max_attempts = 1;
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    CHECK_OK(outlive_tasks_set_triggers(store, 0, 1e6));

    /* Written into the real store, as an attacker with the file (or a role
     * that can write the schema) would. */
    size_t size = 0;
    void *bytes = crafted_completion(victim, &size);
    CHECK(bytes != NULL);
    if (harness_postgresql()) {
        char sql[12288];
        int at = snprintf(sql, sizeof sql, "INSERT INTO outlive_tasks(id, handler_name, handler, created, age_from) VALUES "
                          "('00000000-0000-4000-8000-000000000001', 'outlive.task_completion', '\\\\x");
        for (size_t i = 0; i < size && at < (int)sizeof sql - 200; i++) at += snprintf(sql + at, sizeof sql - (size_t)at, "%02x", ((unsigned char *)bytes)[i]);
        /* Above the counted mark, as the library adds one: counted from its row (TaskSchema step 12). */
        snprintf(sql + at, sizeof sql - (size_t)at, "', 0, extract(epoch from now()))");
        outlive_free(bytes);
        CHECK_MSG(harness_psql(dir, sql, NULL, 0), "the crafted task could not be written");
    } else {
        char path[4300];
        snprintf(path, sizeof path, "%s/outlive.db", dir);
        sqlite3 *db = NULL;
        CHECK(sqlite3_open(path, &db) == SQLITE_OK);
        sqlite3_busy_timeout(db, 10000);
        sqlite3_stmt *insert = NULL;
        /* Above every stored task and the counted mark, as the library adds one: counted from its
         * row, no counter to update (TaskSchema step 9). */
        CHECK(sqlite3_prepare_v2(db, "INSERT INTO outlive_tasks(seq, id, handler_name, handler, created, age_from) "
                                     "VALUES (max(ifnull((SELECT max(seq) FROM outlive_tasks), 0), (SELECT seq FROM outlive_task_counted)) + 1, "
                                     "'00000000-0000-4000-8000-000000000001', 'outlive.task_completion', ?, 0, CAST(strftime('%s', 'now') AS REAL))",
                                 -1, &insert, NULL) == SQLITE_OK);
        sqlite3_bind_blob(insert, 1, bytes, (int)size, SQLITE_TRANSIENT);
        int stepped = sqlite3_step(insert);
        sqlite3_finalize(insert);
        outlive_free(bytes);
        CHECK_MSG(stepped == SQLITE_DONE, "insert: %s", sqlite3_errmsg(db));
        sqlite3_close(db);
    }

    CHECK_OK(outlive_tasks_run_now(store));
    outlive_task_state state = OUTLIVE_TASK_RUNNING;
    char error[512] = "";
    CHECK(only_task(store, &state, error, sizeof error));
    CHECK_MSG(!store_exists(victim), "the runner created the store the stored task chose");
    CHECK_MSG(state == OUTLIVE_TASK_DEAD, "the crafted task is in state %d", (int)state);
    CHECK_MSG(strstr(error, "library's own handlers") != NULL, "last_error is \"%s\"", error);
    outlive_store_close(store);
    harness_remove_store(dir);
    harness_remove_store(victim);
}

static void test_completion_of_a_store_this_process_has_not_open_touches_no_file(void) {
    const char *dir = harness_store_location();
    char victim[4300];
    victim_of(dir, victim, sizeof victim);
    size_t size = 0;
    void *bytes = crafted_completion(victim, &size);
    CHECK(bytes != NULL);
    outlive_handler *completion = NULL;
    CHECK_OK(outlive_handler_deserialize(bytes, size, &completion));
    outlive_free(bytes);
    CHECK_STATUS(outlive_handler_call(completion, NULL), OUTLIVE_E_STATE);
    outlive_handler_free(completion);
    CHECK_MSG(!store_exists(victim), "calling a completion created a store at the path it names");
    harness_remove_store(dir);
}

static void test_the_library_s_own_handlers_cannot_be_stored_as_work(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    outlive_handler *builtin = NULL;
    CHECK_OK(outlive_handler_new("outlive.task_completion", NULL, NULL, &builtin));
    CHECK_STATUS(outlive_task_add(store, builtin, NULL, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler *finish = NULL;
    CHECK_OK(outlive_handler_new("outlive.durable_interaction.finish", NULL, NULL, &finish));
    CHECK_STATUS(outlive_task_add(store, finish, NULL, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    size_t pending = 1;
    CHECK_OK(outlive_tasks_count(store, &pending));
    CHECK(pending == 0);
    CHECK_STATUS(outlive_handler_unregister("outlive.task_completion"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_handler_resolve("outlive.task_completion"));
    outlive_handler_free(builtin);
    outlive_handler_free(finish);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* A handler that ends its attempt from inside its call, twice: a failure,
 * then a success. The statuses of the two calls, for the test. */
static _Atomic int in_call_calls;
static outlive_status in_call_first = -1, in_call_second = -1;

static outlive_status complete_with(const outlive_handler *completion, bool success, const char *error) {
    outlive_args *args = NULL;
    if (outlive_args_new(&args) != OUTLIVE_OK) return OUTLIVE_E_NO_MEMORY;
    outlive_args_set_bool(args, "success", success);
    if (error) outlive_args_set_string(args, "error", error);
    outlive_status status = outlive_handler_call(completion, args);
    outlive_args_free(args);
    return status;
}

OUTLIVE_HANDLER(completing_twice_in_call, OUTLIVE_HANDLER_ARG(completion)) {
    in_call_first = complete_with(completion, false, "the completion sent during the call said no");
    in_call_second = complete_with(completion, true, NULL);
    in_call_calls++;
}

/* Ended with its batch rather than on the row at once, a completion sent
 * during the handler's call is still the attempt's one outcome. */
static void test_the_first_completion_sent_during_the_call_is_the_outcome_and_a_second_is_refused(void) {
    const char *dir = harness_temp_dir();
    in_call_calls = 0;
    outlive_store *store = run_one_task(dir, "completing_twice_in_call", &in_call_calls);
    CHECK(store != NULL);
    CHECK_OK(in_call_first);
    CHECK_STATUS(in_call_second, OUTLIVE_E_STATE);
    outlive_task_state state = OUTLIVE_TASK_RUNNING;
    char error[512] = "";
    CHECK_MSG(only_task(store, &state, error, sizeof error), "the task is gone: the refused success ended it");
    CHECK(state == OUTLIVE_TASK_PENDING);
    CHECK_MSG(strstr(error, "the completion sent during the call said no") != NULL, "last_error is \"%s\"", error);
    outlive_store_close(store);
    harness_remove_tree(dir);
}

/* Tasks of a handler that sends its completion during its call (as Python's
 * do); each call notes how many tasks the store lists as running, and the
 * call numbered `keep_at` keeps its completion instead (kept_in_call). */
static outlive_store *batch_store;
static _Atomic int batch_calls;
static size_t most_running;
static int keep_at;
static outlive_handler *kept_in_call;

OUTLIVE_HANDLER(completing_in_call, OUTLIVE_HANDLER_ARG(completion)) {
    int call = ++batch_calls;
    outlive_queue_list *list = NULL;
    if (outlive_queue_list_new(batch_store, NULL, 10, &list) == OUTLIVE_OK) {
        for (size_t i = 0; i < outlive_queue_list_count(list); i++) {
            if (outlive_queue_list_running(list, i) > most_running) most_running = outlive_queue_list_running(list, i);
        }
        outlive_queue_list_free(list);
    }
    if (call == keep_at) {
        if (outlive_handler_copy(completion, &kept_in_call) != OUTLIVE_OK) kept_in_call = NULL;
        return;
    }
    complete_with(completion, true, NULL);
}

static outlive_store *open_with_tasks(const char *dir, int count) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "runner", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    outlive_tasks_set_triggers(store, 0, 1e6);
    for (int i = 0; i < count; i++) {
        outlive_handler *work = NULL;
        outlive_status status = outlive_handler_new("completing_in_call", NULL, NULL, &work);
        if (status == OUTLIVE_OK) status = outlive_task_add(store, work, NULL, NULL, 0, NULL);
        outlive_handler_free(work);
        if (status != OUTLIVE_OK) break;
    }
    batch_store = store;
    batch_calls = 0;
    most_running = 0;
    kept_in_call = NULL;
    return store;
}

/* Such a handler no longer holds its slot once it showed that it completes
 * during the call: its tasks are claimed in batches (several listed as
 * running at once), not one per transaction. */
static void test_tasks_of_a_handler_that_completes_during_its_call_are_claimed_in_batches(void) {
    const char *dir = harness_temp_dir();
    keep_at = 0;
    outlive_store *store = open_with_tasks(dir, 40);
    CHECK(store != NULL);
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &batch_calls, 40, 60));
    size_t pending = 1;
    for (int round = 0; round < 200 && pending != 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 20);
        CHECK_OK(outlive_tasks_count(store, &pending));
    }
    CHECK_MSG(pending == 0, "%zu tasks left", pending);
    CHECK_MSG(most_running > 1, "at most %zu task running at once: claimed one by one", most_running);
    outlive_store_close(store);
    harness_remove_tree(dir);
}

/* The call that keeps its completion for later still holds the one slot:
 * the next task of its batch, claimed already, is not called until that
 * completion comes. */
static void test_a_call_that_keeps_its_completion_holds_the_slot_for_the_rest_of_its_batch(void) {
    const char *dir = harness_temp_dir();
    keep_at = 3;
    outlive_store *store = open_with_tasks(dir, 20);
    CHECK(store != NULL);
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &batch_calls, 3, 60));
    for (int round = 0; round < 20; round++) outlive_loop_dispatch(outlive_store_loop(store), 10);
    CHECK_MSG(batch_calls == 3, "%d calls while the third attempt still waits for its completion", (int)batch_calls);
    CHECK(kept_in_call != NULL);
    CHECK_OK(complete_with(kept_in_call, true, NULL));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &batch_calls, 20, 60));
    size_t pending = 1;
    for (int round = 0; round < 200 && pending != 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 20);
        CHECK_OK(outlive_tasks_count(store, &pending));
    }
    CHECK_MSG(pending == 0, "%zu tasks left", pending);
    outlive_handler_free(kept_in_call);
    outlive_store_close(store);
    harness_remove_tree(dir);
}

/* complete_elsewhere, by posix_spawn: glibc's makes its child with clone(2)
 * and runs no pthread_atfork handler, so this process counts no fork (the
 * completion's bytes alone tell that it left). */
static int complete_in_a_spawned_process(const char *dir, bool success) {
    char program[4096];
    snprintf(program, sizeof program, "%s/tasks_worker", harness_bin_dir());
    char *argv[] = {program, (char *)dir, "completer", "--complete", completion_path, success ? "1" : "0", NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    int spawned = posix_spawn(&pid, program, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    return spawned == 0 ? exit_code_of(pid) : -1;
}

/* A handler that lets another completion of its attempt come first — in a
 * process it sent the completion's bytes to, in a child it forked, or on a
 * thread of its own — and then sends a success itself during its call. The
 * runner skips its read of the task's row for a completion that never left
 * the call (TaskQueue.completeInCall); each of these ways out must bring the
 * read back, or the late success would override the first completion. (On a
 * thread that finished first, the runner knows it without the row.) */
enum { FIRST_BY_BYTES, FIRST_IN_A_FORKED_CHILD, FIRST_ON_A_THREAD };
static int first_by;
static char first_dir[4200];
static _Atomic int late_calls;
static outlive_status first_status = -1, late_status = -1;

static void *complete_on_a_thread(void *completion) {
    first_status = complete_with(completion, false, "the first completion came from elsewhere");
    return NULL;
}

OUTLIVE_HANDLER(completing_after_another, OUTLIVE_HANDLER_ARG(completion)) {
    if (first_by == FIRST_BY_BYTES) {
        write_completion(completion);
        first_status = complete_in_a_spawned_process(first_dir, false) == 0 ? OUTLIVE_OK : OUTLIVE_E_STATE;
    } else if (first_by == FIRST_IN_A_FORKED_CHILD) {
        /* The child's status comes back through a pipe, not its exit code,
         * which valgrind replaces when the child leaves memory behind. */
        int report[2];
        if (pipe(report) != 0) return;
        pid_t pid = fork();
        if (pid == 0) {
            unsigned char status = (unsigned char)complete_with(completion, false, "the first completion came from elsewhere");
            _exit(write(report[1], &status, 1) == 1 ? 0 : 1);
        }
        close(report[1]);
        unsigned char status = 0xff;
        first_status = pid > 0 && read(report[0], &status, 1) == 1 ? (outlive_status)status : OUTLIVE_E_IO;
        close(report[0]);
        if (pid > 0) exit_code_of(pid);
    } else {
        pthread_t thread;
        if (pthread_create(&thread, NULL, complete_on_a_thread, (void *)completion) == 0) pthread_join(thread, NULL);
    }
    late_status = complete_with(completion, true, NULL);
    late_calls++;
}

static void check_a_late_completion_in_the_call_is_refused(int way) {
    const char *dir = harness_store_location();
    snprintf(first_dir, sizeof first_dir, "%s", dir);
    harness_store_side_file(dir, ".completion", completion_path, sizeof completion_path);
    first_by = way;
    first_status = late_status = -1;
    late_calls = 0;
    outlive_store *store = run_one_task(dir, "completing_after_another", &late_calls);
    CHECK(store != NULL);
    CHECK_MSG(first_status == OUTLIVE_OK, "the first completion failed: %d", (int)first_status);
    CHECK_STATUS(late_status, OUTLIVE_E_STATE);
    outlive_task_state state = OUTLIVE_TASK_RUNNING;
    char error[512] = "";
    CHECK_MSG(only_task(store, &state, error, sizeof error), "the task is gone: the late success overrode the first completion, a failure");
    CHECK(state == OUTLIVE_TASK_PENDING);
    CHECK_MSG(strstr(error, "the first completion came from elsewhere") != NULL || way == FIRST_BY_BYTES, "last_error is \"%s\"", error);
    outlive_store_close(store);
    unlink(completion_path);
    harness_remove_store(dir);
}

static void test_a_completion_in_the_call_after_one_from_a_process_it_sent_the_bytes_to_is_refused(void) {
    check_a_late_completion_in_the_call_is_refused(FIRST_BY_BYTES);
}

static void test_a_completion_in_the_call_after_one_from_a_forked_child_is_refused(void) {
    check_a_late_completion_in_the_call_is_refused(FIRST_IN_A_FORKED_CHILD);
}

static void test_a_completion_in_the_call_after_one_from_another_thread_is_refused(void) {
    check_a_late_completion_in_the_call_is_refused(FIRST_ON_A_THREAD);
}

HARNESS_MAIN(
    T(test_tasks_of_a_handler_that_completes_during_its_call_are_claimed_in_batches),
    T(test_a_call_that_keeps_its_completion_holds_the_slot_for_the_rest_of_its_batch),
    T(test_the_first_completion_sent_during_the_call_is_the_outcome_and_a_second_is_refused),
    T(test_second_completion_from_another_process_is_refused_and_the_first_stands),
    T(test_a_process_that_never_opened_the_store_completes_the_attempt),
    T(test_completion_in_the_runner_after_one_from_another_process_is_refused),
    T(test_a_completion_in_the_call_after_one_from_a_process_it_sent_the_bytes_to_is_refused),
    T(test_a_completion_in_the_call_after_one_from_a_forked_child_is_refused),
    T(test_a_completion_in_the_call_after_one_from_another_thread_is_refused),
    T(test_two_other_processes_complete_once),
    T(test_crafted_task_naming_the_completion_built_in_creates_no_store),
    T(test_completion_of_a_store_this_process_has_not_open_touches_no_file),
    T(test_the_library_s_own_handlers_cannot_be_stored_as_work),
)
