"""What scripts/gen_opinfo.py and scripts/gen_long_lines.py both write for a case: a tensor as .npy
bytes, a torch.export archive without its pickled sample inputs, and one op's cases as a gzipped
stored zip (the layout tests/common/opinfo.rs reads)."""
import gzip
import io
import zipfile

import numpy as np
import torch


def to_npy(t):
    """bfloat16 has no numpy dtype: its bits go as uint16 (int16 where torch has no uint16)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.uint16).numpy() if hasattr(torch, "uint16") else t.view(torch.int16).numpy()
    return t.numpy()


def npy_bytes(t):
    b = io.BytesIO()
    np.save(b, to_npy(t), allow_pickle=False)
    return b.getvalue()


def slim_pt2(ep):
    """torch.export.save's archive without the pickled sample inputs (the importer does not read them)."""
    b = io.BytesIO()
    torch.export.save(ep, b)
    zin = zipfile.ZipFile(io.BytesIO(b.getvalue()))
    o = io.BytesIO()
    with zipfile.ZipFile(o, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if "sample_inputs" in info.filename:
                continue
            zout.writestr(info.filename, zin.read(info.filename))
    return o.getvalue()


def write_zip_gz(path, entries):
    """`entries` (name → bytes) as a stored zip, gzipped whole: the cases of one op share most of
    their bytes, which per-entry deflate cannot see. Fixed dates and mtime keep reruns identical."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    with open(path, "wb") as f:
        f.write(gzip.compress(raw.getvalue(), 9, mtime=0))
