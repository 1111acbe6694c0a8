"""The catalog page (issue 28) in a real browser: Debian's headless Chromium driven by Playwright
for Python (both installed by scripts/install-browser.sh), against bridges the Rust test
`tests/it/browser.rs` starts:

    catalog_page.py DEMO_URL KEYED_URL KEY AXE_JS [SCREENSHOT_DIR]

DEMO_URL is `otc-bridge demo`; KEYED_URL a bridge with the API key KEY whose catalog has a tool
with a hostile description (`Hostile.Describe`) and one whose schema uses `$ref`, `oneOf`, `anyOf`,
`allOf`, `multipleOf` and `uniqueItems` (`Shapes.Plan`). AXE_JS is npm axe-core's axe.min.js.
Prints one line per check and `browser: ok` at the end; any failure raises (exit status 1).
"""

import json
import os
import sys

from playwright.sync_api import expect, sync_playwright

CHROMIUM = os.environ.get("OTC_CHROMIUM", "/usr/bin/chromium")
# Chromium's own traffic (updates, safe browsing, sync) would be refused by a closed network.
FLAGS = [
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def check(what):
    print(f"browser: {what}", flush=True)


def watch(page, dialogs, errors):
    """Records every dialog (answered per `page.answer`, default dismiss) and every script error."""
    page.answer = False

    def on_dialog(dialog):
        dialogs.append((dialog.type, dialog.message))
        if page.answer:
            dialog.accept()
        else:
            dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda e: errors.append(str(e)))


def demo_flow(browser, demo, shots):
    context = browser.new_context()
    page = context.new_page()
    dialogs, errors = [], []
    watch(page, dialogs, errors)

    response = page.goto(demo + "/")
    assert response.status == 200, response.status
    headers = response.headers
    assert headers["content-security-policy"] == CSP, headers
    assert headers["x-frame-options"] == "DENY", headers
    assert headers["x-content-type-options"] == "nosniff", headers
    expect(page.get_by_role("heading", name="Catalog", exact=True)).to_be_visible()
    expect(page.locator("table.sources")).to_contain_text("ready")
    check("catalog page renders, with the strict headers")
    if shots:
        page.screenshot(path=os.path.join(shots, "catalog.png"), full_page=True)

    # The CSP is enforced: an inline script injected into the page does not run.
    try:
        page.add_script_tag(content="window.__inline_ran = true")
    except Exception:  # noqa: BLE001 - Playwright reports the blocked script as an error
        pass
    assert page.evaluate("window.__inline_ran === undefined"), "an inline script ran"
    check("an inline script is blocked by the CSP")

    # Search as you type.
    page.get_by_label("Search tools").fill("echo a message back")
    expect(page.locator("ol.results")).to_contain_text("DemoTools.Echo", timeout=10_000)
    check("search as you type finds DemoTools.Echo")
    # And without the script's help: the form submits to /ui/search.
    page.goto(demo + "/ui/search?q=roll+dice")
    expect(page.locator("ol.results li").first).to_contain_text("DemoTools.RollDice")
    check("the search page finds DemoTools.RollDice")
    if shots:
        page.screenshot(path=os.path.join(shots, "search.png"), full_page=True)

    # Open a tool, fill its form, call it, see the value.
    page.goto(demo + "/ui/search?q=echo")
    page.get_by_role("link", name="DemoTools.Echo").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("DemoTools.Echo")
    expect(page.get_by_role("table", name="Input parameters")).to_contain_text("message")
    # Nothing filled: the page says what is missing and sends nothing.
    page.get_by_role("button", name="Call").click()
    expect(page.locator("#try-errors")).to_contain_text("message: is required")
    expect(page.locator("#try-answer")).to_contain_text("Nothing sent yet")
    check("a missing required parameter is shown before sending")
    page.get_by_label("message").fill("hello from the browser")
    expect(page.locator("#try-body")).to_contain_text("hello from the browser")
    expect(page.locator("#try-curl")).to_contain_text("curl -s " + demo + "/tools/call")
    page.get_by_role("button", name="Call").click()
    expect(page.locator("#try-answer")).to_contain_text("hello from the browser", timeout=15_000)
    expect(page.locator("#try-answer .answer-ok")).to_be_visible()
    check("DemoTools.Echo called from its form: the value is shown")
    if shots:
        page.screenshot(path=os.path.join(shots, "tool.png"), full_page=True)
    # The request body shown is what a curl line sends.
    body = json.loads(page.locator("#try-body").inner_text())
    assert body == {"request": {"tool_id": body["request"]["tool_id"], "input": {"message": "hello from the browser"}}}, body

    # A type error, before sending.
    page.goto(demo + "/ui/tools/DemoTools.RollDice")
    page.get_by_label("sides").fill("many")
    page.get_by_role("button", name="Call").click()
    expect(page.locator("#try-errors")).to_contain_text('sides: "many" is not of type "integer"')
    check("a wrong type is shown before sending")

    # A tool error (the call reached the tool) shows its message and retry hint.
    page.goto(demo + "/ui/tools/DemoTools.Divide")
    page.locator("#try-json").fill('{"dividend": 1, "divisor": 0}')
    page.get_by_role("button", name="Call").click()
    expect(page.locator("#try-answer")).to_contain_text("Tool error", timeout=15_000)
    expect(page.locator("#try-answer")).to_contain_text("retry")
    check("a tool error is shown with its retry hint")

    # A destructive tool asks first: cancelled, nothing is sent; confirmed, it runs.
    page.goto(demo + "/ui/tools/DemoNotes.CreateNote")
    expect(page.locator("h1 .badge")).to_have_text("destructive")
    page.locator("#try-json").fill('{"title": "From the browser", "body": "Confirmed."}')
    before = len(dialogs)
    page.answer = False
    page.get_by_role("button", name="Call (asks first)").click()
    expect(page.locator("#try-answer")).to_contain_text("cancelled")
    assert len(dialogs) == before + 1 and dialogs[-1][0] == "confirm", dialogs
    page.answer = True
    page.get_by_role("button", name="Call (asks first)").click()
    expect(page.locator("#try-answer .answer-ok")).to_contain_text("From the browser", timeout=15_000)
    assert dialogs[-1][0] == "confirm", dialogs
    check("a destructive tool asks for confirmation; cancelled sends nothing, confirmed calls")

    assert not errors, errors
    context.close()


