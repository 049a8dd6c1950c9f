/* Signal benchmarks, each beside its peers measured in the same run:
 *  - latency from outlive_signal_post in one process to the consumer's handler
 *    running in another (1,000 posts, each after the previous was delivered and
 *    recorded),
 *    beside one raw SQLite commit and an inotify ping-pong between two processes;
 *  - throughput of posts to a signal with 1, 10 and 100 consumers in another
 *    process: posts per second, and the time until every consumer received the
 *    final version.
 * Usage: signals_bench SCRATCH_DIR. Prints a markdown section. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLES 1000
#define POSTS 200


static void die(const char *what) {
    fprintf(stderr, "signals_bench: %s: %s\n", what, outlive_last_error());
    exit(1);
}

/* The consumer side: the handler notes each delivery; the dispatch loop
 * reports them on a pipe once dispatch returned, i.e. after the library
 * recorded the delivered version, so that the next post does not wait for that
 * commit (the latency of one post, not of a post queued behind a commit). */
static int report_fd = -1;
static int64_t notes[1024][3];
static int noted;

OUTLIVE_HANDLER(signals_bench_receive, OUTLIVE_INTEGER(sent), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated)) {
    if (noted < 1024) {
        notes[noted][0] = bench_now_ns() - sent;
        notes[noted][1] = (int64_t)version;
        notes[noted][2] = terminated ? 1 : 0;
        noted++;
    }
}

static void report_notes(void) {
    ssize_t size = (ssize_t)(noted * sizeof notes[0]);
    if (size > 0 && write(report_fd, notes, (size_t)size) != size) _exit(1);
    noted = 0;
}

/* Child: opens the store, registers `consumers` this-run consumers of signal,
 * writes one byte when ready, dispatches until every consumer got a
 * terminating version, then exits. */
static void consumer_process(const char *dir, const char *signal, int consumers, int ready_fd) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "consumer", NULL, NULL, &store) != OUTLIVE_OK) die("open");
    outlive_handler *handler = NULL;
    outlive_handler_new("signals_bench_receive", NULL, NULL, &handler);
    if (!handler) die("handler");
    for (int i = 0; i < consumers; i++) {
        if (outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL) != OUTLIVE_OK)
            die("consume");
    }
    outlive_handler_free(handler);
    if (write(ready_fd, "r", 1) != 1) _exit(1);
    outlive_loop *loop = outlive_store_loop(store);
    for (;;) {
        if (outlive_signal_lookup(store, signal, NULL, NULL, NULL) == OUTLIVE_E_NOT_FOUND) break;
        struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
        if (poll(&pfd, 1, 10000) <= 0) _exit(3);
        outlive_loop_dispatch(loop, 0);
        report_notes();
    }
    outlive_store_close(store);
    _exit(0);
}

static pid_t start_consumer(const char *dir, const char *signal, int consumers, int *reports) {
    int pipe_fds[2], ready[2];
    if (pipe(pipe_fds) != 0 || pipe(ready) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        close(ready[0]);
        report_fd = pipe_fds[1];
        consumer_process(dir, signal, consumers, ready[1]);
    }
    close(pipe_fds[1]);
    close(ready[1]);
    char byte;
    if (read(ready[0], &byte, 1) != 1) { fprintf(stderr, "consumer did not start\n"); exit(1); }
    close(ready[0]);
    *reports = pipe_fds[0];
    return pid;
}

static outlive_status post_now(outlive_store *store, const char *signal, bool terminates) {
    outlive_args *payload = NULL;
    outlive_args_new(&payload);
    if (!payload) return OUTLIVE_E_NO_MEMORY;
    outlive_status status = outlive_args_set_integer(payload, "sent", bench_now_ns());
    if (status == OUTLIVE_OK) status = outlive_signal_post(store, signal, payload, terminates);
    outlive_args_free(payload);
    return status;
}

