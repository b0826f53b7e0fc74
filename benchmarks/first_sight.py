"""Score new sources at first sight: the shipped model on rows it has never seen.

Takes a speedup table of new rows (the schema of ``published/speedups.csv``,
one or more ``source_id``s none of which the published data hold yet),
predicts each source's rows with the default model as shipped, prints its
median, p90 and wrong verdicts, and with ``--write`` appends the record to
``published/first_sight.csv`` and the per-row predictions to
``published/first_sight_rows.csv``.  Run it before the rows are added to the
published data (it refuses a source the data already hold), then add them;
``--pooled`` prints the record so far, the test score.

    python benchmarks/first_sight.py new_rows.csv [--write] [--date YYYY-MM-DD]
    python benchmarks/first_sight.py --pooled
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

from roofline_sym.fidelity.published_tables import first_sight as fs
from roofline_sym.fidelity.published_tables.speedup_table import published, read


def _commit() -> str:
    """The main commit the shipped model is at: the checkout's merge base with
    ``main`` (a branch's own commits change their names when rebased), else
    its HEAD; blank outside a git checkout."""
    here = Path(fs.__file__).parent
    for args in (["merge-base", "HEAD", "main"], ["rev-parse", "HEAD"]):
        try:
            out = subprocess.run(["git", *args], capture_output=True, text=True, cwd=here,
                                 check=True)
        except (OSError, subprocess.CalledProcessError):
            continue
        return out.stdout.strip()[:12]
    return ""


def _line(label: str, e: dict) -> str:
    if not e["rows"]:
        return f"{label:<44} no rows scored yet"
    return (f"{label:<44} rows {e['rows']:4d}  median {e['median']:6.1%}  "
            f"p90 {e['p90']:6.1%}  wrong {e['wrong']:3d}/{e['decisive']:<4d}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?", help="a speedup table of new rows")
    ap.add_argument("--write", action="store_true", help="append to the shipped record")
    ap.add_argument("--date", help="the date of the score (default today, UTC)")
    ap.add_argument("--pooled", action="store_true", help="print the record so far")
    args = ap.parse_args(argv)
    if args.table:
        new = read(args.table)
        known = set(published().source_id)
        commit = _commit()
        for source in dict.fromkeys(str(s) for s in new.source_id):
            if source in known:
                print(f"{source}: already in the published data, not at first sight",
                      file=sys.stderr)
                return 1
            seen = fs.score_first_sight(new.select(new.source_id == source), date=args.date,
                                        model_commit=commit)
            print(seen)
            for i in np.argsort(-np.abs(seen.predicted / seen.table.measured - 1))[:3]:
                print(f"    worst: M,K,N = {seen.table.M[i]:.0f},{seen.table.K[i]:.0f},"
                      f"{seen.table.N[i]:.0f} {seen.table.recipe[i]} measured "
                      f"{seen.table.measured[i]:.3g} predicted {seen.predicted[i]:.3g}")
            if args.write:
                fs.append_first_sight(seen)
    if args.pooled or not args.table:
        stored = fs.read_first_sight_rows()
        for rec in fs.read_first_sight():
            print(_line(f"{rec['source']} ({rec['date']})", stored.figures(rec["source"])))
        print(_line("first sight, pooled (the test score)", fs.pooled(stored)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
