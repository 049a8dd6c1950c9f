import COutliveSystem

/// A plain pthread mutex. The core uses no Swift Concurrency, and this keeps
/// closures and non-Sendable state free of `sending` rules that Mutex<T> imposes.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// The calling thread, compared with pthread_equal.
public struct ThreadIdentity: Equatable {
    let thread: pthread_t
    public static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }
    public static func == (a: ThreadIdentity, b: ThreadIdentity) -> Bool { pthread_equal(a.thread, b.thread) != 0 }
}
