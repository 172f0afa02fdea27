"""Throughput of the bundled embedder by batch size. A script, not a test.

Embeds ``--n`` realistic sentences (turns of the LoCoMo conversations when the file is
there, else generated chat lines) with :class:`satchel.embed.MiniLMEmbedder` at batch
sizes 1, 8 (the default), 16, 32 and 64. Prints sentences per second, the ratio to
batch size 1 measured in the same run, and the process's resident memory once the
model is loaded.

Run:  uv run python bench/embed.py --n 512
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
from pathlib import Path

from satchel.embed import MiniLMEmbedder

DEFAULT_DATA = Path("/work/shared/data/locomo/locomo.dev.json")
BATCH_SIZES = (1, 8, 16, 32, 64)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=512, help="sentences per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; best kept")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    args = parser.parse_args()

    sentences, source = load_sentences(args.data, args.n)
    mean_chars = sum(map(len, sentences)) / len(sentences)
    print(f"{len(sentences)} sentences ({source}), mean {mean_chars:.0f} chars")

    before, _ = rss_mib()
    started = time.perf_counter()
    embedders = {1: MiniLMEmbedder(batch_size=1, intra_op_threads=args.threads)}
    embedders[1].embed(["warm up"])
    load_s = time.perf_counter() - started
    loaded, _ = rss_mib()
    print(f"model load + first call: {load_s:.2f} s")
    print(f"RSS: {before:.0f} MiB before load, {loaded:.0f} MiB after (+{loaded - before:.0f})")
    print(f"embedder: {embedders[1]!r}")

    for batch_size in BATCH_SIZES[1:]:
        embedders[batch_size] = MiniLMEmbedder(batch_size=batch_size, intra_op_threads=args.threads)
        embedders[batch_size].embed(["warm up"])
    # Rounds interleave the batch sizes, so a burst of load elsewhere on the machine
    # hits them alike; the best round of each is kept.
    best = dict.fromkeys(BATCH_SIZES, 0.0)
    for _ in range(args.repeat):
        for batch_size, embedder in embedders.items():
            t0 = time.perf_counter()
            embedder.embed(sentences)
            rate = len(sentences) / (time.perf_counter() - t0)
            best[batch_size] = max(best[batch_size], rate)

    print(f"\n{'batch':>5}  {'sent/s':>8}  {'vs batch 1':>10}")
    for batch_size, rate in best.items():
        print(f"{batch_size:>5}  {rate:>8.1f}  {rate / best[1]:>9.2f}x")
    _, peak = rss_mib()
    print(f"\npeak RSS over the run ({len(embedders)} models loaded at once): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
