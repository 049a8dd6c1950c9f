/// A store handle with its systems attached: what `outlive_store` is. The
/// Store layer knows nothing of the systems; this is where they are composed,
/// their schemas migrated together and their end-of-run hooks registered
/// before the runs that died while nobody watched are reaped.
///
/// A system not yet available on the store's engine (on PostgreSQL: a system
/// without PostgreSQL migrations; every system has them now) is not attached:
/// its tables are not created,
/// its hooks not registered, and reaching it fails with `.state` and a message
/// that says so (`Store.requireAvailable`) — the check lives here, where
/// systems are attached, so no system needs to know about engines to refuse.
public final class OutliveStore {
    public let store: Store
    public let kv: KeyValueStore
    private let signalsSystem: Result<Signals, OutliveError>
    private let messagesSystem: Result<MessageQueue, OutliveError>
    private let tasksSystem: Result<TaskQueue, OutliveError>
    private let durableInteractionsSystem: Result<DurableInteractions, OutliveError>
    private let schedulesSystem: Result<Schedules, OutliveError>
    /// A loop the handle made itself, when the caller gave none.
    public let ownsLoop: Bool

    public static var components: [SchemaComponent] {
        [KeyValueStore.schema, Signals.schema, MessageQueue.schema, TaskQueue.schema, Schedules.schema, DurableInteractions.schema]
    }

    public init(path: String, processName: String, loop: Loop?, options: StoreOptions = StoreOptions()) throws {
        let theLoop = try loop ?? Loop()
        ownsLoop = loop == nil
        let store = try Store(path: path, processName: processName, loop: theLoop, options: options, components: OutliveStore.components)
        self.store = store
        func attach<T>(_ component: SchemaComponent, _ system: String, _ make: () throws -> T) throws -> Result<T, OutliveError> {
            do { try store.requireAvailable(component, system: system) } catch let error as OutliveError { return .failure(error) }
            return .success(try make())
        }
        do {
            try store.requireAvailable(KeyValueStore.schema, system: "key-value pairs")
            kv = KeyValueStore(store: store)
            // Registers its end-of-run hook.
            durableInteractionsSystem = try attach(DurableInteractions.schema, "durable interactions") { DurableInteractions(store: store) }
            signalsSystem = try attach(Signals.schema, "signals") { try Signals(store: store) }
            messagesSystem = try attach(MessageQueue.schema, "messages") { try MessageQueue(store: store) }
            let tasks = try attach(TaskQueue.schema, "tasks") { try TaskQueue(store: store) }
            tasksSystem = tasks
            schedulesSystem = try attach(Schedules.schema, "schedules") { try Schedules(store: store, tasks: try tasks.get()) }
            try store.reapEndedRuns()
        } catch {
            store.close()
            throw error
        }
    }

    public var signals: Signals { get throws { try signalsSystem.get() } }
    public var messages: MessageQueue { get throws { try messagesSystem.get() } }
    public var tasks: TaskQueue { get throws { try tasksSystem.get() } }
    public var schedules: Schedules { get throws { try schedulesSystem.get() } }
    public var durableInteractions: DurableInteractions { get throws { try durableInteractionsSystem.get() } }

    public var loop: Loop { store.loop }

    /// How many of each kind of record the systems hold, for `outlive inspect`
    /// (the systems attached to this store only).
    public func inspectionCounts() throws -> [(String, Int)] {
        var counts: [(String, Int)] = []
        if case .success(let messages) = messagesSystem { counts.append(("messages", Int(try messages.count()))) }
        if case .success(let signals) = signalsSystem { counts += try signals.inspectionCounts() }
        if case .success(let tasks) = tasksSystem {
            counts += [("tasks pending", Int(try tasks.pendingCount())), ("tasks dead", Int(try tasks.deadCount()))]
        }
        if case .success(let interactions) = durableInteractionsSystem {
            counts.append(("durable interactions", Int(try interactions.storedCount())))
        }
        return counts
    }

    public func close() {
        store.close()
    }
}
