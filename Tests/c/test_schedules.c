/* Periodic tasks (schedules) from C: listing and replacing; bad input that
 * must get a precise status and store nothing; and, across real processes
 * (schedules_firer), one firing per period while firers are killed and
 * restarted, one firing (not a burst) after a pause with no process alive, and
 * a change made by another process moving the firers' timer.
 *
 * The tasks a schedule added are checked after the fact: this process removes
 * the schedule, runs the tasks (its handler records the `scheduled_at` each
 * received), and reads each task's creation time (the firing's time). */
#include "harness.h"
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FIRINGS 512

/* Without libm (the suites link none). */
static double distance(double a, double b) { return a > b ? a - b : b - a; }
static double nearest_whole(double x) { return (double)(long long)(x + (x < 0 ? -0.5 : 0.5)); }
static long long seconds_into(double time, long long unit) { return (long long)time % unit; }

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ── the handler the schedules' tasks call ── */

struct firing { char id[OUTLIVE_ID_SIZE]; double scheduled; double created; };
static struct firing firings[MAX_FIRINGS];
static int firing_count;
static int untimed_calls;

static void sched_tick(double scheduled_at, const outlive_object *task_id) {
    if (firing_count >= MAX_FIRINGS) return;
    snprintf(firings[firing_count].id, OUTLIVE_ID_SIZE, "%s", outlive_object_string(task_id));
    firings[firing_count].scheduled = scheduled_at;
    firing_count++;
}

static void sched_plain(void) { untimed_calls++; }

static outlive_store *open_store(const char *dir) {
    static bool registered;
    if (!registered) {
        registered = true;
        outlive_handler_register("sched_tick", "DOUBLE scheduled_at, ID task_id", (void (*)(void))sched_tick);
        outlive_handler_register("sched_plain", "", (void (*)(void))sched_plain);
    }
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "test", NULL, NULL, &store) != OUTLIVE_OK) return NULL;
    /* Runs start only when the test asks. */
    outlive_tasks_set_triggers(store, 0, 1e9);
    return store;
}

static outlive_status set_schedule(outlive_store *store, const char *name, const char *handler, double interval,
                                   const char *cron, const outlive_task_options *options, double *out_next) {
    outlive_handler *work = NULL;
    outlive_status status = outlive_handler_new(handler, NULL, NULL, &work);
    if (status != OUTLIVE_OK) return status;
    outlive_schedule_period period = OUTLIVE_SCHEDULE_PERIOD_INIT;
    period.interval_seconds = interval;
    period.cron = cron;
    status = outlive_schedule_set(store, name, work, &period, options, out_next);
    outlive_handler_free(work);
    return status;
}

static size_t schedule_count(outlive_store *store) {
    outlive_schedule_list *list = NULL;
    if (outlive_schedule_list_new(store, NULL, 0, &list) != OUTLIVE_OK) return 9999;
    size_t count = outlive_schedule_list_count(list);
    outlive_schedule_list_free(list);
    return count;
}

static size_t task_count(outlive_store *store) {
    size_t count = 9999;
    outlive_tasks_count(store, &count);
    return count;
}

/* Runs every stored task here and fills `firings` (sorted by scheduled time)
 * with each task's scheduled_at and creation time. */
static bool collect_firings(outlive_store *store) {
    firing_count = 0;
    struct firing listed[MAX_FIRINGS];
    int listed_count = 0;
    outlive_task_list *list = NULL;
    if (outlive_task_list_new(store, NULL, 0, &list) != OUTLIVE_OK) return false;
    for (size_t i = 0; i < outlive_task_list_count(list) && listed_count < MAX_FIRINGS; i++) {
        snprintf(listed[listed_count].id, OUTLIVE_ID_SIZE, "%s", outlive_task_list_id(list, i));
        listed[listed_count].created = outlive_task_list_created(list, i);
        listed_count++;
    }
    outlive_task_list_free(list);
    outlive_tasks_run_now(store);
    double deadline = harness_now() + 30;
    while (task_count(store) > 0 && harness_now() < deadline) outlive_loop_dispatch(outlive_store_loop(store), 20);
    if (task_count(store) != 0 || firing_count != listed_count) return false;
    for (int i = 0; i < firing_count; i++) {
        firings[i].created = NAN;
        for (int j = 0; j < listed_count; j++)
            if (!strcmp(firings[i].id, listed[j].id)) firings[i].created = listed[j].created;
        if (isnan(firings[i].created)) return false;
    }
    for (int i = 1; i < firing_count; i++)
        for (int j = i; j > 0 && firings[j - 1].scheduled > firings[j].scheduled; j--) {
            struct firing swap = firings[j];
            firings[j] = firings[j - 1];
            firings[j - 1] = swap;
        }
    return true;
}

