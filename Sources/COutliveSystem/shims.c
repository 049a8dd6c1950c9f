#include "COutliveSystem.h"
#include <string.h>
#include <stdarg.h>
#include <sys/mman.h>

#define COUTLIVE_ERROR_CAPACITY 1024
static _Thread_local char error_buffer[COUTLIVE_ERROR_CAPACITY];
static _Thread_local bool error_set;

const char *COutlive_last_error(void) {
    return error_set ? error_buffer : "no error";
}

void COutlive_set_last_error(const char *message) {
    if (message == NULL) { error_set = false; return; }
    size_t length = strlen(message);
    if (length >= COUTLIVE_ERROR_CAPACITY) {
        length = COUTLIVE_ERROR_CAPACITY - 1;
        /* Never cut a UTF-8 sequence in half: step back over continuation bytes. */
        while (length > 0 && ((unsigned char)message[length] & 0xC0) == 0x80) length--;
    }
    memcpy(error_buffer, message, length);
    error_buffer[length] = '\0';
    error_set = true;
}

int COutlive_errno(void) { return errno; }
void COutlive_set_errno(int value) { errno = value; }

int COutlive_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/* The system call itself: glibc declares statx() only under _GNU_SOURCE. */
#include <linux/stat.h>
#include <sys/syscall.h>
long COutlive_link_count(int fd) {
    struct statx info;
    const int empty_path = 0x1000, dont_sync = 0x4000;  /* AT_EMPTY_PATH, AT_STATX_DONT_SYNC */
    if (syscall(SYS_statx, fd, "", empty_path | dont_sync, STATX_NLINK, &info) != 0) return -1;
    return (info.stx_mask & STATX_NLINK) ? (long)info.stx_nlink : -1;
}

/* The handler descriptor of outlive.h, for the core: its magic and version
 * (macros Swift cannot import), and the build-time proof that its layout is
 * the 64-bit one the header documents — the ABI that the descriptors in every
 * compiled handler library already have. (Here rather than in a file of its
 * own: valgrind's DWARF 5 reader gives up on a second C unit in the library.) */
#include <stddef.h>
#include "../../include/outlive.h"

_Static_assert(offsetof(outlive_handler_descriptor, magic) == 0, "outlive_handler_descriptor.magic moved");
_Static_assert(offsetof(outlive_handler_descriptor, version) == 8, "outlive_handler_descriptor.version moved");
_Static_assert(offsetof(outlive_handler_descriptor, name) == 16, "outlive_handler_descriptor.name moved");
_Static_assert(offsetof(outlive_handler_descriptor, signature) == 24, "outlive_handler_descriptor.signature moved");
_Static_assert(offsetof(outlive_handler_descriptor, function) == 32, "outlive_handler_descriptor.function moved");
_Static_assert(offsetof(outlive_handler_descriptor, resolver) == 40, "outlive_handler_descriptor.resolver moved");
_Static_assert(sizeof(outlive_handler_descriptor) == 48, "outlive_handler_descriptor changed size");

uint64_t COutlive_handler_magic(void) { return OUTLIVE_HANDLER_MAGIC; }
uint32_t COutlive_handler_descriptor_version(void) { return OUTLIVE_HANDLER_DESCRIPTOR_VERSION; }

int COutlive_sqlite3_bind_blob_static(sqlite3_stmt *statement, int index, const void *bytes, int size) {
    return sqlite3_bind_blob(statement, index, bytes, size, SQLITE_STATIC);
}
int COutlive_sqlite3_bind_text_static(sqlite3_stmt *statement, int index, const char *text, int size) {
    return sqlite3_bind_text(statement, index, text, size, SQLITE_STATIC);
}

bool COutlive_sqlite3_data_version(sqlite3 *db, uint32_t *out) {
    /* NULL names the main database without comparing names (twice a post). */
    unsigned int version = 0;
    if (sqlite3_file_control(db, NULL, SQLITE_FCNTL_DATA_VERSION, &version) != SQLITE_OK) return false;
    *out = version;
    return true;
}

int COutlive_sqlite3_defend(sqlite3 *db) {
    int result = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    if (result == SQLITE_OK) result = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    if (result == SQLITE_OK) result = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
    if (result == SQLITE_OK) result = sqlite3_exec(db, "PRAGMA cell_size_check=ON", NULL, NULL, NULL);
    return result;
}

