/* Load: 8 processes on one store for OUTLIVE_LOAD_SECONDS (default 60)
 * running a mixed workload, each through its own loop:
 *  - kv: a set of one of 32 keys of its own (the parent checks each key's final
 *    value), and an update (+1) of one counter shared by all (the parent checks
 *    it equals the sum of acknowledged updates);
 *  - tasks: an add of a task whose handler (load_task, declared here, resolved
 *    in every worker) records its run by incrementing "done/task/<task_id>";
 *    runs start by trigger in whichever process, one runner at a time;
 *  - signals: a once, any-process consumer (load_signal) of a fresh signal id,
 *    then a post of it; the delivery increments "done/sig/<signal_id>";
 *  - messages: a post with a choice "ok" and a durable response handler
 *    (load_response); each worker has a presenter that presents and answers
 *    "ok"; the response increments "done/msg/<message_id>".
 * Every item has a unique id, written by its worker once acknowledged. After
 * the run, each worker drains (runs its loop until no task, message or signal
 * is left, or 20 s), then the parent reopens the store and checks each item:
 * done exactly once, or still stored (reported apart). Lost = neither.
 * Exit status 1 when any error, loss or duplicate was seen.
 * Usage: load_bench SCRATCH_DIR (OUTLIVE_LOAD_SECONDS, OUTLIVE_LOAD_WORKERS
 * change the duration and the number of processes); refused (status 2) when
 * SCRATCH_DIR already holds a run's store. Prints a markdown section. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>

#define MAX_WORKERS 64
static int workers_count = 8;  /* OUTLIVE_LOAD_WORKERS changes it (1 to MAX_WORKERS) */
#define KV_KEYS 32
#define DRAIN_SECONDS 20

enum kind { K_KV_SET, K_KV_UPDATE, K_TASK_ADD, K_TASK_RUN, K_SIGNAL_CONSUME, K_SIGNAL_POST, K_SIGNAL_DELIVERY,
            K_MESSAGE_POST, K_PRESENTATION, K_RESPONSE, K_COUNT };
static const char *kind_names[K_COUNT] = {
    "kv set", "kv update (shared counter +1)", "task add", "task run (handler called)", "signal consume",
    "signal post", "signal delivery (handler called)", "message post", "presentation (answered \"ok\")",
    "response (durable handler called)"};

/* One worker's results, written to its result file and read by the parent. */
struct result {
    uint64_t ops[K_COUNT];
    uint64_t errors;
    uint64_t kv_updates;
    long rss_start_kib, rss_end_kib, maxrss_kib;
    double seconds;
    double longest_dispatch_ms;
    double longest_call_ms;
    uint64_t rounds;
    int drained;
    char first_error[512];
};

static outlive_store *g_store;
static struct result g_result;
static char g_scratch[4096];

static void record_error(const char *what, outlive_status status) {
    g_result.errors++;
    if (g_result.first_error[0] == 0)
        snprintf(g_result.first_error, sizeof g_result.first_error, "%s: %s (%s)", what,
                 outlive_status_name(status), outlive_last_error() ? outlive_last_error() : "");
}

static bool check(outlive_status status, const char *what) {
    if (status == OUTLIVE_OK) return true;
    record_error(what, status);
    return false;
}

static outlive_status increment(outlive_kv_value *value, void *context) {
    (void)context;
    size_t size = 0;
    const void *bytes = outlive_kv_value_bytes(value, &size);
    uint64_t count = 0;
    if (bytes && size == sizeof count) memcpy(&count, bytes, sizeof count);
    count++;
    return outlive_kv_value_set(value, &count, sizeof count);
}

static void mark_done(const char *prefix, const char *id, const char *what) {
    char key[128];
    snprintf(key, sizeof key, "done/%s/%s", prefix, id ? id : "(null)");
    check(outlive_kv_update(g_store, key, increment, NULL), what);
}

/* ── handlers (resolved by name in whichever worker runs them) ── */

OUTLIVE_HANDLER(load_task, OUTLIVE_ID(task_id)) {
    g_result.ops[K_TASK_RUN]++;
    mark_done("task", outlive_object_string(task_id), "record task run");
}

