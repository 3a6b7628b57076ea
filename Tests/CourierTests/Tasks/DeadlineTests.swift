import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A whole-task deadline: URLSession's own request timeout only limits silence, so a server that
/// trickles a byte at a time would hold a task forever.
final class DeadlineTests: CourierTestCase {
    private static let content = TestServer.deterministicBytes(count: 2_000, seed: 5)

    /// 200 bytes at once, then one byte every 100 ms: never silent long enough for a timeout.
    private static func trickle() -> ScriptedServer.Reply {
        var reply = ScriptedServer.Reply.response(
            status: 200, headers: [("Content-Length", "\(content.count)"), ("ETag", "\"t\"")], body: content,
            sendingOnly: 200)
        for index in 200..<content.count {
            reply.steps.append(.pause(milliseconds: 100))
            reply.steps.append(.send(content.subdata(in: index..<(index + 1))))
        }
        return reply
    }

    func testATricklingDownloadFailsAtItsDeadlineKeepingItsBytesAndAResumeWorks() throws {
        let server = try ScriptedServer { request, index in
            guard index > 0, let range = request.header("Range"), range.hasPrefix("bytes="),
                let first = Int(range.dropFirst(6).dropLast())
            else { return Self.trickle() }
            let rest = Self.content.subdata(in: first..<Self.content.count)
            return .response(
                status: 206,
                headers: [
                    ("Content-Range", "bytes \(first)-\(Self.content.count - 1)/\(Self.content.count)"),
                    ("Content-Length", "\(rest.count)"), ("ETag", "\"t\""),
                ], body: rest)
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("trickle.bin")
        var policy = DownloadPolicy()
        policy.deadline = .milliseconds(800)
        let started = Date()
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: URLRequest(url: server.url("/trickle.bin")), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
        let elapsed = Date().timeIntervalSince(started)
        let error = try XCTUnwrap(response?.error)
        XCTAssertEqual(error.code, .deadlineExceeded, "\(error)")
        XCTAssertLessThan(elapsed, 8, "ended by the deadline, not by the 180 s the trickle would take")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        let resume = try XCTUnwrap(error.resumeData, "the bytes fetched stay resumable")
        XCTAssertGreaterThanOrEqual(resume.bytesOnDisk, 200)
        XCTAssertEqual(stagingFiles(in: directory), [".trickle.bin.courier-partial", ".trickle.bin.courier-resume"])

        let rerun: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: URLRequest(url: server.url("/trickle.bin")), to: .file(destination),
                completion: finish
            ).resume()
        }
        XCTAssertNil(rerun?.error)
        XCTAssertEqual(try Data(contentsOf: destination), Self.content)
        XCTAssertEqual(server.requests.last?.header("Range"), "bytes=\(resume.bytesOnDisk)-")
    }

    func testTheManagersDeadlineEndsADataTaskWhoseServerNeverFinishes() throws {
        let server = try ScriptedServer { _, _ in
            ScriptedServer.Reply(
                [.send(ScriptedServer.Reply.head(status: 200, headers: [("Content-Length", "100")]))],
                ending: .hang)
        }
        defer { server.stop() }
        var configuration = makeConfiguration()
        configuration.deadline = .milliseconds(500)
        let bounded = SessionManager(configuration: configuration)
        defer { bounded.invalidate(cancelingTasks: true) }
        let response: DataResponse<Data>? = wait { finish in
            bounded.dataTask(with: URLRequest(url: server.url("/hang")), completion: finish).resume()
        }
        XCTAssertEqual(response?.error?.code, .deadlineExceeded)
    }

    func testATaskThatFinishesInTimeIsUntouchedByItsDeadline() throws {
        var configuration = makeConfiguration()
        configuration.deadline = .milliseconds(300)
        let bounded = SessionManager(configuration: configuration)
        defer { bounded.invalidate(cancelingTasks: true) }
        let response: DataResponse<Data>? = wait { finish in
            bounded.dataTask(with: request("/bytes/100"), completion: finish).resume()
        }
        XCTAssertNil(response?.error)
        Thread.sleep(forTimeInterval: 0.5)  // the deadline fires into a completed task: nothing happens
    }
}
