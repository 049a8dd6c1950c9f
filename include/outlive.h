/*
 * outlive.h — callbacks that outlive the process.
 *
 * Outlive stores handlers (a named C function plus bound, typed arguments) with
 * messages, signals and tasks in a durable store shared by many processes, and
 * calls them in whichever process can resolve them. This header is the whole
 * reference: every function says what it does, who owns what, which thread may
 * call it and every status it returns.
 *
 * Conventions (they hold for every function unless its comment says otherwise):
 *
 *  - Every fallible function returns an outlive_status. On failure,
 *    outlive_last_error() tells why, in a message for humans.
 *  - Output parameters are named `out...` and are written only on success; on
 *    failure they are left as they were. There are no partial successes: a
 *    failed call changes nothing, in memory or in the store.
 *  - A NULL pointer where none is allowed is OUTLIVE_E_INVALID_ARGUMENT, and so
 *    is a string that is not valid UTF-8. Strings are NUL-terminated UTF-8 and
 *    are copied by the library when it keeps them; the caller keeps ownership
 *    of everything it passes in.
 *  - Memory the library allocates for the caller is freed with outlive_free(),
 *    or with the `_free` function of its type. Every `_free` accepts NULL.
 *  - A `const` handle is not modified by the call.
 *  - Callbacks run only inside outlive_loop_dispatch(), on the thread that
 *    calls it. Every callback receives the `context` it was registered with.
 *  - Ids are 36-character UUID strings; buffers for them are OUTLIVE_ID_SIZE
 *    (37) bytes.
 *  - Functions are thread-safe unless their comment says otherwise.
 *
 * Link with -loutlive (pkg-config --cflags --libs outlive).
 */
#ifndef OUTLIVE_H
#define OUTLIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OUTLIVE_API __attribute__((visibility("default")))
#else
#define OUTLIVE_API
#endif

/* ── basics ─────────────────────────────────────────────────────────────── */

#define OUTLIVE_VERSION_MAJOR 0
#define OUTLIVE_VERSION_MINOR 1
#define OUTLIVE_VERSION_PATCH 0
/* MAJOR * 1000000 + MINOR * 1000 + PATCH, for preprocessor comparisons. */
#define OUTLIVE_VERSION_NUMBER (OUTLIVE_VERSION_MAJOR * 1000000 + OUTLIVE_VERSION_MINOR * 1000 + OUTLIVE_VERSION_PATCH)

/* Bytes of a buffer that receives an id: 36 characters and the NUL. */
#define OUTLIVE_ID_SIZE 37

typedef enum outlive_status {
    OUTLIVE_OK = 0,
    OUTLIVE_E_INVALID_ARGUMENT,  /* NULL, bad UTF-8, out of range, malformed signature string */
    OUTLIVE_E_NOT_FOUND,         /* no such key, message, task, signal, argument */
    OUTLIVE_E_UNRESOLVED,        /* no declared handler of that name in this process */
    OUTLIVE_E_TYPE_MISMATCH,     /* an argument's type differs from the declared parameter */
    OUTLIVE_E_MISSING_ARGUMENT,  /* a mandatory parameter has no value */
    OUTLIVE_E_INVALIDATED,       /* the handler was invalidated already */
    OUTLIVE_E_CORRUPT,           /* stored or serialized data does not decode */
    OUTLIVE_E_IO,                /* file system or database failure (disk full, read-only) */
    OUTLIVE_E_BUSY,              /* held by another process or thread */
    OUTLIVE_E_PERMISSION,        /* unsafe file modes, foreign owner, not allowed */
    OUTLIVE_E_STATE,             /* wrong state: finished twice, closed handle, used after fork */
    OUTLIVE_E_VERSION,           /* written by a newer, incompatible format */
    OUTLIVE_E_NO_MEMORY
} outlive_status;

/* The message of the calling thread's last failing call. Never NULL: "no error"
 * before any failure. Owned by the library; valid until the next failing call
 * on this thread. Successful calls leave it unchanged. Any thread. */
OUTLIVE_API const char *outlive_last_error(void);

/* The name of a status ("OUTLIVE_E_NOT_FOUND"), or "OUTLIVE_E_UNKNOWN" for a
 * value that is not one. Static storage. Any thread. */
OUTLIVE_API const char *outlive_status_name(outlive_status status);

/* The library's version, "MAJOR.MINOR.PATCH". Static storage. Any thread. */
OUTLIVE_API const char *outlive_version(void);

/* The library's version as OUTLIVE_VERSION_NUMBER computes it: compare with the
 * header's to detect a program built against another version. */
OUTLIVE_API uint32_t outlive_version_number(void);

