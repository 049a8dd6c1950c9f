/* The key-value API from C: values, atomic updates, and bad input that must
 * get a precise status and leave the store as it was. One suite for both
 * engines: OUTLIVE_TEST_STORE_KIND=postgresql runs it on PostgreSQL stores
 * (harness_store_location), where hostile URIs and tampered schemas are
 * tested too. */
#include "harness.h"
#include <fcntl.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

static outlive_store *open_store(const char *dir) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "app", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open %s: %s\n", dir, outlive_last_error());
        return NULL;
    }
    return store;
}

static void test_set_get_delete_round_trip(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_OK(outlive_kv_set(store, "greeting", "hello", 5));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "greeting", &bytes, &size));
    CHECK(size == 5 && memcmp(bytes, "hello", 5) == 0);
    outlive_free(bytes);
    CHECK_OK(outlive_kv_set(store, "greeting", "bye", 3));
    CHECK_OK(outlive_kv_get(store, "greeting", &bytes, &size));
    CHECK(size == 3 && memcmp(bytes, "bye", 3) == 0);
    outlive_free(bytes);
    CHECK_OK(outlive_kv_delete(store, "greeting"));
    CHECK_STATUS(outlive_kv_get(store, "greeting", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_kv_delete(store, "greeting"), OUTLIVE_E_NOT_FOUND);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_empty_value_is_present_and_not_null(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_OK(outlive_kv_set(store, "empty", NULL, 0));
    void *bytes = NULL;
    size_t size = 99;
    CHECK_OK(outlive_kv_get(store, "empty", &bytes, &size));
    CHECK(bytes != NULL && size == 0);
    outlive_free(bytes);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_values_survive_reopen(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    unsigned char blob[256];
    for (int i = 0; i < 256; i++) blob[i] = (unsigned char)i;
    CHECK_OK(outlive_kv_set(store, "blob", blob, sizeof blob));
    outlive_store_close(store);
    store = open_store(dir);
    CHECK(store);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "blob", &bytes, &size));
    CHECK(size == 256 && memcmp(bytes, blob, 256) == 0);
    outlive_free(bytes);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static outlive_status increment(outlive_kv_value *value, void *context) {
    (void)context;
    size_t size = 0;
    const void *bytes = outlive_kv_value_bytes(value, &size);
    long n = 0;
    if (bytes) {
        char text[32] = {0};
        memcpy(text, bytes, size < 31 ? size : 31);
        n = atol(text);
    }
    char text[32];
    int length = snprintf(text, sizeof text, "%ld", n + 1);
    return outlive_kv_value_set(value, text, (size_t)length);
}

static outlive_status refuse(outlive_kv_value *value, void *context) {
    (void)context;
    outlive_kv_value_set(value, "changed", 7);
    return OUTLIVE_E_BUSY;
}

static outlive_status reenter(outlive_kv_value *value, void *context) {
    (void)value;
    return outlive_kv_set((outlive_store *)context, "other", "x", 1);
}

static outlive_status remove_value(outlive_kv_value *value, void *context) {
    (void)context;
    return outlive_kv_value_delete(value);
}

static void test_update_reads_modifies_and_writes(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    for (int i = 0; i < 10; i++) CHECK_OK(outlive_kv_update(store, "counter", increment, NULL));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "counter", &bytes, &size));
    CHECK(size == 2 && memcmp(bytes, "10", 2) == 0);
    outlive_free(bytes);
    CHECK_OK(outlive_kv_update(store, "counter", remove_value, NULL));
    CHECK_STATUS(outlive_kv_get(store, "counter", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_update_failing_modifier_changes_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_OK(outlive_kv_set(store, "k", "v", 1));
    CHECK_STATUS(outlive_kv_update(store, "k", refuse, NULL), OUTLIVE_E_BUSY);
    CHECK(strstr(outlive_last_error(), "modifier") != NULL);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "k", &bytes, &size));
    CHECK(size == 1 && memcmp(bytes, "v", 1) == 0);
    outlive_free(bytes);
    /* A modifier that calls the store again fails instead of deadlocking. */
    CHECK_STATUS(outlive_kv_update(store, "k", reenter, store), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_kv_get(store, "other", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_bad_arguments_get_precise_statuses(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_STATUS(outlive_kv_set(NULL, "k", "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "store is NULL") != NULL);
    CHECK_STATUS(outlive_kv_set(store, NULL, "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_set(store, "k", NULL, 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_set(store, "", "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "empty") != NULL);
    CHECK_STATUS(outlive_kv_set(store, "bad\xff\xfe", "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "UTF-8") != NULL);
    char *huge = malloc(1 << 20 | 1);
    memset(huge, 'k', 1 << 20);
    huge[1 << 20] = '\0';
    CHECK_STATUS(outlive_kv_set(store, huge, "v", 1), OUTLIVE_E_INVALID_ARGUMENT);
    free(huge);
    CHECK_STATUS(outlive_kv_get(store, "k", NULL, &size), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_get(store, "k", &bytes, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_update(store, "k", NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    uint64_t token;
    CHECK_STATUS(outlive_kv_observe(store, "p", NULL, NULL, NULL, &token), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_unobserve(store, 12345), OUTLIVE_E_NOT_FOUND);
    /* Nothing of the above was stored. */
    CHECK_STATUS(outlive_kv_get(store, "k", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_open_refuses_bad_places(void) {
    SQLITE_ONLY();
    outlive_store *store = NULL;
    CHECK_STATUS(outlive_store_open(NULL, "app", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_store_open("/tmp/x", NULL, NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_store_open("/tmp/x", "app", NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_store_open("", "app", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    const char *base = harness_temp_dir();
    char path[4096];
    CHECK_STATUS(outlive_store_open(base, "a:b", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_store_open(base, "", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    /* A directory that cannot be created: its parent does not exist. */
    snprintf(path, sizeof path, "%s/missing/store", base);
    CHECK_STATUS(outlive_store_open(path, "app", NULL, NULL, &store), OUTLIVE_E_IO);
    CHECK(strstr(outlive_last_error(), "missing") != NULL);
    /* A file where the directory should be. */
    snprintf(path, sizeof path, "%s/file", base);
    FILE *file = fopen(path, "w");
    CHECK(file);
    fclose(file);
    CHECK_STATUS(outlive_store_open(path, "app", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "not a directory") != NULL);
    /* A read-only directory (refused by its mode, for root too). */
    snprintf(path, sizeof path, "%s/readonly", base);
    CHECK(mkdir(path, 0500) == 0);
    CHECK_STATUS(outlive_store_open(path, "app", NULL, NULL, &store), OUTLIVE_E_IO);
    CHECK(strstr(outlive_last_error(), "read-only") != NULL);
    /* Writable by others. */
    snprintf(path, sizeof path, "%s/shared", base);
    CHECK(mkdir(path, 0700) == 0 && chmod(path, 0777) == 0);
    CHECK_STATUS(outlive_store_open(path, "app", NULL, NULL, &store), OUTLIVE_E_PERMISSION);
    CHECK(strstr(outlive_last_error(), "mode") != NULL);
    /* A symbolic link as the store. */
    char link[4096];
    snprintf(path, sizeof path, "%s/real", base);
    snprintf(link, sizeof link, "%s/link", base);
    CHECK(mkdir(path, 0700) == 0 && symlink(path, link) == 0);
    CHECK_STATUS(outlive_store_open(link, "app", NULL, NULL, &store), OUTLIVE_E_PERMISSION);
    CHECK(store == NULL);
    harness_remove_tree(base);
}

static void test_created_store_has_private_modes(void) {
    SQLITE_ONLY();
    const char *base = harness_temp_dir();
    char dir[4096], file[4200];
    snprintf(dir, sizeof dir, "%s/store", base);
    mode_t old = umask(0);
    outlive_store *store = open_store(dir);
    umask(old);
    CHECK(store);
    CHECK_OK(outlive_kv_set(store, "k", "v", 1));
    struct stat info;
    CHECK(stat(dir, &info) == 0 && (info.st_mode & 0777) == 0700);
    const char *files[] = {"outlive.db", "outlive.db-wal", "doorbell"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, files[i]);
        CHECK_MSG(stat(file, &info) == 0 && (info.st_mode & 0777) == 0600, "%s has mode %o", files[i], info.st_mode & 0777);
    }
    outlive_store_close(store);
    harness_remove_tree(base);
}

static void test_corrupted_database_is_refused(void) {
    SQLITE_ONLY();
    const char *dir = harness_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0);
    char garbage[8192];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)(i * 7 + 3);
    CHECK(write(fd, garbage, sizeof garbage) == (ssize_t)sizeof garbage);
    close(fd);
    outlive_store *store = NULL;
    CHECK_STATUS(outlive_store_open(dir, "app", NULL, NULL, &store), OUTLIVE_E_CORRUPT);
    CHECK(store == NULL);
    harness_remove_store(dir);
}

static void test_newer_format_is_refused(void) {
    SQLITE_ONLY();
    const char *dir = harness_temp_dir();
    outlive_store *store = open_store(dir);
    CHECK(store);
    outlive_store_close(store);
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK_STATUS(outlive_store_open(dir, "app", NULL, NULL, &store), OUTLIVE_E_VERSION);
    CHECK(strstr(outlive_last_error(), "newer") != NULL);
    harness_remove_store(dir);
}

static void test_foreign_database_is_refused(void) {
    SQLITE_ONLY();
    const char *dir = harness_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE people(name TEXT)", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    chmod(path, 0600);
    outlive_store *store = NULL;
    CHECK_STATUS(outlive_store_open(dir, "app", NULL, NULL, &store), OUTLIVE_E_CORRUPT);
    CHECK(strstr(outlive_last_error(), "not an Outlive store") != NULL);
    harness_remove_store(dir);
}

static void test_status_names_and_version(void) {
    CHECK(strcmp(outlive_status_name(OUTLIVE_OK), "OUTLIVE_OK") == 0);
    CHECK(strcmp(outlive_status_name(OUTLIVE_E_NO_MEMORY), "OUTLIVE_E_NO_MEMORY") == 0);
    CHECK(strcmp(outlive_status_name((outlive_status)999), "OUTLIVE_E_UNKNOWN") == 0);
    CHECK(outlive_version_number() == OUTLIVE_VERSION_NUMBER);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", OUTLIVE_VERSION_MAJOR, OUTLIVE_VERSION_MINOR, OUTLIVE_VERSION_PATCH);
    CHECK(strcmp(outlive_version(), expected) == 0);
    CHECK(outlive_last_error() != NULL);
}

static void count_release(void *context) { (*(int *)context)++; }
static void ignore_value(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
}

static void test_observer_context_is_released_once_and_never_after_a_failed_registration(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    int released = 0;
    uint64_t token = 0;
    CHECK_STATUS(outlive_kv_observe(store, "p", NULL, &released, count_release, &token), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_observe(store, "bad\xff", ignore_value, &released, count_release, &token), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(released == 0);
    CHECK_OK(outlive_kv_observe(store, "p", ignore_value, &released, count_release, &token));
    CHECK(released == 0);
    CHECK_OK(outlive_kv_unobserve(store, token));
    CHECK(released == 1);
    CHECK_STATUS(outlive_kv_unobserve(store, token), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_kv_observe(store, "q", ignore_value, &released, count_release, &token));
    outlive_store_close(store);
    CHECK(released == 2);
    harness_remove_store(dir);
}

/* ── who is woken after a set ── */

struct observed { int calls; char key[64]; };

static void note_key(const char *key, const void *bytes, size_t size, void *context) {
    (void)bytes; (void)size;
    struct observed *observed = context;
    snprintf(observed->key, sizeof observed->key, "%s", key);
    observed->calls++;
}

/* Polls the loop's fd, as a host's event loop does, until `want` calls. */
static int dispatch_until_observed(outlive_loop *loop, const struct observed *observed, int want) {
    for (int round = 0; round < 100 && observed->calls < want; round++) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        if (poll(&pfd, 1, 100) < 0) return 0;
        if (pfd.revents & POLLIN) outlive_loop_dispatch(loop, 0);
    }
    return observed->calls >= want;
}

static ssize_t read_doorbell(const char *dir, char *buffer, size_t size) {
    char path[4200];
    snprintf(path, sizeof path, "%s/doorbell", dir);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t got = read(fd, buffer, size);
    close(fd);
    return got;
}

/* A change that only the writing handle watches wakes that handle's loop
 * through its fd, and leaves the doorbell alone: a write of it would wake
 * every process of the store, and cost the writer a link-count check and a
 * file write in each commit. */
static void test_a_change_only_its_own_handle_watches_wakes_its_loop_and_rings_no_doorbell(void) {
    SQLITE_ONLY();
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    struct observed observed = {0};
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(store, "own/", note_key, &observed, NULL, &token));
    char before[16] = {0}, after[16] = {0};
    ssize_t before_size = read_doorbell(dir, before, sizeof before);
    CHECK_OK(outlive_kv_set(store, "own/a", "1", 1));
    CHECK_OK(outlive_kv_set(store, "own/b", "2", 1));
    CHECK_MSG(dispatch_until_observed(outlive_store_loop(store), &observed, 2), "the handle's own observer was not woken");
    CHECK(observed.calls == 2 && strcmp(observed.key, "own/b") == 0);
    ssize_t after_size = read_doorbell(dir, after, sizeof after);
    CHECK_MSG(before_size >= 0 && after_size == before_size && memcmp(before, after, sizeof before) == 0,
              "the doorbell was written (%zd bytes before, %zd after)", before_size, after_size);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* The writer watching the key itself does not spare another handle that
 * watches it its wake-up: both observers are called, each on its own loop. */
static void test_a_change_two_handles_watch_wakes_both_loops(void) {
    char location[4096];
    snprintf(location, sizeof location, "%s", harness_store_location());
    outlive_store *writer = open_store(location);
    outlive_store *other = NULL;
    CHECK_OK(outlive_store_open(location, "other", NULL, NULL, &other));
    CHECK(writer && other);
    CHECK(outlive_store_loop(writer) != outlive_store_loop(other));
    struct observed own = {0}, seen = {0};
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(writer, "both/", note_key, &own, NULL, &token));
    CHECK_OK(outlive_kv_observe(other, "both/", note_key, &seen, NULL, &token));
    CHECK_OK(outlive_kv_set(writer, "both/x", "1", 1));
    CHECK_MSG(dispatch_until_observed(outlive_store_loop(other), &seen, 1), "the other handle was not woken");
    CHECK_MSG(dispatch_until_observed(outlive_store_loop(writer), &own, 1), "the writing handle was not woken");
    CHECK(strcmp(seen.key, "both/x") == 0 && strcmp(own.key, "both/x") == 0);
    outlive_store_close(other);
    outlive_store_close(writer);
    harness_remove_store(location);
}

/* Dispatches for `ms` milliseconds, whatever is observed. */
static void dispatch_for(outlive_loop *loop, int ms) {
    for (int waited = 0; waited < ms; waited += 20) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        if (poll(&pfd, 1, 20) > 0 && (pfd.revents & POLLIN)) outlive_loop_dispatch(loop, 0);
    }
}

/* Another handle's change whose reading failed (the feed's table renamed
 * away under the store, then back) is read at the next wake-up, even one
 * that only the handle's own change makes: those leave the feed's query out
 * only while the last reading of it succeeded. */
static void test_a_change_whose_reading_failed_is_read_at_the_next_wake_up_even_an_own_one(void) {
    char location[4096];
    snprintf(location, sizeof location, "%s", harness_store_location());
    outlive_store *watcher = open_store(location);
    outlive_store *other = NULL;
    CHECK_OK(outlive_store_open(location, "other", NULL, NULL, &other));
    CHECK(watcher && other);
    struct observed far = {0}, own = {0};
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(watcher, "far/", note_key, &far, NULL, &token));
    CHECK_OK(outlive_kv_observe(watcher, "own/", note_key, &own, NULL, &token));
    CHECK_OK(outlive_kv_set(other, "far/x", "1", 1));
    CHECK(harness_store_sql(location, "ALTER TABLE outlive_feed RENAME TO outlive_feed_away; SELECT 1", NULL, 0));
    dispatch_for(outlive_store_loop(watcher), 300);
    CHECK_MSG(far.calls == 0, "the change was read with the feed's table gone (%d calls)", far.calls);
    CHECK(harness_store_sql(location, "ALTER TABLE outlive_feed_away RENAME TO outlive_feed; SELECT 1", NULL, 0));
    CHECK_OK(outlive_kv_set(watcher, "own/y", "2", 1));
    CHECK_MSG(dispatch_until_observed(outlive_store_loop(watcher), &own, 1), "the handle's own change was not observed");
    CHECK_MSG(dispatch_until_observed(outlive_store_loop(watcher), &far, 1), "the other handle's change was left unread");
    CHECK(strcmp(far.key, "far/x") == 0);
    outlive_store_close(other);
    outlive_store_close(watcher);
    harness_remove_store(location);
}

/* Keys list as every list does: a snapshot in bytewise order under a prefix,
 * paged with the last key of one list as `after` of the next. */
static void test_keys_list_in_order_and_page_after_the_last_key(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    const char *keys[] = {"a/3", "a/1", "b/1", "a/2", "a"};
    for (size_t i = 0; i < 5; i++) CHECK_OK(outlive_kv_set(store, keys[i], "v", 1));
    outlive_kv_key_list *list = NULL;
    CHECK_OK(outlive_kv_key_list_new(store, "a/", NULL, 0, &list));
    CHECK(outlive_kv_key_list_count(list) == 3);
    CHECK(!strcmp(outlive_kv_key_list_key(list, 0), "a/1") && !strcmp(outlive_kv_key_list_key(list, 2), "a/3"));
    CHECK(outlive_kv_key_list_key(list, 3) == NULL);
    outlive_kv_key_list_free(list);
    /* Pages of two: a, a/1 | a/2, a/3 | b/1; `after` need not be a stored key. */
    const char *expected[] = {"a", "a/1", "a/2", "a/3", "b/1"};
    size_t seen = 0;
    char after[64] = "";
    for (int page = 0; page < 10; page++) {
        CHECK_OK(outlive_kv_key_list_new(store, "", page ? after : NULL, 2, &list));
        size_t count = outlive_kv_key_list_count(list);
        CHECK(count <= 2);
        for (size_t i = 0; i < count && seen < 5; i++) CHECK(!strcmp(outlive_kv_key_list_key(list, i), expected[seen++]));
        if (count) snprintf(after, sizeof after, "%s", outlive_kv_key_list_key(list, count - 1));
        outlive_kv_key_list_free(list);
        if (!count) break;
    }
    CHECK(seen == 5);
    CHECK_OK(outlive_kv_key_list_new(store, "", "a/15", 1, &list));
    CHECK(outlive_kv_key_list_count(list) == 1 && !strcmp(outlive_kv_key_list_key(list, 0), "a/2"));
    outlive_kv_key_list_free(list);
    list = NULL;
    CHECK_STATUS(outlive_kv_key_list_new(store, "", NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_kv_key_list_new(store, NULL, NULL, 0, &list), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(list == NULL && outlive_kv_key_list_count(NULL) == 0);
    outlive_kv_key_list_free(NULL);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_hostile_uris_get_precise_statuses_and_never_show_the_password(void) {
    POSTGRESQL_ONLY();
    const char *server = getenv("OUTLIVE_TEST_PG");
    char uri[4096];
    outlive_store *store = NULL;
    struct { const char *suffix; outlive_status expected; const char *says; } cases[] = {
        {"?outlive_store=Upper", OUTLIVE_E_INVALID_ARGUMENT, "store name"},
        {"?outlive_liveness=1", OUTLIVE_E_INVALID_ARGUMENT, "2 to 3600"},
        {"?outlive_liveness=ten", OUTLIVE_E_INVALID_ARGUMENT, "whole number"},
        {"?outlive_livenes=10", OUTLIVE_E_INVALID_ARGUMENT, "unknown URI parameter"},
        {"?no_such_libpq_parameter=1", OUTLIVE_E_INVALID_ARGUMENT, "no_such_libpq_parameter"},
        {"#fragment", OUTLIVE_E_INVALID_ARGUMENT, "fragment"},
        {"?sslmode=sometimes", OUTLIVE_E_INVALID_ARGUMENT, "sslmode"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(uri, sizeof uri, "%s%s", server, cases[i].suffix);
        CHECK_STATUS(outlive_store_open(uri, "app", NULL, NULL, &store), cases[i].expected);
        CHECK_MSG(strstr(outlive_last_error(), cases[i].says), "%s: %s", cases[i].suffix, outlive_last_error());
        CHECK(store == NULL);
    }
    CHECK_STATUS(outlive_store_open("postgresql://user:s3cret-pw@[::1/db", "app", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_MSG(!strstr(outlive_last_error(), "s3cret-pw"), "%s", outlive_last_error());
    CHECK_STATUS(outlive_store_open("postgresql://user:s3cret%zz@127.0.0.1/db", "app", NULL, NULL, &store), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_MSG(!strstr(outlive_last_error(), "s3cret"), "%s", outlive_last_error());
    /* A port nobody listens on; a server that cannot be reached in time. */
    CHECK_STATUS(outlive_store_open("postgresql://127.0.0.1:1/outlive_test", "app", NULL, NULL, &store), OUTLIVE_E_IO);
    CHECK(strstr(outlive_last_error(), "refused"));
    double start = harness_now();
    CHECK_STATUS(outlive_store_open("postgresql://192.0.2.1/outlive_test?connect_timeout=2", "app", NULL, NULL, &store), OUTLIVE_E_IO);
    CHECK_MSG(harness_now() - start < 8, "waited %.1f s", harness_now() - start);
    /* A wrong password (pg_cluster.py makes outlive_password give one). */
    const char *at = strchr(server, '@');
    CHECK(at);
    snprintf(uri, sizeof uri, "postgresql://outlive_password:not-the-password%s", at);
    CHECK_STATUS(outlive_store_open(uri, "app", NULL, NULL, &store), OUTLIVE_E_PERMISSION);
    CHECK_MSG(strstr(outlive_last_error(), "password authentication failed") && !strstr(outlive_last_error(), "not-the-password"),
              "%s", outlive_last_error());
    /* options->liveness_seconds out of range; version 1 options still open. */
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.liveness_seconds = 1;
    const char *location = harness_store_location();
    CHECK_STATUS(outlive_store_open(location, "app", NULL, &options, &store), OUTLIVE_E_INVALID_ARGUMENT);
    options.liveness_seconds = 0;
    options.version = 1;
    CHECK_OK(outlive_store_open(location, "app", NULL, &options, &store));
    outlive_store_close(store);
}

static void test_stores_of_one_database_do_not_see_each_other(void) {
    POSTGRESQL_ONLY();
    char first[4096];
    snprintf(first, sizeof first, "%s", harness_store_location());
    const char *second = harness_store_location();
    outlive_store *a = NULL, *b = NULL;
    CHECK_OK(outlive_store_open(first, "app", NULL, NULL, &a));
    CHECK_OK(outlive_store_open(second, "app", NULL, NULL, &b));
    CHECK_OK(outlive_kv_set(a, "shared-name", "a", 1));
    CHECK_OK(outlive_kv_set(b, "shared-name", "b", 1));
    CHECK_OK(outlive_kv_set(a, "only-in-a", "a", 1));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(b, "shared-name", &bytes, &size));
    CHECK(size == 1 && memcmp(bytes, "b", 1) == 0);
    outlive_free(bytes);
    CHECK_STATUS(outlive_kv_get(b, "only-in-a", &bytes, &size), OUTLIVE_E_NOT_FOUND);
    outlive_kv_key_list *list = NULL;
    CHECK_OK(outlive_kv_key_list_new(b, "", NULL, 0, &list));
    CHECK(outlive_kv_key_list_count(list) == 1);
    outlive_kv_key_list_free(list);
    outlive_store_close(a);
    outlive_store_close(b);
}

/* Every system is on PostgreSQL now (a system without PostgreSQL migrations
 * would be refused with OUTLIVE_E_STATE, Store.requireAvailable): each is
 * reachable on a new store, and the store's schema holds their tables and no
 * other. */
static void test_every_system_is_on_postgresql_and_makes_only_its_own_tables(void) {
    POSTGRESQL_ONLY();
    const char *location = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    size_t count = 12345;
    CHECK_OK(outlive_tasks_count(store, &count));
    CHECK(count == 0);
    CHECK_OK(outlive_messages_count(store, NULL, &count));
    CHECK(count == 0);
    CHECK_STATUS(outlive_signal_lookup(store, "5f0c6d3e-2a4b-4c1d-9e8f-0123456789ab", NULL, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    outlive_durable_interactions *queue = NULL;
    CHECK_OK(outlive_durable_interactions_open(store, "q", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &queue));
    CHECK_OK(outlive_durable_interactions_count(queue, &count));
    outlive_durable_interactions_free(queue);
    CHECK(count == 0);
    char sql[2048];
    snprintf(sql, sizeof sql, "DO \\$\\$ BEGIN IF (SELECT count(*) FROM pg_tables WHERE schemaname = 'outlive_%s' "
             "AND tablename NOT IN ('outlive_schema', 'outlive_feed', 'outlive_runs', 'outlive_watchers', 'outlive_kv', "
             "'outlive_signals', 'outlive_signal_consumers', "
             "'outlive_messages', 'outlive_message_categories', 'outlive_message_presenters', "
             "'outlive_tasks', 'outlive_task_runner', 'outlive_task_queues', 'outlive_task_counted', 'outlive_schedules', "
             "'outlive_durable_interactions', 'outlive_durable_interaction_claims')) > 0 "
             "THEN RAISE 'foreign tables'; END IF; END \\$\\$", harness_store_name(location));
    CHECK_MSG(harness_psql(NULL, sql, NULL, 0), "the store holds a table no system of this library makes");
    CHECK_OK(outlive_kv_set(store, "still", "works", 5));
    outlive_store_close(store);
}

static void test_tampered_postgresql_schema_is_refused(void) {
    POSTGRESQL_ONLY();
    const char *location = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    outlive_store_close(store);
    char sql[1024];
    /* A trigger of someone else's on our table. */
    snprintf(sql, sizeof sql, "CREATE FUNCTION outlive_%s.spy() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'; "
             "CREATE TRIGGER spy BEFORE INSERT ON outlive_%s.outlive_kv FOR EACH ROW EXECUTE FUNCTION outlive_%s.spy()",
             harness_store_name(location), harness_store_name(location), harness_store_name(location));
    CHECK(harness_psql(NULL, sql, NULL, 0));
    CHECK_STATUS(outlive_store_open(location, "app", NULL, NULL, &store), OUTLIVE_E_CORRUPT);
    CHECK_MSG(strstr(outlive_last_error(), "did not make"), "%s", outlive_last_error());
    snprintf(sql, sizeof sql, "DROP FUNCTION outlive_%s.spy() CASCADE", harness_store_name(location));
    CHECK(harness_psql(NULL, sql, NULL, 0));
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    outlive_store_close(store);
    /* A newer Outlive's key-value tables. */
    snprintf(sql, sizeof sql, "UPDATE outlive_%s.outlive_schema SET version = 99 WHERE component = 'kv'", harness_store_name(location));
    CHECK(harness_psql(NULL, sql, NULL, 0));
    CHECK_STATUS(outlive_store_open(location, "app", NULL, NULL, &store), OUTLIVE_E_VERSION);
    CHECK_MSG(strstr(outlive_last_error(), "newer"), "%s", outlive_last_error());
}

static void test_a_handle_whose_liveness_connection_drops_says_its_run_ended(void) {
    POSTGRESQL_ONLY();
    const char *location = harness_store_location();
    outlive_loop *loop = NULL;
    CHECK_OK(outlive_loop_new(&loop));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "victim", loop, NULL, &store));
    CHECK_OK(outlive_kv_set(store, "before", "x", 1));
    CHECK_OK(outlive_store_check(store));
    CHECK_STATUS(outlive_store_check(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    /* The server ends the session that holds this run's lock (as a restart or a cut would). */
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN outlive_%s.outlive_runs r "
             "ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid = r.lock_key::bigint::oid "
             "AND l.classid = (SELECT oid FROM pg_namespace WHERE nspname = 'outlive_%s') WHERE r.process = 'victim'",
             harness_store_name(location), harness_store_name(location));
    CHECK(harness_psql(NULL, sql, NULL, 0));
    outlive_status status = OUTLIVE_OK;
    /* The handle learns it while its loop dispatches; outlive_store_check
     * reports it without I/O, and every other call fails the same way. */
    for (int round = 0; round < 100 && status == OUTLIVE_OK; round++) {
        outlive_loop_dispatch(loop, 50);
        status = outlive_store_check(store);
    }
    CHECK_MSG(status == OUTLIVE_E_STATE, "still %s after the lock connection was ended", outlive_status_name(status));
    CHECK_MSG(strstr(outlive_last_error(), "this run ended") && strstr(outlive_last_error(), "open it again"), "%s", outlive_last_error());
    CHECK_STATUS(outlive_kv_set(store, "after", "x", 1), OUTLIVE_E_STATE);
    CHECK_MSG(strstr(outlive_last_error(), "this run ended"), "%s", outlive_last_error());
    outlive_store_close(store);
    outlive_loop_free(loop);
    /* The store itself carries on for a new handle. */
    CHECK_OK(outlive_store_open(location, "again", NULL, NULL, &store));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_kv_get(store, "before", &bytes, &size));
    outlive_free(bytes);
    outlive_store_close(store);
}

HARNESS_MAIN(
    T(test_keys_list_in_order_and_page_after_the_last_key),
    T(test_observer_context_is_released_once_and_never_after_a_failed_registration),
    T(test_a_change_only_its_own_handle_watches_wakes_its_loop_and_rings_no_doorbell),
    T(test_a_change_two_handles_watch_wakes_both_loops),
    T(test_a_change_whose_reading_failed_is_read_at_the_next_wake_up_even_an_own_one),
    T(test_set_get_delete_round_trip),
    T(test_empty_value_is_present_and_not_null),
    T(test_values_survive_reopen),
    T(test_update_reads_modifies_and_writes),
    T(test_update_failing_modifier_changes_nothing),
    T(test_bad_arguments_get_precise_statuses),
    T(test_open_refuses_bad_places),
    T(test_created_store_has_private_modes),
    T(test_corrupted_database_is_refused),
    T(test_newer_format_is_refused),
    T(test_foreign_database_is_refused),
    T(test_status_names_and_version),
    T(test_hostile_uris_get_precise_statuses_and_never_show_the_password),
    T(test_stores_of_one_database_do_not_see_each_other),
    T(test_every_system_is_on_postgresql_and_makes_only_its_own_tables),
    T(test_tampered_postgresql_schema_is_refused),
    T(test_a_handle_whose_liveness_connection_drops_says_its_run_ended),
)
