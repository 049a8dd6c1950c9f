/* The security promises of docs/SECURITY.md that a test can hold the library to:
 * links are never followed inside a store, stores of other users and stores
 * others can write are refused, handler libraries load only from an explicit
 * path, and names from stored data never reach undeclared symbols. */
#include "harness.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_planted_symlink_for_the_database_is_refused_and_its_target_untouched(void) {
    const char *base = harness_temp_dir();
    char store[4096], target[4200], link[4300];
    snprintf(store, sizeof store, "%s/store", base);
    snprintf(target, sizeof target, "%s/victim", base);
    CHECK(mkdir(store, 0700) == 0);
    int fd = open(target, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && write(fd, "precious", 8) == 8);
    close(fd);
    snprintf(link, sizeof link, "%s/outlive.db", store);
    CHECK(symlink(target, link) == 0);
    outlive_store *handle = NULL;
    CHECK_STATUS(outlive_store_open(store, "app", NULL, NULL, &handle), OUTLIVE_E_PERMISSION);
    CHECK(strstr(outlive_last_error(), "link") != NULL);
    struct stat info;
    CHECK(stat(target, &info) == 0 && info.st_size == 8);
    harness_remove_tree(base);
}

static void test_planted_symlink_for_the_wal_or_doorbell_is_refused(void) {
    const char *names[] = {"outlive.db-wal", "doorbell"};
    for (size_t i = 0; i < 2; i++) {
        const char *base = harness_temp_dir();
        char store[4096], link[4300], target[4200];
        snprintf(store, sizeof store, "%s/store", base);
        snprintf(target, sizeof target, "%s/elsewhere", base);
        outlive_store *handle = NULL;
        CHECK_OK(outlive_store_open(store, "app", NULL, NULL, &handle));
        outlive_store_close(handle);
        snprintf(link, sizeof link, "%s/%s", store, names[i]);
        unlink(link);
        CHECK(symlink(target, link) == 0);
        CHECK_MSG(outlive_store_open(store, "app", NULL, NULL, &handle) == OUTLIVE_E_PERMISSION, "%s: %s", names[i], outlive_last_error());
        CHECK(access(target, F_OK) != 0);  /* nothing was created through the link */
        harness_remove_tree(base);
    }
}

static void test_database_readable_by_others_is_refused(void) {
    const char *base = harness_temp_dir();
    outlive_store *handle = NULL;
    CHECK_OK(outlive_store_open(base, "app", NULL, NULL, &handle));
    outlive_store_close(handle);
    char db[4200];
    snprintf(db, sizeof db, "%s/outlive.db", base);
    CHECK(chmod(db, 0644) == 0);
    CHECK_STATUS(outlive_store_open(base, "app", NULL, NULL, &handle), OUTLIVE_E_PERMISSION);
    CHECK(strstr(outlive_last_error(), "0644") != NULL);
    harness_remove_tree(base);
}

static void test_store_owned_by_another_user_is_refused(void) {
    if (geteuid() != 0) { printf("(skipped: needs root to give a directory away)\n"); return; }
    const char *base = harness_temp_dir();
    CHECK(chown(base, 65534, 65534) == 0);
    outlive_store *handle = NULL;
    CHECK_STATUS(outlive_store_open(base, "app", NULL, NULL, &handle), OUTLIVE_E_PERMISSION);
    CHECK(strstr(outlive_last_error(), "owned by uid 65534") != NULL);
    CHECK(chown(base, 0, 0) == 0);
    harness_remove_tree(base);
}

