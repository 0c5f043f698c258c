"""The public surface of every public namespace, pinned: adding or removing a name is a
decision. The top level is pinned in ``test_public_api.py``.

Where a name is added or removed on purpose, update the listing here in the same change.
Names that start with ``_`` are never public, whatever a module's ``__all__`` says.
"""

from __future__ import annotations

import importlib

import pytest

import budgetctx

NAMESPACES: dict[str, list[str]] = {
    "budgetctx.batch": [
        "BatchSummary",
        "ContextBuilder",
        "ItemError",
        "Journal",
        "OUTPUT_COLUMNS",
        "Record",
        "build_contexts",
        "context_row",
        "journal_path",
        "read_records",
        "run_batch",
        "write_table",
    ],
    "budgetctx.data": [
        "sample_note",
    ],
    "budgetctx.eval": [
        "BERTScore",
        "BERTScoreBaseline",
        "ClassificationReport",
        "ConfidenceInterval",
        "DatasetInfo",
        "Example",
        "FULL",
        "FetchReport",
        "GenerationConfig",
        "Instance",
        "ORACLE",
        "OracleSelector",
        "PAPER_SELECTORS",
        "PRF",
        "PairedBootstrap",
        "ReportFiles",
        "Rouge",
        "RougeScores",
        "RouteEvalReport",
        "RouteEvalRow",
        "SelectionInput",
        "SensitivityConfig",
        "SweepConfig",
        "SweepFailure",
        "SweepRow",
        "SweepStore",
        "SweepSummary",
        "assign_split",
        "bootstrap_ci",
        "calibrate",
        "calibrate_budget_router",
        "calibrate_feature_router",
        "classification_report",
        "dataset_info",
        "document_token_counts",
        "evaluate_router",
        "fetch_dataset",
        "instances",
        "list_datasets",
        "load_dataset",
        "macro_f1",
        "oracle_bounds",
        "paired_bootstrap",
        "paper_overlap",
        "pareto_frontier",
        "parse_dataset_spec",
        "parse_selector_spec",
        "resolve_data_dir",
        "route_eval",
        "run_sensitivity",
        "run_sweep",
        "simplex_grid",
        "summarize",
        "token_f1",
        "write_report",
    ],
    "budgetctx.eval.datasets": [
        "DATA_ENV",
        "DEFAULT_VALIDATION_FRACTION",
        "DatasetInfo",
        "Example",
        "FILE_LOADERS",
        "FetchReport",
        "SPLITS",
        "Split",
        "assign_split",
        "dataset_info",
        "document_token_counts",
        "fetch_dataset",
        "list_datasets",
        "load_dataset",
        "parse_dataset_spec",
        "resolve_data_dir",
    ],
    "budgetctx.eval.metrics": [
        "BERTScore",
        "BERTScoreBaseline",
        "ClassificationReport",
        "ConfidenceInterval",
        "DEFAULT_BERTSCORE_MODEL",
        "PRF",
        "PUBMEDQA_CLASSES",
        "PairedBootstrap",
        "Rouge",
        "RougeScores",
        "bootstrap_ci",
        "classification_report",
        "lcs_length",
        "macro_f1",
        "normalize_answer",
        "paired_bootstrap",
        "paper_overlap",
        "token_f1",
    ],
    "budgetctx.eval.report": [
        "Bound",
        "Cell",
        "FrontierPoint",
        "Interval",
        "ORACLE",
        "ReportFiles",
        "Table",
        "bounds_table",
        "example_counts",
        "frontier_table",
        "oracle_bounds",
        "pareto_frontier",
        "plot_bounds",
        "plot_curves",
        "plot_frontier",
        "read_cells_csv",
        "selector_colors",
        "selector_table",
        "summarize",
        "unitization_table",
        "write_cells_csv",
        "write_report",
    ],
    "budgetctx.generate": [
        "CachedGenerator",
        "CostEstimate",
        "CostReport",
        "Generation",
        "Generator",
        "LocalGenerator",
        "Message",
        "OpenAIGenerator",
        "Price",
        "PromptTemplate",
        "ResponseCache",
        "Usage",
        "call_cost",
        "cost_report",
        "get_generator",
        "get_price",
        "get_prompt",
        "list_generators",
        "list_prompts",
        "load_prices",
        "load_prompt",
        "parse_label",
        "prompt_for_dataset",
        "register_generator",
        "request_key",
    ],
    "budgetctx.integrations": [
        "MissingExtraError",
        "PROVENANCE_KEY",
    ],
    "budgetctx.objectives": [
        "FacilityLocation",
        "LogDet",
        "Objective",
        "RCDObjective",
        "Relevance",
    ],
    "budgetctx.build": [
        "BuildOptions",
        "Context",
        "DEFAULT_SELECTOR",
        "Document",
        "DocumentSummary",
        "PreparedDocument",
        "SelectedUnit",
        "abuild_context",
        "build_context",
        "pin_regex",
        "prepare",
        "validate_text",
    ],
    "budgetctx.chat": [
        "FittedMessages",
        "MessageProvenance",
        "StableFitter",
        "afit_messages",
        "count_message_tokens",
        "fit_messages",
    ],
    "budgetctx.cli": [
        "app",
        "main",
    ],
    "budgetctx.profiles": [
        "CLINICAL",
        "ClinicalProfile",
        "Profile",
        "get_profile",
        "list_profiles",
    ],
    "budgetctx.batch.ray": [
        "CONTEXT_COLUMNS",
        "build_contexts",
    ],
    "budgetctx.representations": [
        "DENSE_LIMIT",
        "DenseKernel",
        "EmbeddingRepresentation",
        "Encoded",
        "Kernel",
        "Representation",
        "SparseKernel",
        "TfidfRepresentation",
        "UnitFeatures",
        "build_features",
        "get_representation",
        "list_representations",
        "psd_project",
        "register_representation",
        "subset_features",
    ],
    "budgetctx.router": [
        "BudgetRouter",
        "CONFIG_VERSION",
        "DocumentStats",
        "FeatureRouter",
        "RouteDecision",
        "Router",
        "STAT_NAMES",
        "TreeModel",
        "check_tokenizer",
        "context_divergence",
        "context_divergences",
        "default_router",
        "document_stats",
        "load_router",
        "router_from_config",
        "save_router",
        "term_mass",
    ],
    "budgetctx.selectors": [
        "BudgetTracker",
        "FacilitySelector",
        "GraphClusterSelector",
        "HierarchicalSelector",
        "LeadSelector",
        "LeastDivergenceSelector",
        "MMRSelector",
        "RCDSelector",
        "Selection",
        "SelectionProblem",
        "Selector",
        "ShuffledSelector",
        "SlidingSelector",
        "get_selector",
        "lazy_greedy",
        "list_selectors",
        "naive_greedy",
        "parse_option_value",
        "parse_options",
        "parse_selector_spec",
        "parse_selector_specs",
        "register_selector",
        "split_selector_specs",
    ],
    "budgetctx.serve": [
        "Limits",
        "ModelConfig",
        "ProvenanceStore",
        "ServeConfig",
        "UpstreamConfig",
        "configure_logging",
        "create_app",
        "load_config",
    ],
    "budgetctx.tokenizers": [
        "EstimatedTokenizer",
        "HFTokenizer",
        "QuicktokTokenizer",
        "TiktokenTokenizer",
        "Tokenizer",
        "WordTokenizer",
        "get_tokenizer",
        "is_exact",
        "list_tokenizers",
        "register_tokenizer",
    ],
    "budgetctx.unitizers": [
        "BlockUnitizer",
        "ClusterUnitizer",
        "SectionUnitizer",
        "Segment",
        "Segmentation",
        "SentenceUnitizer",
        "TurnUnitizer",
        "Unit",
        "Unitizer",
        "WindowUnitizer",
        "get_unitizer",
        "list_unitizers",
        "register_unitizer",
        "segment_text",
    ],
}


