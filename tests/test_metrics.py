"""RideMetrics and the streaming zero-phase filter, on synthetic chunks.

The filter must equal a whole-series ``scipy.signal.sosfiltfilt`` within 1e-9 g
however the series is chunked; events, airtime, energy drift and status follow
the definitions in ``trackrider/metrics.py`` (and docs/outputs.md).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfiltfilt

from trackrider import metrics as mt
from tests.filter_oracle import filtfilt_reference
from trackrider.events import status_of
from trackrider.filters import ZeroPhaseLowpass
from trackrider.metrics import RideMetrics, energy_groups_from_joints, wheel_split
from trackrider.physics import channels as ch
from trackrider.physics.sections import SECTIONS


def chunks_of(n, rng, largest=500):
    i = 0
    while i < n:
        m = int(rng.integers(1, largest))
        yield slice(i, min(n, i + m))
        i += m


# ------------------------------------------------------------------------- filter

@pytest.mark.parametrize("fs, fc, n", [
    (100.0, 5.0, 6000), (100.0, 5.0, 1), (100.0, 5.0, 15), (100.0, 5.0, 16), (100.0, 5.0, 17),
    (100.0, 5.0, 700), (1000.0, 5.0, 12000), (100.0, 0.7, 9000), (50.0, 20.0, 3000),
])
def test_streamed_filter_equals_whole_series_sosfiltfilt(fs, fc, n):
    rng = np.random.default_rng(int(fs + fc + n))
    x = 1.0 + np.cumsum(rng.normal(size=(n, 4)), axis=0) * 0.05 + rng.normal(size=(n, 4))
    f = ZeroPhaseLowpass(fc, fs, 4)
    out = [f.push(x[sl]) for sl in chunks_of(n, rng)]
    out.append(f.finish())
    y = np.concatenate(out)
    assert y.shape == x.shape
    sos = butter(4, fc, fs=fs, output="sos")
    if n > 15:   # scipy's own default padding
        ref = sosfiltfilt(sos, x, axis=0)
    else:
        ref = filtfilt_reference(x, fc, fs)
    assert np.max(np.abs(y - ref)) < 1e-9
    # and it really filters: white noise loses most of its variance above fc
    if n > 1000 and fc <= 0.1 * fs:
        noise = x - ref
        assert np.std(np.diff(y, axis=0)) < 0.5 * np.std(np.diff(x, axis=0))
        assert np.std(noise) > 0.1


def test_streamed_filter_one_sample_at_a_time():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1500, 2))
    f = ZeroPhaseLowpass(5.0, 100.0, 2)
    y = np.concatenate([f.push(x[i:i + 1]) for i in range(len(x))] + [f.finish()])
    assert np.max(np.abs(y - sosfiltfilt(butter(4, 5.0, fs=100.0, output="sos"), x, axis=0))) < 1e-9


def test_filter_keeps_a_constant_exactly():
    f = ZeroPhaseLowpass(5.0, 100.0, 1)
    x = np.ones((2000, 1))
    y = np.concatenate([f.push(x[:700]), f.push(x[700:]), f.finish()])
    assert np.max(np.abs(y - 1.0)) < 1e-12


def test_filter_lag_is_bounded():
    f = ZeroPhaseLowpass(5.0, 100.0, 1)
    got = 0
    for i in range(50):
        got += len(f.push(np.zeros((100, 1))))
        assert (i + 1) * 100 - got <= f.margin + f.block
    assert got > 0


def test_filter_cannot_act_above_nyquist_passes_through():
    f = ZeroPhaseLowpass(5.0, 10.0, 1)   # Nyquist 5 Hz
    assert not f.applied
    x = np.arange(10.0).reshape(-1, 1)
    assert np.array_equal(f.push(x), x)
    assert len(f.finish()) == 0


# ------------------------------------------------------------------- synthetic ride

def make_samples(t, n_ent, **columns):
    """(m, n_ent, N_CHANNELS) array: level-track defaults, columns overridden."""
    m = len(t)
    s = np.zeros((m, n_ent, ch.N_CHANNELS))
    s[:, :, ch.QW] = 1.0
    s[:, :, ch.G_VERTICAL] = 1.0
    s[:, :, ch.WHEEL_LOAD] = 600 * 9.81
    s[:, :, ch.SECTION] = -1
    s[:, :, ch.FLAGS] = ch.ON_TRACK
    for name, value in columns.items():
        v = np.asarray(value, dtype=float)
        if v.ndim == 1 and v.shape[0] == m:
            v = v[:, None]
        s[:, :, ch.INDEX[name]] = v
    return s


def run_metrics(t, samples, rng=None, **kw):
    n_ent = samples.shape[1]
    labels = kw.pop("labels", [("red", i + 1) for i in range(n_ent)])
    entity_train = kw.pop("entity_train", [0] * n_ent)
    names = kw.pop("names", ["red"])
    m = RideMetrics(labels, entity_train, names, record_dt=t[1] - t[0], **kw)
    rng = rng or np.random.default_rng(0)
    blocks = []
    for sl in chunks_of(len(t), rng, 300):
        blocks += m.push(t[sl], samples[sl])
    blocks += m.finish()
    return m, blocks


def test_ride_metrics_hands_back_every_sample_in_order_with_filtered_g():
    rng = np.random.default_rng(1)
    t = np.arange(1, 3001) * 0.01
    gv = 1.0 + 0.3 * rng.normal(size=(3000, 2))
    gl = 0.2 * rng.normal(size=(3000, 2))
    smp = make_samples(t, 2, g_vertical=gv, g_lateral=gl)
    m, blocks = run_metrics(t, smp)
    tt = np.concatenate([b[0] for b in blocks])
    ss = np.concatenate([b[1] for b in blocks])
    fg = np.concatenate([b[2] for b in blocks])
    assert np.array_equal(tt, t) and np.array_equal(ss, smp)
    ref = sosfiltfilt(butter(4, 5.0, fs=100.0, output="sos"), gv, axis=0)
    assert np.max(np.abs(fg[:, :, 0] - ref)) < 1e-9
    s = m.summary()["trains"]["red"]
    assert s["max_g_vertical"] == pytest.approx(ref.max(), abs=1e-9)
    assert s["min_g_vertical"] == pytest.approx(ref.min(), abs=1e-9)
    assert s["raw_max_g_vertical"] == pytest.approx(gv.max())
    assert s["max_g_vertical"] < s["raw_max_g_vertical"]   # the filter took the spikes off


def test_airtime_counts_filtered_negative_vertical_g():
    dt = 0.01
    t = np.arange(1, 2001) * dt                       # 20 s
    lead = np.cos(2 * np.pi * 0.1 * t)                # < 0 for 10 s of the 20
    second = np.cos(2 * np.pi * 0.1 * (t - 1.0))      # the same, 1 s later
    smp = make_samples(t, 2, g_vertical=np.stack([lead, second], axis=1))
    m, _ = run_metrics(t, smp)
    s = m.summary()["trains"]["red"]
    # 0.1 Hz passes a 5 Hz low-pass unchanged, with no phase shift
    assert s["airtime_s_lead_car"] == pytest.approx(10.0, abs=2 * dt)
    # any car: the union of both cars' negative stretches, (2.5, 8.5) and (12.5, 18.5) s
    assert s["airtime_s"] == pytest.approx(12.0, abs=2 * dt)


def test_one_g_at_rest_is_one_g_filtered():
    t = np.arange(1, 501) * 0.01
    m, blocks = run_metrics(t, make_samples(t, 1))
    fg = np.concatenate([b[2] for b in blocks])
    assert np.max(np.abs(fg[:, 0, 0] - 1.0)) < 1e-12
    s = m.summary()["trains"]["red"]
    assert s["max_g_vertical"] == pytest.approx(1.0, abs=1e-12)
    assert s["airtime_s"] == 0.0


def test_flag_events_fire_once_on_the_rising_edge():
    t = np.arange(1, 401) * 0.01
    flags = np.full((400, 2), float(ch.ON_TRACK))
    flags[100:, 1] = ch.RAN_OFF                         # car 2 runs off at t = 1.01 and stays off
    flags[200:210, 0] += ch.SUPPORT_CLAMPED              # car 1 lifts off twice
    flags[300:305, 0] += ch.SUPPORT_CLAMPED
    m, _ = run_metrics(t, make_samples(t, 2, flags=flags, speed=np.full(400, 5.0)))
    ev = [(e["t"], e["car"], e["kind"]) for e in m.summary()["events"]]
    assert ev == [(pytest.approx(1.01), 2, "ran_off_track"),
                  (pytest.approx(2.01), 1, "support_lost"),
                  (pytest.approx(3.01), 1, "support_lost")]
    assert m.status() == "ran_off_track"


def test_wheel_lift_only_for_railway_cars_with_hysteresis():
    t = np.arange(1, 601) * 0.01
    f2 = 10000.0
    gauge = 1.435
    # |M_T| ramps so that Q_inner = F2/2 − |M_T|/gauge goes below 0 twice
    q_inner = np.full(600, 3000.0)
    q_inner[100:150] = -10.0
    q_inner[150:160] = 100.0      # back above 0, but below the re-arm level (5 % of F2/2 = 250 N)
    q_inner[160:170] = -5.0       # so no second event here
    q_inner[400:450] = -1.0       # after full recovery: a second event
    mt_ = (0.5 * f2 - q_inner) * gauge
    smp = make_samples(t, 2, wheel_load=np.full(600, f2), roll_torque=np.stack([mt_, -mt_], 1),
                       speed=np.full(600, 10.0))
    m, _ = run_metrics(t, smp, gauge_per_entity=gauge, railway_per_entity=[True, False])
    ev = [(round(e["t"], 6), e["car"], e["kind"]) for e in m.summary()["events"]]
    assert ev == [(1.01, 1, "wheel_lift"), (4.01, 1, "wheel_lift")]
    assert m.status() == "derailed"
    s = m.summary()["trains"]["red"]
    assert s["min_inner_wheel_load"] == pytest.approx(-10.0)


def test_wheel_split_formula():
    smp = make_samples(np.array([0.0]), 1, wheel_load=[8000.0], roll_torque=[-1435.0],
                       lateral_load=[-2000.0])
    qi, qo, lv = wheel_split(smp, 1.435)
    assert qi[0, 0] == pytest.approx(4000.0 - 1000.0)
    assert qo[0, 0] == pytest.approx(4000.0 + 1000.0)
    assert lv[0, 0] == pytest.approx(0.25)
    smp[..., ch.WHEEL_LOAD] = 0.0
    assert np.isnan(wheel_split(smp, 1.435)[2][0, 0])


def test_stall_in_a_valley_but_not_on_a_brake():
    dt = 0.01
    t = np.arange(1, 1001) * dt                        # 10 s
    speed = np.where(t < 3.0, 5.0 * (1 - t / 3.0), 0.0)   # rolls, then rests from t = 3
    m, _ = run_metrics(t, make_samples(t, 1, speed=speed))
    ev = m.summary()["events"]
    assert [e["kind"] for e in ev] == ["stalled"]
    assert ev[0]["t"] == pytest.approx(3.0 - 0.03, abs=0.02)   # first sample below 0.05 m/s
    assert m.status() == "stalled"
    # the same stop on a brake section is a normal stop
    section = np.where(t > 2.5, float(SECTIONS["brake"].code), -1.0)
    m, _ = run_metrics(t, make_samples(t, 1, speed=speed, section=section))
    assert m.summary()["events"] == [] and m.status() == "completed"
    # at rest for less than STALL_REST_TIME: no stall
    short = np.where((t > 3.0) & (t < 3.0 + 0.5 * mt.STALL_REST_TIME), 0.0, 2.0)
    m, _ = run_metrics(t, make_samples(t, 1, speed=short))
    assert m.status() == "completed"
    # never moved: no stall
    m, _ = run_metrics(t, make_samples(t, 1, speed=np.zeros_like(t)))
    assert m.status() == "completed"


def test_rolled_back_is_information_only():
    t = np.arange(1, 501) * 0.01
    speed = 3.0 * np.cos(2 * np.pi * 0.25 * t)        # forwards, then backwards at t = 1 s
    m, _ = run_metrics(t, make_samples(t, 1, speed=speed))
    ev = m.summary()["events"]
    assert [e["kind"] for e in ev] == ["rolled_back"]
    assert 1.0 < ev[0]["t"] < 1.05
    assert m.status() == "completed"


def test_a_pendulum_rolls_back_once():
    """Every swing reversal of a pendulum is not a roll back: one event until the lead car has run
    forwards past where it turned back (a lift catching it and pulling it over)."""
    t = np.arange(1, 2001) * 0.01                      # 20 s: five swings of ± 3 m/s
    speed = 3.0 * np.cos(2 * np.pi * 0.25 * t)
    m, _ = run_metrics(t, make_samples(t, 1, speed=speed))
    assert [e["kind"] for e in m.summary()["events"]] == ["rolled_back"]
    # swings, then the train is driven on well past its turning point, then rolls back again
    speed2 = np.where(t < 10.0, speed, np.where(t < 15.0, 2.0, -1.0))
    m, _ = run_metrics(t, make_samples(t, 1, speed=speed2))
    ev = m.summary()["events"]
    assert [e["kind"] for e in ev] == ["rolled_back", "rolled_back"]
    assert ev[1]["t"] == pytest.approx(15.0, abs=0.02)


def test_a_crest_on_a_section_is_not_a_crest_passed():
    dt = 0.01
    t = np.arange(1, 1001) * dt
    z = np.where(t < 5.0, 10.0 - (t - 2.5) ** 2, 10.0 - 4 * (t - 7.5) ** 2)    # crests at 2.5 s and 7.5 s
    speed = np.where(t < 5.0, 4.0, 9.0 + (t - 7.5) ** 2)
    section = np.where(t < 5.0, float(SECTIONS["lift"].code), -1.0)         # the first on a lift
    m, _ = run_metrics(t, make_samples(t, 1, z=z, speed=speed, section=section))
    s = m.summary()["trains"]["red"]
    assert s["min_crest_speed"] == pytest.approx(9.0, abs=1e-9)
    assert s["at"]["min_crest_speed"]["t"] == pytest.approx(7.5)


def test_status_precedence():
    t = np.arange(1, 301) * 0.01
    flags = np.full((300, 1), float(ch.ON_TRACK))
    flags[50:, 0] += ch.SUPPORT_CLAMPED
    flags[100:, 0] = ch.RAN_OFF
    m, _ = run_metrics(t, make_samples(t, 1, flags=flags, speed=np.full(300, 3.0)))
    assert m.status() == "ran_off_track"
    m.mark_diverged(2.5, 0)
    assert m.status() == "diverged"
    # the rule itself, on the event types' table: the most severe status any event sets
    assert status_of(["rolled_back", "stalled", "wheel_lift", "lap"]) == "derailed"
    assert status_of(["support_lost", "ran_off_track", "stalled"]) == "ran_off_track"
    assert status_of(["rolled_back", "collision", "dispatch"]) == "completed"
    with pytest.raises(ValueError, match="unknown event type 'wheel_slip'"):
        status_of(["wheel_slip"])


def test_energy_drift_counts_only_quiet_stretches():
    dt = 0.01
    t = np.arange(1, 1001) * dt                        # 10 s
    ke = np.full(1000, 1000.0)
    ke[:200] = np.linspace(0, 2000, 200)              # 0..2 s: a launch (motor active) to 2000 J
    ke[200:] = 2000.0
    pe = np.zeros(1000)
    pe[200:] = 0.5 * (t[200:] - t[200])               # 0.5 W of spurious gain while quiet ...
    flags = np.full(1000, float(ch.ON_TRACK))
    flags[:200] += ch.MOTOR_ACTIVE
    flags[600:700] += ch.RESISTANCE_ACTIVE            # ... except for 1 s of braking
    pe[600:700] = pe[599]                             # (energy gained while braking: not counted)
    pe[700:] = pe[700:] + 17.0                        # a jump while not quiet ...
    m, _ = run_metrics(t, make_samples(t, 1, kinetic_energy=ke, potential_energy=pe, flags=flags,
                                       speed=np.full(1000, 2.0)))
    s = m.summary()["trains"]["red"]
    quiet_gain = 0.5 * (7.99 - 1.0)                   # quiet from t=2.00..6.00 and 7.01..10.00
    expected = (0.5 * (t[599] - t[200]) + 0.5 * (t[999] - t[700])) / 2000.0
    assert s["energy_drift"] == pytest.approx(expected, rel=1e-9)
    assert s["energy_drift"] == pytest.approx(quiet_gain / 2000.0, rel=2e-3)
    assert s["energy_quiet_s"] == pytest.approx((599 - 200 + 999 - 700) * dt)
    assert s["max_kinetic_energy"] == 2000.0
    assert s["energy_drift_max_abs"] == pytest.approx(0.5 * (t[599] - t[200]) / 2000.0, rel=1e-9)


def test_energy_drift_none_without_a_quiet_stretch():
    t = np.arange(1, 101) * 0.01
    flags = np.full(100, float(ch.ON_TRACK | ch.RESISTANCE_ACTIVE))
    m, _ = run_metrics(t, make_samples(t, 1, kinetic_energy=np.full(100, 10.0), flags=flags))
    assert m.summary()["trains"]["red"]["energy_drift"] is None


def test_joined_trains_report_their_group_drift():
    # two cars exchange energy through a pulley: each alone drifts, the sum does not
    t = np.arange(1, 501) * 0.01
    e1 = 1000.0 + 400.0 * np.sin(t)
    e2 = 1000.0 - 400.0 * np.sin(t)
    smp = make_samples(t, 2, kinetic_energy=np.stack([e1, e2], 1), speed=np.full(500, 1.0))
    labels = [("up", 1), ("down", 1)]
    groups = energy_groups_from_joints([0, 1], 2, [(("car", 0, 0), ("car", 1, 0))])
    assert groups == [[0, 1], [0, 1]]
    m, _ = run_metrics(t, smp, labels=labels, entity_train=[0, 1], names=["up", "down"],
                       energy_groups=groups)
    s = m.summary()["trains"]
    assert abs(s["up"]["energy_drift"]) < 1e-12 and abs(s["down"]["energy_drift"]) < 1e-12
    assert s["up"]["energy_group"]["trains"] == ["down", "up"]
    alone = energy_groups_from_joints([0, 1], 2, [])
    m, _ = run_metrics(t, smp, labels=labels, entity_train=[0, 1], names=["up", "down"],
                       energy_groups=alone)
    assert abs(m.summary()["trains"]["up"]["energy_drift"]) > 0.1


def test_energy_groups_take_in_joined_bodies_not_the_world():
    et = [0, 0, 1, -1, -1]     # train 0: 2 cars, train 1: 1 car, two bodies
    g = energy_groups_from_joints(et, 2, [(("car", 0, 1), ("body", 1)), ("world", ("car", 1, 0))])
    assert g == [[0, 1, 4], [2]]


def test_event_list_is_capped(monkeypatch):
    monkeypatch.setattr(mt, "MAX_EVENTS", 5)
    t = np.arange(1, 6001) * 0.01
    flags = np.full((6000, 1), float(ch.ON_TRACK))
    flags[::60, 0] += ch.SUPPORT_CLAMPED               # lifts off every 0.6 s: 100 episodes
    m, _ = run_metrics(t, make_samples(t, 1, flags=flags, speed=np.full(6000, 3.0)))
    s = m.summary()
    assert len(s["events"]) == 5 and s["events_dropped"] == 95


def test_flickering_support_flag_is_one_episode():
    t = np.arange(1, 1001) * 0.01
    flags = np.full((1000, 1), float(ch.ON_TRACK))
    flags[100:200:3, 0] += ch.SUPPORT_CLAMPED          # flickers for 1 s: one episode
    flags[500, 0] += ch.SUPPORT_CLAMPED                # 3 s later: a second one
    m, _ = run_metrics(t, make_samples(t, 1, flags=flags, speed=np.full(1000, 3.0)))
    ev = [(round(e["t"], 6), e["kind"]) for e in m.summary()["events"]]
    assert ev == [(1.01, "support_lost"), (5.01, "support_lost")]


def test_non_finite_g_does_not_poison_the_filter():
    t = np.arange(1, 2001) * 0.01
    gv = np.ones(2000)
    gv[300] = np.nan
    m, blocks = run_metrics(t, make_samples(t, 1, g_vertical=gv))
    fg = np.concatenate([b[2] for b in blocks])[:, 0, 0]
    assert np.isnan(fg[300])
    assert np.allclose(np.delete(fg, 300), 1.0, atol=1e-12)
    assert m.summary()["trains"]["red"]["max_g_vertical"] == pytest.approx(1.0)


def test_crest_speed_and_extremes_with_their_place():
    dt = 0.01
    t = np.arange(1, 1001) * dt
    z = 10.0 - (t - 5.0) ** 2                          # one crest at t = 5
    speed = 2.0 + (t - 5.0) ** 2                       # slowest at the crest
    m, _ = run_metrics(t, make_samples(t, 1, z=z, speed=speed))
    s = m.summary()["trains"]["red"]
    assert s["min_crest_speed"] == pytest.approx(2.0, abs=1e-9)
    assert s["at"]["min_crest_speed"]["t"] == pytest.approx(5.0)
    assert s["max_speed"] == pytest.approx(speed.max())
    assert s["at"]["max_speed"]["t"] == pytest.approx(10.0)
    assert s["min_speed"] == pytest.approx(2.0)
