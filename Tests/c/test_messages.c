/* The message queue in one process: drafts, accessors, listing and removal,
 * presentation tokens, release callbacks, the category cap, and bad input that
 * gets a precise status and stores nothing; a run the store no longer has.
 * On both engines (harness_store_location; OUTLIVE_TEST_STORE_KIND=postgresql). */
#include "harness.h"
#include <pthread.h>

static outlive_store *open_store(const char *dir) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "app", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open %s: %s\n", dir, outlive_last_error());
        return NULL;
    }
    return store;
}

static void pump(outlive_store *store, int rounds) {
    for (int i = 0; i < rounds; i++) outlive_loop_dispatch(outlive_store_loop(store), 10);
}

static size_t stored(outlive_store *store) {
    size_t count = 0;
    return outlive_messages_count(store, NULL, &count) == OUTLIVE_OK ? count : (size_t)-1;
}

static outlive_message_draft *draft_with_choices(const char *category) {
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new(category, "Conflict", &draft);
    if (!draft) return NULL;
    outlive_message_draft_add_choice(draft, "keep", "Keep both", OUTLIVE_CHOICE_DEFAULT);
    outlive_message_draft_add_choice(draft, "drop", "Delete", OUTLIVE_CHOICE_DESTRUCTIVE);
    return draft;
}

