import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadQueue {
    /// One journal record: the queue's state is the fold of these, in order.
    enum Record: Codable, Equatable {
        case add(Item)
        case state(id: String, state: State)
        case url(id: String, url: URL)
        case remove(id: String)

        /// One encoder for every record: making one per record was a visible share of the CPU.
        private static let encoder = JSONEncoder()

        /// The JSON payload written to the journal.
        func encoded() -> Data {
            // Encoding these plain values cannot fail.
            (try? Self.encoder.encode(self)) ?? Data()
        }
    }

    /// What becomes possible once the records decided with it are durable.
    enum Action {
        case start(Run)
        case launch(Run, URLRequest?)
        case refresh(Run, RefreshReason)
        /// Announce the item, and who tries it again when that is why (``Change/retry``).
        case emit(Item, retry: RetryOwner?)
        case stopTask(DownloadTask, keepingBytes: Bool)
        case removePartialFiles(String)
        case signal(@Sendable (CourierError?) -> Void)
        case stopped([@Sendable () -> Void])
        /// Ask the routing table again about the hosts held back (DownloadQueue+Connectivity.swift).
        case recheckHosts
    }

    /// One run of an item's download: callbacks of an earlier run (paused, then resumed before
    /// its task finished stopping) are told apart by the token.
    struct Run: Equatable {
        let id: String
        let token: UInt64
    }

    /// A download the queue runs (or is about to).
    struct Running {
        let host: String
        let token: UInt64
        var task: DownloadTask?
        var phase = Phase.active
        /// The connections the run holds on its host (``DownloadQueue/grant(_:hostConnections:perHost:)``):
        /// 1, or more for a split item. Released with the run.
        var connections = 1
        /// The split its download uses: the item's, capped at ``connections``.
        var split = DownloadSplit.off

        /// Where a run stands between its start and its completion. The publication gate
        /// (``QueueState/beginPublishing(_:)``) and the caller's requests
        /// (``QueueState/apply(_:to:)``) decide it under the queue's lock, so a run either
        /// publishes and its item completes, or is stopped before its rename and never publishes.
        enum Phase: Equatable {
            /// Starting, fetching or waiting for a refresh: pause, cancel, remove and stop end it.
            case active
            /// Stopped by a shutdown, keeping its bytes. Its item is still running in the journal,
            /// so it may still publish (then its outcome is recorded before the queue closes).
            case stopping
            /// Past the gate: its file is being renamed into place. Its outcome is the item's
            /// state; pause and cancel change nothing, remove forgets the item and leaves the file.
            case publishing
            /// Paused, cancelled or removed before the gate: it may not publish, and its
            /// completion changes no state.
            case ending
        }
    }

    /// The queue's whole mutable state, behind one lock.
    struct QueueState {
        var items: [String: Item] = [:]
        var order = QueueOrder()
        var running: [String: Running] = [:]
        /// The connections the running items hold per host (``Item/hostKey``): what the per-host
        /// cap counts (a split item holds several).
        var connectionsPerHost: [String: Int] = [:]
        var refreshes: [String: Int] = [:]
        var nextSequence: UInt64 = 0
        var nextToken: UInt64 = 0
        /// Queued items whose previous run is still stopping: they go back in the order when it has.
        var deferred: Set<String> = []
        /// Records and actions decided by the change under way, moved to `pending` when it ends.
        var records: [Data] = []
        var actions: [Action] = []
        var pending: [(records: [Data], actions: [Action])] = []
        var flushing = false
        var stopping = false
        var stopWaiters: [@Sendable () -> Void] = []
        var closed = false
        /// A journal write failed: nothing more can be made durable, so nothing more is done.
        var broken: CourierError?
        var continuations: [UUID: AsyncStream<Change>.Continuation] = [:]
        var observers: [UUID: @Sendable (Change) -> Void] = [:]
        /// The size of each item's `add` record, and their sum: about what a compacted journal
        /// holds. The journal is compacted once it is twice that, and past `compactionFloor`
        /// (DownloadQueue+Compaction.swift).
        var recordSizes: [String: Int] = [:]
        var liveBytes: Int64 = 0
        /// No journal is compacted below this many bytes (1 MiB): a small one costs nothing to
        /// replay. Tests lower it to see compactions without writing megabytes.
        var compactionFloor: Int64 = 1 << 20
        /// Hosts (``Item/hostKey``) with no route: their queued items do not start.
        var unreachableHosts: Set<String> = []

        mutating func record(_ record: Record) {
            let data = record.encoded()
            records.append(data)
            switch record {
            case .add(let item): noteSize(item.id, data.count)
            case .remove(let id): noteSize(id, nil)
            case .state, .url: break
            }
        }

        mutating func noteSize(_ id: String, _ size: Int?) {
            liveBytes -= Int64(recordSizes[id] ?? 0)
            recordSizes[id] = size
            liveBytes += Int64(size ?? 0)
        }

        mutating func emit(_ item: Item, retry: RetryOwner? = nil) {
            actions.append(.emit(item, retry: retry))
        }

        /// Journals and announces a new state for `id`.
        mutating func set(_ id: String, _ newState: DownloadQueue.State, retry: RetryOwner? = nil) {
            guard var item = items[id] else { return }
            item.state = newState
            items[id] = item
            if case .running = newState {
                record(.state(id: id, state: .running(received: 0, total: nil)))  // counts are not journaled
            } else {
                record(.state(id: id, state: newState))
            }
            emit(item, retry: retry)
        }

        /// Stops an active download: paused, cancelled or removed (`phase` `.ending`), it may no
        /// longer publish and its completion changes nothing; stopped by a shutdown (`.stopping`),
        /// it keeps its bytes and the journal keeps it as running, so the next open continues it.
        /// A run past the publication gate is left to finish.
        mutating func stopRunning(_ id: String, as phase: Running.Phase, keepingBytes: Bool) {
            guard var entry = running[id], entry.phase == .active else { return }
            entry.phase = phase
            if let task = entry.task {
                running[id] = entry
                actions.append(.stopTask(task, keepingBytes: keepingBytes))
            } else {
                // Not launched yet (waiting for the journal or a refresh): nothing to stop.
                release(id, entry)
            }
        }

        /// The running entry of `run`, if it is still the item's current run.
        func entry(_ run: Run) -> Running? {
            guard let entry = running[run.id], entry.token == run.token else { return nil }
            return entry
        }

        /// Frees a download's slot and the connections it held on its host; an item queued again
        /// meanwhile goes back in the order.
        mutating func release(_ id: String, _ entry: Running) {
            running[id] = nil
            let count = (connectionsPerHost[entry.host] ?? entry.connections) - entry.connections
            connectionsPerHost[entry.host] = count > 0 ? count : nil
            if deferred.remove(id) != nil, let item = items[id], item.state == .queued { order.insert(item) }
        }

        /// Once a shutdown has no download left, the journal is closed and `stop()` returns.
        mutating func finishStopIfIdle() {
            guard stopping, running.isEmpty, !stopWaiters.isEmpty else { return }
            actions.append(.stopped(stopWaiters))
            stopWaiters = []
        }

        /// Rebuilds the state from the journal's records. A record that does not decode (it
        /// passed its checksum, so it was written by a newer or broken writer) is skipped.
        /// Returns the ids of the items that were running.
        @discardableResult
        mutating func replay(_ payloads: [Data], skipped: inout [String]) -> [String] {
            let decoder = JSONDecoder()
            for (index, payload) in payloads.enumerated() {
                guard let record = try? decoder.decode(Record.self, from: payload) else {
                    skipped.append("record \(index + 1) is not a queue record this version reads")
                    continue
                }
                switch record {
                case .add(let item):
                    items[item.id] = item
                    noteSize(item.id, payload.count)
                    nextSequence = max(nextSequence, item.sequence)
                case .state(let id, let state): items[id]?.state = state
                case .url(let id, let url): items[id]?.url = url
                case .remove(let id):
                    items[id] = nil
                    noteSize(id, nil)
                }
            }
            // What was running continues from its bytes on disk, in its place in the order.
            var wasRunning: [String] = []
            for (id, item) in items {
                if case .running = item.state {
                    items[id]?.state = .queued
                    wasRunning.append(id)
                }
                if let item = items[id], item.state == .queued { order.insert(item) }
            }
            return wasRunning
        }
    }
}

