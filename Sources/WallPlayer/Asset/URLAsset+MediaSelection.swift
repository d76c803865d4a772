extension URLAsset {
    /// The characteristics for which the asset has options to choose from: audible when it has
    /// audio, legible when it has subtitles (`availableMediaCharacteristicsWithMediaSelectionOptions`).
    public var availableMediaCharacteristicsWithMediaSelectionOptions: [MediaCharacteristic] {
        get async throws(PlayerError) {
            let tracks = try await inspection().tracks
            return MediaCharacteristic.allCases.filter {
                MediaSelectionGroup(characteristic: $0, tracks: tracks) != nil
            }
        }
    }

    /// The options for `characteristic`, or nil when the asset has no track with it
    /// (`loadMediaSelectionGroup(for:)`).
    public func mediaSelectionGroup(forMediaCharacteristic characteristic: MediaCharacteristic)
        async throws(PlayerError) -> MediaSelectionGroup?
    {
        MediaSelectionGroup(characteristic: characteristic, tracks: try await inspection().tracks)
    }
}

extension URLAsset {
    /// The cues of the subtitle track numbered `number` among the asset's subtitle tracks, read
    /// once (on the caller's thread: it reads the whole file, or an HLS rendition's playlist and
    /// segments); the subtitles inside a network file are not read.
    func cues(ofSubtitle number: Int) -> Result<SubtitleCues, PlayerError> {
        if let done = subtitleCues.withLock({ $0[number] }) { return done }
        let result: Result<SubtitleCues, PlayerError>
        let inspection = try? loadedInspection?.get()
        let subtitles = inspection?.tracks.filter { $0.mediaType == .subtitle } ?? []
        if let inspection, subtitles.indices.contains(number), let playlist = subtitles[number].renditionPlaylist {
            result = Result { () throws(PlayerError) in
                try MediaInspector.subtitleCues(rendition: playlist, containerStart: inspection.containerStart)
            }
        } else if let inspection, isFileBased {
            result = Result { () throws(PlayerError) in
                try MediaInspector.subtitleCues(
                    path: url.path, number: number, containerStart: inspection.containerStart)
            }
        } else {
            result = .failure(.notFileBased(url.absoluteString))
        }
        defer { _ = subtitleReads.withLock { $0.remove(number) } }
        return subtitleCues.withLock { cached in
            if cached[number] == nil { cached[number] = result }
            return cached[number]!
        }
    }

    /// Whether the caller is the one to read subtitle `number`'s cues: false while another reads
    /// them (until its `cues(ofSubtitle:)` returns). A choice made again while the file is being
    /// read then waits for that read instead of reading it a second time.
    func claimSubtitleRead(_ number: Int) -> Bool {
        subtitleReads.withLock { $0.insert(number).inserted }
    }
}
