/* Signals across real processes: consumers in signals_peer processes (handler
 * signals_report from libsignals_handlers.so, printing a DELIVERED line per
 * delivery), posts from this process, which never resolves that handler. */
#include "harness.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

struct peer { pid_t pid; int in; int out; char buffer[8192]; size_t used; };

static int peer_line(struct peer *peer, char *line, size_t size, int timeout_ms);

static int hang_in_handler;  /* the next peer started gets SIGNALS_PEER_HANG */

/* Starts signals_peer DIR NAME [--load lib] ARGS... and waits for READY. */
static int peer_start(struct peer *peer, const char *dir, const char *name, int load, char *const *extra) {
    char program[4096], library[4096];
    snprintf(program, sizeof program, "%s/signals_peer", harness_bin_dir());
    snprintf(library, sizeof library, "%s/libsignals_handlers.so", harness_bin_dir());
    char *argv[32];
    int argc = 0;
    argv[argc++] = program;
    argv[argc++] = (char *)dir;
    argv[argc++] = (char *)name;
    if (load) { argv[argc++] = "--load"; argv[argc++] = library; }
    for (int i = 0; extra && extra[i] && argc < 31; i++) argv[argc++] = extra[i];
    argv[argc] = NULL;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return 0;
    memset(peer, 0, sizeof *peer);
    peer->pid = fork();
    if (peer->pid == 0) {
        dup2(in[0], 0); dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        if (hang_in_handler) setenv("SIGNALS_PEER_HANG", "1", 1);
        execv(program, argv);
        _exit(127);
    }
    hang_in_handler = 0;
    close(in[0]); close(out[1]);
    peer->in = in[1];
    peer->out = out[0];
    char line[256];
    return peer_line(peer, line, sizeof line, 10000) && strcmp(line, "READY") == 0;
}

