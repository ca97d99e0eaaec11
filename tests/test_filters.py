"""trackrider.filters reproduces scipy.signal's Butterworth design and sosfilt bit for bit."""
import numpy as np
import pytest
import scipy.signal as ss

from trackrider import filters
from trackrider.filters import filtfilt_reference_sos


@pytest.mark.parametrize("order", [2, 4, 6])
@pytest.mark.parametrize("cutoff_hz, sample_hz", [(5.0, 100.0), (5.0, 1000.0), (4.9, 10.0), (0.3, 100.0)])
def test_butter_lowpass_sos_equals_scipy(order, cutoff_hz, sample_hz):
    ours = filters.butter_lowpass_sos(order, cutoff_hz, sample_hz)
    theirs = ss.butter(order, cutoff_hz, fs=sample_hz, output="sos")
    assert np.array_equal(ours, theirs)
    assert np.array_equal(filters.sosfilt_zi(ours), ss.sosfilt_zi(theirs))
    _, poles, _ = ss.sos2zpk(theirs)
    assert filters.slowest_pole_radius(ours) == float(np.max(np.abs(poles)))


def test_odd_order_is_refused():
    with pytest.raises(ValueError, match="even"):
        filters.butter_lowpass_sos(3, 5.0, 100.0)


def test_sosfilt_and_filtfilt_equal_scipy():
    sos = filters.butter_lowpass_sos(4, 5.0, 100.0)
    x = np.random.default_rng(7).normal(size=(3000, 5))
    zi = ss.sosfilt_zi(sos)[:, :, None] * x[0]
    y_ref, z_ref = ss.sosfilt(sos, x, axis=0, zi=zi)
    y, z = filters.sosfilt(sos, x, zi)
    assert np.array_equal(y, y_ref) and np.array_equal(z, z_ref)
    for n, padlen in [(3, 2), (20, 15), (3000, 15)]:
        assert np.array_equal(filtfilt_reference_sos(sos, x[:n], padlen),
                              ss.sosfiltfilt(sos, x[:n], axis=0, padlen=padlen))


def test_the_whole_series_filter_is_scipys_sosfiltfilt():
    from tests.filter_oracle import filtfilt_reference
    from trackrider.filters import filtfilt

    rng = np.random.default_rng(3)
    for n in (5, 40, 1000):
        x = rng.normal(size=(n, 3))
        assert np.array_equal(filtfilt(x, 5.0, 100.0), filtfilt_reference(x, 5.0, 100.0))
    x = rng.normal(size=50)
    assert np.array_equal(filtfilt(x, 60.0, 100.0), x)        # above Nyquist: not filtered
