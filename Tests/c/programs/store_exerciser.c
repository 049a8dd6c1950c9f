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
    if (outlive_store_open(directory, "seed", NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_loop *loop = outlive_store_loop(store);
    uint64_t token = 0;
    if (outlive_kv_observe(store, "", observed, NULL, NULL, &token) != OUTLIVE_OK) return fail("observe");
    /* A second run watching too: the feed holds only the changes a run other
     * than the writer's reads (a writer's own are handed over in memory). */
    outlive_store *watcher = NULL;
    if (outlive_store_open(directory, "watcher", NULL, NULL, &watcher) != OUTLIVE_OK) return fail("open");
    if (outlive_kv_observe(watcher, "", observed, NULL, NULL, &token) != OUTLIVE_OK) return fail("observe");
    if (outlive_kv_set(store, "config/name", "dana", 4) != OUTLIVE_OK) return fail("kv");
    if (outlive_kv_set(store, "config/blob", "\0\1", 2) != OUTLIVE_OK) return fail("kv");
    if (outlive_kv_set(store, "other", "x", 1) != OUTLIVE_OK) return fail("kv");

    outlive_handler *slow = NULL, *task = NULL;
    if (outlive_handler_new("exerciser_slow", NULL, NULL, &slow) != OUTLIVE_OK) return fail("handler");
    if (outlive_handler_new("exerciser_task", NULL, NULL, &task) != OUTLIVE_OK) return fail("handler");
    const char *members[] = {"g1"};
    if (outlive_task_add(store, slow, NULL, NULL, 0, NULL) != OUTLIVE_OK) return fail("task");
    if (outlive_task_add(store, task, "g1", NULL, 0, NULL) != OUTLIVE_OK) return fail("task");
    if (outlive_task_add(store, task, NULL, members, 1, NULL) != OUTLIVE_OK) return fail("task");
    outlive_schedule_period every = OUTLIVE_SCHEDULE_PERIOD_INIT, nightly = OUTLIVE_SCHEDULE_PERIOD_INIT;
    every.interval_seconds = 0.05;
    nightly.cron = "30 2 * * MON-FRI";
    if (outlive_schedule_set(store, "exerciser-every", task, &every, NULL, NULL) != OUTLIVE_OK) return fail("schedule");
    if (outlive_schedule_set(store, "exerciser-nightly", task, &nightly, NULL, NULL) != OUTLIVE_OK) return fail("schedule");

    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *receive = NULL;
    if (outlive_handler_new("exerciser_signal", NULL, NULL, &receive) != OUTLIVE_OK) return fail("handler");
    if (outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVERY_UNTIL_TERMINATED, OUTLIVE_LIFETIME_ANY_PROCESS, "scope1", NULL) != OUTLIVE_OK)
        return fail("consume");
    if (outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL) != OUTLIVE_OK)
        return fail("consume");
    outlive_args *payload = NULL;
    if (outlive_args_new(&payload) != OUTLIVE_OK) return fail("args");
    outlive_args_set_string(payload, "note", "hello");
    if (outlive_signal_post(store, signal, payload, false) != OUTLIVE_OK) return fail("post");

    /* Enough messages for a post to fold them into the kept counts (SQLite
     * counts the newest ones from their rows, at most 32: MessageCounts), so
     * that outlive_message_categories has a row; muted, so that the presenter
     * below locks the two that follow, which stay above the counted mark. */
    for (int i = 0; i < 33; i++) {
        outlive_message_draft *draft = NULL;
        char id[OUTLIVE_ID_SIZE];
        if (outlive_message_draft_new("counted", "Earlier", &draft) != OUTLIVE_OK) return fail("draft");
        if (outlive_message_post(store, draft, id) != OUTLIVE_OK || outlive_message_mute(store, id) != OUTLIVE_OK) return fail("message");
        outlive_message_draft_free(draft);
    }
    for (int i = 0; i < 2; i++) {
        outlive_message_draft *draft = NULL;
        if (outlive_message_draft_new("sync", "Conflict", &draft) != OUTLIVE_OK) return fail("draft");
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
    outlive_presenter callbacks = OUTLIVE_PRESENTER_INIT;
    callbacks.priority = presenter_priority;
    callbacks.present = presenter_present;
    if (outlive_presenter_add(store, "dialog", &callbacks, NULL, NULL) != OUTLIVE_OK) return fail("presenter");

    outlive_durable_interactions *queue = NULL;
    if (outlive_durable_interactions_open(store, "q1", 0, &queue) != OUTLIVE_OK) return fail("durable open");
    outlive_handler *interaction = NULL;
    if (outlive_handler_new("exerciser_interaction", NULL, NULL, &interaction) != OUTLIVE_OK) return fail("handler");
    for (int i = 0; i < 2; i++)
        if (outlive_durable_interactions_add(queue, interaction, NULL) != OUTLIVE_OK) return fail("durable add");

    if (outlive_tasks_run_now(store) != OUTLIVE_OK) return fail("run");
    for (int i = 0; i < 500 && !(presented && interactions_started); i++) outlive_loop_dispatch(loop, 10);
    if (!presented || !interactions_started) return fail("nothing was presented");
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}

