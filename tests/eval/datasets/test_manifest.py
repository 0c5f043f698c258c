"""The sha256 manifest covers every shared file, and the MTSamples derivation is exact."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from budgetctx.eval.datasets import _manifest, dataset_info, list_datasets
from budgetctx.eval.datasets._mtsamples import DERIVED, INDEX, MTSamples, derive_records
from budgetctx.eval.datasets._mtsamples_html import parse_page, records_to_jsonl
from budgetctx.eval.datasets._registry import get_dataset

FETCHABLE = [n for n in list_datasets() if get_dataset(n).fetchable]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fetchable_names() -> None:
    assert FETCHABLE == [
        "cochrane",
        "cochrane-pls",
        "leval",
        "leval:gov_report_summ",
        "leval:meeting_summ",
        "leval:news_summ",
        "leval:paper_assistant",
        "leval:patent_summ",
        "leval:review_summ",
        "leval:tv_show_summ",
        "mtsamples",
        "pubmedqa",
    ]
    for name in ("jsonl", "csv", "mimic-bhc"):
        assert not dataset_info(name).fetchable


def test_manifest_matches_the_shared_files(shared_data: Path) -> None:
    remote = {f.path: f for n in FETCHABLE for f in get_dataset(n).remote_files()}
    assert len(remote) == 7 + 2 + 100 + 6 + 111
    for path, entry in remote.items():
        data = (shared_data / path).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (entry.sha256, entry.size), path
        assert len(entry.repo.commit) == 40
    generated = {
        INDEX: _manifest.MTSAMPLES_INDEX_SHA256,
        DERIVED: _manifest.MTSAMPLES_DERIVED_SHA256,
    }
    for path, sha in generated.items():
        assert _sha(shared_data / path) == sha
    # Every data file in the shared folder is covered (only the SOURCE/README notes are not).
    on_disk = {
        str(p.relative_to(shared_data))
        for p in shared_data.rglob("*")
        if p.is_file() and p.name not in ("SOURCE.md", "README.md")
    }
    assert on_disk == set(remote) | set(generated)


def test_mtsamples_pages_are_stored_gzipped_in_the_scrapy_cache() -> None:
    files = _manifest.mtsamples_files()
    assert len(files) == 111 and all(f.gzip for f in files)
    first = files[0]
    key = first.path.rsplit("/", 1)[1].removesuffix(".html")
    assert first.repo_path == f".scrapy/httpcache/mt/{key[:2]}/{key}/response_body"


def test_derivation_reproduces_the_shared_jsonl(shared_data: Path) -> None:
    shared = [
        json.loads(line)
        for line in (shared_data / DERIVED).read_text(encoding="utf-8").splitlines()
    ]
    derived = derive_records(shared_data)
    assert len(derived) == len(shared) == 111
    for ours, theirs in zip(derived, shared, strict=True):
        assert ours["sections"] == theirs["sections"], ours["cache_key"]
        assert ours["text"] == theirs["text"], ours["cache_key"]
        assert ours == theirs  # header fields too
    # Byte for byte, so a fetched data dir is identical to the shared one.
    assert records_to_jsonl(derived) == (shared_data / DERIVED).read_bytes()
    generated = MTSamples().generated_files(shared_data)
    assert generated[DERIVED] == (shared_data / DERIVED).read_bytes()
    assert generated[INDEX] == (shared_data / INDEX).read_bytes()


def test_loader_derives_when_the_jsonl_is_absent(shared_data: Path, tmp_path: Path) -> None:
    raw = tmp_path / "mtsamples_discharge" / "raw_html"
    raw.mkdir(parents=True)
    for page in (shared_data / "mtsamples_discharge" / "raw_html").iterdir():
        (raw / page.name).write_bytes(page.read_bytes())
    from budgetctx.eval.datasets import load_dataset

    assert load_dataset("mtsamples", data_dir=tmp_path) == load_dataset(
        "mtsamples", data_dir=shared_data
    )


def test_parse_page_rules() -> None:
    page = (
        "<b>Sample Type / Medical Specialty: </b> Discharge Summary<br>"
        "<b>Sample Name:</b> DS - 9 </H1><b> Description: </b> Fall &amp; fracture.<br>"
        "(Medical Transcription Sample Report)<br>\r\n  <hr>\r\n"
        "Preamble  text.<br><B>DIAGNOSIS:</B>  Hip   fracture. <br><br>  2. Pain.<BR>"
        "<B>HOSPITAL COURSE: </B> <i>Stable</i>.<br>"
        "<!-- Ezoic - MTSam Sample Bottom Matched Content --><B>Keywords: </B>\r\n hip, fall, "
    )
    record = parse_page(page, cache_key="k", url="u")
    assert record["sections"] == [
        {"header": "", "text": "Preamble text."},
        {"header": "DIAGNOSIS", "text": "Hip fracture. \n2. Pain."},
        {"header": "HOSPITAL COURSE", "text": "Stable."},
    ]
    assert (
        record["text"]
        == "Preamble text.\nDIAGNOSIS: Hip fracture. \n2. Pain.\nHOSPITAL COURSE: Stable."
    )
    assert (record["sample_name"], record["description"]) == ("DS - 9", "Fall & fracture.")
    assert (record["medical_specialty"], record["keywords"]) == ("Discharge Summary", "hip, fall,")


@pytest.mark.parametrize("broken", ["<html>no marker</html>", ""])
def test_parse_page_refuses_other_pages(broken: str) -> None:
    from budgetctx.eval.datasets._mtsamples_html import PageError

    with pytest.raises(PageError):
        parse_page(broken, cache_key="k", url="u")


def test_manifest_json_is_what_the_generator_writes(shared_data: Path) -> None:
    """The package data is generated: re-hashing the shared copies gives it back exactly."""
    from budgetctx.eval.datasets._mtsamples import DERIVED, INDEX

    assert (_manifest.MTSAMPLES_INDEX_PATH, _manifest.MTSAMPLES_DERIVED_PATH) == (INDEX, DERIVED)
    bundled = json.loads(
        (Path(_manifest.__file__).with_name(_manifest.MANIFEST)).read_text(encoding="utf-8")
    )
    assert _manifest.build_manifest(shared_data) == bundled
