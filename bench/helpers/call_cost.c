/* The C side of bench/python_call_cost_bench.py: the same calls the Python
 * bench makes, made from C in the same process, on the same store, so that the
 * two sides compare like with like in one run. Loaded by the Python bench with
 * ctypes (RTLD_GLOBAL after liboutlive, whose symbols it uses: it is linked
 * without -loutlive so that it binds to the copy Python loaded) and with
 * outlive_handler_library_load (for the no-op handler it declares).
 *
 * Each call_cost_* function runs `count` iterations of one call as a C program
 * would write it (building the arguments each time, as Python does) and
 * returns the nanoseconds they took, or -1 after the first failing call; the
 * CPU time the process spent meanwhile goes to *out_cpu_ns (on this shared
 * machine the CPU time, unlike the elapsed time, hardly depends on the load). */
#include <stdio.h>
#include <time.h>
#include "outlive.h"

OUTLIVE_HANDLER(call_cost_noop, OUTLIVE_ID(item)) {
    (void)item;
}

static long long clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define START long long start = clock_ns(CLOCK_MONOTONIC), cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID)
#define FINISH do { *out_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start; \
                    return clock_ns(CLOCK_MONOTONIC) - start; } while (0)

/* outlive_kv_set of key "<prefix><i>" to `size` bytes. */
long long call_cost_kv_set(outlive_store *store, const char *prefix, const void *value, size_t size, int count, long long *out_cpu_ns) {
    char key[128];
    START;
    for (int i = 0; i < count; i++) {
        snprintf(key, sizeof key, "%s%d", prefix, i);
        if (outlive_kv_set(store, key, value, size) != OUTLIVE_OK) return -1;
    }
    FINISH;
}

/* A task per call: the handler `name` with item="item-<i>" bound, added, freed. */
long long call_cost_task_add(outlive_store *store, const char *name, int count, long long *out_cpu_ns) {
    char item[64], id[OUTLIVE_ID_SIZE];
    START;
    for (int i = 0; i < count; i++) {
        int length = snprintf(item, sizeof item, "item-%d", i);
        outlive_args *bound = NULL;
        outlive_handler *work = NULL;
        outlive_status status = outlive_args_new(&bound);
        if (status == OUTLIVE_OK) status = outlive_args_set_id(bound, "item", NULL, item, (size_t)length);
        if (status == OUTLIVE_OK) status = outlive_handler_new(name, NULL, bound, &work);
        if (status == OUTLIVE_OK) status = outlive_task_add(store, work, NULL, NULL, 0, id);
        outlive_handler_free(work);
        outlive_args_free(bound);
        if (status != OUTLIVE_OK) return -1;
    }
    FINISH;
}

/* outlive_signal_post of signal_id with item="item-<i>", not terminating. */
long long call_cost_signal_post(outlive_store *store, const char *signal_id, int count, long long *out_cpu_ns) {
    char item[64];
    START;
    for (int i = 0; i < count; i++) {
        int length = snprintf(item, sizeof item, "item-%d", i);
        outlive_args *payload = NULL;
        outlive_status status = outlive_args_new(&payload);
        if (status == OUTLIVE_OK) status = outlive_args_set_id(payload, "item", NULL, item, (size_t)length);
        if (status == OUTLIVE_OK) status = outlive_signal_post(store, signal_id, payload, false);
        outlive_args_free(payload);
        if (status != OUTLIVE_OK) return -1;
    }
    FINISH;
}

/* outlive_handler_call of `handler` with item="item-<i>" as its call argument. */
long long call_cost_handler_call(const outlive_handler *handler, int count, long long *out_cpu_ns) {
    char item[64];
    START;
    for (int i = 0; i < count; i++) {
        int length = snprintf(item, sizeof item, "item-%d", i);
        outlive_args *call = NULL;
        outlive_status status = outlive_args_new(&call);
        if (status == OUTLIVE_OK) status = outlive_args_set_id(call, "item", NULL, item, (size_t)length);
        if (status == OUTLIVE_OK) status = outlive_handler_call(handler, call);
        outlive_args_free(call);
        if (status != OUTLIVE_OK) return -1;
    }
    FINISH;
}

/* The ctypes floor of a handler call from Python: a C function of the same
 * parameters as outlive_handler_call_serialized (the one C call a Python
 * handler call makes) that does nothing. */
int call_cost_floor(const void *handler, const void *bytes, size_t size) {
    (void)handler;
    (void)bytes;
    (void)size;
    return 0;
}
