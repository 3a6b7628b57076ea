import XCTest
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// The memory and disk stores: bounds, eviction order, persistence, damage, permissions, sharing.
final class CacheStorageTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        try super.tearDownWithError()
    }

    private func entry(_ path: String, body: Int = 1000, vary: [CacheEntryHead.VaryValue] = [], at time: TimeInterval = 0) -> CacheEntry {
        let key = "http://example.test\(path)"
        let bytes = Data((0..<body).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ path.utf8.count) })
        let head = CacheEntryHead(
            key: key, url: key, status: 200, headers: CacheHeaders([("Cache-Control", "max-age=60")]), vary: vary,
            requestTime: Date(timeIntervalSince1970: time), responseTime: Date(timeIntervalSince1970: time), bodyLength: body)
        return CacheEntry(head: head, body: bytes)
    }

    private func disk(_ maximumBytes: Int = 1 << 20) throws -> DiskCacheStorage {
        try DiskCacheStorage(directory: directory, maximumBytes: maximumBytes)
    }

    private func files() -> [URL] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { url in
            var status = stat()
            return lstat(url.path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && url.lastPathComponent != ".lock"
        }
    }

    // MARK: - Both stores

    func testBothStoresEvictTheLeastRecentlyUsedPastTheirLimit() throws {
        // Room for three entries and a half, whatever each store counts per entry.
        let memorySize = entry("/a").byteCount
        let diskSize = try XCTUnwrap(DiskCacheStorage.encode(entry("/a"))).count
        let stores: [any CacheStorage] = [MemoryCacheStorage(maximumBytes: memorySize * 7 / 2), try disk(diskSize * 7 / 2)]
        for store in stores {
            store.store(entry("/a"))
            store.store(entry("/b"))
            store.store(entry("/c"))
            store.touch(entry("/a").head.variant)  // /b is now the least recently used
            store.store(entry("/d"))
            XCTAssertFalse(store.entries(for: entry("/a").head.key).isEmpty, "\(type(of: store))")
            XCTAssertTrue(store.entries(for: entry("/b").head.key).isEmpty, "\(type(of: store))")
            XCTAssertFalse(store.entries(for: entry("/d").head.key).isEmpty, "\(type(of: store))")
            XCTAssertLessThanOrEqual(store.byteCount, store.maximumBytes)
        }
    }

    func testAnEntryLargerThanTheLimitIsNotStored() throws {
        for store in [MemoryCacheStorage(maximumBytes: 500) as any CacheStorage, try disk(500)] {
            XCTAssertFalse(store.store(entry("/big")))
            XCTAssertEqual(store.byteCount, 0)
        }
    }

    func testVariantsOfOneURLAreKeptApartAndAReplacementReplacesOnlyItsOwn() throws {
        for store in [MemoryCacheStorage(maximumBytes: 1 << 20) as any CacheStorage, try disk()] {
            let en = entry("/v", body: 10, vary: [.init(name: "accept-language", value: "en")], at: 1)
            let de = entry("/v", body: 20, vary: [.init(name: "accept-language", value: "de")], at: 2)
            store.store(en)
            store.store(de)
            XCTAssertEqual(store.entries(for: en.head.key).map(\.body.count), [20, 10], "newest first")
            let replacement = entry("/v", body: 30, vary: [.init(name: "accept-language", value: "en")], at: 3)
            store.store(replacement)
            XCTAssertEqual(store.entries(for: en.head.key).map(\.body.count), [30, 20])
            if store is MemoryCacheStorage {
                XCTAssertEqual(store.byteCount, replacement.byteCount + de.byteCount, "the replaced entry's bytes are no longer counted")
                store.store(de)
                XCTAssertEqual(store.entries(for: en.head.key).map(\.body.count), [20, 30], "a replaced variant moves to the front")
            }
            store.remove(key: en.head.key)
            XCTAssertTrue(store.entries(for: en.head.key).isEmpty)
            XCTAssertEqual(store.byteCount, 0)
        }
    }

    func testUpdateReplacesTheHeadAndKeepsTheBody() throws {
        for store in [MemoryCacheStorage(maximumBytes: 1 << 20) as any CacheStorage, try disk()] {
            let original = entry("/u")
            store.store(original)
            var head = original.head
            head.headers.set("X-New", "1")
            store.update(head)
            let found = store.entries(for: head.key).first
            XCTAssertEqual(found?.head.headers["X-New"], "1")
            XCTAssertEqual(found?.body, original.body)
        }
    }

    // MARK: - Disk

    func testTheDiskStoreSurvivesARestartWithPrivatePermissions() throws {
        try disk().store(entry("/p"))
        let reopened = try disk()
        XCTAssertEqual(reopened.entries(for: entry("/p").head.key).first?.body, entry("/p").body)
        XCTAssertEqual(reopened.byteCount, try disk().byteCount)
        XCTAssertGreaterThan(reopened.byteCount, 1000)
        var status = stat()
        XCTAssertEqual(lstat(directory.path, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o700)
        for file in files() {
            XCTAssertEqual(lstat(file.path, &status), 0)
            XCTAssertEqual(status.st_mode & 0o777, 0o600, file.path)
        }
    }

    func testATruncatedOrDamagedEntryIsAMissAndIsRemoved() throws {
        let store = try disk()
        for (index, damage) in ["truncate", "flip", "empty", "garbage"].enumerated() {
            let path = "/damaged\(index)"
            store.store(entry(path))
            let before = Set(files())
            guard let file = files().first(where: { $0.path.contains(DiskCacheStorage.keyHash(entry(path).head.key)) }) else {
                return XCTFail("no file for \(path) among \(before)")
            }
            var bytes = try Data(contentsOf: file)
            switch damage {
            case "truncate": bytes = bytes.prefix(bytes.count / 2)
            case "flip": bytes[bytes.count / 2] ^= 0x40
            case "empty": bytes = Data()
            default: bytes = Data(repeating: 0x41, count: 5000)
            }
            try bytes.write(to: file)
            let reopened = try disk()
            XCTAssertTrue(reopened.entries(for: entry(path).head.key).isEmpty, damage)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "\(damage): the damaged file is removed")
        }
    }

    func testTwoStoresOnOneDirectorySeeEachOthersEntriesAndStayBounded() throws {
        let first = try disk(6000)
        let second = try disk(6000)
        first.store(entry("/one"))
        XCTAssertEqual(second.entries(for: entry("/one").head.key).first?.body, entry("/one").body, "written by the other")
        for index in 0..<10 { (index % 2 == 0 ? first : second).store(entry("/n\(index)")) }
        let total = files().reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        XCTAssertLessThanOrEqual(total, 6000, "eviction under the directory lock counts both processes' files")
        for file in files() {
            XCTAssertNotNil(DiskCacheStorage.decode(try Data(contentsOf: file)), "every file left is whole")
        }
    }

    func testAnotherUsersOrANonDirectoryPathIsRefusedWithAFileSystemError() throws {
        try Data("x".utf8).write(to: directory)
        XCTAssertThrowsError(try disk()) { error in
            XCTAssertEqual((error as? CourierError)?.code, .fileSystem)
        }
        try FileManager.default.removeItem(at: directory)
        XCTAssertThrowsError(try ResponseCache.disk(directory: URL(fileURLWithPath: "/proc/courier-no-such/x"), maximumBytes: 1000))
    }

    func testLeftoverTemporariesOfAKilledWriterAreSweptAndNeverRead() throws {
        _ = try disk()
        let stale = directory.appendingPathComponent("tmp/leftover")
        try Data(repeating: 1, count: 100).write(to: stale)
        let old = Date(timeIntervalSinceNow: -7200)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: stale.path)
        let fresh = directory.appendingPathComponent("tmp/in-progress")
        try Data(repeating: 1, count: 100).write(to: fresh)
        _ = try disk()
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: fresh.path), "a live writer's temporary is left alone")
    }

    func testEntriesNeverHoldCredentialsOrCookiesInClear() throws {
        let request = CacheRequest(
            method: "GET", url: URL(string: "http://example.test/private")!,
            headers: CacheHeaders([("Authorization", "Bearer top-secret-token"), ("Cookie", "sid=cookie-secret"), ("X-Key", "key-secret")]))
        let names = ["authorization", "cookie", "x-key"]
        var stored = entry("/private")
        stored.head.vary = CachePolicy.varyValues(names: names, request: request, secrets: ["x-key"])
        stored.head.headers.append("Vary", "Authorization, Cookie, X-Key")
        try disk().store(stored)
        for file in files() {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            for secret in ["top-secret-token", "cookie-secret", "key-secret"] { XCTAssertFalse(text.contains(secret), secret) }
        }
        XCTAssertTrue(CachePolicy.varyMatches(try disk().entries(for: stored.head.key)[0].head, request: request, secrets: ["x-key"]))
    }

    func testADiskEntryNamesItsURLOnlyByHashSoATokenInTheQueryOrAPasswordNeverReachesTheDisk() throws {
        // Given an answer for a URL with a password in its user info and a token in its query
        let key = "http://user:pass-secret@example.test/data?token=query-secret"
        var stored = entry("/x")
        stored.head.key = key
        stored.head.url = key
        let store = try disk()
        store.store(stored)
        // Then no file holds either in clear
        for file in files() {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            for secret in ["pass-secret", "query-secret"] { XCTAssertFalse(text.contains(secret), secret) }
        }
        // And the entry is found by its key, with that key, and answers with its request's URL
        let found = try disk().entries(for: key)
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.head.key, key)
        XCTAssertEqual(found.first?.body, stored.body)
        XCTAssertEqual(found.first?.head.url, "")
    }
}
