import COutliveSystem

/// After a commit that changed something, the writer writes the feed's new
/// sequence number into `doorbell`; every process watching it with inotify
/// wakes and reads the change feed. The fd stays open between rings (an open
/// and a close per commit cost more than the write), and is opened anew when
/// the file it points to was deleted or replaced (its link count is 0), so a
/// doorbell replaced under a running store still rings for the watchers, which
/// re-watch the new file (see ChangeWatch).
final class Doorbell {
    private let path: String
    private let lock = Lock()
    private var fd: Int32 = -1

    init(directory: StoreDirectory) {
        path = directory.doorbellPath
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    func ring(sequence: Int64) {
        lock.withLock {
            if fd >= 0 {
                // The link count only, never the times: see COutlive_link_count.
                if COutlive_link_count(fd) <= 0 {
                    close(fd)
                    fd = -1
                }
            }
            if fd < 0 {
                // Never blocking on a FIFO planted in its place; only a regular file rings.
                fd = COutlive_open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
                guard fd >= 0 else { return }  // watchers re-read the feed on their next wake-up
                var info = stat()
                guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
                    close(fd)
                    fd = -1
                    return
                }
            }
            var value = sequence
            _ = withUnsafeBytes(of: &value) { pwrite(fd, $0.baseAddress, 8, 0) }
        }
    }
}
