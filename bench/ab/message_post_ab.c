/* Two builds of liboutlive side by side in one process: their message posts
 * and a raw SQLite commit of a comparable row alternate 2000 µs apart, as in
 * messages_bench's post table, so that both builds meet the same machine at
 * the same moment (separate runs of messages_bench, one per build, moved the
 * ratio by ±0.05 between runs on a shared machine, more than a change of a
 * few percent). Each build is loaded with dlopen(RTLD_LOCAL): it carries its
 * own Swift runtime, and exports only the C API. Which build posts first
 * alternates every round.
 *
 * Not part of `make bench` (it needs two builds). Build and run:
 *   cc -std=gnu11 -O2 -Iinclude -Ibench -o build/message_post_ab bench/ab/message_post_ab.c -lsqlite3 -ldl -lm
 *   build/message_post_ab SCRATCH_DIR normal|full SAMPLES A.so B.so
 * where A.so and B.so are copies of two builds' liboutlive.so (distinct
 * paths). Prints the commit's p50 and each build's post p50 (µs), and
 * commit p50 / post p50 for each. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <dlfcn.h>
#include <sqlite3.h>

#define WARMUP 30
#define GAP_US 2000

struct build {
    outlive_status (*open)(const char *, const char *, const char *, const outlive_store_options *, outlive_store **);
    outlive_status (*draft_new)(const char *, const char *, outlive_message_draft **);
    outlive_status (*add_choice)(outlive_message_draft *, const char *, const char *, outlive_choice_kind);
    outlive_status (*post)(outlive_store *, outlive_message_draft *, char *);
    void (*draft_free)(outlive_message_draft *);
    void (*close)(outlive_store *);
    const char *(*last_error)(void);
    outlive_store *store;
};

static void *symbol(void *library, const char *name) {
    void *found = dlsym(library, name);
    if (!found) { fprintf(stderr, "%s: %s\n", name, dlerror()); exit(1); }
    return found;
}

static void load(struct build *b, const char *path) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) { fprintf(stderr, "%s\n", dlerror()); exit(1); }
    b->open = symbol(library, "outlive_store_open");
    b->draft_new = symbol(library, "outlive_message_draft_new");
    b->add_choice = symbol(library, "outlive_message_draft_add_choice");
    b->post = symbol(library, "outlive_message_post");
    b->draft_free = symbol(library, "outlive_message_draft_free");
    b->close = symbol(library, "outlive_store_close");
    b->last_error = symbol(library, "outlive_last_error");
}

/* One post as messages_bench times it: the draft built in the timed span. */
static int64_t post(struct build *b) {
    char id[OUTLIVE_ID_SIZE], title[64];
    int64_t start = bench_now_ns();
    snprintf(title, sizeof title, "t=%lld", (long long)start);
    outlive_message_draft *draft = NULL;
    b->draft_new("bench", title, &draft);
    b->add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT);
    if (b->post(b->store, draft, id) != OUTLIVE_OK) { fprintf(stderr, "post: %s\n", b->last_error()); exit(1); }
    b->draft_free(draft);
    return bench_now_ns() - start;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s SCRATCH_DIR normal|full SAMPLES A.so B.so\n", argv[0]);
        return 2;
    }
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argv[1]);
    bool normal = strcmp(argv[2], "normal") == 0;
    int samples = atoi(argv[3]);
    struct build builds[2];
    load(&builds[0], argv[4]);
    load(&builds[1], argv[5]);
    char dirs[2][4200], raw_dir[4200], raw_path[4300];
    bench_fresh_dir(dirs[0], sizeof dirs[0], "ab-a");
    bench_fresh_dir(dirs[1], sizeof dirs[1], "ab-b");
    bench_fresh_dir(raw_dir, sizeof raw_dir, "ab-raw");
    snprintf(raw_path, sizeof raw_path, "%s/raw.db", raw_dir);
    for (int k = 0; k < 2; k++) {
        outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
        if (normal) options.durability = OUTLIVE_DURABILITY_NORMAL;
        if (builds[k].open(dirs[k], "poster", NULL, &options, &builds[k].store) != OUTLIVE_OK) {
            fprintf(stderr, "open: %s\n", builds[k].last_error());
            return 1;
        }
    }
    /* The raw commit of messages_bench: a UUID-keyed row, WAL, the same level, prepared. */
    sqlite3 *db = NULL;
    sqlite3_open(raw_path, &db);
    char setup[512];
    snprintf(setup, sizeof setup,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
             "CREATE TABLE m(id TEXT PRIMARY KEY, created REAL NOT NULL, category TEXT NOT NULL, title TEXT NOT NULL, choices BLOB NOT NULL)",
             normal ? "NORMAL" : "FULL");
    if (sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK) { fprintf(stderr, "raw: %s\n", sqlite3_errmsg(db)); return 1; }
    sqlite3_stmt *insert = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO m(id, created, category, title, choices) VALUES (?, ?, 'bench', ?, ?)", -1, &insert, NULL);
    const unsigned char choices[24] = "\x01\x02ok\x02OK\x03";
    int rounds = samples + WARMUP;
    int64_t *commits = calloc((size_t)rounds, sizeof *commits);
    int64_t *posts[2] = {calloc((size_t)rounds, sizeof(int64_t)), calloc((size_t)rounds, sizeof(int64_t))};
    for (int i = 0; i < rounds; i++) {
        char id[40], title[64];
        snprintf(id, sizeof id, "%08x-%04x-4%03x-a%03x-%08x%04x", (unsigned)rand(), (unsigned)rand() & 0xFFFF,
                 (unsigned)rand() & 0xFFF, (unsigned)rand() & 0xFFF, (unsigned)rand(), (unsigned)rand() & 0xFFFF);
        int64_t start = bench_now_ns();
        snprintf(title, sizeof title, "t=%lld", (long long)start);
        sqlite3_bind_text(insert, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(insert, 2, (double)start / 1e9);
        sqlite3_bind_text(insert, 3, title, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(insert, 4, choices, sizeof choices, SQLITE_TRANSIENT);
        if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "raw: %s\n", sqlite3_errmsg(db)); return 1; }
        sqlite3_reset(insert);
        commits[i] = bench_now_ns() - start;
        usleep(GAP_US);
        int first = i & 1;
        posts[first][i] = post(&builds[first]);
        usleep(GAP_US);
        posts[!first][i] = post(&builds[!first]);
        usleep(GAP_US);
    }
    double commit = bench_percentile(commits + WARMUP, (size_t)samples, 50) / 1e3;
    double a = bench_percentile(posts[0] + WARMUP, (size_t)samples, 50) / 1e3;
    double b = bench_percentile(posts[1] + WARMUP, (size_t)samples, 50) / 1e3;
    printf("commit p50 %.1f  A post p50 %.1f (ratio %.3f)  B post p50 %.1f (ratio %.3f)\n", commit, a, commit / a, b, commit / b);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    for (int k = 0; k < 2; k++) builds[k].close(builds[k].store);
    return 0;
}
