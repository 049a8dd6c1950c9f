import XCTest
@testable import OutliveCore

/// Store locations given as URIs (no server needed).
final class PostgreSQLLocationTests: XCTestCase {
    func testOutlivesParametersAreTakenOutAndTheRestKept() throws {
        let location = try PostgreSQLLocation(uri: "postgresql://app:pw@db.example:5433/jobs?sslmode=require&outlive_store=billing&outlive_liveness=30&connect_timeout=5")
        XCTAssertEqual(location.conninfo, "postgresql://app:pw@db.example:5433/jobs?sslmode=require&connect_timeout=5")
        XCTAssertEqual(location.store, "billing")
        XCTAssertEqual(location.bound.seconds, 30)
    }

    func testDefaultsAreTheMainStoreAndATenSecondBound() throws {
        for uri in ["postgres://localhost/db", "POSTGRESQL://localhost/db", "postgresql:///db?outlive_store=main"] {
            let location = try PostgreSQLLocation(uri: uri)
            XCTAssertEqual(location.store, "main", uri)
            XCTAssertEqual(location.bound.seconds, 10, uri)
        }
        XCTAssertEqual(try PostgreSQLLocation(uri: "postgresql:///db?outlive_store=main").conninfo, "postgresql:///db")
    }

    func testOnlyPostgreSQLSchemesAreURIs() {
        XCTAssertTrue(PostgreSQLLocation.isURI("postgresql://h/d"))
        XCTAssertTrue(PostgreSQLLocation.isURI("Postgres://h/d"))
        XCTAssertFalse(PostgreSQLLocation.isURI("/var/lib/app/store"))
        XCTAssertFalse(PostgreSQLLocation.isURI("postgresql:/h"))
        XCTAssertFalse(PostgreSQLLocation.isURI("mysql://h/d"))
    }

    func testBadParametersAreRefusedWithoutRepeatingTheURI() {
        let cases = [
            "postgresql://u:secret@h/d?outlive_store=Bad-Name",
            "postgresql://u:secret@h/d?outlive_liveness=1",
            "postgresql://u:secret@h/d?outlive_liveness=ten",
            "postgresql://u:secret@h/d?outlive_liveness",
            "postgresql://u:secret@h/d?outlive_stor=x",
            "postgresql://u:secret@h/d?outlive_store=%zz",
            "postgresql://u:secret@h/d?outlive_store=%ff",
            "postgresql://u:secret@h/d#fragment",
            "postgresql://u:secret@h/d\n",
            "/not/a/uri",
        ]
        for uri in cases {
            XCTAssertThrowsError(try PostgreSQLLocation(uri: uri), uri) {
                XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument, uri)
                XCTAssertFalse(($0 as? OutliveError)?.message.contains("secret") ?? true, "\($0)")
            }
        }
    }

    func testStoreNameMayBePercentEncoded() throws {
        XCTAssertEqual(try PostgreSQLLocation(uri: "postgresql://h/d?outlive_store=a%5fb").store, "a_b")
    }
}
