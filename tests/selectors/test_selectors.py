"""Hand-computed cases for every selector."""

from __future__ import annotations

import numpy as np
import pytest

from budgetctx import InvalidParameterError, UnknownComponentError
from budgetctx.selectors import (
    FacilitySelector,
    GraphClusterSelector,
    HierarchicalSelector,
    LeadSelector,
    MMRSelector,
    RCDSelector,
    SelectionProblem,
    ShuffledSelector,
    SlidingSelector,
    get_selector,
    list_selectors,
    parse_selector_spec,
)
from tests.selectors._problems import make_problem, random_problem

# The paper's selectors, without the issue-15 defaults (no lead prior, no fragment rule), for
# the hand-computed cases below.
NO_PRIOR = {"position_decay": 0.0, "min_unit_tokens": 0}
PAPER_MMR = {"cost_exponent": 0.0, **NO_PRIOR}
PAPER_GREEDY = {"cost_exponent": 1.0, **NO_PRIOR}
# hierarchical and graphcluster choosing by relevance alone (no redundancy term, no priors)
PLAIN = {"lambda_": 1.0, **PAPER_MMR}


def test_lead_stops_at_first_unit_that_does_not_fit() -> None:
    sel = LeadSelector().select(make_problem([0.1, 0.2, 0.3], [3, 3, 3], 7))
    assert sel.order == (0, 1)
    assert sel.overflow == 2


def test_lead_fill_skips_and_continues() -> None:
    problem = make_problem([0.1, 0.2, 0.3], [3, 5, 1], 5)
    assert LeadSelector().select(problem).order == (0,)
    filled = LeadSelector(fill=True).select(problem)
    assert filled.order == (0, 2)
    assert filled.overflow == 1


def test_shuffled_is_a_seeded_prefix_of_a_permutation() -> None:
    n = 20
    problem = make_problem(np.linspace(0, 1, n), [1] * n, 5)
    first = ShuffledSelector(seed=7).select(problem)
    assert first == ShuffledSelector(seed=7).select(problem)
    perm = np.random.default_rng(7).permutation(n)
    assert first.order == tuple(int(i) for i in perm[:5])
    assert ShuffledSelector(seed=8).select(problem).order != first.order


def test_sliding_finds_best_contiguous_run() -> None:
    r = [0.1, 0.9, 0.8, 0.1, 0.7]
    assert SlidingSelector(**NO_PRIOR).select(make_problem(r, [1] * 5, 2)).order == (1, 2)
    # two runs tie at 1.8: the earliest wins
    assert SlidingSelector(**NO_PRIOR).select(make_problem(r, [1] * 5, 3)).order == (0, 1, 2)


def test_sliding_skips_units_larger_than_the_budget() -> None:
    sel = SlidingSelector(**NO_PRIOR).select(make_problem([1, 10, 1, 1], [1, 5, 1, 1], 2))
    assert sel.order == (2, 3)


def test_sliding_costs_overlapping_windows_once() -> None:
    # windows (0,1), (1,2), (2,3) over four 2-token segments: a run of all three costs 8
    problem = make_problem([1, 1, 1], [2, 2, 2, 2], 8, segments=[(0, 1), (1, 2), (2, 3)])
    assert SlidingSelector(**NO_PRIOR).select(problem).order == (0, 1, 2)


def test_hierarchical_anchors_then_neighbours() -> None:
    r = [0.1, 0.2, 0.9, 0.3, 0.05, 0.8, 0.1]
    sel = HierarchicalSelector(anchor_share=0.5, **PLAIN).select(make_problem(r, [1] * 7, 4))
    # anchors 2 and 5 fill the anchor half; then the best neighbours 3 and 1
    assert sel.order == (2, 5, 3, 1)


def test_graphcluster_spreads_budget_over_components() -> None:
    K = np.eye(5)
    for a, b in [(0, 1), (0, 2), (1, 2), (3, 4)]:
        K[a, b] = K[b, a] = 0.9
    problem = make_problem([0.5, 0.4, 0.3, 0.2, 0.1], [1] * 5, 3, kernel=K)
    # topic {0,1,2} earns 3 * 1.2/1.5 = 2.4 tokens (two units); topic {3,4} the rest
    assert GraphClusterSelector(threshold=0.5, **PLAIN).select(problem).order == (0, 1, 3)


