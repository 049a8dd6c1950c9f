/* The key-value store across real processes: atomic updates from several
 * writers, observers woken through the loop fd, and kill -9 mid-write. One
 * suite for both engines (OUTLIVE_TEST_STORE_KIND=postgresql: see harness.h). */
#include "harness.h"
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t spawn(char *const argv[], int *stdout_fd) {
    int pipe_fds[2];
    if (stdout_fd && pipe(pipe_fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (stdout_fd) { dup2(pipe_fds[1], 1); close(pipe_fds[0]); close(pipe_fds[1]); }
        execv(argv[0], argv);
        _exit(127);
    }
    if (stdout_fd) { close(pipe_fds[1]); *stdout_fd = pipe_fds[0]; }
    return pid;
}

static char *worker_path(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/kv_worker", harness_bin_dir());
    return path;
}

static int wait_ok(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_four_processes_increment_one_counter_exactly_2000_times(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        char *argv[] = {worker_path(), path, "increment", "counter", "500", NULL};
        pids[i] = spawn(argv, NULL);
        CHECK(pids[i] > 0);
    }
    for (int i = 0; i < 4; i++) CHECK_MSG(wait_ok(pids[i]), "worker %d failed", i);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "checker", NULL, NULL, &store));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "counter", &bytes, &size));
    CHECK_MSG(size == 4 && memcmp(bytes, "2000", 4) == 0, "counter is %.*s", (int)size, (char *)bytes);
    outlive_free(bytes);
    outlive_store_close(store);
    harness_remove_store(path);
}

struct seen { char key[64]; char value[64]; int calls; int deleted; };

static void remember(const char *key, const void *bytes, size_t size, void *context) {
    struct seen *seen = context;
    snprintf(seen->key, sizeof seen->key, "%s", key);
    seen->deleted = bytes == NULL;
    snprintf(seen->value, sizeof seen->value, "%.*s", (int)size, bytes ? (const char *)bytes : "");
    seen->calls++;
}

/* Polls the loop's fd (as a host event loop would) until the observer ran. */
static int dispatch_until_rounds(outlive_loop *loop, int *calls, int want, int rounds) {
    for (int round = 0; round < rounds && *calls < want; round++) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        if (poll(&pfd, 1, 100) < 0) return 0;
        if (pfd.revents & POLLIN) outlive_loop_dispatch(loop, 0);
    }
    return *calls >= want;
}

static int dispatch_until(outlive_loop *loop, int *calls, int want) { return dispatch_until_rounds(loop, calls, want, 200); }

static void test_observer_sees_a_value_set_by_another_process_woken_through_the_fd(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", loop, NULL, &store));
    CHECK(outlive_store_loop(store) == loop);
    struct seen seen = {0};
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(store, "obs/", remember, &seen, NULL, &token));
    char *set_other[] = {worker_path(), path, "set", "other/x", "ignored", NULL};
    CHECK(wait_ok(spawn(set_other, NULL)));
    char *set_observed[] = {worker_path(), path, "set", "obs/x", "hello", NULL};
    CHECK(wait_ok(spawn(set_observed, NULL)));
    CHECK_MSG(dispatch_until(loop, &seen.calls, 1), "observer not called");
    CHECK(strcmp(seen.key, "obs/x") == 0 && strcmp(seen.value, "hello") == 0 && !seen.deleted);
    CHECK(seen.calls == 1);
    /* A delete reaches the observer as NULL bytes. */
    CHECK_OK(outlive_kv_delete(store, "obs/x"));
    CHECK(dispatch_until(loop, &seen.calls, 2));
    CHECK(seen.deleted && strcmp(seen.key, "obs/x") == 0);
    /* After unobserve nothing more arrives. */
    CHECK_OK(outlive_kv_unobserve(store, token));
    CHECK(wait_ok(spawn(set_observed, NULL)));
    /* The set has committed: a second of dispatching would deliver it, were it to come. */
    CHECK(!dispatch_until_rounds(loop, &seen.calls, 3, 10) || seen.calls == 2);
    CHECK(seen.calls == 2);
    outlive_store_close(store);
    outlive_loop_free(loop);
    harness_remove_store(path);
}

