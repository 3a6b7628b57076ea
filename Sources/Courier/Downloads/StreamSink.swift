import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Writes one response body to a file descriptor — a pipe, a terminal, a file — as it arrives,
/// with the proofs a download to a file gets, and continues exactly after a process that died.
///
/// The rule it keeps: **what the descriptor holds is always a prefix of the true body** — never a
/// byte twice, never two versions spliced. It reads the response head with the download path's
/// own rules (``Facts``: the same proof that a body can be complete, the same validator choice),
/// checks the announced length and an expected SHA-256 at the end, and, given a record file,
/// keeps a ``Record`` of what is out: before each write the size of the write under way, after it
/// the bytes certainly written. A process that starts again with the same record file asks for
/// the body again (from its start: the skipped bytes still go through the digest), checks that
/// the answer is the same version, skips what the descriptor already holds and writes the rest.
///
/// When exact continuation cannot be proven — the earlier process died during a write, or the
/// body had no validator, or the server's version changed — a regular file the caller lets the
/// sink truncate (`truncates`) starts over from byte 0; any other descriptor (a pipe, a file
/// with other contents) fails with
/// ``Problem/cannotContinue(_:)`` or ``Problem/versionChanged(_:)``, since bytes a reader already
/// took cannot be taken back.
///
/// ```swift
/// let sink = try StreamSink(descriptor: STDOUT_FILENO, recordFile: record, expectedSHA256: digest)
/// let (bytes, response) = try await manager.bytes(for: request)
/// try sink.begin(response)
/// for try await chunk in bytes.chunks { try sink.write(chunk) }
/// try sink.finish()
/// ```
///
/// Every failure is a ``CourierError`` (``CourierError/Code-swift.struct/integrityFailed``,
/// ``CourierError/Code-swift.struct/invalidResumeData`` or
/// ``CourierError/Code-swift.struct/fileSystem``) whose `underlyingError` is the ``Problem``.
/// One task uses a sink at a time; the record file is the caller's to remove once the body is
/// complete (a process that dies after ``finish()`` must still find it, or it would write the
/// body again). Docs/ResumableDownloads.md, "Streaming to a descriptor".
public final class StreamSink {
    /// What went wrong, precisely: the `underlyingError` of every error a sink throws.
    public enum Problem: Error, Equatable, Sendable {
        /// An earlier process's bytes cannot be continued exactly on a descriptor that cannot be
        /// rewound: it died during a write, or the body had no validator.
        case cannotContinue(Record)
        /// The server's body is not the version an earlier process wrote from (another validator
        /// or length), on a descriptor that cannot be rewound.
        case versionChanged(Record)
        /// Nothing can prove the body complete (the reason), and the sink was not told to accept it.
        case unverifiable(String)
        /// The body ended after `received` bytes, before the `written` an earlier process wrote.
        case endedBeforeWrittenBytes(received: Int64, written: Int64)
        /// The body's length is not the one announced.
        case lengthMismatch(received: Int64, announced: Int64)
        /// The body's SHA-256 is not the one expected.
        case digestMismatch(actual: [UInt8], expected: [UInt8])
        /// Writing to the descriptor failed with this `errno` (``StreamSink/written`` says how far it got).
        case writeFailed(errno: Int32)
        /// The record could not be kept (why): a record that lags behind the descriptor would
        /// make a restart write bytes twice, so this ends the body.
        case recordFailed(String)
    }

    /// The descriptor the body goes to; never closed by the sink.
    public let descriptor: Int32
    /// Where the ``Record`` is kept, if anywhere.
    public let recordFile: URL?
    /// The record an earlier process left, as the sink found it.
    public let earlier: Record?
    /// What the response head says, once ``begin(_:)`` has read it.
    public private(set) var facts: Facts?
    /// Bytes the descriptor holds now (an earlier process's included).
    public private(set) var written: Int64 = 0
    /// Bytes an earlier process had written, which this one read again without writing.
    public private(set) var resumed: Int64 = 0
    /// Whether the body can be proven complete; `false` only for a body let through by
    /// `publishesUnverifiedBodies`.
    public private(set) var isVerified = true

