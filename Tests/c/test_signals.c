/* The signals API from C in one process: ids, delivery through the loop with
 * the call-time arguments, removal, inspection, and bad input that must get a
 * precise status and store nothing. Cross-process behaviour is in
 * test_signals_processes.c. */
#include "harness.h"
#include <poll.h>

struct received { int calls; char signal[64]; uint64_t version; bool terminated; char note[64]; int32_t count; };
static struct received received;
/* The bound `count` of each call, in call order. */
static int32_t call_order[16];

/* Declared in this program (linked -rdynamic): resolvable in this process. */
OUTLIVE_HANDLER(signals_test_receive, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated),
                OUTLIVE_OPT_ID(note), OUTLIVE_INT(count)) {
    const char *text = note ? outlive_object_string(note) : NULL;
    if (received.calls < 16) call_order[received.calls] = count;
    received.calls++;
    snprintf(received.signal, sizeof received.signal, "%s", outlive_object_string(signal_id));
    snprintf(received.note, sizeof received.note, "%s", text ? text : "");
    received.version = version;
    received.terminated = terminated;
    received.count = count;
}

/* A handler value of signals_test_receive with `count` bound (NULL when
 * that fails: the caller's CHECK says so). */
static outlive_handler *new_receiver(int32_t count) {
    outlive_args *bound = NULL;
    outlive_handler *handler = NULL;
    if (outlive_args_new(&bound) == OUTLIVE_OK && outlive_args_set_int(bound, "count", count) == OUTLIVE_OK)
        outlive_handler_new("signals_test_receive", NULL, bound, &handler);
    outlive_args_free(bound);
    return handler;
}

/* Dispatches until the handler ran `want` times, for up to `rounds` waits of
 * at most 100 ms each (few rounds only where a call must *not* happen). */
static int dispatch_until_calls(outlive_store *store, int want, int rounds) {
    outlive_loop *loop = outlive_store_loop(store);
    for (int round = 0; round < rounds && received.calls < want; round++) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        poll(&pfd, 1, 100);
        outlive_loop_dispatch(loop, 0);
    }
    return received.calls >= want;
}

static size_t stored_signals(outlive_store *store) {
    outlive_signal_list *list = NULL;
    if (outlive_signal_list_new(store, NULL, 0, &list) != OUTLIVE_OK) return (size_t)-1;
    size_t count = outlive_signal_list_count(list);
    outlive_signal_list_free(list);
    return count;
}

static size_t stored_consumers(outlive_store *store) {
    outlive_signal_consumer_list *list = NULL;
    if (outlive_signal_consumer_list_new(store, NULL, NULL, 0, &list) != OUTLIVE_OK) return (size_t)-1;
    size_t count = outlive_signal_consumer_list_count(list);
    outlive_signal_consumer_list_free(list);
    return count;
}