/* SQLite's own busy handler (sqlite3_busy_timeout) sleeps up to 100 ms between
 * tries. Between processes that write back to back, a waiter asleep that long
 * loses the lock again and again to writers that never sleep: in the load bench
 * (8 processes, FULL) single calls waited 3-5 s and the rounds of the
 * processes differed 15-fold. This one tries again after 50 µs, doubling up to
 * 4 ms. Measured side by side (bench/load_bench.c, 15 s): a 1 ms cap gave the
 * longest call 150 ms but half the throughput (each interleaving of writers
 * costs them their page caches); 4 ms gave ~300 ms at ~0.7 of SQLite's
 * throughput; 16 ms ~650 ms at ~0.75. The schedule is fixed, so the time
 * waited follows from the count: no state per wait.
 *
 * Not done: waking waiters at each release instead of letting them sleep out
 * their pause (a futex word in a file of the store, mapped by its processes,
 * each pause cut short by the next COMMIT or ROLLBACK). Measured side by side
 * (load bench, 8 processes, FULL, 30 s): the
 * longest call fell from 0.4-0.8 s to 40-140 ms, but throughput fell to ~0.9×
 * (0.6-0.9× in 15 s runs). The lock is already held 83-92% of the time (the
 * commit's fsync dominates its cycle), so little idle time is there to win;
 * and prompt hand-offs made 70% of the writes follow another process's
 * instead of 20-25% (a cold page cache each) and shrank the batches that
 * waiting builds up elsewhere (task runs, deliveries): ~2.2 write transactions
 * an operation instead of ~1.7. */
#define BUSY_FIRST_PAUSE_US 50LL
#define BUSY_LONGEST_PAUSE_US 4000LL

static long long busy_pause_us(int count) {
    return count >= 7 ? BUSY_LONGEST_PAUSE_US : (BUSY_FIRST_PAUSE_US << count) < BUSY_LONGEST_PAUSE_US
        ? BUSY_FIRST_PAUSE_US << count : BUSY_LONGEST_PAUSE_US;
}

static int busy_wait(void *timeout_ms, int count) {
    long long timeout_us = (long long)(intptr_t)timeout_ms * 1000;
    long long waited_us = 0;
    for (int i = 0; i < count && i < 7; i++) waited_us += busy_pause_us(i);
    if (count > 7) waited_us += (long long)(count - 7) * BUSY_LONGEST_PAUSE_US;
    if (waited_us >= timeout_us) return 0;
    long long pause_us = busy_pause_us(count);
    if (waited_us + pause_us > timeout_us) pause_us = timeout_us - waited_us;
    usleep((useconds_t)pause_us);
    return 1;
}

int COutlive_sqlite3_busy_wait(sqlite3 *db, int timeout_ms) {
    return sqlite3_busy_handler(db, busy_wait, (void *)(intptr_t)(timeout_ms < 0 ? 0 : timeout_ms));
}

/* SQLite's automatic checkpoint runs after each commit that leaves 1,000 frames
 * or more in the log. While other processes read, a checkpoint can copy only
 * the frames no reader still needs, and the log cannot start over, so it stays
 * above 1,000 frames and every commit of every process runs a checkpoint of the
 * few frames since the last one: two fsyncs (the log's, the database's) for
 * each commit's one. In the load bench (8 processes) that was a quarter of all
 * fsyncs. Here each connection checkpoints once the log holds `first` frames
 * and again only once it has grown by `step` frames since its last checkpoint,
 * or when the log has started over (fewer frames than then). A single writer
 * sees what SQLite's would do: its checkpoint at 1,000 frames lets the log
 * start over. Passive, as SQLite's: it waits for no reader or writer, and a
 * failure (another checkpoint under way, an I/O error) leaves the frames for
 * the next one, as SQLite's does. The hook runs in the committing call, after
 * the commit; its status is always SQLITE_OK (another would fail that commit's
 * statement). */
