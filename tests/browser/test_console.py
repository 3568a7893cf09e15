"""The web console in a real browser: headless Chromium (Debian `chromium` + `chromium-driver`)
driven by Selenium against the real `portcullis serve`.

An administrator meets a block page, finds the request by the support ID it shows, accepts it,
applies the policy, and the same request then passes; an attack on the same parameter is still
blocked. A guest sees no accept button and a POST to it is refused. A screenshot of every page is
saved under target/ui-screenshots/ (CI artifacts).

The binary is support.binary()'s: $PORTCULLIS_BIN, else $CARGO_TARGET_DIR/debug/portcullis, else
target/debug/portcullis.
"""
import json
import os
import pathlib
import re
import shutil
import tempfile
import time

import pytest
import urllib3
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from support import free_port, hello_upstream, start, stop

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
SHOTS = TARGET / "ui-screenshots"
PASSWORD = "Browser-tests-pw1"
GUEST = ("auditor", "Auditor-pw-1")
# A benign redirect target that a medium-accuracy SSRF signature blocks (a false positive), and an
# SQL injection in the same parameter that a high-accuracy signature blocks.
FALSE_POSITIVE = "/redirect?next=http://127.0.0.1/home"
ATTACK = "/redirect?next=1%27%20or%20%271%27=%271"
http_pool = urllib3.PoolManager(cert_reqs="CERT_NONE")
urllib3.disable_warnings()


class Controller:
    """A `portcullis serve` (support.start) and the admin API calls the fixtures make."""

    def __init__(self):
        self.server = start("serve", PASSWORD)
        self.base = self.server.base
        self.auth = urllib3.make_headers(basic_auth=f"admin:{PASSWORD}")

    def rest(self, method, path, body=None, auth=None):
        headers = dict(auth or self.auth, **{"content-type": "application/json"})
        r = http_pool.request(method, self.base + path, headers=headers,
                              body=None if body is None else json.dumps(body))
        return r.status, (json.loads(r.data) if r.data else None)

    def ok(self, method, path, body=None):
        status, answer = self.rest(method, path, body)
        assert status == 200, (path, answer)
        return answer

    def stop(self):
        stop(self.server)


@pytest.fixture(scope="module")
def site():
    """A controller protecting a loopback upstream with a blocking policy; a guest user."""
    upstream = hello_upstream(b"hello from upstream")
    c = Controller()
    try:
        port = free_port()
        c.ok("POST", "/mgmt/tm/ltm/pool", {"name": "web", "members": [{"name": f"127.0.0.1:{upstream.server_port}"}]})
        c.ok("POST", "/mgmt/tm/ltm/virtual", {"name": "shop", "destination": f"127.0.0.1:{port}", "pool": "/Common/web"})
        policy = {"policy": {"name": "shop", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
                             "enforcementMode": "blocking", "signature-settings": {"signatureStaging": False}}}
        task = c.ok("POST", "/mgmt/tm/asm/tasks/import-policy",
                    {"file": json.dumps(policy), "policy": {"fullPath": "/Common/shop"}})
        wait_task(c, "/mgmt/tm/asm/tasks/import-policy/" + task["id"])
        pid = c.ok("GET", "/mgmt/tm/asm/policies?$filter=name%20eq%20%27shop%27")["items"][0]["id"]
        c.ok("PATCH", f"/mgmt/tm/asm/policies/{pid}", {"virtualServers": ["/Common/shop"]})
        task = c.ok("POST", "/mgmt/tm/asm/tasks/apply-policy", {"policy": {"fullPath": "/Common/shop"}})
        wait_task(c, "/mgmt/tm/asm/tasks/apply-policy/" + task["id"])
        c.ok("POST", "/mgmt/tm/auth/user", {"name": GUEST[0], "password": GUEST[1], "role": "guest"})
        c.proxy = f"http://127.0.0.1:{port}"
        c.policy_id = pid
        yield c
    finally:
        c.stop()
        upstream.shutdown()


def wait_task(c, path):
    for _ in range(200):
        t = c.ok("GET", path)
        if t["status"] in ("COMPLETED", "FAILURE"):
            assert t["status"] == "COMPLETED", t
            return t
        time.sleep(0.05)
    raise AssertionError(f"task {path} never finished")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium with a fresh profile; its temporary files stay in that profile, which
    goes at the end (CI checks that nothing is left behind)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="portcullis-chromium-")
    o = webdriver.ChromeOptions()
    o.binary_location = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    for arg in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--ignore-certificate-errors", "--window-size=1440,1000", "--user-data-dir=" + profile]:
        o.add_argument(arg)
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"),
                      env=dict(os.environ, TMPDIR=profile))
    try:
        d = webdriver.Chrome(service=service, options=o)
        try:
            yield d
        finally:
            d.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def shot(d, name):
    d.save_screenshot(str(SHOTS / f"{name}.png"))


