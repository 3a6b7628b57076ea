import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

extension SideFile {
    /// Whether `name` is one Courier gives only to files that no later run can use, and so
    /// removes when nobody holds them: an encoded multipart body (`.courier-<uuid>.multipart`,
    /// named in `TransferTask.encodeMultipartIfNeeded`), a download's random staging file
    /// (`.courier-<uuid>.courier-staging`, ``StagingFile/randomURL(in:)``) and a resume record's
    /// temporary (`.<record>.courier-resume.tmp`, ``AtomicFile``).
    ///
    /// Never a partial file (`….courier-partial`) or a record (`….courier-resume`): those are
    /// what a later run continues from, and are removed only by the download that uses them.
    static func isSweepable(_ name: String) -> Bool {
        if name.hasPrefix("."), name.hasSuffix(".courier-resume.tmp") { return true }
        for suffix in [".multipart", StagingFile.randomSuffix] where name.hasPrefix(".courier-") && name.hasSuffix(suffix) {
            let middle = name.dropFirst(".courier-".count).dropLast(suffix.count)
            if middle.count == 36, UUID(uuidString: String(middle)) != nil { return true }
        }
        return false
    }

    /// Removes side files left by processes that died (a multipart body whose upload never
    /// finished, a staging file of a download killed on its way): once per directory per
    /// process, off the caller's thread, the first time a manager uses the directory.
    ///
    /// Who owns a file is decided by a lock, not by process IDs (they are reused, and differ
    /// between containers sharing a directory): Courier holds `flock(LOCK_EX)` on every such file
    /// for as long as it uses it, so a file the sweep can lock belongs to nobody. The sweep
    /// removes a file only when its name is one of ``isSweepable(_:)``, it is private
    /// (``isPrivate(_:)``: a symlink is not followed, a hard link to another file is left alone),
    /// it was last modified over ``minimumAge`` ago, the lock is free, and the name still refers
    /// to the file it locked.
    final class Sweeper: Sendable {
        /// The one sweeper of the process: "once per directory" holds across managers.
        static let shared = Sweeper()

        /// Files younger than this are left for a later run. A file can only be locked once it
        /// exists, so a file another process has just created may not be locked yet; a minute is
        /// far beyond that gap, and what is spared now is swept by the next run.
        static let minimumAge: time_t = 60

        private let swept = Locked<Set<String>>([])
        /// A queue of its own at utility QoS: listing a large directory must never hold up the
        /// global pool that the managers' callbacks run on.
        private let queue = DispatchQueue(label: "courier.side-file-sweep", qos: .utility)

        /// Sweeps `directory` in the background, unless this process has already swept it.
        func sweepOnce(_ directory: URL) {
            let path = directory.standardizedFileURL.path
            guard swept.withLock({ $0.insert(path).inserted }) else { return }
            let cutoff = time(nil) - Self.minimumAge
            queue.async { Self.sweep(path, modifiedBefore: cutoff) }
        }

        /// Tests: waits until the sweeps started so far are done.
        func waitUntilIdle() {
            queue.sync {}
        }

        /// Removes the abandoned side files in `directory` last modified before `cutoff` (seconds
        /// since 1970); returns their names.
        @discardableResult
        static func sweep(_ directory: String, modifiedBefore cutoff: time_t) -> [String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { name in
                isSweepable(name) && removeIfAbandoned(URL(fileURLWithPath: directory).appendingPathComponent(name), cutoff)
            }
        }

        private static func removeIfAbandoned(_ url: URL, _ cutoff: time_t) -> Bool {
            // Read-only and non-blocking: the sweep never writes, and a FIFO must not hang it.
            guard let (descriptor, status) = openExisting(url, access: O_RDONLY) else { return false }
            defer { close(descriptor) }
            guard isPrivate(status), status.st_mtim.tv_sec < cutoff,
                // A staging file with a record beside it was made a partial file by the caller's
                // own `DownloadPolicy.partialFile`: it is resumable state.
                !url.lastPathComponent.hasSuffix(StagingFile.randomSuffix)
                    || access(DownloadPolicy.recordFile(for: url).path, F_OK) != 0,
                lock(descriptor),
                names(url, descriptor)
            else { return false }
            return unlink(url.path) == 0
        }
    }
}
