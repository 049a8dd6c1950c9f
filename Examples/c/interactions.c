/* Interaction queues: modal interactions (a permission prompt, a login sheet)
 * strictly one at a time, each finished explicitly.
 *  - outlive_interactions: in-process, on a loop; run callbacks get a token.
 *  - outlive_durable_interactions: stored handlers, presented one at a time by
 *    one process, and those queued before a restart are presented after it.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o interactions Examples/c/interactions.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./interactions /tmp/interactions-example
 */
#include <outlive.h>
#include <stdio.h>
#include <string.h>

/* ── in-process ────────────────────────────────────────────────────────── */

static outlive_interaction *waiting_for_user = NULL;

/* Runs on the loop's thread when its turn comes. This one "shows a sheet" and
 * keeps the token: the user answers later, and only then does the next start. */
static void ask_permission(outlive_interaction *interaction, void *context) {
    printf("interaction: %s (waiting for the user)\n", (const char *)context);
    waiting_for_user = interaction;
}

/* This one needs no UI: it finishes at once. */
static void show_notice(outlive_interaction *interaction, void *context) {
    printf("interaction: %s\n", (const char *)context);
    outlive_interaction_finish(interaction);
}

static void in_process(void) {
    outlive_loop *loop;
    outlive_interactions *queue;
    outlive_loop_new(&loop);
    outlive_interactions_new(loop, &queue);

    outlive_interactions_add(queue, ask_permission, "allow notifications?", NULL);
    outlive_interactions_add(queue, show_notice, "what's new in 2.0", NULL);
    for (int round = 0; round < 3; round++) outlive_loop_dispatch(loop, 50);
    printf("unfinished: %zu (the notice waits for the permission prompt)\n", outlive_interactions_unfinished(queue));

    /* The view disappears: nothing starts until it appears again. */
    outlive_interactions_suspend(queue);
    outlive_interaction_finish(waiting_for_user);   /* any thread, any time */
    printf("the user answered; the queue is suspended\n");
    for (int round = 0; round < 3; round++) outlive_loop_dispatch(loop, 50);
    printf("unfinished while suspended: %zu\n", outlive_interactions_unfinished(queue));
    outlive_interactions_resume(queue);
    for (int round = 0; round < 50 && outlive_interactions_unfinished(queue) > 0; round++)
        outlive_loop_dispatch(loop, 50);
    printf("unfinished after resume: %zu\n", outlive_interactions_unfinished(queue));
    printf("finish twice -> %s\n", outlive_status_name(outlive_interaction_finish(waiting_for_user)));

    outlive_interactions_free(queue);
    outlive_loop_free(loop);
}

/* ── durable ───────────────────────────────────────────────────────────── */

/* A durable interaction is a handler. It receives interaction_id and finish (a
 * handler: call it once when the interaction is over, from any thread of this
 * process, now or later — copy it with outlive_handler_copy to keep it). */
OUTLIVE_HANDLER(onboarding_step, OUTLIVE_ID(title), OUTLIVE_ID(interaction_id), OUTLIVE_HANDLER_ARG(finish)) {
    (void)interaction_id;
    printf("durable interaction: %s\n", outlive_object_string(title));
    outlive_handler_call(finish, NULL);
}

static void add_step(outlive_durable_interactions *queue, const char *title) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "title", title);
    outlive_handler *step = NULL;
    outlive_handler_new("onboarding_step", NULL, bound, &step);
    outlive_args_free(bound);
    outlive_durable_interactions_add(queue, step, NULL);
    outlive_handler_free(step);
}

static int durable(const char *directory) {
    /* First run: queue two steps (opened suspended: it stores, it does not
     * present), then end the run before anything was shown. */
    outlive_store *store;
    outlive_durable_interactions *queue;
    if (outlive_store_open(directory, "app", NULL, NULL, &store) != OUTLIVE_OK) return 1;
    outlive_durable_interactions_open(store, "onboarding", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &queue);
    add_step(queue, "welcome");
    add_step(queue, "sign in");
    size_t count;
    outlive_durable_interactions_count(queue, &count);
    printf("stored before the restart: %zu\n", count);
    outlive_durable_interactions_free(queue);
    outlive_store_close(store);

    /* Next run (a restart, or another process): it presents them in order. */
    if (outlive_store_open(directory, "app", NULL, NULL, &store) != OUTLIVE_OK) return 1;
    outlive_durable_interactions_open(store, "onboarding", 0, &queue);
    count = 2;
    for (int round = 0; round < 100 && count > 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        outlive_durable_interactions_count(queue, &count);
    }
    printf("stored after presenting: %zu\n", count);
    outlive_durable_interactions_free(queue);
    outlive_store_close(store);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    in_process();
    if (durable(argv[1]) != 0) { fprintf(stderr, "%s\n", outlive_last_error()); return 1; }
    return 0;
}