    private let expectedSHA256: [UInt8]?
    private let publishesUnverifiedBodies: Bool
    /// A regular file the caller lets the sink truncate: bytes written can be taken back to start over.
    private let rewindable: Bool
    private var hasher: SHA256?
    /// Bytes still to read again without writing (an earlier process wrote them).
    private var skip: Int64 = 0
    private var recordDescriptor: Int32 = -1

    /// A sink writing to `descriptor`, continuing what an earlier process recorded in
    /// `recordFile` (`nil`: no record, so no continuation after a crash). With `expectedSHA256`
    /// the body is checked against it at the end, and a body nothing else can prove complete is
    /// accepted for that check; `publishesUnverifiedBodies` lets such a body through without one,
    /// marked ``isVerified`` `false`. `truncates`: `descriptor` is a regular file that holds this
    /// body alone, from offset 0, so bytes that cannot be continued may be cut away to start over
    /// (never for a file opened for appending to other contents). Throws
    /// ``Problem/cannotContinue(_:)`` at once, before any request, when the record cannot be
    /// continued on this descriptor.
    public init(
        descriptor: Int32, recordFile: URL?, expectedSHA256: [UInt8]? = nil, publishesUnverifiedBodies: Bool = false,
        truncates: Bool = false
    ) throws(CourierError) {
        self.descriptor = descriptor
        self.recordFile = recordFile
        self.expectedSHA256 = expectedSHA256
        self.publishesUnverifiedBodies = publishesUnverifiedBodies
        hasher = expectedSHA256 == nil ? nil : SHA256()
        var info = stat()
        rewindable = truncates && fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        earlier = recordFile.flatMap(Record.read(from:))
        if let earlier, !earlier.isContinuable {
            guard rewindable else { throw Self.error(.cannotContinue(earlier), url: recordFile) }
            try rewind(to: 0)
        } else if let earlier, earlier.written > 0 {
            // A file holds exactly what was written; a shorter one lost bytes, so it starts over.
            let holds = rewindable ? Int64(info.st_size) : earlier.written
            try rewind(to: holds >= earlier.written ? earlier.written : 0)
        }
    }

    deinit {
        if recordDescriptor >= 0 { close(recordDescriptor) }
    }

    /// Reads the response head: refuses a body nothing can prove complete (unless allowed),
    /// checks that it is the version an earlier process wrote from, and records it (before the
    /// first byte goes out: no record means nothing was written).
    public func begin(_ response: HTTPURLResponse) throws(CourierError) {
        let facts = Facts(response)
        self.facts = facts
        if let why = facts.unverifiableReason, expectedSHA256 == nil {
            guard publishesUnverifiedBodies else { throw Self.error(.unverifiable(why), url: response.url) }
            isVerified = false
        }
        if let earlier, written > 0 {
            if let validator = facts.validator, validator == earlier.validator, facts.length == earlier.length {
                skip = written
            } else {
                guard rewindable else { throw Self.error(.versionChanged(earlier), url: response.url) }
                try rewind(to: 0)
            }
        }
        guard let recordFile else { return }
        // A second head (a caller that begins again) replaces the first one's record.
        if recordDescriptor >= 0 { close(recordDescriptor) }
        recordDescriptor = -1
        let record = Record(written: written, validator: facts.validator, length: facts.length)
        do {
            try AtomicFile.write(Data(record.text.utf8), to: recordFile)
        } catch {
            throw Self.error(.recordFailed(error.message), url: recordFile)
        }
        guard let (opened, _) = SideFile.openExisting(recordFile, access: O_WRONLY) else {
            throw Self.error(.recordFailed("cannot open \(recordFile.path): \(String(cString: strerror(errno)))"), url: recordFile)
        }
        recordDescriptor = opened
    }

