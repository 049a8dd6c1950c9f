/*
 * outlive.h — callbacks that outlive the process.
 *
 * Outlive stores handlers (a named C function plus bound, typed arguments) with
 * messages, signals and tasks in a durable store shared by many processes, and
 * calls them in whichever process can resolve them. This header is the whole
 * reference: every function says what it does, who owns what, which thread may
 * call it and every status it returns.
 *
 * Conventions (they hold for every function unless its comment says otherwise;
 * Tests/api/test_conventions.py checks them on this file):
 *
 *  - Names. Functions are outlive_<noun>_<verb> (outlive_task_retry,
 *    outlive_handler_call); a plural noun acts on a whole collection
 *    (outlive_tasks_set_policy, outlive_messages_count). Types are
 *    outlive_<noun>, macros OUTLIVE_<NOUN>_..., and every enumeration is
 *    `typedef enum outlive_<name> {...} outlive_<name>;` whose values begin with
 *    OUTLIVE_ and the first word of <name> (OUTLIVE_TASK_DEAD), outlive_status
 *    excepted (OUTLIVE_OK, OUTLIVE_E_...). Numbers that are not a choice among
 *    values (priorities, flags, limits) are #define macros. There are no
 *    `_with_...` variants: an optional input is a nullable parameter.
 *  - Status. Every fallible function returns an outlive_status. On failure,
 *    outlive_last_error() tells why, in a message for humans. Statuses keep
 *    their numbers: new ones are appended.
 *  - Output parameters are named `out...`, come last, and are written only on
 *    success; on failure they are left as they were. There are no partial
 *    successes: a failed call changes nothing, in memory or in the store. An
 *    id is written into `char out_..._id[OUTLIVE_ID_SIZE]`; an output the
 *    caller may not want is nullable (the comment says so), never a second
 *    function.
 *  - Constructors (`_new`, `_copy`, `_open`, `_deserialize`) return a status
 *    and write the new handle into their last parameter `out`; it is freed
 *    with the `_free` of its type (outlive_store_close for a store). Every
 *    `_free` accepts NULL.
 *  - Handles are checked: passing a handle of another kind (a store where a
 *    handler is expected) is OUTLIVE_E_INVALID_ARGUMENT, never undefined
 *    behaviour. A freed handle is not a handle: using one is undefined.
 *  - A NULL pointer where none is allowed is OUTLIVE_E_INVALID_ARGUMENT, and so
 *    is a string that is not valid UTF-8. Strings are NUL-terminated UTF-8 and
 *    are copied by the library when it keeps them; the caller keeps ownership
 *    of everything it passes in.
 *  - Memory the library allocates for the caller is freed with outlive_free(),
 *    or with the `_free` function of its type. A `const` handle is not
 *    modified by the call.
 *  - Callbacks run only inside outlive_loop_dispatch(), on the thread that
 *    calls it (the log handler excepted). A callback is registered with its
 *    `void *context` and a `void (*release)(void *context)` (nullable), in that
 *    order, just before the outputs. release(context) is called exactly once,
 *    when the library no longer needs the context — and never when the
 *    registration itself fails: then the caller still owns the context. (A
 *    function that calls its callback only before it returns, like
 *    outlive_kv_update, keeps nothing and takes no release.)
 *  - Public structs begin with `uint32_t version`; set it with the struct's
 *    OUTLIVE_<STRUCT>_VERSION, or start from OUTLIVE_<STRUCT>_INIT, so that a
 *    later version can grow the struct. (The handler descriptor, matched by
 *    its magic number, has its version second.)
 *  - Listing is one model everywhere: outlive_<noun>_list_new(..., after,
 *    limit, out) takes a snapshot of the store; outlive_<noun>_list_count
 *    says how many entries it holds, outlive_<noun>_list_<field>(list, index)
 *    reads one (NULL, 0 or false when index is out of range or list is NULL;
 *    strings belong to the list), outlive_<noun>_list_free frees it. To page,
 *    pass the id (or key) of the last entry of one list as `after` of the next
 *    (NULL: from the first). `limit` is the most entries a list holds; 0 means
 *    no limit, in every list. A list is read by one thread at a time.
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
#define OUTLIVE_VERSION_MINOR 2
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
    OUTLIVE_E_NO_MEMORY,
    OUTLIVE_E_LIMIT              /* a configured limit is reached (a message category is full) */
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

/* Installs (or with NULL removes) the process-wide log handler. The context is
 * released (release, when not NULL) once the handler is replaced or removed
 * and no call of it is under way; on failure, or when handler is NULL, release
 * is not called.
 * OUTLIVE_E_INVALID_ARGUMENT: level is not an outlive_log_level. Any thread. */
OUTLIVE_API outlive_status outlive_log_set_handler(outlive_log_handler handler, outlive_log_level level, void *context,
                                                   void (*release)(void *context));

/* ── values ───────────────────────────────────────────────────────────────── */
/*
 * Handler arguments are named, typed values. The seven types and the C type a
 * handler function receives for each:
 *
 *   OUTLIVE_TYPE_ID        const outlive_object *   bytes + optional type tag
 *   OUTLIVE_TYPE_HANDLER   const outlive_handler *  a nested handler value
 *   OUTLIVE_TYPE_BOOL      bool
 *   OUTLIVE_TYPE_INT       int32_t
 *   OUTLIVE_TYPE_DOUBLE    double
 *   OUTLIVE_TYPE_INTEGER   int64_t
 *   OUTLIVE_TYPE_UINTEGER  uint64_t
 *
 * Argument names are C identifiers of 1 to OUTLIVE_MAX_NAME_SIZE bytes
 * ([A-Za-z_][A-Za-z0-9_]*). Type tags ("xmpp.account") are 1 to
 * OUTLIVE_MAX_NAME_SIZE bytes of letters, digits, '_', '.' and '-'.
 */
typedef enum outlive_type {
    OUTLIVE_TYPE_ID = 1,
    OUTLIVE_TYPE_HANDLER,
    OUTLIVE_TYPE_BOOL,
    OUTLIVE_TYPE_INT,
    OUTLIVE_TYPE_DOUBLE,
    OUTLIVE_TYPE_INTEGER,
    OUTLIVE_TYPE_UINTEGER
} outlive_type;

typedef struct outlive_object  outlive_object;   /* an ID value: bytes + optional type tag (immutable) */
typedef struct outlive_args    outlive_args;     /* an ordered set of named, typed values */
typedef struct outlive_handler outlive_handler;  /* a serializable callback (see handlers) */

/* Bytes of an argument name, parameter name or type tag. */
#define OUTLIVE_MAX_NAME_SIZE 128
/* Bytes of one ID value. */
#define OUTLIVE_MAX_ID_SIZE (16u * 1024u * 1024u)
/* Arguments in one set (bound arguments of a handler included). */
#define OUTLIVE_MAX_ARGUMENTS 1024
/* Handlers nested in handler arguments: a handler without HANDLER arguments
 * has depth 1. */
#define OUTLIVE_MAX_NESTING 16

/* The bytes of an ID; *out_size (nullable) receives their count. The bytes
 * are followed by a NUL that is not counted, so a text ID can be read as a C
 * string. Valid as long as the object: during a handler call for a parameter,
 * or until the outlive_args it came from changes or is freed. NULL (and
 * *out_size 0) when object is NULL; never NULL otherwise, also for 0 bytes.
 * Any thread. */
OUTLIVE_API const void *outlive_object_bytes(const outlive_object *object, size_t *out_size);

/* The ID's type tag, or NULL when it has none (or object is NULL). Same
 * lifetime as outlive_object_bytes(). */
OUTLIVE_API const char *outlive_object_type(const outlive_object *object);

/* The bytes as a NUL-terminated string when they are valid UTF-8 without a NUL
 * byte; NULL otherwise (or when object is NULL). Same lifetime as
 * outlive_object_bytes(). */
OUTLIVE_API const char *outlive_object_string(const outlive_object *object);

/* A new empty argument set into *out, freed with outlive_args_free().
 * OUTLIVE_E_INVALID_ARGUMENT: out is NULL. OUTLIVE_E_NO_MEMORY. An
 * outlive_args may be read from several threads at once, but not changed while
 * another thread uses it. */
OUTLIVE_API outlive_status outlive_args_new(outlive_args **out);

/* A copy of args into *out. OUTLIVE_E_INVALID_ARGUMENT: args or out is NULL.
 * OUTLIVE_E_NO_MEMORY. */
OUTLIVE_API outlive_status outlive_args_copy(const outlive_args *args, outlive_args **out);

/* Frees an argument set. Pointers it handed out (objects, strings, handler
 * views, names) become invalid. NULL is ignored. */
OUTLIVE_API void outlive_args_free(outlive_args *args);

/*
 * Setters: each copies its value into args under name, replacing a value of the
 * same name in place (the order is that of first insertion). Pointers handed
 * out by args before (getters, names) become invalid.
 * Every setter returns OUTLIVE_E_INVALID_ARGUMENT for a NULL args or name, a
 * name that is not an identifier of at most OUTLIVE_MAX_NAME_SIZE bytes, or a
 * new name past OUTLIVE_MAX_ARGUMENTS.
 */

/* An ID of `size` bytes (bytes may be NULL when size is 0), tagged with
 * type_tag (NULL: untagged). Also OUTLIVE_E_INVALID_ARGUMENT: bytes NULL with a
 * size, size above OUTLIVE_MAX_ID_SIZE, a malformed type tag. */
OUTLIVE_API outlive_status outlive_args_set_id(outlive_args *args, const char *name, const char *type_tag,
                                               const void *bytes, size_t size);
/* An untagged ID holding the UTF-8 bytes of utf8 (without its NUL). Also
 * OUTLIVE_E_INVALID_ARGUMENT: utf8 NULL or not UTF-8. */
OUTLIVE_API outlive_status outlive_args_set_string(outlive_args *args, const char *name, const char *utf8);
/* A copy of the handler value (its invalidated state included). Also
 * OUTLIVE_E_INVALID_ARGUMENT: handler NULL, or nesting past OUTLIVE_MAX_NESTING. */
OUTLIVE_API outlive_status outlive_args_set_handler(outlive_args *args, const char *name, const outlive_handler *handler);
OUTLIVE_API outlive_status outlive_args_set_bool(outlive_args *args, const char *name, bool value);
OUTLIVE_API outlive_status outlive_args_set_int(outlive_args *args, const char *name, int32_t value);
OUTLIVE_API outlive_status outlive_args_set_double(outlive_args *args, const char *name, double value);
OUTLIVE_API outlive_status outlive_args_set_integer(outlive_args *args, const char *name, int64_t value);
OUTLIVE_API outlive_status outlive_args_set_uinteger(outlive_args *args, const char *name, uint64_t value);

/* Removes name. OUTLIVE_E_NOT_FOUND: no argument of that name. */
OUTLIVE_API outlive_status outlive_args_remove(outlive_args *args, const char *name);

/*
 * Getters: *out receives the value of name. OUTLIVE_E_NOT_FOUND: no argument
 * of that name; OUTLIVE_E_TYPE_MISMATCH: it has another type (the message says
 * which); OUTLIVE_E_INVALID_ARGUMENT: args, name or out is NULL. *out is
 * written only on success. Pointers received stay valid until args changes or
 * is freed.
 */
OUTLIVE_API outlive_status outlive_args_get_id(const outlive_args *args, const char *name, const outlive_object **out);
/* An ID as a NUL-terminated string; OUTLIVE_E_TYPE_MISMATCH also when its
 * bytes are not UTF-8 or contain a NUL. */
OUTLIVE_API outlive_status outlive_args_get_string(const outlive_args *args, const char *name, const char **out);
/* A view of a HANDLER argument, owned by args: call it or copy it
 * (outlive_handler_copy), never free it. */
OUTLIVE_API outlive_status outlive_args_get_handler(const outlive_args *args, const char *name, const outlive_handler **out);
OUTLIVE_API outlive_status outlive_args_get_bool(const outlive_args *args, const char *name, bool *out);
OUTLIVE_API outlive_status outlive_args_get_int(const outlive_args *args, const char *name, int32_t *out);
OUTLIVE_API outlive_status outlive_args_get_double(const outlive_args *args, const char *name, double *out);
OUTLIVE_API outlive_status outlive_args_get_integer(const outlive_args *args, const char *name, int64_t *out);
OUTLIVE_API outlive_status outlive_args_get_uinteger(const outlive_args *args, const char *name, uint64_t *out);

/* The number of arguments (0 when args is NULL). */
OUTLIVE_API size_t outlive_args_count(const outlive_args *args);

/* Iteration in order, index 0 to count - 1: the name at index (owned by args,
 * valid until it changes or is freed), or NULL when index is out of range or
 * args is NULL. */
OUTLIVE_API const char *outlive_args_name_at(const outlive_args *args, size_t index);

/* The type of the argument at index, or 0 when index is out of range or args
 * is NULL. */
OUTLIVE_API outlive_type outlive_args_type_at(const outlive_args *args, size_t index);

/* ── loop ───────────────────────────────────────────────────────────────── */
/*
 * The loop is where callbacks run. It exposes one file descriptor that becomes
 * readable when work is due (a store changed, a timer fired, a completion came
 * from another thread); the host adds it to its own event loop (poll, epoll,
 * libuv, GLib, asyncio) and calls outlive_loop_dispatch() when it is readable.
 * An idle loop causes no wake-ups. Hosts without an event loop call
 * outlive_loop_run_thread() instead.
 *
 * fork(): a loop belongs to the process that made it. Its descriptors are open
 * file descriptions shared with a child made by fork(), so waiting on them,
 * draining them or changing their registrations in the child would take the
 * parent's wake-ups. In such a child the only call that does anything is
 * outlive_loop_free(), which lets go of the child's copies and touches nothing
 * of the parent's (no thread is joined, no descriptor deregistered); dispatch
 * and run_thread return OUTLIVE_E_STATE, outlive_loop_fd() returns -1. So do
 * the queues on that loop: making one (interactions, operations) and adding,
 * suspending, resuming or finishing return OUTLIVE_E_STATE; their _free only
 * frees the child's copy. The child makes its own loop.
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

/* The descriptor to poll for readability; -1 when loop is NULL or was made
 * before fork() in another process. Owned by the loop: do not read from or
 * close it. */
OUTLIVE_API int outlive_loop_fd(const outlive_loop *loop);

/* Waits up to timeout_ms milliseconds for work (0: do not wait; negative: wait
 * until work is due) and runs every due callback on the calling thread.
 * OUTLIVE_E_INVALID_ARGUMENT: loop is NULL.
 * OUTLIVE_E_STATE: called from inside one of this loop's callbacks, the loop
 *   runs on its own thread (outlive_loop_run_thread), or it was made before
 *   fork() in the parent of this process.
 * OUTLIVE_E_BUSY: another thread is dispatching this loop at the same time.
 * OUTLIVE_E_IO: epoll_wait failed. */
OUTLIVE_API outlive_status outlive_loop_dispatch(outlive_loop *loop, int timeout_ms);

/* Starts a thread owned by the loop that dispatches until outlive_loop_free().
 * From then on callbacks run on that thread and outlive_loop_dispatch() returns
 * OUTLIVE_E_STATE. OUTLIVE_E_STATE: it runs on its own thread already, or it
 * was made before fork() in the parent of this process.
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
 * Do not delete lock files (runs/RUN.lock) of live handles, nor let a /tmp
 * cleaner do it: the other processes then see that run as ended and release
 * what it held (claims, this-run consumers). Its handle goes on reading and
 * writing data, but whatever would bind new state to the run (a claim, a
 * this-run consumer, a presenter) fails with OUTLIVE_E_STATE, and its task
 * runner stops with an error in the log: close the store and open it again.
 *
 * Safety: the directory must belong to this user and must not be writable by
 * group or others (it is created 0700, files 0600); links inside it are never
 * followed.
 *
 * fork(): a handle belongs to the process that opened it, and a child made by
 * fork() is not a second owner. In the child every call on the parent's handle
 * returns OUTLIVE_E_STATE, except outlive_store_close(), which frees the
 * child's memory and releases nothing of the parent's: the run stays the
 * parent's (its row, its lock file and lock), and the parent's database
 * connection, change watch and loop registrations are left alone, so the
 * parent goes on seeing every change and death. The child's copy of the lock
 * descriptor is closed at fork (pthread_atfork), also for a store another
 * thread is opening at that moment, so a dead parent is seen dead even while
 * its children live. A task completion handler (outlive_handler_call on the
 * `completion` a task handler received) works in a child: it is recorded
 * through a connection of the child's own, as from any other process. The
 * child opens its own store for anything else. As with any library after
 * fork() in a multi-threaded process, a child that calls into Outlive (or
 * SQLite) relies on no other thread of the parent having held one of their
 * internal locks at the instant of the fork; a child that only closes, frees
 * and exits, or execs, needs nothing.
 */
typedef struct outlive_store outlive_store;

typedef enum outlive_durability {
    /* Every acknowledged change survives a power loss (SQLite synchronous=FULL).
     * The claims a process takes before it calls a handler (a signal
     * consumer's delivery, a message's presentation lock and response claim,
     * a task run's claim of a batch) are not synced: a power loss that takes
     * one back leaves the work to be done again, as the death of the claiming
     * run does (a task's interrupted attempt then does not count); the record
     * that follows the handler is synced and makes the claim durable with it. */
    OUTLIVE_DURABILITY_FULL = 1,
    /* Acknowledged changes survive a crash of any process, but the last ones may
     * be lost on a power loss or kernel crash (synchronous=NORMAL); several times
     * faster. A durability trade the application makes knowingly. */
    OUTLIVE_DURABILITY_NORMAL = 2
} outlive_durability;