/* The policy, checked on every firing: the first stands for the first period;
 * each is on the schedule's grid, happened at or after its period, and
 * stands for the first period after the firing before it — so no period
 * fires twice, none is skipped while a firer was on time, and periods missed
 * together fire once. An empty string when it holds, else why not. */
static const char *check_policy(double first, double interval) {
    static char why[256];
    if (firing_count == 0) return "no firing";
    if (distance(firings[0].scheduled, first) > 1e-6) {
        snprintf(why, sizeof why, "the first firing stands for %.3f, not the first period %.3f", firings[0].scheduled, first);
        return why;
    }
    for (int i = 0; i < firing_count; i++) {
        /* Times near 1.8e9 s carry about 2e-7 s of rounding. */
        double periods = (firings[i].scheduled - first) / interval;
        if (distance(periods, nearest_whole(periods)) * interval > 1e-5) {
            snprintf(why, sizeof why, "firing %d stands for %.6f, off the grid", i, firings[i].scheduled);
            return why;
        }
        if (firings[i].created < firings[i].scheduled) {
            snprintf(why, sizeof why, "firing %d happened at %.6f, before its period %.6f", i, firings[i].created, firings[i].scheduled);
            return why;
        }
        if (i == 0) continue;
        if (firings[i].scheduled <= firings[i - 1].created || firings[i].scheduled - interval > firings[i - 1].created + 1e-6) {
            snprintf(why, sizeof why, "firing %d stands for %.6f; the firing before it happened at %.6f (period %.2f)", i,
                     firings[i].scheduled, firings[i - 1].created, interval);
            return why;
        }
    }
    return "";
}

/* ── processes ── */

static pid_t spawn_firer(const char *dir, const char *seconds, int *out_stdout) {
    char program[4096];
    snprintf(program, sizeof program, "%s/schedules_firer", harness_bin_dir());
    int pipe_fds[2] = { -1, -1 };
    if (out_stdout && pipe(pipe_fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (out_stdout) {
            dup2(pipe_fds[1], STDOUT_FILENO);
            close(pipe_fds[0]);
            close(pipe_fds[1]);
        }
        else {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, STDOUT_FILENO);
        }
        execl(program, program, dir, seconds, (char *)NULL);
        _exit(127);
    }
    if (out_stdout) {
        close(pipe_fds[1]);
        *out_stdout = pipe_fds[0];
    }
    return pid;
}

/* Waits for the firer's "ready" line on its stdout. */
static bool wait_ready(int fd) {
    char buffer[16] = { 0 };
    ssize_t got = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    return got >= 5 && !strncmp(buffer, "ready", 5);
}

static int wait_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ── tests ── */

