import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

/// Entries in a directory: they survive restarts and a `kill -9` at any moment, and several
/// processes (or managers) may use one directory at once.
///
/// - **Whole or absent.** An entry is written to `tmp/` and renamed into place, so a reader sees
///   the old file, the new one, or none. Each file ends with a CRC-32C of everything before it;
///   a file that fails it (a power cut after the rename, a truncated or damaged file) is a miss
///   and is removed, never served.
/// - **Layout.** `<directory>/<SHA-256 of the URL key>/<hash of the Vary values>`: a lookup reads
///   one small directory, so it sees what other processes stored. Directories are 0700, files
///   0600; nothing follows a symlink (``SideFile``).
/// - **Bounded.** The process keeps an index of the files (name, size, order of use) — its only
///   memory, bounded by the number of entries — and evicts the least recently used past
///   ``maximumBytes``. Eviction takes an exclusive `flock(2)` on `<directory>/.lock` and
///   re-reads the directory first, so processes sharing it count each other's files.
/// - **Never a secret.** Entries hold no request field but the normalised ones `Vary` names, and a
///   credential or cookie among those only as a SHA-256 (``CachePolicy/varyValues(names:request:secrets:)``).
final class DiskCacheStorage: CacheStorage {
    private struct Indexed {
        var size: Int
    }
    private struct State {
        var files: [String: Indexed] = [:]  // "<keyhash>/<variant>" -> size
        var order = LRUList<String>()
        var bytes = 0
    }

    let maximumBytes: Int
    let directory: URL
    private let state = Locked(State())
    private static let magic: [UInt8] = Array("CRC1".utf8)

    /// Opens (creating when needed) the store in `directory`.
    init(directory: URL, maximumBytes: Int) throws(CourierError) {
        self.directory = directory.standardizedFileURL
        self.maximumBytes = max(0, maximumBytes)
        try Self.makePrivateDirectory(self.directory)
        try Self.makePrivateDirectory(self.directory.appendingPathComponent("tmp"))
        sweepTemporaries()
        state.withLock { $0 = scan() }
    }

    var byteCount: Int { state.withLock { $0.bytes } }

    // MARK: - Reading

    func entries(for key: String) -> [CacheEntry] {
        let folder = Self.keyHash(key)
        var found: [CacheEntry] = []
        for name in Self.names(in: directory.appendingPathComponent(folder)) where !name.hasPrefix(".") {
            let relative = folder + "/" + name
            guard var entry = read(relative), entry.head.key == folder else {
                discard(relative)
                continue
            }
            entry.head.key = key
            found.append(entry)
        }
        return found.sorted { $0.head.responseTime > $1.head.responseTime }
    }

    private func read(_ relative: String) -> CacheEntry? {
        let url = directory.appendingPathComponent(relative)
        guard let data = Self.contents(of: url, limit: maximumBytes) else { return nil }
        return Self.decode(data)
    }

    /// The bytes of the private file at `url` (never through a symlink), sized by `fstat`, or
    /// `nil` when it is not a private regular file or is longer than `limit`.
    static func contents(of url: URL, limit: Int) -> Data? {
        guard let (descriptor, status) = SideFile.openExisting(url, access: O_RDONLY) else { return nil }
        defer { close(descriptor) }
        let size = Int(status.st_size)
        guard SideFile.isPrivate(status), size <= limit else { return nil }
        var data = Data(count: size)
        var count = 0
        let ok = data.withUnsafeMutableBytes { buffer -> Bool in
            while count < size {
                let read = Glibc.read(descriptor, buffer.baseAddress! + count, size - count)
                if read < 0, errno == EINTR { continue }
                guard read > 0 else { return false }  // shorter than fstat said: changed under us
                count += read
            }
            return true
        }
        return ok ? data : nil
    }

