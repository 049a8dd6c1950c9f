/* A process of the queue tests (test_queues_processes) and benchmarks. Usage:
 *   queue_worker DIR NAME [options...]   options run in order:
 *   --declare QUEUE ordered|parallel
 *   --serve QUEUE LIMIT            outlive_queue_serve (LIMIT 0: stop serving)
 *   --add QUEUE PREFIX FROM TO     adds queue_job tasks labelled PREFIX<FROM>..PREFIX<TO-1>, one call each
 *   --add-due QUEUE LABEL AT       adds one queue_job task due at AT (seconds since the epoch)
 *   --ready                        writes "ready PID" to the log
 *   --run                          dispatches until SIGTERM, waiting on outlive_loop_fd with no
 *                                  timeout, counting each wake-up; at the end writes
 *                                  "stats PID WAKEUPS MAX_IN_FLIGHT"
 * The handler queue_job(label, task_id, completion) writes "run LABEL PID WALL WAKEUPS" to
 * $QUEUE_LOG (O_APPEND) and completes from another thread after $QUEUE_JOB_MS milliseconds
 * (default 0: at once, on the loop thread), so that a limit above 1 holds several in flight.
 * Exits 0 when every step succeeded, 2 on an error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outlive.h"

static volatile sig_atomic_t stopping = 0;
static _Atomic long wakeups = 0;
static _Atomic int in_flight = 0;
static _Atomic int max_in_flight = 0;
static int job_ms = 0;

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void note(const char *line) {
    const char *path = getenv("QUEUE_LOG");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    size_t length = strlen(line);
    if (write(fd, line, length) != (ssize_t)length) { /* the test sees the line missing */ }
    close(fd);
}

static void complete(outlive_handler *completion) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    atomic_fetch_sub(&in_flight, 1);
    outlive_handler_call(completion, args);
    outlive_args_free(args);
    outlive_handler_free(completion);
}

static void *complete_later(void *completion) {
    struct timespec pause = { job_ms / 1000, (long)(job_ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
    complete(completion);
    return NULL;
}

OUTLIVE_HANDLER(queue_job, OUTLIVE_ID(label), OUTLIVE_ID(task_id), OUTLIVE_HANDLER_ARG(completion)) {
    (void)task_id;
    int now_in_flight = atomic_fetch_add(&in_flight, 1) + 1;
    int seen = atomic_load(&max_in_flight);
    while (now_in_flight > seen && !atomic_compare_exchange_weak(&max_in_flight, &seen, now_in_flight)) {}
    char line[256];
    snprintf(line, sizeof line, "run %s %d %.6f %ld\n", outlive_object_string(label), (int)getpid(), wall(),
             atomic_load(&wakeups));
    note(line);
    outlive_handler *kept = NULL;
    if (outlive_handler_copy(completion, &kept) != OUTLIVE_OK) return;
    if (job_ms <= 0) {
        complete(kept);
        return;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, complete_later, kept) == 0) pthread_detach(thread);
    else complete(kept);
}

static int fail(const char *what) {
    fprintf(stderr, "queue_worker: %s: %s\n", what, outlive_last_error());
    return 2;
}

static outlive_status add(outlive_store *store, const char *queue, const char *label, double due_at) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", label);
    outlive_handler *work = NULL;
    outlive_handler_new("queue_job", NULL, args, &work);
    outlive_args_free(args);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = queue;
    options.due_at = due_at;
    outlive_status status = outlive_task_enqueue(store, work, &options, NULL, NULL);
    outlive_handler_free(work);
    return status;
}

static void on_term(int signal) {
    (void)signal;
    stopping = 1;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *ms = getenv("QUEUE_JOB_MS");
    job_ms = ms ? atoi(ms) : 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], argv[2], NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_loop *loop = outlive_store_loop(store);
    char line[256];
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--declare") && i + 2 < argc) {
            outlive_queue_kind kind = !strcmp(argv[i + 2], "parallel") ? OUTLIVE_QUEUE_PARALLEL : OUTLIVE_QUEUE_ORDERED;
            if (outlive_queue_declare(store, argv[i + 1], kind) != OUTLIVE_OK) return fail("declare");
            i += 2;
        } else if (!strcmp(argv[i], "--serve") && i + 2 < argc) {
            if (outlive_queue_serve(store, argv[i + 1], (size_t)atol(argv[i + 2])) != OUTLIVE_OK) return fail("serve");
            i += 2;
        } else if (!strcmp(argv[i], "--add") && i + 4 < argc) {
            long from = atol(argv[i + 3]), to = atol(argv[i + 4]);
            for (long n = from; n < to; n++) {
                char label[128];
                snprintf(label, sizeof label, "%s%ld", argv[i + 2], n);
                if (add(store, argv[i + 1], label, 0) != OUTLIVE_OK) return fail("add");
            }
            i += 4;
        } else if (!strcmp(argv[i], "--add-due") && i + 3 < argc) {
            if (add(store, argv[i + 1], argv[i + 2], atof(argv[i + 3])) != OUTLIVE_OK) return fail("add-due");
            i += 3;
        } else if (!strcmp(argv[i], "--ready")) {
            snprintf(line, sizeof line, "ready %d\n", (int)getpid());
            note(line);
        } else if (!strcmp(argv[i], "--run")) {
            struct pollfd watched = { outlive_loop_fd(loop), POLLIN, 0 };
            /* Whatever opening the store posted runs first; then each wake-up is counted. */
            if (outlive_loop_dispatch(loop, 0) != OUTLIVE_OK) return fail("dispatch");
            while (!stopping) {
                int ready = poll(&watched, 1, -1);
                if (ready < 0 && errno == EINTR) continue;
                if (ready < 0) return fail("poll");
                atomic_fetch_add(&wakeups, 1);
                outlive_status status = outlive_loop_dispatch(loop, 0);
                if (status != OUTLIVE_OK) return fail("dispatch");
            }
            /* Attempts in flight end before the handle closes (their completions are threads). */
            for (int round = 0; round < 500 && atomic_load(&in_flight) > 0; round++) outlive_loop_dispatch(loop, 10);
            snprintf(line, sizeof line, "stats %d %ld %d\n", (int)getpid(), atomic_load(&wakeups), atomic_load(&max_in_flight));
            note(line);
        } else {
            fprintf(stderr, "queue_worker: unknown or incomplete option %s\n", argv[i]);
            return 2;
        }
    }
    outlive_store_close(store);
    return 0;
}
