/* Task queue benchmarks, each beside its peer measured in the same run:
 *  - durable outlive_task_add per second vs. a raw SQLite INSERT of a
 *    comparable row committed per row (WAL), at synchronous=FULL (the store's
 *    default) and NORMAL, one add of each in turn;
 *  - batch add per second (one transaction of 100,000 tasks);
 *  - tasks completed per second by one runner with a no-op handler, at FULL
 *    and NORMAL: a completion batch of 1 (one commit per task, as before
 *    batches) beside the default, rounds interleaved;
 *  - add + run of one task with 0 vs. 1,000,000 tasks already stored (tasks
 *    of a handler this process cannot resolve, left for another process),
 *    samples interleaved between the two stores.
 * Usage: tasks_bench SCRATCH_DIR [add [ROUNDS]]. Prints a markdown section;
 * `add`: only the add rows, in ROUNDS interleaved rounds (default 3), for
 * comparing two builds of the library side by side (LD_LIBRARY_PATH). */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROUNDS 3
#define ADDS_FULL 300
#define ADDS_NORMAL 3000
#define BATCH 100000
#define COMPLETIONS 20000
#define STORED 1000000
#define SINGLE_RUNS 31


static void bench_noop(void) {}
static double batch_add(outlive_store *store, const char *name, size_t count);
static double run_until(outlive_store *store, size_t target);

static outlive_store *open_store_at(const char *dir, outlive_durability durability) {
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = durability;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "bench", NULL, &options, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        exit(1);
    }
    outlive_tasks_set_triggers(store, 0, 1e6);
    return store;
}

static outlive_store *open_store(const char *dir) { return open_store_at(dir, OUTLIVE_DURABILITY_FULL); }

static void must(outlive_status status, const char *what) {
    if (status != OUTLIVE_OK) {
        fprintf(stderr, "%s: %s\n", what, outlive_last_error());
        exit(1);
    }
}

/* The durable-add comparison: an Outlive store and a raw SQLite database
 * opened side by side and written one add each in turn (the side that goes
 * first alternates), each add timed alone, so that both meet the same moods of
 * the disk's fsync and stay in the same phase of their write-ahead logs (see
 * bench/kv_bench.c, where blocks of one side at a time read 0.71 in one run
 * and 0.84-0.89 in the next two). The raw side: a task's row without the
 * queue's bookkeeping, a UUID text id (unique), the serialized handler, the
 * creation time; one committed INSERT per row. */
typedef struct {
    outlive_store *store;
    outlive_handler *work;
    sqlite3 *db;
    sqlite3_stmt *insert;
} add_sides;

static void add_sides_open(add_sides *sides, int round, outlive_durability durability) {
    char dir[4200], raw_dir[4200], path[4300], name[64];
    snprintf(name, sizeof name, "tasks-add-%d-%d", durability, round);
    bench_fresh_dir(dir, sizeof dir, name);
    sides->store = open_store_at(dir, durability);
    outlive_handler_new("bench_noop", NULL, NULL, &sides->work);
    snprintf(name, sizeof name, "tasks-sqlite-%d-%d", durability, round);
    bench_fresh_dir(raw_dir, sizeof raw_dir, name);
    snprintf(path, sizeof path, "%s/raw.db", raw_dir);
    sqlite3_open(path, &sides->db);
    sqlite3_exec(sides->db, durability == OUTLIVE_DURABILITY_FULL ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL"
                                                                  : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                 NULL, NULL, NULL);
    sqlite3_exec(sides->db, "CREATE TABLE tasks(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, handler BLOB NOT NULL, created REAL NOT NULL)",
                 NULL, NULL, NULL);
    bench_fill_log(sides->db);
    sqlite3_prepare_v2(sides->db, "INSERT INTO tasks(id, handler, created) VALUES (?, ?, ?)", -1, &sides->insert, NULL);
}

static void add_sides_close(add_sides *sides) {
    outlive_handler_free(sides->work);
    outlive_store_close(sides->store);
    sqlite3_finalize(sides->insert);
    sqlite3_close(sides->db);
}

