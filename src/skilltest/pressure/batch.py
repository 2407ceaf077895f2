"""``skilltest pressure --batch``: each round of runs answered through the Message Batches API.

A round is every open scenario's next repetitions: the first K per arm of every scenario, then,
with ``-k auto``, one more per arm of each scenario not decided yet
(:func:`skilltest.pressure.runs.run_suites_in_rounds`). A round is submitted as one batch per
backend that answers it (per model script on the emulator), cut into several when it is over the
API's limits (:func:`skilltest.runners.batch.split`), polled until every batch has ended, and its
results mapped back to their runs by ``custom_id``; the runs are then judged exactly as direct
runs are.

**Resuming.** Before the first poll, every batch id and the run each ``custom_id`` stands for
are written to the resume file (atomically, after each batch is created), with a checksum of each
request. ``--resume-batch FILE`` reads it back: a run the file holds (the same run and
repetition, whatever round submitted it) is polled and read, not submitted again; only runs it
does not hold yet are (a later round, a batch not created before the stop, the extra repetitions
of a larger ``-k``). Before anything is sent, a file that holds runs the command does not ask for
(a smaller ``-k``, ``--skill-only``, ``--only``) or a run whose request changed since (another
prompt, skill, model) is refused. The emulator keeps its batches in a folder beside the file, so
an offline run resumes too.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.errors import InputError
from skilltest.flow.options import BatchProgress, Observer
from skilltest.limits import MAX_RESULTS_BYTES
from skilltest.pressure.suite import PressureSuite
from skilltest.runners.base import TurnRequest
from skilltest.transcript import Transcript, Usage

if TYPE_CHECKING:
    from skilltest.pressure.replay import PressureRecording
    from skilltest.runners.backends import TurnRunnerPool
    from skilltest.runners.batch import BatchAnswer, BatchItem, BatchRunner, BatchStatus

SCHEMA_VERSION = 1
"""Version of the resume file."""
KIND = "skilltest pressure batch"
"""What the resume file says it is."""
POLL_S = {"anthropic": 15.0, "emulator": 0.1}
"""Seconds between polls of a round's batches, per backend (``--poll-interval`` sets another)."""
FAILED_POLLS = 3
"""Polls of one batch that may fail in a row (each after the SDK's own retries) before its runs
are given up as errors; the batch is still in the resume file."""


def default_resume_file(results: Path | None, output_dir: Path | None) -> Path:
    """Where ``--batch`` keeps its resume file unless told: beside the results file
    (``out/pressure.json`` -> ``out/pressure.batch.json``), else in the output folder, else in
    the current folder (``pressure.batch.json``)."""
    if results is not None:
        return results.with_name(f"{results.stem}.batch.json")
    if output_dir is not None:
        return output_dir / "pressure.batch.json"
    return Path("pressure.batch.json")


def emulator_folder(resume_file: Path) -> Path:
    """Where the emulator keeps the batches of a run whose resume file is ``resume_file``."""
    return resume_file.with_name(f"{resume_file.stem}.emulator")


