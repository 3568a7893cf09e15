"""AS3 through bigrest 1.7.3 (`create`/`load`/`delete` on /mgmt/shared/appsvcs), as client-compat §5
describes: a declaration deploys, loads back whole and per tenant, redeploys as "no change", an
invalid one raises, and the tenant is deleted. The declared listener carries real traffic."""
import time
import urllib.request

import pytest
from bigrest.bigip import BIGIP
from bigrest.common.exceptions import RESTAPIError

from support import free_port, hello_upstream

DECLARE = "/mgmt/shared/appsvcs/declare"


@pytest.fixture(params=[False, True], ids=["basic", "token"])
def big(server, request):
    return BIGIP(server.device, server.user, server.password, request_token=request.param,
                 session_verify=False)


@pytest.fixture(scope="module")
def upstream():
    srv = hello_upstream(b"hello from the as3 upstream")
    yield srv.server_address[1]
    srv.shutdown()


def declaration(tenant, port, member_port):
    return {"class": "AS3", "action": "deploy", "persist": True, "declaration": {
        "class": "ADC", "schemaVersion": "3.18.0", "id": f"bigrest-{tenant}",
        tenant: {"class": "Tenant", "App": {
            "class": "Application", "template": "http",
            "serviceMain": {"class": "Service_HTTP", "virtualAddresses": ["127.0.0.1"],
                            "virtualPort": port, "pool": "web_pool"},
            "web_pool": {"class": "Pool", "monitors": ["tcp"],
                         "members": [{"servicePort": member_port, "serverAddresses": ["127.0.0.1"]}]}}}}}


def get_text(url):
    for _ in range(100):
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status, r.read().decode()
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def test_info(big):
    info = big.load("/mgmt/shared/appsvcs/info").properties
    major, minor = (int(x) for x in info["version"].split(".")[:2])
    assert (major, minor) >= (3, 18)
    assert info["schemaMinimum"] and info["schemaCurrent"]


def test_declare_load_redeploy_delete(big, request, upstream):
    tenant = "T_" + request.node.callspec.id
    port = free_port()
    decl = declaration(tenant, port, upstream)
    created = big.create(DECLARE, decl).properties
    result = created["results"][0]
    assert (result["code"], result["message"], result["tenant"]) == (200, "success", tenant)
    assert created["declaration"][tenant] == decl["declaration"][tenant]
    assert get_text(f"http://127.0.0.1:{port}/") == (200, "hello from the as3 upstream")

    assert big.load(DECLARE).properties[tenant] == decl["declaration"][tenant]
    assert big.load(f"{DECLARE}/{tenant}").properties[tenant]["App"]["serviceMain"]["virtualPort"] == port
    assert big.exist(f"/mgmt/tm/ltm/virtual/~{tenant}~App~serviceMain")

    again = big.create(DECLARE, decl).properties
    assert again["results"][0]["message"] == "no change"

    bad = declaration(tenant, "eighty", upstream)
    with pytest.raises(RESTAPIError) as err:
        big.create(DECLARE, bad)
    assert "422" in str(err.value) and "virtualPort" in str(err.value)
    assert get_text(f"http://127.0.0.1:{port}/")[0] == 200

    big.delete(f"{DECLARE}/{tenant}")
    assert not big.exist(f"/mgmt/tm/ltm/virtual/~{tenant}~App~serviceMain")
    assert tenant not in big.load(DECLARE).properties
