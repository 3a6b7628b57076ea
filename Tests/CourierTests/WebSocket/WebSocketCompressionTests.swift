import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

/// `permessage-deflate` (RFC 7692) without sockets: the offer, the server's answer checked, and
/// the DEFLATE streams against the RFC's own examples (§7.2.3).
final class WebSocketCompressionTests: XCTestCase {
    /// "Hello" compressed on its own, as RFC 7692 §7.2.3.1 prints it.
    private let helloCompressed = Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])

    private func agreement(
        _ elements: [String], _ compression: WebSocketCompression = WebSocketCompression()
    )
        -> WebSocketCompression.Agreement??
    {
        if case .success(let agreement) = compression.agreement(from: elements) { return .some(agreement) }
        return .none
    }

    private func isRefused(_ elements: [String], _ compression: WebSocketCompression = WebSocketCompression()) -> Bool {
        if case .failure = compression.agreement(from: elements) { return true }
        return false
    }

    func testTheOfferAsksForNoClientContextTakeoverAndLetsTheServerLimitTheClientsWindow() {
        XCTAssertEqual(WebSocketCompression().offer, "permessage-deflate; client_no_context_takeover; client_max_window_bits")
        XCTAssertEqual(
            WebSocketCompression(serverNoContextTakeover: true, serverMaximumWindowBits: 10).offer,
            "permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover; server_max_window_bits=10")
        XCTAssertEqual(WebSocketCompression(serverMaximumWindowBits: 3).serverMaximumWindowBits, 8)
    }

    func testTheServersAnswerIsAcceptedWithKnownParametersOnly() {
        // Accepted
        XCTAssertEqual(agreement([]), .some(nil))
        XCTAssertEqual(agreement(["permessage-deflate"]), .init(serverNoContextTakeover: false))
        XCTAssertEqual(
            agreement(["permessage-deflate; server_no_context_takeover; client_no_context_takeover"]),
            .init(serverNoContextTakeover: true))
        XCTAssertEqual(
            agreement(["Permessage-Deflate; client_max_window_bits=9; server_max_window_bits=\"12\""]),
            .init(serverNoContextTakeover: false, clientMaximumWindowBits: 9))
        // Refused
        for refused in [
            ["x-webkit-deflate-frame"], ["permessage-deflate", "permessage-deflate"], ["permessage-deflate; mystery"],
            ["permessage-deflate; server_no_context_takeover; server_no_context_takeover"],
            ["permessage-deflate; server_no_context_takeover=1"], ["permessage-deflate; server_max_window_bits"],
            ["permessage-deflate; server_max_window_bits=16"], ["permessage-deflate; server_max_window_bits=09"],
            ["permessage-deflate; client_max_window_bits=7"],
        ] {
            XCTAssertTrue(isRefused(refused), "\(refused)")
        }
        // A window above the one asked for
        XCTAssertTrue(isRefused(["permessage-deflate; server_max_window_bits=12"], WebSocketCompression(serverMaximumWindowBits: 10)))
    }

    func testAMessageCompressesToTheRFCsBytesAndBack() throws {
        let compressor = try XCTUnwrap(WebSocketDeflateStream(inflating: false))
        let decompressor = try XCTUnwrap(WebSocketDeflateStream(inflating: true))

        XCTAssertEqual(compressor.compress(Data("Hello".utf8)), helloCompressed)
        // Each message on its own: the same bytes again
        XCTAssertEqual(compressor.compress(Data("Hello".utf8)), helloCompressed)
        XCTAssertEqual(try decompressor.decompress(helloCompressed, limit: 100, reset: false).get(), Data("Hello".utf8))
    }

    func testTheServersContextIsKeptBetweenMessagesUnlessItKeepsNone() throws {
        // RFC 7692 §7.2.3.2: the second "Hello" refers back to the first
        let second = Data([0xF2, 0x00, 0x11, 0x00, 0x00])
        let keeping = try XCTUnwrap(WebSocketDeflateStream(inflating: true))
        XCTAssertEqual(try keeping.decompress(helloCompressed, limit: 100, reset: false).get(), Data("Hello".utf8))
        XCTAssertEqual(try keeping.decompress(second, limit: 100, reset: false).get(), Data("Hello".utf8))
        // Reset after each message, the back reference points at nothing
        let resetting = try XCTUnwrap(WebSocketDeflateStream(inflating: true))
        XCTAssertEqual(try resetting.decompress(helloCompressed, limit: 100, reset: true).get(), Data("Hello".utf8))
        XCTAssertThrowsError(try resetting.decompress(second, limit: 100, reset: true).get())
    }

    func testLargeAndEmptyMessagesRoundTripAndTheLimitHoldsWhileInflating() throws {
        let compressor = try XCTUnwrap(WebSocketDeflateStream(inflating: false, windowBits: 8))
        let decompressor = try XCTUnwrap(WebSocketDeflateStream(inflating: true, windowBits: 8))
        var generator = SplitMix64(seed: 7)
        let large = Data((0..<(1 << 20)).map { index in index % 3 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : 0x61 })
        let compressed = compressor.compress(large)
        XCTAssertLessThan(compressed.count, large.count)
        XCTAssertEqual(try decompressor.decompress(compressed, limit: 1 << 20, reset: false).get(), large)
        XCTAssertEqual(try decompressor.decompress(compressor.compress(Data()), limit: 10, reset: false).get(), Data())

        // 1 MiB of zeros is a few hundred bytes compressed: a limit of 64 KiB stops it at about that
        let bomb = compressor.compress(Data(count: 1 << 20))
        XCTAssertLessThan(bomb.count, 2048)
        let fresh = try XCTUnwrap(WebSocketDeflateStream(inflating: true))
        guard case .failure(let error) = fresh.decompress(bomb, limit: 64 << 10, reset: false) else {
            return XCTFail("a message over the limit was inflated")
        }
        XCTAssertEqual(error.closeCode, .messageTooBig)
    }

    func testDataThatIsNotDeflateFailsWith1007() throws {
        let decompressor = try XCTUnwrap(WebSocketDeflateStream(inflating: true))
        guard case .failure(let error) = decompressor.decompress(Data([0xFF, 0xFF, 0xFF, 0xFF]), limit: 100, reset: false) else {
            return XCTFail("garbage inflated")
        }
        XCTAssertEqual(error.closeCode, .invalidFramePayloadData)
    }
}
