import COutliveSystem

/// The executor. Every callback of the library (observers, presenters, signal
/// consumers, task handlers, interactions, operations) runs inside `dispatch`, on
/// the thread that calls it — never on a thread of the library's own.
///
/// One epoll fd carries everything that can make work due: an eventfd rung by
/// `post` from any thread, one timerfd armed for the earliest timer, and the
/// sources the stores add (their inotify doorbell watches). A host polls
/// `fileDescriptor` in its own event loop; with nothing due, nothing wakes.
public final class Loop: @unchecked Sendable {
    public typealias Work = () -> Void

    public let fileDescriptor: Int32
    private let wakeFD: Int32
    private let timerFD: Int32

    private struct Timer {
        let deadline: Int64
        let work: Work
    }

    private let lock = Lock()
    // Guarded by `lock`.
    private var posted: [Work] = []
    private var timers: [UInt64: Timer] = [:]
    private var nextTimerID: UInt64 = 1
    private var armedDeadline: Int64?
    private var sources: [Int32: Work] = [:]
    private var dispatcher: ThreadIdentity?
    private var ownThread: pthread_t?
    private var ownThreadIdentity: ThreadIdentity?
    private var stopping = false
    /// The fork generation the loop was made in. In a forked child the epoll,
    /// eventfd and timerfd are the parent's open file descriptions: waiting on
    /// them, draining them, re-arming or deregistering would take the parent's
    /// wake-ups, so the child's copy does nothing but let go of its fds.
    private let forkGeneration = COutlive_fork_generation()
    /// The pid too: a child made by a raw clone(2) runs no pthread_atfork handler.
    private let ownerPID = COutlive_process_id()

    /// Whether this loop was made in another process (before a fork).
    public var isInheritedFromParent: Bool { COutlive_fork_generation() != forkGeneration || COutlive_process_id() != ownerPID }

    /// Throws `.state` in a forked child: what runs on this loop (queues, timers)
    /// belongs to the parent.
    public func checkUsable() throws {
        if isInheritedFromParent {
            throw OutliveError.state("this loop was made before fork() in the parent process; a child process makes its own loop")
        }
    }

