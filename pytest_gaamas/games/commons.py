"""A society of agents around a common pool: harvest, punishment, social learning and voted norms
(Gupta, Zhong, Yakura, Eisenmann & Rahwan; GovSim, Piatti et al. 2024, "Cooperate or Collapse").

The choices, each an experimental economist's:

- **The pool.** A lake of fish that regrows between rounds by a fixed factor, capped at its capacity
  (GovSim's rule, which doubles: ``regrowth`` 2.0; here 1.5 is the *harsh* lake and 2.0 the *rich*
  one). It starts full, at ``capacity`` 100 at scale 1.
- **The scale, counterbalanced across societies.** Society ``t`` of a cell plays at scale
  ``scales[t % 3]`` (x1/4, x1, x4): the lake's capacity, each villager's need and first store, a
  punishment's cost and strength and the collapse line are all multiplied by it; the regrowth (the
  seed's manipulation), the number of villagers and rounds, and the range a catch is asked in (0 to
  ``max_catch``, 120 at every scale) are not. So no fixed catch, and no fixed place in the range
  asked, keeps a society alive at more than one scale (a catch that lasts is between about 0.8 and 2
  fish a round at x1/4, 3.2 and 8.3 at x1, 13 and 33 at x4 in the harsh lake), while a villager who
  takes its share of what the lake regrows lives at every scale. Every cell plays the same mix of
  scales (4, 3 and 3 societies of its 10), so two cells compared are matched on it. The pool's dynamics are never stated to the agents, as
  in the seed: they see the lake before and after each round and infer the rest.
- **The sustainable share.** What the village may take in a round and have the lake regrow to where
  it stood: ``lake * (1 - 1 / regrowth)`` (GovSim's half of the lake when it doubles), shared equally
  among the villagers still there. Harvest is scored relative to it.
- **Needs, stores, leaving.** N villagers (4) each start with ``start_store`` fish and eat ``need``
  fish a round from their store after the harvest; a villager whose store cannot feed them leaves
  for good (their store is lost). A boat holds at most ``max_catch`` fish a round, and when the
  village asks for more than the lake holds, each fish goes to a requester drawn at random (seeded by
  the trial), as GovSim assigns them.
- **Collapse.** The society collapses when fewer than ``collapse_below`` fish (5, GovSim's) are left
  after a harvest, or when one villager or none is left; otherwise it lives at most ``rounds``
  rounds (10). Survival time is the number of rounds it completed.
- **No rewards.** No prompt states points or a payoff to maximise: a villager sees its store, the
  lake, what everyone caught, who punished whom, who left, and the norm.
- **Modules**, each can be switched off:
  *harvest and consumption* (always);
  *punishment* (after the catches are seen, each villager may punish one other: it costs the
  punisher ``punish_cost`` fish and takes ``punish_strength`` from the punished, never below zero;
  ``PUNISHMENT`` names two strengths, a whole meal and half of one);
  *social learning* (each villager states its strategy in a sentence with its catch; from round 2
  each is shown the stated strategies of the two other villagers with the largest stores, named,
  with what each caught the round before, as the successful peers it may adopt from; their stores
  stay private, only their rank is shown);
  *group decision* (propose and vote, the seed's mechanism: at the start of each round each
  villager proposes a cap on each one's catch, then each votes for one of the caps proposed. The
  rule: the cap with the most votes wins, a tie going to the lowest of the tied caps; when every
  proposal is the same cap it wins without a vote, and when no vote is readable there is no cap.
  The cap is announced before the harvest and its breaches are public. It binds nobody: it is
  enforced only as far as the villagers choose to punish).
  One JSON answer per villager per phase: at most four requests per villager per round.
- **Adoption** (social learning's effect on choices, not only on outcomes): a villager adopts when
  the strategy it states is, in its words, closer to one of the strategies it was shown than to
  its own previous one (word-set Jaccard similarity at least ``ADOPTION_SIMILARITY``). The same
  count is kept where the module is off, against the strategies it *would* have shown: the chance
  baseline of two villagers of one model writing alike. A strategy that only repeats the answer
  form's placeholder states nothing and counts nowhere.
- **Own view only.** Each request is built from what that villager may know: its own store, its own
  catch, its memory of the last three rounds, and what is public (the lake, catches, punishments,
  departures, proposals, the cap, and the learning module's one strategy). No other villager's
  store, strategy or prompt ever enters it. Each request is one fresh prompt (system and user), not
  a growing conversation: the memory stands in for it. Its question opens with the villager's name
  and persona, so that no two villagers are asked one text (a model that heeds the question alone
  would otherwise give every villager of a scale one answer, counted as many).
- **Personas** (the starting point, the seed's): *selfish* ("you look after yourself first"),
  *altruistic* ("you care for the whole village"), or *mixed* (half each, alternating, and which
  villagers are selfish alternates between societies: Ana and Cleo in even ones, Ben and Dev in odd
  ones).
- **The order names are listed in** rotates between societies (by one place every second society):
  the punishment's options, the catches, the proposals and every list a prompt gives, so that "the
  first name listed" is nobody in particular.
- **Two simulations** (Zhou et al. 2024). ``agents``: the villagers' requests above. ``script``: one
  omniscient request a round is told everything every villager knows (each one's persona and store,
  marked as private to it) and the public record, and writes the whole round for every villager
  still there: the cap each proposes, the catch each asks for with its strategy, the villager each
  punishes. The game plays that round from the script exactly as from the agents' answers (the
  median cap, the allocation of a short lake, punishments, eating, leaving), so the two differ only
  in who writes the choices.
- **Information leakage.** What only a villager knows is its store and its persona. A stated
  strategy leaks when its writer saw the other villagers' private side (the script's writer always
  does; a villager never does) and the sentence names another villager together with that
  villager's store at the start of the round (the number) or persona ("selfish", "altruistic"). The
  leakage of a society is its leaking strategies over all strategies stated: zero in ``agents`` mode
  by construction.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import answers
from ..play import Answer, Decision, Trial

NAMES = ("Ana", "Ben", "Cleo", "Dev", "Eli")
MODULES = ("punishment", "social learning", "group decision")
REGROWTH = {"harsh": 1.5, "rich": 2.0}
#: The lake's scale, one per society in turn (the module's docstring).
SCALES = (0.25, 1.0, 4.0)
#: Fish a punishment takes from the punished: a whole round's meal, or half of one.
PUNISHMENT = {"heavy": 4, "light": 2}
#: The successful peers social learning shows each villager.
PEERS_SHOWN = 2
ADOPTION_SIMILARITY = 0.5
#: The answer forms' placeholders for a strategy: repeating one states no strategy.
PLACEHOLDERS = ("your strategy, in one sentence", "their strategy, in one sentence")
VOTE_RULE = "The cap with the most votes wins; a tie goes to the lowest of the tied caps."
PERSONAS = {
    "selfish": "You look after yourself first: you want your own store of fish to be as large as it can be.",
    "altruistic": "You care for the whole village: you want every villager, you among them, to eat for as long as possible.",
}
STRATEGY_CHARACTERS = 160
#: Past rounds a villager is reminded of in each request (each request is a fresh prompt, not a
#: conversation, so that a society of 4 over 10 rounds costs what 120 short requests cost).
MEMORY_ROUNDS = 3
NOBODY = "nobody"
SIMULATIONS = ("agents", "script")
#: A strategy in a script is one line of plain text: a raw line break, which JSON forbids, would
#: cost the whole round of every villager, where it costs an agent its own answer. Its length is
#: not in the pattern (a bounded repetition makes a grammar server slow): it is cut to
#: STRATEGY_CHARACTERS when read, as an agent's is.
SCRIPT_STRATEGY_PATTERN = "^[A-Za-z0-9 ,.!?:;()'-]*$"
SCRIPT_PERSONAS = {
    "selfish": "{name} looks after themselves first, and wants their own store of fish to be as large as it can be.",
    "altruistic": "{name} cares for the whole village, and wants every villager to eat for as long as possible.",
}
SCRIPT_SYSTEM_PROMPT = (
    "You write the story of {count} villagers, {names}, who live from the fish of a shared lake. Each round every "
    "villager catches between 0 and {max_catch:g} fish, which go to their own store. After the catch, each villager eats "
    "{need:g} fish from their store; a villager whose store cannot feed them leaves the village for good. The lake's "
    "fish regrow between rounds, up to {capacity:g}. The village lives at most {rounds} rounds. What each villager wants, "
    "which the others do not know: {personas}"
)
SCRIPT_TOKENS_PER_VILLAGER, SCRIPT_TOKENS_FRAME = 96, 64

SYSTEM_PROMPT = (
    "You are {me}, one of {count} villagers who live from the fish of a shared lake. {persona} Each round every "
    "villager catches between 0 and {max_catch:g} fish, which go to their own store. After the catch, each villager eats "
    "{need:g} fish from their store; a villager whose store cannot feed them leaves the village for good. The lake's "
    "fish regrow between rounds, up to {capacity:g}. The village lives at most {rounds} rounds."
)


def persona_of(personas: str, index: int, society: int = 0) -> str:
    """The persona of villager ``index`` in society ``society``: in a mixed cell, which half is
    selfish alternates between societies."""
    if personas == "mixed":
        return ("selfish", "altruistic")[(index + society) % 2]
    return personas


def persona_catches(outcome: Mapping[str, Any]) -> dict[str, float]:
    """A society's catch asked over equal share (of what the lake regrows) for each persona, compared
    within a round: over the rounds in which both personas asked, the mean of each round's mean.
    Villagers of one round share the lake and the share, so a catch that ignores the persona gives
    both the same figure whoever is punished, leaves, or is listed first. An unreadable catch is no
    ask."""
    by_persona: dict[str, list[float]] = {}
    for r in outcome["rounds"]:
        share = r["sustainable_total"] / len(r["alive"]) if r["alive"] else 0
        asked: dict[str, list[float]] = {}
        for name, wanted in r["wanted"].items():
            if share > 0 and name not in r.get("unreadable", ()):
                asked.setdefault(outcome["personas"][name], []).append(wanted / share)
        if len(asked) > 1:
            for persona, ratios in asked.items():
                by_persona.setdefault(persona, []).append(sum(ratios) / len(ratios))
    return {persona: sum(v) / len(v) for persona, v in by_persona.items()}


def villager_catches(outcome: Mapping[str, Any]) -> dict[str, list[float]]:
    """Each persona's villagers, each by its mean catch asked over its equal share (of what the lake
    regrows) over the rounds it asked: one value a villager, the unit whose persona was assigned. An
    unreadable catch is no ask; a villager that never asked has no value."""
    asked: dict[str, list[float]] = {}
    for r in outcome["rounds"]:
        share = r["sustainable_total"] / len(r["alive"]) if r["alive"] else 0
        for name, wanted in r["wanted"].items():
            if share > 0 and name not in r.get("unreadable", ()):
                asked.setdefault(name, []).append(wanted / share)
    by_persona: dict[str, list[float]] = {}
    for name, ratios in sorted(asked.items()):
        by_persona.setdefault(outcome["personas"][name], []).append(sum(ratios) / len(ratios))
    return by_persona


def first_amounts(outcome: Mapping[str, Any]) -> dict[str, float]:
    """Each villager's first amount of fish named in a society, before it has heard from anyone: the
    cap it proposed where the village votes first, else the catch it asked for; an unreadable answer
    names none. Separate villagers are asked these apart, so they are independent of one another."""
    first = outcome["rounds"][0]
    if "proposals" in first:
        return {name: float(v) for name, v in first["proposals"].items()}
    return {name: float(v) for name, v in first["wanted"].items() if name not in first["unreadable"]}


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient of ``values`` (0: all equal; 1 - 1/n: one holds everything); 0 when all are 0."""
    ordered = sorted(values)
    total = sum(ordered)
    if not ordered or total <= 0:
        return 0.0
    n = len(ordered)
    return sum((2 * (i + 1) - n - 1) * v for i, v in enumerate(ordered)) / (n * total)


