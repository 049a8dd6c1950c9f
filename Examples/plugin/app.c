/* An application whose handlers live in two places: in the executable itself
 * (found with dlsym in the main program: link it with -rdynamic) and in a
 * plugin library loaded by path. It serializes a handler of each, stores them
 * — as key-value records and as tasks — and runs them: both resolve.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o app Examples/plugin/app.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./app STORE_DIR ./libplugin.so
 */
#include <outlive.h>
#include <stdio.h>

/* Declared in the executable. */
OUTLIVE_HANDLER(app_notify, OUTLIVE_ID(text), OUTLIVE_ID(task_id)) {
    printf("app_notify: %s (from the executable; %.13s)\n", outlive_object_string(text), outlive_object_string(task_id));
}

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, outlive_last_error());
    return 1;
}

static outlive_handler *notify_handler(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "text", "backup finished");
    outlive_handler *handler = NULL;
    outlive_handler_new("app_notify", NULL, bound, &handler);
    outlive_args_free(bound);
    return handler;
}

static outlive_handler *resize_handler(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "image", "cat.jpg");
    outlive_args_set_int(bound, "width", 640);
    outlive_handler *handler = NULL;
    outlive_handler_new("plugin_resize", NULL, bound, &handler);
    outlive_args_free(bound);
    return handler;
}

/* Stores the serialized handler under key, reads it back, calls it (with a
 * task_id of our own, since both handlers declare one for their task runs). */
static int store_and_call(outlive_store *store, const char *key, outlive_handler *handler) {
    void *bytes;
    size_t size;
    if (outlive_handler_serialize(handler, &bytes, &size) != OUTLIVE_OK) return fail("serialize");
    outlive_status status = outlive_kv_set(store, key, bytes, size);
    outlive_free(bytes);
    if (status != OUTLIVE_OK) return fail("kv_set");
    if (outlive_kv_get(store, key, &bytes, &size) != OUTLIVE_OK) return fail("kv_get");
    outlive_handler *stored;
    status = outlive_handler_deserialize(bytes, size, &stored);
    outlive_free(bytes);
    if (status != OUTLIVE_OK) return fail("deserialize");
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_string(call, "task_id", "direct call");
    status = outlive_handler_call(stored, call);
    outlive_args_free(call);
    outlive_handler_free(stored);
    if (status != OUTLIVE_OK) return fail(key);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s STORE_DIR PLUGIN_PATH\n", argv[0]); return 2; }

    /* Before loading, plugin_resize resolves nowhere in this process. */
    printf("before loading: plugin_resize -> %s, app_notify -> %s\n",
           outlive_status_name(outlive_handler_resolve("plugin_resize")), outlive_status_name(outlive_handler_resolve("app_notify")));
    /* By path only (it must contain a '/'): code never comes from a search path. */
    if (outlive_handler_library_load(argv[2]) != OUTLIVE_OK) return fail("load_handlers");
    printf("after loading: plugin_resize -> %s\n", outlive_status_name(outlive_handler_resolve("plugin_resize")));

    outlive_store *store;
    if (outlive_store_open(argv[1], "plugin-app", NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_handler *notify = notify_handler(), *resize = resize_handler();

    /* 1. Stored as records, read back, called. */
    if (store_and_call(store, "callbacks/notify", notify) || store_and_call(store, "callbacks/resize", resize)) return 1;

    /* 2. Stored as tasks, run by this process's loop. */
    if (outlive_task_add(store, notify, NULL, NULL, 0, NULL) != OUTLIVE_OK) return fail("task_add");
    if (outlive_task_add(store, resize, NULL, NULL, 0, NULL) != OUTLIVE_OK) return fail("task_add");
    outlive_handler_free(notify);
    outlive_handler_free(resize);
    outlive_tasks_run_now(store);
    size_t pending = 2;
    for (int round = 0; round < 100 && pending > 0; round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 50);
        outlive_tasks_count(store, &pending);
    }
    printf("tasks pending: %zu\n", pending);
    outlive_store_close(store);
    return pending == 0 ? 0 : 1;
}
