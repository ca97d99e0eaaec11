"""Validated ``Scenario`` → ``trackrider.physics.World`` (docs/ARCHITECTURE.md, "The world").

The mapping is one call per scenario table: tracks, trains, sections,
resistance, bodies, joints, in file order, so entity order (every car in train
order, lead car first, then every free body) follows the file.
"""
from __future__ import annotations

from trackrider.errors import InputError
from trackrider.scenario.model import Scenario


def build_world(scenario: Scenario):
    """Build the physics ``World`` of ``scenario`` (tracks must be loaded: ``load_scenario`` does it).

    Returns
    -------
    trackrider.physics.World
        Ready to ``run``; its ``dt``, ``iterations``, ``erp`` and ``gravity``
        come from ``[simulation]``.

    Raises
    ------
    InputError
        A scenario feature the physics cannot build (named by its key).
    """
    from trackrider.physics import World

    sim = scenario.simulation
    path = scenario.path
    world = World(gravity=sim.gravity, dt=sim.dt, iterations=sim.iterations, erp=sim.erp)

    def guarded(where: str, func, *args, **kwargs):
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            if exc.path is None:
                sub = exc.where
                if not sub:
                    sub = where
                elif not sub.startswith(where.split("[")[0]):
                    sub = f"{where}.{sub}"
                raise InputError(exc.detail, path=path, where=sub) from None
            raise

    track_index = []
    for i, t in enumerate(scenario.tracks):
        if t.track is None:
            raise InputError("track not loaded (load_scenario(..., load_tracks=False)?)", path=path,
                             where=f"track[{i}]")
        track_index.append(guarded(f"track[{i}]", world.add_track, t.track, gauge=t.gauge))

    train_index = []
    for i, tr in enumerate(scenario.trains):
        train_index.append(guarded(
            f"train[{i}]", world.add_train, tr.name, track=track_index[tr.track_index], cars=tr.cars, car=tr.car,
            coupling=tr.coupling, wheels=tr.wheels, start_s=tr.start_s, start_speed=tr.start_speed))

    for i, sec in enumerate(scenario.sections):
        guarded(f"section[{i}]", world.add_section, kind=sec.type, track=track_index[sec.track_index],
                s_from=sec.s_from, s_to=sec.s_to, speed=sec.speed, max_force=sec.max_force, block=sec.block,
                dwell=sec.dwell, name=sec.name)
    op = scenario.operation
    guarded("operation", world.set_operation, restitution=op.restitution, max_hold=op.max_hold)

    r = scenario.resistance
    guarded("resistance", world.set_resistance, rolling=r.rolling, drag_area=r.drag_area, air_density=r.air_density,
            davis=r.davis, mode=r.mode, nl2_drag=r.nl2_drag)

    body_index = []
    for i, b in enumerate(scenario.bodies):
        body_index.append(guarded(
            f"body[{i}]", world.add_body, b.name, b.mass, size=b.size, inertia=b.inertia, position=b.position,
            orientation=b.orientation, velocity=b.velocity, angular_velocity=b.angular_velocity))

    def end(e):
        if e == "world":
            return "world"
        if e[0] == "car":
            return ("car", train_index[e[1]], e[2])
        return ("body", body_index[e[1]])

    for i, j in enumerate(scenario.joints):
        guarded(f"joint[{i}]", world.add_joint, j.type, end(j.end_a), end(j.end_b), anchor_a=j.anchor_a,
                anchor_b=j.anchor_b, **j.params)
    # finish the world's arrays now (World builds lazily): entity_labels exist for
    # the caller, and building errors surface here, naming the scenario file
    guarded("world", lambda: world.n_entities)
    from trackrider.physics.checks import check_start

    guarded("joint", check_start, world)   # joints that start apart are bad input
    return world
