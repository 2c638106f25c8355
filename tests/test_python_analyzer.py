"""Exact findings of the Python analyzer on code written for these tests."""

from __future__ import annotations

from textwrap import dedent

from conftest import findings_of

from tpucheck.analyze import analyze_text


def check(context, code: str) -> list[tuple[str, int, int]]:
    return findings_of(context, dedent(code).lstrip("\n"))


def test_import_aliases_resolve(test_context) -> None:
    code = """
        import torch as T
        from torch import cuda as C
        from torch.cuda import amp
        import torch.cuda
        T.cuda.synchronize()
        C.synchronize()
        amp.GradScaler()
        torch.cuda.synchronize()
    """
    assert check(test_context, code) == [("T001", 5, 1), ("T001", 6, 1), ("T001", 8, 1), ("T011", 7, 1), ("T020", 7, 1)]


def test_imports_inside_functions_and_after_use(test_context) -> None:
    code = """
        def step():
            from torch.cuda import empty_cache as free
            free()

        def later():
            torch.cuda.synchronize()

        import torch
    """
    assert check(test_context, code) == [("T001", 6, 5), ("T014", 3, 5)]


def test_local_names_never_match(test_context) -> None:
    code = """
        import torch
        from torch import cuda

        def run(cuda):
            cuda.synchronize()

        def other():
            cuda = make_device()
            cuda.synchronize()

        class Fake:
            def synchronize(self):
                pass
        torch2 = Fake()
        torch2.cuda.synchronize()
        lambda torch: torch.cuda.synchronize()
        cuda.synchronize()
    """
    assert check(test_context, code) == [("T001", 17, 1)]


def test_comments_docstrings_and_prose_strings_never_match(test_context) -> None:
    code = '''
        """Call torch.cuda.synchronize() and move to "cuda"."""
        import torch
        # torch.cuda.synchronize()
        def f():
            """x.to("cuda") then torch.cuda.synchronize()"""
            print("cuda")
            log.info("running on cuda:0")
            parser.add_argument("--device", default="cuda", help="cuda or cpu")
            return "cuda"
    '''
    # the default= of an argparse option named --device is not a device context we know;
    # only the keyword `device=`/positions in contexts.yaml are.
    assert check(test_context, code) == []


def test_device_string_contexts(test_context) -> None:
    code = """
        import torch
        device = "cuda"
        DEVICE = torch.device("cuda:0")
        x.to("cuda", non_blocking=True)
        y = torch.zeros(3, device=f"cuda:{rank}")
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        model = load(device_map={"": "cuda:0"})
        self.device = "cuda:" + str(rank)
        def build(device="cuda"):
            pass
        if x.device.type == "cuda":
            pass
        name = "cuda"
        x.to("cpu")
    """
    assert check(test_context, code) == [
        ("T006", 7, 14),
        ("T007", 2, 10),
        ("T007", 3, 23),
        ("T007", 4, 6),
        ("T007", 5, 27),
        ("T007", 6, 7),
        ("T007", 7, 30),
        ("T007", 8, 15),
        ("T007", 9, 18),
        ("T008", 11, 21),
    ]


def test_call_argument_constraints(test_context) -> None:
    code = """
        import torch.distributed as dist
        import torch.nn.functional as F
        dist.init_process_group("nccl")
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.init_process_group(backend="gloo")
        dist.init_process_group(backend=name)
        F.one_hot(labels)
        F.one_hot(labels, 10)
        F.one_hot(labels, num_classes=10)
        F.one_hot(*args)
    """
    assert check(test_context, code) == [("T009", 3, 1), ("T009", 4, 1), ("T010", 7, 1)]


def test_methods_keywords_decorators_references(test_context) -> None:
    code = """
        import torch
        import triton
        from transformers import AutoModel

        @triton.jit
        def kernel(x_ptr):
            pass

        @triton.jit(debug=True)
        def kernel2(x_ptr):
            pass

        loss.item()
        loss.item(0)
        torch.item()
        torch.backends.cudnn.benchmark = True
        AutoModel.from_pretrained("m", device_map="auto")
        AutoModel.from_pretrained("m", device_map="cpu")
        with torch.autocast("cuda", dtype=torch.float16):
            pass
        other(dtype=torch.float16)
    """
    assert check(test_context, code) == [
        ("T002", 16, 1),
        ("T004", 5, 2),
        ("T004", 9, 2),
        ("T005", 13, 6),
        ("T006", 17, 32),
        ("T007", 19, 21),
        ("T013", 19, 29),
    ]


