#!/usr/bin/python3
"""The polynomial behind qkv_normal_cdf_pdf_fast (src/tensor/fastmath.h), reproducibly.

erfc(z) = t F(t) e^(-z^2) with t = 1 / (1 + z/2) maps z in [0, inf) to t in (0, 1], where
F(t) = erfcx(z) / t is smooth (F(0) = 1/sqrt(pi), F(1) = 1). A degree-10 polynomial in t,
fitted for relative error (weighted least squares on Chebyshev nodes, reweighted toward
minimax), replaces the Chebyshev exponent fit plus a second exp. Needs numpy and mpmath
(Debian: python3-numpy, python3-mpmath); run by hand, not by the build.

  /usr/bin/python3 scripts/fit_normal_cdf.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def F(t):
    z = 2 * (1 / mp.mpf(t) - 1)
    return mp.erfc(z) * mp.exp(z * z) / mp.mpf(t)


def main(deg=10, nodes=4000):
    ts = 0.5 - 0.5 * np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    fv = np.array([float(F(t)) for t in ts])
    V = np.vander(ts, deg + 1, increasing=True)
    w = 1 / fv
    for _ in range(30):
        c, *_ = np.linalg.lstsq(V * w[:, None], fv * w, rcond=None)
        err = (V @ c - fv) / fv
        w = w * (1 + 5 * np.abs(err) / np.abs(err).max())
    check = np.linspace(1e-4, 1, 2001)
    ref = np.array([float(F(t)) for t in check])
    worst = np.max(np.abs(np.polyval(c[::-1], check) - ref) / ref)
    print(f"degree {deg}: max relative error {worst:.3g}")
    print("coefficients, highest degree first (Horner order):")
    for v in c[::-1]:
        print(f"  {v:.8g}")


if __name__ == "__main__":
    main()
