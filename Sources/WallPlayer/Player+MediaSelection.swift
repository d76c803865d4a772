extension Player {
    /// Whether the CEA-608 closed captions carried in the video (ATSC A/53, as broadcast H.264 and
    /// MPEG-2 have them) are drawn over the picture while no subtitles are chosen; false by default
    /// (`AVPlayer.closedCaptionDisplayEnabled`). Channel CC1 is shown, from the next frame on.
    public var closedCaptionDisplayEnabled: Bool {
        get { settings.withLock { $0.closedCaptionDisplayEnabled } }
        set {
            settings.withLock { $0.closedCaptionDisplayEnabled = newValue }
            pipelineRef.withLock { $0 }?.subtitles?.showClosedCaptions(newValue)
        }
    }

    /// Whether the player chooses each item's audio and subtitles by its criteria when the item
    /// becomes current, and again when the criteria change; true by default. A choice made on the
    /// item (`select(_:in:)`) is kept (`appliesMediaSelectionCriteriaAutomatically`).
    public var appliesMediaSelectionCriteriaAutomatically: Bool {
        get { settings.withLock { $0.appliesMediaSelectionCriteriaAutomatically } }
        set { settings.withLock { $0.appliesMediaSelectionCriteriaAutomatically = newValue } }
    }

    /// The languages the player prefers for `characteristic` (`setMediaSelectionCriteria(_:forMediaCharacteristic:)`);
    /// nil returns to the default: for audio the environment's languages (`LANGUAGE`, `LC_ALL`,
    /// `LC_MESSAGES`, `LANG`), else the track the container marks default; for subtitles, none.
    /// Applied to the current item at once when choosing automatically.
    public func setMediaSelectionCriteria(
        _ criteria: PlayerMediaSelectionCriteria?, forMediaCharacteristic characteristic: MediaCharacteristic
    ) {
        settings.withLock { $0.selectionCriteria[characteristic] = criteria }
        queue.async {
            guard let item = self.engine.loadedItem, self.appliesMediaSelectionCriteriaAutomatically,
                item.applySelectionCriteria(self.effectiveCriteria(for:))
            else { return }
            self.tracksChanged(of: item)
        }
    }

    /// The criteria set for `characteristic`, if any (`mediaSelectionCriteria(forMediaCharacteristic:)`).
    public func mediaSelectionCriteria(forMediaCharacteristic characteristic: MediaCharacteristic)
        -> PlayerMediaSelectionCriteria?
    {
        settings.withLock { $0.selectionCriteria[characteristic] }
    }

    /// The criteria that choose for `characteristic`: those set, else for audio the environment's.
    func effectiveCriteria(for characteristic: MediaCharacteristic) -> PlayerMediaSelectionCriteria? {
        mediaSelectionCriteria(forMediaCharacteristic: characteristic)
            ?? (characteristic == .audible ? PlayerMediaSelectionCriteria.fromEnvironment() : nil)
    }

    /// Applies the criteria to an item becoming current, before its streams are chosen.
    func applySelectionCriteria(to item: PlayerItem) {
        guard appliesMediaSelectionCriteriaAutomatically else { return }
        _ = item.applySelectionCriteria(effectiveCriteria(for:))
    }
}
