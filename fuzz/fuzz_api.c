/* libFuzzer target: the C entry points of every section with hostile
 * arguments. The input is a program: each operation byte picks a function, and
 * its arguments are decoded from the bytes that follow — strings that are NULL,
 * empty, not UTF-8, cut by a NUL or longer than every limit; ids that are
 * malformed or well-formed but unknown; sizes and counts past the limits (with
 * buffers that are small: the limit must be checked before anything is read);
 * enums out of range; NaN and infinite doubles; NULL handles and out-pointers.
 * Every call must return a status in range, with a message when it fails, and
 * a failing call must change nothing (output buffers keep their sentinel, the
 * counts stay). One store, opened once per process; what succeeds is removed
 * again so that the store stays small. Handles are never dangling: a "wrong"
 * handle is NULL, or a handler/args of another kind where the type allows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

static outlive_store *store;
static char directory[64];

static void quiet(outlive_log_level level, const char *message, void *context) {
    (void)level; (void)message; (void)context;
}

static void fuzz_api_target(const outlive_object *text, int32_t number) {
    (void)outlive_object_string(text);
    (void)number;
}

static int32_t priority(const outlive_message *message, void *context) {
    (void)message; (void)context;
    return 0;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)message; (void)context;
    outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_NOT_PRESENTED, false, NULL);
}

static bool respond(const outlive_message *message, void *context) {
    (void)message; (void)context;
    return false;
}

static bool resolve(const outlive_message *message, char choice_out[64], void *context) {
    (void)message; (void)context;
    choice_out[0] = '\0';
    return false;
}

static void observer(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
}

/* No per-input leak scans: the library keeps process-wide caches (handler
 * registry, Swift metadata) that make libFuzzer scan the whole heap after most
 * inputs, which costs more than the inputs themselves. Leaks are checked by
 * valgrind over the C suites; AddressSanitizer still checks every access. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    outlive_log_set_handler(quiet, OUTLIVE_LOG_ERROR, NULL, NULL);
    snprintf(directory, sizeof directory, "/tmp/outlive-fuzz-api-XXXXXX");
    if (!mkdtemp(directory)) abort();
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    if (outlive_store_open(directory, "fuzz", NULL, &options, &store) != OUTLIVE_OK) abort();
    outlive_tasks_set_triggers(store, 0, 1e6);
    if (outlive_handler_register("fuzz_api_target", "ID? text, INT number", (void (*)(void))fuzz_api_target) != OUTLIVE_OK) abort();
    return 0;
}

/* ── decoding the input ── */

struct reader { const uint8_t *data; size_t size, at; };

static uint8_t byte(struct reader *r) { return r->at < r->size ? r->data[r->at++] : 0; }

static uint64_t number(struct reader *r) {
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) value = (value << 8) | byte(r);
    return value;
}

#define LONG_SIZE 70000
static char long_text[LONG_SIZE + 1];

/* A string: NULL, a long one past every limit, or up to 253 raw bytes (NUL
 * cut). Each call returns its own buffer of a small ring. */
static const char *string(struct reader *r) {
    static char ring[8][256];
    static int next;
    uint8_t length = byte(r);
    if (length == 255) return NULL;
    if (length == 254) {
        if (!long_text[0]) memset(long_text, 'a', LONG_SIZE);
        return long_text;
    }
    char *out = ring[next++ % 8];
    size_t n = 0;
    while (n < length && r->at < r->size) out[n++] = (char)r->data[r->at++];
    out[n] = '\0';
    return out;
}

/* An id: a string, or a well-formed UUID that names nothing (its digits from
 * the input), or one of the ids this program made. */
static char made_ids[4][OUTLIVE_ID_SIZE];

