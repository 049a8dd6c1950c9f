import COutliveSystem
import Glibc

/// Concurrent writes of one store handle (threads of one process) committed
/// together: one transaction and one fsync for all of them instead of one
/// each. No thread of its own: the first caller to find no group under way
/// becomes the leader and commits the writes queued at that moment, its own
/// first; the others sleep until a leader has committed theirs (their change
/// is durable when they return) or hands them the lead for the writes that
/// queued meanwhile. A lone caller leads at once: nobody waits for company.
///
/// A thread woken costs two context switches, tens of µs on a busy machine:
/// more than a commit without an fsync (`synchronous=NORMAL`, about 15 µs). So
/// no wake-up may stand between two commits:
/// - After a COMMIT that took less than `worthGrouping` (no fsync), the leader
///   commits the writes queued meanwhile itself, up to `groupsPerLead` groups,
///   instead of waking one of their threads to lead them (a hand-off per
///   commit made 2 threads at NORMAL a third as fast as one). After one with
///   an fsync it hands the lead on: the hand-off costs little beside the next
///   fsync, and its own thread's next write can join that group.
/// - It gathers (below) only after a COMMIT with an fsync.
/// - A member sleeps on a semaphore of its own and returns without taking the
///   mutex again: the members a group releases do not queue on the mutex.
///
/// Gathering: the members a group releases come back one by one, and the
/// first would otherwise commit alone while the rest queue behind it (groups
/// of 1, 7, 1, 7 for 8 busy threads). So a leader that finds fewer writes
/// queued than the last group held waits for them, at most half the time the
/// last COMMIT took (its fsync, not the members' statements): never more than
/// a fraction of the commit it may save, and nothing for a thread writing
/// alone (its last group was itself).
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
        /// Written under the mutex before the member is woken, read by its
        /// owner after: the semaphore orders the two.
        fileprivate var state = State.queued
        private let wakeup: UnsafeMutablePointer<sem_t>

        fileprivate enum State { case queued, leading, done }

        init(_ work: @escaping (StoreTransaction) throws -> Void) {
            self.work = work
            wakeup = .allocate(capacity: 1)
            sem_init(wakeup, 0, 0)
        }

        deinit {
            sem_destroy(wakeup)
            wakeup.deallocate()
        }

        func run(_ transaction: StoreTransaction) throws {
            guard let work else { return }
            try work(transaction)
        }

        /// Posted once per member: when it is done, or handed the lead.
        fileprivate func wake() { sem_post(wakeup) }

        fileprivate func sleep() {
            while sem_wait(wakeup) != 0 {}
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when a gathering leader's target is queued.
    private let gathered: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`.
    private var queue: [Member] = []
    private var leading = false
    private var lastGroupSize = 1
    /// How long the last COMMIT took (its fsync, mostly).
    private var commitNanoseconds: Int64 = 0
    /// Writes a gathering leader waits for (0: nobody gathers).
    private var gatherTarget = 0

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        gathered = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(gathered, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(gathered)
        gathered.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Returns once `member` was committed (its `failure` says how), by this
    /// thread as leader or by another. `commit` commits a group, setting each
    /// member's `failure`, and returns how long its COMMIT took; it runs on the
    /// leader's thread, never for two groups at once.
    func submit(_ member: Member, commit: ([Member]) -> Int64) {
        pthread_mutex_lock(mutex)
        if leading {
            queue.append(member)
            if gatherTarget > 0 && queue.count >= gatherTarget { pthread_cond_signal(gathered) }
            pthread_mutex_unlock(mutex)
            member.sleep()
            if member.state == .done { return }
            pthread_mutex_lock(mutex)
        } else {
            leading = true
        }
        // The lead: this member first, then every write queued until now.
        if queue.count + 1 < lastGroupSize && commitNanoseconds >= GroupCommit.worthGrouping { gather() }
        var group = [member] + queue
        var led = 0
        while true {
            queue.removeAll(keepingCapacity: true)
            lastGroupSize = group.count
            pthread_mutex_unlock(mutex)

            let took = commit(group)

            pthread_mutex_lock(mutex)
            commitNanoseconds = took
            for other in group {
                other.work = nil
                other.state = .done
            }
            led += 1
            // Writes queued during this commit form the next group. After a
            // commit without an fsync this thread leads it (a few groups at
            // most: its own caller waits meanwhile); after one with an fsync,
            // the first of them does, and this thread's next write can join.
            let more = !queue.isEmpty && took < GroupCommit.worthGrouping && led < GroupCommit.groupsPerLead
            var next: Member?
            if queue.isEmpty {
                leading = false
            } else if !more {
                next = queue.removeFirst()
                next?.state = .leading
            }
            pthread_mutex_unlock(mutex)
            // Woken after the unlock: `group` keeps each member alive.
            for other in group where other !== member { other.wake() }
            next?.wake()
            guard more else { return }
            // Only the leader takes from the queue: it still holds the writes
            // seen above, and those queued while it woke the others.
            pthread_mutex_lock(mutex)
            group = queue
        }
    }

    /// A COMMIT shorter than this made no fsync: waking a thread costs about
    /// as much as it would save.
    static let worthGrouping: Int64 = 50_000
    /// Groups a leader commits in a row before it hands the lead on.
    static let groupsPerLead = 8
    static let longestGather: Int64 = 2_000_000

    /// The lone caller's way in, without a member: true when no group is
    /// under way and the last one was a single write (so `submit` would lead
    /// at once and gather nothing); the caller then commits its write itself,
    /// alone, and must call `endAlone()` after. A member's semaphore, the
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
    /// `commitNanoseconds` keeps the last group's time, which only the lead
    /// after a group of several uses.)
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
        next?.wake()
    }

    /// Writes waiting for a group (for tests that line up a group).
    var queuedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queue.count
    }

    /// Waits (holding `mutex` between waits) until as many writes are queued
    /// as the last group held beside the leader's, or half the last commit's
    /// time passed.
    private func gather() {
        let deadline = Clock.monotonicNanoseconds() + min(commitNanoseconds / 2, GroupCommit.longestGather)
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        gatherTarget = lastGroupSize - 1
        while queue.count < gatherTarget {
            if pthread_cond_timedwait(gathered, mutex, &until) == ETIMEDOUT { break }
        }
        gatherTarget = 0
    }
}