@pytest.mark.parametrize("module", sorted(NAMESPACES))
def test_namespace_all_is_pinned(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == NAMESPACES[module], (
        f"{module}.__all__ changed; if that is deliberate, update NAMESPACES in "
        "tests/test_public_surface.py"
    )


@pytest.mark.parametrize("module", sorted(NAMESPACES))
def test_every_listed_name_exists_and_is_public(module: str) -> None:
    mod = importlib.import_module(module)
    assert not [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not [n for n in mod.__all__ if n.startswith("_") and n != "__version__"]


def test_the_options_object_is_the_one_the_entry_points_take() -> None:
    """build_context, prepare, select, fit_messages and ContextBuilder all take the same
    BuildOptions; its fields are build_context's keyword options, and nothing else."""
    import dataclasses
    import inspect

    from budgetctx.batch import ContextBuilder

    fields = {f.name for f in dataclasses.fields(budgetctx.BuildOptions)}
    keywords = {
        p.name
        for p in inspect.signature(budgetctx.build_context).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    }
    assert keywords == fields | {"options"}
    for entry in (
        budgetctx.prepare,
        budgetctx.PreparedDocument.select,
        budgetctx.fit_messages,
        ContextBuilder.__init__,
    ):
        assert "options" in inspect.signature(entry).parameters, entry
