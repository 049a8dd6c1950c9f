/* Shared helpers of the benchmark programs: clocks, percentiles, processes. */
#ifndef OUTLIVE_BENCH_UTIL_H
#define OUTLIVE_BENCH_UTIL_H

#include <fcntl.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The scratch directory the bench was given (argv[1]). */
static char bench_scratch[4096];

/* An empty directory `name` under the scratch directory, its path in `out`. */
static inline void bench_fresh_dir(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", bench_scratch, name);
    char command[16384];
    snprintf(command, sizeof command, "rm -rf '%s'", out);
    if (system(command) != 0) exit(2);
    mkdir(out, 0700);
}

static inline int64_t bench_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int bench_compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (0..100) of n samples; sorts them in place. */
static inline int64_t bench_percentile(int64_t *samples, size_t n, double p) {
    qsort(samples, n, sizeof *samples, bench_compare_i64);
    size_t index = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return samples[index < n ? index : n - 1];
}

static inline double bench_median(double *values, size_t n) {
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && values[j - 1] > values[j]; j--) {
            double t = values[j]; values[j] = values[j - 1]; values[j - 1] = t;
        }
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* Calls one(context, side, i) `count` times for each of two sides, one of each
 * in turn (the side that goes first alternates), and adds the ns each call
 * returns to spent[side]: both sides meet the same moods of the disk's fsync. */
static inline void bench_alternate(int count, int64_t (*one)(void *context, int side, int i), void *context,
                                   int64_t spent[2]) {
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 2; k++) {
            int side = k ^ (i & 1);
            spent[side] += one(context, side, i);
        }
}

/* Fills a raw peer's write-ahead log ahead with zeros, as an Outlive store's
 * is (SQLiteBackend.keptLogBytes, docs/store.md "The log is kept and filled
 * ahead"), so that both sides' commits write over blocks already written and
 * the ratio compares the commits, not the file system's phase: a sync after a
 * write that extends a file costs about twice one that does not. Called after
 * the peer's first write (its log exists then). */
static inline void bench_fill_log(sqlite3 *db) {
    const off_t kept = 32 + (off_t)(1000 + 64) * (4096 + 24);
    char path[4400];
    snprintf(path, sizeof path, "%s-wal", sqlite3_db_filename(db, "main"));
    int fd = open(path, O_WRONLY);
    struct stat info;
    if (fd < 0 || fstat(fd, &info) != 0) { fprintf(stderr, "bench_fill_log: %s\n", path); exit(1); }
    static char zeros[64 * 1024];
    for (off_t at = info.st_size; at < kept; at += sizeof zeros) {
        size_t chunk = kept - at < (off_t)sizeof zeros ? (size_t)(kept - at) : sizeof zeros;
        if (pwrite(fd, zeros, chunk, at) != (ssize_t)chunk) exit(1);
    }
    fdatasync(fd);
    close(fd);
}

/* The peers several benchmarks measure beside Outlive, in a directory of their own. */

/* p50 and p99 (µs) of a ping-pong between two processes through a file watched
 * with inotify, no database: the floor of any cross-process wake-up. */
static inline void bench_peer_inotify_pingpong(const char *dir, int count, double *p50, double *p99) {
    char path[4300];
    snprintf(path, sizeof path, "%s/bell", dir);
    close(open(path, O_CREAT | O_WRONLY, 0600));
    int watch = inotify_init1(IN_NONBLOCK);
    inotify_add_watch(watch, path, IN_MODIFY);
    int go[2];
    if (pipe(go) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        char byte;
        for (int i = 0; i < count && read(go[0], &byte, 1) == 1; i++) {
            int64_t now = bench_now_ns();
            int fd = open(path, O_WRONLY);
            if (pwrite(fd, &now, sizeof now, 0) != sizeof now) _exit(1);
            close(fd);
        }
        _exit(0);
    }
    close(go[0]);
    int64_t *samples = calloc((size_t)count, sizeof *samples);
    char events[4096];
    for (int i = 0; i < count; i++) {
        if (write(go[1], "x", 1) != 1) break;
        struct pollfd pfd = {.fd = watch, .events = POLLIN};
        if (poll(&pfd, 1, 5000) <= 0) exit(1);
        while (read(watch, events, sizeof events) > 0) {}
        int64_t sent = 0;
        int fd = open(path, O_RDONLY);
        if (pread(fd, &sent, sizeof sent, 0) != sizeof sent) exit(1);
        close(fd);
        samples[i] = bench_now_ns() - sent;
    }
    close(go[1]);
    waitpid(pid, NULL, 0);
    close(watch);
    *p50 = bench_percentile(samples, (size_t)count, 50) / 1e3;
    *p99 = bench_percentile(samples, (size_t)count, 99) / 1e3;
    free(samples);
}

#endif
