/* Durable interaction queues across real processes: interactions added by a
 * process that is then killed are shown, in order, by a presenter started after
 * it (another executable, build/tests/durable_presenter, that declares the
 * handler); a presenter killed mid-interaction is replaced by the next one,
 * which presents the interaction again; finish works once; only one of two
 * live presenters presents; bad input gets precise statuses. Every test runs
 * on both engines (OUTLIVE_TEST_STORE_KIND=postgresql: harness_store_location)
 * but the one that proves PostgreSQL's foreign key.
 *
 * This test binary never declares durable_show: in this process it does not
 * resolve.
 *
 * Under valgrind (the presenters too):
 *   valgrind --trace-children=yes --leak-check=full --suppressions=swift.supp \
 *       build/tests/test_durable_interactions
 * where swift.supp holds the Swift runtime's prespecialized-metadata blocks:
 *   { swift_prespecialized_metadata  Memcheck:Leak  match-leak-kinds: possible
 *     ...  fun:__swift_instantiateCanonicalPrespecializedGenericMetadata  ... } */
#include "harness.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 20000

/* ── a presenter process driven through its stdin and stdout ─────────────── */

struct presenter {
    pid_t pid;
    int in;   /* its stdin */
    int out;  /* its stdout */
    char buffer[65536];
    size_t used;        /* bytes in buffer */
    size_t consumed;    /* bytes of buffer already returned as lines */
    char transcript[65536];
    size_t transcript_used;
};

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int presenter_start(struct presenter *p, const char *store, const char *queue, const char *mode) {
    memset(p, 0, sizeof *p);
    char program[4096];
    snprintf(program, sizeof program, "%s/durable_presenter", harness_bin_dir());
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]); close(to_child[1]); close(from_child[0]); close(from_child[1]);
        execl(program, program, store, queue, mode, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    p->pid = pid;
    p->in = to_child[1];
    p->out = from_child[0];
    return 0;
}

static void presenter_send(struct presenter *p, const char *line) {
    size_t length = strlen(line);
    if (write(p->in, line, length) != (ssize_t)length || write(p->in, "\n", 1) != 1) { /* the expect fails */ }
}

/* The next complete line (without '\n') into line, waiting until the deadline
 * (absolute, now_ms). 0 on success, -1 on timeout or end of output. */
static int presenter_line(struct presenter *p, char *line, size_t size, long long deadline) {
    for (;;) {
        char *start = p->buffer + p->consumed;
        char *newline = memchr(start, '\n', p->used - p->consumed);
        if (newline) {
            size_t length = (size_t)(newline - start);
            size_t copy = length < size - 1 ? length : size - 1;
            memcpy(line, start, copy);
            line[copy] = '\0';
            p->consumed += length + 1;
            if (p->transcript_used + length + 2 < sizeof p->transcript) {
                memcpy(p->transcript + p->transcript_used, start, length);
                p->transcript_used += length;
                p->transcript[p->transcript_used++] = '\n';
                p->transcript[p->transcript_used] = '\0';
            }
            return 0;
        }
        if (p->consumed > 0) {
            memmove(p->buffer, p->buffer + p->consumed, p->used - p->consumed);
            p->used -= p->consumed;
            p->consumed = 0;
        }
        long long left = deadline - now_ms();
        if (left <= 0) return -1;
        struct pollfd fd = { p->out, POLLIN, 0 };
        int ready = poll(&fd, 1, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return -1;
        ssize_t got = read(p->out, p->buffer + p->used, sizeof p->buffer - 1 - p->used);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        p->used += (size_t)got;
    }
}

/* Reads lines until one starts with prefix (LOG lines are skipped over like
 * any other); the line into line. 0 on success. */
static int presenter_expect(struct presenter *p, const char *prefix, char *line, size_t size) {
    long long deadline = now_ms() + DEADLINE_MS;
    while (presenter_line(p, line, size, deadline) == 0) {
        if (strncmp(line, prefix, strlen(prefix)) == 0) return 0;
    }
    return -1;
}

/* Whether the transcript so far has a line starting with prefix. */
static int presenter_said(const struct presenter *p, const char *prefix) {
    const char *at = p->transcript;
    while (at && *at) {
        if (strncmp(at, prefix, strlen(prefix)) == 0) return 1;
        at = strchr(at, '\n');
        if (at) at++;
    }
    return 0;
}

static void presenter_kill(struct presenter *p) {
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    if (p->in > 0) close(p->in);
    if (p->out > 0) close(p->out);
    p->in = p->out = -1;
}

/* Asks the presenter to quit and waits; 0 when it exited with 0. */
static int presenter_quit(struct presenter *p) {
    presenter_send(p, "quit");
    int status = 0;
    waitpid(p->pid, &status, 0);
    p->pid = 0;
    close(p->in);
    close(p->out);
    p->in = p->out = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The last lines of a transcript, short enough for a failure message. */
static const char *tail(const char *text) {
    size_t length = strlen(text);
    return length > 400 ? text + length - 400 : text;
}

#define EXPECT(p, prefix, line) CHECK_MSG(presenter_expect((p), (prefix), (line), sizeof (line)) == 0, \
    "no \"%s\" line from the presenter; it said:\n%s", (prefix), tail((p)->transcript))

/* ── helpers in this process ────────────────────────────────────────────── */

static outlive_handler *show(int64_t n) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_integer(args, "n", n);
    outlive_handler *handler = NULL;
    outlive_handler_new("durable_show", NULL, args, &handler);
    outlive_args_free(args);
    return handler;
}