def test_import_matches_and_guarded_paths(test_context) -> None:
    code = """
        try:
            from flash_attn import flash_attn_func
        except ImportError:
            flash_attn_func = None
        import flash_attn.ops as ops
        from numba import cuda
        from numba import jit
        if torch.cuda.is_available():
            import flash_attn
    """
    result = analyze_text("m.py", ("python",), dedent(code).lstrip("\n"), test_context)
    got = [(m.rule_id, m.span.line, m.span.column, m.guarded) for m in result.matches if m.rule_id in ("T003", "T012")]
    assert sorted(got) == [
        ("T003", 2, 10, True),
        ("T003", 5, 8, False),
        ("T003", 9, 12, True),
        ("T012", 6, 19, False),
    ]


def test_positions_have_ends_and_count_characters(test_context) -> None:
    code = 'import torch\nnote = "héllo"; torch.cuda.synchronize()\n'
    result = analyze_text("m.py", ("python",), code, test_context)
    [match] = result.matches
    assert (match.span.line, match.span.column, match.span.end_line, match.span.end_column) == (2, 17, 2, 41)
    assert match.snippet == "torch.cuda.synchronize()"


def test_multiline_call_span(test_context) -> None:
    code = "import torch.distributed as dist\ndist.init_process_group(\n    backend='nccl',\n)\n"
    result = analyze_text("m.py", ("python",), code, test_context)
    [match] = result.matches
    assert (match.span.line, match.span.column, match.span.end_line, match.span.end_column) == (2, 1, 4, 2)
    assert match.snippet == "dist.init_process_group( backend='nccl', )"


def test_suppression_comments(test_context) -> None:
    code = dedent(
        """
        import torch
        torch.cuda.synchronize()  # tpucheck: ignore[T001] -- measured, harmless
        torch.cuda.synchronize()  # tpucheck: ignore
        torch.cuda.synchronize()  # tpucheck: ignore[T999]
        s = "# tpucheck: ignore"; torch.cuda.synchronize()
        """
    ).lstrip("\n")
    result = analyze_text("m.py", ("python",), code, test_context)
    assert sorted(result.suppressions) == [2, 3, 4]
    assert result.suppressions[2].rules == frozenset({"T001"})
    assert result.suppressions[2].reason == "measured, harmless"
    assert result.suppressions[3].rules == frozenset()


def test_prefilter_skips_files_without_needles(test_context) -> None:
    result = analyze_text("m.py", ("python",), "def f(:\n", test_context)
    assert (result.parsed, result.error, result.matches) == (False, None, [])


def test_syntax_errors_and_python2(test_context) -> None:
    broken = analyze_text("m.py", ("python",), "import torch\ntorch.cuda.synchronize(\n", test_context)
    assert broken.error is not None and broken.error.kind == "syntax-error"
    assert broken.error.message.startswith("syntax error at line")
    py2 = analyze_text("m.py", ("python",), "import torch\nprint 'cuda', torch.cuda.synchronize()\n", test_context)
    assert py2.error is not None and py2.error.kind == "python2"


def test_an_async_keyword_argument_of_pytorch_0_3_is_read(test_context) -> None:
    # audit BA: Revisiting's train.py, `depth.cuda(async=True)` (a keyword since Python 3.7)
    code = "import torch\n\n\ndef step(depth):\n    return depth.cuda(async=True).item()\n"
    result = analyze_text("train.py", ("python",), code, test_context)
    assert (result.error, result.parsed) == (None, True)
    assert [(m.rule_id, m.span.line, m.span.column, m.snippet) for m in result.matches] == [("T005", 5, 35, "depth.cuda(async=True).item()")]
    # adversarial: a file with Python 2 syntax besides stays an error, as before
    py2 = analyze_text("m.py", ("python",), "import torch\nprint 'cuda'\nx = torch.zeros(1).cuda(async=True)\n", test_context)
    assert py2.error is not None and py2.error.kind == "python2"


def test_deep_nesting_is_an_error_not_a_crash(test_context) -> None:
    code = "import torch\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\ntorch.cuda.synchronize()\n"
    result = analyze_text("m.py", ("python",), code, test_context)
    assert result.error is not None
    assert result.error.kind in ("too-deep", "syntax-error", "parse-error")


