import Foundation

/// Starting the sweep of abandoned side files (SideFile+Sweep.swift) in the directories a task
/// is about to write in: lazily, the first time this process uses each one, in the background.
extension SessionManager {
    /// The directory of a download's partial file: a fixed partial file's own (a record's
    /// temporary left there by a killed process), or where its random staging file goes.
    func sweepSideFiles(for plan: DownloadPlan) {
        let directory =
            plan.partialFile?.deletingLastPathComponent() ?? plan.destination.stagingDirectory
            ?? temporaryDirectory
        SideFile.Sweeper.shared.sweepOnce(directory)
    }

    /// The manager's temporary directory, where large multipart bodies are encoded.
    func sweepSideFiles(for kind: TransferTask.Kind) {
        if case .upload(.multipart) = kind { SideFile.Sweeper.shared.sweepOnce(temporaryDirectory) }
    }
}
