/* Shared helpers of the benchmark programs: clocks, percentiles, processes. */
#ifndef OUTLIVE_BENCH_UTIL_H
#define OUTLIVE_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#endif