def request_checksum(params: Mapping[str, Any]) -> str:
    """``sha256:`` of a batch request's body without its ``metadata`` (the emulator's run name):
    what the model is asked."""
    asked = {key: value for key, value in params.items() if key != "metadata"}
    text = json.dumps(asked, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class SubmittedBatch:
    """A batch the resume file holds."""

    id: str
    """``msgbatch_...``."""
    round: int
    """The round it answers (from 1)."""
    runner: str
    """What answers it: ``anthropic``, or on the emulator its model script."""
    requests: dict[str, dict[str, Any]]
    """By ``custom_id``: ``{"run": "<skill>/<scenario>:<arm>", "rep": N, "sha256": ...}``
    (``rep`` from 0; the skill and scenario name the run wherever the suite is named from)."""
    submitted_at: str = ""
    """When it was created (UTC)."""
    submitted_here: bool = False
    """Created by this command (not read back from the file); not written."""
    status: str = "in_progress"
    """As last polled; not written."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "round": self.round,
            "runner": self.runner,
            "submitted_at": self.submitted_at,
            "requests": self.requests,
        }


@dataclass
class ResumeFile:
    """The batches of a ``--batch`` run and the run each of their requests stands for."""

    path: Path
    """The file."""
    backend: str
    """``anthropic`` or ``emulator``."""
    base_url: str | None = None
    """Where the live API's batches were sent (``None`` on the emulator)."""
    command: tuple[str, ...] = ()
    """The command that submitted the first batch."""
    started_at: str = ""
    """When that was (UTC)."""
    complete: bool = False
    """Every round's results were read and judged."""
    batches: list[SubmittedBatch] = field(default_factory=list)
    """In the order they were created."""

    def save(self) -> None:
        """Writes the file atomically.

        Raises:
            InputError: the file cannot be written.
        """
        from skilltest.report.files import write_json_atomic

        write_json_atomic(
            self.path,
            {
                "schema_version": SCHEMA_VERSION,
                "kind": KIND,
                "backend": self.backend,
                "base_url": self.base_url,
                "command": list(self.command),
                "started_at": self.started_at,
                "complete": self.complete,
                "batches": [batch.to_dict() for batch in self.batches],
            },
        )

    @classmethod
    def load(cls, path: Path) -> ResumeFile:
        """Reads a resume file back.

        Raises:
            InputError: no such file, not JSON, or not a resume file of this version.
        """
        from skilltest.files import read_json

        fix = "pass the file a `skilltest pressure --batch` run wrote (it says where)"
        data = read_json(
            path,
            limit=MAX_RESULTS_BYTES,
            what="the resume file",
            missing="no such resume file",
            fix=fix,
        )
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise InputError(f"not a resume file (no `kind: {KIND}`)", location=str(path), fix=fix)
        if data.get("schema_version") != SCHEMA_VERSION:
            raise InputError(
                f"resume file schema_version {data.get('schema_version')!r} is not "
                f"{SCHEMA_VERSION}",
                location=f"{path}#/schema_version",
                fix="resume it with the skilltest version that wrote it",
            )
        batches = []
        for index, raw in enumerate(data.get("batches") or []):
            place = f"{path}#/batches/{index}"
            try:
                requests = {
                    str(custom_id): {
                        "run": str(run["run"]),
                        "rep": int(run["rep"]),
                        "sha256": str(run["sha256"]),
                    }
                    for custom_id, run in dict(raw["requests"]).items()
                }
                batches.append(
                    SubmittedBatch(
                        id=str(raw["id"]),
                        round=int(raw["round"]),
                        runner=str(raw["runner"]),
                        requests=requests,
                        submitted_at=str(raw.get("submitted_at") or ""),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(
                    f"not a batch of a resume file ({exc})",
                    location=place,
                    fix="undo the hand edit; the file is written by skilltest",
                ) from None
        backend = data.get("backend")
        if backend not in ("anthropic", "emulator"):
            raise InputError(f"unknown backend {backend!r}", location=f"{path}#/backend", fix=fix)
        return cls(
            path=path,
            backend=str(backend),
            base_url=data.get("base_url") if isinstance(data.get("base_url"), str) else None,
            command=tuple(str(part) for part in data.get("command") or ()),
            started_at=str(data.get("started_at") or ""),
            complete=bool(data.get("complete")),
            batches=batches,
        )


def open_resume_file(
    path: Path, *, resume: bool, backend: str, command: Sequence[str]
) -> ResumeFile:
    """The resume file of this run: read back (``--resume-batch``), or new.

    Raises:
        InputError: resuming a file that does not exist or was written for another backend;
            starting anew over a file whose run did not finish (its batches would be lost).
    """
    if resume:
        found = ResumeFile.load(path)
        if found.backend != backend:
            raise InputError(
                f"its batches were submitted to the {found.backend} backend; this run uses "
                f"{backend}",
                location=f"{path}#/backend",
                fix=(
                    "set ANTHROPIC_API_KEY (or pass --backend anthropic) to resume batches at "
                    "the API"
                    if found.backend == "anthropic"
                    else "resume offline with --backend emulator"
                ),
            )
        return found
    if path.exists():
        try:
            earlier = ResumeFile.load(path)
        except InputError:
            earlier = None
        if earlier is not None and not earlier.complete and earlier.batches:
            raise InputError(
                f"holds {len(earlier.batches)} batch(es) of a run that did not finish; a new run "
                "would write over their ids",
                location=str(path),
                fix=f"resume it: --resume-batch {path} (nothing is submitted again), or delete "
                "the file to submit new batches",
            )
        if earlier is not None and earlier.backend == "emulator":
            # The finished run's batches are of no more use once its file is written over.
            for batch in earlier.batches:
                (emulator_folder(path) / f"{batch.id}.json").unlink(missing_ok=True)
    return ResumeFile(
        path=path,
        backend=backend,
        command=tuple(command),
        started_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


@dataclass
class _Pending:
    """One run of a round: its request, its place in the file once submitted, its answer."""

    request: TurnRequest
    suite: PressureSuite
    runner: str
    item: BatchItem
    batch: str | None = None
    custom_id: str | None = None
    answer: tuple[Transcript, str] | None = None

    @property
    def name(self) -> str:
        """``<skill>/<scenario>:<arm>``: the run whatever path the suite was named by (a skill's
        scenario ids are unique across its suites)."""
        run = str(self.request.run)
        return f"{self.suite.skill.name}/{run.removeprefix(f'{self.suite.path}#')}"


class PressureBatches:
    """Answers the rounds of a ``--batch`` run (see the module's docstring)."""

    def __init__(
        self,
        pool: TurnRunnerPool,
        resume: ResumeFile,
        *,
        observer: Observer,
        most: Mapping[str, int],
        poll_s: float | None = None,
        recording: PressureRecording | None = None,
    ) -> None:
        self.pool = pool
        self.resume = resume
        self.most = most
        """The most repetitions this command may ask of each run, by ``<skill>/<scenario>:<arm>``
        (:func:`skilltest.pressure.runs.most_repetitions`)."""
        self._held: dict[tuple[str, int], tuple[SubmittedBatch, str]] | None = None
        """The runs of the file not yet given to a run of this command, by (run, rep)."""
        self.observer = observer
        self.poll_s = poll_s if poll_s is not None else POLL_S.get(pool.backend.name, 15.0)
        self.recording = recording
        self.rounds = 0
        self.results: dict[str, int] = {}
        """How the requests ended: ``succeeded``, ``errored``, ``expired``, ``canceled``, and
        ``failed`` for runs whose batch could not be created or read."""
        self.usage = Usage()
        """The tokens of the succeeded requests."""
        self._told = False

    async def answer(
        self, number: int, requests: Sequence[TurnRequest], suites: Sequence[PressureSuite]
    ) -> list[tuple[Transcript, str]]:
        """Every request of round ``number`` answered: submitted as batches (those the resume
        file holds are not submitted again), polled until ended, read back."""
        self.rounds = max(self.rounds, number)
        pending: list[_Pending] = []
        for request, suite in zip(requests, suites, strict=True):
            runner = self.pool.batch_runner_for(suite)
            self._check_place(runner)
            item = runner.item("", request)
            pending.append(_Pending(request, suite, self.pool.runner_key(suite), item))
        if self._held is None:  # the first round: every run of the file checked before any send
            self._held = self._check_held(pending)
        self._adopt(pending)
        await self._submit(number, pending)
        ids = list(dict.fromkeys(run.batch for run in pending if run.batch is not None))
        if ids:
            await self._collect(number, ids, pending)
        answers = []
        for run in pending:
            assert run.answer is not None
            answers.append(run.answer)
        return answers

    # --- the resume file ---------------------------------------------------------------------

    def _check_place(self, runner: BatchRunner) -> None:
        """The live API's batches are where the file says they were sent.

        Raises:
            InputError: the file's batches went to another base URL.
        """
        if runner.backend != "anthropic":
            return
        if self.resume.base_url is None:
            self.resume.base_url = runner.base_url
        elif self.resume.base_url != runner.base_url:
            raise InputError(
                f"its batches were submitted to {self.resume.base_url}; this run would ask "
                f"{runner.base_url}, which does not know them",
                location=f"{self.resume.path}#/base_url",
                fix=f"resume with ANTHROPIC_BASE_URL={self.resume.base_url}",
            )

    def _fix(self) -> str:
        return (
            "resume with the suites, skills and options of the command that submitted the "
            f"batches ({' '.join(self.resume.command) or 'see the file'}), or delete the file "
            "and run --batch again"
        )

    def _check_held(
        self, first: Sequence[_Pending]
    ) -> dict[tuple[str, int], tuple[SubmittedBatch, str]]:
        """Every run the file holds, checked against this command before anything is sent:
        one it may ask for (its run, a repetition within the plan's most) with the request it
        would send (the first round asks every run once, and a run's request is the same at
        every repetition).

        Raises:
            InputError: the file holds runs this command does not ask for, or another request
                for one it does: the suites or options changed since it was submitted.
        """
        held: dict[tuple[str, int], tuple[SubmittedBatch, str]] = {}
        for batch in self.resume.batches:
            for custom_id, entry in batch.requests.items():
                held.setdefault((entry["run"], entry["rep"]), (batch, custom_id))
        unasked = [
            (name, rep, batch)
            for (name, rep), (batch, _) in held.items()
            if rep >= self.most.get(name, 0)
        ]
        if unasked:
            name, rep, batch = unasked[0]
            count = sum(1 for *_, other in unasked if other is batch)
            raise InputError(
                f"round {batch.round}: batch {batch.id} holds runs this command does not ask "
                f"for ({count}, e.g. {name} repetition {rep + 1})",
                location=str(self.resume.path),
                fix=self._fix(),
            )
        asked = {run.name: request_checksum(run.item.params) for run in first}
        for (name, rep), (batch, custom_id) in held.items():
            if name in asked and batch.requests[custom_id]["sha256"] != asked[name]:
                raise InputError(
                    f"round {batch.round}: {name} repetition {rep + 1} was submitted in batch "
                    f"{batch.id} with another request (the prompt, the skill, the model or a "
                    "setting changed since)",
                    location=str(self.resume.path),
                    fix=self._fix(),
                )
        return held

    def _adopt(self, pending: list[_Pending]) -> None:
        """Gives each run the batch request the resume file holds for it (checked by
        :meth:`_check_held`), whichever round submitted it."""
        assert self._held is not None
        for run in pending:
            found = self._held.pop((run.name, run.request.rep), None)
            if found is not None:
                run.batch, run.custom_id = found[0].id, found[1]

    async def _submit(self, number: int, pending: list[_Pending]) -> None:
        """Submits the runs of the round the file does not hold, writing each batch into the
        file as soon as it is created; a batch the API refuses makes its runs errors."""
        from skilltest.runners.batch import BatchError, split

        fresh = [run for run in pending if run.batch is None]
        if not fresh:
            return
        taken = {
            custom_id for b in self.resume.batches if b.round == number for custom_id in b.requests
        }
        serial = 0
        for run in fresh:
            while f"r{number}-{serial:06d}" in taken:
                serial += 1
            run.custom_id = f"r{number}-{serial:06d}"
            run.item = replace(run.item, custom_id=run.custom_id)
            serial += 1
        for runner_key in dict.fromkeys(run.runner for run in fresh):
            group = [run for run in fresh if run.runner == runner_key]
            runner = self.pool.batch_runner_for(group[0].suite)
            by_id = {run.custom_id: run for run in group}
            for items in split([run.item for run in group]):
                try:
                    batch_id = await runner.submit(items)
                except BatchError as exc:
                    problem = f"the batch could not be created: {exc}"
                    self._fail([by_id[i.custom_id] for i in items], runner, problem)
                    continue
                self.resume.batches.append(
                    SubmittedBatch(
                        id=batch_id,
                        round=number,
                        runner=runner_key,
                        requests={
                            i.custom_id: {
                                "run": by_id[i.custom_id].name,
                                "rep": by_id[i.custom_id].request.rep,
                                "sha256": request_checksum(i.params),
                            }
                            for i in items
                        },
                        submitted_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        submitted_here=True,
                    )
                )
                self.resume.save()
                for item in items:
                    by_id[item.custom_id].batch = batch_id
                said = (
                    f"skilltest: batch {batch_id} submitted ({len(items)} requests, round {number})"
                )
                if not self._told:
                    said += (
                        f"; its id is in {self.resume.path}: if this command stops, "
                        f"--resume-batch {self.resume.path} picks it up without submitting again"
                    )
                    self._told = True
                self.observer.notice(said)

    # --- polling and results -----------------------------------------------------------------

    async def _collect(self, number: int, ids: Sequence[str], pending: list[_Pending]) -> None:
        by_batch: dict[str, list[_Pending]] = {}
        for run in pending:
            if run.batch is not None and run.answer is None:
                by_batch.setdefault(run.batch, []).append(run)
        batches = {b.id: b for b in self.resume.batches if b.id in by_batch}
        # The runs of a batch share their runner (the pool opens runners by suite).
        runners = {
            batch_id: self.pool.batch_runner_for(runs[0].suite)
            for batch_id, runs in by_batch.items()
        }
        started = time.monotonic()
        polls, failures = 0, dict.fromkeys(by_batch, 0)
        statuses: dict[str, BatchStatus] = {}
        waiting = set(by_batch)
        while waiting:
            polls += 1
            for batch_id in sorted(waiting):
                status = await runners[batch_id].poll(batch_id)
                if status.processing_status == "failed":
                    failures[batch_id] += 1
                    if status.missing or failures[batch_id] >= FAILED_POLLS:
                        waiting.discard(batch_id)
                        self._fail(
                            by_batch[batch_id],
                            runners[batch_id],
                            f"batch {batch_id} could not be polled: {status.problem}"
                            + (
                                ""
                                if status.missing
                                else f"; it may still be processing: --resume-batch "
                                f"{self.resume.path} picks it up"
                            ),
                        )
                    continue
                failures[batch_id] = 0
                statuses[batch_id] = status
                batches[batch_id].status = status.processing_status
                if status.ended:
                    waiting.discard(batch_id)
                    await self._read(batch_id, runners[batch_id], by_batch[batch_id])
            self.observer.batch_polled(_progress(number, ids, statuses, polls, started))
            if waiting:
                await asyncio.sleep(self.poll_s)

    async def _read(self, batch_id: str, runner: BatchRunner, runs: Sequence[_Pending]) -> None:
        from skilltest.runners.batch import BatchError

        try:
            answers = await runner.results(batch_id)
        except BatchError as exc:
            self._fail(runs, runner, f"the results of batch {batch_id} could not be read: {exc}")
            return
        for run in runs:
            assert run.custom_id is not None
            answer = answers.get(run.custom_id)
            if answer is None:
                self._fail([run], runner, f"batch {batch_id} has no result for {run.custom_id}")
                continue
            self._answered(run, runner, answer)

    def _answered(self, run: _Pending, runner: BatchRunner, answer: BatchAnswer) -> None:
        self.results[answer.result] = self.results.get(answer.result, 0) + 1
        self.usage = self.usage + answer.transcript.usage
        run.answer = (answer.transcript, runner.backend)
        if self.recording is not None and answer.message is not None:
            answered_by = answer.transcript.answered_by
            mark = answered_by.emulator if answered_by is not None else None
            self.recording.answered(
                run.request, run.item.params, answer.message, mark=mark, rule=answer.emulator_rule
            )

    def _fail(self, runs: Sequence[_Pending], runner: BatchRunner, problem: str) -> None:
        for run in runs:
            self.results["failed"] = self.results.get("failed", 0) + 1
            run.answer = (Transcript(source=runner.backend, error=problem), runner.backend)

    # --- what the results file says ----------------------------------------------------------

    def finish(self) -> None:
        """Marks the resume file complete: every round was read and judged."""
        if self.resume.batches and not self.results.get("failed"):
            self.resume.complete = True
            self.resume.save()

    def to_dict(self) -> dict[str, Any]:
        """The results file's ``batch``: what was submitted, how it ended, what it cost."""
        from skilltest.runners.batch import PRICE_FACTOR, RESULT_TYPES

        submitted = [b for b in self.resume.batches if b.submitted_here]
        return {
            "resume_file": str(self.resume.path),
            "rounds": self.rounds,
            "batches": [
                {
                    "id": b.id,
                    "round": b.round,
                    "requests": len(b.requests),
                    "submitted_by_this_run": b.submitted_here,
                    "status": b.status,
                }
                for b in self.resume.batches
            ],
            "submitted": len(submitted),
            "resumed": len(self.resume.batches) - len(submitted),
            "requests": sum(len(b.requests) for b in self.resume.batches),
            "results": {kind: self.results.get(kind, 0) for kind in (*RESULT_TYPES, "failed")},
            "usage": self.usage.to_dict(),
            "price_factor": PRICE_FACTOR,
            "price_note": "Message Batches are billed at 50% of the standard API price: these "
            "tokens cost half what the same requests sent one by one would",
        }


def _progress(
    number: int,
    ids: Sequence[str],
    statuses: Mapping[str, BatchStatus],
    polls: int,
    started: float,
) -> BatchProgress:
    counts: dict[str, int] = {}
    for status in statuses.values():
        for key, value in status.counts.items():
            counts[key] = counts.get(key, 0) + value
    order = ("in_progress", "canceling", "ended")
    seen = [s.processing_status for s in statuses.values() if s.processing_status in order]
    return BatchProgress(
        round=number,
        batches=tuple(ids),
        status=min(seen, key=order.index) if seen else "in_progress",
        requests=sum(counts.values()),
        counts=counts,
        polls=polls,
        elapsed_s=time.monotonic() - started,
    )
