/* A process that only keeps a store open and dispatches its loop, so that it
 * fires the store's due schedules (it never runs a task: its triggers are
 * off). Usage: schedules_firer DIR SECONDS — prints "ready" once its timer is
 * armed (after its first dispatch), exits 0 after SECONDS, or dies by the
 * test's kill -9. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "outlive.h"

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: schedules_firer DIR SECONDS\n");
        return 2;
    }
    double seconds = atof(argv[2]);
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], "firer", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    if (outlive_tasks_set_triggers(store, 0, 1e9) != OUTLIVE_OK) {
        fprintf(stderr, "triggers: %s\n", outlive_last_error());
        return 1;
    }
    double deadline = monotonic() + seconds;
    /* The timer is armed by work the open posted to the loop. */
    if (outlive_loop_dispatch(outlive_store_loop(store), 0) != OUTLIVE_OK) {
        fprintf(stderr, "dispatch: %s\n", outlive_last_error());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (double now = monotonic(); now < deadline; now = monotonic()) {
        int wait = (int)((deadline - now) * 1000) + 1;
        if (outlive_loop_dispatch(outlive_store_loop(store), wait) != OUTLIVE_OK) {
            fprintf(stderr, "dispatch: %s\n", outlive_last_error());
            return 1;
        }
    }
    outlive_store_close(store);
    return 0;
}
