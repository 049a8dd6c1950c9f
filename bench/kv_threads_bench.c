/* Many writers in one process: durable outlive_kv_set calls from 1, 2, 4 and 8
 * threads sharing one store handle, at synchronous FULL and NORMAL, each beside
 * one thread measured in the same round (rounds interleaved, median of 3).
 * Every thread writes keys of its own for a fixed time, the same 4096 keys in
 * all whatever the number of threads (so that 8 threads do not write to a store
 * 8 times as large, with checkpoints 8 times as costly, as one thread does); a
 * set counts once it returned OUTLIVE_OK (its change durable). Concurrent calls of one handle share
 * a commit (group commit), so the rate should grow with the threads where a
 * commit costs an fsync.
 * Usage: kv_threads_bench SCRATCH_DIR (OUTLIVE_KV_THREADS_SECONDS sets the time
 * of one measurement, default 1.5). Prints a markdown section. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <pthread.h>
#include <stdatomic.h>

#define ROUNDS 3
#define MAX_THREADS 8
#define KEYS 4096
static const int thread_counts[] = {1, 2, 4, 8};
#define COUNTS (sizeof thread_counts / sizeof thread_counts[0])

static double seconds_each = 1.5;

struct writer {
    outlive_store *store;
    int index;
    int keys;
    int64_t end_at;
    atomic_int *ready;
    atomic_int *go;
    uint64_t sets;
    int failed;
};

static void *write_keys(void *argument) {
    struct writer *writer = argument;
    char key[64], value[100];
    memset(value, 'v', sizeof value);
    atomic_fetch_add(writer->ready, 1);
    while (!atomic_load(writer->go)) sched_yield();
    for (uint64_t i = 0; bench_now_ns() < writer->end_at; i++) {
        snprintf(key, sizeof key, "t%d/key%06llu", writer->index, (unsigned long long)(i % (uint64_t)writer->keys));
        /* A new value every time: SQLite writes nothing for a row set to the bytes it holds. */
        snprintf(value, sizeof value, "%llu", (unsigned long long)i);
        if (outlive_kv_set(writer->store, key, value, sizeof value) != OUTLIVE_OK) {
            fprintf(stderr, "kv set: %s\n", outlive_last_error());
            writer->failed = 1;
            return NULL;
        }
        writer->sets++;
    }
    return NULL;
}

/* Sets per second of `threads` threads on one fresh store. */
static double sets_per_second(outlive_durability durability, int threads, int round) {
    char dir[4200], name[64];
    snprintf(name, sizeof name, "kv-threads-%d-%d-%d", (int)durability, threads, round);
    bench_fresh_dir(dir, sizeof dir, name);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = durability;
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "bench", NULL, &options, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        exit(1);
    }
    struct writer writers[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    atomic_int ready = 0, go = 0;
    for (int t = 0; t < threads; t++) {
        writers[t] = (struct writer){store, t, KEYS / threads, 0, &ready, &go, 0, 0};
        if (pthread_create(&ids[t], NULL, write_keys, &writers[t]) != 0) exit(1);
    }
    while (atomic_load(&ready) < threads) sched_yield();
    int64_t start = bench_now_ns();
    for (int t = 0; t < threads; t++) writers[t].end_at = start + (int64_t)(seconds_each * 1e9);
    atomic_store(&go, 1);
    uint64_t sets = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        if (writers[t].failed) exit(1);
        sets += writers[t].sets;
    }
    int64_t elapsed = bench_now_ns() - start;
    outlive_store_close(store);
    return sets / (elapsed / 1e9);
}

int main(int argc, char **argv) {
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argc > 1 ? argv[1] : "/tmp/outlive-bench");
    mkdir(bench_scratch, 0700);
    const char *env = getenv("OUTLIVE_KV_THREADS_SECONDS");
    if (env && atof(env) > 0) seconds_each = atof(env);

    const outlive_durability levels[] = {OUTLIVE_DURABILITY_FULL, OUTLIVE_DURABILITY_NORMAL};
    const char *level_names[] = {"FULL", "NORMAL"};
    double rates[2][COUNTS][ROUNDS];
    for (int round = 0; round < ROUNDS; round++)
        for (int level = 0; level < 2; level++)
            for (size_t c = 0; c < COUNTS; c++)
                rates[level][c][round] = sets_per_second(levels[level], thread_counts[c], round);

    printf("### Key-value store: many writers in one process\n\n");
    printf("Durable outlive_kv_set calls from N threads of one process on one store handle "
           "(%.1f s each, median of %d interleaved rounds; the ratio: the median of each round's ratio to its own one "
           "thread); concurrent calls share a commit "
           "(group commit), each returning once its own change is durable:\n\n", seconds_each, ROUNDS);
    printf("| synchronous | threads | sets /s | ratio to 1 thread |\n|---|---:|---:|---:|\n");
    double eight_ratio[2] = {0, 0};
    for (int level = 0; level < 2; level++) {
        for (size_t c = 0; c < COUNTS; c++) {
            double rate = bench_median(rates[level][c], ROUNDS);
            /* Each round's ratio to its own one thread, then their median: the
             * disk's fsync moves between rounds more than within one. */
            double ratios[ROUNDS];
            for (int round = 0; round < ROUNDS; round++)
                ratios[round] = rates[level][0][round] > 0 ? rates[level][c][round] / rates[level][0][round] : 0;
            double ratio = bench_median(ratios, ROUNDS);
            if (thread_counts[c] == 8) eight_ratio[level] = ratio;
            printf("| %s | %d | %.0f | %.2f |\n", level_names[level], thread_counts[c], rate, ratio);
        }
    }
    printf("\nGoal: 8 threads at FULL ≥ 4× one thread: %.2f×, %s. (NORMAL, where a commit costs no fsync: %.2f×.)\n",
           eight_ratio[0], eight_ratio[0] >= 4 ? "met" : "not met", eight_ratio[1]);
    return 0;
}
