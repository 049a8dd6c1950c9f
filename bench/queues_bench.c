/* Named queue benchmarks:
 *  - a parallel queue, no-op handlers: tasks completed per second with 1, 2
 *    and 4 runner processes (each serving it with limit 1, synchronous=FULL),
 *    the tasks added beforehand;
 *  - due-time accuracy: 1,000 tasks due at spread times over about 4 s, run by
 *    one runner process; p50 and p99 of their lateness (start minus due time).
 * Usage: queues_bench SCRATCH_DIR. Prints a markdown section. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define TASKS 4000
#define DUE_TASKS 1000

/* Shared with the runner processes (MAP_SHARED, made before fork). */
struct shared {
    _Atomic int done;
    double lateness[DUE_TASKS];
};
static struct shared *shared;

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

OUTLIVE_HANDLER(queues_bench_noop) {}

OUTLIVE_HANDLER(queues_bench_due, OUTLIVE_INTEGER(index), OUTLIVE_DOUBLE(due)) {
    if (index >= 0 && index < DUE_TASKS) shared->lateness[index] = wall() - due;
    atomic_fetch_add(&shared->done, 1);
}

static void must(outlive_status status, const char *what) {
    if (status != OUTLIVE_OK) {
        fprintf(stderr, "%s: %s\n", what, outlive_last_error());
        exit(1);
    }
}

static outlive_store *open_store(const char *dir, const char *process, outlive_durability durability) {
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = durability;
    outlive_store *store = NULL;
    must(outlive_store_open(dir, process, NULL, &options, &store), "open");
    must(outlive_queue_serve(store, "default", 0), "serve default 0");
    return store;
}

static volatile sig_atomic_t stopping;
static void on_term(int signal) { (void)signal; stopping = 1; }

/* A runner: waits for a byte on `start`, serves `queue` with limit 1, dispatches until SIGTERM. */
static pid_t spawn_runner(const char *dir, const char *queue, int start) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    outlive_store *store = open_store(dir, "runner", OUTLIVE_DURABILITY_FULL);
    char byte;
    if (read(start, &byte, 1) != 1) _exit(2);
    must(outlive_queue_serve(store, queue, 1), "serve");
    outlive_loop *loop = outlive_store_loop(store);
    struct pollfd watched = { outlive_loop_fd(loop), POLLIN, 0 };
    while (!stopping) {
        if (poll(&watched, 1, -1) < 0 && errno != EINTR) _exit(2);
        outlive_loop_dispatch(loop, 0);
    }
    outlive_store_close(store);
    _exit(0);
}

static void queue_counts(outlive_store *store, const char *queue, size_t *pending, size_t *running) {
    outlive_queue_list *list = NULL;
    must(outlive_queue_list_new(store, NULL, 0, &list), "queue list");
    for (size_t i = 0; i < outlive_queue_list_count(list); i++) {
        if (strcmp(outlive_queue_list_name(list, i), queue) != 0) continue;
        *pending = outlive_queue_list_pending(list, i);
        *running = outlive_queue_list_running(list, i);
    }
    outlive_queue_list_free(list);
}

static void stop(pid_t *runners, int count) {
    for (int i = 0; i < count; i++) kill(runners[i], SIGTERM);
    for (int i = 0; i < count; i++) waitpid(runners[i], NULL, 0);
}

