/* A process of the task lifecycle tests (test_tasks_lifecycle). Usage:
 *   tasks_lifecycle_peer DIR NAME MODE [ARGS]
 * Modes:
 *   run SECONDS          runs tasks (run_now, triggers 1/0) until none is
 *                        pending, at most SECONDS
 *   receive SECONDS      dispatches until lifecycle_report received a
 *                        terminating version, at most SECONDS
 *   cancel TASK_ID       outlive_task_cancel; prints the status name
 *   add-unique N FILE    enqueues lifecycle_never with unique keys key-0 ..
 *                        key-(N-1), starting at a key chosen by the pid so
 *                        that adders overlap in every order; appends
 *                        "key id existing" lines to FILE
 *   enqueue-loop         enqueues lifecycle_never tasks, each with a fresh
 *                        result signal and a PROCESS result consumer, until killed
 * Lines go to $LIFECYCLE_LOG (O_APPEND). Exits 0 on success, 3 on a deadline,
 * 2 on an error. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outlive.h"

static outlive_store *store;
static int reports_terminated;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void note(const char *format, ...) {
    const char *path = getenv("LIFECYCLE_LOG");
    if (!path) return;
    char line[1024];
    va_list list;
    va_start(list, format);
    int length = vsnprintf(line, sizeof line - 1, format, list);
    va_end(list);
    if (length < 0) return;
    if (length > (int)sizeof line - 2) length = (int)sizeof line - 2;
    line[length++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (write(fd, line, (size_t)length) != length) { /* the test sees the line missing */ }
    close(fd);
}

static int fail(const char *what) {
    fprintf(stderr, "tasks_lifecycle_peer: %s: %s\n", what, outlive_last_error());
    return 2;
}

static outlive_status post_progress(const char *signal, int step) {
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    char text[16];
    snprintf(text, sizeof text, "%d", step);
    outlive_args_set_string(payload, "step", text);
    outlive_status status = outlive_signal_post(store, signal, payload, false);
    outlive_args_free(payload);
    return status;
}

/* Whether the log holds a line starting with `prefix`. */
static bool logged(const char *prefix) {
    const char *path = getenv("LIFECYCLE_LOG");
    FILE *file = path ? fopen(path, "r") : NULL;
    if (!file) return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, file)) found = strncmp(line, prefix, strlen(prefix)) == 0;
    fclose(file);
    return found;
}

/* Posts three versions of progress, then succeeds with an extra argument.
 * With $LIFECYCLE_AWAIT_REPORTS, it waits (at most 10 s) after each post for
 * a receiver's "report N 0" line, so that every version is delivered. */
OUTLIVE_HANDLER(lifecycle_progress, OUTLIVE_ID(result_signal), OUTLIVE_HANDLER_ARG(completion)) {
    const char *signal = outlive_object_string(result_signal);
    bool await = getenv("LIFECYCLE_AWAIT_REPORTS") != NULL;
    for (int step = 1; step <= 3; step++) {
        if (post_progress(signal, step) != OUTLIVE_OK) note("progress-failed %s", outlive_last_error());
        char expected[64];
        snprintf(expected, sizeof expected, "report %d 0 ", step);
        for (double deadline = now() + 10; await && !logged(expected) && now() < deadline;) usleep(2000);
    }
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    outlive_args_set_string(args, "url", "https://example.org/result");
    outlive_status status = outlive_handler_call(completion, args);
    outlive_args_free(args);
    note("progress-completed %s", outlive_status_name(status));
}

/* Works until it is cancelled (at most 30 s), then completes with a success
 * that the cancellation overrides. */
OUTLIVE_HANDLER(lifecycle_wait_cancel, OUTLIVE_ID(task_id), OUTLIVE_HANDLER_ARG(completion)) {
    const char *id = outlive_object_string(task_id);
    note("started %s", id);
    double deadline = now() + 30;
    bool cancelled = false;
    while (!cancelled && now() < deadline) {
        if (outlive_task_is_cancelled(store, id, &cancelled) != OUTLIVE_OK) {
            note("is-cancelled-failed %s", outlive_last_error());
            break;
        }
        if (!cancelled) usleep(5000);
    }
    note(cancelled ? "saw-cancel" : "never-cancelled");
    /* The test still asks about the task after its cancel: it completes only
     * once the test made LIFECYCLE_LOG.release, or the attempt's end could
     * delete the task between the test's calls. */
    char release[1100];
    const char *log = getenv("LIFECYCLE_LOG");
    snprintf(release, sizeof release, "%s.release", log ? log : "");
    while (log && access(release, F_OK) != 0 && now() < deadline) usleep(5000);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", true);
    outlive_status status = outlive_handler_call(completion, args);
    outlive_args_free(args);
    note("completion %s", outlive_status_name(status));
}

