"""o200k_base / cl100k_base: exact against an independent implementation, and built from the
same patterns, special tokens and rank files as the installed tiktoken."""

from __future__ import annotations

import gzip
import importlib.machinery
import importlib.util
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InvalidParameterError, TokenizerError
from budgetctx.tokenizers import TiktokenTokenizer, _tiktoken, get_tokenizer

ENCODINGS = ["o200k_base", "cl100k_base"]

CORPUS = [
    pytest.param("", id="empty"),
    pytest.param("Aspirin 81 mg p.o. daily.", id="po"),
    pytest.param("Metoprolol 25 mg p.o. b.i.d.; zolpidem 5 mg q.h.s. p.r.n.", id="bid-qhs"),
    pytest.param("The patient is a 67 y.o. male seen by Dr. O'Neil. He's stable.", id="yo-dr"),
    pytest.param("Na 135, K 4.1, Cl 101, HCO3 24, BUN 18, Cr 1.02, glucose 110.", id="labs"),
    pytest.param("BP 120/80, HR 72, RR 16, T 98.6 F, SpO2 97% on RA.", id="vitals"),
    pytest.param("1234567890 3.14159 -0.5 1e-6 1,000,000 ½ ² ٣ 四", id="numbers"),
    pytest.param("Café, naïve résumé, Ångström, Straße, Øresund, ĳ, ﬁ", id="accents"),
    pytest.param("e\u0301 a\u0308 n\u0303\u0323 Z\u0351\u0352\u0353", id="combining"),
    pytest.param("患者は高血圧の既往があります。血压 120/80。환자는 안정적입니다.", id="cjk"),
    pytest.param("مريض عمره ٦٧ سنة — החולה יציב", id="rtl"),
    pytest.param("\u202eRTL override\u202c and \u200f marks \u200e", id="bidi-controls"),
    pytest.param("🧠 🫀 👩\u200d⚕️ 👍🏽 🇺🇸 🏳️\u200d🌈", id="emoji"),
    pytest.param("\U0002ebee\U0001ad9d\U000e0041\U0010fffd", id="rare-astral"),
    pytest.param("a" + " " * 37 + "b\t\t\tc" + "\n" * 9 + "d", id="ws-runs"),
    pytest.param("line one\r\nline two\r\n\r\n  indented\r\n", id="crlf"),
    pytest.param("\t\tcol1\tcol2\t\n\x0b\x0c\x1c\x85\xa0\u2028\u3000", id="tabs-odd-ws"),
    pytest.param("   ", id="spaces-only"),
    pytest.param("pneumonoultramicroscopicsilicovolcanoconiosis" * 20, id="long-word"),
    pytest.param("x" * 10_000, id="x10k"),
    pytest.param("ab" * 3000 + "1" * 1000, id="ab-digits"),
    pytest.param("<|endoftext|>", id="endoftext"),
    pytest.param("<|endofprompt|>", id="endofprompt"),
    pytest.param("before <|endoftext|> after<|endofprompt|>", id="specials-in-text"),
    pytest.param("<|fim_prefix|><|fim_middle|><|fim_suffix|>", id="fim"),
    pytest.param("<|endoftext", id="partial-special"),
    pytest.param("I'M HERE, you're there, they'LL see, it'd do", id="contractions"),
    pytest.param("\x00\x01\x7f nul and control", id="control"),
    pytest.param("\ufeffBOM start and \ufffd replacement", id="bom"),
]


@pytest.fixture(scope="module", params=ENCODINGS)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("text", CORPUS)
def test_exact_against_quicktok(name: str, text: str, quicktok_encodings: dict[str, Any]) -> None:
    tok = TiktokenTokenizer(name)
    expected = quicktok_encodings[name].encode_ordinary(text)
    assert tok.encode(text) == expected
    assert tok.count(text) == len(expected)


@pytest.mark.parametrize(
    "text", ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "x<|endoftext|>y"]
)
def test_special_token_text_is_ordinary_text(name: str, text: str) -> None:
    tok = TiktokenTokenizer(name)
    ids = tok.encode(text)  # must not raise, unlike tiktoken's encode()
    assert len(ids) > 1
    assert not set(ids) & set(_tiktoken._SPECS[name]["special_tokens"].values())
    assert tok.count(text) == len(ids)
    assert tok.truncate(text, 1) == tok._enc.decode(ids[:1])


def test_known_counts() -> None:
    assert get_tokenizer("o200k_base").count("Aspirin 81 mg p.o. daily.") == 11
    assert get_tokenizer("cl100k_base").count("Na 135, K 4.1") == 9
    assert get_tokenizer("o200k_base").count("") == 0
    assert TiktokenTokenizer("cl100k_base").encode("hello world") == [15339, 1917]
    assert TiktokenTokenizer("o200k_base").encode("hello world") == [24912, 2375]


