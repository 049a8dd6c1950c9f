import COutliveSystem

/// A run is alive exactly while it holds `flock` on its lock file
/// (`runs/<run id>.lock`): the kernel releases it on any death, `kill -9`
/// included, so liveness never depends on timeouts. The file is opened for
/// writing so that its last close, at death too, raises IN_CLOSE_WRITE on the
/// runs directory, which other processes watch to see deaths at once.
final class LivenessLock {
    let path: String
    private(set) var fd: Int32

    init(directory: StoreDirectory, run: String) throws {
        path = directory.lockPath(run: run)
        // No fork(2) in another thread between the open and the registration
        // (the child closes registered lock fds): see COutlive_lock_fds_begin.
        COutlive_lock_fds_begin()
        defer { COutlive_lock_fds_end() }
        fd = try directory.openFile(path, what: "lock file", flags: O_RDWR | O_EXCL)
        // Blocking: a checker may hold the lock for an instant while it tests a file.
        while flock(fd, LOCK_EX) != 0 {
            guard COutlive_errno() == EINTR else {
                let error = OutliveError.system("cannot lock \(path)")
                close(fd)
                unlink(path)
                throw error
            }
        }
        COutlive_register_lock_fd(fd)
    }

    /// Releases the lock and removes the file. Not in a forked child: there the
    /// fd was closed after fork and the file belongs to the parent.
    func release() {
        guard fd >= 0 else { return }
        COutlive_lock_fds_begin()
        defer { COutlive_lock_fds_end() }
        COutlive_unregister_lock_fd(fd)
        unlink(path)
        close(fd)
        fd = -1
    }

    /// Whether the run that owns `path` still holds its lock.
    static func isAlive(path: String) -> Bool {
        // Never blocking on a FIFO planted in runs/: only a regular file is a lock.
        let fd = COutlive_open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return false }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return COutlive_errno() == EWOULDBLOCK
    }
}
