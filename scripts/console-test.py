#!/usr/bin/env python3
"""Drives the operator console of `wallctl serve` in Debian's chromium, headless, through its
chromedriver (selenium), as an operator would: ConsoleWallTests runs it against a live four-node
wall and answers its requests on standard input ("kill b" -> "killed", "restart b" -> "restarted",
"paused" -> "checked" once the test has checked the ground truth).

Every step prints a line "step ..."; a failed check prints "FAIL ..." and exits 1. Nothing is
downloaded: the browser and its driver are the Debian packages (SE_OFFLINE stops selenium from
looking for others)."""

import argparse
import http.client
import json
import os
import sys
import time
import urllib.parse

os.environ["SE_OFFLINE"] = "true"
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


def say(line):
    print(line, flush=True)


class Failure(Exception):
    pass


def wait(what, check, within):
    """Polls `check` until it returns something true; fails naming `what` after `within` s."""
    deadline = time.monotonic() + within
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except Failure:
            raise
        except Exception as error:  # a page between two renders
            last = error
        time.sleep(0.1)
    raise Failure(f"{what}: not within {within} s (last: {last})")


def ask(request, answer):
    say(request)
    line = sys.stdin.readline().strip()
    if line != answer:
        raise Failure(f"asked '{request}', the test answered '{line}'")


