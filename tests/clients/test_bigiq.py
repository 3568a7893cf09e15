"""BIG-IQ clients against `portcullis central` managing a real `portcullis serve`, unchanged:
bigrest 1.7.3 `BIGIQ` (task_start must get 202, task_wait polls `status` until FINISHED) and
f5-sdk 3.0.21 `f5.bigiq.ManagementRoot` (login provider `local`, device-info, resolver devices,
the declare-mgmt-authority kind)."""
import time

import pytest
from bigrest.bigip import BIGIP
from bigrest.bigiq import BIGIQ
from bigrest.common.exceptions import RESTAPIError
from f5.bigiq import ManagementRoot

TRUST = "/mgmt/cm/global/tasks/device-trust"
DISCOVERY = "/mgmt/cm/global/tasks/device-discovery"
IMPORT = "/mgmt/cm/adc-core/tasks/declare-mgmt-authority"
DEVICES = "/mgmt/shared/resolver/device-groups/cm-bigip-allBigIpDevices/devices"


def _ref(machine_id):
    return {"link": f"https://localhost/mgmt/cm/system/machineid-resolver/{machine_id}"}


@pytest.fixture(scope="module")
def bq(central_manager):
    return BIGIQ(central_manager.device, central_manager.user, central_manager.password,
                 session_verify=False)


@pytest.fixture(scope="module")
def trusted(bq, managed):
    """Trusts the controller (f5-ansible's body) and returns its machine id."""
    task = bq.task_start(TRUST, {
        "address": managed.device, "userName": managed.user, "password": managed.password,
        "clusterName": "", "useBigiqSync": False, "name": f"trust_{managed.device}"})
    assert task.properties["status"] == "STARTED"
    bq.task_wait(task, interval=1)
    done = bq.load(f"{TRUST}/{task.properties['id']}")
    assert done.properties["currentStep"] == "DONE"
    return done.properties["machineId"]


def test_bigrest_token_login_with_either_provider(central_manager):
    for provider in ("local", "tmos"):
        b = BIGIQ(central_manager.device, central_manager.user, central_manager.password,
                  login_provider=provider, request_token=True, session_verify=False)
        assert b.load("/mgmt/shared/identified-devices/config/device-info").properties[
            "product"] == "BIG-IQ"


def test_bigrest_trust_discover_import(bq, trusted, managed):
    devices = bq.load(DEVICES)
    assert [d.properties["machineId"] for d in devices] == [trusted]
    assert bq.exist(DEVICES)
    task = bq.task_start(DISCOVERY, {"deviceReference": _ref(trusted),
                                     "moduleList": [{"module": "adc_core"}], "status": "STARTED"})
    bq.task_wait(task, interval=1)
    found = bq.load(f"{DISCOVERY}?$filter=deviceReference/link eq '*{trusted}*' and status eq 'FINISHED'")
    assert [t.properties["id"] for t in found] == [task.properties["id"]]
    imp = bq.task_start(IMPORT, {"deviceReference": _ref(trusted), "status": "STARTED",
                                 "name": "import_bigrest"})
    bq.task_wait(imp, interval=1)
    assert bq.load(f"{IMPORT}/{imp.properties['id']}").properties["currentStep"] == "DONE"
    # Re-import by modify (PATCH) of the finished task.
    again = bq.modify(f"{IMPORT}/{imp.properties['id']}",
                      {"status": "STARTED", "deviceReference": _ref(trusted)})
    assert again.properties["status"] == "STARTED"
    bq.task_wait(again, interval=1)


def test_bigrest_failed_task_raises(bq):
    task = bq.task_start(TRUST, {"address": "127.0.0.1:1", "userName": "admin", "password": "x"})
    with pytest.raises(RESTAPIError):
        bq.task_wait(task, interval=1)
    failed = bq.load(f"{TRUST}/{task.properties['id']}")
    assert failed.properties["status"] == "FAILED"
    assert "unreachable" in failed.properties["errorMessage"]


def test_f5sdk_bigiq(central_manager, trusted, managed, bq):
    mgmt = ManagementRoot(central_manager.host, central_manager.user, central_manager.password,
                          port=central_manager.port)
    assert mgmt.tmos_version == "8.3.0"
    devs = mgmt.shared.resolver.device_groups.cm_bigip_allbigipdevices.devices_s.get_collection()
    assert [d.machineId for d in devs] == [trusted]
    asm_served = BIGIP(managed.device, managed.user, managed.password,
                       session_verify=False).exist("/mgmt/tm/asm/policies")
    if asm_served:
        disc = bq.task_start(DISCOVERY, {"deviceReference": _ref(trusted), "moduleList": ["asm"]})
        bq.task_wait(disc, interval=1)
    coll = mgmt.cm.asm.tasks.declare_mgmt_authority_s
    task = coll.declare_mgmt_authority.create(name="import_asm", deviceReference=_ref(trusted),
                                               status="STARTED")
    assert task.kind == "cm:asm:tasks:declare-mgmt-authority:dmataskitemstate"
    deadline = time.time() + 60
    while True:
        loaded = coll.declare_mgmt_authority.load(id=task.id)
        if loaded.status != "STARTED" or time.time() > deadline:
            break
        time.sleep(0.5)
    if asm_served:
        assert (loaded.status, loaded.currentStep) == ("FINISHED", "DONE")
    else:
        # No ASM on this controller build: the task fails and says why.
        assert loaded.status == "FAILED"
        assert "asm" in loaded.errorMessage
    assert any(t.id == task.id for t in coll.get_collection())