/* Adds durable_show(n) for n in first..last through a suspended handle of
 * this process; ids[n] receives each id (ids may be NULL). */
static outlive_status add_shows(const char *dir, const char *queue_name, int first, int last,
                                char ids[][OUTLIVE_ID_SIZE]) {
    outlive_store *store = NULL;
    outlive_durable_interactions *queue = NULL;
    outlive_status status = outlive_store_open(dir, "adder", NULL, NULL, &store);
    if (status != OUTLIVE_OK) return status;
    status = outlive_durable_interactions_open(store, queue_name, OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &queue);
    for (int n = first; status == OUTLIVE_OK && n <= last; n++) {
        outlive_handler *handler = show(n);
        char id[OUTLIVE_ID_SIZE];
        status = outlive_durable_interactions_add(queue, handler, id);
        if (ids && status == OUTLIVE_OK) memcpy(ids[n], id, sizeof id);
        outlive_handler_free(handler);
    }
    outlive_durable_interactions_free(queue);
    outlive_store_close(store);
    return status;
}

struct listing {
    int count;
    char ids[16][OUTLIVE_ID_SIZE];
    char names[16][64];
    uint32_t presentations[16];
};

/* Copies a durable interaction list into a listing (at most 16 entries). */
static void collect(const outlive_durable_interaction_list *entries, struct listing *list) {
    for (size_t i = 0; i < outlive_durable_interaction_list_count(entries) && list->count < 16; i++) {
        snprintf(list->ids[list->count], OUTLIVE_ID_SIZE, "%s", outlive_durable_interaction_list_id(entries, i));
        snprintf(list->names[list->count], 64, "%s", outlive_durable_interaction_list_handler_name(entries, i));
        list->presentations[list->count] = outlive_durable_interaction_list_presentations(entries, i);
        list->count++;
    }
}

static outlive_status list_queue(const char *dir, const char *queue_name, struct listing *list) {
    outlive_store *store = NULL;
    outlive_durable_interactions *queue = NULL;
    memset(list, 0, sizeof *list);
    outlive_status status = outlive_store_open(dir, "inspector", NULL, NULL, &store);
    if (status != OUTLIVE_OK) return status;
    status = outlive_durable_interactions_open(store, queue_name, OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &queue);
    outlive_durable_interaction_list *entries = NULL;
    if (status == OUTLIVE_OK) status = outlive_durable_interaction_list_new(queue, NULL, 0, &entries);
    if (status == OUTLIVE_OK) collect(entries, list);
    outlive_durable_interaction_list_free(entries);
    outlive_durable_interactions_free(queue);
    outlive_store_close(store);
    return status;
}