static int paced_checkpoint(void *context, sqlite3 *db, const char *name, int frames) {
    COutlive_checkpoint_pacing *pacing = context;
    if (frames < pacing->last) pacing->last = 0;
    if (frames >= pacing->first && frames >= pacing->last + pacing->step) {
        pacing->last = frames;
        pacing->started++;
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    return SQLITE_OK;
}

void COutlive_sqlite3_pace_checkpoints(sqlite3 *db, COutlive_checkpoint_pacing *pacing) {
    sqlite3_wal_hook(db, paced_checkpoint, pacing);
}

#define COUTLIVE_MAX_LOCK_FDS 256
static pthread_mutex_t lock_fds_mutex = PTHREAD_MUTEX_INITIALIZER;
static int lock_fds[COUTLIVE_MAX_LOCK_FDS];
static size_t lock_fd_count;
static uint64_t fork_generation;
static uint64_t parent_forks;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void prepare_fork(void) { pthread_mutex_lock(&lock_fds_mutex); }
static void parent_after_fork(void) {
    __atomic_add_fetch(&parent_forks, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock_fds_mutex);
}
static void child_after_fork(void) {
    for (size_t i = 0; i < lock_fd_count; i++) close(lock_fds[i]);
    lock_fd_count = 0;
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock_fds_mutex);
}
static void install_atfork(void) { pthread_atfork(prepare_fork, parent_after_fork, child_after_fork); }

void COutlive_lock_fds_begin(void) {
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&lock_fds_mutex);
}

void COutlive_lock_fds_end(void) { pthread_mutex_unlock(&lock_fds_mutex); }

void COutlive_register_lock_fd(int fd) {
    /* The caller holds lock_fds_mutex (COutlive_lock_fds_begin) since before it
     * opened fd, so no fork can fall between the open and this registration. */
    /* Past the capacity a child keeps that fd: it only delays the parent's death being seen. */
    if (lock_fd_count < COUTLIVE_MAX_LOCK_FDS) lock_fds[lock_fd_count++] = fd;
}

void COutlive_unregister_lock_fd(int fd) {
    /* The caller holds lock_fds_mutex until it closed fd. */
    for (size_t i = 0; i < lock_fd_count; i++) {
        if (lock_fds[i] == fd) { lock_fds[i] = lock_fds[--lock_fd_count]; break; }
    }
}

uint64_t COutlive_fork_generation(void) {
    /* Installed by the first reader (a loop, a store, a connection), not only by
     * the first lock file: a loop made before any store must see a fork too. */
    pthread_once(&atfork_once, install_atfork);
    return __atomic_load_n(&fork_generation, __ATOMIC_SEQ_CST);
}

uint64_t COutlive_parent_forks(void) {
    pthread_once(&atfork_once, install_atfork);
    return __atomic_load_n(&parent_forks, __ATOMIC_SEQ_CST);
}

static pid_t *process_id_page;
static pthread_once_t process_id_once = PTHREAD_ONCE_INIT;

static void map_process_id_page(void) {
#ifdef MADV_WIPEONFORK
    long size = sysconf(_SC_PAGESIZE);
    void *page = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return;
    if (madvise(page, (size_t)size, MADV_WIPEONFORK) != 0) {
        munmap(page, (size_t)size);
        return;
    }
    process_id_page = page;
#endif
}

pid_t COutlive_process_id(void) {
    /* Every store call checks that its handle is this process's: getpid() was
     * a system call in each (a hundredth of a message post's time). */
    pthread_once(&process_id_once, map_process_id_page);
    if (process_id_page == NULL) return getpid();
    pid_t pid = __atomic_load_n(process_id_page, __ATOMIC_RELAXED);
    if (pid == 0) {
        pid = getpid();
        __atomic_store_n(process_id_page, pid, __ATOMIC_RELAXED);
    }
    return pid;
}

uint64_t COutlive_random64(void) {
    /* A task add makes an id: a system call for each cost it more than the id. */
    static _Thread_local uint64_t words[64];
    static _Thread_local size_t left;
    static _Thread_local uint64_t generation;
    uint64_t now = COutlive_fork_generation();
    if (left == 0 || generation != now) {
        size_t filled = 0;
        while (filled < sizeof words) {
            ssize_t got = getrandom((char *)words + filled, sizeof words - filled, 0);
            if (got > 0) filled += (size_t)got;
        }
        left = sizeof words / sizeof words[0];
        generation = now;
    }
    return words[--left];
}

static _Thread_local void *current_transaction;
void *COutlive_current_transaction(void) { return current_transaction; }
void COutlive_set_current_transaction(void *owner) { current_transaction = owner; }
