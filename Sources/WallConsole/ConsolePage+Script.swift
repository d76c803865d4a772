extension ConsolePage {
    /// The page's script: no framework, nothing fetched from elsewhere. It lives on the daemon's
    /// server-sent events (`/console/events`); every action is a POST with the session's CSRF
    /// header, and the token never appears in it or in any URL it requests.
    static let script = #"""
        "use strict";
        const state = { wall: null, nodes: new Map(), csrf: "", actions: [], drift: null, push: null, playlist: null,
          scrubbing: false, lags: [], updates: 0, firstRenderMs: null };
        // What a test or a benchmark reads: how far behind the daemon's poll each update arrived.
        window.consoleStats = state;
        const $ = (id) => document.getElementById(id);
        const el = (tag, props = {}, ...children) => {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(props)) {
            if (key === "dataset") Object.assign(node.dataset, value);
            else if (key.startsWith("aria-") || key === "role") node.setAttribute(key, value);
            else node[key] = value;
          }
          for (const child of children) node.append(child);
          return node;
        };
        const clockTime = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });
        const ago = (ms) => {
          const s = Math.max(0, (Date.now() - ms) / 1000);
          return s < 60 ? `${s.toFixed(0)} s` : s < 3600 ? `${(s / 60).toFixed(0)} min` : `${(s / 3600).toFixed(1)} h`;
        };
        const megabytes = (bytes) => (bytes / 1e6).toFixed(1) + " MB";
        // Seconds with their sign, as the action list gives times from when an edit was sent: "+0.32 s", "−0.32 s".
        const signed = (s) => { const v = Math.abs(s).toFixed(2); return (s < 0 && Number(v) > 0 ? "−" : "+") + v + " s"; };
        // What a screen shows, in an operator's words: "test card", "still closed.png" (not its path).
        const showWords = (show) => show === "testCard" ? "test card" : show && show.startsWith("still ") ? "still " + show.slice(6).split("/").pop() : show;

        function condition(view) {
          if (!view.reachable && view.polledAtUnixMs == null) return ["warn", "asking…"];
          if (!view.reachable) return ["bad", "unreachable" + (view.unreachableSinceUnixMs ? " for " + ago(view.unreachableSinceUnixMs) : "")];
          if (view.problem) return ["bad", view.problem];
          if (view.state === "playing") {
            if (view.inStep === true) return ["ok", "in step" + (view.inStepSinceUnixMs ? " for " + ago(view.inStepSinceUnixMs) : "")];
            if (view.inStep === false) return ["warn", "out of step" + (view.outOfStepSinceUnixMs ? " for " + ago(view.outOfStepSinceUnixMs) : "")];
            return ["warn", "judging"];
          }
          return [view.settled === false ? "warn" : "ok", view.show && view.show !== "playlist" ? showWords(view.show) : (view.state || "–")];
        }

        function position(view) {
          if (view.itemTimeS == null) return "–";
          return (view.entry != null ? `entry ${view.entry}, ` : "") + `${view.itemTimeS.toFixed(2)} s`;
        }

        function content(view) {
          const transfers = view.transfers || [];
          if (transfers.length) {
            const t = transfers[0];
            return `fetching ${t.name} ${megabytes(t.have)}/${megabytes(t.size)}` + (t.problem ? ` (${t.problem})` : "");
          }
          if (view.missingMedia && view.missingMedia.length) return "missing " + view.missingMedia.join(", ");
          if (view.missingMedia) return `media ready; ${view.contentHeld ?? 0} in the content store`;
          return view.contentHeld != null ? `${view.contentHeld} in the content store` : "–";
        }

        // The node's machine: what a site checks from afar (`MachineHealth`).
        function machine(view) {
          const h = view.health;
          if (!h) return "–";
          const gb = (bytes) => (bytes / 1e9).toFixed(1) + " GB";
          const span = (s) => s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${(s / 3600).toFixed(1)} h` : `${(s / 86400).toFixed(1)} d`;
          const parts = [];
          if (h.cpuBusy != null) parts.push(`CPU ${Math.round(100 * h.cpuBusy)} % of ${h.cores}`);
          if (h.memoryTotalBytes != null && h.memoryAvailableBytes != null)
            parts.push(`memory ${gb(h.memoryTotalBytes - h.memoryAvailableBytes)} of ${gb(h.memoryTotalBytes)}`);
          if (h.temperatureCelsius != null) parts.push(`${Math.round(h.temperatureCelsius)} °C`);
          if (h.storeFreeBytes != null) parts.push(`store ${gb(h.storeFreeBytes)} free`);
          if (h.display) parts.push(`${h.display.width}x${h.display.height}` + (h.display.refreshHz != null ? ` ${h.display.refreshHz.toFixed(2)} Hz` : ""));
          if (h.uptimeSeconds != null) parts.push(`up ${span(h.uptimeSeconds)}`);
          parts.push(`Lockstep ${h.version}` + (h.configSHA256 ? `, config ${h.configSHA256.slice(0, 8)}` : ""));
          return parts.join(", ");
        }

        function layout(wall) {
          const canvas = $("canvas");
          canvas.replaceChildren();
          canvas.style.aspectRatio = `${wall.canvasWidth} / ${wall.canvasHeight}`;
          // At most half the window high, so the controls show beside the wall on a laptop's 768 rows.
          canvas.style.maxWidth = `calc(50vh * ${wall.canvasWidth} / ${wall.canvasHeight})`;
          for (const tile of wall.tiles) {
            const img = el("img", { alt: `What ${tile.id} shows`, hidden: true });
            const label = el("div", { className: "label" }, el("span", { textContent: tile.id }), el("span", { className: "badge" }));
            const box = el("div", { className: "tile", role: "listitem", dataset: { node: tile.id } }, img, label);
            box.style.left = `${(100 * tile.x) / wall.canvasWidth}%`;
            box.style.top = `${(100 * tile.y) / wall.canvasHeight}%`;
            box.style.width = `${(100 * tile.width) / wall.canvasWidth}%`;
            box.style.height = `${(100 * tile.height) / wall.canvasHeight}%`;
            canvas.append(box);
            const row = el("tr", { dataset: { node: tile.id } });
            row.append(el("th", { scope: "row", textContent: tile.id }));
            for (let i = 0; i < 10; i++) row.append(el("td"));
            $("screens").tBodies[0].append(row);
          }
          $("wall-name").textContent = wall.name;
          document.title = `${wall.name}: Lockstep console`;
          const cues = $("cues");
          cues.replaceChildren();
          const names = Object.keys(wall.cues).sort();
          if (!names.length) cues.append(el("p", { className: "help", textContent: "The config has no cues: section." }));
          for (const name of names) {
            const button = el("button", { type: "button", textContent: name, title: wall.cues[name], dataset: { cue: name } });
            button.setAttribute("aria-description", wall.cues[name]);
            button.addEventListener("click", () => act({ verb: "cue", name }, button));
            cues.append(button);
          }
          showPlaylist({ entries: wall.playlist, loops: wall.loops, version: null });
          const schedule = $("schedule");
          schedule.replaceChildren(...(wall.schedule.length ? wall.schedule : ["No schedule: section."]).map((line) => el("li", { textContent: line })));
          if (!wall.uploadLimitBytes) { $("push-button").disabled = true; $("push-status").textContent = "This daemon keeps no content library."; }
        }

        // A viewer's login watches: every control is disabled, and the header says why (the daemon
        // refuses a viewer's action anyway).
        function showRole(role) {
          document.body.dataset.role = role;
          const viewer = role === "viewer";
          $("role").textContent = viewer ? "viewer: watching only" : "operator console";
          document.querySelectorAll("#transport button, #transport input, #cues button, #push-form input, #push-form button")
            .forEach((control) => { if (viewer) { control.disabled = true; control.title = "A viewer's login takes no action"; } });
        }

        // The config's playlist until a node's timeline says what the wall really plays.
        function showPlaylist(playlist) {
          state.playlist = playlist;
          const seconds = (value) => value == null ? "end" : Number(value.toFixed(3));
          $("playlist").replaceChildren(...playlist.entries.map((entry, index) =>
            el("li", { dataset: { entry: index }, textContent: `${entry.media.split("/").pop()} ${seconds(entry.inS ?? 0)}–${seconds(entry.outS)} s` })));
          $("loops").textContent = (playlist.version != null ? `Timeline version ${playlist.version}: ` : "From the config: ") +
            (playlist.loops ? "the playlist loops." : "the playlist ends on its last frame.");
          summarize();
        }

        // A screen's condition on its tile and row: also every second, so "for 5 s" counts on between updates
        // (the daemon sends only changes).
        function showCondition(view) {
          const [kind, text] = condition(view);
          const tile = document.querySelector(`#canvas .tile[data-node="${CSS.escape(view.id)}"]`);
          if (tile) {
            tile.classList.remove("ok", "warn", "bad");
            tile.classList.add(kind);
            tile.querySelector(".badge").textContent = text;
            tile.setAttribute("aria-label", `${view.id}: ${text}, ${position(view)}`);
          }
          const row = document.querySelector(`#screens tr[data-node="${CSS.escape(view.id)}"]`);
          if (row) {
            row.cells[2].textContent = text;
            row.cells[2].className = "badge " + kind;
          }
        }

        function showNode(view) {
          const previous = state.nodes.get(view.id);
          state.nodes.set(view.id, view);
          showCondition(view);
          const tile = document.querySelector(`#canvas .tile[data-node="${CSS.escape(view.id)}"]`);
          if (tile) {
            tile.dataset.reachable = view.reachable;
            tile.dataset.state = view.state || "";
            tile.dataset.inStep = view.inStep === true;
            tile.dataset.version = view.version ?? "";
            tile.classList.toggle("stale", !view.reachable);
            const img = tile.querySelector("img");
            if (view.thumbnail && (!previous || previous.thumbnail !== view.thumbnail || img.hidden)) {
              img.src = `/console/thumbnail/${encodeURIComponent(view.id)}?n=${view.thumbnail}`;
              img.hidden = false;
            }
          }
          const row = document.querySelector(`#screens tr[data-node="${CSS.escape(view.id)}"]`);
          if (row) {
            const cells = row.cells;
            cells[1].textContent = view.reachable ? (view.show && view.show !== "playlist" ? showWords(view.show) : view.state || "–") : "unreachable";
            // What an unreachable node said last is marked as such, not shown as now.
            const stale = !view.reachable;
            const last = (text) => stale && text !== "–" ? `${text} (last seen)` : text;
            cells[3].textContent = last(view.clockState ? `${view.clockState} (${view.clockSource})` : "–");
            cells[4].textContent = last(view.errorBoundUs != null ? `±${view.errorBoundUs} µs` : "–");
            cells[5].textContent = last(position(view));
            for (const cell of [cells[3], cells[4], cells[5]]) cell.classList.toggle("stale", stale);
            cells[6].textContent = view.version ?? "–";
            cells[7].textContent = view.rejoins ?? "–";
            cells[8].textContent = view.framesLate ?? "–";
            cells[9].textContent = content(view);
            cells[10].textContent = machine(view);
          }
          // A status answer counts once: a new thumbnail sends the same answer again.
          if (view.polledAtUnixMs && (!previous || previous.polledAtUnixMs !== view.polledAtUnixMs)) {
            state.updates += 1;
            state.lags.push(Date.now() - view.polledAtUnixMs);
            if (state.lags.length > 5000) state.lags.splice(0, 1000);
          }
          summarize();
        }

        function summarize() {
          const views = [...state.nodes.values()];
          const reachable = views.filter((v) => v.reachable);
          const inStep = views.filter((v) => v.inStep === true && v.state === "playing").length;
          const playing = reachable.filter((v) => v.state === "playing").length;
          $("summary").textContent = `${reachable.length} of ${views.length} answering` +
            (playing ? `, ${inStep} of ${playing} playing in step` : "");
          const lead = reachable.find((v) => v.itemTimeS != null);
          if (!lead || !state.wall) return;
          document.querySelectorAll("#playlist li").forEach((li) =>
            li.classList.toggle("current", Number(li.dataset.entry) === lead.entry && lead.show === "playlist"));
          const entry = (state.playlist || { entries: [] }).entries[lead.entry ?? 0];
          const scrub = $("scrub");
          // The scrub bar spans the entry, from its in point: a seek before it is refused.
          if (entry) scrub.min = entry.inS ?? 0;
          if (entry && entry.outS != null) scrub.max = entry.outS;
          $("scrub-entry").textContent = lead.entry ?? "–";
          if (!state.scrubbing) {
            scrub.value = lead.itemTimeS;
            $("scrub-value").textContent = `${lead.itemTimeS.toFixed(1)} s`;
          }
        }

        // Who did what to the wall, and what was refused: newest first.
        function showAudit(record) {
          const who = record.who + (record.via ? ` (${record.via})` : "");
          const made = record.version != null ? `, version ${record.version}` : "";
          const outcome = record.outcome === "done" ? made : `: ${record.outcome}` + (record.reason ? `: ${record.reason}` : "");
          const item = el("li", { dataset: { outcome: record.outcome } }, el("time", { textContent: clockTime(record.atUnixMs) + " " }),
            `${who}: ${record.action}${outcome}`);
          const list = $("audit");
          list.prepend(item);
          while (list.children.length > 50) list.lastElementChild.remove();
        }

        function showEvent(event) {
          const list = $("events");
          const item = el("li", { dataset: { kind: event.kind } }, el("time", { textContent: clockTime(event.atUnixMs) + " " }), event.text);
          list.prepend(item);
          while (list.children.length > 200) list.lastElementChild.remove();
        }

        function showAction(action) {
          const index = state.actions.findIndex((a) => a.id === action.id);
          if (index >= 0) state.actions[index] = action; else state.actions.unshift(action);
          state.actions = state.actions.slice(0, 8);
          const list = $("actions");
          list.replaceChildren(...state.actions.map((a) => {
            let text = a.verb;
            if (a.error) text += `: failed: ${a.error}`;
            else if (a.version != null) {
              // Times from when the edit was sent: due is its master time, each node's when it was seen on it.
              const since = (at) => signed((at - a.sentUnixMs) / 1000);
              const taken = Object.entries(a.takenUnixMs).sort().map(([node, at]) => `${node} ${since(at)}`);
              const all = state.wall ? state.wall.tiles.length : 0;
              text += `: version ${a.version}` + (a.dueUnixMs ? `, due ${since(a.dueUnixMs)}` : "") +
                `; held by ${Object.keys(a.heldUnixMs).length} of ${all}; carried out by ${taken.length} of ${all}` +
                (taken.length ? ` (${taken.join(", ")})` : "");
            } else text += ": sending…";
            return el("li", { dataset: { action: a.id, version: a.version ?? "" } }, el("time", { textContent: clockTime(a.requestedUnixMs) + " " }), text);
          }));
        }

        const colours = ["#58a6ff", "#3fb950", "#d29922", "#f85149", "#bc8cff", "#39c5cf", "#ff9bce", "#e3b341"];
        function showDrift(drift) {
          state.drift = drift;
          const verdict = $("verdict");
          // Only the outcome is a live region (hidden: the sentence begins with it), written when it changes:
          // a screen reader says "PASS" once, not the sentence whose figures change every second.
          const outcome = $("verdict-outcome");
          const word = drift.verdict ? drift.outcome || "" : "";
          if (outcome.textContent !== word) outcome.textContent = word;
          if (drift.verdict) {
            const p99 = drift.worstPairP99Us != null ? `worst pair p99 ${drift.worstPairP99Us.toFixed(0)} µs` : "";
            const unc = drift.worstPairUncertaintyUs != null ? ` ± ${drift.worstPairUncertaintyUs.toFixed(0)} µs of clock uncertainty` : "";
            verdict.textContent = `${drift.verdict} (${p99}${unc}; ${drift.framesAligned} frames over the last ${Math.round(drift.windowS / 60)} min)`;
            verdict.className = "badge " + (drift.outcome === "PASS" ? "ok" : drift.outcome === "FAIL" ? "bad" : "warn");
          } else {
            verdict.textContent = drift.framesSoFar > 0
              ? `Judging: ${drift.framesSoFar} frames aligned; a verdict needs ${drift.framesNeeded}.`
              : "No frames aligned yet: the drift view needs the wall playing.";
            verdict.className = "";
          }
          const svg = $("drift-plot");
          const ns = "http://www.w3.org/2000/svg";
          svg.replaceChildren();
          const points = drift.points;
          if (!points.length) return;
          const first = points[0].atUnixS, last = Math.max(points[points.length - 1].atUnixS, first + 1);
          let top = drift.thresholdUs;
          for (const p of points) for (const v of p.skewUs) if (v != null && v > top) top = v;
          top *= 1.1;
          const x = (t) => (600 * (t - first)) / (last - first);
          const y = (v) => 200 - (200 * v) / top;
          const threshold = document.createElementNS(ns, "line");
          Object.entries({ x1: 0, x2: 600, y1: y(drift.thresholdUs), y2: y(drift.thresholdUs), stroke: "#f85149", "stroke-dasharray": "6 4" })
            .forEach(([k, v]) => threshold.setAttribute(k, v));
          svg.append(threshold);
          drift.pairs.forEach((pair, index) => {
            const line = document.createElementNS(ns, "polyline");
            line.setAttribute("points", points.filter((p) => p.skewUs[index] != null).map((p) => `${x(p.atUnixS).toFixed(1)},${y(p.skewUs[index]).toFixed(1)}`).join(" "));
            line.setAttribute("fill", "none");
            line.setAttribute("stroke", colours[index % colours.length]);
            line.setAttribute("stroke-width", "1.5");
            line.setAttribute("vector-effect", "non-scaling-stroke");
            svg.append(line);
          });
          $("drift-legend").replaceChildren(...drift.pairs.map((pair, index) => {
            const worst = Math.max(...points.map((p) => p.skewUs[index] ?? 0));
            const swatch = el("span");
            swatch.style.background = colours[index % colours.length];
            return el("li", {}, swatch, `${pair}: worst ${worst.toFixed(0)} µs`);
          }));
          $("drift-caption").textContent = `Each pair's worst skew per second over the last ${Math.round((last - first) / 60) || 1} min, µs; the dashed line is the ${drift.thresholdUs.toFixed(0)} µs threshold.`;
        }

        function showPush(push) {
          state.push = push;
          $("push-status").textContent = `${push.name} (${megabytes(push.size)}): ${push.state}` + (push.error ? `: ${push.error}` : "");
          $("push-nodes").replaceChildren(...push.nodes.map((n) => {
            const bar = el("progress", { max: n.total || 1, value: n.have });
            bar.setAttribute("aria-label", `${n.node}: ${megabytes(n.have)} of ${megabytes(n.total)}`);
            return el("li", { dataset: { node: n.node, done: n.done } }, el("span", { textContent: n.node }), bar,
              el("span", { textContent: n.done ? "ready" : n.problem ? n.problem : `${Math.round((100 * n.have) / (n.total || 1))} %` }));
          }));
        }

        async function act(body, button) {
          const status = $("action-status");
          status.textContent = `${body.verb}${body.name ? " " + body.name : ""}: sending…`;
          if (button) button.disabled = true;
          try {
            const response = await fetch("/console/action", { method: "POST", credentials: "same-origin",
              headers: { "Content-Type": "application/json", "X-Console-CSRF": state.csrf }, body: JSON.stringify(body) });
            const reply = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
            status.textContent = response.ok ? `${reply.verb}: timeline version ${reply.version} sent to every node` : `Refused: ${reply.error}`;
            status.className = response.ok ? "" : "error";
          } catch (error) {
            status.textContent = `Not sent: ${error}`;
            status.className = "error";
          } finally {
            if (button) button.disabled = false;
          }
        }

        function push(file) {
          const request = new XMLHttpRequest();
          request.open("PUT", `/console/upload?name=${encodeURIComponent(file.name)}`);
          request.setRequestHeader("X-Console-CSRF", state.csrf);
          request.upload.onprogress = (event) => { if (event.lengthComputable) { $("upload-progress").max = event.total; $("upload-progress").value = event.loaded; } };
          request.onload = () => {
            let reply = {};
            try { reply = JSON.parse(request.responseText); } catch (_) {}
            if (request.status !== 200) { $("push-status").textContent = `Refused: ${reply.error || "HTTP " + request.status}`; $("push-status").className = "error"; }
            else $("push-status").className = "";
          };
          request.onerror = () => { $("push-status").textContent = "The upload failed: the controller did not answer."; };
          $("push-status").textContent = `${file.name}: uploading…`;
          request.send(file);
        }

        function connect() {
          const source = new EventSource("/console/events");
          source.addEventListener("open", () => { $("connection").textContent = "live"; $("connection").className = "live"; });
          source.addEventListener("error", () => {
            $("connection").className = "down";
            $("connection").textContent = source.readyState === EventSource.CLOSED
              ? "disconnected: the session may have ended; reload to log in" : "reconnecting…";
          });
          source.addEventListener("hello", (message) => {
            const hello = JSON.parse(message.data);
            state.wall = hello.wall;
            state.csrf = hello.wall.csrf;
            state.nodes.clear();
            $("screens").tBodies[0].replaceChildren();
            layout(hello.wall);
            showRole(hello.wall.role || "operator");
            hello.nodes.forEach(showNode);
            $("events").replaceChildren();
            hello.events.forEach(showEvent);
            $("audit").replaceChildren();
            (hello.audit || []).forEach(showAudit);
            state.actions = [];
            // Oldest first, as the daemon keeps them: each goes on top, so the newest ends there.
            hello.actions.forEach(showAction);
            showDrift(hello.drift);
            if (hello.push) showPush(hello.push);
            if (hello.playlist) showPlaylist(hello.playlist);
            document.body.dataset.ready = "true";
            // From the navigation's start to the whole wall drawn: what the benchmark reports.
            if (state.firstRenderMs == null) state.firstRenderMs = performance.now();
          });
          source.addEventListener("node", (message) => showNode(JSON.parse(message.data)));
          source.addEventListener("event", (message) => showEvent(JSON.parse(message.data)));
          source.addEventListener("audit", (message) => showAudit(JSON.parse(message.data)));
          source.addEventListener("action", (message) => showAction(JSON.parse(message.data)));
          source.addEventListener("drift", (message) => showDrift(JSON.parse(message.data)));
          source.addEventListener("push", (message) => showPush(JSON.parse(message.data)));
          source.addEventListener("playlist", (message) => showPlaylist(JSON.parse(message.data)));
        }

        // Proof of play: the span's plays, newest first (the 200 newest shown; the CSV holds all).
        function playsQuery(format) {
          const query = new URLSearchParams({ format, from: $("plays-from").value.trim(), to: $("plays-to").value.trim() });
          return `/console/plays?${query}`;
        }

        async function showPlays() {
          const summary = $("plays-summary");
          summary.textContent = "Asking every node…";
          let report;
          try {
            const response = await fetch(playsQuery("json"), { credentials: "same-origin" });
            report = await response.json();
            if (!response.ok) { summary.textContent = report.error || `HTTP ${response.status}`; return; }
          } catch (error) {
            summary.textContent = `The daemon did not answer: ${error}`;
            return;
          }
          const plays = report.plays.slice().reverse();
          const utc = (ms) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
          const name = (path) => path.split("/").pop();
          $("plays").tBodies[0].replaceChildren(...plays.slice(0, 200).map((play) => {
            const part = play.cue ? `cue ${play.cue}` : play.playlist ? `playlist ${play.playlist}` : play.entry != null ? `entry ${play.entry + 1}` : "";
            const within = play.kind === "clip" ? `${play.mediaFromSeconds.toFixed(1)}–${play.mediaToSeconds.toFixed(1)} s` : "still";
            const row = el("tr", { dataset: { ended: play.ended } },
              el("td", { textContent: play.node }), el("td", { textContent: utc(play.fromUnixMs) }), el("td", { textContent: utc(play.toUnixMs) }),
              el("td", { textContent: name(play.media), title: play.media + (play.sha256 ? `\nSHA-256 ${play.sha256}` : "") }),
              el("td", { textContent: part }), el("td", { textContent: within }),
              el("td", { textContent: play.ended + (play.problem ? `: ${play.problem}` : "") }),
              el("td", { textContent: play.frames != null ? String(play.frames) : "" }));
            return row;
          }));
          const missing = Object.keys(report.unreachable);
          summary.textContent = `${report.plays.length} plays from ${utc(report.fromUnixMs)} to ${utc(report.toUnixMs)} UTC`
            + (plays.length > 200 ? ", the 200 newest shown (the CSV holds all)" : "")
            + (missing.length ? `; missing: ${missing.join(", ")} did not answer` : "") + ".";
        }

        document.addEventListener("DOMContentLoaded", () => {
          const playsLink = () => { $("plays-csv").href = playsQuery("csv"); };
          ["plays-from", "plays-to"].forEach((id) => $(id).addEventListener("input", playsLink));
          $("plays-form").addEventListener("submit", (event) => { event.preventDefault(); showPlays(); });
          document.querySelectorAll("button[data-verb]").forEach((button) =>
            button.addEventListener("click", () => act({ verb: button.dataset.verb }, button)));
          const scrub = $("scrub");
          scrub.addEventListener("input", () => { state.scrubbing = true; $("scrub-value").textContent = `${Number(scrub.value).toFixed(1)} s`; });
          // A seek on release, or on Enter after the arrow keys: not one per arrow press.
          const seek = () => {
            state.scrubbing = false;
            const lead = [...state.nodes.values()].find((v) => v.reachable && v.entry != null);
            act({ verb: "seek", seconds: Number(scrub.value), entry: lead ? lead.entry : undefined });
          };
          scrub.addEventListener("pointerup", seek);
          scrub.addEventListener("keydown", (event) => { if (event.key === "Enter") seek(); });
          scrub.addEventListener("blur", () => { state.scrubbing = false; });
          $("still-form").addEventListener("submit", (event) => { event.preventDefault(); act({ verb: "still", image: $("still").value }); });
          $("push-form").addEventListener("submit", (event) => {
            event.preventDefault();
            const file = $("push-file").files[0];
            if (file) push(file); else $("push-status").textContent = "Choose a file first.";
          });
          $("logout").addEventListener("click", async () => {
            await fetch("/console/logout", { method: "POST", headers: { "X-Console-CSRF": state.csrf } });
            location.assign("/console");
          });
          connect();
          setInterval(() => state.nodes.forEach(showCondition), 1000);
        });
        """#
}
