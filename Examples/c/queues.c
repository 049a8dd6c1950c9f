/* Queues for services: a unique task, a task whose result (and progress) is
 * posted to a signal whose consumer is registered with the add, a declared
 * queue this process serves, a cron schedule (stored; it fires at 02:30 UTC
 * on weekdays) and an interval schedule that fires every 0.2 s while the
 * example dispatches its loop.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o queues Examples/c/queues.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./queues /tmp/queues-example
 */
#include <outlive.h>
#include <stdio.h>

static int reports = 0;
static bool rendered = false;
static outlive_store *the_store;

/* Work that should be queued once however often it is asked for. */
OUTLIVE_HANDLER(cleanup) {
    printf("cleanup ran\n");
}

/* The worker's handler: progress, then a result. */
OUTLIVE_HANDLER(render, OUTLIVE_ID(result_signal), OUTLIVE_HANDLER_ARG(completion)) {
    outlive_args *progress = NULL;
    outlive_args_new(&progress);
    outlive_args_set_string(progress, "outcome", "rendering");
    outlive_signal_post(the_store, outlive_object_string(result_signal), progress, false);
    outlive_args_free(progress);
    outlive_args *result = NULL;
    outlive_args_new(&result);
    outlive_args_set_bool(result, "success", true);
    outlive_args_set_string(result, "url", "https://example.org/render/42.png");   /* in the payload */
    outlive_handler_call(completion, result);
    outlive_args_free(result);
}

/* The result's consumer: progress versions, then the final one (terminated). */
OUTLIVE_HANDLER(render_result, OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated), OUTLIVE_OPT_ID(outcome),
                OUTLIVE_OPT_ID(url)) {
    (void)version;
    printf("render %s%s%s\n", outcome ? outlive_object_string(outcome) : "?", url ? " " : "", url ? outlive_object_string(url) : "");
    if (terminated) rendered = true;
}

static void add_unique(outlive_store *store, outlive_handler *work) {
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.unique_key = "report:account-42";
    char id[OUTLIVE_ID_SIZE];
    bool existing = false;
    outlive_task_enqueue(store, work, &options, id, &existing);   /* existing: id is the task already queued */
    printf("unique key report:account-42: %s\n", existing ? "held already, nothing added" : "task added");
}

static void add_render(outlive_store *store, outlive_handler *render_work, outlive_handler *on_render_result) {
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.result_signal = signal;
    options.result_consumer = on_render_result;          /* UINTEGER version, BOOL terminated, ID? outcome, ID? url */
    options.result_lifetime = OUTLIVE_LIFETIME_PROCESS;  /* this process, or its next run after a crash */
    outlive_task_enqueue(store, render_work, &options, NULL, NULL);
}

/* The schedule's work; scheduled_at (DOUBLE, seconds since the epoch) is the
 * period its task stands for, bound by the firing. */
OUTLIVE_HANDLER(report, OUTLIVE_DOUBLE(scheduled_at)) {
    (void)scheduled_at;
    reports++;
    printf("report %d ran\n", reports);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "schedules-example", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    the_store = store;
    /* Served at once (not under the default triggers of an app). */
    outlive_queue_serve(store, "default", 1);
    outlive_handler *cleanup_work = NULL;
    outlive_handler_new("cleanup", NULL, NULL, &cleanup_work);
    add_unique(store, cleanup_work);
    add_unique(store, cleanup_work);
    outlive_handler_free(cleanup_work);

    outlive_handler *render_work = NULL, *on_render_result = NULL;
    outlive_handler_new("render", NULL, NULL, &render_work);
    outlive_handler_new("render_result", NULL, NULL, &on_render_result);
    add_render(store, render_work, on_render_result);
    outlive_handler_free(render_work);
    outlive_handler_free(on_render_result);
    for (int round = 0; round < 400 && !rendered; round++)
        outlive_loop_dispatch(outlive_store_loop(store), 50);

    /* Declared once in the store, for every process; served by this one. */
    outlive_queue_declare(store, "reports", OUTLIVE_QUEUE_ORDERED);
    outlive_queue_serve(store, "reports", 1);

    outlive_handler *work = NULL;
    outlive_handler_new("report", NULL, NULL, &work);
    outlive_schedule_period nightly = OUTLIVE_SCHEDULE_PERIOD_INIT;
    nightly.cron = "30 2 * * MON-FRI";          /* or: nightly.interval_seconds = 300; */
    outlive_task_options options = OUTLIVE_TASK_OPTIONS_INIT;
    options.queue = "reports";                  /* a declared queue; NULL: "default" */
    double first = 0;
    if (outlive_schedule_set(store, "nightly-report", work, &nightly, &options, &first) != OUTLIVE_OK)
        fprintf(stderr, "schedule_set: %s\n", outlive_last_error());
    outlive_handler_free(work);

    /* Every 0.2 s: fired by this process's loop, inside outlive_loop_dispatch(). */
    outlive_handler_new("report", NULL, NULL, &work);
    outlive_schedule_period often = OUTLIVE_SCHEDULE_PERIOD_INIT;
    often.interval_seconds = 0.2;
    outlive_schedule_set(store, "often", work, &often, &options, NULL);
    /* A malformed period stores nothing: minute 61 does not exist. */
    outlive_schedule_period bad = OUTLIVE_SCHEDULE_PERIOD_INIT;
    bad.cron = "61 * * * *";
    printf("cron \"61 * * * *\" -> %s\n", outlive_status_name(outlive_schedule_set(store, "bad", work, &bad, NULL, NULL)));
    outlive_handler_free(work);

    outlive_schedule_list *list = NULL;
    outlive_schedule_list_new(store, NULL, 0, &list);
    for (size_t i = 0; i < outlive_schedule_list_count(list); i++) {
        const char *cron = outlive_schedule_list_cron(list, i);
        printf("schedule %s: %s%s, queue %s\n", outlive_schedule_list_name(list, i), cron ? "cron " : "every ",
               cron ? cron : "0.2 s", outlive_schedule_list_queue(list, i));
    }
    outlive_schedule_list_free(list);

    for (int round = 0; round < 400 && reports < 2; round++)
        outlive_loop_dispatch(outlive_store_loop(store), 50);
    outlive_schedule_remove(store, "often");
    outlive_schedule_remove(store, "nightly-report");
    printf("schedules removed\n");
    outlive_store_close(store);
    return 0;
}
