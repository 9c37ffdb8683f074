"""What the domain probes try and find, and what they cost (compat/domain.py).

Before the probes, each function, Tensor-method and layer entry was proven by its paired example: one model,
float32, one shape, and each row of the mapping table by one or two calls. This probes every such entry, and each
agreeing table row no entry takes as its own pair, over its domain, and prints: entries and parts tried, entries
that agree over every part, that differ on part of it (with the parts), not probed (why), by source, and the time,
against a baseline measured in the same run: the entries' paired examples alone (`recompat prove` of the same
entries, without the domain step).

    python bench/domain_bench.py [--entry ID ...]
"""
from __future__ import annotations

import argparse
import collections
import os
import time

os.environ.setdefault("GLOG_v", "3")


def main() -> None:
    from recompat import mappings
    from recompat.compat import domain
    from recompat.compat.prove import every_entry_proven, prove_entry

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry", action="append", help="only this entry (repeatable)")
    args = parser.parse_args()
    maps = mappings.default()
    entries = [e for e in (*domain.probed_entries(maps), *domain.row_pairs(maps))
               if not args.entry or e.id in args.entry]

    start = time.perf_counter()
    translate_with = every_entry_proven(maps)
    for e in entries:
        if getattr(e, "table_row", 0) is None:   # a table row's calls were verify-table's, not an example here
            prove_entry(e, maps=translate_with, write=False)
    examples = time.perf_counter() - start

    start = time.perf_counter()
    found = domain.probe_all(entries, maps, say=lambda _: None)
    probes = time.perf_counter() - start

    parts = sum(len(d.parts) for d in found.values())
    differing = {k: d.differing() for k, d in found.items() if d.differing()}
    unprobed = {k: d.reason for k, d in found.items() if d.reason}
    kinds = collections.Counter(k for d in found.values() for k in domain.kinds(d.parts).values())
    print(f"entries: {len(entries)}; before: 1 paired example each ({len(entries)} calls, float32); "
          f"now: {parts} parts ({parts / max(len(entries), 1):.1f} per entry)")
    print("outcomes over all parts: " + ", ".join(f"{n} {k}" for k, n in kinds.most_common()))
    rows = {e.id for e in entries if isinstance(e, domain.RowPair)}
    made = {e.id for e in entries if e.id not in rows and e.table_row is not None}
    for source, ids in (("mappings/, functions and Tensor methods", {e.id for e in entries if e.id not in rows | made
                                                                     and e.rule != "api_class"}),
                        ("mappings/, layers", {e.id for e in entries if e.rule == "api_class" and e.id not in rows}),
                        ("entries made from the table's rows (RC323)", made),
                        ("the table's other agreeing rows, as their own pair", rows)):
        wrong, left = len(ids & set(differing)), len(ids & set(unprobed))
        print(f"{source}: {len(ids)} probed; agree over every part tried: {len(ids) - wrong - left}; "
              f"differ on part of it: {wrong}; not probed: {left}")
    routed = sorted(e.id for e in entries if e.mindspore["api"].startswith("recompat.runtime.")
                    and e.id not in differing and e.id not in unprobed)
    print(f"routed to recompat.runtime and agreeing over every part tried: {len(routed)} ({', '.join(routed)})")
    for k, d in sorted(differing.items()):
        print(f"  {k}: {'; '.join(d)}")
    for k, why in sorted(unprobed.items()):
        print(f"  not probed: {k}: {why[:120]}")
    print(f"time: paired examples {examples:.1f} s, domain probes {probes:.1f} s "
          f"({probes / max(examples, 1e-9):.2f}x the examples)")


if __name__ == "__main__":
    main()
