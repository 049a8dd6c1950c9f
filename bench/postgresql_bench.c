/* PostgreSQL stores (issue 16), each measure beside its raw libpq peer in the
 * same run, on the same durable server (fsync and synchronous_commit on: the
 * server of scripts/pg_cluster.py --bench, which scripts/bench.py starts and
 * passes as OUTLIVE_BENCH_PG):
 *  - durable single operations per second (outlive_kv_set, outlive_signal_post,
 *    outlive_task_add, outlive_message_post) vs a raw INSERT of a comparable row committed per row
 *    (prepared, autocommit), the kinds interleaved one operation at a time;
 *  - post → handler in a process on another host: the poster and the consumer
 *    each in a network namespace of its own (ip netns, a veth pair to the
 *    server's), the consumer integrated as users do (poll on outlive_loop_fd,
 *    outlive_loop_dispatch); beside a raw commit alone and a raw commit +
 *    NOTIFY received by a LISTENing connection of that same process;
 *  - the death bound: how long another host takes to run a task a dead host's
 *    process was running (or, in a build without tasks on PostgreSQL, to
 *    deliver an any_process signal it had claimed), after kill -9 and after
 *    its link is cut, against docs/postgresql.md "The death bound".
 * libpq is loaded with dlopen (as the library does) so that no header or -lpq
 * is needed. Without OUTLIVE_BENCH_PG, libpq or root (namespaces), it says
 * what it did not measure and why, and exits 0.
 * Usage: postgresql_bench SCRATCH_DIR [ops] [latency] [death] (all when none). */
#define _GNU_SOURCE
#include "bench_util.h"
#include "outlive.h"
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>

/* libpq, the few functions used, declared here (no libpq-fe.h needed). */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef struct pgNotify {
    char *relname;
    int be_pid;
    char *extra;
    struct pgNotify *next;
} PGnotify;
enum { CONNECTION_OK = 0, PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2 };

static struct {
    PGconn *(*connectdb)(const char *);
    int (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    void (*finish)(PGconn *);
    PGresult *(*exec)(PGconn *, const char *);
    PGresult *(*prepare)(PGconn *, const char *, const char *, int, const unsigned int *);
    PGresult *(*execPrepared)(PGconn *, const char *, int, const char *const *, const int *, const int *, int);
    int (*resultStatus)(const PGresult *);
    char *(*resultErrorMessage)(const PGresult *);
    char *(*getvalue)(const PGresult *, int, int);
    void (*clear)(PGresult *);
    int (*socket)(const PGconn *);
    int (*consumeInput)(PGconn *);
    PGnotify *(*notifies)(PGconn *);
    void (*freemem)(void *);
} pq;

static bool load_libpq(char *why, size_t size) {
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!library) { snprintf(why, size, "libpq.so.5 cannot be loaded: %s", dlerror()); return false; }
#define RESOLVE(field, name) if (!(*(void **)&pq.field = dlsym(library, name))) { snprintf(why, size, "libpq has no %s", name); return false; }
    RESOLVE(connectdb, "PQconnectdb") RESOLVE(status, "PQstatus") RESOLVE(errorMessage, "PQerrorMessage")
    RESOLVE(finish, "PQfinish") RESOLVE(exec, "PQexec") RESOLVE(prepare, "PQprepare")
    RESOLVE(execPrepared, "PQexecPrepared") RESOLVE(resultStatus, "PQresultStatus")
    RESOLVE(resultErrorMessage, "PQresultErrorMessage") RESOLVE(getvalue, "PQgetvalue") RESOLVE(clear, "PQclear")
    RESOLVE(socket, "PQsocket") RESOLVE(consumeInput, "PQconsumeInput") RESOLVE(notifies, "PQnotifies")
    RESOLVE(freemem, "PQfreemem")
#undef RESOLVE
    return true;
}

static const char *server_uri; /* OUTLIVE_BENCH_PG: postgresql://...@127.0.0.1:PORT/DB */

static void fail(const char *what) {
    fprintf(stderr, "postgresql_bench: %s: %s\n", what, outlive_last_error());
    exit(1);
}

static void must(outlive_status status, const char *what) {
    if (status != OUTLIVE_OK) fail(what);
}

/* The server URI with 127.0.0.1 replaced by `host` (NULL: unchanged) and
 * outlive_store=`store` (NULL: none) appended. */
static void make_uri(char *out, size_t size, const char *host, const char *store) {
    char base[2048];
    const char *at = host ? strstr(server_uri, "127.0.0.1") : NULL;
    if (at) snprintf(base, sizeof base, "%.*s%s%s", (int)(at - server_uri), server_uri, host, at + strlen("127.0.0.1"));
    else snprintf(base, sizeof base, "%s", server_uri);
    if (store) snprintf(out, size, "%s%soutlive_store=%s", base, strchr(base, '?') ? "&" : "?", store);
    else snprintf(out, size, "%s", base);
}

