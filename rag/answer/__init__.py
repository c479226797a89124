"""Stages 7-9 of the design: gate, cite, generate, check (what turns retrieved chunks into a cited answer).

* :mod:`rag.answer.gate` - the typed decision (``GateResult``), the ``Gate`` protocol and the distance gate (a
  comparison of two numbers); :mod:`rag.answer.gate.learned_gate` - the answerability score on top of it;
* :mod:`rag.answer.gate.calibration` - the store's own references (pseudo-queries, unrelated questions, languages) and
  :mod:`rag.answer.gate.calibrated_gate` - the default gate that reads the evidence against them (issue 15);
* :mod:`rag.answer.gate.gates` - the table of the three (``GATES``), looked up once per question;
* :mod:`rag.answer.asked_with` - which of the gate's knobs a turn was decided with differ from the defaults
  (issue 42: said in the chat and the export);
* :mod:`rag.answer.cite` - numbered sources, locators and URL fragments;
* :mod:`rag.answer.excerpt` - the sentences of each source the model reads;
* :mod:`rag.answer.tables` - a table's rows read with their column names (the model's view, the check's);
* :mod:`rag.answer.key_passage` - the source sentences that best match the question, shown before the model writes;
* :mod:`rag.answer.generate` - the local GGUF model and the prompt; :mod:`rag.answer.llama_load` - loading it
  without llama.cpp's AMX kernels (they crash on some Xeons);
* :mod:`rag.answer.check.clean` - the model's text cleaned before anyone sees it; :mod:`rag.answer.check.attribute` - the
  server's checks of what the model wrote, :mod:`rag.answer.check.claims` - what a sentence claims and the source
  statement that makes the same claim; :mod:`rag.answer.roles` - which units of a source may answer (body
  text: ingest's :mod:`rag.ingest.unit_roles`, and the lines the other sources repeat); :mod:`rag.answer.check.verdict` - the one verdict a user reads (issue 24); :mod:`rag.answer.advice` - what a
  refusal or "may not answer" searched, the closest passages and what to try (issue 39); :mod:`rag.answer.check.probes` - what the
  model's own logits say of an answer, :mod:`rag.answer.check.confidence` - an answer's features and the calibrated
  probability that it is right (issue 39);
* :mod:`rag.answer.pipeline` - retrieve -> gate -> (refuse | generate) -> check;
* :mod:`rag.answer.record` - the :class:`~rag.answer.record.Answer` of one question and its one JSON form;
* :mod:`rag.answer.followup` - a follow-up question made standalone before retrieval (issue 16);
* :mod:`rag.answer.history` - a chat's turns as stored records and as Markdown (issue 16);
* :mod:`rag.answer.conversation` - one chat turn (follow-up -> gate -> cite -> stream -> save), what the app,
  the CLI and the evaluation all use;
* :mod:`rag.answer.overview` - what's in a document: its sections and a summary made of its own sentences
  (issue 29); :mod:`rag.answer.suggest` - questions the documents answer, each tested with the gate;
* :mod:`rag.answer.translate` - a question in another language than the documents', translated by the local model
  before the search (issue 27); :mod:`rag.answer.refresh` - what a store's new contents need once a queue is drained (the gate's
  references, the overviews); :mod:`rag.answer.waits` - this machine's measured first-word times (issue 42).

Nothing here opens a document's original bytes: page maps and locator parts come from the store
(:meth:`rag.store.store.Store.page_map`); the viewer's rendering is :mod:`ui.view`, the language detector
:mod:`rag.language`.
"""
