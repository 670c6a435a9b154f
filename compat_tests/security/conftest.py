"""Fixtures of the SASL test modules: one broker per module (helpers.sasl_broker_overrides, on
compat_tests/conftest.py's module_broker_factory) and user carol's SCRAM credentials. Its
certificates are the root conftest.py's ``pki``; the TLS and cluster modules define their own
``broker``."""

from __future__ import annotations

import pytest

from compat_tests.security.helpers import create_carol, sasl_broker_overrides
from kafkapy.testing import free_port


@pytest.fixture(scope="module")
def broker(module_broker_factory, pki):
    port, ssl_port = free_port(), free_port()
    proc = module_broker_factory(
        sasl_broker_overrides(port, ssl_port, pki), name="sasl-broker", port=port
    )
    proc.ssl_bootstrap = f"127.0.0.1:{ssl_port}"
    return proc


@pytest.fixture(scope="module")
def carol(broker):
    return create_carol(broker)
