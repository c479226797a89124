"""``rag serve`` with the fakes (tests/fakes.py) in place of the models, for the API's tests: run as
``python tests/api/serve_fake.py rag serve --store DIR --port N`` (the CLI's own arguments follow).

The seams are the ones the test fixtures patch (``use_fake_embedder``, ``fake_generator``): every store embeds
with :class:`fakes.HashEmbedder`, every answer is :class:`fakes.FakeGenerator`'s. Environment knobs:
``FAKE_EMBED_S`` seconds per batch of document texts embedded, ``FAKE_LOAD_S`` seconds the generator takes to load (the 503 while loading), ``FAKE_TOKEN_S`` seconds per
streamed word (so several questions are in the line at once), ``FAKE_MISSING_MODEL`` the generator is missing
(a ModelError at load).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: fakes

from fakes import FakeGenerator, FakeStream, HashEmbedder  # noqa: E402

from rag.answer import pipeline  # noqa: E402
from rag.errors import ModelError  # noqa: E402
from rag.evaluation import runner  # noqa: E402
from rag.index import embed  # noqa: E402
from rag.store import store  # noqa: E402

EMBED_S = float(os.environ.get("FAKE_EMBED_S", "0"))


class SlowEmbedder(HashEmbedder):
    """:class:`fakes.HashEmbedder` that takes ``FAKE_EMBED_S`` seconds per batch of document texts (a document
    stays ``indexing`` that long: the 409 and the restart tests)."""

    def encode(self, texts):
        if EMBED_S and len(texts):
            time.sleep(EMBED_S)
        return super().encode(texts)


_emb = SlowEmbedder()
for module, name in ((embed, "get_embedder"), (embed, "load_embedder"), (store, "get_embedder"),
                     (runner, "get_embedder")):
    setattr(module, name, lambda *a, **k: _emb)

TOKEN_S = float(os.environ.get("FAKE_TOKEN_S", "0"))


class SlowStream(FakeStream):
    def __iter__(self):
        for piece in super().__iter__():
            time.sleep(TOKEN_S)
            yield piece


class SlowGenerator(FakeGenerator):
    def stream(self, prompt, max_tokens):
        return SlowStream(self.reply(prompt.question, prompt.sources))


_gen = SlowGenerator()
_loaded = {"t": None}


def fake_generator(settings=None):
    if os.environ.get("FAKE_MISSING_MODEL"):
        raise ModelError("model file missing: models/absent.gguf (provision it with: python -m rag models)")
    if _loaded["t"] is None:
        time.sleep(float(os.environ.get("FAKE_LOAD_S", "0")))
        _loaded["t"] = time.time()
    return _gen


pipeline.get_default_generator = fake_generator

if __name__ == "__main__":
    from rag.cli.main import main

    main(sys.argv[2:], prog_name="rag")
