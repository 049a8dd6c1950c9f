/* libFuzzer target: stored task, signal and message records with fuzzed
 * bytes. The store is opened once per process; each input is written as one
 * row straight into its tables with SQLite (the columns that hold serialized
 * handlers, payloads, choices and group members, the names and the state
 * numbers), announced on the change feed and the doorbell as a writer would,
 * and then the library lists, runs, delivers, presents and answers it. Every
 * call must return a status — never crash, never over-read (ASan) — and the
 * rows are removed again so that each input starts from the same store.
 *
 * Input: byte 0 picks the record (task, signal, message) and flags; byte 1 and
 * 2 are small numbers for the state columns; then up to four fields, each a
 * 2-byte little-endian length and its bytes (cut at the end of the input).
 *
 * The fuzz targets link only liboutlive, so SQLite's functions are looked up
 * in the libsqlite3.so.0 liboutlive itself uses (the same copy: one library
 * instance, so its locks see each other). */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outlive.h"

#define TASK_ID "9e6f0d58-0b7e-4f4c-9c62-2f1d7a3b5c01"
#define SIGNAL_ID "9e6f0d58-0b7e-4f4c-9c62-2f1d7a3b5c02"
#define CONSUMER_ID "9e6f0d58-0b7e-4f4c-9c62-2f1d7a3b5c03"
#define MESSAGE_ID "9e6f0d58-0b7e-4f4c-9c62-2f1d7a3b5c04"

static struct {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*bind_blob)(sqlite3_stmt *, int, const void *, int, void (*)(void *));
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*step)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    int (*busy_timeout)(sqlite3 *, int);
    const char *(*errmsg)(sqlite3 *);
} sql;

static outlive_store *store;
static sqlite3 *db;
static char doorbell[4200];

static void load(void **slot, void *library, const char *name) {
    *slot = dlsym(library, name);
    if (!*slot) { fprintf(stderr, "fuzz_records: no %s\n", name); abort(); }
}

static void quiet(outlive_log_level level, const char *message, void *context) {
    (void)level; (void)message; (void)context;
}

static void fuzz_task(const outlive_object *label, int64_t attempt) {
    (void)outlive_object_string(label);
    (void)attempt;
}

static void fuzz_signal(const outlive_object *signal_id, uint64_t version, const outlive_object *value) {
    (void)outlive_object_bytes(signal_id, NULL);
    (void)version;
    (void)outlive_object_string(value);
}

static void fuzz_respond(const outlive_object *message_id, const outlive_object *choice, const outlive_object *scope) {
    (void)outlive_object_string(message_id);
    (void)outlive_object_string(choice);
    (void)outlive_object_string(scope);
}

static void read_message(const outlive_message *message) {
    (void)outlive_message_id(message);
    (void)outlive_message_title(message);
    (void)outlive_message_text(message);
    (void)outlive_message_choice(message);
    const outlive_args *payload = outlive_message_payload(message);
    for (size_t i = 0; i < outlive_args_count(payload); i++) {
        (void)outlive_args_name_at(payload, i);
        (void)outlive_args_type_at(payload, i);
    }
    for (size_t i = 0; i < outlive_message_choice_count(message); i++) {
        const char *id = NULL, *label = NULL;
        outlive_choice_kind kind;
        if (outlive_message_choice_at(message, i, &id, &label, &kind) != OUTLIVE_OK) abort();
        if (!id || !label) abort();
    }
}

static int32_t priority(const outlive_message *message, void *context) {
    (void)context;
    read_message(message);
    return OUTLIVE_PRIORITY_DEFAULT;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)context;
    read_message(message);
    outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, false, NULL);
}