static PGconn *raw_connect(const char *host) {
    char uri[2300];
    make_uri(uri, sizeof uri, host, NULL);
    PGconn *conn = pq.connectdb(uri);
    if (pq.status(conn) != CONNECTION_OK) {
        fprintf(stderr, "postgresql_bench: raw connection: %s", pq.errorMessage(conn));
        exit(1);
    }
    PGresult *result = pq.exec(conn, "SET client_min_messages TO warning");  /* no NOTICE of DROP ... CASCADE */
    pq.clear(result);
    return conn;
}

static void raw_exec(PGconn *conn, const char *sql) {
    PGresult *result = pq.exec(conn, sql);
    int status = pq.resultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        fprintf(stderr, "postgresql_bench: %s: %s", sql, pq.resultErrorMessage(result));
        exit(1);
    }
    pq.clear(result);
}

/* A store name of this run (a schema outlive_NAME), dropped by drop_stores(). */
static char store_names[64][41];
static int store_count;

static const char *new_store_name(const char *what) {
    if (store_count == 64) { fprintf(stderr, "postgresql_bench: too many stores\n"); exit(1); }
    char *name = store_names[store_count++];
    snprintf(name, 41, "bench_%s_%d_%d", what, (int)getpid(), store_count);
    return name;
}

static void drop_stores(void) {
    PGconn *conn = raw_connect(NULL);
    for (int i = 0; i < store_count; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS outlive_%s CASCADE", store_names[i]);
        PGresult *result = pq.exec(conn, sql);
        pq.clear(result);
    }
    store_count = 0;
    pq.finish(conn);
}

static outlive_store *open_store(const char *host, const char *name, const char *process, int liveness) {
    char uri[2300];
    make_uri(uri, sizeof uri, host, name);
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.liveness_seconds = liveness;
    outlive_store *store = NULL;
    must(outlive_store_open(uri, process, NULL, &options, &store), "open");
    return store;
}

/* ---- 1. durable single operations ---- */

/* Each operation is timed alone, the kinds interleaved one operation at a time
 * (raw, kv, signal, task, message, then the order rotated): the disk's fsync time swings
 * by 100 µs and more within seconds on this shared machine, which blocks of
 * one kind at a time turned into ratios that moved by ±0.2 between runs. */
#define OPS 2000
#define PAYLOAD 64

enum { OP_RAW, OP_KV, OP_SIGNAL, OP_TASK, OP_MESSAGE, OP_KINDS };
static const char *const op_names[OP_KINDS] = {
    "raw INSERT of a comparable row, committed per row (prepared, autocommit)",
    "outlive_kv_set (a new key, 64-byte value)",
    "outlive_signal_post (64-byte payload, one consumer)",
    "outlive_task_add (a handler with a 64-byte argument)",
    "outlive_message_post (a draft with one choice, built in the timed span)",
};

typedef struct {
    PGconn *raw;
    outlive_store *stores[OP_KINDS];
    outlive_args *args;
    outlive_handler *handler;
    char signal[OUTLIVE_ID_SIZE];
    unsigned char payload[PAYLOAD];
    char task_unavailable[512];
} ops_state;

static void ops_open(ops_state *state) {
    state->raw = raw_connect(NULL);
    raw_exec(state->raw, "DROP TABLE IF EXISTS bench_raw; CREATE TABLE bench_raw(id text COLLATE \"C\" PRIMARY KEY, "
                         "payload bytea NOT NULL, created double precision NOT NULL)");
    PGresult *prepared = pq.prepare(state->raw, "insert", "INSERT INTO bench_raw(id, payload, created) VALUES ($1, $2, $3)", 3, NULL);
    if (pq.resultStatus(prepared) != PGRES_COMMAND_OK) { fprintf(stderr, "prepare: %s", pq.resultErrorMessage(prepared)); exit(1); }
    pq.clear(prepared);
    memset(state->payload, 7, sizeof state->payload);
    must(outlive_args_new(&state->args), "args");
    must(outlive_args_set_id(state->args, "payload", NULL, state->payload, sizeof state->payload), "args");
    must(outlive_handler_new("bench.never_called", NULL, state->args, &state->handler), "handler");
    outlive_signal_new_id(state->signal);
    for (int kind = OP_KV; kind < OP_KINDS; kind++)
        state->stores[kind] = open_store(NULL, new_store_name("ops"), "bench-ops", 0);
    outlive_tasks_set_triggers(state->stores[OP_TASK], 0, 1e6);  /* adds only: no run here */
    /* A consumer no process runs: every post is stored for it. */
    must(outlive_signal_consume(state->stores[OP_SIGNAL], state->signal, state->handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED,
                                OUTLIVE_LIFETIME_PROCESS, NULL, NULL), "consume");
}

static void ops_close(ops_state *state) {
    for (int kind = OP_KV; kind < OP_KINDS; kind++) outlive_store_close(state->stores[kind]);
    outlive_handler_free(state->handler);
    outlive_args_free(state->args);
    raw_exec(state->raw, "DROP TABLE bench_raw");
    pq.finish(state->raw);
}

