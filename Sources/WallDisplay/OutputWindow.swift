internal import CLockstepX11
import LockstepLocks
import LockstepNet

/// A rectangle of display pixels (X screen coordinates: the origin is the top-left of the screen).
public struct DisplayRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    fileprivate init(_ rect: lockstep_x11_rect) {
        self.init(x: Int(rect.x), y: Int(rect.y), width: Int(rect.width), height: Int(rect.height))
    }

    fileprivate var x11: lockstep_x11_rect {
        lockstep_x11_rect(
            x: Int32(clamping: x), y: Int32(clamping: y), width: Int32(clamping: width), height: Int32(clamping: height)
        )
    }
}

/// One monitor of an X display, as RandR names it (`xrandr --listmonitors`).
public struct Monitor: Sendable, Hashable {
    public var name: String
    public var rect: DisplayRect
    public var isPrimary: Bool
}

/// Why a node cannot put its picture on its display.
public enum DisplayError: Error, Sendable, Hashable, CustomStringConvertible {
    case cannotOpen(String)
    case unknownMonitor(name: String, available: [String])
    case badWindow(String)

    public var description: String {
        switch self {
        case .cannotOpen(let message): return message
        case .unknownMonitor(let name, let available):
            return
                "no monitor named \"\(name)\" (this display has \(available.map { "\"\($0)\"" }.joined(separator: ", ")))"
        case .badWindow(let message): return message
        }
    }
}

/// Where a window goes: a rectangle on a monitor, or the whole of one.
public struct WindowPlacement: Sendable {
    /// The X display (`:0`); nil uses `$DISPLAY`.
    public var display: String?
    /// The RandR monitor the window belongs to; nil: the primary one for fullscreen, the screen's
    /// origin otherwise.
    public var monitor: String?
    /// The rectangle, relative to the monitor; nil: the monitor's origin at `defaultSize`.
    public var rect: DisplayRect?
    public var fullscreen: Bool
    public var title: String
    /// The size used when neither a rectangle nor fullscreen gives one (the node's output size).
    public var defaultSize: (width: Int, height: Int)

    public init(
        display: String? = nil, monitor: String? = nil, rect: DisplayRect? = nil, fullscreen: Bool = false,
        title: String, defaultSize: (width: Int, height: Int)
    ) {
        self.display = display
        self.monitor = monitor
        self.rect = rect
        self.fullscreen = fullscreen
        self.title = title
        self.defaultSize = defaultSize
    }

    /// The screen rectangle the window gets on a display with `monitors`, and the index of its
    /// monitor (for the window manager's fullscreen).
    public func resolve(on monitors: [Monitor]) throws(DisplayError) -> (rect: DisplayRect, monitorIndex: Int?) {
        var index: Int?
        if let monitor {
            guard let found = monitors.firstIndex(where: { $0.name == monitor }) else {
                throw .unknownMonitor(name: monitor, available: monitors.map(\.name))
            }
            index = found
        } else if fullscreen {
            index = monitors.firstIndex(where: \.isPrimary) ?? (monitors.isEmpty ? nil : 0)
        }
        let origin = index.map { monitors[$0].rect } ?? DisplayRect(x: 0, y: 0, width: 0, height: 0)
        if fullscreen {
            guard let index else { throw .badWindow("the display reports no monitor to fill") }
            return (monitors[index].rect, index)
        }
        let local = rect ?? DisplayRect(x: 0, y: 0, width: defaultSize.width, height: defaultSize.height)
        guard local.width > 0, local.height > 0, local.width <= 32767, local.height <= 32767 else {
            throw .badWindow("a window of \(local.width)x\(local.height) pixels cannot be made")
        }
        return (
            DisplayRect(x: origin.x + local.x, y: origin.y + local.y, width: local.width, height: local.height), index
        )
    }
}

/// A window the node owns on an X display: borderless, black where no video is, cursor hidden, its
/// title naming the wall and node. The video sink draws into it (`GstVideoOverlay`); between shows
/// it stays, black, so the desktop never shows through. A close request from the window manager is
/// refused.
public final class OutputWindow: Sendable {
    private let window: UnsafeSendable<OpaquePointer>
    /// Whether the window is closed; held while the window is used, so close cannot free it under a
    /// caller.
    private let state = Mutex(false)
    private let closed = Flag()
    private let events: DedicatedThread
    /// Where the window was asked to be, on which X display (nil: `$DISPLAY`).
    public let requested: DisplayRect
    public let display: String?