/* The result consumer of the tests: one line per delivery. */
OUTLIVE_HANDLER(lifecycle_report, OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated), OUTLIVE_OPT_ID(task_id),
                OUTLIVE_OPT_ID(outcome), OUTLIVE_OPT_ID(url), OUTLIVE_OPT_ID(step)) {
    note("report %llu %d %s %s %s %s", (unsigned long long)version, terminated ? 1 : 0,
         task_id ? outlive_object_string(task_id) : "-", outcome ? outlive_object_string(outcome) : "-",
         url ? outlive_object_string(url) : "-", step ? outlive_object_string(step) : "-");
    if (terminated) reports_terminated++;
}

static outlive_handler *plain(const char *name) {
    outlive_handler *handler = NULL;
    outlive_handler_new(name, NULL, NULL, &handler);
    return handler;
}

static int dispatch_until(bool (*done)(void), double seconds) {
    double deadline = now() + seconds;
    for (;;) {
        if (outlive_loop_dispatch(outlive_store_loop(store), 20) != OUTLIVE_OK) return fail("dispatch");
        if (done()) return 0;
        if (now() > deadline) return 3;
    }
}

static bool no_task_pending(void) {
    size_t pending = 1;
    return outlive_tasks_count(store, &pending) == OUTLIVE_OK && pending == 0;
}

static bool report_terminated(void) { return reports_terminated > 0; }

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (outlive_store_open(argv[1], argv[2], NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    const char *mode = argv[3];
    int result = 0;
    if (!strcmp(mode, "run") && argc == 5) {
        if (outlive_tasks_set_triggers(store, 1, 0) != OUTLIVE_OK || outlive_tasks_run_now(store) != OUTLIVE_OK) return fail("run");
        result = dispatch_until(no_task_pending, atof(argv[4]));
    } else if (!strcmp(mode, "receive") && argc == 5) {
        result = dispatch_until(report_terminated, atof(argv[4]));
    } else if (!strcmp(mode, "cancel") && argc == 5) {
        bool running = false;
        outlive_status status = outlive_task_cancel(store, argv[4], &running);
        printf("%s %d\n", outlive_status_name(status), running ? 1 : 0);
    } else if (!strcmp(mode, "add-unique") && argc == 6) {
        int count = atoi(argv[4]);
        FILE *file = fopen(argv[5], "a");
        if (!file || count <= 0) return 2;
        outlive_handler *work = plain("lifecycle_never");
        int start = (int)(getpid() % count);
        for (int n = 0; n < count; n++) {
            char key[32];
            snprintf(key, sizeof key, "key-%d", (start + n) % count);
            outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
            options.unique_key = key;
            char id[OUTLIVE_ID_SIZE];
            bool existing = true;
            if (outlive_task_enqueue(store, work, &options, id, &existing) != OUTLIVE_OK) return fail("enqueue");
            fprintf(file, "%s %s %d\n", key, id, existing ? 1 : 0);
        }
        fclose(file);
        outlive_handler_free(work);
    } else if (!strcmp(mode, "enqueue-loop") && argc == 4) {
        outlive_handler *work = plain("lifecycle_never");
        outlive_handler *consumer = plain("lifecycle_report");
        if (write(STDOUT_FILENO, "READY\n", 6) != 6) return 2;
        for (;;) {
            char signal[OUTLIVE_ID_SIZE];
            outlive_signal_new_id(signal);
            outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
            options.result_signal = signal;
            options.result_consumer = consumer;
            options.result_lifetime = OUTLIVE_LIFETIME_PROCESS;
            if (outlive_task_enqueue(store, work, &options, NULL, NULL) != OUTLIVE_OK) return fail("enqueue");
        }
    } else {
        fprintf(stderr, "tasks_lifecycle_peer: bad usage\n");
        return 2;
    }
    outlive_store_close(store);
    return result;
}
