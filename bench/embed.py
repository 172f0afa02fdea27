"""Speed of the bundled embedder: int8 against float32 arithmetic. A script, not a test.

Embeds ``--n`` realistic sentences (turns of the LoCoMo conversations when the file is
there, else generated chat lines) with :class:`satchel.embed.MiniLMEmbedder` in float32
arithmetic at batch sizes 1 and 8 (the baseline: what satchel shipped before int8
arithmetic) and in int8 arithmetic at batch sizes 1 (the default: one thread per run,
runs side by side) and 8, and at batch 1 with every CPU inside each run (the previous
default); then embeds
``--queries`` short MetaTool queries one at a time (what ``discover_tools`` and a memory
search do) in both modes. Prints sentences per second and query p50/p90, each with its
ratio to the float32 baseline measured in the same run, the cosine agreement of the two
modes' vectors, and the process's resident memory once each model is loaded.

It first prints the CPU's instruction sets as CPUID reports them (read through a
27-byte machine-code stub, so an emulator's CPU model shows, not the host's
``/proc/cpuinfo``), onnxruntime's version and providers, and which of onnxruntime's
int8 matrix kernels (MLAS) those flags select: MLAS picks them by CPUID and logs nothing
about it, so the script repeats MLAS's own rules (``onnxruntime/core/mlas/lib/
platform.cpp``).

``--recipes`` measures the quantisation recipes instead (``satchel.embed._quantize.
RECIPES``, each built into a scratch cache): on a fixed text set (the 80 personal facts
and their 80 paraphrased questions, ``--metatool`` MetaTool queries with the 199 tool
descriptions, ``--turns`` LoCoMo turns), each recipe's cosine to float32 arithmetic on
this CPU, recall@1 of the fact for each question (among all 80 facts) and recall@1/@5 of
the tool for each MetaTool query, and sentences per second, as a ratio to the first
recipe (the one shipped before). ``--save`` keeps the vectors; ``--against`` compares
them with the vectors another run saved, e.g. under an emulated CPU without VNNI.

Run:  uv run python bench/embed.py --n 512
      uv run python bench/embed.py --recipes --save /tmp/native.npz
      qemu-x86_64 -cpu Haswell .venv/bin/python bench/embed.py --recipes --metatool 0 \
          --turns 50 --repeat 1 --against /tmp/native.npz      # AVX2, no VNNI
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import platform
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from meta_common import data_dir

from satchel.embed import MiniLMEmbedder
from satchel.embed._files import resolve_model_path
from satchel.embed._quantize import RECIPE, RECIPES, quantized_model

DEFAULT_DATA = Path("/work/shared/data/locomo/locomo.dev.json")
CPUS = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 4)
CONFIGS = {  # label: (int8 arithmetic, batch size, threads per run; None: the default)
    "float32, batch 1": (False, 1, None),
    "float32, batch 8 (baseline)": (False, 8, None),
    f"int8, batch 1, {CPUS} threads per run": (True, 1, CPUS),
    "int8, batch 1 (default)": (True, 1, None),
    "int8, batch 8": (True, 8, None),
}
PREVIOUS = f"int8, batch 1, {CPUS} threads per run"
BASELINE = "float32, batch 8 (baseline)"
FACTS = Path(__file__).resolve().parents[1] / "tests" / "memory" / "data" / "personal_facts.json"

# CPUID feature bits: (leaf, subleaf, register index eax=0 ebx=1 ecx=2 edx=3, bit).
FEATURES = {
    "avx2": (7, 0, 1, 5),
    "fma": (1, 0, 2, 12),
    "avx512f": (7, 0, 1, 16),
    "avx512bw": (7, 0, 1, 30),
    "avx512dq": (7, 0, 1, 17),
    "avx512vl": (7, 0, 1, 31),
    "avx512_vnni": (7, 0, 2, 11),
    "avx_vnni": (7, 1, 0, 4),
    "avx_vnni_int8": (7, 1, 3, 4),
    "amx_int8": (7, 0, 3, 25),
}
# push rbx; mov eax, edi; mov ecx, esi; mov r8, rdx; cpuid; mov [r8], eax;
# mov [r8+4], ebx; mov [r8+8], ecx; mov [r8+12], edx; pop rbx; ret
CPUID_STUB = bytes.fromhex("5389f889f14989d00fa241890041895804418948084189500c5bc3")


def cpuid_flags() -> dict[str, bool] | None:
    """The :data:`FEATURES` as CPUID reports them, or ``None`` off x86-64 Linux."""
    if platform.machine() not in {"x86_64", "AMD64"} or not hasattr(mmap, "PROT_EXEC"):
        return None
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(CPUID_STUB)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    stub = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p)(address)
    registers = (ctypes.c_uint32 * 4)()
    flags: dict[str, bool] = {}
    for name, (leaf, subleaf, register, bit) in FEATURES.items():
        stub(leaf, subleaf, ctypes.addressof(registers))
        flags[name] = bool(registers[register] >> bit & 1)
    del stub, address  # the buffer export must go before the page can close
    return flags


def int8_kernels(flags: dict[str, bool]) -> tuple[str, str]:
    """The MLAS kernels for uint8 x int8 and uint8 x uint8 matrix products that
    onnxruntime picks on a CPU with ``flags`` (its ``platform.cpp``, 1.2x)."""
    if not (flags["avx2"] and flags["fma"]):
        return "SSE (not measured here)", "SSE (not measured here)"
    u8s8 = "AVX2: VPMADDUBSW, 16-bit pair sums (saturate)"
    u8u8 = "AVX2: widened to 16 bits, VPMADDWD (exact)"
    if flags["avx_vnni"]:
        u8s8 = "AVX-VNNI: VPDPBUSD, 32-bit sums (exact)"
    avx512core = all(flags[f] for f in ("avx512f", "avx512bw", "avx512dq", "avx512vl"))
    if avx512core:
        u8s8 = "AVX-512 core: VPMADDUBSW, 16-bit pair sums (saturate)"
        u8u8 = "AVX-512 core: widened to 16 bits, VPMADDWD (exact)"
        if flags["avx512_vnni"]:
            u8s8 = "AVX-512 VNNI: VPDPBUSD, 32-bit sums (exact)"
    if flags["avx_vnni_int8"]:
        u8u8 = "AVX-VNNI-INT8: VPDPBUUD (exact)"
    if flags["amx_int8"]:
        u8s8 = "AMX (exact)"
    return u8s8, u8u8


def print_cpu() -> None:
    """What the int8 arithmetic runs on: instruction sets, onnxruntime, kernels."""
    print(f"onnxruntime {ort.__version__}, providers {ort.get_available_providers()}")
    flags = cpuid_flags()
    if flags is None:
        print(f"CPU: {platform.machine()}, CPUID not read")
        return
    print("CPUID: " + " ".join(f"{name}{'+' if on else '-'}" for name, on in flags.items()))
    u8s8, u8u8 = int8_kernels(flags)
    print(f"MLAS int8 kernels: uint8 x int8 {u8s8}; uint8 x uint8 {u8u8}")
    print(f"shipped recipe: {RECIPE.name}\n")


def load_sentences(path: Path, n: int) -> tuple[list[str], str]:
    """``n`` conversation turns from a LoCoMo file, or generated lines if it is absent."""
    if path.is_file():
        samples = json.loads(path.read_text())
        turns = [
            turn["text"]
            for sample in samples
            for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        ]
        if turns:
            return [turns[i % len(turns)] for i in range(n)], f"LoCoMo turns from {path}"
    rng = random.Random(0)
    subjects = ["I", "My sister", "The team", "Caroline", "We", "Our neighbour"]
    verbs = ["went to", "talked about", "finally finished", "can't stop thinking about"]
    objects = ["the pottery class", "a camping trip", "the new job", "that book on grief"]
    tails = ["", " last weekend.", " and it was amazing!", ", but honestly it was hard."]
    lines = [
        f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}{rng.choice(tails)}"
        for _ in range(n)
    ]
    return lines, "generated chat lines"


def rss_mib() -> tuple[float, float]:
    """Current and peak resident set size of this process, in MiB."""
    status = Path("/proc/self/status")
    if status.is_file():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak, peak


def query_latency(embedder: MiniLMEmbedder, queries: list[str]) -> tuple[float, float]:
    """p50 and p90 milliseconds of embedding each query alone."""
    times: list[float] = []
    for query in queries:
        t0 = time.perf_counter()
        embedder.embed([query])
        times.append((time.perf_counter() - t0) * 1000)
    cuts = statistics.quantiles(times, n=10)
    return statistics.median(times), cuts[8]


def recipe_texts(
    metatool: int, turns: int, locomo: Path
) -> tuple[list[str], dict[str, slice], list[int]]:
    """The fixed text set of ``--recipes``, the slice of each part, and the index of
    each MetaTool query's tool among the tool descriptions."""
    people = json.loads(FACTS.read_text())["people"]
    facts = [f["fact"] for person in people for f in person["facts"]]
    questions = [f["question"] for person in people for f in person["facts"]]
    texts = facts + questions
    parts = {"facts": slice(0, 80), "questions": slice(80, 160)}
    gold: list[int] = []
    if metatool:
        tools: dict[str, str] = json.loads((data_dir() / "metatool" / "tools.json").read_text())
        names = list(tools)
        pairs = json.loads((data_dir() / "metatool" / "queries.dev.json").read_text())
        chosen = [p for p in pairs if p["tool"] in tools][::40][:metatool]
        parts["tools"] = slice(len(texts), len(texts) + len(names))
        texts += [f"{name}: {text}" for name, text in tools.items()]
        parts["queries"] = slice(len(texts), len(texts) + len(chosen))
        texts += [" ".join(p["query"].split()) for p in chosen]
        gold = [names.index(p["tool"]) for p in chosen]
    if turns:
        sample, _ = load_sentences(locomo, 20 * turns)
        texts += sample[::20]
    return texts, parts, gold


