/* The task queue across real processes (tasks_worker + libtasks_handlers.so):
 * a handler unknown here runs in a process that loads it; groups; one runner
 * at a time; kill -9 of the runner mid-task; three adders and two runners at
 * once; a completion called from another process. */
#include "harness.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char log_path[4096];
static char lib_path[4096];

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void prepare(const char *dir) {
    harness_store_side_file(dir, ".log", log_path, sizeof log_path);
    unlink(log_path);
    setenv("TASKS_LOG", log_path, 1);
    snprintf(lib_path, sizeof lib_path, "%s/libtasks_handlers.so", harness_bin_dir());
}

/* Starts tasks_worker with argv (NULL-terminated, after the program name). */
static pid_t spawn_with(const char *const *args, bool quiet) {
    char program[4096];
    snprintf(program, sizeof program, "%s/tasks_worker", harness_bin_dir());
    pid_t pid = fork();
    if (pid == 0) {
        if (quiet) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, STDERR_FILENO);
        }
        const char *argv[32] = { program };
        for (int i = 0; args[i] && i < 30; i++) argv[i + 1] = args[i];
        execv(program, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static pid_t spawn(const char *const *args) { return spawn_with(args, false); }

static int wait_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Lines of the handlers' log. */
static int read_log(char lines[][160], int capacity) {
    FILE *file = fopen(log_path, "r");
    if (!file) return 0;
    int count = 0;
    while (count < capacity && fgets(lines[count], 160, file)) {
        lines[count][strcspn(lines[count], "\n")] = 0;
        count++;
    }
    fclose(file);
    return count;
}

static bool wait_for_log_lines(int wanted) {
    static char lines[16][160];
    double deadline = monotonic() + 30;
    while (monotonic() < deadline) {
        if (read_log(lines, 16) >= wanted) return true;
        usleep(10000);
    }
    return false;
}

static outlive_status add(outlive_store *store, const char *handler, const char *label, const char *start, const char *member) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", label);
    outlive_handler *work = NULL;
    outlive_handler_new(handler, NULL, args, &work);
    outlive_args_free(args);
    const char *members[1] = { member };
    outlive_status status = outlive_task_add(store, work, start, member ? members : NULL, member ? 1 : 0, NULL);
    outlive_handler_free(work);
    return status;
}

static void test_tasks_this_process_cannot_resolve_run_in_one_that_can(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    CHECK_OK(outlive_tasks_set_triggers(store, 1, 0));
    CHECK_STATUS(outlive_handler_resolve("tasks_record"), OUTLIVE_E_UNRESOLVED);
    const char *labels[] = { "one", "two", "three" };
    for (int i = 0; i < 3; i++) CHECK_OK(add(store, "tasks_record", labels[i], NULL, NULL));
    /* Runs here leave them alone: not attempted, not failed; the first says
     * why it waits (for `outlive tasks`). */
    CHECK_OK(outlive_tasks_run_now(store));
    for (int i = 0; i < 10; i++) CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 10));
    outlive_task_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 3);
    for (size_t i = 0; i < count; i++) CHECK(outlive_task_list_attempts(list, i) == 0 && outlive_task_list_state(list, i) == OUTLIVE_TASK_PENDING);
    const char *why = outlive_task_list_last_error(list, 0);
    CHECK(why && strstr(why, "no handler named tasks_record is declared in process app"));
    CHECK(outlive_task_list_last_error(list, 1) == NULL && outlive_task_list_last_error(list, 2) == NULL);
    outlive_task_list_free(list);
    const char *args[] = { dir, "worker", "--load", lib_path, "--run-until-pending", "0", "30", NULL };
    CHECK(wait_exit(spawn(args)) == 0);
    char lines[8][160];
    CHECK(read_log(lines, 8) == 3);
    for (int i = 0; i < 3; i++) {
        char expected[64];
        snprintf(expected, sizeof expected, "tasks_record %s 1 ", labels[i]);
        CHECK(strncmp(lines[i], expected, strlen(expected)) == 0);
    }
    size_t pending = 9;
    CHECK_OK(outlive_tasks_count(store, &pending));
    CHECK(pending == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
    unlink(log_path);
}

