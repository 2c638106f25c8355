#!/usr/bin/env python3
"""Generate the unsupported-op rule pack from PyTorch/XLA's op-coverage data.

    python scripts/generate_op_rules.py [--data DIR] [--catalog FILE] [--out FILE] [--check]

Why a generator: which aten ops PyTorch/XLA lowers changes with every release, and the
ranked list of user-facing APIs that fall back to the CPU is research data with evidence
per entry. Rules typed by hand from it drift the first time either side changes; a pack
generated from it stays a function of the data, and `--check` (run in-process by
tests/test_op_pack.py) proves that the committed `rules/unsupported-op-generated.yaml`
is exactly that function's output.

What comes from where (all read from `../shared`, never copied into the project):

- `top_cpu_fallbacks.json`: the APIs, in rank order (so rule ids are stable), the kind of
  problem (CPU fallback, host sync, dynamic shape), confidence, training/inference, the
  aten ops hit and the evidence (the message and most docs links);
- `xla_native_functions.yaml`: the ops PyTorch/XLA lowers; an entry whose ops are all
  lowered by now is dropped (listed under `x-lowered`) instead of generated;
- `native_functions.yaml`: the PyTorch version, and which namespace a bare name in the
  ranked list lives in (`torch.linalg.cholesky_ex`, but `torch.cholesky_solve`);
- `op_coverage.json`: the versions the classification was made from, and the unlowered
  `torch.special` functions;
- `../shared/RULE_CATALOG.md`: severity, replacement (the fix) and effort of the catalog
  row an API belongs to, and its sources (more docs links).

What the data cannot say lives in the tables below: how to match each free-text API
statically (argument constraints that keep precision on real code), and concrete
rewrites where the catalog's replacement is terse. Every rule's examples come from
templates per matcher kind and are run through tpucheck's own analyzer before the pack
is written, so a wrong template fails here, not in a user's scan.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a plain script: import tpucheck from this checkout
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # pack_common, also when loaded by a test

from pack_common import Flow, FlowMap, Folded, Literal, dump, number, sha256, shown_path
from pack_common import diff_summary as _diff_summary

from tpucheck.analyze import analyze_text, build_context
from tpucheck.ruleset.loader import RuleFileError, load_ruleset, parse_rule_file, resolve_places
from tpucheck.ruleset.model import DeviceContext, Rule, Ruleset, Where

DEFAULT_DATA = REPO.parent / "shared" / "data" / "op-coverage"
DEFAULT_OUT = REPO / "rules" / "unsupported-op-generated.yaml"
HAND_RULES = REPO / "rules"
COMMAND = "python scripts/generate_op_rules.py"
DATA_FILES = ("top_cpu_fallbacks.json", "op_coverage.json", "xla_native_functions.yaml", "native_functions.yaml")
EFFORT_CAP = 4.0
"""Hours per occurrence at most: a generated rule flags one call, whose rewrite is small;
the catalog's larger ranges (porting a whole linear-algebra routine) are project work."""

XLA_BLOB = "https://github.com/pytorch/xla/blob/master/"
TORCH_BLOB = "https://github.com/pytorch/pytorch/blob/main/"
XLA_YAML_URL = XLA_BLOB + "codegen/xla_native_functions.yaml"
REPOS = {"pytorch/xla": "pytorch/xla", "pytorch/pytorch": "pytorch/pytorch", "torchprime": "AI-Hypercomputer/torchprime"}
KNOWN_FILES = {
    # Bare file names in the evidence whose place the catalog's source keys do not give.
    "BatchLinearAlgebra.cpp": TORCH_BLOB + "aten/src/ATen/native/BatchLinearAlgebra.cpp",
    "decomp_registration.py": XLA_BLOB + "torch_xla/_internal/decomp_registration.py",
}

SEVERITIES = ("blocker", "major", "minor", "info")
CONFIDENCE = {"H": "high", "M": "medium", "L": "low"}
AFFECTS = {"both": ("training", "inference"), "train": ("training",), "infer": ("inference",)}
KINDS: dict[str, tuple[str, str]] = {
    # data kind -> (category, severity when no catalog row says otherwise): the category
    # names the main problem (a data-dependent shape or a sync outweighs the fallback).
    "fallback": ("unsupported-op", "major"),
    "fallback(view)": ("unsupported-op", "major"),
    "fallback(bwd)": ("unsupported-op", "major"),
    "fallback(+sync)": ("unsupported-op", "major"),
    "fallback(creation)": ("unsupported-op", "info"),
    "fallback+dynamic": ("dynamic-shape", "major"),
    "fallback/host-sync": ("host-sync", "minor"),
    "host-sync": ("host-sync", "major"),
    "host-sync+dynamic": ("dynamic-shape", "major"),
    "cond-fallback": ("unsupported-op", "minor"),
    "error": ("unsupported-op", "blocker"),
    "slow-path": ("unsupported-op", "info"),
}
HOT_CODE = "hot"
"""The place `rules/contexts.yaml` defines as hot code, as the hand-written host-sync rules
use it: a sync once at set-up costs nothing, once per step it stalls the TPU."""
DEFAULT_EFFORT = {"blocker": (2.0, 4.0), "major": (1.0, 4.0), "minor": (0.25, 1.0), "info": (0.1, 0.25)}


class GenerationError(Exception):
    """The data and the tables below disagree; the message says what to add or fix."""


# -- how an API is matched ------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One argument constraint, as the rule schema's `args` items."""

    name: str | None = None
    position: int | None = None
    value: str | None = None
    missing: bool = False

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.position is not None:
            out["position"] = self.position
        if self.value is not None:
            out["value"] = self.value
        if self.missing:
            out["missing"] = True
        return out


@dataclass(frozen=True)
class Alt:
    """One way an API call is a problem, with argument text that is (flag) and is not (unflag)."""

    args: tuple[Arg, ...] = ()
    arity: int | None = None
    flag: str = "x"
    unflag: str | None = None


@dataclass(frozen=True)
class Api:
    """One user-facing API of a ranked entry, as a matcher sees it."""

    kind: str
    """call (a qualified name), method (a method name on any receiver) or keyword."""
    target: str
    label: str
    aliases: tuple[str, ...] = ()
    alts: tuple[Alt, ...] = (Alt(),)
    in_call: str | None = None
    group: str | None = None
    """Entries split into rules by group; default: calls in one rule, methods in another."""

    def names(self) -> tuple[str, ...]:
        return (self.target, *self.aliases)


@dataclass(frozen=True)
class Unseen:
    """An API of the ranked list that static analysis cannot see, and why."""

    label: str
    reason: str


@dataclass(frozen=True)
class SpecialFromData:
    """Placeholder: the unlowered `torch.special` functions of op_coverage.json."""


def call(target: str, *, label: str | None = None, aliases: tuple[str, ...] = (), alts: tuple[Alt, ...] = (Alt(),), group: str | None = None) -> Api:
    return Api("call", target, label or short_name(target), aliases, alts, group=group)


def short_name(qualified: str) -> str:
    """`F.huber_loss`, `nn.HuberLoss`: how the ranked list and most code spell these names."""
    for prefix, short in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if qualified.startswith(prefix):
            return short + qualified[len(prefix):]
    return qualified


def method(name: str, *, label: str | None = None, aliases: tuple[str, ...] = (), alts: tuple[Alt, ...] = (Alt(),), group: str | None = None) -> Api:
    return Api("method", name, label or f"Tensor.{name}", aliases, alts, group=group)


NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
INT = r"\d+"
NOT_ONE = r"(?!1$)\d+"
TWO_OR_MORE = r"[2-9]|[1-9]\d+"
NOT_CPU = r"(?!cpu\b).+"
NOT_TOKEN_IDS = r"(?!(?:\w+\.)*\w*ids$).+"
"""A name that is not token ids: tokenizer output lives on the CPU, where comparing is free."""
LENGTHS = r"(?:\w+\.)*\w*(?:lengths|lens|counts|durations|durs)"
"""A name that holds per-element repeat counts: the tensor form of repeat_interleave."""
STATIC_SIZE = Arg(name="output_size", missing=True)
DISTRIBUTIONS = (
    # torch.distributions classes whose constructors validate their arguments.
    "Normal", "Categorical", "Bernoulli", "Beta", "Binomial", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Exponential", "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy",
    "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal",
    "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
)


def distribution(cls: str, alts: tuple[Alt, ...] = (Alt(flag="params"),)) -> Api:
    return call(f"torch.distributions.{cls}", aliases=(f"torch.distributions.*.{cls}",), alts=alts)


VALIDATING = (
    Alt(args=(Arg(name="validate_args", missing=True),), flag="params", unflag="params, validate_args=False"),
    Alt(args=(Arg(name="validate_args", value="True"),), flag="params, validate_args=True"),
)

