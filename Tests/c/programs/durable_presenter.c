/* A presenter of a durable interaction queue, for the cross-process tests.
 *
 *   durable_presenter STORE QUEUE MODE
 *
 * Opens STORE as process "presenter" and the durable queue QUEUE (presenting),
 * then dispatches the store's loop and reads commands from stdin, one a line.
 * It declares the interaction handler durable_show (INTEGER n, ID
 * interaction_id, HANDLER finish), which prints "SHOW n id" and keeps a copy
 * of finish. MODE says who calls finish:
 *   manual  only the "finish" command
 *   auto    the handler itself, at once ("FINISHED n STATUS")
 *   thread  a new thread started by the handler ("FINISHED n STATUS")
 * Commands (each answered with one line):
 *   finish     calls the kept finish handler         -> "FINISH STATUS"
 *   add N      adds durable_show(n=N)                 -> "ADDED N ID"
 *   suspend    / resume                               -> "SUSPEND STATUS" / "RESUME STATUS"
 *   count                                              -> "COUNT N"
 *   ping       dispatches what is due, then            -> "PONG"
 *   quit       frees the queue, closes the store, exits 0
 * The library's log goes to stdout as "LOG message". Lines are flushed at once.
 * Prints "READY run_id" once the queue is open. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *mode = "manual";
static outlive_handler *kept_finish;  /* loop thread and command thread are the same */
static outlive_store *store;
static outlive_durable_interactions *queue;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
    pthread_mutex_lock(&output_lock);
    va_list list;
    va_start(list, format);
    vprintf(format, list);
    va_end(list);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&output_lock);
}

static void log_line(outlive_log_level level, const char *message, void *context) {
    (void)level;
    (void)context;
    say("LOG %s", message);
}

struct finisher {
    outlive_handler *finish;
    int64_t n;
};

static void *finish_on_thread(void *argument) {
    struct finisher *job = argument;
    outlive_status status = outlive_handler_call(job->finish, NULL);
    say("FINISHED %" PRId64 " %s", job->n, outlive_status_name(status));
    outlive_handler_free(job->finish);
    free(job);
    return NULL;
}

OUTLIVE_HANDLER(durable_show, OUTLIVE_INTEGER(n), OUTLIVE_ID(interaction_id), OUTLIVE_HANDLER_ARG(finish)) {
    say("SHOW %" PRId64 " %s", n, outlive_object_string(interaction_id));
    if (strcmp(mode, "auto") == 0) {
        outlive_status status = outlive_handler_call(finish, NULL);
        say("FINISHED %" PRId64 " %s", n, outlive_status_name(status));
    } else if (strcmp(mode, "thread") == 0) {
        struct finisher *job = malloc(sizeof *job);
        job->finish = NULL;
        outlive_handler_copy(finish, &job->finish);
        job->n = n;
        pthread_t thread;
        pthread_create(&thread, NULL, finish_on_thread, job);
        pthread_detach(thread);
    }
    outlive_handler_free(kept_finish);
    kept_finish = NULL;
    outlive_handler_copy(finish, &kept_finish);
}

static void command(char *line) {
    if (strcmp(line, "finish") == 0) {
        say("FINISH %s", outlive_status_name(outlive_handler_call(kept_finish, NULL)));
    } else if (strncmp(line, "add ", 4) == 0) {
        int64_t n = strtoll(line + 4, NULL, 10);
        outlive_args *args = NULL;
        outlive_args_new(&args);
        outlive_args_set_integer(args, "n", n);
        outlive_handler *handler = NULL;
        outlive_handler_new("durable_show", NULL, args, &handler);
        outlive_args_free(args);
        char id[OUTLIVE_ID_SIZE] = "";
        outlive_status status = outlive_durable_interactions_add(queue, handler, id);
        outlive_handler_free(handler);
        if (status == OUTLIVE_OK) say("ADDED %" PRId64 " %s", n, id);
        else say("ADDED %" PRId64 " %s", n, outlive_status_name(status));
    } else if (strcmp(line, "suspend") == 0) {
        say("SUSPEND %s", outlive_status_name(outlive_durable_interactions_suspend(queue)));
    } else if (strcmp(line, "resume") == 0) {
        say("RESUME %s", outlive_status_name(outlive_durable_interactions_resume(queue)));
    } else if (strcmp(line, "count") == 0) {
        size_t count = 0;
        outlive_status status = outlive_durable_interactions_count(queue, &count);
        if (status == OUTLIVE_OK) say("COUNT %zu", count);
        else say("COUNT %s", outlive_status_name(status));
    } else if (strcmp(line, "ping") == 0) {
        outlive_loop_dispatch(outlive_store_loop(store), 0);
        say("PONG");
    } else if (strcmp(line, "quit") == 0) {
        outlive_durable_interactions_free(queue);
        outlive_handler_free(kept_finish);
        outlive_store_close(store);
        exit(0);
    } else {
        say("UNKNOWN %s", line);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: durable_presenter STORE QUEUE MODE\n");
        return 2;
    }
    mode = argv[3];
    outlive_log_set_handler(log_line, OUTLIVE_LOG_INFO, NULL, NULL);
    if (outlive_store_open(argv[1], "presenter", NULL, NULL, &store) != OUTLIVE_OK ||
        outlive_durable_interactions_open(store, argv[2], 0, &queue) != OUTLIVE_OK) {
        say("ERROR %s", outlive_last_error());
        return 1;
    }
    say("READY %s", outlive_store_run_id(store));
    outlive_loop *loop = outlive_store_loop(store);
    char buffer[4096];
    size_t used = 0;
    for (;;) {
        struct pollfd fds[2] = { { outlive_loop_fd(loop), POLLIN, 0 }, { 0, POLLIN, 0 } };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents & (POLLIN | POLLHUP)) {
            ssize_t got = read(0, buffer + used, sizeof buffer - 1 - used);
            if (got <= 0) command("quit");
            used += (size_t)got;
            char *start = buffer;
            char *newline;
            while ((newline = memchr(start, '\n', (size_t)(buffer + used - start)))) {
                *newline = '\0';
                command(start);
                start = newline + 1;
            }
            used = (size_t)(buffer + used - start);
            memmove(buffer, start, used);
        }
    }
}