    /// The monitors of `display` (nil: `$DISPLAY`).
    public static func monitors(display: String?) throws(DisplayError) -> [Monitor] {
        var list = [lockstep_x11_monitor](repeating: lockstep_x11_monitor(), count: 32)
        var error = [CChar](repeating: 0, count: 256)
        let count = lockstep_x11_monitors(display, &list, Int32(list.count), &error, error.count)
        guard count >= 0 else { throw .cannotOpen(Self.message(error)) }
        return list.prefix(Int(count)).map { monitor in
            var monitor = monitor
            let name = withUnsafeBytes(of: &monitor.name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            return Monitor(name: name, rect: DisplayRect(monitor.rect), isPrimary: monitor.primary != 0)
        }
    }

    private static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Opens the window and waits (up to a second) for the window manager to map it.
    public init(_ placement: WindowPlacement) throws(DisplayError) {
        let monitors = try Self.monitors(display: placement.display)
        let (rect, index) = try placement.resolve(on: monitors)
        var error = [CChar](repeating: 0, count: 256)
        guard
            let window = lockstep_x11_window_open(
                placement.display, placement.title, rect.x11, placement.fullscreen ? 1 : 0, Int32(index ?? -1), 1000,
                &error, error.count)
        else { throw .cannotOpen(Self.message(error)) }
        self.window = UnsafeSendable(window)
        requested = rect
        display = placement.display
        let closed = self.closed
        let pointer = UnsafeSendable(window)
        do {
            events = try DedicatedThread(name: "x11-window") {
                while !closed.value.load(ordering: .acquiring) {
                    if lockstep_x11_window_pump(pointer.value, 200) < 0 { break }
                }
            }
        } catch {
            lockstep_x11_window_close(window)
            throw .badWindow("cannot start the window's event thread: \(error)")
        }
    }

    /// The X window id, for the sink (`gst_video_overlay_set_window_handle`).
    public var handle: UInt { UInt(lockstep_x11_window_id(window.value)) }

    /// Where the window is now, and whether it is on screen.
    public var geometry: (rect: DisplayRect, viewable: Bool) {
        state.withLock { isClosed in
            guard !isClosed else { return (DisplayRect(x: 0, y: 0, width: 0, height: 0), false) }
            var viewable: Int32 = 0
            let rect = lockstep_x11_window_geometry(window.value, &viewable)
            return (DisplayRect(rect), viewable != 0)
        }
    }

    /// The mode of the display the window's middle is on (RandR): its resolution and refresh rate.
    /// Opens a connection of its own: ask it seldom.
    /// The refresh rate is nil when the mode has no timing (Xvfb's has no pixel clock).
    public func mode() throws(DisplayError) -> (output: String, width: Int, height: Int, refreshHz: Double?) {
        let rect = geometry.rect
        var mode = lockstep_x11_mode()
        var error = [CChar](repeating: 0, count: 256)
        guard
            lockstep_x11_mode_at(
                display, Int32(rect.x + rect.width / 2), Int32(rect.y + rect.height / 2), &mode, &error, error.count)
                == 0
        else { throw .cannotOpen(Self.message(error)) }
        let output = withUnsafeBytes(of: &mode.output) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return (output, Int(mode.width), Int(mode.height), mode.refresh_mhz > 0 ? Double(mode.refresh_mhz) / 1000 : nil)
    }

    /// Paints the window black.
    public func clear() {
        state.withLock { isClosed in
            if !isClosed { lockstep_x11_window_clear(window.value) }
        }
    }

    /// Closes the window (once; later calls do nothing), when the node stops.
    public func close() {
        guard !closed.value.exchange(true, ordering: .acquiringAndReleasing) else { return }
        events.join()
        state.withLock { isClosed in
            isClosed = true
            lockstep_x11_window_close(window.value)
        }
    }

    deinit { close() }

    /// X errors of one kind that were ignored: its text, request and count.
    public struct IgnoredXError: Sendable, Hashable, CustomStringConvertible {
        public let text: String
        public let request: Int
        public let minorRequest: Int
        public let count: Int
        public var description: String { "\(text) (request \(request).\(minorRequest)) ×\(count)" }
    }

    /// The X errors ignored since the last call, by kind. A video sink's stale request (ximagesink
    /// detaching shared memory the server already dropped) is not worth ending the node for; the
    /// node logs these in its own format instead of Xlib's line per error.
    public static func takeIgnoredErrors() -> [IgnoredXError] {
        var taken = [lockstep_x11_error](repeating: lockstep_x11_error(), count: 16)
        let count = Int(lockstep_x11_take_errors(&taken, Int32(taken.count)))
        return taken.prefix(count).map { error in
            let text = withUnsafeBytes(of: error.text) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return IgnoredXError(
                text: text, request: Int(error.request), minorRequest: Int(error.minor), count: Int(error.count))
        }
    }
}

private final class Flag: Sendable {
    let value = Atomic(false)
}

private struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
