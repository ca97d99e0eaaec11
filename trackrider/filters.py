"""The Butterworth low-pass of the filtered G columns, without importing ``scipy.signal``.

``scipy.signal`` imports ``scipy.stats`` and takes 0.3–0.6 s to import, more than the
whole simulation of a short ride; trackrider needs three small pieces of it. They are
written here with the same arithmetic, in the same order, so that the results are
bit-identical to scipy's (``tests/test_filters.py`` compares them):

* ``butter_lowpass_sos`` — ``scipy.signal.butter(order, cutoff, fs=fs, output="sos")``
  for a low-pass: analog prototype poles ``p_k = −exp(iπ(2k − N + 1)/(2N))``, the
  cut-off pre-warped (``ω = 4 tan(π W / 2)``, ``W = 2 f_c / f_s``), the bilinear
  transform at ``f_s = 2``, and sections of conjugate pole pairs whose zeros are all at
  ``z = −1`` (every zero of a Butterworth low-pass), the pair nearest the unit circle
  last and the gain in the first section, as ``zpk2sos`` orders them.
* ``sosfilt`` — the cascade of second-order sections in direct form II transposed,
  along axis 0, with the state carried in and out (scipy's ``sosfilt`` with ``zi``).
* ``sosfilt_zi`` — the steady-state start of each section for a unit step.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.jit import njit


def butter_lowpass_sos(order: int, cutoff_hz: float, sample_hz: float) -> np.ndarray:
    """Second-order sections ``(n_sections, 6)`` of a digital Butterworth low-pass.

    order : filter order (even) ; cutoff_hz : Hz, below ``sample_hz / 2`` ;
    sample_hz : Hz.  Rows are ``[b0, b1, b2, 1, a1, a2]``.
    """
    n = int(order)
    if n < 2 or n % 2:
        raise ValueError(f"the Butterworth order must be even and at least 2, got {order}")
    wn = 2.0 * cutoff_hz / sample_hz                        # normalised to Nyquist
    m = np.arange(-n + 1, n, 2)
    poles = -np.exp(1j * math.pi * m / (2 * n))             # analog prototype, |p| = 1
    warped = 2.0 * 2.0 * math.tan(math.pi * wn / 2.0)       # pre-warp at fs = 2
    poles = warped * poles
    gain = warped ** n
    fs2 = 2.0 * 2.0
    poles_z = (fs2 + poles) / (fs2 - poles)
    gain_z = gain * np.real(1.0 / np.prod(fs2 - poles))
    return _sections(poles_z, gain_z)


def _sections(poles, gain):
    """Pair the conjugate poles into sections the way ``zpk2sos`` ("nearest") does for a
    low-pass whose zeros are all at −1: the pair nearest the unit circle last, the gain
    in the first section."""
    n_sections = len(poles) // 2
    sos = np.zeros((n_sections, 6))
    b = np.real(np.poly(np.array([-1.0, -1.0], dtype=complex)))
    remaining = list(poles)
    for si in range(n_sections - 1, -1, -1):
        p1 = remaining.pop(int(np.argmin([abs(1.0 - abs(p)) for p in remaining])))
        j = min(range(len(remaining)), key=lambda i: abs(remaining[i] - np.conj(p1)))
        sos[si, :3] = b
        sos[si, 3:] = np.real(np.poly(np.array([p1, remaining.pop(j)])))
    sos[0, :3] *= gain
    return sos


@njit(cache=True, fastmath=False)  # no fused multiply-add: scipy's sosfilt to the bit
def _sosfilt_columns(sos, x, zi):  # pragma: no cover - compiled
    n_sections = sos.shape[0]
    y = np.empty_like(x)
    z = zi.copy()
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            v = x[i, c]
            for s in range(n_sections):
                b0 = sos[s, 0]
                b1 = sos[s, 1]
                b2 = sos[s, 2]
                a1 = sos[s, 4]
                a2 = sos[s, 5]
                out = b0 * v + z[s, 0, c]
                z[s, 0, c] = b1 * v - a1 * out + z[s, 1, c]
                z[s, 1, c] = b2 * v - a2 * out
                v = out
            y[i, c] = v
    return y, z


def sosfilt(sos: np.ndarray, x: np.ndarray, zi: np.ndarray):
    """Filter ``x`` ``(m, n_columns)`` along axis 0; ``zi`` ``(n_sections, 2, n_columns)``.

    Returns ``(y, zf)`` like ``scipy.signal.sosfilt(sos, x, axis=0, zi=zi)``.
    """
    x2 = np.ascontiguousarray(np.asarray(x, dtype=float).reshape(len(x), -1))
    z2 = np.ascontiguousarray(np.broadcast_to(np.asarray(zi, dtype=float),
                                              (sos.shape[0], 2, x2.shape[1])))
    y, zf = _sosfilt_columns(np.ascontiguousarray(sos, dtype=float), x2, z2)
    return y.reshape(np.shape(x)), zf


def sosfilt_zi(sos: np.ndarray) -> np.ndarray:
    """Steady-state initial state ``(n_sections, 2)`` of each section for a unit step
    (``scipy.signal.sosfilt_zi``): section ``s`` starts at ``scale_s · lfilter_zi(b_s, a_s)``,
    ``scale_s`` the DC gain of the sections before it."""
    sos = np.asarray(sos, dtype=float)
    zi = np.empty((sos.shape[0], 2))
    scale = 1.0
    for s in range(sos.shape[0]):
        b = sos[s, :3]
        a = sos[s, 3:]
        zi[s] = scale * _lfilter_zi(b, a)
        scale *= b.sum() / a.sum()
    return zi


def _lfilter_zi(b, a):
    """``scipy.signal.lfilter_zi`` for one normalised section (a[0] = 1)."""
    n = max(len(a), len(b))
    companion = np.zeros((n - 1, n - 1))
    companion[0, :] = -a[1:] / a[0]
    companion[1:, :-1] += np.eye(n - 2)
    i_minus_a = np.eye(n - 1) - companion.T
    bv = b[1:] - a[1:] * b[0]
    return np.linalg.solve(i_minus_a, bv)


def slowest_pole_radius(sos: np.ndarray) -> float:
    """The largest pole modulus of the sections (how slowly their response decays)."""
    radii = [np.abs(np.roots(row[3:])) for row in np.asarray(sos, dtype=float)]
    return float(max(r.max() for r in radii if len(r)))


# ----------------------------------------------------------------------------------
# zero-phase low-pass filter, streamed
# ----------------------------------------------------------------------------------

def butterworth_sos(cutoff_hz: float, sample_hz: float, order: int = 4):
    """Second-order sections of a Butterworth low-pass, or None if it cannot act.

    cutoff_hz : Hz, > 0.  sample_hz : Hz.  The filter cannot act when the
    cut-off is at or above the Nyquist frequency ``sample_hz / 2``.
    """
    if not (cutoff_hz > 0.0) or cutoff_hz >= 0.5 * sample_hz:
        return None
    return butter_lowpass_sos(order, cutoff_hz, sample_hz)


def _default_padlen(sos) -> int:
    """scipy.signal.sosfiltfilt's default pad length for these sections."""
    n_sections = sos.shape[0]
    ntaps = 2 * n_sections + 1
    ntaps -= min(int((sos[:, 2] == 0).sum()), int((sos[:, 5] == 0).sum()))
    return 3 * ntaps


