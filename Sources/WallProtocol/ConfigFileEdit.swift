import Yams

/// Edits one per-node key of a wall config's text in place, keeping everything else as written:
/// comments, order, quoting. `wallctl calibrate --write` sets each node's `display-latency` so.
public enum ConfigFileEdit {
    /// `text` with `key: value` set on every node whose id `values` names: the value replaced on
    /// its line where the node has the key, else a line added after the node's `id:` at its
    /// indentation. Nodes must be written as block mappings (one key a line); a node written
    /// `{id: a, ...}` is refused, naming it.
    public static func settingNodeKey(_ key: String, to values: [String: String], in text: String, file: String)
        throws(ConfigError) -> String
    {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw .syntax(file: file, line: nil, message: "\(error)")
        }
        guard let nodes = root?.mapping?["nodes"]?.sequence else {
            throw .missing(file: file, line: nil, key: "nodes")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Insertions shift the lines below: edit from the bottom up.
        var edits: [(line: Int, replace: Bool, text: String)] = []
        var found: Set<String> = []
        for node in nodes {
            guard let mapping = node.mapping, let idNode = mapping["id"], let id = idNode.string, let value = values[id]
            else { continue }
            found.insert(id)
            let opening = node.mark.map { mark in lines[mark.line - 1].dropFirst(mark.column - 1).first } ?? nil
            guard mapping.style != .flow, opening != "{" else {
                throw .invalid(
                    file: file, line: node.mark?.line, key: "nodes[\(id)]",
                    message: "is written on one line ({id: ...}); write it one key a line to have \(key) set, "
                        + "or set \(key): \(value) by hand")
            }
            if let existing = mapping.first(where: { $0.key.string == key }) {
                guard let line = existing.key.mark?.line, let column = existing.key.mark?.column else { continue }
                let original = lines[line - 1]
                let comment = original.range(of: " #").map { String(original[$0.lowerBound...]) } ?? ""
                let indent = String(original.prefix(column - 1))
                edits.append((line - 1, true, "\(indent)\(key): \(value)\(comment)"))
            } else {
                guard let idKey = mapping.first(where: { $0.key.string == "id" })?.key, let line = idKey.mark?.line,
                    let column = idKey.mark?.column
                else { continue }
                let indent = String(repeating: " ", count: column - 1)
                edits.append((line, false, "\(indent)\(key): \(value)"))
            }
        }
        if let missing = values.keys.sorted().first(where: { !found.contains($0) }) {
            throw .invalid(file: file, line: nil, key: "nodes", message: "has no node \"\(missing)\"")
        }
        for edit in edits.sorted(by: { $0.line > $1.line }) {
            if edit.replace { lines[edit.line] = edit.text } else { lines.insert(edit.text, at: edit.line) }
        }
        return lines.joined(separator: "\n")
    }
}