# Characters this Python's Unicode database assigns. quicktok classes some code points of
# newer Unicode versions differently from tiktoken's engine (which budgetctx matches): on
# "\U000323b0:A" (U+323B0, Unicode 15) it reads a letter and merges ":A", tiktoken does not.
# There quicktok is not an oracle for tiktoken; test_newer_code_points_as_tiktoken covers them.
_KNOWN = st.characters(exclude_categories=("Cn", "Cs"))


@pytest.mark.parametrize("text", ["\U000323b0:A", "\U00032a76'S", "x\U000e0080y"])
def test_newer_code_points_as_tiktoken(name: str, text: str) -> None:
    tok = TiktokenTokenizer(name)
    expected = _tiktoken.encode_ordinary(tok._enc, text)
    assert tok.encode(text) == expected
    assert tok.count(text) == len(expected)


@settings(max_examples=200, deadline=None)
@given(text=st.text(_KNOWN))
def test_hypothesis_counts_match_quicktok(text: str, quicktok_encodings: dict[str, Any]) -> None:
    for name in ENCODINGS:
        assert TiktokenTokenizer(name).count(text) == len(
            quicktok_encodings[name].encode_ordinary(text)
        )


_PIECES = st.sampled_from(
    [
        *["<|endoftext|>", "<|endofprompt|>", " ", "  ", "\n", "\r\n", "\t", "p.o.", "b.i.d."],
        *["'s", "4.1", "120/80", "é", "e\u0301", "漢字", "🧠", "\U0002ebee", "Dr.", "ALLCAPS", "x"],
    ]
)


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.one_of(_PIECES, st.text(_KNOWN, max_size=5)), max_size=40).map("".join))
def test_hypothesis_ids_match_quicktok_on_tricky_pieces(
    text: str, quicktok_encodings: dict[str, Any]
) -> None:
    for name in ENCODINGS:
        assert TiktokenTokenizer(name).encode(text) == quicktok_encodings[name].encode_ordinary(
            text
        )


def test_mtsamples_notes_exact(
    name: str, mtsamples_notes: list[str], quicktok_encodings: dict[str, Any]
) -> None:
    tok = TiktokenTokenizer(name)
    ref = quicktok_encodings[name]
    for i, note in enumerate(mtsamples_notes):
        assert tok.encode(note) == ref.encode_ordinary(note), f"note {i}"


def test_leval_docs_exact(
    name: str, leval_docs: dict[str, list[str]], quicktok_encodings: dict[str, Any]
) -> None:
    tok = TiktokenTokenizer(name)
    ref = quicktok_encodings[name]
    for task, docs in leval_docs.items():
        for i, doc in enumerate(docs[:3]):
            assert tok.encode(doc) == ref.encode_ordinary(doc), f"{task}[{i}]"


@pytest.mark.slow
def test_leval_all_docs_count_batch(
    name: str, leval_docs: dict[str, list[str]], quicktok_encodings: dict[str, Any]
) -> None:
    import quicktok

    docs = [doc for task_docs in leval_docs.values() for doc in task_docs]
    assert len(docs) >= 64  # the threaded batch path
    expected = [int(n) for n in quicktok.count_batch(quicktok_encodings[name], docs)]
    assert TiktokenTokenizer(name).count_batch(docs) == expected


def test_rank_files_match_quicktok(name: str, quicktok_encodings: dict[str, Any]) -> None:
    """Every (token bytes, rank) pair of the bundled file is quicktok's, and nothing is missing."""
    ours = _tiktoken._encoding(name)._mergeable_ranks
    ref = quicktok_encodings[name]
    assert sorted(ours) == ref.token_byte_values()
    assert all(ref.decode_single_token_bytes(rank) == token for token, rank in ours.items())


# --- count_batch ---------------------------------------------------------------------------------


def _texts(n: int) -> list[str]:
    base = [str(p.values[0])[:300] for p in CORPUS]
    return [f"{base[i % len(base)]} #{i} " * (1 + i % 3) for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, 5, 63, 64, 65, 300])
def test_count_batch_equals_count(name: str, n: int) -> None:
    tok = TiktokenTokenizer(name)
    texts = _texts(n)
    assert tok.count_batch(texts) == [tok.count(t) for t in texts]
    assert tok.count_batch(tuple(texts)) == [tok.count(t) for t in texts]


