"""Questions in another language than the documents (issue 27, item 5): translated by the local model, then searched.

all-MiniLM-L6-v2 reads English only, and BM25 shares only names and numbers with a question in another
language, so a German or French question over English documents loses its passage before any gate runs
(course chapters, 40 German/French questions: R@4 0.550). The loaded GGUF translates such a question into
the documents' language first (greedy, one worked example, at most :data:`TRANSLATE_MAX_TOKENS` tokens):
R@4 0.875 on the same 40 (+14 / -1, p = 0.001; ``docs/evaluation.md``, issue 27).

The product's promises hold:

* only a question whose language differs from the documents' is translated: the one detector
  (:func:`rag.language.question_language`, sure detections only) against the languages the store recorded
  (:attr:`rag.answer.gate.calibration.Calibration.languages`, :func:`rag.language.differs`), the very test the
  calibrated gate makes before it answers "the question is in German, the documents in English";
  a question in one of the documents' languages (a German question over a store holding a German
  document) is searched as asked, and the model is never loaded for it;
* a refusal is still the gate's comparison of numbers, on the translation as searched;
* what was searched is said: :class:`rag.types.QueryPlan` carries the translation (``rewritten``) and the
  question's language (``translated_from``); ``ask --json`` has them under ``retrieval``, the app shows
  "Searched as (translated from German): ...", and :func:`answer_language_note` says that the answer is
  written in the documents' language, not the question's (the claim check compares words with the sources,
  so the answer stays in their language);
* a model that is missing or fails leaves the question as asked (the gate then tells the language apart),
  never an error.

Cost: one short generation (a prompt of about 110 tokens, 15 tokens written, p50), about 2 s on 2 quiet cores
with the 0.5B, only for such questions. Setting ``translate_questions`` (default on).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.answer.cite import Citation
from rag.answer.generate import Generator, TextGenerator, get_generator
from rag.errors import ModelError
from rag.language import differs, language_name, main_languages
from rag.question import analyse

if TYPE_CHECKING:
    from rag.answer.gate import GateResult
    from rag.settings import Settings

log = logging.getLogger(__name__)

#: Tokens the model may write for a translation (a question, not an essay).
TRANSLATE_MAX_TOKENS = 48

#: Context of the translation's own llama.cpp context, tokens (instruction, example, the question, the answer).
TRANSLATE_N_CTX = 1024

#: The worked example (German into English), the same as the measurement's (``scripts/issue27_experiments.py``).
EXAMPLE_QUESTION = "Wie lange gilt die Garantie für das Gerät, und wer bezahlt die Reparatur?"
EXAMPLE_ANSWER = "How long is the warranty for the device, and who pays for the repair?"


def translation_messages(question: str, target: str = "en") -> list[dict[str, str]]:
    """Chat messages asking for ``question`` in the language ``target`` (ISO 639-1): an instruction, the worked
    German -> English example when the target is English (none otherwise), then the question. Everything
    before the last message is the same for every call (its KV cache is kept)."""
    name = language_name(target)
    system = (f"Translate the user's question into {name}. Keep names, code identifiers, abbreviations and "
              f"numbers exactly as written. Reply with the {name} question only.")
    example = ([{"role": "user", "content": EXAMPLE_QUESTION}, {"role": "assistant", "content": EXAMPLE_ANSWER}]
               if target == "en" else [])
    return [{"role": "system", "content": system}, *example, {"role": "user", "content": question.strip()}]


def _probe(question: str, sources: Sequence[Citation]) -> list[dict[str, str]]:
    """The messages :class:`rag.answer.generate.Generator` probes to find the translation prompt's shared prefix."""
    return translation_messages(question)


def translation_generator(settings: Settings) -> Generator:
    """The process-wide translation generator for ``settings``' model and threads (its own llama.cpp context and
    cached instruction prefix). Raises :class:`rag.errors.ModelError` when the model is missing or broken."""
    return get_generator(settings.model_path, n_ctx=TRANSLATE_N_CTX, threads=settings.threads, build=_probe,
                         flash_attn=settings.flash_attn)


def clean_translation(text: str, question: str) -> str:
    """The model's translation as one question: its first non-empty line, without a label or quotes;
    ``question`` itself when the model gave nothing usable (empty, or far longer than a translation can be)."""
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    for label in ("translation:", "english:", "question:"):
        if line.lower().startswith(label):
            line = line[len(label):].strip()
    line = line.strip('"“”„\'`').strip()
    if not line or len(line) > 3 * len(question) + 40:
        return question
    return line


@dataclass(frozen=True)
class Translation:
    """What a question was searched as: ``query`` (the translation, or the question itself), ``source_language``
    the question's ISO code when it was translated (``None``: searched as asked), ``target_language`` the
    documents' main language it was translated into, ``ms`` the model's wall time (0 when it did not run)."""

    query: str
    source_language: str | None = None
    target_language: str | None = None
    ms: float = 0.0

    @property
    def translated(self) -> bool:
        return self.source_language is not None


def needs_translation(question: str, document_languages: dict[str, float]) -> tuple[str, str] | None:
    """``(question language, documents' main language)`` when ``question`` should be translated (its language is
    detected with confidence and is none of the documents' main languages), else ``None``."""
    lang = analyse(question).language
    if lang is None or not differs(lang[0], document_languages):
        return None
    return lang[0], main_languages(document_languages)[0]


def translate_question(question: str, document_languages: dict[str, float],
                       get_generator: Callable[[], TextGenerator]) -> Translation:
    """``question`` as it should be searched over documents in ``document_languages`` (ISO code -> share of
    chunks, :attr:`rag.answer.gate.calibration.Calibration.languages`): translated by ``get_generator()`` (a
    :class:`rag.answer.generate.Generator`, called only when a translation is needed) when its language differs
    from the documents', else as asked. A :class:`rag.errors.ModelError` is logged and the question kept."""
    need = needs_translation(question, document_languages)
    if need is None:
        return Translation(question)
    src, target = need
    t0 = time.perf_counter()
    try:
        out = get_generator().complete(translation_messages(question, target), TRANSLATE_MAX_TOKENS)
    except ModelError as e:
        log.warning("question not translated (%s); searched as asked", e)
        return Translation(question)
    text = clean_translation(out, question)
    if text == question:
        return Translation(question)
    return Translation(text, src, target, (time.perf_counter() - t0) * 1000.0)


def searched_as_line(gate: GateResult | None) -> str | None:
    """"Searched as (translated from German): ..." for a :class:`rag.answer.gate.GateResult` whose question was
    translated, then :func:`answer_language_note`; ``None`` for a question searched as asked."""
    plan = gate.plan if gate is not None else None
    if gate is None or plan is None or not plan.translated_from or not plan.rewritten:
        return None
    docs = gate.language.documents if gate.language is not None and gate.language.documents else ("en",)
    searched = plan.rewritten.rstrip()
    end = "" if searched.endswith((".", "?", "!")) else "."  # "...end of the story?." read as a typo
    return (f"Searched as (translated from {language_name(plan.translated_from)}): {searched}{end} "
            + answer_language_note(plan.translated_from, docs[0]))


def answer_language_note(source_language: str | None, target_language: str | None) -> str | None:
    """The note under an answer to a translated question: it is written in the documents' language."""
    if not source_language or not target_language:
        return None
    return (f"Your question is in {language_name(source_language)} and the documents are in "
            f"{language_name(target_language)}: it was searched as translated, and the answer is in "
            f"{language_name(target_language)}.")
