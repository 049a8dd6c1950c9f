/* A second process for the signal tests.
 *   signals_peer DIR PROCESS_NAME [--load LIBRARY] [consume SIGNAL once|until this_run|process|any_process]...
 * Opens the store as PROCESS_NAME, optionally loads a handler library (whose
 * signals_report handler prints a DELIVERED line per delivery), registers the
 * consumers (handler signals_report), prints "READY", then dispatches its
 * loop until its stdin reaches end of file, and closes the store. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

static int fail(const char *what) {
    fprintf(stderr, "signals_peer: %s: %s\n", what, outlive_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], argv[2], NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    int i = 3;
    if (i + 1 < argc && !strcmp(argv[i], "--load")) {
        if (outlive_handler_library_load(argv[i + 1]) != OUTLIVE_OK) return fail("load");
        i += 2;
    }
    for (; i + 3 < argc && !strcmp(argv[i], "consume"); i += 4) {
        outlive_delivery delivery = !strcmp(argv[i + 2], "once") ? OUTLIVE_DELIVERY_ONCE : OUTLIVE_DELIVERY_UNTIL_TERMINATED;
        outlive_lifetime lifetime = !strcmp(argv[i + 3], "this_run") ? OUTLIVE_LIFETIME_THIS_RUN
                                  : !strcmp(argv[i + 3], "process") ? OUTLIVE_LIFETIME_PROCESS : OUTLIVE_LIFETIME_ANY_PROCESS;
        outlive_handler *handler = NULL;
        outlive_handler_new("signals_report", NULL, NULL, &handler);
        if (!handler) return fail("handler");
        if (outlive_signal_consume(store, argv[i + 1], handler, delivery, lifetime, NULL, NULL) != OUTLIVE_OK) return fail("consume");
        outlive_handler_free(handler);
    }
    if (i != argc) return 2;
    printf("READY\n");
    outlive_loop *loop = outlive_store_loop(store);
    for (;;) {
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) break;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents) {
            char byte;
            if (read(0, &byte, 1) <= 0) break;
        }
    }
    outlive_store_close(store);
    return 0;
}