/* SQLite's own check of the store's database file (a SQLite store only). */
static void check_sqlite_integrity(const char *store_path) {
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/outlive.db", store_path);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(db_path, &db) == SQLITE_OK);
    sqlite3_stmt *check = NULL;
    int prepared = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, NULL);
    int stepped = prepared == SQLITE_OK ? sqlite3_step(check) : prepared;
    const char *result = stepped == SQLITE_ROW ? (const char *)sqlite3_column_text(check, 0) : NULL;
    int ok = result != NULL && strcmp(result, "ok") == 0;
    char why[256];
    snprintf(why, sizeof why, "%s", result ? result : sqlite3_errmsg(db));
    sqlite3_finalize(check);
    sqlite3_close(db);
    CHECK_MSG(ok, "integrity_check of %.300s: %.300s", db_path, why);
}

static void test_kill_9_mid_write_loses_no_acknowledged_set(void) {
    srand((unsigned)time(NULL));
    for (int round = 0; round < 3; round++) {
        const char *dir = harness_store_location();
        char path[4096];
        snprintf(path, sizeof path, "%s", dir);
        int out = -1;
        char *argv[] = {worker_path(), path, "write", "10000", NULL};
        pid_t pid = spawn(argv, &out);
        CHECK(pid > 0);
        FILE *acks = fdopen(out, "r");
        long kill_after = 50 + rand() % 400, last = -1, value;
        while (last < kill_after && fscanf(acks, "%ld", &value) == 1) last = value;
        kill(pid, SIGKILL);
        /* Sets acknowledged between our last read and the kill count too. */
        while (fscanf(acks, "%ld", &value) == 1) last = value;
        fclose(acks);
        int status;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        outlive_store *store = NULL;
        CHECK_OK(outlive_store_open(path, "checker", NULL, NULL, &store));
        for (long i = 0; i <= last; i++) {
            char key[32], expected[32];
            snprintf(key, sizeof key, "k%05ld", i);
            int length = snprintf(expected, sizeof expected, "v%ld", i);
            void *bytes = NULL;
            size_t size = 0;
            CHECK_MSG(outlive_kv_get(store, key, &bytes, &size) == OUTLIVE_OK, "acknowledged %s lost: %s", key, outlive_last_error());
            CHECK(size == (size_t)length && memcmp(bytes, expected, size) == 0);
            outlive_free(bytes);
        }
        outlive_store_close(store);
        if (harness_postgresql()) continue;
        check_sqlite_integrity(path);
        if (harness_failed_current) return;
        harness_remove_store(path);
    }
}

static void test_handle_used_in_forked_child_is_refused(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &store));
    pid_t pid = fork();
    if (pid == 0) {
        outlive_status status = outlive_kv_set(store, "from-child", "x", 1);
        _exit(status == OUTLIVE_E_STATE ? 0 : 1);
    }
    CHECK_MSG(wait_ok(pid), "the child could use its parent's handle");
    void *bytes = NULL;
    size_t size = 0;
    CHECK_STATUS(outlive_kv_get(store, "from-child", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_kv_set(store, "from-parent", "x", 1));
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_closed_and_reopened_runs_get_fresh_run_ids(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *a = NULL, *b = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &a));
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &b));
    CHECK(strlen(outlive_store_run_id(a)) == 36);
    CHECK(strcmp(outlive_store_run_id(a), outlive_store_run_id(b)) != 0);
    CHECK(strcmp(outlive_store_process_name(a), "app") == 0);
    outlive_store_close(a);
    outlive_store_close(b);
    harness_remove_store(path);
}

struct log_lines { char text[4096]; int count; };

static void collect_log(outlive_log_level level, const char *message, void *context) {
    struct log_lines *lines = context;
    if (level <= OUTLIVE_LOG_INFO && lines->count++ == 0) snprintf(lines->text, sizeof lines->text, "%.2000s", message);
}

