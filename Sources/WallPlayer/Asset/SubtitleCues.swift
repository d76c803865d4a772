import Foundation
import LockstepTime

/// The text a subtitle track shows over time: what `SubtitleOverlay` draws over the picture.
struct SubtitleCues: Sendable, Hashable {
    struct Cue: Sendable, Hashable {
        /// Item times the cue is shown from, and up to (not including).
        let start: MediaTime
        let end: MediaTime
        let text: String
    }

    /// The cues, by start time.
    let cues: [Cue]

    init(_ cues: [Cue]) {
        self.cues = cues.sorted { $0.start < $1.start }
    }

    /// The text shown at item time `time`: the cues that cover it, one line after another; nil
    /// when none does.
    func text(at time: MediaTime) -> String? {
        var lines: [String] = []
        for cue in cues {
            if cue.start > time { break }
            if time < cue.end { lines.append(cue.text) }
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// The text of one subtitle event as libavcodec decodes every text format (SubRip, mov_text,
    /// WebVTT, SSA/ASS): an ASS dialogue line, "ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,
    /// Effect,Text". Returns the text as Pango markup for the overlay: style overrides (`{\i1}`)
    /// dropped, `\N` as a line break, markup characters escaped.
    static func plainText(fromASSDialogue dialogue: String) -> String {
        let fields = dialogue.split(separator: ",", maxSplits: 8, omittingEmptySubsequences: false)
        var text = fields.count == 9 ? String(fields[8]) : dialogue
        while let open = text.firstIndex(of: "{"), let close = text[open...].firstIndex(of: "}") {
            text.removeSubrange(open...close)
        }
        text = text.replacingOccurrences(of: "\\N", with: "\n").replacingOccurrences(of: "\\n", with: "\n")
            .replacingOccurrences(of: "\\h", with: "\u{00A0}")
        return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