/* One operation of `kind`, its ns; -1 when tasks are not on PostgreSQL in this build. */
static int64_t ops_one(ops_state *state, int kind, int i) {
    int64_t start = bench_now_ns();
    outlive_status status = OUTLIVE_OK;
    if (kind == OP_RAW) {
        char id[OUTLIVE_ID_SIZE], created[32];
        outlive_signal_new_id(id); /* a random UUID, as a task's id */
        snprintf(created, sizeof created, "%.6f", start / 1e9);
        const char *values[3] = {id, (const char *)state->payload, created};
        int lengths[3] = {0, PAYLOAD, 0}, formats[3] = {0, 1, 0};
        PGresult *result = pq.execPrepared(state->raw, "insert", 3, values, lengths, formats, 0);
        if (pq.resultStatus(result) != PGRES_COMMAND_OK) { fprintf(stderr, "insert: %s", pq.resultErrorMessage(result)); exit(1); }
        pq.clear(result);
    } else if (kind == OP_KV) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        status = outlive_kv_set(state->stores[OP_KV], key, state->payload, sizeof state->payload);
    } else if (kind == OP_SIGNAL) {
        status = outlive_signal_post(state->stores[OP_SIGNAL], state->signal, state->args, false);
    } else if (kind == OP_MESSAGE) {
        outlive_message_draft *draft = NULL;
        must(outlive_message_draft_new("bench", "A question", &draft), "draft");
        must(outlive_message_draft_add_choice(draft, "ok", "OK", OUTLIVE_CHOICE_DEFAULT), "choice");
        char id[OUTLIVE_ID_SIZE];
        status = outlive_message_post(state->stores[OP_MESSAGE], draft, id);
        outlive_message_draft_free(draft);
    } else {
        status = outlive_task_add(state->stores[OP_TASK], state->handler, NULL, NULL, 0, NULL);
        if (status == OUTLIVE_E_STATE && i == 0) {
            snprintf(state->task_unavailable, sizeof state->task_unavailable, "%s", outlive_last_error());
            return -1;
        }
    }
    int64_t elapsed = bench_now_ns() - start;
    must(status, op_names[kind]);
    return elapsed;
}

static void measure_ops(void) {
    static int64_t samples[OP_KINDS][OPS];
    size_t counts[OP_KINDS] = {0};
    ops_state state = {0};
    ops_open(&state);
    bool tasks = true;
    for (int i = -20; i < OPS; i++)  /* the first 20 of each not counted */
        for (int k = 0; k < OP_KINDS; k++) {
            int kind = (k + (i < 0 ? 0 : i)) % OP_KINDS;  /* the order rotated every operation */
            if (kind == OP_TASK && !tasks) continue;
            int64_t ns = ops_one(&state, kind, i + 20);
            if (ns < 0) { tasks = false; continue; }
            if (i >= 0) samples[kind][counts[kind]++] = ns;
        }
    ops_close(&state);
    drop_stores();
    double raw = bench_percentile(samples[OP_RAW], counts[OP_RAW], 50) / 1e3;
    printf("#### Durable single operations\n\n"
           "%d operations of each kind, each its own committed transaction, from one process over TCP (127.0.0.1), "
           "the kinds interleaved one operation at a time and their order rotated (the disk's fsync time moves within "
           "seconds; blocks of one kind at a time made the ratios swing by ±0.2 between runs). The peer: a raw libpq "
           "INSERT of a task-like row (a UUID text primary key, a %d-byte bytea, a double), prepared, one autocommit "
           "statement per row. Per operation, µs:\n\n"
           "| operation | p50 | p99 | µs over the raw INSERT (p50) | ratio to the raw INSERT, p50 / p50 (goal ≥ 0.8) |\n"
           "|---|---:|---:|---:|---:|\n"
           "| %s | %.0f | %.0f | | 1.00 |\n", OPS, PAYLOAD, op_names[OP_RAW], raw,
           bench_percentile(samples[OP_RAW], counts[OP_RAW], 99) / 1e3);
    for (int kind = OP_KV; kind < OP_KINDS; kind++) {
        if (kind == OP_TASK && !tasks) {
            printf("| %s | not measured: tasks are not on PostgreSQL in this build (\"%.120s\") | | | |\n", op_names[kind],
                   state.task_unavailable);
            continue;
        }
        double p50 = bench_percentile(samples[kind], counts[kind], 50) / 1e3;
        double p99 = bench_percentile(samples[kind], counts[kind], 99) / 1e3;
        /* The goal is the kv set's, the signal post's and the task add's (issue 17); a message post is shown beside them. */
        printf("| %s | %.0f | %.0f | %+.0f | %.2f (%s) |\n", op_names[kind], p50, p99, p50 - raw, raw / p50,
               kind == OP_MESSAGE ? "no goal on PostgreSQL" : raw / p50 >= 0.8 ? "met" : "not met");
    }
    printf("\nA commit waits for the WAL's fsync, which this shared machine's disk takes from about 0.1 ms to several "
           "ms as its load changes; Outlive's own cost per operation (the store's lock, the change feed's statement "
           "with the row, library and server CPU: docs/postgresql.md, \"Where one operation's time goes\") stays: the "
           "µs over the raw INSERT are that cost.\n\n");
    fflush(stdout);
}

/* ---- network namespaces as hosts ---- */