static void test_schedules_are_listed_in_name_order_replaced_and_removed(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    double before = wall(), next_nightly = 0, next_poll = 0;
    CHECK_OK(set_schedule(store, "poll", "sched_plain", 30, NULL, NULL, &next_poll));
    CHECK(next_poll >= before + 30 && next_poll <= wall() + 30);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.priority = -3;
    CHECK_OK(set_schedule(store, "nightly", "sched_tick", 0, "30 2 * * *", &options, &next_nightly));
    /* The next 02:30 UTC. */
    CHECK(seconds_into(next_nightly, 86400) == 2 * 3600 + 30 * 60 && next_nightly == (double)(long long)next_nightly && next_nightly > before && next_nightly <= before + 86400);

    outlive_schedule_list *list = NULL;
    CHECK_OK(outlive_schedule_list_new(store, NULL, 0, &list));
    CHECK(outlive_schedule_list_count(list) == 2);
    CHECK(!strcmp(outlive_schedule_list_name(list, 0), "nightly"));
    CHECK(!strcmp(outlive_schedule_list_handler_name(list, 0), "sched_tick"));
    CHECK(!strcmp(outlive_schedule_list_cron(list, 0), "30 2 * * *"));
    CHECK(outlive_schedule_list_interval(list, 0) == 0);
    CHECK(outlive_schedule_list_next_fire(list, 0) == next_nightly);
    CHECK(outlive_schedule_list_last_fired(list, 0) == 0);
    CHECK(!strcmp(outlive_schedule_list_queue(list, 0), "default"));
    CHECK(outlive_schedule_list_priority(list, 0) == -3);
    CHECK(!strcmp(outlive_schedule_list_name(list, 1), "poll"));
    CHECK(outlive_schedule_list_cron(list, 1) == NULL);
    CHECK(outlive_schedule_list_interval(list, 1) == 30);
    CHECK(outlive_schedule_list_next_fire(list, 1) == next_poll);
    CHECK(outlive_schedule_list_priority(list, 1) == 0);
    CHECK(outlive_schedule_list_name(list, 2) == NULL && outlive_schedule_list_next_fire(list, 2) == 0);
    outlive_schedule_list_free(list);

    /* Paging by name; `after` need not exist. */
    CHECK_OK(outlive_schedule_list_new(store, "nightly", 0, &list));
    CHECK(outlive_schedule_list_count(list) == 1 && !strcmp(outlive_schedule_list_name(list, 0), "poll"));
    outlive_schedule_list_free(list);
    CHECK_OK(outlive_schedule_list_new(store, "m", 1, &list));
    CHECK(outlive_schedule_list_count(list) == 1 && !strcmp(outlive_schedule_list_name(list, 0), "nightly"));
    outlive_schedule_list_free(list);

    /* Replacing keeps one schedule of the name, with the new period. */
    CHECK_OK(set_schedule(store, "poll", "sched_plain", 0, "@hourly", NULL, &next_poll));
    CHECK(seconds_into(next_poll, 3600) == 0 && next_poll == (double)(long long)next_poll);
    CHECK(schedule_count(store) == 2);
    CHECK_OK(outlive_schedule_list_new(store, "nightly", 0, &list));
    CHECK(!strcmp(outlive_schedule_list_cron(list, 0), "@hourly") && outlive_schedule_list_interval(list, 0) == 0);
    outlive_schedule_list_free(list);

    CHECK_OK(outlive_schedule_remove(store, "poll"));
    CHECK_STATUS(outlive_schedule_remove(store, "poll"), OUTLIVE_E_NOT_FOUND);
    CHECK(schedule_count(store) == 1);
    /* Nothing was due: no task was added. */
    CHECK(task_count(store) == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_malformed_schedules_get_a_precise_status_and_store_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    outlive_handler *work = NULL;
    CHECK_OK(outlive_handler_new("sched_plain", NULL, NULL, &work));
    outlive_schedule_period period = OUTLIVE_SCHEDULE_PERIOD_INIT;
    period.interval_seconds = 1;
    char long_name[OUTLIVE_SCHEDULE_MAX_NAME_SIZE + 2];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK_STATUS(outlive_schedule_set(NULL, "a", work, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, NULL, work, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, "", work, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, long_name, work, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "128"));
    CHECK_STATUS(outlive_schedule_set(store, "no spaces", work, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, "a", NULL, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, "a", work, NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_set(store, "a", (const outlive_handler *)store, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);

    outlive_schedule_period bad = period;
    bad.version = 99;
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &bad, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "version"));
    const double intervals[] = { 0, 0.009, -1, NAN, INFINITY, -INFINITY, 2e9 };
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        bad = period;
        bad.interval_seconds = intervals[i];
        CHECK_STATUS(outlive_schedule_set(store, "a", work, &bad, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    }
    bad = period;
    bad.cron = "* * * * *";
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &bad, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "both"));

    char long_cron[OUTLIVE_SCHEDULE_MAX_CRON_SIZE + 8];
    memset(long_cron, ' ', sizeof long_cron - 1);
    memcpy(long_cron, "* * * * *", 9);
    long_cron[sizeof long_cron - 1] = 0;
    const char *crons[] = {
        "", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 0 *", "* * * 13 *",
        "* * * * 8", "5-1 * * * *", "*/0 * * * *", "*/61 * * * *", "1/x * * * *", "a * * * *", "1,,2 * * * *",
        "1, * * * *", "-1 * * * *", "1-2-3 * * * *", "* * * FOO *", "* * * * MON-FRI-SAT", "@every_minute", "@", "0 0 30 2 *",
        "0 0 31 4,6,9,11 *", "1.5 * * * *", "* * * * 1/0", "\xff * * * *", long_cron,
    };
    for (size_t i = 0; i < sizeof crons / sizeof crons[0]; i++) {
        bad = period;
        bad.interval_seconds = 0;
        bad.cron = crons[i];
        outlive_status status = outlive_schedule_set(store, "a", work, &bad, NULL, NULL);
        CHECK_MSG(status == OUTLIVE_E_INVALID_ARGUMENT, "cron \"%s\": %s", crons[i], outlive_status_name(status));
    }

    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.version = 99;
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &period, &options, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options = (outlive_task_options)OUTLIVE_TASK_OPTIONS_INIT;
    options.due_at = 1;
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &period, &options, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "due_at"));
    options = (outlive_task_options)OUTLIVE_TASK_OPTIONS_INIT;
    options.unique_key = "k";
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &period, &options, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options = (outlive_task_options)OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "no spaces";
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &period, &options, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    options.queue = "reports";
    CHECK_STATUS(outlive_schedule_set(store, "a", work, &period, &options, NULL), OUTLIVE_E_NOT_FOUND);
    CHECK(strstr(outlive_last_error(), "reports"));

    outlive_handler *own = NULL;
    CHECK_OK(outlive_handler_new("outlive.task_completion", NULL, NULL, &own));
    CHECK_STATUS(outlive_schedule_set(store, "a", own, &period, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler_free(own);

    CHECK_STATUS(outlive_schedule_remove(store, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_remove(store, ""), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_remove(store, "a"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_schedule_list_new(store, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_schedule_list_new(store, "no spaces", 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(outlive_schedule_list_count(NULL) == 0 && outlive_schedule_list_name(NULL, 0) == NULL);
    outlive_schedule_list_free(NULL);

    CHECK(schedule_count(store) == 0);
    /* A well-formed one after all that is stored. */
    CHECK_OK(outlive_schedule_set(store, "a", work, &period, NULL, NULL));
    CHECK(schedule_count(store) == 1);
    outlive_handler_free(work);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_a_firing_adds_a_task_to_the_schedules_queue_with_its_period_bound(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_OK(outlive_queue_declare(store, "reports", OUTLIVE_QUEUE_PARALLEL));
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "reports";
    options.priority = 7;
    double first = 0;
    CHECK_OK(set_schedule(store, "report", "sched_tick", 0.05, NULL, &options, &first));
    double deadline = harness_now() + 20;
    while (task_count(store) < 2 && harness_now() < deadline) outlive_loop_dispatch(outlive_store_loop(store), 20);
    CHECK(task_count(store) >= 2);
    outlive_task_list *tasks = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &tasks));
    size_t rows = outlive_task_list_count(tasks);
    for (size_t i = 0; i < rows; i++) {
        CHECK(!strcmp(outlive_task_list_queue(tasks, i), "reports") && outlive_task_list_priority(tasks, i) == 7);
    }
    outlive_task_list_free(tasks);
    CHECK(rows >= 2);
    outlive_schedule_list *list = NULL;
    CHECK_OK(outlive_schedule_list_new(store, NULL, 0, &list));
    double last_fired = outlive_schedule_list_last_fired(list, 0);
    CHECK(last_fired >= first && outlive_schedule_list_next_fire(list, 0) > last_fired);
    outlive_schedule_list_free(list);
    CHECK_OK(outlive_schedule_remove(store, "report"));
    /* Collected by running them: this handle serves the queue from now on. */
    CHECK_OK(outlive_queue_serve(store, "reports", 1));
    CHECK(collect_firings(store));
    const char *why = check_policy(first, 0.05);
    CHECK_MSG(!*why, "%s", why);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_three_firers_one_killed_and_restarted_fire_each_period_once(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    double first = 0;
    CHECK_OK(set_schedule(store, "tick", "sched_tick", 0.2, NULL, NULL, &first));
    /* This process never dispatches until the schedule is gone: only the firers fire. */
    pid_t a = spawn_firer(dir, "5", NULL), b = spawn_firer(dir, "5", NULL), c = spawn_firer(dir, "60", NULL);
    CHECK(a > 0 && b > 0 && c > 0);
    usleep(1500 * 1000);
    kill(c, SIGKILL);
    CHECK(wait_exit(c) == 128 + SIGKILL);
    usleep(600 * 1000);
    pid_t restarted = spawn_firer(dir, "2.5", NULL);
    CHECK(restarted > 0);
    CHECK(wait_exit(a) == 0 && wait_exit(b) == 0 && wait_exit(restarted) == 0);
    CHECK_OK(outlive_schedule_remove(store, "tick"));
    CHECK(collect_firings(store));
    CHECK_MSG(firing_count >= 2, "%d firings", firing_count);
    const char *why = check_policy(first, 0.2);
    CHECK_MSG(!*why, "%s (of %d firings)", why, firing_count);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_periods_missed_with_no_process_alive_fire_once_not_a_burst(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    double first = 0;
    CHECK_OK(set_schedule(store, "tick", "sched_tick", 0.1, NULL, NULL, &first));
    /* About 12 periods pass with no process dispatching. */
    usleep(1300 * 1000);
    double restart = wall();
    CHECK(restart > first + 0.5);
    CHECK(wait_exit(spawn_firer(dir, "0.6", NULL)) == 0);
    CHECK_OK(outlive_schedule_remove(store, "tick"));
    CHECK(collect_firings(store));
    int before_restart = 0;
    for (int i = 0; i < firing_count; i++)
        if (firings[i].scheduled < restart) before_restart++;
    CHECK_MSG(before_restart == 1, "%d firings for the periods missed before the restart", before_restart);
    const char *why = check_policy(first, 0.1);
    CHECK_MSG(!*why, "%s (of %d firings)", why, firing_count);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_a_schedule_changed_by_another_process_moves_the_firers_timer(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_OK(set_schedule(store, "tick", "sched_plain", 1000, NULL, NULL, NULL));
    int ready = -1;
    pid_t firer = spawn_firer(dir, "60", &ready);
    CHECK(firer > 0);
    CHECK(wait_ready(ready));
    /* Its timer is 1000 s away: only the change feed can bring the new period to it. */
    CHECK_OK(set_schedule(store, "tick", "sched_plain", 0.1, NULL, NULL, NULL));
    double deadline = harness_now() + 20;
    while (task_count(store) < 2 && harness_now() < deadline) usleep(10000);
    CHECK(task_count(store) >= 2);
    /* Moved later, then removed: no firing after either committed. */
    CHECK_OK(set_schedule(store, "tick", "sched_plain", 1000, NULL, NULL, NULL));
    size_t after_change = task_count(store);
    usleep(500 * 1000);
    CHECK(task_count(store) == after_change);
    CHECK_OK(set_schedule(store, "tick", "sched_plain", 0.1, NULL, NULL, NULL));
    deadline = harness_now() + 20;
    while (task_count(store) < after_change + 2 && harness_now() < deadline) usleep(10000);
    CHECK(task_count(store) >= after_change + 2);
    CHECK_OK(outlive_schedule_remove(store, "tick"));
    size_t after_remove = task_count(store);
    usleep(500 * 1000);
    CHECK(task_count(store) == after_remove);
    kill(firer, SIGKILL);
    wait_exit(firer);
    outlive_store_close(store);
    harness_remove_store(dir);
}

HARNESS_MAIN(
    T(test_schedules_are_listed_in_name_order_replaced_and_removed),
    T(test_malformed_schedules_get_a_precise_status_and_store_nothing),
    T(test_a_firing_adds_a_task_to_the_schedules_queue_with_its_period_bound),
    T(test_three_firers_one_killed_and_restarted_fire_each_period_once),
    T(test_periods_missed_with_no_process_alive_fire_once_not_a_burst),
    T(test_a_schedule_changed_by_another_process_moves_the_firers_timer),
)
