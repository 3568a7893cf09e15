"""Licensing pools through real clients, unchanged: f5-sdk 3.0.21's BIG-IQ
`cm.shared.licensing.pools_s` (pool create with `baseRegKey`, load by `id`, members created by
`deviceAddress`/`username`/`password`, refresh until LICENSED, delete with the credentials in the
body) and bigrest's `BIGIQ.load` of the collections, against `portcullis central` licensing a real
`portcullis serve`."""
import time

from bigrest.bigip import BIGIP
from bigrest.bigiq import BIGIQ
from f5.bigiq import ManagementRoot

KEY = "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1"
POOLS = "/mgmt/cm/shared/licensing/pools"


def _license(managed):
    b = BIGIP(managed.device, managed.user, managed.password, session_verify=False)
    stats = b.load("/mgmt/tm/sys/license").properties["entries"]
    return next(iter(stats.values()))["nestedStats"]["entries"]


def test_f5sdk_pool_member_grant_and_revoke(central_manager, managed):
    mgmt = ManagementRoot(central_manager.host, central_manager.user, central_manager.password,
                          port=central_manager.port)
    pools = mgmt.cm.shared.licensing.pools_s
    pool = pools.pool.create(name="f5sdk", baseRegKey=KEY)
    assert pool.state == "LICENSED"
    assert pools.pool.load(id=pool.uuid).baseRegKey == KEY
    assert [p.name for p in pools.get_collection()] == ["f5sdk"]

    member = pool.members_s.member.create(deviceAddress=managed.device,
                                          username=managed.user, password=managed.password)
    for _ in range(100):
        member.refresh()
        if member.state != "INSTALLING":
            break
        time.sleep(0.2)
    assert member.state == "LICENSED", member.raw
    assert _license(managed)["registrationKey"]["description"] == KEY

    bq = BIGIQ(central_manager.device, central_manager.user, central_manager.password,
               session_verify=False)
    listed = bq.load(f"{POOLS}/{pool.uuid}/members")
    assert [m.properties["deviceAddress"] for m in listed] == [managed.device]

    member.delete(username=managed.user, password=managed.password)
    assert _license(managed)["registrationKey"]["description"] == "none"
    pool.delete()
    assert pools.get_collection() == []
