"""Starts real `portcullis serve` (controller) and `portcullis central` (central manager) processes
for the client tests (`support.start`).

REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE are removed from the environment: requests lets them override
`session.verify=False`, which breaks bigrest against a self-signed certificate.
"""
import os

import pytest

from support import start, stop

PASSWORD = "Client-tests-pw1"

for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
    os.environ.pop(var, None)


@pytest.fixture(scope="module")
def server():
    s = start("serve", PASSWORD)
    yield s
    stop(s)


@pytest.fixture(scope="module")
def central_manager():
    """A `portcullis central` (the BIG-IQ role)."""
    s = start("central", PASSWORD, "portcullis: central manager ready")
    yield s
    stop(s)


@pytest.fixture(scope="module")
def managed():
    """A controller for the central manager to trust, discover and import."""
    s = start("serve", PASSWORD)
    yield s
    stop(s)
