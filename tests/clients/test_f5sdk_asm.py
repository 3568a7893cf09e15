"""f5-sdk 3.0.21 ASM calls against portcullis serve, unchanged: upload, import-policy, poll,
policies list/load, attach, apply-policy, export, delete (client-compat.md §2, ASM)."""
import base64
import hashlib
import json

import pytest
from f5.bigip import ManagementRoot

from support import wait


@pytest.fixture(params=[False, True], ids=["basic", "token"])
def mgmt(server, request):
    return ManagementRoot(server.host, server.user, server.password, port=server.port,
                          token=request.param, verify=False)


def policy_doc(name):
    return {"policy": {
        "name": name,
        "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
        "enforcementMode": "blocking",
        "urls": [{"name": "*", "type": "wildcard", "method": "*", "$action": "delete"},
                 {"name": "/allowed", "method": "GET"}],
    }}


def test_asm_upload_import_apply(mgmt, request, tmp_path):
    sfx = request.node.callspec.id
    name = f"sdkpol_{sfx}"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(policy_doc(name)))
    mgmt.tm.asm.file_transfer.uploads.upload_file(str(path))

    tasks = mgmt.tm.asm.tasks
    task = tasks.import_policy_s.import_policy.create(name=name, filename=path.name)
    assert task.kind == "tm:asm:tasks:import-policy:import-policy-taskstate"
    assert task.status in ("NEW", "STARTED", "COMPLETED")
    wait(task)
    assert task.status == "COMPLETED", task.raw
    assert f"'/Common/{name}'" in task.result["message"]
    assert isinstance(task.lastUpdateMicros, float)

    pid = base64.urlsafe_b64encode(hashlib.md5(f"/Common/{name}".encode()).digest()).decode().rstrip("=")
    assert task.result["policyReference"]["link"].split("?")[0].endswith(f"/policies/{pid}")
    again = tasks.import_policy_s.import_policy.load(id=task.id)
    assert again.status == "COMPLETED"
    assert any(t.id == task.id for t in tasks.import_policy_s.get_collection())

    policies = mgmt.tm.asm.policies_s
    pol = policies.policy.load(id=pid)
    assert pol.kind == "tm:asm:policies:policystate"
    assert (pol.name, pol.partition, pol.fullPath) == (name, "Common", f"/Common/{name}")
    assert pol.enforcementMode == "blocking"
    assert pol.active is False
    assert any(p.id == pid for p in policies.get_collection())
    filtered = policies.get_collection(
        requests_params={"params": f"$filter=name eq '{name}'&$select=name,id"})
    assert [p["id"] for p in filtered] == [pid]  # without `kind` in $select, f5-sdk returns dicts

    vs = mgmt.tm.ltm.virtuals.virtual.create(name=f"asmvs_{sfx}", partition="Common",
                                             destination=f"10.7.7.{1 if sfx == 'basic' else 2}:80")
    pol.modify(virtualServers=[vs.fullPath])
    assert pol.virtualServers == [vs.fullPath]

    applied = tasks.apply_policy_s.apply_policy.create(policyReference={"link": pol.selfLink})
    assert applied.kind == "tm:asm:tasks:apply-policy:apply-policy-taskstate"
    wait(applied)
    assert applied.status == "COMPLETED", applied.raw
    pol.refresh()
    assert pol.active is True

    exported = tasks.export_policy_s.export_policy.create(
        policyReference={"link": pol.selfLink}, inline=True)
    wait(exported)
    assert exported.status == "COMPLETED", exported.raw
    assert json.loads(exported.result["file"])["policy"]["name"] == name

    pol.delete()
    assert not policies.policy.exists(id=pid)
    vs.delete()


def test_asm_import_failure_is_reported(mgmt, request, tmp_path):
    sfx = request.node.callspec.id
    path = tmp_path / f"broken_{sfx}.json"
    path.write_text('{"policy": {"name": "broken", "enforcementMode": "sometimes"}}')
    mgmt.tm.asm.file_transfer.uploads.upload_file(str(path))
    task = mgmt.tm.asm.tasks.import_policy_s.import_policy.create(
        fullPath=f"/Common/broken_{sfx}", filename=path.name)
    wait(task)
    assert task.status == "FAILURE"
    assert "enforcementMode" in task.result["message"]


def test_asm_policy_create_from_template(mgmt, request):
    sfx = request.node.callspec.id
    templates = mgmt.tm.asm.policy_templates_s.get_collection()
    fundamental = [t for t in templates if t.name == "POLICY_TEMPLATE_FUNDAMENTAL"]
    assert len(fundamental) == 1
    policies = mgmt.tm.asm.policies_s
    pol = policies.policy.create(name=f"tplpol_{sfx}", partition="Common",
                                 templateReference={"link": fundamental[0].selfLink})
    assert pol.kind == "tm:asm:policies:policystate"
    assert pol.templateReference["name"] == "POLICY_TEMPLATE_FUNDAMENTAL"
    assert pol.fullPath == f"/Common/tplpol_{sfx}"
    pol.modify(enforcementMode="transparent")
    assert pol.enforcementMode == "transparent"
    assert pol.isModified is True
    pid = pol.id
    pol.delete()  # f5-sdk empties the object: read nothing from it afterwards
    assert not policies.policy.exists(id=pid)