#define OUTLIVE_STORE_OPTIONS_VERSION 2
typedef struct outlive_store_options {
    uint32_t           version;          /* OUTLIVE_STORE_OPTIONS_VERSION (1 is accepted: no liveness_seconds) */
    outlive_durability durability;       /* default OUTLIVE_DURABILITY_FULL */
    int32_t            busy_timeout_ms;  /* how long a write waits for other processes; default 10000 */
    /* PostgreSQL stores: the liveness bound in seconds, 2 to 3600 (see below);
     * 0: the URI's outlive_liveness, else 10. Ignored by directory stores. */
    int32_t            liveness_seconds;
} outlive_store_options;
#define OUTLIVE_STORE_OPTIONS_INIT { OUTLIVE_STORE_OPTIONS_VERSION, OUTLIVE_DURABILITY_FULL, 10000, 0 }

/* Opens (creating it if needed) the store at `location` as a run of
 * `process_name`, delivering its callbacks on `loop`, with `options` (NULL:
 * OUTLIVE_STORE_OPTIONS_INIT). When loop is NULL the store makes a loop of its
 * own (outlive_store_loop). Runs of processes that died are cleaned up here.
 * *out receives the store; close it with outlive_store_close().
 *
 * location: a directory (an SQLite store, for processes of one machine),
 *   created 0700 if missing (its parent must exist). It holds outlive.db and
 *   its write-ahead log outlive.db-wal, which stays between opens at about
 *   4 MiB, filled with zeros when the store is created, so that a commit's
 *   sync writes over blocks already written rather than growing the file
 *   (docs/store.md, "The log is kept and filled ahead"); or a PostgreSQL URI,
 *   postgresql://[user[:password]@]host[:port]/database[?parameters] (also
 *   postgres://), for processes on several hosts sharing one database.
 *   libpq's parameters go to libpq (connect_timeout, default 10 s here;
 *   sslmode; password; ...); Outlive's own are:
 *     outlive_store=NAME   which store of the database (default "main"): 1 to
 *                          40 lower-case letters, digits or '_', starting with
 *                          a letter; its tables live in the schema
 *                          outlive_NAME, so stores of one database never see
 *                          one another;
 *     outlive_liveness=S   the liveness bound in seconds, 2 to 3600 (default
 *                          10; options->liveness_seconds, when not 0, wins).
 *   Any other outlive_ parameter is refused. libpq (Debian: libpq5) is loaded
 *   when the first such store is opened.
 *   Where PostgreSQL differs: a process that dies on a live host is seen dead
 *   at once by the server, and by other handles at their next check (every
 *   half bound, or when woken); a host that vanishes (power, network cut) is
 *   seen dead within the bound, by TCP keepalives and tcp_user_timeout — so a
 *   death is seen within about 1.5 x the bound. A handle whose liveness
 *   connection drops (server restart, network cut) has ended its run: its
 *   later calls fail with OUTLIVE_E_STATE, saying so (outlive_store_check
 *   tells a process that only dispatches its loop); close it and open the
 *   store again. A call that fails with OUTLIVE_E_IO (a lost connection, the
 *   server away) may be retried on the same handle. Nothing acknowledged is
 *   lost across a restart. Key-value pairs (with observers in every process),
 *   signals (consumers delivered in any process), messages (presented and
 *   answered in any process), tasks with their queues and schedules, and
 *   durable interaction queues work on PostgreSQL stores as on directories
 *   (docs/postgresql.md, "What differs from a directory store").
 * process_name: 1 to 255 bytes, without ':', '/' or control characters.
 * Returns:
 *   OUTLIVE_E_INVALID_ARGUMENT  a NULL pointer, an empty path, a bad process
 *                               name, or a path that exists and is no directory;
 *                               an unknown options version or durability, a
 *                               negative busy timeout, a liveness bound out of
 *                               range; a malformed PostgreSQL URI (a fragment,
 *                               a control character, an unknown or bad
 *                               outlive_ parameter)
 *   OUTLIVE_E_PERMISSION        the directory or a file in it is owned by
 *                               another user, is writable by others, is a link,
 *                               or is no regular file (a FIFO: never blocks);
 *                               PostgreSQL: authentication failed (wrong
 *                               password, no pg_hba.conf entry), privileges missing
 *   OUTLIVE_E_IO                cannot be created or written (read-only, disk
 *                               full); PostgreSQL: libpq is not installed, the
 *                               server cannot be reached (within
 *                               connect_timeout), libpq refused the URI (an
 *                               unknown parameter, a bad port)
 *   OUTLIVE_E_CORRUPT           the database is damaged or not an Outlive store,
 *                               or holds schema objects Outlive did not make
 *                               (PostgreSQL: the store's schema holds tables but
 *                               no outlive_schema, or triggers, functions,
 *                               views, rules or policies)
 *   OUTLIVE_E_VERSION           written by a newer, incompatible Outlive
 *   OUTLIVE_E_BUSY              another process held the database past the timeout
 * A parent of directory may be a symbolic link. A failing open removes what it
 * created (PostgreSQL: a new store's schema is made in one transaction). The
 * database is untrusted input: docs/SECURITY.md. Messages never repeat a
 * URI's password.
 * Any thread. */
OUTLIVE_API outlive_status outlive_store_open(const char *location, const char *process_name,
                                              outlive_loop *loop /* nullable */,
                                              const outlive_store_options *options /* nullable */,
                                              outlive_store **out);

/* Ends this run (its this-run signal consumers go, the claims it held are
 * released) and frees the handle. Callbacks registered on it are not called
 * again, also when it is called from one of them: the rest of that dispatch
 * calls none of this handle's callbacks. Call it on the thread that dispatches
 * its loop, or when the loop is not being dispatched. In a child made by
 * fork() it only frees the child's copy (see above). NULL is ignored. */
OUTLIVE_API void outlive_store_close(outlive_store *store);

/* This handle's run id (36 characters), owned by the store, valid until it is
 * closed. NULL when store is NULL. */
OUTLIVE_API const char *outlive_store_run_id(const outlive_store *store);

/* The process name the store was opened with; owned by the store. */
OUTLIVE_API const char *outlive_store_process_name(const outlive_store *store);

/* Whether the handle still acts as a live run, without any I/O: OUTLIVE_OK,
 * or OUTLIVE_E_STATE with the reason in outlive_last_error() when its
 * run ended while it was open (PostgreSQL: its liveness connection to the
 * server was lost — a server restart, a failover, a network cut longer than
 * the liveness bound — so other processes may already have released what it
 * held) or when it was inherited by a forked child. Every other call on such a
 * handle fails the same way; the one thing left to do is outlive_store_close
 * and opening the store again (a new run). The handle learns it during a
 * dispatch of its loop, so a host loop that only waits on outlive_loop_fd
 * calls this after each dispatch to notice, as `outlive worker` does.
 *   OUTLIVE_E_INVALID_ARGUMENT  store is NULL or not a store handle
 * Any thread. */
OUTLIVE_API outlive_status outlive_store_check(const outlive_store *store);

/* The loop the store delivers on: the one passed to outlive_store_open, or the
 * store's own. Owned by the store: do not free it. NULL when store is NULL. */
OUTLIVE_API outlive_loop *outlive_store_loop(outlive_store *store);

/* ── key-value ──────────────────────────────────────────────────────────── */
/*
 * Durable values under string keys, shared by every process of the store.
 * Keys are 1 to OUTLIVE_KV_MAX_KEY_SIZE bytes of UTF-8; values 0 to
 * OUTLIVE_KV_MAX_VALUE_SIZE bytes. Each call is one transaction, durable when it
 * returns OUTLIVE_OK. Sets and deletes that threads make at the same time on one
 * handle share a commit (group commit: one fsync for all), each still durable
 * when it returns and each with its own status: one that fails changes nothing
 * and fails alone. Besides the statuses listed, each returns
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

/* Copies the value of key into a new allocation: *out_bytes receives it (free
 * it with outlive_free; never NULL, even for an empty value) and *out_size its
 * length. OUTLIVE_E_NOT_FOUND: no value under key. */
OUTLIVE_API outlive_status outlive_kv_get(outlive_store *store, const char *key, void **out_bytes, size_t *out_size);

/* Removes key. OUTLIVE_E_NOT_FOUND: there was no value under it. */
OUTLIVE_API outlive_status outlive_kv_delete(outlive_store *store, const char *key);

/* The value under update, valid only during the modifier call. */
typedef struct outlive_kv_value outlive_kv_value;

/* The current bytes (NULL when the key has no value; *out_size 0 then), valid
 * until the modifier returns or the value is set. out_size may be NULL. */
OUTLIVE_API const void *outlive_kv_value_bytes(const outlive_kv_value *value, size_t *out_size);

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

/* Observes keys starting with key_prefix ("" observes every key). *out_token
 * receives an id for outlive_kv_unobserve. Changes committed after this call,
 * by any process this one included, are delivered. The context is released
 * with release(context) (when release is not NULL) after unobserve or when the
 * store is closed; not when this call fails. */
OUTLIVE_API outlive_status outlive_kv_observe(outlive_store *store, const char *key_prefix,
                                              outlive_kv_observer observer, void *context,
                                              void (*release)(void *context), uint64_t *out_token);

/* Stops an observer: it is not called after this returns (when called on the
 * loop's thread) or after the dispatch under way ends. OUTLIVE_E_NOT_FOUND: no
 * observer with that token. */
OUTLIVE_API outlive_status outlive_kv_unobserve(outlive_store *store, uint64_t token);

typedef struct outlive_kv_key_list outlive_kv_key_list;

/* Lists the keys under key_prefix ("": every key) in bytewise order, after the
 * key `after` (NULL: from the first; it need not exist), at most `limit` (0: no
 * limit), as a snapshot (see Listing at the top). To page, pass the last key of
 * one list as `after` of the next: each page costs O(log n + limit). A stored
 * key that is not UTF-8 text without NUL (a damaged store) is skipped.
 * OUTLIVE_E_INVALID_ARGUMENT: out NULL, key_prefix or after too long or not UTF-8. */
OUTLIVE_API outlive_status outlive_kv_key_list_new(outlive_store *store, const char *key_prefix,
                                                   const char *after /* nullable */, size_t limit,
                                                   outlive_kv_key_list **out);
/* How many keys the list holds; 0 for NULL. */
OUTLIVE_API size_t      outlive_kv_key_list_count(const outlive_kv_key_list *list);
/* Key `index`, owned by the list; NULL out of range. */
OUTLIVE_API const char *outlive_kv_key_list_key(const outlive_kv_key_list *list, size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void        outlive_kv_key_list_free(outlive_kv_key_list *list);

/* *out_count receives how many keys start with key_prefix ("" counts all). */
OUTLIVE_API outlive_status outlive_kv_count(outlive_store *store, const char *key_prefix, size_t *out_count);

/* ── handlers ───────────────────────────────────────────────────────────── */
/*
 * A handler is a value: the name of a declared handler, bound arguments, an
 * optional invalidation handler's name and an invalidated flag. It can be
 * serialized, stored, sent to another process and called there. The
 * serialized form names the handler, never a library path or an address; it is
 * resolved by name in the process that calls it.
 *
 * Declaring a handler in C defines the function and exports a descriptor:
 *
 *     OUTLIVE_HANDLER(on_login, OUTLIVE_OPT_ID(account), OUTLIVE_BOOL(success)) {
 *         ... account may be NULL; success is always there ...
 *     }
 *
 *     static void *find_session(const outlive_args *merged) { ... }
 *     OUTLIVE_INSTANCE_HANDLER(on_key, find_session, OUTLIVE_ID(key)) {
 *         ... self (void *) is what find_session returned for the arguments ...
 *     }
 *
 * Parameter macros (the C parameter they declare, the signature they add):
 *     OUTLIVE_ID(n)              const outlive_object *n    "ID n"
 *     OUTLIVE_OPT_ID(n)          const outlive_object *n    "ID? n"      (NULL when absent)
 *     OUTLIVE_ID_OF(tag, n)      const outlive_object *n    "ID<tag> n"  (tag written bare: xmpp.account)
 *     OUTLIVE_OPT_ID_OF(tag, n)  const outlive_object *n    "ID<tag>? n"
 *     OUTLIVE_HANDLER_ARG(n)     const outlive_handler *n   "HANDLER n"
 *     OUTLIVE_OPT_HANDLER_ARG(n) const outlive_handler *n   "HANDLER? n" (NULL when absent)
 *     OUTLIVE_BOOL(n) bool n, OUTLIVE_INT(n) int32_t n, OUTLIVE_DOUBLE(n) double n,
 *     OUTLIVE_INTEGER(n) int64_t n, OUTLIVE_UINTEGER(n) uint64_t n
 * Up to OUTLIVE_MAX_DECLARED_PARAMETERS parameters, or none: OUTLIVE_HANDLER(ping).
 * The macros need only the preprocessor; they compile as C99 and C++ (with
 * -Wall -Wextra -pedantic). The function has external linkage (C linkage in
 * C++); its name is the handler's name, so a C-declared handler name is a C
 * identifier. Names containing '.' ("app.greet") can only be registered at
 * run time (outlive_handler_register); they are never looked up as symbols.
 *
 * The descriptor is the exported constant `outlive_handler__NAME`. An
 * executable that declares handlers must export its symbols: link it with
 * -rdynamic (pkg-config --libs outlive adds it). A shared library exports them
 * as it is (the descriptor has default visibility even under
 * -fvisibility=hidden); load it with outlive_handler_library_load().
 *
 * Resolution of a name, in this order: handlers registered at run time in this
 * process (outlive_handler_register, and the library's built-ins); then the descriptor
 * symbol found with dlsym in the main program (and the libraries it was linked
 * with), then in each library loaded with outlive_handler_library_load(), in load
 * order. A symbol counts only when it carries OUTLIVE_HANDLER_MAGIC, this
 * descriptor version, the very name asked for and a function. Nothing else is
 * ever called: a name that resolves to no descriptor (`system`, `getpid`, any
 * function that is not a declared handler) is OUTLIVE_E_UNRESOLVED.
 *
 * Signature strings (outlive_handler_register; the macros generate them):
 *
 *     signature = ws [ param *( ws "," ws param ) ws ]
 *     param     = type [ "<" tag ">" ] [ "?" ] 1*( SP / TAB ) name
 *     type      = "ID" / "HANDLER" / "BOOL" / "INT" / "DOUBLE" / "INTEGER" / "UINTEGER"
 *     ws        = *( SP / TAB )
 *
 * e.g. "ID<xmpp.account>? account, BOOL success", or "" for no parameters.
 * Types are upper case; "<tag>" follows only ID and restricts it to values with
 * that type tag (an ID parameter without a tag accepts any); "?" (optional:
 * absent → NULL) follows only ID and HANDLER — primitives are always
 * mandatory; names are identifiers, unique; at most 64 parameters, at most
 * 8192 bytes. Anything else is OUTLIVE_E_INVALID_ARGUMENT, and the message
 * gives the byte position and what was expected there.
 *
 * Calling: the bound arguments merged with the call-time ones (call-time wins
 * on equal names) are matched to the declared parameters by name. A mandatory
 * parameter without a value is OUTLIVE_E_MISSING_ARGUMENT, a value of another
 * type (or an ID with another tag) OUTLIVE_E_TYPE_MISMATCH; in both cases
 * nothing is called. Extra arguments are ignored. The function runs on the
 * calling thread, during the call. ID and HANDLER pointers it receives are
 * valid until it returns: copy what it keeps (outlive_handler_copy for a
 * handler, which it may also call). Any thread may call any handler; a
 * handler's function must be safe to run on whichever threads call it.
 *
 * Invalidation: outlive_handler_invalidate() calls the invalidation handler (when there
 * is one) with the merged arguments, then marks the handler invalidated; from
 * then on calling, binding or invalidating it is OUTLIVE_E_INVALIDATED. If the
 * invalidation handler cannot run (unresolved, missing argument, mismatch), the
 * call fails with that status and the handler stays valid. The invalidated
 * state is part of the value: it survives copies and serialization.
 */

/* The magic number every descriptor starts with. */
#define OUTLIVE_HANDLER_MAGIC UINT64_C(0x4F55544C49564548)
/* The layout version of outlive_handler_descriptor. */
#define OUTLIVE_HANDLER_DESCRIPTOR_VERSION 1u
/* The most parameters the declaration macros take (signatures allow 64). */
#define OUTLIVE_MAX_DECLARED_PARAMETERS 16

/* An instance handler's resolver: the instance for these merged arguments
 * (passed to the function as its first parameter, self), or NULL when there is
 * none — then nothing is called and the call returns OUTLIVE_E_NOT_FOUND.
 * merged is valid during the call only. Runs on the calling thread. */
typedef void *(*outlive_instance_resolver)(const outlive_args *merged_arguments);

/* What OUTLIVE_HANDLER exports as `outlive_handler__NAME` (64-bit layout:
 * magic at 0, version at 8, name at 16, signature at 24, function at 32,
 * resolver at 40). Write one by hand only if you cannot use the macros; the
 * symbol must then be a data object of at least sizeof(outlive_handler_descriptor)
 * bytes, or it is not considered. */
typedef struct outlive_handler_descriptor {
    uint64_t    magic;        /* OUTLIVE_HANDLER_MAGIC */
    uint32_t    version;      /* OUTLIVE_HANDLER_DESCRIPTOR_VERSION */
    uint32_t    reserved;     /* 0 */
    const char *name;         /* the handler's name, equal to NAME in the symbol */
    const char *signature;    /* the parameters, in the signature grammar */
    void      (*function)(void);  /* the function, cast; called with the declared parameters */
    outlive_instance_resolver resolver;  /* NULL for a plain handler */
} outlive_handler_descriptor;

#ifdef __cplusplus
#define OUTLIVE__EXTERN_C_BEGIN extern "C" {
#define OUTLIVE__EXTERN_C_END }
#else
#define OUTLIVE__EXTERN_C_BEGIN
#define OUTLIVE__EXTERN_C_END
#endif
#if defined(__GNUC__) || defined(__clang__)
#define OUTLIVE__VISIBLE __attribute__((visibility("default")))
#define OUTLIVE__USED __attribute__((used))
#else
#define OUTLIVE__VISIBLE
#define OUTLIVE__USED
#endif

/* Each parameter macro is a pair: (C parameter, signature text). */
#define OUTLIVE_ID(n)               (const outlive_object *n, "ID " #n)
#define OUTLIVE_OPT_ID(n)           (const outlive_object *n, "ID? " #n)
#define OUTLIVE_ID_OF(tag, n)       (const outlive_object *n, "ID<" #tag "> " #n)
#define OUTLIVE_OPT_ID_OF(tag, n)   (const outlive_object *n, "ID<" #tag ">? " #n)
#define OUTLIVE_HANDLER_ARG(n)      (const outlive_handler *n, "HANDLER " #n)
#define OUTLIVE_OPT_HANDLER_ARG(n)  (const outlive_handler *n, "HANDLER? " #n)
#define OUTLIVE_BOOL(n)             (bool n, "BOOL " #n)
#define OUTLIVE_INT(n)              (int32_t n, "INT " #n)
#define OUTLIVE_DOUBLE(n)           (double n, "DOUBLE " #n)
#define OUTLIVE_INTEGER(n)          (int64_t n, "INTEGER " #n)
#define OUTLIVE_UINTEGER(n)         (uint64_t n, "UINTEGER " #n)

#define OUTLIVE__C(p) OUTLIVE__C_ p
#define OUTLIVE__C_(c, s) c
#define OUTLIVE__S(p) OUTLIVE__S_ p
#define OUTLIVE__S_(c, s) s
#define OUTLIVE__CAT(a, b) OUTLIVE__CAT_(a, b)
#define OUTLIVE__CAT_(a, b) a##b

#define OUTLIVE__COUNT(...) OUTLIVE__COUNT_(__VA_ARGS__, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define OUTLIVE__COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, N, ...) N

#define OUTLIVE__DEFINE(name, resolver, params, signature) \
    OUTLIVE__EXTERN_C_BEGIN \
    void name params; \
    OUTLIVE__VISIBLE extern const outlive_handler_descriptor outlive_handler__##name; \
    OUTLIVE__USED const outlive_handler_descriptor outlive_handler__##name = { \
        OUTLIVE_HANDLER_MAGIC, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0u, #name, signature, \
        (void (*)(void))name, resolver }; \
    OUTLIVE__EXTERN_C_END \
    void name params