def test_mmr_penalises_redundancy() -> None:
    K = [[1, 1, 0], [1, 1, 0], [0, 0, 1]]
    problem = make_problem([0.9, 0.9, 0.5], [1, 1, 1], 2, kernel=K)
    assert MMRSelector(lambda_=0.5).select(problem).order == (0, 2)
    assert MMRSelector(lambda_=1.0).select(problem).order == (0, 1)


def test_mmr_redundancy_is_against_all_selected_units() -> None:
    # Unit 2 duplicates unit 0, not unit 1. Comparing only with the last pick (1) would take 2.
    K = np.eye(4)
    K[0, 2] = K[2, 0] = 1.0
    problem = make_problem([1.0, 0.8, 0.95, 0.1], [1] * 4, 3, kernel=K)
    sel = MMRSelector(lambda_=0.5, **PAPER_MMR).select(problem)
    assert sel.order == (0, 1, 3)
    assert sel.gains == pytest.approx((0.5, 0.4, 0.05))


def test_mmr_cost_exponent_prefers_score_per_token() -> None:
    problem = make_problem([1.0, 0.6, 0.6], [10, 2, 2], 10)
    assert MMRSelector(lambda_=1.0, **PAPER_MMR).select(problem).order == (0,)
    per_token = MMRSelector(lambda_=1.0, cost_exponent=1.0, **NO_PRIOR).select(problem)
    assert per_token.order == (1, 2)


def test_position_decay_is_a_lead_prior() -> None:
    # three equally relevant, unrelated units: the prior breaks the tie towards the start,
    # and a strong enough prior overrides a small relevance edge of a later unit
    problem = make_problem([0.9, 0.9, 1.0], [1, 1, 1], 1)
    assert MMRSelector(lambda_=1.0).select(problem).order == (2,)
    assert MMRSelector(lambda_=1.0, position_decay=0.5).select(problem).order == (0,)
    rcd = RCDSelector(alpha=1.0, beta=0.0, gamma=0.0, position_decay=0.5)
    assert rcd.select(problem).order == (0,)
    K = np.eye(3)
    assert FacilitySelector().select(make_problem([0] * 3, [1, 1, 1], 1, kernel=K)).order == (0,)
    K2 = np.eye(3)
    K2[1, 2] = K2[2, 1] = 0.5  # unit 2 covers more, unless late units are worth little
    cover = make_problem([0] * 3, [1, 1, 1], 1, kernel=K2)
    assert FacilitySelector().select(cover).order in ((1,), (2,))
    assert FacilitySelector(position_decay=2.0).select(cover).order == (0,)


def test_position_decay_reads_the_problems_positions() -> None:
    # Unit 2 opens a second document (position 0): the prior weighs it like unit 0.
    from dataclasses import replace

    from budgetctx.selectors._priors import unit_weights

    problem = make_problem([0.9, 0.9, 1.0], [1, 1, 1], 1)
    w = unit_weights(problem, position_decay=0.5, min_unit_tokens=0)
    assert w is not None and np.allclose(w, np.exp(-0.5 * np.arange(3)))
    two_docs = replace(problem, positions=np.array([0, 1, 0]))
    w2 = unit_weights(two_docs, position_decay=0.5, min_unit_tokens=0)
    assert w2 is not None and np.allclose(w2, [1.0, np.exp(-0.5), 1.0])
    assert MMRSelector(lambda_=1.0, position_decay=0.5).select(two_docs).order == (2,)


@pytest.mark.parametrize("name", ["mmr", "facility", "rcd"])
def test_fragment_rule_never_selects_short_units(name: str) -> None:
    # unit 1 is a 2-token fragment as relevant as the rest; with the rule it is never taken
    K = np.eye(4)
    problem = make_problem([0.5, 1.0, 0.5, 0.5], [6, 2, 6, 6], 14, kernel=K)
    assert 1 in get_selector(name, min_unit_tokens=0).select(problem).order
    sel = get_selector(name, min_unit_tokens=4).select(problem)
    assert 1 not in sel.order
    assert len(sel.order) == 2


@pytest.mark.parametrize("name", ["mmr", "facility", "rcd"])
def test_fragment_rule_is_dropped_when_every_unit_is_a_fragment(name: str) -> None:
    problem = make_problem([0.5, 1.0], [2, 2], 4)
    assert len(get_selector(name, min_unit_tokens=10).select(problem).order) == 2