    /// Writes the next bytes of the body (those an earlier process wrote are only read again),
    /// recording the write before and after it.
    public func write(_ chunk: Data) throws(CourierError) {
        var data = chunk[...]
        if skip > 0 {
            let count = Int(min(skip, Int64(data.count)))
            hasher?.update(data.prefix(count))
            skip -= Int64(count)
            data = data.dropFirst(count)
            if data.isEmpty { return }
        }
        try record(writing: Int64(data.count))
        let failure = data.withUnsafeBytes { buffer -> Int32 in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if sent < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += sent
                written += Int64(sent)
            }
            return 0
        }
        if failure != 0 { throw Self.error(.writeFailed(errno: failure), url: nil) }
        try record(writing: 0)
        hasher?.update(data)
    }

    /// Checks the whole body once it ended: every byte an earlier process wrote came again, the
    /// announced length, the expected SHA-256.
    public func finish() throws(CourierError) {
        if skip > 0 { throw Self.error(.endedBeforeWrittenBytes(received: written - skip, written: written), url: nil) }
        if let length = facts?.length, written != length {
            throw Self.error(.lengthMismatch(received: written, announced: length), url: nil)
        }
        if let expectedSHA256, let digest = hasher?.finalize(), digest != expectedSHA256 {
            throw Self.error(.digestMismatch(actual: digest, expected: expectedSHA256), url: nil)
        }
    }

    // MARK: - Private

    /// The progress line, over the old one in place (one `pwrite` of a fixed width).
    private func record(writing: Int64) throws(CourierError) {
        guard recordDescriptor >= 0 else { return }
        let line = Array(Record.progressLine(written: written, writing: writing).utf8)
        let count = line.withUnsafeBytes { pwrite(recordDescriptor, $0.baseAddress, $0.count, 0) }
        guard count == line.count else {
            let reason = count < 0 ? String(cString: strerror(errno)) : "a short write"
            throw Self.error(.recordFailed(reason), url: recordFile)
        }
    }

    /// Takes the file back to its first `offset` bytes and writes from there.
    private func rewind(to offset: Int64) throws(CourierError) {
        if rewindable {
            guard ftruncate(descriptor, off_t(offset)) == 0, lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
                throw Self.error(.writeFailed(errno: errno), url: nil)
            }
        }
        written = offset
        resumed = offset
    }

    private static func error(_ problem: Problem, url: URL?) -> CourierError {
        let (code, message): (CourierError.Code, String)
        switch problem {
        case .cannotContinue:
            (code, message) = (
                .invalidResumeData,
                "an earlier process's bytes cannot be continued exactly (it died during a write, or the body had no validator)"
            )
        case .versionChanged:
            (code, message) = (
                .invalidResumeData,
                "the server's body changed (its validator or length differ), so it cannot be continued after the bytes already written"
            )
        case .unverifiable(let why):
            (code, message) = (.integrityFailed, why + "; nothing could prove it complete")
        case .endedBeforeWrittenBytes(let received, let written):
            (code, message) = (.integrityFailed, "the body ended after \(received) bytes, before the \(written) already written")
        case .lengthMismatch(let received, let announced):
            (code, message) = (.integrityFailed, "\(received) bytes arrived, the server announced \(announced)")
        case .digestMismatch(let actual, let expected):
            (code, message) = (.integrityFailed, "the body's SHA-256 is \(SHA256.hexString(actual)), not \(SHA256.hexString(expected))")
        case .writeFailed(let code):
            return .fileSystem("cannot write the body", url: url, errno: code).with(problem)
        case .recordFailed(let why):
            (code, message) = (.fileSystem, "cannot keep the record of what was written (\(why))")
        }
        return CourierError(code: code, message: message, url: url, underlyingError: problem)
    }
}

extension CourierError {
    /// The same error with `problem` as its underlying error.
    fileprivate func with(_ problem: StreamSink.Problem) -> CourierError {
        var copy = self
        copy.underlyingError = problem
        return copy
    }
}

// Not Sendable, on purpose: one task writes a body, and the sink's counters and record have no
// lock because nothing else may touch them. Said here so that the compiler refuses to share one.
@available(*, unavailable)
extension StreamSink: Sendable {}
