"""Real human data shipped with the plugin, each file with its source and licence in SOURCES.md."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import IO

import numpy as np

BUDGETS_PER_SUBJECT = 25


@dataclass(frozen=True)
class PortfolioSubject:
    """One person of Choi, Kariv, Müller & Silverman (2014): 25 budget lines and the choices made.

    ``intercepts[t]`` is (x, y) where budget line t meets the axes, in tokens; the line is
    x / intercepts[t, 0] + y / intercepts[t, 1] = 1. ``choices[t]`` is the chosen point.
    """

    subject: str
    intercepts: np.ndarray
    choices: np.ndarray
    authors_ccei: float

    @property
    def prices(self) -> np.ndarray:
        return 1.0 / self.intercepts


def _open_csv(name: str) -> IO[str]:
    """A shipped CSV file, open as text with its line endings left to the csv module."""
    # Traversable.open passes its keywords on to io.TextIOWrapper, as pathlib.Path.open does; the
    # typeshed stub names only encoding and errors.
    return (resources.files(__package__) / name).open(newline="")  # type: ignore[call-overload]


def _budgets(row: Mapping[str, str], name: str) -> list[float]:
    """One column per budget of a subject's row, ``name_01`` to ``name_25``, in budget order."""
    return [float(row[f"{name}_{t:02d}"]) for t in range(1, BUDGETS_PER_SUBJECT + 1)]


@lru_cache(maxsize=1)
def ckms2014_subjects() -> tuple[PortfolioSubject, ...]:
    """All 1,182 subjects, in file order.

    The columns of the distributed CSV are labelled the wrong way round: ``x_choice_NN`` and
    ``y_choice_NN`` hold the budget intercepts, and ``x_intercept_NN`` and ``y_intercept_NN`` hold the
    chosen point. Read as labelled, the choices miss their budget lines by a median 350%; read this
    way, by 0.06% (rounding to one decimal), and the CCEI recomputed from them matches the authors'
    column (tests/test_human_data.py). The numbers themselves are used unchanged.
    """
    subjects = []
    with _open_csv("ckms2014_portfolio_choices.csv") as handle:
        for row in csv.DictReader(handle):
            subjects.append(
                PortfolioSubject(
                    subject=row["subject"],
                    intercepts=np.column_stack([_budgets(row, "x_choice"), _budgets(row, "y_choice")]),
                    choices=np.column_stack([_budgets(row, "x_intercept"), _budgets(row, "y_intercept")]),
                    authors_ccei=float(row["authors_ccei"]),
                )
            )
    return tuple(subjects)


@lru_cache(maxsize=1)
def moblab_dictator_gifts() -> tuple[float, ...]:
    """What each MobLab dictator gave, of $100, in a first-round one-shot game (Total 100, Round 1)."""
    with _open_csv("moblab_dictator.csv") as handle:
        return tuple(
            float(row["move"])
            for row in csv.DictReader(handle)
            if row["Total"] == "100" and row["Round"] == "1" and row["move"] != ""
        )


@dataclass(frozen=True)
class UltimatumStrategy:
    """One MobLab player's strategy-method choices, of $100: the offer made as proposer, and the
    smallest offer accepted as responder."""

    offer: float
    smallest_accepted: float


@lru_cache(maxsize=1)
def moblab_ultimatum_strategies() -> tuple[UltimatumStrategy, ...]:
    """First-round ultimatum strategies of $100 games. A choice of -1 marks a player who made none
    (249 offers, 303 thresholds): such players are left out."""
    with _open_csv("moblab_ultimatum_strategy.csv") as handle:
        return tuple(
            UltimatumStrategy(float(row["propose"]), float(row["accept"]))
            for row in csv.DictReader(handle)
            if row["Total"] == "100" and row["Round"] == "1" and float(row["propose"]) >= 0 and float(row["accept"]) >= 0
        )


@dataclass(frozen=True)
class FhssCell:
    """One cell of Forsythe, Horowitz, Savin & Sefton (1994): a game played for a pie of ``pie``
    dollars, with pay or without (hypothetical choices).

    ``offers`` holds every proposer's offer (ultimatum) or every dictator's gift, in dollars, one a
    person. ``rejections`` (ultimatum only) maps an offer, as a share of the pie, to how many such
    offers were made and how many of them were rejected: responders saw the offer itself, not a
    strategy.
    """

    game: str  # "dictator" or "ultimatum"
    pie: float
    paid: bool
    offers: tuple[float, ...]
    rejections: Mapping[float, tuple[int, int]]  # share of the pie -> (rejected, made)

    @property
    def payment(self) -> str:
        return "paid" if self.paid else "no pay"

    @property
    def percent_kept(self) -> tuple[float, ...]:
        """What each proposer or dictator kept, as a percentage of the pie."""
        return tuple(100 * (self.pie - offer) / self.pie for offer in self.offers)

    def accepted(self, share: float) -> tuple[int, int]:
        """How many offers of ``share`` of the pie were accepted, of how many made ((0, 0): none made)."""
        rejected, made = self.rejections.get(round(share, 2), (0, 0))
        return made - rejected, made


FHSS_CELL = re.compile(r"(?P<game>DG|UG)-(?P<pay>P|NP)-\$(?P<pie>\d+)")


@lru_cache(maxsize=1)
def fhss1994_cells() -> tuple[FhssCell, ...]:
    """The six dictator and ultimatum cells of FHSS (1994), in file order. The offers are the
    cells' histograms read back into one value a person; the file's ``moblab_ultimatum_round1``
    block is not FHSS and is left out (SOURCES.md says why)."""
    path = resources.files(__package__) / "fhss_1994_summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for key, figures in summary.items():
        match = FHSS_CELL.fullmatch(key)
        if match is None:
            continue
        offers = [float(offer) for offer, count in figures["hist_offer_counts"].items() for _ in range(count)]
        rejections = {}
        for share, fraction in figures.get("rejections_by_offer_share", {}).items():
            rejected, made = fraction.split("/")
            rejections[round(float(share), 2)] = (int(rejected), int(made))
        cells.append(FhssCell(
            game="dictator" if match["game"] == "DG" else "ultimatum", pie=float(match["pie"]), paid=match["pay"] == "P",
            offers=tuple(sorted(offers)), rejections=MappingProxyType(rejections),
        ))  # fmt: skip
    return tuple(cells)