def test_reference_to_a_prefix_spans_the_whole_chain(test_context) -> None:
    code = "import torch\nscaler = torch.cuda.amp.GradScaler(init_scale=2.0)\nx = torch.cuda\n"
    result = analyze_text("m.py", ("python",), code, test_context)
    got = [(m.rule_id, m.span.line, m.span.column, m.span.end_column, m.snippet) for m in result.matches if m.rule_id == "T020"]
    assert got == [("T020", 2, 10, 35, "torch.cuda.amp.GradScaler")]


def test_attribute_matcher_container_values_and_decorator_args() -> None:
    from conftest import FIXTURES  # noqa: F401 - same fixture directory

    from tpucheck.analyze import build_context
    from tpucheck.ruleset.loader import parse_rule_file
    from tpucheck.ruleset.model import DeviceContext, Ruleset

    text = """\
x-common: &common
  category: cuda-api
  severity: major
  affects: [training]
  effort: {low: 0.1, high: 0.2}
  message: m
  fix: {tpu: t}
  docs: ["https://example.org"]
  examples: {flag: ["a"], pass: ["b"]}
rules:
  - id: A001
    name: is-cuda
    <<: *common
    match: {attribute: is_cuda}
  - id: A002
    name: cu-sources
    <<: *common
    match:
      call: torch.utils.cpp_extension.CppExtension
      args: [{name: sources, position: 1, value: '.*\\.cu'}]
  - id: A003
    name: compile-default
    <<: *common
    match:
      decorator: torch.compile
      args: [{name: backend, missing: true}]
"""
    rules, _, problems = parse_rule_file(text, "inline.yaml")
    assert problems == []
    context = build_context(Ruleset(tuple(rules), DeviceContext()))
    code = dedent(
        """
        import torch
        from torch.utils.cpp_extension import CppExtension
        if x.is_cuda and not torch.is_cuda:
            pass
        CppExtension("a", ["a.cpp", "k.cu"])
        CppExtension("b", sources=["b.cpp"])
        @torch.compile
        def f(): pass
        @torch.compile(mode="max-autotune")
        def g(): pass
        @torch.compile(backend="openxla")
        def h(): pass
        """
    ).lstrip("\n")
    assert findings_of(context, code) == [("A001", 3, 4), ("A002", 5, 1), ("A003", 7, 2), ("A003", 9, 2)]


def test_method_span_starts_at_the_method_name(test_context) -> None:
    code = "model = build(config).layers[0].item()\n"
    result = analyze_text("m.py", ("python",), code, test_context)
    [match] = result.matches
    assert (match.span.line, match.span.column, match.span.end_line, match.span.end_column) == (1, 33, 1, 39)
    assert match.snippet == "build(config).layers[0].item()"


def test_conditional_expression_on_availability_is_an_optional_path(test_context) -> None:
    code = 'import torch\ndev = "cuda" if torch.cuda.is_available() else "cpu"\nmain_device = "cuda"\n'
    result = analyze_text("m.py", ("python",), code, test_context)
    assert [(m.rule_id, m.span.line, m.guarded) for m in result.matches] == [("T007", 2, True), ("T007", 3, False)]


def test_where_decides_severity_by_place(test_context) -> None:
    code = dedent(
        """
        import torch
        ids = t.tolist()
        class Net(torch.nn.Module):
            def forward(self, x):
                return x.tolist()
        def training_step(batch):
            return batch.tolist()
        def setup(rows):
            out = [r.tolist() for r in rows]
            for r in rows:
                out.append(r.tolist())
            def inner():
                return r.tolist()
            return out
        @torch.compile
        def compiled(x):
            print(x)
        def plain(x):
            print(x)
        """
    ).lstrip("\n")
    result = analyze_text("m.py", ("python",), code, test_context)
    got = sorted((m.rule_id, m.span.line, m.severity) for m in result.matches if m.rule_id in ("T021", "T022"))
    assert got == [
        ("T021", 2, "info"),
        ("T021", 5, None),
        ("T021", 7, None),
        ("T021", 9, None),
        ("T021", 11, None),
        ("T021", 13, "info"),
        ("T022", 17, None),
    ]


def test_stacked_decorators_see_each_other_and_call_values(test_context) -> None:
    code = dedent(
        """
        import torch
        import torch.multiprocessing as mp
        @torch.compile
        @torch.inference_mode()
        def serve(x):
            return x
        @torch.inference_mode()
        def plain(x):
            return x
        mp.spawn(run, nprocs=torch.cuda.device_count())
        mp.spawn(run, nprocs=4)
        """
    ).lstrip("\n")
    assert [f for f in findings_of(test_context, code) if f[0] in ("T023", "T024")] == [("T023", 4, 2), ("T024", 10, 1)]
