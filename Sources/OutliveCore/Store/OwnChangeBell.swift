import COutliveSystem

/// Wakes this handle's own loop after a commit whose feed entries only this
/// handle's run watches. The doorbell would wake every process of the store
/// (and costs a link-count check and a file write, 2-4 µs of a commit at
/// NORMAL); this is one eventfd write, and none while a wake-up is pending:
/// the loop's dispatch reads the whole feed after `drain`, so commits made
/// before it are read with the first.
final class OwnChangeBell {
    let fd: Int32
    private let lock = Lock()
    private var pending = false

    init() throws {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw OutliveError.system("eventfd") }
    }

    deinit { close(fd) }

    /// After the commit (any thread).
    func ring() {
        let first = lock.withLock { () -> Bool in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    /// Before the feed is read (the loop's thread). A commit after this rings
    /// again; one before it is in what the caller reads next.
    func drain() {
        lock.withLock { pending = false }
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { read(fd, $0.baseAddress, 8) }
    }
}