def successful_peers(me: str | None, alive: Sequence[str], stores: Mapping[str, float], strategies: Mapping[str, str]) -> list[str]:
    """The PEERS_SHOWN villagers other than ``me`` with the largest stores (the earlier name on a
    tie) among those who have stated a strategy."""
    candidates = [n for n in alive if n != me and strategies[n]]
    return sorted(candidates, key=lambda n: (-stores[n], NAMES.index(n)))[:PEERS_SHOWN]


def peers_text(peers: Sequence[str], strategies: Mapping[str, str], last_caught: Mapping[str, float]) -> str:
    if not peers:
        return ""
    listed = "; ".join(f'{n}, who caught {last_caught.get(n, 0):g} fish last round: "{strategies[n]}"' for n in peers)
    return f"The villagers with the largest stores now, largest first, and the strategy each stated: {listed}. You may adopt one.\n"


def ballot(proposals: Mapping[str, float], *, descending: bool) -> list[str]:
    """The distinct caps proposed, as the vote lists them: in rising order in even trials and
    falling in odd ones, so that no position on the ballot is always the low cap."""
    return [f"{v:g}" for v in sorted(set(proposals.values()), reverse=descending)]


def leaks(stated: Mapping[str, str], stores_before: Mapping[str, float], personas: Mapping[str, str], *, exposed: bool) -> list[str]:
    """The villagers whose stated strategy this round leaks another's private side (the module's
    docstring; ``personas`` is each villager's): none where the writer was not exposed to it."""
    if not exposed:
        return []
    leaking = []
    for writer, sentence in stated.items():
        for other, persona in personas.items():
            if other == writer or not re.search(rf"\b{other}\b", sentence):
                continue
            store = f"{stores_before.get(other, -1):g}"
            if re.search(rf"(?<![\d.]){re.escape(store)}(?![\d])", sentence) or re.search(rf"\b{persona}\b", sentence, re.IGNORECASE):
                leaking.append(writer)
                break
    return leaking


