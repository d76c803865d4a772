/// The console's page, embedded in the binary: the statically linked `wallctl` and the .deb carry
/// no resource files, and the page loads nothing but what the daemon serves (no CDN, no internet).
enum ConsolePage {
    /// The login form; `message` says why the last login failed.
    static func login(message: String?, needsToken: Bool) -> String {
        let note = message.map { #"<p id="login-error" class="error" role="alert">\#(escape($0))</p>"# } ?? ""
        let field =
            needsToken
            ? #"""
            <label for="token">Control token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required
                   aria-describedby="token-help" autofocus>
            <p id="token-help" class="help">The wall's control token: the file control-token-file names on the
            controller. It is sent once; the console then keeps a session.</p>
            """#
            : #"<p class="help">This wall has no control token (control-token-file): anyone who reaches this port may drive it.</p>"#
        return #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Lockstep console: log in</title>
            <link rel="stylesheet" href="/console/console.css">
            </head>
            <body class="login">
            <main>
            <h1>Lockstep operator console</h1>
            <form method="post" action="/console/login" aria-label="Log in">
            \#(field)
            \#(note)
            <button type="submit" id="login">Log in</button>
            </form>
            </main>
            </body>
            </html>
            """#
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Lockstep console</title>
        <link rel="stylesheet" href="/console/console.css">
        <script src="/console/console.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#transport">Skip to the controls</a>
        <header>
          <h1><span id="wall-name">Lockstep</span> <span class="sub" id="role">operator console</span></h1>
          <p id="connection" role="status" aria-live="polite">connecting…</p>
          <button type="button" id="logout">Log out</button>
        </header>
        <main>
          <section aria-labelledby="wall-heading" class="wide">
            <h2 id="wall-heading">The wall <span id="summary" class="sub"></span></h2>
            <div id="canvas" role="list" aria-label="Screens as the wall lays them out"></div>
          </section>

          <section id="transport" aria-labelledby="transport-heading">
            <h2 id="transport-heading">Transport</h2>
            <div class="buttons" role="group" aria-label="Transport">
              <button type="button" data-verb="play">Play</button>
              <button type="button" data-verb="pause" id="pause">Pause</button>
              <button type="button" data-verb="resume">Resume</button>
              <button type="button" data-verb="previous">Previous</button>
              <button type="button" data-verb="next">Next</button>
              <button type="button" data-verb="black">Black</button>
              <button type="button" data-verb="identify">Identify</button>
            </div>
            <div class="scrub">
              <label for="scrub">Position in entry <span id="scrub-entry">–</span>: <output id="scrub-value" for="scrub">–</output></label>
              <input type="range" id="scrub" min="0" max="1" step="0.1" value="0" aria-describedby="scrub-help">
              <p id="scrub-help" class="help">Release (or press Enter) to seek every screen there at one master time.</p>
            </div>
            <form id="still-form" class="inline">
              <label for="still">Still image (a path in every node's media roots)</label>
              <input id="still" type="text" placeholder="/srv/media/slate.png">
              <button type="submit">Show still</button>
            </form>
            <p id="action-status" role="status" aria-live="polite"></p>
            <h3>Recent actions</h3>
            <ol id="actions" class="actions"></ol>
          </section>

          <section aria-labelledby="cues-heading">
            <h2 id="cues-heading">Cues</h2>
            <div id="cues" class="buttons" role="group" aria-label="Cues"></div>
          </section>

          <section aria-labelledby="playlist-heading">
            <h2 id="playlist-heading">Playlist and schedule</h2>
            <ol id="playlist" start="0"></ol>
            <p id="loops" class="help"></p>
            <h3>Schedule</h3>
            <ul id="schedule"></ul>
          </section>

          <section aria-labelledby="push-heading">
            <h2 id="push-heading">Push content</h2>
            <form id="push-form" class="inline">
              <label for="push-file">File to send to every node</label>
              <input id="push-file" type="file">
              <button type="submit" id="push-button">Push</button>
            </form>
            <label for="upload-progress">Upload to the controller</label>
            <progress id="upload-progress" max="1" value="0"></progress>
            <p id="push-status" role="status" aria-live="polite"></p>
            <ul id="push-nodes" class="bars"></ul>
          </section>

          <section aria-labelledby="drift-heading" class="wide">
            <h2 id="drift-heading">Drift</h2>
            <p><span id="verdict-outcome" class="visually-hidden" role="status" aria-atomic="true"></span><span id="verdict"></span></p>
            <figure>
              <svg id="drift-plot" role="img" aria-labelledby="drift-caption" viewBox="0 0 600 200" preserveAspectRatio="none"></svg>
              <figcaption id="drift-caption">Each pair's worst skew per second over the last minutes (µs).</figcaption>
            </figure>
            <ul id="drift-legend" class="legend"></ul>
          </section>

          <section aria-labelledby="screens-heading" class="wide">
            <h2 id="screens-heading">Screens</h2>
            <div class="table-wrap">
            <table id="screens">
              <caption class="visually-hidden">Every screen's state</caption>
              <thead><tr><th scope="col">Node</th><th scope="col">State</th><th scope="col">Step</th>
              <th scope="col">Clock</th><th scope="col">Error bound</th><th scope="col">Position</th>
              <th scope="col">Version</th><th scope="col">Rejoins</th><th scope="col">Late frames</th>
              <th scope="col">Content</th><th scope="col">Machine</th></tr></thead>
              <tbody></tbody>
            </table>
            </div>
          </section>

          <section aria-labelledby="events-heading" class="wide">
            <h2 id="events-heading">Events</h2>
            <ol id="events" class="events" aria-live="polite" aria-relevant="additions"></ol>
            <h3 id="audit-heading">Audit log <a href="/console/audit" class="sub">(all, as JSON lines)</a></h3>
            <ol id="audit" class="events" aria-labelledby="audit-heading"></ol>
          </section>

          <section aria-labelledby="plays-heading" class="wide">
            <h2 id="plays-heading">Proof of play</h2>
            <form id="plays-form" class="plays">
              <label for="plays-from">From</label> <input id="plays-from" name="from" value="24h" size="26" aria-describedby="plays-help">
              <label for="plays-to">to</label> <input id="plays-to" name="to" value="now" size="26" aria-describedby="plays-help">
              <button type="submit">Show</button>
              <a id="plays-csv" href="/console/plays?format=csv&amp;from=24h&amp;to=now" download>Download CSV</a>
            </form>
            <p id="plays-help" class="sub">An ISO 8601 instant (2026-11-29T08:00:00Z), now, or a time ago (30m, 24h, 7d). Every screen's plays: what it presented, from when to when (UTC), how it ended, the frames its sink presented.</p>
            <p id="plays-summary" role="status"></p>
            <div class="table-wrap">
            <table id="plays">
              <caption class="visually-hidden">Plays, newest first</caption>
              <thead><tr><th scope="col">Node</th><th scope="col">From (UTC)</th><th scope="col">To</th>
              <th scope="col">Media</th><th scope="col">Part</th><th scope="col">In the media</th><th scope="col">Ended</th><th scope="col">Frames</th></tr></thead>
              <tbody></tbody>
            </table>
            </div>
          </section>
        </main>
        </body>
        </html>
        """#
}
