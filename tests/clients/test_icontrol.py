"""f5-icontrol-rest 1.3.13 session with token authentication against portcullis serve."""
import pytest
from icontrol.exceptions import iControlUnexpectedHTTPError
from icontrol.session import iControlRESTSession


def test_token_session(server):
    s = iControlRESTSession(server.user, server.password, token=True)
    base = f"https://{server.device}/mgmt/tm/"
    r = s.get(base + "sys/")
    assert "ver=" in r.json()["selfLink"]
    r = s.post(base + "ltm/rule/", json={"name": "icr_rule", "apiAnonymous": "when HTTP_REQUEST {}"})
    assert r.json()["kind"] == "tm:ltm:rule:rulestate"
    r = s.get(base + "ltm/rule/", name="icr_rule", partition="Common", uri_as_parts=True)
    assert r.json()["apiAnonymous"] == "when HTTP_REQUEST {}"
    s.delete(base + "ltm/rule/", name="icr_rule", partition="Common", uri_as_parts=True)
    with pytest.raises(iControlUnexpectedHTTPError):
        s.get(base + "ltm/rule/", name="icr_rule", partition="Common", uri_as_parts=True)
