"""``memvault db stats``: what vacuum and bloat look like, table by table and index by index, and the upkeep summary
/health shows (sql/idempotent/160-upkeep.sql)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from psycopg.rows import dict_row

from app.db.connector import sync_connection
from app.db.queries import Q


def collect(url: str) -> dict[str, Any]:
    with sync_connection(url, row_factory=dict_row) as conn:
        rows = conn.execute(Q.db_stats).fetchall()
        summary = conn.execute(Q.upkeep_summary).fetchone()
    return {"summary": summary, "tables": [r for r in rows if r["kind"] == "table"],
            "indexes": [r for r in rows if r["kind"] == "index"]}


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _ago(t: datetime | None) -> str:
    if t is None:
        return "never"
    s = (datetime.now(UTC) - t).total_seconds()
    if s >= 86400:
        return f"{s / 86400:.1f} d ago"
    return f"{s / 3600:.1f} h ago" if s >= 3600 else f"{s / 60:.0f} min ago"


def render(stats: dict[str, Any], *, top: int = 15) -> str:
    s = stats["summary"]
    lines = [f"tables needing vacuum (dead rows > 20% and > 1,000): {s['tables_needing_vacuum']}; "
             f"worst: {s['worst_table']} ({_pct(s['worst_dead_ratio'])} dead); never vacuumed (> 1,000 rows): "
             f"{s['never_vacuumed']}",
             f"log partitions ahead: {s['log_months_ahead']} month(s); rows in the default partitions: "
             f"{s['default_partition_rows']}", "",
             f"{'table':32} {'size':>10} {'live':>10} {'dead':>9} {'dead%':>6} {'vacuumed':>14} {'analyzed':>14}"]
    for r in stats["tables"][:top]:
        lines.append(f"{r['name'][:32]:32} {_size(r['bytes']):>10} {r['live_rows']:>10} {r['dead_rows']:>9} "
                     f"{_pct(r['dead_ratio']):>6} {_ago(r['last_vacuum']):>14} {_ago(r['last_analyze']):>14}")
    lines += ["", f"{'index':44} {'table':20} {'size':>10} {'bloat~':>7} {'scans':>10}"]
    for r in stats["indexes"][:top]:
        lines.append(f"{r['name'][:44]:44} {r['table_name'][:20]:20} {_size(r['bytes']):>10} "
                     f"{_pct(r['est_bloat_ratio']):>7} {r['scans']:>10}")
    lines.append("(bloat~: B-tree estimate from row counts and widths; HNSW/GIN: '-', they shrink only by REINDEX)")
    return "\n".join(lines)
