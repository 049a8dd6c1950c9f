/// Runs asynchronous operations on a loop: an operation starts (its work is
/// called inside `Loop.dispatch`) once its dependencies have finished and fewer
/// than `maxUnfinished` operations of the queue are executing (0: no limit).
/// Completions run on the loop too, before the operations that their finish
/// made ready start. `drained` is called each time the last unfinished
/// operation of the queue finished.
///
/// The queue holds every operation added to it until it finished and its
/// completion ran. Its state is guarded by `OperationGraph.lock`.
public final class AsyncOperationQueue: @unchecked Sendable {
    public let loop: Loop
    public let maxUnfinished: Int

    // Guarded by `OperationGraph.lock`.
    var ready = Backlog<AsyncOperation>()
    private var members: [ObjectIdentifier: AsyncOperation] = [:]
    private var executing = 0
    private var unfinished = 0
    private var completed: [AsyncOperation] = []
    private var pumpPosted = false
    private var drainPending = false
    private var drained: (() -> Void)?
    private var closed = false

    /// `maxUnfinished`: how many of its operations may be executing at once; 0 means no limit.
    public init(loop: Loop, maxUnfinished: Int) throws {
        guard maxUnfinished >= 0 else {
            throw OutliveError.invalidArgument("max_unfinished is \(maxUnfinished); it must be >= 0 (0: no limit)")
        }
        try loop.checkUsable()
        self.loop = loop
        self.maxUnfinished = maxUnfinished
    }

    /// Operations added and not finished yet (waiting or executing).
    public var unfinishedCount: Int { OperationGraph.lock.withLock { unfinished } }

    /// Operations executing now.
    public var executingCount: Int { OperationGraph.lock.withLock { executing } }

    /// Called on the loop each time the number of unfinished operations drops
    /// to zero (after the completions). nil removes it.
    public func setDrained(_ callback: (() -> Void)?) throws {
        var garbage = Garbage()
        defer { _ = garbage }
        try OperationGraph.lock.withLock {
            guard !closed else { throw OutliveError.state("the operation queue is freed") }
            if let old = drained { garbage.add(old as AnyObject) }
            drained = callback
        }
    }

    /// Adds `operation`, which must be new: an operation belongs to one queue,
    /// once. Throws `.state` when it was added already (here or elsewhere) or
    /// the queue is closed; nothing changes then.
    public func add(_ operation: AsyncOperation) throws {
        try loop.checkUsable()
        var garbage = Garbage()
        defer { _ = garbage }
        try OperationGraph.lock.withLock {
            guard !closed else { throw OutliveError.state("the operation queue is freed; nothing can be added") }
            guard operation.state == .new else {
                throw OutliveError.state(operation.queue === self
                    ? "the operation was added to this queue already"
                    : "the operation was added to a queue already (an operation belongs to one queue, once)")
            }
            operation.state = .waiting
            operation.queue = self
            members[ObjectIdentifier(operation)] = operation
            unfinished += 1
            if operation.unfinishedDependencies == 0 {
                operation.becameReadyLocked(&garbage)
            }
        }
    }

    /// Cancels every operation of the queue that has not finished (see
    /// `AsyncOperation.cancel`).
    public func cancelAll() {
        let operations = OperationGraph.lock.withLock { Array(members.values) }
        for operation in operations { try? operation.cancel() }
    }

    /// Closes the queue: operations that have not started are cancelled and
    /// finished (their dependents elsewhere see them cancelled), no work,
    /// completion or drained callback of this queue runs any more. Executing
    /// operations stay valid until they are finished. Idempotent.
    public func close() {
        var garbage = Garbage()
        defer { _ = garbage }
        OperationGraph.lock.withLock {
            guard !closed else { return }
            closed = true
            garbage.add(drained as AnyObject?)
            drained = nil
            garbage.add(ready.takeAll())
            let waiting = members.values.filter { $0.state == .waiting }
            for operation in waiting { operation.cancelled = true }
            AsyncOperation.finishLocked(waiting, &garbage)
            for operation in members.values where operation.state == .finished {
                operation.queue = nil
            }
            garbage.add(Array(members.values))
            members = [:]
            garbage.add(completed)
            completed = []
        }
    }

    // MARK: - Under OperationGraph.lock

    func requestPumpLocked() {
        guard !closed, !pumpPosted else { return }
        pumpPosted = true
        loop.post { [self] in pump() }
    }

    func operationFinishedLocked(_ operation: AsyncOperation, wasExecuting: Bool, _ garbage: inout Garbage) {
        if wasExecuting { executing -= 1 }
        unfinished -= 1
        if closed {
            // Nothing more runs for a closed queue: drop the link at once.
            operation.queue = nil
            garbage.add(self)
            return
        }
        completed.append(operation)
        if unfinished == 0 { drainPending = true }
        requestPumpLocked()
    }

    // MARK: - On the loop's thread

    /// Runs the completions of finished operations, then starts what is ready
    /// while there is room, then reports a drain.
    private func pump() {
        var garbage = Garbage()
        defer { _ = garbage }
        let done: [(AsyncOperation, AsyncOperation.Completion?, Bool)] = OperationGraph.lock.withLock {
            pumpPosted = false
            guard !closed else { return [] }
            let done = completed.map { ($0, $0.completion, $0.cancelled) }
            completed = []
            return done
        }
        for (operation, completion, cancelled) in done {
            completion?(operation, cancelled)
        }
        let (starting, drainedNow): ([AsyncOperation], (() -> Void)?) = OperationGraph.lock.withLock {
            for (operation, _, _) in done {
                garbage.add(members.removeValue(forKey: ObjectIdentifier(operation)))
                garbage.add(operation.completion as AnyObject?)
                operation.completion = nil
                operation.queue = nil
            }
            guard !closed else { return ([], nil) }
            var starting: [AsyncOperation] = []
            while maxUnfinished == 0 || executing < maxUnfinished, let operation = ready.popFirst() {
                operation.state = .executing
                operation.keepAlive = operation
                executing += 1
                starting.append(operation)
            }
            var drainedNow: (() -> Void)?
            // Completions of operations finished since this pump took its list run
            // in the next pump (already posted); the drain waits for them.
            if drainPending, unfinished == 0, starting.isEmpty, completed.isEmpty {
                drainPending = false
                drainedNow = drained
            }
            return (starting, drainedNow)
        }
        for (index, operation) in starting.enumerated() {
            // A run that freed the queue stops this pump: the operations it had
            // not started yet never start; they finish cancelled, as at close.
            let open = OperationGraph.lock.withLock { () -> Bool in
                guard closed else { return true }
                let rest = Array(starting[index...])
                for unstarted in rest { unstarted.cancelled = true }
                AsyncOperation.finishLocked(rest, &garbage)
                return false
            }
            guard open else { return }
            operation.run()
        }
        if OperationGraph.lock.withLock({ !closed }) { drainedNow?() }
    }
}
