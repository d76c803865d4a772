extension PlayerItem {
    /// The option chosen in each of the asset's groups: the enabled track of its kind
    /// (`currentMediaSelection`).
    public var currentMediaSelection: MediaSelection {
        var selected: [MediaCharacteristic: MediaSelectionOption] = [:]
        for characteristic in MediaCharacteristic.allCases {
            let chosen = tracks.first { $0.assetTrack.mediaType == characteristic.mediaType && $0.isEnabled }
            if let chosen { selected[characteristic] = MediaSelectionOption(track: chosen.assetTrack) }
        }
        return MediaSelection(selected: selected)
    }

    /// Plays `option` of `group`: its track is enabled and the others of its kind disabled; nil
    /// turns a group off where it allows that (subtitles), and is ignored where not (audio). An
    /// option of another asset's group is ignored. The player's criteria no longer choose for
    /// the group on this item (`select(_:in:)`).
    public func select(_ option: MediaSelectionOption?, in group: MediaSelectionGroup) {
        guard option.map({ group.options.contains($0) }) ?? group.allowsEmptySelection,
            let own = MediaSelectionGroup(characteristic: group.characteristic, tracks: tracks.map(\.assetTrack)),
            own.options == group.options
        else { return }
        handChosen.withLock { _ = $0.insert(group.characteristic) }
        if choose(option, in: group, among: tracks) { player?.tracksChanged(of: self) }
    }

    /// Lets the player's criteria choose for `group` again, as when the item became current
    /// (`selectMediaOptionAutomatically(in:)`); outside a player, the group's default.
    public func selectMediaOptionAutomatically(in group: MediaSelectionGroup) {
        handChosen.withLock { _ = $0.remove(group.characteristic) }
        let criteria = player.flatMap { $0.effectiveCriteria(for: group.characteristic) }
        if choose(group.option(for: criteria), in: group, among: tracks) { player?.tracksChanged(of: self) }
    }

    /// Chooses by the criteria `criteria` gives for each group not chosen on the item; returns
    /// whether a track changed. The player tells the pipeline.
    func applySelectionCriteria(_ criteria: (MediaCharacteristic) -> PlayerMediaSelectionCriteria?) -> Bool {
        applySelectionCriteria(criteria, among: tracks)
    }

    /// The same, among `tracks` (the item's, or the ones it is about to take).
    func applySelectionCriteria(
        _ criteria: (MediaCharacteristic) -> PlayerMediaSelectionCriteria?, among tracks: [PlayerItemTrack]
    ) -> Bool {
        let handChosen = self.handChosen.withLock { $0 }
        var changed = false
        for characteristic in MediaCharacteristic.allCases where !handChosen.contains(characteristic) {
            guard let group = MediaSelectionGroup(characteristic: characteristic, tracks: tracks.map(\.assetTrack))
            else { continue }
            if choose(group.option(for: criteria(characteristic)), in: group, among: tracks) { changed = true }
        }
        return changed
    }

    /// A track of this kind was enabled or disabled by hand.
    func chosenByHand(_ mediaType: MediaType) {
        guard let characteristic = MediaCharacteristic.allCases.first(where: { $0.mediaType == mediaType }) else {
            return
        }
        handChosen.withLock { _ = $0.insert(characteristic) }
    }

    /// Enables `option`'s track among `tracks` and disables the others of its kind, silently;
    /// returns whether any changed.
    private func choose(
        _ option: MediaSelectionOption?, in group: MediaSelectionGroup, among tracks: [PlayerItemTrack]
    ) -> Bool {
        var changed = false
        for track in tracks where track.assetTrack.mediaType == group.characteristic.mediaType {
            if track.setEnabled(track.assetTrack == option?.track) { changed = true }
        }
        return changed
    }
}