/* ── tests ───────────────────────────────────────────────────────────────── */

static void test_interactions_added_by_a_killed_process_are_shown_in_order_by_a_later_process(void) {
    const char *dir = harness_store_location();
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout);
    pid_t adder = fork();
    CHECK(adder >= 0);
    if (adder == 0) {
        /* The adder presents the queue too, but cannot resolve durable_show:
         * it waits. Then it is killed before anything was shown. */
        outlive_store *store = NULL;
        outlive_durable_interactions *queue = NULL;
        if (outlive_store_open(dir, "adder", NULL, NULL, &store) != OUTLIVE_OK) _exit(1);
        if (outlive_durable_interactions_open(store, "notices", 0, &queue) != OUTLIVE_OK) _exit(1);
        for (int n = 1; n <= 5; n++) {
            outlive_handler *handler = show(n);
            if (outlive_durable_interactions_add(queue, handler, NULL) != OUTLIVE_OK) _exit(1);
            outlive_handler_free(handler);
        }
        outlive_loop_dispatch(outlive_store_loop(store), 100);
        if (write(ready[1], "k", 1) != 1) _exit(1);
        for (;;) outlive_loop_dispatch(outlive_store_loop(store), -1);
    }
    close(ready[1]);
    char byte = 0;
    ssize_t got = read(ready[0], &byte, 1);
    close(ready[0]);
    kill(adder, SIGKILL);
    int status = 0;
    waitpid(adder, &status, 0);
    CHECK(got == 1);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    struct listing list;
    CHECK_OK(list_queue(dir, "notices", &list));
    CHECK(list.count == 5);
    CHECK(strcmp(list.names[0], "durable_show") == 0);
    CHECK(list.presentations[0] == 0);

    struct presenter p;
    CHECK(presenter_start(&p, dir, "notices", "auto") == 0);
    char line[512], expected[64];
    for (int n = 1; n <= 5; n++) {
        snprintf(expected, sizeof expected, "SHOW %d ", n);
        EXPECT(&p, "SHOW", line);
        CHECK_MSG(strncmp(line, expected, strlen(expected)) == 0, "expected \"%s...\", got \"%s\"", expected, line);
        CHECK_MSG(strcmp(line + strlen(expected), list.ids[n - 1]) == 0, "interaction %d came with id %s, stored as %s",
                  n, line + strlen(expected), list.ids[n - 1]);
        EXPECT(&p, "FINISHED", line);
        CHECK_MSG(strstr(line, "OUTLIVE_OK") != NULL, "%s", line);
    }
    presenter_send(&p, "count");
    EXPECT(&p, "COUNT", line);
    CHECK_MSG(strcmp(line, "COUNT 0") == 0, "%s", line);
    CHECK(presenter_quit(&p) == 0);
    harness_remove_store(dir);
}

static void test_presenter_killed_mid_interaction_is_presented_again_by_the_next_process(void) {
    const char *dir = harness_store_location();
    char ids[3][OUTLIVE_ID_SIZE];
    CHECK_OK(add_shows(dir, "q", 1, 2, ids));

    struct presenter first;
    CHECK(presenter_start(&first, dir, "q", "manual") == 0);
    char line[512];
    EXPECT(&first, "SHOW 1 ", line);
    CHECK(strcmp(line + 7, ids[1]) == 0);
    presenter_kill(&first);

    struct listing list;
    CHECK_OK(list_queue(dir, "q", &list));
    CHECK(list.count == 2);
    CHECK(strcmp(list.ids[0], ids[1]) == 0);
    CHECK(list.presentations[0] == 1);

    struct presenter next;
    CHECK(presenter_start(&next, dir, "q", "auto") == 0);
    EXPECT(&next, "SHOW", line);
    CHECK_MSG(strncmp(line, "SHOW 1 ", 7) == 0 && strcmp(line + 7, ids[1]) == 0, "%s", line);
    EXPECT(&next, "SHOW", line);
    CHECK_MSG(strncmp(line, "SHOW 2 ", 7) == 0 && strcmp(line + 7, ids[2]) == 0, "%s", line);
    presenter_send(&next, "count");
    EXPECT(&next, "COUNT", line);
    CHECK_MSG(strcmp(line, "COUNT 0") == 0, "%s", line);
    CHECK(presenter_quit(&next) == 0);
    harness_remove_store(dir);
}

