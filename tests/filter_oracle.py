"""The test oracle of the streamed zero-phase filter: scipy.signal.sosfiltfilt of a whole series."""
from __future__ import annotations

import numpy as np

from trackrider.filters import _default_padlen, butterworth_sos


def filtfilt_reference(x, cutoff_hz: float, sample_hz: float, order: int = 4):
    """Whole-series zero-phase filter that ``ZeroPhaseLowpass`` reproduces.

    ``scipy.signal.sosfiltfilt`` along axis 0 with odd padding of scipy's default
    length, shortened to ``len(x) − 1`` for very short series. Returns a copy of
    ``x`` when the filter cannot act (cut-off ≥ Nyquist).
    """
    from scipy.signal import sosfiltfilt

    x = np.asarray(x, dtype=float)
    sos = butterworth_sos(cutoff_hz, sample_hz, order)
    if sos is None or len(x) == 0:
        return x.copy()
    padlen = min(_default_padlen(sos), len(x) - 1)
    return sosfiltfilt(sos, x, axis=0, padlen=padlen)
