import COutliveSystem

/// After a commit that changed something, the writer writes the feed's new
/// sequence number into `doorbell`; every process watching it with inotify
/// wakes and reads the change feed. The file is opened per ring, so a doorbell
/// deleted or replaced under a running store still rings for the watchers,
/// which re-watch the new file (see ChangeWatch).
struct Doorbell {
    let directory: StoreDirectory

    func ring(sequence: Int64) {
        let fd = COutlive_open(directory.doorbellPath, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }  // watchers re-read the feed on their next wake-up
        var value = sequence
        _ = withUnsafeBytes(of: &value) { pwrite(fd, $0.baseAddress, 8, 0) }
        close(fd)
    }
}