    public init() throws {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw OutliveError.system("epoll_create1") }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let error = OutliveError.system("eventfd")
            close(epoll)
            throw error
        }
        let timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard timer >= 0 else {
            let error = OutliveError.system("timerfd_create")
            close(epoll); close(wake)
            throw error
        }
        fileDescriptor = epoll
        wakeFD = wake
        timerFD = timer
        do {
            try watch(wake)
            try watch(timer)
        } catch {
            close(epoll); close(wake); close(timer)
            throw error
        }
    }

    deinit {
        close(fileDescriptor)
        close(wakeFD)
        close(timerFD)
    }

    private func watch(_ fd: Int32) throws {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = fd
        guard epoll_ctl(fileDescriptor, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw OutliveError.system("epoll_ctl(ADD \(fd))")
        }
    }

    // MARK: - Work from any thread

    /// Queues `work` to run in the next dispatch. Any thread.
    public func post(_ work: @escaping Work) {
        guard !isInheritedFromParent else { return }  // the parent's loop: nothing runs here
        // Work already queued was rung for, and a dispatch takes the whole
        // queue after draining the eventfd: the write (a syscall, a wake-up
        // of a dispatcher asleep) is for the first item only. A dispatch that
        // took the queue before that first ring only sees one ring more.
        let first = lock.withLock { () -> Bool in
            posted.append(work)
            return posted.count == 1
        }
        if first { ring() }
    }

    /// Runs `work` in the first dispatch after `seconds`. Any thread.
    @discardableResult
    public func schedule(after seconds: Double, _ work: @escaping Work) -> UInt64 {
        let delay = seconds.isFinite ? max(0, min(seconds, 1e9)) : 1e9
        let deadline = Clock.monotonicNanoseconds() + Int64(delay * 1e9)
        // In a forked child, re-arming would re-arm the parent's timerfd.
        guard !isInheritedFromParent else { return 0 }
        return lock.withLock {
            let id = nextTimerID
            nextTimerID += 1
            timers[id] = Timer(deadline: deadline, work: work)
            rearmLocked()
            return id
        }
    }

    /// Cancels a timer that has not run yet; returns whether it was pending.
    @discardableResult
    public func cancelTimer(_ id: UInt64) -> Bool {
        guard !isInheritedFromParent else { return false }
        return lock.withLock {
            guard timers.removeValue(forKey: id) != nil else { return false }
            rearmLocked()
            return true
        }
    }

    /// Adds a readable fd whose handler runs in dispatch when it is readable.
    public func addSource(_ fd: Int32, _ handler: @escaping Work) throws {
        if isInheritedFromParent {
            throw OutliveError.state("this loop was made before fork(); a child process must make its own loop")
        }
        try lock.withLock {
            try watch(fd)
            sources[fd] = handler
        }
    }

    public func removeSource(_ fd: Int32) {
        // EPOLL_CTL_DEL on the epoll instance a child shares with its parent
        // would stop the parent's wake-ups for good.
        guard !isInheritedFromParent else { return }
        lock.withLock {
            if sources.removeValue(forKey: fd) != nil {
                epoll_ctl(fileDescriptor, EPOLL_CTL_DEL, fd, nil)
            }
        }
    }

    /// True on the thread currently inside `dispatch` (callbacks use it to run
    /// nested work at once instead of posting it).
    public var isDispatchingThread: Bool {
        lock.withLock { dispatcher == ThreadIdentity.current }
    }

    private func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    private func drain(_ fd: Int32) {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { read(fd, $0.baseAddress, 8) }
    }

    private func rearmLocked() {
        let earliest = timers.values.lazy.map(\.deadline).min()
        guard earliest != armedDeadline else { return }
        armedDeadline = earliest
        var spec = itimerspec()
        if let earliest {
            // An absolute deadline of 0 would disarm the timer: at least 1 ns.
            let at = max(earliest, 1)
            spec.it_value.tv_sec = Int(at / 1_000_000_000)
            spec.it_value.tv_nsec = Int(at % 1_000_000_000)
        }
        timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    // MARK: - Dispatch

    /// Waits up to `timeoutMilliseconds` (0: not at all, negative: until work is
    /// due) and runs what is due on this thread. Returns how many callbacks ran.
    @discardableResult
    public func dispatch(timeoutMilliseconds: Int32) throws -> Int {
        let me = ThreadIdentity.current
        if isInheritedFromParent {
            throw OutliveError.state("this loop was made before fork(); dispatching it in the child would take the parent's wake-ups: the child makes its own loop")
        }
        try lock.withLock {
            // The loop's own thread first: whether it is inside dispatch at this
            // instant or not, another thread's dispatch is a state error.
            if let ownThreadIdentity, ownThreadIdentity != me {
                throw OutliveError.state("this loop runs on its own thread (outlive_loop_run_thread); it cannot be dispatched elsewhere")
            }
            if let dispatcher {
                if dispatcher == me { throw OutliveError.state("outlive_loop_dispatch was called from inside a callback of the same loop") }
                throw OutliveError(.busy, "another thread is dispatching this loop")
            }
            dispatcher = me
        }
        defer { lock.withLock { dispatcher = nil } }

        var events = [epoll_event](repeating: epoll_event(), count: 16)
        let count = epoll_wait(fileDescriptor, &events, 16, timeoutMilliseconds)
        if count < 0 {
            if COutlive_errno() == EINTR { return 0 }
            throw OutliveError.system("epoll_wait")
        }
        var ran = 0
        for index in 0..<Int(count) {
            let fd = events[index].data.fd
            if fd == wakeFD || fd == timerFD {
                drain(fd)
            } else if let handler = lock.withLock({ sources[fd] }) {
                handler()
                ran += 1
            }
        }
        ran += runPosted()
        ran += runDueTimers()
        return ran
    }

    private func runPosted() -> Int {
        let work = lock.withLock { () -> [Work] in
            let taken = posted
            posted.removeAll()
            return taken
        }
        for item in work { item() }
        return work.count
    }

    private func runDueTimers() -> Int {
        let now = Clock.monotonicNanoseconds()
        let due = lock.withLock { () -> [Work] in
            let ready = timers.filter { $0.value.deadline <= now }.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            guard !ready.isEmpty else { return [] }
            for (id, _) in ready { timers.removeValue(forKey: id) }
            armedDeadline = nil  // the timerfd fired: arm anew for what remains
            rearmLocked()
            return ready.map(\.value.work)
        }
        for work in due { work() }
        return due.count
    }

    // MARK: - A thread of the loop's own, for hosts without an event loop

    /// Starts a thread that dispatches until `stop()`. From then on only that
    /// thread dispatches.
    public func runThread() throws {
        if isInheritedFromParent {
            throw OutliveError.state("this loop was made before fork(); the child makes its own loop")
        }
        try lock.withLock {
            if ownThread != nil { throw OutliveError.state("this loop already runs on its own thread") }
            if dispatcher != nil { throw OutliveError(.busy, "another thread is dispatching this loop") }
            stopping = false
            var thread = pthread_t()
            let box = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(&thread, nil, { argument in
                let loop = Unmanaged<Loop>.fromOpaque(argument!).takeRetainedValue()
                loop.threadMain()
                return nil
            }, box)
            guard result == 0 else {
                Unmanaged<Loop>.fromOpaque(box).release()
                throw OutliveError.system("pthread_create", errno: result)
            }
            ownThread = thread
            ownThreadIdentity = ThreadIdentity(thread: thread)
        }
    }

    private func threadMain() {
        while !lock.withLock({ stopping }) {
            _ = try? dispatch(timeoutMilliseconds: -1)
        }
    }

    /// Stops the loop's own thread, if any, and waits for it unless called on it.
    public func stop() {
        // A forked child has no copy of the parent's dispatching thread: joining
        // its id would be undefined; ringing would wake the parent.
        guard !isInheritedFromParent else { return }
        let thread: pthread_t? = lock.withLock {
            stopping = true
            defer { ownThread = nil; ownThreadIdentity = nil }
            return ownThread
        }
        guard let thread else { return }
        ring()
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}
