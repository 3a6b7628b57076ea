/// The lifecycle of a Courier task: its public ``State`` (``SessionTask/state``), and the table of
/// transitions between states as a small value-type machine (internal: the phase machine,
/// TaskPhaseMachine.swift, derives the state and is tested against this table).
///
/// ```
/// initialized ──resume──▶ running ◀──resume── suspended
///      │                   │   └────suspend────▶ │
///      └──cancel──▶ cancelling ◀──cancel──────────┘
///                          │   running ──complete──▶ completed
///                          └──complete──▶ completed
/// ```
/// Invalid transitions are harmless no-ops (AFNetworking's `AFStateTransitionIsValid`):
/// `apply(_:)` returns `nil` and the state stays as it was, so racing or repeated calls
/// (`cancel()` twice, `resume()` after completion) cannot corrupt a task.
public struct TaskLifecycle: Sendable, Equatable {
    /// Where a task is in its life.
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// Created, not started yet.
        case initialized
        /// A transfer is in progress.
        case running
        /// Paused by Courier (the transfer is stopped; resuming continues without duplicating bytes).
        case suspended
        /// Cancellation was requested; the completion is on its way.
        case cancelling
        /// Finished; the completion has been (or is being) delivered.
        case completed
    }

    /// What just happened to the task.
    enum Event: Sendable, Equatable {
        /// `resume()` was called.
        case resume
        /// `suspend()` was called.
        case suspend
        /// `cancel()` was called.
        case cancel
        /// The transfer ended (success, failure, or the end of a cancellation).
        case complete
    }

    /// A transition that took place.
    struct Transition: Sendable, Equatable {
        /// The state before the event.
        let from: State
        /// The state after the event.
        let to: State
    }

    /// The current state.
    private(set) var state: State = .initialized

    /// A lifecycle in ``State/initialized``.
    init() {}

    /// The target state of `event` from `state`, or `nil` when the event means nothing there.
    static func target(of event: Event, from state: State) -> State? {
        switch (state, event) {
        case (.initialized, .resume), (.suspended, .resume): return .running
        case (.running, .suspend): return .suspended
        case (.initialized, .cancel), (.running, .cancel), (.suspended, .cancel): return .cancelling
        case (.running, .complete), (.cancelling, .complete): return .completed
        default: return nil
        }
    }

    /// Applies `event`; returns the transition, or `nil` (and changes nothing) when it is invalid.
    mutating func apply(_ event: Event) -> Transition? {
        guard let next = Self.target(of: event, from: state) else { return nil }
        defer { state = next }
        return Transition(from: state, to: next)
    }

    /// Whether the task has completed (its completion has been, or is being, delivered).
    var isFinished: Bool { state == .completed }
}