/* The next line the peer printed, waiting up to timeout_ms; 0 at EOF/timeout. */
static int peer_line(struct peer *peer, char *line, size_t size, int timeout_ms) {
    for (;;) {
        char *newline = memchr(peer->buffer, '\n', peer->used);
        if (newline) {
            size_t length = (size_t)(newline - peer->buffer);
            snprintf(line, size, "%.*s", (int)length, peer->buffer);
            memmove(peer->buffer, newline + 1, peer->used - length - 1);
            peer->used -= length + 1;
            return 1;
        }
        struct pollfd pfd = {.fd = peer->out, .events = POLLIN};
        int ready = poll(&pfd, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return 0;
        ssize_t got = read(peer->out, peer->buffer + peer->used, sizeof peer->buffer - peer->used - 1);
        if (got <= 0) return 0;
        peer->used += (size_t)got;
    }
}

/* Closes the peer's stdin (it closes its store and exits), collects what it
 * printed meanwhile into rest (may be NULL) and waits for it. 1: exit 0. */
static int peer_finish(struct peer *peer, char *rest, size_t size) {
    close(peer->in);
    size_t length = 0;
    char line[256];
    while (peer_line(peer, line, sizeof line, 10000)) {
        if (rest && length + strlen(line) + 2 < size) length += (size_t)snprintf(rest + length, size - length, "%s\n", line);
    }
    if (rest) rest[length] = 0;
    close(peer->out);
    int status = 0;
    return waitpid(peer->pid, &status, 0) == peer->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void peer_kill(struct peer *peer) {
    kill(peer->pid, SIGKILL);
    waitpid(peer->pid, NULL, 0);
    close(peer->in);
    close(peer->out);
}

struct delivery { char signal[64]; unsigned long long version; int terminated; char note[64]; int pid; };

static int parse(const char *line, struct delivery *d) {
    return sscanf(line, "DELIVERED %63s %llu %d %63s %d", d->signal, &d->version, &d->terminated, d->note, &d->pid) == 5;
}

static outlive_status post_note(outlive_store *store, const char *signal, const char *note, bool terminates) {
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    if (!payload) return OUTLIVE_E_NO_MEMORY;
    outlive_status status = outlive_args_set_string(payload, "note", note);
    if (status == OUTLIVE_OK) status = outlive_signal_post(store, signal, payload, terminates);
    outlive_args_free(payload);
    return status;
}

static int stored(outlive_store *store, const char *signal) {
    return outlive_signal_lookup(store, signal, NULL, NULL, NULL) == OUTLIVE_OK;
}

static void test_once_consumer_in_another_process_gets_exactly_one_version(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    struct peer peer;
    char *extra[] = {"consume", signal, "once", "this_run", NULL};
    CHECK(peer_start(&peer, dir, "app", 1, extra));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    CHECK_OK(post_note(store, signal, "first", false));
    char line[256];
    struct delivery d;
    CHECK_MSG(peer_line(&peer, line, sizeof line, 10000) && parse(line, &d), "no delivery");
    CHECK(!strcmp(d.signal, signal) && d.version == 1 && d.terminated == 0 && !strcmp(d.note, "first") && d.pid == peer.pid);
    CHECK_OK(post_note(store, signal, "second", false));
    char rest[1024];
    CHECK(peer_finish(&peer, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "delivered again: %.200s", rest);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_until_terminated_consumer_gets_versions_1_to_10_in_order_then_nothing(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    struct peer peer;
    char *extra[] = {"consume", signal, "until", "this_run", NULL};
    CHECK(peer_start(&peer, dir, "app", 1, extra));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    for (unsigned long long version = 1; version <= 10; version++) {
        char note[32];
        snprintf(note, sizeof note, "step%llu", version);
        CHECK_OK(post_note(store, signal, note, version == 10));
        char line[256];
        struct delivery d;
        CHECK_MSG(peer_line(&peer, line, sizeof line, 10000) && parse(line, &d), "version %llu not delivered", version);
        CHECK_MSG(d.version == version && !strcmp(d.note, note) && d.terminated == (version == 10), "got: %s", line);
    }
    /* After the terminating version: not delivered, nothing stored. */
    CHECK_OK(post_note(store, signal, "late", false));
    char rest[1024];
    CHECK(peer_finish(&peer, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "delivered after termination: %.200s", rest);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_post_after_a_terminating_post_is_not_delivered(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    struct peer peer;
    char *extra[] = {"consume", signal, "until", "process", NULL};
    CHECK(peer_start(&peer, dir, "app", 0, extra));
    CHECK(peer_finish(&peer, NULL, 0));  /* its consumer waits for the next run of "app" */
    CHECK_OK(post_note(store, signal, "final", true));
    CHECK_OK(post_note(store, signal, "after", false));
    uint64_t version = 0;
    bool terminated = false;
    CHECK_OK(outlive_signal_lookup(store, signal, &version, NULL, &terminated));
    CHECK(version == 1 && terminated);
    CHECK(peer_start(&peer, dir, "app", 1, NULL));
    char line[256];
    struct delivery d;
    CHECK(peer_line(&peer, line, sizeof line, 10000) && parse(line, &d));
    CHECK_MSG(d.version == 1 && d.terminated == 1 && !strcmp(d.note, "final"), "got: %s", line);
    char rest[1024];
    CHECK(peer_finish(&peer, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "delivered after termination: %.200s", rest);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_process_consumer_is_delivered_in_the_next_run_of_its_process_name(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    struct peer first;
    char *extra[] = {"consume", signal, "once", "process", NULL};
    CHECK(peer_start(&first, dir, "app", 1, extra));
    CHECK(peer_finish(&first, NULL, 0));
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    CHECK_OK(post_note(store, signal, "result", true));
    /* A process of another name that resolves the handler does not take it. */
    struct peer other;
    CHECK(peer_start(&other, dir, "other", 1, NULL));
    struct peer next;
    CHECK(peer_start(&next, dir, "app", 1, NULL));
    char line[256];
    struct delivery d;
    CHECK_MSG(peer_line(&next, line, sizeof line, 10000) && parse(line, &d), "the next run did not deliver");
    CHECK(!strcmp(d.signal, signal) && d.version == 1 && !strcmp(d.note, "result") && d.pid == next.pid);
    CHECK(peer_finish(&next, NULL, 0));
    char rest[1024];
    CHECK(peer_finish(&other, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "another process name delivered: %.200s", rest);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_this_run_consumer_is_never_delivered_after_its_run_was_killed(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE], sentinel[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_signal_new_id(sentinel);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    struct peer victim;
    char *extra[] = {"consume", signal, "until", "this_run", NULL};
    CHECK(peer_start(&victim, dir, "app", 1, extra));
    CHECK(stored(store, signal));
    peer_kill(&victim);
    /* The death is seen through the liveness lock: this process's loop wakes
     * and removes the dead run's consumers (and the record with them). */
    outlive_loop *loop = outlive_store_loop(store);
    for (int round = 0; round < 100 && stored(store, signal); round++) {
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        poll(&pfd, 1, 100);
        outlive_loop_dispatch(loop, 0);
    }
    CHECK_MSG(!stored(store, signal), "the killed run's consumer is still stored");
    /* The next run of the same name does not get it either. */
    struct peer next;
    char *next_extra[] = {"consume", sentinel, "once", "this_run", NULL};
    CHECK(peer_start(&next, dir, "app", 1, next_extra));
    CHECK_OK(post_note(store, signal, "too-late", true));
    CHECK(!stored(store, signal));
    CHECK_OK(post_note(store, sentinel, "sentinel", true));
    char line[256];
    struct delivery d;
    CHECK(peer_line(&next, line, sizeof line, 10000) && parse(line, &d));
    CHECK_MSG(!strcmp(d.signal, sentinel), "delivered after its run died: %s", line);
    char rest[1024];
    CHECK(peer_finish(&next, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "unexpected: %.200s", rest);
    outlive_store_close(store);
    harness_remove_store(dir);
}

#define ANY_SIGNALS 30

static void test_any_process_consumers_are_delivered_exactly_once_among_three_processes(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    char signals[ANY_SIGNALS][OUTLIVE_ID_SIZE];
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_report", NULL, NULL, &handler);
    CHECK(handler);
    for (int i = 0; i < ANY_SIGNALS; i++) {
        outlive_signal_new_id(signals[i]);
        CHECK_OK(outlive_signal_consume(store, signals[i], handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    }
    outlive_handler_free(handler);
    struct peer peers[3];
    const char *names[3] = {"worker-a", "worker-b", "worker-c"};
    for (int p = 0; p < 3; p++) CHECK(peer_start(&peers[p], dir, names[p], 1, NULL));
    for (int i = 0; i < ANY_SIGNALS; i++) CHECK_OK(post_note(store, signals[i], "any", true));
    int count[ANY_SIGNALS] = {0}, total = 0, by_peer[3] = {0};
    for (int round = 0; total < ANY_SIGNALS && round < 1000; round++) {
        struct pollfd fds[3];
        for (int p = 0; p < 3; p++) fds[p] = (struct pollfd){.fd = peers[p].out, .events = POLLIN};
        if (poll(fds, 3, 10000) <= 0) break;
        for (int p = 0; p < 3; p++) {
            if (!(fds[p].revents & POLLIN)) continue;
            char line[256];
            struct delivery d;
            if (!peer_line(&peers[p], line, sizeof line, 0) || !parse(line, &d)) continue;
            for (int i = 0; i < ANY_SIGNALS; i++) if (!strcmp(d.signal, signals[i])) count[i]++;
            by_peer[p]++;
            total++;
            /* Drain lines already buffered. */
            while (peer_line(&peers[p], line, sizeof line, 0) && parse(line, &d)) {
                for (int i = 0; i < ANY_SIGNALS; i++) if (!strcmp(d.signal, signals[i])) count[i]++;
                by_peer[p]++;
                total++;
            }
        }
    }
    for (int p = 0; p < 3; p++) {
        char rest[4096];
        CHECK(peer_finish(&peers[p], rest, sizeof rest));
        struct delivery d;
        for (char *line = strtok(rest, "\n"); line; line = strtok(NULL, "\n")) {
            if (!parse(line, &d)) continue;
            for (int i = 0; i < ANY_SIGNALS; i++) if (!strcmp(d.signal, signals[i])) count[i]++;
            total++;
        }
    }
    for (int i = 0; i < ANY_SIGNALS; i++) CHECK_MSG(count[i] == 1, "signal %d delivered %d times", i, count[i]);
    CHECK(total == ANY_SIGNALS);
    outlive_signal_list *list = NULL;
    CHECK_OK(outlive_signal_list_new(store, NULL, 0, &list));
    CHECK(outlive_signal_list_count(list) == 0);
    outlive_signal_list_free(list);
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_version_claimed_by_a_process_killed_inside_the_handler_is_delivered_by_another(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_report", NULL, NULL, &handler);
    CHECK(handler);
    CHECK_OK(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    outlive_handler_free(handler);
    struct peer dying;
    hang_in_handler = 1;
    CHECK(peer_start(&dying, dir, "worker-a", 1, NULL));
    CHECK_OK(post_note(store, signal, "result", true));
    char line[256];
    CHECK_MSG(peer_line(&dying, line, sizeof line, 10000) && !strncmp(line, "HANGING ", 8), "the first process did not take it");
    /* While its deliverer lives, the claim holds: another process leaves it. */
    outlive_signal_consumer_list *list = NULL;
    CHECK_OK(outlive_signal_consumer_list_new(store, signal, NULL, 0, &list));
    CHECK(outlive_signal_consumer_list_count(list) == 1 && outlive_signal_consumer_list_delivering_run_id(list, 0) != NULL);
    outlive_signal_consumer_list_free(list);
    struct peer survivor;
    CHECK(peer_start(&survivor, dir, "worker-b", 1, NULL));
    CHECK(!peer_line(&survivor, line, sizeof line, 300));
    peer_kill(&dying);
    /* Its death releases the claim at once; the same version is delivered again. */
    struct delivery d;
    CHECK_MSG(peer_line(&survivor, line, sizeof line, 10000) && parse(line, &d), "not delivered after the deliverer died");
    CHECK(!strcmp(d.signal, signal) && d.version == 1 && !strcmp(d.note, "result"));
    char rest[1024];
    CHECK(peer_finish(&survivor, rest, sizeof rest));
    CHECK_MSG(rest[0] == 0, "delivered twice: %.200s", rest);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_consumer_unresolved_in_a_process_waits_for_one_that_resolves_it(void) {
    const char *dir = harness_store_location();
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_report", NULL, NULL, &handler);
    CHECK(handler);
    CHECK_OK(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL));
    outlive_handler_free(handler);
    struct peer without;
    CHECK(peer_start(&without, dir, "plain", 0, NULL));
    CHECK_OK(post_note(store, signal, "waiting", true));
    struct peer with;
    CHECK(peer_start(&with, dir, "loader", 1, NULL));
    char line[256];
    struct delivery d;
    CHECK_MSG(peer_line(&with, line, sizeof line, 10000) && parse(line, &d), "the resolving process did not deliver");
    CHECK(!strcmp(d.signal, signal) && !strcmp(d.note, "waiting"));
    CHECK(peer_finish(&with, NULL, 0));
    char rest[1024];
    CHECK(peer_finish(&without, rest, sizeof rest));
    CHECK(rest[0] == 0);
    CHECK(!stored(store, signal));
    outlive_store_close(store);
    harness_remove_store(dir);
}

static void test_signal_without_consumer_leaves_no_row_in_the_database(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    CHECK_OK(outlive_store_open(dir, "worker", NULL, NULL, &store));
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    CHECK_OK(post_note(store, signal, "nobody", false));
    CHECK_OK(outlive_signal_post(store, signal, NULL, true));
    CHECK_STATUS(outlive_signal_lookup(store, signal, NULL, NULL, NULL), OUTLIVE_E_NOT_FOUND);
    outlive_store_close(store);
    const char *rows_sql = "SELECT (SELECT count(*) FROM outlive_signals) + (SELECT count(*) FROM outlive_signal_consumers)"
                           " + (SELECT count(*) FROM outlive_feed WHERE topic = 'signal')";
    if (harness_postgresql()) {
        /* psql prints the count alone (-At); the store's tables are in its schema. */
        const char *name = strstr(dir, "outlive_store=");
        char command[8192];
        snprintf(command, sizeof command, "psql -X -At -v ON_ERROR_STOP=1 \"%s\" -c \"SET search_path = outlive_%s; %s\" 2>&1",
                 getenv("OUTLIVE_TEST_PG"), name ? name + strlen("outlive_store=") : "main", rows_sql);
        FILE *output = popen(command, "r");
        CHECK(output != NULL);
        char line[256] = "";
        char last[256] = "";
        while (fgets(line, sizeof line, output)) snprintf(last, sizeof last, "%s", line);
        CHECK(pclose(output) == 0);
        CHECK_MSG(strcmp(last, "0\n") == 0, "psql printed %s", last);
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *count = NULL;
    CHECK(sqlite3_prepare_v2(db, rows_sql, -1, &count, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(count) == SQLITE_ROW);
    int rows = sqlite3_column_int(count, 0);
    sqlite3_finalize(count);
    sqlite3_close(db);
    CHECK_MSG(rows == 0, "%d rows stored", rows);
    harness_remove_store(dir);
}

HARNESS_MAIN(
    T(test_once_consumer_in_another_process_gets_exactly_one_version),
    T(test_until_terminated_consumer_gets_versions_1_to_10_in_order_then_nothing),
    T(test_post_after_a_terminating_post_is_not_delivered),
    T(test_process_consumer_is_delivered_in_the_next_run_of_its_process_name),
    T(test_this_run_consumer_is_never_delivered_after_its_run_was_killed),
    T(test_any_process_consumers_are_delivered_exactly_once_among_three_processes),
    T(test_version_claimed_by_a_process_killed_inside_the_handler_is_delivered_by_another),
    T(test_consumer_unresolved_in_a_process_waits_for_one_that_resolves_it),
    T(test_signal_without_consumer_leaves_no_row_in_the_database),
)
