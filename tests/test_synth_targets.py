"""Chapter 02's target draws: the second draw's list is checked line by line, the third is seeded and disjoint."""

from __future__ import annotations

import collections

import pytest

from labkit.studies import synth_targets as st


@pytest.fixture
def listed(tmp_path, monkeypatch):
    """Point the second draw at a list under ``tmp_path``; returns a writer taking the listed ids."""
    (tmp_path / "synth").mkdir()
    monkeypatch.setattr(st, "data_dir", lambda: tmp_path)
    st.second_draw.cache_clear()
    yield lambda ids: (tmp_path / "synth" / "targets-second-draw.txt").write_text("".join(i + "\n" for i in ids))
    st.second_draw.cache_clear()


def test_the_draws_are_disjoint_long_enough_and_spread_over_the_departments():
    first, second, third = st.first_draw(), st.second_draw(), st.third_draw()
    assert (len(first), len(second), len(third)) == (st.N_TARGETS, st.N_EXTRA, st.N_THIRD)
    ids = [c.id for c in st.targets()]
    assert len(ids) == len(set(ids)) == st.N_TARGETS + st.N_EXTRA + st.N_THIRD
    assert all(len(c.text.split()) >= st.MIN_WORDS for c in st.targets())
    per = collections.Counter(c.doc.split("-")[0] for c in second)
    # every remaining adm and sec chunk, then the other five departments as even as 250 allows
    assert per["adm"] + sum(c.doc.startswith("adm-") for c in first) == len(st._eligible("adm"))
    others = [per[d] for d in ("fin", "hr", "it", "prod", "sup")]
    assert max(others) - min(others) <= 1
    assert st.third_draw.__wrapped__() == third  # seeded: drawn again, the same chunks in the same order


def test_methods_and_kinds_follow_the_draws():
    assert [st.method_of(i) for i in (0, 74, 75, 149)] == ["jaccard", "jaccard", "embedding", "embedding"]
    assert [st.method_of(i) for i in range(150, 156)] == ["jaccard", "jaccard", "embedding", "embedding"] + [
        "jaccard", "jaccard"]  # fmt: skip
    assert st.kinds_of(0) == ("easy", "hard") and st.kinds_of(st.N_EASY - 1) == ("easy", "hard")
    assert st.kinds_of(st.N_EASY) == ("hard",)
    with pytest.raises(ValueError, match="i must be a target index"):
        st.method_of(len(st.targets()))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda ids: ids[:-1] + ["no-such-doc#1"], "is not a handbook chunk"),
        (lambda ids: ids[:-1] + [ids[0]], "is already a target"),
        (lambda ids: ids[:-1] + [st.first_draw()[0].id], "is already a target"),
        (lambda ids: ids[:-1], f"must list {st.N_EXTRA} chunk ids"),
    ],
)
def test_a_wrong_second_draw_list_is_refused_naming_the_line(listed, mutate, message):
    from labkit import data_dir

    ids = (data_dir() / "synth" / "targets-second-draw.txt").read_text().split()
    listed(mutate(ids))
    with pytest.raises(ValueError, match=message):
        st.second_draw()


def test_a_short_chunk_in_the_second_draw_is_refused(listed):
    from labkit.studies import handbook as hb

    taken = {c.id for c in st.first_draw()}
    short = next(c for c in hb.handbook().chunks if len(c.text.split()) < st.MIN_WORDS and c.id not in taken)
    listed([short.id])
    with pytest.raises(ValueError, match=r"line 1: chunk .* has under 40 words"):
        st.second_draw()