API_TABLE: dict[str, tuple[Api | Unseen | SpecialFromData, ...]] = {
    # Entries whose free text the simple parser (parse_api_text) cannot read, or whose
    # problem depends on arguments. Keyed by the data's exact `api` text: an entry that
    # changes text fails loudly until it is looked at again.
    "torch.nonzero / Tensor.nonzero / torch.argwhere / torch.where(cond)": (
        call("torch.nonzero"),
        method("nonzero"),
        call("torch.argwhere"),
        call("torch.where", label="torch.where(cond)", alts=(Alt(args=(Arg(position=1, missing=True), Arg(name="input", missing=True)), flag="mask"),)),
    ),
    "x[bool_mask] / x[bool_mask] = v (boolean-mask indexing)": (
        Unseen("x[bool_mask]", "a subscript whose index is a bool tensor: the index's dtype is unknown statically"),
    ),
    "Tensor.item() / float(t) / int(t) / bool(t) / `if t:`": (
        method("item", alts=(Alt(arity=0, flag=""),)),
        Unseen("float(t) / int(t) / bool(t) / `if t:`", "a conversion or truth test whose operand may or may not be a tensor: the type is unknown statically"),
    ),
    "torch.unique(dim=..) / torch.unique_consecutive": (
        call("torch.unique", label="torch.unique(dim=..)", alts=(Alt(args=(Arg(name="dim"),), flag="x, dim=0"),)),
        call("torch.unique_consecutive"),
    ),
    "torch.repeat_interleave(x, repeats_tensor)": (
        call(
            "torch.repeat_interleave",
            label="torch.repeat_interleave(repeats_tensor)",
            # a static `output_size=` fixes the result's length: no data-dependent shape
            alts=(
                Alt(args=(Arg(position=1, missing=True), Arg(name="repeats", missing=True), STATIC_SIZE), flag="counts"),
                Alt(args=(Arg(name="repeats", position=1, value=LENGTHS), STATIC_SIZE), flag="x, lengths, dim=0", unflag="x, lengths, dim=0, output_size=total"),
            ),
        ),
        method(
            "repeat_interleave",
            label="Tensor.repeat_interleave(repeats_tensor)",
            alts=(Alt(args=(Arg(name="repeats", position=0, value=LENGTHS), STATIC_SIZE), flag="durations, dim=0", unflag="durations, dim=0, output_size=n"),),
        ),
    ),
    "F.interpolate(mode='bicubic'|antialias=True|'nearest-exact'), torchvision Resize(antialias)": (
        call("torch.nn.functional.interpolate", label="F.interpolate(mode='bicubic'|'nearest-exact'|antialias=True)"),
        Unseen("torchvision Resize(antialias)", "usually runs in the CPU input pipeline; only a device tensor falls back, and where the tensor lives is unknown statically"),
    ),
    "F.interpolate on 1-D/3-D inputs (linear, nearest 1d/3d)": (
        call("torch.nn.functional.interpolate", label="F.interpolate(mode='linear')"),
        Unseen("F.interpolate on 1-D/3-D inputs (nearest)", "the input's rank decides the op, and it is unknown statically"),
    ),
    "nn.utils.weight_norm / parametrizations.weight_norm": (
        call("torch.nn.utils.weight_norm"),
        call("torch.nn.utils.parametrizations.weight_norm"),
    ),
    "torch.special.* (erfcx, ndtri, log_ndtr, i0e, i1, i1e, zeta, xlog1py, entr, bessel_*, ...), torch.i0, torch.igamma(c)": (
        SpecialFromData(),
        call("torch.i0", aliases=("torch.special.i0",)),
        call("torch.igamma", aliases=("torch.special.gammainc",)),
        call("torch.igammac", aliases=("torch.special.gammaincc",)),
    ),
    "torch.linalg.inv / linalg.cholesky / linalg.solve error checks": (
        call("torch.linalg.inv"),
        call("torch.linalg.cholesky"),
        call("torch.linalg.solve"),
    ),
    "F.adaptive_avg_pool2d / adaptive_max_pool2d with non-divisible output size": (
        Unseen("F.adaptive_avg_pool2d / adaptive_max_pool2d with non-divisible output size", "whether the output size divides the input size depends on the input's shape, unknown statically"),
    ),
    "F.max_pool2d/3d with dilation != 1": (
        call(
            "torch.nn.functional.max_pool2d",
            label="F.max_pool2d(dilation>1)",
            aliases=("torch.nn.functional.max_pool3d",),
            alts=(Alt(args=(Arg(name="dilation", position=4, value=NOT_ONE),), flag="x, 3, 1, 1, 2", unflag="x, 3, 1, 1, 1"),),
        ),
        call(
            "torch.nn.MaxPool2d",
            label="nn.MaxPool2d(dilation>1)",
            aliases=("torch.nn.MaxPool3d",),
            alts=(Alt(args=(Arg(name="dilation", position=3, value=NOT_ONE),), flag="3, stride=1, dilation=2", unflag="3, stride=2"),),
        ),
    ),
    "F.avg_pool2d/3d(ceil_mode & count_include_pad, or divisor_override) backward": (
        call(
            "torch.nn.functional.avg_pool2d",
            label="F.avg_pool2d(ceil_mode & count_include_pad | divisor_override)",
            aliases=("torch.nn.functional.avg_pool3d",),
            alts=(
                Alt(args=(Arg(name="divisor_override", position=6, value=INT),), flag="x, 2, divisor_override=4", unflag="x, 2, 2"),
                Alt(args=(Arg(name="ceil_mode", position=4, value="True"), Arg(name="count_include_pad", position=5, missing=True)), flag="x, 3, 2, ceil_mode=True", unflag="x, 3, 2, ceil_mode=True, count_include_pad=False"),
                Alt(args=(Arg(name="ceil_mode", position=4, value="True"), Arg(name="count_include_pad", position=5, value="True")), flag="x, 3, 2, 0, True, True"),
            ),
        ),
        call(
            "torch.nn.AvgPool2d",
            label="nn.AvgPool2d(ceil_mode & count_include_pad | divisor_override)",
            aliases=("torch.nn.AvgPool3d",),
            alts=(
                Alt(args=(Arg(name="divisor_override", position=5, value=INT),), flag="2, divisor_override=4", unflag="2"),
                Alt(args=(Arg(name="ceil_mode", position=3, value="True"), Arg(name="count_include_pad", position=4, missing=True)), flag="3, 2, ceil_mode=True"),
                Alt(args=(Arg(name="ceil_mode", position=3, value="True"), Arg(name="count_include_pad", position=4, value="True")), flag="3, 2, 1, True, True"),
            ),
        ),
    ),
    "F.one_hot(x) without num_classes": (
        call("torch.nn.functional.one_hot", label="F.one_hot(x) without num_classes", alts=(Alt(args=(Arg(position=1, missing=True), Arg(name="num_classes", missing=True))),)),
    ),
    "F.embedding(..., max_norm=...)": (
        call(
            "torch.nn.functional.embedding",
            label="F.embedding(max_norm=...)",
            alts=(Alt(args=(Arg(name="max_norm", position=3, value=NUMBER),), flag="ids, weight, max_norm=1.0", unflag="ids, weight, padding_idx=0"),),
        ),
        call(
            "torch.nn.Embedding",
            label="nn.Embedding(max_norm=...)",
            alts=(Alt(args=(Arg(name="max_norm", position=3, value=NUMBER),), flag="32000, 512, max_norm=1.0", unflag="32000, 512, padding_idx=0"),),
        ),
    ),
    "Tensor.scatter_(..., reduce='multiply') / scatter_reduce(reduce='mean' or include_self=False)": (
        method(
            "scatter_",
            label="Tensor.scatter_(reduce='multiply')",
            aliases=("scatter",),
            alts=(Alt(args=(Arg(name="reduce", position=3, value="multiply"),), flag='1, index, src, reduce="multiply"', unflag='1, index, src, reduce="add"'),),
        ),
        method(
            "scatter_reduce",
            label="Tensor.scatter_reduce(reduce='mean' | include_self=False)",
            aliases=("scatter_reduce_",),
            alts=(
                Alt(args=(Arg(name="reduce", position=3, value="mean"),), flag='0, index, src, reduce="mean"', unflag='0, index, src, reduce="sum"'),
                Alt(args=(Arg(name="include_self", value="False"),), flag='0, index, src, "amax", include_self=False'),
            ),
        ),
        call(
            "torch.scatter_reduce",
            label="torch.scatter_reduce(reduce='mean' | include_self=False)",
            alts=(
                Alt(args=(Arg(name="reduce", position=4, value="mean"),), flag='x, 0, index, src, reduce="mean"', unflag='x, 0, index, src, reduce="sum"'),
                Alt(args=(Arg(name="include_self", value="False"),), flag='x, 0, index, src, "amax", include_self=False'),
            ),
        ),
    ),
    "torch.multinomial(probs, n>1, replacement=False)": (
        call(
            "torch.multinomial",
            label="torch.multinomial(n>1, replacement=False)",
            alts=(
                Alt(args=(Arg(name="num_samples", position=1, value=TWO_OR_MORE), Arg(name="replacement", position=2, missing=True)), flag="probs, 4", unflag="probs, 4, replacement=True"),
                Alt(args=(Arg(name="num_samples", position=1, value=TWO_OR_MORE), Arg(name="replacement", position=2, value="False")), flag="probs, 4, replacement=False", unflag="probs, 1"),
            ),
        ),
        method(
            "multinomial",
            label="Tensor.multinomial(n>1, replacement=False)",
            alts=(
                Alt(args=(Arg(name="num_samples", position=0, value=TWO_OR_MORE), Arg(name="replacement", position=1, missing=True)), flag="4", unflag="1"),
                Alt(args=(Arg(name="num_samples", position=0, value=TWO_OR_MORE), Arg(name="replacement", position=1, value="False")), flag="4, replacement=False", unflag="4, replacement=True"),
            ),
        ),
    ),
    "any RNG op with generator=torch.Generator(...) (randn, rand, normal_, bernoulli, dropout via generator, randperm)": (
        call("torch.randn", label="torch.randn(generator=...)"),
        call("torch.rand", label="torch.rand(generator=...)"),
        call(
            "torch.randperm",
            label="torch.randperm(generator=..., device=...)",
            alts=(Alt(args=(Arg(name="generator"), Arg(name="device", value=NOT_CPU)), flag="n, generator=g, device=device", unflag="n, generator=g"),),
        ),
        call("torch.bernoulli", label="torch.bernoulli(generator=...)", alts=(Alt(args=(Arg(name="generator"),), flag="p, generator=g", unflag="p"),)),
        method(
            "normal_",
            label="Tensor.normal_/uniform_/bernoulli_/random_/exponential_(generator=...)",
            aliases=("uniform_", "bernoulli_", "bernoulli", "random_", "exponential_"),
            alts=(Alt(args=(Arg(name="generator"),), flag="generator=g", unflag="0.0, 0.02"),),
        ),
    ),
    "torch.randperm(n, dtype!=int64)": (
        call(
            "torch.randperm",
            label="torch.randperm(dtype!=int64, device=...)",
            alts=(Alt(args=(Arg(name="dtype", value=r"(?!torch\.(?:int64|long)$).+"), Arg(name="device", value=NOT_CPU)), flag="n, dtype=torch.int32, device=device", unflag="n, dtype=torch.int64, device=device"),),
        ),
    ),
    "torch.poisson / torch.binomial / distributions Gamma/Beta/Dirichlet/Binomial .sample()": (
        call("torch.poisson", alts=(Alt(flag="rates"),)),
        call("torch.binomial", alts=(Alt(flag="counts, probs"),)),
        *(distribution(cls) for cls in ("Gamma", "Beta", "Dirichlet", "Binomial", "Poisson")),
    ),
    "torch.distributions.* constructors with validate_args (default on)": tuple(distribution(cls, VALIDATING) for cls in DISTRIBUTIONS),
    "torch.renorm / torch.remainder(scalar, tensor) / torch.logit backward": (
        call("torch.renorm", alts=(Alt(flag="w, 2, 0, 1.0"),), group="renorm"),
        call(
            "torch.remainder",
            label="torch.remainder(scalar, tensor)",
            alts=(Alt(args=(Arg(name="input", position=0, value="-?" + NUMBER),), flag="1.0, x", unflag="x, 1.0"),),
            group="remainder",
        ),
        call("torch.logit", label="torch.logit (backward)", aliases=("torch.special.logit",), group="logit"),
    ),
    "torch.optim.*(fused=True)": (Api("keyword", "fused", "torch.optim.*(fused=True)", in_call="torch.optim.*"),),
}

