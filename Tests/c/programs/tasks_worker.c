/* A process of the task tests. Usage:
 *   tasks_worker DIR NAME [options...]   options run in order:
 *   --load LIB              outlive_handler_library_load(LIB)
 *   --triggers N DELAY      outlive_tasks_set_triggers
 *   --policy BACKOFF MAX_ATTEMPTS TIMEOUT
 *   --add HANDLER PREFIX N  adds N tasks, one transaction each, labels PREFIX0..PREFIXn-1
 *   --run-until-pending N SECONDS   run_now, dispatch until N tasks are pending
 *   --run-until-file-and-empty PATH SECONDS   dispatch (runs come from triggers)
 *                           until PATH exists and no task is pending
 *   --complete FILE 0|1     deserializes a completion handler from FILE and calls it
 * Exits 0 when every step succeeded, 3 on a deadline, 2 on an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outlive.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const char *what) {
    fprintf(stderr, "tasks_worker: %s: %s\n", what, outlive_last_error());
    return 2;
}

static outlive_handler *labelled(const char *handler, const char *label) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "label", label);
    outlive_handler *work = NULL;
    outlive_handler_new(handler, NULL, args, &work);
    outlive_args_free(args);
    return work;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], argv[2], NULL, NULL, &store) != OUTLIVE_OK) return fail("open");
    outlive_loop *loop = outlive_store_loop(store);
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            if (outlive_handler_library_load(argv[++i]) != OUTLIVE_OK) return fail("load");
        } else if (!strcmp(argv[i], "--triggers") && i + 2 < argc) {
            size_t count = (size_t)atol(argv[i + 1]);
            double delay = atof(argv[i + 2]);
            i += 2;
            if (outlive_tasks_set_triggers(store, count, delay) != OUTLIVE_OK) return fail("triggers");
        } else if (!strcmp(argv[i], "--policy") && i + 3 < argc) {
            outlive_task_policy policy = OUTLIVE_TASK_POLICY_INIT;
            policy.initial_backoff = atof(argv[i + 1]);
            policy.max_backoff = policy.initial_backoff > 1 ? policy.initial_backoff : 1;
            policy.max_attempts = (uint32_t)atol(argv[i + 2]);
            policy.timeout = atof(argv[i + 3]);
            i += 3;
            if (outlive_tasks_set_policy(store, &policy) != OUTLIVE_OK) return fail("policy");
        } else if (!strcmp(argv[i], "--add") && i + 3 < argc) {
            const char *handler = argv[i + 1], *prefix = argv[i + 2];
            long count = atol(argv[i + 3]);
            i += 3;
            for (long n = 0; n < count; n++) {
                char label[128];
                snprintf(label, sizeof label, "%s%ld", prefix, n);
                outlive_handler *work = labelled(handler, label);
                outlive_status status = outlive_task_add(store, work, NULL, NULL, 0, NULL);
                outlive_handler_free(work);
                if (status != OUTLIVE_OK) return fail("add");
            }
        } else if (!strcmp(argv[i], "--run-until-pending") && i + 2 < argc) {
            size_t target = (size_t)atol(argv[i + 1]);
            double deadline = now() + atof(argv[i + 2]);
            i += 2;
            if (outlive_tasks_run_now(store) != OUTLIVE_OK) return fail("run_now");
            for (;;) {
                if (outlive_loop_dispatch(loop, 50) != OUTLIVE_OK) return fail("dispatch");
                size_t pending = 0;
                if (outlive_tasks_count(store, &pending) != OUTLIVE_OK) return fail("count");
                if (pending == target) break;
                if (now() > deadline) { fprintf(stderr, "tasks_worker: %zu pending at the deadline\n", pending); return 3; }
            }
        } else if (!strcmp(argv[i], "--run-until-file-and-empty") && i + 2 < argc) {
            const char *path = argv[i + 1];
            double deadline = now() + atof(argv[i + 2]);
            i += 2;
            for (;;) {
                if (outlive_loop_dispatch(loop, 50) != OUTLIVE_OK) return fail("dispatch");
                size_t pending = 0;
                if (outlive_tasks_count(store, &pending) != OUTLIVE_OK) return fail("count");
                if (pending == 0 && access(path, F_OK) == 0) break;
                if (now() > deadline) { fprintf(stderr, "tasks_worker: %zu pending at the deadline\n", pending); return 3; }
            }
        } else if (!strcmp(argv[i], "--complete") && i + 2 < argc) {
            FILE *file = fopen(argv[i + 1], "rb");
            if (!file) return fail("open completion file");
            unsigned char bytes[65536];
            size_t size = fread(bytes, 1, sizeof bytes, file);
            fclose(file);
            bool success = atoi(argv[i + 2]) != 0;
            i += 2;
            outlive_handler *completion = NULL;
            if (outlive_handler_deserialize(bytes, size, &completion) != OUTLIVE_OK) return fail("deserialize");
            outlive_args *args = NULL;
            outlive_args_new(&args);
            outlive_args_set_bool(args, "success", success);
            outlive_status status = outlive_handler_call(completion, args);
            outlive_args_free(args);
            outlive_handler_free(completion);
            if (status != OUTLIVE_OK) return fail("complete");
        } else {
            fprintf(stderr, "tasks_worker: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    outlive_store_close(store);
    return 0;
}
