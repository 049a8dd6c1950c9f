/* The crash harness's workload: a random mix of store operations on every
 * system, killed with SIGKILL at a random moment by Tests/c/test_crash.c.
 * Each operation is announced on stdout (unbuffered, one write per line, so a
 * line is never torn) before it is made ("try ...") and confirmed after the
 * library acknowledged it ("ok" or "ok ID"), so that the checker knows what
 * must survive the kill and the one operation that may or may not have
 * happened. Operations:
 *   try set KEY VALUE    outlive_kv_set
 *   try del KEY          outlive_kv_delete (of a key that may be absent)
 *   try inc counter      outlive_kv_update adding one
 *   try task LABEL       outlive_task_add of crash_task(label)   → "ok TASK_ID"
 *                        (or of crash_task_completing, which ends its attempt
 *                        through its completion during the call)
 *                        (sometimes several in a row before a dispatch, so
 *                        that runs claim and end tasks in batches)
 *   try post             outlive_signal_post of SIGNAL_ID          → "ok"
 *   try msg              outlive_message_post with one choice      → "ok MESSAGE_ID"
 *   try consume          the process-lifetime consumer of SIGNAL_ID (once per store)
 * After each operation the driver dispatches its loop, where its own callbacks
 * run and report what they made durable (each line is written only after the
 * call that made it durable returned OUTLIVE_OK):
 *   batch N              (first) this run's completion batch, random in 1..32
 *   done LABEL           crash_task ran: kv "taskruns:LABEL" counts its runs
 *   seen WHICH VERSION   crash_signal delivered: kv "sigseen:WHICH" >= VERSION
 *   answered ID          the response handler ran: kv "answered:ID" is set
 * The presenter presents every message at once and answers it with "yes".
 * In every other run (odd seeds), GROUP_THREADS writer threads share the store handle,
 * so that kills land while a group of their calls is being committed (group
 * commit): thread N announces and confirms its own operations, each line
 * prefixed "gN ", on keys of its own ("gN/keyMM"):
 *   gN try set gN/keyMM VALUE   outlive_kv_set
 *   gN try del gN/keyMM         outlive_kv_delete (of a key that may be absent)
 *   gN try post                 outlive_signal_post of SIGNAL_ID   → "gN ok"
 *   gN try msg                  outlive_message_post               → "gN ok MESSAGE_ID"
 * Each run also registers a this-run consumer of SIGNAL_ID, which must go with
 * the run when it is killed.
 * Usage: crash_driver DIR SEED */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

#define SIGNAL_ID "5f0c6d3e-2a4b-4c1d-9e8f-0123456789ab"
#define GROUP_THREADS 4
#define GROUP_KEYS 10

static outlive_store *store;

static outlive_status increment(outlive_kv_value *value, void *context) {
    size_t size = 0;
    const char *bytes = outlive_kv_value_bytes(value, &size);
    char text[32] = {0};
    if (bytes) memcpy(text, bytes, size < 31 ? size : 31);
    long next = atol(text) + 1;
    *(long *)context = next;
    int length = snprintf(text, sizeof text, "%ld", next);
    return outlive_kv_value_set(value, text, (size_t)length);
}

/* Raises the stored number to at least *context. */
static outlive_status raise_to(outlive_kv_value *value, void *context) {
    size_t size = 0;
    const char *bytes = outlive_kv_value_bytes(value, &size);
    char text[32] = {0};
    if (bytes) memcpy(text, bytes, size < 31 ? size : 31);
    unsigned long long now = strtoull(text, NULL, 10), want = *(unsigned long long *)context;
    if (bytes && now >= want) return OUTLIVE_OK;
    int length = snprintf(text, sizeof text, "%llu", want);
    return outlive_kv_value_set(value, text, (size_t)length);
}

/* A task's side effect: kv "taskruns:LABEL" counts its runs. */
OUTLIVE_HANDLER(crash_task, OUTLIVE_ID(label)) {
    const char *text = outlive_object_string(label);
    char key[128];
    snprintf(key, sizeof key, "taskruns:%s", text ? text : "?");
    long runs = 0;
    if (outlive_kv_update(store, key, increment, &runs) == OUTLIVE_OK) printf("done %s\n", text ? text : "?");
}

/* The same side effect, the attempt ended by calling its completion during
 * the call (as every Python task handler does): such an attempt ends with its
 * batch, so a kill before the batch ends must rerun it like any other. */
