/* Close means closed: a store closed from inside one of its callbacks on the
 * loop thread (a key-value observer, a presenter, a signal consumer, a task
 * handler) calls none of its callbacks again — not the rest of that dispatch,
 * not later ones. Each test makes several callbacks due at once, so that the
 * one that closes has others queued behind it in the same dispatch. */
#include "harness.h"
#include <stdatomic.h>

static outlive_store *closing;  /* the store the callbacks close */
static _Atomic int calls;

static void close_once(void) {
    calls++;
    if (closing) {
        outlive_store *store = closing;
        closing = NULL;
        outlive_store_close(store);
    }
}

/* The store under test runs on a loop of the test's own, which outlives it. */
struct scene { const char *dir; outlive_loop *loop; outlive_store *store; };

static bool scene_open(struct scene *scene) {
    scene->dir = harness_temp_dir();
    scene->loop = NULL;
    scene->store = NULL;
    return outlive_loop_new(&scene->loop) == OUTLIVE_OK &&
           outlive_store_open(scene->dir, "app", scene->loop, NULL, &scene->store) == OUTLIVE_OK;
}

/* Frees the loop and the directory; the store was closed by the test. */
static void scene_end(struct scene *scene) {
    outlive_loop_free(scene->loop);
    harness_remove_tree(scene->dir);
}

static void post_messages(outlive_store *store, int count) {
    for (int i = 0; i < count; i++) {
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new("c", "t", &draft);
        char id[OUTLIVE_ID_SIZE];
        CHECK_OK(outlive_message_post(store, draft, id));
        outlive_message_draft_free(draft);
    }
}

static void dispatch_rounds(outlive_loop *loop, int rounds) {
    for (int i = 0; i < rounds; i++) outlive_loop_dispatch(loop, 20);
}

static void observer_closes(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
    close_once();
}

static void test_store_closed_in_kv_observer_calls_no_further_observer(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store, *writer = NULL;
    CHECK_OK(outlive_store_open(scene.dir, "writer", NULL, NULL, &writer));
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(store, "", observer_closes, NULL, NULL, &token));
    CHECK_OK(outlive_kv_observe(store, "k", observer_closes, NULL, NULL, &token));
    for (int i = 0; i < 6; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(outlive_kv_set(writer, key, "v", 1));
    }
    calls = 0;
    closing = store;
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d observer calls after the store was closed in the first", calls - 1);
    outlive_store_close(writer);
    scene_end(&scene);
}

static int32_t any_priority(const outlive_message *m, void *c) { (void)m; (void)c; return 200; }
static void present_closes(const outlive_message *m, outlive_presentation *p, void *c) {
    (void)m; (void)p; (void)c;
    close_once();
}

static void test_store_closed_in_presenter_presents_nothing_more(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store;
    post_messages(store, 5);
    outlive_presenter presenter = { OUTLIVE_PRESENTER_VERSION, any_priority, present_closes, NULL };
    CHECK_OK(outlive_presenter_add(store, "first", &presenter, NULL, NULL));
    CHECK_OK(outlive_presenter_add(store, "second", &presenter, NULL, NULL));
    calls = 0;
    closing = store;
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d presentations after the store was closed in the first", calls - 1);
    scene_end(&scene);
}

OUTLIVE_HANDLER(close_test_consumer, OUTLIVE_ID(signal_id)) {
    (void)signal_id;
    close_once();
}

static void test_store_closed_in_signal_consumer_delivers_nothing_more(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store;
    outlive_handler *handler = NULL;
    outlive_handler_new("close_test_consumer", NULL, NULL, &handler);
    CHECK(handler);
    for (int i = 0; i < 5; i++) {
        char id[OUTLIVE_ID_SIZE];
        outlive_signal_new_id(id);
        CHECK_OK(outlive_signal_consume(store, id, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL));
        CHECK_OK(outlive_signal_consume(store, id, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL));
        CHECK_OK(outlive_signal_post(store, id, NULL, false));
    }
    outlive_handler_free(handler);
    calls = 0;
    closing = store;
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d deliveries after the store was closed in the first", calls - 1);
    scene_end(&scene);
}

OUTLIVE_HANDLER(close_test_task, OUTLIVE_ID(task_id)) {
    (void)task_id;
    close_once();
}

