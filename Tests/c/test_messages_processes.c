/* The message queue across real processes (programs/messages_worker.c): each
 * message presented exactly once, ended where it was presented, answered once;
 * a presenting process killed with -9; auto-resolvers; declines and reoffers;
 * presenters added late or removed while presenting; answers from a process
 * without presenters. Workers report events on a pipe; nothing waits on sleeps.
 * On both engines (harness_store_location; OUTLIVE_TEST_STORE_KIND=postgresql). */
#include "harness.h"
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 8192

struct worker {
    pid_t pid;
    int in, out;
    char buffer[8192];
    size_t used;
};

struct event {
    int worker;
    char line[160];
};

static struct event events[MAX_EVENTS];
static int event_count;

static int worker_start(struct worker *w, const char *dir, const char *process, const char *const *options) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/messages_worker", harness_bin_dir());
    char *argv[32] = {path, (char *)dir, (char *)process};
    int argc = 3;
    for (int i = 0; options && options[i] && argc < 31; i++) argv[argc++] = (char *)options[i];
    argv[argc] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]); close(to_child[1]); close(from_child[0]); close(from_child[1]);
        execv(path, argv);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->in = to_child[1];
    w->out = from_child[0];
    return pid > 0;
}

static void worker_send(struct worker *w, const char *line) {
    char text[256];
    int n = snprintf(text, sizeof text, "%s\n", line);
    if (write(w->in, text, (size_t)n) != n) perror("write to worker");
}

/* Ends a worker: quit, then wait; returns whether it exited with 0. */
static int worker_stop(struct worker *w) {
    worker_send(w, "quit");
    close(w->in);
    int status = 0;
    pid_t got = waitpid(w->pid, &status, 0);
    close(w->out);
    return got == w->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads what the workers reported (up to timeout_ms) into `events`. */
static void pump(struct worker *workers, int count, int timeout_ms) {
    struct pollfd fds[8];
    for (int i = 0; i < count; i++) fds[i] = (struct pollfd){.fd = workers[i].out, .events = POLLIN};
    if (poll(fds, (nfds_t)count, timeout_ms) <= 0) return;
    for (int i = 0; i < count; i++) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        struct worker *w = &workers[i];
        ssize_t got = read(w->out, w->buffer + w->used, sizeof w->buffer - 1 - w->used);
        if (got <= 0) continue;
        w->used += (size_t)got;
        w->buffer[w->used] = 0;
        char *start = w->buffer, *newline;
        while ((newline = strchr(start, '\n'))) {
            *newline = 0;
            if (event_count < MAX_EVENTS) {
                events[event_count].worker = i;
                snprintf(events[event_count].line, sizeof events[event_count].line, "%s", start);
                event_count++;
            }
            start = newline + 1;
        }
        w->used = strlen(start);
        memmove(w->buffer, start, w->used + 1);
    }
}

/* Events whose line starts with prefix (and, if worker >= 0, from that worker). */
static int count_events(const char *prefix, int worker) {
    int n = 0;
    for (int i = 0; i < event_count; i++)
        if (!strncmp(events[i].line, prefix, strlen(prefix)) && (worker < 0 || events[i].worker == worker)) n++;
    return n;
}

/* Pumps until `want` events start with prefix, for at most 30 s. */
static int wait_events(struct worker *workers, int count, const char *prefix, int want) {
    double deadline = now_seconds() + 30;
    while (count_events(prefix, -1) < want && now_seconds() < deadline) pump(workers, count, 100);
    return count_events(prefix, -1) >= want;
}

/* Pumps for a short while to collect stray events (used only to check that
 * something did NOT happen, after what should have happened instead did). */
static void settle(struct worker *workers, int count) {
    for (int i = 0; i < 5; i++) pump(workers, count, 40);
}

static outlive_store *open_store(const char *dir, const char *name) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, name, NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return NULL;
    }
    return store;
}

static int post_titled(outlive_store *store, const char *category, const char *title, int with_choices,
                       char out_id[OUTLIVE_ID_SIZE]) {
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new(category, title, &draft);
    if (!draft) return 0;
    if (with_choices) {
        outlive_message_draft_add_choice(draft, "ok", "Keep both", OUTLIVE_CHOICE_DEFAULT);
        outlive_message_draft_add_choice(draft, "cancel", "Cancel", OUTLIVE_CHOICE_CANCEL);
    }
    outlive_status status = outlive_message_post(store, draft, out_id);
    outlive_message_draft_free(draft);
    return status == OUTLIVE_OK;
}

