import Foundation

/// A thread-safe collector for values delivered on other queues.
public final class Box<T: Sendable>: @unchecked Sendable {  // `values` is only touched under `lock`
    private let lock = NSLock()
    private var values: [T] = []

    /// An empty box.
    public init() {}

    /// Adds `value`; returns how many the box holds now.
    @discardableResult
    public func append(_ value: T) -> Int {
        lock.withLock {
            values.append(value); return values.count
        }
    }
    /// How many values the box holds.
    public var count: Int { lock.withLock { values.count } }
    /// The first value added, if any.
    public var first: T? { lock.withLock { values.first } }
    /// Every value, in the order added.
    public var all: [T] { lock.withLock { values } }
}

/// A thread-safe counter.
public final class Counter: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value = 0

    /// A counter at 0.
    public init() {}

    /// Adds one; returns the new count.
    @discardableResult
    public func increment() -> Int {
        lock.withLock {
            value += 1; return value
        }
    }
    /// The count.
    public var count: Int { lock.withLock { value } }
}
