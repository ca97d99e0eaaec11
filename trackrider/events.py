"""The event types of a run and the statuses they set: one table each, read by every consumer.

An event is a dict in ``summary.json``'s ``events`` (``t``, ``train``, ``car``, ``kind`` and the
kind's own fields); ``trackrider.metrics`` finds the ride's events in the samples,
``trackrider.physics.blocks`` the operation's. Each type is one ``EventType`` line below:

* ``words``: what the report says of it (``train red, car 2 <words>``);
* ``counted``: it has its own ``n_<kind>`` column in ``sweep.csv`` (in the order of this table;
  the others go to ``n_other_events``);
* ``status``: the run status it sets (``STATUSES``), or None: information only.

A run's status is the first of ``STATUSES`` that one of its events sets, else ``completed``.
``metrics.Event`` refuses a kind not in the table (``event_type``), and ``tests/test_registries.py``
checks every kind the code emits, so a new event type cannot be left out of the report, the sweep
table or the status.

Light: no numpy (the report and the sweep table import it).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventType:
    name: str
    words: str
    counted: bool = False
    status: str | None = None


#: every event type (a new one: one line here, and the code that emits it)
EVENTS = {e.name: e for e in (
    EventType("stalled", "came to rest and stalled", counted=True, status="stalled"),
    EventType("rolled_back", "rolled back", counted=True),
    EventType("wheel_lift", "lifted its inner wheels (inner rail load below zero)", counted=True,
              status="derailed"),
    EventType("support_lost", "lost its support: the wheels let go of the rails", counted=True,
              status="derailed"),
    EventType("ran_off_track", "ran off the end of the track", counted=True, status="ran_off_track"),
    EventType("collision", "collided with another train", counted=True),
    EventType("block_overrun", "ran through a block section that was holding it", counted=True),
    EventType("envelope_exceeded", "exceeded the acceleration envelope (see Design checks)", counted=True),
    EventType("diverged", "made the simulation diverge", status="diverged"),
    EventType("dispatch", "was dispatched from the station"),
    EventType("block_hold", "was held at a block"),
    EventType("block_release", "was released from a block"),
    EventType("stored", "was stored: it stopped in the station at the end of its route"),
    EventType("lap", "completed a lap"),
    EventType("track_change", "changed track (a connection or switch)"),
    EventType("switch_set", "a switch was set (its throw finished)"),
    EventType("switch_blocked", "a switch could not be thrown: a train was over it (interlocking)"),
    EventType("switch_run_through", "trailed through a switch set against it and forced it over"),
    EventType("split", "split: ran into moving points, or its body turned on a bogie beyond its swivel's "
              "limit (bogies on diverging tracks), and derailed", status="derailed"),
    EventType("driver", "driver's command"),
    EventType("wheel_slip", "slipped its driving wheels (tractive force above the adhesion limit)"),
    EventType("joint_hold", "was locked where it stood by its joint (a mechanism's hold began)"),
    EventType("joint_release", "was released by its joint (a mechanism's hold ended)"),
)}

#: the statuses of a run, highest precedence first, and what the report says of each
STATUSES = {
    "diverged": "Diverged: the simulation failed; what was recorded up to then is shown.",
    "ran_off_track": "Ran off the track: a car left the end of an open track.",
    "derailed": "Derailed: a car's wheels lifted or it lost its support (see the events).",
    "stalled": "Stalled: a train came to rest outside every section.",
    "completed": "Completed: the ride ran to its end.",
}

#: the event types with their own ``n_<kind>`` column in ``sweep.csv``, in column order
COUNTED = tuple(name for name, e in EVENTS.items() if e.counted)


def event_type(kind: str) -> EventType:
    """The table's entry of ``kind``; a kind not in the table is a programming error."""
    try:
        return EVENTS[kind]
    except KeyError:
        raise ValueError(f"unknown event type {kind!r}: add it to trackrider.events.EVENTS") from None


def status_of(kinds) -> str:
    """The run status of a run whose events are of ``kinds``: the first of ``STATUSES`` one sets."""
    set_ = {event_type(k).status for k in kinds}
    return next((s for s in STATUSES if s in set_), "completed")
