"""Request events and security log profiles with real clients against portcullis serve: f5-sdk
creates a log profile and its `application` entry (the real sub-collection) and attaches it to a
virtual; a policy is imported and applied with f5-sdk; a blocked request is then found with
bigrest under /mgmt/tm/asm/events/requests by its support id, and its RFC 5424 message reaches a
UDP syslog receiver (docs/events.md)."""
import json
import re
import socket
import time
import urllib.error
import urllib.request

from bigrest.bigip import BIGIP
from f5.bigip import ManagementRoot

from support import free_port, hello_upstream, wait


def blocked(port, path):
    deadline = time.time() + 10
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5)
        except urllib.error.HTTPError as e:
            if e.code == 403:
                return json.loads(e.read())["supportID"]
        except OSError:
            pass
        assert time.time() < deadline, "never blocked"
        time.sleep(0.2)


RFC5424 = re.compile(
    r"^<(\d{1,3})>1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z [!-~]{1,255} [!-~]{1,48} "
    r"[!-~]{1,128} [!-~]{1,32} \[asm@32473 (.*?)\] (.*)$")


def test_log_profile_policy_and_event_with_real_clients(server, tmp_path):
    mgmt = ManagementRoot(server.host, server.user, server.password, port=server.port,
                          verify=False)
    big = BIGIP(server.device, server.user, server.password, session_verify=False)
    syslog = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    syslog.bind(("127.0.0.1", 0))
    syslog.settimeout(10)

    profile = mgmt.tm.security.log.profiles.profile.create(name="siem", partition="Common")
    assert profile.kind == "tm:security:log:profile:profilestate"
    app = profile.applications.application.create(
        name="siem", partition="Common", localStorage="enabled", remoteStorage="remote",
        protocol="udp", servers=[{"name": "127.0.0.1:%d" % syslog.getsockname()[1]}],
        filter=[{"name": "request-type", "values": ["illegal"]}])
    assert app.kind == "tm:security:log:profile:application:applicationstate"
    assert app.fullPath == "/Common/siem"
    assert profile.applications.application.exists(name="siem", partition="Common")

    web = hello_upstream(b"hello")
    pool = mgmt.tm.ltm.pools.pool.create(name="evpool", partition="Common")
    pool.members_s.members.create(name="127.0.0.1:%d" % web.server_address[1],
                                  partition="Common")
    port = free_port()
    vs = mgmt.tm.ltm.virtuals.virtual.create(name="evvs", partition="Common",
                                             destination=f"127.0.0.1:{port}",
                                             pool="/Common/evpool")
    vs.modify(securityLogProfiles=["/Common/siem"])
    assert vs.securityLogProfiles == ["/Common/siem"]

    doc = {"policy": {"name": "evpol", "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
                      "enforcementMode": "blocking",
                      "urls": [{"name": "*", "type": "wildcard", "method": "*",
                                "$action": "delete"},
                               {"name": "/allowed", "method": "GET"}]}}
    path = tmp_path / "evpol.json"
    path.write_text(json.dumps(doc))
    mgmt.tm.asm.file_transfer.uploads.upload_file(str(path))
    tasks = mgmt.tm.asm.tasks
    task = wait(tasks.import_policy_s.import_policy.create(name="evpol", filename=path.name))
    assert task.status == "COMPLETED", task.raw
    pol = mgmt.tm.asm.policies_s.policy.load(
        id=task.result["policyReference"]["link"].split("?")[0].rsplit("/", 1)[1])
    pol.modify(virtualServers=["/Common/evvs"])
    applied = wait(tasks.apply_policy_s.apply_policy.create(policyReference={"link": pol.selfLink}))
    assert applied.status == "COMPLETED", applied.raw

    support_id = blocked(port, "/not-allowed")
    deadline = time.time() + 10
    while True:
        found = big.load(f"/mgmt/tm/asm/events/requests?$filter=supportId eq '{support_id}'")
        if found:
            break
        assert time.time() < deadline, "event not stored"
        time.sleep(0.1)
    (event,) = found
    props = event.properties
    assert props["supportId"] == support_id
    assert props["requestStatus"] == "blocked"
    assert props["virtualServerName"] == "/Common/evvs"
    assert props["policyName"] == "/Common/evpol"
    assert props["violations"][0]["name"] == "VIOL_URL"
    one = big.load(f"/mgmt/tm/asm/events/requests/{support_id}")
    assert one.properties["url"] == "/not-allowed"
    newest = big.load("/mgmt/tm/asm/events/requests?$top=1")
    assert [e.properties["id"] for e in newest] == [support_id]

    data, _ = syslog.recvfrom(65536)
    m = RFC5424.match(data.decode())
    assert m, data
    assert f'supportId="{support_id}"' in m.group(2)
    assert 'request_status="blocked"' in m.group(3)

    vs.modify(securityLogProfiles=[])
    profile.delete()
    assert not mgmt.tm.security.log.profiles.profile.exists(name="siem", partition="Common")
    web.shutdown()
