#if canImport(FoundationNetworking)
import FoundationNetworking
#else
import Foundation
#endif

/// Why a transfer drops the body it holds to begin again: the one question
/// ``TransferState/startOver(_:)`` answers for every site (Docs/Retries.md, "Starting over").
enum StartOverCause {
    /// An answer to `Range` did not continue the bytes held (another version, a split download's
    /// ranges that cannot be trusted): counted, and the transfer fails past
    /// ``FileBody/restartLimit`` in a row. The reason and the answer go into that failure.
    case answerDidNotContinue(String, HTTPURLResponse?)
    /// A new full response replaces the bytes held: a 200 where a range was asked, or the answer
    /// to a challenge or a redirect on the same task. It ends a run of refused continuations.
    case replacedByAnswer
    /// The next request cannot ask for the rest with `Range` (no strong validator, not a plain
    /// GET, nothing held yet, or a data task, whose body may be an error page).
    case cannotContinue
}