    /// The entry in `data`, or `nil` when anything in it is wrong: magic, lengths, checksum, JSON.
    static func decode(_ data: Data) -> CacheEntry? {
        let data = Data(data)  // indices from 0
        guard data.count >= 12, data.prefix(4).elementsEqual(magic) else { return nil }
        let headLength = Int(Self.uint32(data, at: 4))
        guard headLength <= data.count - 12 else { return nil }
        let stored = Self.uint32(data, at: data.count - 4)
        let computed = data.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(data.count - 4)])) }
        guard computed == stored,
            let head = try? JSONDecoder().decode(CacheEntryHead.self, from: data.subdata(in: 8..<(8 + headLength)))
        else { return nil }
        let body = data.subdata(in: (8 + headLength)..<(data.count - 4))
        guard body.count == head.bodyLength else { return nil }
        return CacheEntry(head: head, body: body)
    }

    private static func uint32(_ data: Data, at offset: Int) -> UInt32 {
        data.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }

    /// The file's bytes: magic, head length, head (JSON), body, CRC-32C of all that. The head
    /// names its URL only by the key's hash (a query may hold a token, user info a password);
    /// a reader restores the key it looked up, and an answer takes its request's URL.
    static func encode(_ entry: CacheEntry) -> Data? {
        var stored = entry.head
        stored.key = keyHash(stored.key)
        stored.url = ""
        guard let head = try? JSONEncoder().encode(stored) else { return nil }
        var data = Data(capacity: 12 + head.count + entry.body.count)
        data.append(contentsOf: magic)
        withUnsafeBytes(of: UInt32(head.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(head)
        data.append(entry.body)
        let crc = data.withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: crc.littleEndian) { data.append(contentsOf: $0) }
        return data
    }

    // MARK: - Writing

    @discardableResult func store(_ entry: CacheEntry) -> Bool {
        guard let data = Self.encode(entry), data.count <= maximumBytes else {
            remove(entry.head.variant)
            return false
        }
        let relative = Self.relativePath(entry.head.variant)
        guard write(data, to: relative) else {
            // The older answer must not outlive a newer one that could not be kept (a full disk).
            discard(relative)
            return false
        }
        let over = state.withLock { state -> Bool in
            Self.forget(relative, in: &state)
            state.files[relative] = Indexed(size: data.count)
            state.bytes += data.count
            state.order.touch(relative)
            return state.bytes > maximumBytes
        }
        if over { evict() }
        return true
    }

    func update(_ head: CacheEntryHead) {
        let relative = Self.relativePath(head.variant)
        guard var entry = read(relative) else { return discard(relative) }
        entry.head = head
        entry.head.bodyLength = entry.body.count
        _ = store(entry)
    }

    /// Writes `data` to a temporary file and renames it to `relative`; `false` on any failure
    /// (a full disk): nothing is left half-written under the entry's name.
    private func write(_ data: Data, to relative: String) -> Bool {
        let temporary = directory.appendingPathComponent("tmp/\(UUID().uuidString.lowercased())")
        let target = directory.appendingPathComponent(relative)
        do {
            try Self.makePrivateDirectory(target.deletingLastPathComponent())
            let descriptor = try SideFile.create(temporary, failure: "cannot write a cache entry")
            let code = data.withUnsafeBytes { SideFile.writeAll($0, to: descriptor) }
            close(descriptor)
            guard code == 0, rename(temporary.path, target.path) == 0 else {
                unlink(temporary.path)
                return false
            }
            return true
        } catch {
            unlink(temporary.path)
            return false
        }
    }

    func touch(_ variant: CacheVariant) {
        let relative = Self.relativePath(variant)
        state.withLock { state in if state.files[relative] != nil { state.order.touch(relative) } }
    }

    func remove(_ variant: CacheVariant) {
        discard(Self.relativePath(variant))
    }

    func remove(key: String) {
        let folder = Self.keyHash(key)
        for name in Self.names(in: directory.appendingPathComponent(folder)) { discard(folder + "/" + name) }
        rmdir(directory.appendingPathComponent(folder).path)
    }

    func removeAll() {
        withDirectoryLock {
            for folder in Self.names(in: directory) where folder != "tmp" && !folder.hasPrefix(".") {
                for name in Self.names(in: directory.appendingPathComponent(folder)) {
                    unlink(directory.appendingPathComponent(folder + "/" + name).path)
                }
                rmdir(directory.appendingPathComponent(folder).path)
            }
            state.withLock { $0 = State() }
        }
    }

    private func discard(_ relative: String) {
        unlink(directory.appendingPathComponent(relative).path)
        state.withLock { Self.forget(relative, in: &$0) }
    }

    private static func forget(_ relative: String, in state: inout State) {
        guard let old = state.files.removeValue(forKey: relative) else { return }
        state.bytes -= old.size
        state.order.remove(relative)
    }

    // MARK: - Eviction

    /// Under the directory's lock: re-reads the directory (other processes' files count too),
    /// keeping this process's order of use for the files it knows, then removes the least
    /// recently used until the total is under nine tenths of the limit — so that a full cache
    /// re-reads its directory once per tenth of its size stored, not on every store.
    private func evict() {
        withDirectoryLock {
            let fresh = scan()
            state.withLock { state in
                var merged = fresh
                // Files this process used keep their place: after the ones it never touched.
                var known: [String] = []
                var cursor = state.order
                while let oldest = cursor.oldest {
                    known.append(oldest)
                    cursor.remove(oldest)
                }
                for relative in known where merged.files[relative] != nil { merged.order.touch(relative) }
                state = merged
                let target = maximumBytes - maximumBytes / 10
                while state.bytes > target, let oldest = state.order.oldest {
                    unlink(directory.appendingPathComponent(oldest).path)
                    Self.forget(oldest, in: &state)
                }
            }
        }
    }

    private func withDirectoryLock(_ body: () -> Void) {
        let lockFile = directory.appendingPathComponent(".lock")
        let descriptor = open(lockFile.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor >= 0 { flock(descriptor, LOCK_EX) }
        body()
        if descriptor >= 0 { close(descriptor) }  // closing releases the lock
    }

    /// The index from the directory: every entry file with its size, oldest modification first.
    private func scan() -> State {
        var found: [(String, Int, Int)] = []
        for folder in Self.names(in: directory) where folder.count == 64 {
            for name in Self.names(in: directory.appendingPathComponent(folder)) where !name.hasPrefix(".") {
                var status = stat()
                let relative = folder + "/" + name
                guard lstat(directory.appendingPathComponent(relative).path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                    continue
                }
                found.append((relative, Int(status.st_size), Int(status.st_mtim.tv_sec)))
            }
        }
        var state = State()
        for (relative, size, _) in found.sorted(by: { $0.2 < $1.2 }) {
            state.files[relative] = Indexed(size: size)
            state.bytes += size
            state.order.touch(relative)
        }
        return state
    }

    /// Removes temporaries a killed process left: older than an hour (a live writer's are seconds old).
    private func sweepTemporaries() {
        let folder = directory.appendingPathComponent("tmp")
        let cutoff = Int(Date().timeIntervalSince1970) - 3600
        for name in Self.names(in: folder) {
            var status = stat()
            let path = folder.appendingPathComponent(name).path
            if lstat(path, &status) == 0, Int(status.st_mtim.tv_sec) < cutoff { unlink(path) }
        }
    }

    // MARK: - Names

    static func keyHash(_ key: String) -> String { SHA256.hexString(SHA256.hash(Data(key.utf8))) }

    static func relativePath(_ variant: CacheVariant) -> String {
        var text = ""
        for value in variant.vary { text += value.name + "\u{0}" + (value.value.map { "=" + $0 } ?? "") + "\u{1}" }
        return keyHash(variant.key) + "/" + String(SHA256.hexString(SHA256.hash(Data(text.utf8))).prefix(32))
    }

    /// The names in a directory (none when it cannot be read), without `.` and `..`.
    static func names(in url: URL) -> [String] {
        guard let handle = opendir(url.path) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates `url` 0700, or checks that the existing one is a directory of this user (and makes it 0700).
    static func makePrivateDirectory(_ url: URL) throws(CourierError) {
        if mkdir(url.path, 0o700) == 0 { return }
        let code = errno
        guard code == EEXIST else { throw CourierError.fileSystem("cannot create the cache directory \(url.path)", url: url, errno: code) }
        var status = stat()
        guard lstat(url.path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw CourierError.fileSystem("the cache directory \(url.path) is not a directory", url: url)
        }
        guard status.st_uid == geteuid() else {
            throw CourierError.fileSystem("the cache directory \(url.path) belongs to another user", url: url)
        }
        if status.st_mode & 0o777 != 0o700 { chmod(url.path, 0o700) }
    }
}
