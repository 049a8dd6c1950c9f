// swift-tools-version:6.1
import PackageDescription

// liboutlive.so exports only the C API: everything else (the Swift runtime linked
// statically, OutliveCore's symbols, the C shims) stays local through this script.
let exportMap = Context.packageDirectory + "/Sources/Outlive/exports.map"
// The `outlive` command carries the C API itself and exports it, so that the
// handler libraries its worker loads bind to this one copy of the core.
let commandExports = Context.packageDirectory + "/Sources/outlive-cli/exports.list"

let package = Package(
    name: "outlive",
    products: [
        .library(name: "outlive", type: .dynamic, targets: ["Outlive"]),
        .executable(name: "outlive-cli", targets: ["outlive-cli"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Shims over libc, SQLite, libffi and dlfcn, prefixed COutlive_.
        .target(
            name: "COutliveSystem",
            // DWARF 4: valgrind 3.19 (Debian 12) cannot read a library with more
            // than one DWARF 5 unit (the C shims are the only ones clang makes).
            cSettings: [.unsafeFlags(["-gdwarf-4"])],
            linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("ffi"), .linkedLibrary("dl"), .linkedLibrary("pthread")]
        ),
        // include/outlive.h as a module, so that every export is checked against it.
        .systemLibrary(name: "COutliveAPI", path: "Sources/COutliveAPI"),
        // The core reads what the header defines (the handler descriptor) from the header itself.
        .target(name: "OutliveCore", dependencies: ["COutliveSystem", "COutliveAPI"]),
        .target(
            name: "Outlive",
            dependencies: ["OutliveCore", "COutliveAPI", "COutliveSystem"],
            exclude: ["exports.map"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(exportMap)",
                                           "-Xlinker", "-soname=liboutlive.so.0"])]
        ),
        // The `outlive` command: inspect a store, run durable work as a service.
        .executableTarget(
            name: "outlive-cli",
            dependencies: ["OutliveCore", "Outlive", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            exclude: ["exports.list"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--dynamic-list=\(commandExports)"])]
        ),
        .testTarget(name: "OutliveCoreTests", dependencies: ["OutliveCore"]),
    ],
    swiftLanguageModes: [.v5]
)
