import Foundation

/// What a track offers a viewer (`AVMediaCharacteristic`), for the characteristics that have
/// selection options: one audio track of several, one subtitle track or none.
public enum MediaCharacteristic: String, Sendable, Hashable, CaseIterable, Codable {
    /// Sound: the asset's audio tracks, one of which plays (`.audible`).
    case audible
    /// Text shown over the picture: the asset's subtitle tracks, at most one of which is shown
    /// (`.legible`).
    case legible
    /// The picture, where the asset has alternate video tracks (another angle, a signed version):
    /// one of them plays (`.visual`). An asset with one video track has no options for it.
    case visual

    /// The media type of the tracks with this characteristic.
    var mediaType: MediaType {
        switch self {
        case .audible: return .audio
        case .legible: return .subtitle
        case .visual: return .video
        }
    }
}

/// One choice in a media selection group: a track that can be selected (`AVMediaSelectionOption`).
public struct MediaSelectionOption: Sendable, Hashable, CustomStringConvertible {
    /// The track this option plays.
    public let track: AssetTrack
    /// The track's title as the container names it, else its language's name in the current
    /// locale, else "Track N" (`displayName`).
    public var displayName: String {
        track.title ?? languageCode.flatMap { LanguageTags.name($0) } ?? "Track \(track.trackID)"
    }
    /// Whether the container marks the track as the one to choose by default.
    public var isDefault: Bool { track.isDefault }

    init(track: AssetTrack) {
        self.track = track
    }

    public var mediaType: MediaType { track.mediaType }
    /// The track's language as the container tags it (ISO 639-2, "eng", "fra"), if tagged.
    public var languageCode: String? { track.languageCode }
    /// The track's language as a BCP 47 tag ("en", "fr"), if tagged (`extendedLanguageTag`).
    public var extendedLanguageTag: String? { languageCode.map(LanguageTags.bcp47) }
    /// The locale of the track's language, if tagged (`locale`).
    public var locale: Locale? { extendedLanguageTag.map { Locale(identifier: $0) } }
    /// Whether the player can play the option's track: audio a decoder may play, or subtitles in
    /// a format GStreamer renders over the picture (`isPlayable`).
    public var isPlayable: Bool {
        switch track.mediaType {
        case .audio, .video: return track.isPlayable
        case .subtitle: return Self.renderedSubtitleCodecs.contains(track.codec)
        default: return false
        }
    }

    /// Subtitle formats, as libavcodec names them, that the player draws: text (SubRip, SSA/ASS
    /// without its styling, MP4's mov_text, WebVTT). Pictures (DVD, Blu-ray) are not drawn.
    static let renderedSubtitleCodecs: Set<String> = ["subrip", "srt", "text", "ass", "ssa", "mov_text", "webvtt"]

    public var description: String { "\(displayName) (\(track.mediaType.rawValue) track \(track.trackID))" }

    /// Whether this option's language is `language`, a BCP 47 or ISO 639 tag ("en", "en-GB",
    /// "eng"): the primary languages are compared.
    public func hasLanguage(_ language: String) -> Bool {
        guard let tag = extendedLanguageTag else { return false }
        return LanguageTags.primary(tag) == LanguageTags.primary(LanguageTags.bcp47(language))
    }
}

/// The options for one media characteristic of an asset (`AVMediaSelectionGroup`).
public struct MediaSelectionGroup: Sendable, Hashable {
    public let characteristic: MediaCharacteristic
    /// The options, in the asset's track order.
    public let options: [MediaSelectionOption]
    /// Whether the group may have nothing selected: true for subtitles (off), false for audio.
    public var allowsEmptySelection: Bool { characteristic == .legible }
    /// The option selected when no criteria say otherwise: for audio, the track the container marks
    /// default, else the first; for subtitles none, whatever the container marks (a wall shows
    /// subtitles when it is told to).
    public var defaultOption: MediaSelectionOption? {
        allowsEmptySelection ? nil : options.first(where: \.isDefault) ?? options.first
    }

    /// The group of `characteristic` among `tracks`, in their order; nil when none has it.
    init?(characteristic: MediaCharacteristic, tracks: [AssetTrack]) {
        let options = tracks.filter { $0.mediaType == characteristic.mediaType }.map(MediaSelectionOption.init)
        // Alternate pictures need two at least; one picture is no choice.
        guard options.count >= (characteristic == .visual ? 2 : 1) else { return nil }
        self.characteristic = characteristic
        self.options = options
    }

    /// The options whose language is one of `preferredLanguages`, in the order of that list
    /// (`mediaSelectionOptions(from:filteredAndSortedAccordingToPreferredLanguages:)`).
    public static func mediaSelectionOptions(
        from options: [MediaSelectionOption],
        filteredAndSortedAccordingToPreferredLanguages preferredLanguages: [String]
    ) -> [MediaSelectionOption] {
        var sorted: [MediaSelectionOption] = []
        for language in preferredLanguages {
            for option in options where option.hasLanguage(language) && !sorted.contains(option) {
                sorted.append(option)
            }
        }
        return sorted
    }