# Inputs `Shapes.Plan` refuses, each for reasons the page must word as the server does.
SHAPES_INPUTS = [
    {"width": 3},
    {"width": 0, "tags": ["a", "b", "a"]},
    {"width": 2, "shape": "triangle"},
    {"width": 2, "shape": {"sides": 3}},
    {"width": 2, "shape": {"sides": 4}, "colour": "red"},
    {"width": 2, "step": 0.3, "range": {"high": 1}},
    {"width": 2, "step": 0.75, "range": 5, "layer": 1},
    {"width": 2, "extra": 1, "tags": [1, 1.0]},
    {"tags": "x", "colour": None, "layer": -1.5},
    {"width": 2, "owner": {"nick": "x"}},
    {"width": 2, "owner": {"name": 1, "nick": "x", "team": "y"}},
]


def validation_matches_the_server(page, keyed, key):
    """The try-it form validates in the page with the server's own words: for each input, the
    errors shown before sending are exactly the `parameter_errors` of the bridge's 422 for it."""
    page.goto(keyed + "/ui/tools/Shapes.Plan")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Shapes.Plan", timeout=10_000)
    call = """async ([key, input]) => {
        const res = await fetch('/tools/call', {method: 'POST', credentials: 'omit',
            headers: {'Content-Type': 'application/json', 'X-API-Key': key},
            body: JSON.stringify({request: {tool_id: 'Shapes.Plan', input}})});
        return [res.status, await res.json()];
    }"""
    for shape in SHAPES_INPUTS:
        page.locator("#try-json").fill(json.dumps(shape))
        page.locator("#try button[type=submit]").click()
        expect(page.locator("#try-errors li").first).to_be_visible()
        shown = dict(li.split(": ", 1) for li in page.locator("#try-errors li").all_inner_texts())
        status, answer = page.evaluate(call, [key, shape])
        assert status == 422, (shape, status, answer)
        assert shown == answer["parameter_errors"], (shape, shown, answer["parameter_errors"])
        expect(page.locator("#try-answer")).to_contain_text("Nothing sent yet")
    check(f"$ref, oneOf, anyOf, allOf, multipleOf, uniqueItems: {len(SHAPES_INPUTS)} inputs refused "
          "before sending, with the server's own messages")