/* Tasks completed per second by `count` runner processes. */
static double parallel_throughput(int count) {
    char dir[4200], name[64];
    snprintf(name, sizeof name, "parallel-%d", count);
    bench_fresh_dir(dir, sizeof dir, name);
    outlive_store *store = open_store(dir, "producer", OUTLIVE_DURABILITY_NORMAL);
    must(outlive_queue_declare(store, "bench", OUTLIVE_QUEUE_PARALLEL), "declare");
    outlive_handler *work = NULL;
    must(outlive_handler_new("queues_bench_noop", NULL, NULL, &work), "handler");
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "bench";
    for (int i = 0; i < TASKS; i++) must(outlive_task_enqueue(store, work, &options, NULL, NULL), "enqueue");
    outlive_handler_free(work);
    outlive_store_close(store);
    int start[2];
    if (pipe(start) != 0) exit(2);
    pid_t runners[4];
    for (int i = 0; i < count; i++) runners[i] = spawn_runner(dir, "bench", start[0]);
    usleep(300000);  /* the runners open the store */
    store = open_store(dir, "observer", OUTLIVE_DURABILITY_FULL);
    int64_t began = bench_now_ns();
    for (int i = 0; i < count; i++) if (write(start[1], "s", 1) != 1) exit(2);
    size_t pending = 1, running = 1;
    while (pending + running > 0) {
        usleep(2000);
        queue_counts(store, "bench", &pending, &running);
    }
    double seconds = (double)(bench_now_ns() - began) / 1e9;
    stop(runners, count);
    outlive_store_close(store);
    close(start[0]);
    close(start[1]);
    return TASKS / seconds;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p50 and p99 lateness (ms) of DUE_TASKS due tasks run by one runner. */
static void due_lateness(double *p50, double *p99, double *earliest) {
    char dir[4200];
    bench_fresh_dir(dir, sizeof dir, "due");
    int start[2];
    if (pipe(start) != 0) exit(2);
    atomic_store(&shared->done, 0);
    /* Forked before this process opens the store; it serves once the queue is declared. */
    pid_t runner = spawn_runner(dir, "timed", start[0]);
    usleep(300000);
    outlive_store *store = open_store(dir, "producer", OUTLIVE_DURABILITY_NORMAL);
    must(outlive_queue_declare(store, "timed", OUTLIVE_QUEUE_PARALLEL), "declare");
    if (write(start[1], "s", 1) != 1) exit(2);
    usleep(300000);
    double first = wall() + 1.5;
    for (int i = 0; i < DUE_TASKS; i++) {
        outlive_args *args = NULL;
        outlive_args_new(&args);
        outlive_args_set_integer(args, "index", i);
        /* Spread over 4 s, in a shuffled order of addition: each add may move the timer. */
        int slot = (i * 7919) % DUE_TASKS;
        double due = first + 4.0 * slot / DUE_TASKS;
        outlive_args_set_double(args, "due", due);
        outlive_handler *work = NULL;
        must(outlive_handler_new("queues_bench_due", NULL, args, &work), "handler");
        outlive_args_free(args);
        outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
        options.queue = "timed";
        options.due_at = due;
        must(outlive_task_enqueue(store, work, &options, NULL, NULL), "enqueue");
        outlive_handler_free(work);
    }
    int64_t deadline = bench_now_ns() + 60 * 1000000000LL;
    while (atomic_load(&shared->done) < DUE_TASKS && bench_now_ns() < deadline) usleep(10000);
    stop(&runner, 1);
    outlive_store_close(store);
    close(start[0]);
    close(start[1]);
    if (atomic_load(&shared->done) < DUE_TASKS) {
        fprintf(stderr, "only %d of %d due tasks ran\n", atomic_load(&shared->done), DUE_TASKS);
        exit(1);
    }
    double sorted[DUE_TASKS];
    memcpy(sorted, shared->lateness, sizeof sorted);
    qsort(sorted, DUE_TASKS, sizeof sorted[0], compare_double);
    *p50 = sorted[DUE_TASKS / 2] * 1000;
    *p99 = sorted[(DUE_TASKS * 99) / 100] * 1000;
    *earliest = sorted[0] * 1000;
}

int main(int argc, char **argv) {
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argc > 1 ? argv[1] : "/tmp/outlive-bench");
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return 2;
    const int counts[3] = { 1, 2, 4 };
    double rates[3];
    for (int i = 0; i < 3; i++) rates[i] = parallel_throughput(counts[i]);
    double p50, p99, earliest;
    due_lateness(&p50, &p99, &earliest);
    printf("### Named queues\n\n");
    printf("| measure | outlive | ratio to 1 runner |\n|---|---:|---:|\n");
    for (int i = 0; i < 3; i++)
        printf("| parallel queue, no-op handlers: tasks completed/s, %d runner process%s (limit 1 each, FULL) | %.0f | %.2f |\n",
               counts[i], counts[i] == 1 ? "" : "es", rates[i], rates[i] / rates[0]);
    printf("| due-time lateness of %d due tasks, p50 / p99 (ms) | %.2f / %.2f | |\n", DUE_TASKS, p50, p99);
    printf("\n%d tasks added before the runners start; the clock runs from the start signal until the queue's "
           "counters read empty. Due tasks: one runner, %d tasks due over 4 s, added in a shuffled order by another "
           "process; the earliest start relative to its due time was %+.3f ms (never negative: nothing starts early).\n",
           TASKS, DUE_TASKS, earliest);
    return 0;
}
