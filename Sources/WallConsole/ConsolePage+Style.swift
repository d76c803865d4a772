extension ConsolePage {
    /// One column on a phone, two on a tablet, three on a desk; colours with a text label beside
    /// them, never colour alone.
    static let style = #"""
        :root { --bg: #101418; --panel: #1a2027; --text: #e8edf2; --muted: #9aa7b4; --ok: #3fb950; --warn: #d29922;
          --bad: #f85149; --accent: #58a6ff; font-family: system-ui, sans-serif; color-scheme: dark; }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--text); line-height: 1.4; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .5rem 1rem;
          background: var(--panel); border-bottom: 1px solid #2d333b; }
        header h1 { font-size: 1.2rem; margin: 0; flex: 1 1 auto; }
        .sub { color: var(--muted); font-weight: normal; font-size: .85em; }
        main { display: grid; gap: 1rem; padding: 1rem; grid-template-columns: 1fr; }
        @media (min-width: 700px) { main { grid-template-columns: 1fr 1fr; } }
        @media (min-width: 1200px) { main { grid-template-columns: 1fr 1fr 1fr; } }
        section { background: var(--panel); border-radius: 8px; padding: .75rem 1rem; min-width: 0; }
        section.wide { grid-column: 1 / -1; }
        h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
        h3 { font-size: .95rem; margin: .75rem 0 .25rem; color: var(--muted); }
        button { font: inherit; color: var(--text); background: #2d333b; border: 1px solid #444c56; border-radius: 6px;
          padding: .5rem .8rem; min-height: 44px; min-width: 44px; cursor: pointer; }
        button:hover { background: #373e47; }
        button:focus-visible, input:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        button[disabled] { opacity: .5; cursor: wait; }
        input[type=text], input[type=password] { font: inherit; padding: .5rem; min-height: 44px; width: 100%;
          background: #0d1117; color: var(--text); border: 1px solid #444c56; border-radius: 6px; }
        .buttons { display: flex; flex-wrap: wrap; gap: .5rem; }
        .inline { display: grid; gap: .4rem; margin: .75rem 0; }
        .help { color: var(--muted); font-size: .85rem; margin: .25rem 0; }
        .error { color: var(--bad); font-weight: bold; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 1rem; top: 1rem; background: var(--panel); padding: .5rem; z-index: 10; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        #connection { margin: 0; font-size: .9rem; }
        #connection.live::before { content: "● "; color: var(--ok); }
        #connection.down::before { content: "● "; color: var(--bad); }
        #canvas { position: relative; width: 100%; margin: 0 auto; background: #000; border-radius: 4px; overflow: hidden; }
        .tile { position: absolute; border: 2px solid #444c56; overflow: hidden; background: #0d1117; }
        .tile img { width: 100%; height: 100%; object-fit: fill; display: block; image-rendering: auto; }
        .tile .label { position: absolute; left: 0; right: 0; bottom: 0; padding: 2px 4px; font-size: .75rem;
          background: rgba(0,0,0,.7); display: flex; justify-content: space-between; gap: .25rem; white-space: nowrap;
          overflow: hidden; }
        .tile.ok { border-color: var(--ok); }
        .tile.warn { border-color: var(--warn); }
        .tile.bad { border-color: var(--bad); }
        .tile.bad img { opacity: .3; }
        .badge { font-weight: bold; }
        .ok .badge, .badge.ok { color: var(--ok); }
        .warn .badge, .badge.warn { color: var(--warn); }
        .bad .badge, .badge.bad { color: var(--bad); }
        .stale { opacity: 0.6; font-style: italic; }
        .scrub { margin: .75rem 0; }
        .scrub input { width: 100%; min-height: 44px; }
        progress { width: 100%; height: 1rem; }
        .bars { list-style: none; padding: 0; margin: .5rem 0; display: grid; gap: .25rem; }
        .bars li { display: grid; grid-template-columns: 4rem 1fr 6rem; gap: .5rem; align-items: center; font-size: .85rem; }
        /* The numbers inside the list's box: outside it, "12." lost its first digit to the padding. */
        .actions, .events { list-style-position: inside; padding-left: 0; margin: .25rem 0; font-size: .85rem; }
        .events { max-height: 18rem; overflow-y: auto; }
        .events time, .actions time { color: var(--muted); font-variant-numeric: tabular-nums; }
        #playlist li.current { font-weight: bold; color: var(--accent); }
        #playlist li.current::after { content: "  ◀ now"; font-weight: normal; }
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .85rem; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #2d333b; white-space: nowrap; }
        figure { margin: 0; }
        #drift-plot { width: 100%; height: 200px; background: #0d1117; border-radius: 4px; }
        figcaption { color: var(--muted); font-size: .8rem; }
        .legend { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; font-size: .8rem; }
        .legend span { display: inline-block; width: .8rem; height: .8rem; margin-right: .25rem; vertical-align: middle; }
        body.login main { display: block; max-width: 28rem; margin: 10vh auto; }
        body.login form { background: var(--panel); padding: 1rem; border-radius: 8px; display: grid; gap: .5rem; }
        """#
}
