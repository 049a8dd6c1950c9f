/* Named queues across real processes (queue_worker): a parallel queue served
 * by three processes with limits 1, 2 and 4 while two others add 1,000 tasks,
 * one runner killed with SIGKILL mid-run; tasks due at a time, with the
 * processes idle until then, and an earlier task added by another process
 * moving their timers. */
#include "harness.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char log_path[4096];

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void prepare(const char *dir) {
    harness_store_side_file(dir, ".log", log_path, sizeof log_path);
    unlink(log_path);
    setenv("QUEUE_LOG", log_path, 1);
}

/* Starts queue_worker with args (NULL-terminated, after the program name);
 * its handler completes after job_ms milliseconds. */
static pid_t spawn(const char *const *args, int job_ms) {
    char program[4096];
    snprintf(program, sizeof program, "%s/queue_worker", harness_bin_dir());
    pid_t pid = fork();
    if (pid == 0) {
        char ms[32];
        snprintf(ms, sizeof ms, "%d", job_ms);
        setenv("QUEUE_JOB_MS", ms, 1);
        const char *argv[40] = { program };
        for (int i = 0; args[i] && i < 38; i++) argv[i + 1] = args[i];
        execv(program, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One line of the log: "run LABEL PID WALL WAKEUPS", "ready PID" or "stats PID WAKEUPS MAX". */
struct entry {
    char kind[8];
    char label[64];
    int pid;
    double at;
    long wakeups;
    int max_in_flight;
};

static int read_log(struct entry *entries, int capacity) {
    FILE *file = fopen(log_path, "r");
    if (!file) return 0;
    int count = 0;
    char line[256];
    while (count < capacity && fgets(line, sizeof line, file)) {
        struct entry *e = &entries[count];
        memset(e, 0, sizeof *e);
        if (sscanf(line, "run %63s %d %lf %ld", e->label, &e->pid, &e->at, &e->wakeups) == 4) {
            strcpy(e->kind, "run");
        } else if (sscanf(line, "stats %d %ld %d", &e->pid, &e->wakeups, &e->max_in_flight) == 3) {
            strcpy(e->kind, "stats");
        } else if (sscanf(line, "ready %d", &e->pid) == 1) {
            strcpy(e->kind, "ready");
        } else {
            continue;
        }
        count++;
    }
    fclose(file);
    return count;
}

static int count_kind(const struct entry *entries, int count, const char *kind, int pid) {
    int found = 0;
    for (int i = 0; i < count; i++)
        if (!strcmp(entries[i].kind, kind) && (pid == 0 || entries[i].pid == pid)) found++;
    return found;
}

#define LOG_CAPACITY 4096
static struct entry entries[LOG_CAPACITY];

/* Waits until the log holds `wanted` lines of `kind` (of `pid`, or any when 0). */
static bool wait_for(const char *kind, int pid, int wanted, double seconds) {
    double deadline = harness_now() + seconds;
    while (harness_now() < deadline) {
        int count = read_log(entries, LOG_CAPACITY);
        if (count_kind(entries, count, kind, pid) >= wanted) return true;
        usleep(20000);
    }
    return false;
}

/* The counts of `queue` as the store keeps them. */
static bool queue_counts(outlive_store *store, const char *queue, size_t *pending, size_t *running) {
    outlive_queue_list *list = NULL;
    if (outlive_queue_list_new(store, NULL, 0, &list) != OUTLIVE_OK) return false;
    bool found = false;
    for (size_t i = 0; i < outlive_queue_list_count(list); i++) {
        if (strcmp(outlive_queue_list_name(list, i), queue) != 0) continue;
        *pending = outlive_queue_list_pending(list, i);
        *running = outlive_queue_list_running(list, i);
        found = true;
    }
    outlive_queue_list_free(list);
    return found;
}

static int label_index(const char *label) {
    if ((label[0] != 'a' && label[0] != 'b') || label[1] == 0) return -1;
    int n = atoi(label + 1);
    if (n < 0 || n >= 500) return -1;
    return (label[0] == 'a' ? 0 : 500) + n;
}

static void test_parallel_queue_runs_each_task_once_across_runners_with_their_limits_and_a_killed_runner_loses_nothing(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "observer", NULL, NULL, &store));
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "jobs", OUTLIVE_QUEUE_PARALLEL));
    const size_t limits[3] = { 1, 2, 4 };
    pid_t runners[3];
    for (int r = 0; r < 3; r++) {
        char limit[16];
        snprintf(limit, sizeof limit, "%zu", limits[r]);
        const char *args[] = { dir, "runner", "--serve", "default", "0", "--serve", "jobs", limit, "--ready", "--run", NULL };
        /* The runner that is killed works slowly: it surely has tasks in flight then. */
        runners[r] = spawn(args, r == 2 ? 300 : 2);
        CHECK(runners[r] > 0);
    }
    CHECK_MSG(wait_for("ready", 0, 3, 30), "the runners did not start");
    const char *adder_a[] = { dir, "adder", "--serve", "default", "0", "--add", "jobs", "a", "0", "500", NULL };
    const char *adder_b[] = { dir, "adder", "--serve", "default", "0", "--add", "jobs", "b", "0", "500", NULL };
    pid_t adders[2] = { spawn(adder_a, 0), spawn(adder_b, 0) };
    /* Once the slow runner has started a few tasks, kill it mid-run. */
    pid_t killed = runners[2];
    CHECK_MSG(wait_for("run", killed, 4, 60), "the runner with limit 4 ran nothing");
    CHECK(kill(killed, SIGKILL) == 0);
    CHECK(wait_exit(killed) == 128 + SIGKILL);
    CHECK(wait_exit(adders[0]) == 0);
    CHECK(wait_exit(adders[1]) == 0);
    size_t pending = 1, running = 1;
    double deadline = harness_now() + 120;
    while (harness_now() < deadline && (pending != 0 || running != 0)) {
        CHECK(queue_counts(store, "jobs", &pending, &running));
        if (pending != 0 || running != 0) usleep(50000);
    }
    CHECK_MSG(pending == 0 && running == 0, "the queue still holds %zu pending and %zu running tasks", pending, running);
    for (int r = 0; r < 2; r++) {
        kill(runners[r], SIGTERM);
        CHECK(wait_exit(runners[r]) == 0);
    }
    int count = read_log(entries, LOG_CAPACITY);
    static int runs[1000], last_pid[1000], killed_runs[1000];
    memset(runs, 0, sizeof runs);
    memset(killed_runs, 0, sizeof killed_runs);
    int by_killed = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(entries[i].kind, "run") != 0) continue;
        int index = label_index(entries[i].label);
        CHECK_MSG(index >= 0, "a run of an unknown task %s", entries[i].label);
        runs[index]++;
        last_pid[index] = entries[i].pid;
        if (entries[i].pid == killed) { killed_runs[index]++; by_killed++; }
    }
    int again = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK_MSG(runs[i] >= 1, "task %d never ran", i);
        if (runs[i] == 1) continue;
        /* Run twice only when the killed runner held it: once there, once more elsewhere. */
        CHECK_MSG(runs[i] == 2 && killed_runs[i] == 1 && last_pid[i] != killed,
                  "task %d ran %d times (%d by the killed runner)", i, runs[i], killed_runs[i]);
        again++;
    }
    CHECK_MSG(again >= 1 && again <= 4, "%d tasks ran again after the kill (the killed runner held 1 to 4)", again);
    CHECK(by_killed >= 4);
    for (int r = 0; r < 2; r++) {
        bool seen = false;
        for (int i = 0; i < count; i++) {
            if (strcmp(entries[i].kind, "stats") != 0 || entries[i].pid != runners[r]) continue;
            seen = true;
            CHECK_MSG(entries[i].max_in_flight >= 1 && (size_t)entries[i].max_in_flight <= limits[r],
                      "a runner with limit %zu had %d tasks in flight", limits[r], entries[i].max_in_flight);
        }
        CHECK(seen);
        CHECK_MSG(count_kind(entries, count, "run", runners[r]) > 0, "the runner with limit %zu ran nothing", limits[r]);
    }
    outlive_store_close(store);
    harness_remove_store(dir);
    unlink(log_path);
}