/* Reads a string a list handed out, as an application does (NULL: absent). */
static size_t read_text(const char *text) {
    return text ? strlen(text) : 0;
}

static int exercise(const char *directory) {
    outlive_store *store = NULL;
    outlive_status status = outlive_store_open(directory, "exerciser", NULL, NULL, &store);
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
    /* The whole listing at once, every key read. */
    outlive_kv_key_list *keys = NULL;
    status = outlive_kv_key_list_new(store, "", NULL, 0, &keys);
    report("kv_key_list", status);
    size_t length = 0;
    for (size_t i = 0; status == OUTLIVE_OK && i < outlive_kv_key_list_count(keys); i++)
        length += read_text(outlive_kv_key_list_key(keys, i));
    outlive_kv_key_list_free(keys);
    /* The walk: one key per page, each page after the last key of the one
     * before, as 0.1's next-key walk went; it must end (an empty page). */
    char *after = NULL;
    size_t steps = 0;
    for (;;) {
        outlive_kv_key_list *page = NULL;
        status = outlive_kv_key_list_new(store, "", after, 1, &page);
        if (status != OUTLIVE_OK) break;
        const char *key = outlive_kv_key_list_count(page) > 0 ? outlive_kv_key_list_key(page, 0) : NULL;
        if (!key) {
            outlive_kv_key_list_free(page);
            break;
        }
        free(after);
        after = strdup(key);
        outlive_kv_key_list_free(page);
        if (++steps > 10000) break;
    }
    free(after);
    printf("kv_walk %s after %zu keys\n", steps > 10000 ? "LOOPED" : "ended", steps);
    report("kv_walk_end", status);
    size_t count = 0;
    report("kv_count", outlive_kv_count(store, "", &count));
    uint64_t token = 0;
    report("kv_observe", outlive_kv_observe(store, "", observed, NULL, NULL, &token));
    report("kv_update", outlive_kv_update(store, "config/blob", append_byte, NULL));
    report("kv_set", outlive_kv_set(store, "config/name", "erin", 4));
    report("kv_delete", outlive_kv_delete(store, "other"));
    spin(loop, 5);

    /* Tasks: counts, the list, a run. */
    report("tasks_count", outlive_tasks_count(store, &count));
    report("tasks_count_dead", outlive_tasks_count_dead(store, &count));
    outlive_task_list *tasks = NULL;
    status = outlive_task_list_new(store, NULL, 0, &tasks);
    report("tasks_list", status);
    size_t task_count = status == OUTLIVE_OK ? outlive_task_list_count(tasks) : 0;
    for (size_t i = 0; i < task_count; i++) {
        /* Every field of each task, as an application's listing shows it. */
        length += read_text(outlive_task_list_id(tasks, i)) + read_text(outlive_task_list_handler_name(tasks, i));
        length += read_text(outlive_task_list_last_error(tasks, i)) + read_text(outlive_task_list_group_start(tasks, i));
        (void)outlive_task_list_state(tasks, i); (void)outlive_task_list_attempts(tasks, i);
        (void)outlive_task_list_next_attempt(tasks, i); (void)outlive_task_list_created(tasks, i);
        for (size_t m = 0; m < outlive_task_list_group_member_count(tasks, i); m++)
            length += read_text(outlive_task_list_group_member(tasks, i, m));
    }
    if (task_count > 0) {
        const char *last = outlive_task_list_id(tasks, task_count - 1);
        report("task_retry", outlive_task_retry(store, last));
        report("task_delete", outlive_task_delete(store, last));
    }
    outlive_task_list_free(tasks);
    outlive_handler *task = NULL;
    (void)outlive_handler_new("exerciser_task", NULL, NULL, &task);
    report("task_add", outlive_task_add(store, task, NULL, NULL, 0, NULL));
    outlive_handler_free(task);
    report("tasks_run_now", outlive_tasks_run_now(store));
    spin(loop, 20);

    /* Schedules: the list with every accessor read, a replacement, a removal
     * (the spins above and below fire whatever is due, damaged or not). */
    outlive_schedule_list *schedules = NULL;
    status = outlive_schedule_list_new(store, NULL, 0, &schedules);
    report("schedule_list", status);
    size_t schedule_count = status == OUTLIVE_OK ? outlive_schedule_list_count(schedules) : 0;
    for (size_t i = 0; i < schedule_count; i++) {
        length += read_text(outlive_schedule_list_name(schedules, i)) + read_text(outlive_schedule_list_handler_name(schedules, i))
                  + read_text(outlive_schedule_list_cron(schedules, i)) + read_text(outlive_schedule_list_queue(schedules, i));
        (void)outlive_schedule_list_interval(schedules, i); (void)outlive_schedule_list_next_fire(schedules, i);
        (void)outlive_schedule_list_last_fired(schedules, i); (void)outlive_schedule_list_priority(schedules, i);
    }
    outlive_schedule_list_free(schedules);
    outlive_handler *scheduled = NULL;
    (void)outlive_handler_new("exerciser_task", NULL, NULL, &scheduled);
    outlive_schedule_period period = OUTLIVE_SCHEDULE_PERIOD_INIT;
    period.interval_seconds = 0.05;
    report("schedule_set", outlive_schedule_set(store, "exerciser-every", scheduled, &period, NULL, NULL));
    outlive_handler_free(scheduled);
    spin(loop, 10);
    report("schedule_remove", outlive_schedule_remove(store, "exerciser-nightly"));

    /* Signals: lists, lookups, a post to each stored signal, a new consumer. */
    outlive_signal_list *signals = NULL;
    status = outlive_signal_list_new(store, NULL, 0, &signals);
    report("signal_list", status);
    for (size_t i = 0; status == OUTLIVE_OK && i < outlive_signal_list_count(signals); i++) {
        const char *id = outlive_signal_list_id(signals, i);
        (void)outlive_signal_list_version(signals, i); (void)outlive_signal_list_consumer_count(signals, i);
        (void)outlive_signal_list_terminated(signals, i);
        uint64_t version = 0;
        size_t consumers = 0;
        bool terminated = false;
        report("signal_lookup", outlive_signal_lookup(store, id, &version, &consumers, &terminated));
        report("signal_post", outlive_signal_post(store, id, NULL, false));
    }
    outlive_signal_list_free(signals);
    outlive_signal_consumer_list *consumers = NULL;
    status = outlive_signal_consumer_list_new(store, NULL, NULL, 0, &consumers);
    report("signal_consumer_list", status);
    for (size_t i = 0; status == OUTLIVE_OK && i < outlive_signal_consumer_list_count(consumers); i++) {
        length += read_text(outlive_signal_consumer_list_id(consumers, i));
        length += read_text(outlive_signal_consumer_list_signal_id(consumers, i));
        length += read_text(outlive_signal_consumer_list_handler_name(consumers, i));
        length += read_text(outlive_signal_consumer_list_scope(consumers, i));
        length += read_text(outlive_signal_consumer_list_process(consumers, i));
        length += read_text(outlive_signal_consumer_list_run_id(consumers, i));
        length += read_text(outlive_signal_consumer_list_delivering_run_id(consumers, i));
        (void)outlive_signal_consumer_list_delivery(consumers, i); (void)outlive_signal_consumer_list_lifetime(consumers, i);
        (void)outlive_signal_consumer_list_last_version(consumers, i);
    }
    outlive_signal_consumer_list_free(consumers);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *receive = NULL;
    (void)outlive_handler_new("exerciser_signal", NULL, NULL, &receive);
    char consumer[OUTLIVE_ID_SIZE];
    report("signal_consume", outlive_signal_consume(store, signal, receive, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, "scope2",
                                                    consumer));
    outlive_handler_free(receive);
    report("signal_post_new", outlive_signal_post(store, signal, NULL, true));
    size_t removed = 0;
    report("signal_remove_scope", outlive_signal_consumers_remove_scope(store, "scope1", &removed));
    spin(loop, 20);

    /* Messages: the list, every field of each, a presenter, an answer, a removal. */
    outlive_message_list *messages = NULL;
    status = outlive_message_list_new(store, NULL, NULL, NULL, 0, &messages);
    report("messages_list", status);
    size_t message_count = status == OUTLIVE_OK ? outlive_message_list_count(messages) : 0;
    for (size_t i = 0; i < message_count; i++) {
        outlive_message *message = NULL;
        outlive_status got = outlive_message_get(store, outlive_message_list_id(messages, i), &message);
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
    outlive_message_draft *draft = NULL;
    (void)outlive_message_draft_new("sync", "Again", &draft);
    outlive_message_draft_set_scope(draft, "a");
    char posted[OUTLIVE_ID_SIZE];
    report("message_post", outlive_message_post(store, draft, posted));
    outlive_message_draft_free(draft);
    if (message_count > 0) {
        report("message_respond", outlive_message_respond(store, outlive_message_list_id(messages, 0), "keep"));
        report("message_remove", outlive_message_remove(store, outlive_message_list_id(messages, message_count - 1)));
    }
    outlive_message_list_free(messages);
    report("messages_count", outlive_messages_count(store, NULL, &count));
    outlive_presenter callbacks = OUTLIVE_PRESENTER_INIT;
    callbacks.priority = presenter_priority;
    callbacks.present = presenter_present;
    report("presenter_add", outlive_presenter_add(store, "dialog", &callbacks, NULL, NULL));
    spin(loop, 20);
    report("messages_remove_scope", outlive_messages_remove_scope(store, "a", &removed));

    /* Durable interactions: the list, the count, presenting. */
    outlive_durable_interactions *queue = NULL;
    status = outlive_durable_interactions_open(store, "q1", 0, &queue);
    report("durable_open", status);
    if (status == OUTLIVE_OK) {
        outlive_durable_interaction_list *interactions = NULL;
        outlive_status listed = outlive_durable_interaction_list_new(queue, NULL, 0, &interactions);
        report("durable_list", listed);
        for (size_t i = 0; listed == OUTLIVE_OK && i < outlive_durable_interaction_list_count(interactions); i++) {
            length += read_text(outlive_durable_interaction_list_id(interactions, i));
            length += read_text(outlive_durable_interaction_list_handler_name(interactions, i));
            (void)outlive_durable_interaction_list_presentations(interactions, i);
        }
        outlive_durable_interaction_list_free(interactions);
        report("durable_count", outlive_durable_interactions_count(queue, &count));
        outlive_handler *interaction = NULL;
        (void)outlive_handler_new("exerciser_interaction", NULL, NULL, &interaction);
        report("durable_add", outlive_durable_interactions_add(queue, interaction, NULL));
        outlive_handler_free(interaction);
        spin(loop, 20);
        outlive_durable_interactions_free(queue);
    }
    spin(loop, 5);
    outlive_store_close(store);
    (void)length;
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
