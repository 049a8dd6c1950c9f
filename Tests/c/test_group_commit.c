/* Many threads writing through one store handle (group commit: concurrent
 * kv sets and deletes, signal posts and message posts share a transaction and
 * a commit): each call is committed when it returns, every call keeps its own
 * status, and a call that fails changes nothing while its group's other calls
 * are kept. Durability against kill -9 is the crash harness's (test_crash).
 * PostgreSQL stores make no groups (each call is its own transaction) but
 * promise the same to threads sharing a handle: the suite runs on both. */
#include "harness.h"
#include <pthread.h>
#include <stdatomic.h>

#define THREADS 8
#define SIGNAL_ID "3c1e0f52-7d2a-4b8e-9f10-aa55bb66cc77"

static outlive_store *open_store(const char *dir, const char *name) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, name, NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open %s: %s\n", dir, outlive_last_error());
        return NULL;
    }
    return store;
}

struct writer {
    outlive_store *store;   /* shared by every thread */
    outlive_store *reader;  /* another handle: another connection */
    int index;
    int rounds;
    atomic_int *start;
    char failure[256];
    int ok_calls, limited_calls;
};

static void start_together(struct writer *writer) {
    atomic_fetch_add(writer->start, 1);
    while (atomic_load(writer->start) < THREADS) sched_yield();
}

static void run_threads(struct writer *writers, void *(*body)(void *)) {
    pthread_t ids[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&ids[t], NULL, body, &writers[t]);
    for (int t = 0; t < THREADS; t++) pthread_join(ids[t], NULL);
}

static void *set_and_read_back(void *argument) {
    struct writer *writer = argument;
    start_together(writer);
    for (int i = 0; i < writer->rounds; i++) {
        char key[32], value[32];
        snprintf(key, sizeof key, "t%d/key%d", writer->index, i % 10);
        int length = snprintf(value, sizeof value, "%d-%d", writer->index, i);
        outlive_status status = outlive_kv_set(writer->store, key, value, (size_t)length);
        if (status != OUTLIVE_OK) {
            snprintf(writer->failure, sizeof writer->failure, "set %s: %s", key, outlive_last_error());
            return NULL;
        }
        /* Committed when the call returned: another connection reads it at once. */
        void *bytes = NULL;
        size_t size = 0;
        status = outlive_kv_get(writer->reader, key, &bytes, &size);
        int same = status == OUTLIVE_OK && size == (size_t)length && memcmp(bytes, value, size) == 0;
        outlive_free(bytes);
        if (!same) {
            snprintf(writer->failure, sizeof writer->failure, "%s read back through another handle: %s, not %s",
                     key, outlive_status_name(status), value);
            return NULL;
        }
        writer->ok_calls++;
    }
    return NULL;
}

static void test_sets_of_8_threads_are_each_committed_when_the_call_returns(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app"), *reader = open_store(dir, "reader");
    CHECK(store && reader);
    atomic_int start = 0;
    struct writer writers[THREADS];
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, reader, t, 150, &start, "", 0, 0};
    run_threads(writers, set_and_read_back);
    for (int t = 0; t < THREADS; t++) {
        CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
        CHECK(writers[t].ok_calls == 150);
    }
    outlive_store_close(reader);
    outlive_store_close(store);
    /* Reopened: each key holds the last value its thread set. */
    store = open_store(dir, "app");
    CHECK(store);
    for (int t = 0; t < THREADS; t++) {
        for (int k = 0; k < 10; k++) {
            char key[32], want[32];
            snprintf(key, sizeof key, "t%d/key%d", t, k);
            snprintf(want, sizeof want, "%d-%d", t, 140 + k);
            void *bytes = NULL;
            size_t size = 0;
            CHECK_OK(outlive_kv_get(store, key, &bytes, &size));
            int same = size == strlen(want) && memcmp(bytes, want, size) == 0;
            outlive_free(bytes);
            CHECK_MSG(same, "%s is not %s after reopen", key, want);
        }
    }
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Each round: a set (succeeds), a delete of a key that is not there (fails
 * with NOT_FOUND), a delete of the key just set (succeeds): calls that fail
 * and calls that succeed from 8 threads at once, in the same groups. */