/* Frees memory the library allocated for the caller (kv_get values, serialized
 * handlers, descriptions). NULL is ignored. Any thread. */
OUTLIVE_API void outlive_free(void *pointer);

/* Diagnostics. The library prints nothing; what it has to say (a dead run it
 * cleaned up, a change feed it had to reread, a handler that failed inside a
 * task) goes to the handler installed here, for messages at `level` or more
 * severe. The handler may be called on any thread, including the library's
 * callers' threads inside any call; it must not call back into the library.
 * NULL handler: messages are dropped (the default). */
typedef enum outlive_log_level {
    OUTLIVE_LOG_ERROR = 1,
    OUTLIVE_LOG_WARNING,
    OUTLIVE_LOG_INFO,
    OUTLIVE_LOG_DEBUG
} outlive_log_level;
typedef void (*outlive_log_handler)(outlive_log_level level, const char *message, void *context);

/* Installs (or with NULL removes) the process-wide log handler.
 * OUTLIVE_E_INVALID_ARGUMENT: level is not an outlive_log_level. Any thread. */
OUTLIVE_API outlive_status outlive_set_log_handler(outlive_log_handler handler, outlive_log_level level, void *context);

/* ── values ───────────────────────────────────────────────────────────────── */
/* (values and handlers: see the handlers section) */

/* ── loop ───────────────────────────────────────────────────────────────── */
/*
 * The loop is where callbacks run. It exposes one file descriptor that becomes
 * readable when work is due (a store changed, a timer fired, a completion came
 * from another thread); the host adds it to its own event loop (poll, epoll,
 * libuv, GLib, asyncio) and calls outlive_loop_dispatch() when it is readable.
 * An idle loop causes no wake-ups. Hosts without an event loop call
 * outlive_loop_run_thread() instead.
 */
typedef struct outlive_loop outlive_loop;

/* Creates a loop. *out receives it; free it with outlive_loop_free().
 * OUTLIVE_E_INVALID_ARGUMENT: out is NULL. OUTLIVE_E_IO / OUTLIVE_E_NO_MEMORY:
 * the kernel refused an epoll, eventfd or timerfd (fd limit). Any thread. */
OUTLIVE_API outlive_status outlive_loop_new(outlive_loop **out);

/* Stops the loop's own thread if it has one (waiting for the callback it runs
 * to return, unless called from that thread) and releases the loop. Stores
 * opened on it keep it alive until they are closed, but nothing is dispatched
 * after this call. NULL is ignored. */
OUTLIVE_API void outlive_loop_free(outlive_loop *loop);

/* The descriptor to poll for readability; -1 when loop is NULL. Owned by the
 * loop: do not read from or close it. */
OUTLIVE_API int outlive_loop_fd(const outlive_loop *loop);

/* Waits up to timeout_ms milliseconds for work (0: do not wait; negative: wait
 * until work is due) and runs every due callback on the calling thread.
 * OUTLIVE_E_INVALID_ARGUMENT: loop is NULL.
 * OUTLIVE_E_STATE: called from inside one of this loop's callbacks, or the loop
 *   runs on its own thread (outlive_loop_run_thread).
 * OUTLIVE_E_BUSY: another thread is dispatching this loop at the same time.
 * OUTLIVE_E_IO: epoll_wait failed. */
OUTLIVE_API outlive_status outlive_loop_dispatch(outlive_loop *loop, int timeout_ms);

/* Starts a thread owned by the loop that dispatches until outlive_loop_free().
 * From then on callbacks run on that thread and outlive_loop_dispatch() returns
 * OUTLIVE_E_STATE. OUTLIVE_E_STATE: it runs on its own thread already.
 * OUTLIVE_E_BUSY: another thread is dispatching it. OUTLIVE_E_IO: no thread. */
OUTLIVE_API outlive_status outlive_loop_run_thread(outlive_loop *loop);

/* ── store ──────────────────────────────────────────────────────────────── */
/*
 * A store is a directory shared by every process that opens it: an SQLite
 * database in WAL mode, a doorbell file other processes watch with inotify,
 * and one lock file per open handle. Each open handle is one "run" of a
 * process name (like an application's bundle id: "app", "worker"), with a
 * fresh run id. A run is alive while its process holds the lock on its lock
 * file, so any death, kill -9 included, is seen by the other processes at once.
 *
 * Safety: the directory must belong to this user and must not be writable by
 * group or others (it is created 0700, files 0600); links inside it are never
 * followed. A handle belongs to the process that opened it: in a child made by
 * fork() every call on it returns OUTLIVE_E_STATE; the child opens its own.
 */
typedef struct outlive_store outlive_store;