static void test_finish_twice_finishes_once_and_then_returns_state(void) {
    const char *dir = harness_store_location();
    CHECK_OK(add_shows(dir, "q", 1, 2, NULL));
    struct presenter p;
    CHECK(presenter_start(&p, dir, "q", "manual") == 0);
    char line[512];
    EXPECT(&p, "SHOW 1 ", line);
    presenter_send(&p, "finish");
    EXPECT(&p, "FINISH", line);
    CHECK_MSG(strcmp(line, "FINISH OUTLIVE_OK") == 0, "%s", line);
    presenter_send(&p, "count");  /* 1: the second is stored, shown or not yet */
    EXPECT(&p, "COUNT", line);
    CHECK_MSG(strcmp(line, "COUNT 1") == 0, "%s", line);
    if (!presenter_said(&p, "SHOW 2 ")) EXPECT(&p, "SHOW 2 ", line);
    /* The finish kept is now interaction 2's; the first one's copy is gone in
     * the program, so finish 2 twice. */
    presenter_send(&p, "finish");
    EXPECT(&p, "FINISH", line);
    CHECK_MSG(strcmp(line, "FINISH OUTLIVE_OK") == 0, "%s", line);
    presenter_send(&p, "finish");
    EXPECT(&p, "FINISH", line);
    CHECK_MSG(strcmp(line, "FINISH OUTLIVE_E_STATE") == 0, "%s", line);
    presenter_send(&p, "count");
    EXPECT(&p, "COUNT", line);
    CHECK_MSG(strcmp(line, "COUNT 0") == 0, "%s", line);
    CHECK(presenter_quit(&p) == 0);
    harness_remove_store(dir);
}

static void test_finish_from_another_thread_starts_the_next_interaction(void) {
    const char *dir = harness_store_location();
    CHECK_OK(add_shows(dir, "q", 1, 3, NULL));
    struct presenter p;
    CHECK(presenter_start(&p, dir, "q", "thread") == 0);
    char line[512], expected[64];
    for (int n = 1; n <= 3; n++) {
        snprintf(expected, sizeof expected, "SHOW %d ", n);
        EXPECT(&p, "SHOW", line);
        CHECK_MSG(strncmp(line, expected, strlen(expected)) == 0, "expected \"%s...\", got \"%s\"", expected, line);
        snprintf(expected, sizeof expected, "FINISHED %d OUTLIVE_OK", n);
        EXPECT(&p, "FINISHED", line);
        CHECK_MSG(strcmp(line, expected) == 0, "%s", line);
    }
    CHECK(presenter_quit(&p) == 0);
    harness_remove_store(dir);
}