OUTLIVE_HANDLER(crash_task_completing, OUTLIVE_ID(label), OUTLIVE_HANDLER_ARG(completion)) {
    const char *text = outlive_object_string(label);
    char key[128];
    snprintf(key, sizeof key, "taskruns:%s", text ? text : "?");
    long runs = 0;
    if (outlive_kv_update(store, key, increment, &runs) != OUTLIVE_OK) return;
    printf("done %s\n", text ? text : "?");
    outlive_args *outcome = NULL;
    if (outlive_args_new(&outcome) != OUTLIVE_OK) return;
    if (outlive_args_set_bool(outcome, "success", true) == OUTLIVE_OK) outlive_handler_call(completion, outcome);
    outlive_args_free(outcome);
}

/* A signal delivery: kv "sigseen:WHICH" raised to the version. */
OUTLIVE_HANDLER(crash_signal, OUTLIVE_ID(which), OUTLIVE_UINTEGER(version)) {
    const char *text = outlive_object_string(which);
    char key[64];
    snprintf(key, sizeof key, "sigseen:%s", text ? text : "?");
    unsigned long long want = version;
    if (outlive_kv_update(store, key, raise_to, &want) == OUTLIVE_OK) printf("seen %s %llu\n", text ? text : "?", want);
}

static int32_t priority(const outlive_message *message, void *context) {
    (void)message;
    (void)context;
    return OUTLIVE_PRIORITY_DEFAULT;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)message;
    (void)context;
    outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, false, "yes");
}

static bool respond(const outlive_message *message, void *context) {
    (void)context;
    char key[64];
    snprintf(key, sizeof key, "answered:%s", outlive_message_id(message));
    if (outlive_kv_set(store, key, "1", 1) != OUTLIVE_OK) return false;
    printf("answered %s\n", outlive_message_id(message));
    return true;
}

static outlive_status consume(const char *which, outlive_lifetime lifetime) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "which", which);
    outlive_handler *handler = NULL;
    outlive_handler_new("crash_signal", NULL, bound, &handler);
    outlive_args_free(bound);
    outlive_status status = outlive_signal_consume(store, SIGNAL_ID, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED, lifetime, NULL, NULL);
    outlive_handler_free(handler);
    return status;
}

/* Whether the process-lifetime consumer is registered (by an earlier run). */
static int has_process_consumer(void) {
    outlive_signal_consumer_list *list = NULL;
    if (outlive_signal_consumer_list_new(store, SIGNAL_ID, NULL, 0, &list) != OUTLIVE_OK) return 0;
    int found = 0;
    for (size_t i = 0; i < outlive_signal_consumer_list_count(list); i++)
        if (outlive_signal_consumer_list_lifetime(list, i) == OUTLIVE_LIFETIME_PROCESS) found = 1;
    outlive_signal_consumer_list_free(list);
    return found;
}

static int fail(const char *what) {
    fprintf(stderr, "crash_driver: %s: %s\n", what, outlive_last_error());
    return 1;
}

static int seed;

/* One writer thread: grouped operations (kv set and delete, signal post,
 * message post) on keys of its own, announced and confirmed with its prefix. */