OUTLIVE_HANDLER(load_signal, OUTLIVE_ID(signal_id)) {
    g_result.ops[K_SIGNAL_DELIVERY]++;
    mark_done("sig", outlive_object_string(signal_id), "record signal delivery");
}

OUTLIVE_HANDLER(load_response, OUTLIVE_ID(message_id), OUTLIVE_ID(choice)) {
    g_result.ops[K_RESPONSE]++;
    const char *answer = outlive_object_string(choice);
    if (!answer || strcmp(answer, "ok") != 0) record_error("response with an unexpected choice", OUTLIVE_E_STATE);
    mark_done("msg", outlive_object_string(message_id), "record response");
}

static int32_t priority(const outlive_message *message, void *context) {
    (void)message; (void)context;
    return OUTLIVE_PRIORITY_DEFAULT;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)message; (void)context;
    g_result.ops[K_PRESENTATION]++;
    check(outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, false, "ok"), "presentation finish");
}

/* ── a worker ── */

static long rss_kib(void) {
    long pages_total = 0, pages_resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = -1;
    fclose(f);
    return pages_resident < 0 ? -1 : pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The status of a store call, its duration kept when it is the longest yet. */
static outlive_status timed(outlive_status status, int64_t start) {
    double ms = (bench_now_ns() - start) / 1e6;
    if (ms > g_result.longest_call_ms) g_result.longest_call_ms = ms;
    return status;
}
#define TIMED(call) (call_start = bench_now_ns(), timed((call), call_start))

/* One dispatch of the loop, timed: how long the loop kept the worker from its own work. */
static void dispatch(outlive_loop *loop, int timeout_ms) {
    int64_t start = bench_now_ns();
    outlive_status status = outlive_loop_dispatch(loop, timeout_ms);
    double ms = (bench_now_ns() - start) / 1e6;
    if (timeout_ms == 0 && ms > g_result.longest_dispatch_ms) g_result.longest_dispatch_ms = ms;
    check(status, "dispatch");
}

static bool store_is_idle(void) {
    size_t tasks = 1, messages = 1;
    outlive_signal_list *signals = NULL;
    if (outlive_tasks_count(g_store, &tasks) != OUTLIVE_OK) return false;
    if (outlive_messages_count(g_store, NULL, &messages) != OUTLIVE_OK) return false;
    if (outlive_signal_list_new(g_store, NULL, 1, &signals) != OUTLIVE_OK) return false;
    size_t stored_signals = outlive_signal_list_count(signals);
    outlive_signal_list_free(signals);
    return tasks == 0 && messages == 0 && stored_signals == 0;
}

static int worker(int index, const char *dir, double seconds, int start_fd) {
    char path[4400], name[32];
    snprintf(name, sizeof name, "worker-%d", index);
    snprintf(path, sizeof path, "%s/items-%d", g_scratch, index);
    FILE *items = fopen(path, "w");
    if (!items) return 2;

    char go;
    if (read(start_fd, &go, 1) != 1) return 2;
    if (outlive_store_open(dir, name, NULL, NULL, &g_store) != OUTLIVE_OK) {
        fprintf(stderr, "%s: open: %s\n", name, outlive_last_error());
        return 2;
    }
    outlive_loop *loop = outlive_store_loop(g_store);
    check(outlive_tasks_set_triggers(g_store, 20, 0.2), "set triggers");
    outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, priority, present, NULL};
    check(outlive_presenter_add(g_store, "load", &callbacks, NULL, NULL), "presenter add");

    outlive_handler *task_work = NULL;
    outlive_handler_new("load_task", NULL, NULL, &task_work);
    outlive_handler *signal_handler = NULL;
    outlive_handler_new("load_signal", NULL, NULL, &signal_handler);
    outlive_handler *response = NULL;
    outlive_handler_new("load_response", NULL, NULL, &response);
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("load", "load message", &draft);
    check(outlive_message_draft_add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT), "draft choice");
    check(outlive_message_draft_set_response_handler(draft, response), "draft response handler");

    long last_value[KV_KEYS];
    for (int k = 0; k < KV_KEYS; k++) last_value[k] = -1;

    double warmup = seconds / 20 < 3 ? seconds / 20 : 3;
    int64_t start = bench_now_ns();
    int64_t warm_at = start + (int64_t)(warmup * 1e9), end_at = start + (int64_t)(seconds * 1e9);
    bool warm = false;
    long rounds_done = 0;
    int64_t call_start = 0;
    for (long round = 0; bench_now_ns() < end_at; round++, rounds_done++) {
        if (!warm && bench_now_ns() >= warm_at) {
            warm = true;
            g_result.rss_start_kib = rss_kib();
        }
        char key[64], value[32], id[OUTLIVE_ID_SIZE];
        int k = (int)(round % KV_KEYS);
        snprintf(key, sizeof key, "kv/w%d/%d", index, k);
        int length = snprintf(value, sizeof value, "%ld", round);
        if (check(TIMED(outlive_kv_set(g_store, key, value, (size_t)length)), "kv set")) {
            last_value[k] = round;
            g_result.ops[K_KV_SET]++;
        }
        if (check(TIMED(outlive_kv_update(g_store, "kv/counter", increment, NULL)), "kv update")) {
            g_result.kv_updates++;
            g_result.ops[K_KV_UPDATE]++;
        }
        dispatch(loop, 0);

        if (check(TIMED(outlive_task_add(g_store, task_work, NULL, NULL, 0, id)), "task add")) {
            fprintf(items, "t %s\n", id);
            g_result.ops[K_TASK_ADD]++;
        }
        dispatch(loop, 0);

        outlive_signal_new_id(id);
        if (check(TIMED(outlive_signal_consume(g_store, id, signal_handler, OUTLIVE_DELIVERY_ONCE,
                                                OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL)), "signal consume")) {
            g_result.ops[K_SIGNAL_CONSUME]++;
            if (check(TIMED(outlive_signal_post(g_store, id, NULL, false)), "signal post")) {
                fprintf(items, "s %s\n", id);
                g_result.ops[K_SIGNAL_POST]++;
            }
        }
        dispatch(loop, 0);

        if (round % 2 == 0 && check(TIMED(outlive_message_post(g_store, draft, id)), "message post")) {
            fprintf(items, "m %s\n", id);
            g_result.ops[K_MESSAGE_POST]++;
        }
        dispatch(loop, 0);
    }
    g_result.seconds = (bench_now_ns() - start) / 1e9;
    g_result.rounds = (uint64_t)rounds_done;
    if (!warm) g_result.rss_start_kib = rss_kib();
    g_result.rss_end_kib = rss_kib();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    g_result.maxrss_kib = usage.ru_maxrss;

    /* Drain: work left by any process is done by whichever runs it. */
    check(outlive_tasks_run_now(g_store), "run now");
    int64_t drain_end = bench_now_ns() + (int64_t)DRAIN_SECONDS * 1000000000;
    while (bench_now_ns() < drain_end) {
        dispatch(loop, 50);
        if (store_is_idle()) { g_result.drained = 1; break; }
    }

    for (int k = 0; k < KV_KEYS; k++)
        if (last_value[k] >= 0) fprintf(items, "k kv/w%d/%d %ld\n", index, k, last_value[k]);
    fclose(items);
    outlive_message_draft_free(draft);
    outlive_handler_free(task_work);
    outlive_handler_free(signal_handler);
    outlive_handler_free(response);
    outlive_store_close(g_store);

    snprintf(path, sizeof path, "%s/result-%d", g_scratch, index);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(&g_result, sizeof g_result, 1, out) != 1) return 2;
    fclose(out);
    return 0;
}