def axe_check(browser, url, axe_js, label, key=None):
    """axe-core's checks on a page: no serious or critical violation. The script is injected with
    the CSP bypassed (the page's own CSP rightly refuses it), in a context of its own."""
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    if key:
        page.goto(url)
        page.evaluate("key => sessionStorage.setItem('otc-bridge-credential', JSON.stringify({kind: 'api-key', value: key}))", key)
    page.goto(url)
    if key:
        expect(page.locator("#key-form")).to_have_count(0, timeout=10_000)
    page.add_script_tag(path=axe_js)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    bad = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    for v in result["violations"]:
        print(f"browser: axe {label}: {v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])} nodes)", flush=True)
    assert not bad, json.dumps(bad, indent=1)[:4000]
    check(f"axe-core: no serious or critical violation on {label}")
    context.close()


def keyed_flow(browser, keyed, key, shots):
    context = browser.new_context()
    page = context.new_page()
    dialogs, errors = [], []
    watch(page, dialogs, errors)

    response = page.goto(keyed + "/")
    assert response.status == 401, response.status
    expect(page.get_by_role("heading", name="This bridge needs a key")).to_be_visible()
    assert "Hostile" not in page.content()
    check("a bridge with keys shows the key prompt and no catalog data")
    if shots:
        page.screenshot(path=os.path.join(shots, "key-prompt.png"), full_page=True)

    page.get_by_label("Key or token").fill("not-the-key")
    page.get_by_role("button", name="Open the catalog").click()
    expect(page.get_by_text("The key was not accepted")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('otc-bridge-credential')") is None
    check("a wrong key is refused and forgotten")

    page.get_by_label("Key or token").fill(key)
    page.get_by_role("button", name="Open the catalog").click()
    expect(page.get_by_role("heading", name="Catalog", exact=True)).to_be_visible(timeout=10_000)
    expect(page.locator("table.tools")).to_contain_text("Hostile.Describe")
    assert context.cookies() == [], context.cookies()
    check("the key opens the catalog; no cookie is set")

    # Links are followed with the key (the script fetches them with the header).
    page.get_by_role("link", name="Hostile.Describe").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Hostile.Describe", timeout=10_000)
    description = page.locator("section .description").first
    expect(description).to_contain_text("<script>window.__pwned=true;alert(1)</script>")
    expect(description).to_contain_text('<a href="javascript:alert(2)">')
    assert description.locator("a, script, img").count() == 0
    assert page.locator("a[href^='javascript:' i]").count() == 0
    # Click where the link would be: nothing happens.
    description.click()
    page.wait_for_timeout(300)
    assert dialogs == [], dialogs
    assert not page.evaluate("window.__pwned === true")
    check("markup and javascript: links in a description are inert text (no dialog fired)")
    if shots:
        page.screenshot(path=os.path.join(shots, "hostile.png"), full_page=True)

    # Reloading keeps the key for this tab only (sessionStorage), still with no cookie.
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Hostile.Describe", timeout=10_000)
    check("a reload keeps the key in the tab")
    assert dialogs == [], dialogs

    # The try-it form sends the key too: the call is authenticated.
    page.locator("[data-name='text']").fill("hi")
    page.answer = True
    page.get_by_role("button", name="Call (asks first)").click()
    expect(page.locator("#try-answer .answer-ok")).to_contain_text('"ok": true', timeout=15_000)
    expect(page.locator("#try-curl")).to_contain_text('-H "X-API-Key: $OTC_API_KEY"')
    assert key not in page.locator("#try-curl").inner_text(), "the curl line shows the key"
    assert [d[0] for d in dialogs] == ["confirm"], dialogs
    check("a call from the form carries the key; the curl line shows a placeholder, not the key")
    validation_matches_the_server(page, keyed, key)
    assert not errors, errors
    context.close()


def main():
    demo, keyed, key, axe_js = sys.argv[1:5]
    shots = sys.argv[5] if len(sys.argv) > 5 else None
    if shots:
        os.makedirs(shots, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            demo_flow(browser, demo, shots)
            keyed_flow(browser, keyed, key, shots)
            axe_check(browser, demo + "/", axe_js, "the catalog page")
            axe_check(browser, demo + "/ui/search?q=notes", axe_js, "the search page")
            axe_check(browser, demo + "/ui/tools/DemoNotes.CreateNote", axe_js, "a tool page")
            axe_check(browser, keyed + "/", axe_js, "the key prompt")
            axe_check(browser, keyed + "/ui/tools/Hostile.Describe", axe_js, "a tool page behind a key", key=key)
        finally:
            browser.close()
    print("browser: ok", flush=True)


if __name__ == "__main__":
    main()
