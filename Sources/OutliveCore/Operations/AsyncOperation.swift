/// An asynchronous operation: its work starts on the loop of the queue it was
/// added to, once every dependency has finished and the queue has room, and the
/// operation is finished only when `finish` is called (any thread).
///
/// The life of an operation is one state, changed only under
/// `OperationGraph.lock` and only along these transitions:
///
///     new ──add──▶ waiting ──start──▶ executing ──finish──▶ finished
///                     └────────────cancel (not started)────────▶┘
///
/// A cancelled operation that has not started never runs its work: it finishes,
/// cancelled, as soon as its dependencies have finished (at once if they have),
/// and it counts as finished for its dependents, which can see that it was
/// cancelled. A running operation that is cancelled sees `isCancelled` and must
/// still be finished.
public final class AsyncOperation: @unchecked Sendable {
    public enum State: Int32, Sendable {
        case new = 0, waiting, executing, finished
    }

    public typealias Work = (AsyncOperation) -> Void
    public typealias Completion = (_ operation: AsyncOperation, _ cancelled: Bool) -> Void

    private let work: Work
    // Guarded by `OperationGraph.lock`.
    var state: State = .new
    var cancelled = false
    var completion: Completion?
    /// Strong until this operation finishes (then released): what it waits for.
    var dependencies: [AsyncOperation] = []
    /// Operations that wait for this one, weakly: a dependent nobody holds any more need not be told.
    var dependents: [Weak] = []
    /// Dependencies that have not finished yet.
    var unfinishedDependencies = 0
    /// The queue it was added to, until it finished and its completion ran.
    var queue: AsyncOperationQueue?
    /// While executing, the operation keeps itself alive, so that the operation
    /// handed to its work stays valid until it is finished.
    var keepAlive: AsyncOperation?

    struct Weak {
        weak var operation: AsyncOperation?
    }

    /// `work` (and whatever it captured) is released with the operation.
    public init(_ work: @escaping Work) {
        self.work = work
    }

    public var currentState: State { OperationGraph.lock.withLock { state } }
    public var isCancelled: Bool { OperationGraph.lock.withLock { cancelled } }
    public var isFinished: Bool { currentState == .finished }

    /// The dependencies it still holds (until it finishes), in the order added.
    public var currentDependencies: [AsyncOperation] { OperationGraph.lock.withLock { dependencies } }
    public var dependencyCount: Int { OperationGraph.lock.withLock { dependencies.count } }

    /// Dependency number `index`, or nil when out of range. The result is not
    /// released under the lock (the operation holds it).
    public func dependency(at index: Int) -> AsyncOperation? {
        OperationGraph.lock.withLock { dependencies.indices.contains(index) ? dependencies[index] : nil }
    }

    /// Called on the loop of its queue once it has finished (ran and was
    /// finished, or was cancelled before it started). Only before it is added.
    public func setCompletion(_ completion: Completion?) throws {
        var garbage = Garbage()
        defer { _ = garbage }
        try OperationGraph.lock.withLock {
            guard state == .new else {
                throw OutliveError.state("the completion can only be set before the operation is added to a queue (it is \(state))")
            }
            if let old = self.completion { garbage.add(old as AnyObject) }
            self.completion = completion
        }
    }

    /// This operation will not start before `dependency` has finished (or was
    /// cancelled). Only before it is added to a queue. `dependency` may belong to
    /// any queue, or none yet. Adding the same dependency again changes nothing.
    /// Throws `.invalidArgument` when the dependency would make a cycle (itself
    /// included), `.state` when this operation was added to a queue already.
    public func addDependency(_ dependency: AsyncOperation) throws {
        try OperationGraph.lock.withLock {
            guard state == .new else {
                throw OutliveError.state("dependencies can only be added before the operation is added to a queue (it is \(state))")
            }
            guard dependency !== self else {
                throw OutliveError.invalidArgument("an operation cannot depend on itself")
            }
            if dependencies.contains(where: { $0 === dependency }) { return }
            if dependency.dependsLocked(on: self) {
                throw OutliveError.invalidArgument("the dependency depends on this operation already: adding it would make a cycle")
            }
            dependencies.append(dependency)
            if dependency.state != .finished {
                unfinishedDependencies += 1
                dependency.dependents.append(Weak(operation: self))
            }
        }
    }

