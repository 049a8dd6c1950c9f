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
///   (Waking a group's members with one futex system call instead, a word
///   they share and a bit each, made 8 threads about 3 % faster at FULL but
///   5 % slower at NORMAL.)
/// - A member looks for its semaphore's post, yielding its CPU between looks,
///   for up to `spinNanoseconds` before it sleeps on it. A thread asleep in
///   the kernel is woken by the leader's system call and, on an idle CPU of
///   a virtual machine, by an interrupt to it: tens of µs before it runs,
///   spent by each member of every group, in turn, on the path to the next
///   group's COMMIT (a group of 8 at FULL spent about 70 µs between its
///   BEGIN and its COMMIT, 43 µs with the members looking). A member that
///   looks is posted without a system call, and runs at once. It costs CPU
///   only while the member's call waits for a commit, and yields it to any
///   other thread that wants it; past the budget it sleeps. A member does not
///   look at all when the last COMMIT took longer than the budget (a slow
///   disk's fsync): it would wait past it anyway, and there the wake-up is
///   small beside the wait. Measured in
///   docs/store.md ("Group commit: a waiting call looks before it sleeps").
///
/// Gathering: the members a group releases come back one by one, and the
/// first would otherwise commit alone while the rest queue behind it (groups
/// of 1, 7, 1, 7 for 8 busy threads). So a leader that finds fewer writes
/// queued than the last group held waits for them, at most half the time the
/// last COMMIT took (its fsync, not the members' statements): never more than
/// a fraction of the commit it may save, and nothing for a thread writing
/// alone (its last group was itself). It waits inside the group's
/// transaction, running the statements of the writes queued so far while the
/// others come back, so that once the last is queued only its statements and
/// the COMMIT remain (the members' statements were a tenth of 8 threads' time
/// at FULL, spent after the wait). It yields its CPU before it sleeps (at
/// most `yieldNanoseconds` a group): on a busy machine the writes it waits
/// for need that CPU to come back, and a leader asleep would add its own
/// wake-up to the last one's.
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

        /// When `looking`, yields its CPU, looking for the post, for up to
        /// `spinNanoseconds` before it sleeps (see the type's comment).
        fileprivate func sleep(looking: Bool) {
            if looking {
                let until = Clock.monotonicNanoseconds() + GroupCommit.spinNanoseconds
                repeat {
                    if sem_trywait(wakeup) == 0 { return }
                    sched_yield()
                } while Clock.monotonicNanoseconds() < until
            }
            while sem_wait(wakeup) != 0 {}
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when a gathering leader's target is queued.
    private let gathered: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`.
    @exclusivity(unchecked) private var queue: [Member] = []
    @exclusivity(unchecked) private var leading = false
    @exclusivity(unchecked) private var lastGroupSize = 1
    /// How long the last COMMIT took (its fsync, mostly).
    private var commitNanoseconds: Int64 = 0
    /// The group size a gathering leader waits for, and until when.
    private var gatherTarget = 0
    private var gatherDeadline: Int64 = 0
    private var yieldDeadline: Int64 = 0
    /// A gathering leader sleeps until a write is queued.
    private var gatherWaiting = false

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
    /// leader's thread, never for two groups at once. When the leader gathers,
    /// `commit` gets `more`: it runs the members it was given, then calls
    /// `more` for those that queued meanwhile (waiting for them while the
    /// gathering lasts) and runs them in the same transaction, until `more`
    /// returns none; then it commits. Without `more` the group is complete.
    func submit(_ member: Member, commit: ([Member], (() -> [Member])?) -> Int64) {
        pthread_mutex_lock(mutex)
        if leading {
            queue.append(member)
            if gatherWaiting {
                gatherWaiting = false
                pthread_cond_signal(gathered)
            }
            let looking = commitNanoseconds < GroupCommit.spinNanoseconds
            if looking { lookingCount += 1 }
            pthread_mutex_unlock(mutex)
            member.sleep(looking: looking)
            if member.state == .done { return }
            pthread_mutex_lock(mutex)
        } else {
            leading = true
        }
        // The lead: this member first, then every write queued until now, and
        // while it gathers, those that queue as it runs these.
        var group = [member] + queue
        let gathering = group.count < lastGroupSize && commitNanoseconds >= GroupCommit.worthGrouping
        if gathering {
            gatherTarget = lastGroupSize
            let now = Clock.monotonicNanoseconds()
            gatherDeadline = now + min(commitNanoseconds / 2, GroupCommit.longestGather)
            yieldDeadline = min(gatherDeadline, now + GroupCommit.yieldNanoseconds)
        }
        var led = 0
        while true {
            queue.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(mutex)

            let took = gathering && led == 0 ? commit(group, { self.gather(into: &group) }) : commit(group, nil)

            pthread_mutex_lock(mutex)
            lastGroupSize = group.count
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
    /// How long a gathering leader yields its CPU before it sleeps (within
    /// the gathering's time): the most it spins, per group, when nothing
    /// else would run.
    static let yieldNanoseconds: Int64 = 200_000
    /// How long a member looks for its post, yielding, before it sleeps:
    /// about a commit with an fsync on a fast disk, and many without one.
    /// Also the longest last COMMIT after which members look at all.
    static let spinNanoseconds: Int64 = 250_000

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

    /// Members that looked for their post before they slept (for tests).
    private var lookingCount = 0
    var lookedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return lookingCount
    }

    /// Writes waiting for a group (for tests that line up a group).
    var queuedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queue.count
    }

    /// The writes queued since the leader last looked, appended to `group`
    /// too; waits for one when none is, until as many writes are in the group
    /// as the last group held or the gathering's time is up (then returns none).
    private func gather(into group: inout [Member]) -> [Member] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var until = timespec(tv_sec: Int(gatherDeadline / 1_000_000_000), tv_nsec: Int(gatherDeadline % 1_000_000_000))
        // Yielding before sleeping made 8 threads on 2 cores 8 % to 12 %
        // faster at FULL (see the type's comment).
        while queue.isEmpty && group.count < gatherTarget && Clock.monotonicNanoseconds() < yieldDeadline {
            pthread_mutex_unlock(mutex)
            sched_yield()
            pthread_mutex_lock(mutex)
        }
        while queue.isEmpty && group.count < gatherTarget {
            gatherWaiting = true
            if pthread_cond_timedwait(gathered, mutex, &until) == ETIMEDOUT { break }
        }
        gatherWaiting = false
        guard group.count < gatherTarget, !queue.isEmpty else { return [] }
        let arrived = queue
        queue.removeAll(keepingCapacity: true)
        group += arrived
        return arrived
    }
}