typedef struct {
    char name[64];        /* the namespace */
    char host_link[16];   /* the veth end inside it */
    char server_addr[32]; /* the server's address as this host reaches it */
    bool made;
} net_host;

static int quiet(const char *command) {
    char line[512];
    snprintf(line, sizeof line, "%s >/dev/null 2>&1", command);
    return system(line);
}

/* A namespace joined to this one by a veth pair on a /24 of 10.231.0.0/16
 * (which pg_hba.conf of the bench server trusts). */
static bool net_host_make(net_host *host, char *why, size_t size) {
    /* Names never reused in a run: a deleted namespace's veth pair goes away later, in the kernel's own time. */
    static int made_count;
    int index = made_count++;
    memset(host, 0, sizeof *host);
    int pid = (int)getpid(), subnet = (pid * 7 + index * 31) % 250 + 1;
    snprintf(host->name, sizeof host->name, "outlive-bench-%d-%d", pid, index);
    snprintf(host->host_link, sizeof host->host_link, "olb%d%dh", pid % 100000, index);
    char server_link[16], commands[8][256];
    snprintf(server_link, sizeof server_link, "olb%d%ds", pid % 100000, index);
    snprintf(host->server_addr, sizeof host->server_addr, "10.231.%d.1", subnet);
    snprintf(commands[0], 256, "ip netns add %s", host->name);
    snprintf(commands[1], 256, "ip link add %s type veth peer name %s", server_link, host->host_link);
    snprintf(commands[2], 256, "ip link set %s netns %s", host->host_link, host->name);
    snprintf(commands[3], 256, "ip addr add %s/24 dev %s", host->server_addr, server_link);
    snprintf(commands[4], 256, "ip link set %s up", server_link);
    snprintf(commands[5], 256, "ip netns exec %s ip addr add 10.231.%d.2/24 dev %s", host->name, subnet, host->host_link);
    snprintf(commands[6], 256, "ip netns exec %s ip link set %s up", host->name, host->host_link);
    snprintf(commands[7], 256, "ip netns exec %s ip link set lo up", host->name);
    for (int i = 0; i < 8; i++) {
        if (i == 1) host->made = true;
        if (quiet(commands[i]) != 0) {
            snprintf(why, size, "`%s` failed", commands[i]);
            return false;
        }
    }
    return true;
}

static void net_host_remove(net_host *host) {
    char command[128];
    snprintf(command, sizeof command, "ip netns del %s", host->name);
    if (host->made) quiet(command);  /* takes the veth pair with it */
    host->made = false;
}

static void net_host_cut(const net_host *host) {
    char command[256];
    snprintf(command, sizeof command, "ip netns exec %s ip link set %s down", host->name, host->host_link);
    if (quiet(command) != 0) { fprintf(stderr, "postgresql_bench: %s failed\n", command); exit(1); }
}

/* Moves the calling process (a forked child) onto `host`. */
static void net_host_enter(const net_host *host) {
    char path[128];
    snprintf(path, sizeof path, "/var/run/netns/%s", host->name);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) { perror("setns"); _exit(1); }
    close(fd);
}

static bool namespaces_usable(char *why, size_t size) {
    if (geteuid() != 0) { snprintf(why, size, "network namespaces need root"); return false; }
    if (quiet("command -v ip") != 0) { snprintf(why, size, "the ip command is missing"); return false; }
    return true;
}

static bool read_full(int fd, void *buffer, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, (char *)buffer + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

/* Waits up to timeout_ms for fd to be readable. */
static bool readable(int fd, int timeout_ms) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n;
    while ((n = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR) {}
    return n > 0;
}

/* ---- 2. post → handler on another host ---- */

#define POSTS 300
#define WARMUP 20
#define GAP_US 4000

static int64_t handler_samples[POSTS + WARMUP], notify_samples[POSTS + WARMUP];
static int handler_count, notify_count;
static bool handler_final;

static void latency_receive(int64_t sent, uint64_t version, bool terminated) {
    (void)version;
    if (handler_count < POSTS + WARMUP) handler_samples[handler_count++] = bench_now_ns() - sent;
    if (terminated) handler_final = true;
}

static void latency_consumer(const net_host *host, const char *store_name, const char *signal, int ready_fd, int result_fd) {
    net_host_enter(host);
    outlive_store *store = open_store(host->server_addr, store_name, "bench-consumer", 0);
    must(outlive_handler_register("bench.latency_receive", "INTEGER sent, UINTEGER version, BOOL terminated",
                                  (void (*)(void))latency_receive), "register");
    outlive_handler *handler = NULL;
    must(outlive_handler_new("bench.latency_receive", NULL, NULL, &handler), "handler");
    must(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_UNTIL_TERMINATED, OUTLIVE_LIFETIME_THIS_RUN, NULL, NULL), "consume");
    outlive_handler_free(handler);
    PGconn *listener = raw_connect(host->server_addr);
    raw_exec(listener, "LISTEN bench_raw");
    if (write(ready_fd, "r", 1) != 1) _exit(1);
    outlive_loop *loop = outlive_store_loop(store);
    struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = pq.socket(listener), .events = POLLIN}};
    /* A host loop: sleep in poll, dispatch what is ready (the raw LISTEN connection in the same poll). */
    while (!handler_final || notify_count < POSTS + WARMUP) {
        if (poll(fds, 2, 20000) <= 0) _exit(3);
        if (fds[0].revents) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents) {
            int64_t now = bench_now_ns();
            pq.consumeInput(listener);
            PGnotify *notify;
            while ((notify = pq.notifies(listener))) {
                if (notify_count < POSTS + WARMUP) notify_samples[notify_count++] = now - atoll(notify->extra);
                pq.freemem(notify);
            }
        }
    }
    if (write(result_fd, &handler_count, sizeof handler_count) != sizeof handler_count ||
        write(result_fd, handler_samples, sizeof(int64_t) * (size_t)handler_count) < 0 ||
        write(result_fd, &notify_count, sizeof notify_count) != sizeof notify_count ||
        write(result_fd, notify_samples, sizeof(int64_t) * (size_t)notify_count) < 0) _exit(1);
    pq.finish(listener);
    outlive_store_close(store);
    _exit(0);
}

