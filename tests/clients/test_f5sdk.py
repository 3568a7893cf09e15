"""f5-sdk 3.0.21 (on f5-icontrol-rest 1.3.13) against portcullis serve, unchanged."""
import os

import pytest
from f5.bigip import ManagementRoot
from icontrol.exceptions import iControlUnexpectedHTTPError


@pytest.fixture(params=[False, True], ids=["basic", "token"])
def mgmt(server, request):
    return ManagementRoot(server.host, server.user, server.password, port=server.port,
                          token=request.param, verify=False)


def test_connect_reads_version(mgmt):
    assert mgmt.tmos_version.startswith("15.1")


def test_pool_lifecycle(mgmt, request):
    name = "sdkpool_" + request.node.callspec.id
    pools = mgmt.tm.ltm.pools
    pool = pools.pool.create(name=name, partition="Common", monitor="http")
    assert pool.kind == "tm:ltm:pool:poolstate"
    assert pools.pool.exists(name=name, partition="Common")
    m = pool.members_s.members.create(name="10.0.0.5:80", partition="Common")
    assert m.address == "10.0.0.5"
    pool.modify(description="modified")
    assert pool.description == "modified"
    pool.description = "updated"
    pool.update()
    loaded = pools.pool.load(name=name, partition="Common")
    assert loaded.description == "updated"
    assert len(loaded.members_s.get_collection()) == 1
    assert any(p.name == name for p in pools.get_collection())
    loaded.delete()
    assert not pools.pool.exists(name=name, partition="Common")
    with pytest.raises(iControlUnexpectedHTTPError) as e:
        pools.pool.load(name=name, partition="Common")
    assert e.value.response.status_code == 404


def test_virtual_with_pool(mgmt, request):
    sfx = request.node.callspec.id
    mgmt.tm.ltm.pools.pool.create(name="vpool_" + sfx, partition="Common")
    vs = mgmt.tm.ltm.virtuals.virtual.create(name="vs_" + sfx, partition="Common",
                                             destination="10.9.9.9:80", pool="vpool_" + sfx)
    assert vs.destination == "/Common/10.9.9.9:80"
    assert vs.pool == "/Common/vpool_" + sfx
    vs.modify(description="x")
    vs.update()
    vs.delete()


def test_data_group_options(mgmt, request):
    name = "dg_" + request.node.callspec.id
    dgs = mgmt.tm.ltm.data_group.internals
    dg = dgs.internal.create(name=name, partition="Common", type="string",
                             records=[{"name": "k1", "data": "v1"}])
    dg.modify(requests_params={"params": "options=records add { k2 { data v2 } }"})
    assert {r["name"] for r in dg.records} == {"k1", "k2"}
    dg.modify(requests_params={"params": "options=records delete { k1 }"})
    assert [r["name"] for r in dg.records] == ["k2"]
    dg.delete()


def test_upload_and_ifile(mgmt, request, tmp_path):
    sfx = request.node.callspec.id
    path = tmp_path / f"ifile_{sfx}.txt"
    path.write_bytes(os.urandom(600 * 1024))
    mgmt.shared.file_transfer.uploads.upload_file(str(path))
    f = mgmt.tm.sys.file.ifiles.ifile.create(
        name="if_" + sfx, sourcePath=f"file:/var/config/rest/downloads/{path.name}")
    assert f.kind == "tm:sys:file:ifile:ifilestate"
    assert f.size == 600 * 1024
    assert f.checksum.startswith(f"SHA1:{600 * 1024}:")


def test_token_timeout(server):
    mgmt = ManagementRoot(server.host, server.user, server.password, port=server.port,
                          token=True, verify=False)
    mgmt.tm.sys.provision.get_collection()
    tok = mgmt.icrs.token
    t = mgmt.shared.authz.tokens_s.token.load(name=tok)
    t.modify(timeout=3600)
    assert t.timeout == 3600


def test_delete_collection(mgmt, request):
    sfx = request.node.callspec.id
    for i in range(3):
        mgmt.tm.ltm.pools.pool.create(name=f"gone_{sfx}_{i}", partition="Common")
    mgmt.tm.ltm.pools.pool.create(name=f"kept_{sfx}", partition="Common")
    mgmt.tm.ltm.pools.delete_collection(requests_params={"params": f"options=gone_{sfx}_*"})
    names = {p.name for p in mgmt.tm.ltm.pools.get_collection()}
    assert f"kept_{sfx}" in names
    assert not any(n.startswith(f"gone_{sfx}_") for n in names)


def test_tls_virtual_from_uploaded_cert_and_key(mgmt, server, request):
    sfx = request.node.callspec.id
    for src, ext in (("admin-cert.pem", "crt"), ("admin-key.pem", "key")):
        path = os.path.join(server.data_dir, src)
        target = os.path.join(os.path.dirname(path), f"site_{sfx}.{ext}")
        with open(path, "rb") as f, open(target, "wb") as g:
            g.write(f.read())
        mgmt.shared.file_transfer.uploads.upload_file(target)
    cert = mgmt.tm.sys.file.ssl_certs.ssl_cert.create(
        name=f"site_{sfx}.crt", sourcePath=f"file:/var/config/rest/downloads/site_{sfx}.crt")
    assert cert.fingerprint.startswith("SHA256/")
    mgmt.tm.sys.file.ssl_keys.ssl_key.create(
        name=f"site_{sfx}.key", sourcePath=f"file:/var/config/rest/downloads/site_{sfx}.key")
    prof = mgmt.tm.ltm.profile.client_ssls.client_ssl.create(
        name=f"cssl_{sfx}", cert=f"/Common/site_{sfx}.crt", key=f"site_{sfx}.key")
    assert prof.kind == "tm:ltm:profile:client-ssl:client-sslstate"
    assert prof.key == f"/Common/site_{sfx}.key"
    vs = mgmt.tm.ltm.virtuals.virtual.create(
        name=f"tls_{sfx}", destination="10.3.3.3:443",
        profiles=[{"name": "tcp", "context": "all"}, {"name": f"cssl_{sfx}", "context": "clientside"}])
    names = sorted(p.name for p in vs.profiles_s.get_collection())
    assert names == sorted(["tcp", f"cssl_{sfx}"])