static void test_only_one_of_two_live_processes_presents_and_the_other_takes_over_when_it_dies(void) {
    /* On PostgreSQL the survivor sees the death at its liveness check, every
     * half bound: the shortest bound (2 s) keeps the wait short. */
    char dir[4096];
    snprintf(dir, sizeof dir, harness_postgresql() ? "%s&outlive_liveness=2" : "%s", harness_store_location());
    struct presenter a, b;
    char line[512];
    /* One after the other: two processes creating a new store at the same
     * moment can see "database is locked" (a Store-layer race, not this
     * system's). */
    CHECK(presenter_start(&a, dir, "q", "manual") == 0);
    EXPECT(&a, "READY", line);
    CHECK(presenter_start(&b, dir, "q", "manual") == 0);
    EXPECT(&b, "READY", line);
    CHECK_OK(add_shows(dir, "q", 1, 2, NULL));

    /* Whichever shows 1 is the presenter; the other must show nothing. */
    struct presenter *presenting = NULL, *other = NULL;
    long long deadline = now_ms() + DEADLINE_MS;
    while (!presenting && now_ms() < deadline) {
        struct pollfd fds[2] = { { a.out, POLLIN, 0 }, { b.out, POLLIN, 0 } };
        if (poll(fds, 2, 100) <= 0) continue;
        struct presenter *which = (fds[0].revents & POLLIN) ? &a : &b;
        if (presenter_line(which, line, sizeof line, now_ms() + DEADLINE_MS) != 0) break;
        if (strncmp(line, "SHOW 1 ", 7) == 0) {
            presenting = which;
            other = which == &a ? &b : &a;
        }
    }
    CHECK_MSG(presenting != NULL, "nobody showed interaction 1:\nA:\n%s\nB:\n%s", tail(a.transcript), tail(b.transcript));
    /* The other has seen the adds (the feed rang before add returned); a
     * dispatch on a ping settles what it would do. */
    presenter_send(other, "ping");
    EXPECT(other, "PONG", line);
    CHECK_MSG(!presenter_said(other, "SHOW"), "both presented:\n%s", tail(other->transcript));

    /* Finishing 1 keeps the claim: the same process shows 2. */
    presenter_send(presenting, "finish");
    EXPECT(presenting, "FINISH OUTLIVE_OK", line);
    EXPECT(presenting, "SHOW 2 ", line);
    presenter_send(other, "ping");
    EXPECT(other, "PONG", line);
    CHECK_MSG(!presenter_said(other, "SHOW"), "both presented:\n%s", tail(other->transcript));

    /* The presenter dies mid-interaction: the other presents 2 again, at once
     * on SQLite (inotify), within half the liveness bound on PostgreSQL. */
    presenter_kill(presenting);
    EXPECT(other, "SHOW 2 ", line);
    presenter_send(other, "finish");
    EXPECT(other, "FINISH OUTLIVE_OK", line);
    presenter_send(other, "count");
    EXPECT(other, "COUNT", line);
    CHECK_MSG(strcmp(line, "COUNT 0") == 0, "%s", line);
    CHECK(presenter_quit(other) == 0);
    harness_remove_store(dir);
}

static void test_a_suspended_presenter_lets_the_other_process_present(void) {
    const char *dir = harness_store_location();
    struct presenter a, b;
    char line[512];
    CHECK(presenter_start(&a, dir, "q", "manual") == 0);
    EXPECT(&a, "READY", line);
    presenter_send(&a, "add 1");
    EXPECT(&a, "SHOW 1 ", line);
    presenter_send(&a, "finish");
    EXPECT(&a, "FINISH OUTLIVE_OK", line);
    presenter_send(&a, "suspend");
    EXPECT(&a, "SUSPEND OUTLIVE_OK", line);
    CHECK(presenter_start(&b, dir, "q", "manual") == 0);
    EXPECT(&b, "READY", line);
    presenter_send(&a, "add 2");  /* added by a, shown by b */
    EXPECT(&a, "ADDED 2", line);
    EXPECT(&b, "SHOW 2 ", line);
    presenter_send(&a, "ping");
    EXPECT(&a, "PONG", line);
    CHECK(!presenter_said(&a, "SHOW 2"));
    /* A clean quit of b (its run ends) gives the queue back; a resumes and
     * presents 2 again (b never finished it). */
    CHECK(presenter_quit(&b) == 0);
    presenter_send(&a, "resume");
    EXPECT(&a, "SHOW 2 ", line);
    presenter_send(&a, "finish");
    EXPECT(&a, "FINISH OUTLIVE_OK", line);
    CHECK(presenter_quit(&a) == 0);
    harness_remove_store(dir);
}

