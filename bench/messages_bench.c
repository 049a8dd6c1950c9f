/* Message-queue benchmark:
 *  - the outlive_message_post call beside a raw SQLite commit of a comparable
 *    row (an INSERT of a UUID-keyed row with a title and a choices blob; WAL,
 *    the same synchronous level, a prepared statement), at FULL and NORMAL,
 *    alternating a few ms apart so that both meet the same machine (issue 17:
 *    every durable single operation ≥ 0.8× such a commit);
 *  - time from outlive_message_post in one process to the presenter's present
 *    callback in another, p50/p99, with 0, 10,000 and 100,000 other messages
 *    stored (presented and waiting for an answer). The queue looks only at
 *    messages that changed, so the figures should not grow with what is
 *    stored; the ratio to the empty store is printed beside them.
 * Usage: messages_bench SCRATCH_DIR [post]. Prints a markdown section; with
 * `post`, only the post beside the raw commit (its table, for side-by-side
 * runs of two libraries). */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <poll.h>
#include <sqlite3.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLES 300
#define COST_SAMPLES 400
#define COST_WARMUP 30
#define COST_GAP_US 2000


static void die(const char *what) {
    fprintf(stderr, "%s: %s\n", what, outlive_last_error());
    exit(1);
}

/* ── the presenting process ── */

static int report_fd = -1;

static int32_t priority(const outlive_message *message, void *context) {
    (void)context;
    return strncmp(outlive_message_title(message), "t=", 2) == 0 ? OUTLIVE_PRIORITY_DEFAULT : OUTLIVE_PRIORITY_WONT_PRESENT;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)context;
    int64_t latency = bench_now_ns() - atoll(outlive_message_title(message) + 2);
    outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, false, "ok");
    if (write(report_fd, &latency, sizeof latency) != sizeof latency) exit(1);
}

static bool take(const outlive_message *message, void *context) {
    (void)message; (void)context;
    return true;
}

static void presenter_process(const char *dir, int ready_fd, int control_fd) {
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "viewer", NULL, &options, &store) != OUTLIVE_OK) die("open (presenter)");
    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, priority, present, NULL};
    if (outlive_presenter_add(store, "bench", &callbacks, NULL, NULL) != OUTLIVE_OK) die("presenter_add");
    if (outlive_response_handler_add(store, "bench", take, NULL, NULL) != OUTLIVE_OK) die("response_handler_add");
    outlive_loop *loop = outlive_store_loop(store);
    outlive_loop_dispatch(loop, 0);
    char ready = 'r';
    if (write(ready_fd, &ready, 1) != 1) exit(1);
    for (;;) {
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = control_fd, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) continue;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents & (POLLIN | POLLHUP)) break;
    }
    outlive_store_close(store);
    exit(0);
}

/* ── the posting process ── */

/* Stores `count` other messages: one posted and muted through the API, then
 * copied in one SQL transaction (posting 100,000 one by one would take most of
 * the time budget). The copies are rows like any posted message: presented,
 * unanswered, with fresh ids and positions, counted in their category. */
static void fill(const char *dir, int count) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "filler", NULL, NULL, &store) != OUTLIVE_OK) die("open (filler)");
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("other", "Stored", &draft);
    outlive_message_draft_add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT);
    outlive_message_draft_set_scope(draft, "account");
    char id[OUTLIVE_ID_SIZE];
    if (outlive_message_post(store, draft, id) != OUTLIVE_OK) die("post (fill)");
    if (outlive_message_mute(store, id) != OUTLIVE_OK) die("mute");
    outlive_message_draft_free(draft);
    outlive_store_close(store);
    if (count <= 1) {
        if (count == 0) {
            if (outlive_store_open(dir, "filler", NULL, NULL, &store) != OUTLIVE_OK || outlive_message_remove(store, id) != OUTLIVE_OK) die("remove");
            outlive_store_close(store);
        }
        return;
    }
    char path[16384], sql[4096];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) exit(1);
    sqlite3_busy_timeout(db, 10000);
    /* Since step 3 of the messages schema (SQLite), messages above the counted
     * mark are counted from their rows, not kept: every message is counted
     * here (the copies and the one posted) and the mark moved past them. */
    sqlite3_stmt *marked = NULL;
    int has_mark = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE name = 'outlive_message_counted'", -1, &marked, NULL) == SQLITE_OK
                   && sqlite3_step(marked) == SQLITE_ROW;
    sqlite3_finalize(marked);
    char counters[256];
    snprintf(counters, sizeof counters, "UPDATE outlive_message_categories SET count = count + %d WHERE category = 'other';", count - 1);
    snprintf(sql, sizeof sql,
        "BEGIN IMMEDIATE;"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) "
        "INSERT INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload, "
        "  response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled, choice, "
        "  removed, presenter, presenter_run, requires_end, responding_run) "
        "SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) "
        "  || '-a' || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))), t.seq + n.i, created, category, "
        "  title, body, scope, thread, choices, payload, response_handler, auto_remove, locking_run, locking_process, "
        "  processed_by, presented, handled, choice, removed, presenter, presenter_run, requires_end, responding_run "
        "FROM n, outlive_messages t WHERE t.id = '%s';"
        "%s"
        "COMMIT;", count - 1, id,
        has_mark ? "DELETE FROM outlive_message_categories;"
                   "INSERT INTO outlive_message_categories(category, count) SELECT category, count(*) FROM outlive_messages GROUP BY category;"
                   "UPDATE outlive_message_counted SET seq = (SELECT max(seq) FROM outlive_messages) WHERE slot = 0;"
                 : counters);
    char *error = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "fill: %s\n", error);
        exit(1);
    }
    sqlite3_close(db);
}