static const char *identifier(struct reader *r) {
    static char ring[4][OUTLIVE_ID_SIZE];
    static int next;
    uint8_t kind = byte(r);
    if (kind < 128) return string(r);
    if (kind < 192) {
        char *out = ring[next++ % 4];
        static const char hex[] = "0123456789abcdefABCDEF";
        for (int i = 0; i < 36; i++) out[i] = (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : hex[byte(r) % 22];
        out[36] = '\0';
        return out;
    }
    return made_ids[kind % 4];
}

static size_t size_value(struct reader *r, size_t actual, size_t limit) {
    switch (byte(r) % 4) {
    case 0: return actual;
    case 1: return limit + 1;
    case 2: return SIZE_MAX;
    default: return limit;  /* only used where `limit` bytes exist or the size is checked first */
    }
}

static double double_value(struct reader *r) {
    switch (byte(r) % 6) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -1;
    case 3: return 1e300;
    case 4: return 0;
    default: return (double)(byte(r));
    }
}

/* ── checks ── */

static void check(outlive_status status) {
    if ((int)status < OUTLIVE_OK || status > OUTLIVE_E_NO_MEMORY) abort();
    if (status != OUTLIVE_OK) {
        const char *message = outlive_last_error();
        if (!message || !message[0]) abort();
    }
    if (strcmp(outlive_status_name(status), "OUTLIVE_E_UNKNOWN") == 0) abort();
}

static size_t pending_tasks(void) {
    size_t count = 0;
    if (outlive_tasks_count(store, &count) != OUTLIVE_OK) abort();
    return count;
}

static size_t stored_messages(void) {
    size_t count = 0;
    if (outlive_messages_count(store, NULL, &count) != OUTLIVE_OK) abort();
    return count;
}

#define SENTINEL 0x5A

static void untouched(const char *buffer, size_t size) {
    for (size_t i = 0; i < size; i++)
        if ((unsigned char)buffer[i] != SENTINEL) abort();
}

/* ── the operations ── */

static outlive_args *make_args(struct reader *r) {
    if (byte(r) % 4 == 0) return NULL;
    outlive_args *args = NULL;
    outlive_args_new(&args);
    int count = byte(r) % 4;
    for (int i = 0; i < count; i++) {
        const char *name = string(r);
        switch (byte(r) % 6) {
        case 0: check(outlive_args_set_string(args, name, string(r))); break;
        case 1: check(outlive_args_set_int(args, name, (int32_t)number(r))); break;
        case 2: check(outlive_args_set_double(args, name, double_value(r))); break;
        case 3: {
            const char *tag = string(r);
            const char *bytes = string(r);
            size_t actual = bytes ? strlen(bytes) : 0;
            check(outlive_args_set_id(args, name, tag, bytes, size_value(r, actual, OUTLIVE_MAX_ID_SIZE) == actual ? actual
                                      : (byte(r) & 1 ? (size_t)OUTLIVE_MAX_ID_SIZE + 1 : SIZE_MAX)));
            break;
        }
        case 4: check(outlive_args_set_bool(args, name, byte(r) & 1)); break;
        default: check(outlive_args_set_uinteger(args, name, number(r))); break;
        }
    }
    return args;
}

static outlive_handler *make_handler(struct reader *r) {
    outlive_args *bound = make_args(r);
    const char *name = byte(r) & 1 ? "fuzz_api_target" : string(r);
    outlive_handler *handler = NULL;
    if (outlive_handler_new(name, byte(r) & 1 ? string(r) : NULL, bound, &handler) != OUTLIVE_OK &&
        (handler || !outlive_last_error()[0]))
        abort();
    outlive_args_free(bound);
    return handler;
}

static void op_args(struct reader *r) {
    outlive_args *args = make_args(r);
    const char *name = string(r);
    const outlive_object *object = NULL;
    const char *text = NULL;
    int32_t value = 0;
    switch (byte(r) % 5) {
    case 0: check(outlive_args_get_id(args, name, byte(r) & 1 ? &object : NULL)); break;
    case 1: check(outlive_args_get_string(args, name, &text)); break;
    case 2: check(outlive_args_get_int(args, name, &value)); break;
    case 3: check(outlive_args_remove(args, name)); break;
    default:
        for (size_t i = 0; i <= outlive_args_count(args); i++) {
            (void)outlive_args_name_at(args, i);
            (void)outlive_args_type_at(args, i);
        }
        break;
    }
    if (object) {
        (void)outlive_object_bytes(object, NULL);
        (void)outlive_object_type(object);
        (void)outlive_object_string(object);
    }
    outlive_args *copy = NULL;
    outlive_args_copy(args, &copy);
    outlive_args_free(copy);
    outlive_args_free(args);
}

