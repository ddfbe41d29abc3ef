"""`make bench-algorithms`, Python part: bench/algorithms.json -> bench/algorithms.md and .png.

The JVM part (bloomindex.bench.AlgorithmsBench) measures; this script only tabulates and plots.
"""

from __future__ import annotations

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
DESIGNS = ["sbbf", "sbbf-murmur3", "classic"]
COLORS = {"sbbf": "tab:blue", "sbbf-murmur3": "tab:orange", "classic": "tab:green"}
MARKERS = {"sbbf": ("o", 8, "-"), "sbbf-murmur3": ("s", 4.5, "--"), "classic": ("^", 6, "-")}


def pct(x: float) -> str:
    return f"{100 * x:.4g}%"


def plot(data: dict, png: pathlib.Path) -> None:
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.2))
    for d in DESIGNS:
        rows = [r for r in data["fpr"] if r["design"] == d]
        b = [r["bits_per_value"] for r in rows]
        marker, size, line = MARKERS[d]
        ax.plot(b, [r["theory"] for r in rows], line, color=COLORS[d], alpha=0.6, label=f"{d}: theory")
        ax.plot(b, [max(r["measured"], 1e-9) for r in rows], marker, markersize=size, color=COLORS[d],
                label=f"{d}: measured")
    spec = [r for r in data["fpr"] if r["design"] == "sbbf" and "spec" in r]
    ax.plot([r["bits_per_value"] for r in spec], [r["spec"] for r in spec], "kx", markersize=9,
            label="Parquet spec's table (sbbf)")
    ax.set_yscale("log")
    ax.set_xlabel("bits per distinct value")
    ax.set_ylabel("false positive rate")
    ax.set_title(f"False positives, {data['env']['probes'] / 1e6:.0f} M absent probes, 1 MiB filters")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)

    sizes = sorted({r["filter_bytes"] for r in data["speed"]})
    labels, values, colors = [], [], []
    for d in DESIGNS:
        for kernel in ("vector", "scalar"):
            for op in ("insert", "check"):
                rs = [r for r in data["speed"] if r["design"] == d and r["kernel"] == kernel and r["op"] == op]
                if not rs:
                    continue
                labels.append(f"{d}\n{kernel} {op}")
                values.append([next(r["ns_per_op"] for r in rs if r["filter_bytes"] == s) for s in sizes])
                colors.append(COLORS[d])
    width = 0.8 / len(sizes)
    for j, s in enumerate(sizes):
        xs = [i + (j - (len(sizes) - 1) / 2) * width for i in range(len(labels))]
        bx.bar(xs, [v[j] for v in values], width, color=colors, alpha=0.35 + 0.3 * j,
               label=f"{s >> 20} MiB" if s >= 1 << 20 else f"{s >> 10} KiB")
    bx.set_xticks(range(len(labels)))
    bx.set_xticklabels(labels, fontsize=6.5, rotation=60, ha="right")
    bx.set_yscale("log")
    bx.set_ylabel("ns per hash (JVM)")
    bx.set_title("Bulk insert and check at 10.5 bits per value (lighter = smaller filter)")
    bx.grid(True, axis="y", which="both", alpha=0.3)
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def report(data: dict, png_name: str) -> str:
    env = data["env"]
    lines = [
        "# Filter designs: false positives and speed",
        "",
        f"`make bench-algorithms` (`bloomindex.bench.AlgorithmsBench`, then `bench/plot_algorithms.py`), "
        f"{env['date']}: JDK {env['jdk']}, {env['cpu']}, {env['cores']} cores (shared).",
        "",
        f"![false positive rate and speed of the three designs]({png_name})",
        "",
        "## False positive rate",
        "",
        f"Each design fills a 1 MiB filter (8,388,608 bits) with `8 Mi / b` distinct bigint values "
        f"(hashed as an index hashes a bigint column) and answers {env['probes']:,} probes of values "
        "never inserted. Theory: the split block rate (a Poisson mix of per-block loads, "
        "`SbbfSizing.blockedFpp`) for both blocked designs, `(1 - e^(-kn/m))^k` for classic with "
        "`k = round(b ln 2)`. The spec's column is the table in the Parquet Bloom filter spec.",
        "",
        "| bits/value | sbbf measured | sbbf theory | spec | sbbf-murmur3 measured | sbbf-murmur3 theory "
        "| classic measured | classic theory | classic k |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by = {(r["design"], r["bits_per_value"]): r for r in data["fpr"]}
    for b in sorted({r["bits_per_value"] for r in data["fpr"]}):
        s, m, c = by[("sbbf", b)], by[("sbbf-murmur3", b)], by[("classic", b)]
        spec = pct(s["spec"]) if "spec" in s else ""
        lines.append(f"| {b:g} | {pct(s['measured'])} ({s['false_positives']:,}) | {pct(s['theory'])} | {spec} "
                     f"| {pct(m['measured'])} ({m['false_positives']:,}) | {pct(m['theory'])} "
                     f"| {pct(c['measured'])} ({c['false_positives']:,}) | {pct(c['theory'])} | {c['k']} |")
    lines += ["", "(false positives counted in parentheses.)", "", "## Speed (JVM, ns per hash)", "",
              "Bulk `insertAll` / `checkAll` over precomputed hashes at 10.5 bits per value, median of 5 "
              "rounds after 1 s of warm-up; check probes half present, half absent.", "",
              "| design | kernel | filter | insert | check |", "|---|---|---|---|---|"]
    speed = data["speed"]
    for d in DESIGNS:
        for kernel in ("vector", "scalar"):
            for size in sorted({r["filter_bytes"] for r in speed}):
                rs = {r["op"]: r["ns_per_op"] for r in speed
                      if r["design"] == d and r["kernel"] == kernel and r["filter_bytes"] == size}
                if rs:
                    label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
                    lines.append(f"| {d} | {kernel} | {label} | {rs['insert']:.2f} | {rs['check']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    src = pathlib.Path(argv[1]) if len(argv) > 1 else HERE / "algorithms.json"
    data = json.loads(src.read_text())
    png = src.with_suffix(".png")
    plot(data, png)
    md = src.with_suffix(".md")
    analysis = HERE / "algorithms-notes.md"
    text = report(data, png.name)
    if analysis.exists():
        text += "\n" + analysis.read_text()
    md.write_text(text)
    print(f"wrote {md} and {png}")


if __name__ == "__main__":
    main(sys.argv)
