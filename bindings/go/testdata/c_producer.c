/* Adds, from C, a task whose handler (xlang.go_record) is declared in Go, and
 * a signal consumer naming xlang.go_on_signal, then posts the signal: a Go
 * process runs them later.  c_producer STORE SIGNAL_ID */
#include <stdio.h>
#include "outlive.h"

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, outlive_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], "c-producer", NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_args *bound = NULL, *payload = NULL;
    outlive_handler *work = NULL, *consumer = NULL;
    if (outlive_args_new(&bound) != OUTLIVE_OK) return fail("args");
    outlive_args_set_string(bound, "origin", "c");
    outlive_args_set_integer(bound, "n", 42);
    if (outlive_handler_new("xlang.go_record", NULL, bound, &work) != OUTLIVE_OK) return fail("handler");
    if (outlive_task_add(store, work, NULL, NULL, 0, NULL) != OUTLIVE_OK) return fail("task");
    outlive_args_remove(bound, "n");
    if (outlive_handler_new("xlang.go_on_signal", NULL, bound, &consumer) != OUTLIVE_OK) return fail("consumer");
    if (outlive_signal_consume(store, argv[2], consumer, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS,
                               NULL, NULL) != OUTLIVE_OK) return fail("consume");
    if (outlive_args_new(&payload) != OUTLIVE_OK) return fail("payload");
    outlive_args_set_string(payload, "result", "posted by c");
    if (outlive_signal_post(store, argv[2], payload, true) != OUTLIVE_OK) return fail("post");
    outlive_args_free(payload);
    outlive_args_free(bound);
    outlive_handler_free(work);
    outlive_handler_free(consumer);
    outlive_store_close(store);
    return 0;
}