/* Runs on the poster's host (a forked child); prints the table's rows. */
static void latency_poster(const net_host *poster_host, const net_host *consumer_host, const char *store_name) {
    net_host_enter(poster_host);
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    int ready[2], result[2];
    if (pipe(ready) != 0 || pipe(result) != 0) _exit(1);
    pid_t consumer = fork();
    if (consumer == 0) {
        close(ready[0]);
        close(result[0]);
        latency_consumer(consumer_host, store_name, signal, ready[1], result[1]);
    }
    close(ready[1]);
    close(result[1]);
    char byte;
    if (read(ready[0], &byte, 1) != 1) { fprintf(stderr, "postgresql_bench: the consumer did not start\n"); _exit(1); }
    outlive_store *store = open_store(poster_host->server_addr, store_name, "bench-poster", 0);

    PGconn *raw = raw_connect(poster_host->server_addr);
    char sql[512];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS bench_raw_signal; CREATE TABLE bench_raw_signal(id text COLLATE \"C\" PRIMARY KEY, "
             "version bigint NOT NULL, payload bytea, terminated boolean NOT NULL); INSERT INTO bench_raw_signal VALUES ('%s', 0, NULL, false)", signal);
    raw_exec(raw, sql);
    PGresult *prepared = pq.prepare(raw, "update", "UPDATE bench_raw_signal SET version = version + 1, payload = $2 WHERE id = $1", 2, NULL);
    if (pq.resultStatus(prepared) != PGRES_COMMAND_OK) { fprintf(stderr, "prepare: %s", pq.resultErrorMessage(prepared)); _exit(1); }
    pq.clear(prepared);

    int total = POSTS + WARMUP;
    int64_t *post_call = calloc((size_t)total, sizeof(int64_t)), *commit = calloc((size_t)total, sizeof(int64_t));
    for (int i = 0; i < total; i++) {
        outlive_args *payload = NULL;
        must(outlive_args_new(&payload), "args");
        int64_t start = bench_now_ns();
        outlive_args_set_integer(payload, "sent", start);
        must(outlive_signal_post(store, signal, payload, i == total - 1), "post");
        post_call[i] = bench_now_ns() - start;
        outlive_args_free(payload);
        usleep(GAP_US / 3);

        start = bench_now_ns();
        const char *values[2] = {signal, (const char *)&start};
        int lengths[2] = {0, sizeof start}, formats[2] = {0, 1};
        PGresult *updated = pq.execPrepared(raw, "update", 2, values, lengths, formats, 0);
        if (pq.resultStatus(updated) != PGRES_COMMAND_OK) { fprintf(stderr, "update: %s", pq.resultErrorMessage(updated)); _exit(1); }
        pq.clear(updated);
        commit[i] = bench_now_ns() - start;
        usleep(GAP_US / 3);

        /* One round trip, one transaction: the same UPDATE and a NOTIFY carrying the time. */
        start = bench_now_ns();
        snprintf(sql, sizeof sql, "UPDATE bench_raw_signal SET version = version + 1 WHERE id = '%s'; NOTIFY bench_raw, '%lld'",
                 signal, (long long)start);
        raw_exec(raw, sql);
        usleep(GAP_US / 3);
    }
    int counts[2] = {0, 0};
    int64_t *delivered[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        if (!read_full(result[0], &counts[i], sizeof counts[i]) || counts[i] < WARMUP + 1 || counts[i] > total) {
            fprintf(stderr, "postgresql_bench: no results from the consumer\n");
            _exit(1);
        }
        delivered[i] = calloc((size_t)counts[i], sizeof(int64_t));
        if (!read_full(result[0], delivered[i], sizeof(int64_t) * (size_t)counts[i])) _exit(1);
    }
    waitpid(consumer, NULL, 0);
    raw_exec(raw, "DROP TABLE bench_raw_signal");
    pq.finish(raw);
    outlive_store_close(store);

    /* The first WARMUP samples of each are not counted (connections and caches warming up). */
#define P(samples, n, p) (bench_percentile((samples) + WARMUP, (size_t)(n) - WARMUP, p) / 1e3)
    double c50 = P(commit, total, 50), c99 = P(commit, total, 99);
    double s50 = P(post_call, total, 50), s99 = P(post_call, total, 99);
    double h50 = P(delivered[0], counts[0], 50), h99 = P(delivered[0], counts[0], 99);
    double n50 = P(delivered[1], counts[1], 50), n99 = P(delivered[1], counts[1], 99);
#undef P
    printf("| raw commit of a comparable row (prepared UPDATE, autocommit) | %.0f | %.0f |\n", c50, c99);
    printf("| outlive_signal_post (the call; commit p50 / post p50 = %.2f) | %.0f | %.0f |\n", c50 / s50, s50, s99);
    printf("| raw commit + NOTIFY → the LISTENing connection on the other host (peer) | %.0f | %.0f |\n", n50, n99);
    printf("| outlive_signal_post → handler on the other host (%d calls) | %.0f | %.0f |\n", counts[0] - WARMUP, h50, h99);
    printf("\nGoal: post → handler p50 ≤ raw commit + NOTIFY p50 + 500 µs = %.0f µs: %.0f, %s (against the raw commit "
           "alone + 500 µs = %.0f µs: %s). Post ≥ 0.8× a commit (commit p50 / post p50): %.2f, %s.\n\n",
           n50 + 500, h50, h50 <= n50 + 500 ? "met" : "not met", c50 + 500, h50 <= c50 + 500 ? "met" : "not met",
           c50 / s50, c50 / s50 >= 0.8 ? "met" : "not met");
    fflush(stdout);
    _exit(0);
}

