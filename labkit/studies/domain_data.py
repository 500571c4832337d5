"""Chapter 02's domain sample: questions whose domain label is known by construction, for the domain judge.

The judge is :mod:`labkit.judges.domain`; the plan that records it is ``02-domain`` in ``tools/record.py``.
"""

from __future__ import annotations

import numpy as np

from labkit import SEED
from labkit.core import args
from labkit.studies import handbook as hb
from labkit.studies import pydocs
from labkit.studies.synth_data import generated

__all__ = ["domain_sample", "N_PER_SOURCE"]

N_PER_SOURCE = 20  # questions drawn from each source of domain_sample (60 calls in all)


def domain_sample(n: int = N_PER_SOURCE, seed: int = SEED) -> list[dict]:
    """``n`` questions from each of three sources, drawn with ``seed``, each with its label by construction:

    - ``handbook (authored)``: the handbook's authored queries (``data/queries.jsonl``; a follow-up by its authored
      standalone rewrite) -> in the domain;
    - ``handbook (generated)``: chapter 02's kept generated questions (1.5B, from handbook passages) -> in the
      domain, since each was written from a handbook passage (its audit says whether the passage answers it);
    - ``Python FAQ``: the questions of the Python documentation's FAQ (``data/pydocs``) -> out of the domain.
    """
    n = args.whole_number("n", n, minimum=1)
    sources = {
        "handbook (authored)": [(q.qid, q.search_text) for q in hb.handbook().queries],
        "handbook (generated)": [(f"syn-{r['set']}-{r['i'] + 1:03d}", r["question"]) for r in generated()],
        "Python FAQ": [(q.qid, q.question) for q in pydocs.load_queries()],
    }
    rng = np.random.default_rng(seed)
    out = []
    for source, items in sources.items():
        if len(items) < n:
            raise ValueError(f"n={n} is more than the {len(items)} questions of {source}; use n <= {len(items)}")
        for j in sorted(rng.choice(len(items), size=n, replace=False)):
            qid, question = items[j]
            out.append({"id": qid, "question": question, "source": source, "in_domain": source != "Python FAQ"})
    return out
