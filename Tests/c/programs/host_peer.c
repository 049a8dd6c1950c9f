/* A process on one "host" of the multi-host tests (Tests/hosts), run inside a
 * network namespace against a PostgreSQL store. Prints one line per event on
 * stdout, unbuffered.
 *   host_peer URI NAME set KEY VALUE        one set; prints SET
 *   host_peer URI NAME observe PREFIX       observes PREFIX, prints READY, then
 *                                           OBSERVED <key> <value> per change,
 *                                           until stdin reaches end of file
 *   host_peer URI NAME consume SIGNAL once|until process|any_process
 *                                           registers a consumer whose handler is
 *                                           host_report; prints CONSUMING, exits
 *   host_peer URI NAME post SIGNAL          one post; prints POSTED
 *   host_peer URI NAME deliver              dispatches its loop (host_report prints
 *                                           DELIVERED <signal> <version> <pid>)
 *                                           until stdin reaches end of file;
 *                                           reopens the store when its run ends
 *   host_peer URI NAME workload PREFIX SIGNAL FROM COUNT [QUEUE]
 *                                           for i in FROM..COUNT-1: sets PREFIX/i
 *                                           (printing TRY set i, then ACK set i),
 *                                           posts SIGNAL (TRY post i, ACK post i)
 *                                           and, given a declared QUEUE, adds the
 *                                           task host_task(label PREFIX-i) to it,
 *                                           unique by its label (TRY task i, ACK task i)
 *   host_peer URI NAME add QUEUE PREFIX N   declares QUEUE (parallel), adds N tasks
 *                                           host_task(label PREFIX<i>) to it, runs
 *                                           none itself; prints ADDED N
 *   host_peer URI NAME run QUEUE LIMIT      serves QUEUE (LIMIT at once) and no other,
 *                                           prints READY, dispatches until stdin
 *                                           reaches end of file; host_task prints
 *                                           RAN <label> <attempt> <pid>, or, for a
 *                                           label starting "stall" on its first
 *                                           attempt, STARTED <label> 1 <pid> and never
 *                                           returns (its host is then cut off);
 *                                           reopens (and serves again) when its run ends;
 *                                           a commit per task, so that a run that
 *                                           ends reruns at most the one in flight
 *   host_peer URI NAME message-post TITLE CHOICE
 *                                           posts a message with one choice;
 *                                           prints MESSAGE <id>
 *   host_peer URI NAME message-respond ID CHOICE
 *                                           answers it; prints RESPONDED
 * A system not yet available on PostgreSQL stores makes these fail with
 * OUTLIVE_E_STATE and its message on stderr (status 2).
 * deliver, run and workload follow the contract a PostgreSQL store's user follows across
 * server restarts and network cuts (include/outlive.h, outlive_store_check):
 * a call that fails with OUTLIVE_E_IO or OUTLIVE_E_BUSY is retried; when the
 * handle says its run ended (OUTLIVE_E_STATE) the store is closed and opened
 * again (printing REOPENED), and what the process registered for its run is
 * registered again. Opening retries while the server is away. Exits 0, or 2
 * on an error (the server away for 60 s included). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outlive.h"

static const char *uri;
static const char *name;
static outlive_store *store;

static int fail(const char *what, outlive_status status) {
    fprintf(stderr, "host_peer %s: %s: %s: %s\n", name, what, outlive_status_name(status), outlive_last_error());
    return 2;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void open_store(void) {
    double deadline = now() + 60;
    for (;;) {
        outlive_status status = outlive_store_open(uri, name, NULL, NULL, &store);
        if (status == OUTLIVE_OK) return;
        if (status != OUTLIVE_E_IO && status != OUTLIVE_E_BUSY) exit(fail("open", status));
        if (now() > deadline) exit(fail("open (the server stayed away)", status));
        usleep(100000);
    }
}

static void reopen(void) {
    fprintf(stderr, "host_peer %s: %s; reopening\n", name, outlive_last_error());
    outlive_store_close(store);
    store = NULL;
    open_store();
    printf("REOPENED\n");
}

/* Whether a failed call is one to retry (after reopening when the run ended). */
static int retryable(outlive_status status, double deadline) {
    if (now() > deadline) return 0;
    /* OUTLIVE_E_STATE for another reason (a misuse) is no reason to reopen. */
    if (status == OUTLIVE_E_STATE && outlive_store_check(store) == OUTLIVE_E_STATE) {
        reopen();
        return 1;
    }
    if (status == OUTLIVE_E_IO || status == OUTLIVE_E_BUSY) {
        usleep(100000);
        return 1;
    }
    return 0;
}