static void measure_latency(void) {
    printf("#### Post → handler on another host\n\n");
    char why[512] = "";
    net_host hosts[2];
    memset(hosts, 0, sizeof hosts);
    if (!namespaces_usable(why, sizeof why) || !net_host_make(&hosts[0], why, sizeof why) ||
        !net_host_make(&hosts[1], why, sizeof why)) {
        printf("Not measured: %s.\n\n", why);
        net_host_remove(&hosts[0]);
        net_host_remove(&hosts[1]);
        return;
    }
    printf("The poster and the consumer are processes on two hosts: network namespaces, each joined to the server's by a "
           "veth pair (ip netns). The consumer polls outlive_loop_fd and calls outlive_loop_dispatch(loop, 0), its handler "
           "registered with outlive_handler_register; in the same poll it has a raw libpq connection that LISTENs. "
           "%d posts (after %d not counted), each followed %d µs later by a raw commit of a comparable row and %d µs after "
           "that by the same commit with a NOTIFY carrying its start time, in one round trip (µs):\n\n"
           "| path | p50 | p99 |\n|---|---:|---:|\n", POSTS, WARMUP, GAP_US / 3, GAP_US / 3);
    fflush(stdout);
    const char *store_name = new_store_name("latency");
    pid_t poster = fork();
    if (poster == 0) latency_poster(&hosts[0], &hosts[1], store_name);
    int status = 0;
    waitpid(poster, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) printf("\nFAILED: the poster exited with status %d.\n\n", status);
    drop_stores();
    net_host_remove(&hosts[0]);
    net_host_remove(&hosts[1]);
}

/* ---- 3. the death bound ---- */

static int stall_fd = -1, take_fd = -1;

/* Host A's handler: says it started, then never returns (its process dies in it). */
static void death_stall(uint64_t version, bool terminated) {
    (void)version;
    (void)terminated;
    if (write(stall_fd, "s", 1) != 1) _exit(1);
    for (;;) pause();
}

/* Host B's handler: the time it was called. */
static void death_take(uint64_t version, bool terminated) {
    (void)version;
    (void)terminated;
    int64_t now = bench_now_ns();
    if (write(take_fd, &now, sizeof now) != sizeof now) _exit(1);
}

/* The same for a task's handler (no parameters). */
static void death_stall_task(void) { death_stall(0, false); }
static void death_take_task(void) { death_take(0, false); }

/* Whether the work a dead host leaves is a task (when tasks are on PostgreSQL
 * in this build) or an any_process signal delivery. */
static bool death_with_tasks;

static bool tasks_on_postgresql(void) {
    outlive_store *store = open_store(NULL, new_store_name("probe"), "bench-probe", 0);
    outlive_tasks_set_triggers(store, 0, 1e6);
    outlive_handler *handler = NULL;
    must(outlive_handler_new("bench.never_called", NULL, NULL, &handler), "handler");
    bool available = outlive_task_add(store, handler, NULL, NULL, 0, NULL) == OUTLIVE_OK;
    outlive_handler_free(handler);
    outlive_store_close(store);
    drop_stores();
    return available;
}

