import Foundation

extension Notification.Name {
    /// Posted when a task starts or continues; `object` is the task (``SessionTask``).
    public static let courierTaskDidResume = Notification.Name("Courier.taskDidResume")
    /// Posted when a task is paused; `object` is the task.
    public static let courierTaskDidSuspend = Notification.Name("Courier.taskDidSuspend")
    /// Posted when a task's failed attempt is about to be retried; `object` is the task,
    /// `userInfo[CourierNotificationKey.retry]` the ``TaskRetryEvent``.
    public static let courierTaskWillRetry = Notification.Name("Courier.taskWillRetry")
    /// Posted once when a task finishes; `object` is the task, `userInfo` uses ``CourierNotificationKey``.
    public static let courierTaskDidComplete = Notification.Name("Courier.taskDidComplete")
    /// Posted when a manager's session is invalidated; `userInfo[CourierNotificationKey.error]` holds
    /// the error, if any. `object` is `nil` (the manager may already be gone).
    public static let courierSessionDidInvalidate = Notification.Name("Courier.sessionDidInvalidate")
}

/// `userInfo` keys of Courier's notifications. Absent keys mean "none".
public enum CourierNotificationKey {
    /// The final `HTTPURLResponse`.
    public static let response = "Courier.response"
    /// The response body `Data` (data and upload tasks).
    public static let responseData = "Courier.responseData"
    /// The serialized value.
    public static let serializedValue = "Courier.serializedValue"
    /// The ``CourierError`` (or, for invalidation, the error URLSession gave).
    public static let error = "Courier.error"
    /// The published file `URL` of a download task.
    public static let fileURL = "Courier.fileURL"
    /// The ``TaskRetryEvent`` of a `courierTaskWillRetry` notification.
    public static let retry = "Courier.retry"
}

/// Fans task and session events out to monitors and `NotificationCenter`.
struct EventDispatcher: Sendable {
    let monitors: [any EventMonitor]
    let postsNotifications: Bool

    func taskDidResume(_ task: any SessionTask) {
        for monitor in monitors { monitor.taskDidResume(task) }
        if postsNotifications { NotificationCenter.default.post(name: .courierTaskDidResume, object: task) }
    }

    func taskDidSuspend(_ task: any SessionTask) {
        for monitor in monitors { monitor.taskDidSuspend(task) }
        if postsNotifications { NotificationCenter.default.post(name: .courierTaskDidSuspend, object: task) }
    }

    func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) {
        for monitor in monitors { monitor.taskWillRetry(task, event: event) }
        guard postsNotifications else { return }
        NotificationCenter.default.post(name: .courierTaskWillRetry, object: task, userInfo: [CourierNotificationKey.retry: event])
    }

    func taskDidComplete(_ task: (any SessionTask)?, event: TaskCompletionEvent) {
        if let task { for monitor in monitors { monitor.taskDidComplete(task, event: event) } }
        guard postsNotifications else { return }
        var info: [AnyHashable: Any] = [:]
        info[CourierNotificationKey.response] = event.response
        info[CourierNotificationKey.responseData] = event.data
        info[CourierNotificationKey.serializedValue] = event.value
        info[CourierNotificationKey.fileURL] = event.fileURL
        info[CourierNotificationKey.error] = event.error
        NotificationCenter.default.post(name: .courierTaskDidComplete, object: task, userInfo: info)
    }

    func sessionDidInvalidate(error: (any Error)?) {
        for monitor in monitors { monitor.sessionDidInvalidate(error: error) }
        guard postsNotifications else { return }
        let info: [AnyHashable: Any]? = error.map { [CourierNotificationKey.error: $0] }
        NotificationCenter.default.post(name: .courierSessionDidInvalidate, object: nil, userInfo: info)
    }
}