API_OVERRIDES: dict[str, Api] = {
    # Parsed APIs whose bare method name is too common to match without an argument that
    # only the tensor method takes (pandas has `.unique()` and `.median()`).
    "Tensor.unique": method(
        "unique",
        alts=(
            Alt(args=(Arg(name="return_inverse"),), flag="return_inverse=True", unflag=""),
            Alt(args=(Arg(name="return_counts"),), flag="return_counts=True"),
            Alt(args=(Arg(name="sorted"),), flag="sorted=True"),
            Alt(args=(Arg(name="dim"),), flag="dim=0"),
        ),
    ),
    "Tensor.median": method(
        "median",
        alts=(
            Alt(args=(Arg(name="dim"),), flag="dim=-1", unflag=""),
            Alt(args=(Arg(position=0, value=r"-?\d+"),), flag="-1", unflag="axis=0"),
        ),
    ),
    "torch.equal": call(
        "torch.equal",
        alts=(
            Alt(args=(Arg(name="input", position=0, value=NOT_TOKEN_IDS),), flag="a, b", unflag="text_input_ids, untruncated_ids"),
            Alt(args=(Arg(name="other", position=1, value=NOT_TOKEN_IDS),), flag="out[0], expected"),
        ),
    ),
    "torch.allclose": call(
        "torch.allclose",
        alts=(
            Alt(args=(Arg(name="input", position=0, value=NOT_TOKEN_IDS),), flag="a, b, atol=1e-5"),
            Alt(args=(Arg(name="other", position=1, value=NOT_TOKEN_IDS),), flag="out[0], expected"),
        ),
    ),
    "Tensor.index_reduce_": method("index_reduce_", aliases=("index_reduce",), alts=(Alt(flag='0, index, src, "mean"'),)),
}

API_EXTRAS: dict[str, tuple[Api, ...]] = {
    # The module form or the torch.special alias of a listed function: the same aten op.
    "torch.lgamma": (call("torch.special.gammaln"),),
    "torch.digamma": (call("torch.special.digamma", aliases=("torch.special.psi",)),),
    "torch.polygamma": (call("torch.special.polygamma"),),
    "torch.linalg.matrix_exp": (call("torch.matrix_exp"),),
    "F.multi_margin_loss": (call("torch.nn.MultiMarginLoss", alts=(Alt(flag=""),)),),
    "F.multilabel_margin_loss": (call("torch.nn.MultiLabelMarginLoss", alts=(Alt(flag=""),)),),
    "F.adaptive_max_pool3d": (call("torch.nn.AdaptiveMaxPool3d", alts=(Alt(flag="(4, 8, 8)"),)),),
    "F.fractional_max_pool2d": (call("torch.nn.FractionalMaxPool2d", alts=(Alt(flag="3, output_ratio=0.5"),)),),
    "F.fractional_max_pool3d": (call("torch.nn.FractionalMaxPool3d", alts=(Alt(flag="3, output_ratio=0.5"),)),),
}


# -- what each generated rule says ----------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Per rule, what the data and the catalog cannot say. Keyed by the group's first API label."""

    name: str | None = None
    subject: str | None = None
    when: str | None = None
    """Appended to the subject: the arguments that make the call a problem."""
    catalog: str | None = None
    """The catalog row, where matching the API's name against the catalog finds none or the wrong one."""
    severity: str | None = None
    confidence: str | None = None
    affects: tuple[str, ...] | None = None
    effort: tuple[float, float] | None = None
    ops: tuple[str, ...] | None = None
    backward: bool = False
    fix: str | None = None
    fix_xla: str | None = None
    docs: tuple[str, ...] = ()
    """Catalog source keys (X-CK) or URLs to cite beyond the evidence."""
    supersedes: tuple[str, ...] = ()
    """Group keys of other generated rules whose findings inside this rule's are dropped."""
    extra_pass: tuple[str, ...] = ()
    method_note: str | None = None
    singular: bool = False
    """The `subject` names one thing (verbs agree with it)."""
    note: str | None = None
    """A last sentence for the message: what the matcher deliberately leaves out."""


