"""Options shared by the commands: the judge's settings (one `AuditOptions`), outputs and inputs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, TypeVar

import click

from citeaudit.errors import CiteAuditError
from citeaudit.pipeline.focus import FOCUS_CHARS
from citeaudit.registry import CONTRAST_CHECKS, FORMATS, STRATEGIES, VENDOR_FORMATS
from citeaudit.settings import environment as config
from citeaudit.table import (
    SECTION_READINGS,
    CacheMode,
    EvidenceMode,
    LocalModelKey,
    ResponseFormat,
)

F = TypeVar("F", bound=Callable)


def _choice(words: Iterable[StrEnum]) -> click.Choice:
    """A click choice of a vocabulary's values (click would otherwise offer the enum's names)."""
    return click.Choice([str(word) for word in words])


def _options(*options: Callable[[F], F]) -> Callable[[F], F]:
    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command
    return apply


MODEL_KEY = _choice(LocalModelKey)


class _Registered(click.Choice):
    """The names of one registry (`citeaudit.registry`: citeaudit's own and the plugins'), read when a
    command's help is shown or its option parsed, not when the command line starts: reading a
    registry imports its built-ins (numpy, parsers) and the installed plugins, and a broken plugin
    is then an error the command line reports (exit 2), not a traceback at start-up."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._names = names
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, _: object) -> None:  # click.Choice.__init__ sets it; the registry is the one list
        pass


class _RegisteredHelp(click.Option):
    """An option whose help names a registry's entries, written when the help is shown (`_Registered`)."""

    def __init__(self, *args: Any, help_from: Callable[[], str], **kwargs: Any) -> None:
        self._help_from = help_from
        super().__init__(*args, **kwargs)

    @property  # click's attribute, computed here
    def help(self) -> str:
        return self._help_from()

    @help.setter
    def help(self, _: object) -> None:
        pass


def _strategy_help() -> str:
    ways = [f"{name} ({each.summary})" for name, each in STRATEGIES.items()]
    return (f"How the judge asks: {', '.join(ways[:-1])} or {ways[-1]}; default CITEAUDIT_STRATEGY "
            f"or {config.DEFAULT_STRATEGY}.")


def _contrast_help() -> str:
    return (f"Contrast checks between claim and evidence, comma-separated ({', '.join(CONTRAST_CHECKS)}), or none or "
            "all; a check that fires keeps a verified verdict from standing (default CITEAUDIT_CONTRAST_CHECKS, else "
            f"{','.join(config.DEFAULT_CONTRAST_CHECKS)}).")


def _response_formats() -> list[str]:
    # citeaudit's own in `ResponseFormat`'s order (the registry's is the order shapes are detected in), then plugins'
    own = [str(f) for f in ResponseFormat]
    return [*own, *(name for name in VENDOR_FORMATS if name not in own)]


RESPONSE_FORMAT = _Registered(_response_formats)
# the help of --cache-mode by the command's default mode (replay, unless the command records)
CACHE_MODE_HELP = {
    CacheMode.REPLAY: "replay (default, offline), record or refresh; or CITEAUDIT_CACHE_MODE.",
    CacheMode.RECORD: "record (default: ask what is not recorded), refresh (ask everything again) or replay "
                      "(offline: fails unless everything is recorded); or CITEAUDIT_CACHE_MODE.",
}


def _settings_params(default_mode: CacheMode, with_threshold: bool) -> tuple[Callable[[F], F], ...]:
    """The judge's settings as click options, the same on every command that judges: one `AuditOptions`."""
    threshold = click.option(
        "--threshold", type=float, default=None,
        help="Routing score at or above which a verdict stands without review, 0 to 1 (default "
             "CITEAUDIT_THRESHOLD, else the recommended one of the model's calibration, else "
             f"{config.DEFAULT_THRESHOLD}: the output says which).")
    return (
        *((threshold,) if with_threshold else ()),
        click.option("--strategy", type=_Registered(STRATEGIES.names), default=None,  # the registered strategies
                     cls=_RegisteredHelp, help_from=_strategy_help),
        click.option("--cache-mode", type=_choice(CacheMode), default=None, help=CACHE_MODE_HELP[default_mode]),
        click.option("--model", default=None,
                     help="Judge model name, or a local model key (qwen, smollm2); default CITEAUDIT_MODEL or the "
                          "recorded Qwen."),
        click.option("--evidence", type=_choice(EvidenceMode), default=None,
                     help="What the judge reads: the whole cited section (section), or, of a section longer than "
                          f"{FOCUS_CHARS} characters, the sentences its quote or claim is about with their "
                          "neighbours (focused); default CITEAUDIT_EVIDENCE or section."),
        click.option("--concurrency", type=click.IntRange(1, config.MAX_CONCURRENCY), default=None,
                     help="Judge requests in flight at once (default CITEAUDIT_CONCURRENCY, else "
                          f"{config.DEFAULT_CONCURRENCY}; 1 for a local llama.cpp server)."),
    )


# on the commands that audit (they route verdicts, so some stand): folded into `settings` like the rest
_spot_check = click.option(
    "--spot-check", "spot_check", type=float, default=None,
    help="Share of standing verdicts drawn at random for review, 0 to 1, always the same citations (default "
         f"CITEAUDIT_SPOT_CHECK, else {config.DEFAULT_SPOT_CHECK}); a spot check holds nothing unless a reviewer "
         "disagrees.")