static int post(outlive_store *store, const char *category, int with_choices, char out_id[OUTLIVE_ID_SIZE]) {
    return post_titled(store, category, "Conflict", with_choices, out_id);
}

static size_t stored(outlive_store *store) {
    size_t count = 0;
    if (outlive_messages_count(store, NULL, &count) != OUTLIVE_OK) return (size_t)-1;
    return count;
}

/* Waits until the store holds `want` messages (deletion follows the last event). */
static int wait_stored(outlive_store *store, size_t want) {
    double deadline = now_seconds() + 30;
    while (stored(store) != want && now_seconds() < deadline) outlive_loop_dispatch(outlive_store_loop(store), 20);
    return stored(store) == want;
}

static int event_is(int index, const char *verb, const char *presenter, const char *id) {
    char expected[1024];
    if (presenter) snprintf(expected, sizeof expected, "%s %s %s", verb, presenter, id);
    else snprintf(expected, sizeof expected, "%s %s", verb, id);
    return !strncmp(events[index].line, expected, strlen(expected));
}

/* Worker i's presenters take messages "m<n>" with n % processes == i and
 * decline the others, which other processes then present: every message
 * crosses the locks of all processes, and its presenter is known. */
static void many_messages_across_processes(int processes) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    /* The store exists before the workers open it together. */
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    struct worker workers[3];
    const int priority[3] = {300, 250, 150};
    const char *names[3] = {"app", "helper", "app"};
    static char high[3][64], low[3][64];
    for (int i = 0; i < processes; i++) {
        snprintf(high[i], sizeof high[i], "high:%d:finish:%d:%d", priority[i], processes, i);
        snprintf(low[i], sizeof low[i], "low:100:finish:%d:%d", processes, i);
        const char *options[] = {"--presenter", low[i], "--presenter", high[i], "--presenter", "never:0:finish",
                                 "--responder", NULL};
        CHECK(worker_start(&workers[i], path, names[i], options));
    }
    CHECK_MSG(wait_events(workers, processes, "ready", processes), "workers did not start");
    enum { N = 100 };
    static char ids[N][OUTLIVE_ID_SIZE];
    for (int i = 0; i < N; i++) {
        char title[16];
        snprintf(title, sizeof title, "m%d", i);
        CHECK(post_titled(store, "sync", title, 1, ids[i]));
    }
    CHECK_MSG(wait_events(workers, processes, "end ", N), "%d of %d messages ended", count_events("end ", -1), N);
    CHECK_MSG(wait_stored(store, 0), "%zu messages still stored", stored(store));
    settle(workers, processes);
    for (int i = 0; i < N; i++) {
        int presented = 0, ended = 0, answered = 0, presenter_worker = -1, end_worker = -2;
        for (int e = 0; e < event_count; e++) {
            if (event_is(e, "present", NULL, "") && strstr(events[e].line, ids[i])) {
                CHECK_MSG(event_is(e, "present", "high", ids[i]), "presented by another presenter: %s", events[e].line);
                presented++;
                presenter_worker = events[e].worker;
            }
            if (event_is(e, "end", "high", ids[i])) { ended++; end_worker = events[e].worker; }
            if (event_is(e, "respond", NULL, ids[i])) {
                CHECK_MSG(strstr(events[e].line, " ok"), "answered with another choice: %s", events[e].line);
                answered++;
            }
        }
        CHECK_MSG(presented == 1, "message %d presented %d times", i, presented);
        CHECK_MSG(ended == 1, "message %d ended %d times", i, ended);
        CHECK_MSG(answered == 1, "message %d answered %d times", i, answered);
        CHECK_MSG(presenter_worker == i % processes, "message %d presented by worker %d", i, presenter_worker);
        CHECK_MSG(end_worker == presenter_worker, "message %d presented by worker %d, ended by %d", i, presenter_worker, end_worker);
    }
    CHECK(count_events("error", -1) == 0);
    for (int i = 0; i < processes; i++) CHECK(worker_stop(&workers[i]));
    outlive_store_close(store);
    harness_remove_store(path);
}

/* The start most tests share: a fresh store (its location in `path`),
 * one worker process of name "app" with `options`, ready, and a store handle
 * of this process named `name`. NULL when any step failed. */
