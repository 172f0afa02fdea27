"""Offline replay of memory search on LoCoMo dev, to try recall ideas cheaply.

Replays satchel's hybrid search (FTS5 BM25 with the store's tokenizer, top-50
candidates per side, coverage fusion with vector weight 0.5, cosines filled in) over
every turn of each conversation, then tries variants: scoring a turn with its
neighbours' scores, embedding or indexing a turn with its neighbours' text, and
query rewriting. Each conversation is its own store (``--scope conv``) or both share
one file (``--scope file``, like ``memory_quality.py``).

The personal-facts stores of ``memory_small.py`` are replayed too (in list order, and
in ``--orders`` random insertion orders), since neighbours must not hurt small stores.

Run:
    uv run python bench/memory_recall_experiments.py [--scope conv|file] [--orders 20]
"""

# ruff: noqa: B023  (the per-question closures are called within their own iteration)
from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))
from memory_quality import DATA, CachingEmbedder, questions_of, turns_of

from satchel.retrieval import idf, query_terms

F32 = npt.NDArray[np.float32]
TOKENIZER = "porter unicode61 remove_diacritics 2"
CACHE = Path("/tmp/satchel_recall_embed_cache.npz")


class DiskEmbedder:
    """The default embedder with a disk cache keyed by text hash."""

    def __init__(self) -> None:
        self.inner = CachingEmbedder()
        self.cache: dict[str, F32] = {}
        if CACHE.exists():
            with np.load(CACHE) as data:
                self.cache = {k: data[k] for k in data.files}
        self.dirty = False

    def embed(self, texts: Sequence[str]) -> F32:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items()
                   if k not in self.cache]  # fmt: skip
        if missing:
            vecs = self.inner.embed([t for _, t in missing])
            for (k, _), v in zip(missing, vecs, strict=True):
                self.cache[k] = v
            self.dirty = True
        return np.stack([self.cache[k] for k in keys])

    def save(self) -> None:
        if self.dirty:
            np.savez(CACHE, **self.cache)


class Store:
    """All turns in one FTS5 table; per-conversation row ranges."""

    def __init__(self, texts: list[str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = '{TOKENIZER}')")
        self.conn.executemany(
            "INSERT INTO t (rowid, text) VALUES (?, ?)", list(enumerate(texts, start=1))
        )
        self.n = len(texts)

    def matches(self, term: str) -> set[int]:
        q = '"' + term.replace('"', '""') + '"'
        return {r[0] - 1 for r in self.conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,))}

    def bm25(self, terms: list[str], rows: range) -> dict[int, float]:
        if not terms:
            return {}
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        out = {
            r[0] - 1: -r[1]
            for r in self.conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (match,))
        }
        return {k: v for k, v in out.items() if k in rows}


def coverage_all(
    store: Store,
    terms: list[str],
    rows: range,
    neighbours: list[list[int]],
    gamma: float,
    cap: float = 0.0,
    share: float = 1.0,
) -> npt.NDArray[np.float64]:
    """Coverage of every row of ``rows``; a term found only in a neighbour counts ``gamma``
    when at most ``share`` of the store's rows hold it."""
    sets = {t: store.matches(t) for t in terms}
    lendable = {t for t, s in sets.items() if len(s) <= share * store.n}
    weights = {t: idf(len(s), store.n) for t, s in sets.items()}
    total = sum(weights.values())
    out = np.zeros(len(rows))
    if total <= 0:
        return out
    for j, row in enumerate(rows):
        mass = 0.0
        extra = 0.0
        for t, s in sets.items():
            if row in s:
                mass += weights[t]
            elif gamma and t in lendable:
                w = max((nw for nb, nw in _pairs(neighbours[j]) if rows[0] + nb in s), default=0.0)
                extra += gamma * w * weights[t]
        if cap:
            extra = min(extra, cap * mass)
        out[j] = min(1.0, (mass + extra) / total)
    return out


def _pairs(nbs: Sequence[Any]) -> list[tuple[int, float]]:
    return [nb if isinstance(nb, tuple) else (nb, 1.0) for nb in nbs]  # type: ignore[misc]