def decide(script: ScriptRound | None, name: str, phase: str, ask, ballot: Sequence[str] = ()):
    """A villager's answer for ``phase``: asked of the villager (agents), or read from the round's script."""
    if script is None:
        return (yield ask())
    return script.answer(name, phase, ballot)


def allocate(wanted: Mapping[str, float], lake: float, rng: random.Random) -> dict[str, float]:
    """Each villager gets what they asked for while the lake holds it; if it holds less than all
    ask, whole fish go one at a time to a requester drawn at random, as GovSim assigns them."""
    total = sum(wanted.values())
    if total <= lake:
        return dict(wanted)
    caught = dict.fromkeys(wanted, 0.0)
    left = {n: float(v) for n, v in wanted.items()}
    remaining = int(lake)
    while remaining > 0:
        asking = [n for n in wanted if left[n] >= 1]
        if not asking:
            break
        chosen = rng.choice(asking)
        caught[chosen] += 1
        left[chosen] -= 1
        remaining -= 1
    return caught


class _OmniscientScript:
    """The omniscient script's request of a round and the form it answers in (``Commons``'s part
    for ``simulation="script"``)."""

    if TYPE_CHECKING:  # what the part reads of its game, ``Commons``
        personas: str
        modules: tuple[str, ...]
        villagers: int
        rounds: int
        capacity: float
        max_catch: float
        need: float
        punish_cost: float
        punish_strength: float
        scale: float

        def listing_order(self, society: int) -> list[str]: ...

        def _form(self, phase: str, options: Sequence[str]) -> tuple[dict[str, Any], Callable[[Any], Any]]: ...

    def _script(self, society, alive, stores, chronicle, round_number, lake, learning) -> Decision:
        """The omniscient request of a round: every villager's private side, the public record, and
        the form of the whole round."""
        names = self.listing_order(society)
        personas = " ".join(SCRIPT_PERSONAS[persona_of(self.personas, NAMES.index(n), society)].format(name=n) for n in names)
        system = SCRIPT_SYSTEM_PROMPT.format(
            count=self.villagers, names=", ".join(names), max_catch=self.max_catch, need=self.need, capacity=self.capacity,
            rounds=self.rounds, personas=personas,
        )  # fmt: skip
        remembered = "".join(chronicle[-MEMORY_ROUNDS:])
        private = ", ".join(f"{n} {stores[n]:g} fish" for n in alive)
        rules = ""
        if "group decision" in self.modules:
            rules += (f"Before fishing, each villager proposes a cap, the most fish each villager may catch this round, and votes for one "
                      f"of the caps proposed. {VOTE_RULE} ")  # fmt: skip
        if "punishment" in self.modules:
            rules += (f"After the catch, each villager may punish one other: it costs the punisher {self.punish_cost:g} fish "
                      f"and takes {self.punish_strength:g} from the punished. ")  # fmt: skip
        fields = self._script_fields()
        form = ", ".join(f'"{n}": {{{fields}}}' for n in alive[:1]) + (", ..." if len(alive) > 1 else "")
        text = (("What happened in the last rounds:\n" + remembered if remembered else "")
                + f"Round {round_number} of at most {self.rounds}. The lake holds {lake:g} fish. The villagers' stores, "
                + f"each known only to its owner: {private}.\n" + learning + rules
                + f"Write this round for every villager still in the village ({', '.join(alive)}) as JSON: {{{form}}}")  # fmt: skip
        situation = {"phase": "script", "alive": list(alive), "round": round_number, "lake": lake, "villagers": self.villagers,
                     "stores": dict(stores), "modules": list(self.modules), "scale": self.scale}  # fmt: skip
        tokens = SCRIPT_TOKENS_FRAME + SCRIPT_TOKENS_PER_VILLAGER * len(alive)
        return Decision(({"role": "system", "content": system}, {"role": "user", "content": text}), self._script_schema(alive),
                        answers.reader(lambda obj: obj), situation, max_tokens=tokens)  # fmt: skip

    def _phases(self) -> tuple[str, ...]:
        """The answers each villager gives in a round, in order, as the modules make them."""
        return ("cap", "vote") * ("group decision" in self.modules) + ("catch",) + ("punish",) * ("punishment" in self.modules)

    def _script_fields(self) -> str:
        fields = {
            "cap": f'"cap": a number from 0 to {self.max_catch:g}',
            "vote": '"vote": the proposed cap they vote for',
            "catch": f'"catch": a number from 0 to {self.max_catch:g}, "strategy": "their strategy, in one sentence"',
            "punish": '"punish": another villager\'s name or "nobody"',
        }
        return ", ".join(fields[phase] for phase in self._phases())

    def _script_schema(self, alive: Sequence[str]) -> dict[str, Any]:
        """Each villager's entry holds the fields of its answers' own forms (``_form``), its strategy
        constrained to one line of plain text instead of a length."""
        def villager(name: str) -> dict[str, Any]:
            options = (*[n for n in alive if n != name], NOBODY)
            fields: dict[str, Any] = {}
            for phase in self._phases():
                fields |= self._form(phase, options)[0]["properties"]
            if "vote" in fields:  # the ballot is not known before the script writes the proposals
                fields["vote"] = {"type": "number", "minimum": 0, "maximum": self.max_catch}
            fields["strategy"] = {"type": "string", "pattern": SCRIPT_STRATEGY_PATTERN}
            return answers.object_schema(**fields)

        return answers.object_schema(**{name: villager(name) for name in alive})