def recall(scores: npt.NDArray[np.float32], gold: list[int] | range, k: int) -> float:
    """Share of rows whose gold column is among their ``k`` best (ties count against)."""
    rows = np.arange(len(scores))
    better = (scores > scores[rows, list(gold)][:, None]).sum(axis=1)
    return float(np.mean(better < k))


def compare_recipes(args: argparse.Namespace) -> None:
    """Each recipe's agreement with float32, retrieval and speed on one text set."""
    texts, parts, gold = recipe_texts(args.metatool, args.turns, args.data)
    print(f"{len(texts)} texts: " + ", ".join(f"{k} {v.stop - v.start}" for k, v in parts.items()))
    one = {"batch_size": 1, "intra_op_threads": 1}
    source = resolve_model_path()
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="satchel-recipes-") as scratch:
        embedders = {"float32": MiniLMEmbedder(quantize=False, **one)}
        for name, recipe in RECIPES.items():
            built = quantized_model(source, cache_dir=Path(scratch) / name, recipe=recipe)
            embedders[name] = MiniLMEmbedder(model_path=built, quantize=False, **one)
        for _ in range(args.repeat):  # interleaved rounds, best kept
            for label, embedder in embedders.items():
                t0 = time.perf_counter()
                vectors[label] = embedder.embed(texts)
                rate = len(texts) / (time.perf_counter() - t0)
                best[label] = max(best.get(label, 0.0), rate)
    first = next(iter(RECIPES))
    print(
        f"{'recipe':<34} {'cos min':>7} {'mean':>6}  {'facts r@1':>9}  "
        f"{'tools r@1':>9} {'r@5':>5}  {'sent/s':>7} {'x ' + first[:14]:>17}"
    )
    for label, found in vectors.items():
        agree = (found * vectors["float32"]).sum(axis=1)
        asked = found[parts["questions"]] @ found[parts["facts"]].T
        line = f"{label:<34} {agree.min():>7.4f} {agree.mean():>6.4f}  "
        line += f"{recall(asked, range(80), 1):>9.3f}  "
        if gold:
            tools = found[parts["queries"]] @ found[parts["tools"]].T
            line += f"{recall(tools, gold, 1):>9.3f} {recall(tools, gold, 5):>5.3f}  "
        else:
            line += f"{'':>9} {'':>5}  "
        print(line + f"{best[label]:>7.1f} {best[label] / best[first]:>16.2f}x")
    if args.save:
        np.savez(args.save, texts=np.array(texts), **vectors)
        print(f"vectors saved to {args.save}")
    if args.against:
        other = np.load(args.against)
        shared = min(len(texts), len(other["texts"]))
        if list(other["texts"][:shared]) != texts[:shared]:
            raise SystemExit(f"{args.against} holds another text set")
        print(f"\nthe same texts' vectors here vs {args.against} ({shared} texts)")
        for label, found in vectors.items():
            if label in other:
                agree = (found[:shared] * other[label][:shared]).sum(axis=1)
                print(f"{label:<34} cosine min {agree.min():.6f}, mean {agree.mean():.6f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=512, help="sentences per measurement")
    parser.add_argument("--queries", type=int, default=300, help="short queries timed alone")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; best kept")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--recipes", action="store_true", help="compare quantisation recipes")
    parser.add_argument("--metatool", type=int, default=100, help="--recipes: MetaTool queries")
    parser.add_argument("--turns", type=int, default=100, help="--recipes: LoCoMo turns")
    parser.add_argument("--save", type=Path, help="--recipes: save the vectors (.npz)")
    parser.add_argument("--against", type=Path, help="--recipes: compare with saved vectors")
    args = parser.parse_args()

    print_cpu()
    if args.recipes:
        compare_recipes(args)
        return

    sentences, source = load_sentences(args.data, args.n)
    mean_chars = sum(map(len, sentences)) / len(sentences)
    print(f"{len(sentences)} sentences ({source}), mean {mean_chars:.0f} chars")

    embedders: dict[str, MiniLMEmbedder] = {}
    for label, (quantize, batch, threads) in CONFIGS.items():
        before, _ = rss_mib()
        started = time.perf_counter()
        embedder = MiniLMEmbedder(
            batch_size=batch, intra_op_threads=threads or args.threads, quantize=quantize
        )
        embedder.embed(["warm up"])
        seconds = time.perf_counter() - started
        after, _ = rss_mib()
        print(f"{label}: load + first call {seconds:.2f} s, RSS +{after - before:.0f} MiB")
        embedders[label] = embedder
    # Rounds interleave the contenders, so a burst of load elsewhere on the machine
    # hits them alike; the best round of each is kept.
    best = dict.fromkeys(embedders, 0.0)
    for _ in range(args.repeat):
        for label, embedder in embedders.items():
            t0 = time.perf_counter()
            embedder.embed(sentences)
            rate = len(sentences) / (time.perf_counter() - t0)
            best[label] = max(best[label], rate)
    print(f"\n{'arithmetic, batch':<34} {'sent/s':>8}  {'vs baseline':>11}")
    for label, rate in best.items():
        print(f"{label:<34} {rate:>8.1f}  {rate / best[BASELINE]:>10.2f}x")

    pairs = json.loads((data_dir() / "metatool" / "queries.dev.json").read_text())
    queries = [" ".join(p["query"].split()) for p in pairs[: args.queries]]
    timed = {
        "float32": embedders["float32, batch 1"],
        f"int8, {CPUS} threads": embedders[PREVIOUS],
        "int8 (default)": embedders["int8, batch 1 (default)"],
    }
    latency = dict.fromkeys(timed, (float("inf"), float("inf")))
    for _ in range(args.repeat):
        for label, embedder in timed.items():
            p50, p90 = query_latency(embedder, queries)
            latency[label] = min(latency[label], (p50, p90))
    print(f"\n{len(queries)} MetaTool queries, one per call (best round)")
    print(f"{'arithmetic':<18} {'p50 ms':>7} {'p90 ms':>7}  {'p50 vs float32':>14}")
    for label, (p50, p90) in latency.items():
        print(f"{label:<18} {p50:>7.2f} {p90:>7.2f}  {p50 / latency['float32'][0]:>13.2f}x")

    exact = timed["float32"].embed(sentences)
    fast = timed["int8 (default)"].embed(sentences)
    batched = embedders["int8, batch 8"].embed(sentences)
    agree = (exact * fast).sum(axis=1)
    drift = (fast * batched).sum(axis=1)
    print(f"\ncosine int8 vs float32, same text: min {agree.min():.4f}, mean {agree.mean():.4f}")
    print(
        f"cosine int8 batch 1 vs batch 8 (activations quantised per run): "
        f"min {drift.min():.4f}, mean {drift.mean():.4f}"
    )
    _, peak = rss_mib()
    print(f"peak RSS over the run ({len(embedders)} embedders loaded): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
