/* The operation queue: asynchronous operations with dependencies and a limit
 * of started-but-unfinished ones. An operation is finished only when
 * outlive_operation_finish() is called for it — returning from run is not enough.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o operations Examples/c/operations.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./operations /tmp/operations-example   (the queue is in-process; no store is used)
 */
#include <outlive.h>
#include <stdio.h>

static outlive_operation *in_flight[8];
static size_t in_flight_count = 0;
static int drained = 0;

/* Starts the work and returns; the work "completes" later (here: when main
 * finishes what is in flight, as a network callback would). */
static void start(outlive_operation *operation, void *context) {
    printf("start %s%s\n", (const char *)context, outlive_operation_is_cancelled(operation) ? " (cancelled)" : "");
    in_flight[in_flight_count++] = operation;
}

static void completed(outlive_operation *operation, bool cancelled, void *context) {
    (void)operation;
    printf("completed %s%s\n", (const char *)context, cancelled ? " (cancelled, never ran)" : "");
}

static void all_done(void *context) {
    (void)context;
    drained = 1;
    printf("drained: every operation finished\n");
}

static outlive_operation *make(const char *name) {
    outlive_operation *operation;
    outlive_operation_new(start, (void *)name, NULL, &operation);
    outlive_operation_set_completion(operation, completed, (void *)name, NULL);
    return operation;
}

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    outlive_loop *loop;
    outlive_operations *queue;
    outlive_loop_new(&loop);
    outlive_operations_new(loop, 2, &queue);   /* at most 2 started and unfinished */
    outlive_operations_set_drained(queue, all_done, NULL, NULL);

    /*   login ──▶ fetch contacts ──┐
     *         └─▶ fetch calendar ──┴─▶ show home      and "prefetch ads", cancelled */
    outlive_operation *login = make("login"), *contacts = make("fetch contacts"),
                      *calendar = make("fetch calendar"), *home = make("show home"), *ads = make("prefetch ads");
    outlive_operation_add_dependency(contacts, login);
    outlive_operation_add_dependency(calendar, login);
    outlive_operation_add_dependency(home, contacts);
    outlive_operation_add_dependency(home, calendar);
    printf("a cycle -> %s\n", outlive_status_name(outlive_operation_add_dependency(login, home)));

    outlive_operation *all[] = {home, calendar, contacts, login, ads};
    for (size_t i = 0; i < 5; i++) outlive_operations_add(queue, all[i]);
    outlive_operation_cancel(ads);   /* not started: it never runs */

    /* The host's event loop: dispatch, then "complete" what is in flight. */
    for (int round = 0; round < 100 && !drained; round++) {
        outlive_loop_dispatch(loop, 20);
        size_t n = in_flight_count;
        in_flight_count = 0;
        for (size_t i = 0; i < n; i++) outlive_operation_finish(in_flight[i]);
    }
    printf("finish twice -> %s\n", outlive_status_name(outlive_operation_finish(login)));

    for (size_t i = 0; i < 5; i++) outlive_operation_free(all[i]);   /* our references */
    outlive_operations_free(queue);
    outlive_loop_free(loop);
    return 0;
}
