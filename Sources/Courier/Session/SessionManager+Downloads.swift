import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionManager {
    /// Validation, destination and publishing on the processing queue, then one completion. The
    /// staging file is removed on every path that does not publish it.
    func downloadFinisher(
        destination: DownloadDestination, validation: Validation, delivery: Delivery,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> TransferTask.Finisher {
        let processingQueue = processingQueue
        let events = events
        return { outcome, handle in
            processingQueue.async {
                let result = Self.publish(outcome, destination: destination, validation: validation)
                if case .failure = result, let staged = outcome.stagedFile {
                    try? FileManager.default.removeItem(at: staged)
                }
                let response = DownloadResponse(request: outcome.request, response: outcome.response, result: result)
                events.taskDidComplete(
                    handle,
                    event: TaskCompletionEvent(
                        response: outcome.response, data: nil, value: response.fileURL, fileURL: response.fileURL,
                        error: response.error))
                delivery.run { completion(response) }
            }
        }
    }

    private static func publish(
        _ outcome: TransferOutcome, destination: DownloadDestination, validation: Validation
    ) -> Result<URL, CourierError> {
        if let error = outcome.error { return .failure(error) }
        let url = outcome.request.url
        guard let staged = outcome.stagedFile, let response = outcome.response else {
            return .failure(CourierError(code: .network, message: "no HTTP response was received", url: url))
        }
        do {
            let isEmpty = ((try? FileManager.default.attributesOfItem(atPath: staged.path)[.size]) as? NSNumber)?
                .int64Value == 0
            do {
                try validation.validate(request: outcome.request, response: response, data: isEmpty ? Data() : nil)
            } catch {
                // Never publish an error page; attach its beginning to the error instead.
                throw error.adding(url: url, response: response, body: FilePublisher.prefix(of: staged))
            }
            let (target, options): (URL, DownloadDestination.Options)
            do {
                (target, options) = try destination.resolve(staged, response)
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError(
                    code: .destinationFailed, message: "the destination closure failed: \(error)", url: url,
                    response: response, underlyingError: error)
            }
            try FilePublisher.publish(staged, to: target, options: options, requestURL: url)
            return .success(target)
        } catch let error as CourierError {
            return .failure(error.adding(url: url, response: response, body: nil))
        } catch {
            return .failure(CourierError(code: .destinationFailed, message: "\(error)", url: url, response: response))
        }
    }
}
