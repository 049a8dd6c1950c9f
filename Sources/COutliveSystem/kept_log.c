/* The store's write-ahead log is kept between opens and filled ahead.
 *
 * On this machine's ext4 (and on most journaling file systems) an fdatasync
 * after a write that extends a file costs about twice one after a write over
 * blocks already written: the first commits the file's new size and extents
 * to the journal as well. SQLite's WAL grows frame by frame until its first
 * checkpoint lets it start over, and SQLite deletes it when the last
 * connection closes, so every process that opens a store on its own paid the
 * growth again, commit after commit, at synchronous=FULL. PostgreSQL avoids
 * the same cost by zero-filling its WAL segments ahead (wal_init_zero) and
 * recycling them (wal_recycle); this does the same for SQLite's log.
 *
 * The "outlive-kept-log" VFS is SQLite's unix VFS with one method changed: the delete
 * of a "-wal" file. SQLite deletes the log only once a checkpoint copied all
 * of it into the database and synced the database, holding an exclusive lock
 * on the database file; its content is then of no use. Instead of unlinking
 * the file, the delete clears its 32-byte header (the next open finds no
 * valid header, so no frame of it is ever read again, as with a deleted file)
 * and cuts it to the kept size. After a crash before the cleared header
 * reached the disk, the old header and frames are read again on the next open:
 * frames whose content the database already holds, as after a crash before an
 * unlink reached the disk. SQLITE_FCNTL_PERSIST_WAL is not the same: it keeps
 * the frames valid, so every open would read them all back and copy them
 * into the database again.
 *
 * COutlive_sqlite3_fill_log writes zeros from the log's end to the kept size
 * and syncs them, called with the store's write lock held (no other
 * connection writes the log then). Zero frames fail their checksums: SQLite's
 * recovery stops at the first one as it stops at the end of a file. */
#include "COutliveSystem.h"

static sqlite3_vfs kept_log_vfs;
static int (*unix_delete)(sqlite3_vfs *, const char *, int);
static long long kept_log_bytes;
static pthread_once_t kept_log_once = PTHREAD_ONCE_INIT;
static int kept_log_registered = SQLITE_ERROR;

static bool is_log(const char *path) {
    size_t length = strlen(path);
    return length > 4 && strcmp(path + length - 4, "-wal") == 0;
}

static int keep_log_on_delete(sqlite3_vfs *vfs, const char *path, int sync_directory) {
    if (is_log(path)) {
        int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
            struct stat info;
            static const unsigned char cleared[32];
            bool kept = fstat(fd, &info) == 0 && S_ISREG(info.st_mode)
                && (info.st_size < (off_t)sizeof cleared || pwrite(fd, cleared, sizeof cleared, 0) == (ssize_t)sizeof cleared);
            /* A larger log (readers held it from starting over) shrinks to the
             * kept size; a failure to cut it leaves zeros or dead frames. */
            if (kept && info.st_size > kept_log_bytes) (void)ftruncate(fd, kept_log_bytes);
            close(fd);
            if (kept) return SQLITE_OK;
        }
    }
    return unix_delete(vfs, path, sync_directory);
}

static void register_kept_log_vfs(void) {
    sqlite3_vfs *unix_vfs = sqlite3_vfs_find("unix");
    if (unix_vfs == NULL) return;
    kept_log_vfs = *unix_vfs;
    kept_log_vfs.zName = COUTLIVE_KEPT_LOG_VFS;
    kept_log_vfs.pNext = NULL;
    unix_delete = unix_vfs->xDelete;
    kept_log_vfs.xDelete = keep_log_on_delete;
    kept_log_registered = sqlite3_vfs_register(&kept_log_vfs, 0);
}

int COutlive_sqlite3_register_kept_log(long long kept_bytes) {
    /* The size is the same constant on every call (SQLiteBackend.keptLogBytes). */
    __atomic_store_n(&kept_log_bytes, kept_bytes, __ATOMIC_RELAXED);
    pthread_once(&kept_log_once, register_kept_log_vfs);
    return kept_log_registered;
}

int COutlive_sqlite3_fill_log(const char *path, long long kept_bytes) {
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return errno;
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        int failure = errno ? errno : EINVAL;
        close(fd);
        return failure;
    }
    off_t start = info.st_size, at = start;
    static unsigned char zeros[256 * 1024];  /* never written: .bss, not the library's size */
    int failure = 0;
    while (at < kept_bytes) {
        size_t chunk = (size_t)(kept_bytes - at) < sizeof zeros ? (size_t)(kept_bytes - at) : sizeof zeros;
        ssize_t written = pwrite(fd, zeros, chunk, at);
        if (written <= 0) { failure = written < 0 ? errno : EIO; break; }
        at += written;
    }
    if (failure == 0 && at > start && fdatasync(fd) != 0) failure = errno;
    /* A fill that failed (a full disk) gives its space back: the log grows as SQLite writes it. */
    if (failure != 0) (void)ftruncate(fd, start);
    close(fd);
    return failure;
}
