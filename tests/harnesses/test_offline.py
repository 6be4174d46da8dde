"""The harness tests' network is off (``conftest.no_network``): the Hugging Face libraries are told so,
a connection or lookup beyond this machine fails at once, and the machine itself stays reachable."""

from __future__ import annotations

import os
import socket
import urllib.request

import pytest


def test_the_hugging_face_libraries_are_told_to_stay_offline() -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        assert os.environ.get(name) == "1", name


def test_a_request_to_the_hub_is_refused_not_attempted() -> None:
    with pytest.raises(OSError, match="network off"):
        urllib.request.urlopen("https://huggingface.co/api/models", timeout=30)
    with pytest.raises(OSError, match="network off"):
        socket.create_connection(("93.184.216.34", 443), timeout=30)


def test_the_machine_itself_stays_reachable() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        client = socket.create_connection(server.getsockname(), timeout=5)
        client.close()
    finally:
        server.close()