def test_facility_hand_computed_gains() -> None:
    K = [[1, 0.8, 0], [0.8, 1, 0.1], [0, 0.1, 1]]
    sel = FacilitySelector(**PAPER_GREEDY).select(make_problem([0, 0, 0], [1, 1, 1], 2, kernel=K))
    assert sel.order == (1, 2)
    assert sel.gains == pytest.approx((1.9, 0.9))


def test_rcd_best_singleton_check() -> None:
    # Cost-scaled greedy takes the cheap unit 1 and then cannot afford unit 0; the single
    # unit 0 is worth more.
    rcd = RCDSelector(alpha=1, beta=0, gamma=0, **PAPER_GREEDY)
    sel = rcd.select(make_problem([0.9, 0.5], [10, 1], 10))
    assert sel.order == (0,)
    assert sel.note is not None


def test_rcd_keeps_filling_with_smaller_units() -> None:
    rcd = RCDSelector(alpha=1, beta=0, gamma=0, **PAPER_GREEDY)
    sel = rcd.select(make_problem([1.0, 0.9, 0.2], [5, 5, 1], 6))
    assert sel.order == (0, 2)
    assert sel.overflow == 1


def test_rcd_diversity_prefers_distinct_units() -> None:
    K = np.eye(3)
    K[0, 1] = K[1, 0] = 0.99
    problem = make_problem([1.0, 1.0, 0.6], [1, 1, 1], 2, kernel=K)
    assert RCDSelector(alpha=0.2, beta=0, gamma=0.8).select(problem).order == (0, 2)
    assert RCDSelector(alpha=1, beta=0, gamma=0).select(problem).order == (0, 1)


@pytest.mark.parametrize("name", list_selectors())
def test_empty_problem_selects_nothing(name: str) -> None:
    sel = get_selector(name).select(make_problem([], [], 10))
    assert sel.order == ()


@pytest.mark.parametrize("name", list_selectors())
def test_nothing_fits(name: str) -> None:
    sel = get_selector(name).select(make_problem([0.5, 0.4], [10, 12], 5))
    assert sel.order == ()
    assert sel.overflow in (0, 1)


@pytest.mark.parametrize(
    ("name", "options", "parameter"),
    [
        ("mmr", {"lambda_": 1.5}, "lambda_"),
        ("rcd", {"alpha": -1.0}, "alpha"),
        ("rcd", {"eta": 0.0}, "eta"),
        ("hierarchical", {"anchor_share": 0.0}, "anchor_share"),
        ("graphcluster", {"threshold": 2.0}, "threshold"),
        # F13: wrong types and non-finite values fail at construction, not inside select
        ("mmr", {"lambda_": "0.5"}, "lambda_"),
        ("mmr", {"lambda_": True}, "lambda_"),
        ("rcd", {"alpha": "x"}, "alpha"),
        ("rcd", {"alpha": float("inf")}, "alpha"),
        ("rcd", {"beta": float("nan")}, "beta"),
        ("rcd", {"gamma": None}, "gamma"),
        ("rcd", {"eta": float("inf")}, "eta"),
        ("rcd", {"best_singleton": "yes"}, "best_singleton"),
        ("facility", {"best_singleton": 1}, "best_singleton"),
        ("shuffled", {"seed": -1}, "seed"),
        ("shuffled", {"seed": "abc"}, "seed"),
        ("shuffled", {"seed": 1.5}, "seed"),
        ("shuffled", {"fill": "yes"}, "fill"),
        ("lead", {"fill": None}, "fill"),
        ("hierarchical", {"anchor_share": "half"}, "anchor_share"),
        ("graphcluster", {"threshold": float("nan")}, "threshold"),
        ("mmr", {"cost_exponent": 2.0}, "cost_exponent"),
        ("facility", {"cost_exponent": -0.5}, "cost_exponent"),
        ("rcd", {"position_decay": -0.1}, "position_decay"),
        ("facility", {"min_unit_tokens": 2.5}, "min_unit_tokens"),
        ("mmr", {"position_decay": float("nan")}, "position_decay"),
    ],
)
def test_bad_parameters_name_the_parameter(
    name: str, options: dict[str, float], parameter: str
) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_selector(name, **options)
    assert info.value.parameter == parameter
    assert parameter in str(info.value)


