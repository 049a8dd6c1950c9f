#include "harness.h"
#include <sqlite3.h>
#include <dirent.h>
#include <stdatomic.h>
#include <time.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int harness_failed_current;
int harness_skipped_current;
char harness_message[1024];

int harness_run(const struct harness_test *tests, size_t count, int argc, char **argv) {
    int failed = 0;
    const char *only = argc > 1 ? argv[1] : NULL;
    for (size_t i = 0; i < count; i++) {
        if (only && strcmp(only, tests[i].name) != 0) continue;
        harness_failed_current = 0;
        harness_skipped_current = 0;
        harness_message[0] = '\0';
        tests[i].fn();
        if (harness_skipped_current && !harness_failed_current) {
            printf("SKIP %s: %s\n", tests[i].name, harness_message);
        } else if (harness_failed_current) {
            printf("FAIL %s: %s\n", tests[i].name, harness_message);
            failed++;
        } else {
            printf("PASS %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    return failed ? 1 : 0;
}

const char *harness_temp_dir(void) {
    static char path[PATH_MAX];
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(path, sizeof path, "%s/outlive-test-XXXXXX", base);
    if (!mkdtemp(path)) { perror("mkdtemp"); exit(2); }
    return path;
}

int harness_postgresql(void) {
    const char *kind = getenv("OUTLIVE_TEST_STORE_KIND");
    return kind && !strcmp(kind, "postgresql");
}

const char *harness_store_location(void) {
    if (!harness_postgresql()) return harness_temp_dir();
    static char location[PATH_MAX];
    static unsigned counter;
    const char *server = getenv("OUTLIVE_TEST_PG");
    if (!server || !*server) {
        fprintf(stderr, "OUTLIVE_TEST_STORE_KIND=postgresql needs OUTLIVE_TEST_PG (scripts/pg_cluster.py start)\n");
        exit(2);
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* Unique across processes and runs: pid, a counter, the clock. */
    snprintf(location, sizeof location, "%s%soutlive_store=t%ld_%u_%ld", server, strchr(server, '?') ? "&" : "?",
             (long)getpid(), counter++, (long)(now.tv_nsec / 1000));
    return location;
}

void harness_remove_store(const char *location) {
    if (strncmp(location, "postgres", 8) == 0) return;
    harness_remove_tree(location);
}

void harness_store_side_file(const char *location, const char *suffix, char *path, size_t size) {
    const char *name = strstr(location, "outlive_store=");
    const char *tmp = getenv("TMPDIR");
    if (strncmp(location, "postgres", 8) == 0 && name)
        snprintf(path, size, "%s/outlive-%s%s", tmp && *tmp ? tmp : "/tmp", name + strlen("outlive_store="), suffix);
    else
        snprintf(path, size, "%s%s", location, suffix);
}

const char *harness_store_name(const char *location) {
    const char *name = strstr(location, "outlive_store=");
    return name ? name + strlen("outlive_store=") : "main";
}

int harness_psql(const char *location, const char *sql, char *out, size_t size) {
    static char command[65536];
    char search_path[128] = "";
    if (location) snprintf(search_path, sizeof search_path, "SET search_path = outlive_%s; ", harness_store_name(location));
    int length = snprintf(command, sizeof command,
                          "PGOPTIONS='-c client_min_messages=warning' psql -X -q -At -v ON_ERROR_STOP=1 \"%s\" -c \"%s%s\"",
                          getenv("OUTLIVE_TEST_PG"), search_path, sql);
    if (length < 0 || (size_t)length >= sizeof command) return 0;
    FILE *output = popen(command, "r");
    if (!output) return 0;
    size_t used = 0, got;
    char ignored[4096];
    if (out && size) {
        while (used + 1 < size && (got = fread(out + used, 1, size - 1 - used, output)) > 0) used += got;
        out[used] = '\0';
        if (used && out[used - 1] == '\n') out[used - 1] = '\0';
    }
    while (fread(ignored, 1, sizeof ignored, output) > 0) {}
    int status = pclose(output);
    return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* sqlite3_exec's row callback for harness_store_sql: the first value only. */
typedef struct { char *out; size_t size; int rows; } first_value;
static int keep_first_value(void *context, int columns, char **values, char **names) {
    (void)names;
    first_value *first = context;
    if (first->rows++ == 0 && first->out && first->size && columns > 0)
        snprintf(first->out, first->size, "%s", values[0] ? values[0] : "");
    return 0;
}

int harness_store_sql(const char *location, const char *sql, char *out, size_t size) {
    if (out && size) out[0] = '\0';
    if (harness_postgresql()) return harness_psql(location, sql, out, size);
    char path[4200];
    snprintf(path, sizeof path, "%s/outlive.db", location);
    sqlite3 *db = NULL;
    first_value first = {out, size, 0};
    int ok = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_busy_timeout(db, 10000) == SQLITE_OK &&
             sqlite3_exec(db, sql, keep_first_value, &first, NULL) == SQLITE_OK && (first.rows > 0 || sqlite3_changes(db) > 0);
    sqlite3_close(db);
    return ok;
}

void harness_remove_tree(const char *path) {
    DIR *dir = opendir(path);
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
            char child[PATH_MAX];
            snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
            struct stat info;
            if (lstat(child, &info) == 0 && S_ISDIR(info.st_mode)) {
                chmod(child, 0700);
                harness_remove_tree(child);
            } else {
                unlink(child);
            }
        }
        closedir(dir);
    }
    rmdir(path);
    unlink(path);
}

const char *harness_bin_dir(void) {
    static char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return ".";
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    return dir;
}

double harness_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int harness_dispatch_until(outlive_loop *loop, _Atomic int *value, int want, double seconds) {
    double deadline = harness_now() + seconds;
    while (atomic_load(value) < want && harness_now() < deadline) {
        if (outlive_loop_dispatch(loop, 20) != OUTLIVE_OK) return 0;
    }
    return atomic_load(value) >= want;
}

void harness_dispatch_for(outlive_loop *loop, double seconds) {
    double deadline = harness_now() + seconds;
    while (harness_now() < deadline) outlive_loop_dispatch(loop, 10);
}

static void *harness_pool_main(void *argument) {
    struct harness_pool *pool = argument;
    for (;;) {
        pthread_mutex_lock(&pool->mutex);
        while (pool->head == pool->tail && !pool->stopping) pthread_cond_wait(&pool->cond, &pool->mutex);
        if (pool->head == pool->tail) { pthread_mutex_unlock(&pool->mutex); return NULL; }
        void *item = pool->items[pool->head++ % HARNESS_POOL_RING];
        pthread_mutex_unlock(&pool->mutex);
        pool->work(item, pool->context);
    }
}

void harness_pool_start(struct harness_pool *pool, void (*work)(void *item, void *context), void *context) {
    memset(pool, 0, sizeof *pool);
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->cond, NULL);
    pool->work = work;
    pool->context = context;
    for (int i = 0; i < HARNESS_POOL_THREADS; i++) pthread_create(&pool->threads[i], NULL, harness_pool_main, pool);
}

void harness_pool_push(struct harness_pool *pool, void *item) {
    pthread_mutex_lock(&pool->mutex);
    pool->items[pool->tail++ % HARNESS_POOL_RING] = item;
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->mutex);
}

void harness_pool_stop(struct harness_pool *pool) {
    pthread_mutex_lock(&pool->mutex);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->cond);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 0; i < HARNESS_POOL_THREADS; i++) pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->mutex);
    pthread_cond_destroy(&pool->cond);
}
