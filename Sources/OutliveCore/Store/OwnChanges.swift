/// Changes committed through this handle that no run but this handle's
/// watches: handed to the handle's own reading of the feed in memory, with
/// no feed entry written for them (on SQLite a page of each commit, on
/// PostgreSQL an insert and a look at the watchers: 15 µs of a signal post
/// to a consumer of the same handle, measured). Nothing else needs them: a
/// run that starts watching later reads the state when it subscribes (the
/// watcher's row and the writes are serialised), and one that dies loses
/// its subscribers with them.
///
/// Appended by the committing thread after the commit, then the handle's
/// own loop is woken (OwnChangeBell); taken by `Store.readFeed` before it
/// starts its read transaction, so that the snapshot it reads holds every
/// change taken.
public final class OwnChanges {
    public typealias Taken = (changes: [(topic: String, key: String)], overflowed: Bool)

    /// More pending than this (a handle whose loop is not dispatched) and
    /// they are dropped for a resync: every subscriber rereads its state, as
    /// after feed entries pruned before they were read. As many as the feed
    /// keeps (`feedRetention`), so that a resync comes no sooner than it would
    /// have with the entries written.
    static let limit = 65_536

    private let lock = Lock()
    private var pending: [(topic: String, key: String)] = []
    private var overflowed = false

    public init() {}

    public func append(_ changes: [(topic: String, key: String)]) {
        lock.withLock {
            guard !overflowed else { return }
            if pending.count + changes.count > OwnChanges.limit {
                pending = []
                overflowed = true
            } else {
                pending += changes
            }
        }
    }

    /// The next reading resyncs: a commit whose outcome is unknown (its
    /// reply lost with the connection) may hold a change that was to be
    /// handed over, and its reply never said which.
    public func requestResync() {
        lock.withLock {
            pending = []
            overflowed = true
        }
    }

    public func take() -> Taken {
        lock.withLock {
            defer {
                pending = []
                overflowed = false
            }
            return (pending, overflowed)
        }
    }

    /// A read that failed gives back what it took: the next one reads it.
    public func putBack(_ taken: Taken) {
        guard !taken.changes.isEmpty || taken.overflowed else { return }
        lock.withLock {
            if taken.overflowed || overflowed || taken.changes.count + pending.count > OwnChanges.limit {
                pending = []
                overflowed = true
            } else {
                pending = taken.changes + pending
            }
        }
    }
}