static outlive_store *start_one_worker(struct worker *w, char *path, size_t size, const char *const *options,
                                       const char *name) {
    event_count = 0;
    snprintf(path, size, "%s", harness_store_location());
    if (!worker_start(w, path, "app", options) || !wait_events(w, 1, "ready", 1)) return NULL;
    return open_store(path, name);
}

/* Stops the worker (whether it exited cleanly is the result), closes the
 * store and removes it. */
static int stop_one_worker(struct worker *w, outlive_store *store, const char *path) {
    int stopped = worker_stop(w);
    outlive_store_close(store);
    harness_remove_store(path);
    return stopped;
}

static void test_two_processes_100_messages_each_presented_once_ended_where_presented_answered_once(void) {
    many_messages_across_processes(2);
}

static void test_three_processes_100_messages_each_presented_once_ended_where_presented_answered_once(void) {
    many_messages_across_processes(3);
}

/* A store where a process killed with -9 is seen dead soon by handles that
 * nothing wakes: at once on SQLite (its lock file), at the next liveness check
 * on PostgreSQL, every half bound — so the shortest bound, 2 s, there. */
static void store_seeing_deaths_soon(char *path, size_t size) {
    snprintf(path, size, harness_postgresql() ? "%s&outlive_liveness=2" : "%s", harness_store_location());
}

static void test_kill_9_of_the_presenting_process_lets_another_process_present(void) {
    event_count = 0;
    char path[4096];
    store_seeing_deaths_soon(path, sizeof path);
    struct worker workers[2];
    const char *holder[] = {"--presenter", "h:300:hold", NULL};
    CHECK(worker_start(&workers[0], path, "app", holder));
    CHECK(wait_events(workers, 1, "ready", 1));
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(workers, 1, "present h", 1));
    /* A second process joins while the first presents: the lock keeps it off. */
    const char *finisher[] = {"--presenter", "f:200:finish", "--responder", NULL};
    CHECK(worker_start(&workers[1], path, "app", finisher));
    CHECK(wait_events(workers, 2, "ready", 2));
    settle(workers, 2);
    CHECK(count_events("present f", -1) == 0);
    kill(workers[0].pid, SIGKILL);
    int status = 0;
    waitpid(workers[0].pid, &status, 0);
    CHECK_MSG(wait_events(workers, 2, "present f", 1), "the message was not offered again after kill -9");
    CHECK(event_is(event_count - 1, "present", "f", id) || count_events("present f", 1) == 1);
    CHECK(wait_events(workers, 2, "end f", 1));
    CHECK(wait_stored(store, 0));
    close(workers[0].in);
    close(workers[0].out);
    CHECK(worker_stop(&workers[1]));
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_auto_resolver_answers_before_any_presenter_sees_the_message(void) {
    char path[4096];
    struct worker w;
    const char *options[] = {"--resolver", "cancel", "--presenter", "p:200:finish", "--responder", NULL};
    outlive_store *store = start_one_worker(&w, path, sizeof path, options, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "auth", 1, id));
    CHECK(wait_events(&w, 1, "respond", 1));
    CHECK(wait_stored(store, 0));
    settle(&w, 1);
    CHECK(count_events("resolve", -1) == 1);
    char expected[1024];
    snprintf(expected, sizeof expected, "respond %s cancel", id);
    CHECK(count_events(expected, -1) == 1);
    CHECK(count_events("present", -1) == 0);
    CHECK(stop_one_worker(&w, store, path));
}

static void test_auto_resolver_without_answer_removes_the_message_unpresented(void) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "auth", 1, id));
    struct worker w;
    const char *options[] = {"--resolver", "-", "--presenter", "p:200:finish", "--responder", NULL};
    CHECK(worker_start(&w, path, "app", options));
    CHECK(wait_events(&w, 1, "resolve", 1));
    CHECK(wait_stored(store, 0));
    settle(&w, 1);
    CHECK(count_events("present", -1) == 0 && count_events("respond", -1) == 0);
    CHECK(stop_one_worker(&w, store, path));
}