    /// The options the player can play (`playableMediaSelectionOptions(from:)`).
    public static func playableMediaSelectionOptions(from options: [MediaSelectionOption]) -> [MediaSelectionOption] {
        options.filter(\.isPlayable)
    }

    /// The option `criteria` choose: the first playable option in the first preferred language
    /// that has one; with no such option, the default (audio) or none (subtitles).
    func option(for criteria: PlayerMediaSelectionCriteria?) -> MediaSelectionOption? {
        let playable = Self.playableMediaSelectionOptions(from: options)
        if let criteria,
            let preferred = Self.mediaSelectionOptions(
                from: playable, filteredAndSortedAccordingToPreferredLanguages: criteria.preferredLanguages
            ).first
        {
            return preferred
        }
        if let fallback = defaultOption, fallback.isPlayable { return fallback }
        return allowsEmptySelection ? nil : playable.first
    }
}

/// The options an item plays, one per group at most (`AVMediaSelection`).
public struct MediaSelection: Sendable, Hashable {
    let selected: [MediaCharacteristic: MediaSelectionOption]

    /// The option selected in `group`; nil when nothing is (subtitles off) or the group is not the
    /// item's asset's.
    public func selectedMediaOption(in group: MediaSelectionGroup) -> MediaSelectionOption? {
        guard let option = selected[group.characteristic], group.options.contains(option) else { return nil }
        return option
    }
}

/// What a player chooses by itself for one characteristic when an item becomes current
/// (`AVPlayerMediaSelectionCriteria`).
public struct PlayerMediaSelectionCriteria: Sendable, Hashable {
    /// Languages in order of preference, as BCP 47 or ISO 639 tags ("fr", "en-GB", "deu").
    public let preferredLanguages: [String]

    public init(preferredLanguages: [String]) {
        self.preferredLanguages = preferredLanguages
    }

    /// The environment's language preference, as POSIX systems give it: `LANGUAGE` (a list
    /// separated by colons), else `LC_ALL`, `LC_MESSAGES` or `LANG`; nil for the C and POSIX locales.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> PlayerMediaSelectionCriteria?
    {
        let lists = ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"].compactMap { environment[$0] }.filter { !$0.isEmpty }
        guard let list = lists.first else { return nil }
        let languages = list.split(separator: ":").compactMap { entry -> String? in
            // "fr_CA.UTF-8@euro" → "fr-CA"
            let name = entry.split(separator: ".").first.map(String.init) ?? ""
            let bare = name.split(separator: "@").first.map(String.init) ?? ""
            guard !bare.isEmpty, bare != "C", bare != "POSIX" else { return nil }
            return bare.replacingOccurrences(of: "_", with: "-")
        }
        return languages.isEmpty ? nil : PlayerMediaSelectionCriteria(preferredLanguages: languages)
    }
}

/// Language tags as containers store them (ISO 639-2, three letters, Matroska often in the
/// bibliographic form) and as BCP 47 writes them; Foundation knows the terminology codes.
enum LanguageTags {
    /// ISO 639-2 bibliographic codes to their terminology twins: the whole list of those that differ.
    private static let terminology: [String: String] = [
        "alb": "sqi", "arm": "hye", "baq": "eus", "bur": "mya", "chi": "zho", "cze": "ces", "dut": "nld",
        "fre": "fra", "geo": "kat", "ger": "deu", "gre": "ell", "ice": "isl", "mac": "mkd", "mao": "mri",
        "may": "msa", "per": "fas", "rum": "ron", "slo": "slk", "tib": "bod", "wel": "cym",
    ]

    /// `tag` in BCP 47 form: "fr" for "fra" and "fre", "pt-BR" for "pt_BR"; a tag Foundation does
    /// not know is kept as it is.
    static func bcp47(_ tag: String) -> String {
        let normalized = tag.replacingOccurrences(of: "_", with: "-")
        let primary = self.primary(normalized)
        let code = terminology[primary] ?? primary
        guard let short = Locale.Language(identifier: code).languageCode?.identifier(.alpha2) else { return normalized }
        return short + normalized.dropFirst(primary.count)
    }

    /// The primary language subtag, lower-cased: "en" of "en-GB".
    static func primary(_ tag: String) -> String {
        String(tag.split(separator: "-").first ?? "").lowercased()
    }

    /// The name of the language of `tag` in `locale`, if Foundation knows it.
    static func name(_ tag: String, in locale: Locale = .current) -> String? {
        locale.localizedString(forLanguageCode: primary(bcp47(tag)))
    }
}