/* One add of side 0 (outlive_task_add) or 1 (the raw INSERT), its ns. */
static int64_t add_one(void *context, int side, int i) {
    add_sides *sides = context;
    unsigned char handler[24];
    memset(handler, 'h', sizeof handler);
    char id[40];
    /* Spread like random UUIDs, as the store's ids are. */
    snprintf(id, sizeof id, "%08x-0000-4000-8000-%012d", (unsigned)(i * 2654435761u), i);
    int64_t start = bench_now_ns();
    if (side == 0) {
        must(outlive_task_add(sides->store, sides->work, NULL, NULL, 0, NULL), "add");
    } else {
        sqlite3_bind_text(sides->insert, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(sides->insert, 2, handler, sizeof handler, SQLITE_TRANSIENT);
        sqlite3_bind_double(sides->insert, 3, 1.0 * i);
        if (sqlite3_step(sides->insert) != SQLITE_DONE) exit(1);
        sqlite3_reset(sides->insert);
    }
    return bench_now_ns() - start;
}

/* Adds per second of each side, in one round of `adds` adds each. */
static void interleaved_adds(int round, outlive_durability durability, int adds, double *ours, double *raw) {
    add_sides sides;
    add_sides_open(&sides, round, durability);
    int64_t spent[2] = {0, 0};
    bench_alternate(adds, add_one, &sides, spent);
    add_sides_close(&sides);
    *ours = adds / (spent[0] / 1e9);
    *raw = adds / (spent[1] / 1e9);
}

/* Tasks completed per second by one runner: COMPLETIONS no-op tasks added
 * beforehand, run to the end with at most `batch` claimed per transaction. */
static double completions_per_second(int round, outlive_durability durability, size_t batch) {
    char dir[4200], name[64];
    snprintf(name, sizeof name, "tasks-complete-%d-%d-%zu", durability, round, batch);
    bench_fresh_dir(dir, sizeof dir, name);
    outlive_store *store = open_store_at(dir, durability);
    must(outlive_tasks_set_completion_batch(store, batch), "completion batch");
    batch_add(store, "bench_noop", COMPLETIONS);
    double seconds = run_until(store, 0);
    outlive_store_close(store);
    return COMPLETIONS / seconds;
}

/* Adds `count` tasks of handler `name` in batches of BATCH; returns seconds. */
static double batch_add(outlive_store *store, const char *name, size_t count) {
    outlive_handler *work = NULL;
    outlive_handler_new(name, NULL, NULL, &work);
    outlive_task_spec *specs = calloc(BATCH, sizeof *specs);
    for (size_t i = 0; i < BATCH; i++) {
        specs[i].version = OUTLIVE_TASK_SPEC_VERSION;
        specs[i].work = work;
    }
    int64_t start = bench_now_ns();
    for (size_t done = 0; done < count; done += BATCH) {
        size_t n = count - done < BATCH ? count - done : BATCH;
        must(outlive_tasks_add_batch(store, specs, n, NULL), "batch add");
    }
    double seconds = (bench_now_ns() - start) / 1e9;
    free(specs);
    outlive_handler_free(work);
    return seconds;
}

static size_t pending(outlive_store *store) {
    size_t count = 0;
    must(outlive_tasks_count(store, &count), "count");
    return count;
}

/* Runs until `target` tasks are pending; returns seconds. */
static double run_until(outlive_store *store, size_t target) {
    int64_t start = bench_now_ns();
    must(outlive_tasks_run_now(store), "run_now");
    while (pending(store) != target) must(outlive_loop_dispatch(outlive_store_loop(store), 100), "dispatch");
    return (bench_now_ns() - start) / 1e9;
}

/* Milliseconds to add one task and run it, with the store as it is. */
static double add_and_run_one(outlive_store *store, outlive_handler *work) {
    size_t base = pending(store);
    int64_t start = bench_now_ns();
    must(outlive_task_add(store, work, NULL, NULL, 0, NULL), "add");
    run_until(store, base);
    return (bench_now_ns() - start) / 1e6;
}

/* Medians of add + run of one task on two stores, samples interleaved so that
 * both share the machine's noise; a few rounds first to settle the WAL. */
static void add_and_run_compare(outlive_store *a, outlive_store *b, double *median_a, double *median_b) {
    double samples_a[SINGLE_RUNS], samples_b[SINGLE_RUNS];
    outlive_handler *work = NULL;
    outlive_handler_new("bench_noop", NULL, NULL, &work);
    for (int i = 0; i < 5; i++) { add_and_run_one(a, work); add_and_run_one(b, work); }
    for (int i = 0; i < SINGLE_RUNS; i++) {
        samples_a[i] = add_and_run_one(a, work);
        samples_b[i] = add_and_run_one(b, work);
    }
    outlive_handler_free(work);
    *median_a = bench_median(samples_a, SINGLE_RUNS);
    *median_b = bench_median(samples_b, SINGLE_RUNS);
}

int main(int argc, char **argv) {
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argc > 1 ? argv[1] : "/tmp/outlive-bench");
    mkdir(bench_scratch, 0700);
    if (outlive_handler_register("bench_noop", "", (void (*)(void))bench_noop) != OUTLIVE_OK) return 1;

    static const outlive_durability levels[2] = {OUTLIVE_DURABILITY_FULL, OUTLIVE_DURABILITY_NORMAL};
    static const char *level_names[2] = {"FULL", "NORMAL"};
    if (argc > 2 && !strcmp(argv[2], "add")) {
        int rounds = argc > 3 ? atoi(argv[3]) : ROUNDS;
        if (rounds < 1 || rounds > 99) return 2;
        printf("| durable add/s vs raw SQLite INSERT per commit (median of %d) | outlive | peer | ratio |\n|---|---:|---:|---:|\n", rounds);
        for (int level = 0; level < 2; level++) {
            int adds = levels[level] == OUTLIVE_DURABILITY_FULL ? ADDS_FULL : ADDS_NORMAL;
            double outlive_rates[99], sqlite_rates[99];
            for (int round = 0; round < rounds; round++) {
                interleaved_adds(round, levels[level], adds, &outlive_rates[round], &sqlite_rates[round]);
            }
            double add = bench_median(outlive_rates, rounds), insert = bench_median(sqlite_rates, rounds);
            printf("| synchronous=%s | %.0f | %.0f | %.2f |\n", level_names[level], add, insert, add / insert);
        }
        return 0;
    }
    double add_rate[2], insert_rate[2], one_rate[2], batched_rate[2];
    for (int level = 0; level < 2; level++) {
        int adds = levels[level] == OUTLIVE_DURABILITY_FULL ? ADDS_FULL : ADDS_NORMAL;
        double outlive_rates[ROUNDS], sqlite_rates[ROUNDS], one[ROUNDS], batched[ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            interleaved_adds(round, levels[level], adds, &outlive_rates[round], &sqlite_rates[round]);
            one[round] = completions_per_second(round, levels[level], 1);
            batched[round] = completions_per_second(round, levels[level], OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH);
        }
        add_rate[level] = bench_median(outlive_rates, ROUNDS);
        insert_rate[level] = bench_median(sqlite_rates, ROUNDS);
        one_rate[level] = bench_median(one, ROUNDS);
        batched_rate[level] = bench_median(batched, ROUNDS);
    }

    char dir[4200];
    bench_fresh_dir(dir, sizeof dir, "tasks-batch");
    outlive_store *store = open_store(dir);
    double batch_seconds = batch_add(store, "bench_noop", BATCH);
    outlive_store_close(store);

    char full_dir[4200];
    bench_fresh_dir(dir, sizeof dir, "tasks-empty");
    bench_fresh_dir(full_dir, sizeof full_dir, "tasks-full");
    outlive_store *empty = open_store(dir);
    outlive_store *full = open_store(full_dir);
    double fill_seconds = batch_add(full, "bench_elsewhere", STORED);
    double empty_ms = 0, full_ms = 0;
    add_and_run_compare(empty, full, &empty_ms, &full_ms);
    outlive_store_close(empty);
    outlive_store_close(full);

    printf("### Task queue\n\n");
    printf("| measure | outlive | peer | ratio |\n|---|---:|---:|---:|\n");
    for (int level = 0; level < 2; level++)
        printf("| durable add/s (synchronous=%s) vs raw SQLite INSERT of a comparable row per commit | %.0f | %.0f | %.2f (goal >= 0.8) |\n",
               level_names[level], add_rate[level], insert_rate[level], add_rate[level] / insert_rate[level]);
    printf("| batch add/s (%d tasks, one transaction) | %.0f | goal 100000 | %.2f |\n", BATCH, BATCH / batch_seconds,
           BATCH / batch_seconds / 100000);
    for (int level = 0; level < 2; level++)
        printf("| tasks completed/s by one runner, no-op handler (%d tasks, synchronous=%s): completion batch %d vs 1 "
               "(a commit per task) | %.0f | %.0f | %.1f |\n", COMPLETIONS, level_names[level],
               OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH, batched_rate[level], one_rate[level], batched_rate[level] / one_rate[level]);
    printf("| add + run one task, ms (median of %d): 0 vs %d stored | %.2f | %.2f | %.2f (goal <= 2) |\n",
           SINGLE_RUNS, STORED, empty_ms, full_ms, full_ms / empty_ms);
    printf("\n%d tasks stored in %.1f s by batch add. The durable adds: an Outlive store and a raw SQLite database written "
           "one add each in turn, each add timed alone (median of %d rounds); the raw INSERT runs at the same synchronous "
           "level, with the same WAL journal. Rounds of the completion comparison interleaved (median of %d).\n",
           STORED, fill_seconds, ROUNDS, ROUNDS);
    return 0;
}