static void *set_fail_delete(void *argument) {
    struct writer *writer = argument;
    start_together(writer);
    for (int i = 0; i < writer->rounds; i++) {
        char key[32], missing[32];
        snprintf(key, sizeof key, "t%d/kept%d", writer->index, i);
        snprintf(missing, sizeof missing, "t%d/missing%d", writer->index, i);
        outlive_status set = outlive_kv_set(writer->store, key, "v", 1);
        outlive_status absent = outlive_kv_delete(writer->store, missing);
        outlive_status removed = i % 2 ? outlive_kv_delete(writer->store, key) : OUTLIVE_OK;
        if (set != OUTLIVE_OK || absent != OUTLIVE_E_NOT_FOUND || removed != OUTLIVE_OK) {
            snprintf(writer->failure, sizeof writer->failure, "round %d: set %s, delete of a missing key %s, delete %s",
                     i, outlive_status_name(set), outlive_status_name(absent), outlive_status_name(removed));
            return NULL;
        }
    }
    return NULL;
}

static void test_a_failing_call_fails_alone_and_its_group_is_kept(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store);
    atomic_int start = 0;
    struct writer writers[THREADS];
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, NULL, t, 60, &start, "", 0, 0};
    run_threads(writers, set_fail_delete);
    for (int t = 0; t < THREADS; t++) CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
    /* Even rounds kept their key, odd rounds deleted it: THREADS * 30 keys. */
    size_t count = 0;
    CHECK_OK(outlive_kv_count(store, "t", &count));
    CHECK_MSG(count == THREADS * 30, "%zu keys stored, expected %d", count, THREADS * 30);
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < 60; i++) {
            char key[32];
            snprintf(key, sizeof key, "t%d/kept%d", t, i);
            void *bytes = NULL;
            size_t size = 0;
            outlive_status status = outlive_kv_get(store, key, &bytes, &size);
            outlive_free(bytes);
            CHECK_MSG(status == (i % 2 ? OUTLIVE_E_NOT_FOUND : OUTLIVE_OK), "%s: %s", key, outlive_status_name(status));
        }
    }
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void *post_messages(void *argument) {
    struct writer *writer = argument;
    start_together(writer);
    for (int i = 0; i < writer->rounds; i++) {
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new("limited", "a message", &draft);
        char id[OUTLIVE_ID_SIZE];
        outlive_status status = outlive_message_post(writer->store, draft, id);
        outlive_message_draft_free(draft);
        if (status == OUTLIVE_OK) writer->ok_calls++;
        else if (status == OUTLIVE_E_LIMIT) writer->limited_calls++;
        else {
            snprintf(writer->failure, sizeof writer->failure, "post: %s: %s", outlive_status_name(status), outlive_last_error());
            return NULL;
        }
    }
    return NULL;
}

/* A group's calls see each other's changes: of 80 posts from 8 threads to a
 * category that allows 40, exactly 40 succeed and 40 fail with LIMIT. */
static void test_category_limit_holds_for_posts_of_8_threads(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store);
    CHECK_OK(outlive_messages_set_category_limit(store, 40));
    atomic_int start = 0;
    struct writer writers[THREADS];
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, NULL, t, 10, &start, "", 0, 0};
    run_threads(writers, post_messages);
    int posted = 0, limited = 0;
    for (int t = 0; t < THREADS; t++) {
        CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
        posted += writers[t].ok_calls;
        limited += writers[t].limited_calls;
    }
    CHECK_MSG(posted == 40 && limited == 40, "%d posted, %d refused", posted, limited);
    size_t count = 0;
    CHECK_OK(outlive_messages_count(store, "limited", &count));
    CHECK(count == 40);
    outlive_store_close(store);
    harness_remove_store(dir);
}

OUTLIVE_HANDLER(group_commit_consumer, OUTLIVE_UINTEGER(version)) { (void)version; }