static void test_declined_presentation_goes_to_another_process_and_reoffer_offers_it_again(void) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    struct worker workers[2];
    const char *decliner[] = {"--presenter", "d:200:decline", "--presenter", "zero:0:finish", NULL};
    CHECK(worker_start(&workers[0], path, "app", decliner));
    CHECK(wait_events(workers, 1, "ready", 1));
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(workers, 1, "present d", 1));
    settle(workers, 1);
    CHECK(count_events("present d", -1) == 1);   /* not offered again to the same presenter */
    CHECK(count_events("present zero", -1) == 0);
    outlive_message *message = NULL;
    CHECK_OK(outlive_message_get(store, id, &message));
    CHECK(!outlive_message_is_presented(message) && !outlive_message_is_handled(message));
    outlive_message_free(message);
    /* Asked again, the presenter sees it a second time. */
    worker_send(&workers[0], "reoffer d");
    CHECK(wait_events(workers, 1, "present d", 2));
    /* Another process presents what the first declined. */
    const char *finisher[] = {"--presenter", "f:100:show", NULL};
    CHECK(worker_start(&workers[1], path, "viewer", finisher));
    CHECK(wait_events(workers, 2, "present f", 1));
    CHECK(count_events("present f", 1) == 1);
    double deadline = now_seconds() + 30;
    int presented = 0;
    while (!presented && now_seconds() < deadline) {
        pump(workers, 2, 20);
        CHECK_OK(outlive_message_get(store, id, &message));
        presented = outlive_message_is_presented(message);
        outlive_message_free(message);
    }
    CHECK(presented);
    CHECK(worker_stop(&workers[0]));
    CHECK(worker_stop(&workers[1]));
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_presenter_added_after_messages_were_posted_presents_them_all(void) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    char ids[5][OUTLIVE_ID_SIZE];
    for (int i = 0; i < 5; i++) CHECK(post(store, "sync", 1, ids[i]));
    struct worker w;
    const char *options[] = {"--presenter", "late:200:finish", "--responder", NULL};
    CHECK(worker_start(&w, path, "app", options));
    CHECK(wait_events(&w, 1, "end", 5));
    CHECK(wait_stored(store, 0));
    settle(&w, 1);
    for (int i = 0; i < 5; i++) {
        char expected[1024];
        snprintf(expected, sizeof expected, "present late %s", ids[i]);
        CHECK_MSG(count_events(expected, -1) == 1, "message %d presented %d times", i, count_events(expected, -1));
    }
    /* In the order they were posted. */
    int seen = 0;
    for (int e = 0; e < event_count && seen < 5; e++)
        if (!strncmp(events[e].line, "present", 7)) { CHECK(strstr(events[e].line, ids[seen])); seen++; }
    CHECK(stop_one_worker(&w, store, path));
}

static void test_presenter_removed_while_presenting_can_still_finish_without_end(void) {
    char path[4096];
    struct worker w;
    const char *options[] = {"--presenter", "h:200:hold", "--responder", NULL};
    outlive_store *store = start_one_worker(&w, path, sizeof path, options, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(&w, 1, "present h", 1));
    worker_send(&w, "remove h");
    CHECK(wait_events(&w, 1, "done", 1));
    worker_send(&w, "finish");
    CHECK(wait_events(&w, 1, "respond", 1));
    CHECK(wait_stored(store, 0));
    settle(&w, 1);
    char expected[1024];
    snprintf(expected, sizeof expected, "respond %s ok", id);
    CHECK(count_events(expected, -1) == 1);
    CHECK(count_events("end", -1) == 0);
    CHECK(count_events("error", -1) == 0);
    CHECK(stop_one_worker(&w, store, path));
}

static void test_response_from_a_process_without_presenters_is_handled_and_ends_the_presentation(void) {
    char path[4096];
    struct worker w;
    const char *options[] = {"--presenter", "s:200:show", "--responder", NULL};
    outlive_store *store = start_one_worker(&w, path, sizeof path, options, "answerer");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(&w, 1, "present s", 1));
    /* Wait until the presentation is recorded, then answer from here. */
    double deadline = now_seconds() + 30;
    int presented = 0;
    while (!presented && now_seconds() < deadline) {
        outlive_message *message = NULL;
        CHECK_OK(outlive_message_get(store, id, &message));
        presented = outlive_message_is_presented(message);
        outlive_message_free(message);
        if (!presented) pump(&w, 1, 10);
    }
    CHECK(presented);
    CHECK_OK(outlive_message_respond(store, id, "cancel"));
    /* A second answer is refused: answered (STATE), or already handled and
     * deleted by the worker, which races this call (NOT_FOUND). */
    outlive_status second = outlive_message_respond(store, id, "ok");
    CHECK_MSG(second == OUTLIVE_E_STATE || second == OUTLIVE_E_NOT_FOUND, "a second answer got %s", outlive_status_name(second));
    CHECK(wait_events(&w, 1, "end s", 1));
    CHECK(wait_stored(store, 0));
    char expected[1024];
    snprintf(expected, sizeof expected, "respond %s cancel", id);
    CHECK(count_events(expected, -1) == 1);
    /* The end came after the answer was handled. */
    int respond_at = -1, end_at = -1;
    for (int e = 0; e < event_count; e++) {
        if (!strncmp(events[e].line, "respond", 7)) respond_at = e;
        if (!strncmp(events[e].line, "end", 3)) end_at = e;
    }
    CHECK(respond_at >= 0 && end_at > respond_at);
    CHECK(stop_one_worker(&w, store, path));
}

