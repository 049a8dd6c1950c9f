/* A fork is not a second owner: a child made by fork() may only close (free)
 * the parent's store and loop, which must release nothing of the parent's —
 * not its liveness lock, nor its run, nor its inotify/epoll/eventfd wake-ups —
 * and everything else returns OUTLIVE_E_STATE. A task completion called in a
 * child is recorded like one from any other process. A fork in another thread
 * while a store opens never copies the new run's lock into the child.
 * Real processes throughout: fork, _exit, kill -9. */
#include "harness.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_ok(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether some process holds the flock of run_id's lock file in dir. */
static int run_lock_held(const char *dir, const char *run_id) {
    char path[4096];
    snprintf(path, sizeof path, "%s/runs/%s.lock", dir, run_id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    int held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

/* Another process writes key into the store at dir (a fresh program, as any
 * other would be: exec'd, since a child of a parent whose loop thread runs may
 * call nothing but async-signal-safe functions before exec), then exits. */
static int write_from_another_process(const char *dir, const char *key) {
    char program[4096];
    snprintf(program, sizeof program, "%s/kv_worker", harness_bin_dir());
    pid_t pid = fork();
    if (pid == 0) {
        execl(program, program, dir, "set", key, "v", (char *)NULL);
        _exit(127);
    }
    return pid > 0 && wait_ok(pid);
}

static void test_loop_made_before_any_store_is_refused_in_a_child(void) {
    /* First in this binary: no store has been opened in this process yet. */
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    pid_t pid = fork();
    if (pid == 0) _exit(outlive_loop_dispatch(loop, 0) == OUTLIVE_E_STATE && outlive_loop_fd(loop) == -1 ? 0 : 1);
    CHECK_MSG(wait_ok(pid), "a loop made before any store was dispatched in a child");
    CHECK_OK(outlive_loop_dispatch(loop, 0));
    outlive_loop_free(loop);
}

static _Atomic int observed;
static void count_change(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
    observed++;
}

static void test_child_closing_inherited_store_keeps_parent_seeing_changes_and_alive(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &store));
    uint64_t token = 0;
    observed = 0;
    CHECK_OK(outlive_kv_observe(store, "", count_change, NULL, NULL, &token));
    pid_t pid = fork();
    if (pid == 0) {
        /* What a child may do: close (and so free its loop), and exit. */
        outlive_store_close(store);
        _exit(0);
    }
    CHECK_MSG(wait_ok(pid), "the child could not close its copy");
    CHECK_MSG(run_lock_held(path, outlive_store_run_id(store)), "the parent's run lost its lock when the child closed");
    CHECK(write_from_another_process(path, "after-child-closed"));
    CHECK_MSG(harness_dispatch_until(outlive_store_loop(store), &observed, 1, 20),
              "the parent no longer sees other processes' changes after its child closed the handle");
    /* And again, to see the watch was not a one-shot. */
    CHECK(write_from_another_process(path, "second"));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &observed, 2, 20));
    outlive_store_close(store);
    harness_remove_tree(path);
}

static void test_child_closing_store_on_shared_loop_and_freeing_loop_changes_nothing_for_parent(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    CHECK_OK(outlive_loop_run_thread(loop));  /* the child has no copy of this thread */
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", loop, NULL, &store));
    uint64_t token = 0;
    observed = 0;
    CHECK_OK(outlive_kv_observe(store, "", count_change, NULL, NULL, &token));
    pid_t pid = fork();
    if (pid == 0) {
        outlive_store_close(store);
        outlive_loop_free(loop);  /* must not join a thread that is not in this process */
        _exit(0);
    }
    CHECK_MSG(wait_ok(pid), "the child could not close and free its copies");
    CHECK(write_from_another_process(path, "k"));
    double deadline = harness_now() + 20;
    while (observed < 1 && harness_now() < deadline) usleep(2000);
    CHECK_MSG(observed >= 1, "the parent's loop thread no longer sees changes after the child freed its copy");
    outlive_store_close(store);
    outlive_loop_free(loop);
    harness_remove_tree(path);
}

