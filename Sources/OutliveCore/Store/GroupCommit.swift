import COutliveSystem

/// Concurrent writes of one store handle (threads of one process) committed
/// together: one transaction and one fsync for all of them instead of one
/// each. No thread of its own: the first caller to find no group under way
/// becomes the leader and commits the writes queued at that moment, its own
/// first; the others wait on a condition of their own until the leader has
/// committed theirs (their change is durable when they return) or hands them
/// the lead for the writes that queued meanwhile. A lone caller leads at once:
/// nobody waits for company.
///
/// Except briefly after a group of several: the members it releases come back
/// one by one, and the first would otherwise commit alone while the rest queue
/// behind it (groups of 1, 7, 1, 7 for 8 busy threads). So a leader that finds
/// fewer writes queued than the last group held waits for them, at most half
/// the time the last commit took: never more than a fraction of the commit it
/// may save, nothing where a commit costs no fsync, and nothing for a thread
/// writing alone (its last group was itself).
///
/// A write's body runs on the leader's thread, so only bodies that do store
/// work alone — no user callback, no lock their caller may hold — are grouped
/// (`StoreBackend.groupedWrite`). The leader may run a body again when its
/// first run was undone by another member's failure (see SQLiteBackend).
final class GroupCommit {
    /// One queued write, owned by the caller that waits for it.
    final class Member {
        /// Runs the write's body in a transaction; nil once the leader is done
        /// with it (the caller's non-escaping closure must not outlive its call).
        fileprivate(set) var work: ((StoreTransaction) throws -> Void)?
        /// Set by the leader: nil on success.
        var failure: Error?
        fileprivate var state = State.queued
        fileprivate let condition: UnsafeMutablePointer<pthread_cond_t>

        fileprivate enum State { case queued, leading, done }

        init(_ work: @escaping (StoreTransaction) throws -> Void) {
            self.work = work
            condition = .allocate(capacity: 1)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }

        func run(_ transaction: StoreTransaction) throws {
            guard let work else { return }
            try work(transaction)
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Guarded by `mutex`.
    private var queue: [Member] = []
    private var leading = false
    private var lastGroupSize = 1
    /// Half the duration of the last commit: the longest a leader gathers.
    private var gatherNanoseconds: Int64 = 0
    /// The leader gathering, woken once `gatherTarget` writes are queued.
    private var gatherer: Member?
    private var gatherTarget = 0

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Returns once `member` was committed (its `failure` says how), by this
    /// thread as leader or by another. `commit` commits a group, setting each
    /// member's `failure`; it runs on the leader's thread, never for two
    /// groups at once.
    func submit(_ member: Member, commit: ([Member]) -> Void) {
        pthread_mutex_lock(mutex)
        if leading {
            queue.append(member)
            if let gatherer, queue.count >= gatherTarget { pthread_cond_signal(gatherer.condition) }
            while member.state == .queued { pthread_cond_wait(member.condition, mutex) }
            if member.state == .done {
                pthread_mutex_unlock(mutex)
                return
            }
        } else {
            leading = true
        }
        if queue.count + 1 < lastGroupSize && gatherNanoseconds > 0 { gather(as: member) }
        // The lead: this member first, then every write queued until now.
        let group = [member] + queue
        queue.removeAll(keepingCapacity: true)
        lastGroupSize = group.count
        pthread_mutex_unlock(mutex)

        let started = Clock.monotonicNanoseconds()
        commit(group)
        let took = Clock.monotonicNanoseconds() - started

        pthread_mutex_lock(mutex)
        gatherNanoseconds = min(took / 2, GroupCommit.longestGather)
        for other in group {
            other.work = nil
            other.state = .done
        }
        // Writes queued during this commit form the next group, led by the first of them.
        var next: Member?
        if queue.isEmpty {
            leading = false
        } else {
            next = queue.removeFirst()
            next?.state = .leading
        }
        pthread_mutex_unlock(mutex)
        // Signalled after the unlock, so that no woken thread sleeps again on
        // the mutex; `group` keeps each member (and its condition) alive.
        for other in group where other !== member { pthread_cond_signal(other.condition) }
        if let next { pthread_cond_signal(next.condition) }
    }

    static let longestGather: Int64 = 2_000_000

    /// The lone caller's way in, without a member: true when no group is
    /// under way and the last one was a single write (so `submit` would lead
    /// at once and gather nothing); the caller then commits its write itself,
    /// alone, and must call `endAlone()` after. A member's condition, the
    /// group's array and the closure that carries the write cost a tenth of a
    /// signal post at NORMAL, for the case that needs none of them. False:
    /// the caller `submit`s.
    func beginAlone() -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !leading, lastGroupSize == 1 else { return false }
        leading = true
        return true
    }

    /// After a `beginAlone()` write committed (or failed): writes queued
    /// meanwhile form the next group, led by the first of them, as after a
    /// group. (`lastGroupSize` stays 1, so no leader gathers after it, and
    /// `gatherNanoseconds` is not needed until a group of several sets it.)
    func endAlone() {
        pthread_mutex_lock(mutex)
        var next: Member?
        if queue.isEmpty {
            leading = false
        } else {
            next = queue.removeFirst()
            next?.state = .leading
        }
        pthread_mutex_unlock(mutex)
        if let next { pthread_cond_signal(next.condition) }
    }

    /// Writes waiting for a group (for tests that line up a group).
    var queuedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queue.count
    }

    /// Waits (holding `mutex` between waits) until as many writes are queued as
    /// the last group held, or the gathering time passed.
    private func gather(as member: Member) {
        let deadline = Clock.monotonicNanoseconds() + gatherNanoseconds
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        gatherer = member
        gatherTarget = lastGroupSize - 1
        while queue.count < gatherTarget {
            if pthread_cond_timedwait(member.condition, mutex, &until) == ETIMEDOUT { break }
        }
        gatherer = nil
    }
}
