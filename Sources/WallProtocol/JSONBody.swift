import Foundation

/// Decodes a request's JSON body, or says in a sentence what is wrong with it: the field missing
/// or of the wrong kind, the place where the text stops being JSON, or the number that does not
/// fit its field. Foundation's decoder on Linux reports every number out of range (a negative
/// count, 1e400, a fraction where a whole number goes) as "not valid JSON", which sends a user
/// looking for a syntax error that is not there.
public enum JSONBody {
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(JSONBodyError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw JSONBodyError(reason: describe(error, data: data))
        } catch {
            throw JSONBodyError(reason: "\(error)")
        }
    }

    static func describe(_ error: DecodingError, data: Data) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? context.debugDescription : "\(keys): \(context.debugDescription)"
        }
        switch error {
        case .keyNotFound(let key, let context):
            return
                "missing \(([key.stringValue] + context.codingPath.map(\.stringValue)).reversed().joined(separator: "."))"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return notDecodable(data) ?? path(context)
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return path(context)
        @unknown default:
            return "\(error)"
        }
    }

    /// Why text the decoder calls "not valid JSON" is refused: where it is not JSON, or which of
    /// its numbers cannot fit a field; nil when neither is found.
    static func notDecodable(_ data: Data) -> String? {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            return "not valid JSON" + (detail.map { ": \($0)" } ?? "")
        }
        let suspects = numbersThatDoNotFit(object, at: "")
        guard !suspects.isEmpty else { return nil }
        return "a number does not fit its field (counts, versions and times are whole numbers within their bounds): "
            + suspects.prefix(4).joined(separator: ", ")
    }

    /// The numbers in `object` that no whole-number field takes: negative, fractional, or past 2^53.
    private static func numbersThatDoNotFit(_ object: Any, at path: String) -> [String] {
        switch object {
        case let map as [String: Any]:
            return map.keys.sorted().flatMap { numbersThatDoNotFit(map[$0]!, at: path.isEmpty ? $0 : "\(path).\($0)") }
        case let list as [Any]:
            return list.enumerated().flatMap { numbersThatDoNotFit($0.element, at: "\(path)[\($0.offset)]") }
        // true and false arrive as numbers of C type char.
        case let number as NSNumber where String(cString: number.objCType) != "c":
            let value = number.doubleValue
            let fits = value >= 0 && value == value.rounded() && value <= 9_007_199_254_740_992
            return fits ? [] : ["\(path.isEmpty ? "the body" : path) = \(number)"]
        default:
            return []
        }
    }
}

/// A request body that is not the JSON expected, and why.
public struct JSONBodyError: Error, Hashable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