SOFT = {
    "raw sim": lambda x: max(0.0, x),
    "ramp 0.3-0.6": lambda x: min(1.0, max(0.0, (x - 0.3) / 0.3)),
    "ramp 0.35-0.55": lambda x: min(1.0, max(0.0, (x - 0.35) / 0.2)),
    "ramp 0.2-0.6": lambda x: min(1.0, max(0.0, (x - 0.2) / 0.4)),
}


def shared_variants(
    store: Store, terms: list[str], rows: range, V: Any, qv: Any, nbs: list[list[int]]
) -> dict[str, npt.NDArray[np.float64]]:
    """Variants scored alike on LoCoMo and on the personal facts: every neighbour
    effect weighted by the entry-neighbour cosine."""
    V = V.astype(np.float64)
    cos = V @ qv
    sims = [[(j, max(0.0, float(V[i] @ V[j]))) for j in n] for i, n in enumerate(nbs)]
    out: dict[str, npt.NDArray[np.float64]] = {}
    pool = np.argsort(-cos)[:50]
    P = V[pool]
    pair = P @ P.T
    baseline = float((pair.sum() - np.trace(pair)) / max(1, len(pool) * (len(pool) - 1)))
    for d in (0.15, 0.25, 0.35):
        rel = [[(j, min(1.0, max(0.0, (w - baseline) / d))) for j, w in n] for n in sims]
        for g in (0.5, 0.75, 1.0):
            cov = coverage_all(store, terms, rows, rel, g)
            out[f"S relsim d={d} g={g}"] = 0.5 * cov + 0.5 * cos
    out["S base"] = 0.5 * coverage_all(store, terms, rows, nbs, 0) + 0.5 * cos
    out["S ctx g=0.5"] = 0.5 * coverage_all(store, terms, rows, nbs, 0.5) + 0.5 * cos
    for share in (0.03, 0.05, 0.1):
        cov = coverage_all(store, terms, rows, sims, 1.0, share=share)
        out[f"S simctx g=1.0 rare terms (share {share})"] = 0.5 * cov + 0.5 * cos
    for g in (0.75, 1.0):
        cov = coverage_all(store, terms, rows, sims, g)
        base = 0.5 * cov + 0.5 * cos
        out[f"S simctx g={g}"] = base
        for beta in (0.1, 0.2, 0.3):
            agg = np.array([max([w * base[j] for j, w in n] or [0.0]) for n in sims])
            out[f"S simctx g={g} + simsmooth b={beta}"] = base + beta * agg
        ctxv = V.copy()
        for i, n in enumerate(sims):
            for j, w in n:
                ctxv[i] += w * V[j]
        ctxv /= np.linalg.norm(ctxv, axis=1, keepdims=True)
        cv = ctxv @ qv
        out[f"S simctx g={g} + max(cos, simsum vec)"] = 0.5 * cov + 0.5 * np.maximum(cos, cv)
        out[f"S simctx g={g} + mean(cos, simsum vec)"] = 0.5 * cov + 0.25 * (cos + cv)
    return out


def recall(order: Sequence[int], gold: set[int], k: int) -> float:
    return len(gold & set(order[:k])) / len(gold)


Scorer = Callable[[dict[str, Any]], npt.NDArray[np.float64]]


