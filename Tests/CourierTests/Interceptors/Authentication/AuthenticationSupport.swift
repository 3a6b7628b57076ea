import CourierTestSupport
import Foundation
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bearer token for the authentication tests; `requiresRefresh` is fixed when it is made.
struct TestCredential: AuthenticationCredential, Equatable {
    let token: String
    var requiresRefresh = false
}

/// Applies `Authorization: Bearer <token>` and refreshes through `next`, counting refreshes.
struct TestAuthenticator: Authenticator {
    let refreshes = Counter()
    /// Gets the credential of refresh number `n` (1, 2…).
    let next: @Sendable (Int) async throws -> TestCredential

    func apply(_ credential: TestCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: TestCredential) async throws -> TestCredential {
        try await next(refreshes.increment())
    }
}

/// A flag a refresh can wait on without blocking a thread.
final class Gate: Sendable {
    private let opened = Box<Bool>()

    func open() { opened.append(true) }

    /// Returns once `open()` was called (polls; cancellable).
    func wait() async throws {
        while opened.count == 0 { try await Task.sleep(for: .milliseconds(5)) }
    }
}
