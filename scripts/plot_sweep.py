#!/usr/bin/env python3
"""Plots `xpu-workbench sweep --json` output as a PNG with Pillow: device time against the swept
dimension on log-log axes, one line per mode, each mode's costliest kernel dashed, guard flips as
red vertical lines, recompiled points drawn larger. For docs; the app's panel draws the same live.

    xpu-workbench sweep FILE --dim SYM=LO..HI --json > sweep.json
    python3 scripts/plot_sweep.py sweep.json sweep.png "title"
"""
import json
import math
import sys

W, H = 1040, 520
L, R, T, B = 90, 330, 50, 60  # margins: the legend sits on the right
COLORS = {"lite": "#f0962a", "full": "#4696f0", "none": "#8c8c8c", "core": "#6cbf6c"}


def time_text(us):
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("µs", 1.0)):
        if us >= scale or unit == "µs":
            v = us / scale
            return (f"{v:.0f}" if v >= 10 else f"{v:.3g}") + " " + unit


def dashed(draw, a, b, fill, width, dash=(6, 4)):
    (xa, ya), (xb, yb) = a, b
    n = math.hypot(xb - xa, yb - ya)
    t, on = 0.0, True
    while t < n:
        step = dash[0] if on else dash[1]
        u = min(t + step, n)
        if on:
            draw.line([(xa + (xb - xa) * t / n, ya + (yb - ya) * t / n), (xa + (xb - xa) * u / n, ya + (yb - ya) * u / n)], fill=fill, width=width)
        t, on = u, not on


def main(src, dst, title):
    from PIL import Image, ImageDraw, ImageFont

    def font(size):
        try:
            return ImageFont.truetype("DejaVuSans.ttf", size)
        except OSError:
            return ImageFont.load_default(size)

    f12, f10, f15 = font(12), font(10), font(15)
    d = json.load(open(src))
    pts = d["points"]
    modes = list(dict.fromkeys(p["mode"] for p in pts))
    xs = [p["value"] for p in pts]
    ys = [max(p["device_us"], 1e-3) for p in pts] + [k["median_us"] for p in pts for k in p["kernels"] if k["median_us"] > 0]
    x0, x1 = math.log10(max(min(xs), 1)), math.log10(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    x1 = x1 if x1 > x0 else x0 + 1
    px = lambda v: L + (math.log10(max(v, 1)) - x0) / (x1 - x0) * (W - L - R)
    py = lambda us: H - B - (math.log10(max(us, 1e-3)) - y0) / (y1 - y0) * (H - T - B)
    img = Image.new("RGB", (W, H), "white")
    g = ImageDraw.Draw(img)
    g.text((L, 16), title, fill="black", font=f15)
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        g.line([(L, y), (W - R, y)], fill="#dddddd")
        g.text((L - 6, y), time_text(10 ** e), fill="black", font=f12, anchor="rm")
    for v in sorted(set(xs)):
        x = px(v)
        g.line([(x, T), (x, H - B)], fill="#f0f0f0")
        g.text((x, H - B + 10), str(v), fill="black", font=f10, anchor="mm")
    g.rectangle([L, T, W - R, H - B], outline="#888888")
    g.text(((L + W - R) / 2, H - 22), f"{d['dim']} (log)", fill="black", font=f12, anchor="mm")
    label = Image.new("RGB", (200, 16), "white")
    ImageDraw.Draw(label).text((100, 8), "median device time (log)", fill="black", font=f12, anchor="mm")
    img.paste(label.rotate(90, expand=True), (4, int((T + H - B) / 2 - 100)))
    for fl in d.get("flips", []):
        x = px(fl["value"])
        dashed(g, (x, T), (x, H - B), "#dc3c3c", 1, (4, 3))
        g.text((x + 3, T + 4), f"{fl['guard']} -> {str(fl['to']).lower()}", fill="#dc3c3c", font=f10)
    legend_y = T + 10
    for m in modes:
        c = COLORS.get(m, "#444444")
        mp = [p for p in pts if p["mode"] == m]
        line = [(px(p["value"]), py(p["device_us"])) for p in mp]
        g.line(line, fill=c, width=3, joint="curve")
        for p, (x, y) in zip(mp, line):
            r = 6 if p["recompiled"] else 3
            g.ellipse([x - r, y - r, x + r, y + r], fill=c)
        # The kernel with the most time summed over the sweep, dashed.
        totals = {}
        for p in mp:
            for k in p["kernels"]:
                totals[k["name"]] = totals.get(k["name"], 0) + k["median_us"]
        top = max(totals, key=totals.get) if totals else None
        if top:
            kl = [(px(p["value"]), py(next((k["median_us"] for k in p["kernels"] if k["name"] == top), 1e-3))) for p in mp]
            for a, b in zip(kl, kl[1:]):
                dashed(g, a, b, c, 2)
        lx = W - R + 14
        g.line([(lx, legend_y), (lx + 24, legend_y)], fill=c, width=3)
        g.text((lx + 30, legend_y), f"{m}: all kernels", fill="black", font=f12, anchor="lm")
        if top:
            legend_y += 18
            dashed(g, (lx, legend_y), (lx + 24, legend_y), c, 2)
            g.text((lx + 30, legend_y), f"{m}: {top}", fill="black", font=f10, anchor="lm")
        legend_y += 26
    g.text((W - R + 14, legend_y), f"{d['device']} ({d['backend']})", fill="black", font=f10)
    g.text((W - R + 14, legend_y + 14), f"median of <= {d['repeat']} runs, {d['budget_ms']} ms budget", fill="black", font=f10)
    img.save(dst)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "sweep")
