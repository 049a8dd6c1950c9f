/* C shims for OutliveCore: system headers Swift's Glibc module does not cover
 * well, and the few helpers that are simpler in C (thread-local storage,
 * variadic-free wrappers). Every symbol is prefixed COutlive_ and stays local
 * to liboutlive.so (see Sources/Outlive/exports.map). */
#ifndef COUTLIVE_SYSTEM_H
#define COUTLIVE_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sqlite3.h>
#include <ffi.h>
#include "COutliveLibpq.h"

/* The calling thread's message for its last failing call; never NULL. */
const char *COutlive_last_error(void);
/* Copies message (truncated to the buffer on a UTF-8 boundary). */
void COutlive_set_last_error(const char *message);

/* errno as an lvalue-free read, and a reset. */
int  COutlive_errno(void);
void COutlive_set_errno(int value);

/* open(2) with a mode, which Swift cannot call as a variadic. */
int COutlive_open(const char *path, int flags, mode_t mode);

/* The link count of an open file, or -1 (errno set). statx(2) asking for the
 * link count only: fstat(2) also asks for the times, and on a file system with
 * multigrain timestamps (ext4, xfs, btrfs since Linux 6.13) a file whose times
 * were asked for gets a fine-grained time — an inode update — on its next
 * write, where it otherwise keeps the coarse tick's. */
long COutlive_link_count(int fd);

/* OUTLIVE_HANDLER_MAGIC and OUTLIVE_HANDLER_DESCRIPTOR_VERSION of outlive.h
 * (shims.c, which also asserts the descriptor's layout at build time). */
uint64_t COutlive_handler_magic(void);
uint32_t COutlive_handler_descriptor_version(void);

/* SQLITE_TRANSIENT / SQLITE_STATIC are macros of function-pointer casts. */
int COutlive_sqlite3_bind_blob_static(sqlite3_stmt *statement, int index, const void *bytes, int size);
int COutlive_sqlite3_bind_text_static(sqlite3_stmt *statement, int index, const char *text, int size);

/* SQLite's defences for an untrusted database file (sqlite3_db_config is
 * variadic): defensive mode (no writable_schema, no shadow-table writes), an
 * untrusted schema (functions with side effects never run from triggers,
 * views or indexes), views disabled (Outlive makes none), and cell size
 * checks. SQLITE_OK or the first failing result. */
int COutlive_sqlite3_defend(sqlite3 *db);

/* A busy handler that waits up to timeout_ms, trying again within 4 ms of any
 * release (SQLite's sleeps up to 100 ms between tries; see shims.c). */
int COutlive_sqlite3_busy_wait(sqlite3 *db, int timeout_ms);

/* Checkpoints paced by the log's growth, in place of SQLite's automatic one
 * (which, once the log holds its 1,000 frames, runs after every commit until
 * the log can start over; see shims.c and docs/store.md). The caller owns the
 * state and keeps it until the connection is closed. */
typedef struct {
    int first;                /* frames in the log before the first checkpoint */
    int step;                 /* frames the log must grow by before the next one */
    int last;                 /* the log's frames at this connection's last checkpoint */
    unsigned long long started; /* checkpoints this connection started */
} COutlive_checkpoint_pacing;
void COutlive_sqlite3_pace_checkpoints(sqlite3 *db, COutlive_checkpoint_pacing *pacing);

/* The store's log kept between opens and filled ahead (see kept_log.c).
 * Registers, once per process, the VFS of that name: SQLite's unix VFS whose
 * delete of a "-wal" file clears the file's header and cuts it to kept_bytes
 * instead of unlinking it. SQLITE_OK, or SQLite's failure to register it. */
#define COUTLIVE_KEPT_LOG_VFS "outlive-kept-log"
int COutlive_sqlite3_register_kept_log(long long kept_bytes);
/* Writes zeros from the end of the log at path up to kept_bytes and syncs
 * them; only with the store's write lock held. 0, or the errno of the failure
 * (the file is then cut back to its size before). */
int COutlive_sqlite3_fill_log(const char *path, long long kept_bytes);

/* Fork safety. A forked child must neither use its parent's store handles nor
 * keep their liveness locks open (they would make a dead parent look alive).
 * Lock fds registered here are closed in the child right after fork(2), and the
 * fork generation, which handles compare with the one they were opened in, is
 * incremented there. A lock file is opened, locked and registered between
 * COutlive_lock_fds_begin and _end: fork(2) waits for _end (pthread_atfork), so
 * a fork in another thread can never copy an unregistered lock fd into a child,
 * where it would keep the new run alive after its process died. */
void     COutlive_lock_fds_begin(void);
void     COutlive_lock_fds_end(void);
/* Only between COutlive_lock_fds_begin and _end (unregister, then close). */
void     COutlive_register_lock_fd(int fd);
void     COutlive_unregister_lock_fd(int fd);
uint64_t COutlive_fork_generation(void);
/* How many forks this process made (counted in the parent, by pthread_atfork):
 * a task completion handed to a child by fork may have been sent there. */
uint64_t COutlive_parent_forks(void);
/* getpid(), without a system call on each use: cached in a page that a child
 * made by fork() or by a clone(2) without CLONE_VM finds zeroed
 * (MADV_WIPEONFORK, Linux 4.14; where it is refused, every call is a
 * getpid()). A CLONE_VM child (vfork, posix_spawn) shares the parent's
 * memory, and gets the parent's id until it execs. */
pid_t    COutlive_process_id(void);
/* SQLite's data version of the main database (SQLITE_FCNTL_DATA_VERSION);
 * false when SQLite does not give it. */
bool     COutlive_sqlite3_data_version(sqlite3 *db, uint32_t *out);
/* 64 random bits (getrandom(2)), from a per-thread buffer refilled 64 words at
 * a time and after a fork (a child never draws its parent's). */
uint64_t COutlive_random64(void);

/* A per-thread marker of the transaction the thread is inside, so that a store
 * entered again from its own transaction callback fails instead of deadlocking. */
void *COutlive_current_transaction(void);
void  COutlive_set_current_transaction(void *owner);

#endif
