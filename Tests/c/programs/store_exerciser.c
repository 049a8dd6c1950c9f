/* A process for the untrusted-store generator (Tests/api/test_untrusted_store.py).
 *   store_exerciser populate DIR   fills a store with rows in every table, then
 *                                  dies by SIGKILL inside its work, so that its
 *                                  run, watchers, claims, runner and locks stay
 *                                  stored as a dead run leaves them.
 *   store_exerciser exercise DIR   opens the (mutated) store and calls every
 *                                  entry point that reads or consumes stored
 *                                  data, printing "<call> <status name>" per
 *                                  call; exits 0 whatever the statuses.
 * What the generator checks is outside: no death by a signal, no hang, every
 * status a documented one, no key iteration without end, no file touched
 * outside the store. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

OUTLIVE_HANDLER(exerciser_task, OUTLIVE_ID(task_id)) { (void)task_id; }

/* Never completes: its attempt stays running in the dead populating run. */
OUTLIVE_HANDLER(exerciser_slow, OUTLIVE_HANDLER_ARG(completion)) { (void)completion; }

OUTLIVE_HANDLER(exerciser_signal, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version)) { (void)signal_id; (void)version; }

static int interactions_started;
/* Never finishes: the populating run dies holding the queue's claim. */
OUTLIVE_HANDLER(exerciser_interaction, OUTLIVE_ID(interaction_id), OUTLIVE_HANDLER_ARG(finish)) {
    (void)interaction_id; (void)finish;
    interactions_started++;
}

static int presented;
static int32_t presenter_priority(const outlive_message *message, void *context) {
    (void)message; (void)context;
    return OUTLIVE_PRIORITY_DEFAULT;
}
/* Keeps the token: the message stays locked by the (then dead) run. */
static void presenter_present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)presentation; (void)context;
    presented++;
    /* Reads every field of the view, as an application's presenter does. */
    (void)outlive_message_id(message); (void)outlive_message_title(message); (void)outlive_message_text(message);
    (void)outlive_message_payload(message);
}

static void observed(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
}

static outlive_status append_byte(outlive_kv_value *value, void *context) {
    (void)context;
    size_t size = 0;
    const void *old = outlive_kv_value_bytes(value, &size);
    char bytes[8] = "+";
    if (old && size > 0) memcpy(bytes, old, size < 7 ? size : 7);
    return outlive_kv_value_set(value, bytes, size < 7 ? size + 1 : 8);
}

static void report(const char *call, outlive_status status) {
    printf("%s %s\n", call, outlive_status_name(status));
}

static void spin(outlive_loop *loop, int rounds) {
    for (int i = 0; i < rounds; i++) outlive_loop_dispatch(loop, 0);
}

static int fail(const char *what) {
    fprintf(stderr, "store_exerciser: %s: %s\n", what, outlive_last_error());
    return 1;
}

static int populate(const char *directory) {
    outlive_store *store = NULL;
    if (outlive_store_open(directory, "seed", NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_loop *loop = outlive_store_loop(store);
    uint64_t token = 0;
    if (outlive_kv_observe(store, "", observed, NULL, &token) != OUTLIVE_OK) return fail("observe");
    if (outlive_kv_set(store, "config/name", "dana", 4) != OUTLIVE_OK) return fail("kv");
    if (outlive_kv_set(store, "config/blob", "\0\1", 2) != OUTLIVE_OK) return fail("kv");
    if (outlive_kv_set(store, "other", "x", 1) != OUTLIVE_OK) return fail("kv");

    outlive_handler *slow = outlive_handler_new("exerciser_slow", NULL);
    outlive_handler *task = outlive_handler_new("exerciser_task", NULL);
    const char *members[] = {"g1"};
    if (outlive_task_add(store, slow, NULL, NULL, 0, NULL) != OUTLIVE_OK) return fail("task");
    if (outlive_task_add(store, task, "g1", NULL, 0, NULL) != OUTLIVE_OK) return fail("task");
    if (outlive_task_add(store, task, NULL, members, 1, NULL) != OUTLIVE_OK) return fail("task");

    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *receive = outlive_handler_new("exerciser_signal", NULL);
    if (outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVER_UNTIL_TERMINATED, OUTLIVE_LIFETIME_ANY_PROCESS, "scope1") != OUTLIVE_OK)
        return fail("consume");
    if (outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVER_ONCE, OUTLIVE_LIFETIME_THIS_RUN, NULL) != OUTLIVE_OK)
        return fail("consume");
    outlive_args *payload = outlive_args_new();
    outlive_args_set_string(payload, "note", "hello");
    if (outlive_signal_post(store, signal, payload, false) != OUTLIVE_OK) return fail("post");

    for (int i = 0; i < 2; i++) {
        outlive_message_draft *draft = outlive_message_draft_new("sync", "Conflict");
        outlive_message_draft_set_text(draft, "Two versions");
        outlive_message_draft_set_scope(draft, "a");
        outlive_message_draft_set_thread(draft, "t");
        outlive_message_draft_add_choice(draft, "keep", "Keep both", OUTLIVE_CHOICE_DEFAULT);
        outlive_message_draft_add_choice(draft, "drop", "Delete", OUTLIVE_CHOICE_DESTRUCTIVE);
        outlive_message_draft_set_payload(draft, payload);
        outlive_message_draft_set_response_handler(draft, task);
        char id[OUTLIVE_ID_SIZE];
        if (outlive_message_post(store, draft, id) != OUTLIVE_OK) return fail("message");
        outlive_message_draft_free(draft);
    }
    outlive_args_free(payload);
    outlive_presenter callbacks = {presenter_priority, presenter_present, NULL};
    if (outlive_presenter_add(store, "dialog", &callbacks, NULL) != OUTLIVE_OK) return fail("presenter");

    outlive_durable_interactions *queue = NULL;
    if (outlive_durable_interactions_open(store, "q1", 0, &queue) != OUTLIVE_OK) return fail("durable open");
    outlive_handler *interaction = outlive_handler_new("exerciser_interaction", NULL);
    for (int i = 0; i < 2; i++)
        if (outlive_durable_interactions_add(queue, interaction, NULL) != OUTLIVE_OK) return fail("durable add");

    if (outlive_tasks_run_now(store) != OUTLIVE_OK) return fail("run");
    for (int i = 0; i < 500 && !(presented && interactions_started); i++) outlive_loop_dispatch(loop, 10);
    if (!presented || !interactions_started) return fail("nothing was presented");
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}