/* ── the parent's check ── */

static uint64_t done_count(outlive_store *store, const char *prefix, const char *id) {
    char key[128];
    snprintf(key, sizeof key, "done/%s/%s", prefix, id);
    void *bytes = NULL;
    size_t size = 0;
    uint64_t count = 0;
    if (outlive_kv_get(store, key, &bytes, &size) == OUTLIVE_OK) {
        if (size == sizeof count) memcpy(&count, bytes, sizeof count);
        outlive_free(bytes);
    }
    return count;
}

static bool task_stored(outlive_store *store, const char *id) {
    /* outlive_task_list_new pages in queue order; after = the task itself answers
     * NOT_FOUND when it is not stored. */
    outlive_task_list *info = NULL;
    outlive_status status = outlive_task_list_new(store, id, 1, &info);
    outlive_task_list_free(info);
    return status == OUTLIVE_OK;
}

struct tally { uint64_t items, done, duplicated, still_stored, lost; };

int main(int argc, char **argv) {
    snprintf(g_scratch, sizeof g_scratch, "%s", argc > 1 ? argv[1] : "/tmp/outlive-load");
    mkdir(g_scratch, 0700);
    double seconds = 60;
    const char *env = getenv("OUTLIVE_LOAD_SECONDS");
    if (env && atof(env) > 0) seconds = atof(env);
    env = getenv("OUTLIVE_LOAD_WORKERS");
    if (env && atoi(env) >= 1 && atoi(env) <= MAX_WORKERS) workers_count = atoi(env);

    char dir[4200];
    snprintf(dir, sizeof dir, "%s/load-store", g_scratch);
    /* The checks count from an empty store (the shared counter from 0, every
     * item of this run): an earlier run's store would read as losses. */
    struct stat earlier;
    if (stat(dir, &earlier) == 0) {
        fprintf(stderr, "load: %s holds an earlier run's store; remove it or give another directory\n", dir);
        return 2;
    }
    outlive_store *setup = NULL;
    if (outlive_store_open(dir, "load-setup", NULL, NULL, &setup) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    outlive_store_close(setup);

    int start_pipe[2];
    if (pipe(start_pipe) != 0) return 1;
    pid_t pids[MAX_WORKERS];
    for (int i = 0; i < workers_count; i++) {
        pids[i] = fork();
        if (pids[i] < 0) return 1;
        if (pids[i] == 0) {
            close(start_pipe[1]);
            _exit(worker(i, dir, seconds, start_pipe[0]));
        }
    }
    close(start_pipe[0]);
    for (int i = 0; i < workers_count; i++)
        if (write(start_pipe[1], "g", 1) != 1) return 1;
    close(start_pipe[1]);

    int failed_workers = 0;
    for (int i = 0; i < workers_count; i++) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed_workers++;
            fprintf(stderr, "worker %d ended with status %d\n", i, status);
        }
    }

    struct result results[MAX_WORKERS];
    memset(results, 0, sizeof results);
    for (int i = 0; i < workers_count; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/result-%d", g_scratch, i);
        FILE *f = fopen(path, "rb");
        if (!f || fread(&results[i], sizeof results[i], 1, f) != 1) {
            failed_workers++;
            fprintf(stderr, "worker %d left no result\n", i);
        }
        if (f) fclose(f);
    }

    /* Store file sizes, measured by the parent, before it opens the store. */
    char sizes[2048] = "";
    uint64_t total_bytes = 0;
    DIR *listing = opendir(dir);
    struct dirent *entry;
    while (listing && (entry = readdir(listing))) {
        if (entry->d_name[0] == '.') continue;
        char path[4500];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) continue;
        total_bytes += (uint64_t)st.st_size;
        size_t used = strlen(sizes);
        snprintf(sizes + used, sizeof sizes - used, "%s`%s` %.1f MiB", used ? ", " : "", entry->d_name,
                 st.st_size / 1048576.0);
    }
    if (listing) closedir(listing);

    outlive_store *store = NULL;
    if (outlive_store_open(dir, "load-check", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "reopen: %s\n", outlive_last_error());
        return 1;
    }
    struct tally tasks = {0}, signals = {0}, messages = {0};
    uint64_t kv_checked = 0, kv_wrong = 0, kv_updates = 0;
    char first_loss[512] = "";
    for (int i = 0; i < workers_count; i++) {
        char path[4400], line[256];
        kv_updates += results[i].kv_updates;
        snprintf(path, sizeof path, "%s/items-%d", g_scratch, i);
        FILE *items = fopen(path, "r");
        while (items && fgets(line, sizeof line, items)) {
            char kind = 0, id[200] = "";
            long expected = 0;
            line[strcspn(line, "\n")] = 0;
            if (line[0] == 'k' && sscanf(line, "k %199s %ld", id, &expected) == 2) {
                kv_checked++;
                void *bytes = NULL;
                size_t size = 0;
                char text[32] = "";
                if (outlive_kv_get(store, id, &bytes, &size) == OUTLIVE_OK) {
                    snprintf(text, sizeof text, "%.*s", (int)(size < 31 ? size : 31), (const char *)bytes);
                    outlive_free(bytes);
                }
                if (strtol(text, NULL, 10) != expected || text[0] == 0) {
                    kv_wrong++;
                    if (!first_loss[0])
                        snprintf(first_loss, sizeof first_loss, "kv %s is '%s', expected %ld", id, text, expected);
                }
                continue;
            }
            if (sscanf(line, "%c %199s", &kind, id) != 2) continue;
            struct tally *t = kind == 't' ? &tasks : kind == 's' ? &signals : &messages;
            const char *prefix = kind == 't' ? "task" : kind == 's' ? "sig" : "msg";
            t->items++;
            uint64_t count = done_count(store, prefix, id);
            if (count >= 1) t->done++;
            if (count > 1) t->duplicated++;
            if (count >= 1) continue;
            bool stored = false;
            if (kind == 't') stored = task_stored(store, id);
            else if (kind == 's') stored = outlive_signal_lookup(store, id, NULL, NULL, NULL) == OUTLIVE_OK;
            else {
                outlive_message *message = NULL;
                stored = outlive_message_get(store, id, &message) == OUTLIVE_OK;
                outlive_message_free(message);
            }
            if (stored) t->still_stored++;
            else {
                t->lost++;
                if (!first_loss[0]) snprintf(first_loss, sizeof first_loss, "%s %s: neither done nor stored", prefix, id);
            }
        }
        if (items) fclose(items);
    }
    uint64_t counter = 0;
    {
        void *bytes = NULL;
        size_t size = 0;
        if (outlive_kv_get(store, "kv/counter", &bytes, &size) == OUTLIVE_OK) {
            if (size == sizeof counter) memcpy(&counter, bytes, sizeof counter);
            outlive_free(bytes);
        }
    }
    outlive_store_close(store);

    uint64_t totals[K_COUNT] = {0}, errors = 0;
    double elapsed = 0;
    int drained = 0;
    for (int i = 0; i < workers_count; i++) {
        for (int k = 0; k < K_COUNT; k++) totals[k] += results[i].ops[k];
        errors += results[i].errors;
        if (results[i].seconds > elapsed) elapsed = results[i].seconds;
        drained += results[i].drained;
    }
    if (elapsed <= 0) elapsed = seconds;
    uint64_t lost = tasks.lost + signals.lost + messages.lost + kv_wrong + (counter != kv_updates ? 1 : 0);
    uint64_t duplicated = tasks.duplicated + signals.duplicated + messages.duplicated;

    printf("### Load: %d processes, mixed workload, %.0f s\n\n", workers_count, seconds);
    printf("%d processes on one store (durability FULL), each looping over: a kv set, a kv update of a shared "
           "counter, a task add, a signal consume + post (once, any process), and every second round a message "
           "post; each dispatches its loop between operations, so tasks run (triggers: 20 pending or 0.2 s), "
           "signals are delivered and messages presented and answered in whichever process takes them. "
           "Every handler records its item in the store; the parent then reopens the store and checks every item.\n\n",
           workers_count);
    printf("| operation | count | per second (all processes) |\n|---|---:|---:|\n");
    uint64_t all = 0;
    for (int k = 0; k < K_COUNT; k++) {
        printf("| %s | %llu | %.0f |\n", kind_names[k], (unsigned long long)totals[k], totals[k] / elapsed);
        all += totals[k];
    }
    printf("| **all** | %llu | %.0f |\n\n", (unsigned long long)all, all / elapsed);

    printf("| check | result |\n|---|---|\n");
    printf("| errors (non-OK statuses, all processes) | **%llu**%s |\n", (unsigned long long)errors,
           errors ? " (must be 0)" : "");
    printf("| items lost | **%llu**%s |\n", (unsigned long long)lost, lost ? " (must be 0)" : "");
    printf("| items run/delivered more than once | %llu |\n", (unsigned long long)duplicated);
    printf("| tasks: added, run, still stored | %llu, %llu, %llu |\n", (unsigned long long)tasks.items,
           (unsigned long long)tasks.done, (unsigned long long)tasks.still_stored);
    printf("| signals: posted, delivered, still stored | %llu, %llu, %llu |\n", (unsigned long long)signals.items,
           (unsigned long long)signals.done, (unsigned long long)signals.still_stored);
    printf("| messages: posted, answered, still stored | %llu, %llu, %llu |\n", (unsigned long long)messages.items,
           (unsigned long long)messages.done, (unsigned long long)messages.still_stored);
    printf("| kv: final values checked, wrong | %llu, %llu |\n", (unsigned long long)kv_checked,
           (unsigned long long)kv_wrong);
    printf("| shared counter: value vs acknowledged updates | %llu vs %llu |\n", (unsigned long long)counter,
           (unsigned long long)kv_updates);
    printf("| workers that drained their queues within %d s | %d of %d |\n", DRAIN_SECONDS, drained, workers_count);
    long growth = 0, start_total = 0;
    for (int i = 0; i < workers_count; i++) {
        long g = results[i].rss_end_kib - results[i].rss_start_kib;
        if (g > growth) growth = g;
        start_total += results[i].rss_start_kib;
    }
    printf("| largest RSS growth of a worker, start to end | %+ld KiB (%.1f%% of the mean start RSS) |\n", growth,
           100.0 * growth / (start_total / (double)workers_count));
    printf("| store files after the run (parent) | %s; %.1f MiB in all |\n\n", sizes, total_bytes / 1048576.0);

    printf("Each worker (memory in KiB: RSS from /proc/self/statm, start = after a %.1f s warm-up, end = when the "
           "workload stops; max RSS from getrusage):\n\n",
           seconds / 20 < 3 ? seconds / 20 : 3);
    printf("| worker | rounds | tasks it ran | longest store call (ms) | longest dispatch(0) (ms) | RSS start | RSS end "
           "| growth | max RSS |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < workers_count; i++)
        printf("| %d | %llu | %llu | %.0f | %.0f | %ld | %ld | %+ld | %ld |\n", i, (unsigned long long)results[i].rounds,
               (unsigned long long)results[i].ops[K_TASK_RUN], results[i].longest_call_ms,
               results[i].longest_dispatch_ms, results[i].rss_start_kib,
               results[i].rss_end_kib, results[i].rss_end_kib - results[i].rss_start_kib, results[i].maxrss_kib);
    printf("\nLongest store call: the longest single kv/task/signal/message call of the worker (waiting for the "
           "write lock behind the other processes included). Longest dispatch(0): the longest "
           "`outlive_loop_dispatch(loop, 0)` call: a task run hands the loop back after about 5 ms of starting "
           "tasks, so what is left is mostly waiting for the write lock (the store's busy handler retries within "
           "4 ms of a release).\n");
    for (int i = 0; i < workers_count; i++)
        if (results[i].first_error[0]) printf("\nWorker %d, first error: `%s`\n", i, results[i].first_error);
    if (first_loss[0]) printf("\nFirst loss: `%s`\n", first_loss);
    if (failed_workers) printf("\n%d worker(s) failed to finish.\n", failed_workers);

    bool failed = errors || lost || duplicated || failed_workers;
    if (failed) fprintf(stderr, "load: %llu errors, %llu lost, %llu duplicated, %d failed workers\n",
                        (unsigned long long)errors, (unsigned long long)lost, (unsigned long long)duplicated,
                        failed_workers);
    return failed ? 1 : 0;
}
