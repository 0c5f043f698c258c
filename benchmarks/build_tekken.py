"""Build ``src/budgetctx/data/tekken_240911.bpe.xz`` from Mistral's ``tekken.json``.

mistral-common (Apache-2.0) ships Mistral's Tekken vocabulary as ``data/tekken_240911.json``
(19 MB, with each token three times: bytes, rank and text) but pins ``numpy<2.4``, so it
cannot be a dependency here. This keeps what counting needs, in mistral-common's own order:
the pre-tokenizer pattern, the number of special tokens, and the bytes of the 130,072
ordinary tokens (rank = position), each as one length byte and the token's bytes, xz-packed
(about 0.5 MB). ``tekken_240718.json`` (Mistral NeMo) has the same ordinary vocabulary
byte for byte; only the special tokens differ, and they are never produced from text.

    pip download --no-deps mistral-common==1.13.1 && unzip the wheel
    python benchmarks/build_tekken.py mistral_common/data/tekken_240911.json
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import lzma
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "budgetctx" / "data" / "tekken_240911.bpe.xz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tekken_json", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    raw = args.tekken_json.read_bytes()
    data = json.loads(raw)
    config = data["config"]
    inner = config["default_vocab_size"] - config["default_num_special_tokens"]
    header = {
        "pattern": config["pattern"],
        "num_special_tokens": config["default_num_special_tokens"],
        "vocab_size": config["default_vocab_size"],
        "source": f"mistral-common data/{args.tekken_json.name}",
        "source_sha256": hashlib.sha256(raw).hexdigest(),
    }
    body = bytearray()
    for rank, token in enumerate(data["vocab"][:inner]):
        assert token["rank"] == rank
        piece = base64.b64decode(token["token_bytes"])
        assert 0 < len(piece) < 256
        body += bytes([len(piece)]) + piece
    payload = json.dumps(header).encode("utf-8") + b"\n" + bytes(body)
    args.out.write_bytes(lzma.compress(payload, preset=9 | lzma.PRESET_EXTREME))
    print(f"{args.out}: {args.out.stat().st_size} bytes, {inner} tokens")
    print("sha256", hashlib.sha256(args.out.read_bytes()).hexdigest())


if __name__ == "__main__":
    main()
