/* Handler call cost: outlive_handler_call on a resolved handler with three parameters
 * (two bound, one given at call time) beside a direct C call and a bare
 * ffi_call with a cached cif, all measured in this run; and serialize +
 * deserialize round trips per second. argv[1]: a scratch directory (unused). */
#include <ffi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "outlive.h"

static volatile int64_t sink;

OUTLIVE_HANDLER(bench_add, OUTLIVE_INTEGER(a), OUTLIVE_INTEGER(b), OUTLIVE_INTEGER(c)) {
    sink += a + b + c;
}

static void plain_add(int64_t a, int64_t b, int64_t c) { sink += a + b + c; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of 3 runs of `count` iterations: nanoseconds per iteration. */
#define MEASURE(result, count, body) do { \
        double best = 1e30; \
        for (int run = 0; run < 3; run++) { \
            double start = now(); \
            for (long i = 0; i < (count); i++) { body; } \
            double elapsed = now() - start; \
            if (elapsed < best) best = elapsed; \
        } \
        (result) = best * 1e9 / (double)(count); \
    } while (0)

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    const long calls = 2000000;

    void (*volatile direct)(int64_t, int64_t, int64_t) = plain_add;
    double direct_ns;
    MEASURE(direct_ns, calls * 5, direct(1, 2, (int64_t)i));

    ffi_cif cif;
    ffi_type *types[3] = { &ffi_type_sint64, &ffi_type_sint64, &ffi_type_sint64 };
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 3, &ffi_type_void, types) != FFI_OK) return 1;
    int64_t a = 1, b = 2, c = 3;
    void *values[3] = { &a, &b, &c };
    double ffi_ns;
    MEASURE(ffi_ns, calls * 2, (c = i, ffi_call(&cif, FFI_FN(plain_add), NULL, values)));

    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "a", 1);
    outlive_args_set_integer(bound, "b", 2);
    outlive_handler *handler = NULL;
    outlive_handler_new("bench_add", NULL, bound, &handler);
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_integer(call, "c", 3);
    if (outlive_handler_call(handler, call) != OUTLIVE_OK) {
        fprintf(stderr, "outlive_handler_call: %s\n", outlive_last_error());
        return 1;
    }
    double call_ns;
    MEASURE(call_ns, calls, outlive_handler_call(handler, call));

    outlive_args *rich = NULL;
    outlive_args_new(&rich);
    outlive_args_set_string(rich, "account", "dana@example.org");
    outlive_args_set_integer(rich, "a", 1);
    outlive_args_set_integer(rich, "b", 2);
    outlive_args_set_bool(rich, "success", true);
    outlive_handler *stored = NULL;
    outlive_handler_new("bench_add", "bench_cancel", rich, &stored);
    void *bytes = NULL;
    size_t size = 0;
    outlive_handler_serialize(stored, &bytes, &size);
    const long rounds = 200000;
    double round_ns;
    MEASURE(round_ns, rounds, {
        void *encoded = NULL;
        size_t encoded_size = 0;
        outlive_handler *decoded = NULL;
        outlive_handler_serialize(stored, &encoded, &encoded_size);
        outlive_handler_deserialize(encoded, encoded_size, &decoded);
        outlive_handler_free(decoded);
        outlive_free(encoded);
    });

    printf("### Handlers: call cost and serialization\n\n");
    printf("| operation | per call | relative |\n|---|---:|---:|\n");
    printf("| direct C call (3 × int64, via pointer) | %.1f ns | %.2f× ffi_call |\n", direct_ns, direct_ns / ffi_ns);
    printf("| bare ffi_call, cached cif | %.1f ns | 1.00× |\n", ffi_ns);
    printf("| outlive_handler_call (2 bound + 1 call-time INTEGER) | %.1f ns | %.2f× ffi_call (goal ≤ 5×) |\n", call_ns, call_ns / ffi_ns);
    printf("\n| serialization (handler: 4 arguments + invalidation name, %zu bytes) | rate |\n|---|---:|\n", size);
    printf("| serialize + deserialize round trips | %.0f /s (%.2f µs each) |\n", 1e9 / round_ns, round_ns / 1000);
    outlive_free(bytes);
    outlive_handler_free(stored);
    outlive_handler_free(handler);
    outlive_args_free(rich);
    outlive_args_free(call);
    outlive_args_free(bound);
    return 0;
}
