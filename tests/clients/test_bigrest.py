"""bigrest 1.7.3 against portcullis serve, unchanged (session_verify=False, CA-bundle vars unset)."""
import pytest
from bigrest.bigip import BIGIP
from bigrest.common.exceptions import RESTAPIError


@pytest.fixture(params=[False, True], ids=["basic", "token"])
def big(server, request):
    return BIGIP(server.device, server.user, server.password, request_token=request.param,
                 session_verify=False)


def test_crud(big, request):
    name = "brpool_" + request.node.callspec.id
    created = big.create("/mgmt/tm/ltm/pool", {"name": name, "monitor": "tcp"})
    assert created.properties["fullPath"] == f"/Common/{name}"
    assert big.exist(f"/mgmt/tm/ltm/pool/{name}")
    obj = big.modify(f"/mgmt/tm/ltm/pool/~Common~{name}", {"description": "m"})
    assert obj.properties["description"] == "m"
    obj.properties["description"] = "saved"
    big.save(obj)
    assert big.load(f"/mgmt/tm/ltm/pool/~Common~{name}").properties["description"] == "saved"
    assert any(p.properties["name"] == name for p in big.load("/mgmt/tm/ltm/pool"))
    big.delete(f"/mgmt/tm/ltm/pool/~Common~{name}")
    assert not big.exist(f"/mgmt/tm/ltm/pool/~Common~{name}")


def test_upload(big, request, tmp_path):
    path = tmp_path / f"big_{request.node.callspec.id}.bin"
    path.write_bytes(b"x" * (1024 * 1024 + 4096))
    big.upload("/mgmt/shared/file-transfer/uploads", str(path))
    f = big.create("/mgmt/tm/sys/file/ifile",
                   {"name": path.name, "sourcePath": f"file:/var/config/rest/downloads/{path.name}"})
    assert f.properties["size"] == 1024 * 1024 + 4096
    out = tmp_path / "back" / path.name
    out.parent.mkdir()
    big.download("/mgmt/shared/file-transfer/downloads", str(out))
    assert out.read_bytes() == path.read_bytes()


def test_errors_surface(big):
    with pytest.raises(RESTAPIError):
        big.load("/mgmt/tm/util/bash")
    with pytest.raises(RESTAPIError):
        big.create("/mgmt/tm/ltm/pool", {"name": "../x"})


def test_transaction_is_atomic(big, request):
    sfx = request.node.callspec.id
    with big:
        big.create("/mgmt/tm/ltm/pool", {"name": f"tx_a_{sfx}"})
        big.create("/mgmt/tm/ltm/pool", {"name": f"tx_b_{sfx}", "members": [{"name": "10.1.1.1:80"}]})
        assert not big.exist(f"/mgmt/tm/ltm/pool/tx_a_{sfx}"), "queued, not yet applied"
    assert big.exist(f"/mgmt/tm/ltm/pool/tx_a_{sfx}")
    assert big.exist(f"/mgmt/tm/ltm/pool/tx_b_{sfx}")
    big.transaction_create()
    big.create("/mgmt/tm/ltm/pool", {"name": f"tx_c_{sfx}"})
    big.create("/mgmt/tm/ltm/pool", {"name": f"tx_a_{sfx}"})  # duplicate: fails at commit
    with pytest.raises(RESTAPIError):
        big.transaction_commit()
    assert not big.exist(f"/mgmt/tm/ltm/pool/tx_c_{sfx}"), "nothing of a failed transaction applies"


def test_show_stats(big, request):
    name = "stats_" + request.node.callspec.id
    big.create("/mgmt/tm/ltm/pool", {"name": name, "members": [{"name": "10.2.2.2:80"}]})
    stats = big.show(f"/mgmt/tm/ltm/pool/~Common~{name}")
    assert stats.properties["memberCnt"]["value"] == 1
    assert stats.properties["tmName"]["description"] == f"/Common/{name}"
