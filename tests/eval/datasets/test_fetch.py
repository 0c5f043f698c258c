"""fetch_dataset against a real local HTTP server: mirror, official layout, corruption, retries."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from budgetctx import DatasetError, InvalidParameterError
from budgetctx.eval.datasets import _fetch, fetch_dataset, list_datasets, load_dataset
from budgetctx.eval.datasets._manifest import LEVAL, MTSAMPLES, PUBMEDQA, mtsamples_files
from budgetctx.eval.datasets._registry import get_dataset

from .conftest import FileServer

FETCHABLE = [n for n in list_datasets() if get_dataset(n).fetchable]
Serve = Callable[[Path], FileServer]


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".part")]


@pytest.fixture(scope="module")
def mirrored(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, FileServer]]:
    """Every fetchable dataset fetched once from a mirror serving the shared folder."""
    root = tmp_path_factory.mktemp("fetched")
    server = FileServer(shared_data)
    try:
        for name in FETCHABLE:
            fetch_dataset(name, data_dir=root, mirror=server.url, timeout=10)
        yield root, server
    finally:
        server.close()


@pytest.mark.parametrize("name", FETCHABLE)
def test_mirror_fetch_gives_the_same_examples(
    mirrored: tuple[Path, FileServer], shared_data: Path, name: str
) -> None:
    root, _ = mirrored
    assert load_dataset(name, data_dir=root) == load_dataset(name, data_dir=shared_data)
    for path in get_dataset(name).expected_files():
        assert (root / path).read_bytes() == (shared_data / path).read_bytes(), path


def test_mirror_fetch_downloads_each_file_once(mirrored: tuple[Path, FileServer]) -> None:
    root, server = mirrored
    # leval's four files were already there from the leval:<task> fetches.
    assert len(server.requests) == len(set(server.requests)) == 7 + 100 + 6 + 2 + 111
    assert "/mtsamples_discharge/raw_html/INDEX.tsv" not in server.requests  # built locally
    assert _leftovers(root) == []


def test_refetch_skips_verified_files(
    mirrored: tuple[Path, FileServer], serve: Serve, shared_data: Path
) -> None:
    root, _ = mirrored
    server = serve(shared_data)
    seen: list[tuple[str, str]] = []
    report = fetch_dataset(
        "mtsamples", data_dir=root, mirror=server.url, progress=lambda p, a: seen.append((p, a))
    )
    assert server.requests == []
    assert report.downloaded == () and report.generated == () and report.bytes_downloaded == 0
    assert len(report.skipped) == 113 and {a for _, a in seen} == {"skipped"}
    report = fetch_dataset("pubmedqa", data_dir=root, mirror=server.url)
    assert server.requests == [] and len(report.skipped) == 2


def test_fetch_report(serve: Serve, shared_data: Path, tmp_path: Path) -> None:
    server = serve(shared_data)
    seen: list[tuple[str, str]] = []
    report = fetch_dataset(
        "leval:news_summ",
        data_dir=tmp_path,
        mirror=server.url.rstrip("/"),
        progress=lambda p, a: seen.append((p, a)),
    )
    size = (shared_data / "leval" / "news_summ.jsonl").stat().st_size
    assert report.to_dict() == {
        "name": "leval:news_summ",
        "data_dir": str(tmp_path),
        "source": server.url.rstrip("/"),
        "downloaded": ["leval/news_summ.jsonl"],
        "skipped": [],
        "generated": [],
        "bytes_downloaded": size,
    }
    assert seen == [("leval/news_summ.jsonl", "downloaded")]


def test_changed_local_file_is_downloaded_again(
    serve: Serve, shared_data: Path, tmp_path: Path
) -> None:
    server = serve(shared_data)
    fetch_dataset("leval:news_summ", data_dir=tmp_path, mirror=server.url)
    target = tmp_path / "leval" / "news_summ.jsonl"
    target.write_bytes(target.read_bytes()[:-10])
    report = fetch_dataset("leval:news_summ", data_dir=tmp_path, mirror=server.url)
    assert report.downloaded == ("leval/news_summ.jsonl",)
    assert target.read_bytes() == (shared_data / "leval" / "news_summ.jsonl").read_bytes()


def test_corrupted_file_is_refused_and_not_kept(
    serve: Serve, shared_data: Path, tmp_path: Path
) -> None:
    served = tmp_path / "served"
    shutil.copytree(shared_data / "pubmedqa", served / "pubmedqa")
    bad = served / "pubmedqa" / "test_ground_truth.json"
    data = bytearray(bad.read_bytes())
    data[100] ^= 0x01  # one byte changed
    bad.write_bytes(bytes(data))
    server = serve(served)
    root = tmp_path / "data"
    with pytest.raises(DatasetError) as info:
        fetch_dataset("pubmedqa", data_dir=root, mirror=server.url)
    message = str(info.value)
    expected = next(
        f.sha256
        for f in get_dataset("pubmedqa").remote_files()
        if f.path.endswith("test_ground_truth.json")
    )
    assert expected in message and hashlib.sha256(data).hexdigest() in message
    assert f"{server.url}pubmedqa/test_ground_truth.json" in message
    assert not (root / "pubmedqa" / "test_ground_truth.json").exists()
    assert (root / "pubmedqa" / "ori_pqal.json").is_file()  # verified before the bad one
    assert _leftovers(root) == []
    assert server.requests.count("/pubmedqa/test_ground_truth.json") == 1  # not retried


def _github_layout(shared_data: Path, root: Path) -> None:
    """A folder laid out like raw.githubusercontent.com/<owner>/<repo>/<commit>/<path>."""

    def put(repo_slug: str, commit: str, repo_path: str, data: bytes) -> None:
        dest = root / repo_slug / commit / repo_path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)

    put(
        LEVAL.slug,
        LEVAL.commit,
        "LEval-data/Open-ended-tasks/news_summ.jsonl",
        (shared_data / "leval" / "news_summ.jsonl").read_bytes(),
    )
    for name in ("ori_pqal.json", "test_ground_truth.json"):
        put(
            PUBMEDQA.slug,
            PUBMEDQA.commit,
            f"data/{name}",
            (shared_data / "pubmedqa" / name).read_bytes(),
        )
    for f in mtsamples_files():
        put(
            MTSAMPLES.slug,
            MTSAMPLES.commit,
            f.repo_path,
            gzip.compress((shared_data / f.path).read_bytes()),
        )


def test_official_source_urls_and_gunzip(
    serve: Serve, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = tmp_path / "github"
    _github_layout(shared_data, layout)
    server = serve(layout)
    monkeypatch.setattr(_fetch, "GITHUB_RAW", server.url)
    root = tmp_path / "data"
    for name in ("leval:news_summ", "pubmedqa", "mtsamples"):
        report = fetch_dataset(name, data_dir=root)
        assert report.source == "github"
        assert load_dataset(name, data_dir=root) == load_dataset(name, data_dir=shared_data)
    assert server.requests[0] == (
        "/OpenLMLab/LEval/cd34b050269148aed75acbbe4a599873ad0f37e9/"
        "LEval-data/Open-ended-tasks/news_summ.jsonl"
    )
    assert server.requests[1] == (
        "/pubmedqa/pubmedqa/1cbae8e92f72f20c8d3747cbb3bf5bc53554d997/data/ori_pqal.json"
    )
    assert server.requests[3] == (
        "/terrah27/spider_mtsamples.com/7794f006f0a38e1747596a07f9b55987d6add8fd/"
        ".scrapy/httpcache/mt/01/0181c513bb7e71b41d8bce692526ab26faa1baff/response_body"
    )
    assert len(server.requests) == 1 + 2 + 111
    mts = shared_data / "mtsamples_discharge"
    for rel in ("raw_html/INDEX.tsv", "discharge_summaries.derived.jsonl"):
        assert (root / "mtsamples_discharge" / rel).read_bytes() == (mts / rel).read_bytes()
    assert report.generated == (
        "mtsamples_discharge/raw_html/INDEX.tsv",
        "mtsamples_discharge/discharge_summaries.derived.jsonl",
    )


def test_official_page_that_is_not_gzip(
    serve: Serve, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = tmp_path / "github"
    _github_layout(shared_data, layout)
    first = mtsamples_files()[0]
    (layout / MTSAMPLES.slug / MTSAMPLES.commit / first.repo_path).write_bytes(
        (shared_data / first.path).read_bytes()
    )
    monkeypatch.setattr(_fetch, "GITHUB_RAW", serve(layout).url)
    with pytest.raises(DatasetError, match="not gzip-compressed"):
        fetch_dataset("mtsamples", data_dir=tmp_path / "data")
    assert _leftovers(tmp_path / "data") == []


def test_transient_errors_are_retried(
    serve: Serve, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fetch, "_RETRY_DELAY_S", 0.0)
    server = serve(shared_data)
    server.failures["/leval/news_summ.jsonl"] = 2
    report = fetch_dataset("leval:news_summ", data_dir=tmp_path, mirror=server.url)
    assert report.downloaded == ("leval/news_summ.jsonl",)
    assert server.requests == ["/leval/news_summ.jsonl"] * 3
    server.failures["/leval/tv_show_summ.jsonl"] = 3
    with pytest.raises(DatasetError, match=r"failed 3 times \(last: HTTP 503"):
        fetch_dataset("leval:tv_show_summ", data_dir=tmp_path, mirror=server.url)
    assert not (tmp_path / "leval" / "tv_show_summ.jsonl").exists()


def test_missing_file_on_the_server(serve: Serve, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    server = serve(tmp_path / "empty")
    with pytest.raises(DatasetError, match="HTTP 404") as info:
        fetch_dataset("leval:news_summ", data_dir=tmp_path / "data", mirror=server.url)
    assert f"{server.url}leval/news_summ.jsonl" in str(info.value)
    assert server.requests == ["/leval/news_summ.jsonl"]


def test_unreachable_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fetch, "_RETRY_DELAY_S", 0.0)
    with pytest.raises(DatasetError, match="failed 3 times"):
        fetch_dataset("leval:news_summ", data_dir=tmp_path, mirror="http://127.0.0.1:9/", timeout=2)


def test_file_mirror(shared_data: Path, tmp_path: Path) -> None:
    report = fetch_dataset("pubmedqa", data_dir=tmp_path, mirror=shared_data.as_uri())
    assert len(report.downloaded) == 2
    with pytest.raises(DatasetError, match="does not exist"):
        fetch_dataset("pubmedqa", data_dir=tmp_path / "x", mirror=(tmp_path / "nope").as_uri())


@pytest.mark.parametrize("name", ["mimic-bhc", "jsonl", "csv"])
def test_not_fetchable(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="cannot be fetched") as info:
        fetch_dataset(name, data_dir=tmp_path)
    if name == "mimic-bhc":
        assert "physionet.org" in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"mirror": "ftp://x/"}, "mirror"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": True}, "timeout"),
    ],
)
def test_bad_fetch_options(options: dict[str, object], parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        fetch_dataset("pubmedqa", **options)  # type: ignore[arg-type]
    assert info.value.parameter == parameter


def test_loading_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("load_dataset tried to download")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    for name in list_datasets():
        with pytest.raises((DatasetError, InvalidParameterError)):
            load_dataset(name, data_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
