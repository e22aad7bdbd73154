"""The SQLite graph walked from a private copy (issue 36, defect 6): what a process's copy of the
graph file costs against the checksum read its load made before, at the file sizes of 100,000 and
1,000,000 memories (92 MB and 917 MB at M 16, bench/RESULTS.md "Remember at a million memories").

    nice python -m bench.scale.graph_copy [--folder /tmp/graph-copy] [--rounds 3]

A file of random bytes of each size is written into `--folder` (put it on the disk the database
is on); per round, interleaved: the old load's read (the CRC-32 of the file, as `_checksum` did),
then `GraphFile.private_copy` (the kernel's copy into an unnamed file, then the CRC-32 of the
copy), and the same copy by plain reads and writes (where the kernel cannot copy: macOS, some
file systems). Prints a markdown table; the copy's disk use is its size, freed when the process
lets the graph go.
"""

from __future__ import annotations

import argparse
import os
import time
import zlib
from pathlib import Path

from mcp_memory.stores.sqlite import ann

SIZES = {"100,000": 91_700_000, "1,000,000": 917_000_000}


def _checksum_read(path: Path) -> None:
    crc = 0
    with open(path, "rb") as data:
        while chunk := data.read(ann.CHUNK):
            crc = zlib.crc32(chunk, crc)


def _by_reads(path: Path, folder: Path) -> None:
    fd = ann._unnamed_file(folder)
    try:
        with open(path, "rb") as data:
            while chunk := data.read(ann.CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", type=Path, default=Path("/tmp/graph-copy"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    args.folder.mkdir(exist_ok=True)
    print("| memories | file | old load: checksum read | private copy (kernel copy + checksum) | copy by reads |")
    print("| --- | --- | --- | --- | --- |")
    for label, size in SIZES.items():
        path = args.folder / "g.hnsw"
        block = os.urandom(1 << 20)
        with open(path, "wb") as out:
            for start in range(0, size, len(block)):
                out.write(block[: min(len(block), size - start)])
        _checksum_read(path)  # warm, as a file the building thread just wrote is
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            _checksum_read(path)
            t1 = time.perf_counter()
            copy, copied, _ = ann.GraphFile.private_copy(path, args.folder, lambda: None)
            t2 = time.perf_counter()
            copy.close()
            _by_reads(path, args.folder)
            t3 = time.perf_counter()
            assert copied == size
            print(
                f"| {label} | {size / 1e6:.0f} MB | {t1 - t0:.2f} s | {t2 - t1:.2f} s | {t3 - t2:.2f} s |", flush=True
            )
        path.unlink()


if __name__ == "__main__":
    main()