/// The queued items, per host, each host's in run order (higher priority first, then FIFO), so
/// the next item to run under the per-host cap is found in O(hosts), not O(items).
struct QueueOrder {
    private struct Key: Comparable {
        let priority: Int
        let sequence: UInt64
        static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.priority != rhs.priority ? lhs.priority > rhs.priority : lhs.sequence < rhs.sequence
        }
    }

    /// One host's queued items from `head` on (taken ones are dropped in batches, not one by one).
    private struct HostQueue {
        var entries: [(key: Key, id: String)] = []
        var head = 0
        var first: (key: Key, id: String)? { head < entries.count ? entries[head] : nil }
        var isEmpty: Bool { head == entries.count }

        mutating func insert(_ key: Key, _ id: String) {
            // Items mostly arrive in order: appending is the common case.
            if let last = entries.last, head < entries.count, key < last.key {
                var low = head
                var high = entries.count
                while low < high {
                    let middle = (low + high) / 2
                    if entries[middle].key < key { low = middle + 1 } else { high = middle }
                }
                entries.insert((key, id), at: low)
            } else {
                entries.append((key, id))
            }
        }

        mutating func removeFirst() -> String {
            let id = entries[head].id
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return id
        }

        mutating func remove(_ id: String) -> Bool {
            guard let index = entries[head...].firstIndex(where: { $0.id == id }) else { return false }
            entries.remove(at: index)
            return true
        }
    }

    // Mutated in place through `hosts[key, default:]`: copying a host's list out and back would
    // make adding N items O(N²).
    private var hosts: [String: HostQueue] = [:]
    private(set) var count = 0

    mutating func insert(_ item: DownloadQueue.Item) {
        hosts[item.hostKey, default: HostQueue()].insert(Key(priority: item.priority, sequence: item.sequence), item.id)
        count += 1
    }

    mutating func remove(_ item: DownloadQueue.Item) {
        guard hosts[item.hostKey]?.remove(item.id) == true else { return }
        if hosts[item.hostKey]?.isEmpty == true { hosts[item.hostKey] = nil }
        count -= 1
    }

    /// Takes the next item to run among hosts that `hasRoom`.
    mutating func popNext(hasRoom: (String) -> Bool) -> String? {
        var best: (host: String, key: Key)?
        for (host, queue) in hosts {
            guard let first = queue.first, hasRoom(host) else { continue }
            if best == nil || first.key < best!.key { best = (host, first.key) }
        }
        guard let best, let id = hosts[best.host]?.removeFirst() else { return nil }
        if hosts[best.host]?.isEmpty == true { hosts[best.host] = nil }
        count -= 1
        return id
    }
}
