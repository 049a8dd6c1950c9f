/// The library's version; the test suite checks that it agrees with VERSION,
/// the header's OUTLIVE_VERSION_* macros and outlive.pc.
public enum OutliveVersion {
    public static let major: UInt32 = 0
    public static let minor: UInt32 = 2
    public static let patch: UInt32 = 0
    public static let text: StaticString = "0.2.0"
    public static var number: UInt32 { major * 1_000_000 + minor * 1_000 + patch }
}
