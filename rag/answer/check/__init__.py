"""Stage 9 of the design (issue 36, item 5): what the model wrote, checked and judged once.

:mod:`~rag.answer.check.clean` (the model's text cleaned), :mod:`~rag.answer.check.split` (cut into sentences),
:mod:`~rag.answer.check.attribute` and
:mod:`~rag.answer.check.claims` (each sentence against its sources; :mod:`~rag.answer.check.no_claim` for sentences that
claim nothing of their own; :mod:`~rag.answer.check.lists` and :mod:`~rag.answer.check.list_parts` for a list's items
and a sentence that joins them; :mod:`~rag.answer.check.names` for a name written wrong;
:mod:`~rag.answer.check.spelled` for a number written in words; :mod:`~rag.answer.check.exceptions` for the case a
source makes an exception of; :mod:`~rag.answer.check.qualifiers` for a value a source only recommends; :mod:`~rag.answer.check.checkboxes` for a form's
option not ticked; :mod:`~rag.answer.check.records` for the record of several of one kind the question names;
:mod:`~rag.answer.check.short_answers` for a yes/no question's and a one-word answer;
:mod:`~rag.answer.check.polarity` for a claim said the other way round, with :mod:`~rag.answer.check.opposites` for a
word swapped for its opposite), :mod:`~rag.answer.check.probes` and
:mod:`~rag.answer.check.confidence` (the model's own logits, the calibrated probability of being right) and
:mod:`~rag.answer.check.verdict` (the one verdict a user reads), :mod:`~rag.answer.check.shown` (the checked sentences
written back as one answer, code blocks kept whole), over :mod:`~rag.answer.check.judged` (the judged record, what
the rules read of an answer, the readings of its question the verdict and the confidence share).
"""