/* No per-input leak scans: the library keeps process-wide caches (handler
 * registry, Swift metadata) that make libFuzzer scan the whole heap after most
 * inputs, which costs more than the inputs themselves. Leaks are checked by
 * valgrind over the C suites; AddressSanitizer still checks every access. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0:malloc_context_size=8"; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!library) library = dlopen("libsqlite3.so.0", RTLD_NOW);
    if (!library) abort();
    load((void **)&sql.open_v2, library, "sqlite3_open_v2");
    load((void **)&sql.exec, library, "sqlite3_exec");
    load((void **)&sql.prepare_v2, library, "sqlite3_prepare_v2");
    load((void **)&sql.bind_blob, library, "sqlite3_bind_blob");
    load((void **)&sql.bind_text, library, "sqlite3_bind_text");
    load((void **)&sql.bind_int64, library, "sqlite3_bind_int64");
    load((void **)&sql.bind_null, library, "sqlite3_bind_null");
    load((void **)&sql.step, library, "sqlite3_step");
    load((void **)&sql.finalize, library, "sqlite3_finalize");
    load((void **)&sql.busy_timeout, library, "sqlite3_busy_timeout");
    load((void **)&sql.errmsg, library, "sqlite3_errmsg");

    outlive_log_set_handler(quiet, OUTLIVE_LOG_ERROR, NULL, NULL);
    outlive_handler_register("fuzz_task", "ID? label, INTEGER attempt", (void (*)(void))fuzz_task);
    outlive_handler_register("fuzz_signal", "ID signal_id, UINTEGER version, ID? value", (void (*)(void))fuzz_signal);
    outlive_handler_register("fuzz_respond", "ID message_id, ID choice, ID? scope", (void (*)(void))fuzz_respond);

    static char dir[] = "/tmp/outlive-fuzz-records-XXXXXX";
    if (!mkdtemp(dir)) abort();
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    if (outlive_store_open(dir, "fuzz", NULL, &options, &store) != OUTLIVE_OK) abort();
    outlive_tasks_set_triggers(store, 0, 1e6);
    outlive_presenter presenter = {OUTLIVE_PRESENTER_VERSION, priority, present, NULL};
    if (outlive_presenter_add(store, "fuzz", &presenter, NULL, NULL) != OUTLIVE_OK) abort();
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    snprintf(doorbell, sizeof doorbell, "%s/doorbell", dir);
    if (sql.open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) abort();
    sql.busy_timeout(db, 10000);
    sql.exec(db, "PRAGMA synchronous = OFF", NULL, NULL, NULL);
    return 0;
}

struct field { const uint8_t *bytes; int size; int present; };

struct input {
    uint8_t kind, a, b;
    struct field fields[4];
};

static void parse(const uint8_t *data, size_t size, struct input *input) {
    memset(input, 0, sizeof *input);
    input->kind = size > 0 ? data[0] : 0;
    input->a = size > 1 ? data[1] : 0;
    input->b = size > 2 ? data[2] : 0;
    size_t at = 3;
    for (int i = 0; i < 4 && at + 2 <= size; i++) {
        size_t length = (size_t)data[at] | ((size_t)data[at + 1] << 8);
        at += 2;
        if (length > size - at) length = size - at;
        input->fields[i] = (struct field){data + at, (int)length, 1};
        at += length;
    }
}

static void bind_blob(sqlite3_stmt *statement, int index, const struct field *field) {
    if (field->present) sql.bind_blob(statement, index, field->bytes, field->size, SQLITE_TRANSIENT);
    else sql.bind_null(statement, index);
}

/* Text columns get the raw bytes: not necessarily UTF-8, maybe with NULs. */
static void bind_text(sqlite3_stmt *statement, int index, const struct field *field, const char *otherwise) {
    if (field->present) sql.bind_text(statement, index, (const char *)field->bytes, field->size, SQLITE_TRANSIENT);
    else if (otherwise) sql.bind_text(statement, index, otherwise, -1, SQLITE_STATIC);
    else sql.bind_null(statement, index);
}

static void run(const char *text) {
    char *error = NULL;
    if (sql.exec(db, text, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "fuzz_records: %s: %s\n", text, error ? error : "?");
        abort();
    }
}

static sqlite3_stmt *prepare(const char *text) {
    sqlite3_stmt *statement = NULL;
    if (sql.prepare_v2(db, text, -1, &statement, NULL) != SQLITE_OK) {
        fprintf(stderr, "fuzz_records: %s: %s\n", text, sql.errmsg(db));
        abort();
    }
    return statement;
}