OUTLIVE_HANDLER(host_report, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version)) {
    printf("DELIVERED %s %llu %d\n", outlive_object_string(signal_id), (unsigned long long)version, (int)getpid());
}

OUTLIVE_HANDLER(host_task, OUTLIVE_ID(label), OUTLIVE_INTEGER(attempt)) {
    const char *text = outlive_object_string(label);
    if (!strncmp(text, "stall", 5) && attempt == 1) {
        printf("STARTED %s %lld %d\n", text, (long long)attempt, (int)getpid());
        for (;;) pause();
    }
    printf("RAN %s %lld %d\n", text, (long long)attempt, (int)getpid());
}

/* A producer or a runner of QUEUE: declared (parallel), and the default queue
 * not served, so that the handle runs only what `limit` says. */
static outlive_status serve(const char *queue, size_t limit) {
    outlive_status status = outlive_queue_declare(store, queue, OUTLIVE_QUEUE_PARALLEL);
    if (status == OUTLIVE_OK) status = outlive_queue_serve(store, "default", 0);
    if (status == OUTLIVE_OK && limit) status = outlive_queue_serve(store, queue, limit);
    if (status == OUTLIVE_OK && limit) status = outlive_tasks_set_completion_batch(store, 1);
    return status;
}

/* Adds host_task(label) to queue; unique by its label when `unique`. */
static outlive_status enqueue(const char *queue, const char *label, int unique) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", label);
    outlive_handler *work = NULL;
    outlive_status status = outlive_handler_new("host_task", NULL, args, &work);
    outlive_args_free(args);
    if (status != OUTLIVE_OK) return status;
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = queue;
    options.unique_key = unique ? label : NULL;
    status = outlive_task_enqueue(store, work, &options, NULL, NULL);
    outlive_handler_free(work);
    return status;
}

static int add(const char *queue, const char *prefix, long count) {
    outlive_status status = serve(queue, 0);
    if (status != OUTLIVE_OK) return fail("declare", status);
    for (long i = 0; i < count; i++) {
        char label[128];
        snprintf(label, sizeof label, "%s%ld", prefix, i);
        if ((status = enqueue(queue, label, 0)) != OUTLIVE_OK) return fail("enqueue", status);
    }
    printf("ADDED %ld\n", count);
    return 0;
}

static int run(const char *queue, size_t limit) {
    outlive_status status = serve(queue, limit);
    if (status != OUTLIVE_OK) return fail("serve", status);
    printf("READY\n");
    for (;;) {
        outlive_loop *loop = outlive_store_loop(store);
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) return 2;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (outlive_store_check(store) == OUTLIVE_E_STATE) {
            reopen();
            /* What the process served was its ended run's: say it again. */
            if ((status = serve(queue, limit)) != OUTLIVE_OK) return fail("serve", status);
        }
        if (fds[1].revents) {
            char byte;
            if (read(0, &byte, 1) <= 0) return 0;
        }
    }
}

static int message_post(const char *title, const char *choice) {
    outlive_message_draft *draft = NULL;
    outlive_status status = outlive_message_draft_new("hosts", title, &draft);
    if (status == OUTLIVE_OK) status = outlive_message_draft_add_choice(draft, choice, choice, OUTLIVE_CHOICE_DEFAULT);
    char id[OUTLIVE_ID_SIZE];
    if (status == OUTLIVE_OK) status = outlive_message_post(store, draft, id);
    outlive_message_draft_free(draft);
    if (status != OUTLIVE_OK) return fail("message post", status);
    printf("MESSAGE %s\n", id);
    return 0;
}

static int deliver(void) {
    for (;;) {
        outlive_loop *loop = outlive_store_loop(store);
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) return 2;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (outlive_store_check(store) == OUTLIVE_E_STATE) reopen();
        if (fds[1].revents) {
            char byte;
            if (read(0, &byte, 1) <= 0) return 0;
        }
    }
}