static void signal_latency(double *p50, double *p99) {
    char dir[4200];
    bench_fresh_dir(dir, sizeof dir, "latency");
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    int reports;
    pid_t pid = start_consumer(dir, signal, 1, &reports);
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "poster", NULL, NULL, &store) != OUTLIVE_OK) die("open");
    static int64_t samples[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
        if (post_now(store, signal, i == SAMPLES - 1) != OUTLIVE_OK) die("post");
        int64_t record[3];
        if (read(reports, record, sizeof record) != sizeof record) { fprintf(stderr, "consumer stopped\n"); exit(1); }
        if (record[1] != i + 1) { fprintf(stderr, "version %lld, expected %d\n", (long long)record[1], i + 1); exit(1); }
        samples[i] = record[0];
    }
    waitpid(pid, NULL, 0);
    close(reports);
    outlive_store_close(store);
    *p50 = bench_percentile(samples, SAMPLES, 50) / 1e3;
    *p99 = bench_percentile(samples, SAMPLES, 99) / 1e3;
}

/* POSTS posts as fast as the poster can make them to a signal with
 * `consumers` consumers in another process. */
static void post_throughput(int consumers, double *posts_per_second, double *drain_ms, long *calls) {
    char dir[4200], name[64];
    snprintf(name, sizeof name, "throughput-%d", consumers);
    bench_fresh_dir(dir, sizeof dir, name);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    int reports;
    pid_t pid = start_consumer(dir, signal, consumers, &reports);
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "poster", NULL, NULL, &store) != OUTLIVE_OK) die("open");
    int64_t start = bench_now_ns();
    for (int i = 0; i < POSTS; i++) {
        if (post_now(store, signal, i == POSTS - 1) != OUTLIVE_OK) die("post");
    }
    int64_t posted = bench_now_ns();
    int64_t record[3];
    long finals = 0;
    *calls = 0;
    while (finals < consumers && read(reports, record, sizeof record) == sizeof record) {
        (*calls)++;
        if (record[2]) finals++;
    }
    int64_t drained = bench_now_ns();
    waitpid(pid, NULL, 0);
    close(reports);
    outlive_store_close(store);
    *posts_per_second = POSTS / ((posted - start) / 1e9);
    *drain_ms = (drained - start) / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: signals_bench SCRATCH_DIR\n"); return 2; }
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argv[1]);
    double signal50, signal99, inotify50, inotify99;
    signal_latency(&signal50, &signal99);
    double commit, commit99;
    char peer_dir[4200];
    bench_fresh_dir(peer_dir, sizeof peer_dir, "commit");
    bench_peer_sqlite_commit(peer_dir, SAMPLES, &commit, &commit99);
    bench_fresh_dir(peer_dir, sizeof peer_dir, "inotify");
    bench_peer_inotify_pingpong(peer_dir, SAMPLES, &inotify50, &inotify99);
    const int counts[3] = {1, 10, 100};
    double rate[3], drain[3];
    long calls[3];
    for (int i = 0; i < 3; i++) post_throughput(counts[i], &rate[i], &drain[i], &calls[i]);

    printf("### Signals\n\n");
    printf("Post in one process → consumer's handler running in another (%d posts, each after the previous was delivered and recorded; µs):\n\n", SAMPLES);
    printf("| path | p50 | p99 |\n|---|---:|---:|\n");
    printf("| outlive_signal_post → handler in another process | %.0f | %.0f |\n", signal50, signal99);
    printf("| inotify ping-pong between two processes (peer) | %.0f | %.0f |\n", inotify50, inotify99);
    printf("| one raw SQLite commit, synchronous=FULL (peer) | %.0f | %.0f |\n\n", commit, commit99);
    printf("Goals: p50 ≤ commit + 100 µs = %.0f µs: %s (ratio to the commit %.2f); p99 ≤ 2 ms: %s.\n\n",
           commit + 100, signal50 <= commit + 100 ? "met" : "not met", signal50 / commit, signal99 <= 2000 ? "met" : "not met");
    printf("Posts to one signal with N until-terminated consumers in another process (%d posts, durable, as fast as the poster goes;"
           " consumers receive the latest version when they are behind):\n\n", POSTS);
    printf("| consumers | posts /s | ratio to 1 consumer | until all got the final version (ms) | handler calls |\n|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < 3; i++)
        printf("| %d | %.0f | %.2f | %.0f | %ld |\n", counts[i], rate[i], rate[i] / rate[0], drain[i], calls[i]);
    printf("\n");
    return 0;
}
