import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A manager's configuration as data, so a service can keep it in its own configuration file.
///
/// Encoded: the request timeout, the whole-task deadline, the wait for connectivity, connections per host, the running-task cap per host, cookies on or off, the in-memory limit,
/// the progress interval, default and sensitive headers, redirect hops, the retry policy,
/// notifications and the label. Not encoded (they are code or secrets, set them in code): `tls`, queues,
/// the completion group, event monitors, the interceptor, the credential, a custom redirect
/// closure, the network monitor. Keys missing from the input keep their defaults; unknown keys are ignored (so a
/// service's file may carry its own); values that make no sense throw. `defaultHeaders` are added
/// to the standard `User-Agent` and `Accept-Language` (a header of the same name replaces one).
/// `maximumRedirects` of 0 means refusing redirects. The redirect policy's own `sensitiveHeaders`
/// and `.modify` closures are code and are not kept; use `sensitiveHeaders` here instead.
extension SessionManager.Configuration: Codable {
    private enum CodingKeys: String, CodingKey {
        case requestTimeout, maximumConnectionsPerHost, acceptsCookies, maximumResponseSize
        case progressIntervalMilliseconds, defaultHeaders, sensitiveHeaders, maximumRedirects, retryPolicy
        case postsNotifications, label, maximumRunningTasksPerHost, temporaryDirectory, deadline, waitsForConnectivity
    }

    /// Decodes a configuration: missing keys keep their defaults, unknown keys are ignored, and a value that makes
    /// no sense throws a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        self.init()
        let values = try decoder.container(keyedBy: CodingKeys.self)
        let session = urlSessionConfiguration
        if let timeout = try values.decodeIfPresent(Double.self, forKey: .requestTimeout) {
            guard timeout > 0, timeout.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: .requestTimeout, in: values, debugDescription: "must be > 0 seconds")
            }
            session.timeoutIntervalForRequest = timeout
        }
        if let connections = try values.decodeIfPresent(Int.self, forKey: .maximumConnectionsPerHost) {
            guard connections > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .maximumConnectionsPerHost, in: values, debugDescription: "must be > 0")
            }
            session.httpMaximumConnectionsPerHost = connections
        }
        if try values.decodeIfPresent(Bool.self, forKey: .acceptsCookies) == true { enableCookies() }
        if let size = try values.decodeIfPresent(Int.self, forKey: .maximumResponseSize) {
            guard size > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .maximumResponseSize, in: values, debugDescription: "must be > 0")
            }
            maximumResponseSize = size
        }
        if let interval = try values.decodeIfPresent(Int.self, forKey: .progressIntervalMilliseconds) {
            guard interval >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .progressIntervalMilliseconds, in: values, debugDescription: "must be ≥ 0")
            }
            progressInterval = .milliseconds(interval)
        }
        if let headers = try values.decodeIfPresent([String: String].self, forKey: .defaultHeaders) {
            for (name, value) in headers {
                defaultHeaders = defaultHeaders.filter { $0.key.lowercased() != name.lowercased() }
                defaultHeaders[name] = value
            }
        }
        if let path = try values.decodeIfPresent(String.self, forKey: .temporaryDirectory) {
            guard path.hasPrefix("/") else {
                throw DecodingError.dataCorruptedError(
                    forKey: .temporaryDirectory, in: values, debugDescription: "must be an absolute path")
            }
            temporaryDirectory = URL(fileURLWithPath: path, isDirectory: true)
        }
        sensitiveHeaders = try values.decodeIfPresent(Set<String>.self, forKey: .sensitiveHeaders) ?? sensitiveHeaders
        if let hops = try values.decodeIfPresent(Int.self, forKey: .maximumRedirects) {
            guard hops >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .maximumRedirects, in: values, debugDescription: "must be ≥ 0")
            }
            redirectPolicy = hops == 0 ? .refuse : .follow(maximumHops: hops)
        }
        retryPolicy = try values.decodeIfPresent(RetryPolicy.self, forKey: .retryPolicy)
        postsNotifications = try values.decodeIfPresent(Bool.self, forKey: .postsNotifications) ?? postsNotifications
        label = try values.decodeIfPresent(String.self, forKey: .label) ?? label
        if values.contains(.maximumRunningTasksPerHost) {
            let cap = try values.decodeIfPresent(Int.self, forKey: .maximumRunningTasksPerHost)
            if let cap, cap <= 0 {
                throw DecodingError.dataCorruptedError(
                    forKey: .maximumRunningTasksPerHost, in: values, debugDescription: "must be > 0, or null for no limit")
            }
            maximumRunningTasksPerHost = cap
        }
        if let seconds = try values.decodeIfPresent(Double.self, forKey: .deadline) {
            guard seconds > 0, seconds.isFinite, seconds < 1e12 else {
                throw DecodingError.dataCorruptedError(forKey: .deadline, in: values, debugDescription: "must be > 0 seconds")
            }
            deadline = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
        if let seconds = try values.decodeIfPresent(Double.self, forKey: .waitsForConnectivity) {
            guard seconds > 0, seconds.isFinite, seconds < 1e12 else {
                throw DecodingError.dataCorruptedError(forKey: .waitsForConnectivity, in: values, debugDescription: "must be > 0 seconds")
            }
            waitsForConnectivity = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
    }

    /// Encodes the settings listed above; the ones that are code or secrets are left out.
    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(urlSessionConfiguration.timeoutIntervalForRequest, forKey: .requestTimeout)
        try values.encode(urlSessionConfiguration.httpMaximumConnectionsPerHost, forKey: .maximumConnectionsPerHost)
        try values.encode(urlSessionConfiguration.httpCookieAcceptPolicy != .never, forKey: .acceptsCookies)
        try values.encode(maximumResponseSize, forKey: .maximumResponseSize)
        try values.encode(progressInterval.milliseconds, forKey: .progressIntervalMilliseconds)
        try values.encodeIfPresent(temporaryDirectory?.path, forKey: .temporaryDirectory)
        try values.encode(defaultHeaders, forKey: .defaultHeaders)
        try values.encode(sensitiveHeaders, forKey: .sensitiveHeaders)
        if case .refuse = redirectPolicy.action {
            try values.encode(0, forKey: .maximumRedirects)
        } else {
            try values.encode(redirectPolicy.maximumHops, forKey: .maximumRedirects)
        }
        try values.encodeIfPresent(retryPolicy, forKey: .retryPolicy)
        try values.encode(postsNotifications, forKey: .postsNotifications)
        try values.encode(label, forKey: .label)
        try values.encode(maximumRunningTasksPerHost, forKey: .maximumRunningTasksPerHost)
        if let deadline {
            let seconds = deadline.seconds
            try values.encode(seconds, forKey: .deadline)
        }
        try values.encodeIfPresent(waitsForConnectivity?.seconds, forKey: .waitsForConnectivity)
    }
}
