"""Fixtures of the SASL test modules: one broker per module (helpers.start_sasl_broker), its
certificates, and user carol's SCRAM credentials. The TLS and cluster modules define their own
``pki`` and ``broker``."""

from __future__ import annotations

import pytest

from compat_tests.security.helpers import create_carol, start_sasl_broker
from kafkapy.testing.tls import make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory, pki):
    proc = start_sasl_broker(tmp_path_factory.mktemp("sasl-broker"), pki)
    yield proc
    assert proc.stop() == 0, proc.log_text()[-3000:]


@pytest.fixture(scope="module")
def carol(broker):
    return create_carol(broker)