class ZeroPhaseLowpass:
    """Streaming ``sosfiltfilt`` of several columns (axis 0 is time).

    The forward pass runs causally with its state carried from chunk to chunk.
    The backward pass of each emitted block starts ``margin`` samples later,
    from the steady state of the last forward value; the error this start leaves
    decays like ``|p|^margin`` (``p`` the slowest pole), and ``margin`` is chosen
    so that ``|p|^margin < tol``. The final block (``finish``) is exact, with
    scipy's odd padding at the end. So the output equals ``filtfilt_reference``
    to ~``tol`` × the signal's scale, lagging the input by at most
    ``margin + block`` samples.

    Parameters
    ----------
    cutoff_hz : float
        Cut-off frequency, Hz.
    sample_hz : float
        Sample rate, Hz.
    n_columns : int
        Number of series filtered side by side.
    order : int
        Butterworth order (default 4).
    tol : float
        Relative size of the backward-start error (default 1e-14).
    """

    def __init__(self, cutoff_hz: float, sample_hz: float, n_columns: int,
                 order: int = 4, tol: float = 1e-14):
        self.n_columns = int(n_columns)
        self.sos = butterworth_sos(cutoff_hz, sample_hz, order)
        self.applied = self.sos is not None
        self._raw = np.empty((0, self.n_columns))   # input not yet emitted
        self._fwd = np.empty((0, self.n_columns))   # forward-pass output of those samples
        self._zf = None                              # forward state
        self._head = np.empty((0, self.n_columns))  # first samples, before the start
        self._started = False
        if not self.applied:
            self.padlen = 0
            self.margin = 0
            return
        self.padlen = _default_padlen(self.sos)
        rho = slowest_pole_radius(self.sos)
        # envelope of a 4-pole cascade ~ n^3 |p|^n: add a safety factor of 1.5
        self.margin = max(self.padlen + 1, int(math.ceil(1.5 * math.log(tol) / math.log(rho))))
        # emit in blocks of half the margin: each emission re-filters margin + block
        # samples backwards (3x the work of one pass), and the buffer stays small
        self.block = max(self.margin // 2, 256)
        self._zi = sosfilt_zi(self.sos)[:, :, None]  # (n_sections, 2, 1)

    # -- forward pass -------------------------------------------------------------
    def _start(self, head):
        """Begin the forward pass on the odd front extension of ``head``."""
        p = self.padlen
        front = 2.0 * head[0] - head[p:0:-1]
        ext = np.concatenate([front, head])
        y, self._zf = sosfilt(self.sos, ext, self._zi * ext[0])
        self._raw = head.copy()
        self._fwd = y[p:]
        self._started = True

    def _forward(self, x):
        y, self._zf = sosfilt(self.sos, x, self._zf)
        self._raw = np.concatenate([self._raw, x])
        self._fwd = np.concatenate([self._fwd, y])

    def _backward(self, fwd):
        y, _ = sosfilt(self.sos, fwd[::-1], self._zi * fwd[-1])
        return y[::-1]

    # -- public -------------------------------------------------------------------
    def push(self, x) -> np.ndarray:
        """Feed ``x`` (m, n_columns); return the filtered samples now final (k, n_columns).

        The returned rows continue, in order, those returned before.
        """
        x = np.asarray(x, dtype=float).reshape(-1, self.n_columns)
        if not self.applied:
            return x.copy()
        if not self._started:
            self._head = np.concatenate([self._head, x])
            if len(self._head) <= self.padlen:
                return np.empty((0, self.n_columns))
            head, self._head = self._head, np.empty((0, self.n_columns))
            self._start(head)
        else:
            self._forward(x)
        n = len(self._raw)
        if n < self.margin + self.block:
            return np.empty((0, self.n_columns))
        k = n - self.margin
        out = self._backward(self._fwd)[:k]
        self._raw = self._raw[k:]
        self._fwd = self._fwd[k:]
        return out

    def finish(self) -> np.ndarray:
        """Filter the rest exactly (odd padding at the end) and return it."""
        if not self.applied:
            return np.empty((0, self.n_columns))
        if not self._started:
            head = self._head
            self._head = np.empty((0, self.n_columns))
            if len(head) == 0:
                return head
            # a series this short: the whole-series filter with a shorter pad
            return filtfilt_reference_sos(self.sos, head, min(self.padlen, len(head) - 1))
        p = self.padlen
        raw = self._raw
        # the last p+1 raw samples are in the buffer: margin > padlen
        back = 2.0 * raw[-1] - raw[-2:-p - 2:-1]
        y_back, _ = sosfilt(self.sos, back, self._zf)
        fwd = np.concatenate([self._fwd, y_back])
        out = self._backward(fwd)[: len(raw)]
        self._raw = np.empty((0, self.n_columns))
        self._fwd = np.empty((0, self.n_columns))
        return out


def filtfilt_reference_sos(sos, x, padlen):
    """``scipy.signal.sosfiltfilt`` along axis 0 with odd padding ``padlen`` (0 allowed),
    computed with ``trackrider.filters`` (bit-identical, without importing scipy.signal)."""
    x = np.asarray(x, dtype=float)
    if padlen > 0:
        front = 2.0 * x[0] - x[padlen:0:-1]
        back = 2.0 * x[-1] - x[-2:-padlen - 2:-1]
        x = np.concatenate([front, x, back])
    zi = sosfilt_zi(sos)[:, :, None]
    y, _ = sosfilt(sos, x, zi * x[0])
    y, _ = sosfilt(sos, y[::-1], zi * y[-1])
    y = y[::-1]
    return y[padlen:len(y) - padlen] if padlen > 0 else y


def filtfilt(x, cutoff_hz: float, sample_hz: float, order: int = 4):
    """The whole-series zero-phase low-pass that ``ZeroPhaseLowpass`` streams: ``order``-pole
    Butterworth, forwards and backwards along axis 0 with scipy's default odd padding (shortened to
    ``len(x) − 1`` for very short series); a copy of ``x`` when the filter cannot act (cut-off ≥
    Nyquist)."""
    x = np.asarray(x, dtype=float)
    sos = butterworth_sos(cutoff_hz, sample_hz, order)
    if sos is None or len(x) == 0:
        return x.copy()
    return filtfilt_reference_sos(sos, x, min(_default_padlen(sos), len(x) - 1))