static void test_new_ids_are_distinct_uuids_and_null_is_ignored(void) {
    char a[OUTLIVE_ID_SIZE], b[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(a);
    outlive_signal_new_id(b);
    CHECK(strlen(a) == 36 && strlen(b) == 36 && strcmp(a, b) != 0);
    CHECK(a[8] == '-' && a[13] == '-' && a[14] == '4' && a[18] == '-' && a[23] == '-');
    outlive_signal_new_id(NULL);
}

static void test_handler_gets_payload_signal_id_version_and_terminated_on_the_loop(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    memset(&received, 0, sizeof received);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *handler = new_receiver(7);
    CHECK(handler);
    CHECK_OK(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED, OUTLIVE_LIFETIME_THIS_RUN, "acct", NULL));
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    CHECK_OK(outlive_args_set_string(payload, "note", "half"));
    CHECK_OK(outlive_signal_post(store, signal, payload, false));
    CHECK(received.calls == 0);  /* only inside dispatch */
    CHECK(dispatch_until_calls(store, 1, 100));
    CHECK(!strcmp(received.signal, signal) && received.version == 1 && !received.terminated);
    CHECK(!strcmp(received.note, "half") && received.count == 7);
    CHECK_OK(outlive_args_set_string(payload, "note", "done"));
    CHECK_OK(outlive_signal_post(store, signal, payload, true));
    CHECK(dispatch_until_calls(store, 2, 100));
    CHECK(received.version == 2 && received.terminated && !strcmp(received.note, "done"));
    outlive_args_free(payload);
    outlive_handler_free(handler);
    CHECK(stored_signals(store) == 0 && stored_consumers(store) == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_removed_consumers_are_not_delivered_and_take_their_record(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    memset(&received, 0, sizeof received);
    char signal[OUTLIVE_ID_SIZE], other[OUTLIVE_ID_SIZE], consumer[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_signal_new_id(other);
    outlive_handler *handler = new_receiver(1);
    CHECK(handler);
    CHECK_OK(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_PROCESS, NULL, consumer));
    CHECK(strlen(consumer) == 36);
    CHECK_OK(outlive_signal_consume(store, other, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, "account-1", NULL));
    CHECK_OK(outlive_signal_consume(store, other, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, "account-1", NULL));
    outlive_handler_free(handler);

    outlive_signal_consumer_list *list = NULL;
    CHECK_OK(outlive_signal_consumer_list_new(store, signal, NULL, 0, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 1);
    CHECK(!strcmp(outlive_signal_consumer_list_id(list, 0), consumer));
    CHECK(!strcmp(outlive_signal_consumer_list_signal_id(list, 0), signal));
    CHECK(!strcmp(outlive_signal_consumer_list_handler_name(list, 0), "signals_test_receive"));
    CHECK(outlive_signal_consumer_list_scope(list, 0) == NULL);
    CHECK(!strcmp(outlive_signal_consumer_list_process(list, 0), "app"));
    CHECK(!strcmp(outlive_signal_consumer_list_run_id(list, 0), outlive_store_run_id(store)));
    CHECK(outlive_signal_consumer_list_delivery(list, 0) == OUTLIVE_DELIVERY_ONCE);
    CHECK(outlive_signal_consumer_list_lifetime(list, 0) == OUTLIVE_LIFETIME_PROCESS);
    CHECK(outlive_signal_consumer_list_last_version(list, 0) == 0);
    CHECK(outlive_signal_consumer_list_delivering_run_id(list, 0) == NULL);
    CHECK(outlive_signal_consumer_list_id(list, 1) == NULL && outlive_signal_consumer_list_delivery(list, 1) == 0);
    CHECK(outlive_signal_consumer_list_id(NULL, 0) == NULL && outlive_signal_consumer_list_count(NULL) == 0);
    outlive_signal_consumer_list_free(list);
    outlive_signal_consumer_list_free(NULL);
    /* Paging, as every list: all three consumers, then one page of one after the first. */
    CHECK_OK(outlive_signal_consumer_list_new(store, NULL, NULL, 0, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 3);
    char first[OUTLIVE_ID_SIZE], third[OUTLIVE_ID_SIZE];
    snprintf(first, sizeof first, "%s", outlive_signal_consumer_list_id(list, 0));
    snprintf(third, sizeof third, "%s", outlive_signal_consumer_list_id(list, 2));
    outlive_signal_consumer_list_free(list);
    CHECK_OK(outlive_signal_consumer_list_new(store, NULL, first, 1, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 1 && strcmp(outlive_signal_consumer_list_id(list, 0), first) != 0);
    outlive_signal_consumer_list_free(list);
    CHECK_OK(outlive_signal_consumer_list_new(store, NULL, third, 0, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 0);
    outlive_signal_consumer_list_free(list);
    list = NULL;
    CHECK_STATUS(outlive_signal_consumer_list_new(store, NULL, "00000000-0000-4000-8000-000000000000", 0, &list),
                 OUTLIVE_E_NOT_FOUND);
    CHECK(list == NULL);

    uint64_t version = 99;
    size_t consumers = 99;
    bool terminated = true;
    CHECK_OK(outlive_signal_lookup(store, other, &version, &consumers, &terminated));
    CHECK(version == 0 && consumers == 2 && !terminated);

    CHECK_OK(outlive_signal_consumer_remove(store, consumer));
    CHECK_STATUS(outlive_signal_consumer_remove(store, consumer), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_signal_lookup(store, signal, &version, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    size_t removed = 0;
    CHECK_OK(outlive_signal_consumers_remove_scope(store, "account-1", &removed));
    CHECK(removed == 2);
    CHECK_OK(outlive_signal_consumers_remove_scope(store, "account-1", NULL));
    CHECK(stored_signals(store) == 0 && stored_consumers(store) == 0);
    CHECK_OK(outlive_signal_post(store, signal, NULL, true));
    CHECK_OK(outlive_signal_post(store, other, NULL, true));
    CHECK(!dispatch_until_calls(store, 1, 5));
    CHECK(received.calls == 0);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_signal_list_pages_in_id_order(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_nowhere", NULL, NULL, &handler);
    CHECK(handler);
    char ids[5][OUTLIVE_ID_SIZE];
    for (int i = 0; i < 5; i++) {
        outlive_signal_new_id(ids[i]);
        CHECK_OK(outlive_signal_consume(store, ids[i], handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    }
    outlive_handler_free(handler);
    CHECK_OK(outlive_signal_post(store, ids[2], NULL, false));
    outlive_signal_list *page = NULL;
    CHECK_OK(outlive_signal_list_new(store, NULL, 3, &page));
    CHECK(outlive_signal_list_count(page) == 3);
    char last[OUTLIVE_ID_SIZE];
    snprintf(last, sizeof last, "%s", outlive_signal_list_id(page, 2));
    CHECK(strcmp(outlive_signal_list_id(page, 0), outlive_signal_list_id(page, 1)) < 0);
    CHECK(outlive_signal_list_id(page, 3) == NULL && outlive_signal_list_version(page, 3) == 0);
    outlive_signal_list_free(page);
    CHECK_OK(outlive_signal_list_new(store, last, 0, &page));
    CHECK(outlive_signal_list_count(page) == 2);
    CHECK(strcmp(outlive_signal_list_id(page, 0), last) > 0);
    outlive_signal_list_free(page);
    CHECK_OK(outlive_signal_list_new(store, NULL, 0, &page));
    int posted = 0;
    for (size_t i = 0; i < outlive_signal_list_count(page); i++) {
        CHECK(outlive_signal_list_consumer_count(page, i) == 1 && !outlive_signal_list_terminated(page, i));
        if (!strcmp(outlive_signal_list_id(page, i), ids[2])) posted = outlive_signal_list_version(page, i) == 1;
    }
    CHECK(posted);
    outlive_signal_list_free(page);
    outlive_signal_list_free(NULL);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_bad_input_gets_precise_statuses_and_stores_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_test_receive", NULL, NULL, &handler);
    CHECK(handler);
    char signal[OUTLIVE_ID_SIZE], out[OUTLIVE_ID_SIZE] = "untouched";
    outlive_signal_new_id(signal);
    const outlive_status bad = OUTLIVE_E_INVALID_ARGUMENT;
    const outlive_delivery once = OUTLIVE_DELIVERY_ONCE;
    const outlive_lifetime run = OUTLIVE_LIFETIME_THIS_RUN;
    CHECK_STATUS(outlive_signal_consume(NULL, signal, handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, NULL, handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, NULL, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "", handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "not-a-signal-id", handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "123e4567-e89b-42d3-a456-42661417400g", handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "123e4567-e89b-42d3-a456-4266141740001", handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "123e4567-e89b-42d3-a456-42661417\xff\xfe\xfd\xfc", handler, once, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, (outlive_delivery)0, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, (outlive_delivery)3, run, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, (outlive_lifetime)0, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, (outlive_lifetime)4, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, (outlive_lifetime)-1, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, run, "", NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, run, "bad\xc3\x28utf8", NULL), bad);
    static char long_scope[OUTLIVE_SIGNAL_MAX_SCOPE_SIZE + 2];
    memset(long_scope, 's', OUTLIVE_SIGNAL_MAX_SCOPE_SIZE + 1);
    CHECK_STATUS(outlive_signal_consume(store, signal, handler, once, run, long_scope, NULL), bad);
    CHECK_STATUS(outlive_signal_consume(store, "nope", handler, once, run, NULL, out), bad);
    CHECK(!strcmp(out, "untouched"));
    CHECK(strlen(outlive_last_error()) > 0);
    CHECK_STATUS(outlive_signal_post(NULL, signal, NULL, true), bad);
    CHECK_STATUS(outlive_signal_post(store, NULL, NULL, true), bad);
    CHECK_STATUS(outlive_signal_post(store, "xyz", NULL, true), bad);
    CHECK_STATUS(outlive_signal_consumer_remove(store, NULL), bad);
    CHECK_STATUS(outlive_signal_consumer_remove(store, "xyz"), bad);
    CHECK_STATUS(outlive_signal_consumer_remove(NULL, signal), bad);
    CHECK_STATUS(outlive_signal_consumers_remove_scope(store, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_consumers_remove_scope(store, "", NULL), bad);
    CHECK_STATUS(outlive_signal_lookup(store, NULL, NULL, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_lookup(store, "xyz", NULL, NULL, NULL), bad);
    CHECK_STATUS(outlive_signal_list_new(store, NULL, 0, NULL), bad);
    CHECK_STATUS(outlive_signal_consumer_list_new(store, NULL, NULL, 0, NULL), bad);
    outlive_signal_list *list = NULL;
    CHECK_STATUS(outlive_signal_list_new(store, "xyz", 0, &list), bad);
    CHECK(list == NULL);
    outlive_signal_consumer_list *consumers = NULL;
    CHECK_STATUS(outlive_signal_consumer_list_new(store, "xyz", NULL, 0, &consumers), bad);
    CHECK(consumers == NULL);
    CHECK_STATUS(outlive_signal_consumer_list_new(NULL, NULL, NULL, 0, &consumers), bad);

    /* A payload may not carry the arguments the library binds. */
    CHECK_OK(outlive_signal_consume(store, signal, handler, once, run, NULL, NULL));
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    CHECK_OK(outlive_args_set_uinteger(payload, "version", 5));
    CHECK_STATUS(outlive_signal_post(store, signal, payload, true), bad);
    outlive_args_free(payload);
    uint64_t version = 99;
    CHECK_OK(outlive_signal_lookup(store, signal, &version, NULL, NULL));
    CHECK(version == 0);
    CHECK(stored_signals(store) == 1 && stored_consumers(store) == 1);

    /* An invalidated handler cannot consume. */
    CHECK_OK(outlive_handler_invalidate(handler, NULL));
    char fresh[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(fresh);
    CHECK_STATUS(outlive_signal_consume(store, fresh, handler, once, run, NULL, NULL), OUTLIVE_E_INVALIDATED);
    CHECK(stored_signals(store) == 1 && stored_consumers(store) == 1);
    outlive_handler_free(handler);

    /* A closed handle. */
    outlive_store *closed = NULL;
    CHECK_OK(outlive_store_open(dir, "other", NULL, NULL, &closed));
    outlive_store_close(store);
    CHECK(stored_signals(closed) == 0);
    outlive_store_close(closed);
    harness_remove_store(dir);
}

static void test_upper_case_ids_name_the_same_signal(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE], upper[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    for (int i = 0; i < OUTLIVE_ID_SIZE; i++) upper[i] = (char)((signal[i] >= 'a' && signal[i] <= 'f') ? signal[i] - 32 : signal[i]);
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_nowhere", NULL, NULL, &handler);
    CHECK_OK(outlive_signal_consume(store, upper, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    outlive_handler_free(handler);
    CHECK_OK(outlive_signal_post(store, signal, NULL, false));
    uint64_t version = 0;
    CHECK_OK(outlive_signal_lookup(store, upper, &version, NULL, NULL));
    CHECK(version == 1);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* What SQLite's triggers refuse (a consumer or a delivery claim bound to a
 * run the store no longer registers), PostgreSQL refuses by a check in the
 * insert and claim_run's foreign key: a handle whose run another process
 * ended neither registers consumers nor delivers shared ones. */
static void test_a_run_the_store_no_longer_has_neither_consumes_nor_claims_on_postgresql(void) {
    POSTGRESQL_ONLY();
    const char *location = harness_store_location();
    outlive_store *ended = NULL, *live = NULL;
    CHECK_OK(outlive_store_open(location, "ended", NULL, NULL, &ended));
    CHECK_OK(outlive_store_open(location, "live", NULL, NULL, &live));
    memset(&received, 0, sizeof received);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_test_receive", NULL, NULL, &handler);
    CHECK(handler);
    /* Resolvable in this process, so `ended` would deliver it; `live` never dispatches. */
    CHECK_OK(outlive_signal_consume(live, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    char sql[512];
    snprintf(sql, sizeof sql, "DELETE FROM outlive_runs WHERE run_id = '%s'", outlive_store_run_id(ended));
    CHECK(harness_psql(location, sql, NULL, 0));
    CHECK_STATUS(outlive_signal_consume(ended, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL),
                 OUTLIVE_E_STATE);
    CHECK(stored_consumers(live) == 1);
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    CHECK_OK(outlive_args_set_int(payload, "count", 1));
    CHECK_OK(outlive_signal_post(live, signal, payload, false));
    outlive_args_free(payload);
    CHECK(!dispatch_until_calls(ended, 1, 10));
    outlive_signal_consumer_list *list = NULL;
    CHECK_OK(outlive_signal_consumer_list_new(live, signal, NULL, 0, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 1);
    CHECK(outlive_signal_consumer_list_delivering_run_id(list, 0) == NULL);
    outlive_signal_consumer_list_free(list);
    outlive_handler_free(handler);
    outlive_store_close(ended);
    outlive_store_close(live);
}

/* Registers `count` consumers of a new signal (its id into signal), the
 * i-th (from 1) a receiver with count i: all this-run, or this-run and
 * process alternating. Clears the calls noted so far; the first consumer's
 * id into first (nullable). Whether every step succeeded. */
static bool consume_in_order(outlive_store *store, char signal[OUTLIVE_ID_SIZE], int32_t count,
                             outlive_delivery delivery, bool alternate, char first[OUTLIVE_ID_SIZE]) {
    memset(&received, 0, sizeof received);
    memset(call_order, 0, sizeof call_order);
    outlive_signal_new_id(signal);
    for (int32_t i = 1; i <= count; i++) {
        outlive_handler *handler = new_receiver(i);
        if (!handler) return false;
        outlive_lifetime lifetime = alternate && i % 2 == 0 ? OUTLIVE_LIFETIME_PROCESS : OUTLIVE_LIFETIME_THIS_RUN;
        outlive_status status = outlive_signal_consume(store, signal, handler, delivery, lifetime, NULL,
                                                       i == 1 ? first : NULL);
        outlive_handler_free(handler);
        if (status != OUTLIVE_OK) return false;
    }
    return true;
}

/* Consumers of one signal, of both kinds a process delivers (its run's and
 * its name's, which it claims first), each a handler with its own bound
 * count: one post calls them in the order they were registered, not in the
 * order of their random ids. */
static void test_one_version_calls_the_consumers_in_registration_order(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE];
    enum { CONSUMERS = 8 };
    CHECK(consume_in_order(store, signal, CONSUMERS, OUTLIVE_DELIVERY_ONCE, true, NULL));
    CHECK_OK(outlive_signal_post(store, signal, NULL, false));
    CHECK(dispatch_until_calls(store, CONSUMERS, 100));
    CHECK(received.calls == CONSUMERS);
    for (int i = 0; i < CONSUMERS; i++) CHECK(call_order[i] == i + 1);
    outlive_store_close(store);
    harness_remove_store(dir);
}

/* Sets one column of one consumer's row behind the library's back, as a
 * crafted store may hold it: `value` on SQLite, `postgresql_value` on
 * PostgreSQL (whose typed columns refuse some damage). Whether it did. */
static bool damage_consumer(const char *location, const char *consumer, const char *column, const char *value,
                            const char *postgresql_value) {
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE outlive_signal_consumers SET %s = %s WHERE consumer_id = '%s'", column,
             harness_postgresql() ? postgresql_value : value, consumer);
    return harness_store_sql(location, sql, NULL, 0);
}

/* A consumer's stored time damaged (text on SQLite, NaN on PostgreSQL, as a
 * crafted store may hold): it only orders the calls, so the delivery still
 * reaches every consumer, the damaged one last. */
static void test_a_consumer_with_a_damaged_time_is_called_last_and_the_others_in_order(void) {
    const char *location = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE], first[OUTLIVE_ID_SIZE];
    CHECK(consume_in_order(store, signal, 3, OUTLIVE_DELIVERY_ONCE, false, first));
    CHECK(damage_consumer(location, first, "created", "'damaged'", "'NaN'"));
    CHECK_OK(outlive_signal_post(store, signal, NULL, false));
    CHECK(dispatch_until_calls(store, 3, 100));
    CHECK(received.calls == 3 && call_order[0] == 2 && call_order[1] == 3 && call_order[2] == 1);
    outlive_store_close(store);
    harness_remove_store(location);
}

/* Change feed entries of `topic` stored, read behind the library's back;
 * -1 when they cannot be read. */
static long feed_entries(const char *location, const char *topic) {
    char sql[128], out[64];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM outlive_feed WHERE topic = '%s'", topic);
    return harness_store_sql(location, sql, out, sizeof out) ? strtol(out, NULL, 10) : -1;
}

/* Posts that only the posting handle's run consumes are handed to its own
 * loop in memory: no feed entry is written for them, and every version is
 * delivered. Once another handle (another run) watches signals, a post
 * writes its entry again, and the first handle's consumer still gets it. */
static void test_a_post_only_its_own_handle_consumes_is_delivered_without_a_feed_entry(void) {
    const char *location = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE];
    CHECK(consume_in_order(store, signal, 1, OUTLIVE_DELIVERY_UNTIL_TERMINATED, false, NULL));
    long before = feed_entries(location, "signal");
    CHECK(before >= 0);
    for (int post = 1; post <= 3; post++) {
        CHECK_OK(outlive_signal_post(store, signal, NULL, false));
        CHECK(dispatch_until_calls(store, post, 100));
    }
    CHECK(received.calls == 3 && received.version == 3);
    CHECK_MSG(feed_entries(location, "signal") == before, "%ld entries, %ld before", feed_entries(location, "signal"), before);
    outlive_store *other = NULL;
    CHECK_OK(outlive_store_open(location, "other", NULL, NULL, &other));
    CHECK_OK(outlive_signal_post(store, signal, NULL, false));
    CHECK(dispatch_until_calls(store, 4, 100));
    CHECK(received.calls == 4 && received.version == 4);
    CHECK(feed_entries(location, "signal") == before + 1);
    outlive_store_close(other);
    outlive_store_close(store);
    harness_remove_store(location);
}

static char errors_logged[900];
static int errors_counted;
static void keep_errors(outlive_log_level level, const char *message, void *context) {
    (void)context;
    if (level != OUTLIVE_LOG_ERROR) return;
    errors_counted++;
    size_t used = strlen(errors_logged);
    snprintf(errors_logged + used, sizeof errors_logged - used, "%s\n", message);
}

/* A consumer row damaged where a delivery cannot do without the value (its
 * delivery mode: text on SQLite, a mode that does not exist on PostgreSQL):
 * that consumer is skipped and logged as damaged, once per handle however
 * often its signal is posted, and the signal's other consumers are still
 * delivered every version (a strict read failed the whole query: none was). */
static void test_a_damaged_consumer_row_is_logged_once_and_the_others_are_delivered(void) {
    const char *location = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(location, "app", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE], first[OUTLIVE_ID_SIZE];
    CHECK(consume_in_order(store, signal, 3, OUTLIVE_DELIVERY_UNTIL_TERMINATED, false, first));
    CHECK(damage_consumer(location, first, "delivery", "'every'", "99"));
    errors_logged[0] = '\0';
    errors_counted = 0;
    CHECK_OK(outlive_log_set_handler(keep_errors, OUTLIVE_LOG_ERROR, NULL, NULL));
    for (int post = 1; post <= 2; post++) {
        CHECK_OK(outlive_signal_post(store, signal, NULL, false));
        CHECK(dispatch_until_calls(store, 2 * post, 100));
    }
    outlive_log_set_handler(NULL, OUTLIVE_LOG_ERROR, NULL, NULL);
    CHECK(received.calls == 4 && call_order[0] == 2 && call_order[1] == 3 && call_order[2] == 2 && call_order[3] == 3);
    CHECK_MSG(errors_counted == 1 && strstr(errors_logged, first) && strstr(errors_logged, "damaged"), "log:\n%s",
              errors_logged);
    outlive_store_close(store);
    harness_remove_store(location);
}

/* A key-value observer that removes the consumer below, on the loop thread. */
static outlive_store *removing_store;
static char removing_consumer[OUTLIVE_ID_SIZE];
static int removals, calls_at_removal = -1;
static void remove_consumer_when_observed(const char *key, const void *bytes, size_t size, void *context) {
    (void)key; (void)bytes; (void)size; (void)context;
    if (outlive_signal_consumer_remove(removing_store, removing_consumer) == OUTLIVE_OK) {
        removals++;
        calls_at_removal = received.calls;
    }
}

/* The dispatch reads what is due for every topic before it runs any callback
 * (one read transaction), and serves "kv" before "signal": the observer removes
 * the consumer after its delivery was read and before it starts. The header
 * promises no delivery starts after a removal on the loop thread returned. */
static void test_a_consumer_removed_by_an_earlier_callback_of_the_dispatch_is_not_delivered(void) {
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(harness_store_location(), "app", NULL, NULL, &store));
    memset(&received, 0, sizeof received);
    removing_store = store;
    removals = 0;
    calls_at_removal = -1;
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_handler *handler = new_receiver(1);
    CHECK(handler);
    CHECK_OK(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED, OUTLIVE_LIFETIME_THIS_RUN,
                                    NULL, removing_consumer));
    outlive_handler_free(handler);
    uint64_t token = 0;
    CHECK_OK(outlive_kv_observe(store, "remove-", remove_consumer_when_observed, NULL, NULL, &token));
    /* Both committed before the loop runs: one dispatch reads both entries. */
    CHECK_OK(outlive_kv_set(store, "remove-now", "1", 1));
    CHECK_OK(outlive_signal_post(store, signal, NULL, false));
    outlive_loop *loop = outlive_store_loop(store);
    for (int round = 0; round < 20 && removals == 0; round++) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        poll(&pfd, 1, 100);
        outlive_loop_dispatch(loop, 0);
    }
    dispatch_until_calls(store, calls_at_removal + 1, 5);
    CHECK(removals == 1);
    CHECK(calls_at_removal == 0);
    CHECK(received.calls == 0);
    outlive_store_close(store);
}

HARNESS_MAIN(
    T(test_new_ids_are_distinct_uuids_and_null_is_ignored),
    T(test_handler_gets_payload_signal_id_version_and_terminated_on_the_loop),
    T(test_removed_consumers_are_not_delivered_and_take_their_record),
    T(test_signal_list_pages_in_id_order),
    T(test_bad_input_gets_precise_statuses_and_stores_nothing),
    T(test_upper_case_ids_name_the_same_signal),
    T(test_a_run_the_store_no_longer_has_neither_consumes_nor_claims_on_postgresql),
    T(test_a_consumer_removed_by_an_earlier_callback_of_the_dispatch_is_not_delivered),
    T(test_one_version_calls_the_consumers_in_registration_order),
    T(test_a_consumer_with_a_damaged_time_is_called_last_and_the_others_in_order),
    T(test_a_damaged_consumer_row_is_logged_once_and_the_others_are_delivered),
    T(test_a_post_only_its_own_handle_consumes_is_delivered_without_a_feed_entry),
)