static void op_handler(struct reader *r) {
    outlive_handler *handler = make_handler(r);
    outlive_args *args = make_args(r);
    switch (byte(r) % 6) {
    case 0: check(outlive_handler_call(handler, args)); break;
    case 1: check(outlive_handler_bind(handler, args)); break;
    case 2: check(outlive_handler_invalidate(handler, args)); break;
    case 3: {
        void *bytes = NULL;
        size_t size = 0;
        outlive_status status = outlive_handler_serialize(handler, byte(r) & 1 ? &bytes : NULL, &size);
        check(status);
        if (status == OUTLIVE_OK) {
            outlive_handler *back = NULL;
            if (outlive_handler_deserialize(bytes, size, &back) != OUTLIVE_OK) abort();
            outlive_handler_free(back);
            outlive_free(bytes);
        }
        break;
    }
    case 4: check(outlive_handler_resolve(string(r))); break;
    default: {
        outlive_args *bound = NULL;
        outlive_status status = outlive_handler_bound(handler, &bound);
        check(status);
        outlive_args_free(bound);
        (void)outlive_handler_description(handler);
        (void)outlive_handler_name(handler);
        (void)outlive_handler_invalidation_name(handler);
        (void)outlive_handler_is_invalidated(handler);
        break;
    }
    }
    outlive_handler *copy = NULL;
    outlive_handler_copy(handler, &copy);
    outlive_handler_free(copy);
    outlive_args_free(args);
    outlive_handler_free(handler);
}

static void op_register(struct reader *r) {
    const char *name = string(r);
    const char *signature = string(r);
    outlive_status status = outlive_handler_register(name, signature, byte(r) & 1 ? (void (*)(void))fuzz_api_target : NULL);
    check(status);
    if (status == OUTLIVE_OK) {
        if (!name || strcmp(name, "fuzz_api_target") != 0) check(outlive_handler_unregister(name));
        else outlive_handler_register("fuzz_api_target", "ID? text, INT number", (void (*)(void))fuzz_api_target);
    } else {
        check(outlive_handler_unregister(string(r)));
    }
}

static void op_kv(struct reader *r) {
    const char *key = string(r);
    const char *value = string(r);
    size_t actual = value ? strlen(value) : 0;
    switch (byte(r) % 5) {
    case 0: {
        size_t size = byte(r) & 1 ? actual : (byte(r) & 1 ? (size_t)OUTLIVE_KV_MAX_VALUE_SIZE + 1 : SIZE_MAX);
        outlive_status status = outlive_kv_set(store, key, value, size);
        check(status);
        if (status == OUTLIVE_OK) check(outlive_kv_delete(store, key));
        break;
    }
    case 1: {
        void *bytes = NULL;
        size_t size = 0;
        outlive_status status = outlive_kv_get(store, key, byte(r) & 1 ? &bytes : NULL, &size);
        check(status);
        if (status == OUTLIVE_OK) outlive_free(bytes);
        break;
    }
    case 2: {
        outlive_kv_key_list *keys = NULL;
        outlive_status status = outlive_kv_key_list_new(store, key, value, byte(r), &keys);
        check(status);
        outlive_kv_key_list_free(keys);
        break;
    }
    case 3: {
        uint64_t token = 0;
        outlive_status status = outlive_kv_observe(store, key, byte(r) & 1 ? observer : NULL, NULL, NULL, &token);
        check(status);
        if (status == OUTLIVE_OK) check(outlive_kv_unobserve(store, token));
        else check(outlive_kv_unobserve(store, number(r)));
        break;
    }
    default: {
        size_t count = 0;
        check(outlive_kv_count(store, key, byte(r) & 1 ? &count : NULL));
        break;
    }
    }
}