static void test_run_killed_with_9_is_cleaned_up_and_logged_at_the_next_open(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    int out = -1;
    char *argv[] = {worker_path(), path, "write", "10000", NULL};
    pid_t pid = spawn(argv, &out);
    FILE *acks = fdopen(out, "r");
    long value;
    CHECK(fscanf(acks, "%ld", &value) == 1);
    kill(pid, SIGKILL);
    fclose(acks);
    waitpid(pid, NULL, 0);
    static struct log_lines lines;
    CHECK_STATUS(outlive_log_set_handler(collect_log, (outlive_log_level)9, &lines, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_log_set_handler(collect_log, OUTLIVE_LOG_INFO, &lines, NULL));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "checker", NULL, NULL, &store));
    CHECK_OK(outlive_log_set_handler(NULL, OUTLIVE_LOG_ERROR, NULL, NULL));
    CHECK_MSG(strstr(lines.text, "no longer alive") && strstr(lines.text, "worker"), "log: %.900s", lines.text);
    /* Its lock file went with it. */
    if (harness_postgresql()) {
        outlive_store_close(store);
        return;
    }
    char runs[8300];
    snprintf(runs, sizeof runs, "ls %s/runs | wc -l | grep -qx 1", path);
    CHECK(system(runs) == 0);
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_eight_processes_opening_a_new_store_at_once_all_succeed(void) {
    /* On PostgreSQL each round is a new store (a schema) made by one of eight first openers. */
    for (int round = 0; round < (harness_postgresql() ? 5 : 15); round++) {
        const char *dir = harness_store_location();
        char path[4096];
        snprintf(path, sizeof path, harness_postgresql() ? "%s" : "%s/new", dir);
        pid_t pids[8];
        for (int i = 0; i < 8; i++) {
            char *argv[] = {worker_path(), path, "set", "k", "v", NULL};
            pids[i] = spawn(argv, NULL);
        }
        for (int i = 0; i < 8; i++) CHECK_MSG(wait_ok(pids[i]), "round %d: worker %d could not open or write", round, i);
        harness_remove_store(dir);
    }
}

struct death_log { _Atomic int seen; char run[64]; };

static void watch_for_death(outlive_log_level level, const char *message, void *context) {
    struct death_log *log = context;
    if (level <= OUTLIVE_LOG_INFO && strstr(message, "no longer alive") && strstr(message, log->run)) atomic_store(&log->seen, 1);
}

/* A handle that stays open sees another process's run end when it is killed
 * with -9: at once on SQLite (inotify), within the liveness bound on
 * PostgreSQL (here 2 s: the server frees the killed session's lock at once,
 * and a live handle checks every half bound). */
static void test_a_writer_killed_with_9_is_seen_dead_by_an_open_handle_within_the_bound(void) {
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, harness_postgresql() ? "%s&outlive_liveness=2" : "%s", dir);
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "watcher", loop, NULL, &store));
    int out = -1;
    char *argv[] = {worker_path(), path, "write", "100000", NULL};
    pid_t pid = spawn(argv, &out);
    FILE *acks = fdopen(out, "r");
    long value;
    CHECK(fscanf(acks, "%ld", &value) == 1);
    static struct death_log log;
    atomic_store(&log.seen, 0);
    /* The log names the run and its process: "run <id> of worker is no longer alive". */
    snprintf(log.run, sizeof log.run, "of worker");
    CHECK_OK(outlive_log_set_handler(watch_for_death, OUTLIVE_LOG_INFO, &log, NULL));
    kill(pid, SIGKILL);
    fclose(acks);
    waitpid(pid, NULL, 0);
    int seen = harness_dispatch_until(loop, &log.seen, 1, 6.0);
    CHECK_OK(outlive_log_set_handler(NULL, OUTLIVE_LOG_ERROR, NULL, NULL));
    /* 6 s: three times the bound, twice the promise (1.5 x the bound), for a loaded machine. */
    CHECK_MSG(seen, "the killed writer's run was not seen dead within 6 s of the kill");
    outlive_store_close(store);
    outlive_loop_free(loop);
    harness_remove_store(dir);
}

/* A raw SQLite connection of another process in the middle of a write
 * transaction on the store's database: the write lock is held, and an
 * uncommitted change of a kv value is in it. Returns the holder's pid once
 * the lock is held (it then sleeps until killed), or -1. */
static pid_t hold_write_lock_in_child(const char *dir) {
    int ready[2];
    if (pipe(ready) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        /* Gone in 30 s even if the test fails before it kills the holder. */
        alarm(30);
        char db_path[4200];
        snprintf(db_path, sizeof db_path, "%s/outlive.db", dir);
        sqlite3 *db = NULL;
        int held = sqlite3_open(db_path, &db) == SQLITE_OK
            && sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE outlive_kv SET value = X'00' WHERE key = 'kept'", NULL, NULL, NULL) == SQLITE_OK;
        if (write(ready[1], held ? "h" : "f", 1) != 1) _exit(1);
        for (;;) pause();
    }
    close(ready[1]);
    char said = 0;
    ssize_t got = pid > 0 ? read(ready[0], &said, 1) : -1;
    close(ready[0]);
    if (got == 1 && said == 'h') return pid;
    if (pid > 0) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); }
    return -1;
}

