import XCTest
@testable import OutliveCore

// Globals for C-convention functions, which cannot capture.
private var registeredSum: Int64 = 0
private var registeredCalls = 0

final class HandlerTests: XCTestCase {
    private func code(_ body: () throws -> Void) -> OutliveError.Code? {
        do { try body() } catch let error as OutliveError { return error.code } catch { return nil }
        return nil
    }

    func testBuiltinGetsMergedArgumentsAfterItsParametersAreChecked() throws {
        var received: Arguments?
        try HandlerRegistry.shared.registerBuiltin(name: "test.builtin", signature: "INTEGER n, ID? label") { received = $0 }
        let handler = try Handler(name: "test.builtin", bound: Arguments([("n", .integer(1)), ("extra", .bool(true))]))
        try HandlerRegistry.shared.call(handler, with: Arguments([("n", .integer(2))]))
        XCTAssertEqual(received?["n"], .integer(2))
        XCTAssertEqual(received?["extra"], .bool(true))
        received = nil
        XCTAssertEqual(code { try HandlerRegistry.shared.call(handler, with: Arguments([("n", .int(2))])) }, .typeMismatch)
        XCTAssertEqual(code { try HandlerRegistry.shared.call(try Handler(name: "test.builtin")) }, .missingArgument)
        XCTAssertNil(received)
        XCTAssertTrue(HandlerRegistry.shared.canResolve("test.builtin"))
        XCTAssertFalse(HandlerRegistry.shared.canResolve("test.nothing"))
        XCTAssertFalse(HandlerRegistry.shared.canResolve("system"))
        XCTAssertEqual(code { try HandlerRegistry.shared.registerBuiltin(name: "test.bad", signature: "INTEGR n") { _ in } }, .invalidArgument)
    }

    func testRegisteredCFunctionIsCalledThroughLibffi() throws {
        let function: @convention(c) (Int64, Int32, Double) -> Void = { a, b, c in
            registeredSum = a + Int64(b) + Int64(c)
            registeredCalls += 1
        }
        try HandlerRegistry.shared.register(name: "test.cfunction", signature: "INTEGER a, INT b, DOUBLE c",
                                            function: unsafeBitCast(function, to: Declaration.CFunction.self))
        let handler = try Handler(name: "test.cfunction", bound: Arguments([("a", .integer(.min + 10)), ("b", .int(-3))]))
        try HandlerRegistry.shared.call(handler, with: Arguments([("c", .double(2.9))]))
        XCTAssertEqual(registeredSum, .min + 9)
        XCTAssertEqual(code { try HandlerRegistry.shared.call(handler) }, .missingArgument)
        XCTAssertEqual(registeredCalls, 1)
    }

    func testInvalidationCallsItsHandlerOnceAndSurvivesCoding() throws {
        var invalidations = 0
        try HandlerRegistry.shared.registerBuiltin(name: "test.cancel", signature: "ID reason") { _ in invalidations += 1 }
        try HandlerRegistry.shared.registerBuiltin(name: "test.work", signature: "") { _ in }
        var handler = try Handler(name: "test.work", invalidationName: "test.cancel")
        XCTAssertEqual(code { try HandlerRegistry.shared.invalidate(&handler) }, .missingArgument)
        XCTAssertFalse(handler.isInvalidated)
        try HandlerRegistry.shared.invalidate(&handler, with: Arguments([("reason", .id(IDValue(string: "user")))]))
        XCTAssertTrue(handler.isInvalidated)
        XCTAssertEqual(invalidations, 1)
        XCTAssertEqual(code { try HandlerRegistry.shared.call(handler) }, .invalidated)
        XCTAssertEqual(code { try HandlerRegistry.shared.invalidate(&handler) }, .invalidated)
        let decoded = try Handler(serialized: handler.serialized())
        XCTAssertTrue(decoded.isInvalidated)
        XCTAssertEqual(decoded, handler)
        XCTAssertEqual(code { try HandlerRegistry.shared.call(decoded) }, .invalidated)
    }

    func testEveryValueTypeRoundTripsThroughTheFormat() throws {
        let inner = try Handler(name: "inner.handler", bound: Arguments([("x", .uinteger(.max))]))
        let bound = Arguments([
            ("id", .id(IDValue(bytes: [0, 255, 128], typeTag: "my.tag"))),
            ("text", .id(IDValue(string: "héllo"))),
            ("handler", .handler(inner)),
            ("flag", .bool(false)),
            ("small", .int(.min)),
            ("nan", .double(.nan)),
            ("big", .double(1e300)),
            ("integer", .integer(.min)),
            ("uinteger", .uinteger(.max)),
        ])
        let handler = try Handler(name: "outer", invalidationName: "outer.cancel", bound: bound)
        let bytes = handler.serialized()
        XCTAssertEqual(Array(bytes.prefix(4)), [0x4F, 0x4C, 0x48, 1])
        let decoded = try Handler(serialized: bytes)
        XCTAssertEqual(decoded, handler)
        XCTAssertEqual(decoded.serialized(), bytes)
        XCTAssertEqual(decoded.bound.entries.map(\.name), bound.entries.map(\.name))
        for cut in 0..<bytes.count {
            XCTAssertEqual(code { _ = try Handler(serialized: Array(bytes.prefix(cut))) }, .corrupt, "cut at \(cut)")
        }
        XCTAssertEqual(code { _ = try Handler(serialized: bytes + [0]) }, .corrupt)
        var newer = bytes
        newer[3] = 2
        XCTAssertEqual(code { _ = try Handler(serialized: newer) }, .version)
    }