static void visit(const char *interaction_id, const char *handler_name, uint32_t presentations, void *context) {
    (void)presentations;
    *(size_t *)context += strlen(interaction_id) + strlen(handler_name);
}

static int exercise(const char *directory) {
    outlive_store *store = NULL;
    outlive_status status = outlive_store_open(directory, "exerciser", NULL, &store);
    report("open", status);
    if (status != OUTLIVE_OK) return 0;
    outlive_loop *loop = outlive_store_loop(store);
    spin(loop, 5);

    /* Key-value: reads, a key walk that must end, writes that fire triggers. */
    void *bytes = NULL;
    size_t size = 0;
    status = outlive_kv_get(store, "config/name", &bytes, &size);
    report("kv_get", status);
    if (status == OUTLIVE_OK) outlive_free(bytes);
    char *after = NULL;
    size_t steps = 0;
    for (;;) {
        char *key = NULL;
        status = outlive_kv_next_key(store, "", after, &key);
        if (status != OUTLIVE_OK) break;
        free(after);
        after = strdup(key);
        outlive_free(key);
        if (++steps > 10000) break;
    }
    free(after);
    printf("kv_walk %s after %zu keys\n", steps > 10000 ? "LOOPED" : "ended", steps);
    report("kv_walk_end", status == OUTLIVE_E_NOT_FOUND ? OUTLIVE_OK : status);
    size_t count = 0;
    report("kv_count", outlive_kv_count(store, "", &count));
    uint64_t token = 0;
    report("kv_observe", outlive_kv_observe(store, "", observed, NULL, &token));
    report("kv_update", outlive_kv_update(store, "config/blob", append_byte, NULL));
    report("kv_set", outlive_kv_set(store, "config/name", "erin", 4));
    report("kv_delete", outlive_kv_delete(store, "other"));
    spin(loop, 5);

    /* Tasks: counts, the list, a run. */
    report("tasks_count", outlive_tasks_count(store, &count));
    report("tasks_count_dead", outlive_tasks_count_dead(store, &count));
    outlive_task_info *tasks = NULL;
    size_t task_count = 0;
    status = outlive_tasks_list(store, NULL, 100, &tasks, &task_count);
    report("tasks_list", status);
    if (status == OUTLIVE_OK && task_count > 0) {
        report("task_retry", outlive_task_retry(store, tasks[task_count - 1].id));
        report("task_delete", outlive_task_delete(store, tasks[task_count - 1].id));
    }
    if (status == OUTLIVE_OK) outlive_task_info_free(tasks, task_count);
    outlive_handler *task = outlive_handler_new("exerciser_task", NULL);
    report("task_add", outlive_task_add(store, task, NULL, NULL, 0, NULL));
    outlive_handler_free(task);
    report("tasks_run_now", outlive_tasks_run_now(store));
    spin(loop, 20);

    /* Signals: lists, lookups, a post to each stored signal, a new consumer. */
    outlive_signal_list *signals = NULL;
    status = outlive_signal_list_new(store, NULL, 0, &signals);
    report("signal_list", status);
    for (size_t i = 0; status == OUTLIVE_OK && i < outlive_signal_list_count(signals); i++) {
        const char *id = outlive_signal_list_id(signals, i);
        uint64_t version = 0;
        size_t consumers = 0;
        bool terminated = false;
        report("signal_lookup", outlive_signal_lookup(store, id, &version, &consumers, &terminated));
        report("signal_post", outlive_signal_post(store, id, NULL, false));
    }
    outlive_signal_list_free(signals);
    outlive_signal_consumer_list *consumers = NULL;
    status = outlive_signal_consumer_list_new(store, NULL, &consumers);
    report("signal_consumer_list", status);
    for (size_t i = 0; status == OUTLIVE_OK && i < outlive_signal_consumer_list_count(consumers); i++) {
        (void)outlive_signal_consumer_list_handler_name(consumers, i);
        (void)outlive_signal_consumer_list_scope(consumers, i);
        (void)outlive_signal_consumer_list_run_id(consumers, i);
    }
    outlive_signal_consumer_list_free(consumers);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *receive = outlive_handler_new("exerciser_signal", NULL);
    report("signal_consume", outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVER_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, "scope2"));
    outlive_handler_free(receive);
    report("signal_post_new", outlive_signal_post(store, signal, NULL, true));
    size_t removed = 0;
    report("signal_remove_scope", outlive_signal_consumers_remove_scope(store, "scope1", &removed));
    spin(loop, 20);

    /* Messages: the list, every field of each, a presenter, an answer, a removal. */
    char *ids = NULL;
    size_t message_count = 0;
    status = outlive_messages_list(store, NULL, NULL, &ids, &message_count);
    report("messages_list", status);
    for (size_t i = 0; status == OUTLIVE_OK && i < message_count; i++) {
        outlive_message *message = NULL;
        outlive_status got = outlive_message_get(store, ids + i * OUTLIVE_ID_SIZE, &message);
        report("message_get", got);
        if (got != OUTLIVE_OK) continue;
        (void)outlive_message_category(message); (void)outlive_message_title(message); (void)outlive_message_text(message);
        (void)outlive_message_scope(message); (void)outlive_message_thread(message); (void)outlive_message_choice(message);
        (void)outlive_message_payload(message); (void)outlive_message_date(message);
        for (size_t c = 0; c < outlive_message_choice_count(message); c++) {
            const char *choice_id = NULL, *label = NULL;
            outlive_choice_kind kind;
            report("message_choice_at", outlive_message_choice_at(message, c, &choice_id, &label, &kind));
        }
        outlive_message_free(message);
    }
    outlive_message_draft *draft = outlive_message_draft_new("sync", "Again");
    outlive_message_draft_set_scope(draft, "a");
    char posted[OUTLIVE_ID_SIZE];
    report("message_post", outlive_message_post(store, draft, posted));
    outlive_message_draft_free(draft);
    if (status == OUTLIVE_OK && message_count > 0) {
        report("message_respond", outlive_message_respond(store, ids, "keep"));
        report("message_remove", outlive_message_remove(store, ids + (message_count - 1) * OUTLIVE_ID_SIZE));
    }
    if (status == OUTLIVE_OK) outlive_free(ids);
    report("messages_count", outlive_messages_count(store, NULL, &count));
    outlive_presenter callbacks = {presenter_priority, presenter_present, NULL};
    report("presenter_add", outlive_presenter_add(store, "dialog", &callbacks, NULL));
    spin(loop, 20);
    report("messages_remove_scope", outlive_messages_remove_scope(store, "a", &removed));

    /* Durable interactions: the list, the count, presenting. */
    outlive_durable_interactions *queue = NULL;
    status = outlive_durable_interactions_open(store, "q1", 0, &queue);
    report("durable_open", status);
    if (status == OUTLIVE_OK) {
        size_t length = 0;
        report("durable_list", outlive_durable_interactions_list(queue, visit, &length));
        report("durable_count", outlive_durable_interactions_count(queue, &count));
        outlive_handler *interaction = outlive_handler_new("exerciser_interaction", NULL);
        report("durable_add", outlive_durable_interactions_add(queue, interaction, NULL));
        outlive_handler_free(interaction);
        spin(loop, 20);
        outlive_durable_interactions_free(queue);
    }
    spin(loop, 5);
    outlive_store_close(store);
    printf("closed\n");
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) return 2;
    if (!strcmp(argv[1], "populate")) return populate(argv[2]);
    if (!strcmp(argv[1], "exercise")) return exercise(argv[2]);
    return 2;
}
