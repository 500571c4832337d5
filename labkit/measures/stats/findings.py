"""Findings: a number, its interval, its verdict and the sentence that states them, decided by one rule.

Why: the chapters picked intervals by hand and decided "resolved" by one method (Holm's step-down on permutation
p) while printing another's interval (Bonferroni percentile bootstrap from 2,000 resamples: at 0.9972 the bound
is about the 3rd order statistic), so rows disagreed (a simultaneous low of 0.006 beside a Holm p of 0.066; a Holm
p of 0.031 beside a low of 0.000), and ``compare_many`` capped its level at 0.999, so past 50 comparisons its
intervals silently stopped being simultaneous. Here::

    family = stats.Family("retrievers, nDCG@10", ["hybrid − dense", "hybrid − bm25"])  # before the numbers
    found = family.findings({"hybrid − dense": (hybrid, dense), "hybrid − bm25": (hybrid, bm25)},
                            kind="paired graded")
    print(found["hybrid − dense"].sentence)
    # resolved: hybrid − dense 0.073 [0.021, 0.124], simultaneous 95 % among 2 (max-|t| bootstrap); adjusted p ...

**The rule.** A finding is *resolved* when its interval, at the family's simultaneous level, excludes the null;
its ``p`` is the family-adjusted p of the same construction, so ``p <= alpha`` exactly when the interval excludes
the null (``tests/test_findings.py`` checks it on seeded random families and on cases at the border).

1. **Means of per-item scores** — paired graded comparisons (two systems' per-query scores, the chapters' usual
   case) and graded means against a stated value — are decided together by a single-step max-|t| studentised
   bootstrap (:func:`maxt.max_t_bootstrap`): one set of resamples of the items, the largest
   ``|mean* − mean| / se*`` of the family per resample, one critical value ``c``; interval ``mean ± c·se``;
   adjusted p = the share of resamples whose largest |t| reaches the member's own ``|mean| / se``. Chosen because
   - the verdict and the interval are one count, so they agree by construction. Holm's step-down, which the
     chapters used, has no simultaneous intervals that match it: that mismatch is what is being fixed, and it is
     why this is single-step (a step-down p is smaller for later rejections but has no interval to print);
   - its tail is ``alpha`` of all resamples (500 of 10,000) whatever the family's size, so 60 comparisons need no
     0.99917 percentile; resampling the same queries for every member uses their correlation instead of
     Bonferroni's worst case, and studentising puts R@10 and nDCG@10 on one scale;
   - the bootstrap-t carries the skew of per-query differences into the far tail a large family reads. The
     sign-flip permutation (:func:`maxt.max_t_sign_flip`, exact when the two systems are interchangeable, and
     McNemar's test for 0/1) was the first choice and was dropped for this: with skewed differences its symmetric
     null put the simultaneous coverage of 60 comparisons at 0.49 for a nominal 0.95 (0.96 for the bootstrap-t).
2. **Every other member** (a proportion, two proportions, paired 0/1, a kappa, two graded groups, a derived
   figure; a mean with too few items or all values equal; a mean whose items so rarely differ that a resample
   without any spread, and so an infinite |t|, is likelier than a tenth of its share of alpha — it gets paired
   Newcombe for 0/1 pairs, else the sparse bound of :func:`kindbase.sparse`, and says so) gets the interval of its
   kind (:func:`kinds.interval_for`) at the Bonferroni share ``alpha / m``, and ``p = min(1, m · p)`` where ``p``
   inverts that interval. The max-|t| part keeps the rest, ``alpha · m_R / m`` for its ``m_R`` members. The chance
   of any false "resolved" in the family stays at most ``alpha``.
3. A member with fewer than ``min_n`` items gets no interval and the verdict "too few"; it still counts in ``m``
   (it was declared before the data were read).
4. No resampled bound rests on fewer than :data:`maxt.MIN_TAIL` (20) resamples. A family too large for its
   resamples (a share of 0.05/60 needs 48,000 bootstrap resamples) raises ``ValueError`` naming its size, the
   resamples and the number needed: the level is never capped in silence.

:func:`finding` outside a declared family gives a *lead*: uncorrected, picked after looking, and said so. A
"not shown" never says "no effect": its sentence says what the interval rules out. An end on the null itself (a
percentile end pinned by resamples that land on it) holds the null and rules out nothing beyond it, and the
sentence says so; an end near the null is printed with the digits that keep it apart (``[0.0004, 0.100]``, never
``[0.000, 0.100]`` beside "resolved"). A symmetric bootstrap-t interval is cut to the range its mean can take.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.kindbase import (
    Interval,
    alpha_of,
    clipped,
    flat_chance,
    max_t_words,
    paired_differences,
    reconcile,  # fmt: skip
    score_range,
    shifted,
)
from labkit.measures.stats.kinds import KINDS, MIN_N, SPARSE, fmt_interval, interval, interval_for
from labkit.measures.stats.maxt import max_t_bootstrap

__all__ = ["compare_many", "Finding", "Family", "finding", "derived_finding", "findings_table", "interval_for",
           "fmt_interval", "KINDS", "MIN_N", "VERDICTS"]  # fmt: skip

VERDICTS = ("resolved", "not shown", "too few")
DIFFERENCES = ("two independent proportions", "paired 0/1", "paired graded", "two graded groups")
TAGS = {"proportion": "Wilson", "two independent proportions": "Newcombe", "paired 0/1": "paired Newcombe",
        "graded mean": "bootstrap-t", "paired graded": "bootstrap-t",
        "two graded groups": "percentile bootstrap", "kappa": "kappa bootstrap",
        "derived": "paired bootstrap"}  # fmt: skip
LEAD = "lead (uncorrected, picked after looking)"


def _num(x: float, digits: int, signed: bool = False) -> str:
    """``0.073``, ``−0.031`` (a minus sign, not a hyphen), ``+0.071`` when ``signed``."""
    text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    return text.replace("-", "−")


def _end(x: float, null: float, digits: int, signed: bool = False) -> str:
    """An interval's end, with as many more digits (up to 6, then 3 significant) as it takes not to print as the
    null it differs from: a resolved low of 0.0004 reads ``0.0004``, never ``0.000`` (which holds 0 as printed)."""
    if x == null:
        return _num(x, digits, signed)
    for d in range(digits, 7):
        if float(f"{x:.{d}f}") != float(f"{null:.{d}f}"):
            return _num(x, d, signed)
    return (f"{x:+.2e}" if signed else f"{x:.2e}").replace("-", "−")


def _touches(x: float, null: float) -> bool:
    """An end on the null itself (a percentile end pinned by resamples that land on it): it holds the null."""
    return abs(x - null) <= 1e-12 * (1 + abs(null))


@dataclass(frozen=True)
class Finding:
    """One number's finding. ``verdict`` is one of :data:`VERDICTS`; ``p`` is adjusted for the family (``None``
    with "too few") and ``p <= alpha`` exactly when ``[low, high]`` excludes ``null``. ``family`` is ``None`` for a
    lead. ``sentence`` states it all; ``details`` holds what else was counted (undefined resamples, McNemar's p)."""

    name: str
    kind: str
    estimate: float | None
    low: float | None
    high: float | None
    method: str
    p: float | None
    verdict: str
    level: float
    alpha: float
    null: float
    n: Any
    family: str | None = None
    family_size: int | None = None
    one_sided: bool = False
    details: dict = field(default_factory=dict, compare=False, hash=False)
    digits: int = 3

    @property
    def lead(self) -> bool:
        """Computed outside a declared family: uncorrected, picked after looking."""
        return self.family is None

    @property
    def sentence(self) -> str:
        """The finding in one sentence, with the numbers it rests on."""
        d = self.digits
        if self.verdict == "too few":
            where = f" ({self.family}: one of {self.family_size} declared)" if self.family else ""
            return f"too few: {self.name}: {self.details.get('too few', self.method)}, so no interval is given{where}"
        signed = self.kind in DIFFERENCES or (self.low is not None and self.low < 0)  # a derived difference too
        high = "1" if self.one_sided and self.high == 1.0 else _end(self.high, self.null, d)
        ci = f"{_num(self.estimate, d)} [{_end(self.low, self.null, d)}, {high}]"
        against = f" against {self.null:g}" if self.null != 0 or self.kind not in DIFFERENCES else ""
        tag = TAGS[self.kind]
        if self.method.startswith("rule bound") or "decided alone" in self.method or "sparse bound" in self.method:
            tag = next(t for t in ("rule bound", "paired Newcombe", "sparse bound", "percentile bootstrap")
                       if t in self.method)  # fmt: skip
        if self.details.get("max-t"):
            tag = "max-|t| bootstrap"
        elif self.family and self.family_size > 1:
            tag += ", Bonferroni"
        p = "< 0.001" if self.p < 0.001 else f"= {self.p:.3f}"
        ends, on = [], []  # an end at the edge of what the number can take, or on the null, rules nothing out
        if not self.one_sided and self.high < 1.0:
            if _touches(self.high, self.null):
                on.append("upper")
            else:
                ends.append(f"more than {_end(self.high, self.null, d, signed)}")
        if self.low > (-1.0 if signed else 0.0):
            if _touches(self.low, self.null):
                on.append("lower")
            else:
                ends.append(f"less than {_end(self.low, self.null, d, signed)}")
        rules_out = " and ".join(ends) or "nothing: the interval spans every value"
        if on:
            side = {"upper": "above", "lower": "below"}[on[0]]
            rules_out += f" (its {on[0]} end sits on {self.null:g}: nothing {side} {self.null:g} is ruled out)"
        share = self.details.get("undefined share")
        extra = f"; {share:.1%} of resamples undefined, left out" if share else ""
        sided = ", one-sided" if self.one_sided else ""
        pct = f"{self.level * 100:.4g} %"
        if self.lead:
            said = "excludes" if self.verdict == "resolved" else "holds"
            tail = f"p {p}" if self.verdict == "resolved" else f"rules out {rules_out}"
            return (f"{LEAD}: {self.name} {ci} {said} {self.null:g} at {pct}{sided} ({tag}); {tail}{extra}; "
                    "declare it in a Family before looking to test it")  # fmt: skip
        among = f"simultaneous {pct}{sided} among {self.family_size}"
        if self.verdict == "resolved":
            return f"resolved: {self.name} {ci}{against}, {among} ({tag}); adjusted p {p}{extra}"
        return f"not shown: {self.name} {ci}{against} ({among}, {tag}); rules out {rules_out}{extra}"

    def __str__(self) -> str:
        return self.sentence

    def as_row(self) -> dict[str, Any]:
        """The finding as one table row (see :func:`findings_table`)."""
        return {"finding": self.name, "estimate": self.estimate, "low": self.low, "high": self.high, "p": self.p,
                "verdict": self.verdict, "among": self.family_size or 1, "method": self.method,
                "sentence": self.sentence}  # fmt: skip


def _from(name: str, iv: Interval, factor: Fraction, alpha: Fraction, family: str | None, m: int | None,
          details: dict | None = None, method: str | None = None) -> Finding:  # fmt: skip
    """A finding from an interval made at the share ``alpha / factor``: ``p = min(1, factor · p)``."""
    extra = {**iv.details, **(details or {})}
    level = float(1 - alpha)
    if iv.low is None:
        return Finding(name, iv.kind, iv.estimate, None, None, iv.method, None, "too few", level, float(alpha),
                       iv.null, iv.n, family, m, details=extra)  # fmt: skip
    if iv.p_exact is not None:
        p = float(min(Fraction(1), iv.p_exact * factor))
    else:
        p = min(1.0, iv.p * float(factor))
    p = reconcile(p, iv.resolved, alpha)
    return Finding(name, iv.kind, iv.estimate, iv.low, iv.high, method or iv.method, p,
                   "resolved" if iv.resolved else "not shown", level, float(alpha), iv.null, iv.n, family, m,
                   iv.one_sided, extra)  # fmt: skip


def _seed(seed: int, name: str) -> list[int]:
    """One stream per member, set by the seed and the member's name, not by the order findings are asked for."""
    return [seed, zlib.crc32(name.encode("utf-8"))]


def _each(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else value


class Family:
    """Comparisons declared before the data are read: ``Family(name, members)``, then :meth:`findings` (all at
    once: the means share one max-|t| critical value) or :meth:`finding` (one member, at the
    Bonferroni share ``alpha / m``). ``n``: resamples per interval; ``min_n``: fewest items for an interval."""

    def __init__(self, name: str, members: Sequence[str], level: float = 0.95, n: int = 10_000, seed: int = SEED,
                 min_n: int = MIN_N) -> None:  # fmt: skip
        self.name = args.text("name", name)
        self.members = tuple(args.strings("members", members, allow_empty=False, unique=True,
                                          example='["hybrid − dense", "hybrid − bm25"]'))  # fmt: skip
        self.level = level
        self.alpha = alpha_of(level)
        self.n = args.whole_number("n", n, minimum=100, maximum=10_000_000)
        self.seed = seed
        self.min_n = args.whole_number("min_n", min_n, minimum=2)

    def __repr__(self) -> str:
        return f"Family({self.name!r}, {len(self.members)} members, level={self.level})"

    def _check(self, name: str) -> None:
        if name not in self.members:
            raise ValueError(f"{name!r} was not declared in family {self.name!r} ({len(self.members)} members): a "
                             "comparison chosen after looking is a lead, stats.finding(...)")  # fmt: skip

    def _what(self, share: Fraction) -> str:
        return (f"family {self.name!r} of {len(self.members)} comparisons at {self.level:.4g} "
                f"(a share of {float(share):.3g} each)")  # fmt: skip

    def finding(self, name: str, data: Any, kind: str, null: float | None = None, bounds: Any = None,
                fn: Callable | None = None, strata: str | None = None) -> Finding:  # fmt: skip
        """One declared member's finding, its interval at ``1 - alpha / m`` (Bonferroni share), whatever its kind."""
        self._check(name)
        m = len(self.members)
        share = self.alpha / m
        iv = interval(kind, data, share, null, self.n, _seed(self.seed, name), self.min_n, bounds, fn, strata,
                      what=self._what(share))  # fmt: skip
        return _from(name, iv, Fraction(m), self.alpha, self.name, m)

    def findings(self, data: Mapping[str, Any], kind: str | Mapping[str, str], null: Any = None, bounds: Any = None,
                 fn: Any = None, strata: Any = None) -> dict[str, Finding]:  # fmt: skip
        """Every given member's finding, in the declared order. ``kind``, ``null``, ``bounds``, ``fn``, ``strata``:
        one value for all, or a dict by member. Paired graded members and graded means with enough items are
        decided together by the max-|t| bootstrap (see the module docstring); the others at the Bonferroni
        share."""
        import numpy as np

        data = args.mapping("data", data, example='{"hybrid − dense": (hybrid_scores, dense_scores)}')
        for name in data:
            self._check(name)
        m = len(self.members)
        kinds = {name: _each(kind, name) for name in data}
        for name, k in kinds.items():
            if k not in KINDS:
                raise ValueError(f"kind of {name!r} must be one of {KINDS}, got {k!r}")
        joint, values, keys = [], [], []
        for name in self.members:
            if name in data and kinds[name] in ("paired graded", "graded mean"):
                if kinds[name] == "paired graded":
                    x, key = paired_differences(data[name])
                else:
                    x = np.asarray(args.numbers("data", data[name], allow_empty=False), dtype=float)
                    key = tuple(data[name].index) if hasattr(data[name], "index") else ("items", len(x))
                    if _each(null, name) is None:
                        raise ValueError(f"{name!r} is a 'graded mean': it needs null=, the value it is tested against")
                if len(x) >= self.min_n and float(x.max() - x.min()) > 0:
                    joint.append(name)
                    values.append(x - float(_each(null, name) or 0.0))
                    keys.append(key)
        chances = [flat_chance(x) for x in values]
        while joint and sum(chances) > self.alpha * len(joint) / m / SPARSE:  # too few items differ: decided alone
            worst = chances.index(max(chances))
            for kept in (joint, values, keys, chances):
                kept.pop(worst)
        out: dict[str, Finding] = {}
        if joint:
            share = self.alpha * len(joint) / m
            mt = max_t_bootstrap(values, share, self.n, _seed(self.seed, self.name), keys, what=self._what(share))
            words = max_t_words(mt, len(values[0]) if len(set(map(len, values))) == 1 else "their", len(joint))
            if len(joint) < m:
                words += f"; {len(joint)}/{m} of the family's alpha (the other members: Bonferroni shares)"
            for j, name in enumerate(joint):
                shift = float(_each(null, name) or 0.0)
                low, high = shifted(mt["low"][j], mt["high"][j], shift, mt["resolved"][j])
                paired = kinds[name] == "paired graded"
                raw = [*data[name][0], *data[name][1]] if paired else list(data[name])
                low, high, cut = clipped(low, high, score_range(raw, _each(bounds, name), paired), shift)
                iv = Interval(kinds[name], mt["mean"][j] + shift, low, high, float(mt["p"][j]), mt["resolved"][j],
                              words + ("; cut to the range the mean can take" if cut else ""), len(values[j]), shift,
                              float(1 - share), p_exact=mt["p"][j])  # fmt: skip
                out[name] = _from(name, iv, Fraction(m, len(joint)), self.alpha, self.name, m,
                                  {"max-t": True, "critical |t|": mt["c"]})  # fmt: skip
        for name in data:
            if name not in out:
                out[name] = self.finding(name, data[name], kinds[name], _each(null, name), _each(bounds, name),
                                         _each(fn, name), _each(strata, name))  # fmt: skip
        return {name: out[name] for name in self.members if name in out}


def finding(name: str, data: Any, kind: str, level: float = 0.95, null: float | None = None, n: int = 2000,
            seed: int = SEED, min_n: int = MIN_N, bounds: Any = None, fn: Callable | None = None,
            strata: str | None = None) -> Finding:  # fmt: skip
    """A *lead*: one number's finding outside any declared family, uncorrected (its sentence says so)."""
    name = args.text("name", name)
    iv = interval_for(kind, data, level, null, n, seed, min_n, bounds, fn, strata)
    return _from(name, iv, Fraction(1), alpha_of(level), None, None)


def derived_finding(name: str, inputs: Any, fn: Callable[[dict], float], null: float, family: Family | None = None,
                    level: float = 0.95, n: int = 2000, seed: int = SEED, strata: str | None = None,
                    min_n: int = MIN_N) -> Finding:  # fmt: skip
    """A figure computed from several per-item inputs (a ratio, a rate divided by a judge's J, the difference of
    two judges' J on the same items), with every input resampled together: a paired bootstrap over the items.

    ``inputs``: ``{name: per-item values}`` on the same items (or a list of such dicts, one per independent item
    set: a labelled set and a judged set are each resampled on their own). ``fn`` gets ``{name: resampled
    values}`` and returns the figure; ``None``, a non-finite value or a division by zero marks that resample
    undefined (left out, its share reported). ``strata``: an input whose values (a true class) keep their counts
    in every resample. ``null``: the value the figure is tested against (1 for a ratio, 0 for a difference).
    In a ``family`` the interval is at its Bonferroni share, otherwise the finding is a lead.
    """
    if family is not None:
        return family.finding(name, inputs, "derived", null, fn=fn, strata=strata)
    return finding(name, inputs, "derived", level, null, n, seed, min_n, fn=fn, strata=strata)


def findings_table(found: Iterable[Finding] | Mapping[str, Finding]) -> Any:
    """Findings as a table, one row each (estimate, low, high, p, verdict, among, method, sentence)."""
    import pandas as pd

    items = found.values() if isinstance(found, Mapping) else found
    if isinstance(found, str | bytes) or not isinstance(items, Iterable):
        raise ValueError("found must be findings: Family.findings(...)'s dict, or a list of Finding")
    rows = []
    for f in items:
        if not isinstance(f, Finding):
            raise ValueError(f"found holds {type(f).__name__}, not a Finding: pass Family.findings(...)'s dict")
        rows.append(f.as_row())
    if not rows:
        raise ValueError("found holds no finding: pass Family.findings(...)'s dict")
    return pd.DataFrame(rows).set_index("finding")


def compare_many(
    comparisons: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    paired: bool = True,
    n: int = 10_000,
    level: float = 0.95,
    seed: int = SEED,
    family: str = "comparisons",
) -> Any:
    """Several comparisons of per-item scores scanned in one cell, declared as one :class:`Family` and decided by
    its one rule: one row each with the ``difference``, its simultaneous interval (``low``, ``high``), the
    family-adjusted ``p`` and the ``verdict``, which agree by construction (``p <= 1 - level`` exactly when the
    interval excludes 0). ``comparisons`` maps a name to ``(a, b)``, paired on the same items unless ``paired`` is
    False. ``frame.attrs["comparisons"]`` is their number and ``frame.attrs["findings"]`` the :class:`Finding` of
    each (``.sentence`` states it). A family too large for ``n`` resamples raises, naming the ``n`` it needs."""
    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError("comparisons must be a non-empty dict {name: (a, b)}, e.g. {'hybrid - bm25': (h, b)}")
    for name, pair in comparisons.items():
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"comparisons[{name!r}] must be a pair (a, b) of per-item values")
    fam = Family(args.text("family", family), list(comparisons), level=level, n=n, seed=seed)
    found = fam.findings(dict(comparisons), kind="paired graded" if paired else "two graded groups")
    frame = findings_table(found).rename(columns={"estimate": "difference"})
    frame.index.name = "comparison"
    frame = frame[["difference", "low", "high", "p", "verdict"]]
    frame.attrs["comparisons"] = len(comparisons)
    frame.attrs["findings"] = found
    return frame
