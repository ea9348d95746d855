"""`citeaudit where`: every folder in force and every setting, with where each came from (as `pip
config debug` does), so that an installed package and a checkout can be told apart at a glance."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import click

from citeaudit.errors import CiteAuditError
from citeaudit.settings import environment as config
from citeaudit.surfaces.cli.app import main


def _version() -> str:
    try:
        return version("citeaudit")
    except PackageNotFoundError:  # src/ on the path without an install
        return "not installed"


def where_lines() -> list[str]:
    """The lines `citeaudit where` prints: the version, the folders, the calibration in force, the settings."""
    from citeaudit.decide.calibration import (  # here: --help imports no pandas
        calibration_folder,
        calibration_path,
        load_profile,
        profile_path,
    )
    from citeaudit.settings.options import AuditOptions

    folders = config.folders()
    width = max(len(name) for name, _, _ in folders)
    lines = [f"citeaudit {_version()}", "", "folders:"]
    lines += [f"  {name:<{width}}  {path}  [{origin}]" for name, path, origin in folders]
    lines += ["", "calibration in force:"]
    try:  # a setting that does not read is shown below with its error; the folders above still print
        options = AuditOptions.from_env()
    except CiteAuditError as exc:
        lines.append(f"  cannot tell: {exc}")
    else:
        folder = calibration_folder(options.model, str(options.strategy), options.folders)
        if options.profile:  # a profile routes instead of the model's calibration (`AuditRun.calibration`)
            try:
                load_profile(options.profile, options.user_folder, options.model, str(options.strategy))
            except CiteAuditError as exc:
                lines.append(f"  cannot tell: {exc}")
            else:
                lines.append(f"  {profile_path(options.profile, options.user_folder)}  [profile {options.profile}]")
        elif folder is None:
            lines.append(f"  none for {options.model} / {options.strategy}: the default threshold "
                         f"{config.DEFAULT_THRESHOLD}")
        else:
            which = "yours" if folder.is_relative_to(options.user_folder) else "shipped"
            lines.append(f"  {calibration_path(options.model, str(options.strategy), folder)}  [{which}]")
    settings = config.settings_in_force()
    width = max(len(name) for name, _, _ in settings)
    lines += ["", "settings:"]
    lines += [f"  {name:<{width}}  {value}  [{origin}]" for name, value, origin in settings]
    return lines


@main.command()
def where() -> None:
    """Print every folder in force (shipped files, your cache, reviews, source texts) and every
    setting, each with where it came from (an environment variable, the checkout, your folder or
    the default)."""
    click.echo("\n".join(where_lines()))