#define OUTLIVE_HANDLER(...) OUTLIVE__CAT(OUTLIVE__H, OUTLIVE__COUNT(__VA_ARGS__))(__VA_ARGS__)
#define OUTLIVE_INSTANCE_HANDLER(...) OUTLIVE__CAT(OUTLIVE__I, OUTLIVE__COUNT(__VA_ARGS__))(__VA_ARGS__)
#define OUTLIVE__H1(name) OUTLIVE__DEFINE(name, NULL, (void), "")
#define OUTLIVE__H2(name, p1) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1)), OUTLIVE__S(p1))
#define OUTLIVE__H3(name, p1, p2) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2))
#define OUTLIVE__H4(name, p1, p2, p3) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3))
#define OUTLIVE__H5(name, p1, p2, p3, p4) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4))
#define OUTLIVE__H6(name, p1, p2, p3, p4, p5) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5))
#define OUTLIVE__H7(name, p1, p2, p3, p4, p5, p6) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6))
#define OUTLIVE__H8(name, p1, p2, p3, p4, p5, p6, p7) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7))
#define OUTLIVE__H9(name, p1, p2, p3, p4, p5, p6, p7, p8) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8))
#define OUTLIVE__H10(name, p1, p2, p3, p4, p5, p6, p7, p8, p9) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9))
#define OUTLIVE__H11(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10))
#define OUTLIVE__H12(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11))
#define OUTLIVE__H13(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12))
#define OUTLIVE__H14(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13))
#define OUTLIVE__H15(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14))
#define OUTLIVE__H16(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14), OUTLIVE__C(p15)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14) ", " OUTLIVE__S(p15))
#define OUTLIVE__H17(name, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16) OUTLIVE__DEFINE(name, NULL, (OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14), OUTLIVE__C(p15), OUTLIVE__C(p16)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14) ", " OUTLIVE__S(p15) ", " OUTLIVE__S(p16))
#define OUTLIVE__I2(name, resolver) OUTLIVE__DEFINE(name, resolver, (void *self), "")
#define OUTLIVE__I3(name, resolver, p1) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1)), OUTLIVE__S(p1))
#define OUTLIVE__I4(name, resolver, p1, p2) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2))
#define OUTLIVE__I5(name, resolver, p1, p2, p3) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3))
#define OUTLIVE__I6(name, resolver, p1, p2, p3, p4) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4))
#define OUTLIVE__I7(name, resolver, p1, p2, p3, p4, p5) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5))
#define OUTLIVE__I8(name, resolver, p1, p2, p3, p4, p5, p6) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6))
#define OUTLIVE__I9(name, resolver, p1, p2, p3, p4, p5, p6, p7) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7))
#define OUTLIVE__I10(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8))
#define OUTLIVE__I11(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9))
#define OUTLIVE__I12(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10))
#define OUTLIVE__I13(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11))
#define OUTLIVE__I14(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12))
#define OUTLIVE__I15(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13))
#define OUTLIVE__I16(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14))
#define OUTLIVE__I17(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14), OUTLIVE__C(p15)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14) ", " OUTLIVE__S(p15))
#define OUTLIVE__I18(name, resolver, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16) OUTLIVE__DEFINE(name, resolver, (void *self, OUTLIVE__C(p1), OUTLIVE__C(p2), OUTLIVE__C(p3), OUTLIVE__C(p4), OUTLIVE__C(p5), OUTLIVE__C(p6), OUTLIVE__C(p7), OUTLIVE__C(p8), OUTLIVE__C(p9), OUTLIVE__C(p10), OUTLIVE__C(p11), OUTLIVE__C(p12), OUTLIVE__C(p13), OUTLIVE__C(p14), OUTLIVE__C(p15), OUTLIVE__C(p16)), OUTLIVE__S(p1) ", " OUTLIVE__S(p2) ", " OUTLIVE__S(p3) ", " OUTLIVE__S(p4) ", " OUTLIVE__S(p5) ", " OUTLIVE__S(p6) ", " OUTLIVE__S(p7) ", " OUTLIVE__S(p8) ", " OUTLIVE__S(p9) ", " OUTLIVE__S(p10) ", " OUTLIVE__S(p11) ", " OUTLIVE__S(p12) ", " OUTLIVE__S(p13) ", " OUTLIVE__S(p14) ", " OUTLIVE__S(p15) ", " OUTLIVE__S(p16))

/* Registers `function` under name for this process, with the parameters of
 * `signature` (the grammar above). The function is called with those
 * parameters (as the C types of the values section) and returns void; cast it
 * to void (*)(void) to pass it. Registrations come first in resolution; a
 * second registration of a name replaces the first for calls that start after
 * it. name: 1 to 200 bytes of letters, digits, '_' and '.'.
 * OUTLIVE_E_INVALID_ARGUMENT: NULL, a bad name, a malformed signature (the
 * message gives the position). Any thread. */
OUTLIVE_API outlive_status outlive_handler_register(const char *name, const char *signature, void (*function)(void));

/* Removes a registration made with outlive_handler_register. OUTLIVE_E_NOT_FOUND: the
 * name is not registered. Calls under way finish. Any thread. */
OUTLIVE_API outlive_status outlive_handler_unregister(const char *name);

/* Loads a handler library (dlopen, RTLD_NOW | RTLD_LOCAL): its descriptors
 * become resolvable, after the main program's and those of libraries loaded
 * before. Loading the same library again does nothing. The library stays loaded
 * for the life of the process; its constructors run now, as with any dlopen.
 * The path must name the file (contain a '/', e.g. "./libx.so"): a bare name
 * would make dlopen search LD_LIBRARY_PATH and the system's directories, so
 * code could come from somewhere the caller did not choose.
 * OUTLIVE_E_INVALID_ARGUMENT: NULL or empty path, or no '/' in it. OUTLIVE_E_NOT_FOUND: no such
 * file. OUTLIVE_E_IO: dlopen refused it (the message has dlerror's text).
 * Any thread. */
OUTLIVE_API outlive_status outlive_handler_library_load(const char *library_path);

/* OUTLIVE_OK when name resolves in this process now (see resolution above);
 * OUTLIVE_E_UNRESOLVED when it does not; OUTLIVE_E_INVALID_ARGUMENT for NULL
 * or a malformed name, or a descriptor with a malformed signature. Any thread. */
OUTLIVE_API outlive_status outlive_handler_resolve(const char *name);

/* A new handler value naming `name` into *out, with the name of an
 * invalidation handler (NULL: none; called by outlive_handler_invalidate()
 * with the merged arguments) and a copy of bound (NULL: none) as its bound
 * arguments. The names need not resolve here (they are resolved when called).
 * Free it with outlive_handler_free().
 * OUTLIVE_E_INVALID_ARGUMENT: name or out NULL, a malformed name, more than
 * OUTLIVE_MAX_NESTING nesting. OUTLIVE_E_NO_MEMORY. Any thread. */
OUTLIVE_API outlive_status outlive_handler_new(const char *name, const char *invalidation_name /* nullable */,
                                               const outlive_args *bound /* nullable */, outlive_handler **out);

/* An independent copy of the handler value (invalidated state included) into
 * *out, to free with outlive_handler_free().
 * OUTLIVE_E_INVALID_ARGUMENT: handler or out NULL. OUTLIVE_E_NO_MEMORY. */
OUTLIVE_API outlive_status outlive_handler_copy(const outlive_handler *handler, outlive_handler **out);

/* Frees a handler made by new, copy or deserialize. Never free a handler a
 * function received as a parameter or got from outlive_args_get_handler().
 * NULL is ignored. */
OUTLIVE_API void outlive_handler_free(outlive_handler *handler);

/* Binds copies of the arguments in `more` (later wins on equal names).
 * OUTLIVE_E_INVALIDATED: the handler was invalidated. OUTLIVE_E_INVALID_ARGUMENT:
 * NULL, or past OUTLIVE_MAX_ARGUMENTS / OUTLIVE_MAX_NESTING (nothing bound). */
OUTLIVE_API outlive_status outlive_handler_bind(outlive_handler *handler, const outlive_args *more);

/* Calls the handler on this thread with its bound arguments merged with
 * call_args (NULL: none; call-time wins), and returns when the function has
 * returned. The function may call handlers itself, this one included.
 * OUTLIVE_E_UNRESOLVED      the name resolves to nothing in this process
 * OUTLIVE_E_MISSING_ARGUMENT a mandatory parameter has no value (nothing called)
 * OUTLIVE_E_TYPE_MISMATCH   an argument has another type or tag (nothing called)
 * OUTLIVE_E_NOT_FOUND       an instance handler's resolver returned NULL (nothing called)
 * OUTLIVE_E_INVALIDATED     the handler was invalidated
 * OUTLIVE_E_INVALID_ARGUMENT handler is NULL, or its descriptor's signature is malformed
 * Any thread. A call of a resolved handler with primitive arguments allocates
 * no memory. */
OUTLIVE_API outlive_status outlive_handler_call(const outlive_handler *handler, const outlive_args *call_args);

/* outlive_handler_call() with the call-time arguments given serialized: `size`
 * bytes at `bytes` holding an argument set in the format of docs/FORMAT.md
 * ("Argument sets"). The bytes are decoded and checked whole before anything
 * is called, and nothing of them is kept after the call. One C call in place
 * of building an outlive_args (new, a setter per argument, free): for callers
 * whose every foreign call costs (Python's ctypes, Go's cgo) and for arguments
 * that arrive serialized.
 * Statuses of outlive_handler_call(), and
 * OUTLIVE_E_CORRUPT         the bytes are not an argument set: malformed,
 *                           truncated, trailing bytes, a bad name, past a limit
 *                           (the message gives the byte offset; nothing called)
 * OUTLIVE_E_VERSION         written by a newer format version (nothing called)
 * OUTLIVE_E_INVALID_ARGUMENT handler NULL or of another kind, bytes NULL with a size
 * Any thread. */
OUTLIVE_API outlive_status outlive_handler_call_serialized(const outlive_handler *handler, const void *bytes, size_t size);

/* Invalidates the handler (see Invalidation above): calls its invalidation
 * handler, if it has one, with the merged arguments (call_args may be NULL),
 * then marks it invalidated. On any failure it stays valid.
 * Statuses of outlive_handler_call() for the invalidation handler, and
 * OUTLIVE_E_INVALIDATED when it was invalidated already, OUTLIVE_E_BUSY while
 * another thread is invalidating the same outlive_handler. Any thread. */
OUTLIVE_API outlive_status outlive_handler_invalidate(outlive_handler *handler, const outlive_args *call_args);

/* Whether the handler was invalidated (false when handler is NULL). */
OUTLIVE_API bool outlive_handler_is_invalidated(const outlive_handler *handler);

/* The handler's name, owned by the handler (NULL when handler is NULL). */
OUTLIVE_API const char *outlive_handler_name(const outlive_handler *handler);

/* The invalidation handler's name, owned by the handler, or NULL. */
OUTLIVE_API const char *outlive_handler_invalidation_name(const outlive_handler *handler);

/* A copy of the bound arguments into *out (free with outlive_args_free).
 * OUTLIVE_E_INVALID_ARGUMENT: NULL. OUTLIVE_E_NO_MEMORY. */
OUTLIVE_API outlive_status outlive_handler_bound(const outlive_handler *handler, outlive_args **out);

/* A one-line description for logs, e.g.
 * `on_login(account: ID "dana", success: BOOL true) invalidation: cancel [invalidated]`.
 * Owned by the handler; valid until it is bound, invalidated or freed. NULL when
 * handler is NULL. Not a format to parse: use the getters. */
OUTLIVE_API const char *outlive_handler_description(const outlive_handler *handler);

/* Serializes the handler value (name, bound arguments, invalidation name and
 * state) in the format of docs/FORMAT.md: *out_bytes receives a new allocation
 * (free it with outlive_free), *out_size its length. The bytes hold no pointers or paths
 * and can be decoded by any process and machine.
 * OUTLIVE_E_INVALID_ARGUMENT: NULL, or the result would be larger than
 * OUTLIVE_MAX_SERIALIZED_SIZE. OUTLIVE_E_NO_MEMORY. */
OUTLIVE_API outlive_status outlive_handler_serialize(const outlive_handler *handler, void **out_bytes, size_t *out_size);

/* The largest serialized handler accepted. */
#define OUTLIVE_MAX_SERIALIZED_SIZE (32u * 1024u * 1024u)

/* Decodes `size` bytes made by outlive_handler_serialize() into a new handler
 * (*out; free it with outlive_handler_free). Every byte is validated: lengths,
 * names, types, nesting, trailing bytes.
 * OUTLIVE_E_CORRUPT: malformed, truncated or too large (the message gives the
 * byte offset). OUTLIVE_E_VERSION: written by a newer format version.
 * OUTLIVE_E_INVALID_ARGUMENT: bytes NULL with a size, or out NULL. */
OUTLIVE_API outlive_status outlive_handler_deserialize(const void *bytes, size_t size, outlive_handler **out);

/* ── tasks ──────────────────────────────────────────────────────────────── */
/*
 * The background task queue: durable work (a handler) that runs later, in
 * order, in whichever process can resolve its handler, retried until it
 * succeeds. Seed: Customer.io's background queue, without its limits.
 *
 * - Adding a task is one transaction; when the call returns OUTLIVE_OK the task
 *   is stored (durably with OUTLIVE_DURABILITY_FULL) and survives any crash.
 * - Runs start by themselves (triggers): when a process sees pending_count
 *   tasks pending (default 10; outlive_tasks_set_triggers), `delay` seconds after it sees a
 *   task added (default 30; by any process), when a task waiting for its
 *   backoff comes due, or on outlive_tasks_run_now(). A run happens on the
 *   store's loop, inside outlive_loop_dispatch(), and never holds one call for
 *   long: after about 5 ms of starting tasks (always at least one) the call
 *   returns and the run goes on in the next dispatch, so a long queue, or
 *   tasks that keep adding tasks, never freeze the host's event loop.
 * - One runner at a time across all processes of the store. A process that
 *   wants to run while another runs starts as soon as that run ends. A runner
 *   that dies (kill -9 included) releases its claim at once, and the task it
 *   was running becomes pending again (at-least-once: use task_id as an
 *   idempotency key). A run ends tasks in batches (one transaction for up to
 *   32 tasks that completed, outlive_tasks_set_completion_batch): a crash
 *   reruns at most the batch in flight — every task of it whose handler was
 *   called, whether or not it returned — never a task whose end committed.
 * - Tasks belong to queues (see outlive_queue_declare and outlive_queue_serve
 *   below; without one, to the ordered queue "default", described here). A
 *   run takes tasks in priority order (higher first), ties in the order they
 *   were added, one at a time (see outlive_tasks_set_concurrency), and also
 *   takes tasks added while it runs.
 * - A task due later (due_at, delay_seconds) waits, like a task in backoff,
 *   and starts at its time, not before. Nothing polls: each handle's timer is
 *   the earliest waiting task of the queues it serves, whichever process
 *   added it; a process adding an earlier one wakes the others.
 *   It calls each task's handler on the loop thread with the call-time
 *   arguments `task_id` (ID, the task's id as UTF-8 text), `attempt` (INTEGER,
 *   1 for the first) and `completion` (HANDLER); a handler takes those it
 *   declares. A handler that declares `completion` ends its attempt by calling
 *   it, exactly once, from any thread or any process (one that does not have
 *   the store open opens it briefly; a completion never creates a store),
 *   with `success` (BOOL) and optionally `error` (ID, a UTF-8 message):
 *   outlive_handler_call(completion, args). The first completion of an
 *   attempt, from whichever process, is its outcome; any later one returns
 *   OUTLIVE_E_STATE and changes nothing, as does one whose store is gone.
 *   A completion called during the handler's own call, on its thread, and
 *   carrying no result ends the attempt as a return does: with its batch,
 *   in the transaction that ends the batch, not in one of its own (a crash
 *   before that reruns it, as it reruns a handler that returned; a second
 *   completion from this process returns OUTLIVE_E_STATE, one from another
 *   process before the batch ends is not refused but ignored); any other
 *   is written on the task's row when it is called.
 *   A handler that does not declare it succeeds when it returns. A task
 *   added with a result signal (outlive_task_enqueue) also passes
 *   `result_signal` (ID) to a handler that declares it.
 * - Success deletes the task. Failure keeps it, waiting for an exponential
 *   backoff with jitter (outlive_task_policy), after which it runs again by
 *   itself. No completion within the policy's timeout (default 60 s) is a
 *   failed attempt; a completion after that is ignored (outlive_handler_call returns
 *   OUTLIVE_E_STATE). After max_attempts (default 20), or past max_age
 *   (default 3 days, counted from creation or the last retry; group starts are
 *   exempt), the task is dead: kept and listed (outlive_task_list_new), run again
 *   only after outlive_task_retry(), never deleted by the library. A call that
 *   can never succeed (the stored arguments miss one the handler needs or have
 *   the wrong type, or the stored handler does not decode or was invalidated)
 *   makes the task dead at its first attempt, its last error saying why.
 * - Groups: a task may start a group (group_start, an id the application
 *   chooses, e.g. "profile:A") and be a member of groups (group_members). A
 *   member never runs while any task that starts one of its groups is stored
 *   (waiting for its backoff, not yet run, or dead), so "track event for A"
 *   never runs before "identify A" succeeded; the rest of the queue goes on.
 * - A task whose handler does not resolve in this process is left for a
 *   process that can resolve it: not an attempt, not a failure, and it does
 *   not hold back the tasks behind it. Each run logs a warning once per such
 *   handler name, and the first such task keeps the reason as its last error
 *   until it runs, so that a misspelled name does not wait unnoticed.
 * - Each step of a run is an indexed lookup: it costs the same with 10 or
 *   1,000,000 tasks stored, and memory does not grow with the queue.
 *
 * Statuses every function below may also return: OUTLIVE_E_INVALID_ARGUMENT
 * for a NULL store or required pointer; OUTLIVE_E_STATE for a closed handle or
 * one used in a forked child; OUTLIVE_E_BUSY when other processes held the
 * database past the busy timeout; OUTLIVE_E_IO / OUTLIVE_E_CORRUPT when the
 * database fails. A failing call changes nothing. All are thread-safe.
 */

