import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads, the driver's half: what runs outside the lock (the `.atResponse` destination
/// closure) and what stops the task from outside its callbacks (the writer's failure). The rules
/// are TransferState+Downloads.swift's.
extension TransferTask {
    /// Calls an `.atResponse` destination closure (outside the lock, on the callback queue, so no
    /// data callback of this task runs before its answer is recorded) and checks its answer now:
    /// an existing file or a throwing closure stops the download, keeping its bytes.
    func resolveDestination(_ destination: DownloadDestination, _ response: HTTPURLResponse, _ partial: URL) {
        let problem: CourierError?
        do {
            let (url, options) = try destination.resolve(partial, response)
            locked { $0.file?.resolvedDestination = (url, options) }
            problem = FilePublisher.existingFileProblem(at: url, options: options, requestURL: originalRequest.url)
        } catch let error as CourierError {
            problem = error
        } catch {
            problem = CourierError(
                code: .destinationFailed, message: "the destination closure failed: \(error)", url: originalRequest.url,
                response: response, underlyingError: error)
        }
        if let problem { stop(with: problem.adding(url: originalRequest.url, response: response, body: nil), keepingBytes: true) }
    }

    // MARK: - The writer

    /// A write failed: the download stops with that error, once. Its bytes are not kept: the
    /// file may not hold what was accepted.
    func writerFailed(_ error: CourierError) {
        stop(with: error, keepingBytes: false)
    }
}

extension CourierError {
    static func invalidResponse(_ message: String, _ response: HTTPURLResponse?) -> CourierError {
        CourierError(code: .invalidResponse, message: message + "; nothing was published", response: response)
    }

    static func integrity(_ message: String, _ url: URL?) -> CourierError {
        CourierError(code: .integrityFailed, message: message + "; nothing was published", url: url)
    }
}
