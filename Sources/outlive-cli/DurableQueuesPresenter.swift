import OutliveCore

/// The worker's presenter of durable interaction queues: a presenting handle
/// on each named queue, or, when no name is given, on every queue that holds
/// interactions now and on each queue that appears later (learned from the
/// change feed, so nothing polls). A handle whose first interaction does not
/// resolve in the worker releases its claim and waits, leaving the queue to a
/// process that can present it.
final class DurableQueuesPresenter {
    private let interactions: DurableInteractions
    private let store: Store
    private var handles: [String: DurableInteractionQueue] = [:]
    private var subscription: UInt64?

    init(_ outliveStore: OutliveStore, queues: [String]) throws {
        interactions = try outliveStore.durableInteractions
        store = outliveStore.store
        if queues.isEmpty {
            // Watch first, so that a queue filled between the listing and the
            // subscription is not missed.
            subscription = try interactions.watchQueues { [weak self] name in self?.present(name) }
            for name in try interactions.queueNames() { present(name) }
        } else {
            for name in queues { try open(name) }
        }
    }

    var presentedQueues: [String] { handles.keys.sorted() }

    private func present(_ name: String) {
        guard handles[name] == nil else { return }
        do {
            try open(name)
        } catch {
            Log.emit(.warning, "durable interaction queue \"\(name)\": cannot present it: \(error)")
        }
    }

    private func open(_ name: String) throws {
        handles[name] = try interactions.open(name)
        Log.emit(.info, "presenting durable interaction queue \"\(name)\"")
    }

    func close() {
        if let subscription { store.unsubscribe(subscription) }
        subscription = nil
        for handle in handles.values { handle.close() }
        handles = [:]
    }
}
