import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fans task and session events out to monitors and `NotificationCenter`, on the manager's
/// serial event queue.
///
/// Events are queued with `async`, which only enqueues, so they may be emitted while a transfer
/// holds its lock: the monitors run later, on the event queue, never under that lock, and the
/// order of one task's events is the order they were emitted in (the lock orders them). With no
/// monitor and notifications off, ``isActive`` is false and callers build no event at all.
struct EventDispatcher: Sendable {
    let monitors: [any EventMonitor]
    let postsNotifications: Bool
    /// The event queue; `nil` when nobody listens.
    private let queue: DispatchQueue?

    init(monitors: [any EventMonitor], postsNotifications: Bool, label: String) {
        self.monitors = monitors
        self.postsNotifications = postsNotifications
        let active = !monitors.isEmpty || postsNotifications
        // On the global (non-overcommit) pool, like the manager's other serial queues.
        self.queue = active ? DispatchQueue(label: "\(label).events", target: .global()) : nil
    }

    /// Whether anyone listens; build events only then.
    var isActive: Bool { queue != nil }

    /// Queues `event` for `task`'s monitors (and its notification, for the events that have one).
    func emit(_ event: @autoclosure () -> TaskEvent, for task: (any SessionTask)?) {
        guard let queue, let task else { return }
        let event = event()
        let monitors = monitors
        let posts = postsNotifications
        queue.async {
            for monitor in monitors { monitor.receive(event, for: task) }
            if posts { Self.post(event, for: task) }
        }
    }

    func sessionDidInvalidate(error: (any Error)?) {
        guard let queue else { return }
        let monitors = monitors
        let posts = postsNotifications
        queue.async {
            for monitor in monitors { monitor.sessionDidInvalidate(error: error) }
            guard posts else { return }
            let info: [AnyHashable: Any]? = error.map { [CourierNotificationKey.error: $0] }
            NotificationCenter.default.post(name: .courierSessionDidInvalidate, object: nil, userInfo: info)
        }
    }

    /// Queues an event stream's reconnection for the monitors.
    func streamWillReconnect(_ event: EventStreamReconnectEvent) {
        guard let queue else { return }
        let monitors = monitors
        queue.async {
            for monitor in monitors { monitor.eventStreamWillReconnect(event) }
        }
    }

    private static func post(_ event: TaskEvent, for task: any SessionTask) {
        let center = NotificationCenter.default
        switch event {
        case .resumed: center.post(name: .courierTaskDidResume, object: task)
        case .suspended: center.post(name: .courierTaskDidSuspend, object: task)
        case .retrying(let retry):
            center.post(name: .courierTaskWillRetry, object: task, userInfo: [CourierNotificationKey.retry: retry])
        case .completed(let completion):
            var info: [AnyHashable: Any] = [:]
            info[CourierNotificationKey.response] = completion.response
            info[CourierNotificationKey.responseData] = completion.data
            info[CourierNotificationKey.serializedValue] = completion.value
            info[CourierNotificationKey.fileURL] = completion.fileURL
            info[CourierNotificationKey.error] = completion.error
            info[CourierNotificationKey.metrics] = completion.metrics
            center.post(name: .courierTaskDidComplete, object: task, userInfo: info)
        default:
            break
        }
    }
}