@pytest.mark.parametrize("spec", ["rcd:alpha=inf", "rcd:eta=nan", "shuffled:seed=abc"])
def test_a_bad_spec_fails_when_its_selector_is_built(spec: str) -> None:
    # a sweep's up-front check builds every selector spec, so this is where a bad one must fail
    name, options = parse_selector_spec(spec)
    with pytest.raises(InvalidParameterError, match="must be"):
        get_selector(name, **options)


def test_validated_numbers_are_stored_as_floats() -> None:
    assert RCDSelector(alpha=1, beta=0).params()["alpha"] == 1.0
    assert isinstance(RCDSelector(alpha=1).alpha, float)
    assert isinstance(MMRSelector(lambda_=np.float64(0.5)).lambda_, float)
    assert ShuffledSelector(seed=np.int64(3)).params() == {"seed": 3, "fill": False}


def test_unknown_selector_lists_valid_names() -> None:
    with pytest.raises(UnknownComponentError) as info:
        get_selector("bogus")
    for name in list_selectors():
        assert name in str(info.value)


def test_unknown_option_is_a_parameter_error() -> None:
    with pytest.raises(InvalidParameterError, match="lambda"):
        get_selector("mmr", lamda=0.5)


def test_aliases_and_instances() -> None:
    assert get_selector("random").name == "shuffled"
    assert get_selector("GSC").name == "graphcluster"
    inst = MMRSelector(lambda_=0.3)
    assert get_selector(inst) is inst
    with pytest.raises(InvalidParameterError):
        get_selector(inst, lambda_=0.2)


@pytest.mark.parametrize(
    "spec",
    [
        "mmr:cost_exponent=0.5,position_decay=0.03,min_unit_tokens=5",
        "facility:cost_exponent=0,position_decay=0.03,min_unit_tokens=5",
        "rcd:cost_exponent=0,position_decay=0.1,min_unit_tokens=8",
    ],
)
@pytest.mark.parametrize("unitizer", ["sentence", "window"])
def test_contract_with_new_options(spec: str, unitizer: str, mtsamples_notes: list[str]) -> None:
    # The budget contract and provenance hold for the non-default settings too.
    from budgetctx import build_context
    from budgetctx.selectors import parse_selector_spec
    from tests.contracts.test_budget_contract import check_contract

    name, options = parse_selector_spec(spec)
    for text in mtsamples_notes[::9]:
        for budget in (32, 128, 512):
            ctx = build_context(
                text, budget, selector=name, selector_options=options, unitizer=unitizer
            )
            check_contract(ctx, text, budget)


# --- no-query salience option (issue 21, third pass) -----------------------------------


def _no_query_problem(rng: np.random.Generator, n: int = 14) -> SelectionProblem:
    from dataclasses import replace

    from scipy import sparse

    problem = random_problem(rng, n)
    X = sparse.csr_matrix((rng.random((n, 10)) < 0.35).astype(float))
    return replace(problem, features=replace(problem.features, relevance_source="centroid", X=X))


@pytest.mark.parametrize("name", ["mmr", "rcd"])
def test_fused_salience_is_an_option_that_changes_only_no_query_relevance(name: str) -> None:
    from dataclasses import replace

    rng = np.random.default_rng(7)
    differs = 0
    for _ in range(12):
        problem = _no_query_problem(rng)
        fused = get_selector(f"{name}:salience=fused").select(problem)
        plain = get_selector(f"{name}:salience=centroid").select(problem)
        costs = problem.unit_costs[list(fused.order)]
        assert int(costs.sum()) <= problem.capacity
        differs += fused.order != plain.order
        # with a query the option changes nothing
        q = replace(problem, features=replace(problem.features, relevance_source="query"))
        assert get_selector(name, salience="fused").select(q) == get_selector(name).select(q)
    assert differs > 0


def test_rcd_reads_fused_salience_by_default_and_none_is_the_papers_centroid() -> None:
    rng = np.random.default_rng(9)
    differs = 0
    for _ in range(12):
        problem = _no_query_problem(rng)
        default = RCDSelector().select(problem)
        assert default == RCDSelector(salience="fused").select(problem)
        paper = RCDSelector(salience=None).select(problem)
        assert paper == RCDSelector(salience="centroid").select(problem)
        differs += default.order != paper.order
    assert differs > 0
    assert get_selector("rcd:salience=null").params()["salience"] is None