typedef enum outlive_durability {
    /* Every acknowledged change survives a power loss (SQLite synchronous=FULL). */
    OUTLIVE_DURABILITY_FULL = 1,
    /* Acknowledged changes survive a crash of any process, but the last ones may
     * be lost on a power loss or kernel crash (synchronous=NORMAL); several times
     * faster. A durability trade the application makes knowingly. */
    OUTLIVE_DURABILITY_NORMAL = 2
} outlive_durability;

#define OUTLIVE_STORE_OPTIONS_VERSION 1
typedef struct outlive_store_options {
    uint32_t           version;          /* OUTLIVE_STORE_OPTIONS_VERSION */
    outlive_durability durability;       /* default OUTLIVE_DURABILITY_FULL */
    int32_t            busy_timeout_ms;  /* how long a write waits for other processes; default 10000 */
} outlive_store_options;
#define OUTLIVE_STORE_OPTIONS_INIT { OUTLIVE_STORE_OPTIONS_VERSION, OUTLIVE_DURABILITY_FULL, 10000 }

/* Opens (creating it if needed) the store in `directory` as a run of
 * `process_name`, delivering its callbacks on `loop`. When loop is NULL the
 * store makes a loop of its own (outlive_store_loop). Runs of processes that
 * died are cleaned up here.
 *
 * directory: created 0700 if missing (its parent must exist).
 * process_name: 1 to 255 bytes, without ':', '/' or control characters.
 * Returns:
 *   OUTLIVE_E_INVALID_ARGUMENT  a NULL pointer, an empty path, a bad process
 *                               name, or a path that exists and is no directory
 *   OUTLIVE_E_PERMISSION        the directory or a file in it is owned by
 *                               another user, is writable by others, or is a link
 *   OUTLIVE_E_IO                cannot be created or written (read-only, disk full)
 *   OUTLIVE_E_CORRUPT           the database is damaged or not an Outlive store
 *   OUTLIVE_E_VERSION           written by a newer, incompatible Outlive
 *   OUTLIVE_E_BUSY              another process held the database past the timeout
 * Any thread. */
OUTLIVE_API outlive_status outlive_store_open(const char *directory, const char *process_name,
                                              outlive_loop *loop, outlive_store **out);

/* outlive_store_open() with options (NULL: the defaults). Also
 * OUTLIVE_E_INVALID_ARGUMENT for an unknown options version or durability, or a
 * negative busy timeout. */
OUTLIVE_API outlive_status outlive_store_open_with_options(const char *directory, const char *process_name,
                                                           outlive_loop *loop,
                                                           const outlive_store_options *options,
                                                           outlive_store **out);

/* Ends this run (its this-run signal consumers go, the claims it held are
 * released) and frees the handle. Callbacks registered on it are not called
 * again. Call it on the thread that dispatches its loop, or when the loop is
 * not being dispatched. NULL is ignored. */
OUTLIVE_API void outlive_store_close(outlive_store *store);

/* This handle's run id (36 characters), owned by the store, valid until it is
 * closed. NULL when store is NULL. */
OUTLIVE_API const char *outlive_store_run_id(const outlive_store *store);

/* The process name the store was opened with; owned by the store. */
OUTLIVE_API const char *outlive_store_process_name(const outlive_store *store);

/* The loop the store delivers on: the one passed to outlive_store_open, or the
 * store's own. Owned by the store: do not free it. NULL when store is NULL. */
OUTLIVE_API outlive_loop *outlive_store_loop(outlive_store *store);

/* ── key-value ──────────────────────────────────────────────────────────── */
/*
 * Durable values under string keys, shared by every process of the store.
 * Keys are 1 to OUTLIVE_KV_MAX_KEY_SIZE bytes of UTF-8; values 0 to
 * OUTLIVE_KV_MAX_VALUE_SIZE bytes. Each call is one transaction, durable when it
 * returns OUTLIVE_OK. Besides the statuses listed, each returns
 * OUTLIVE_E_INVALID_ARGUMENT for a NULL store or key, a key that is empty, too
 * long or not UTF-8, or a value too large; OUTLIVE_E_STATE for a closed handle,
 * a forked child, or a call from inside a kv_update modifier of the same store;
 * OUTLIVE_E_BUSY when other processes held the database past the busy timeout;
 * OUTLIVE_E_IO or OUTLIVE_E_CORRUPT when the database fails.
 */
#define OUTLIVE_KV_MAX_KEY_SIZE 1024
#define OUTLIVE_KV_MAX_VALUE_SIZE (64u * 1024u * 1024u)

/* Stores `size` bytes (bytes may be NULL when size is 0) under key. */
OUTLIVE_API outlive_status outlive_kv_set(outlive_store *store, const char *key, const void *bytes, size_t size);

