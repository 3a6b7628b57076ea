import Foundation

/// Turns SIGINT/SIGTERM into calls on a dispatch queue instead of killing the process, so a
/// download can stop cleanly (keep its partial file, write its record) before exiting.
///
/// The signals are ignored at the process level (`SIG_IGN`) and observed with dispatch signal
/// sources, like `courier serve` does: a C signal handler could do almost nothing safely.
/// Used from one thread (it holds dispatch sources, which are not `Sendable`).
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    /// Starts watching; `handler` runs on a private serial queue, once per delivered signal.
    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "courier.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Stops calling the handler. The signals stay ignored: the process is about to exit, and
    /// a Ctrl-C now must not cut short the messages still to be printed.
    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