def test_count_batch_large_matches_quicktok(name: str, quicktok_encodings: dict[str, Any]) -> None:
    texts = _texts(500)
    ref = quicktok_encodings[name]
    assert TiktokenTokenizer(name).count_batch(texts) == [
        len(ref.encode_ordinary(t)) for t in texts
    ]


# --- provenance: patterns, special tokens and sha256 are tiktoken's ------------------------------


def test_specs_match_installed_tiktoken(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken_ext.openai_public as openai_public

    hashes: list[str | None] = []

    def fake_load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        hashes.append(expected_hash)  # and no download
        return {b"dummy": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    params = getattr(openai_public, name)()
    spec = _tiktoken._SPECS[name]
    assert params["name"] == name
    assert params["pat_str"] == spec["pat_str"]
    assert params["special_tokens"] == spec["special_tokens"]
    assert hashes == [spec["sha256"]]
    assert set(_tiktoken._SPECS) == set(ENCODINGS)


def _bundled_rank_file(name: str) -> Path:
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "data" / f"{name}.tiktoken.gz"


def _fake_bpe_openai(
    monkeypatch: pytest.MonkeyPatch, root: Path, name: str, gz: bytes | None
) -> None:
    """Point _load_ranks at ``root`` as if it were the installed bpe_openai package."""
    (root / "data").mkdir(parents=True)
    if gz is not None:
        (root / "data" / f"{name}.tiktoken.gz").write_bytes(gz)
    real_find_spec = importlib.util.find_spec

    def find_spec(module: str, package: str | None = None) -> Any:
        if module != "bpe_openai":
            return real_find_spec(module, package)
        fake = importlib.machinery.ModuleSpec("bpe_openai", None, is_package=True)
        fake.submodule_search_locations = [str(root)]
        return fake

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_bundled_rank_file_passes_sha256(name: str) -> None:
    assert _tiktoken._load_ranks(name) == _tiktoken._encoding(name)._mergeable_ranks


def test_sha256_rejects_one_changed_rank(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = gzip.decompress(_bundled_rank_file(name).read_bytes())
    lines = raw.splitlines(keepends=True)
    # Swap the ranks of two tokens: still a well-formed rank file, but not tiktoken's.
    (t0, r0), (t1, r1) = lines[1000].split(), lines[1001].split()
    lines[1000], lines[1001] = t0 + b" " + r1 + b"\n", t1 + b" " + r0 + b"\n"
    _fake_bpe_openai(monkeypatch, tmp_path, name, gzip.compress(b"".join(lines), 1))
    with pytest.raises(TokenizerError, match="sha256") as exc:
        _tiktoken._load_ranks(name)
    assert _tiktoken._SPECS[name]["sha256"] in str(exc.value)


@pytest.mark.parametrize(
    ("gz", "match"),
    [
        (gzip.compress(b"aGVsbG8= 0\n"), "sha256"),
        (b"not gzip at all", "Cannot read"),
        (None, "Cannot read"),
    ],
    ids=["tiny-rank-file", "not-gzip", "missing"],
)
def test_broken_rank_file_raises_tokenizer_error(
    name: str, gz: bytes | None, match: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bpe_openai(monkeypatch, tmp_path, name, gz)
    with pytest.raises(TokenizerError, match=match):
        _tiktoken._load_ranks(name)


def test_unknown_encoding_is_a_bad_parameter() -> None:
    # a name outside the bundled ones is a bad value, not a failed load: it names the choices
    with pytest.raises(InvalidParameterError, match="p50k_base") as info:
        TiktokenTokenizer("p50k_base")
    assert info.value.parameter == "encoding"
    assert "'o200k_base'" in str(info.value)
    with pytest.raises(InvalidParameterError, match="encoding"):
        TiktokenTokenizer(None)  # type: ignore[arg-type]


# --- pickling -----------------------------------------------------------------------------------


def test_pickle_by_name(name: str) -> None:
    tok = TiktokenTokenizer(name)
    blob = pickle.dumps(tok)
    assert len(blob) < 1000
    back = pickle.loads(blob)
    assert isinstance(back, TiktokenTokenizer)
    assert back.name == name
    assert repr(back) == repr(tok)
    text = str(CORPUS[2].values[0])
    assert back.encode(text) == tok.encode(text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bulk_rank_loading_equals_the_full_parse(name: str) -> None:
    import gzip
    import importlib.util
    from pathlib import Path

    from budgetctx.tokenizers._tiktoken import _load_ranks, _parse_ranks

    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "data" / f"{name}.tiktoken.gz"
    assert _load_ranks(name) == _parse_ranks(gzip.decompress(path.read_bytes()))
