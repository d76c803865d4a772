import LockstepLocks

/// Where a property of an asset stands (`AVKeyValueStatus`).
public enum KeyValueStatus: Sendable, Hashable {
    /// Nothing asked for it yet.
    case unknown
    /// A load is under way.
    case loading
    /// Loaded: reading it returns at once.
    case loaded
    /// The load failed; `statusOfValue(forKey:error:)` gives the error.
    case failed
    /// The load was cancelled (`cancelLoading()`) before it finished.
    case cancelled
}

/// `AVAsynchronousKeyValueLoading`: every property of a `URLAsset` comes from one reading of its
/// container, so every key has the same status, that reading's.
extension URLAsset {
    /// The keys an asset loads, named as AVAsset names its properties.
    public static let loadableKeys = [
        "availableMediaCharacteristicsWithMediaSelectionOptions", "commonMetadata", "duration", "formatName",
        "metadata", "playable", "tracks",
    ]

    /// Where `key` stands: `.failed`, with `error` set, for a key the asset does not load or a
    /// reading that failed.
    public func statusOfValue(forKey key: String, error: inout PlayerError?) -> KeyValueStatus {
        guard Self.loadableKeys.contains(key) else {
            error = .unknownAssetKey(key, known: Self.loadableKeys)
            return .failed
        }
        switch loadedInspection {
        case .success?:
            return .loaded
        case .failure(let failure)?:
            error = failure
            return .failed
        case nil:
            return keyLoading.withLock { $0.tasks.isEmpty ? ($0.cancelled ? .cancelled : .unknown) : .loading }
        }
    }

    /// Starts loading `keys` (every key the asset knows loads with the others) and calls
    /// `completionHandler` once they are loaded, have failed or were cancelled, on a thread of its
    /// own choosing; at once (on such a thread) when they already were.
    public func loadValuesAsynchronously(
        forKeys keys: [String], completionHandler: (@Sendable () -> Void)? = nil
    ) {
        // The task is listed before it can run, so its end always finds itself there, unless
        // `cancelLoading()` took it off.
        keyLoading.withLock { loading in
            loading.cancelled = false
            loading.nextTask += 1
            let id = loading.nextTask
            loading.tasks[id] = Task { [self] in
                _ = try? await inspection()
                keyLoading.withLock { _ = $0.tasks.removeValue(forKey: id) }
                completionHandler?()
            }
        }
    }

    /// Cancels the loads `loadValuesAsynchronously` started: their keys read `.cancelled` (unless
    /// the reading had already finished) and their completion handlers are called.
    public func cancelLoading() {
        let tasks = keyLoading.withLock { loading -> [Task<Void, Never>] in
            defer { loading.tasks = [:] }
            if !loading.tasks.isEmpty { loading.cancelled = true }
            return Array(loading.tasks.values)
        }
        for task in tasks { task.cancel() }
    }
}