GROUPS: dict[str, Settings] = {
    "Tensor.unique": Settings(
        when="with `return_inverse`/`return_counts`/`sorted`/`dim`",
        method_note="an argument only the tensor method takes: pandas' `.unique()` is not flagged",
        fix="Keep the size static: count against a fixed vocabulary (`F.one_hot(x, num_classes=C).sum(0)`), or sort and carry a mask of first occurrences (`s[1:] != s[:-1]`) instead of a shorter tensor; or take the unique set on the CPU outside the step.",
    ),
    "Tensor.bincount": Settings(
        fix="Give the number of bins statically: `torch.zeros(C, dtype=w.dtype, device=x.device).scatter_add_(0, x, w)` (or `F.one_hot(x, num_classes=C).sum(0)` for counts).",
    ),
    "torch.repeat_interleave(repeats_tensor)": Settings(
        name="torch-repeat-interleave-tensor",
        when="with a tensor of repeat counts (a one-argument call, or `repeats` named like lengths/counts/durations)",
        confidence="medium",
        fix="Keep the length static: pad to the largest repeat count and carry a mask (`keep = torch.arange(max_r, device=r.device) < r[:, None]`), with the total length fixed per batch bucket.",
        fix_xla="`torch_xla.experimental.custom_kernel.repeat_with_fixed_output_size(x, repeats, total_length)` (1-D inputs) gives a static output length; else pad and mask as above.",
    ),
    "Tensor.repeat_interleave(repeats_tensor)": Settings(
        name="tensor-repeat-interleave-tensor",
        when="with `repeats` named like lengths/counts/durations (a tensor of repeat counts)",
        method_note="a `repeats` argument named like a tensor of counts: the common integer repeats are not flagged",
        fix="Keep the length static: pad to the largest repeat count and carry a mask (`keep = torch.arange(max_r, device=r.device) < r[:, None]`), with the total length fixed per batch bucket.",
        fix_xla="`torch_xla.experimental.custom_kernel.repeat_with_fixed_output_size(x, repeats, total_length)` (1-D inputs) gives a static output length; else pad and mask as above.",
    ),
    "torch.nonzero_static": Settings(
        fix="Compute the indices once outside the step and keep them as a buffer; inside the step, use masks (`torch.where(mask, x, 0)`) rather than index lists.",
    ),
    "Tensor.median": Settings(
        when="with a dimension",
        method_note="a dimension argument: the argument-less `.median()` of pandas and NumPy is not flagged",
        fix="`t.kthvalue((n + 1) // 2, dim)` (lowered; the same lower median `median` returns), or `t.sort(dim).values.select(dim, (n - 1) // 2)`.",
    ),
    "torch.nansum": Settings(
        fix="`torch.nan_to_num(x, nan=0.0).sum(dim)`; for `nanmean` divide by `(~torch.isnan(x)).sum(dim)`.",
    ),
    "torch.searchsorted": Settings(
        fix="Broadcast compare and count: `(x[..., None] > boundaries).sum(-1)` (`>=` for `right=True`), which equals `bucketize`/`searchsorted` for sorted boundaries.",
    ),
    "torch.isin": Settings(fix="`(elements[..., None] == test_elements.flatten()).any(-1)` (fine for small test sets)."),
    "torch.equal": Settings(
        note="Comparisons of token ids (`torch.equal(text_input_ids, untruncated_ids)`: tokenizer output, on the CPU) are not matched.",
        fix="Keep the comparison on the device, `(a == b).all()` or `torch.isclose(a, b).all()`, and read it outside the step (or drop the check from the hot path).",
        fix_xla="The same; defer a needed read with `xm.add_step_closure`.",
    ),
    "torch.lgamma": Settings(
        subject="`torch.lgamma` / `torch.digamma` / `torch.polygamma` and their `torch.special` aliases (`gammaln`, `digamma`, `psi`, `polygamma`)",
        fix="`torch.mvlgamma(x, p=1)` equals `lgamma(x)` and is lowered; approximate `digamma`/`polygamma` (recurrence plus asymptotic series) or keep them out of the step.",
    ),
    "torch.special.entr": Settings(
        name="torch-special-functions",
        subject="The unlowered `torch.special` functions (`erfcx`, `ndtri`, `log_ndtr`, `i0e`, `i1`, `zeta`, `xlog1py`, `entr`, the Bessel and orthogonal-polynomial families) and `torch.i0` / `torch.igamma` / `torch.igammac`",
        fix="Precompute on the CPU outside the step, or approximate with lowered ops (`torch.erfinv`, `torch.xlogy`, `torch.mvlgamma` are lowered).",
    ),
    "torch.logaddexp": Settings(
        fix="`m = torch.maximum(a, b); m + torch.log1p(torch.exp(-(a - b).abs()))` or `torch.logsumexp(torch.stack([a, b]), 0)`; for `logaddexp2` scale by ln 2.",
    ),
    "torch.hypot": Settings(
        name="torch-unlowered-pointwise",
        fix="Closed forms with lowered ops: `hypot(a, b)` → `torch.sqrt(a * a + b * b)`, `exp2(x)` → `torch.pow(2.0, x)`, `fmax`/`fmin` → `torch.maximum`/`minimum` (without NaN inputs), `signbit(x)` → `x < 0`, `isposinf(x)` → `x == float('inf')`, `copysign(a, b)` → `a.abs() * torch.where(b < 0, -1.0, 1.0)`, `sinc(x)` → `torch.where(x == 0, 1.0, torch.sin(pi * x) / (pi * x))`.",
    ),
    "torch.aminmax": Settings(fix="`torch.amin(x, dim)` and `torch.amax(x, dim)`: both lowered, and XLA fuses the two reductions."),
    "torch.logcumsumexp": Settings(
        fix="`logcumsumexp`: `m = x.amax(dim, keepdim=True); m + (x - m).exp().cumsum(dim).log()`; `cummin(x, dim)`: `-torch.cummax(-x, dim).values`.",
    ),
    "torch.linalg.det": Settings(fix="`sign, logabs = torch.linalg.slogdet(A); det = sign * logabs.exp()` (`slogdet`/`logdet` are lowered)."),
    "torch.linalg.solve": Settings(
        fix="Lowered building blocks: `torch.triangular_solve` for triangular systems, `torch.linalg.inv_ex(A).inverse @ b` for small well-conditioned ones; otherwise solve on the CPU outside the step.",
    ),
    "torch.linalg.cholesky": Settings(
        fix="Factor on the CPU outside the step; where any square root of an SPD matrix will do, `w, Q = torch.linalg.eigh(A); Q * w.clamp_min(0).sqrt()` is lowered; replace `cholesky_solve` with `torch.triangular_solve` twice.",
    ),
    "torch.linalg.qr": Settings(
        fix="Usually set-up work (orthogonal init): run it on the CPU before moving the model; in the step, `torch.linalg.svd` or `eigh` (lowered) give an orthonormal basis.",
    ),
    "torch.linalg.eig": Settings(
        fix="For symmetric/Hermitian matrices `torch.linalg.eigh`/`eigvalsh` (lowered); `matrix_exp` by scaling and squaring with matmuls; otherwise compute on the CPU outside the step.",
    ),
    "torch.linalg.cross": Settings(fix="`torch.cross(a, b, dim=-1)` (lowered).", effort=(0.1, 0.25)),
    "torch.linalg.inv": Settings(
        name="torch-linalg-inv-error-check",
        subject="The error check of `torch.linalg.inv`",
        singular=True,
        fix="`torch.linalg.inv_ex(A).inverse` (lowered, without the host-side error check); check its `info` every N steps if needed.",
    ),
    "torch.addmv": Settings(fix="`beta * c + alpha * (A @ x)`; `addbmm(c, A, B)` → `c + torch.bmm(A, B).sum(0)`; `vdot(a, b)` → `(a.conj() * b).sum()`."),
    "torch.cdist": Settings(
        fix="`d2 = x.pow(2).sum(-1, keepdim=True) + y.pow(2).sum(-1).unsqueeze(-2) - 2 * x @ y.transpose(-2, -1)`, then `d2.clamp_min(1e-12).sqrt()`: its backward uses lowered ops.",
    ),
    "F.huber_loss": Settings(fix="`delta * F.smooth_l1_loss(input, target, beta=delta)` equals `huber_loss` and is lowered."),
    "F.multi_margin_loss": Settings(
        name="multi-margin-loss",
        fix="Write the hinge with lowered ops: `m = (margin - x.gather(1, y[:, None]) + x).clamp_min(0)`, zero the target column, then `m.sum(1) / C`.",
    ),
    "F.adaptive_max_pool3d": Settings(
        fix="`F.max_pool3d` with kernel = stride = input size / output size where it divides (lowered); a fixed `F.max_pool2d` instead of fractional pooling.",
    ),
    "F.max_pool2d(dilation>1)": Settings(
        name="max-pool-dilation",
        when="with a literal `dilation` other than 1",
        catalog="UO022",
        fix="Use `dilation=1` (a larger kernel or a strided convolution for the receptive field), or keep the dilated pooling out of the TPU step.",
    ),
    "F.avg_pool2d(ceil_mode & count_include_pad | divisor_override)": Settings(
        name="avg-pool-ceil-mode-divisor",
        when="with a literal `divisor_override`, or `ceil_mode=True` while `count_include_pad` stays True",
        catalog="UO022",
        backward=True,
        fix="Pass `count_include_pad=False` with `ceil_mode=True`, and divide explicitly instead of `divisor_override` (`F.avg_pool2d(x, k) * (k * k / d)`).",
    ),
    "F.channel_shuffle": Settings(fix="`x.view(n, g, c // g, h, w).transpose(1, 2).reshape(n, c, h, w)`: plain reshapes, lowered."),
    "F.embedding(max_norm=...)": Settings(
        name="embedding-max-norm",
        when="with a literal `max_norm`",
        fix="Drop `max_norm` and renormalize the weights outside the forward (every N steps, under `torch.no_grad()`: `w.mul_((max_norm / w.norm(dim=1, keepdim=True)).clamp(max=1))`).",
    ),
    "Tensor.scatter_(reduce='multiply')": Settings(
        name="tensor-scatter-reduce-unlowered",
        when="with `reduce='multiply'` (`scatter_`), or `reduce='mean'` / `include_self=False` (`scatter_reduce`)",
        method_note="those `reduce`/`include_self` arguments, which only tensor scatters take",
        fix="`reduce='mean'`: `scatter_add_` the values and a ones tensor, then divide; `include_self=False`: scatter into a fresh identity-filled tensor (zeros for sum, -inf for amax) and combine; `scatter_(..., reduce='multiply')`: `scatter_reduce(..., reduce='prod')`.",
    ),
    "torch.scatter_reduce(reduce='mean' | include_self=False)": Settings(
        name="torch-scatter-reduce-unlowered",
        when="with `reduce='mean'` or `include_self=False`",
        fix="`reduce='mean'`: `scatter_add` the values and a ones tensor, then divide; `include_self=False`: scatter into a fresh identity-filled tensor (zeros for sum, -inf for amax) and combine.",
    ),
    "Tensor.index_reduce_": Settings(
        fix="`index_add_` of the values and of a ones tensor (mean = sum / count), or `scatter_reduce` with `include_self=True` for `prod`/`amax`/`amin`.",
    ),
    "torch.segment_reduce": Settings(
        ops=("segment_reduce",),
        fix="Build segment ids from the lengths (`torch.arange(n_seg).repeat_interleave(lengths, output_size=total)` once, on the CPU) and reduce with `scatter_add`/`scatter_reduce`.",
    ),
    "torch.multinomial(n>1, replacement=False)": Settings(
        name="torch-multinomial-without-replacement",
        when="drawing a literal 2+ samples without replacement",
        fix="Gumbel-top-k samples without replacement on the device: `g = -torch.log(-torch.log(torch.rand_like(probs)))`, then `(probs.log() + g).topk(n, dim=-1).indices`.",
    ),
    "Tensor.multinomial(n>1, replacement=False)": Settings(
        name="tensor-multinomial-without-replacement",
        when="drawing a literal 2+ samples without replacement",
        fix="Gumbel-top-k samples without replacement on the device: `g = -torch.log(-torch.log(torch.rand_like(probs)))`, then `(probs.log() + g).topk(n, dim=-1).indices`.",
    ),
    "torch.randn(generator=...)": Settings(
        name="rng-generator-on-device",
        when="with an explicit `generator=` (on a device, for `randperm`)",
        catalog="DP009",
        confidence="medium",
        ops=(),
        fix="Seed once with `torch.manual_seed(seed)` and drop `generator=` from device-side random ops (keep it for CPU-side data shuffling).",
        fix_xla="`torch_xla.manual_seed(seed)` and no `generator=` on XLA tensors.",
    ),
    "Tensor.normal_/uniform_/bernoulli_/random_/exponential_(generator=...)": Settings(
        name="tensor-rng-generator",
        when="with an explicit `generator=`",
        catalog="DP009",
        confidence="low",
        ops=(),
        method_note="a `generator=` argument: a CPU tensor's in-place sampling is flagged too",
        fix="Seed once with `torch.manual_seed(seed)` and drop `generator=` from device-side random ops (keep it for CPU-side initialisation and data shuffling).",
        fix_xla="`torch_xla.manual_seed(seed)` and no `generator=` on XLA tensors.",
    ),
    "torch.randperm(dtype!=int64, device=...)": Settings(
        name="torch-randperm-dtype",
        when="with a non-int64 `dtype` and a device",
        fix="`torch.randperm(n, device=device).to(dtype)` (int64 is lowered), or `torch.rand(n, device=device).argsort()`.",
    ),
    "torch.poisson": Settings(
        name="poisson-gamma-sampling",
        subject="`torch.poisson` / `torch.binomial` and sampling from `torch.distributions` `Gamma` / `Beta` / `Dirichlet` / `Binomial` / `Poisson`",
        fix="Sample on the CPU (in the data pipeline or outside the step) and move the result, or use a reparameterized approximation with lowered ops (a Normal approximation for large rates, Kumaraswamy for Beta).",
        supersedes=("torch.distributions.Normal",),
    ),
    "torch.distributions.Normal": Settings(
        name="distributions-validate-args",
        subject="`torch.distributions` constructors (`Normal`, `Categorical`, `Bernoulli`, ...)",
        when="without `validate_args=False`",
        catalog="HS007",
        fix="Pass `validate_args=False`, or call `torch.distributions.Distribution.set_default_validate_args(False)` once at start-up.",
        extra_pass=("import torch\n\ntorch.distributions.Distribution.set_default_validate_args(False)\n",),
    ),
    "torch.tril_indices": Settings(
        fix="Compute the indices once (in `__init__`) and `register_buffer` them, or use a static mask (`torch.ones(n, n, dtype=torch.bool).tril()`).",
    ),
    "torch.renorm": Settings(
        fix="`x * (maxnorm / n.clamp_min(1e-7)).clamp(max=1)` with `n` the p-norm over every dimension except `dim` (`keepdim=True`): lowered ops.",
    ),
    "torch.remainder(scalar, tensor)": Settings(
        name="torch-remainder-scalar-tensor",
        when="with a number as the first argument",
        ops=("remainder.Scalar_Tensor",),
        fix="`torch.full_like(x, s).remainder(x)` (tensor-tensor `remainder` is lowered), or `s - torch.floor(s / x) * x`.",
    ),
    "torch.logit (backward)": Settings(
        name="torch-logit",
        ops=("logit_backward",),
        affects=("training",),
        backward=True,
        catalog="UO014",
        fix="`torch.log(p / (1 - p))` on `p.clamp(eps, 1 - eps)`: its backward uses lowered ops.",
    ),
    "F.scaled_dot_product_attention": Settings(
        name="sdpa-math-path",
        docs=("X-CK", "X-PAL"),
        fix="Nothing to change for correctness; where attention dominates (long sequences), call a Pallas flash-attention kernel instead of SDPA.",
        fix_xla="`torch_xla.experimental.custom_kernel.flash_attention(q, k, v, causal=...)` for long sequences.",
    ),
}