/* Bytes of a group id: 1 to OUTLIVE_TASK_MAX_GROUP_ID_SIZE of UTF-8 without NUL. */
#define OUTLIVE_TASK_MAX_GROUP_ID_SIZE 1024
/* Groups a task can be a member of. */
#define OUTLIVE_TASK_MAX_GROUP_MEMBERS 1024
/* Tasks in one outlive_tasks_add_batch call. */
#define OUTLIVE_TASK_MAX_BATCH 1000000

/* Adds a task that calls `work` (copied: the caller keeps and frees its
 * handler). group_start: NULL, or the group this task starts.
 * group_members: group_member_count group ids this task is a member of (NULL
 * when the count is 0). out_id (nullable): receives the task's id.
 * OUTLIVE_E_INVALID_ARGUMENT: NULL store or work, NULL group_members with a
 *   count, a group id that is empty, too long, not UTF-8, or more than
 *   OUTLIVE_TASK_MAX_GROUP_MEMBERS of them.
 * OUTLIVE_E_INVALIDATED: work was invalidated.
 * OUTLIVE_E_INVALID_ARGUMENT also: work is one of the library's own handlers
 *   (outlive.task_completion, outlive.durable_interaction.finish), which
 *   stored work can never name; or it serializes to more than the size limit. */
OUTLIVE_API outlive_status outlive_task_add(outlive_store *store, const outlive_handler *work,
                                            const char *group_start,
                                            const char *const *group_members, size_t group_member_count,
                                            char out_id[OUTLIVE_ID_SIZE] /* nullable */);

/* One task of a batch: the arguments of outlive_task_add. */
#define OUTLIVE_TASK_SPEC_VERSION 1
typedef struct outlive_task_spec {
    uint32_t version;                     /* OUTLIVE_TASK_SPEC_VERSION */
    const outlive_handler *work;
    const char *group_start;              /* nullable */
    const char *const *group_members;     /* nullable when group_member_count is 0 */
    size_t group_member_count;
} outlive_task_spec;
#define OUTLIVE_TASK_SPEC_INIT { OUTLIVE_TASK_SPEC_VERSION, NULL, NULL, NULL, 0 }

/* Adds `count` tasks (1 to OUTLIVE_TASK_MAX_BATCH) in one transaction, in
 * order: all are stored or none. out_ids (nullable): count * OUTLIVE_ID_SIZE
 * bytes receiving the ids, each NUL-terminated, in the order of `tasks`.
 * Statuses as outlive_task_add, and OUTLIVE_E_INVALID_ARGUMENT for a spec
 * whose version is not OUTLIVE_TASK_SPEC_VERSION; the message names the index
 * of the task at fault. */
OUTLIVE_API outlive_status outlive_tasks_add_batch(outlive_store *store, const outlive_task_spec *tasks,
                                                   size_t count, char *out_ids /* nullable */);

/* Queues. A task belongs to one queue, named by the application; the queue
 * "default" always exists and is ordered. A queue is declared once, in the
 * store (every process sees it), with its kind:
 *   OUTLIVE_QUEUE_ORDERED   one runner at a time across all processes, tasks
 *                           started in order (priority, then order of
 *                           addition), groups — the queue described above.
 *   OUTLIVE_QUEUE_PARALLEL  every process that serves it runs up to its own
 *                           limit of tasks at once, claiming them one by one
 *                           in priority order (then order of addition), as
 *                           they come due; a group start still holds its
 *                           members back (members of one group may run at
 *                           the same time). A runner's death returns its
 *                           tasks to the queue at once, as in ordered queues. */
typedef enum outlive_queue_kind {
    OUTLIVE_QUEUE_ORDERED = 1,
    OUTLIVE_QUEUE_PARALLEL
} outlive_queue_kind;

/* Bytes of a queue name: 1 to OUTLIVE_QUEUE_MAX_NAME_SIZE of [A-Za-z0-9_.:-]. */
#define OUTLIVE_QUEUE_MAX_NAME_SIZE 128
/* Bytes of a unique key: 1 to OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE of UTF-8 without NUL. */
#define OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE 1024

/* How a signal's consumers receive versions (see the signals section). */
typedef enum outlive_delivery {
    OUTLIVE_DELIVERY_ONCE = 1,           /* one version, then removed */
    OUTLIVE_DELIVERY_UNTIL_TERMINATED    /* every version until a terminating post */
} outlive_delivery;

typedef enum outlive_lifetime {
    OUTLIVE_LIFETIME_THIS_RUN = 1,      /* this store handle only; gone when it ends */
    OUTLIVE_LIFETIME_PROCESS,           /* any run of this process name, now or later */
    OUTLIVE_LIFETIME_ANY_PROCESS        /* one of the processes that resolve the handler */
} outlive_lifetime;

/* How a task is added by outlive_task_enqueue: every field is optional (its
 * zero value is the default).
 *
 * Unique keys. A key is held by at most one task of the queue that is pending
 * (due, or waiting for its due time or backoff) or running and not cancelled.
 * Adding a task whose key is held adds nothing: out_id receives the holder's
 * id and *out_existing is true — atomically, whatever number of processes add
 * at once (a unique index decides, inside the add's transaction). A dead task
 * and a cancelled one hold no key (a task with the key can be added again); a
 * dead task whose key was taken meanwhile cannot be retried (OUTLIVE_E_STATE).
 *
 * Results and progress. With result_signal, the task's final outcome is
 * posted to that signal, terminating, in the transaction that ends the task:
 *   success        payload: the extra arguments the completion was called
 *                  with beyond success and error (none for a handler that
 *                  succeeds when it returns), plus task_id (ID), outcome
 *                  (ID, "success"), success (BOOL, true), cancelled (BOOL,
 *                  false);
 *   death          task_id, outcome "dead", success false, cancelled false,
 *                  error (ID, the last error);
 *   cancellation   task_id, outcome "cancelled", success false, cancelled
 *                  true (also when a pending task is deleted with
 *                  outlive_task_delete).
 * BOOL parameters are mandatory, so a consumer that also receives progress
 * versions declares `outcome` (an optional ID) rather than success.
 * A failed attempt that will be retried posts nothing. A handler that declares
 * `result_signal` (ID) receives the id at call time and may post progress
 * there (outlive_signal_post, terminates_consumers false) before it completes:
 * consumers see versions in order, the final one last. A completion's extra
 * arguments may not be named task_id, outcome, success, cancelled, error,
 * signal_id, version or terminated (the completion returns OUTLIVE_E_INVALID_ARGUMENT).
 *
 * A post reaches the consumers the signal has when it is posted (a post with
 * no consumer stores nothing): register the consumer with the add —
 * result_consumer, below — and it exists exactly when the task was added, in
 * the same commit, and the signal's record holds the final version until it
 * is delivered: a consumer with lifetime PROCESS or ANY_PROCESS receives it
 * even when the task finished before any process that can deliver it ran
 * (a process started later delivers it). A consumer registered with
 * outlive_signal_consume after the final post receives nothing. With a
 * unique key held already, result_consumer is registered on the holder's
 * result signal (if it has one), so the caller waits for the holder's result. */
#define OUTLIVE_TASK_OPTIONS_VERSION 1
typedef struct outlive_task_options {
    uint32_t version;                     /* OUTLIVE_TASK_OPTIONS_VERSION */
    const char *queue;                    /* NULL: "default"; a declared queue */
    int32_t priority;                     /* higher starts first; ties in order of addition; default 0 */
    double due_at;                        /* seconds since the epoch; 0: due now */
    double delay_seconds;                 /* due this long after the call; 0: due now (not with due_at) */
    const char *unique_key;               /* NULL, or: at most one pending or running task of the queue has it */
    const char *result_signal;            /* NULL, or a signal id the result (and progress) is posted to */
    const char *group_start;              /* NULL, or the group this task starts */
    const char *const *group_members;     /* nullable when group_member_count is 0 */
    size_t group_member_count;
    const outlive_handler *result_consumer; /* NULL, or a consumer of result_signal registered in the
                                               add's transaction (copied), as outlive_signal_consume would */
    outlive_delivery result_delivery;     /* of result_consumer; 0: OUTLIVE_DELIVERY_UNTIL_TERMINATED */
    outlive_lifetime result_lifetime;     /* of result_consumer; 0: OUTLIVE_LIFETIME_PROCESS */
    const char *result_scope;             /* NULL, or result_consumer's scope */
} outlive_task_options;
#define OUTLIVE_TASK_OPTIONS_INIT { OUTLIVE_TASK_OPTIONS_VERSION, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, NULL }

/* Adds a task that calls `work` (copied), as `options` (NULL: all defaults)
 * say; one transaction. out_id (nullable) receives the task's id;
 * *out_existing (nullable) is set true when options->unique_key was held by a
 * pending or running task of the queue: nothing was added and out_id
 * receives that task's id.
 * Nothing is stored when the call fails: not the task, not its consumer.
 * OUTLIVE_E_INVALID_ARGUMENT: as outlive_task_add; options->version unknown;
 *   a queue name that is malformed; due_at or delay_seconds negative, NaN or
 *   infinite, or both set; a unique key empty, longer than
 *   OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE or not UTF-8; result_signal not a signal
 *   id; result_consumer without result_signal, not a handler, one of the
 *   library's own, or serializing to more than 32 MiB; result_delivery or
 *   result_lifetime neither 0 nor one of the enums; result_scope empty, too
 *   long or not UTF-8.
 * OUTLIVE_E_NOT_FOUND: options->queue was never declared.
 * OUTLIVE_E_INVALIDATED: work or result_consumer was invalidated. */
OUTLIVE_API outlive_status outlive_task_enqueue(outlive_store *store, const outlive_handler *work,
                                                const outlive_task_options *options /* nullable */,
                                                char out_id[OUTLIVE_ID_SIZE] /* nullable */,
                                                bool *out_existing /* nullable */);

/* outlive_task_enqueue() with the handler given serialized: `size` bytes at
 * `work` holding one handler in the format of docs/FORMAT.md (what
 * outlive_handler_serialize writes). The bytes are decoded and checked whole
 * before anything is stored; the caller keeps them. One C call in place of
 * outlive_handler_deserialize, outlive_task_enqueue and outlive_handler_free:
 * for callers whose every foreign call costs (Python's ctypes, Go's cgo) and
 * for handlers that arrive serialized.
 * Statuses of outlive_task_enqueue(), and
 * OUTLIVE_E_CORRUPT         the bytes are not one handler: malformed,
 *                           truncated, trailing bytes, a bad name, past a limit
 *                           (the message gives the byte offset; nothing stored)
 * OUTLIVE_E_VERSION         written by a newer format version (nothing stored)
 * OUTLIVE_E_INVALID_ARGUMENT work NULL with a size, or the handler one of the
 *                           library's own. */
OUTLIVE_API outlive_status outlive_task_enqueue_serialized(outlive_store *store, const void *work, size_t size,
                                                           const outlive_task_options *options /* nullable */,
                                                           char out_id[OUTLIVE_ID_SIZE] /* nullable */,
                                                           bool *out_existing /* nullable */);

/* Declares the queue `name` of `kind` in the store, for every process; one
 * transaction. Declaring it again with the same kind does nothing and returns
 * OUTLIVE_OK. A queue is never removed (its tasks may outlive any process).
 * OUTLIVE_E_INVALID_ARGUMENT: name NULL, empty, longer than
 *   OUTLIVE_QUEUE_MAX_NAME_SIZE or with a byte outside [A-Za-z0-9_.:-]; kind
 *   not an outlive_queue_kind.
 * OUTLIVE_E_STATE: the queue exists with the other kind ("default" is ordered). */
OUTLIVE_API outlive_status outlive_queue_declare(outlive_store *store, const char *name, outlive_queue_kind kind);

/* Most tasks of one queue a handle runs at once. */
#define OUTLIVE_QUEUE_MAX_LIMIT 1024

/* Says which queues this handle runs, and how many of a queue's tasks at once:
 * `limit` 1 to OUTLIVE_QUEUE_MAX_LIMIT serves the queue, 0 stops serving it
 * (attempts under way end as usual; an ordered queue's claim is released once
 * they have). Per handle, not stored: each process says what it serves.
 * - A handle serves the default queue from its opening, with limit 1
 *   (outlive_tasks_set_concurrency changes it) and under its triggers
 *   (outlive_tasks_set_triggers): today's behaviour. Naming "default" here
 *   makes it a queue served at once like any other.
 * - A served queue runs its tasks as soon as they are due: no trigger delay.
 *   An ordered queue is run by one handle at a time across all processes,
 *   holding the queue's claim while it has tasks to run (`limit` of them in
 *   flight: they start in order but may end in any order); a parallel queue
 *   by every handle that serves it, each claiming tasks one at a time up to
 *   its own limit.
 * - A handle that serves no queue never runs a task (it can add them):
 *   outlive_queue_serve(store, "default", 0) makes a pure producer.
 * Runs happen on the store's loop, inside outlive_loop_dispatch().
 * OUTLIVE_E_INVALID_ARGUMENT: a malformed name (as outlive_queue_declare);
 *   limit above OUTLIVE_QUEUE_MAX_LIMIT.
 * OUTLIVE_E_NOT_FOUND: no queue of that name was declared. */
OUTLIVE_API outlive_status outlive_queue_serve(outlive_store *store, const char *name, size_t limit);

typedef struct outlive_queue_list outlive_queue_list;

/* Lists the declared queues in name order as a snapshot (see Listing at the
 * top): those whose name sorts after `after` (NULL: from the first; it need
 * not exist), at most `limit` (0: no limit). The counts are read from
 * counters the store keeps: no call counts tasks.
 * OUTLIVE_E_INVALID_ARGUMENT: out NULL; after a malformed queue name. */
OUTLIVE_API outlive_status outlive_queue_list_new(outlive_store *store, const char *after /* nullable */, size_t limit,
                                                  outlive_queue_list **out);