static void test_group_members_wait_for_their_start_in_another_process(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    CHECK_OK(outlive_tasks_set_triggers(store, 0, 1e6));
    CHECK_OK(add(store, "tasks_judge", "fail-identify", "profile:A", NULL));
    CHECK_OK(add(store, "tasks_judge", "track", NULL, "profile:A"));
    CHECK_OK(add(store, "tasks_judge", "push", NULL, NULL));
    CHECK_OK(add(store, "tasks_judge", "identify-B", "profile:B", NULL));
    CHECK_OK(add(store, "tasks_judge", "track-B", NULL, "profile:B"));
    const char *args[] = { dir, "worker", "--load", lib_path, "--triggers", "0", "1000000", "--policy", "1000", "20", "60",
                           "--run-until-pending", "2", "30", NULL };
    CHECK(wait_exit(spawn(args)) == 0);
    char lines[8][160];
    int count = read_log(lines, 8);
    CHECK_MSG(count == 4, "%d lines", count);
    CHECK(strstr(lines[0], "tasks_judge fail-identify 1 ") == lines[0]);
    CHECK(strstr(lines[1], "tasks_judge push 1 ") == lines[1]);
    CHECK(strstr(lines[2], "tasks_judge identify-B 1 ") == lines[2]);
    CHECK(strstr(lines[3], "tasks_judge track-B 1 ") == lines[3]);
    outlive_task_list *list = NULL;
    size_t listed = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    listed = outlive_task_list_count(list);
    CHECK(listed == 2);
    CHECK(outlive_task_list_attempts(list, 0) == 1 && outlive_task_list_last_error(list, 0) && !strcmp(outlive_task_list_last_error(list, 0), "judged a failure"));
    CHECK(outlive_task_list_attempts(list, 1) == 0 && outlive_task_list_group_member_count(list, 1) == 1);
    outlive_task_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
    unlink(log_path);
}

static void test_killed_runner_loses_no_task_and_the_interrupted_one_runs_again(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    CHECK_OK(outlive_tasks_set_triggers(store, 0, 1e6));
    CHECK_OK(add(store, "tasks_stall", "stalls", NULL, NULL));
    CHECK_OK(add(store, "tasks_record", "after", NULL, NULL));
    const char *first[] = { dir, "runner1", "--load", lib_path, "--run-until-pending", "0", "60", NULL };
    pid_t runner = spawn(first);
    CHECK(wait_for_log_lines(1));
    outlive_task_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
    count = outlive_task_list_count(list);
    CHECK(count == 2 && outlive_task_list_state(list, 0) == OUTLIVE_TASK_RUNNING);
    outlive_task_list_free(list);
    kill(runner, SIGKILL);
    CHECK(wait_exit(runner) == 128 + SIGKILL);
    /* This process sees the death through the liveness lock: the task is pending again. */
    double deadline = monotonic() + 20;
    bool returned = false;
    while (!returned && monotonic() < deadline) {
        CHECK_OK(outlive_loop_dispatch(outlive_store_loop(store), 20));
        CHECK_OK(outlive_task_list_new(store, NULL, 10, &list));
        count = outlive_task_list_count(list);
        returned = count == 2 && outlive_task_list_state(list, 0) == OUTLIVE_TASK_PENDING;
        if (returned) CHECK(outlive_task_list_last_error(list, 0) && strstr(outlive_task_list_last_error(list, 0), "died during the attempt"));
        outlive_task_list_free(list);
    }
    CHECK(returned);
    const char *second[] = { dir, "runner2", "--load", lib_path, "--run-until-pending", "0", "30", NULL };
    CHECK(wait_exit(spawn(second)) == 0);
    char lines[8][160];
    CHECK(read_log(lines, 8) == 3);
    CHECK(strstr(lines[0], "tasks_stall stalls 1 ") == lines[0]);
    CHECK(strstr(lines[1], "tasks_stall stalls 2 ") == lines[1]);
    CHECK(strstr(lines[2], "tasks_record after 1 ") == lines[2]);
    outlive_store_close(store);
    harness_remove_store(dir);
    unlink(log_path);
}