FLAG_ARGS: dict[str, str] = {
    # Realistic arguments for examples of unconstrained matchers (the analyzer ignores them).
    **dict.fromkeys(["equal", "allclose", "logaddexp", "logaddexp2", "hypot", "copysign", "fmax", "fmin", "heaviside", "nextafter", "gcd", "lcm", "vdot", "cdist", "xlog1py"], "a, b"),
    "isin": "ids, allowed", "searchsorted": "boundaries, x", "bucketize": "x, boundaries", "polygamma": "1, x",
    "zeta": "x, q", "igamma": "a, x", "igammac": "a, x", "huber_loss": "pred, target", "HuberLoss": "delta=1.0",
    "multi_margin_loss": "logits, labels", "multilabel_margin_loss": "logits, labels", "addmv": "c, A, v",
    "addbmm": "c, A, B", "tril_indices": "n, n", "triu_indices": "n, n, 1", "solve": "A, b", "lstsq": "A, b",
    "solve_triangular": "L, b, upper=False", "lu_solve": "LU, pivots, b", "cholesky_solve": "b, L",
    "channel_shuffle": "x, 4", "ChannelShuffle": "4", "segment_reduce": 'data, "sum", lengths=lengths',
    "scaled_dot_product_attention": "q, k, v", "MultiheadAttention": "512, 8", "aminmax": "x, dim=-1",
    "logcumsumexp": "x, dim=1", "cummin": "x, dim=1", "linalg.cross": "a, b", "cross": "a, b",
    "adaptive_max_pool3d": "x, (4, 8, 8)", "fractional_max_pool2d": "x, 3, output_ratio=0.5",
    "fractional_max_pool3d": "x, 3, output_ratio=0.5", "pdist": "x", "ormqr": "a, tau, c",
    "householder_product": "a, tau", "matrix_exp": "A", "det": "A", "inv": "A", "qr": "A", "eig": "A",
    "eigvals": "A", "geqrf": "A", "cholesky": "A", "cholesky_ex": "A", "lu": "A", "lu_factor": "A",
    "cholesky_inverse": "L", "nonzero_static": "mask, size=64",
}

OTHER_LIBRARIES: dict[str, tuple[str, str]] = {
    # Same-named functions elsewhere, for examples a rule must not flag: module -> (import, prefix).
    "numpy": ("import numpy as np", "np."),
    "numpy.linalg": ("import numpy as np", "np.linalg."),
    "math": ("import math", "math."),
    "scipy.special": ("from scipy import special", "special."),
    "scipy.spatial.distance": ("from scipy.spatial import distance", "distance."),
    "numpy.random": ("import numpy as np", "np.random."),
}
NUMPY_NAMES = frozenset(
    ["median", "nanmedian", "nansum", "nanmean", "searchsorted", "isin", "allclose", "logaddexp", "logaddexp2", "hypot", "copysign", "fmax", "fmin", "heaviside", "nextafter", "exp2", "sinc", "signbit", "isposinf", "frexp", "gcd", "lcm", "angle", "unique", "bincount", "vdot", "remainder", "tril_indices", "triu_indices", "i0", "histogram"]
)
NUMPY_LINALG_NAMES = frozenset(["det", "solve", "lstsq", "cholesky", "qr", "eig", "eigvals", "inv", "cross", "matrix_exp"])
SCIPY_SPECIAL_NAMES = frozenset(["erfcx", "ndtri", "log_ndtr", "i0e", "i1", "i1e", "zeta", "xlog1py", "entr", "digamma", "polygamma", "gammaln", "psi", "gammainc", "gammaincc", "logit"])


# -- inputs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogRow:
    id: str
    category: str
    match: str
    severity: str
    affects: str
    replacement: str
    effort: str
    sources: str


@dataclass
class Inputs:
    data_dir: Path
    catalog_path: Path
    fallbacks: list[dict[str, Any]]
    coverage: dict[str, Any]
    lowered: frozenset[str]
    namespaces: dict[str, frozenset[str]]
    catalog: dict[str, CatalogRow]
    source_urls: dict[str, str]
    file_urls: dict[str, str]
    hashes: dict[str, str]
    torch_version: str


def load_inputs(data_dir: Path, catalog_path: Path) -> Inputs:
    """Read every data file (yaml.safe_load / json only) and check they belong together."""
    missing = [name for name in DATA_FILES if not (data_dir / name).is_file()]
    if missing:
        raise GenerationError(f"{data_dir}: missing {', '.join(missing)}")
    if not catalog_path.is_file():
        raise GenerationError(f"{catalog_path}: missing (the rule catalog gives severities, fixes and efforts)")
    fallbacks = json.loads((data_dir / "top_cpu_fallbacks.json").read_text(encoding="utf-8"))
    coverage = json.loads((data_dir / "op_coverage.json").read_text(encoding="utf-8"))
    xla = yaml.safe_load((data_dir / "xla_native_functions.yaml").read_text(encoding="utf-8"))
    native = yaml.safe_load((data_dir / "native_functions.yaml").read_text(encoding="utf-8"))

    lowered = frozenset(op for key in ("full_codegen", "supported", "ir_gen", "symint", "autograd") for op in xla.get(key) or ())
    if len(lowered) != coverage.get("xla_lowered_unique"):
        raise GenerationError(
            f"op_coverage.json counts {coverage.get('xla_lowered_unique')} lowered ops, xla_native_functions.yaml has {len(lowered)}: "
            "the classification was not made from this op list"
        )
    if len(native) != coverage.get("native_functions_entries"):
        raise GenerationError(
            f"op_coverage.json counts {coverage.get('native_functions_entries')} native functions, native_functions.yaml has {len(native)}: "
            "the classification was not made from this file"
        )
    source = coverage["inputs"]["native_functions.yaml"]["source"]
    version = re.search(r"torch-(\d+(?:\.\d+)+)", source)
    if version is None:
        raise GenerationError(f"op_coverage.json: no torch version in {source!r}")

    text = catalog_path.read_text(encoding="utf-8")
    catalog, source_keys = parse_catalog(text)
    source_urls = {key: url for key, url in ((k, _source_url(v)) for k, v in source_keys.items()) if url}
    file_urls = dict(KNOWN_FILES)
    for url in source_urls.values():
        file_urls.setdefault(url.rsplit("/", 1)[-1], url)
    return Inputs(
        data_dir=data_dir,
        catalog_path=catalog_path,
        fallbacks=fallbacks,
        coverage=coverage,
        lowered=lowered,
        namespaces=native_namespaces(native),
        catalog=catalog,
        source_urls=source_urls,
        file_urls=file_urls,
        hashes={name: sha256(data_dir / name) for name in DATA_FILES} | {"RULE_CATALOG.md": sha256(catalog_path)},
        torch_version=version.group(1),
    )


def native_namespaces(native: list[dict[str, Any]]) -> dict[str, frozenset[str]]:
    """Python-visible function names per torch namespace, from native_functions.yaml."""
    names: dict[str, set[str]] = {"torch": set(), "torch.linalg": set(), "torch.special": set(), "torch.fft": set(), "Tensor": set()}
    for entry in native:
        base = entry["func"].split("(", 1)[0].split(".", 1)[0]
        module = entry.get("python_module")
        variants = {v.strip() for v in str(entry.get("variants", "function")).split(",")}
        if module in ("linalg", "special", "fft"):
            names[f"torch.{module}"].add(base.removeprefix(f"{module}_"))
        elif module is None and "function" in variants:
            names["torch"].add(base)
        if module is None and "method" in variants:
            names["Tensor"].add(base)
    return {key: frozenset(value) for key, value in names.items()}


def split_row(line: str) -> list[str]:
    """A Markdown table row's cells; a `|` inside backticks is text, not a separator."""
    cells, current, code = [], [], False
    for char in line.strip().strip("|"):
        if char == "`":
            code = not code
        if char == "|" and not code:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    cells.append("".join(current).strip())
    return cells