static void *post_signal(void *argument) {
    struct writer *writer = argument;
    start_together(writer);
    for (int i = 0; i < writer->rounds; i++) {
        if (outlive_signal_post(writer->store, SIGNAL_ID, NULL, false) != OUTLIVE_OK) {
            snprintf(writer->failure, sizeof writer->failure, "post: %s", outlive_last_error());
            return NULL;
        }
    }
    return NULL;
}

/* Every acknowledged post of 8 threads made its own version. */
static void test_posts_of_8_threads_each_make_a_version(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app");
    CHECK(store);
    outlive_handler *handler = NULL;
    CHECK_OK(outlive_handler_new("group_commit_consumer", NULL, NULL, &handler));
    CHECK_OK(outlive_signal_consume(store, SIGNAL_ID, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED,
                                    OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    outlive_handler_free(handler);
    atomic_int start = 0;
    struct writer writers[THREADS];
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, NULL, t, 25, &start, "", 0, 0};
    run_threads(writers, post_signal);
    for (int t = 0; t < THREADS; t++) CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
    uint64_t version = 0;
    CHECK_OK(outlive_signal_lookup(store, SIGNAL_ID, &version, NULL, NULL));
    CHECK_MSG(version == THREADS * 25, "version %llu after %d posts", (unsigned long long)version, THREADS * 25);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void *set_watched_key(void *argument) {
    struct writer *writer = argument;
    start_together(writer);
    char key[32];
    snprintf(key, sizeof key, "watched/t%d", writer->index);
    for (int i = 0; i < writer->rounds; i++) {
        if (outlive_kv_set(writer->store, key, "after", 5) != OUTLIVE_OK) {
            snprintf(writer->failure, sizeof writer->failure, "set %s: %s", key, outlive_last_error());
            return NULL;
        }
    }
    return NULL;
}

/* A bit per thread whose key the observer saw: 255 once each thread's was. */
static void mark_watched(const char *key, const void *bytes, size_t size, void *context) {
    int thread = -1;
    if (bytes && size == 5 && memcmp(bytes, "after", 5) == 0 && sscanf(key, "watched/t%d", &thread) == 1
        && thread >= 0 && thread < THREADS)
        atomic_fetch_or((_Atomic int *)context, 1 << thread);
}

/* The handle's writes, grouped or alone, skip the look at the watchers for
 * the topics its last commit found unwatched while nothing was committed
 * since (UnwatchedTopics); an observer that comes meanwhile commits its
 * watcher, so the next groups look again and write for it. */
static void test_sets_of_8_threads_reach_an_observer_that_came_after_their_first_groups(void) {
    const char *dir = harness_store_location();
    outlive_store *store = open_store(dir, "app"), *reader = open_store(dir, "reader");
    CHECK(store && reader);
    atomic_int start = 0;
    struct writer writers[THREADS];
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, reader, t, 40, &start, "", 0, 0};
    run_threads(writers, set_and_read_back);
    for (int t = 0; t < THREADS; t++) CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
    _Atomic int seen = 0;
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(reader, "watched/", mark_watched, (void *)&seen, NULL, &token));
    start = 0;
    for (int t = 0; t < THREADS; t++) writers[t] = (struct writer){store, reader, t, 3, &start, "", 0, 0};
    run_threads(writers, set_watched_key);
    for (int t = 0; t < THREADS; t++) CHECK_MSG(!writers[t].failure[0], "thread %d: %s", t, writers[t].failure);
    CHECK_MSG(harness_dispatch_until(outlive_store_loop(reader), &seen, (1 << THREADS) - 1, 10),
              "the observer saw the keys of threads %#x, not of all %d", atomic_load(&seen), THREADS);
    outlive_kv_unobserve(reader, token);
    outlive_store_close(reader);
    outlive_store_close(store);
    harness_remove_store(dir);
}

HARNESS_MAIN(T(test_sets_of_8_threads_are_each_committed_when_the_call_returns),
             T(test_a_failing_call_fails_alone_and_its_group_is_kept),
             T(test_category_limit_holds_for_posts_of_8_threads),
             T(test_posts_of_8_threads_each_make_a_version),
             T(test_sets_of_8_threads_reach_an_observer_that_came_after_their_first_groups))
