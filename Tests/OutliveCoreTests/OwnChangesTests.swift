import XCTest
@testable import OutliveCore

/// A handle's own changes, handed to its feed reading in memory: taken in
/// the order appended, given back ahead of later ones when a read failed,
/// and past the limit dropped for a resync, never silently.
final class OwnChangesTests: XCTestCase {
    func testChangesAreTakenOnceInTheOrderAppended() {
        let own = OwnChanges()
        own.append([("kv", "a"), ("signal", "s")])
        own.append([("kv", "b")])
        let taken = own.take()
        XCTAssertEqual(taken.changes.map { $0.topic + "/" + $0.key }, ["kv/a", "signal/s", "kv/b"])
        XCTAssertFalse(taken.overflowed)
        XCTAssertTrue(own.take().changes.isEmpty)
    }

    func testChangesGivenBackAfterAFailedReadComeBeforeLaterOnes() {
        let own = OwnChanges()
        own.append([("kv", "a")])
        let taken = own.take()
        own.append([("kv", "b")])
        own.putBack(taken)
        XCTAssertEqual(own.take().changes.map(\.key), ["a", "b"])
    }

    func testMoreThanTheLimitAreDroppedForOneResync() {
        let own = OwnChanges()
        own.append(Array(repeating: ("kv", "k"), count: OwnChanges.limit))
        own.append([("kv", "one too many")])
        own.append([("kv", "after")])
        let taken = own.take()
        XCTAssertTrue(taken.overflowed)
        XCTAssertTrue(taken.changes.isEmpty)
        // The resync was taken: what follows is counted afresh.
        own.append([("kv", "next")])
        XCTAssertEqual(own.take().changes.map(\.key), ["next"])
    }

    func testAResyncGivenBackIsNotLost() {
        let own = OwnChanges()
        own.append(Array(repeating: ("kv", "k"), count: OwnChanges.limit + 1))
        let taken = own.take()
        own.append([("kv", "later")])
        own.putBack(taken)
        XCTAssertTrue(own.take().overflowed)
    }
}
