import XCTest
@testable import OutliveCore

final class IdentifierTests: XCTestCase {
    func testMadeIdentifiersAreValidVersion4AndDistinct() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let id = Identifier.make()
            XCTAssertTrue(Identifier.isValid(id), id)
            XCTAssertEqual(Array(id.utf8)[14], UInt8(ascii: "4"))
            XCTAssertTrue(seen.insert(id).inserted)
        }
    }

    func testIdentifiersMadeTogetherAreValidVersion4AndDistinct() {
        let ids = Identifier.make(count: 32) + Identifier.make(count: 32)
        XCTAssertEqual(ids.count, 64)
        XCTAssertEqual(Set(ids).count, 64)
        for id in ids {
            XCTAssertTrue(Identifier.isValid(id), id)
            XCTAssertEqual(Array(id.utf8)[14], UInt8(ascii: "4"))
            XCTAssertTrue([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(Array(id.utf8)[19]), id)
        }
    }

    func testTimeOrderedIdentifiersAreValidVersion7DistinctAndSortByTheirMillisecond() {
        var ids: [String] = []
        for _ in 0..<1_000 { ids.append(Identifier.makeTimeOrdered()) }
        usleep(2_000)
        let later = Identifier.makeTimeOrdered()
        XCTAssertEqual(Set(ids).count, ids.count)
        for id in ids {
            XCTAssertTrue(Identifier.isValid(id), id)
            XCTAssertEqual(Array(id.utf8)[14], UInt8(ascii: "7"))
            XCTAssertTrue([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(Array(id.utf8)[19]), id)
            // The first 48 bits are the milliseconds: one made 2 ms later sorts after.
            XCTAssertLessThan(id, later)
        }
        let milliseconds = UInt64(later.replacingOccurrences(of: "-", with: "").prefix(12), radix: 16) ?? 0
        XCTAssertLessThan(abs(Double(milliseconds) / 1000 - Clock.wall()), 5)
    }

    func testSeqIdentifiersCarryTheirSeqInTheirDigitsWithTheVersionAndVariant() {
        for seq: Int64 in [0, 1, 4_095, 4_096, 0x1234_5678_9ABC, (1 << 40) + 123, SeqID.maxSeq] {
            let id = SeqID.make(seq: seq)
            let digits = Array(id.replacingOccurrences(of: "-", with: ""))
            XCTAssertTrue(Identifier.isValid(id), id)
            XCTAssertEqual(Array(id.utf8)[14], UInt8(ascii: "8"), id)
            XCTAssertTrue([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(Array(id.utf8)[19]), id)
            let high = String(seq >> 12, radix: 16)
            XCTAssertEqual(String(digits[0..<12]), String(repeating: "0", count: 12 - high.count) + high, id)
            XCTAssertEqual(Int64(String(digits[13..<16]), radix: 16), seq & 0xFFF, id)
            XCTAssertEqual(SeqID.seq(of: id), seq, id)
        }
        XCTAssertNotEqual(SeqID.make(seq: 7), SeqID.make(seq: 7))
    }

    func testMalformedIdentifiersAreRejected() {
        XCTAssertFalse(Identifier.isValid(""))
        XCTAssertFalse(Identifier.isValid("not-a-uuid"))
        XCTAssertFalse(Identifier.isValid("123e4567-e89b-12d3-a456-42661417400g"))
        XCTAssertFalse(Identifier.isValid("123e4567e89b-12d3-a456-4266141740000"))
    }
}
