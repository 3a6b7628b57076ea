import Foundation

extension InputSpool {
    /// The lines of a spool, from its start: first what it already holds (an earlier child's
    /// reading), then, when ``fills``, what it moves from the input as they are asked for.
    public struct Reader {
        /// What ``next(waitingUpTo:)`` found.
        public enum Next: Equatable {
            /// A whole line.
            case line(InputLineBuffer.Line)
            /// No whole line yet: the input has nothing more for now.
            case nothingYet
            /// No more lines.
            case ended
        }

        /// The spool read.
        public let spool: InputSpool
        /// Whether it moves bytes from the input; otherwise it reads only what the spool holds.
        public let fills: Bool
        private var lines = InputLineBuffer()
        private var offset: Int64 = 0

        /// A reader of `spool` from its start that, when `fills`, goes on with the input.
        public init(_ spool: InputSpool, fills: Bool) {
            self.spool = spool
            self.fills = fills
        }

        /// The next line, waiting up to `milliseconds` for the input when the spool has no whole
        /// line left. A line over ``InputLineBuffer/maximumLineBytes`` throws
        /// ``InputLineBuffer/LineTooLong`` naming it; one that cannot be read or kept, a
        /// ``CourierError`` (``CourierError/Code-swift.struct/fileSystem``).
        public mutating func next(waitingUpTo milliseconds: Int32) throws -> Next {
            while true {
                let atEnd = offset == spool.size && (!fills || spool.ended)
                if let line = try lines.next(atEnd: atEnd) { return .line(line) }
                if atEnd { return .ended }
                if offset < spool.size {
                    let bytes = try spool.bytes(at: offset, count: InputSpool.chunkBytes)
                    offset += Int64(bytes.count)
                    lines.append(bytes)
                    continue
                }
                if try spool.fill(waitingUpTo: milliseconds) == .nothingYet { return .nothingYet }
            }
        }
    }
}
