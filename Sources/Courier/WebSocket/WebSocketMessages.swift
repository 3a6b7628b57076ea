import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``WebSocketTask``'s messages as an `AsyncSequence` (``WebSocketTask/messages``): each
/// `next()` is a ``WebSocketTask/receive()``, the sequence ends after a clean close, and it throws
/// the ``CourierError`` that failed the task. Cancelling the iterating Swift task throws
/// ``CourierError/Code-swift.struct/cancelled`` and leaves the connection open.
public struct WebSocketMessages: AsyncSequence, Sendable {
    /// A text or binary message.
    public typealias Element = URLSessionWebSocketTask.Message

    let driver: WebSocketDriver

    /// Reads the task's messages.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let driver: WebSocketDriver

        /// The next message; `nil` once the WebSocket closed cleanly.
        public mutating func next() async throws -> URLSessionWebSocketTask.Message? {
            try await driver.receiveOrEnd()
        }
    }

    /// An iterator over the messages.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(driver: driver) }
}