def parse_catalog(text: str) -> tuple[dict[str, CatalogRow], dict[str, str]]:
    rows: dict[str, CatalogRow] = {}
    keys: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = split_row(line)
        if len(cells) == 8 and re.fullmatch(r"[A-Z]+\d+", cells[0]):
            rows[cells[0]] = CatalogRow(*cells)
        elif len(cells) == 2 and re.fullmatch(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*", cells[0]):
            keys[cells[0]] = cells[1]
    return rows, keys


def _source_url(cell: str) -> str | None:
    """A catalog source key's address: PyTorch/XLA paths become links at master."""
    token = cell.split()[0] if cell.split() else ""
    if token.startswith("http"):
        return token
    if token.startswith(("docs/", "torch_xla/", "codegen/")):
        return XLA_BLOB + token
    return None


# -- reading the ranked list ----------------------------------------------------------

_REMARK = re.compile(r"\s+\([^()]*\)")
_SHORTHAND = re.compile(r"([\w.]+?)(\d)d/(\d)d\b")
_TOKEN = re.compile(r"[A-Za-z_][\w.]*\*?")
_PREFIXES = {"F": "torch.nn.functional", "nn": "torch.nn"}


def parse_api_text(text: str, namespaces: dict[str, frozenset[str]]) -> list[Api] | None:
    """`torch.linalg.solve / lstsq / lu`, `F.huber_loss / nn.HuberLoss`: None when not that simple.

    Remarks in parentheses are dropped, `x2d/3d` is two names, and a bare name lives in
    the namespace of the name before it, unless native_functions.yaml says it is a
    plain `torch.` function (`torch.linalg.cholesky_ex / cholesky_solve`).
    """
    plain = _SHORTHAND.sub(r"\1\2d / \1\3d", _REMARK.sub("", text)).strip()
    apis: list[Api] = []
    namespace: str | None = None
    for token in re.split(r"\s*(?:/|,)\s*", plain):
        if not _TOKEN.fullmatch(token):
            return None
        head, _, rest = token.partition(".")
        if head == "Tensor" and rest:
            namespace = "Tensor"
            apis.append(method(rest))
            continue
        if head == "torch" and rest:
            qualified = token
        elif head in _PREFIXES and rest:
            qualified = f"{_PREFIXES[head]}.{rest}"
        elif namespace is None:
            return None
        elif namespace == "Tensor":
            apis.append(method(token))
            continue
        else:
            qualified = f"{namespace}.{token}"
            if namespace in namespaces and token not in namespaces[namespace] and token in namespaces["torch"]:
                qualified = f"torch.{token}"
        namespace = qualified.rsplit(".", 1)[0]
        apis.append(call(qualified))
    return apis


def entry_items(entry: dict[str, Any], inputs: Inputs) -> list[Api | Unseen]:
    text = entry["api"]
    raw: list[Api | Unseen | SpecialFromData]
    if text in API_TABLE:
        raw = list(API_TABLE[text])
    else:
        parsed = parse_api_text(text, inputs.namespaces)
        if parsed is None:
            raise GenerationError(f"rank {entry['rank']}: no matcher spec for {text!r}; add it to API_TABLE")
        raw = list(parsed)
    items: list[Api | Unseen] = []
    for item in raw:
        if isinstance(item, SpecialFromData):
            items.extend(call(f"torch.special.{name}") for name in special_functions(inputs.coverage))
            continue
        if isinstance(item, Api):
            item = API_OVERRIDES.get(item.label, item)
        items.append(item)
        if isinstance(item, Api):
            items.extend(API_EXTRAS.get(item.label, ()))
    return items


def special_functions(coverage: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for candidate in coverage["candidates"]:
        if candidate.get("python_module") != "special":
            continue
        for public in candidate.get("public", ()):
            name = public.removeprefix("torch.special.")
            if public.startswith("torch.special.") and name not in names:
                names.append(name)
    return names


def aten_ops(entry: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(op, condition) pairs: `max_pool2d_with_indices[conditional: dilation != 1]`."""
    out = []
    for raw in entry.get("aten_ops_emulated", ()):
        found = re.fullmatch(r"([^\[]+)(?:\[conditional: (.*)\])?", raw.strip())
        assert found is not None
        out.append((found.group(1), found.group(2)))
    return out


def now_lowered(entry: dict[str, Any], lowered: frozenset[str]) -> list[str] | None:
    """The entry's unconditional ops if every one of them is lowered now (the entry is stale)."""
    plain = [op for op, condition in aten_ops(entry) if condition is None]
    if plain and all(op_name(op) in lowered for op in plain):
        return plain
    return None


# -- the hand-written rules -----------------------------------------------------------


@dataclass
class HandRules:
    rules: list[Rule]
    device: DeviceContext
    names: set[str]
    ids: set[str]
    places: dict[str, Where]


def load_hand_rules(out: Path) -> HandRules:
    """Every rule file in rules/ except the generated pack (which would shadow itself)."""
    files = [p for p in sorted(HAND_RULES.glob("*.yaml")) if p.name != DEFAULT_OUT.name and p.resolve() != out.resolve()]
    try:
        ruleset = load_ruleset(files, builtin=False)
    except RuleFileError as exc:
        raise GenerationError(f"hand-written rules do not load: {exc}") from None
    rules = sorted(ruleset.rules, key=lambda r: r.id)
    places: dict[str, Where] = {}
    for path in files:
        places.update(parse_rule_file(path.read_text(encoding="utf-8"), f"rules/{path.name}")[1].places or {})
    device = ruleset.device
    return HandRules(rules, device, {r.name for r in rules}, {r.id for r in rules}, places)


def hand_rule_for(api: Api, hand: HandRules) -> str | None:
    """The id of a hand-written rule whose patterns already match this API's name."""
    names = [n for n in api.names() if "*" not in n] or [api.target]
    for rule in hand.rules:
        for matcher in rule.matchers:
            if api.kind == "call" and matcher.kind in ("call", "reference"):
                for name in names:
                    for pattern in matcher.patterns:
                        if fnmatchcase(name, pattern) or (matcher.kind == "reference" and name.startswith(pattern + ".")):
                            return rule.id
            elif (
                api.kind == matcher.kind
                and api.kind in ("method", "keyword")
                and any(fnmatchcase(name, pattern) for name in names for pattern in matcher.patterns)
                and (api.kind == "method" or not (api.in_call and matcher.in_call) or api.in_call in matcher.in_call)
            ):
                return rule.id
    return None


# -- building rules -------------------------------------------------------------------


@dataclass
class Pack:
    rules: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    unseen: dict[str, str] = field(default_factory=dict)
    lowered: dict[str, str] = field(default_factory=dict)


def display(api: Api) -> str:
    return f"Tensor.{api.target}" if api.kind == "method" else short_name(api.target)


def displays(api: Api) -> list[str]:
    """The API and its aliases as a reader spells them (glob aliases are only import paths)."""
    names = [n for n in api.names() if "*" not in n]
    return [f"Tensor.{n}" if api.kind == "method" else short_name(n) for n in names]


def kebab(text: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def default_name(api: Api) -> str:
    if api.kind == "method":
        return "tensor-" + kebab(api.target)
    shown = display(api)
    return kebab(shown.split(".", 1)[1] if shown.startswith(("F.", "nn.")) else shown)


def agree(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def compact(names: list[str]) -> str:
    """`torch.hypot` / `copysign` / `fmax`: a long list in one namespace names it once."""
    if len(names) <= 6:
        return " / ".join(f"`{name}`" for name in names)
    module = names[0].rpartition(".")[0] + "."
    shown = [names[0], *(n.removeprefix(module) for n in names[1:16])]
    more = f" and {len(names) - 16} more" if len(names) > 16 else ""
    return " / ".join(f"`{name}`" for name in shown) + more


def op_name(op: str) -> str:
    """`repeat_interleave.Tensor` stays (the overload is the point); out-variant suffixes go."""
    base, _, overload = op.partition(".")
    return base if not overload or overload.endswith("out") or overload in ("result", "grad_input", "L") else op


def ops_text(ops: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(f"`aten::{op_name(op)}`" for op in ops))


def evidence_text(entry: dict[str, Any]) -> str:
    text = re.sub(r"\byaml\b", "xla_native_functions.yaml", entry["evidence"].strip())
    return text.rstrip(".")


def message(entry: dict[str, Any], apis: list[Api], settings: Settings) -> str:
    """What happens on TPU, from the data's kind, then the data's evidence."""
    kind = entry["kind"]
    names = [name for api in apis for name in displays(api)]
    count = len(names)
    if settings.subject:
        subject, count = settings.subject, 1 if settings.singular else 2
    else:
        subject = compact(names)
    if settings.when:
        subject = f"{subject} {settings.when}"
    ops = list(settings.ops) if settings.ops is not None else [op for op, _ in aten_ops(entry)]
    shown = ops_text(ops)
    n_ops = len(set(map(op_name, ops)))
    paren = f" ({shown})" if shown else ""
    is_ = agree(count, "is", "are")
    has = agree(count, "has", "have")
    if settings.backward:
        lead = f"The backward of {subject} falls back to the CPU on TPU{paren}: the forward runs on the device, but every training step computes this gradient on the host."
    elif kind in ("fallback", "fallback(view)"):
        view = " (a view op)" if kind == "fallback(view)" else ""
        missing = f" ({shown} {agree(n_ops, 'is', 'are')} not among the ops PyTorch/XLA lowers)" if shown else ""
        lead = (
            f"{subject} {has} no TPU lowering{view}{missing}: "
            "each call falls back to the CPU, copying its inputs to the host and the result back, and splits the compiled graph."
        )
    elif kind == "fallback(bwd)":
        lead = f"The backward of {subject} has no TPU lowering{paren}: the forward runs on the device, but every training step computes this gradient on the CPU."
    elif kind == "fallback(+sync)":
        lead = f"{subject} {has} no TPU lowering{paren}: each call runs on the CPU, and the error check reads a value on the host, a device sync."
    elif kind == "fallback(creation)":
        lead = f"{subject} {is_} not lowered for TPU{paren}: the tensor is built on the CPU and copied to the device, cheap once but a host round trip inside a step."
    elif kind in ("fallback+dynamic", "host-sync+dynamic"):
        lead = (
            f"{subject} {agree(count, 'returns', 'return')} a tensor whose size depends on the data{paren}: on TPU each call "
            "falls back to the CPU, waits for the device, and every new size compiles a new graph."
        )
    elif kind == "fallback/host-sync":
        lead = (
            f"{subject} {agree(count, 'returns', 'return')} a Python bool computed from device tensors{paren}: each call falls back "
            "to the CPU and waits for the device, a host sync that cuts the traced graph."
        )
    elif kind == "host-sync":
        lead = f"{subject} {agree(count, 'reads', 'read')} a device value on the host{paren}: each call waits for the TPU to finish and cuts the traced graph."
    elif kind == "cond-fallback":
        lead = f"{subject} {agree(count, 'falls', 'fall')} back to the CPU on TPU{paren}: the inputs are copied to the host and the result back on every call."
    elif kind == "slow-path":
        lead = (
            f"{subject} {has} no fused attention kernel on TPU: {agree(count, 'it runs', 'they run')} the unfused math path, "
            "which materializes the attention matrix, slower and heavier on memory for long sequences."
        )
    elif kind == "error":
        lead = f"{subject} {agree(count, 'fails', 'fail')} on PyTorch/XLA{paren}."
    else:
        raise GenerationError(f"rank {entry['rank']}: unknown kind {kind!r}; add it to KINDS and message()")
    lead = lead[0].upper() + lead[1:] if lead[0].islower() else lead
    text = f"{lead} Evidence: {evidence_text(entry)}."
    if settings.note:
        text += f" {settings.note}"
    if apis[0].kind == "method":
        if settings.method_note:
            text += f" (Matched by method name with {settings.method_note}.)"
        else:
            text += " (Matched by method name, so the same method on a non-tensor object is flagged too.)"
    return text


def find_catalog_row(apis: list[Api], category: str, settings: Settings, catalog: dict[str, CatalogRow]) -> CatalogRow | None:
    """The catalog row naming one of the APIs (same category first), or the one the settings name."""
    if settings.catalog:
        if settings.catalog not in catalog:
            raise GenerationError(f"catalog row {settings.catalog} is not in RULE_CATALOG.md")
        return catalog[settings.catalog]
    rows = [r for r in catalog.values() if r.id[:2] in ("UO", "DS", "HS")]
    for api in apis:
        leaf = api.target.rsplit(".", 1)[-1]
        found = [r for r in rows if re.search(rf"(?<!\w){re.escape(leaf)}(?!\w)", r.match)]
        if found:
            found.sort(key=lambda r: r.category != category)
            return found[0]
    return None


def effort_of(row: CatalogRow | None, severity: str, settings: Settings) -> tuple[float, float]:
    if settings.effort:
        return settings.effort
    found = re.match(r"\s*(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?", row.effort) if row else None
    if found is None:
        return DEFAULT_EFFORT[severity]
    high = float(found.group(2) or found.group(1))
    low = float(found.group(1)) if found.group(2) else max(0.05, round(high / 2 * 20) / 20)
    high = min(high, EFFORT_CAP)
    return min(low, high), high


def sentence(text: str) -> str:
    text = text.strip()
    text = text[0].upper() + text[1:] if text[:1].islower() else text
    return text if text.endswith((".", ")")) else text + "."


def urls_in(text: str, inputs: Inputs) -> list[str]:
    """Links for the evidence's and the catalog's references, in the order they are cited."""
    found: list[tuple[int, str]] = []
    repo = "pytorch/xla"
    for ref in re.finditer(r"(PR\s+)?(?:(pytorch/xla|pytorch/pytorch|torchprime)\s*)?(PR\s*)?#(\d+)", text):
        repo = ref.group(2) or repo
        kind = "pull" if ref.group(1) or ref.group(3) else "issues"
        found.append((ref.start(), f"https://github.com/{REPOS[repo]}/{kind}/{ref.group(4)}"))
    for path in re.finditer(r"[\w./]+\.(?:cpp|py|md|yaml)\b", text):
        token = path.group(0)
        if token.startswith("torch_xla/"):
            found.append((path.start(), XLA_BLOB + token))
        elif token.startswith(("torch/", "aten/")):
            found.append((path.start(), TORCH_BLOB + token))
        elif token.rsplit("/", 1)[-1] in inputs.file_urls:
            found.append((path.start(), inputs.file_urls[token.rsplit("/", 1)[-1]]))
    for word in re.finditer(r"(?<![\w.])yaml\b", text):
        found.append((word.start(), XLA_YAML_URL))
    for key, url in inputs.source_urls.items():
        for ref in re.finditer(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text):
            found.append((ref.start(), url))
    return [url for _, url in sorted(found)]


def build_pack(inputs: Inputs, hand: HandRules) -> Pack:
    """Walk the ranked list in order: each entry's visible APIs, minus those another rule
    already matches, become one rule per group (calls, methods, or the groups API_TABLE
    names). Ids come from the data, not from a counter: `UO<100 * n + rank>` for the n-th
    group of the entry ranked `rank`, so a group that a hand rule takes over, or an entry
    that XLA lowers, never renumbers the others (ids are what suppressions and baselines
    hold on to)."""
    pack = Pack()
    seen_groups: set[str] = set()
    generated: dict[tuple[Any, ...], str] = {}
    ids_by_group: dict[str, str] = {}
    supersedes: list[tuple[dict[str, Any], tuple[str, ...]]] = []
    for entry in sorted(inputs.fallbacks, key=lambda e: e["rank"]):
        if entry["kind"] not in KINDS:
            raise GenerationError(f"rank {entry['rank']}: unknown kind {entry['kind']!r}; add it to KINDS")
        groups: dict[str, list[Api]] = {}
        unseen: dict[str, str] = {}
        for item in entry_items(entry, inputs):
            if isinstance(item, Unseen):
                unseen[item.label] = item.reason
            else:
                groups.setdefault(item.group or ("method" if item.kind == "method" else "call"), []).append(item)
        seen_groups.update(members[0].label for members in groups.values())
        stale = now_lowered(entry, inputs.lowered)
        if stale:
            pack.lowered[entry["api"]] = "lowered now: " + ", ".join(stale)
            continue
        for label, reason in unseen.items():
            pack.unseen.setdefault(label, reason)
        if entry["rank"] >= 100:
            raise GenerationError(f"rank {entry['rank']}: ids assume ranks below 100; widen the id scheme")
        for group_number, members in enumerate(groups.values(), start=1):
            key = members[0].label
            kept: list[Api] = []
            for api in members:
                covered = hand_rule_for(api, hand) or generated.get((api.kind, api.names(), api.alts))
                if covered:
                    pack.skipped.setdefault(api.label, covered)
                else:
                    kept.append(api)
            if not kept:
                continue
            rule_id = f"UO{100 * group_number + entry['rank']}"
            rule, wanted = build_rule(rule_id, entry, key, kept, inputs)
            pack.rules.append(rule)
            ids_by_group[key] = rule_id
            if wanted:
                supersedes.append((rule, wanted))
            for api in kept:
                generated[(api.kind, api.names(), api.alts)] = rule_id
    for rule, wanted in supersedes:
        ids = [ids_by_group[k] for k in wanted if k in ids_by_group]
        if ids:
            rule["supersedes"] = ids
    unused = sorted(set(GROUPS) - seen_groups)
    if unused:
        raise GenerationError(f"GROUPS settings for {', '.join(unused)} match no group of the ranked list; fix or drop them")
    check_names(pack, hand)
    return pack


def build_rule(rule_id: str, entry: dict[str, Any], key: str, apis: list[Api], inputs: Inputs) -> tuple[dict[str, Any], tuple[str, ...]]:
    settings = GROUPS.get(key, Settings())
    category, kind_severity = KINDS[entry["kind"]]
    row = find_catalog_row(apis, category, settings, inputs.catalog)
    severity = settings.severity or (row.severity if row and row.severity in SEVERITIES else kind_severity)
    confidence = settings.confidence or CONFIDENCE[entry["confidence"]]
    if apis[0].kind == "method" and confidence == "high":
        confidence = "medium"
    low, high = effort_of(row, severity, settings)
    fix: dict[str, str] = {}
    if settings.fix:
        fix["tpu"] = settings.fix
    elif row and row.replacement not in ("", "—", "-"):
        fix["tpu"] = sentence(row.replacement)
    else:
        raise GenerationError(f"rank {entry['rank']} ({key}): no catalog replacement; give a fix in GROUPS")
    if settings.fix_xla:
        fix["xla"] = settings.fix_xla
    docs = urls_in(entry["evidence"], inputs)
    if row:
        docs += urls_in(row.sources, inputs)
    for ref in settings.docs:
        docs.append(inputs.source_urls.get(ref, ref))
    docs = list(dict.fromkeys(docs))
    if not docs:
        raise GenerationError(f"rank {entry['rank']} ({key}): no evidence link; add one to GROUPS docs")
    rule: dict[str, Any] = {
        "id": rule_id,
        "name": settings.name or default_name(apis[0]),
        "category": category,
        "severity": severity,
        "confidence": confidence,
        "affects": Flow(settings.affects or AFFECTS[entry["affects"]]),
        "effort": FlowMap(low=number(low), high=number(high)),
    }
    if category == "host-sync":
        rule["where"] = HOT_CODE
    rule["message"] = Folded(message(entry, apis, settings))
    rule["fix"] = fix
    rule["docs"] = docs
    rule["match"] = matchers(apis)
    rule["examples"] = examples(apis, settings)
    return rule, settings.supersedes


def matchers(apis: list[Api]) -> dict[str, Any] | list[dict[str, Any]]:
    """One matcher per distinct constraint set, naming every API that shares it."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for api in apis:
        for alt in api.alts:
            slot = merged.setdefault((api.kind, alt.args, alt.arity, api.in_call), {api.kind: []})
            for name in api.names():
                if name not in slot[api.kind]:
                    slot[api.kind].append(name)
            if alt.args:
                slot["args"] = [FlowMap(arg.to_yaml()) for arg in alt.args]
            if alt.arity is not None:
                slot["arity"] = alt.arity
    out = []
    for slot in merged.values():
        kind = next(iter(slot))
        names = slot[kind]
        slot[kind] = names[0] if len(names) == 1 else names
        out.append(slot)
    return out[0] if len(out) == 1 else out


# -- examples, correct by construction ------------------------------------------------


def call_code(target: str, args: str, *, from_import: bool = False) -> str:
    module, leaf = target.rsplit(".", 1)
    if args == "x":
        args = FLAG_ARGS.get(leaf, args)
    var = ("layer" if target.startswith("torch.nn.") else "obj") if leaf[:1].isupper() else "y"
    if from_import:
        return f"from {module} import {leaf}\n\n{var} = {leaf}({args})\n"
    for prefix, line, short in (("torch.nn.functional.", "import torch.nn.functional as F", "F."), ("torch.nn.", "import torch.nn as nn", "nn.")):
        if target.startswith(prefix):
            return f"{line}\n\n{var} = {short}{target[len(prefix):]}({args})\n"
    return f"import torch\n\n{var} = {target}({args})\n"


def method_code(name: str, args: str) -> str:
    return f"def forward(self, t):\n    return t.{name}({args})\n"


def other_method_code(name: str, args: str) -> str:
    """The same method name with arguments the rule does not match (a pandas-like call)."""
    return f"def summarize(values):\n    return values.{name}({args})\n"


def other_library(api: Api) -> str | None:
    """The same name in NumPy, SciPy or math: not a torch call, so not flagged."""
    module, _, leaf = api.target.rpartition(".")
    if api.kind == "method":
        library = "numpy" if api.target in NUMPY_NAMES else None
    elif module == "torch.linalg":
        library = "numpy.linalg" if leaf in NUMPY_LINALG_NAMES else None
    elif module == "torch.special" or (leaf in SCIPY_SPECIAL_NAMES and leaf not in NUMPY_NAMES):
        library = "scipy.special" if leaf in SCIPY_SPECIAL_NAMES else None
    elif leaf in ("lgamma",):
        library = "math"
    elif leaf in ("cdist", "pdist"):
        library = "scipy.spatial.distance"
    elif leaf in ("poisson", "binomial"):
        library = "numpy.random"
    else:
        library = "numpy" if module == "torch" and leaf in NUMPY_NAMES else None
    if library is None:
        return None
    line, prefix = OTHER_LIBRARIES[library]
    return f"{line}\n\ny = {prefix}{leaf}(x)\n"


def local_definition(api: Api) -> str:
    leaf = api.target.rsplit(".", 1)[-1]
    if leaf[:1].isupper():
        return f"class {leaf}:\n    def __init__(self, *args):\n        self.args = args\n\n\nlayer = {leaf}(x)\n"
    return f"def {leaf}(*args, **kwargs):\n    return args\n\n\ny = {leaf}(x)\n"


def examples(apis: list[Api], settings: Settings) -> dict[str, list[Literal]]:
    first = apis[0]
    flag: list[str] = []
    passing: list[str] = []
    code = method_code if first.kind == "method" else call_code
    for api in apis[:3]:
        flag.append(code(api.target, api.alts[0].flag))
    for alt in first.alts[1:]:
        flag.append(code(first.target, alt.flag))
    if first.kind == "call":
        flag.append(call_code(first.target, first.alts[0].flag, from_import=True))
    for alt in first.alts:
        if alt.unflag is not None:
            passing.append(other_method_code(first.target, alt.unflag) if first.kind == "method" else call_code(first.target, alt.unflag))
    passing.append(local_definition(first))
    other = next((o for o in map(other_library, apis) if o), None)
    if other:
        passing.append(other)
    shown = f"{display(first)}(...)" if first.kind == "call" else f"x.{first.target}(...)"
    passing.append(f"# {shown} was replaced with lowered ops\ny = x\n")
    passing.extend(settings.extra_pass)
    return {"flag": [Literal(c) for c in dict.fromkeys(flag)], "pass": [Literal(c) for c in dict.fromkeys(passing)]}


def check_names(pack: Pack, hand: HandRules) -> None:
    seen_ids, seen_names = set(hand.ids), set(hand.names)
    for rule in pack.rules:
        if rule["id"] in seen_ids:
            raise GenerationError(f"generated id {rule['id']} is taken by a hand-written rule")
        if rule["name"] in seen_names:
            raise GenerationError(f"rule name {rule['name']!r} ({rule['id']}) is taken; give the group a name in GROUPS")
        if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", rule["name"]):
            raise GenerationError(f"rule name {rule['name']!r} is not kebab-case")
        seen_ids.add(rule["id"])
        seen_names.add(rule["name"])


# -- output ---------------------------------------------------------------------------


def render(pack: Pack, inputs: Inputs) -> str:
    xla = inputs.coverage["inputs"]["xla_native_functions.yaml"]
    native = inputs.coverage["inputs"]["native_functions.yaml"]
    files = {shown_path(inputs.data_dir / name): inputs.hashes[name] for name in DATA_FILES}
    files[shown_path(inputs.catalog_path)] = inputs.hashes["RULE_CATALOG.md"]
    document: dict[str, Any] = {
        "x-generated-from": {
            "command": COMMAND,
            "pytorch": {"version": inputs.torch_version, "git": native["torch_git_version"], "native_functions": native["source"]},
            "pytorch-xla": {"repo": xla["repo"], "commit": xla["commit"], "path": xla["path"], "lowered_ops": len(inputs.lowered)},
            "ranked_apis": len(inputs.fallbacks),
            "files": dict(sorted(files.items())),
        },
        "x-skipped": pack.skipped,
        "x-not-statically-visible": pack.unseen,
    }
    if pack.lowered:
        document["x-lowered"] = pack.lowered
    document["rules"] = pack.rules
    header = (
        "# GENERATED by scripts/generate_op_rules.py from ../shared/data/op-coverage and\n"
        "# ../shared/RULE_CATALOG.md: do not edit by hand. Regenerate with\n"
        f"#     {COMMAND}\n"
        f"# and check with `{COMMAND} --check` (tests/test_op_pack.py does).\n"
        "# One rule per ranked user-facing API group that static analysis can see, in rank order\n"
        "# (id UO<100 * n + rank> for the n-th group of the entry ranked `rank`, so ids never shift).\n"
        "# x-skipped: APIs another rule already matches (a hand-written one,\n"
        "# or an earlier generated one); x-not-statically-visible: APIs no matcher can see.\n"
        "# Severity, fix and effort follow the catalog row where one exists (effort capped at\n"
        f"# {EFFORT_CAP:g} h per occurrence), else the data's kind; confidence follows the data.\n"
    )
    body = dump(document)
    return header + body


def verify(text: str, hand: HandRules) -> int:
    """The pack loads, and every example does what it says under tpucheck's analyzer."""
    rules, _, problems = parse_rule_file(text, "rules/" + DEFAULT_OUT.name)
    rules, place_problems = resolve_places(rules, hand.places)
    problems = problems + place_problems
    if problems:
        raise GenerationError(f"generated pack does not load: {problems[0]}")
    for rule in rules:
        context = build_context(Ruleset(rules=(rule,), device=hand.device))
        for expect, cases in (("flag", rule.flag_examples), ("pass", rule.pass_examples)):
            for example in cases:
                result = analyze_text("example.py", ("python",), example.code, context)
                found = result.error is None and any(m.rule_id == rule.id for m in result.matches)
                if result.error is not None or found != (expect == "flag"):
                    error = f" ({result.error})" if result.error else ""
                    raise GenerationError(f"{rule.id} ({rule.name}): {expect} example wrong{error}:\n{example.code}")
    return len(rules)


def generate(data_dir: Path = DEFAULT_DATA, catalog: Path | None = None, out: Path = DEFAULT_OUT) -> str:
    """The pack's text for this data: deterministic, verified, not yet written."""
    inputs = load_inputs(data_dir, catalog or default_catalog(data_dir))
    hand = load_hand_rules(out)
    text = render(build_pack(inputs, hand), inputs)
    verify(text, hand)
    return text


def default_catalog(data_dir: Path) -> Path:
    return data_dir.parent.parent / "RULE_CATALOG.md"


def diff_summary(old: str | None, new: str, shown: str) -> str | None:
    """None when equal; else one line saying how the committed file differs."""
    return _diff_summary(old, new, shown, COMMAND)


def check(data_dir: Path = DEFAULT_DATA, catalog: Path | None = None, out: Path = DEFAULT_OUT) -> str | None:
    """None when the committed pack is what the script produces; else a one-line summary."""
    new = generate(data_dir, catalog, out)
    old = out.read_text(encoding="utf-8") if out.is_file() else None
    return diff_summary(old, new, shown_path(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="op-coverage data directory (default: ../shared/data/op-coverage)")
    parser.add_argument("--catalog", type=Path, default=None, help="RULE_CATALOG.md (default: two levels above --data)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the generated pack (default: rules/unsupported-op-generated.yaml)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed pack differs from what would be generated")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problem = check(args.data, args.catalog, args.out)
            if problem:
                print(problem)
                return 1
            print(f"{shown_path(args.out)} is up to date")
            return 0
        text = generate(args.data, args.catalog, args.out)
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(text, encoding="utf-8")
    document = yaml.safe_load(text)
    print(f"wrote {shown_path(args.out)}: {len(document['rules'])} rules, {len(document['x-skipped'])} APIs skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