static void op_tasks(struct reader *r) {
    switch (byte(r) % 7) {
    case 0: {
        outlive_handler *work = make_handler(r);
        const char *members[3] = {string(r), string(r), string(r)};
        size_t count = byte(r) % 4;
        if (byte(r) % 8 == 0) count = OUTLIVE_TASK_MAX_GROUP_MEMBERS + 1;  /* past the limit: checked before reading */
        char id[OUTLIVE_ID_SIZE];
        memset(id, SENTINEL, sizeof id);
        size_t before = pending_tasks();
        outlive_status status = outlive_task_add(store, work, string(r), byte(r) & 1 ? members : NULL, count, id);
        check(status);
        if (status == OUTLIVE_OK) {
            if (strlen(id) != 36) abort();
            snprintf(made_ids[0], OUTLIVE_ID_SIZE, "%s", id);
            check(outlive_task_delete(store, id));
        } else {
            untouched(id, sizeof id);
            if (pending_tasks() != before) abort();
        }
        outlive_handler_free(work);
        break;
    }
    case 1: {
        outlive_task_spec specs[2] = {{OUTLIVE_TASK_SPEC_VERSION, make_handler(r), string(r), NULL, 0}, {OUTLIVE_TASK_SPEC_VERSION, NULL, NULL, NULL, 0}};
        size_t count = byte(r) % 3;
        if (byte(r) % 8 == 0) count = OUTLIVE_TASK_MAX_BATCH + 1;
        if (count == 2) specs[1].work = specs[0].work;
        char ids[2 * OUTLIVE_ID_SIZE];
        memset(ids, SENTINEL, sizeof ids);
        size_t before = pending_tasks();
        outlive_status status = outlive_tasks_add_batch(store, specs, count, ids);
        check(status);
        if (status == OUTLIVE_OK) {
            for (size_t i = 0; i < count; i++) check(outlive_task_delete(store, ids + i * OUTLIVE_ID_SIZE));
        } else {
            untouched(ids, sizeof ids);
            if (pending_tasks() != before) abort();
        }
        outlive_handler_free((outlive_handler *)specs[0].work);
        break;
    }
    case 2: {
        outlive_task_list *tasks = NULL;
        size_t limit = byte(r) & 1 ? byte(r) : (byte(r) & 1 ? 100001 : SIZE_MAX);
        outlive_status status = outlive_task_list_new(store, identifier(r), limit, &tasks);
        check(status);
        if (status == OUTLIVE_OK && outlive_task_list_count(tasks) > limit) abort();
        outlive_task_list_free(tasks);
        break;
    }
    case 3: check(byte(r) & 1 ? outlive_task_retry(store, identifier(r)) : outlive_task_delete(store, identifier(r))); break;
    case 4: check(outlive_tasks_set_triggers(store, byte(r), double_value(r))); outlive_tasks_set_triggers(store, 0, 1e6); break;
    case 5: {
        outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
        policy.version = byte(r) % 4 == 0 ? byte(r) : OUTLIVE_TASK_POLICY_VERSION;
        policy.initial_backoff = double_value(r);
        policy.max_backoff = double_value(r);
        policy.max_attempts = (uint32_t)number(r);
        policy.timeout = double_value(r);
        policy.max_age = double_value(r);
        check(outlive_tasks_set_policy(store, byte(r) & 1 ? &policy : NULL));
        break;
    }
    default: check(outlive_tasks_set_concurrency(store, byte(r) & 1 ? byte(r) : (size_t)number(r))); break;
    }
}

