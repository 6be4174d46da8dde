"""Fixtures of the harness tests: the default sample (the default bank's 340 items, extracted from the
committed PDFs, and the probe's seeded 60) and the default probe config. The harnesses themselves are an
optional extra: ``harness_support.require``."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from blindmcq.config.files import default_choices, load_groups, load_label_schemes
from blindmcq.datasets.items import Item, read_items
from blindmcq.harnesses.documents import ProbeConfig
from blindmcq.harnesses.export import GROUPS
from blindmcq.tasks.probe import sample_items

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _local(host: Any) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:  # a name other than localhost: resolving it is already the network
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness tests run with the network off (docs/harnesses.md, Offline): the Hugging Face
    libraries told so, and any connection or name lookup beyond this machine refused at once, so a
    harness that reaches for the Hub fails the test instead of retrying for a minute."""
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def refuse(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
            raise OSError(f"network off in the harness tests: connect to {address[0]}")

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        refuse(sock, address)
        connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
        refuse(sock, address)
        return connect_ex(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _local(host):
            raise socket.gaierror(f"network off in the harness tests: lookup of {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


@pytest.fixture(scope="session")
def bank_items(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default bank's items.jsonl, built from defaults/bank/ as the corpus stage builds it (~4 s)."""
    from blindmcq.datasets.registry import build_corpus

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    out = tmp_path_factory.mktemp("corpus")
    old = Path.cwd()
    os.chdir(repo_root)  # the dataset config names defaults/ relative to the checkout
    try:
        build_corpus(params["dataset"], out, seed=0)
    finally:
        os.chdir(old)
    return out / "items.jsonl"


@pytest.fixture(scope="session")
def default_sample(bank_items: Path) -> list[Item]:
    """The probe's default sample (conf/probe/default.yaml: 60 items, seed 0)."""
    probe = load_groups(("probe",)).option("probe", default_choices()["probe"])
    return sample_items(read_items(bank_items), probe.sample, probe.seed)


@pytest.fixture(scope="session")
def probe_config() -> ProbeConfig:
    """The default presentation: original phrasing, Latin labels, direct, blind/full/forced, sl."""
    options = load_groups(GROUPS)
    choices = default_choices()  # conf/config.yaml's
    groups = {g: options.option(g, choices[g]) for g in GROUPS}
    return ProbeConfig(label_schemes=load_label_schemes(), **groups)
