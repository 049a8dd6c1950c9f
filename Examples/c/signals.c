/* Signals: the result of an action, delivered to consumers — durable handlers —
 * in this or other processes, by version, once or until terminated.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o signals Examples/c/signals.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./signals /tmp/signals-example
 */
#include <inttypes.h>
#include <outlive.h>
#include <stdio.h>

static int deliveries = 0;

/* The consumer: the payload (progress) plus the call-time arguments the
 * library binds — version and terminated (signal_id too, not declared here). */
OUTLIVE_HANDLER(on_progress, OUTLIVE_ID(progress), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated),
                OUTLIVE_ID(job)) {
    deliveries++;
    printf("consumer: %s version %" PRIu64 ": %s%s\n", outlive_object_string(job), version,
           outlive_object_string(progress), terminated ? " (final)" : "");
}

static void post(outlive_store *store, const char *signal_id, const char *progress, bool terminates) {
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    outlive_args_set_string(payload, "progress", progress);
    if (outlive_signal_post(store, signal_id, payload, terminates) != OUTLIVE_OK)
        fprintf(stderr, "post: %s\n", outlive_last_error());
    outlive_args_free(payload);
    printf("posted: %s%s\n", progress, terminates ? " (terminates)" : "");
}

static void dispatch_until(outlive_store *store, int wanted) {
    for (int round = 0; round < 100 && deliveries < wanted; round++)
        outlive_loop_dispatch(outlive_store_loop(store), 100);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "signals-example", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }

    /* The caller of an action makes the id and registers the consumer ... */
    char signal_id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal_id);
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "job", "sync");
    outlive_handler *consumer = NULL;
    outlive_handler_new("on_progress", NULL, bound, &consumer);
    outlive_args_free(bound);
    /* until_terminated: every version it sees until a terminating post.
     * this_run: only this store handle delivers it; it goes when the run ends.
     * (process: the next run of this process name gets it if this one dies;
     *  any_process: whichever process resolves on_progress first.) */
    if (outlive_signal_consume(store, signal_id, consumer, OUTLIVE_DELIVERY_UNTIL_TERMINATED,
                               OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL) != OUTLIVE_OK) {
        fprintf(stderr, "consume: %s\n", outlive_last_error());
        return 1;
    }
    outlive_handler_free(consumer);

    /* ... and whoever does the work — any process — posts versions. */
    post(store, signal_id, "1 of 3 files", false);
    dispatch_until(store, 1);

    /* Only the latest payload is kept: a consumer that is behind skips the
     * versions in between (here version 2 is never delivered). */
    post(store, signal_id, "2 of 3 files", false);
    post(store, signal_id, "3 of 3 files", true);
    dispatch_until(store, 2);

    /* The terminating post removed the consumer, and the record went with it. */
    uint64_t version;
    outlive_status status = outlive_signal_lookup(store, signal_id, &version, NULL, NULL);
    printf("lookup after the final version -> %s\n", outlive_status_name(status));

    /* A post nobody consumes stores nothing and is not an error. */
    char nobody[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(nobody);
    printf("post without consumers -> %s\n", outlive_status_name(outlive_signal_post(store, nobody, NULL, true)));
    printf("post to a malformed id -> %s\n", outlive_status_name(outlive_signal_post(store, "not-a-uuid", NULL, true)));

    outlive_store_close(store);
    return 0;
}
