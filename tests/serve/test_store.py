"""The durable provenance store: SQLite, 0600, no text unless asked, retention, deletion,
and through the app (records survive a new app on the same file)."""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from budgetctx.serve import ServeConfig, create_app
from budgetctx.serve._security import SecurityConfig
from budgetctx.serve._store import SqliteProvenanceStore, default_provenance_path

NOTE = "Chest pain at rest. Troponin negative twice. Potassium 3.1, repleted. Discharged home."


def _record() -> dict[str, object]:
    return {
        "endpoint": "chat.completions",
        "messages": [{"role": "user", "content": NOTE}],
        "compressed": [{"index": 1, "units": [{"id": 0, "text": NOTE, "spans": [[0, 19]]}]}],
        "query": "potassium?",
        "documents": [{"id": "n1", "metadata": {"mrn": "MRN-998877"}}],
        "prompt_tokens": 40,
    }


def test_offsets_and_counts_only_unless_opted_in(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    store = SqliteProvenanceStore(path)
    pid = store.put(_record())
    got = store.get(pid)
    assert got == {
        "endpoint": "chat.completions",
        "compressed": [{"index": 1, "units": [{"id": 0, "spans": [[0, 19]]}]}],
        "documents": [{"id": "n1"}],
        "prompt_tokens": 40,
    }
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"Troponin" not in raw and b"potassium?" not in raw and b"MRN-998877" not in raw
    with_text = SqliteProvenanceStore(tmp_path / "t.sqlite3", keep_text=True)
    assert with_text.get(with_text.put(_record())) == _record()


def test_the_files_are_0600(tmp_path: Path) -> None:
    store = SqliteProvenanceStore(tmp_path / "p.sqlite3")
    for _ in range(3):
        store.put(_record())
    files = list(tmp_path.iterdir())
    assert files
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name


def test_retention_limit_and_deletion(tmp_path: Path) -> None:
    store = SqliteProvenanceStore(tmp_path / "p.sqlite3", retention_s=0.2, max_records=3)
    ids = [store.put({"n": i}) for i in range(5)]
    assert len(store) == 3 and store.get(ids[0]) is None and store.get(ids[4]) == {"n": 4}
    assert store.delete(ids[4]) and store.get(ids[4]) is None and not store.delete(ids[4])
    time.sleep(0.3)
    assert store.get(ids[3]) is None  # expired
    store.put({"n": 9})
    assert len(store) == 1  # the expired ones were deleted on write


def test_bad_settings_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_records"):
        SqliteProvenanceStore(tmp_path / "p.sqlite3", max_records=0)


def test_records_survive_a_restart_through_the_app(tmp_path: Path) -> None:
    path = str(tmp_path / "prov.sqlite3")
    config = ServeConfig(provenance_path=path)
    with TestClient(create_app(config)) as client:
        r = client.post("/v1/context", json={"text": NOTE, "budget": 8})
        assert r.status_code == 200
        pid = r.headers["x-budgetctx-provenance-id"]
    with TestClient(create_app(config)) as client:  # a new process would see the same file
        record = client.get(f"/v1/provenance/{pid}").json()
        assert record["context"]["tokens_used"] <= 8
        assert "text" not in record["context"]
        assert all("spans" in u and "text" not in u for u in record["context"]["units"])
        assert client.delete(f"/v1/provenance/{pid}").status_code == 204
        assert client.get(f"/v1/provenance/{pid}").status_code == 404
        assert client.delete(f"/v1/provenance/{pid}").status_code == 404


def test_sqlite_is_the_default_in_the_state_folder(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert ServeConfig().provenance_store == "sqlite"
    path = default_provenance_path()
    assert path == tmp_path / "state" / "budgetctx" / "provenance.sqlite3"
    with TestClient(create_app(ServeConfig())) as client:
        r = client.post("/v1/context", json={"text": NOTE, "budget": 8})
        pid = r.headers["x-budgetctx-provenance-id"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir())
    assert b"Troponin" not in raw and b"Chest pain" not in raw
    with TestClient(create_app(ServeConfig())) as client:  # a restart: the same default file
        assert client.get(f"/v1/provenance/{pid}").json()["context"]["tokens_used"] <= 8


def test_memory_is_selectable_and_writes_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    config = ServeConfig().with_overrides(provenance_store="memory")
    with TestClient(create_app(config)) as client:
        r = client.post("/v1/context", json={"text": NOTE, "budget": 8})
        pid = r.headers["x-budgetctx-provenance-id"]
        assert "text" in client.get(f"/v1/provenance/{pid}").json()["context"]
    with TestClient(create_app(config)) as client:  # gone at restart
        assert client.get(f"/v1/provenance/{pid}").status_code == 404
    assert not (tmp_path / "state").exists()
    with pytest.raises(ValueError, match=r"provenance_store.*'sqlite' or remove"):
        ServeConfig(provenance_store="memory", provenance_path=str(tmp_path / "p.sqlite3"))
    with pytest.raises(ValueError, match="provenance_store"):
        ServeConfig(provenance_store="disk")


def test_cli_flags_choose_the_store(tmp_path: Path) -> None:
    path = str(tmp_path / "p.sqlite3")
    chosen = ServeConfig().with_overrides(provenance_path=path)
    assert (chosen.provenance_store, chosen.provenance_path) == ("sqlite", path)
    memory = chosen.with_overrides(provenance_store="memory")
    assert (memory.provenance_store, memory.provenance_path) == ("memory", None)


def test_a_record_stays_its_owners_after_a_restart(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("BUDGETCTX_TEST_KEYS", "key-one-0123456789abcdef,key-two-0123456789abcdef")
    path = str(tmp_path / "prov.sqlite3")
    config = ServeConfig(
        provenance_path=path, security=SecurityConfig(api_keys_env="BUDGETCTX_TEST_KEYS")
    )
    one = {"authorization": "Bearer key-one-0123456789abcdef"}
    two = {"authorization": "Bearer key-two-0123456789abcdef"}
    with TestClient(create_app(config)) as client:
        r = client.post("/v1/context", json={"text": NOTE, "budget": 8}, headers=one)
        pid = r.headers["x-budgetctx-provenance-id"]
    with TestClient(create_app(config)) as client:
        assert client.get(f"/v1/provenance/{pid}", headers=two).status_code == 404
        assert client.delete(f"/v1/provenance/{pid}", headers=two).status_code == 404
        assert client.get(f"/v1/provenance/{pid}", headers=one).status_code == 200


def test_an_unwritable_path_fails_at_start_with_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot be opened.*--provenance-store memory") as info:
        create_app(ServeConfig(provenance_path=str(blocker / "p.sqlite3")))
    assert getattr(info.value, "parameter", None) == "provenance_path"
