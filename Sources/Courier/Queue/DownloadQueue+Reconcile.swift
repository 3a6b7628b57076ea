import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DownloadQueue {
    /// What to do with the items in the queue that a reconciled list does not name.
    public enum UnlistedItems: Sendable {
        /// The list is the whole list: pause every queued or running item it does not name
        /// (their bytes stay; listing them again continues them). Nothing is ever removed.
        case pause
        /// The list is one part of a longer one: leave the items it does not name as they are.
        case leave
        /// The list is the last part of a longer one, whose earlier parts were reconciled already:
        /// pause the queued or running items that neither it nor `listedEarlier` names.
        case pauseUnless(listedEarlier: @Sendable (Item) -> Bool)
    }

    /// One decision of ``DownloadQueue/reconcile(_:unlisted:replacingExistingFiles:)`` about one
    /// item, in the list's order (the unlisted items last).
    public enum Reconciliation: Sendable, Equatable {
        /// A listed item the queue did not have: added.
        case add(id: String)
        /// A listed item whose destination already holds a file with its SHA-256 (and length):
        /// added as completed, nothing fetched.
        case adopt(id: String)
        /// A listed item that is queued, running or completed: left as it is.
        case keep(id: String)
        /// A listed item that failed, was paused or cancelled: queued again (it continues from
        /// its bytes, if any).
        case resume(id: String)
        /// A listed item whose SHA-256 changed: removed with its bytes (they were fetched for
        /// another file). The decision that follows for the same id (``add(id:)``,
        /// ``adopt(id:)``, ``replaceFile(id:)`` or ``refuse(id:destination:)``) treats the line
        /// as new, except that a completed item's own published file is checked against the new
        /// SHA-256: adopted when it has it, replaced (fetched again) when not.
        case replace(id: String)
        /// A new item whose destination holds a file that is not proven to be it, removed and
        /// fetched again because the caller asked to replace existing files.
        case replaceFile(id: String)
        /// An item the list does not name, queued or running: paused, its bytes kept.
        case pause(id: String)
        /// A new item whose destination holds something that is not proven to be it (no SHA-256
        /// to check, a different one, or not a regular file), and replacing was not asked for.
        case refuse(id: String, destination: URL)
    }

    /// Brings the queue in line with a list of downloads — the list a service or a command keeps
    /// of what should be on disk — in one durable journal write, and returns what it decided
    /// for each item. The rules (one pure function, `DownloadQueue.plan`):
    ///
    /// - An item the queue does not have is added; when its destination already holds a regular
    ///   file with the item's SHA-256 (and length), it is added as completed instead (adopted):
    ///   published by a run whose journal record was lost, or fetched by other means.
    /// - A destination holding anything else is refused, unless `replacingExistingFiles`: then it
    ///   is removed and the item fetched. A refusal changes nothing at all: the method throws.
    /// - An item that failed, was paused or cancelled is queued again; one queued, running or
    ///   completed is left as it is.
    /// - An item whose SHA-256 in the list differs from the queue's is removed with its bytes
    ///   and treated as new. A completed one keeps its published file when that file has the new
    ///   SHA-256 (adopted), and is fetched again over it when not; a line with no SHA-256 keeps it.
    /// - Items the list does not name are paused or left, as `unlisted` says; never removed.
    ///
    /// Each item of `list` needs an ``NewItem/id``: it is how a line is matched with its item
    /// from one run to the next. Destinations are read (and hashed, for items with a SHA-256)
    /// before the queue's lock is taken.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/destinationFailed`` naming the first refused
    ///   destination (its ``CourierError/url``), with nothing changed;
    ///   ``CourierError/Code-swift.struct/invalidRequest`` for an item without an id, two items
    ///   with one id, or an item ``add(_:)`` would refuse; the journal's error when it cannot be
    ///   written.
    @discardableResult
    public func reconcile(
        _ list: [NewItem], unlisted: UnlistedItems = .pause, replacingExistingFiles: Bool = false
    ) throws(CourierError) -> [Reconciliation] {
        try refuseOnSharedStore("reconcile")
        var byID: [String: NewItem] = [:]
        for new in list {
            guard let id = new.id else {
                throw CourierError(code: .invalidRequest, message: "reconciling needs an id for every item", url: new.url)
            }
            if let why = Self.problem(with: new, id: id) { throw CourierError(code: .invalidRequest, message: why, url: new.url) }
            guard byID.updateValue(new, forKey: id) == nil else {
                throw CourierError(code: .invalidRequest, message: "the list names the item \(id) twice", url: new.url)
            }
        }
        let journal = state.withLock { $0.items }
        // Off the lock: reading a destination may mean hashing a large file.
        let decisions = Self.plan(
            journal: journal, list: list, unlisted: unlisted, replacingExistingFiles: replacingExistingFiles,
            onDisk: { new in ExistingFile.inspect(new.destination.standardizedFileURL, hashing: new.sha256 != nil) })
        for case .refuse(let id, let destination) in decisions {
            throw CourierError(
                code: .destinationFailed,
                message: "\(destination.path) already exists and is not proven to be the file of item \(id) "
                    + "(no SHA-256 to check, another one, or not a regular file); nothing was changed",
                url: destination)
        }
        for case .replaceFile(let id) in decisions {
            if let destination = byID[id]?.destination { unlink(destination.standardizedFileURL.path) }
        }
        var problem: CourierError?
        try commitAndWait { state in
            for decision in decisions {
                switch decision {
                case .add(let id), .replaceFile(let id):
                    if let new = byID[id] { problem = problem ?? state.insert(new, id: id, completed: false) }
                case .adopt(let id):
                    if let new = byID[id] { problem = problem ?? state.insert(new, id: id, completed: true) }
                case .resume(let id): state.apply(.resume, to: id)
                case .replace(let id): state.apply(.remove, to: id)
                case .pause(let id): state.apply(.pause, to: id)
                case .keep, .refuse: break
                }
            }
            scheduleLocked(&state)
        }
        if let problem { throw problem }
        return decisions
    }

    /// The reconcile rule, decided without touching anything: for each item of `list` in order,
    /// then for the items of `journal` it does not name, what
    /// ``reconcile(_:unlisted:replacingExistingFiles:)`` does. `onDisk` tells what is at a new
    /// item's destination; it is asked only for items that would be added.
    static func plan(
        journal: [String: Item], list: [NewItem], unlisted: UnlistedItems, replacingExistingFiles: Bool,
        onDisk: (NewItem) -> ExistingFile
    ) -> [Reconciliation] {
        var decisions: [Reconciliation] = []
        var listed = Set<String>()
        for new in list {
            guard let id = new.id else { continue }
            listed.insert(id)
            var ownFile = false
            if let item = journal[id] {
                let completed: Bool
                if case .completed = item.state { completed = true } else { completed = false }
                // A completed item with no SHA-256 in the line has nothing to be checked against.
                if item.sha256 == new.sha256?.lowercased() || (completed && new.sha256 == nil) {
                    switch item.state {
                    case .failed, .paused, .cancelled: decisions.append(.resume(id: id))
                    case .queued, .running, .completed: decisions.append(.keep(id: id))
                    }
                    continue
                }
                // Its bytes were fetched for another file.
                decisions.append(.replace(id: id))
                // The file a completed item published is the queue's own: checked against the new
                // SHA-256 below, and fetched again over it when it does not match (issue 30).
                ownFile = completed && item.destination == new.destination.standardizedFileURL
            }
            let existing = onDisk(new)
            if existing == .absent {
                decisions.append(.add(id: id))
            } else if !replacingExistingFiles,
                existing.check(expectedLength: new.expectedLength, sha256: new.sha256) == .proven
            {
                decisions.append(.adopt(id: id))
            } else if replacingExistingFiles || ownFile {
                decisions.append(.replaceFile(id: id))
            } else {
                decisions.append(.refuse(id: id, destination: new.destination.standardizedFileURL))
            }
        }
        let listedEarlier: (Item) -> Bool
        switch unlisted {
        case .leave: return decisions
        case .pause: listedEarlier = { _ in false }
        case .pauseUnless(let earlier): listedEarlier = earlier
        }
        for item in journal.values.sorted(by: { $0.sequence < $1.sequence })
        where !listed.contains(item.id) && !listedEarlier(item) {
            switch item.state {
            case .queued, .running: decisions.append(.pause(id: item.id))
            case .paused, .failed, .cancelled, .completed: break
            }
        }
        return decisions
    }
}

extension DownloadQueue.QueueState {
    /// Adds `new` as item `id` (queued, or completed at its destination), journaled with the
    /// change under way; returns why it cannot be added instead, changing nothing. The one place
    /// an item is created: ``DownloadQueue/add(contentsOf:)`` and reconciling both use it.
    mutating func insert(_ new: DownloadQueue.NewItem, id: String, completed: Bool) -> CourierError? {
        if let why = DownloadQueue.problem(with: new, id: id) {
            return CourierError(code: .invalidRequest, message: why, url: new.url)
        }
        guard items[id] == nil else {
            return CourierError(code: .invalidRequest, message: "the queue already has an item with id \(id)", url: new.url)
        }
        nextSequence += 1
        let destination = new.destination.standardizedFileURL
        let item = DownloadQueue.Item(
            id: id, url: new.url, headers: new.headers, destination: destination, expectedLength: new.expectedLength,
            sha256: new.sha256?.lowercased(), priority: new.priority, metadata: new.metadata,
            state: completed ? .completed(destination) : .queued, sequence: nextSequence,
            splitArgument: DownloadQueue.Item.splitArgument(for: new.split))
        items[id] = item
        if !completed { order.insert(item) }
        record(.add(item))
        emit(item)
        return nil
    }
}