    /// Whether `other` is reachable through unfinished dependencies.
    private func dependsLocked(on other: AsyncOperation) -> Bool {
        var seen = Set<ObjectIdentifier>()
        var stack: [AsyncOperation] = [self]
        while let next = stack.popLast() {
            for dependency in next.dependencies {
                if dependency === other { return true }
                if seen.insert(ObjectIdentifier(dependency)).inserted { stack.append(dependency) }
            }
        }
        return false
    }

    /// Ends the executing operation: its queue may start another, its dependents
    /// may start, its completion runs on its queue's loop. Any thread. Throws
    /// `.state` when it is not executing (not started yet, or finished already);
    /// nothing changes then.
    public func finish() throws {
        if let loop = OperationGraph.lock.withLock({ queue?.loop }) { try loop.checkUsable() }
        var garbage = Garbage()
        defer { _ = garbage }
        try OperationGraph.lock.withLock {
            switch state {
            case .executing: break
            case .new: throw OutliveError.state("the operation has not been added to a queue, so it cannot be finished")
            case .waiting: throw OutliveError.state("the operation has not started, so it cannot be finished (cancel it instead)")
            case .finished: throw OutliveError.state("the operation was finished already")
            }
            AsyncOperation.finishLocked([self], &garbage)
        }
    }

    /// Cancels the operation. Not started yet: its work will never run, and it
    /// finishes (cancelled) as soon as its dependencies have. Executing: it sees
    /// `isCancelled` and must still be finished. Cancelling again changes
    /// nothing. Throws `.state` when it has finished already (it stays not cancelled).
    public func cancel() throws {
        var garbage = Garbage()
        defer { _ = garbage }
        try OperationGraph.lock.withLock {
            switch state {
            case .finished:
                throw OutliveError.state("the operation has finished already; it cannot be cancelled")
            case .new, .executing:
                cancelled = true
            case .waiting:
                cancelled = true
                if unfinishedDependencies == 0 {
                    _ = queue?.ready.removeFirst(where: { $0 === self })
                    AsyncOperation.finishLocked([self], &garbage)
                }
            }
        }
    }

    /// Runs the work (on the loop thread, by the queue).
    func run() {
        work(self)
    }

    // MARK: - Transitions (under OperationGraph.lock)

    /// The dependencies are done: it waits for room in its queue, or — cancelled — finishes.
    func becameReadyLocked(_ garbage: inout Garbage) {
        if cancelled {
            AsyncOperation.finishLocked([self], &garbage)
        } else if let queue {
            queue.ready.append(self)
            queue.requestPumpLocked()
        }
    }

    /// Finishes `operations` (executing ones, or waiting ones that were
    /// cancelled) and whatever dependents that cascades to, without recursion.
    static func finishLocked(_ operations: [AsyncOperation], _ garbage: inout Garbage) {
        var pending = operations
        while let operation = pending.popLast() {
            let wasExecuting = operation.state == .executing
            operation.state = .finished
            garbage.add(operation.dependencies)
            operation.dependencies = []
            garbage.add(operation.keepAlive)
            operation.keepAlive = nil
            if let queue = operation.queue {
                queue.operationFinishedLocked(operation, wasExecuting: wasExecuting, &garbage)
            }
            let dependents = operation.dependents
            operation.dependents = []
            for entry in dependents {
                guard let dependent = entry.operation else { continue }
                garbage.add(dependent)  // in case this was its last reference
                dependent.unfinishedDependencies -= 1
                guard dependent.unfinishedDependencies == 0, dependent.state == .waiting else { continue }
                if dependent.cancelled {
                    pending.append(dependent)
                } else {
                    dependent.becameReadyLocked(&garbage)
                }
            }
        }
    }
}

extension AsyncOperation.State: CustomStringConvertible {
    public var description: String {
        switch self {
        case .new: return "new"
        case .waiting: return "waiting"
        case .executing: return "executing"
        case .finished: return "finished"
        }
    }
}