static void test_store_closed_in_task_handler_runs_no_further_task(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store;
    outlive_handler *work = NULL;
    outlive_handler_new("close_test_task", NULL, NULL, &work);
    CHECK(work);
    for (int i = 0; i < 5; i++) CHECK_OK(outlive_task_add(store, work, NULL, NULL, 0, NULL));
    outlive_handler_free(work);
    CHECK_OK(outlive_tasks_set_concurrency(store, 5));
    calls = 0;
    closing = store;
    CHECK_OK(outlive_tasks_run_now(store));
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d task handlers ran after the store was closed in the first", calls - 1);
    /* Every task is still stored, pending, for the next run: the four not run,
     * and the one whose run ended (closed) while its handler ran (at least once). */
    outlive_store *again = NULL;
    CHECK_OK(outlive_store_open(scene.dir, "app", NULL, NULL, &again));
    size_t pending = 0;
    CHECK_OK(outlive_tasks_count(again, &pending));
    CHECK_MSG(pending == 5, "%zu tasks pending", pending);
    outlive_store_close(again);
    scene_end(&scene);
}

static outlive_store *removing_from;
static void present_removes_itself(const outlive_message *m, outlive_presentation *p, void *c) {
    (void)m; (void)p; (void)c;
    calls++;
    if (removing_from) {
        outlive_store *store = removing_from;
        removing_from = NULL;
        outlive_presenter_remove(store, "only");
    }
}

static void test_presenter_removed_in_its_present_is_not_asked_again(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store;
    post_messages(store, 5);
    outlive_presenter presenter = { OUTLIVE_PRESENTER_VERSION, any_priority, present_removes_itself, NULL };
    calls = 0;
    removing_from = store;
    CHECK_OK(outlive_presenter_add(store, "only", &presenter, NULL, NULL));
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d presentations after the presenter removed itself", calls - 1);
    outlive_store_close(store);
    scene_end(&scene);
}

static outlive_store *scoped_store;
OUTLIVE_HANDLER(close_test_scoped_consumer, OUTLIVE_ID(signal_id)) {
    (void)signal_id;
    calls++;
    if (scoped_store) {
        outlive_store *store = scoped_store;
        scoped_store = NULL;
        size_t removed = 0;
        outlive_signal_consumers_remove_scope(store, "scope", &removed);
    }
}

static void test_consumers_removed_in_a_delivery_get_no_further_delivery(void) {
    struct scene scene;
    CHECK(scene_open(&scene));
    outlive_store *store = scene.store;
    outlive_handler *handler = NULL;
    outlive_handler_new("close_test_scoped_consumer", NULL, NULL, &handler);
    CHECK(handler);
    for (int i = 0; i < 5; i++) {
        char id[OUTLIVE_ID_SIZE];
        outlive_signal_new_id(id);
        CHECK_OK(outlive_signal_consume(store, id, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, "scope", NULL));
        CHECK_OK(outlive_signal_post(store, id, NULL, false));
    }
    outlive_handler_free(handler);
    calls = 0;
    scoped_store = store;
    dispatch_rounds(scene.loop, 10);
    CHECK_MSG(calls == 1, "%d deliveries after their consumers were removed in the first", calls - 1);
    outlive_store_close(store);
    scene_end(&scene);
}

static outlive_operations *closing_queue;
static void operation_frees_queue(outlive_operation *operation, void *context) {
    (void)context;
    calls++;
    if (closing_queue) {
        outlive_operations *queue = closing_queue;
        closing_queue = NULL;
        outlive_operations_free(queue);
    }
    outlive_operation_finish(operation);
}

static void test_operations_freed_in_an_operation_start_no_further_operation(void) {
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_operations *queue = NULL;
    CHECK_OK(outlive_operations_new(loop, OUTLIVE_OPERATIONS_UNLIMITED, &queue));
    for (int i = 0; i < 5; i++) {
        outlive_operation *operation = NULL;
        CHECK_OK(outlive_operation_new(operation_frees_queue, NULL, NULL, &operation));
        CHECK_OK(outlive_operations_add(queue, operation));
        outlive_operation_free(operation);
    }
    calls = 0;
    closing_queue = queue;
    dispatch_rounds(loop, 10);
    CHECK_MSG(calls == 1, "%d operations started after their queue was freed in the first", calls - 1);
    outlive_loop_free(loop);
}

HARNESS_MAIN(
    T(test_store_closed_in_kv_observer_calls_no_further_observer),
    T(test_store_closed_in_presenter_presents_nothing_more),
    T(test_store_closed_in_signal_consumer_delivers_nothing_more),
    T(test_store_closed_in_task_handler_runs_no_further_task),
    T(test_operations_freed_in_an_operation_start_no_further_operation),
    T(test_presenter_removed_in_its_present_is_not_asked_again),
    T(test_consumers_removed_in_a_delivery_get_no_further_delivery),
)
