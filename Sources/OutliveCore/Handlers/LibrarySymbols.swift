import COutliveSystem

/// The names a shared library exports, read from its ELF dynamic symbol table
/// on disk, so that `outlive handlers LIBRARY` can list the descriptors a
/// library declares (dlsym can look a name up but cannot enumerate). Every
/// offset is bounds-checked: a damaged or hostile file is refused, never read
/// past its end.
enum LibrarySymbols {
    static let maxFileSize = 512 << 20

    static func definedNames(inFile path: String, withPrefix prefix: String) throws -> [String] {
        let bytes = try read(path)
        func u16(_ at: Int) throws -> Int { try check(at, 2, bytes.count, path); return Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) throws -> Int { try check(at, 4, bytes.count, path); return (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        func u64(_ at: Int) throws -> Int {
            try check(at, 8, bytes.count, path)
            let value = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
            guard value <= UInt64(Int.max) else { throw OutliveError.corrupt("\(path): an ELF offset is out of range") }
            return Int(value)
        }
        guard bytes.count >= 64, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46 else {
            throw OutliveError.invalidArgument("\(path) is not an ELF file")
        }
        guard bytes[4] == 2, bytes[5] == 1 else { throw OutliveError.invalidArgument("\(path) is not a 64-bit little-endian ELF file") }
        let sectionTable = try u64(0x28), entrySize = try u16(0x3A), sectionCount = try u16(0x3C)
        guard entrySize >= 64 else { throw OutliveError.corrupt("\(path): ELF section headers are too small") }
        var names: [String] = []
        for index in 0..<sectionCount {
            let header = sectionTable + index * entrySize
            guard try u32(header + 4) == 11 /* SHT_DYNSYM */ else { continue }
            let offset = try u64(header + 0x18), size = try u64(header + 0x20)
            let link = try u32(header + 0x28), symbolSize = try u64(header + 0x38)
            guard symbolSize >= 24, link < sectionCount else { throw OutliveError.corrupt("\(path): bad dynamic symbol table") }
            let stringHeader = sectionTable + link * entrySize
            let strings = try u64(stringHeader + 0x18), stringsSize = try u64(stringHeader + 0x20)
            try check(strings, stringsSize, bytes.count, path)
            for symbol in stride(from: offset, to: offset + size, by: symbolSize) {
                let nameOffset = try u32(symbol), definedIn = try u16(symbol + 6)
                guard definedIn != 0, nameOffset < stringsSize else { continue }
                var end = strings + nameOffset
                while end < strings + stringsSize && bytes[end] != 0 { end += 1 }
                let name = String(decoding: bytes[(strings + nameOffset)..<end], as: UTF8.self)
                if name.hasPrefix(prefix) { names.append(String(name.dropFirst(prefix.count))) }
            }
        }
        return names.sorted()
    }

    private static func check(_ at: Int, _ length: Int, _ total: Int, _ path: String) throws {
        guard at >= 0, length >= 0, at <= total, length <= total - at else {
            throw OutliveError.corrupt("\(path): an ELF offset points past the end of the file")
        }
    }

    private static func read(_ path: String) throws -> [UInt8] {
        let fd = COutlive_open(path, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw OutliveError.system("cannot open \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw OutliveError.system("cannot read \(path)") }
        let size = Int(info.st_size)
        guard size <= maxFileSize else { throw OutliveError.invalidArgument("\(path) is larger than \(maxFileSize) bytes") }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, size - done, off_t(done)) }
            guard got > 0 else { throw OutliveError.system("cannot read \(path)") }
            done += got
        }
        return bytes
    }
}

extension HandlerRegistry {
    /// The handlers a library declares (after loading it, as `outlive_handler_library_load`
    /// does, which runs its constructors): name, signature, instance or not.
    public func declaredHandlers(inLibrary path: String) throws -> [(name: String, signature: String, isInstance: Bool)] {
        let names = try LibrarySymbols.definedNames(inFile: path, withPrefix: HandlerRegistry.Descriptor.symbolPrefix)
        try loadLibrary(path: path)
        return names.compactMap { name in
            guard let declaration = try? resolve(name) else { return nil }
            if case .function(_, let resolver, _) = declaration.body {
                return (name, declaration.signature.text, resolver != nil)
            }
            return (name, declaration.signature.text, false)
        }
    }
}