/* How many queues the list holds; 0 for NULL. */
OUTLIVE_API size_t             outlive_queue_list_count(const outlive_queue_list *list);
/* Accessors of queue `index` (NULL, 0 out of range; strings owned by the list). */
OUTLIVE_API const char        *outlive_queue_list_name(const outlive_queue_list *list, size_t index);
OUTLIVE_API outlive_queue_kind outlive_queue_list_kind(const outlive_queue_list *list, size_t index);
/* Tasks not yet done and not running: due now, due later, or waiting for a retry. */
OUTLIVE_API size_t             outlive_queue_list_pending(const outlive_queue_list *list, size_t index);
/* Tasks with an attempt under way. */
OUTLIVE_API size_t             outlive_queue_list_running(const outlive_queue_list *list, size_t index);
OUTLIVE_API size_t             outlive_queue_list_dead(const outlive_queue_list *list, size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void               outlive_queue_list_free(outlive_queue_list *list);

/* Asks for a run of every queue this handle serves now (none when it serves
 * none). It starts on the store's loop at its next dispatch, or, for an
 * ordered queue another process runs, as soon as that run ends. */
OUTLIVE_API outlive_status outlive_tasks_run_now(outlive_store *store);

/* Sets this handle's triggers, which start runs of the default queue while
 * the handle serves it from its opening (see outlive_queue_serve): a run
 * starts when it sees pending_count tasks of the default queue not yet done
 * (0: never by count; default 10) and delay_seconds after it sees a task
 * added by any process (default 30; 0: at the next dispatch).
 * OUTLIVE_E_INVALID_ARGUMENT: delay_seconds negative, NaN, infinite or above 1e9. */
OUTLIVE_API outlive_status outlive_tasks_set_triggers(outlive_store *store, size_t pending_count,
                                                      double delay_seconds);

/* *out_count receives the number of tasks not yet done (waiting, due or
 * running), dead tasks excluded. Reads a counter: constant time. */
OUTLIVE_API outlive_status outlive_tasks_count(outlive_store *store, size_t *out_count);

/* *out_count receives the number of dead tasks. Constant time. */
OUTLIVE_API outlive_status outlive_tasks_count_dead(outlive_store *store, size_t *out_count);

#define OUTLIVE_TASK_POLICY_VERSION 1
typedef struct outlive_task_policy {
    uint32_t version;          /* OUTLIVE_TASK_POLICY_VERSION */
    double   initial_backoff;  /* seconds before the first retry (default 1); doubles per failure,
                                  and each wait is scaled by a random factor in [0.5, 1] (jitter) */
    double   max_backoff;      /* seconds, >= initial_backoff (default 3600) */
    uint32_t max_attempts;     /* then the task is dead (default 20), >= 1 */
    double   timeout;          /* seconds a handler has to complete (default 60), > 0 */
    double   max_age;          /* seconds, group starts exempt (default 3 days), > 0 */
} outlive_task_policy;
#define OUTLIVE_TASK_POLICY_INIT { OUTLIVE_TASK_POLICY_VERSION, 1.0, 3600.0, 20, 60.0, 259200.0 }

/* Sets the policy this handle's runs apply (copied). Each process applies its
 * own to the attempts it runs.
 * OUTLIVE_E_INVALID_ARGUMENT: policy NULL, an unknown version, a value out of
 *   the ranges above (NaN and infinities included). */
OUTLIVE_API outlive_status outlive_tasks_set_policy(outlive_store *store, const outlive_task_policy *policy);

/* How many attempts this handle's runs of the default queue keep in flight
 * at once: 1 to 1024, default 1 (strictly one after another); the default
 * queue's `limit` of outlive_queue_serve, its triggers kept. With more, tasks still start in
 * order and a member still waits for its group start, but handlers that
 * complete later overlap. OUTLIVE_E_INVALID_ARGUMENT: out of range. */
OUTLIVE_API outlive_status outlive_tasks_set_concurrency(outlive_store *store, size_t max_in_flight);

/* The default and the largest batch of outlive_tasks_set_completion_batch. */
#define OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH 32
#define OUTLIVE_TASK_MAX_COMPLETION_BATCH 1024

/* At most how many tasks this handle's runs (of every queue it serves) claim
 * in one transaction: 1 to OUTLIVE_TASK_MAX_COMPLETION_BATCH, default
 * OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH. A run claims a batch of tasks in
 * order, calls their handlers one after another, then ends them all (deletes
 * the ones that succeeded) and claims the next batch in one transaction: one
 * commit for the batch instead of one per task. A batch holds only as many
 * tasks as the handlers got through within one dispatch's budget (about
 * 5 ms), so a run of slow handlers commits every task on its own whatever this
 * says, and only as many as the queue's limit lets run at once (a handler
 * that declares `completion` holds a slot until it is called, unless its
 * last call in the run sent it during the call); it ends at a task that starts a group (its members wait for its
 * success, committed), and a retry runs in a batch of its own.
 * At-least-once: a crash (kill -9 included) reruns at most the batch in
 * flight, the handlers already called in it included; 1: at most the one
 * task in flight. OUTLIVE_E_INVALID_ARGUMENT: out of range. */
OUTLIVE_API outlive_status outlive_tasks_set_completion_batch(outlive_store *store, size_t max_tasks);

typedef enum outlive_task_state {
    OUTLIVE_TASK_PENDING = 1,   /* due, or waiting for its backoff (next_attempt) */
    OUTLIVE_TASK_RUNNING,       /* an attempt is under way in a live runner */
    OUTLIVE_TASK_DEAD           /* given up: kept until retried or deleted */
} outlive_task_state;

typedef struct outlive_task_list outlive_task_list;

/* Lists tasks in queue order as a snapshot (see Listing at the top): those
 * after the task `after` (NULL: from the first), at most `limit` (0: no limit),
 * to page through a queue of any length. Each 100,000 tasks are read in one
 * transaction: a longer list is read in several.
 * OUTLIVE_E_INVALID_ARGUMENT: out NULL, after not a task id.
 * OUTLIVE_E_NOT_FOUND: no task `after` (it may have completed: restart from NULL). */
OUTLIVE_API outlive_status outlive_task_list_new(outlive_store *store, const char *after /* nullable */, size_t limit,
                                                 outlive_task_list **out);
/* How many tasks the list holds; 0 for NULL. */
OUTLIVE_API size_t             outlive_task_list_count(const outlive_task_list *list);
/* Accessors of task `index` (NULL, 0 out of range; strings owned by the list). */
OUTLIVE_API const char        *outlive_task_list_id(const outlive_task_list *list, size_t index);
OUTLIVE_API const char        *outlive_task_list_handler_name(const outlive_task_list *list, size_t index);
OUTLIVE_API outlive_task_state outlive_task_list_state(const outlive_task_list *list, size_t index);
/* Attempts made (started) so far. */
OUTLIVE_API uint32_t           outlive_task_list_attempts(const outlive_task_list *list, size_t index);
/* NULL when no attempt failed. */
OUTLIVE_API const char        *outlive_task_list_last_error(const outlive_task_list *list, size_t index);
/* Seconds since the epoch when a pending task waits for its backoff; 0 when
 * due now, running or dead. */
OUTLIVE_API double             outlive_task_list_next_attempt(const outlive_task_list *list, size_t index);
/* Seconds since the epoch. */
OUTLIVE_API double             outlive_task_list_created(const outlive_task_list *list, size_t index);
/* The group it starts; NULL when none. */
OUTLIVE_API const char        *outlive_task_list_group_start(const outlive_task_list *list, size_t index);
/* The groups it is a member of: member_index below the count. */
OUTLIVE_API size_t             outlive_task_list_group_member_count(const outlive_task_list *list, size_t index);
OUTLIVE_API const char        *outlive_task_list_group_member(const outlive_task_list *list, size_t index,
                                                              size_t member_index);
/* The queue's name. */
OUTLIVE_API const char        *outlive_task_list_queue(const outlive_task_list *list, size_t index);
OUTLIVE_API int32_t            outlive_task_list_priority(const outlive_task_list *list, size_t index);
/* The unique key it was added with; NULL when none. A dead or cancelled task
 * keeps it listed but does not hold it. */
OUTLIVE_API const char        *outlive_task_list_unique_key(const outlive_task_list *list, size_t index);
/* True for a running task cancelled during its attempt (a pending task that is
 * cancelled is removed, so it is not listed). */
OUTLIVE_API bool               outlive_task_list_cancelled(const outlive_task_list *list, size_t index);
/* The signal its result is posted to; NULL when none. */
OUTLIVE_API const char        *outlive_task_list_result_signal(const outlive_task_list *list, size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void               outlive_task_list_free(outlive_task_list *list);

/* Makes a dead task, or one waiting for its backoff, pending and due now, with
 * its attempts reset to 0 and its max age counted from now.
 * OUTLIVE_E_INVALID_ARGUMENT: task_id is not a task id.
 * OUTLIVE_E_NOT_FOUND: no such task. OUTLIVE_E_STATE: it is running or due already. */
OUTLIVE_API outlive_status outlive_task_retry(outlive_store *store, const char *task_id);

/* Deletes a task that is not running (dead, waiting or due); a pending one's
 * cancellation is posted to its result signal, as outlive_task_cancel does.
 * OUTLIVE_E_INVALID_ARGUMENT: task_id is not a task id.
 * OUTLIVE_E_NOT_FOUND: no such task. OUTLIVE_E_STATE: it is running. */
OUTLIVE_API outlive_status outlive_task_delete(outlive_store *store, const char *task_id);

/* Cancels a task, from any process.
 * - Pending (due, or waiting for its due time or backoff): it is removed at
 *   once and never runs; *out_running (nullable) receives false.
 * - Running: it is marked cancelled and *out_running receives true. Its
 *   handler is told by outlive_task_is_cancelled (ask it between steps of
 *   long work) and should stop and complete; the attempt ends as any attempt
 *   does (its completion, its return for a handler without completion, its
 *   timeout, its runner's end), and that end is the task's: whatever the
 *   completion said, the task is removed as cancelled (the completion itself
 *   returns OUTLIVE_OK). outlive_task_list_cancelled shows it meanwhile.
 * Either way the cancellation is posted to the task's result signal and the
 * task no longer holds its unique key.
 * OUTLIVE_E_INVALID_ARGUMENT: task_id NULL or not a task id.
 * OUTLIVE_E_NOT_FOUND: no such task — never added, or gone: it succeeded, was
 *   cancelled while pending (a second cancel of a pending task), was deleted.
 * OUTLIVE_E_STATE: it is dead (it runs no more; retry or delete it), or it is
 *   running and was cancelled already. */
OUTLIVE_API outlive_status outlive_task_cancel(outlive_store *store, const char *task_id, bool *out_running /* nullable */);

/* *out_cancelled receives whether task_id was cancelled while running: what a
 * handler asks during its attempt (any thread, any process with the store
 * open; one read).
 * OUTLIVE_E_INVALID_ARGUMENT: task_id NULL or not a task id, out_cancelled NULL.
 * OUTLIVE_E_NOT_FOUND: no such task any more (it ended, or was cancelled while
 *   pending): a handler should stop as if cancelled. */
OUTLIVE_API outlive_status outlive_task_is_cancelled(outlive_store *store, const char *task_id, bool *out_cancelled);
/* ── schedules (periodic tasks) ─────────────────────────────────────────── */
/*
 * A schedule is named work that adds a task once per period: every N seconds,
 * or at the minutes a cron expression names. Schedules are stored in the store
 * (every process sees them) and survive restarts.
 *
 * - Who fires. Every open store handle fires the schedules that come due, on
 *   its loop, inside outlive_loop_dispatch(); firing only adds a task to the
 *   schedule's queue, which the processes serving that queue run. A store with
 *   schedules therefore needs at least one process that dispatches its loop
 *   (any worker does); a handle that never dispatches never fires.
 * - Once per period. A firing is one transaction that reads the schedule's
 *   next-fire time, adds the task and advances the time: whichever processes
 *   are alive, and however many race, each period adds one task.
 * - Missed periods. Periods that passed while no process fired (none was
 *   running, or all were late) fire once, not once each: one task, and the
 *   next period is the first one after that firing. No burst after a pause.
 * - The task's work is the schedule's handler with `scheduled_at` (DOUBLE,
 *   seconds since the epoch: the period the task stands for — after missed
 *   periods, the first of them) bound to it; a handler that declares
 *   `scheduled_at` receives it, any other ignores it (a bound argument of that
 *   name is replaced). Its queue and priority are the schedule's.
 * - The timer of each handle is the earliest next-fire time; a schedule set or
 *   removed by any process moves it through the change feed. Between firings a
 *   handle does no work and no wake-up.
 * - Intervals count whole periods from the time the schedule was set: the
 *   first firing is one interval after outlive_schedule_set, and later ones
 *   stay on that grid however late each firing is. Cron expressions are read
 *   in UTC: minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or
 *   JAN-DEC) day-of-week (0-7 or SUN-SAT; 0 and 7 are Sunday), each field `*`
 *   or a comma-separated list of values and ranges `a-b`; a range or `*`
 *   followed by `/s` takes every s-th value of it, and `a/s` runs from a to
 *   the field's end. Or one of @yearly, @annually,
 *   @monthly, @weekly, @daily, @midnight, @hourly. As in Vixie cron, when both
 *   day fields are restricted (neither begins with `*`) a day matches if
 *   either matches, otherwise both must. A cron schedule fires at the first
 *   matching minute after it was set.
 *
 * Statuses every function below may also return: as in the tasks section
 * (OUTLIVE_E_INVALID_ARGUMENT for a NULL store, OUTLIVE_E_STATE, OUTLIVE_E_BUSY,
 * OUTLIVE_E_IO, OUTLIVE_E_CORRUPT). A failing call changes nothing.
 */

/* Bytes of a schedule name: 1 to OUTLIVE_SCHEDULE_MAX_NAME_SIZE of [A-Za-z0-9_.:-]. */
#define OUTLIVE_SCHEDULE_MAX_NAME_SIZE 128
/* Bytes of a cron expression. */
#define OUTLIVE_SCHEDULE_MAX_CRON_SIZE 256
/* Seconds: the shortest and the longest interval. */
#define OUTLIVE_SCHEDULE_MIN_INTERVAL 0.01
#define OUTLIVE_SCHEDULE_MAX_INTERVAL 1e9

/* When a schedule fires: exactly one of interval_seconds (> 0) and cron (not NULL). */
#define OUTLIVE_SCHEDULE_PERIOD_VERSION 1
typedef struct outlive_schedule_period {
    uint32_t version;            /* OUTLIVE_SCHEDULE_PERIOD_VERSION */
    double interval_seconds;     /* OUTLIVE_SCHEDULE_MIN_INTERVAL to _MAX_INTERVAL, or 0 with cron */
    const char *cron;            /* NULL, or a cron expression (UTC), with interval_seconds 0 */
} outlive_schedule_period;
#define OUTLIVE_SCHEDULE_PERIOD_INIT { OUTLIVE_SCHEDULE_PERIOD_VERSION, 0, NULL }

/* Creates the schedule `name`, or replaces the one of that name (its work,
 * period, queue and priority; the time of its last firing is kept): from now
 * on it adds a task calling `work` (copied) once per `period`. options
 * (nullable) gives the tasks' queue and priority; its other fields must be
 * left zero or NULL. *out_next_fire (nullable) receives the time of the first
 * firing (seconds since the epoch).
 * OUTLIVE_E_INVALID_ARGUMENT: NULL name, work or period; name empty, longer
 *   than OUTLIVE_SCHEDULE_MAX_NAME_SIZE or with other characters;
 *   period->version or options->version unknown; both or neither of
 *   interval_seconds and cron given; interval_seconds below
 *   OUTLIVE_SCHEDULE_MIN_INTERVAL, above OUTLIVE_SCHEDULE_MAX_INTERVAL,
 *   negative, NaN or infinite; a cron expression with other than 5 fields,
 *   a value out of its field's range, a backward range, a step of 0 or
 *   larger than the field, an unknown name or macro, or no day that exists
 *   (`0 0 30 2 *`); longer than OUTLIVE_SCHEDULE_MAX_CRON_SIZE; a malformed
 *   queue name; options->due_at, delay_seconds, unique_key, result_signal or
 *   a group set (not supported for schedules); work one of the library's own
 *   handlers or serializing to more than the size limit.
 * OUTLIVE_E_INVALIDATED: work was invalidated.
 * OUTLIVE_E_NOT_FOUND: options->queue was never declared. */
OUTLIVE_API outlive_status outlive_schedule_set(outlive_store *store, const char *name, const outlive_handler *work,
                                                const outlive_schedule_period *period,
                                                const outlive_task_options *options /* nullable */,
                                                double *out_next_fire /* nullable */);

/* Removes the schedule `name`: it fires no more; tasks it added stay.
 * OUTLIVE_E_INVALID_ARGUMENT: name NULL or malformed.
 * OUTLIVE_E_NOT_FOUND: no schedule of that name. */
OUTLIVE_API outlive_status outlive_schedule_remove(outlive_store *store, const char *name);

typedef struct outlive_schedule_list outlive_schedule_list;

/* Lists schedules in name order as a snapshot (see Listing at the top): those
 * whose name sorts after `after` (NULL: from the first; it need not exist),
 * at most `limit` (0: no limit).
 * OUTLIVE_E_INVALID_ARGUMENT: out NULL, after malformed. */
OUTLIVE_API outlive_status outlive_schedule_list_new(outlive_store *store, const char *after /* nullable */, size_t limit,
                                                     outlive_schedule_list **out);
/* How many schedules the list holds; 0 for NULL. */
OUTLIVE_API size_t      outlive_schedule_list_count(const outlive_schedule_list *list);
/* Accessors of schedule `index` (NULL, 0 out of range; strings owned by the list). */
OUTLIVE_API const char *outlive_schedule_list_name(const outlive_schedule_list *list, size_t index);
/* The name of the handler its tasks call. */
OUTLIVE_API const char *outlive_schedule_list_handler_name(const outlive_schedule_list *list, size_t index);
/* Seconds between firings; 0 for a cron schedule. */
OUTLIVE_API double      outlive_schedule_list_interval(const outlive_schedule_list *list, size_t index);
/* The cron expression; NULL for an interval. */
OUTLIVE_API const char *outlive_schedule_list_cron(const outlive_schedule_list *list, size_t index);
/* Seconds since the epoch of the next period (in the past when no process has fired it yet). */
OUTLIVE_API double      outlive_schedule_list_next_fire(const outlive_schedule_list *list, size_t index);
/* The period of its last firing (seconds since the epoch); 0 when it never fired. */
OUTLIVE_API double      outlive_schedule_list_last_fired(const outlive_schedule_list *list, size_t index);
/* The queue and priority of its tasks. */
OUTLIVE_API const char *outlive_schedule_list_queue(const outlive_schedule_list *list, size_t index);
OUTLIVE_API int32_t     outlive_schedule_list_priority(const outlive_schedule_list *list, size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void        outlive_schedule_list_free(outlive_schedule_list *list);

/* ── signals ────────────────────────────────────────────────────────────── */
/*
 * Signals deliver results of an action to consumers that may live in other
 * processes, and that outlive the process that registered them (the ownCloud
 * SDK's OCSignal with durable handlers).
 *
 * The caller of an action makes a signal id (outlive_signal_new_id), registers
 * one or more consumers for it — a handler, a delivery behaviour, a lifetime,
 * an optional scope — and hands the id to whoever does the work, in this or
 * another process, which posts results (outlive_signal_post).
 *
 * Records. A signal is stored only while it has consumers: consuming creates
 * its record, a post with no consumer stores nothing (and is not an error),
 * and the record goes with its last consumer. Each post stores its payload as
 * the signal's latest value and raises the signal's version by one (1, 2, ...).
 * Each consumer remembers the last version delivered to it and receives each
 * version at most once, in increasing order; only the latest payload is kept,
 * so a consumer that is behind (its process was busy or not running) receives
 * the newest version and skips the ones in between. A consumer registered
 * after a post receives the version posted last.
 *
 * Delivery. Handlers run on the loop of a store handle (inside
 * outlive_loop_dispatch), woken by the store's change feed — never by polling.
 * The handler is called with its bound arguments merged with the call-time
 * arguments: the payload, plus `signal_id` (ID, the 36-character id as UTF-8),
 * `version` (UINTEGER) and `terminated` (BOOL: this post terminates consumers);
 * it takes those it declares. A consumer whose handler does not resolve in a
 * process is left for a process that resolves it (looked at again on each post
 * of its signal, and on the first dispatch after a store is opened) — it is
 * neither an error nor dropped. A call that fails otherwise (a missing
 * argument, a type mismatch, an invalidated handler) counts as delivered.
 *
 * Delivery behaviour: OUTLIVE_DELIVERY_ONCE consumers receive one version and
 * are removed; OUTLIVE_DELIVERY_UNTIL_TERMINATED consumers receive every version
 * they see until one posted with terminates_consumers, then are removed. A
 * terminating post ends the signal: posts after it are ignored (OUTLIVE_OK,
 * nothing stored) as long as its record exists; once its last consumer is gone
 * the id is free again.
 *
 * Lifetime (who may deliver):
 *   OUTLIVE_LIFETIME_THIS_RUN     only the registering store handle (run); the
 *                                 consumer is removed when that run ends —
 *                                 closed, or its process died (kill -9
 *                                 included) — and is never delivered after.
 *   OUTLIVE_LIFETIME_PROCESS      any live run of the registering process name:
 *                                 this run, or the next one if it ends first.
 *   OUTLIVE_LIFETIME_ANY_PROCESS  whichever live process resolves the handler
 *                                 first; one process delivers each version.
 * Process and any-process consumers are delivered claim-then-deliver: a
 * transaction marks the consumer as taken by one run (no two runs can both take
 * a version), the handler runs, a second transaction records the version. If
 * the delivering process dies inside the handler, its claim is released at
 * once and another process delivers that version again: at-least-once across a
 * crash of the deliverer, exactly once otherwise (handlers can use signal_id +
 * version to recognise a repeat). This-run consumers die with their run, so
 * they are called without a claim.
 *
 * A version due to several consumers that one process delivers calls their
 * handlers in the order the consumers were registered.
 *
 * Scope: a consumer may carry a scope (e.g. an account id); all consumers of a
 * scope, of every process, can be removed in one call.
 *
 * Ids are 36-character UUIDs (8-4-4-4-12 hexadecimal, either case; stored and
 * reported in lower case). Besides the statuses listed for each call, every
 * call that takes a store returns OUTLIVE_E_INVALID_ARGUMENT for a NULL store,
 * OUTLIVE_E_STATE for a closed handle or a forked child, OUTLIVE_E_BUSY when
 * other processes held the database past the busy timeout, and OUTLIVE_E_IO or
 * OUTLIVE_E_CORRUPT when the database fails. A failing call changes nothing.
 * All calls may be made from any thread, also from inside a handler.
 */
/* outlive_delivery and outlive_lifetime are declared in the tasks section
 * (a task's options name them, for the consumer of its result). */

/* Longest scope, in bytes. */
#define OUTLIVE_SIGNAL_MAX_SCOPE_SIZE 1024

/* Writes a new random signal id (36 characters and a NUL) into out_id. NULL is
 * ignored. Any thread; never fails. */
OUTLIVE_API void outlive_signal_new_id(char out_id[OUTLIVE_ID_SIZE]);

/* Registers a consumer of signal_id: `handler` is called on this store's loop
 * (or, per `lifetime`, on another process's) with each version it is due, as
 * described above. The handler is copied (serialized); the caller keeps its
 * own. It need not resolve in this process. If the signal was posted already,
 * the latest version is delivered to the new consumer. out_consumer_id
 * (nullable) receives the new consumer's id, for outlive_signal_consumer_remove().
 * scope: NULL, or 1 to OUTLIVE_SIGNAL_MAX_SCOPE_SIZE bytes of UTF-8.
 * Returns:
 *   OUTLIVE_E_INVALID_ARGUMENT  signal_id or handler NULL, signal_id not a UUID,
 *                               delivery or lifetime not one of the enums,
 *                               scope empty, too long or not UTF-8, the handler
 *                               serializes to more than 32 MiB
 *   OUTLIVE_E_INVALIDATED       the handler was invalidated */
OUTLIVE_API outlive_status outlive_signal_consume(outlive_store *store, const char *signal_id,
                                                  const outlive_handler *handler, outlive_delivery delivery,
                                                  outlive_lifetime lifetime, const char *scope /* nullable */,
                                                  char out_consumer_id[OUTLIVE_ID_SIZE] /* nullable */);

/* Posts the next version of signal_id with a copy of `payload` (NULL: no
 * arguments); with terminates_consumers, consumers are removed once it is
 * delivered to them. Durable when it returns OUTLIVE_OK; consumers are called
 * later, on their loops. OUTLIVE_OK also when nothing was stored: the signal
 * has no consumer, or a terminating post ended it.
 * Returns:
 *   OUTLIVE_E_INVALID_ARGUMENT  signal_id NULL or not a UUID; the payload has an
 *                               argument named signal_id, version or terminated,
 *                               or serializes to more than 32 MiB */
OUTLIVE_API outlive_status outlive_signal_post(outlive_store *store, const char *signal_id,
                                               const outlive_args *payload /* nullable */, bool terminates_consumers);

/* Removes one consumer, whichever process registered it; the signal's record
 * goes with its last consumer. A delivery already running completes; called
 * on the store's loop thread (e.g. from a handler), no delivery to it starts
 * after this returns; from another thread, one starting at that moment may
 * still run.
 * Returns: OUTLIVE_E_INVALID_ARGUMENT  consumer_id NULL or not a UUID;
 *          OUTLIVE_E_NOT_FOUND         no consumer with that id (delivered and
 *                                      removed already, its run ended, removed) */
OUTLIVE_API outlive_status outlive_signal_consumer_remove(outlive_store *store, const char *consumer_id);

/* Removes every consumer registered with `scope`, of every process and
 * signal; *out_count (nullable) receives how many — 0 is not an error.
 * Returns: OUTLIVE_E_INVALID_ARGUMENT  scope NULL, empty, too long or not UTF-8 */
OUTLIVE_API outlive_status outlive_signal_consumers_remove_scope(outlive_store *store, const char *scope,
                                                                 size_t *out_count /* nullable */);

/* Inspection. Lists follow the one model (Listing, at the top of this file). */

/* The stored signal signal_id: its latest version (0 before the first post),
 * how many consumers it has, and whether a terminating post ended it. Each
 * output may be NULL and is written only on success.
 * Returns: OUTLIVE_E_INVALID_ARGUMENT  signal_id NULL or not a UUID;
 *          OUTLIVE_E_NOT_FOUND         not stored (it has no consumer) */
OUTLIVE_API outlive_status outlive_signal_lookup(outlive_store *store, const char *signal_id,
                                                 uint64_t *out_version /* nullable */,
                                                 size_t *out_consumer_count /* nullable */,
                                                 bool *out_terminated /* nullable */);

typedef struct outlive_signal_list outlive_signal_list;

/* Lists stored signals in id order: those after `after` (NULL: from the
 * first; it need not be stored), at most `limit` (0: no limit).
 * Returns: OUTLIVE_E_INVALID_ARGUMENT  out NULL, after not a UUID */
OUTLIVE_API outlive_status outlive_signal_list_new(outlive_store *store, const char *after /* nullable */,
                                                   size_t limit, outlive_signal_list **out);
OUTLIVE_API size_t      outlive_signal_list_count(const outlive_signal_list *list);         /* 0 for NULL */
OUTLIVE_API const char *outlive_signal_list_id(const outlive_signal_list *list, size_t index);
OUTLIVE_API uint64_t    outlive_signal_list_version(const outlive_signal_list *list, size_t index);
OUTLIVE_API size_t      outlive_signal_list_consumer_count(const outlive_signal_list *list, size_t index);
OUTLIVE_API bool        outlive_signal_list_terminated(const outlive_signal_list *list, size_t index);
OUTLIVE_API void        outlive_signal_list_free(outlive_signal_list *list);

typedef struct outlive_signal_consumer_list outlive_signal_consumer_list;

/* Lists the consumers of signal_id (NULL: of every signal), in the order they
 * were registered: those after the consumer `after` (NULL: from the first), at
 * most `limit` (0: no limit).
 * Returns: OUTLIVE_E_INVALID_ARGUMENT  out NULL, signal_id or after not a UUID;
 *          OUTLIVE_E_NOT_FOUND         no consumer `after` any more (restart from NULL) */
OUTLIVE_API outlive_status outlive_signal_consumer_list_new(outlive_store *store, const char *signal_id /* nullable */,
                                                            const char *after /* nullable */, size_t limit,
                                                            outlive_signal_consumer_list **out);
OUTLIVE_API size_t      outlive_signal_consumer_list_count(const outlive_signal_consumer_list *list);  /* 0 for NULL */
OUTLIVE_API const char *outlive_signal_consumer_list_id(const outlive_signal_consumer_list *list, size_t index);
OUTLIVE_API const char *outlive_signal_consumer_list_signal_id(const outlive_signal_consumer_list *list, size_t index);
OUTLIVE_API const char *outlive_signal_consumer_list_handler_name(const outlive_signal_consumer_list *list, size_t index);
/* NULL when the consumer has no scope. */
OUTLIVE_API const char *outlive_signal_consumer_list_scope(const outlive_signal_consumer_list *list, size_t index);
/* The process name and run id of the run that registered the consumer. */
OUTLIVE_API const char *outlive_signal_consumer_list_process(const outlive_signal_consumer_list *list, size_t index);
OUTLIVE_API const char *outlive_signal_consumer_list_run_id(const outlive_signal_consumer_list *list, size_t index);
/* 0 out of range. */
OUTLIVE_API outlive_delivery outlive_signal_consumer_list_delivery(const outlive_signal_consumer_list *list, size_t index);
OUTLIVE_API outlive_lifetime outlive_signal_consumer_list_lifetime(const outlive_signal_consumer_list *list, size_t index);
/* The last version delivered to the consumer as recorded in the store; 0: none
 * yet. A this-run consumer's delivering run records it up to 0.1 s after the
 * delivery (its own listings show it at once; see docs/signals.md). */
OUTLIVE_API uint64_t    outlive_signal_consumer_list_last_version(const outlive_signal_consumer_list *list, size_t index);
/* The run delivering to it at the time of the snapshot, or NULL. */
OUTLIVE_API const char *outlive_signal_consumer_list_delivering_run_id(const outlive_signal_consumer_list *list, size_t index);
OUTLIVE_API void        outlive_signal_consumer_list_free(outlive_signal_consumer_list *list);

/* ── messages ───────────────────────────────────────────────────────────── */
/*
 * The message queue: durable messages (a sync issue, an error, a question)
 * shown to the user once, by the best presenter, in whichever process has one,
 * then answered and removed. Shared by every process of the store.
 *
 * A message has an id, a date, a category, a title, optional text, scope (the
 * account or bookmark it belongs to) and thread (for grouping), choices (id,
 * label, kind), an optional payload and an optional durable response handler.
 *
 * The flow. Presenters, response handlers and auto-resolvers are callbacks of
 * one store handle (one run), called on its loop. For each message that
 * changed, in every process:
 *  1. Auto-resolvers are asked first about a message not yet answered; one may
 *     answer it with a choice (as the user would) or resolve it (it is removed:
 *     the problem went away).
 *  2. A message neither presented nor answered, and not being presented by a
 *     live run, is offered to this run's presenters that have not had it yet:
 *     each gives a priority; 0 declines; the highest presents it (the first
 *     added on a tie). While it presents, the message is locked by this run
 *     (no other process presents it); every presenter asked is recorded
 *     ("process:run:presenter") and is not asked again in this run, unless
 *     outlive_presenter_reoffer() asks for it. Across processes, the first run
 *     whose presenter is willing presents it; a run whose presenters all
 *     decline leaves it to the others. If the presenting process dies (any
 *     death, kill -9 included) or closes the store, the lock is broken at once
 *     and the message is offered again.
 *  3. The presenter finishes its presentation token (any thread): presented or
 *     not, whether it wants an end notification, and optionally the user's
 *     choice. Not presented: other presenters and processes may have it.
 *  4. An answered message (outlive_message_respond from any process, a choice
 *     given when finishing, or an auto-resolver) goes to the response handlers
 *     of one process at a time: its in-process response handlers in the order
 *     added until one returns true, then the message's durable response
 *     handler if it resolves in that process, called with the arguments
 *     message_id (ID), choice (ID) and scope (ID, absent without a scope).
 *     A true return or the durable handler having run removes the message. A
 *     process whose handlers all return false (and that cannot resolve the
 *     durable handler) leaves it to others, and asks again when a response
 *     handler is added.
 *     Every callback runs on the loop of the handle it was registered on; the
 *     views it receives are valid during the call only.
 *  5. A removed message is deleted; if its presenter asked for an end
 *     notification, the presenter's `end` is called first, in the run that
 *     presented it, or — if that run has ended — in a live run of the same
 *     process name with a presenter of the same id; if there is none, the
 *     record goes without it. A presenter removed before that gets no `end`.
 *
 * Messages of one category are capped (OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT,
 * outlive_messages_set_category_limit): posting beyond it is OUTLIVE_E_LIMIT.
 *
 * Unless a function says otherwise, each returns OUTLIVE_E_INVALID_ARGUMENT for
 * a NULL store or a NULL, non-UTF-8 or malformed string argument, OUTLIVE_E_STATE
 * for a closed handle or a forked child, OUTLIVE_E_BUSY when other processes held
 * the database past the busy timeout, OUTLIVE_E_IO or OUTLIVE_E_CORRUPT when the
 * database fails. Any thread, except from inside a kv_update modifier.
 */
typedef struct outlive_message outlive_message;            /* read-only view, valid during a callback */
typedef struct outlive_message_draft outlive_message_draft;
typedef struct outlive_presentation outlive_presentation;  /* token: finish exactly once, any thread */
typedef enum outlive_choice_kind {
    OUTLIVE_CHOICE_REGULAR = 1,
    OUTLIVE_CHOICE_CANCEL,
    OUTLIVE_CHOICE_DESTRUCTIVE,
    OUTLIVE_CHOICE_DEFAULT
} outlive_choice_kind;
typedef enum outlive_presentation_result {
    OUTLIVE_PRESENTATION_PRESENTED = 1,   /* the user saw it: it is offered to nobody else */
    OUTLIVE_PRESENTATION_NOT_PRESENTED    /* other presenters and processes may have it */
} outlive_presentation_result;

/* Limits of a draft's fields, in bytes (a choice id fits an auto-resolver's
 * 64-byte buffer with its NUL). Category, scope, thread, choice ids and callback
 * ids must be non-empty and free of control characters. */
#define OUTLIVE_MESSAGE_MAX_CATEGORY_SIZE 255
#define OUTLIVE_MESSAGE_MAX_TITLE_SIZE (64 * 1024)
#define OUTLIVE_MESSAGE_MAX_TEXT_SIZE (1024 * 1024)
#define OUTLIVE_MESSAGE_MAX_SCOPE_SIZE 255
#define OUTLIVE_MESSAGE_MAX_THREAD_SIZE 255
#define OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE 63
/* Bytes of a buffer that receives a choice id: the longest and its NUL. */
#define OUTLIVE_MESSAGE_CHOICE_ID_SIZE (OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE + 1)
#define OUTLIVE_MESSAGE_MAX_CHOICE_LABEL_SIZE 4096
#define OUTLIVE_MESSAGE_MAX_CHOICES 64
#define OUTLIVE_MESSAGE_MAX_CALLBACK_ID_SIZE 255
/* Stored messages of one category that a store handle lets post by default. */
#define OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT 10000

/* A new draft of `category` (1..255 bytes) with `title` (may be empty) into
 * *out, owned by the caller (outlive_message_draft_free).
 * OUTLIVE_E_INVALID_ARGUMENT: a NULL, bad or too long category or title, out
 * NULL. OUTLIVE_E_NO_MEMORY. Drafts are not thread-safe: use one from one
 * thread at a time. */
OUTLIVE_API outlive_status outlive_message_draft_new(const char *category, const char *title,
                                                     outlive_message_draft **out);

/* Frees a draft. NULL is ignored. */
OUTLIVE_API void outlive_message_draft_free(outlive_message_draft *draft);

/* Sets the text (NULL clears it). OUTLIVE_E_INVALID_ARGUMENT: draft NULL, text
 * not UTF-8 or too long. */
OUTLIVE_API outlive_status outlive_message_draft_set_text(outlive_message_draft *draft, const char *text);

/* Sets the scope id (an account, a bookmark; NULL clears it): messages of a
 * scope can be listed and removed together, and the durable response handler
 * receives it as `scope`. */
OUTLIVE_API outlive_status outlive_message_draft_set_scope(outlive_message_draft *draft, const char *scope_id);

/* Sets the thread id that groups related messages for presentation (NULL
 * clears it). */
OUTLIVE_API outlive_status outlive_message_draft_set_thread(outlive_message_draft *draft, const char *thread_id);

/* Adds a choice. OUTLIVE_E_INVALID_ARGUMENT: a NULL or bad string, a kind that
 * is no outlive_choice_kind, a choice id the draft has already, more than
 * OUTLIVE_MESSAGE_MAX_CHOICES. */
OUTLIVE_API outlive_status outlive_message_draft_add_choice(outlive_message_draft *draft, const char *choice_id,
                                                            const char *label, outlive_choice_kind kind);

/* Sets the payload: a copy of `payload`'s arguments, stored with the message
 * for presenters and handlers to read (outlive_message_payload). NULL clears it.
 * OUTLIVE_E_INVALID_ARGUMENT: draft NULL. */
OUTLIVE_API outlive_status outlive_message_draft_set_payload(outlive_message_draft *draft, const outlive_args *payload);

/* Sets the durable response handler (a copy; NULL clears it): once the message
 * is answered, it is called in a process where its name resolves, with its
 * bound arguments and message_id (ID), choice (ID) and scope (ID, absent
 * without a scope); having run, it removes the message. A process where it does
 * not resolve leaves it to another. It is stored serialized: see the handlers
 * section for what may be bound.
 * OUTLIVE_E_INVALID_ARGUMENT: draft NULL. OUTLIVE_E_INVALIDATED: the handler
 * was invalidated. Posting fails with OUTLIVE_E_INVALID_ARGUMENT if it
 * serializes beyond the size limit of handlers. */
OUTLIVE_API outlive_status outlive_message_draft_set_response_handler(outlive_message_draft *draft, const outlive_handler *handler);

/* A message without choices is removed once it was presented (or muted) when
 * auto_remove is true (a notice that needs no answer). Default false. */
OUTLIVE_API outlive_status outlive_message_draft_set_auto_remove(outlive_message_draft *draft, bool auto_remove);

/* Stores the draft as a new message and writes its id into out_id. The draft
 * is not changed and can be posted again.
 * OUTLIVE_E_LIMIT: the category holds as many messages as the handle's limit
 *   allows (outlive_messages_set_category_limit).
 * OUTLIVE_E_STATE: the handle is closed. */
OUTLIVE_API outlive_status outlive_message_post(outlive_store *store, const outlive_message_draft *draft,
                                                char out_id[OUTLIVE_ID_SIZE]);

/* Answers a message with one of its choices, from any process (with or
 * without presenters): it becomes handled and goes to response handlers.
 * OUTLIVE_E_INVALID_ARGUMENT: message_id is not an id, choice_id malformed.
 * OUTLIVE_E_NOT_FOUND: no such message (or removed), or it has no such choice.
 * OUTLIVE_E_STATE: it was answered already. */
OUTLIVE_API outlive_status outlive_message_respond(outlive_store *store, const char *message_id, const char *choice_id);

/* Marks a message presented without presenting it (it is offered to no
 * presenter any more); a message without choices set to auto-remove goes.
 * Muting a presented message changes nothing. OUTLIVE_E_NOT_FOUND: no such message. */
OUTLIVE_API outlive_status outlive_message_mute(outlive_store *store, const char *message_id);

/* Removes a message: deleted at once, or — while it is being presented or
 * answered, or when its presenter wants an end notification — marked removed
 * and deleted after that (step 5). OUTLIVE_E_NOT_FOUND: no such message, or
 * removed already. */
OUTLIVE_API outlive_status outlive_message_remove(outlive_store *store, const char *message_id);

/* Removes every message of a scope, as outlive_message_remove does; *out_count
 * (nullable) receives how many. No message of the scope is OK, 0. */
OUTLIVE_API outlive_status outlive_messages_remove_scope(outlive_store *store, const char *scope_id,
                                                         size_t *out_count /* nullable */);

typedef struct outlive_message_list outlive_message_list;

/* Lists the ids of stored messages (removed ones waiting for deletion
 * included) in the order they were posted, of one scope and/or category
 * (NULL: any), as a snapshot (see Listing at the top): those after the message
 * `after` (NULL: from the first), at most `limit` (0: no limit). Read each one
 * with outlive_message_get.
 * OUTLIVE_E_INVALID_ARGUMENT: out NULL, a bad scope, category or after.
 * OUTLIVE_E_NOT_FOUND: no message `after` in the list any more (restart from NULL). */
OUTLIVE_API outlive_status outlive_message_list_new(outlive_store *store, const char *scope_id /* nullable */,
                                                    const char *category /* nullable */,
                                                    const char *after /* nullable */, size_t limit,
                                                    outlive_message_list **out);
/* How many messages the list holds; 0 for NULL. */
OUTLIVE_API size_t      outlive_message_list_count(const outlive_message_list *list);
/* The id of message `index`, owned by the list; NULL out of range. */
OUTLIVE_API const char *outlive_message_list_id(const outlive_message_list *list, size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void        outlive_message_list_free(outlive_message_list *list);

/* Stored messages of a category (NULL: of all), from a kept count. */
OUTLIVE_API outlive_status outlive_messages_count(outlive_store *store, const char *category /* nullable */,
                                                  size_t *out_count);

/* How many messages of one category posts through this handle allow
 * (default OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT). OUTLIVE_E_INVALID_ARGUMENT:
 * limit is 0. */
OUTLIVE_API outlive_status outlive_messages_set_category_limit(outlive_store *store, size_t limit);

/* A snapshot of a stored message, owned by the caller (outlive_message_free);
 * the accessors below read it. OUTLIVE_E_NOT_FOUND: no such message. */
OUTLIVE_API outlive_status outlive_message_get(outlive_store *store, const char *message_id, outlive_message **out);

/* Frees a snapshot from outlive_message_get. NULL is ignored. Never free the
 * view a callback receives: the library owns it. */
OUTLIVE_API void outlive_message_free(outlive_message *message);

/* Accessors of a message view (a callback's or a snapshot). Strings are owned
 * by the view and valid as long as it is; NULL when message is NULL or the
 * field is absent. Any thread. */
OUTLIVE_API const char *outlive_message_id(const outlive_message *message);
OUTLIVE_API const char *outlive_message_category(const outlive_message *message);
OUTLIVE_API const char *outlive_message_title(const outlive_message *message);
OUTLIVE_API const char *outlive_message_text(const outlive_message *message);
OUTLIVE_API const char *outlive_message_scope(const outlive_message *message);
OUTLIVE_API const char *outlive_message_thread(const outlive_message *message);
OUTLIVE_API const char *outlive_message_choice(const outlive_message *message);   /* NULL until handled */
/* The payload (outlive_message_draft_set_payload), owned by the view: read it
 * with the outlive_args getters, do not change or free it. NULL when there is
 * none (or it does not decode). */
OUTLIVE_API const outlive_args *outlive_message_payload(const outlive_message *message);
/* Seconds since the epoch when it was posted; 0 when message is NULL. */
OUTLIVE_API double      outlive_message_date(const outlive_message *message);
/* Its number of choices; 0 when message is NULL. */
OUTLIVE_API size_t      outlive_message_choice_count(const outlive_message *message);
/* Choice `index` (0-based, in the order added): *out_choice_id and *out_label
 * (owned by the view) and *out_kind; each output may be NULL.
 * OUTLIVE_E_INVALID_ARGUMENT: message NULL, index out of range. */
OUTLIVE_API outlive_status outlive_message_choice_at(const outlive_message *message, size_t index,
                                                     const char **out_choice_id /* nullable */,
                                                     const char **out_label /* nullable */,
                                                     outlive_choice_kind *out_kind /* nullable */);
/* Whether it was presented (or muted), answered, removed (waiting for its end
 * notification or deletion); whether auto-remove is set; whether it carries a
 * durable response handler. false when message is NULL. */
OUTLIVE_API bool outlive_message_is_presented(const outlive_message *message);
OUTLIVE_API bool outlive_message_is_handled(const outlive_message *message);
OUTLIVE_API bool outlive_message_is_removed(const outlive_message *message);
OUTLIVE_API bool outlive_message_auto_removes(const outlive_message *message);
OUTLIVE_API bool outlive_message_has_response_handler(const outlive_message *message);

/* Presenter priorities: the highest wins; tie: the first added. */
#define OUTLIVE_PRIORITY_WONT_PRESENT 0
#define OUTLIVE_PRIORITY_LOW 100
#define OUTLIVE_PRIORITY_DEFAULT 200
#define OUTLIVE_PRIORITY_HIGH 300

/* A presenter's callbacks, run on the store's loop. priority: 0 (or less)
 * declines the message. present: shows it and finishes `presentation` exactly
 * once, now or later, from any thread. end: nullable; called before a message
 * it presented with requires_end_notification is deleted (to withdraw a
 * notification, close a dialog). The views are valid during the call only. */
#define OUTLIVE_PRESENTER_VERSION 1
typedef struct outlive_presenter {
    uint32_t version;  /* OUTLIVE_PRESENTER_VERSION */
    int32_t (*priority)(const outlive_message *message, void *context);
    void    (*present)(const outlive_message *message, outlive_presentation *presentation, void *context);
    void    (*end)(const outlive_message *message, void *context);          /* nullable */
} outlive_presenter;
#define OUTLIVE_PRESENTER_INIT { OUTLIVE_PRESENTER_VERSION, NULL, NULL, NULL }

/* Registers a presenter on this store handle under presenter_id (1..255 bytes;
 * unique per handle). The callbacks are copied. Messages waiting for a
 * presenter, posted before too, are offered to it. release(context) is called
 * (when not NULL) once the presenter is removed and no call of it is under
 * way, or the store is closed; not when this call fails.
 * OUTLIVE_E_INVALID_ARGUMENT: callbacks, priority or present NULL, an unknown
 *   callbacks->version, bad id.
 * OUTLIVE_E_STATE: a presenter with that id is registered on this handle. */
OUTLIVE_API outlive_status outlive_presenter_add(outlive_store *store, const char *presenter_id,
                                                 const outlive_presenter *callbacks, void *context,
                                                 void (*release)(void *context));
/* Unregisters a presenter: it is not asked again. A presentation it has under
 * way can still be finished and is recorded; it gets no end notification after
 * this. OUTLIVE_E_NOT_FOUND: no presenter with that id on this handle. */
OUTLIVE_API outlive_status outlive_presenter_remove(outlive_store *store, const char *presenter_id);
/* Offers the presenter again the messages it declined or did not present that
 * are still waiting for a presenter. OUTLIVE_E_NOT_FOUND: not registered. */
OUTLIVE_API outlive_status outlive_presenter_reoffer(outlive_store *store, const char *presenter_id);

/* Ends a presentation, exactly once, from any thread: OUTLIVE_PRESENTATION_PRESENTED (the
 * user saw it: it is offered to nobody else) or OUTLIVE_PRESENTATION_NOT_PRESENTED (other
 * presenters and processes may have it); requires_end_notification asks for
 * `end` before the message is deleted (ignored when not presented); choice_id,
 * when not NULL, is the user's answer. The outcome is recorded on the loop and
 * the message's lock released. The token is a handle, not memory: it needs no
 * freeing and stays a valid argument after this (a second finish is
 * OUTLIVE_E_STATE). An unfinished token keeps a small record until it is
 * finished; finishing after the store was closed is accepted and changes
 * nothing (the lock went with the run, and the message was offered again).
 * OUTLIVE_E_INVALID_ARGUMENT: presentation NULL, a result that is no
 *   outlive_presentation_result, a malformed choice_id.
 * OUTLIVE_E_NOT_FOUND: the message has no such choice (the token stays unfinished).
 * OUTLIVE_E_STATE: finished already. */
OUTLIVE_API outlive_status outlive_presentation_finish(outlive_presentation *presentation, outlive_presentation_result result,
                                                       bool requires_end_notification, const char *choice_id /* nullable */);

/* Called on the loop for an answered message (outlive_message_choice gives the
 * choice); returns true when it took care of it (the message is removed). */
typedef bool (*outlive_response_handler)(const outlive_message *message, void *context);
/* Registers a response handler under id (unique per handle among response
 * handlers). Answered messages waiting for one are offered to it. Its context
 * is released as a presenter's is.
 * OUTLIVE_E_INVALID_ARGUMENT: handler NULL, bad id. OUTLIVE_E_STATE: id taken. */
OUTLIVE_API outlive_status outlive_response_handler_add(outlive_store *store, const char *id,
                                                        outlive_response_handler handler, void *context,
                                                        void (*release)(void *context));
/* OUTLIVE_E_NOT_FOUND: no response handler with that id on this handle. */
OUTLIVE_API outlive_status outlive_response_handler_remove(outlive_store *store, const char *id);

/* Called on the loop for each message not yet answered, whenever it changes and
 * when the resolver is added, before presenters see it. Returns false to leave
 * it; true with a choice id written into out_choice_id (NUL-terminated, at most
 * OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE bytes) to answer it with that choice, or
 * true with an empty out_choice_id to resolve it without an answer (it is
 * removed). An answer with a choice the message does not offer is ignored (and
 * logged). */
typedef bool (*outlive_auto_resolver)(const outlive_message *message,
                                      char out_choice_id[OUTLIVE_MESSAGE_CHOICE_ID_SIZE], void *context);
/* Registers an auto-resolver under id. Its context is released as a
 * presenter's is. OUTLIVE_E_INVALID_ARGUMENT: resolver NULL, bad id.
 * OUTLIVE_E_STATE: id taken. */
OUTLIVE_API outlive_status outlive_auto_resolver_add(outlive_store *store, const char *id,
                                                     outlive_auto_resolver resolver, void *context,
                                                     void (*release)(void *context));
/* OUTLIVE_E_NOT_FOUND: no auto-resolver with that id on this handle. */
OUTLIVE_API outlive_status outlive_auto_resolver_remove(outlive_store *store, const char *id);

/* ── interactions ───────────────────────────────────────────────────────── */
/*
 * An interaction queue presents modal interactions (a permission prompt, a
 * login sheet, an important notice) strictly one at a time. Each interaction's
 * run callback is called on the loop's thread, inside outlive_loop_dispatch(),
 * with a token that must be finished exactly once — from any thread — with
 * outlive_interaction_finish(). Only then does the next interaction start, in a
 * later dispatch of the loop, in the order they were added. An interaction that
 * needs no UI finishes its token at once.
 *
 * suspend/resume mirror a view disappearing and appearing: while the queue is
 * suspended nothing starts; the running interaction is not interrupted.
 *
 * A forgotten finish stalls the queue for good; the stall report
 * (outlive_interactions_set_stall_report) names the interaction that has been
 * running too long.
 */
typedef struct outlive_interactions outlive_interactions;

/* A started interaction. It is not a pointer to memory you may read: pass it to
 * outlive_interaction_finish(). Finishing it more than once is safe and returns
 * OUTLIVE_E_STATE; tokens are never reused within the process. */
typedef struct outlive_interaction outlive_interaction;

/* Called on the loop's thread when the interaction starts. */
typedef void (*outlive_interaction_fn)(outlive_interaction *interaction, void *context);

/* Creates an interaction queue whose interactions run on `loop` (the queue
 * keeps the loop alive; the host must keep dispatching it). *out receives the
 * queue; free it with outlive_interactions_free().
 * OUTLIVE_E_INVALID_ARGUMENT: loop or out is NULL. Any thread. */
OUTLIVE_API outlive_status outlive_interactions_new(outlive_loop *loop, outlive_interactions **out);

/* Frees the queue. Waiting interactions are dropped without running: the
 * release callback of each (outlive_interactions_add) is called
 * here, on this thread, in the order they were added. The running interaction,
 * if any, is not interrupted: its token can still be finished (its context is
 * released then), but nothing starts after it, and no stall is reported.
 * Call it on the loop's thread, or while no thread dispatches the loop, for the
 * guarantee that no run callback starts after it returns. NULL is ignored. */
OUTLIVE_API void outlive_interactions_free(outlive_interactions *queue);

/* Queues an interaction: run(token, context) is called on the loop's thread
 * when every interaction added before it has finished and the queue is not
 * suspended. Any thread; never calls run inside this call. release(context)
 * (when not NULL) is called exactly once: after the interaction was finished
 * and its run callback has returned (on whichever of those two threads comes
 * last), or by outlive_interactions_free() when it never started; not when
 * this call fails.
 * OUTLIVE_E_INVALID_ARGUMENT: queue or run is NULL. */
OUTLIVE_API outlive_status outlive_interactions_add(outlive_interactions *queue, outlive_interaction_fn run,
                                                    void *context, void (*release)(void *context));

/* Nothing starts until outlive_interactions_resume() (call it when the view
 * will disappear). The running interaction goes on. Suspending twice is the same
 * as once. Any thread. OUTLIVE_E_INVALID_ARGUMENT: queue is NULL. */
OUTLIVE_API outlive_status outlive_interactions_suspend(outlive_interactions *queue);

/* Lets interactions start again (call it when the view did appear). A queue is
 * created running. Any thread. OUTLIVE_E_INVALID_ARGUMENT: queue is NULL. */
OUTLIVE_API outlive_status outlive_interactions_resume(outlive_interactions *queue);

/* Finishes a running interaction, so the next one can start on the loop's
 * thread (this call only posts that to the loop; it never runs an interaction
 * itself). Any thread, any time, including inside its run callback.
 * OUTLIVE_E_INVALID_ARGUMENT: interaction is NULL.
 * OUTLIVE_E_STATE: it was finished already (or is no token); nothing changes. */
OUTLIVE_API outlive_status outlive_interaction_finish(outlive_interaction *interaction);

/* How many interactions of the queue are not finished: the waiting ones and the
 * running one. 0 when queue is NULL. Any thread. */
OUTLIVE_API size_t outlive_interactions_unfinished(const outlive_interactions *queue);

/* Called on the loop's thread, once per interaction, when an interaction has been
 * running for `seconds` without being finished. `stalled` may be finished from
 * here (a watchdog's way out); it may also have been finished by another thread
 * in the meantime, which outlive_interaction_finish() tells with OUTLIVE_E_STATE. */
typedef void (*outlive_interaction_stall_fn)(outlive_interaction *stalled, double seconds, void *context);

/* Reports interactions that are still running `seconds` after they started
 * (applies to interactions started after this call). report NULL or seconds 0
 * turns the report off. Replacing a report releases the previous context
 * (release, when not NULL, is called with it); outlive_interactions_free()
 * releases the last one.
 * OUTLIVE_E_INVALID_ARGUMENT: queue is NULL, seconds is negative, infinite or NaN.
 * Any thread. */
OUTLIVE_API outlive_status outlive_interactions_set_stall_report(outlive_interactions *queue, double seconds,
                                                                 outlive_interaction_stall_fn report, void *context,
                                                                 void (*release)(void *context));

/*
 * Durable interaction queues. The interactions of a durable queue are handlers
 * stored in the store, so what was queued before a restart or a crash is
 * presented after it, in the order it was added, by whichever process presents
 * the queue. A store has any number of queues, told apart by name.
 *
 * Presenting. A queue handle that is not suspended is a presenter. On its
 * store's loop (inside outlive_loop_dispatch) it claims the queue when no live
 * presenter of any process holds it, and calls the first stored interaction's
 * handler (outlive_handler_call) with its bound arguments and these call-time ones:
 *     interaction_id  ID       the interaction's id (36 characters)
 *     finish          HANDLER  call it (outlive_handler_call, NULL call_args) to finish it
 * The handler declares those it needs, e.g.
 *     OUTLIVE_HANDLER(show_notice, OUTLIVE_ID(text), OUTLIVE_ID(interaction_id),
 *                     OUTLIVE_HANDLER_ARG(finish)) { ...; keep outlive_handler_copy(finish) }
 * A handler that does not declare `finish` can never be finished: declare it.
 * Finishing deletes the stored interaction (one transaction, durable when the
 * call returns) and the next one starts in a later dispatch. Strictly one
 * interaction of a queue is presented at a time across all processes.
 *
 * The finish handler is the built-in OUTLIVE_DURABLE_INTERACTION_FINISH bound
 * to this presentation. Call it (or a copy of it) from any thread of the
 * presenting process, inside the interaction's handler or later. The first call
 * returns OUTLIVE_OK; every later call returns OUTLIVE_E_STATE and changes
 * nothing, as does a call after the queue handle was freed, or in another
 * process. A call that fails on the database (OUTLIVE_E_BUSY, OUTLIVE_E_IO) leaves
 * the interaction presented: call it again. After outlive_store_close(), it
 * returns OUTLIVE_E_STATE (the interaction is presented again later).
 *
 * At least once. The claim belongs to the presenting run: it is released when
 * the queue is empty, when the handle is suspended with nothing presented, when
 * it is freed, and when the run ends or dies (kill -9 included: the death is
 * seen at once, never after a timeout; on a PostgreSQL store, within its
 * liveness bound, see outlive_store_open). An interaction whose presenter died, or
 * whose handle was freed, before it was finished is presented again by the next
 * presenter: make interactions idempotent, keyed by interaction_id.
 *
 * Waiting. When the first interaction's handler does not resolve in this
 * process, or cannot be called (a missing or mistyped argument, an instance
 * resolver that found nothing, stored bytes that do not decode), it is neither
 * skipped nor dropped: the queue waits, the log (outlive_log_set_handler) says
 * why (a warning, once per interaction until the next resume), and the claim is released so that a process that can present it does.
 * This handle tries again when the queue changes (an add, finish or removal in
 * any process) and on outlive_durable_interactions_resume(), which is the call
 * to make after loading the handler library that declares it. Remove an
 * interaction that can never be presented with outlive_durable_interactions_remove().
 *
 * Changes of other processes reach a handle through the store's change feed:
 * nothing polls, an idle queue causes no wake-ups.
 *
 * Every function below returns OUTLIVE_E_STATE, besides the statuses it lists,
 * when the store was closed (or is used in a forked child) or the queue handle
 * was freed, and OUTLIVE_E_BUSY / OUTLIVE_E_IO / OUTLIVE_E_CORRUPT when the
 * database fails. All of them may be called from any thread.
 */
typedef struct outlive_durable_interactions outlive_durable_interactions;

/* The name of the built-in finish handler interactions receive. */
#define OUTLIVE_DURABLE_INTERACTION_FINISH "outlive.durable_interaction.finish"
/* Queue names are 1 to this many bytes of UTF-8 without control characters. */
#define OUTLIVE_DURABLE_INTERACTIONS_MAX_NAME_SIZE 255
/* outlive_durable_interactions_open() flag: open suspended (add, inspect and
 * remove without presenting, until outlive_durable_interactions_resume). */
#define OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED 1u

/* Opens a handle on the durable queue `queue_name` of store (a queue exists
 * while it holds interactions; opening creates nothing). Unless flags has
 * OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED the handle presents: the first stored
 * interaction may start in a later dispatch of the store's loop, never inside
 * this call. A process may open several handles on one queue (of one or several
 * stores); they present one at a time like handles of different processes.
 * *out receives the handle; free it with outlive_durable_interactions_free()
 * before closing the store.
 * OUTLIVE_E_INVALID_ARGUMENT: store, queue_name or out is NULL; the name is
 *   empty, longer than OUTLIVE_DURABLE_INTERACTIONS_MAX_NAME_SIZE, not UTF-8 or
 *   has a control character; flags has an unknown bit. */
OUTLIVE_API outlive_status outlive_durable_interactions_open(outlive_store *store, const char *queue_name,
                                                             uint32_t flags, outlive_durable_interactions **out);

/* Frees the handle: nothing starts in it any more and its claim is released.
 * An interaction it presents and that was not finished is given back: its
 * finish returns OUTLIVE_E_STATE from now on and the next presenter presents
 * it again. Stored interactions stay stored. Call it on the loop's thread, or
 * while no thread dispatches the loop, for the guarantee that no interaction
 * starts in this handle after it returns. NULL is ignored. */
OUTLIVE_API void outlive_durable_interactions_free(outlive_durable_interactions *queue);

/* Stores a copy of `interaction` as the last interaction of the queue: it is
 * presented after every interaction added before it (by any process), by a
 * presenter of any process that resolves its name. The name need not resolve in
 * this process. Durable when this returns OUTLIVE_OK. out_id (nullable)
 * receives the new interaction's id.
 * OUTLIVE_E_INVALID_ARGUMENT: queue or interaction is NULL, or the handler is
 *   larger than OUTLIVE_MAX_SERIALIZED_SIZE serialized.
 * OUTLIVE_E_INVALIDATED: the handler was invalidated. */
OUTLIVE_API outlive_status outlive_durable_interactions_add(outlive_durable_interactions *queue,
                                                            const outlive_handler *interaction,
                                                            char out_id[OUTLIVE_ID_SIZE] /* nullable */);

/* Nothing starts in this handle until outlive_durable_interactions_resume()
 * (the view will disappear). The interaction it presents goes on; with nothing
 * presented its claim is released, so a presenter of another process may
 * present the queue meanwhile. Suspending twice is the same as once.
 * OUTLIVE_E_INVALID_ARGUMENT: queue is NULL. */
OUTLIVE_API outlive_status outlive_durable_interactions_suspend(outlive_durable_interactions *queue);

/* Lets this handle present again (the view did appear), and retries a first
 * interaction that could not be called here. OUTLIVE_E_INVALID_ARGUMENT: queue
 * is NULL. */
OUTLIVE_API outlive_status outlive_durable_interactions_resume(outlive_durable_interactions *queue);

/* *out_count receives how many interactions the queue holds in the store, the
 * one being presented (by any process) included.
 * OUTLIVE_E_INVALID_ARGUMENT: queue or out_count is NULL. */
OUTLIVE_API outlive_status outlive_durable_interactions_count(outlive_durable_interactions *queue, size_t *out_count);

typedef struct outlive_durable_interaction_list outlive_durable_interaction_list;

/* Lists the interactions the queue holds, first first, as a snapshot (see
 * Listing at the top): those after the interaction `after` (NULL: from the
 * first), at most `limit` (0: no limit).
 * OUTLIVE_E_INVALID_ARGUMENT: queue or out is NULL, after not a UUID.
 * OUTLIVE_E_NOT_FOUND: the queue holds no interaction `after` any more. */
OUTLIVE_API outlive_status outlive_durable_interaction_list_new(outlive_durable_interactions *queue,
                                                                const char *after /* nullable */, size_t limit,
                                                                outlive_durable_interaction_list **out);
/* How many interactions the list holds; 0 for NULL. */
OUTLIVE_API size_t      outlive_durable_interaction_list_count(const outlive_durable_interaction_list *list);
/* The id and handler name of interaction `index`, owned by the list; NULL out of range. */
OUTLIVE_API const char *outlive_durable_interaction_list_id(const outlive_durable_interaction_list *list, size_t index);
OUTLIVE_API const char *outlive_durable_interaction_list_handler_name(const outlive_durable_interaction_list *list,
                                                                      size_t index);
/* How many times it was presented so far (more than 1: a presenter died or
 * freed its handle before finishing it); 0 out of range. */
OUTLIVE_API uint32_t    outlive_durable_interaction_list_presentations(const outlive_durable_interaction_list *list,
                                                                       size_t index);
/* Frees the list. NULL is ignored. */
OUTLIVE_API void        outlive_durable_interaction_list_free(outlive_durable_interaction_list *list);

/* Removes one stored interaction without presenting it. A presentation of it
 * under way (in any process) goes on; its finish then returns OUTLIVE_OK and
 * changes nothing more.
 * OUTLIVE_E_INVALID_ARGUMENT: queue or interaction_id is NULL, or the id is
 *   not a 36-character UUID.
 * OUTLIVE_E_NOT_FOUND: the queue holds no interaction with that id. */
OUTLIVE_API outlive_status outlive_durable_interactions_remove(outlive_durable_interactions *queue,
                                                               const char *interaction_id);

/* ── operations ─────────────────────────────────────────────────────────── */
/*
 * An operation queue runs asynchronous operations: an operation's run callback
 * is called on the queue's loop (inside outlive_loop_dispatch()) once all of its
 * dependencies have finished and the queue has room, and the operation is
 * finished only when outlive_operation_finish() is called for it, from any
 * thread — returning from run does not finish it.
 *
 * An operation goes through one state at a time (outlive_operation_state):
 *
 *   NEW ──outlive_operations_add──▶ WAITING ──started──▶ EXECUTING ──finish──▶ FINISHED
 *                                      └──────── cancelled before it started ────────▶┘
 *
 * Every transition is atomic; an operation is never both executing and finished.
 *
 * Dependencies may be operations of any queue, on any loop. A cancelled operation
 * that has not started never runs: it finishes (cancelled) as soon as its own
 * dependencies have finished, and counts as finished for its dependents, which
 * can see it cancelled (outlive_operation_dependency + is_cancelled). A running
 * operation that is cancelled sees outlive_operation_is_cancelled() true and must
 * still call outlive_operation_finish().
 *
 * Ownership: an outlive_operation is reference counted.
 *  - outlive_operation_new() gives you one reference. Release it with
 *    outlive_operation_free() when you no longer use the pointer — whatever
 *    happened to the operation. outlive_operation_retain() adds one.
 *  - outlive_operations_add() does not take your reference: the queue holds its
 *    own until the operation has finished and its completion callback returned.
 *    So you may free yours right after adding it if you don't need it.
 *  - The pointer passed to run stays valid until the operation is finished; the
 *    one passed to the completion callback during that call. After
 *    outlive_operation_finish() returns, use the pointer only if you hold a
 *    reference.
 *  - An operation holds its dependencies until it finishes.
 */
typedef struct outlive_operations outlive_operations;
typedef struct outlive_operation outlive_operation;

typedef enum outlive_operation_state {
    OUTLIVE_OPERATION_NEW = 0,    /* not added to a queue yet */
    OUTLIVE_OPERATION_WAITING,    /* in a queue; waiting for dependencies or room */
    OUTLIVE_OPERATION_EXECUTING,  /* run was called; not finished yet */
    OUTLIVE_OPERATION_FINISHED    /* finished, or cancelled before it started */
} outlive_operation_state;

/* The operation's work: called once, on its queue's loop thread. */
typedef void (*outlive_operation_fn)(outlive_operation *operation, void *context);

/* Called on the loop's thread once the operation has finished (after finish, or
 * after it was cancelled before it started, then without having run). cancelled
 * is outlive_operation_is_cancelled() at that moment. */
typedef void (*outlive_operation_completion_fn)(outlive_operation *operation, bool cancelled, void *context);

/* max_unfinished for no limit. */
#define OUTLIVE_OPERATIONS_UNLIMITED 0

/* Creates a queue that starts operations on `loop` and lets at most
 * max_unfinished of them be started and not finished at once
 * (OUTLIVE_OPERATIONS_UNLIMITED, 0: no limit; 1: one after the other).
 * *out receives it; free it with outlive_operations_free().
 * OUTLIVE_E_INVALID_ARGUMENT: loop or out is NULL, or max_unfinished exceeds
 * INTPTR_MAX. Any thread. */
OUTLIVE_API outlive_status outlive_operations_new(outlive_loop *loop, size_t max_unfinished,
                                                  outlive_operations **out);

/* Frees the queue. Its operations that have not started are cancelled and
 * finished (their dependents in other queues see them cancelled and may
 * start); no run, completion or drained callback of this queue is called after
 * it returns (call it on the loop's thread, or while no thread dispatches the
 * loop). Executing operations stay valid until they are finished;
 * outlive_operation_finish() on them still returns OUTLIVE_OK. Your references to
 * operations stay yours. NULL is ignored. */
OUTLIVE_API void outlive_operations_free(outlive_operations *queue);

/* Creates an operation (state NEW) that will call run(operation, context).
 * *out receives your reference (see Ownership above). release(context) (when
 * not NULL) is called once the last reference to the operation is gone, on the
 * thread that dropped it; not when this call fails.
 * OUTLIVE_E_INVALID_ARGUMENT: run or out is NULL. Any thread. */
OUTLIVE_API outlive_status outlive_operation_new(outlive_operation_fn run, void *context,
                                                 void (*release)(void *context), outlive_operation **out);

/* Adds a reference; returns operation (NULL for NULL). Any thread. */
OUTLIVE_API outlive_operation *outlive_operation_retain(outlive_operation *operation);

/* Releases one reference; the operation is destroyed (and its contexts released)
 * with the last one. It does not cancel the operation. NULL is ignored. */
OUTLIVE_API void outlive_operation_free(outlive_operation *operation);

/* Sets the completion callback (NULL: none), replacing (and releasing) a previous
 * one. Its context is released with release (when not NULL) once: after the
 * completion was called, when it is replaced, or when the operation is
 * destroyed without having completed (e.g. its queue was freed).
 * OUTLIVE_E_INVALID_ARGUMENT: operation is NULL.
 * OUTLIVE_E_STATE: the operation was added to a queue already. Any thread. */
OUTLIVE_API outlive_status outlive_operation_set_completion(outlive_operation *operation,
                                                            outlive_operation_completion_fn completion,
                                                            void *context, void (*release)(void *context));

/* operation will not start before dependency has finished (or was cancelled).
 * dependency may be in any queue, or in none yet (then operation waits until it
 * is added and finishes). Adding the same dependency twice is the same as once.
 * OUTLIVE_E_INVALID_ARGUMENT: a NULL argument, operation == dependency, or
 *   dependency depends (directly or not) on operation: a cycle. Nothing changes.
 * OUTLIVE_E_STATE: operation was added to a queue already. Nothing changes.
 * Any thread. */
OUTLIVE_API outlive_status outlive_operation_add_dependency(outlive_operation *operation,
                                                            outlive_operation *dependency);

/* Adds a NEW operation to the queue (WAITING from then on; see Ownership above).
 * An operation that is ready and not cancelled starts on the loop's thread;
 * never inside this call.
 * OUTLIVE_E_INVALID_ARGUMENT: queue or operation is NULL.
 * OUTLIVE_E_STATE: the operation was added already, to this queue or another.
 *   Nothing changes. Any thread. */
OUTLIVE_API outlive_status outlive_operations_add(outlive_operations *queue, outlive_operation *operation);

/* Finishes an EXECUTING operation: its queue may start another, its dependents
 * may start, its completion is called on the loop's thread. Any thread, including
 * inside run. OUTLIVE_E_INVALID_ARGUMENT: operation is NULL.
 * OUTLIVE_E_STATE: it is not executing — not started yet (cancel it instead) or
 *   finished already. Nothing changes. */
OUTLIVE_API outlive_status outlive_operation_finish(outlive_operation *operation);

/* Cancels an operation. NEW or WAITING: it will never run, and finishes
 * cancelled as soon as its dependencies have finished (at once if they have).
 * EXECUTING: it is marked cancelled and must still be finished. Cancelling
 * again returns OUTLIVE_OK and changes nothing.
 * OUTLIVE_E_INVALID_ARGUMENT: operation is NULL.
 * OUTLIVE_E_STATE: it finished already (it stays not cancelled). Any thread. */
OUTLIVE_API outlive_status outlive_operation_cancel(outlive_operation *operation);

/* Whether the operation was cancelled. false for NULL. Any thread. */
OUTLIVE_API bool outlive_operation_is_cancelled(const outlive_operation *operation);

/* The operation's state; OUTLIVE_OPERATION_NEW for NULL. Any thread. */
OUTLIVE_API outlive_operation_state outlive_operation_get_state(const outlive_operation *operation);

/* How many dependencies the operation holds: all it was given until it finishes,
 * none after. 0 for NULL. Any thread. */
OUTLIVE_API size_t outlive_operation_dependency_count(const outlive_operation *operation);

/* Its dependency number `index` (in the order they were added), borrowed: valid
 * while the operation has not finished (e.g. inside run). NULL when out of
 * range or operation is NULL. Any thread. */
OUTLIVE_API outlive_operation *outlive_operation_dependency(const outlive_operation *operation, size_t index);

/* Cancels every operation of the queue that has not finished (see
 * outlive_operation_cancel). Any thread. OUTLIVE_E_INVALID_ARGUMENT: queue is NULL. */
OUTLIVE_API outlive_status outlive_operations_cancel_all(outlive_operations *queue);

/* Operations added to the queue and not finished (WAITING or EXECUTING). 0 for
 * NULL. Any thread. */
OUTLIVE_API size_t outlive_operations_unfinished(const outlive_operations *queue);

/* drained(context) is called on the loop's thread each time the queue's
 * unfinished operations drop to zero, after their completions — the way to wait
 * for all. NULL removes it. A previous context is released with its release
 * callback; outlive_operations_free() releases the last one.
 * OUTLIVE_E_INVALID_ARGUMENT: queue is NULL. Any thread. */
OUTLIVE_API outlive_status outlive_operations_set_drained(outlive_operations *queue, void (*drained)(void *context),
                                                          void *context, void (*release)(void *context));

#ifdef __cplusplus
}
#endif

#endif /* OUTLIVE_H */