static void test_posted_message_reads_back_every_field(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    outlive_message_draft *draft = draft_with_choices("sync-issue");
    CHECK(draft);
    CHECK_OK(outlive_message_draft_set_text(draft, "Both copies changed."));
    CHECK_OK(outlive_message_draft_set_scope(draft, "account-1"));
    CHECK_OK(outlive_message_draft_set_thread(draft, "folder-7"));
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    CHECK_OK(outlive_args_set_integer(payload, "item", 42));
    CHECK_OK(outlive_message_draft_set_payload(draft, payload));
    outlive_args_free(payload);
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(store, draft, id));
    outlive_message_draft_free(draft);
    CHECK(strlen(id) == 36);
    outlive_message *message = NULL;
    CHECK_OK(outlive_message_get(store, id, &message));
    CHECK(strcmp(outlive_message_id(message), id) == 0);
    CHECK(strcmp(outlive_message_category(message), "sync-issue") == 0);
    CHECK(strcmp(outlive_message_title(message), "Conflict") == 0);
    CHECK(strcmp(outlive_message_text(message), "Both copies changed.") == 0);
    CHECK(strcmp(outlive_message_scope(message), "account-1") == 0);
    CHECK(strcmp(outlive_message_thread(message), "folder-7") == 0);
    CHECK(outlive_message_choice(message) == NULL);
    CHECK(outlive_message_date(message) > 1.6e9);
    CHECK(outlive_message_choice_count(message) == 2);
    const char *choice_id = NULL, *label = NULL;
    outlive_choice_kind kind = OUTLIVE_CHOICE_REGULAR;
    CHECK_OK(outlive_message_choice_at(message, 1, &choice_id, &label, &kind));
    CHECK(strcmp(choice_id, "drop") == 0 && strcmp(label, "Delete") == 0 && kind == OUTLIVE_CHOICE_DESTRUCTIVE);
    CHECK_STATUS(outlive_message_choice_at(message, 2, &choice_id, &label, &kind), OUTLIVE_E_INVALID_ARGUMENT);
    int64_t item = 0;
    CHECK(outlive_message_payload(message) != NULL);
    CHECK_OK(outlive_args_get_integer(outlive_message_payload(message), "item", &item));
    CHECK(item == 42);
    CHECK(!outlive_message_is_presented(message) && !outlive_message_is_handled(message) && !outlive_message_is_removed(message));
    CHECK(!outlive_message_auto_removes(message) && !outlive_message_has_response_handler(message));
    outlive_message_free(message);
    /* NULL views read as absent. */
    CHECK(outlive_message_id(NULL) == NULL && outlive_message_choice_count(NULL) == 0 && !outlive_message_is_handled(NULL));
    CHECK(outlive_message_payload(NULL) == NULL);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_list_mute_remove_and_remove_scope(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    char ids[5][OUTLIVE_ID_SIZE];
    for (int i = 0; i < 5; i++) {
        outlive_message_draft *draft = draft_with_choices(i < 3 ? "sync" : "auth");
        CHECK(draft);
        CHECK_OK(outlive_message_draft_set_scope(draft, i % 2 ? "b" : "a"));
        CHECK_OK(outlive_message_post(store, draft, ids[i]));
        outlive_message_draft_free(draft);
    }
    outlive_message_list *list = NULL;
    size_t count = 0;
    CHECK_OK(outlive_message_list_new(store, NULL, NULL, NULL, 0, &list));
    CHECK(outlive_message_list_count(list) == 5);
    for (size_t i = 0; i < 5; i++) CHECK(strcmp(outlive_message_list_id(list, i), ids[i]) == 0);
    CHECK(outlive_message_list_id(list, 5) == NULL);
    outlive_message_list_free(list);
    CHECK_OK(outlive_message_list_new(store, "a", "sync", NULL, 0, &list));
    CHECK(outlive_message_list_count(list) == 2 && strcmp(outlive_message_list_id(list, 0), ids[0]) == 0 &&
          strcmp(outlive_message_list_id(list, 1), ids[2]) == 0);
    outlive_message_list_free(list);
    /* Paging: after the last id of one page, at most `limit` per page. */
    CHECK_OK(outlive_message_list_new(store, NULL, NULL, ids[1], 2, &list));
    CHECK(outlive_message_list_count(list) == 2 && strcmp(outlive_message_list_id(list, 0), ids[2]) == 0 &&
          strcmp(outlive_message_list_id(list, 1), ids[3]) == 0);
    outlive_message_list_free(list);
    CHECK_OK(outlive_message_list_new(store, "nobody", NULL, NULL, 0, &list));
    CHECK(outlive_message_list_count(list) == 0 && list != NULL);
    outlive_message_list_free(list);
    CHECK_OK(outlive_messages_count(store, "auth", &count));
    CHECK(count == 2);
    /* mute: presented without a presenter. */
    CHECK_OK(outlive_message_mute(store, ids[0]));
    outlive_message *message = NULL;
    CHECK_OK(outlive_message_get(store, ids[0], &message));
    CHECK(outlive_message_is_presented(message));
    outlive_message_free(message);
    CHECK_OK(outlive_message_remove(store, ids[0]));
    CHECK_STATUS(outlive_message_remove(store, ids[0]), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_message_get(store, ids[0], &message), OUTLIVE_E_NOT_FOUND);
    size_t removed = 0;
    CHECK_OK(outlive_messages_remove_scope(store, "b", &removed));
    CHECK(removed == 2);
    CHECK_OK(outlive_messages_remove_scope(store, "b", NULL));
    CHECK(stored(store) == 2);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_auto_remove_message_goes_when_muted(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("notice", "Synced", &draft);
    CHECK_OK(outlive_message_draft_set_auto_remove(draft, true));
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(store, draft, id));
    outlive_message_draft_free(draft);
    CHECK_OK(outlive_message_mute(store, id));
    for (int i = 0; i < 50 && stored(store) != 0; i++) pump(store, 1);
    CHECK(stored(store) == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

struct presenting {
    outlive_presentation *token;
    char id[OUTLIVE_ID_SIZE];
    int presented, ended, priority_calls;
};

static int32_t default_priority(const outlive_message *message, void *context) {
    (void)message;
    ((struct presenting *)context)->priority_calls++;
    return OUTLIVE_PRIORITY_DEFAULT;
}

static void keep_token(const outlive_message *message, outlive_presentation *presentation, void *context) {
    struct presenting *p = context;
    p->token = presentation;
    snprintf(p->id, sizeof p->id, "%s", outlive_message_id(message));
    p->presented++;
}

static void count_end(const outlive_message *message, void *context) {
    (void)message;
    ((struct presenting *)context)->ended++;
}

static void *finish_from_thread(void *token) {
    static outlive_status status;
    status = outlive_presentation_finish(token, OUTLIVE_PRESENTATION_PRESENTED, true, "keep");
    return &status;
}

static void test_presentation_finishes_once_from_any_thread_then_state(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    struct presenting p = {0};
    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, default_priority, keep_token, count_end};
    CHECK_OK(outlive_presenter_add(store, "dialog", &callbacks, &p, NULL));
    outlive_message_draft *draft = draft_with_choices("sync");
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(store, draft, id));
    outlive_message_draft_free(draft);
    for (int i = 0; i < 100 && !p.presented; i++) pump(store, 1);
    CHECK(p.presented == 1 && strcmp(p.id, id) == 0);
    /* A choice the message does not offer leaves the token unfinished. */
    CHECK_STATUS(outlive_presentation_finish(p.token, OUTLIVE_PRESENTATION_PRESENTED, true, "nope"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_presentation_finish(p.token, (outlive_presentation_result)7, true, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_presentation_finish(NULL, OUTLIVE_PRESENTATION_PRESENTED, true, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    pthread_t thread;
    void *result = NULL;
    CHECK(pthread_create(&thread, NULL, finish_from_thread, p.token) == 0);
    pthread_join(thread, &result);
    CHECK(*(outlive_status *)result == OUTLIVE_OK);
    CHECK_STATUS(outlive_presentation_finish(p.token, OUTLIVE_PRESENTATION_PRESENTED, false, NULL), OUTLIVE_E_STATE);
    /* Answered with "keep" but nobody handles responses here: it stays, handled. */
    outlive_message *message = NULL;
    for (int i = 0; i < 100; i++) {
        pump(store, 1);
        CHECK_OK(outlive_message_get(store, id, &message));
        int handled = outlive_message_is_handled(message);
        if (handled) break;
        outlive_message_free(message);
        message = NULL;
    }
    CHECK(message && outlive_message_is_presented(message) && strcmp(outlive_message_choice(message), "keep") == 0);
    outlive_message_free(message);
    CHECK(p.presented == 1);
    /* Removing it delivers the end notification first. */
    CHECK_OK(outlive_message_remove(store, id));
    for (int i = 0; i < 100 && stored(store) != 0; i++) pump(store, 1);
    CHECK(stored(store) == 0 && p.ended == 1);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static int released;
static void release_counter(void *context) { (void)context; released++; }
static bool take_all(const outlive_message *message, void *context) { (void)message; (void)context; return true; }
static bool never_resolve(const outlive_message *message, char choice_out[64], void *context) {
    (void)message; (void)choice_out; (void)context;
    return false;
}

static void test_release_callbacks_run_once_on_remove_or_close_never_on_failure(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    released = 0;
    struct presenting p = {0};
    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, default_priority, keep_token, NULL};
    CHECK_OK(outlive_presenter_add(store, "a", &callbacks, &p, release_counter));
    CHECK_STATUS(outlive_presenter_add(store, "a", &callbacks, &p, release_counter), OUTLIVE_E_STATE);
    CHECK(released == 0);
    CHECK_OK(outlive_presenter_remove(store, "a"));
    CHECK(released == 1);
    CHECK_STATUS(outlive_presenter_remove(store, "a"), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_response_handler_add(store, "r", take_all, NULL, release_counter));
    CHECK_STATUS(outlive_response_handler_add(store, "r", take_all, NULL, NULL), OUTLIVE_E_STATE);
    CHECK_OK(outlive_auto_resolver_add(store, "x", never_resolve, NULL, release_counter));
    CHECK_STATUS(outlive_auto_resolver_add(store, "x", never_resolve, NULL, NULL), OUTLIVE_E_STATE);
    CHECK_OK(outlive_response_handler_remove(store, "r"));
    CHECK(released == 2);
    CHECK_STATUS(outlive_response_handler_remove(store, "r"), OUTLIVE_E_NOT_FOUND);
    CHECK_OK(outlive_presenter_add(store, "b", &callbacks, &p, release_counter));
    pump(store, 2);
    outlive_store_close(store);
    CHECK_MSG(released == 4, "released %d", released);
    harness_remove_store(dir);
}

static void test_category_cap_refuses_posts_with_limit_and_frees_on_removal(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    CHECK_STATUS(outlive_messages_set_category_limit(store, 0), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_messages_set_category_limit(store, 3));
    outlive_message_draft *draft = draft_with_choices("sync");
    char ids[3][OUTLIVE_ID_SIZE], extra[OUTLIVE_ID_SIZE] = "untouched";
    for (int i = 0; i < 3; i++) CHECK_OK(outlive_message_post(store, draft, ids[i]));
    CHECK_STATUS(outlive_message_post(store, draft, extra), OUTLIVE_E_LIMIT);
    CHECK(strstr(outlive_last_error(), "sync") != NULL);
    CHECK(strcmp(extra, "untouched") == 0);
    /* Other categories are counted on their own. */
    outlive_message_draft *other = draft_with_choices("auth");
    CHECK_OK(outlive_message_post(store, other, extra));
    outlive_message_draft_free(other);
    CHECK_OK(outlive_message_remove(store, ids[0]));
    CHECK_OK(outlive_message_post(store, draft, extra));
    outlive_message_draft_free(draft);
    CHECK(stored(store) == 4);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_bad_input_gets_precise_statuses_and_stores_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    const char bad_utf8[] = {'a', (char)0xC3, (char)0x28, 0};
    outlive_message_draft *rejected = NULL;
    CHECK(outlive_message_draft_new(NULL, "t", &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    CHECK(strstr(outlive_last_error(), "category"));
    CHECK(outlive_message_draft_new("", "t", &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    CHECK(outlive_message_draft_new(bad_utf8, "t", &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    CHECK(outlive_message_draft_new("c", NULL, &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    CHECK(outlive_message_draft_new("c", bad_utf8, &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    CHECK(outlive_message_draft_new("tab\tbed", "t", &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);
    char long_name[300];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK(outlive_message_draft_new(long_name, "t", &rejected) == OUTLIVE_E_INVALID_ARGUMENT && rejected == NULL);

    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("sync", "Conflict", &draft);
    CHECK(draft);
    CHECK_STATUS(outlive_message_draft_set_text(NULL, "x"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_set_text(draft, bad_utf8), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_set_scope(draft, ""), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_set_thread(draft, long_name), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_add_choice(draft, NULL, "l", OUTLIVE_CHOICE_REGULAR), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_add_choice(draft, "c", NULL, OUTLIVE_CHOICE_REGULAR), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_add_choice(draft, "c", "l", (outlive_choice_kind)0), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_add_choice(draft, "c", "l", (outlive_choice_kind)9), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_draft_add_choice(draft, long_name, "l", OUTLIVE_CHOICE_REGULAR), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_message_draft_add_choice(draft, "c", "l", OUTLIVE_CHOICE_REGULAR));
    CHECK_STATUS(outlive_message_draft_add_choice(draft, "c", "again", OUTLIVE_CHOICE_REGULAR), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "\"c\""));
    CHECK_STATUS(outlive_message_draft_set_auto_remove(NULL, true), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler *handler = NULL;
    outlive_handler_new("some_handler", NULL, NULL, &handler);
    CHECK(handler);
    CHECK_OK(outlive_handler_invalidate(handler, NULL));
    CHECK_STATUS(outlive_message_draft_set_response_handler(draft, handler), OUTLIVE_E_INVALIDATED);
    outlive_handler_free(handler);

    char id[OUTLIVE_ID_SIZE];
    CHECK_STATUS(outlive_message_post(NULL, draft, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_post(store, NULL, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_post(store, draft, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(stored(store) == 0);

    CHECK_OK(outlive_message_post(store, draft, id));
    const char *missing = "00000000-0000-4000-8000-000000000000";
    CHECK_STATUS(outlive_message_respond(store, "not-an-id", "c"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_respond(store, NULL, "c"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_respond(store, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_respond(store, id, bad_utf8), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_respond(store, missing, "c"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_message_respond(store, id, "other"), OUTLIVE_E_NOT_FOUND);
    CHECK(strstr(outlive_last_error(), "other"));
    CHECK_STATUS(outlive_message_mute(store, missing), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_message_remove(store, "x"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_messages_remove_scope(store, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_message *message = NULL;
    CHECK_STATUS(outlive_message_get(store, missing, &message), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_message_get(store, id, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_message_list *list = NULL;
    CHECK_STATUS(outlive_message_list_new(store, NULL, NULL, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_list_new(store, bad_utf8, NULL, NULL, 0, &list), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_message_list_new(store, NULL, NULL, "00000000-0000-4000-8000-000000000000", 0, &list),
                 OUTLIVE_E_NOT_FOUND);
    CHECK(list == NULL);
    CHECK_STATUS(outlive_messages_count(store, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    /* The message is unchanged by all of that. */
    CHECK_OK(outlive_message_get(store, id, &message));
    CHECK(!outlive_message_is_handled(message) && !outlive_message_is_presented(message));
    outlive_message_free(message);

    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, default_priority, keep_token, NULL};
    outlive_presenter no_present = {OUTLIVE_PRESENTER_VERSION, default_priority, NULL, NULL};
    CHECK_STATUS(outlive_presenter_add(store, "p", NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_presenter_add(store, "p", &no_present, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_presenter_add(store, "", &callbacks, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_presenter_add(store, NULL, &callbacks, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_presenter_reoffer(store, "p"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_response_handler_add(store, "r", NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_auto_resolver_add(store, "r", NULL, NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_auto_resolver_remove(store, "r"), OUTLIVE_E_NOT_FOUND);

    /* Answered once; a second answer is a state error. */
    CHECK_OK(outlive_message_respond(store, id, "c"));
    CHECK_STATUS(outlive_message_respond(store, id, "c"), OUTLIVE_E_STATE);
    CHECK(stored(store) == 1);
    outlive_message_draft_free(draft);
    outlive_message_draft_free(NULL);
    outlive_message_free(NULL);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static int32_t refuse(const outlive_message *message, void *context) {
    (void)message;
    ((struct presenting *)context)->priority_calls++;
    return OUTLIVE_PRIORITY_WONT_PRESENT;
}

static void test_highest_priority_presents_first_added_on_tie_zero_never(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir);
    CHECK(store);
    struct presenting zero = {0}, first = {0}, second = {0};
    outlive_presenter refusing = {OUTLIVE_PRESENTER_VERSION, refuse, keep_token, NULL};
    outlive_presenter normal = {OUTLIVE_PRESENTER_VERSION, default_priority, keep_token, NULL};
    CHECK_OK(outlive_presenter_add(store, "zero", &refusing, &zero, NULL));
    CHECK_OK(outlive_presenter_add(store, "first", &normal, &first, NULL));
    CHECK_OK(outlive_presenter_add(store, "second", &normal, &second, NULL));
    outlive_message_draft *draft = draft_with_choices("sync");
    char id[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(store, draft, id));
    outlive_message_draft_free(draft);
    for (int i = 0; i < 100 && !first.presented && !second.presented; i++) pump(store, 1);
    CHECK(first.presented == 1 && second.presented == 0 && zero.presented == 0);
    CHECK(zero.priority_calls >= 1);
    /* Not presented: the next presenter of this run that has not had it gets it. */
    CHECK_OK(outlive_presentation_finish(first.token, OUTLIVE_PRESENTATION_NOT_PRESENTED, false, NULL));
    for (int i = 0; i < 100 && !second.presented; i++) pump(store, 1);
    CHECK(second.presented == 1 && first.presented == 1 && zero.presented == 0);
    CHECK_OK(outlive_presentation_finish(second.token, OUTLIVE_PRESENTATION_NOT_PRESENTED, false, NULL));
    pump(store, 5);
    CHECK(first.presented == 1 && second.presented == 1);
    /* reoffer: "first" sees it again. */
    CHECK_OK(outlive_presenter_reoffer(store, "first"));
    for (int i = 0; i < 100 && first.presented < 2; i++) pump(store, 1);
    CHECK(first.presented == 2 && second.presented == 1);
    CHECK_OK(outlive_presentation_finish(first.token, OUTLIVE_PRESENTATION_PRESENTED, false, NULL));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static int response_calls;
static bool count_response(const outlive_message *message, void *context) {
    (void)message; (void)context;
    response_calls++;
    return true;
}

/* Deletes a run's row and its presenters, as another process ending it
 * would, leaving its handle open (its lock file, or PostgreSQL lock, is
 * untouched); whether it did. */
static int forget_run(const char *location, const char *run_id) {
    char sql[512];
    snprintf(sql, sizeof sql, "DELETE FROM outlive_message_presenters WHERE run_id = '%s'; "
             "DELETE FROM outlive_runs WHERE run_id = '%s'", run_id, run_id);
    return harness_store_sql(location, sql, NULL, 0);
}

/* A handle whose run the store no longer has (another process ended it)
 * registers no presenter, locks no message and claims no answer: SQLite's
 * triggers refuse it, PostgreSQL's foreign keys (checked at commit). What it
 * would have taken stays free for a live run. */
static void test_a_run_the_store_no_longer_has_neither_presents_nor_answers(void) {
    const char *location = harness_store_location();
    outlive_store *ended = open_store(location), *live = open_store(location);
    CHECK(ended && live);
    struct presenting gone = {0}, alive = {0};
    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, default_priority, keep_token, NULL};
    CHECK_OK(outlive_presenter_add(ended, "dialog", &callbacks, &gone, NULL));
    response_calls = 0;
    CHECK_OK(outlive_response_handler_add(ended, "log", count_response, NULL, NULL));
    pump(ended, 2);
    CHECK(forget_run(location, outlive_store_run_id(ended)));
    CHECK_STATUS(outlive_presenter_add(ended, "late", &callbacks, &gone, NULL), OUTLIVE_E_STATE);
    CHECK_MSG(strstr(outlive_last_error(), "this run was ended by another process"), "%s", outlive_last_error());
    outlive_message_draft *draft = draft_with_choices("sync");
    char shown[OUTLIVE_ID_SIZE], answered[OUTLIVE_ID_SIZE];
    CHECK_OK(outlive_message_post(live, draft, shown));
    CHECK_OK(outlive_message_post(live, draft, answered));
    outlive_message_draft_free(draft);
    CHECK_OK(outlive_message_respond(live, answered, "keep"));
    harness_dispatch_for(outlive_store_loop(ended), 1.0);
    CHECK_MSG(gone.presented == 0, "presented by a run the store no longer has");
    CHECK_MSG(response_calls == 0, "answered by a run the store no longer has");
    CHECK_OK(outlive_presenter_add(live, "dialog", &callbacks, &alive, NULL));
    CHECK_OK(outlive_response_handler_add(live, "log", count_response, NULL, NULL));
    for (int i = 0; i < 300 && (!alive.presented || response_calls == 0); i++) pump(live, 1);
    CHECK(alive.presented == 1 && strcmp(alive.id, shown) == 0);
    CHECK(response_calls == 1);
    CHECK_OK(outlive_presentation_finish(alive.token, OUTLIVE_PRESENTATION_PRESENTED, false, "keep"));
    outlive_store_close(ended);
    outlive_store_close(live);
    harness_remove_store(location);
}

HARNESS_MAIN(
    T(test_posted_message_reads_back_every_field),
    T(test_list_mute_remove_and_remove_scope),
    T(test_auto_remove_message_goes_when_muted),
    T(test_presentation_finishes_once_from_any_thread_then_state),
    T(test_release_callbacks_run_once_on_remove_or_close_never_on_failure),
    T(test_category_cap_refuses_posts_with_limit_and_frees_on_removal),
    T(test_bad_input_gets_precise_statuses_and_stores_nothing),
    T(test_highest_priority_presents_first_added_on_tie_zero_never),
    T(test_a_run_the_store_no_longer_has_neither_presents_nor_answers)
)