    /// outlive_task_enqueue_serialized stores the bytes it was given: that is
    /// right only if every byte string the decoder accepts is the one the
    /// encoder writes for what it decoded.
    func testEveryEncodingTheDecoderAcceptsIsTheOneItWouldWrite() throws {
        let inner = try Handler(name: "inner.h", bound: Arguments([("x", .uinteger(300))]))
        let bound = Arguments([
            ("id", .id(IDValue(bytes: [0, 255], typeTag: "t"))), ("text", .id(IDValue(string: "hé"))),
            ("handler", .handler(inner)), ("flag", .bool(true)), ("small", .int(-129)), ("real", .double(-0.5)),
            ("integer", .integer(-70000)), ("uinteger", .uinteger(1 << 40)),
        ])
        let original = try Handler(name: "outer", invalidationName: "outer.cancel", bound: bound).serialized()
        var accepted = 0
        for position in 0..<original.count {
            for value in 0...255 where value != Int(original[position]) {
                var bytes = original
                bytes[position] = UInt8(value)
                guard let decoded = try? Handler(serialized: bytes) else { continue }
                accepted += 1
                XCTAssertEqual(decoded.serialized(), bytes, "byte \(position) = \(value)")
            }
        }
        XCTAssertGreaterThan(accepted, 1000)  // names, text and numbers changed in place decode
    }

    func testDecoderRefusesDuplicateNamesLongVarintsAndDeepNesting() throws {
        // "OLH" 1, flags 0, name "h", 2 arguments both named "a" (BOOL).
        let duplicate: [UInt8] = [0x4F, 0x4C, 0x48, 1, 0, 1, 0x68, 2, 1, 0x61, 3, 1, 1, 0x61, 3, 0]
        XCTAssertEqual(code { _ = try Handler(serialized: duplicate) }, .corrupt)
        // A UINTEGER 0 written in two bytes (0x80 0x00): not the shortest form.
        let padded: [UInt8] = [0x4F, 0x4C, 0x48, 1, 0, 1, 0x68, 1, 1, 0x61, 7, 0x80, 0x00]
        XCTAssertEqual(code { _ = try Handler(serialized: padded) }, .corrupt)
        let eleven: [UInt8] = [0x4F, 0x4C, 0x48, 1, 0, 1, 0x68, 1, 1, 0x61, 7] + [UInt8](repeating: 0xFF, count: 10) + [0x01]
        XCTAssertEqual(code { _ = try Handler(serialized: eleven) }, .corrupt)
        var deep = try Handler(name: "leaf")
        for _ in 1..<ValueLimits.maxDepth { deep = try Handler(name: "level", bound: Arguments([("h", .handler(deep))])) }
        XCTAssertEqual(try Handler(serialized: deep.serialized()), deep)
        XCTAssertEqual(code { _ = try Handler(name: "level", bound: Arguments([("h", .handler(deep))])) }, .invalidArgument)
    }

    func testSignatureParsing() throws {
        let signature = try Signature(parsing: " ID<xmpp.account>? account ,\tBOOL success, HANDLER? done ")
        XCTAssertEqual(signature.parameters.map(\.name), ["account", "success", "done"])
        XCTAssertEqual(signature.parameters[0].typeTag, "xmpp.account")
        XCTAssertTrue(signature.parameters[0].isOptional)
        XCTAssertEqual(signature.canonical, "ID<xmpp.account>? account, BOOL success, HANDLER? done")
        XCTAssertEqual(try Signature(parsing: "").parameters.count, 0)
        for bad in ["BOOL? b", "ID a,", "ID a, ID a", "ID<> a", "INT<t> a", "ID", "id a", "ID  1a"] {
            XCTAssertEqual(code { _ = try Signature(parsing: bad) }, .invalidArgument, bad)
        }
    }

    func testDescriptionForLogs() throws {
        var handler = try Handler(name: "on_login", invalidationName: "cancel",
                                  bound: Arguments([("account", .id(IDValue(string: "dana", typeTag: "xmpp.account"))),
                                                    ("raw", .id(IDValue(bytes: [0, 1]))), ("ok", .bool(true))]))
        XCTAssertEqual(handler.description, "on_login(account: ID<xmpp.account> \"dana\", raw: ID 2 bytes, ok: BOOL true) invalidation: cancel")
        handler.isInvalidated = true
        XCTAssertTrue(handler.description.hasSuffix("[invalidated]"))
    }
}