def main(args: argparse.Namespace) -> None:
    samples = json.loads(args.data.read_text())
    emb = DiskEmbedder()
    convs: list[dict[str, Any]] = []
    texts: list[str] = []
    for sample in samples:
        turns = turns_of(sample)
        start = len(texts)
        texts += [c for _, c, _, _ in turns]
        sessions = [d.split(":")[0] for _, _, _, d in turns]
        convs.append(
            {"sample": sample, "turns": turns, "rows": range(start, len(texts)),
             "sessions": sessions}
        )  # fmt: skip
    vec = emb.embed(texts)
    # context texts
    ctx_prev, ctx_both = [], []
    for c in convs:
        t = [x[1] for x in c["turns"]]
        s = c["sessions"]
        for i in range(len(t)):
            p = t[i - 1] if i and s[i - 1] == s[i] else ""
            nx = t[i + 1] if i + 1 < len(t) and s[i + 1] == s[i] else ""
            ctx_prev.append((p + "\n" + t[i]).strip())
            ctx_both.append((p + "\n" + t[i] + "\n" + nx).strip())
    vec_prev = emb.embed(ctx_prev)
    vec_both = emb.embed(ctx_both)
    emb.save()
    if args.scope == "file":
        stores = [Store(texts)] * len(convs)
        offsets = [c["rows"] for c in convs]
    else:
        stores = [Store([texts[i] for i in c["rows"]]) for c in convs]
        offsets = [range(len(c["rows"])) for c in convs]

    results: dict[str, list[list[float]]] = {}

    def add(name: str, order: Sequence[int], gold: set[int]) -> None:
        results.setdefault(name, [[], []])
        results[name][0].append(recall(order, gold, 5))
        results[name][1].append(recall(order, gold, 10))

    for c, store, rows in zip(convs, stores, offsets, strict=True):
        dia = {d: i for i, (_, _, _, d) in enumerate(c["turns"])}
        s = c["sessions"]
        m = len(c["turns"])
        same = [[j for j in (i - 1, i + 1) if 0 <= j < m and s[j] == s[i]] for i in range(m)]
        any_nb = [[j for j in (i - 1, i + 1) if 0 <= j < m] for i in range(m)]
        base = c["rows"].start
        V, VP, _ = (x[base : base + m] for x in (vec, vec_prev, vec_both))
        qs = questions_of(c["sample"])
        qvec = emb.embed([q for q, _ in qs])
        for (q, ev), qv in zip(qs, qvec, strict=True):
            gold = {dia[e] for e in ev if e in dia}
            if not gold:
                continue
            terms = query_terms(q)
            bm = store.bm25(terms, rows)
            bm_local = {k - rows.start: v for k, v in bm.items()}
            top_b = sorted(bm_local, key=lambda k: -bm_local[k])[:50]
            cos = (V @ qv).astype(np.float64)
            cos_p = (VP @ qv).astype(np.float64)
            cov = coverage_all(store, terms, rows, same, 0.0)
            mask_b = np.zeros(m, bool)
            mask_b[top_b] = True
            top_v = np.argsort(-cos)[:50]
            cand = mask_b.copy()
            cand[top_v] = True

            def order(score: npt.NDArray[np.float64], cands: Any = None) -> list[int]:
                sc = np.where(cands if cands is not None else np.ones(m, bool), score, -9.0)
                return list(np.argsort(-sc, kind="stable")[:10])

            for name, score in shared_variants(store, terms, rows, V, qv, any_nb).items():
                add(name, order(score), gold)
            add("bm25", top_b, gold)
            add("vector", list(np.argsort(-cos)[:10]), gold)
            fused = 0.5 * np.where(mask_b, cov, 0.0) + 0.5 * cos
            add("hybrid (shipped replay)", order(fused, cand), gold)
            full = 0.5 * cov + 0.5 * cos
            add("hybrid, all rows as candidates", order(full), gold)

            def smooth(x: npt.NDArray[np.float64], nb: list[list[int]], beta: float,
                       how: str = "max") -> npt.NDArray[np.float64]:  # fmt: skip
                agg = np.array(
                    [(max if how == "max" else (lambda v: sum(v) / 2))([x[j] for j in n] or [0.0])
                     for n in nb]
                )  # fmt: skip
                return x + beta * agg

            near = cand.copy()
            for i in top_b:
                near[any_nb[i]] = True
            for beta in (0.3, 0.5, 0.7):
                add(f"smooth fused max b={beta}", order(smooth(full, same, beta)), gold)

            # query-time vector context: normalised sum of own and neighbour vectors
            def ctxvec(nb: list[list[int]]) -> npt.NDArray[np.float64]:
                out = V.astype(np.float64).copy()
                for i, n in enumerate(nb):
                    for j in n:
                        out[i] += V[j]
                out /= np.linalg.norm(out, axis=1, keepdims=True)
                return out @ qv

            prev_nb = [[j for j in (i - 1,) if j >= 0] for i in range(m)]
            cv_prev, cv_both = ctxvec(prev_nb), ctxvec(any_nb)
            add("vector qt sum(own,prev)", list(np.argsort(-cv_prev)[:10]), gold)
            add("vector qt sum(own,both)", list(np.argsort(-cv_both)[:10]), gold)
            for soft, f in SOFT.items():
                weighted = [[(j, f(float(V[i] @ V[j]))) for j in n] for i, n in enumerate(any_nb)]
                for gamma in (0.75, 0.85, 1.0):
                    cov_g = coverage_all(store, terms, rows, weighted, gamma)
                    add(f"ctx cov g={gamma} soft {soft}", order(0.5 * cov_g + 0.5 * cos), gold)
            for tau in (0.3, 0.4, 0.45, 0.5):
                gated = [[j for j in n if float(V[i] @ V[j]) >= tau] for i, n in enumerate(any_nb)]
                for gamma in (0.5, 0.75):
                    cov_g = coverage_all(store, terms, rows, gated, gamma)
                    add(f"ctx cov g={gamma} gated sim>={tau}", order(0.5 * cov_g + 0.5 * cos), gold)
            for gamma in (0.5, 0.75, 1.0):
                for cap in (0.5, 1.0, 2.0):
                    cov_c = coverage_all(store, terms, rows, any_nb, gamma, cap)
                    add(
                        f"ctx cov g={gamma} capped {cap}x own", order(0.5 * cov_c + 0.5 * cos), gold
                    )
                for nbname, nb in (("same", same), ("any", any_nb), ("prev", prev_nb)):
                    cov_n = coverage_all(store, terms, rows, nb, gamma)
                    add(f"ctx cov g={gamma} {nbname}", order(0.5 * cov_n + 0.5 * cos), gold)
                    if nbname != "any":
                        continue
                    add(f"ctx cov g={gamma} any, realistic cands",
                        order(0.5 * cov_n + 0.5 * cos, near), gold)  # fmt: skip
                    add(f"ctx cov g={gamma} any + cos prev-ctx",
                        order(0.5 * cov_n + 0.5 * cos_p), gold)  # fmt: skip
                    add(f"ctx cov g={gamma} any + max(cos, qt sum prev)",
                        order(0.5 * cov_n + 0.5 * np.maximum(cos, cv_prev)), gold)  # fmt: skip
                    add(f"ctx cov g={gamma} any + max(cos, qt sum both)",
                        order(0.5 * cov_n + 0.5 * np.maximum(cos, cv_both)), gold)  # fmt: skip
                    add(f"ctx cov g={gamma} any + mean(cos, qt sum both)",
                        order(0.5 * cov_n + 0.25 * (cos + cv_both)), gold)  # fmt: skip
                    add(f"ctx cov g={gamma} any + smooth b=0.2",
                        order(smooth(0.5 * cov_n + 0.5 * cos, any_nb, 0.2)), gold)  # fmt: skip

    facts_replay(emb, args.facts, results)
    facts_orders(emb, args.facts, args.orders)
    names = list(results)
    print(f"{len(results['bm25'][0])} questions, scope={args.scope}")
    print(f"{'variant':<50} {'R@5':>6} {'R@10':>6}")
    for name in names:
        r5, r10 = (float(np.mean(x)) for x in results[name])
        print(f"{name:<50} {r5:6.3f} {r10:6.3f}")