static void death_host(const net_host *host, const char *store_name, int liveness, bool first, const char *signal, int ready_fd, int event_fd) {
    net_host_enter(host);
    outlive_store *store = open_store(host->server_addr, store_name, first ? "bench-host-a" : "bench-host-b", liveness);
    if (death_with_tasks) {
        /* A worker as users run one: runs start when a task is due, on this loop. */
        outlive_tasks_set_triggers(store, 1, 0);
        if (first) stall_fd = event_fd;
        else take_fd = event_fd;
        must(outlive_handler_register("bench.death_task", "", first ? (void (*)(void))death_stall_task : (void (*)(void))death_take_task), "register");
        if (first) {
            outlive_handler *handler = NULL;
            must(outlive_handler_new("bench.death_task", NULL, NULL, &handler), "handler");
            must(outlive_task_add(store, handler, NULL, NULL, 0, NULL), "task add");
            outlive_handler_free(handler);
        }
    } else if (first) {
        stall_fd = event_fd;
        must(outlive_handler_register("bench.death", "UINTEGER version, BOOL terminated", (void (*)(void))death_stall), "register");
        outlive_handler *handler = NULL;
        must(outlive_handler_new("bench.death", NULL, NULL, &handler), "handler");
        /* One delivery among the live processes that resolve the handler: this one takes it first. */
        must(outlive_signal_consume(store, signal, handler, OUTLIVE_DELIVERY_ONCE, OUTLIVE_LIFETIME_ANY_PROCESS, NULL, NULL), "consume");
        outlive_handler_free(handler);
        must(outlive_signal_post(store, signal, NULL, false), "post");
    } else {
        take_fd = event_fd;
        must(outlive_handler_register("bench.death", "UINTEGER version, BOOL terminated", (void (*)(void))death_take), "register");
    }
    if (write(ready_fd, "r", 1) != 1) _exit(1);
    outlive_loop *loop = outlive_store_loop(store);
    struct pollfd pfd = {.fd = outlive_loop_fd(loop), .events = POLLIN};
    for (;;) {
        if (poll(&pfd, 1, -1) > 0) outlive_loop_dispatch(loop, 0);
    }
}

static pid_t spawn_death_host(const net_host *host, const char *store_name, int liveness, bool first, const char *signal, int *event_read) {
    int ready[2], event[2];
    if (pipe(ready) != 0 || pipe(event) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(event[0]);
        death_host(host, store_name, liveness, first, signal, ready[1], event[1]);
    }
    close(ready[1]);
    close(event[1]);
    char byte;
    bool started = readable(ready[0], 30000) && read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    if (!started) { fprintf(stderr, "postgresql_bench: a host's process did not start\n"); exit(1); }
    *event_read = event[0];
    return pid;
}

/* Seconds from the death (kill -9 or the cut) of host A's process, inside its
 * handler, to host B's handler call; -1 when B was not called within 3 bounds. */
static double death_trial(bool cut, int liveness, double phase) {
    char why[512];
    net_host hosts[2];
    memset(hosts, 0, sizeof hosts);
    if (!net_host_make(&hosts[0], why, sizeof why) || !net_host_make(&hosts[1], why, sizeof why)) {
        fprintf(stderr, "postgresql_bench: %s\n", why);
        exit(1);
    }
    const char *store_name = new_store_name("death");
    char signal[OUTLIVE_ID_SIZE];
    outlive_signal_new_id(signal);
    int stalled = -1, taken = -1;
    pid_t a = spawn_death_host(&hosts[0], store_name, liveness, true, signal, &stalled);
    char byte;
    if (!readable(stalled, 30000) || read(stalled, &byte, 1) != 1) { fprintf(stderr, "postgresql_bench: host A never ran its handler\n"); exit(1); }
    pid_t b = spawn_death_host(&hosts[1], store_name, liveness, false, signal, &taken);
    /* Before a cut, the link idle past the keepalive idle time (about 0.4 of the
     * bound), as a quiet host's is; a live host answers those probes. B checks
     * every half bound from its start: `phase` (0..1) spreads the deaths over
     * that interval, so that the trials sample it rather than repeat one point. */
    double wait = (cut ? liveness * 0.4 + 2 : 1) + phase * liveness / 2.0;
    usleep((useconds_t)(wait * 1e6));
    int64_t death = bench_now_ns();
    if (cut) net_host_cut(&hosts[0]);
    else kill(a, SIGKILL);
    double seconds = -1;
    int64_t called = 0;
    if (readable(taken, liveness * 3000) && read_full(taken, &called, sizeof called)) seconds = (called - death) / 1e9;
    kill(a, SIGKILL);
    kill(b, SIGKILL);
    waitpid(a, NULL, 0);
    waitpid(b, NULL, 0);
    close(stalled);
    close(taken);
    net_host_remove(&hosts[0]);
    net_host_remove(&hosts[1]);
    drop_stores();
    return seconds;
}