struct result { int stored; int64_t p50, p99; };

static struct result measure(const char *dir, int others) {
    int ready[2], report[2], control[2];
    if (pipe(ready) || pipe(report) || pipe(control)) exit(1);
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]); close(report[0]); close(control[1]);
        report_fd = report[1];
        presenter_process(dir, ready[1], control[0]);
    }
    close(ready[1]); close(report[1]); close(control[0]);
    char byte;
    if (read(ready[0], &byte, 1) != 1) exit(1);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "poster", NULL, &options, &store) != OUTLIVE_OK) die("open (poster)");
    size_t stored = 0;
    if (outlive_messages_count(store, "other", &stored) != OUTLIVE_OK || stored != (size_t)others) {
        fprintf(stderr, "%zu other messages stored, %d wanted\n", stored, others);
        exit(1);
    }
    static int64_t samples[SAMPLES];
    char id[OUTLIVE_ID_SIZE], title[64];
    for (int i = 0; i < SAMPLES + 20; i++) {
        snprintf(title, sizeof title, "t=%lld", (long long)bench_now_ns());
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new("bench", title, &draft);
        outlive_message_draft_add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT);
        if (outlive_message_post(store, draft, id) != OUTLIVE_OK) die("post");
        outlive_message_draft_free(draft);
        int64_t latency = 0;
        struct pollfd pfd = {.fd = report[0], .events = POLLIN};
        if (poll(&pfd, 1, 10000) != 1 || read(report[0], &latency, sizeof latency) != sizeof latency) {
            fprintf(stderr, "no presentation within 10 s\n");
            exit(1);
        }
        if (i >= 20) samples[i - 20] = latency;  /* the first 20 warm up */
    }
    close(control[1]);
    waitpid(child, NULL, 0);
    close(ready[0]); close(report[0]);
    outlive_store_close(store);
    struct result result = {others, bench_percentile(samples, SAMPLES, 50), bench_percentile(samples, SAMPLES, 99)};
    return result;
}