static void test_handler_libraries_load_only_from_an_explicit_path(void) {
    CHECK_STATUS(outlive_handler_library_load("libhandlers_fixture.so"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "'/'") != NULL);
    CHECK_STATUS(outlive_handler_library_load("libc.so.6"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_library_load(""), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_library_load("/nonexistent/libx.so"), OUTLIVE_E_NOT_FOUND);
    char path[4200];
    snprintf(path, sizeof path, "%s/libhandlers_fixture.so", harness_bin_dir());
    CHECK_OK(outlive_handler_library_load(path));
    CHECK_OK(outlive_handler_resolve("fixture_ping"));
}

static void test_stored_names_never_reach_undeclared_symbols(void) {
    /* A deserialized handler naming libc functions resolves to nothing. */
    const char *names[] = {"system", "exit", "abort", "getpid", "unlink", "outlive_kv_delete", "main"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        outlive_handler *handler = NULL;
        outlive_handler_new(names[i], NULL, NULL, &handler);
        CHECK(handler);
        void *bytes = NULL;
        size_t size = 0;
        CHECK_OK(outlive_handler_serialize(handler, &bytes, &size));
        outlive_handler_free(handler);
        CHECK_OK(outlive_handler_deserialize(bytes, size, &handler));
        outlive_free(bytes);
        CHECK_MSG(outlive_handler_call(handler, NULL) == OUTLIVE_E_UNRESOLVED, "%s resolved", names[i]);
        outlive_handler_free(handler);
    }
}

static void test_size_limits_have_clear_statuses(void) {
    const char *base = harness_temp_dir();
    outlive_store *handle = NULL;
    CHECK_OK(outlive_store_open(base, "app", NULL, NULL, &handle));
    char key[OUTLIVE_KV_MAX_KEY_SIZE + 2];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    CHECK_STATUS(outlive_kv_set(handle, key, "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    key[OUTLIVE_KV_MAX_KEY_SIZE] = '\0';
    CHECK_OK(outlive_kv_set(handle, key, "v", 1));
    static char dummy[1];
    CHECK_STATUS(outlive_kv_set(handle, "big", dummy, (size_t)OUTLIVE_KV_MAX_VALUE_SIZE + 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "at most") != NULL);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    CHECK_STATUS(outlive_args_set_id(args, "x", NULL, dummy, (size_t)OUTLIVE_MAX_ID_SIZE + 1), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_args_free(args);
    outlive_store_close(handle);
    harness_remove_tree(base);
}

/* A handle of one kind passed where another is expected is refused with a
 * status (or read as NULL by an accessor), as sqlite3SafetyCheckOk refuses a
 * misused connection: never a call on the wrong object's memory. */
static void test_a_handle_of_another_kind_is_refused_not_used(void) {
    const char *dir = harness_temp_dir();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "kinds", NULL, NULL, &store));
    outlive_args *args = NULL;
    CHECK_OK(outlive_args_new(&args));
    outlive_handler *handler = NULL;
    CHECK_OK(outlive_handler_new("kinds.none", NULL, NULL, &handler));

    /* A store where a handler is expected. */
    CHECK_STATUS(outlive_handler_call((const outlive_handler *)store, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "another kind") != NULL);
    CHECK_STATUS(outlive_handler_bind((outlive_handler *)store, args), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(outlive_handler_name((const outlive_handler *)store) == NULL);
    outlive_handler *copy = NULL;
    CHECK_STATUS(outlive_handler_copy((const outlive_handler *)store, &copy), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(copy == NULL);
    /* A handler where a store is expected, arguments where a handler is. */
    CHECK_STATUS(outlive_kv_set((outlive_store *)handler, "k", "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(outlive_store_run_id((const outlive_store *)handler) == NULL);
    CHECK_STATUS(outlive_signal_post(store, "00000000-0000-4000-8000-000000000000", (const outlive_args *)handler, false),
                 OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_new("kinds.none", NULL, (const outlive_args *)store, &copy), OUTLIVE_E_INVALID_ARGUMENT);
    /* A store where a loop is expected. */
    outlive_store *second = NULL;
    CHECK_STATUS(outlive_store_open(dir, "kinds", (outlive_loop *)store, NULL, &second), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(second == NULL);
    /* Lists of one kind are not lists of another. */
    outlive_task_list *tasks = NULL;
    CHECK_OK(outlive_task_list_new(store, NULL, 0, &tasks));
    CHECK(outlive_message_list_count((const outlive_message_list *)tasks) == 0);
    CHECK(outlive_kv_key_list_key((const outlive_kv_key_list *)tasks, 0) == NULL);
    /* _free of the wrong kind ignores it: the objects are still usable. */
    outlive_args_free((outlive_args *)handler);
    outlive_handler_free((outlive_handler *)args);
    outlive_message_list_free((outlive_message_list *)tasks);
    CHECK(strcmp(outlive_handler_name(handler), "kinds.none") == 0);
    CHECK_OK(outlive_args_set_bool(args, "still", true));
    CHECK(outlive_task_list_count(tasks) == 0);
    CHECK_OK(outlive_kv_set(store, "k", "v", 1));

    outlive_task_list_free(tasks);
    outlive_handler_free(handler);
    outlive_args_free(args);
    outlive_store_close(store);
    harness_remove_tree(dir);
}

HARNESS_MAIN(
    T(test_a_handle_of_another_kind_is_refused_not_used),
    T(test_planted_symlink_for_the_database_is_refused_and_its_target_untouched),
    T(test_planted_symlink_for_the_wal_or_doorbell_is_refused),
    T(test_database_readable_by_others_is_refused),
    T(test_store_owned_by_another_user_is_refused),
    T(test_handler_libraries_load_only_from_an_explicit_path),
    T(test_stored_names_never_reach_undeclared_symbols),
    T(test_size_limits_have_clear_statuses),
)