static void test_child_dispatching_parent_loop_is_refused_and_steals_no_wake_up(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &store));
    uint64_t token = 0;
    observed = 0;
    CHECK_OK(outlive_kv_observe(store, "", count_change, NULL, NULL, &token));
    /* A change is pending on the parent's inotify fd when the child is made. */
    CHECK(write_from_another_process(path, "pending"));
    outlive_loop *loop = outlive_store_loop(store);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        if (outlive_loop_dispatch(loop, 200) != OUTLIVE_E_STATE) bad |= 1;
        if (strstr(outlive_last_error(), "fork") == NULL) bad |= 2;
        if (outlive_loop_run_thread(loop) != OUTLIVE_E_STATE) bad |= 4;
        if (outlive_loop_fd(loop) != -1) bad |= 8;
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child dispatch was not refused (bits %d)", WEXITSTATUS(status));
    CHECK_MSG(harness_dispatch_until(loop, &observed, 1, 20), "the child took the parent's wake-up");
    outlive_store_close(store);
    harness_remove_tree(path);
}

static void interaction_runs(outlive_interaction *interaction, void *context) { (void)interaction; (void)context; }
static void operation_runs(outlive_operation *operation, void *context) { (void)operation; (void)context; }

static void test_queues_on_the_parent_loop_are_refused_in_the_child(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_interactions *interactions = NULL;
    CHECK_OK(outlive_interactions_new(loop, &interactions));
    outlive_operations *operations = NULL;
    CHECK_OK(outlive_operations_new(loop, 1, &operations));
    outlive_operation *running = NULL;
    CHECK_OK(outlive_operation_new(operation_runs, NULL, NULL, &running));
    CHECK_OK(outlive_operations_add(operations, running));
    harness_dispatch_for(loop, 0.05);
    CHECK(outlive_operation_get_state(running) == OUTLIVE_OPERATION_EXECUTING);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        outlive_interactions *more = NULL;
        outlive_operations *other = NULL;
        outlive_operation *operation = NULL;
        if (outlive_interactions_new(loop, &more) != OUTLIVE_E_STATE) bad |= 1;
        if (outlive_operations_new(loop, 1, &other) != OUTLIVE_E_STATE) bad |= 2;
        if (outlive_interactions_add(interactions, interaction_runs, NULL, NULL) != OUTLIVE_E_STATE) bad |= 4;
        if (outlive_interactions_suspend(interactions) != OUTLIVE_E_STATE) bad |= 8;
        if (outlive_operation_new(operation_runs, NULL, NULL, &operation) == OUTLIVE_OK &&
            outlive_operations_add(operations, operation) != OUTLIVE_E_STATE) bad |= 16;
        if (outlive_operation_finish(running) != OUTLIVE_E_STATE) bad |= 32;
        outlive_interactions_free(interactions);
        outlive_operations_free(operations);
        outlive_loop_free(loop);
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a queue call in the child was not refused (bits %d)", WEXITSTATUS(status));
    /* The parent's queues are untouched: its operation is still running, and finishes here. */
    CHECK(outlive_operation_get_state(running) == OUTLIVE_OPERATION_EXECUTING);
    CHECK_OK(outlive_operation_finish(running));
    outlive_operation_free(running);
    outlive_interactions_free(interactions);
    outlive_operations_free(operations);
    outlive_loop_free(loop);
}

static void ignore_message(const outlive_message *m, outlive_presentation *p, void *c) { (void)m; (void)p; (void)c; }
static int32_t any_priority(const outlive_message *m, void *c) { (void)m; (void)c; return 200; }

