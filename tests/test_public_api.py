import charter


def test_exported_names_are_pinned_and_sorted():
    assert charter.__all__ == sorted(charter.__all__)
    assert charter.__all__ == [
        "ActionContext",
        "AsyncClient",
        "CharterError",
        "ChildRun",
        "Client",
        "Context",
        "Flow",
        "NonRetryable",
        "Reschedule",
        "Run",
        "Step",
        "StepInfo",
        "action",
        "canonical_hash",
        "canonical_json",
        "compare_flow_shapes",
        "compile_flow",
        "extract_flow_shape",
        "migrate",
        "timed_out",
    ]
    for name in charter.__all__:
        assert getattr(charter, name) is not None
