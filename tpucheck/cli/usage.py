"""Help pages that read as usage lines conventionally do, through the command class typer
lets an app choose (`@app.command(cls=...)`): `scan [OPTIONS] [PATH]...` and
`merge [OPTIONS] REPORT...`, arguments listed by name with no Python type beside them
(typer writes `{REPORT}...` and `PATH <list[Path]>`)."""

from __future__ import annotations

from typing import Any

import typer.core


def _argument_label(param: typer.core.TyperArgument) -> str:
    name = param.metavar or (param.name or "").upper()
    return name + ("..." if param.nargs != 1 else "")


class ReadableCommand(typer.core.TyperCommand):
    """Usage pieces and the argument and option lists, from each parameter's public fields."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, typer.core.TyperArgument):
                label = _argument_label(param)
                pieces.append(label if param.required else f"[{label.removesuffix('...')}]" + ("..." if param.nargs != 1 else ""))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [(_argument_label(p), p.help or "") for p in params if isinstance(p, typer.core.TyperArgument)]
        options = [record for p in params if isinstance(p, typer.core.TyperOption) and (record := p.get_help_record(ctx)) is not None]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