static void *group_writer(void *argument) {
    int thread = (int)(intptr_t)argument;
    unsigned state = (unsigned)seed * 31u + (unsigned)thread;
    for (long op = 0;; op++) {
        /* A pause between operations, so that the main thread's writes (which
         * wait for the handle's connection like every write, and may lose it
         * to the threads again and again) keep a share. */
        usleep((useconds_t)(rand_r(&state) % 3000));
        char key[32], value[64];
        snprintf(key, sizeof key, "g%d/key%02d", thread, rand_r(&state) % GROUP_KEYS);
        /* Posts and messages rarely: each makes work for the main thread's loop. */
        int choice = rand_r(&state) % 40;
        outlive_status status;
        if (choice < 28) {
            int length = snprintf(value, sizeof value, "g%d-%ld-%d", thread, op, rand_r(&state));
            printf("g%d try set %s %s\n", thread, key, value);
            status = outlive_kv_set(store, key, value, (size_t)length);
            if (status != OUTLIVE_OK) break;
            printf("g%d ok\n", thread);
        } else if (choice < 38) {
            printf("g%d try del %s\n", thread, key);
            status = outlive_kv_delete(store, key);
            if (status != OUTLIVE_OK && status != OUTLIVE_E_NOT_FOUND) break;
            printf("g%d ok\n", thread);
        } else if (choice < 39) {
            printf("g%d try post\n", thread);
            status = outlive_signal_post(store, SIGNAL_ID, NULL, false);
            if (status != OUTLIVE_OK) break;
            printf("g%d ok\n", thread);
        } else {
            char id[OUTLIVE_ID_SIZE];
            outlive_message_draft *draft = NULL;
            outlive_message_draft_new("crash", "a message", &draft);
            outlive_message_draft_add_choice(draft, "yes", "Yes", OUTLIVE_CHOICE_DEFAULT);
            printf("g%d try msg\n", thread);
            status = outlive_message_post(store, draft, id);
            outlive_message_draft_free(draft);
            if (status != OUTLIVE_OK) break;
            printf("g%d ok %s\n", thread, id);
        }
    }
    fail("writer thread");
    _exit(1);
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    seed = atoi(argv[2]);
    srand((unsigned)seed);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_FULL;
    if (outlive_store_open(argv[1], "driver", NULL, &options, &store) != OUTLIVE_OK) return fail("open");
    outlive_loop *loop = outlive_store_loop(store);
    if (outlive_tasks_set_triggers(store, 1, 0) != OUTLIVE_OK) return fail("triggers");
    int batch = 1 + rand() % 32;
    if (outlive_tasks_set_completion_batch(store, (size_t)batch) != OUTLIVE_OK) return fail("completion batch");
    printf("batch %d\n", batch);
    outlive_presenter presenter = {OUTLIVE_PRESENTER_VERSION, priority, present, NULL};
    if (outlive_presenter_add(store, "crash", &presenter, NULL, NULL) != OUTLIVE_OK) return fail("presenter");
    if (outlive_response_handler_add(store, "crash", respond, NULL, NULL) != OUTLIVE_OK) return fail("response handler");
    if (!has_process_consumer()) {
        printf("try consume\n");
        if (consume("process", OUTLIVE_LIFETIME_PROCESS) != OUTLIVE_OK) return fail("consume");
        printf("ok\n");
    }
    if (consume("run", OUTLIVE_LIFETIME_THIS_RUN) != OUTLIVE_OK) return fail("consume this run");
    /* Every other run only, so that the main thread's workload keeps its pace in the others. */
    for (int thread = 0; seed % 2 && thread < GROUP_THREADS; thread++) {
        pthread_t id;
        if (pthread_create(&id, NULL, group_writer, (void *)(intptr_t)thread) != 0) return fail("writer thread start");
        pthread_detach(id);
    }
    for (long op = 0;; op++) {
        char key[32], value[64];
        snprintf(key, sizeof key, "key%02d", rand() % 50);
        int choice = rand() % 20;
        if (choice < 8) {
            int length = snprintf(value, sizeof value, "v%ld-%d", op, rand());
            printf("try set %s %s\n", key, value);
            if (outlive_kv_set(store, key, value, (size_t)length) != OUTLIVE_OK) return fail("set");
            printf("ok\n");
        } else if (choice < 10) {
            printf("try del %s\n", key);
            outlive_status status = outlive_kv_delete(store, key);
            if (status != OUTLIVE_OK && status != OUTLIVE_E_NOT_FOUND) return fail("delete");
            printf("ok\n");
        } else if (choice < 12) {
            long now = 0;
            printf("try inc counter\n");
            if (outlive_kv_update(store, "counter", increment, &now) != OUTLIVE_OK) return fail("update");
            printf("ok\n");
        } else if (choice < 15) {
            /* One task, or a burst of up to 40 that the next run takes in batches. */
            int count = rand() % 4 == 0 ? 1 + rand() % 40 : 1;
            for (int i = 0; i < count; i++) {
                char label[48], id[OUTLIVE_ID_SIZE];
                snprintf(label, sizeof label, "%d-%ld-%d", seed, op, i);
                outlive_args *bound = NULL;
                outlive_args_new(&bound);
                outlive_args_set_string(bound, "label", label);
                outlive_handler *work = NULL;
                outlive_handler_new(i % 2 ? "crash_task_completing" : "crash_task", NULL, bound, &work);
                outlive_args_free(bound);
                printf("try task %s\n", label);
                outlive_status status = outlive_task_add(store, work, NULL, NULL, 0, id);
                outlive_handler_free(work);
                if (status != OUTLIVE_OK) return fail("task add");
                printf("ok %s\n", id);
            }
        } else if (choice < 18) {
            printf("try post\n");
            if (outlive_signal_post(store, SIGNAL_ID, NULL, false) != OUTLIVE_OK) return fail("post");
            printf("ok\n");
        } else {
            char id[OUTLIVE_ID_SIZE];
            outlive_message_draft *draft = NULL;
            outlive_message_draft_new("crash", "a message", &draft);
            outlive_message_draft_add_choice(draft, "yes", "Yes", OUTLIVE_CHOICE_DEFAULT);
            printf("try msg\n");
            outlive_status status = outlive_message_post(store, draft, id);
            outlive_message_draft_free(draft);
            if (status != OUTLIVE_OK) return fail("message post");
            printf("ok %s\n", id);
        }
        outlive_status status = outlive_loop_dispatch(loop, 0);
        if (status != OUTLIVE_OK) return fail("dispatch");
    }
}
