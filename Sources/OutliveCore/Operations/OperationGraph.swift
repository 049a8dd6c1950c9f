/// The one lock over the state of every operation and operation queue of the
/// process. Dependencies may cross queues (and loops), so a lock per queue would
/// need an order between queues; one lock makes each transition — an operation's
/// state, its dependents' counts, its queue's counters — one atomic step, so an
/// operation can never be seen both executing and finished.
///
/// Nothing runs under it: no callback, and no release of an object that may hold
/// a caller's context (those are collected in a `Garbage` and dropped after
/// the lock is released).
enum OperationGraph {
    static let lock = Lock()
}

/// Objects whose last reference must go outside `OperationGraph.lock`.
struct Garbage {
    var objects: [AnyObject] = []
    mutating func add(_ object: AnyObject?) {
        if let object { objects.append(object) }
    }
    mutating func add(_ more: [AnyObject]) {
        objects.append(contentsOf: more)
    }
}
