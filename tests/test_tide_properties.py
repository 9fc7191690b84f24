"""Properties of the Tide that must hold for every track and every throw."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tidetower.engine.systems.tide.track import FOOTINGS, SIZES, TideTrack

tracks = st.builds(
    TideTrack,
    weight_a=st.integers(1, 30),
    weight_b=st.integers(2, 30),
    size=st.sampled_from(SIZES),
    footing=st.sampled_from(FOOTINGS),
)
exchanges = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]), st.integers(0, 40), st.one_of(st.none(), st.integers(1, 20))
    ),
    max_size=40,
)


@given(tracks, exchanges)
def test_marker_never_leaves_the_track(track: TideTrack, throws: list) -> None:  # type: ignore[type-arg]
    for winner, margin, omen in throws:
        for motion in track.exchange(winner, margin, omen):
            assert 0 <= motion.after <= track.length
        assert 0 <= track.marker <= track.length


@given(tracks, st.integers(0, 60), st.integers(0, 60))
def test_steps_are_monotone_in_margin(track: TideTrack, m1: int, m2: int) -> None:
    low, high = sorted((m1, m2))
    assert track.steps_for(low) <= track.steps_for(high)


@given(tracks, st.sampled_from(["a", "b"]), st.integers(0, 60), st.integers(0, 60))
def test_a_bigger_win_moves_the_bar_at_least_as_far(
    track: TideTrack, winner: str, m1: int, m2: int
) -> None:
    low, high = sorted((m1, m2))
    near, far = TideTrack(**_setup(track)), TideTrack(**_setup(track))
    near.exchange(winner, low)  # type: ignore[arg-type]
    far.exchange(winner, high)  # type: ignore[arg-type]
    assert abs(near.marker - track.marker) <= abs(far.marker - track.marker)


@given(tracks)
def test_omen_bands_never_overlap_and_never_empty(track: TideTrack) -> None:
    bands = track.omen_faces()
    assert bands["a"] and bands["b"]
    assert not set(bands["a"]) & set(bands["b"])
    assert all(1 <= face <= 20 for face in bands["a"] + bands["b"])


@given(tracks, st.integers(1, 20))
def test_an_omen_moves_at_most_one_step(track: TideTrack, face: int) -> None:
    before = track.marker
    track.apply_omen(face)
    assert abs(track.marker - before) <= 1


def _setup(track: TideTrack) -> dict[str, object]:
    return {
        "weight_a": track.weight_a,
        "weight_b": track.weight_b,
        "size": track.size,
        "footing": track.footing,
    }
