"""Stages 7-9 of the design: gate, cite, generate, check (what turns retrieved chunks into a cited answer).

* :mod:`rag.answer.gate` - the distance gate (a comparison of two numbers); :mod:`rag.answer.learned_gate` - the
  answerability score on top of it;
* :mod:`rag.answer.cite` - numbered sources, locators and URL fragments;
* :mod:`rag.answer.excerpt` - the sentences of each source the model reads;
* :mod:`rag.answer.generate` - the local GGUF model and the prompt;
* :mod:`rag.answer.attribute` - the server's checks of what the model wrote;
* :mod:`rag.answer.pipeline` - retrieve -> gate -> (refuse | generate) -> check;
* :mod:`rag.answer.record` - the :class:`~rag.answer.record.Answer` of one question and its one JSON form;
* :mod:`rag.answer.followup` - a follow-up question made standalone before retrieval (issue 16);
* :mod:`rag.answer.history` - a chat's turns as stored records and as Markdown (issue 16);
* :mod:`rag.answer.preview` - showing a PDF citation at its place, :mod:`rag.answer.text_view` - the other formats (pure helpers for the app).
"""
