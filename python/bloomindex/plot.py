"""The advisor's plot: expected bytes skipped over the workload against index size, one point
per candidate of ``RECOMMEND BLOOM INDEXES`` (``BloomIndex.plot_recommendations``).

matplotlib is an optional dependency (``pip install bloomindex[plot]``): it is imported when a
plot is drawn, never when bloomindex is.
"""

from __future__ import annotations

from typing import Any

__all__ = ["plot_recommendations"]


def plot_recommendations(recommendations: Any, ax: Any = None) -> Any:
    """Draws ``recommendations`` (a DataFrame of :meth:`BloomIndex.recommend`, or its rows) on
    ``ax`` (a new figure's axes when None): x the index's bytes, y the bytes it is expected to
    skip over the workload, recommended indexes (``create``) and the other candidates
    (``candidate``) in two colours, each point labelled with its columns. Returns the axes."""
    if isinstance(recommendations, (str, bytes)) or not (hasattr(recommendations, "collect")
                                                         or hasattr(recommendations, "__iter__")):
        raise TypeError("plot_recommendations: recommendations must be a DataFrame of BloomIndex.recommend() "
                        f"or its rows, got {type(recommendations).__name__}")
    if ax is not None and not hasattr(ax, "scatter"):
        raise TypeError(f"plot_recommendations: ax must be matplotlib Axes or None, got {type(ax).__name__}")
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - the extra is installed in the test environment
        raise ImportError("plot_recommendations needs matplotlib: pip install 'bloomindex[plot]'") from e
    rows = recommendations.collect() if hasattr(recommendations, "collect") else list(recommendations)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"create": ("tab:green", "recommended"), "candidate": ("tab:gray", "not recommended")}
    for kind, (colour, label) in styles.items():
        points = [r for r in rows if r["kind"] == kind]
        if not points:
            continue
        xs = [max(1, int(r["index_bytes"])) for r in points]
        ys = [max(1.0, float(r["bytes_skipped_total"])) for r in points]
        ax.scatter(xs, ys, c=colour, label=label)
        for r, x, y in zip(points, xs, ys):
            ax.annotate(f"{r['source'].split('.')[-1].strip('`')[-24:]}: {', '.join(r['columns'])}", (x, y),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("index size (bytes)")
    ax.set_ylabel("expected bytes skipped over the workload")
    ax.set_title("Bloom index candidates")
    if rows:
        ax.legend(loc="best")
    return ax