static void test_presentation_finished_from_another_thread_is_recorded(void) {
    char path[4096];
    struct worker w;
    const char *options[] = {"--presenter", "t:200:thread", "--responder", NULL};
    outlive_store *store = start_one_worker(&w, path, sizeof path, options, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    for (int i = 0; i < 10; i++) CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(&w, 1, "end t", 10));
    CHECK(wait_stored(store, 0));
    CHECK(count_events("respond", -1) == 10);
    CHECK(stop_one_worker(&w, store, path));
}

/* A message with a payload and a durable response handler that resolves only
 * in the worker program. */
static int post_with_handler(outlive_store *store, const char *scope, char out_id[OUTLIVE_ID_SIZE]) {
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("sync", "Conflict", &draft);
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    outlive_handler *handler = NULL;
    int ok = draft && bound && payload && outlive_args_set_string(bound, "tag", "t1") == OUTLIVE_OK &&
             outlive_args_set_string(payload, "note", "hello") == OUTLIVE_OK &&
             outlive_handler_new("messages_answered", NULL, bound, &handler) == OUTLIVE_OK &&
             outlive_message_draft_add_choice(draft, "ok", "Keep both", OUTLIVE_CHOICE_DEFAULT) == OUTLIVE_OK &&
             outlive_message_draft_set_payload(draft, payload) == OUTLIVE_OK &&
             outlive_message_draft_set_response_handler(draft, handler) == OUTLIVE_OK &&
             (!scope || outlive_message_draft_set_scope(draft, scope) == OUTLIVE_OK) &&
             outlive_message_post(store, draft, out_id) == OUTLIVE_OK;
    outlive_handler_free(handler);
    outlive_args_free(payload);
    outlive_args_free(bound);
    outlive_message_draft_free(draft);
    return ok;
}

static void test_durable_response_handler_runs_once_in_the_process_that_resolves_it(void) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    struct worker workers[2];
    const char *options[] = {"--presenter", "p:200:finish", NULL};
    CHECK(worker_start(&workers[0], path, "app", options));
    CHECK(worker_start(&workers[1], path, "app", options));
    CHECK(wait_events(workers, 2, "ready", 2));
    enum { N = 20 };
    char ids[N][OUTLIVE_ID_SIZE];
    for (int i = 0; i < N; i++) CHECK(post_with_handler(store, i % 2 ? "account-1" : NULL, ids[i]));
    CHECK(wait_events(workers, 2, "end p", N));
    CHECK(wait_stored(store, 0));
    settle(workers, 2);
    for (int i = 0; i < N; i++) {
        char expected[1024];
        snprintf(expected, sizeof expected, "answered %s ok %s t1", ids[i], i % 2 ? "account-1" : "-");
        CHECK_MSG(count_events(expected, -1) == 1, "message %d: %d calls of its response handler", i, count_events(expected, -1));
        snprintf(expected, sizeof expected, "payload %s hello", ids[i]);
        CHECK(count_events(expected, -1) == 1);
    }
    CHECK(count_events("answered", -1) == N);
    CHECK(worker_stop(&workers[0]));
    CHECK(worker_stop(&workers[1]));
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_answered_message_waits_for_a_process_that_resolves_its_response_handler(void) {
    event_count = 0;
    const char *dir = harness_store_location();
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    outlive_store *store = open_store(path, "poster");
    CHECK(store);
    char id[OUTLIVE_ID_SIZE];
    CHECK(post_with_handler(store, "account-2", id));
    CHECK_OK(outlive_message_respond(store, id, "ok"));
    /* Nothing here resolves messages_answered: the message stays, answered. */
    for (int i = 0; i < 5; i++) outlive_loop_dispatch(outlive_store_loop(store), 20);
    outlive_message *message = NULL;
    CHECK_OK(outlive_message_get(store, id, &message));
    CHECK(outlive_message_is_handled(message) && !outlive_message_is_removed(message));
    CHECK(outlive_message_has_response_handler(message));
    CHECK(strcmp(outlive_message_choice(message), "ok") == 0);
    outlive_message_free(message);
    /* A process where it resolves starts, with no presenter or response handler. */
    struct worker w;
    CHECK(worker_start(&w, path, "worker", NULL));
    CHECK(wait_events(&w, 1, "answered", 1));
    CHECK(wait_stored(store, 0));
    char expected[1024];
    snprintf(expected, sizeof expected, "answered %s ok account-2 t1", id);
    CHECK(count_events(expected, -1) == 1);
    CHECK(stop_one_worker(&w, store, path));
}