static int kv_equals(outlive_store *store, const char *key, const char *expected) {
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_kv_get(store, key, &bytes, &size) != OUTLIVE_OK) return 0;
    int equal = size == strlen(expected) && memcmp(bytes, expected, size) == 0;
    outlive_free(bytes);
    return equal;
}

static void test_write_lock_held_past_the_busy_timeout_by_another_process_gives_busy_and_stores_nothing(void) {
    SQLITE_ONLY();
    const char *dir = harness_store_location();
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.busy_timeout_ms = 300;
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, &options, &store));
    CHECK_OK(outlive_kv_set(store, "kept", "yes", 3));
    pid_t holder = hold_write_lock_in_child(dir);
    CHECK(holder > 0);
    CHECK_STATUS(outlive_kv_set(store, "new", "no", 2), OUTLIVE_E_BUSY);
    CHECK_STATUS(outlive_kv_delete(store, "kept"), OUTLIVE_E_BUSY);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    /* The holder's death released the lock and its uncommitted change is gone. */
    CHECK_OK(outlive_kv_set(store, "after", "yes", 3));
    CHECK_MSG(kv_equals(store, "kept", "yes"), "the value the holder changed without committing changed");
    CHECK_STATUS(outlive_kv_get(store, "new", &(void *){NULL}, &(size_t){0}), OUTLIVE_E_NOT_FOUND);
    CHECK(kv_equals(store, "after", "yes"));
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Writers of several processes wait for a lock that a raw connection holds
 * mid-transaction; one waiter is killed with -9 while it waits, then the
 * holder is killed: the other waiters' writes go through (the lock a dead
 * process held is free at once), every acknowledged write of the counter
 * writers is there, and the database is intact. */
static void test_waiters_and_a_holder_killed_with_9_lose_no_acknowledged_write(void) {
    SQLITE_ONLY();
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &store));
    CHECK_OK(outlive_kv_set(store, "kept", "yes", 3));
    pid_t holder = hold_write_lock_in_child(path);
    CHECK(holder > 0);
    pid_t writers[4];
    for (int i = 0; i < 4; i++) {
        char *argv[] = {worker_path(), path, "increment", "counter", "100", NULL};
        writers[i] = spawn(argv, NULL);
        CHECK(writers[i] > 0);
    }
    /* All four are waiting for the lock (or still opening the store). */
    usleep(300 * 1000);
    kill(writers[3], SIGKILL);
    int status = 0;
    CHECK(waitpid(writers[3], &status, 0) == writers[3] && WIFSIGNALED(status));
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    for (int i = 0; i < 3; i++) CHECK_MSG(wait_ok(writers[i]), "writer %d failed", i);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "counter", &bytes, &size));
    /* The killed writer wrote nothing: even its open waited for the lock. */
    CHECK_MSG(size == 3 && memcmp(bytes, "300", 3) == 0, "counter is %.*s after 3 writers of 100 and one killed", (int)size, (char *)bytes);
    outlive_free(bytes);
    CHECK(kv_equals(store, "kept", "yes"));
    outlive_store_close(store);
    check_sqlite_integrity(path);
    if (harness_failed_current) return;
    harness_remove_store(path);
}

HARNESS_MAIN(
    T(test_a_writer_killed_with_9_is_seen_dead_by_an_open_handle_within_the_bound),
    T(test_eight_processes_opening_a_new_store_at_once_all_succeed),
    T(test_run_killed_with_9_is_cleaned_up_and_logged_at_the_next_open),
    T(test_four_processes_increment_one_counter_exactly_2000_times),
    T(test_observer_sees_a_value_set_by_another_process_woken_through_the_fd),
    T(test_kill_9_mid_write_loses_no_acknowledged_set),
    T(test_handle_used_in_forked_child_is_refused),
    T(test_closed_and_reopened_runs_get_fresh_run_ids),
    T(test_write_lock_held_past_the_busy_timeout_by_another_process_gives_busy_and_stores_nothing),
    T(test_waiters_and_a_holder_killed_with_9_lose_no_acknowledged_write),
)