/* The post call and a raw commit of a comparable row, alternating. */
static void post_cost(bool normal, double *post50, double *post99, double *commit50, double *commit99) {
    char dir[4200], raw_dir[4200], raw_path[4300];
    bench_fresh_dir(dir, sizeof dir, normal ? "cost-normal" : "cost-full");
    bench_fresh_dir(raw_dir, sizeof raw_dir, normal ? "raw-normal" : "raw-full");
    snprintf(raw_path, sizeof raw_path, "%s/raw.db", raw_dir);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    if (normal) options.durability = OUTLIVE_DURABILITY_NORMAL;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "poster", NULL, &options, &store) != OUTLIVE_OK) die("open (cost)");
    sqlite3 *db = NULL;
    sqlite3_open(raw_path, &db);
    char setup[512];
    snprintf(setup, sizeof setup,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
             "CREATE TABLE m(id TEXT PRIMARY KEY, created REAL NOT NULL, category TEXT NOT NULL, title TEXT NOT NULL, choices BLOB NOT NULL)",
             normal ? "NORMAL" : "FULL");
    if (sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK) { fprintf(stderr, "raw: %s\n", sqlite3_errmsg(db)); exit(1); }
    bench_fill_log(db);
    sqlite3_stmt *insert = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO m(id, created, category, title, choices) VALUES (?, ?, 'bench', ?, ?)", -1, &insert, NULL);
    static int64_t posts[COST_SAMPLES + COST_WARMUP], commits[COST_SAMPLES + COST_WARMUP];
    const int rounds = COST_SAMPLES + COST_WARMUP;
    char id[OUTLIVE_ID_SIZE], title[64];
    const unsigned char choices[24] = "\x01\x02ok\x02OK\x03";
    for (int i = 0; i < rounds; i++) {
        outlive_signal_new_id(id);  /* a fresh UUID, as a message id is */
        int64_t start = bench_now_ns();
        snprintf(title, sizeof title, "t=%lld", (long long)start);
        sqlite3_bind_text(insert, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(insert, 2, (double)start / 1e9);
        sqlite3_bind_text(insert, 3, title, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(insert, 4, choices, sizeof choices, SQLITE_TRANSIENT);
        if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "raw: %s\n", sqlite3_errmsg(db)); exit(1); }
        sqlite3_reset(insert);
        commits[i] = bench_now_ns() - start;
        usleep(COST_GAP_US);

        start = bench_now_ns();
        snprintf(title, sizeof title, "t=%lld", (long long)start);
        outlive_message_draft *draft = NULL;
        outlive_message_draft_new("bench", title, &draft);
        outlive_message_draft_add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT);
        if (outlive_message_post(store, draft, id) != OUTLIVE_OK) die("post (cost)");
        outlive_message_draft_free(draft);
        posts[i] = bench_now_ns() - start;
        usleep(COST_GAP_US);
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
    outlive_store_close(store);
    *post50 = bench_percentile(posts + COST_WARMUP, COST_SAMPLES, 50) / 1e3;
    *post99 = bench_percentile(posts + COST_WARMUP, COST_SAMPLES, 99) / 1e3;
    *commit50 = bench_percentile(commits + COST_WARMUP, COST_SAMPLES, 50) / 1e3;
    *commit99 = bench_percentile(commits + COST_WARMUP, COST_SAMPLES, 99) / 1e3;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argv[1]);
    signal(SIGPIPE, SIG_IGN);
    double cost[2][4];
    for (int level = 0; level < 2; level++) post_cost(level == 1, &cost[level][0], &cost[level][1], &cost[level][2], &cost[level][3]);
    bool post_only = argc > 2 && strcmp(argv[2], "post") == 0;
    if (post_only) {
        printf("| synchronous | outlive_message_post p50 | p99 | raw commit p50 | p99 | commit p50 / post p50 (goal ≥ 0.8) |\n"
               "|---|---:|---:|---:|---:|---:|\n");
        for (int level = 0; level < 2; level++)
            printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", level ? "NORMAL" : "FULL", cost[level][0], cost[level][1],
                   cost[level][2], cost[level][3], cost[level][0] > 0 ? cost[level][2] / cost[level][0] : 0);
        return 0;
    }
    const int sizes[3] = {0, 10000, 100000};
    char dirs[3][4200];
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "messages-%d", sizes[i]);
        bench_fresh_dir(dirs[i], sizeof dirs[i], name);
        fill(dirs[i], sizes[i]);
    }
    /* Rounds interleave the sizes so that they share the machine's noise; the
     * median round's figures are reported. */
    enum { ROUNDS = 3 };
    double p50[3][ROUNDS], p99[3][ROUNDS];
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < 3; i++) {
            struct result r = measure(dirs[i], sizes[i]);
            p50[i][round] = (double)r.p50;
            p99[i][round] = (double)r.p99;
        }
    struct result results[3];
    for (int i = 0; i < 3; i++)
        results[i] = (struct result){sizes[i], (int64_t)bench_median(p50[i], ROUNDS), (int64_t)bench_median(p99[i], ROUNDS)};
    printf("### Message queue\n\n");
    printf("The outlive_message_post call (a draft with one choice, built in the timed span as a program does) beside one raw"
           " SQLite commit of a comparable row (INSERT of a UUID-keyed row with a category, a title and a choices blob; WAL,"
           " same synchronous level, prepared), alternating %d µs apart, %d samples after %d not counted (µs):\n\n",
           COST_GAP_US, COST_SAMPLES, COST_WARMUP);
    printf("| synchronous | outlive_message_post p50 | p99 | raw commit p50 | p99 | commit p50 / post p50 (goal ≥ 0.8) |\n"
           "|---|---:|---:|---:|---:|---:|\n");
    for (int level = 0; level < 2; level++)
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", level ? "NORMAL" : "FULL", cost[level][0], cost[level][1],
               cost[level][2], cost[level][3], cost[level][0] > 0 ? cost[level][2] / cost[level][0] : 0);
    printf("\n");
    printf("#### Post → presentation in another process\n\n");
    printf("%d posts per row, each presented by a presenter in a second process (both handles with\n", SAMPLES);
    printf("durability NORMAL, so that the figures show the queue's work rather than fsync);\n");
    printf("the other messages are stored presented and unanswered. Median of %d interleaved rounds;\n", ROUNDS);
    printf("ratio: p50 / p50 with none stored (goal: within 2x).\n\n");
    printf("| other messages stored | p50 (µs) | p99 (µs) | p50 ratio |\n|---:|---:|---:|---:|\n");
    for (int i = 0; i < 3; i++)
        printf("| %d | %.0f | %.0f | %.2f× |\n", results[i].stored, results[i].p50 / 1e3, results[i].p99 / 1e3,
               (double)results[i].p50 / (double)results[0].p50);
    printf("\n");
    return 0;
}