def facts_replay(emb: DiskEmbedder, path: Path, results: dict[str, list[list[float]]]) -> None:
    """The personal-facts stores of ``memory_small.py`` (5 or 10 facts per person, all
    80), neighbours in list order; recall@1 and @3 stored in the R@5 / R@10 slots."""
    people = json.loads(path.read_text())["people"]
    for setting in ("5/person", "10/person", "80"):
        groups: list[list[tuple[str, str, str]]] = []
        for person in people:
            per = 5 if setting == "5/person" else 10
            groups.append([(f"{person['name'].lower()}-{i}", f["fact"], f["question"])
                           for i, f in enumerate(person["facts"][:per])])  # fmt: skip
        if setting == "80":
            groups = [[x for g in groups for x in g]]
        for group in groups:
            store = Store([f"{label} {fact}" for label, fact, _ in group])
            V = emb.embed([fact for _, fact, _ in group]).astype(np.float64)
            m = len(group)
            rows = range(m)
            any_nb = [[j for j in (i - 1, i + 1) if 0 <= j < m] for i in range(m)]
            for gold_i, (_, _, question) in enumerate(group):
                qv = emb.embed([question])[0]
                cos = V @ qv
                terms = query_terms(question)
                variants = {
                    "facts " + setting + " base": coverage_all(store, terms, rows, any_nb, 0)
                }
                for soft, f in SOFT.items():
                    weighted = [
                        [(j, f(float(V[i] @ V[j]))) for j in n] for i, n in enumerate(any_nb)
                    ]
                    for gamma in (0.75, 0.85, 1.0):
                        variants[f"facts {setting} g={gamma} soft {soft}"] = coverage_all(
                            store, terms, rows, weighted, gamma
                        )
                for gamma in (0.5, 0.75):
                    variants[f"facts {setting} g={gamma}"] = coverage_all(
                        store, terms, rows, any_nb, gamma
                    )
                    for tau in (0.3, 0.4, 0.45, 0.5):
                        gated = [
                            [j for j in n if float(V[i] @ V[j]) >= tau]
                            for i, n in enumerate(any_nb)
                        ]
                        variants[f"facts {setting} g={gamma} gated {tau}"] = coverage_all(
                            store, terms, rows, gated, gamma
                        )
                for name, score in shared_variants(store, terms, rows, V, qv, any_nb).items():
                    order_ = list(np.argsort(-score, kind="stable"))
                    results.setdefault(f"facts {setting} {name}", [[], []])
                    results[f"facts {setting} {name}"][0].append(recall(order_, {gold_i}, 1))
                    results[f"facts {setting} {name}"][1].append(recall(order_, {gold_i}, 3))
                for name, cov in variants.items():
                    order_ = list(np.argsort(-(0.5 * cov + 0.5 * cos), kind="stable"))
                    results.setdefault(name, [[], []])
                    results[name][0].append(recall(order_, {gold_i}, 1))
                    results[name][1].append(recall(order_, {gold_i}, 3))
    emb.save()