static void op_signals(struct reader *r) {
    switch (byte(r) % 6) {
    case 0: {
        outlive_handler *handler = make_handler(r);
        char consumer[OUTLIVE_ID_SIZE];
        memset(consumer, SENTINEL, sizeof consumer);
        const char *signal = identifier(r);
        outlive_status status = outlive_signal_consume(store, signal, handler, (outlive_delivery)(byte(r) % 4),
                                                               (outlive_lifetime)(byte(r) % 5), string(r), consumer);
        check(status);
        if (status == OUTLIVE_OK) check(outlive_signal_consumer_remove(store, consumer));
        else untouched(consumer, sizeof consumer);
        outlive_handler_free(handler);
        break;
    }
    case 1: {
        outlive_args *payload = make_args(r);
        check(outlive_signal_post(store, identifier(r), payload, byte(r) & 1));
        outlive_args_free(payload);
        break;
    }
    case 2: check(outlive_signal_consumer_remove(store, identifier(r))); break;
    case 3: {
        size_t removed = 0;
        check(outlive_signal_consumers_remove_scope(store, string(r), byte(r) & 1 ? &removed : NULL));
        break;
    }
    case 4: {
        uint64_t version = 0;
        size_t count = 0;
        bool terminated = false;
        check(outlive_signal_lookup(store, identifier(r), &version, &count, &terminated));
        break;
    }
    default: {
        outlive_signal_list *list = NULL;
        outlive_status status = outlive_signal_list_new(store, identifier(r), byte(r), &list);
        check(status);
        for (size_t i = 0; i <= outlive_signal_list_count(list); i++) (void)outlive_signal_list_id(list, i);
        outlive_signal_list_free(list);
        outlive_signal_consumer_list *consumers = NULL;
        status = outlive_signal_consumer_list_new(store, identifier(r), NULL, 0, &consumers);
        check(status);
        for (size_t i = 0; i <= outlive_signal_consumer_list_count(consumers); i++) {
            (void)outlive_signal_consumer_list_scope(consumers, i);
            (void)outlive_signal_consumer_list_lifetime(consumers, i);
        }
        outlive_signal_consumer_list_free(consumers);
        break;
    }
    }
}

static void op_messages(struct reader *r) {
    switch (byte(r) % 7) {
    case 0: {
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new(string(r), string(r), &draft);
        if (!draft && !outlive_last_error()[0]) abort();
        int steps = byte(r) % 6;
        for (int i = 0; i < steps; i++) {
            switch (byte(r) % 7) {
            case 0: check(outlive_message_draft_set_text(draft, string(r))); break;
            case 1: check(outlive_message_draft_set_scope(draft, string(r))); break;
            case 2: check(outlive_message_draft_set_thread(draft, string(r))); break;
            case 3: check(outlive_message_draft_add_choice(draft, string(r), string(r), (outlive_choice_kind)(byte(r) % 6))); break;
            case 4: {
                outlive_args *payload = make_args(r);
                check(outlive_message_draft_set_payload(draft, payload));
                outlive_args_free(payload);
                break;
            }
            case 5: {
                outlive_handler *handler = make_handler(r);
                check(outlive_message_draft_set_response_handler(draft, handler));
                outlive_handler_free(handler);
                break;
            }
            default: check(outlive_message_draft_set_auto_remove(draft, byte(r) & 1)); break;
            }
        }
        char id[OUTLIVE_ID_SIZE];
        memset(id, SENTINEL, sizeof id);
        size_t before = stored_messages();
        outlive_status status = outlive_message_post(store, draft, id);
        check(status);
        if (status == OUTLIVE_OK) {
            snprintf(made_ids[1], OUTLIVE_ID_SIZE, "%s", id);
            outlive_message *message = NULL;
            if (outlive_message_get(store, id, &message) != OUTLIVE_OK) abort();
            for (size_t i = 0; i <= outlive_message_choice_count(message); i++)
                check(outlive_message_choice_at(message, i, NULL, NULL, NULL) == OUTLIVE_OK ? OUTLIVE_OK : OUTLIVE_E_INVALID_ARGUMENT);
            outlive_message_free(message);
            check(outlive_message_remove(store, id));
        } else {
            untouched(id, sizeof id);
            if (stored_messages() != before) abort();
        }
        outlive_message_draft_free(draft);
        break;
    }
    case 1: check(outlive_message_respond(store, identifier(r), string(r))); break;
    case 2: check(byte(r) & 1 ? outlive_message_mute(store, identifier(r)) : outlive_message_remove(store, identifier(r))); break;
    case 3: {
        outlive_message_list *list = NULL;
        outlive_status status = outlive_message_list_new(store, string(r), string(r), identifier(r), byte(r), &list);
        check(status);
        outlive_message_list_free(list);
        size_t removed = 0;
        check(outlive_messages_remove_scope(store, string(r), &removed));
        break;
    }
    case 4: {
        outlive_message *message = NULL;
        outlive_status status = outlive_message_get(store, identifier(r), &message);
        check(status);
        outlive_message_free(message);
        break;
    }
    case 5: {
        outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, byte(r) & 1 ? priority : NULL, byte(r) & 1 ? present : NULL, NULL};
        const char *id = string(r);
        outlive_status status = outlive_presenter_add(store, id, byte(r) & 1 ? &callbacks : NULL, NULL, NULL);
        check(status);
        if (status == OUTLIVE_OK) check(outlive_presenter_remove(store, id));
        else check(outlive_presenter_reoffer(store, id));
        break;
    }
    default: {
        const char *id = string(r);
        outlive_status status = byte(r) & 1 ? outlive_response_handler_add(store, id, byte(r) & 1 ? respond : NULL, NULL, NULL)
                                            : outlive_auto_resolver_add(store, id, byte(r) & 1 ? resolve : NULL, NULL, NULL);
        check(status);
        if (status == OUTLIVE_OK) {
            outlive_status removed = outlive_response_handler_remove(store, id);
            if (removed != OUTLIVE_OK) check(outlive_auto_resolver_remove(store, id));
        }
        check(outlive_messages_set_category_limit(store, byte(r) & 1 ? 0 : OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT));
        break;
    }
    }
}

