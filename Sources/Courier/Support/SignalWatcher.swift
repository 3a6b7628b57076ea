import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Turns signals into calls on a dispatch queue instead of their default action (for SIGINT and
/// SIGTERM, death), so a program can stop cleanly (keep a partial file, write its record) before
/// exiting, or redraw a line when the terminal is resized (SIGWINCH).
///
/// The signals are ignored at the process level (`SIG_IGN`) and observed with dispatch signal
/// sources: a C signal handler could do almost nothing safely. Used from one thread (it holds
/// dispatch sources, which are not `Sendable`). ``StopSignals`` is the stop rule on top of it.
public final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `signals`; `handler` runs on a private serial queue, once per delivered signal.
    public init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
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
    public func cancel() {
        sources.forEach { $0.cancel() }
    }
}
