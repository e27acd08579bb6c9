"""Vector index candidates for the embedded store: build time, query time and recall@10 against brute force.

Synthetic 384-d unit vectors (``--kind clustered``: the store bench's, of low intrinsic dimension;
``random``: independent Gaussian directions), 200 queries drawn the same way. Each library installed
(hnswlib; usearch with float16 or int8 copies) builds an HNSW index on every core (M / connectivity 16,
ef_construction / expansion_add 128) and answers each query with ``k`` candidates at search breadth
``ef``, which are then scored exactly against the float32 vectors, as the store does
(graph/embedded/ann.py). Prints a table and writes ``bench/results/vector_index.json``; the choice and its
figures: docs/decisions/2026-12-02-vector-index.md. Usage::

    python -m bench vector_index [--size 100000] [--kind clustered]
                                 [--libraries hnswlib usearch-f16 usearch-i8]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.shared.results import write_results

DIM = 384
SEARCHES = ((256, 200), (512, 256), (768, 384))  # (ef, k)


def vectors(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        v = rng.standard_normal((n, DIM)).astype(np.float32)
    else:
        basis = np.random.default_rng(384).standard_normal((48, DIM)).astype(np.float32)
        v = rng.standard_normal((n, 48)).astype(np.float32) @ basis
        v += 0.3 * rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def built(library: str, data: np.ndarray) -> Any:
    threads = os.cpu_count() or 1
    if library == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=DIM)
        index.init_index(max_elements=len(data), M=16, ef_construction=128)
        index.set_num_threads(threads)
        index.add_items(data, np.arange(len(data)))
        return index
    from usearch.index import Index

    dtype = library.split("-")[1]
    index = Index(ndim=DIM, metric="cos", dtype=dtype, connectivity=16, expansion_add=128)
    index.add(np.arange(len(data)), data, threads=threads)
    return index


def candidates(library: str, index: Any, query: np.ndarray, ef: int, k: int) -> np.ndarray:
    if library == "hnswlib":
        index.set_ef(max(ef, k))
        labels, _ = index.knn_query(query, k=k, num_threads=1)
        return np.asarray(labels[0], dtype=np.int64)
    index.expansion_search = max(ef, k)
    return np.asarray(index.search(query, k, threads=1).keys, dtype=np.int64)


def measure(library: str, data: np.ndarray, queries: np.ndarray, exact: np.ndarray, prefix: str) -> dict:
    t0 = time.perf_counter()
    index = built(library, data)
    out = {prefix + "build_s": time.perf_counter() - t0}
    for ef, k in SEARCHES:
        times, recalls = [], []
        for query, truth in zip(queries, exact, strict=True):
            t0 = time.perf_counter()
            found = candidates(library, index, query, ef, k)
            top = found[np.argsort(-(data[found] @ query))][:10]
            times.append((time.perf_counter() - t0) * 1000)
            recalls.append(len(set(top.tolist()) & set(truth.tolist())) / 10)
        name = f"{prefix}ef{ef}_k{k}."
        out[name + "query_p50_ms"] = float(np.percentile(times, 50))
        out[name + "query_p95_ms"] = float(np.percentile(times, 95))
        out[name + "recall_at_10"] = float(np.mean(recalls))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--kind", choices=["clustered", "random"], default="clustered")
    parser.add_argument("--libraries", nargs="+", default=["hnswlib", "usearch-f16", "usearch-i8"])
    parser.add_argument("--results-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    data, queries = vectors(args.kind, args.size, rng), vectors(args.kind, 200, rng)
    t0 = time.perf_counter()
    exact = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    label = f"{args.kind}.{args.size // 1000}k."
    metrics = {label + "brute_force_per_query_ms": (time.perf_counter() - t0) * 1000 / len(queries)}
    for library in args.libraries:
        metrics.update(measure(library, data, queries, exact, f"{label}{library}."))
        print(f"measured {library}", flush=True)
    for key, value in metrics.items():
        print(f"{key:60s} {value:10.3f}")
    notes = ["brute_force_per_query_ms: the 200 queries as one matrix product, per query"]
    print("wrote", write_results("vector_index", metrics, notes, merge=True, results_dir=args.results_dir))


if __name__ == "__main__":
    main()