/* Copies the value of key into a new allocation: *bytes receives it (free it with
 * outlive_free; never NULL, even for an empty value) and *size its length.
 * OUTLIVE_E_NOT_FOUND: no value under key. */
OUTLIVE_API outlive_status outlive_kv_get(outlive_store *store, const char *key, void **bytes, size_t *size);

/* Removes key. OUTLIVE_E_NOT_FOUND: there was no value under it. */
OUTLIVE_API outlive_status outlive_kv_delete(outlive_store *store, const char *key);

/* The value under update, valid only during the modifier call. */
typedef struct outlive_kv_value outlive_kv_value;

/* The current bytes (NULL when the key has no value; *size 0 then), valid until
 * the modifier returns or the value is set. size may be NULL. */
OUTLIVE_API const void *outlive_kv_value_bytes(const outlive_kv_value *value, size_t *size);

/* Replaces the value to be written with a copy of `size` bytes.
 * OUTLIVE_E_INVALID_ARGUMENT: value is NULL, bytes NULL with a size, too large.
 * OUTLIVE_E_STATE: the modifier already returned. */
OUTLIVE_API outlive_status outlive_kv_value_set(outlive_kv_value *value, const void *bytes, size_t size);

/* Marks the key for deletion. OUTLIVE_E_STATE: the modifier already returned. */
OUTLIVE_API outlive_status outlive_kv_value_delete(outlive_kv_value *value);

/* Called once, holding the store's write lock; neither set nor delete: unchanged;
 * non-OK: no change. */
typedef outlive_status (*outlive_kv_modifier)(outlive_kv_value *value, void *context);

/* Atomic read-modify-write across processes: reads key's value and calls
 * modifier exactly once, on the calling thread, inside a transaction no other
 * writer of any process can interleave with; what the modifier set or deleted is
 * committed when it returns OUTLIVE_OK. The modifier must not call the store
 * (OUTLIVE_E_STATE) and should be quick: every writer waits for it.
 * Returns the modifier's status when it is not OUTLIVE_OK (nothing changes; the
 * last error is "the modifier returned STATUS" unless the modifier itself
 * failed a library call on this thread). */
OUTLIVE_API outlive_status outlive_kv_update(outlive_store *store, const char *key,
                                             outlive_kv_modifier modifier, void *context);

/* Called on the store's loop for a key under the observed prefix that any
 * process changed: bytes is the value it has now (NULL when deleted), valid
 * during the call. Several quick changes of a key may come as one call with the
 * latest value. */
typedef void (*outlive_kv_observer)(const char *key, const void *bytes, size_t size, void *context);

/* Observes keys starting with key_prefix ("" observes every key). *token
 * receives an id for outlive_kv_unobserve. Changes committed after this call,
 * by any process this one included, are delivered. */
OUTLIVE_API outlive_status outlive_kv_observe(outlive_store *store, const char *key_prefix,
                                              outlive_kv_observer observer, void *context, uint64_t *token);

/* outlive_kv_observe() whose context is released with release(context) (when
 * release is not NULL) after unobserve or when the store is closed. */
OUTLIVE_API outlive_status outlive_kv_observe_with_release(outlive_store *store, const char *key_prefix,
                                                           outlive_kv_observer observer, void *context,
                                                           void (*release)(void *context), uint64_t *token);

/* Stops an observer: it is not called after this returns (when called on the
 * loop's thread) or after the dispatch under way ends. OUTLIVE_E_NOT_FOUND: no
 * observer with that token. */
OUTLIVE_API outlive_status outlive_kv_unobserve(outlive_store *store, uint64_t token);

/* The first key under key_prefix that sorts (bytewise) after `after` (NULL or
 * "": from the start). *out_key receives a copy to free with outlive_free.
 * OUTLIVE_E_NOT_FOUND: no more keys. Iterates in O(log n) per key; keys
 * changed meanwhile may or may not be seen. */
OUTLIVE_API outlive_status outlive_kv_next_key(outlive_store *store, const char *key_prefix, const char *after,
                                               char **out_key);

/* How many keys start with key_prefix ("" counts all). */
OUTLIVE_API outlive_status outlive_kv_count(outlive_store *store, const char *key_prefix, size_t *out_count);

/* ── handlers ───────────────────────────────────────────────────────────── */

/* ── tasks ──────────────────────────────────────────────────────────────── */

/* ── signals ────────────────────────────────────────────────────────────── */

/* ── messages ───────────────────────────────────────────────────────────── */

/* ── interactions ───────────────────────────────────────────────────────── */

/* ── operations ─────────────────────────────────────────────────────────── */

#ifdef __cplusplus
}
#endif

#endif /* OUTLIVE_H */
