#!/usr/bin/env python3
"""Re-pack a torch .pt2 archive (written uncompressed by torch) with deflate.

    python3 scripts/repack_deflate.py IN.pt2 OUT.pt2

Same entry names, same bytes inside each entry; only the zip compression differs.
Used for samples/big12k.pt2, whose 9.5 MB of stored JSON would not fit the 2 MB sample budget.
"""
import sys
import zipfile

src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
    for info in src.infolist():
        dst.writestr(info.filename, src.read(info.filename))
