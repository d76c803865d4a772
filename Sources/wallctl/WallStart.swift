import Foundation
import LockstepTime
import WallControl
import WallProtocol

/// Starting (and resuming) a whole wall in lockstep: every node prerolled, one host time for all.
struct WallStart {
    /// How long before its host time a node sets its pipeline to PLAYING (WallPlayer's lead), plus
    /// the least lead a node accepts a start with: the floor of every margin.
    static let nodeLead = MediaTime(value: 70, timescale: 1000)
    /// Extra allowance on top of what was measured, for a command that meets a busy scheduler.
    static let safety = MediaTime(value: 20, timescale: 1000)
    /// Status round trips per node to measure the control path.
    static let probes = 5

    let wall: Wall

    /// What a start measured and chose, for the report.
    struct Plan: Sendable {
        var itemTime: MediaTime
        var hostTime: MediaTime
        var margin: MediaTime
        var slowestRoundTrip: MediaTime
        var largestErrorBound: MediaTime
        var largestDisplayLatency: MediaTime
        var prerolledIn: MediaTime
    }

    /// Loads where needed, prerolls every node at `itemTime`, and starts them all at one host time
    /// a measured margin ahead. Throws naming each node that could not take part.
    func run(itemTime: MediaTime, rate: Float) async throws -> Plan {
        let began = LocalClock.monotonic.now()
        _ = try await wall.everyNode { client throws(ControlError) in
            let status = try await client.status().status
            if status.player.media == nil || status.player.itemStatus == "failed" {
                try await client.command(ControlPath.load, LoadRequest())
            }
            return try await client.command(ControlPath.preroll, PositionRequest(itemTime: itemTime))
        }
        let prerolledIn = LocalClock.monotonic.now() - began
        let measurements = try await wall.everyNode { client throws(ControlError) in
            var samples: [(status: NodeStatus, roundTrip: MediaTime, receivedAt: MediaTime)] = []
            for _ in 0..<Self.probes { samples.append(try await client.status()) }
            return samples
        }
        var plan = try self.plan(itemTime: itemTime, measurements: measurements, prerolledIn: prerolledIn)
        let hostTime = plan.hostTime
        _ = try await wall.everyNode { client throws(ControlError) in
            try await client.command(
                ControlPath.start, StartRequest(rate: rate, itemTime: itemTime, hostTime: hostTime))
        }
        plan.hostTime = hostTime
        return plan
    }

    /// The margin is what the measurements say a start needs: the slowest control round trip
    /// (three times: the start command goes out after the estimate was taken), twice the largest
    /// clock error bound, the largest display latency and the node's own lead, never less than the
    /// config's start margin. The host time is the master's time now, estimated from the node that
    /// answered fastest, plus that margin.
    private func plan(
        itemTime: MediaTime,
        measurements: [String: [(status: NodeStatus, roundTrip: MediaTime, receivedAt: MediaTime)]],
        prerolledIn: MediaTime
    ) throws -> Plan {
        let all = measurements.values.flatMap { $0 }
        let slowest = all.map(\.roundTrip).max() ?? .zero
        var notLocked: [String: String] = [:]
        var largestBound = MediaTime.zero
        for (id, samples) in measurements {
            guard let last = samples.last else { continue }
            if !last.status.clock.isLocked || last.status.masterTime == nil {
                notLocked[id] = "clock \(last.status.clock.state)"
            }
            largestBound = .maximum(largestBound, last.status.clock.errorBound ?? .positiveInfinity)
        }
        guard notLocked.isEmpty else { throw ControlError.notReady(nodes: notLocked) }
        let displayLatency =
            wall.clients.compactMap { client in wall.config.node(client.id)?.displayLatency }.max() ?? .zero
        let measured = slowest * 3 + largestBound * 2 + displayLatency + Self.nodeLead + Self.safety
        let margin = MediaTime.maximum(wall.config.startMargin, measured).convertScale(MediaTime.nanosecondTimescale)
        guard let fastest = all.min(by: { $0.roundTrip < $1.roundTrip }), let reported = fastest.status.masterTime
        else {
            throw ControlError.notReady(nodes: ["wall": "no node reported the master time"])
        }
        // The node read its master time about half a round trip before the reply arrived.
        let masterNow =
            reported + fastest.roundTrip.multiplied(byRatio: 1, 2)
            + (LocalClock.monotonic.now() - fastest.receivedAt)
        return Plan(
            itemTime: itemTime, hostTime: masterNow + margin, margin: margin, slowestRoundTrip: slowest,
            largestErrorBound: largestBound, largestDisplayLatency: displayLatency, prerolledIn: prerolledIn)
    }

    /// Waits on this machine's clock until the master passes `hostTime` (plus `after`), judging
    /// the master from a node's status.
    func waitUntil(hostTime: MediaTime, after: MediaTime) async throws {
        guard let client = wall.clients.first else { return }
        let (status, roundTrip, receivedAt) = try await client.status()
        guard let master = status.masterTime else { return }
        let masterNow = master + roundTrip.multiplied(byRatio: 1, 2) + (LocalClock.monotonic.now() - receivedAt)
        let remaining = hostTime + after - masterNow
        if let ns = remaining.nanoseconds, ns > 0 { try await Task.sleep(for: .nanoseconds(ns)) }
    }

    /// The master time now, estimated from the node that answers fastest.
    func masterNow() async throws -> (time: MediaTime, roundTrip: MediaTime) {
        let samples = try await wall.everyNode { client throws(ControlError) in try await client.status() }
        guard let fastest = samples.values.min(by: { $0.roundTrip < $1.roundTrip }),
            let master = fastest.status.masterTime
        else { throw ControlError.notReady(nodes: ["wall": "no node reported the master time"]) }
        let slowest = samples.values.map(\.roundTrip).max() ?? .zero
        let now =
            master + fastest.roundTrip.multiplied(byRatio: 1, 2) + (LocalClock.monotonic.now() - fastest.receivedAt)
        return (now, slowest)
    }
}

extension MediaTime {
    /// Milliseconds with three decimals, for reports.
    var milliseconds: String { String(format: "%.3f ms", seconds * 1000) }
}