static void test_three_adders_and_two_runners_run_every_task_once(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));  /* creates the store before the workers race */
    char done[4200];
    harness_store_side_file(dir, ".adders-done", done, sizeof done);
    unlink(done);
    const char *run1[] = { dir, "runner", "--load", lib_path, "--triggers", "1", "0", "--run-until-file-and-empty", done, "60", NULL };
    const char *run2[] = { dir, "runner", "--load", lib_path, "--triggers", "5", "0.05", "--run-until-file-and-empty", done, "60", NULL };
    pid_t runners[2] = { spawn(run1), spawn(run2) };
    const char *add1[] = { dir, "adder", "--triggers", "0", "1000000", "--add", "tasks_record", "a-", "100", NULL };
    const char *add2[] = { dir, "adder", "--triggers", "0", "1000000", "--add", "tasks_record", "b-", "100", NULL };
    const char *add3[] = { dir, "adder", "--triggers", "0", "1000000", "--add", "tasks_record", "c-", "100", NULL };
    pid_t adders[3] = { spawn(add1), spawn(add2), spawn(add3) };
    for (int i = 0; i < 3; i++) CHECK(wait_exit(adders[i]) == 0);
    int fd = open(done, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0);
    close(fd);
    for (int i = 0; i < 2; i++) CHECK(wait_exit(runners[i]) == 0);
    static char lines[400][160];
    int count = read_log(lines, 400);
    CHECK_MSG(count == 300, "%d calls for 300 tasks", count);
    static bool seen[3][100];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < count; i++) {
        char prefix = 0;
        int n = -1;
        CHECK(sscanf(lines[i], "tasks_record %c-%d", &prefix, &n) == 2);
        CHECK(prefix >= 'a' && prefix <= 'c' && n >= 0 && n < 100);
        CHECK_MSG(!seen[prefix - 'a'][n], "%c-%d ran twice", prefix, n);
        seen[prefix - 'a'][n] = true;
    }
    size_t pending = 9;
    CHECK_OK(outlive_tasks_count(store, &pending));
    CHECK(pending == 0);
    outlive_store_close(store);
    unlink(done);
    harness_remove_store(dir);
    unlink(log_path);
}

static void test_completion_called_from_another_process_ends_the_task(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    char defer[4200];
    harness_store_side_file(dir, ".completion", defer, sizeof defer);
    unlink(defer);
    setenv("TASKS_DEFER_FILE", defer, 1);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    CHECK_OK(outlive_tasks_set_triggers(store, 0, 1e6));
    CHECK_OK(add(store, "tasks_defer", "elsewhere", NULL, NULL));
    CHECK_OK(add(store, "tasks_record", "next", NULL, NULL));
    const char *runner_args[] = { dir, "runner", "--load", lib_path, "--run-until-pending", "0", "60", NULL };
    pid_t runner = spawn(runner_args);
    double deadline = monotonic() + 30;
    while (access(defer, F_OK) != 0 && monotonic() < deadline) usleep(10000);
    CHECK(access(defer, F_OK) == 0);
    /* One at a time: "next" waits for the completion. */
    char lines[8][160];
    CHECK(read_log(lines, 8) == 1);
    const char *completer[] = { dir, "completer", "--complete", defer, "1", NULL };
    CHECK(wait_exit(spawn(completer)) == 0);
    CHECK(wait_exit(runner) == 0);
    CHECK(read_log(lines, 8) == 2);
    CHECK(strstr(lines[1], "tasks_record next 1 ") == lines[1]);
    /* Called again, it is refused: the attempt ended. */
    const char *again[] = { dir, "completer", "--complete", defer, "1", NULL };
    CHECK(wait_exit(spawn_with(again, true)) == 2);
    outlive_store_close(store);
    unlink(defer);
    harness_remove_store(dir);
    unlink(log_path);
}

HARNESS_MAIN(
    T(test_tasks_this_process_cannot_resolve_run_in_one_that_can),
    T(test_group_members_wait_for_their_start_in_another_process),
    T(test_killed_runner_loses_no_task_and_the_interrupted_one_runs_again),
    T(test_three_adders_and_two_runners_run_every_task_once),
    T(test_completion_called_from_another_process_ends_the_task),
)
