import LockstepTime
import WallDisplay
import WallPlayer
import WallProtocol

/// A test card on the screen, until `ends` or until media comes to the screen.
struct Identification {
    let picture: StillPicture
    let timer: Task<Void, Never>
    /// Which card this is: a newer one replaces it, and the old timer then ends nothing.
    let serial: UInt64
}

extension NodeController {
    /// Shows the test card for `duration`: this node's id, wall and tile as text, its outline in a
    /// colour of its own, the wall's grid, diagonals and circle (continuous across screens placed as
    /// configured) and colour bars (`TestCard`).
    ///
    /// Only between shows: with media loaded the card would cover the show, so the node refuses
    /// (stop first). A second request replaces the card and restarts its time; loading media, a
    /// timeline taking over the screen, or `stop` end it early.
    func identify(for duration: MediaTime) throws(NodeError) {
        try checked { () throws(RequestRejection) in try RequestChecks.identifyDuration(duration) }
        if player.currentItem != nil {
            throw .screenBusy(
                "it is showing \(loadedMedia ?? "its timeline"); a test card covers the screen only between shows "
                    + "(`wallctl stop` first)")
        }
        guard let video = player.videoOutput else { throw .screenBusy("this node has no video output") }
        clearScreenForPlayer()
        let wall = settings.wall
        let index = wall.nodes.firstIndex { $0.id == settings.id } ?? 0
        let node = wall.nodes[index]
        let size = video.outputSize ?? PixelSize(width: node.tile.width, height: node.tile.height)
        let card = TestCard(
            canvas: (wall.canvas.width, wall.canvas.height),
            tile: DisplayRect(x: node.tile.x, y: node.tile.y, width: node.tile.width, height: node.tile.height),
            output: (size.width, size.height), index: index)
        let tile = node.tile.geometry
        let caption = [
            CaptionLine(settings.id, height: 0.16),
            CaptionLine("\(wall.name): screen \(index + 1) of \(wall.nodes.count), tile \(tile)", height: 0.045),
        ]
        let picture: StillPicture
        do {
            picture = try StillPicture(rgb: card.render(), size: size, caption: caption, output: video)
        } catch {
            throw .cannotShow("the test card: \(error)")
        }
        identificationSerial += 1
        let serial = identificationSerial
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .nanoseconds(duration.nanoseconds ?? 0))
            await self?.endIdentification(serial: serial)
        }
        identification = Identification(picture: picture, timer: timer, serial: serial)
        logger.info(
            "test card shown",
            metadata: [
                "identify.duration_ns": .nanoseconds(duration), "identify.size": "\(size)", "identify.tile": "\(tile)",
            ])
    }

    /// Takes the test card down (the one numbered `serial`, or any), and puts the still (or black)
    /// back when nothing else is on the screen and `showingStill`.
    func endIdentification(serial: UInt64? = nil, showingStill: Bool = true) {
        guard let current = identification, serial == nil || serial == current.serial else { return }
        identification = nil
        current.timer.cancel()
        current.picture.close()
        logger.info("test card ended")
        if showingStill { showBetweenShows() }
    }
}