def facts_orders(emb: DiskEmbedder, path: Path, orders: int) -> None:
    """The personal-facts stores with each store's entries in ``orders`` random
    insertion orders (``memory_small.py`` inserts concurrently, so its order varies
    from run to run): mean recall@1 / @3 at each archival neighbour weight, every
    neighbour term scaled by its cosine to the entry as the store does."""
    people = json.loads(path.read_text())["people"]
    gammas = (0.0, 0.25, 0.5, 0.75, 1.0)
    rare = 0.05  # the shipped archival lend share, at weight 1.0
    print(f"\npersonal facts, {orders} random insertion orders, R@1 / R@3 per weight")
    for setting in ("5/person", "10/person", "80"):
        res: dict[float | str, list[list[float]]] = {g: [[], []] for g in gammas}
        res[f"1.0 rare {rare}"] = [[], []]
        for seed in range(orders):
            rng = np.random.default_rng(seed)
            per = 5 if setting == "5/person" else 10
            groups = [
                [(f["fact"], f["question"]) for f in person["facts"][:per]] for person in people
            ]
            if setting == "80":
                groups = [[x for g in groups for x in g]]
            for group in groups:
                group = [group[i] for i in rng.permutation(len(group))]
                m = len(group)
                store = Store([fact for fact, _ in group])
                V = emb.embed([fact for fact, _ in group]).astype(np.float64)
                near = [[j for j in (i - 1, i + 1) if 0 <= j < m] for i in range(m)]
                sims = [[(j, max(0.0, float(V[i] @ V[j]))) for j in n] for i, n in enumerate(near)]
                for gold, (_, question) in enumerate(group):
                    qv = emb.embed([question])[0]
                    cos = V @ qv
                    terms = query_terms(question)
                    for g in [*gammas, f"1.0 rare {rare}"]:
                        cov = (
                            coverage_all(store, terms, range(m), sims, g)
                            if isinstance(g, float)
                            else coverage_all(store, terms, range(m), sims, 1.0, share=rare)
                        )
                        ranked = list(np.argsort(-(0.5 * cov + 0.5 * cos), kind="stable"))
                        res[g][0].append(recall(ranked, {gold}, 1))
                        res[g][1].append(recall(ranked, {gold}, 3))
        cells = "  ".join(f"{g}: {np.mean(a):.4f} / {np.mean(b):.4f}" for g, (a, b) in res.items())
        print(f"{setting:<10} {cells}")
    emb.save()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--scope", choices=["conv", "file"], default="conv")
    parser.add_argument("--orders", type=int, default=20, help="random facts orders")
    parser.add_argument(
        "--facts",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "tests/memory/data/personal_facts.json",
    )
    main(parser.parse_args())