/* ── in this process: unresolved handlers, bad input ─────────────────────── */

static char logged[8192];
static void keep_log(outlive_log_level level, const char *message, void *context) {
    (void)level;
    (void)context;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

static int late_calls;
static void durable_late(const outlive_object *interaction_id, const outlive_handler *finish) {
    (void)interaction_id;
    late_calls++;
    outlive_handler_call(finish, NULL);
}

static void test_an_unresolved_interaction_waits_says_why_and_is_presented_once_it_resolves(void) {
    const char *dir = harness_store_location();
    outlive_loop *loop = NULL;
    outlive_store *store = NULL;
    outlive_durable_interactions *queue = NULL;
    logged[0] = '\0';
    CHECK_OK(outlive_log_set_handler(keep_log, OUTLIVE_LOG_WARNING, NULL, NULL));
    CHECK_OK(outlive_loop_new(&loop));
    CHECK_OK(outlive_store_open(dir, "app", loop, NULL, &store));
    CHECK_OK(outlive_durable_interactions_open(store, "q", 0, &queue));
    outlive_handler *late = NULL;
    outlive_handler_new("durable_late", NULL, NULL, &late);
    CHECK_OK(outlive_durable_interactions_add(queue, late, NULL));
    outlive_handler_free(late);
    long long deadline = now_ms() + DEADLINE_MS;
    while (!strstr(logged, "durable_late") && now_ms() < deadline) outlive_loop_dispatch(loop, 100);
    outlive_log_set_handler(NULL, OUTLIVE_LOG_WARNING, NULL, NULL);
    CHECK_MSG(strstr(logged, "waits") && strstr(logged, "no handler named durable_late"), "log:\n%s", tail(logged));
    size_t count = 0;
    CHECK_OK(outlive_durable_interactions_count(queue, &count));
    CHECK(count == 1);
    CHECK(late_calls == 0);

    CHECK_OK(outlive_handler_register("durable_late", "ID interaction_id, HANDLER finish", (void (*)(void))durable_late));
    CHECK_OK(outlive_durable_interactions_resume(queue));
    deadline = now_ms() + DEADLINE_MS;
    while (count > 0 && now_ms() < deadline) {
        outlive_loop_dispatch(loop, 100);
        CHECK_OK(outlive_durable_interactions_count(queue, &count));
    }
    CHECK(count == 0);
    CHECK(late_calls == 1);
    outlive_handler_unregister("durable_late");
    outlive_durable_interactions_free(queue);
    outlive_store_close(store);
    outlive_loop_free(loop);
    harness_remove_store(dir);
}

static void test_bad_input_gets_precise_statuses_and_changes_nothing(void) {
    const char *dir = harness_store_location();
    outlive_store *store = NULL;
    outlive_durable_interactions *queue = NULL, *untouched = (outlive_durable_interactions *)&untouched;
    CHECK_OK(outlive_store_open(dir, "app", NULL, NULL, &store));

    CHECK_STATUS(outlive_durable_interactions_open(NULL, "q", 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_open(store, NULL, 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_open(store, "q", 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    queue = untouched;
    CHECK_STATUS(outlive_durable_interactions_open(store, "", 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "empty"));
    CHECK_STATUS(outlive_durable_interactions_open(store, "bad\xff", 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "UTF-8"));
    CHECK_STATUS(outlive_durable_interactions_open(store, "tab\there", 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    char long_name[300];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CHECK_STATUS(outlive_durable_interactions_open(store, long_name, 0, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_open(store, "q", 2, &queue), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "flags"));
    CHECK(queue == untouched);  /* outputs are written only on success */

    CHECK_OK(outlive_durable_interactions_open(store, "q", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &queue));
    outlive_handler *handler = show(1);
    char id[OUTLIVE_ID_SIZE] = "unchanged";
    CHECK_STATUS(outlive_durable_interactions_add(NULL, handler, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_add(queue, NULL, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "interaction"));
    CHECK(strcmp(id, "unchanged") == 0);
    outlive_handler *invalidated = show(2);
    CHECK_OK(outlive_handler_invalidate(invalidated, NULL));
    CHECK_STATUS(outlive_durable_interactions_add(queue, invalidated, id), OUTLIVE_E_INVALIDATED);
    outlive_handler_free(invalidated);
    size_t count = 99;
    CHECK_OK(outlive_durable_interactions_count(queue, &count));
    CHECK(count == 0);

    CHECK_OK(outlive_durable_interactions_add(queue, handler, id));
    CHECK(strlen(id) == 36);
    CHECK_STATUS(outlive_durable_interactions_count(queue, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_count(NULL, &count), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_durable_interaction_list *entries = NULL;
    CHECK_STATUS(outlive_durable_interaction_list_new(queue, NULL, 0, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interaction_list_new(NULL, NULL, 0, &entries), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interaction_list_new(queue, "00000000-0000-4000-8000-000000000000", 0, &entries),
                 OUTLIVE_E_NOT_FOUND);
    CHECK(entries == NULL);
    /* Paging: after the first, at most one. */
    CHECK_OK(outlive_durable_interaction_list_new(queue, NULL, 1, &entries));
    CHECK(outlive_durable_interaction_list_count(entries) == 1 && !strcmp(outlive_durable_interaction_list_id(entries, 0), id));
    CHECK(outlive_durable_interaction_list_id(entries, 1) == NULL && outlive_durable_interaction_list_presentations(entries, 1) == 0);
    outlive_durable_interaction_list_free(entries);
    CHECK_STATUS(outlive_durable_interactions_remove(queue, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_remove(NULL, id), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_remove(queue, "not-an-id"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_remove(queue, "\xc3"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_remove(queue, "00000000-0000-4000-8000-000000000000"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_durable_interactions_suspend(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_durable_interactions_resume(NULL), OUTLIVE_E_INVALID_ARGUMENT);

    /* An id of another queue is not found in this one. */
    outlive_durable_interactions *other = NULL;
    CHECK_OK(outlive_durable_interactions_open(store, "other", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &other));
    CHECK_STATUS(outlive_durable_interactions_remove(other, id), OUTLIVE_E_NOT_FOUND);
    outlive_durable_interactions_free(other);
    CHECK_OK(outlive_durable_interactions_count(queue, &count));
    CHECK(count == 1);

    /* A finish handler that names no presentation of this process. */
    outlive_args *forged_args = NULL;
    outlive_args_new(&forged_args);
    outlive_args_set_uinteger(forged_args, "token", 424242);
    outlive_args_set_string(forged_args, "interaction_id", id);
    outlive_args_set_string(forged_args, "run_id", outlive_store_run_id(store));
    outlive_handler *forged = NULL;
    outlive_handler_new(OUTLIVE_DURABLE_INTERACTION_FINISH, NULL, forged_args, &forged);
    outlive_args_free(forged_args);
    CHECK_STATUS(outlive_handler_call(forged, NULL), OUTLIVE_E_STATE);
    outlive_handler_free(forged);
    CHECK_OK(outlive_durable_interactions_count(queue, &count));
    CHECK(count == 1);

    CHECK_OK(outlive_durable_interactions_remove(queue, id));
    CHECK_STATUS(outlive_durable_interactions_remove(queue, id), OUTLIVE_E_NOT_FOUND);

    /* A queue whose store was closed. */
    outlive_store_close(store);
    CHECK_STATUS(outlive_durable_interactions_add(queue, handler, id), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_durable_interactions_count(queue, &count), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_durable_interactions_suspend(queue), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_durable_interactions_resume(queue), OUTLIVE_E_STATE);
    CHECK_STATUS(outlive_durable_interaction_list_new(queue, NULL, 0, &entries), OUTLIVE_E_STATE);
    outlive_durable_interactions_free(queue);
    outlive_durable_interactions_free(NULL);
    outlive_handler_free(handler);
    harness_remove_store(dir);
}

static int counted_calls;
static void durable_counted(const outlive_object *interaction_id, const outlive_handler *finish) {
    (void)interaction_id;
    counted_calls++;
    outlive_handler_call(finish, NULL);
}

/* What SQLite's trigger refuses (a presenter's claim bound to a run the store
 * no longer registers), PostgreSQL refuses by run_id's foreign key: a handle
 * whose run another process ended presents nothing, and a live run presents
 * the interaction later. */
static void test_a_run_the_store_no_longer_has_does_not_present_on_postgresql(void) {
    POSTGRESQL_ONLY();
    const char *location = harness_store_location();
    outlive_store *ended = NULL, *live = NULL;
    outlive_durable_interactions *stale = NULL, *presenter = NULL;
    counted_calls = 0;
    CHECK_OK(outlive_handler_register("durable_counted", "ID interaction_id, HANDLER finish", (void (*)(void))durable_counted));
    CHECK_OK(outlive_store_open(location, "ended", NULL, NULL, &ended));
    CHECK_OK(outlive_store_open(location, "live", NULL, NULL, &live));
    CHECK_OK(outlive_durable_interactions_open(ended, "q", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &stale));
    CHECK_OK(outlive_durable_interactions_open(live, "q", OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, &presenter));
    outlive_handler *handler = NULL;
    outlive_handler_new("durable_counted", NULL, NULL, &handler);
    CHECK_OK(outlive_durable_interactions_add(presenter, handler, NULL));
    outlive_handler_free(handler);
    char sql[512];
    snprintf(sql, sizeof sql, "DELETE FROM outlive_runs WHERE run_id = '%s'", outlive_store_run_id(ended));
    CHECK(harness_psql(location, sql, NULL, 0));
    CHECK_OK(outlive_durable_interactions_resume(stale));
    harness_dispatch_for(outlive_store_loop(ended), 1.0);
    CHECK(counted_calls == 0);
    CHECK(harness_psql(location, "DO \\$\\$ BEGIN IF EXISTS (SELECT 1 FROM outlive_durable_interaction_claims) "
                                  "OR (SELECT presentations FROM outlive_durable_interactions) <> 0 THEN RAISE 'claimed'; END IF; END \\$\\$", NULL, 0));
    CHECK_OK(outlive_durable_interactions_resume(presenter));
    size_t count = 1;
    long long deadline = now_ms() + DEADLINE_MS;
    while (count > 0 && now_ms() < deadline) {
        outlive_loop_dispatch(outlive_store_loop(live), 100);
        CHECK_OK(outlive_durable_interactions_count(presenter, &count));
    }
    CHECK(count == 0 && counted_calls == 1);
    outlive_handler_unregister("durable_counted");
    outlive_durable_interactions_free(stale);
    outlive_durable_interactions_free(presenter);
    outlive_store_close(ended);
    outlive_store_close(live);
}

HARNESS_MAIN(
    T(test_interactions_added_by_a_killed_process_are_shown_in_order_by_a_later_process),
    T(test_presenter_killed_mid_interaction_is_presented_again_by_the_next_process),
    T(test_finish_twice_finishes_once_and_then_returns_state),
    T(test_finish_from_another_thread_starts_the_next_interaction),
    T(test_only_one_of_two_live_processes_presents_and_the_other_takes_over_when_it_dies),
    T(test_a_suspended_presenter_lets_the_other_process_present),
    T(test_an_unresolved_interaction_waits_says_why_and_is_presented_once_it_resolves),
    T(test_bad_input_gets_precise_statuses_and_changes_nothing),
    T(test_a_run_the_store_no_longer_has_does_not_present_on_postgresql)
)
