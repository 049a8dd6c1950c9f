/* The crash harness: the workload driver (Tests/crash/crash_driver.c) is
 * killed with SIGKILL at random moments, again and again on one store; after
 * each kill a checker reopens the store and verifies that it holds exactly
 * what the acknowledged operations made — or that plus the one operation the
 * driver had announced but not yet seen acknowledged (it may have committed
 * just before the kill) — that PRAGMA integrity_check is ok, and that no run
 * of a dead process is still registered. OUTLIVE_CRASH_KILLS sets the number of kills (default 200;
 * `make soak` runs more). */
#include "harness.h"
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEYS 50

struct model {
    char values[KEYS][64];   /* "" = absent */
    long counter;
    char pending[128];       /* the announced operation not yet confirmed, "" if none */
};

/* Applies one announced operation to the model. */
static void apply_operation(struct model *model, const char *operation) {
    char kind[8], key[32], value[64];
    int fields = sscanf(operation, "%7s %31s %63s", kind, key, value);
    if (fields >= 2 && !strcmp(kind, "del")) model->values[atoi(key + 3)][0] = '\0';
    else if (fields == 3 && !strcmp(kind, "set")) snprintf(model->values[atoi(key + 3)], 64, "%s", value);
    else if (fields >= 2 && !strcmp(kind, "inc")) model->counter++;
}

static void read_line(struct model *model, const char *line) {
    if (!strncmp(line, "try ", 4)) {
        snprintf(model->pending, sizeof model->pending, "%s", line + 4);
        model->pending[strcspn(model->pending, "\n")] = '\0';
    } else if (!strncmp(line, "ok", 2) && model->pending[0]) {
        apply_operation(model, model->pending);
        model->pending[0] = '\0';
    }
}

/* The store's state, read back. */
static int read_state(const char *dir, struct model *state, char *why, size_t why_size) {
    outlive_store *store = NULL;
    if (outlive_store_open(dir, "checker", NULL, &store) != OUTLIVE_OK) {
        snprintf(why, why_size, "reopen: %s", outlive_last_error());
        return 0;
    }
    memset(state, 0, sizeof *state);
    for (int i = 0; i < KEYS; i++) {
        char key[32];
        snprintf(key, sizeof key, "key%02d", i);
        void *bytes = NULL;
        size_t size = 0;
        if (outlive_kv_get(store, key, &bytes, &size) == OUTLIVE_OK) {
            snprintf(state->values[i], 64, "%.*s", (int)size, (char *)bytes);
            outlive_free(bytes);
        }
    }
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_kv_get(store, "counter", &bytes, &size) == OUTLIVE_OK) {
        char text[32] = {0};
        memcpy(text, bytes, size < 31 ? size : 31);
        state->counter = atol(text);
        outlive_free(bytes);
    }
    outlive_store_close(store);
    return 1;
}

static int same(const struct model *a, const struct model *b) {
    if (a->counter != b->counter) return 0;
    for (int i = 0; i < KEYS; i++)
        if (strcmp(a->values[i], b->values[i]) != 0) return 0;
    return 1;
}

/* The store must equal the model, or the model with the one pending operation. */
static int verify(const char *dir, struct model *model, char *why, size_t why_size) {
    struct model state;
    if (!read_state(dir, &state, why, why_size)) return 0;
    struct model with_pending = *model;
    if (model->pending[0]) apply_operation(&with_pending, model->pending);
    if (same(&state, model)) {
        model->pending[0] = '\0';
    } else if (model->pending[0] && same(&state, &with_pending)) {
        *model = with_pending;
        model->pending[0] = '\0';
    } else {
        for (int i = 0; i < KEYS; i++) {
            if (strcmp(state.values[i], with_pending.values[i]) != 0 && strcmp(state.values[i], model->values[i]) != 0) {
                snprintf(why, why_size, "key%02d is \"%s\", acknowledged \"%s\" (pending: %s)", i, state.values[i],
                         model->values[i], model->pending[0] ? model->pending : "none");
                return 0;
            }
        }
        snprintf(why, why_size, "counter is %ld, acknowledged %ld (pending: %s)", state.counter, model->counter,
                 model->pending[0] ? model->pending : "none");
        return 0;
    }
    /* The database itself, and the registry of runs: nothing of the dead driver left. */
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *statement = NULL;
    int ok = 1;
    sqlite3_open(path, &db);
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, NULL);
    if (sqlite3_step(statement) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(statement, 0), "ok") != 0) {
        snprintf(why, why_size, "integrity_check failed");
        ok = 0;
    }
    sqlite3_finalize(statement);
    sqlite3_prepare_v2(db, "SELECT count(*) FROM outlive_runs", -1, &statement, NULL);
    if (ok && (sqlite3_step(statement) != SQLITE_ROW || sqlite3_column_int(statement, 0) != 0)) {
        snprintf(why, why_size, "%d runs still registered after every process ended", sqlite3_column_int(statement, 0));
        ok = 0;
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return ok;
}

static void test_acknowledged_work_survives_repeated_kill_9(void) {
    const char *env = getenv("OUTLIVE_CRASH_KILLS");
    int kills = env ? atoi(env) : 200;
    const char *dir = harness_temp_dir();
    char path[4096], driver[4200];
    snprintf(path, sizeof path, "%s", dir);
    snprintf(driver, sizeof driver, "%s/crash_driver", harness_bin_dir());
    static struct model model;
    memset(&model, 0, sizeof model);
    srand((unsigned)time(NULL));
    for (int kill_number = 0; kill_number < kills; kill_number++) {
        int out[2];
        CHECK(pipe(out) == 0);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(out[1], 1);
            close(out[0]);
            close(out[1]);
            char seed[16];
            snprintf(seed, sizeof seed, "%d", rand());
            execl(driver, driver, path, seed, (char *)NULL);
            _exit(127);
        }
        close(out[1]);
        /* Let it run between 0 and 40 ms of work, reading acknowledgements. */
        long deadline_ms = rand() % 40;
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        FILE *acks = fdopen(out[0], "r");
        char line[256];
        for (;;) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
            if (elapsed >= deadline_ms) break;
            struct pollfd pfd = {.fd = out[0], .events = POLLIN};
            if (poll(&pfd, 1, (int)(deadline_ms - elapsed)) <= 0) continue;
            if (!fgets(line, sizeof line, acks)) break;
            read_line(&model, line);
        }
        kill(pid, SIGKILL);
        while (fgets(line, sizeof line, acks)) read_line(&model, line);
        fclose(acks);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                  "driver failed on its own (exit %d) at kill %d", WEXITSTATUS(status), kill_number);
        char why[512];
        CHECK_MSG(verify(path, &model, why, sizeof why), "after kill %d: %s", kill_number, why);
    }
    harness_remove_tree(path);
}

HARNESS_MAIN(T(test_acknowledged_work_survives_repeated_kill_9))