/* A presented message whose presenter wants an end notification outlives the
 * presenting process (kill -9): the end goes to a live run of the same process
 * name with a presenter of the same id, or, with none, the record just goes. */
static void end_after_presenter_died(const char *second_name, int expect_end) {
    event_count = 0;
    char path[4096];
    store_seeing_deaths_soon(path, sizeof path);
    outlive_store *store = open_store(path, "answerer");
    CHECK(store);
    struct worker workers[2];
    const char *first[] = {"--presenter", "s:200:show", NULL};
    CHECK(worker_start(&workers[0], path, "app", first));
    CHECK(wait_events(workers, 1, "ready", 1));
    char id[OUTLIVE_ID_SIZE];
    CHECK(post(store, "sync", 1, id));
    CHECK(wait_events(workers, 1, "present s", 1));
    double deadline = now_seconds() + 30;
    int presented = 0;
    while (!presented && now_seconds() < deadline) {
        outlive_message *message = NULL;
        CHECK_OK(outlive_message_get(store, id, &message));
        presented = outlive_message_is_presented(message);
        outlive_message_free(message);
        if (!presented) pump(workers, 1, 10);
    }
    CHECK(presented);
    const char *second[] = {"--presenter", "s:100:show", "--responder", NULL};
    CHECK(worker_start(&workers[1], path, second_name, second));
    CHECK(wait_events(workers, 2, "ready", 2));
    kill(workers[0].pid, SIGKILL);
    int status = 0;
    waitpid(workers[0].pid, &status, 0);
    close(workers[0].in);
    close(workers[0].out);
    CHECK_OK(outlive_message_respond(store, id, "ok"));
    CHECK(wait_events(workers, 2, "respond", 1));
    if (expect_end) CHECK_MSG(wait_events(workers, 2, "end s", 1), "the end notification was not handed on");
    CHECK(wait_stored(store, 0));
    settle(workers, 2);
    CHECK(count_events("end", -1) == expect_end);
    CHECK(count_events("present", -1) == 1);
    if (expect_end) CHECK(count_events("end s", 1) == 1);
    /* Stop only the survivor (index 1). */
    CHECK(worker_stop(&workers[1]));
    outlive_store_close(store);
    harness_remove_store(path);
}

static void test_end_notification_of_a_killed_presenter_goes_to_a_live_run_of_the_same_process(void) {
    end_after_presenter_died("app", 1);
}

static void test_end_notification_of_a_killed_presenter_without_heir_lets_the_record_go(void) {
    end_after_presenter_died("other", 0);
}

HARNESS_MAIN(
    T(test_end_notification_of_a_killed_presenter_goes_to_a_live_run_of_the_same_process),
    T(test_end_notification_of_a_killed_presenter_without_heir_lets_the_record_go),
    T(test_durable_response_handler_runs_once_in_the_process_that_resolves_it),
    T(test_answered_message_waits_for_a_process_that_resolves_its_response_handler),
    T(test_two_processes_100_messages_each_presented_once_ended_where_presented_answered_once),
    T(test_three_processes_100_messages_each_presented_once_ended_where_presented_answered_once),
    T(test_kill_9_of_the_presenting_process_lets_another_process_present),
    T(test_auto_resolver_answers_before_any_presenter_sees_the_message),
    T(test_auto_resolver_without_answer_removes_the_message_unpresented),
    T(test_declined_presentation_goes_to_another_process_and_reoffer_offers_it_again),
    T(test_presenter_added_after_messages_were_posted_presents_them_all),
    T(test_presenter_removed_while_presenting_can_still_finish_without_end),
    T(test_response_from_a_process_without_presenters_is_handled_and_ends_the_presentation),
    T(test_presentation_finished_from_another_thread_is_recorded)
)
