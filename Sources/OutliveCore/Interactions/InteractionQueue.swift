/// Modal interactions, strictly one at a time, started on the loop's thread.
///
/// Each interaction's work is called inside `Loop.dispatch` with an
/// `Interaction` that must be finished exactly once, from any thread; only then
/// does the next one start (in a later dispatch: a finish never runs the next
/// interaction inside itself). While the queue is suspended nothing starts; a
/// running interaction is not stopped. A running interaction that is not
/// finished within the stall limit is reported once to the stall reporter,
/// since a forgotten finish is the way such a queue stalls.
///
/// Locks: the queue's lock is taken before the running-interaction table's and
/// the loop's, never after; no callback runs under any of them, and no object
/// that holds a caller's context is released under them.
public final class InteractionQueue: @unchecked Sendable {
    public typealias Work = (Interaction) -> Void
    public typealias StallReporter = (_ interaction: Interaction, _ seconds: Double) -> Void

    public let loop: Loop
    private let lock = Lock()
    // Guarded by `lock`.
    private var waiting = Backlog<Work>()
    private var running: Interaction?
    private var suspended = false
    private var closed = false
    private var startPosted = false
    private var stallSeconds: Double = 0
    private var stallReporter: StallReporter?

    public init(loop: Loop) {
        self.loop = loop
    }

    /// Queues an interaction. Its work runs on the loop's thread when every
    /// interaction added before it has finished and the queue is not suspended.
    /// Dropping `work` (after the finish, or when the queue is closed before it
    /// started) is what releases whatever it captured. Throws `.state` once the
    /// queue is closed.
    public func add(_ work: @escaping Work) throws {
        try loop.checkUsable()
        try lock.withLock {
            guard !closed else { throw OutliveError.state("the interaction queue is freed; nothing can be added") }
            waiting.append(work)
            requestStartLocked()
        }
    }

    /// Nothing starts until `resume` (the view is about to disappear). The
    /// running interaction, if any, goes on. Any thread.
    public func suspend() throws {
        try loop.checkUsable()
        try lock.withLock {
            guard !closed else { throw OutliveError.state("the interaction queue is freed") }
            suspended = true
        }
    }

    /// Lets interactions start again (the view appeared). Any thread.
    public func resume() throws {
        try loop.checkUsable()
        try lock.withLock {
            guard !closed else { throw OutliveError.state("the interaction queue is freed") }
            suspended = false
            requestStartLocked()
        }
    }

    public var isSuspended: Bool { lock.withLock { suspended } }

    /// Interactions not finished yet: the waiting ones and the running one.
    public var unfinishedCount: Int {
        lock.withLock { waiting.count + (running == nil ? 0 : 1) }
    }

    /// Reports, once, each interaction still running `seconds` after it started
    /// (on the loop's thread). `seconds` <= 0 or a nil reporter turns it off.
    /// Applies to interactions started from now on.
    public func setStallReport(after seconds: Double, _ reporter: StallReporter?) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw OutliveError.invalidArgument("the stall time is \(seconds); it must be a finite number of seconds >= 0")
        }
        let previous: StallReporter? = try lock.withLock {
            guard !closed else { throw OutliveError.state("the interaction queue is freed") }
            let previous = stallReporter
            stallSeconds = reporter == nil ? 0 : seconds
            stallReporter = seconds > 0 ? reporter : nil
            return previous
        }
        _ = previous  // released here, outside the lock
    }

    /// Closes the queue: waiting interactions are dropped without running (their
    /// work released on this thread), nothing starts any more, and no stall is
    /// reported. A running interaction can still be finished. Idempotent.
    public func close() {
        let dropped: (works: [Work], reporter: StallReporter?) = lock.withLock {
            closed = true
            if let timer = running?.stallTimer {
                loop.cancelTimer(timer)
                running?.stallTimer = nil
            }
            let reporter = stallReporter
            stallReporter = nil
            return (waiting.takeAll(), reporter)
        }
        _ = dropped  // the captured contexts are released here, outside the lock
    }

    // MARK: - Starting and finishing

    private func requestStartLocked() {
        guard !closed, !suspended, running == nil, !waiting.isEmpty, !startPosted else { return }
        startPosted = true
        loop.post { [self] in startNext() }
    }

    /// On the loop's thread: starts the next interaction if nothing runs.
    private func startNext() {
        let started: (Interaction, Work)? = lock.withLock {
            startPosted = false
            guard !closed, !suspended, running == nil, let work = waiting.popFirst() else { return nil }
            let table = RunningInteractions.shared
            let interaction = Interaction(token: table.reserve(), queue: self, work: work)
            running = interaction
            table.insert(interaction.token, interaction)
            if let reporter = stallReporter, stallSeconds > 0 {
                let limit = stallSeconds
                interaction.stallTimer = loop.schedule(after: limit) { [weak self, weak interaction] in
                    guard let self, let interaction else { return }
                    self.reportStall(of: interaction, after: limit, reporter)
                }
            }
            return (interaction, work)
        }
        guard let (interaction, work) = started else { return }
        work(interaction)
    }

    private func reportStall(of interaction: Interaction, after seconds: Double, _ reporter: StallReporter) {
        let stalled = lock.withLock { () -> Bool in
            guard !closed, running === interaction else { return false }
            interaction.stallTimer = nil
            return true
        }
        if stalled { reporter(interaction, seconds) }
    }

    /// Called once per interaction, by the thread that finished it (the token
    /// is already out of the running table).
    func finished(_ interaction: Interaction) {
        let work: Work? = lock.withLock {
            if running === interaction { running = nil }
            if let timer = interaction.stallTimer {
                loop.cancelTimer(timer)
                interaction.stallTimer = nil
            }
            let work = interaction.work
            interaction.work = nil
            requestStartLocked()
            return work
        }
        _ = work  // released outside the lock (the run may still hold it until it returns)
    }
}