static void finish(sqlite3_stmt *statement) {
    int result = sql.step(statement);
    /* A constraint (NOT NULL, a duplicate) refuses the row: nothing to read then. */
    if (result != SQLITE_DONE && result != SQLITE_CONSTRAINT) {
        fprintf(stderr, "fuzz_records: step %d: %s\n", result, sql.errmsg(db));
        abort();
    }
    sql.finalize(statement);
}

/* What a writer does after a commit: a feed entry, and the doorbell. */
static void announce(const char *topic, const char *key) {
    sqlite3_stmt *statement = prepare("INSERT INTO outlive_feed(topic, key) VALUES (?, ?)");
    sql.bind_text(statement, 1, topic, -1, SQLITE_STATIC);
    sql.bind_text(statement, 2, key, -1, SQLITE_STATIC);
    finish(statement);
    int fd = open(doorbell, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        uint64_t value = 0;
        if (pwrite(fd, &value, sizeof value, 0) != (ssize_t)sizeof value) { /* the next dispatch reads the feed anyway */ }
        close(fd);
    }
}

static void dispatch(int times) {
    for (int i = 0; i < times; i++) {
        outlive_status status = outlive_loop_dispatch(outlive_store_loop(store), 0);
        if (status != OUTLIVE_OK) abort();
    }
}

static void check(outlive_status status) {
    if (status != OUTLIVE_OK && (outlive_last_error() == NULL || outlive_last_error()[0] == '\0')) abort();
    if ((int)status < 0 || status > OUTLIVE_E_NO_MEMORY) abort();
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec;
}