/* A store at `path` whose key "k" holds "1" (NULL if that failed). */
static outlive_store *open_with_k_set(const char *path) {
    outlive_store *store = NULL;
    if (outlive_store_open(path, "app", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    if (outlive_kv_set(store, "k", "1", 1) != OUTLIVE_OK) {
        outlive_store_close(store);
        return NULL;
    }
    return store;
}

/* Whether "k" still holds the "1" that open_with_k_set wrote. */
static bool k_still_set(outlive_store *store) {
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_kv_get(store, "k", &bytes, &size) != OUTLIVE_OK) return false;
    bool same = size == 1 && memcmp(bytes, "1", 1) == 0;
    outlive_free(bytes);
    return same;
}

/* A raw clone(2) runs no pthread_atfork handler: the handle knows it is the
 * parent's by the process id, which a store call no longer asks the kernel
 * for each time (it is cached in a page such a child finds wiped). */
static void test_store_call_in_a_child_made_by_raw_clone_is_refused(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_with_k_set(path);
    CHECK(store != NULL);
    outlive_message_draft *draft = NULL;
    CHECK_OK(outlive_message_draft_new("c", "t", &draft));
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(store, draft, id));
    long pid = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid == 0) {
        int bad = 0;
        if (outlive_kv_set(store, "k", "2", 1) != OUTLIVE_E_STATE) bad |= 1;
        if (outlive_message_post(store, draft, id) != OUTLIVE_E_STATE) bad |= 2;
        _exit(bad);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK(waitpid((pid_t)pid, &status, 0) == (pid_t)pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a store call in a child made by a raw clone was not refused");
    CHECK(k_still_set(store));
    size_t stored = 0;
    CHECK_OK(outlive_messages_count(store, "c", &stored));
    CHECK(stored == 1);
    outlive_message_draft_free(draft);
    outlive_store_close(store);
    harness_remove_tree(path);
}

static void test_every_store_call_in_child_is_refused_and_the_parent_run_stays(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_with_k_set(path);
    CHECK(store != NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        void *bytes = NULL;
        size_t size = 0;
        uint64_t token = 0;
        char id[OUTLIVE_ID_SIZE];
        outlive_signal_new_id(id);
        outlive_presenter presenter = { OUTLIVE_PRESENTER_VERSION, any_priority, ignore_message, NULL };
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new("c", "t", &draft);
        if (outlive_kv_set(store, "k", "2", 1) != OUTLIVE_E_STATE) bad |= 1;
        if (outlive_kv_get(store, "k", &bytes, &size) != OUTLIVE_E_STATE) bad |= 2;
        if (outlive_kv_observe(store, "", count_change, NULL, NULL, &token) != OUTLIVE_E_STATE) bad |= 4;
        if (outlive_signal_post(store, id, NULL, false) != OUTLIVE_E_STATE) bad |= 8;
        if (outlive_tasks_run_now(store) != OUTLIVE_E_STATE) bad |= 16;
        if (outlive_presenter_add(store, "p", &presenter, NULL, NULL) != OUTLIVE_E_STATE) bad |= 32;
        if (outlive_message_post(store, draft, id) != OUTLIVE_E_STATE) bad |= 64;
        if (outlive_store_check(store) != OUTLIVE_E_STATE) bad |= 128;
        outlive_message_draft_free(draft);
        outlive_store_close(store);
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a call in the child was not refused (bits %d)", WEXITSTATUS(status));
    CHECK(run_lock_held(path, outlive_store_run_id(store)));
    CHECK(k_still_set(store));
    /* The parent's run is still registered: another process sees it alive. */
    pid_t checker = fork();
    if (checker == 0) {
        outlive_store *other = NULL;
        if (outlive_store_open(path, "checker", NULL, NULL, &other) != OUTLIVE_OK) _exit(2);
        _exit(run_lock_held(path, outlive_store_run_id(store)) ? 0 : 1);
    }
    CHECK(wait_ok(checker));
    outlive_store_close(store);
    harness_remove_tree(path);
}

static outlive_handler *kept_completion;
static _Atomic int kept;
static void keep_completion(const outlive_object *task_id, const outlive_handler *completion) {
    (void)task_id;
    outlive_handler_copy(completion, &kept_completion);
    kept = 1;
}

static void test_task_completion_called_in_forked_child_completes_the_task(void) {
    const char *dir = harness_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    CHECK_OK(outlive_handler_register("fork_keep", "ID task_id, HANDLER completion", (void (*)(void))keep_completion));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(path, "app", NULL, NULL, &store));
    outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
    policy.timeout = 600;  /* a lost completion would leave the task running, never done */
    CHECK_OK(outlive_tasks_set_policy(store, &policy));
    outlive_handler *work = NULL;
    outlive_handler_new("fork_keep", NULL, NULL, &work);
    CHECK(work);
    CHECK_OK(outlive_task_add(store, work, NULL, NULL, 0, NULL));
    outlive_handler_free(work);
    kept = 0;
    CHECK_OK(outlive_tasks_run_now(store));
    CHECK(harness_dispatch_until(outlive_store_loop(store), &kept, 1, 20));
    pid_t pid = fork();
    if (pid == 0) {
        outlive_args *args = NULL;
        outlive_args_new(&args);
        outlive_args_set_bool(args, "success", true);
        outlive_status status = outlive_handler_call(kept_completion, args);
        _exit(status == OUTLIVE_OK ? 0 : 10 + (int)status);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the completion in the child returned status %d", WEXITSTATUS(status) - 10);
    size_t pending = 1;
    double deadline = harness_now() + 20;
    while (harness_now() < deadline) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 50));
        CHECK_OK(outlive_tasks_count(store, &pending));
        if (pending == 0) break;
    }
    CHECK_MSG(pending == 0, "the completion from the child was lost: the task is still there");
    /* The parent's own copy is still usable, and a second completion is refused. */
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    CHECK_STATUS(outlive_handler_call(kept_completion, args), OUTLIVE_E_STATE);
    outlive_args_free(args);
    outlive_handler_free(kept_completion);
    kept_completion = NULL;
    outlive_handler_unregister("fork_keep");
    outlive_store_close(store);
    harness_remove_tree(path);
}

