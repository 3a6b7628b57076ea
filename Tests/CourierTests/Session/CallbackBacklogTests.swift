import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A large body never piles up as URLSession callbacks waiting for the manager's queue: past the
/// delegate queue's high-water mark, URLSession is held until the callbacks catch up.
final class CallbackBacklogTests: CourierTestCase {
    func testASlowCallbackThreadHoldsURLSessionBackInsteadOfQueueingTheBody() throws {
        let size = 24 * 1024 * 1024
        let delegateQueue = try XCTUnwrap(manager.session.delegateQueue as? DelegateQueue)
        // Progress handlers run on the thread the callbacks run on (the manager's own queue):
        // one that takes 50 ms makes that thread fall behind libcurl, as a busy machine does.
        // Without the mark about 350 chunks piled up here (5.5 MiB); with it, 64 plus a few.
        let response: DataResponse<Data>? = wait(timeout: 60) { finish in
            manager.dataTask(
                with: request("/bytes/\(size)?seed=7"), downloadProgress: { _ in Thread.sleep(forTimeInterval: 0.05) },
                completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.value?.count, size)
        XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: size, seed: 7))
        // Beyond the mark, only one callback per bounded wait (20 ms) gets through.
        XCTAssertGreaterThan(delegateQueue.peakBacklog, 0)
        XCTAssertLessThanOrEqual(delegateQueue.peakBacklog, 2 * delegateQueue.highWater)
    }
}
