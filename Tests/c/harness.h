/* A small test harness for the C suites: each test is a function; the runner
 * prints one line per test ("PASS name" / "FAIL name: why") that
 * scripts/run_tests.py counts, and exits non-zero if any failed. */
#ifndef OUTLIVE_TEST_HARNESS_H
#define OUTLIVE_TEST_HARNESS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

typedef void (*harness_test_fn)(void);
struct harness_test { const char *name; harness_test_fn fn; };

extern int harness_failed_current;
extern char harness_message[1024];

#define CHECK(expr) do { if (!(expr)) { \
        snprintf(harness_message, sizeof harness_message, "%s:%d: CHECK(%s) failed", __FILE__, __LINE__, #expr); \
        harness_failed_current = 1; return; } } while (0)

#define CHECK_MSG(expr, ...) do { if (!(expr)) { \
        int harness_n = snprintf(harness_message, sizeof harness_message, "%s:%d: ", __FILE__, __LINE__); \
        snprintf(harness_message + harness_n, sizeof harness_message - (size_t)harness_n, __VA_ARGS__); \
        harness_failed_current = 1; return; } } while (0)

/* Checks a status, printing the library's last error when it differs. */
#define CHECK_STATUS(call, expected) do { outlive_status harness_s = (call); if (harness_s != (expected)) { \
        snprintf(harness_message, sizeof harness_message, "%s:%d: %s returned %s (expected %s): %s", __FILE__, __LINE__, \
                 #call, outlive_status_name(harness_s), outlive_status_name(expected), outlive_last_error()); \
        harness_failed_current = 1; return; } } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, OUTLIVE_OK)

int harness_run(const struct harness_test *tests, size_t count, int argc, char **argv);

/* Ends the current test as skipped ("SKIP name: why"), neither passed nor failed. */
#define SKIP(...) do { snprintf(harness_message, sizeof harness_message, __VA_ARGS__); \
        harness_skipped_current = 1; return; } while (0)
extern int harness_skipped_current;

/* Suites parametrized by a store location run unchanged on both engines:
 * OUTLIVE_TEST_STORE_KIND=postgresql makes harness_store_location() a
 * $OUTLIVE_TEST_PG URI naming a fresh store (outlive_store=...), anything else
 * a fresh temporary directory. Static storage overwritten by the next call.
 * harness_remove_store removes a directory and ignores a URI (the test
 * cluster is thrown away as a whole). */
int harness_postgresql(void);
const char *harness_store_location(void);
void harness_remove_store(const char *location);
/* A file path for a test's own use beside the store at `location` (a log,
 * a marker): "<directory><suffix>" for a directory, a file in $TMPDIR (or
 * /tmp) named after the store for a URI. Never made by this call. */
void harness_store_side_file(const char *location, const char *suffix, char *path, size_t size);
/* The store's name in a PostgreSQL location (its outlive_store=, else
 * "main"); its tables are in the schema outlive_<name>. */
const char *harness_store_name(const char *location);
/* Runs sql through psql on the test server ($OUTLIVE_TEST_PG): in the schema
 * of the store `location` names, or as given when location is NULL. What psql
 * printed on stdout (-At: bare values, one row a line), without the last
 * newline, into out (nullable); its errors go to the test's stderr, notices
 * nowhere. Whether psql succeeded. */
int harness_psql(const char *location, const char *sql, char *out, size_t size);
/* Runs sql on the store `location` behind the library's back, as a crafted
 * or hand-edited store is made: through psql on PostgreSQL, through its
 * database file on SQLite. The first column of the first row it returned, as
 * text, into out (nullable; "" when none). Whether it ran, and on SQLite
 * whether its last statement changed a row or returned one. */
int harness_store_sql(const char *location, const char *sql, char *out, size_t size);
/* A test that proves what only one engine has. */
#define SQLITE_ONLY() do { if (harness_postgresql()) SKIP("SQLite stores only"); } while (0)
#define POSTGRESQL_ONLY() do { if (!harness_postgresql()) SKIP("PostgreSQL stores only (OUTLIVE_TEST_STORE_KIND=postgresql)"); } while (0)

/* A fresh empty directory under $TMPDIR (or /tmp) for one test; the path is
 * static storage overwritten by the next call. */
const char *harness_temp_dir(void);
/* rm -rf of a test directory. */
void harness_remove_tree(const char *path);
/* The directory of the running test binary (to find helper programs). */
const char *harness_bin_dir(void);

/* Seconds on CLOCK_MONOTONIC. */
double harness_now(void);
/* Dispatches `loop` until *value reaches `want`, for at most `seconds`;
 * whether it did. */
int harness_dispatch_until(outlive_loop *loop, _Atomic int *value, int want, double seconds);
/* Dispatches for about `seconds`, whatever happens (to see that nothing does). */
void harness_dispatch_for(outlive_loop *loop, double seconds);

#define HARNESS_MAIN(...) \
    int main(int argc, char **argv) { \
        static const struct harness_test tests[] = { __VA_ARGS__ }; \
        return harness_run(tests, sizeof tests / sizeof tests[0], argc, argv); \
    }
#define T(fn) { #fn, fn }

/* A pool of threads that take pushed items in order and hand each to `work`:
 * how the suites finish interactions and operations from many threads. */
#define HARNESS_POOL_THREADS 8
#define HARNESS_POOL_RING 16384
struct harness_pool {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    void *items[HARNESS_POOL_RING];
    size_t head, tail;
    int stopping;
    void (*work)(void *item, void *context);
    void *context;
    pthread_t threads[HARNESS_POOL_THREADS];
};
void harness_pool_start(struct harness_pool *pool, void (*work)(void *item, void *context), void *context);
void harness_pool_push(struct harness_pool *pool, void *item);
/* Lets the threads take what is pushed already, then joins them. */
void harness_pool_stop(struct harness_pool *pool);

#endif
