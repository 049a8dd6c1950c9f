/// Versions delivered to this run's `this_run` consumers that the store does
/// not show yet.
///
/// Only its own run ever delivers a `this_run` consumer, and the consumer goes
/// when that run ends, so the version it received last needs no commit to stay
/// correct: this run remembers it, and the store is told later, in one
/// transaction for every consumer delivered meanwhile (`Signals.recordDelay`
/// after the first). A commit per delivery cost more than the delivery: it
/// also made every other handle on the store — the poster's among them — drop
/// its page cache and read its pages again on its next call.
///
/// What the store shows (`last_delivered`, listed by `consumers()`) may lag
/// by that delay in other processes; this handle's own listings add what it
/// remembers. Delivery itself reads the remembered version, so a version is
/// never delivered twice.
final class UnrecordedDeliveries {
    private let lock = Lock()
    // Guarded by `lock`: consumer id → version delivered.
    private var versions: [String: Int64] = [:]

    /// The version delivered to `consumer` that the store may not show yet.
    func version(of consumer: String) -> Int64? {
        lock.withLock { versions[consumer] }
    }

    /// Notes a delivery; true when it is the first one waiting to be recorded.
    func note(_ consumer: String, version: Int64) -> Bool {
        lock.withLock {
            let first = versions.isEmpty
            versions[consumer] = max(versions[consumer] ?? 0, version)
            return first
        }
    }

    func forget(_ consumer: String) {
        lock.withLock { _ = versions.removeValue(forKey: consumer) }
    }

    /// Everything waiting to be recorded.
    var all: [String: Int64] { lock.withLock { versions } }

    /// After `recorded` was committed: forgets what it covers (a delivery noted
    /// meanwhile stays for the next round). True when something is left.
    func recorded(_ recorded: [String: Int64]) -> Bool {
        lock.withLock {
            for (consumer, version) in recorded where versions[consumer] == version {
                versions.removeValue(forKey: consumer)
            }
            return !versions.isEmpty
        }
    }
}
