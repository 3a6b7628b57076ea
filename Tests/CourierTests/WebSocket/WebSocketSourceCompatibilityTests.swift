import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Code written for `URLSessionWebSocketTask` compiles against `WebSocketTask` and runs.
final class WebSocketSourceCompatibilityTests: WebSocketTaskTestCase {
    /// URLSessionWebSocketTask's spellings, as an app uses them (the body is URLSession code).
    private func chat(over task: WebSocketTask, done: @escaping @Sendable (String?) -> Void) {
        task.maximumMessageSize = 1 << 20
        task.resume()
        task.send(.string("ping me")) { error in
            guard error == nil else { return done(nil) }
            task.receive { result in
                switch result {
                case .success(.string(let text)):
                    task.sendPing { _ in
                        task.cancel(with: .goingAway, reason: "bye".data(using: .utf8))
                        done(text)
                    }
                default:
                    done(nil)
                }
            }
        }
    }

    func testURLSessionStyleCodeRunsAgainstTheEcho() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: URLRequest(url: echoURL(server)))

        let echoed = await withCheckedContinuation { continuation in
            chat(over: task) { continuation.resume(returning: $0) }
        }

        XCTAssertEqual(echoed, "ping me")
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        let code: URLSessionWebSocketTask.CloseCode = task.closeCode
        XCTAssertEqual(code, .goingAway)  // the echo's answer to the client's 1001
        let reason: Data? = task.closeReason
        XCTAssertEqual(reason, Data("bye".utf8))
    }
}
