"""The suite's report: issue 17's targets, the full table, the README summary, the latency
plot, and reading a results JSON back (--report)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import issue17
import suite
from common import fmt, fmt_values, progress
from suite import BROKER_CPU, CLIENT_CPU, MiB, Results, Row, Settings
from suite_produce import produce_matrix


def targets(res: Results) -> list[tuple[str, str, str, bool | None]]:
    """(target, measured, required, met) for each ratio target of issue 8."""
    out: list[tuple[str, str, str, bool | None]] = []

    def ratio(num: str, den: str, need: float, what: str) -> None:
        a, b_ = res.median(num), res.median(den)
        if a is None or b_ is None:
            out.append((what, "not measured", f">= {need:.0%}", None))
            return
        r = a / b_
        out.append((what, f"{fmt(a)} / {fmt(b_)} MB/s = {r:.0%}", f">= {need:.0%}", r >= need))

    ratio("produce.raw.1024.mb_s", "ceil.write", 0.5,
          "produce 1 KiB (raw pipelined Produce loop, acks=1, 1 partition) vs file-write ceiling")
    ratio("produce.1024.1.none.1.mb_s", "ceil.write", 0.5,
          "produce 1 KiB (confluent-kafka, acks=1, none, 1 partition; client-bound) vs "
          "file-write ceiling")
    ratio("fetch.raw.mb_s", "ceil.sendfile", 0.7, "fetch vs os.sendfile ceiling")
    v = res.median("produce.100.1.none.1.rec_s")
    out.append(("produce 100 B records/s, one confluent-kafka producer (acks=1, none, 1 partition)",
                "not measured" if v is None else f"{fmt(v)} records/s", ">= 400,000",
                None if v is None else v >= 400_000))
    v = res.median("latency.10.p99")
    out.append(("p99 end-to-end latency at 10 % load",
                "not measured" if v is None else f"{fmt(v)} ms", "<= 5 ms",
                None if v is None else v <= 5))
    rss = [max(r.values) for r in res.rows.values() if r.unit == "broker peak RSS MB" and r.values]
    out.append(("broker peak RSS, every run", "not measured" if not rss else f"{fmt(max(rss))} MB",
                "<= 200 MB", None if not rss else max(rss) <= 200))
    rf3_all, rf3_one = res.median("cluster.rf3.all.mb_s"), res.median("cluster.rf3.1.mb_s")
    if rf3_all is None or not rf3_one:
        out.append(("acks=all RF=3 vs acks=1", "not measured", ">= 40%", None))
    else:
        ratio = 100 * rf3_all / rf3_one
        out.append(("acks=all RF=3 vs acks=1",
                    f"{fmt(rf3_all)} / {fmt(rf3_one)} MB/s = {ratio:.0f}%", ">= 40%",
                    ratio >= 40))
    return out


def render(res: Results, s: Settings) -> str:
    lines = [f"Mode: {'quick' if s.quick else 'full'}, {s.repeat} repeat(s); median "
             f"(min–max). Broker on core {BROKER_CPU}, clients on core {CLIENT_CPU}. Load average "
             f"at start/end: {_load(res, 'loadavg_start')} / {_load(res, 'loadavg_end')} "
             "(above 0 means other processes shared the cores).", ""]
    lines += ["| measurement | unit | value | compared to |", "| --- | --- | --- | --- |"]
    section = None
    for r in res.rows.values():
        if r.section != section:
            section = r.section
            lines.append(f"| **{section}** | | | |")
        cmp_ = ""
        if r.ceiling and r.values and res.median(r.ceiling):
            c = res.rows[r.ceiling]
            ratio = statistics.median(r.values) / statistics.median(c.values)
            cmp_ = f"{ratio:.0%} of {c.name.split(',')[0]} ({fmt(statistics.median(c.values))})"
        if r.note:
            cmp_ = f"{cmp_}; {r.note}" if cmp_ else r.note
        lines.append(f"| {r.name} | {r.unit} | {fmt_values(r.values)} | {cmp_} |")
    lines += ["", "| target (issue 8) | measured | required | |", "| --- | --- | --- | --- |"]
    for what, got, need, met in targets(res):
        mark = "n/a" if met is None else ("met" if met else "**missed**")
        lines.append(f"| {what} | {got} | {need} | {mark} |")
    lines += ["", *issue17.render(res)]
    for err in res.extra.get("errors", []):  # type: ignore[union-attr]
        lines += ["", f"Section failed: {err}"]
    return "\n".join(lines) + "\n"


def _load(res: Results, key: str) -> str:
    la = res.extra.get(key)
    return f"{la[0]:.1f}" if la else "?"  # type: ignore[index]


def render_summary(res: Results, s: Settings) -> str:
    """The compact tables for the README: one line per configuration."""
    def med(key: str) -> str:
        r = res.rows.get(key)
        return fmt_values(r.values) if r and r.values else "–"

    def pct(key: str, ceiling: str) -> str:
        a, b_ = res.median(key), res.median(ceiling)
        return f"{a / b_:.0%}" if a is not None and b_ else "–"

    mode = "quick" if s.quick else "full"
    out = [f"`benchmarks/run.py --{mode}`" if s.quick else "`benchmarks/run.py`",
           f"({s.repeat} repeats; median, min–max in parentheses; broker on core {BROKER_CPU}, "
           f"clients on core {CLIENT_CPU}; load average at start/end "
           f"{_load(res, 'loadavg_start')} / {_load(res, 'loadavg_end')}).", "",
           "| ceiling (same run, best of 3) | MB/s |", "| --- | --- |"]
    for key in ("ceil.loopback", "ceil.sendfile", "ceil.write", "ceil.write_buffered"):
        if key in res.rows:
            out.append(f"| {res.rows[key].name} | {med(key)} |")
    for size in (100, 1024):
        key = f"ceil.client.{size}"
        if key in res.rows:
            out.append(f"| {res.rows[key].name} | {med(key)} records/s |")
    out += ["", "| produce (confluent-kafka unless noted) | records/s | MB/s | % of disk write | "
            "broker CPU ms/MB (user, i.e. Python) | peak RSS MB |",
            "| --- | --- | --- | --- | --- | --- |"]
    for size, acks, codec, parts in produce_matrix(s):
        k = f"produce.{size}.{acks}.{codec}.{parts}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| {size} B, acks={acks}, {codec}, {parts} p | {med(k + '.rec_s')} | "
                       f"{med(k + '.mb_s')} | {pct(k + '.mb_s', 'ceil.write')} | "
                       f"{med(k + '.cpu_mb')} ({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    for size in (100, 1024):
        k = f"produce.raw.{size}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| raw pipelined Produce loop {size} B, acks=1, none, 1 p | "
                       f"{med(k + '.rec_s')} | {med(k + '.mb_s')} | "
                       f"{pct(k + '.mb_s', 'ceil.write')} | {med(k + '.cpu_mb')} "
                       f"({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    for size in (100, 1024):
        k = f"kafka_python.{size}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| kafka-python {size} B, acks=1, none, 1 p | {med(k + '.rec_s')} | "
                       f"{med(k + '.mb_s')} | {pct(k + '.mb_s', 'ceil.write')} | "
                       f"{med(k + '.cpu_mb')} ({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    if "fetch.raw.mb_s" in res.rows:
        size = res.extra.get("fetch_log_bytes", 0) / MiB  # type: ignore[operator]
        out += ["", f"| fetch {size:,.0f} MiB from offset 0, page-cached | MB/s | "
                "% of sendfile | records/s | broker CPU ms/MB | peak RSS MB |",
                "| --- | --- | --- | --- | --- | --- |",
                f"| raw Fetch v11 loop (counts bytes) | {med('fetch.raw.mb_s')} | "
                f"{pct('fetch.raw.mb_s', 'ceil.sendfile')} | {med('fetch.raw.rec_s')} | "
                f"{med('fetch.raw.cpu_mb')} | {med('fetch.raw.rss')} |",
                f"| kcat (librdkafka; client-bound) | {med('fetch.kcat.mb_s')} | "
                f"{pct('fetch.kcat.mb_s', 'ceil.sendfile')} | {med('fetch.kcat.rec_s')} | – | "
                f"{med('fetch.kcat.rss')} |"]
    if "latency.10.p50" in res.rows:
        out += ["", f"Latency setup maximum, end to end: {med('latency.max')} records/s.", "",
                "| end-to-end latency, 1 KiB, acks=1 | offered records/s | achieved | p50 ms | "
                "p99 ms | p99.9 ms | p99 send → append | p99 append → consumed | client core busy "
                "| broker core busy | broker run-queue wait |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for lv in (10, 50, 90):
            k = f"latency.{lv}"
            out.append(f"| {lv} % of max | {med(k + '.rate')} | {med(k + '.achieved')} | "
                       f"{med(k + '.p50')} | {med(k + '.p99')} | {med(k + '.p99.9')} | "
                       f"{med(k + '.to_append.p99')} | {med(k + '.from_append.p99')} | "
                       f"{med(k + '.client_busy')} % | {med(k + '.broker_busy')} % | "
                       f"{med(k + '.broker_wait')} % |")
    scale = [r for r in res.rows.values() if r.section == "scale"]
    if scale:
        out += ["", "| scale | value | unit |", "| --- | --- | --- |"]
        for r in scale:
            note = f" ({r.note})" if r.note else ""
            out.append(f"| {r.name}{note} | {fmt_values(r.values)} | {r.unit} |")
    out += ["", "| target (issue 8) | measured | required | |", "| --- | --- | --- | --- |"]
    for what, got, need, met in targets(res):
        mark = "n/a" if met is None else ("met" if met else "**missed**")
        out.append(f"| {what} | {got} | {need} | {mark} |")
    out += ["", *issue17.render(res)]
    for err in res.extra.get("errors", []):  # type: ignore[union-attr]
        out += ["", f"Section failed: {err}"]
    return "\n".join(out) + "\n"


def load_results(path: Path) -> tuple[Results, Settings]:
    """Results and settings back from a JSON file this script wrote (for --report)."""
    doc = json.loads(path.read_text())
    res = Results()
    res.rows = {k: Row(**v) for k, v in doc["rows"].items()}
    res.extra = doc.get("extra", {})
    st = dict(doc["settings"])
    st["data_dir"] = None
    st["sections"] = tuple(st["sections"])
    return res, Settings(**st)


def plot_latency(res: Results, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        progress("matplotlib not installed: no latency plot")
        return False
    loads = [lv for lv in (10, 50, 90) if res.median(f"latency.{lv}.p50") is not None]
    if not loads:
        return False
    rates = [res.median(f"latency.{lv}.rate") or 0 for lv in loads]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name in ("p50", "p99", "p99.9"):
        ys = [res.median(f"latency.{lv}.{name}") for lv in loads]
        lo = [min(res.rows[f"latency.{lv}.{name}"].values) for lv in loads]
        hi = [max(res.rows[f"latency.{lv}.{name}"].values) for lv in loads]
        ax.errorbar(rates, ys, yerr=[[y - a for y, a in zip(ys, lo, strict=True)],
                                     [b_ - y for y, b_ in zip(ys, hi, strict=True)]],
                    marker="o", capsize=3, label=name)
    ax.axhline(5, color="grey", linestyle="--", linewidth=0.8, label="5 ms target (p99 @ 10 %)")
    ax.set_yscale("log")
    ax.set_xlabel("offered load, 1 KiB records/s (10 / 50 / 90 % of the end-to-end max)")
    ax.set_ylabel("end-to-end latency, ms")
    ax.set_title("kafkapy end-to-end latency vs offered load")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_reports(res: Results, s: Settings) -> None:
    """Print the full table; write it, the README summary and the latency plot to results/."""
    mode = "quick" if s.quick else "full"
    table = render(res, s)
    print(table)
    (suite.RESULTS / f"{mode}.md").write_text(table)
    (suite.RESULTS / f"{mode}-summary.md").write_text(render_summary(res, s))
    progress(f"tables: {suite.RESULTS / f'{mode}.md'}, {suite.RESULTS / f'{mode}-summary.md'}")
    if plot_latency(res, suite.RESULTS / f"latency-{mode}.png"):
        progress(f"latency plot: {suite.RESULTS / f'latency-{mode}.png'}")
