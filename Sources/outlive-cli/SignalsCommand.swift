import ArgumentParser
import OutliveCore

struct SignalsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signals",
        abstract: "The signals stored and their consumers: who waits for what, and what was delivered."
    )

    @OptionGroup var options: StoreOptionsGroup

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            let signals = try store.signals.signals(limit: 100_000)
            let consumers = try store.signals.consumers()
            func names(_ consumer: ConsumerSummary) -> (String, String) {
                let delivery = consumer.delivery == .once ? "once" : "until_terminated"
                let lifetime: String
                switch consumer.lifetime {
                case .thisRun: lifetime = "this_run"
                case .process: lifetime = "process"
                case .anyProcess: lifetime = "any_process"
                }
                return (delivery, lifetime)
            }
            if options.json {
                print(JSON.object([
                    ("signals", .array(signals.map {
                        .object([("id", .string($0.signalID)), ("version", .integer(Int64(clamping: $0.version))),
                                 ("terminated", .bool($0.terminated)), ("consumers", .integer(Int64($0.consumerCount)))])
                    })),
                    ("consumers", .array(consumers.map { consumer in
                        let (delivery, lifetime) = names(consumer)
                        return .object([
                            ("id", .string(consumer.consumerID)), ("signal_id", .string(consumer.signalID)),
                            ("handler", .string(consumer.handlerName)), ("delivery", .string(delivery)),
                            ("lifetime", .string(lifetime)), ("scope", consumer.scope.map(JSON.string) ?? .null),
                            ("process", .string(consumer.processName)),
                            ("last_version", .integer(Int64(clamping: consumer.lastDeliveredVersion))),
                        ])
                    })),
                ]).text)
            } else {
                print(table(["SIGNAL", "VERSION", "TERMINATED", "CONSUMERS"], signals.map {
                    [$0.signalID, String($0.version), $0.terminated ? "yes" : "no", String($0.consumerCount)]
                }))
                print("")
                print(table(["CONSUMER", "SIGNAL", "HANDLER", "DELIVERY", "LIFETIME", "PROCESS", "LAST VERSION"], consumers.map {
                    let (delivery, lifetime) = names($0)
                    return [$0.consumerID, $0.signalID, $0.handlerName, delivery, lifetime, $0.processName, String($0.lastDeliveredVersion)]
                }))
            }
        }
    }
}