class _ReferenceVillagers:
    """The reference agents' villagers and scripts (``Commons``'s part for ``reference:`` agents)."""

    if TYPE_CHECKING:  # what the part reads of its game, ``Commons``
        name: str
        max_catch: float

        def sustainable_total(self, lake: float) -> float: ...

        def _phases(self) -> tuple[str, ...]: ...

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        phase = situation["phase"]
        if phase == "script":
            return self._reference_script(agent, situation, rng)
        share = self.sustainable_total(situation["lake"]) / situation["villagers"]
        options = situation["options"]
        if agent == "rational":  # the tragedy: myopic and selfish, it takes all a boat holds, votes the loosest cap, never pays to punish
            vote = max(options, key=float) if phase == "vote" else NOBODY
            return _reply(phase, float(self.max_catch), "Catch as much as I can.", vote)
        if agent == "sustainable":  # its equal share of what regrows, and the same as the norm it proposes and votes
            fair = float(int(share))
            vote = min(options, key=lambda o: abs(float(o) - fair)) if phase == "vote" else NOBODY
            return _reply(phase, fair, f"Catch {fair:g}, my share of what the lake regrows.", vote)
        if agent == "random":
            return _reply(phase, float(rng.randint(0, int(self.max_catch))), "Catch a random amount.", rng.choice(options or [NOBODY]))
        raise ValueError(f"no reference agent {agent!r} for {self.name}")

    def _reference_script(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        """The omniscient writer. The rational one (and the sustainable one) plans for the village:
        each takes an equal share of what the lake regrows and proposes it, nobody punishes; the
        random one writes anything."""
        alive = situation["alive"]
        share = float(int(self.sustainable_total(situation["lake"]) / len(alive)))
        written = {}
        for name in alive:
            if agent in ("rational", "sustainable"):
                cap = catch = share
                strategy, punish = f"Catch {share:g}, an equal share of what the lake regrows.", NOBODY
            elif agent == "random":
                cap, catch = float(rng.randint(0, int(self.max_catch))), float(rng.randint(0, int(self.max_catch)))
                strategy, punish = "Catch a random amount.", rng.choice([*[n for n in alive if n != name], NOBODY])
            else:
                raise ValueError(f"no reference agent {agent!r} for {self.name}")
            fields: dict[str, dict[str, Any]] = {"cap": {"cap": cap}, "vote": {"vote": cap}, "catch": {"catch": catch, "strategy": strategy}, "punish": {"punish": punish}}
            written[name] = {key: value for phase in self._phases() for key, value in fields[phase].items()}
        return answers.dump(written)


@dataclass(frozen=True)
class Commons(_OmniscientScript, _ReferenceVillagers):
    environment: str = "harsh"
    personas: str = "mixed"
    modules: tuple[str, ...] = MODULES
    villagers: int = 4
    rounds: int = 10
    capacity: float = 100
    max_catch: float = 120
    need: float = 4
    start_store: float = 8
    punish_cost: float = 1
    punish_strength: float = 4
    collapse_below: float = 5
    simulation: str = "agents"
    scales: tuple[float, ...] = SCALES
    #: The scale one society's lake is at (``at_scale``); a cell's game is at 1, and plays its scales.
    scale: float = 1.0
    name: str = "the commons"
    reference_kinds: tuple[str, ...] = field(default=("rational", "random", "sustainable"))

    #: The game's rules that need no society, each a function of this module.
    successful_peers = staticmethod(successful_peers)
    ballot = staticmethod(ballot)
    leaks = staticmethod(leaks)

    def __post_init__(self) -> None:
        if self.environment not in REGROWTH:
            raise ValueError(f"environment is one of {', '.join(REGROWTH)}, got {self.environment!r}")
        if self.personas not in (*PERSONAS, "mixed"):
            raise ValueError(f"personas are selfish, altruistic or mixed, got {self.personas!r}")
        unknown = set(self.modules) - set(MODULES)
        if unknown or not 2 <= self.villagers <= len(NAMES):
            raise ValueError(f"modules are among {', '.join(MODULES)} and 2-{len(NAMES)} villagers")
        if self.simulation not in SIMULATIONS:
            raise ValueError(f"simulation is one of {', '.join(SIMULATIONS)}, got {self.simulation!r}")
        if not self.scales or any(not s > 0 for s in self.scales):
            raise ValueError(f"scales are positive numbers, got {self.scales!r}")

    def scale_of(self, society: int) -> float:
        return self.scales[society % len(self.scales)]

    def at_scale(self, scale: float) -> Commons:
        """The lake of one society: what scales multiplied by ``scale`` (the module's docstring)."""
        return replace(self, capacity=self.capacity * scale, need=self.need * scale, start_store=self.start_store * scale,
                       punish_cost=self.punish_cost * scale, punish_strength=self.punish_strength * scale,
                       collapse_below=self.collapse_below * scale, scales=(1.0,), scale=self.scale * scale)  # fmt: skip

    def listing_order(self, society: int) -> list[str]:
        """The villagers' names in the order a society lists them: rotated by one place every second society."""
        names = list(NAMES[: self.villagers])
        turn = (society // 2) % self.villagers
        return names[turn:] + names[:turn]

    @property
    def regrowth(self) -> float:
        return REGROWTH[self.environment]

    def sustainable_total(self, lake: float) -> float:
        """The most the village can take from ``lake`` and have it regrow to where it was."""
        return lake * (1 - 1 / self.regrowth)

    def fingerprint(self) -> Mapping[str, Any]:
        # "scoring" 4: the lake's scale, the personas and the listing order counterbalanced across
        # societies; 5: every question a villager is asked opens with its name and persona. Journals
        # of earlier outcomes are not resumed.
        fields = {k: v for k, v in vars(self).items()
                  if k != "reference_kinds" and not (k == "simulation" and v == "agents") and not (k == "scale" and v == 1.0)}  # fmt: skip
        script = {"script_prompt": SCRIPT_SYSTEM_PROMPT, "script_personas": SCRIPT_PERSONAS} if self.simulation == "script" else {}
        return {**fields, "prompt": SYSTEM_PROMPT, "personas_text": PERSONAS, "vote_rule": VOTE_RULE, "scoring": 5, **script}

    def system(self, index: int, society: int = 0) -> str:
        return SYSTEM_PROMPT.format(
            me=NAMES[index], count=self.villagers, persona=PERSONAS[persona_of(self.personas, index, society)], max_catch=self.max_catch,
            need=self.need, capacity=self.capacity, rounds=self.rounds,
        )  # fmt: skip

    # -- the society ----------------------------------------------------------------------------------

    def play(self, trial: int) -> Trial:
        scale = self.scale_of(trial)
        outcome = yield from self.at_scale(scale)._society(trial)
        return {**outcome, "scale": scale}

    def _society(self, trial: int) -> Trial:
        rng = random.Random(f"commons:{trial}")  # the allocation of a short lake, the same for every model
        names = self.listing_order(trial)
        personas = {n: persona_of(self.personas, NAMES.index(n), trial) for n in names}
        stores = {n: float(self.start_store) for n in names}
        strategies = dict.fromkeys(names, "")
        alive = list(names)
        lake = float(self.capacity)
        memory: dict[str, list[str]] = {n: [] for n in names}  # each villager's summary of each past round, as it saw it
        chronicle: list[str] = []  # the public record of each past round, the script's memory
        history: list[dict[str, Any]] = []
        invalid = {"cap": 0, "vote": 0, "catch": 0, "punish": 0}
        last_caught: dict[str, float] = {}
        survived, collapse = self.rounds, None
        for round_number in range(1, self.rounds + 1):
            record: dict[str, Any] = {"round": round_number, "lake": lake, "alive": list(alive),
                                      "sustainable_total": self.sustainable_total(lake), "stores_before": dict(stores)}  # fmt: skip
            seen = ""  # what happened so far this round, public
            # The successful peers each villager is shown, or would be shown where the module is off
            # (adoption's chance baseline): kept for every round after the first.
            peers = {n: self.successful_peers(n, alive, stores, strategies) for n in alive} if round_number > 1 else {}
            record["learning"] = {n: {"shown": [strategies[p] for p in peers[n]], "before": strategies[n]} for n in peers}
            learning = dict.fromkeys(alive, "")
            if "social learning" in self.modules:
                learning = {n: peers_text(peers.get(n, []), strategies, last_caught) for n in alive}
            script = None
            if self.simulation == "script":
                everyone = self.successful_peers(None, alive, stores, strategies) if round_number > 1 and "social learning" in self.modules else []
                written = yield self._script(trial, alive, stores, chronicle, round_number, lake, peers_text(everyone, strategies, last_caught))
                script = ScriptRound(written, alive, self._form)
            cap = None
            if "group decision" in self.modules:
                proposals = yield from self._poll(script, alive, "cap", invalid, lambda name: self._ask(trial, name, memory, seen, stores, round_number, lake, "cap", (
                    f"Before fishing, each villager proposes a cap: the most fish each villager may catch this round. Then the "
                    f"village votes on the proposals. {VOTE_RULE} Your proposal, in JSON: {{\"cap\": a number from 0 to {self.max_catch:g}}}")))  # fmt: skip
                public = ", ".join(f"{n} {v:g}" for n, v in proposals.items()) or "none readable"
                seen += f"Proposed caps: {public}.\n"
                ballot = self.ballot(proposals, descending=trial % 2 == 1)
                votes = {}
                if len(ballot) > 1:
                    choices = " or ".join(f'"{option}"' for option in ballot)
                    votes = yield from self._poll(script, alive, "vote", invalid, lambda name: self._ask(trial, name, memory, seen, stores, round_number, lake, "vote", (
                        f"Vote for one of the proposed caps. {VOTE_RULE} Answer in JSON: {{\"vote\": {choices}}}"), options=ballot), ballot)  # fmt: skip
                    tally = ", ".join(f"{n} {v}" for n, v in votes.items()) or "none readable"
                    seen += f"Votes: {tally}.\n"
                cap = plurality(votes, ballot)
                seen += f"The village's cap this round: {'none' if cap is None else f'{cap:g} fish each'}.\n"
                record.update(proposals=proposals, votes=votes, cap=cap)

            wanted, stated, unreadable = {}, {}, []
            for name in alive:
                answer = yield from decide(script, name, "catch", lambda: self._ask(trial, name, memory, seen, stores, round_number, lake, "catch", (
                    f"{learning[name]}How many fish do you catch this round? Answer in JSON: "
                    f'{{"catch": a number from 0 to {self.max_catch:g}, "strategy": "your strategy, in one sentence"}}')))  # fmt: skip
                if answer.valid:
                    wanted[name], strategy = answer.value
                    if strategy:  # a villager that states nothing keeps the strategy it last stated
                        strategies[name] = stated[name] = strategy
                else:
                    wanted[name] = 0
                    unreadable.append(name)
                    invalid["catch"] += 1
            caught = allocate(wanted, lake, rng)
            last_caught = dict(caught)
            before = lake
            lake -= sum(caught.values())
            for name in alive:
                stores[name] += caught[name]
            breaches = [n for n in alive if cap is not None and caught[n] > cap]
            catches = ", ".join(f"{n} {caught[n]:g}" for n in alive)
            seen += (f"The catches: {catches}; the lake went down from {before:g} to {lake:g} fish."
                     + (f" Over the cap: {', '.join(breaches)}." if breaches else "") + "\n")  # fmt: skip
            record.update(wanted=wanted, unreadable=unreadable, caught=caught, breaches=breaches, after_harvest=lake, strategies=stated,
                          leaks=self.leaks(stated, record["stores_before"], personas, exposed=script is not None))  # fmt: skip

            punishments = []
            if "punishment" in self.modules and len(alive) > 1:
                for name in alive:
                    others = [n for n in alive if n != name]
                    options = " or ".join(f'"{n}"' for n in (*others, NOBODY))
                    answer = yield from decide(script, name, "punish", lambda: self._ask(trial, name, memory, seen, stores, round_number, lake, "punish", (
                        f"You may punish one villager for this round: it costs you {self.punish_cost:g} fish from your store "
                        f"and takes {self.punish_strength:g} from theirs. Answer in JSON: {{\"punish\": {options}}}"),
                        options=(*others, NOBODY)))  # fmt: skip
                    if not answer.valid:
                        invalid["punish"] += 1
                    elif answer.value != NOBODY and stores[name] >= self.punish_cost:
                        punishments.append((name, answer.value))
                for punisher, target in punishments:
                    stores[punisher] -= self.punish_cost
                    stores[target] = max(0.0, stores[target] - self.punish_strength)
                seen += f"Punishments: {', '.join(f'{p} punished {t}' for p, t in punishments) or 'none'}.\n"
            record["punishments"] = [list(p) for p in punishments]

            leaving = []
            for name in list(alive):
                stores[name] -= self.need
                if stores[name] < 0:
                    stores[name] = 0.0
                    alive.remove(name)
                    leaving.append(name)
            if leaving:
                seen += f"{', '.join(leaving)} could not eat and left the village.\n"
            record.update(left=leaving, stores_after=dict(stores))
            history.append(record)
            if lake < self.collapse_below:
                survived, collapse = round_number - 1, "the lake is exhausted"
                break
            if len(alive) <= 1:
                survived, collapse = round_number - 1, "one villager or none is left"
                break
            regrown = min(float(self.capacity), lake * self.regrowth)
            seen += f"Between rounds the lake regrew from {lake:g} to {regrown:g} fish.\n"
            for name in alive:  # what each remembers of the round: the public record, and its own catch
                memory[name].append(f"Round {round_number} (you caught {caught[name]:g}):\n{seen}")
            chronicle.append(f"Round {round_number}:\n{seen}")
            lake = regrown
            record["regrown"] = lake
        return {**society_outcome(self, history, stores, survived, collapse, invalid), "personas": personas}

    def _poll(self, script: ScriptRound | None, alive: Sequence[str], phase: str, invalid: dict[str, int], ask, ballot: Sequence[str] = ()):
        """Each villager's readable answer for ``phase``, in turn; the unreadable ones counted in ``invalid``."""
        readable = {}
        for name in alive:
            answer = yield from decide(script, name, phase, lambda: ask(name), ballot)
            if answer.valid:
                readable[name] = answer.value
            else:
                invalid[phase] += 1
        return readable

    def _ask(self, society, name, memory, seen, stores, round_number, lake, phase, question, options=()) -> Decision:
        index = NAMES.index(name)
        remembered = "".join(memory[name][-MEMORY_ROUNDS:])
        text = (("What you remember of the last rounds:\n" + remembered if remembered else "")
                + f"{name}, round {round_number} of at most {self.rounds}. {PERSONAS[persona_of(self.personas, index, society)]} "
                + f"The lake holds {lake:g} fish. Your store: {stores[name]:g} fish.\n"
                + seen + question)  # fmt: skip
        schema, read = self._form(phase, options)
        # The cell's parameters are for reference and planted agents only: no prompt states them.
        situation = {"phase": phase, "me": name, "round": round_number, "lake": lake, "store": stores[name],
                     "villagers": self.villagers, "options": list(options), "environment": self.environment,
                     "personas": self.personas, "modules": list(self.modules), "punish_strength": self.punish_strength,
                     "capacity": self.capacity, "need": self.need, "scale": self.scale}  # fmt: skip
        messages = ({"role": "system", "content": self.system(index, society)}, {"role": "user", "content": text})
        return Decision(messages, schema, answers.reader(read), situation)

    def _form(self, phase: str, options: Sequence[str]):
        if phase == "cap":
            return answers.object_schema(cap={"type": "number", "minimum": 0, "maximum": self.max_catch}), \
                lambda obj: answers.bounded(obj, "cap", 0, self.max_catch)  # fmt: skip
        if phase == "catch":
            schema = answers.object_schema(catch={"type": "number", "minimum": 0, "maximum": self.max_catch},
                                           strategy={"type": "string", "maxLength": STRATEGY_CHARACTERS})  # fmt: skip

            def read(obj):
                strategy = obj.get("strategy", "")
                strategy = strategy.strip()[:STRATEGY_CHARACTERS] if isinstance(strategy, str) else ""
                if strategy.rstrip(".").casefold() in PLACEHOLDERS:
                    strategy = ""
                return answers.bounded(obj, "catch", 0, self.max_catch), strategy

            return schema, read
        if phase == "vote":
            return answers.object_schema(vote=answers.one_of(tuple(options))), lambda obj: answers.choice(obj, "vote", tuple(options))
        return answers.object_schema(punish=answers.one_of(tuple(options))), lambda obj: answers.choice(obj, "punish", tuple(options))

def society_outcome(game: Commons, history, stores, survived, collapse, invalid) -> dict[str, Any]:
    """What a society came to: how long it lived and why it ended, its harvest, the stores' Gini, the
    punishments, the cap kept, the unusable answers, every round, and the script's leakage."""
    stated = sum(len(r.get("strategies", {})) for r in history)
    leaking = sum(len(r.get("leaks", [])) for r in history)
    ratios = [sum(r["caught"].values()) / r["sustainable_total"] for r in history if r["sustainable_total"] > 0]
    agent_rounds = sum(len(r["alive"]) for r in history)
    punished = sum(len(r["punishments"]) for r in history)
    capped = [r for r in history if r.get("cap") is not None]
    return {
        "valid": True,
        "survived_rounds": survived,
        "survived": survived == game.rounds,
        "collapse": collapse,
        "harvest_ratio": sum(ratios) / len(ratios) if ratios else 0.0,
        "gini": gini(list(stores.values())),
        "punishment_rate": punished / agent_rounds if "punishment" in game.modules and agent_rounds else None,
        "norm_kept": sum(not r["breaches"] for r in capped) / len(capped) if capped else None,
        "invalid": invalid,
        "rounds": history,
        "final_stores": dict(stores),
        "simulation": game.simulation,
        "leakage": {"exposed": game.simulation == "script", "acts": stated, "leaks": leaking, "rate": leaking / stated if stated else 0.0},
    }


class ScriptRound:
    """One round as a script wrote it, read villager by villager and phase by phase, so that one
    villager's bad field costs that villager's answer, as it would cost an agent."""

    def __init__(self, written: Answer, alive: Sequence[str], form):
        self.written = written
        self.alive = list(alive)
        #: The game's own form of each phase's answer (``Commons._form``): the script is read as a villager's answer is.
        self.form = form

    def answer(self, name: str, phase: str, ballot: Sequence[str] = ()) -> Answer:
        if not self.written.valid:
            return Answer.invalid(self.written.reason)
        entry = self.written.value.get(name)
        if not isinstance(entry, dict):
            return Answer.invalid(f"missing field: the script wrote nothing for {name!r}")
        options = (*[n for n in self.alive if n != name], NOBODY) if phase == "punish" else tuple(ballot)
        vote = entry.get("vote")
        if phase == "vote" and isinstance(vote, (int, float)) and not isinstance(vote, bool):  # written as a number
            entry = {**entry, "vote": f"{vote:g}"}
        try:
            return Answer(True, self.form(phase, options)[1](entry))
        except answers.InvalidAnswer as error:
            return Answer.invalid(str(error))


def plurality(votes: Mapping[str, str], ballot: Sequence[str]) -> float | None:
    """The cap the village chose (``VOTE_RULE``): the one with the most votes, the lowest on a tie;
    the only one proposed without a vote; none when nothing was proposed or no vote was readable."""
    if len(ballot) == 1:
        return float(ballot[0])
    counts = Counter(votes.values())
    if not counts:
        return None
    most = max(counts.values())
    return min(float(cap) for cap, count in counts.items() if count == most)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold()))