def wait(d, what, timeout=10):
    return WebDriverWait(d, timeout).until(what)


def login(d, base, user, password):
    d.get(base + "/ui/")
    wait(d, EC.presence_of_element_located((By.ID, "username"))).send_keys(user)
    d.find_element(By.ID, "password").send_keys(password)
    shot(d, "login")
    d.find_element(By.ID, "login").click()
    wait(d, EC.text_to_be_present_in_element((By.ID, "whoami"), user))


def support_id_of_block_page(d, url):
    d.get(url)
    text = d.find_element(By.TAG_NAME, "body").text
    m = re.search(r"Your support ID is: (\d+)", text)
    assert m, f"{url} was not blocked: {text!r}"
    return m.group(1)


def test_support_id_to_deployed_fix_and_guest_refused(site, browser):
    d = browser
    started = time.monotonic()
    support_id = support_id_of_block_page(d, site.proxy + FALSE_POSITIVE)
    shot(d, "block-page")

    login(d, site.base, "admin", PASSWORD)
    shot(d, "overview")
    # Find the request by the support ID from the block page (the event store writes in batches).
    for _ in range(50):
        d.get(site.base + "/ui/events")
        box = d.find_element(By.ID, "support_id")
        box.send_keys(support_id)
        d.find_element(By.ID, "search").click()
        # The unfiltered list may show the link too: look only once the search page replaced it.
        wait(d, EC.staleness_of(box))
        links = d.find_elements(By.LINK_TEXT, support_id)
        if links:
            break
        time.sleep(0.1)
    shot(d, "events")
    links[0].click()
    wait(d, EC.text_to_be_present_in_element((By.ID, "detail-support-id"), support_id))
    preview = d.find_element(By.ID, "accept-preview").text
    assert "Disable signature 300006001" in preview and "parameter next" in preview, preview
    shot(d, "event-detail")
    d.find_element(By.ID, "accept-button").click()
    wait(d, EC.alert_is_present()).accept()
    notice = wait(d, EC.presence_of_element_located((By.ID, "notice"))).text
    assert "apply started" in notice, notice

    # The policy page: the pending change is applied; apply once more from here.
    d.get(f"{site.base}/ui/policies/{site.policy_id}")
    shot(d, "policy")
    d.find_element(By.ID, "apply").click()
    wait(d, EC.alert_is_present()).accept()
    wait(d, EC.presence_of_element_located((By.ID, "notice")))
    for _ in range(100):
        d.get(f"{site.base}/ui/policies/{site.policy_id}")
        if d.find_element(By.ID, "last-apply").text.startswith("COMPLETED"):
            break
        time.sleep(0.1)
    assert d.find_element(By.ID, "policy-state").text == "applied"

    # The same request now passes; the attack is still blocked.
    d.get(site.proxy + FALSE_POSITIVE)
    assert d.find_element(By.TAG_NAME, "body").text == "hello from upstream"
    support_id_of_block_page(d, site.proxy + ATTACK)
    elapsed = time.monotonic() - started
    print(f"support ID to deployed fix, in the browser: {elapsed:.1f} s")
    assert elapsed < 60, "an administrator gets from a support ID to a deployed fix in under a minute"

    for name, path in [("overview-day", "/ui/overview?span=day"),
                       ("suggestions", f"/ui/policies/{site.policy_id}/suggestions"),
                       ("policies", "/ui/policies"), ("virtuals", "/ui/virtuals")]:
        d.get(site.base + path)
        assert "Error" not in d.title, (path, d.title)
        shot(d, name)

    # A guest: no accept button, and the POST is refused by the role check.
    d.find_element(By.CSS_SELECTOR, "header form button").click()
    login(d, site.base, *GUEST)
    attack_id = support_id  # an event the guest can see
    d.get(f"{site.base}/ui/events/{attack_id}")
    assert not d.find_elements(By.ID, "accept-button")
    assert "cannot change policies" in d.find_element(By.ID, "accept-denied").text
    shot(d, "event-detail-guest")
    csrf = d.find_element(By.CSS_SELECTOR, "header input[name=csrf]").get_attribute("value")
    cookie = d.get_cookie("__Host-portcullis-session")["value"]
    r = http_pool.request(
        "POST", f"{site.base}/ui/events/{attack_id}/accept",
        headers={"cookie": f"__Host-portcullis-session={cookie}", "origin": site.base,
                 "content-type": "application/x-www-form-urlencoded"},
        body=f"csrf={csrf}")
    assert r.status == 401, r.data
    assert b"Authorization failed" in r.data
    status, _ = site.rest("POST", f"/mgmt/tm/asm/events/requests/{attack_id}/accept", {},
                          auth=urllib3.make_headers(basic_auth=f"{GUEST[0]}:{GUEST[1]}"))
    assert status == 401