class Console:
    def __init__(self, args):
        self.args = args
        self.base = args.url.rstrip("/")
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1900", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     f"--user-data-dir={args.profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver, port=args.driver_port), options=options)
        self.driver.set_page_load_timeout(20)
        self.urls = []

    def shot(self, name):
        if self.args.screenshots:
            path = os.path.join(self.args.screenshots, f"console-{name}.png")
            self.driver.save_screenshot(path)
            say(f"screenshot {path}")

    def tiles(self):
        return {t.get_attribute("data-node"): {
            "reachable": t.get_attribute("data-reachable"), "state": t.get_attribute("data-state"),
            "inStep": t.get_attribute("data-in-step"), "version": t.get_attribute("data-version"),
            "badge": t.find_element(By.CSS_SELECTOR, ".badge").text}
            for t in self.driver.find_elements(By.CSS_SELECTOR, "#canvas .tile")}

    def every_tile(self, predicate):
        tiles = self.tiles()
        return tiles if len(tiles) == len(self.args.nodes) and all(predicate(t) for t in tiles.values()) else None

    def action(self, verb):
        """The newest action of `verb` in the page's list, with its version and nodes taken."""
        for item in self.driver.find_elements(By.CSS_SELECTOR, "#actions li"):
            if f" {verb}:" in " " + item.text.split(" ", 1)[-1] and item.get_attribute("data-version"):
                return item
        return None

    def taken_by_all(self, verb):
        item = self.action(verb)
        n = len(self.args.nodes)
        if item is None or f"carried out by {n} of {n}" not in item.text:
            return None
        # No node is seen carrying an edit out before its master time.
        action = self.driver.execute_script(
            "return window.consoleStats.actions.find(a => a.version == arguments[0])", int(item.get_attribute("data-version")))
        early = {node: at - action["dueUnixMs"] for node, at in action["takenUnixMs"].items()
                 if action.get("dueUnixMs") and at < action["dueUnixMs"] - 20}
        if early:
            raise Failure(f"{verb}: carried out before it was due (ms): {early}")
        return item

    def collect_urls(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                self.urls.append(message["params"]["request"]["url"])

    def cookie(self):
        cookies = {c["name"]: c for c in self.driver.get_cookies()}
        return cookies.get("lockstep_console")

    def http(self, method, path, body=None, headers=None):
        """A request outside the browser, with the browser's session cookie: the bad inputs."""
        parsed = urllib.parse.urlparse(self.base)
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, text


def run(args):
    token = open(args.token_file).read().strip()
    console = Console(args)
    driver = console.driver
    try:
        # A wrong token is refused, saying so.
        driver.get(console.base + "/console")
        driver.find_element(By.ID, "token").send_keys(token[:-1] + ("x" if token[-1] != "x" else "y"))
        driver.find_element(By.ID, "login").click()
        refusal = wait("the refusal of a wrong token", lambda: driver.find_element(By.ID, "login-error").text, 10)
        if "not this wall's control token" not in refusal:
            raise Failure(f"a wrong token's refusal says: {refusal}")
        if console.cookie() is not None:
            raise Failure("a wrong token got a session cookie")
        console.shot("login-refused")
        say("step wrong token refused")

        # The right one: a session cookie, HttpOnly, SameSite=Strict, expiring.
        started = time.monotonic()
        driver.find_element(By.ID, "token").send_keys(token)
        driver.find_element(By.ID, "login").click()
        wait("the page after login", lambda: driver.find_element(By.CSS_SELECTOR, "body[data-ready=true]"), 10)
        say(f"step first render {1000 * (time.monotonic() - started):.0f} ms after login")
        cookie = console.cookie()
        if not cookie or not cookie.get("httpOnly") or cookie.get("sameSite") != "Strict" or "expiry" not in cookie:
            raise Failure(f"the session cookie: {cookie}")
        say("step logged in, cookie HttpOnly SameSite=Strict with an expiry")

        # Four nodes of a live wall, in step.
        wait("every screen in step", lambda: console.every_tile(lambda t: t["inStep"] == "true"), 40)
        wait("a thumbnail on every screen", lambda: all(
            i.get_attribute("src") and driver.execute_script("return arguments[0].naturalWidth", i) > 0
            for i in driver.find_elements(By.CSS_SELECTOR, "#canvas .tile img")), 15)
        wait("the drift verdict", lambda: "PASS" in driver.find_element(By.ID, "verdict").text
             or "UNCERTAIN" in driver.find_element(By.ID, "verdict").text, 20)
        console.shot("wall")
        say("step four screens in step")

        # Each machine's health in its row: CPU, memory, the store, its Lockstep and config.
        machines = wait("every machine's health", lambda: (lambda cells: cells if all(
            "CPU " in c and "memory " in c and "store " in c and "Lockstep " in c for c in cells) else None)(
            [row.find_elements(By.TAG_NAME, "td")[9].text for row in driver.find_elements(By.CSS_SELECTOR, "#screens tbody tr")]), 10)
        say(f"step machines: {machines[0]}")

        # The verdict's sentence changes every second; only its outcome is a live region, written when it
        # changes, so a screen reader says "PASS" once.
        if driver.find_element(By.ID, "verdict").get_attribute("role") is not None:
            raise Failure("the verdict's changing sentence is a live region")
        rewritten = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const target = document.getElementById("verdict-outcome");
            const sentence = document.getElementById("verdict");
            const outcomes = [target.textContent];
            let sentences = 0;
            new MutationObserver(() => outcomes.push(target.textContent)).observe(target, { childList: true, characterData: true, subtree: true });
            new MutationObserver(() => { sentences += 1; }).observe(sentence, { childList: true, characterData: true, subtree: true });
            setTimeout(() => done([outcomes, sentences, target.getAttribute("role")]), 4000);""")
        outcomes, sentences, role = rewritten
        repeated = [a for a, b in zip(outcomes, outcomes[1:]) if a == b]
        if repeated or sentences == 0 or outcomes[-1] not in ("PASS", "UNCERTAIN") or role != "status":
            raise Failure(f"the verdict over 4 s: outcomes written {outcomes}, the sentence changed {sentences} times, "
                          f"the outcome's role {role}")
        say(f"step the verdict's outcome {outcomes} written only when it changed; its sentence changed {sentences} times")

        # Words for operators, times with their sign: the page's own functions.
        words = driver.execute_script(
            "return [signed(-0.32), signed(0.5), signed(-0.001), showWords('testCard'), showWords('still /srv/a/closed.png')]")
        if words != ["−0.32 s", "+0.50 s", "+0.00 s", "test card", "still closed.png"]:
            raise Failure(f"the page's words: {words}")
        say("step signed times and operators' words")

        # Pause: every node paused on one version, the page saying when each took it.
        driver.find_element(By.ID, "pause").click()
        wait("every screen paused", lambda: console.every_tile(lambda t: t["state"] == "paused"), 10)
        item = wait("the pause taken by every node", lambda: console.taken_by_all("pause"), 10)
        versions = {t["version"] for t in console.tiles().values()}
        if len(versions) != 1 or item.get_attribute("data-version") not in versions:
            raise Failure(f"paused on versions {versions}, the action made {item.get_attribute('data-version')}")
        say(f"step paused: {item.text}")
        console.shot("paused")
        ask("paused", "checked")

        driver.find_element(By.CSS_SELECTOR, "button[data-verb=resume]").click()
        wait("every screen playing in step after resume",
             lambda: console.taken_by_all("resume") and console.every_tile(lambda t: t["inStep"] == "true"), 20)
        say("step resumed")

        # A seek with the scrub bar, by keyboard: Home, then Enter seeks every screen to the entry's in point
        # (2 s: the bar starts there; a seek before it would be refused).
        scrub = driver.find_element(By.ID, "scrub")
        if scrub.get_attribute("min") != "2":
            raise Failure(f"the scrub bar starts at {scrub.get_attribute('min')} s, the entry at its in point, 2 s")
        scrub.send_keys(Keys.HOME)
        scrub.send_keys(Keys.ENTER)
        wait("the seek carried out by every node",
             lambda: console.taken_by_all("seek") and console.every_tile(lambda t: t["inStep"] == "true"), 20)
        say(f"step seek: {console.taken_by_all('seek').text}")

        # A cue: its button, a new version every node takes.
        driver.find_element(By.CSS_SELECTOR, f"button[data-cue='{args.cue}']").click()
        item = wait("the cue taken by every node", lambda: console.taken_by_all(f"cue {args.cue}"), 15)
        say(f"step cue: {item.text}")

        # A new page lists the newest actions first, as the live one did.
        listed = [li.get_attribute("data-version") for li in driver.find_elements(By.CSS_SELECTOR, "#actions li")]
        cue_version = item.get_attribute("data-version")
        driver.refresh()
        wait("the page after a reload", lambda: driver.find_element(By.CSS_SELECTOR, "body[data-ready=true]"), 10)
        reloaded = wait("the actions after a reload", lambda: [
            li.get_attribute("data-version") for li in driver.find_elements(By.CSS_SELECTOR, "#actions li")], 5)
        if reloaded[:len(listed)] != listed or reloaded[0] != cue_version:
            raise Failure(f"actions by version before a reload {listed}, after {reloaded}")
        say(f"step actions after a reload, newest first: versions {', '.join(reloaded)}")

        # A push: upload, then every node's progress to ready.
        driver.find_element(By.ID, "push-file").send_keys(args.upload)
        driver.find_element(By.ID, "push-button").click()
        wait("the push under way", lambda: "distributing" in driver.find_element(By.ID, "push-status").text
             or "done" in driver.find_element(By.ID, "push-status").text, 30)
        seen = set()

        def progressed():
            for bar in driver.find_elements(By.CSS_SELECTOR, "#push-nodes li"):
                value = bar.find_element(By.TAG_NAME, "progress").get_attribute("value")
                if bar.get_attribute("data-done") != "true" and float(value or 0) > 0:
                    seen.add(bar.get_attribute("data-node"))
            done = driver.find_elements(By.CSS_SELECTOR, "#push-nodes li[data-done=true]")
            if len(seen) and not getattr(progressed, "shot", False):
                progressed.shot = True
                console.shot("push")
            return len(done) == len(args.nodes) and "done" in driver.find_element(By.ID, "push-status").text

        wait("the file on every node", progressed, 60)
        say(f"step pushed: every node ready; progress seen part way on {sorted(seen)}")

        # A node killed: marked, then back in step once restarted.
        victim = args.nodes[1]
        ask(f"kill {victim}", "killed")
        wait(f"{victim} marked unreachable", lambda: console.tiles()[victim]["reachable"] == "false", 5)
        console.shot("node-down")
        say(f"step {victim} marked: {console.tiles()[victim]['badge']}")
        # The time it has been unreachable counts on with no update from the daemon, and what it said last
        # is marked as such.
        counted = wait(f"{victim} unreachable for 3 s or more", lambda: next(
            (badge for badge in [console.tiles()[victim]["badge"]]
             if badge.startswith("unreachable for ") and badge.split()[2].isdigit() and int(badge.split()[2]) >= 3), None), 8)
        row = driver.find_element(By.CSS_SELECTOR, f"#screens tr[data-node='{victim}']")
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        if not all(cells[index].endswith("(last seen)") for index in (2, 3, 4)):
            raise Failure(f"{victim}'s clock, bound and position while unreachable: {cells[2:5]}")
        say(f"step {victim}: '{counted}'; its last clock, bound and position marked: {cells[2:5]}")
        ask(f"restart {victim}", "restarted")
        wait(f"{victim} back in step", lambda: console.tiles()[victim]["inStep"] == "true", 40)
        events = driver.find_element(By.ID, "events").text
        for expected in [f"{victim} stopped answering", f"{victim} answers again", f"{victim} restarted"]:
            if expected not in events:
                raise Failure(f"the event log lacks '{expected}':\n{events[:2000]}")
        # The restart is a rejoin of the wall, though the node counts its own from 0 again.
        rejoins = driver.find_element(By.CSS_SELECTOR, f"#screens tr[data-node='{victim}']").find_elements(
            By.TAG_NAME, "td")[6].text
        if not rejoins.isdigit() or int(rejoins) < 1:
            raise Failure(f"{victim}'s rejoins after its restart: '{rejoins}'")
        say(f"step {victim} back in step")
        # The events' numbers inside their box, where a number of two or three digits is not cut off.
        inside = driver.execute_script(
            "return [...document.querySelectorAll('#events, #actions')].map(l => getComputedStyle(l).listStylePosition)")
        if inside != ["inside", "inside"]:
            raise Failure(f"the event and action lists number their items {inside}, where the padding cuts them")
        console.shot("wall-after")

        # Bad input, outside the browser with its session: a clear refusal each time.
        session = f"lockstep_console={cookie['value']}"
        csrf = driver.execute_script("return window.consoleStats.csrf")
        plain = {"Cookie": session, "Content-Type": "application/json"}
        checked = {"X-Console-CSRF": csrf, **plain}
        for method, path, body, headers, status, words in [
            ("POST", "/console/action", '{"verb":"pause"}', plain, 403, "X-Console-CSRF"),
            ("POST", "/console/action", '{"verb":"pause"}', {"Content-Type": "application/json"}, 401, "not logged in"),
            ("POST", "/console/action", '{"verb":"seek","seconds":-3}', checked, 400, "zero or more"),
            ("POST", "/console/action", '{"verb":"seek","seconds":"soon"}', checked, 400, "JSON"),
            ("POST", "/console/action", '{"verb":"cue","name":"nowhere"}', checked, 404, "nowhere"),
            ("POST", "/console/action", '{"verb":"explode"}', checked, 404, "no action"),
            ("POST", "/console/action", '{"verb":"' + "x" * 40000 + '"}', checked, 413, "at most"),
            ("POST", "/console/action", '{"verb":"pause"}', {**checked, "Origin": "http://evil.example"}, 403, "not from"),
            ("PUT", "/console/upload?nome=x", "abc", checked, 400, "name"),
            ("PUT", "/console/upload?name=a%2Fb", "abc", checked, 400, "name"),
            ("GET", "/console/thumbnail/nobody", None, plain, 404, "no node"),
            ("GET", "/console/plays?from=yesterday", None, plain, 400, "from must be"),
            ("GET", "/console/plays?from=1h&to=2h", None, plain, 400, "after from"),
            ("GET", "/console/plays?format=xls", None, plain, 400, "csv or json"),
            ("GET", "/console/events", None, {}, 401, "not logged in"),
        ]:
            got, text = console.http(method, path, body, headers)
            if got != status or words not in text:
                raise Failure(f"{method} {path[:60]}: HTTP {got} {text[:200]}, wanted {status} saying '{words}'")
        say("step bad input refused, each with a sentence")

        # The page's own requests carry no token, in URLs or in what it loaded.
        console.collect_urls()
        if not console.urls:
            raise Failure("no request URLs logged")
        leaked = [u for u in console.urls if token in u or urllib.parse.quote(token) in u]
        if leaked:
            raise Failure(f"the token in request URLs: {leaked[:3]}")
        if token in driver.page_source:
            raise Failure("the token in the page")
        say(f"step no token in {len(console.urls)} request URLs")

        # A laptop's 1366x768: the wall at most half the window high, the transport's buttons in sight with it.
        driver.set_window_size(1366, 768)
        time.sleep(0.5)
        driver.execute_script("window.scrollTo(0, 0)")
        sizes = driver.execute_script("""return [document.getElementById("canvas").getBoundingClientRect().height,
            document.getElementById("pause").getBoundingClientRect().bottom, window.innerHeight]""")
        if sizes[0] > 0.5 * sizes[2] + 1 or sizes[1] > sizes[2]:
            raise Failure(f"at 1366x768: the wall {sizes[0]:.0f} px high, Pause's bottom at {sizes[1]:.0f} of {sizes[2]} px")
        console.shot("laptop")
        say(f"step at 1366x768 the wall is {sizes[0]:.0f} px high and Pause in sight")

        # A phone's width: one column, the controls at least 44 px (touch targets), no sideways scroll.
        driver.set_window_size(390, 1800)
        time.sleep(0.5)
        wide = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
        small = driver.execute_script(
            "return [...document.querySelectorAll('button')].filter(b => b.offsetParent && b.offsetHeight < 44).length")
        if wide or small:
            raise Failure(f"on a phone: sideways scroll {wide}, {small} buttons under 44 px")
        console.shot("phone")
        say("step laid out for a phone")

        lags = driver.execute_script("return window.consoleStats.lags")

        # Logging out ends the session on the server: its cookie opens nothing any more.
        driver.set_window_size(1400, 1900)
        driver.find_element(By.ID, "logout").click()
        wait("the login form after logging out", lambda: driver.find_element(By.ID, "token"), 10)
        got, text = console.http("GET", "/console/events", None, {"Cookie": session})
        if got != 401:
            raise Failure(f"the session's cookie after logout: HTTP {got} {text[:200]}")
        say("step logged out: the old session refused")

        # A viewer's token: the page and its events, every control disabled, every action refused.
        driver.find_element(By.ID, "token").send_keys(open(args.viewer_token_file).read().strip())
        driver.find_element(By.ID, "login").click()
        wait("the page for a viewer", lambda: driver.find_element(By.CSS_SELECTOR, "body[data-ready=true]"), 10)
        role = driver.find_element(By.ID, "role").text
        enabled = driver.execute_script(
            "return [...document.querySelectorAll('#transport button, #cues button, #push-form button')].filter(b => !b.disabled).length")
        if role != "viewer: watching only" or enabled:
            raise Failure(f"a viewer's page says '{role}' with {enabled} controls enabled")
        wait("every screen in step for the viewer", lambda: console.every_tile(lambda t: t["inStep"] == "true"), 20)
        viewer = f"lockstep_console={console.cookie()['value']}"
        viewer_csrf = driver.execute_script("return window.consoleStats.csrf")
        got, text = console.http("POST", "/console/action", '{"verb":"pause"}',
                                 {"Cookie": viewer, "Content-Type": "application/json", "X-Console-CSRF": viewer_csrf})
        if got != 403 or "takes no action" not in text:
            raise Failure(f"a viewer's pause: HTTP {got} {text[:200]}")
        console.shot("viewer")
        say("step a viewer watches the wall; its controls disabled, its action refused")

        # The audit log: every action and refusal, with its credential and login, on the page and as JSON lines.
        got, text = console.http("GET", "/console/audit", None, {"Cookie": viewer})
        records = [json.loads(line) for line in text.splitlines() if line.strip()] if got == 200 else []
        done = {(r["who"], r["action"]) for r in records if r["outcome"] == "done"}
        refused = [r for r in records if r["who"] == "viewer" and r["outcome"] == "refused"]
        wanted = {("operator", "login"), ("operator", "pause"), ("operator", f"cue {args.cue}"), ("viewer", "login")}
        if got != 200 or not wanted <= done or not refused or not any(r.get("version") for r in records):
            raise Failure(f"GET /console/audit: HTTP {got}, done {sorted(done)}, viewer refusals {refused}")
        shown = wait("the viewer's refusal in the page's audit log", lambda: next(
            (li.text for li in driver.find_elements(By.CSS_SELECTOR, "#audit li") if "viewer" in li.text and "refused" in li.text), None), 5)
        say(f"step audit: {len(records)} records as JSON lines; the page shows '{shown}'")

        # Proof of play, for a viewer too: the page's table of the span's plays, and its CSV.
        nodes = len(console.tiles())
        driver.find_element(By.ID, "plays-from").clear()
        driver.find_element(By.ID, "plays-from").send_keys("1h")
        driver.find_element(By.CSS_SELECTOR, "#plays-form button").click()
        wait("a play of every screen in the page's table", lambda: len(
            {row.find_element(By.CSS_SELECTOR, "td").text for row in driver.find_elements(By.CSS_SELECTOR, "#plays tbody tr")}) >= nodes, 10)
        summary = driver.find_element(By.ID, "plays-summary").text
        href = driver.find_element(By.ID, "plays-csv").get_attribute("href")
        if "plays from" not in summary or "from=1h" not in href:
            raise Failure(f"proof of play: the summary says '{summary}', the CSV link is {href}")
        driver.execute_script("document.getElementById('plays-heading').scrollIntoView()")
        console.shot("plays")
        got, text = console.http("GET", "/console/plays?format=csv&from=1h&to=now", None, {"Cookie": viewer})
        rows = [line.split(",") for line in text.split("\r\n") if line]
        if got != 200 or rows[0][:3] != ["node", "kind", "media"] or len({row[0] for row in rows[1:]}) < nodes:
            raise Failure(f"GET /console/plays as CSV: HTTP {got} {text[:300]}")
        say(f"step proof of play: {summary}; the CSV has {len(rows) - 1} plays")
        if lags:
            ordered = sorted(lags)
            say("step update lag p50 %.0f ms, p99 %.0f ms over %d updates" % (
                ordered[len(ordered) // 2], ordered[int(0.99 * (len(ordered) - 1))], len(ordered)))
        say("done")
        return 0
    except Failure as failure:
        console.shot("failure") if args.screenshots else None
        say(f"FAIL {failure}")
        for element in ["action-status", "actions", "push-status", "summary"]:
            say(f"page #{element}: " + driver.find_element(By.ID, element).text.replace("\n", " | "))
        say(f"page tiles: {console.tiles()}")
        say("page state: " + json.dumps(driver.execute_script(
            "return [window.consoleStats.actions.slice(0, 2), [...window.consoleStats.nodes.values()]]")))
        return 1
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--viewer-token-file", required=True)
    parser.add_argument("--nodes", required=True, type=lambda s: s.split(","))
    parser.add_argument("--cue", required=True)
    parser.add_argument("--upload", required=True)
    parser.add_argument("--screenshots")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--driver-port", type=int, default=0)
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
