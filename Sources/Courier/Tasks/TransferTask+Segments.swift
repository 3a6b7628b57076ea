import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferTask {
    /// The connections the transfer uses now (``CourierTask/connectionCount``).
    var connectionCount: Int {
        locked { state in
            switch state.phase.state {
            case .running: return 1
            default: return 0
            }
        }
    }
}