static void measure_death(void) {
    printf("#### A dead host's work taken over by another host\n\n");
    char why[512] = "";
    if (!namespaces_usable(why, sizeof why)) {
        printf("Not measured: %s.\n\n", why);
        return;
    }
    death_with_tasks = tasks_on_postgresql();
    if (death_with_tasks)
        printf("Host A and host B are processes in two network namespaces (veth pairs to the server's), each a worker "
               "dispatching its store's loop (triggers 1 task, 0 s). A adds a task and runs it: its handler never "
               "returns. B opens the store with the same handler. Then A's "
               "process is killed with `kill -9`, or A's link is cut (`ip link set down` inside A, after the link was idle "
               "past the keepalive idle time): seconds from the death to B's call of the task's handler, the deaths spread "
               "over B's check interval. docs/postgresql.md, \"The death "
               "bound\": a process killed on a live host is seen within half the bound, a vanished host within 1.5 × the "
               "bound (River and Oban rescue a dead worker's job after an hour by default).\n\n");
    else
    printf("Host A and host B are processes in two network namespaces (veth pairs to the server's). A registers an "
           "`any_process` signal consumer (delivered once, by one of the live processes that resolve its handler), posts "
           "to it and takes the delivery: its handler never returns. B opens the store with the same handler. Then A's "
           "process is killed with `kill -9`, or A's link is cut (`ip link set down` inside A, after the link was idle "
           "past the keepalive idle time): seconds from the death to B's handler call, the deaths spread over B's check interval. docs/postgresql.md, \"The death "
           "bound\": a process killed on a live host is seen within half the bound, a vanished host within 1.5 × the bound. "
           "(Tasks are not on PostgreSQL in this build; a signal's delivery claim is taken over through the same run "
           "liveness and end-of-run hooks.)\n\n");
    printf("| death | bound (s) | documented (s) | trials | each (s) | worst (s) | within |\n|---|---:|---:|---:|---|---:|---|\n");
    fflush(stdout);
    struct { bool cut; int liveness, trials; } plans[] = {{false, 10, 3}, {false, 4, 3}, {true, 10, 2}, {true, 4, 3}};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        double documented = plans[p].cut ? 1.5 * plans[p].liveness : 0.5 * plans[p].liveness, worst = 0;
        char each[256] = "";
        bool within = true;
        for (int t = 0; t < plans[p].trials; t++) {
            double seconds = death_trial(plans[p].cut, plans[p].liveness, (t + 0.5) / plans[p].trials);
            size_t used = strlen(each);
            if (seconds < 0) {
                snprintf(each + used, sizeof each - used, "%snever (%d s)", t ? ", " : "", plans[p].liveness * 3);
                within = false;
                worst = plans[p].liveness * 3;
                continue;
            }
            snprintf(each + used, sizeof each - used, "%s%.2f", t ? ", " : "", seconds);
            if (seconds > worst) worst = seconds;
            if (seconds > documented) within = false;
        }
        char verdict[96] = "yes";
        if (!within) snprintf(verdict, sizeof verdict, "no: +%.0f ms", (worst - documented) * 1e3);
        printf("| %s | %d | %.0f | %d | %s | %.3f | %s |\n", plans[p].cut ? "link cut" : "`kill -9`", plans[p].liveness,
               documented, plans[p].trials, each, worst, verdict);
        fflush(stdout);
    }
    printf("\nAfter a `kill -9` the server frees the dead session's lock at once; B sees it at its next liveness check "
           "(every half bound less 100 ms, timed from the end of the last, nothing else waking it), then takes the "
           "work over in its own transactions: the 100 ms keep a death just after a check, with those few "
           "milliseconds of takeover, within half the bound. After a "
           "cut the server ends the session by keepalives and tcp_user_timeout (within the bound), then B's next "
           "check sees it.\n\n");
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: postgresql_bench SCRATCH_DIR [ops] [latency] [death]\n"); return 2; }
    snprintf(bench_scratch, sizeof bench_scratch, "%s", argv[1]);
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    printf("### PostgreSQL\n\n");
    server_uri = getenv("OUTLIVE_BENCH_PG");
    char why[512];
    if (!server_uri || !*server_uri) {
        const char *failure = getenv("OUTLIVE_BENCH_PG_FAILURE");
        printf("Not measured: %s.\n", failure && *failure ? failure : "no server (OUTLIVE_BENCH_PG is not set; scripts/bench.py starts one)");
        return 0;
    }
    if (!load_libpq(why, sizeof why)) {
        printf("Not measured: %s.\n", why);
        return 0;
    }
    PGconn *conn = raw_connect(NULL);
    PGresult *result = pq.exec(conn, "SELECT current_setting('server_version'), current_setting('fsync'), "
                                     "current_setting('synchronous_commit'), current_setting('full_page_writes')");
    if (pq.resultStatus(result) != PGRES_TUPLES_OK) { fprintf(stderr, "%s", pq.resultErrorMessage(result)); return 1; }
    printf("PostgreSQL %s on this machine (scripts/pg_cluster.py --bench, started by scripts/bench.py): fsync=%s, "
           "synchronous_commit=%s, full_page_writes=%s — every commit durable, Outlive's and the raw peers' alike; "
           "the store's default durability (FULL).\n\n",
           pq.getvalue(result, 0, 0), pq.getvalue(result, 0, 1), pq.getvalue(result, 0, 2), pq.getvalue(result, 0, 3));
    pq.clear(result);
    pq.finish(conn);
    fflush(stdout);
    bool all = argc < 3;
    for (int i = 2; i < argc || all; i++) {
        const char *what = all ? "all" : argv[i];
        if (all || !strcmp(what, "ops")) measure_ops();
        if (all || !strcmp(what, "latency")) measure_latency();
        if (all || !strcmp(what, "death")) measure_death();
        if (all) break;
    }
    return 0;
}