static void fuzz_task_record(const struct input *input) {
    sqlite3_stmt *statement = prepare(
        "INSERT INTO outlive_tasks(id, handler_name, handler, group_start, group_members, created, age_from, "
        "attempts, state, waiting_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sql.bind_text(statement, 1, TASK_ID, -1, SQLITE_STATIC);
    if (getenv("FUZZ_RECORDS_UTF8_TASK_NAMES") && input->fields[2].present) {
        /* Exploring past the known hang on non-UTF-8 task names (see
         * test_task_with_a_non_utf8_handler_name_does_not_hang_the_runner). */
        char name[64];
        int length = 0;
        for (int i = 0; i < input->fields[2].size && length < 63; i++)
            if (input->fields[2].bytes[i] >= 0x20 && input->fields[2].bytes[i] < 0x7f) name[length++] = (char)input->fields[2].bytes[i];
        name[length] = '\0';
        sql.bind_text(statement, 2, name, -1, SQLITE_TRANSIENT);
    } else {
        bind_text(statement, 2, &input->fields[2], "fuzz_task");
    }
    bind_blob(statement, 3, &input->fields[0]);
    bind_text(statement, 4, &input->fields[3], NULL);
    bind_blob(statement, 5, &input->fields[1]);
    sql.bind_int64(statement, 6, (sqlite3_int64)now());
    sql.bind_int64(statement, 7, (sqlite3_int64)now());
    sql.bind_int64(statement, 8, input->a % 32);
    sql.bind_int64(statement, 9, (input->b & 0x80) ? (int8_t)input->b : input->b % 5);
    sql.bind_int64(statement, 10, (sqlite3_int64)now() - 1);
    finish(statement);
    announce("tasks", TASK_ID);

    outlive_task_list *tasks = NULL;
    size_t count = 0, pending = 0;
    outlive_status status = outlive_task_list_new(store, NULL, 10, &tasks);
    count = outlive_task_list_count(tasks);
    check(status);
    if (status == OUTLIVE_OK) {
        for (size_t i = 0; i < count; i++) {
            if (strlen(outlive_task_list_id(tasks, i)) != 36) abort();
            for (size_t m = 0; m < outlive_task_list_group_member_count(tasks, i); m++) (void)strlen(outlive_task_list_group_member(tasks, i, m));
            if (outlive_task_list_handler_name(tasks, i)) (void)strlen(outlive_task_list_handler_name(tasks, i));
        }
        outlive_task_list_free(tasks);
    }
    tasks = NULL;  /* freed above; a failing call leaves its output as it was */
    check(outlive_task_list_new(store, TASK_ID, 10, &tasks));
    outlive_task_list_free(tasks);
    check(outlive_tasks_count(store, &pending));
    check(outlive_tasks_count_dead(store, &pending));
    if (input->kind & 0x10) check(outlive_task_retry(store, TASK_ID));
    check(outlive_tasks_run_now(store));
    dispatch(2);
    if (input->kind & 0x20) check(outlive_task_delete(store, TASK_ID));
    run("DELETE FROM outlive_tasks WHERE state <> 1 OR runner IS NULL");
}

static void fuzz_signal_record(const struct input *input) {
    const char *signal_id = SIGNAL_ID;
    char stored_id[64];
    if ((input->kind & 0x10) && input->fields[3].present) {
        /* A stored id that is no UUID. */
        snprintf(stored_id, sizeof stored_id, "%.*s", input->fields[3].size > 63 ? 63 : input->fields[3].size,
                 (const char *)input->fields[3].bytes);
        signal_id = stored_id;
    }
    sqlite3_stmt *statement = prepare(
        "INSERT INTO outlive_signals(signal_id, version, payload, terminated) VALUES (?, ?, ?, ?)");
    sql.bind_text(statement, 1, signal_id, -1, SQLITE_STATIC);
    sql.bind_int64(statement, 2, (input->a & 0x80) ? (int8_t)input->a : input->a);
    bind_blob(statement, 3, &input->fields[1]);
    sql.bind_int64(statement, 4, input->kind & 0x20 ? 1 : 0);
    finish(statement);
    statement = prepare(
        "INSERT INTO outlive_signal_consumers(consumer_id, signal_id, handler, handler_name, delivery, lifetime, scope, "
        "process, run_id, last_delivered, claim_run, created) VALUES (?, ?, ?, ?, ?, ?, ?, 'fuzz', ?, 0, NULL, 0)");
    sql.bind_text(statement, 1, CONSUMER_ID, -1, SQLITE_STATIC);
    sql.bind_text(statement, 2, signal_id, -1, SQLITE_STATIC);
    bind_blob(statement, 3, &input->fields[0]);
    bind_text(statement, 4, &input->fields[2], "fuzz_signal");
    sql.bind_int64(statement, 5, input->b % 4);
    sql.bind_int64(statement, 6, (input->b >> 2) % 5);
    if (input->kind & 0x40) bind_text(statement, 7, &input->fields[3], NULL);
    else sql.bind_null(statement, 7);
    sql.bind_text(statement, 8, outlive_store_run_id(store), -1, SQLITE_STATIC);
    finish(statement);
    announce("signal", signal_id);

    outlive_signal_consumer_list *consumers = NULL;
    check(outlive_signal_consumer_list_new(store, NULL, NULL, 0, &consumers));
    for (size_t i = 0; i < outlive_signal_consumer_list_count(consumers); i++) {
        (void)outlive_signal_consumer_list_id(consumers, i);
        (void)outlive_signal_consumer_list_signal_id(consumers, i);
        (void)outlive_signal_consumer_list_handler_name(consumers, i);
        (void)outlive_signal_consumer_list_scope(consumers, i);
        (void)outlive_signal_consumer_list_delivery(consumers, i);
        (void)outlive_signal_consumer_list_lifetime(consumers, i);
        (void)outlive_signal_consumer_list_delivering_run_id(consumers, i);
    }
    outlive_signal_consumer_list_free(consumers);
    outlive_signal_list *signals = NULL;
    check(outlive_signal_list_new(store, NULL, 0, &signals));
    for (size_t i = 0; i < outlive_signal_list_count(signals); i++) (void)outlive_signal_list_id(signals, i);
    outlive_signal_list_free(signals);
    uint64_t version = 0;
    size_t count = 0;
    bool terminated = false;
    check(outlive_signal_lookup(store, SIGNAL_ID, &version, &count, &terminated));
    dispatch(1);
    if (input->kind & 0x80) {
        outlive_args *payload = NULL;
        outlive_args_new(&payload);
        outlive_args_set_string(payload, "value", "posted");
        check(outlive_signal_post(store, SIGNAL_ID, payload, false));
        outlive_args_free(payload);
        dispatch(1);
    }
    check(outlive_signal_consumer_remove(store, CONSUMER_ID));
    run("DELETE FROM outlive_signal_consumers; DELETE FROM outlive_signals");
}

static void fuzz_message_record(const struct input *input) {
    sqlite3_stmt *statement = prepare(
        "INSERT INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload, "
        "response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled, choice, removed, "
        "presenter, presenter_run, requires_end, responding_run) VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM "
        "outlive_messages), ?, 'fuzz', ?, ?, ?, NULL, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?, 0, NULL, NULL, 0, NULL)");
    sql.bind_text(statement, 1, MESSAGE_ID, -1, SQLITE_STATIC);
    sql.bind_int64(statement, 2, (sqlite3_int64)now());
    bind_text(statement, 3, &input->fields[3], "title");
    if (input->kind & 0x10) bind_text(statement, 4, &input->fields[3], NULL);
    else sql.bind_null(statement, 4);
    if (input->kind & 0x20) bind_text(statement, 5, &input->fields[3], NULL);
    else sql.bind_null(statement, 5);
    if (input->fields[0].present) bind_blob(statement, 6, &input->fields[0]);
    else sql.bind_blob(statement, 6, "", 0, SQLITE_STATIC);
    bind_blob(statement, 7, &input->fields[1]);
    bind_blob(statement, 8, &input->fields[2]);
    sql.bind_int64(statement, 9, input->a & 1);
    if (input->kind & 0x40) bind_text(statement, 10, &input->fields[3], "");
    else sql.bind_text(statement, 10, "", 0, SQLITE_STATIC);
    sql.bind_int64(statement, 11, (input->a >> 1) & 1);
    sql.bind_int64(statement, 12, (input->a >> 2) & 1);
    if ((input->a >> 3) & 1) sql.bind_text(statement, 13, "yes", -1, SQLITE_STATIC);
    else sql.bind_null(statement, 13);
    finish(statement);
    run("INSERT INTO outlive_message_categories(category, count) VALUES ('fuzz', 1) "
        "ON CONFLICT(category) DO UPDATE SET count = (SELECT count(*) FROM outlive_messages WHERE category = 'fuzz')");
    announce("message", MESSAGE_ID);

    outlive_message *message = NULL;
    outlive_status status = outlive_message_get(store, MESSAGE_ID, &message);
    check(status);
    if (status == OUTLIVE_OK) {
        read_message(message);
        outlive_message_free(message);
    }
    outlive_message_list *list = NULL;
    size_t count = 0;
    status = outlive_message_list_new(store, NULL, NULL, NULL, 0, &list);
    check(status);
    outlive_message_list_free(list);
    check(outlive_messages_count(store, "fuzz", &count));
    dispatch(1);
    if (input->b & 1) check(outlive_message_respond(store, MESSAGE_ID, "yes"));
    if (input->b & 2) check(outlive_message_mute(store, MESSAGE_ID));
    dispatch(1);
    if (input->b & 4) check(outlive_message_remove(store, MESSAGE_ID));
    dispatch(1);
    run("DELETE FROM outlive_messages; UPDATE outlive_message_categories SET count = 0");
}

/* A hang is a failure: an input that keeps the library busy for 10 s aborts,
 * which libFuzzer reports with the stack and keeps as a crash artifact. */
static void hung(int signal) {
    (void)signal;
    static const char text[] = "fuzz_records: the library spent 10 s on one input (a hang)\n";
    if (write(2, text, sizeof text - 1) < 0) { /* aborting anyway */ }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int armed;
    if (!armed) {
        armed = 1;
        signal(SIGALRM, hung);
    }
    alarm(10);
    struct input input;
    parse(data, size, &input);
    /* FUZZ_RECORDS_KINDS (e.g. "12"): only those records (0 task, 1 signal,
     * 2 message), to explore the others past a known failure. */
    const char *kinds = getenv("FUZZ_RECORDS_KINDS");
    char kind = (char)('0' + input.kind % 3);
    if (kinds && !strchr(kinds, kind)) { alarm(0); return 0; }
    switch (input.kind % 3) {
    case 0: fuzz_task_record(&input); break;
    case 1: fuzz_signal_record(&input); break;
    default: fuzz_message_record(&input); break;
    }
    alarm(0);
    return 0;
}