static int workload(const char *prefix, const char *signal, long from, long count, const char *queue) {
    for (long i = from; i < count; i++) {
        char key[128], value[32];
        snprintf(key, sizeof key, "%s/%05ld", prefix, i);
        int length = snprintf(value, sizeof value, "%ld", i);
        double deadline = now() + 60;
        for (;;) {
            outlive_loop_dispatch(outlive_store_loop(store), 0);
            printf("TRY set %ld\n", i);
            outlive_status status = outlive_store_check(store);
            if (status == OUTLIVE_OK) status = outlive_kv_set(store, key, value, (size_t)length);
            if (status == OUTLIVE_OK) break;
            if (!retryable(status, deadline)) return fail("set", status);
        }
        printf("ACK set %ld\n", i);
        for (;;) {
            printf("TRY post %ld\n", i);
            outlive_status status = outlive_store_check(store);
            if (status == OUTLIVE_OK) status = outlive_signal_post(store, signal, NULL, false);
            if (status == OUTLIVE_OK) break;
            if (!retryable(status, deadline)) return fail("post", status);
        }
        printf("ACK post %ld\n", i);
        if (!queue) continue;
        char label[160];
        snprintf(label, sizeof label, "%s-%ld", prefix, i);
        for (;;) {
            printf("TRY task %ld\n", i);
            outlive_status status = outlive_store_check(store);
            /* A retry of an add whose outcome was lost finds it by its key, unless it ran meanwhile. */
            if (status == OUTLIVE_OK) status = enqueue(queue, label, 1);
            if (status == OUTLIVE_OK) break;
            if (!retryable(status, deadline)) return fail("enqueue", status);
        }
        printf("ACK task %ld\n", i);
    }
    return 0;
}

static void observed(const char *key, const void *bytes, size_t size, void *context) {
    (void)context;
    printf("OBSERVED %s %.*s\n", key, bytes ? (int)size : 1, bytes ? (const char *)bytes : "-");
}

static int observe(const char *prefix) {
    uint64_t token = 0;
    outlive_status status = outlive_kv_observe(store, prefix, observed, NULL, NULL, &token);
    if (status != OUTLIVE_OK) return fail("observe", status);
    printf("READY\n");
    outlive_loop *loop = outlive_store_loop(store);
    for (;;) {
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) return 2;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents) {
            char byte;
            if (read(0, &byte, 1) <= 0) return 0;
        }
    }
}

static int consume(const char *signal, const char *delivery, const char *lifetime) {
    outlive_handler *handler = NULL;
    outlive_status status = outlive_handler_new("host_report", NULL, NULL, &handler);
    if (status != OUTLIVE_OK) return fail("handler", status);
    status = outlive_signal_consume(store, signal, handler,
                                    !strcmp(delivery, "once") ? OUTLIVE_DELIVERY_ONCE : OUTLIVE_DELIVERY_UNTIL_TERMINATED,
                                    !strcmp(lifetime, "process") ? OUTLIVE_LIFETIME_PROCESS : OUTLIVE_LIFETIME_ANY_PROCESS,
                                    NULL, NULL);
    outlive_handler_free(handler);
    if (status != OUTLIVE_OK) return fail("consume", status);
    printf("CONSUMING\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    uri = argv[1];
    name = argv[2];
    const char *command = argv[3];
    open_store();
    int status = 2;
    if (!strcmp(command, "set") && argc == 6) {
        outlive_status result = outlive_kv_set(store, argv[4], argv[5], strlen(argv[5]));
        status = result == OUTLIVE_OK ? (printf("SET\n"), 0) : fail("set", result);
    } else if (!strcmp(command, "observe") && argc == 5) {
        status = observe(argv[4]);
    } else if (!strcmp(command, "consume") && argc == 7) {
        status = consume(argv[4], argv[5], argv[6]);
    } else if (!strcmp(command, "post") && argc == 5) {
        outlive_status result = outlive_signal_post(store, argv[4], NULL, false);
        status = result == OUTLIVE_OK ? (printf("POSTED\n"), 0) : fail("post", result);
    } else if (!strcmp(command, "deliver") && argc == 4) {
        status = deliver();
    } else if (!strcmp(command, "add") && argc == 7) {
        status = add(argv[4], argv[5], atol(argv[6]));
    } else if (!strcmp(command, "run") && argc == 6) {
        status = run(argv[4], (size_t)atol(argv[5]));
    } else if (!strcmp(command, "message-post") && argc == 6) {
        status = message_post(argv[4], argv[5]);
    } else if (!strcmp(command, "message-respond") && argc == 6) {
        outlive_status result = outlive_message_respond(store, argv[4], argv[5]);
        status = result == OUTLIVE_OK ? (printf("RESPONDED\n"), 0) : fail("message respond", result);
    } else if (!strcmp(command, "workload") && (argc == 8 || argc == 9)) {
        status = workload(argv[4], argv[5], atol(argv[6]), atol(argv[7]), argc == 9 ? argv[8] : NULL);
    }
    outlive_store_close(store);
    return status;
}
