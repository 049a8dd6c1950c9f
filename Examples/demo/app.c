#define _POSIX_C_SOURCE 200809L
/* The demo's application.
 *   app DIR LIBRARY start    queues work whose callbacks live in LIBRARY, posts a
 *                            sync-issue message, and is killed (SIGKILL) with all
 *                            of it still pending
 *   app DIR LIBRARY resume   the next run of the app: receives the result its
 *                            first run asked for, through the consumer it left */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "outlive.h"

static int fail(const char *what) {
    fprintf(stderr, "app: %s: %s\n", what, outlive_last_error());
    return 1;
}

static int start(outlive_store *store, const char *dir) {
    char signal_id[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal_id);
    outlive_handler *on_result = NULL;
    outlive_handler_new("demo_on_result", NULL, NULL, &on_result);
    if (outlive_signal_consume(store, signal_id, on_result, OUTLIVE_DELIVERY_UNTIL_TERMINATED,
                               OUTLIVE_LIFETIME_PROCESS, NULL, NULL) != OUTLIVE_OK) return fail("consume");
    outlive_handler_free(on_result);
    printf("  [app] registered demo_on_result for signal %.8s…, lifetime \"process\"\n", signal_id);

    const char *files[] = {"notes.txt", "photo.jpg", "report.pdf"};
    for (int i = 0; i < 3; i++) {
        outlive_args *bound = NULL;
        outlive_args_new(&bound);
        outlive_args_set_string(bound, "store", dir);
        outlive_args_set_string(bound, "file", files[i]);
        outlive_args_set_string(bound, "signal_id", signal_id);
        outlive_args_set_integer(bound, "number", i + 1);
        outlive_args_set_integer(bound, "total", 3);
        outlive_handler *upload = NULL;
        outlive_handler_new("demo_upload", NULL, bound, &upload);
        outlive_args_free(bound);
        char task_id[OUTLIVE_ID_SIZE];
        if (outlive_task_add(store, upload, NULL, NULL, 0, task_id) != OUTLIVE_OK) return fail("task_add");
        outlive_handler_free(upload);
        printf("  [app] queued task %.8s…: demo_upload(%s)\n", task_id, files[i]);
    }

    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("sync-issue", "Conflict in notes.txt", &draft);
    outlive_message_draft_set_text(draft, "notes.txt changed on this machine and on the server.");
    outlive_message_draft_set_scope(draft, "notes.txt");
    outlive_message_draft_add_choice(draft, "keep-both", "Keep both", OUTLIVE_CHOICE_DEFAULT);
    outlive_message_draft_add_choice(draft, "use-server", "Use the server's", OUTLIVE_CHOICE_DESTRUCTIVE);
    outlive_handler *on_answer = NULL;
    outlive_handler_new("demo_on_answer", NULL, NULL, &on_answer);
    outlive_message_draft_set_response_handler(draft, on_answer);
    outlive_handler_free(on_answer);
    char message_id[OUTLIVE_ID_SIZE];
    if (outlive_message_post(store, draft, message_id) != OUTLIVE_OK) return fail("message_post");
    outlive_message_draft_free(draft);
    printf("  [app] posted message %.8s…: \"Conflict in notes.txt\" (no presenter here)\n", message_id);
    printf("  [app] killed with SIGKILL now: nothing above has run yet\n");
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}

/* Dispatches the store's loop until the consumer's final version arrived (it
 * removes the consumer) or 15 s passed. */
static int resume(outlive_store *store) {
    outlive_loop *loop = outlive_store_loop(store);
    struct timespec begin, now;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    for (;;) {
        outlive_signal_consumer_list *list = NULL;
        size_t left = 1;
        if (outlive_signal_consumer_list_new(store, NULL, NULL, 0, &list) == OUTLIVE_OK) {
            left = outlive_signal_consumer_list_count(list);
            outlive_signal_consumer_list_free(list);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (left == 0) return 0;
        if (now.tv_sec - begin.tv_sec > 15) { fprintf(stderr, "app: no result within 15 s\n"); return 1; }
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        poll(&pfd, 1, 100);
        outlive_loop_dispatch(loop, 0);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: app DIR LIBRARY start|resume\n"); return 2; }
    if (outlive_handler_library_load(argv[2]) != OUTLIVE_OK) return fail("load_handlers");
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], "app", NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    int status = !strcmp(argv[3], "start") ? start(store, argv[1]) : resume(store);
    outlive_store_close(store);
    return status;
}