static const struct entry *run_of(const struct entry *list, int count, const char *label) {
    for (int i = 0; i < count; i++)
        if (!strcmp(list[i].kind, "run") && !strcmp(list[i].label, label)) return &list[i];
    return NULL;
}

static void test_due_tasks_start_at_their_time_idle_until_then_and_an_earlier_one_from_elsewhere_moves_the_timer(void) {
    const char *dir = harness_store_location();
    prepare(dir);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "producer", NULL, NULL, &store));
    CHECK_OK(outlive_queue_serve(store, "default", 0));
    CHECK_OK(outlive_queue_declare(store, "timed", OUTLIVE_QUEUE_PARALLEL));
    pid_t runners[2];
    for (int r = 0; r < 2; r++) {
        const char *args[] = { dir, "runner", "--serve", "default", "0", "--serve", "timed", "1", "--ready", "--run", NULL };
        runners[r] = spawn(args, 0);
    }
    CHECK_MSG(wait_for("ready", 0, 2, 30), "the runners did not start");
    usleep(200000);
    double late_due = wall() + 4.0;
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", "late");
    outlive_handler *work = NULL;
    CHECK_OK(outlive_handler_new("queue_job", NULL, args, &work));
    outlive_args_free(args);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "timed";
    options.due_at = late_due;
    CHECK_OK(outlive_task_enqueue(store, work, &options, NULL, NULL));
    outlive_handler_free(work);
    /* Another process adds a task due earlier: the runners' timers move to it. */
    double early_due = wall() + 2.0;
    char at[64];
    snprintf(at, sizeof at, "%.6f", early_due);
    const char *adder[] = { dir, "adder", "--serve", "default", "0", "--add-due", "timed", "early", at, NULL };
    CHECK(wait_exit(spawn(adder, 0)) == 0);
    CHECK_MSG(wait_for("run", 0, 2, 60), "the due tasks did not run");
    for (int r = 0; r < 2; r++) {
        kill(runners[r], SIGTERM);
        CHECK(wait_exit(runners[r]) == 0);
    }
    int count = read_log(entries, LOG_CAPACITY);
    const struct entry *early = run_of(entries, count, "early"), *late = run_of(entries, count, "late");
    CHECK(early && late);
    CHECK_MSG(early->at >= early_due, "the early task started %.3f s before its time", early_due - early->at);
    CHECK_MSG(late->at >= late_due, "the late task started %.3f s before its time", late_due - late->at);
    CHECK_MSG(early->at < late_due, "the early task waited for the later one's time: the timer did not move");
    CHECK(count_kind(entries, count, "run", 0) == 2);
    /* Idle until then: a few wake-ups (the two adds seen on the feed, the timer,
     * the other runner's writes), not a loop that polls. */
    CHECK_MSG(early->wakeups <= 12, "a runner woke %ld times before the first due task", early->wakeups);
    for (int i = 0; i < count; i++) {
        if (strcmp(entries[i].kind, "stats") != 0) continue;
        CHECK_MSG(entries[i].wakeups <= 20, "a runner woke %ld times in about 4 s with two due tasks", entries[i].wakeups);
    }
    outlive_store_close(store);
    harness_remove_store(dir);
    unlink(log_path);
}

HARNESS_MAIN(
    T(test_parallel_queue_runs_each_task_once_across_runners_with_their_limits_and_a_killed_runner_loses_nothing),
    T(test_due_tasks_start_at_their_time_idle_until_then_and_an_earlier_one_from_elsewhere_moves_the_timer),
)
