/// A store handle with its systems attached: what `outlive_store` is. The
/// Store layer knows nothing of the systems; this is where they are composed,
/// their schemas migrated together and their end-of-run hooks registered
/// before the runs that died while nobody watched are reaped.
public final class OutliveStore {
    public let store: Store
    public let kv: KeyValueStore
    public let signals: Signals
    public let messages: MessageQueue
    public let tasks: TaskQueue
    public let schedules: Schedules
    public let durableInteractions: DurableInteractions
    /// A loop the handle made itself, when the caller gave none.
    public let ownsLoop: Bool

    public static var components: [SchemaComponent] {
        [KeyValueStore.schema, Signals.schema, MessageQueue.schema, TaskQueue.schema, Schedules.schema, DurableInteractions.schema]
    }

    public init(path: String, processName: String, loop: Loop?, options: StoreOptions = StoreOptions()) throws {
        let theLoop = try loop ?? Loop()
        ownsLoop = loop == nil
        store = try Store(path: path, processName: processName, loop: theLoop, options: options, components: OutliveStore.components)
        kv = KeyValueStore(store: store)
        durableInteractions = DurableInteractions(store: store)  // registers its end-of-run hook
        do {
            signals = try Signals(store: store)
            messages = try MessageQueue(store: store)
            tasks = try TaskQueue(store: store)
            schedules = try Schedules(store: store, tasks: tasks)
            try store.reapEndedRuns()
        } catch {
            store.close()
            throw error
        }
    }

    public var loop: Loop { store.loop }

    /// How many of each kind of record the systems hold, for `outlive inspect`.
    public func inspectionCounts() throws -> [(String, Int)] {
        [("messages", Int(try messages.count()))] + (try signals.inspectionCounts())
            + [("tasks pending", Int(try tasks.pendingCount())), ("tasks dead", Int(try tasks.deadCount())),
               ("durable interactions", Int(try durableInteractions.storedCount()))]
    }

    public func close() {
        store.close()
    }
}