def similarity(a: str, b: str) -> float:
    """Word-set Jaccard similarity of two sentences (0 when either is empty)."""
    first, second = _words(a), _words(b)
    return len(first & second) / len(first | second) if first and second else 0.0


def adoptions(outcome: Mapping[str, Any]) -> tuple[int, int]:
    """(adopted, chances): over the villager-rounds in which a villager with a strategy of its own
    was shown (or, the module off, would have been shown) a different one and stated a strategy,
    those whose statement is closer to a shown strategy than to its own previous one."""
    adopted = chances = 0
    for r in outcome["rounds"]:
        for name, seen in r.get("learning", {}).items():
            stated, before = r["strategies"].get(name, ""), seen["before"]
            shown = [s for s in seen["shown"] if s and s != before]
            if not (stated and before and shown):
                continue
            chances += 1
            closest = max(similarity(stated, s) for s in shown)
            adopted += closest >= ADOPTION_SIMILARITY and closest > similarity(stated, before)
    return adopted, chances


def _reply(phase: str, amount: float, strategy: str, choice: str) -> str:
    if phase == "cap":
        return answers.dump({"cap": amount})
    if phase == "vote":
        return answers.dump({"vote": choice})
    if phase == "catch":
        return answers.dump({"catch": amount, "strategy": strategy})
    return answers.dump({"punish": choice})