/* One round of the race: a process opens a store on a thread while its main
 * thread forks children as fast as it can; each child waits (holding whatever
 * it inherited) until `hold` is closed. The opener then dies with kill -9. */
struct opener { const char *path; outlive_store *store; _Atomic int done; };
static void *open_on_thread(void *argument) {
    struct opener *opener = argument;
    if (outlive_store_open(opener->path, "opener", NULL, NULL, &opener->store) != OUTLIVE_OK) opener->store = NULL;
    opener->done = 1;
    return NULL;
}

static void test_fork_in_another_thread_during_open_never_keeps_the_new_run_alive(void) {
    /* Grandchildren are reparented here, so that they can be reaped. A child
     * forked while the opener's thread opens drops the run's lock as it starts
     * (atfork), so once every child has started none may still hold it. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int inherited = 0;
    for (int round = 0; round < 80; round++) {
        const char *dir = harness_temp_dir();
        char path[4096];
        snprintf(path, sizeof path, "%s", dir);
        int hold[2], report[2], started[2];
        CHECK(pipe(hold) == 0 && pipe(report) == 0 && pipe(started) == 0);
        pid_t opener_pid = fork();
        if (opener_pid == 0) {
            close(hold[1]);
            close(report[0]);
            struct opener opener = { path, NULL, 0 };
            pthread_t thread;
            if (pthread_create(&thread, NULL, open_on_thread, &opener) != 0) _exit(2);
            int forks = 0;
            for (int tries = 0; !opener.done && tries < 40; tries++) {
                pid_t child = fork();
                if (child > 0) forks++;  /* only a child that exists will say it started */
                if (child == 0) {
                    /* fork() has returned here: the atfork handlers have run. */
                    char byte = 's';
                    if (write(started[1], &byte, 1) != 1) _exit(5);
                    while (read(hold[0], &byte, 1) < 0 && errno == EINTR) {}
                    _exit(0);
                }
            }
            pthread_join(thread, NULL);
            /* The promise is about children that have started: one that the
             * kernel has not yet scheduled drops what it inherited as it starts. */
            for (char byte; forks > 0;) {
                ssize_t got = read(started[0], &byte, 1);
                if (got == 1) forks--;
                else if (got < 0 && errno != EINTR) _exit(6);
            }
            if (!opener.store) _exit(3);
            char run[OUTLIVE_ID_SIZE];
            snprintf(run, sizeof run, "%s", outlive_store_run_id(opener.store));
            if (write(report[1], run, sizeof run) != (ssize_t)sizeof run) _exit(4);
            raise(SIGKILL);
        }
        close(hold[0]);
        close(report[1]);
        close(started[0]);
        close(started[1]);
        char run[OUTLIVE_ID_SIZE] = {0};
        ssize_t got = read(report[0], run, sizeof run);
        close(report[0]);
        int status = 0;
        waitpid(opener_pid, &status, 0);
        /* The opener is dead; its children still live and hold what they inherited. */
        if (got == (ssize_t)sizeof run && run_lock_held(path, run)) inherited++;
        close(hold[1]);
        while (waitpid(-1, &status, 0) > 0) {}
        CHECK_MSG(got == (ssize_t)sizeof run, "round %d: the opener failed (status %d)", round, status);
        harness_remove_tree(path);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    CHECK_MSG(inherited == 0, "in %d of 80 rounds a child kept the dead opener's run alive", inherited);
}

HARNESS_MAIN(
    T(test_loop_made_before_any_store_is_refused_in_a_child),
    T(test_child_closing_inherited_store_keeps_parent_seeing_changes_and_alive),
    T(test_child_closing_store_on_shared_loop_and_freeing_loop_changes_nothing_for_parent),
    T(test_child_dispatching_parent_loop_is_refused_and_steals_no_wake_up),
    T(test_every_store_call_in_child_is_refused_and_the_parent_run_stays),
    T(test_store_call_in_a_child_made_by_raw_clone_is_refused),
    T(test_queues_on_the_parent_loop_are_refused_in_the_child),
    T(test_task_completion_called_in_forked_child_completes_the_task),
    T(test_fork_in_another_thread_during_open_never_keeps_the_new_run_alive),
)
