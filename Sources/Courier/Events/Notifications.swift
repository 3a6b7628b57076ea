import Foundation

// Notifications are posted on the manager's event queue, like monitors are called
// (Sources/Courier/Events/EventDispatcher.swift), never on the queues that move bytes.

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
    /// The ``TaskMetrics`` of a `courierTaskDidComplete` notification.
    public static let metrics = "Courier.metrics"
}