static void op_store(struct reader *r) {
    switch (byte(r) % 4) {
    case 0: {
        /* Another handle on the same directory, with a hostile name and options. */
        outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
        options.version = byte(r) % 4 == 0 ? byte(r) : OUTLIVE_STORE_OPTIONS_VERSION;
        options.durability = (outlive_durability)(byte(r) % 4);
        options.busy_timeout_ms = byte(r) & 1 ? -1 : 100;
        /* Hostile paths, but none that could create a directory anywhere else:
         * NULL, empty, a missing parent, a file, the database file itself. */
        char database[128];
        snprintf(database, sizeof database, "%s/outlive.db", directory);
        const char *paths[] = {directory, NULL, "", "/nonexistent-outlive/x", "/proc/self/status", database, NULL, ""};
        outlive_store *other = NULL;
        outlive_status status = outlive_store_open(paths[byte(r) % 8], string(r), NULL,
                                                                byte(r) & 1 ? &options : NULL, &other);
        check(status);
        outlive_store_close(other);
        break;
    }
    case 1: {
        outlive_loop *loop = NULL;
        check(outlive_loop_dispatch(NULL, 0));
        check(outlive_loop_new(NULL));
        if (outlive_loop_new(&loop) == OUTLIVE_OK) outlive_loop_free(loop);
        (void)outlive_loop_fd(NULL);
        check(outlive_loop_dispatch(outlive_store_loop(store), 0));
        break;
    }
    case 2:
        (void)outlive_status_name((outlive_status)(int)number(r));
        (void)outlive_store_run_id(NULL);
        (void)outlive_store_process_name(NULL);
        (void)outlive_store_loop(NULL);
        break;
    default: {
        /* Every store function with a NULL store. */
        size_t count = 0;
        check(outlive_kv_set(NULL, "k", "v", 1));
        check(outlive_tasks_count(NULL, &count));
        check(outlive_signal_post(NULL, made_ids[2], NULL, false));
        check(outlive_messages_count(NULL, NULL, &count));
        check(outlive_tasks_run_now(NULL));
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct reader r = {data, size, 0};
    for (int operations = 0; operations < 16 && r.at < r.size; operations++) {
        switch (byte(&r) % 9) {
        case 0: op_args(&r); break;
        case 1: op_handler(&r); break;
        case 2: op_register(&r); break;
        case 3: op_kv(&r); break;
        case 4: op_tasks(&r); break;
        case 5: op_signals(&r); break;
        case 6: op_messages(&r); break;
        case 7: op_store(&r); break;
        default: outlive_loop_dispatch(outlive_store_loop(store), 0); break;
        }
    }
    return 0;
}
