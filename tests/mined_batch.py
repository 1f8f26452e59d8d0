"""The checks every fresh mined batch of issue 25 gets (tests/test_explain_mined_fresh5.py and
later): a batch module subclasses :class:`BatchChecks` as ``TestBatchN`` and gives its file, its
batch number, its sizes, its frozen held-out floor, its blind gaps and its near-miss lines. The
rules are the same for every batch (tests/explain_kit.py); only the figures differ."""
from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Dict, List, Tuple

from tests.explain_kit import (badly_sourced, catalog, held_out_lines_used_as_examples, held_out_misses,
                               held_out_threads_named_in_any_form, read_rows, real_signature_ids, shared_threads,
                               signatures_citing_held_out, training_misses)


class BatchChecks:
    MINED: ClassVar[Path]
    BATCH: ClassVar[int]
    MIN_ROWS: ClassVar[int]  # cases in the file
    MIN_REAL: ClassVar[int]  # of them neither benign nor a near miss
    MIN_HELD: ClassVar[int]  # held-out cases
    HELD_OUT_FLOOR: ClassVar[float]  # the held-out share at the blind commit, frozen
    ASCEND_HELD_OUT_BLIND: ClassVar[Tuple[int, int]]  # the Ascend-only share then, reported only
    # training cases the catalogue missed at the blind commit, each replaced later by a signature
    # (and deleted) or by the reason no signature may take it
    TRAINING_GAPS: ClassVar[Dict[str, str]] = {}
    NEAR_MISSES: ClassVar[List[str]] = []  # healthy lines next to the batch's classes

    def rows(self):
        return read_rows(self.MINED)

    def test_the_split_is_the_fixed_rule_and_every_case_is_sourced(self):
        got = self.rows()
        assert len(got) >= self.MIN_ROWS
        assert badly_sourced(got, batch=self.BATCH, with_class=True, gaps=self.TRAINING_GAPS) == []
        assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)
        assert sum(1 for r in got if r["class"] not in ("benign", "near_miss")) >= self.MIN_REAL

    def test_no_thread_is_counted_twice_across_the_mined_sets(self):
        assert shared_threads(self.MINED) == {}

    def test_no_signature_example_is_a_held_out_line_of_this_set(self):
        assert held_out_lines_used_as_examples(self.rows()) == []

    def test_no_signature_cites_a_held_out_thread(self):
        assert signatures_citing_held_out(self.rows()) == []

    def test_no_row_of_the_matrices_names_a_held_out_thread_in_any_form(self):
        """Beyond the exact URL: "owner/name/issues/N", "owner/name/pull/N", or the repository with "#N"."""
        assert held_out_threads_named_in_any_form(self.rows()) == []

    def test_every_training_case_is_explained(self):
        misses, no_longer_gaps = training_misses(self.rows(), catalog(), self.TRAINING_GAPS)
        assert misses == []
        assert no_longer_gaps == []  # a listed gap that gets explained is no gap any more: take it off the list

    def test_held_out_share_explained(self):
        held, misses = held_out_misses(self.rows(), catalog())
        assert len(held) >= self.MIN_HELD
        share = 1 - len(misses) / len(held)
        ascend = [r for r in held if r["class"] != "near_miss"]
        ascend_missed = sum(1 for r in ascend if any(line.startswith(r["source"] + ":") for line in misses))
        print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%}); "
              f"Ascend only: {len(ascend) - ascend_missed} of {len(ascend)} "
              f"(blind: {self.ASCEND_HELD_OUT_BLIND[0]} of {self.ASCEND_HELD_OUT_BLIND[1]})")
        assert share >= self.HELD_OUT_FLOOR, f"{share:.0%} explained; misses:\n" + "\n".join(misses)

    def test_near_miss_lines_explain_nothing_real(self):
        assert self.NEAR_MISSES
        loud = [(line, real) for line in self.NEAR_MISSES for real in [real_signature_ids(line)] if real]
        assert loud == []

    def test_the_rules_of_a_mined_set_catch_a_bad_row(self):
        good = dict(self.rows()[0])
        batch = self.BATCH
        assert badly_sourced([good], batch=batch, with_class=True) == []
        flipped = dict(good, split="train" if good["split"] == "heldout" else "heldout")
        for bad, words in ((dict(good, source="https://example.com/x"), "not a GitHub thread"),
                           (dict(good, repo="someone/else"), "say otherwise"), (dict(good, evidence=""), "empty"),
                           (dict(good, **{"class": ""}), "empty"), (flipped, "fixed rule"),
                           (dict(good, batch=batch - 1), f"batch {batch - 1}")):
            assert any(words in p for p in badly_sourced([bad], batch=batch, with_class=True)), (bad, words)
        assert "2 cases of one thread" in badly_sourced([good, good], batch=batch)[0]
        assert badly_sourced([good], gaps=["https://github.com/a/b/issues/1"]) == [
            "https://github.com/a/b/issues/1: a training gap with no training case"]