_profile = click.option(
    "--profile", "profile", default=None, metavar="NAME",
    help="Route with profile NAME, a calibration fitted on your reviews (`citeaudit calibrate --reviews ... "
         "--profile NAME`, saved in the user cache's profiles/), instead of the model's calibration (default "
         "CITEAUDIT_PROFILE, else none).")


_contrast_checks = click.option(
    "--contrast-checks", "contrast", default=None, metavar="KINDS|none|all", cls=_RegisteredHelp,
    help_from=_contrast_help)
# the options of every command that routes verdicts (some stand): the spot-check rate, the contrast
# checks and the profile
routing_options = _options(_spot_check, _contrast_checks, _profile)


def settings_options(command: F | None = None, *, with_threshold: bool = True,
                     default_mode: CacheMode = CacheMode.REPLAY) -> Any:
    """The judge's settings as options, handed to the command as one `settings: AuditOptions`
    (arguments first, then the environment, then the defaults): the one declaration of the model
    options, on every command that judges or records; with `routing_options` on the command, its
    spot-check rate, contrast checks and profile too.

    `@settings_options` for a command that audits; `@settings_options(with_threshold=False,
    default_mode=CacheMode.RECORD)` for one that records (no routing threshold; `record` unless
    --cache-mode or CITEAUDIT_CACHE_MODE says otherwise).
    """

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: object, strategy: str | None, cache_mode: str | None, model: str | None,
                    concurrency: int | None, evidence: str | None, threshold: float | None = None,
                    **kwargs: object) -> object:
            # imported when a command runs, not when the command line starts (`citeaudit --help`)
            from citeaudit.settings.options import AuditOptions
            from citeaudit.settings.values import check_rate, check_threshold

            if threshold is not None:
                try:
                    check_threshold(threshold, "--threshold")
                except CiteAuditError as exc:
                    raise click.BadParameter(str(exc), param_hint="--threshold") from None
            spot_check = kwargs.pop("spot_check", None)
            if spot_check is not None:
                try:
                    check_rate(spot_check, "--spot-check")
                except CiteAuditError as exc:
                    raise click.BadParameter(str(exc), param_hint="--spot-check") from None
            contrast = kwargs.pop("contrast", None)
            if contrast is not None:
                try:
                    config.parse_contrast_checks(contrast)  # type: ignore[arg-type]
                except CiteAuditError as exc:
                    raise click.BadParameter(str(exc), param_hint="--contrast-checks") from None
            profile = kwargs.pop("profile", None)
            if isinstance(profile, str) and not profile.strip():  # not "unset": CITEAUDIT_PROFILE would route instead
                raise click.BadParameter("an empty name: give a profile's name, or leave out --profile",
                                         param_hint="--profile")
            settings = AuditOptions.from_env(model=model, strategy=strategy,
                                             cache_mode=cache_mode or config.cache_mode(default_mode),
                                             threshold=threshold, concurrency=concurrency,
                                             spot_check=spot_check, contrast=contrast,  # type: ignore[arg-type]
                                             profile=profile, evidence=evidence)  # type: ignore[arg-type]
            return command(*args, settings=settings, **kwargs)

        return _options(*_settings_params(default_mode, with_threshold))(wrapper)  # type: ignore[return-value]

    return decorate if command is None else decorate(command)


output_options = _options(
    click.option("--output", type=click.Path(dir_okay=False), default=None,
                 help="Write one JSON object per citation."),
    click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
                 help="Write a self-contained HTML report."),
    click.option("--reviews", type=click.Path(dir_okay=False), default=None,
                 help="Review store (JSON Lines, or a seed-000 reviews.json) to apply."),
)


def judge_options(command: F) -> F:
    """The options of every command that audits (DESIGN.md "Command line")."""
    return settings_options(output_options(routing_options(command)))


locate_only_option = click.option("--locate-only", is_flag=True, help="Run step 1 alone: no model is asked.")


# any of the three citation formats, for the commands that take whichever is given
input_options = _options(
    click.option("--source", multiple=True,
                 help="Quote citations: the source text ... (with --response: each source it cites, repeated)"),
    click.option("--citations", type=click.Path(dir_okay=False), help="... and the quote-citation file."),
    click.option("--document", help="Line citations: the document ..."),
    click.option("--answer", type=click.Path(dir_okay=False), help="... and the answer text."),
    click.option("--answer-json", type=click.Path(dir_okay=False),
                 help="Source-id citations: seed 000's answer.json ..."),
    click.option("--sources-json", type=click.Path(dir_okay=False), help="... and its sources.json."),
    click.option("--response", type=click.Path(dir_okay=False), default=None,
                 help="A saved vendor API response, with the --source files it cites."),
    click.option("--response-format", type=RESPONSE_FORMAT, default=None,
                 help="The --response's format (default: by the JSON's shape)."),
    click.option("--sections", "sections", type=click.Choice(SECTION_READINGS), default="auto",
                 show_default=True, help="How a --source is divided (as for `audit --sections`): give the audit's."),
)


sections_option = click.option(
    "--sections", "sections", type=click.Choice(SECTION_READINGS), default="auto", show_default=True,
    help="How a plain-text, Markdown, HTML or PDF --source is divided: its own numbered clauses (3, 3.2, 4(b), "
         "Article 17) when their numbering is consistent (auto), always (numbered), or as the format divides "
         "it (paragraphs: paragraphs of a text, headings, pages). The table's first line says which was used.")

format_option = click.option("--format", "doc_format", type=_Registered(FORMATS.names), default=None,
                             help="Format of the --source document (default: by its extension; .txt: RFC or plain).")