def test_fused_mmr_fast_path_equals_reference() -> None:
    rng = np.random.default_rng(11)
    sel = MMRSelector(salience="fused")
    for _ in range(15):
        problem = _no_query_problem(rng, n=int(rng.integers(2, 20)))
        assert sel.select(problem).order == sel.select_reference(problem).order


def test_unknown_salience_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidParameterError, match="fused"):
        get_selector("rcd:salience=lexrank")


# --- least_divergence (issue 21, third pass) -------------------------------------------


def test_least_divergence_keeps_the_candidate_closest_to_the_document() -> None:
    from budgetctx.router import context_divergences
    from budgetctx.selectors import LeastDivergenceSelector

    rng = np.random.default_rng(3)
    specs = ("lead", "mmr", "mmr:salience=fused")
    chooser = LeastDivergenceSelector(candidates=specs)
    assert chooser.terms == "presence"  # issue 21, fourth pass
    picked = set()
    for _ in range(12):
        problem = _no_query_problem(rng, n=int(rng.integers(4, 20)))
        runs = [get_selector(s).select(problem) for s in specs]
        scores = context_divergences(problem.features, [r.order for r in runs], terms="presence")
        best = int(np.argmin(scores))  # the first of equal scores, as the selector breaks ties
        got = chooser.select(problem)
        assert got.order == runs[best].order
        assert got.note is not None and got.note.startswith(f"least divergence: {specs[best]} ")
        assert int(problem.unit_costs[list(got.order)].sum()) <= problem.capacity
        picked.add(best)
    assert len(picked) > 1  # the choice depends on the document


def test_least_divergence_reads_the_term_weighting_it_is_given() -> None:
    # the third pass's chooser (term mass) stays available: same candidates, the choice
    # follows the divergence asked for
    from budgetctx.router import context_divergences
    from budgetctx.selectors import LeastDivergenceSelector

    rng = np.random.default_rng(11)
    specs = ("lead", "mmr", "mmr:salience=fused", "rcd:salience=fused")
    for terms in ("mass", "presence"):
        chooser = get_selector("least_divergence", candidates=specs, terms=terms)
        assert isinstance(chooser, LeastDivergenceSelector)
        for _ in range(6):
            problem = _no_query_problem(rng, n=int(rng.integers(4, 20)))
            got = chooser.select(problem)
            runs = [get_selector(s).select(problem) for s in specs]
            scores = context_divergences(problem.features, [r.order for r in runs], terms=terms)
            assert got.order == runs[int(np.argmin(scores))].order
    with pytest.raises(InvalidParameterError, match="presence"):
        LeastDivergenceSelector(terms="tfidf")


def test_least_divergence_holds_blas_like_the_rcd_it_runs() -> None:
    # RCD's coverage sums with BLAS threads unheld cost 10-20x at 256k tokens (fourth pass)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from budgetctx.build._prepare import blas_threads

    with blas_threads("least_divergence"):
        inside = [
            i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
        ]
        assert all(n == 1 for n in inside)


def test_auto_runs_mmr_fused_mmr_and_rcd() -> None:
    from budgetctx.selectors import LeastDivergenceSelector

    assert LeastDivergenceSelector().candidates == (
        "mmr",
        "mmr:salience=fused",
        "rcd:salience=fused",
    )


@pytest.mark.parametrize(
    "candidates", [(), ("auto",), ("mmr", "least_divergence"), ("nope",), "mmr", (3,)]
)
def test_least_divergence_refuses_bad_candidates(candidates: object) -> None:
    from budgetctx.selectors import LeastDivergenceSelector

    with pytest.raises((InvalidParameterError, UnknownComponentError)):
        LeastDivergenceSelector(candidates=candidates)  # type: ignore[arg-type]


def test_facility_weighs_coverage_by_salience_only_without_a_query() -> None:
    from dataclasses import replace

    rng = np.random.default_rng(5)
    differs = 0
    for _ in range(12):
        problem = _no_query_problem(rng)
        weighted = FacilitySelector().select(problem)
        plain = FacilitySelector(salience=None).select(problem)
        differs += weighted.order != plain.order
        for source in ("query", "given"):
            other = replace(problem, features=replace(problem.features, relevance_source=source))
            assert FacilitySelector().select(other) == FacilitySelector(salience=None).select(other)
    assert differs > 0
    assert get_selector("facility:salience=null").params()["salience"] is None
