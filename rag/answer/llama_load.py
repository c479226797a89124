"""Loading a GGUF model with llama.cpp on any x86 CPU without the crash of its AMX kernels.

:func:`load_llama` is what :func:`rag.answer.generate.get_generator` calls; :func:`amx_compiled` says whether the
loaded llama.cpp has the AMX kernels in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama


def amx_compiled() -> bool:
    """True when the loaded llama.cpp was built with its AMX (Intel Advanced Matrix Extensions) kernels.

    Read from ``llama_print_system_info()`` ("AMX_INT8 = 1"): llama.cpp reports it only when the build
    targets a CPU with AMX (Sapphire Rapids and later Xeons) and compiled those kernels in.
    """
    import llama_cpp

    return b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info()


def load_llama(llama_class: type[Llama], **kwargs: Any) -> Llama:
    """``llama_class(**kwargs)``, with llama.cpp's extra buffer types off when AMX kernels are compiled in.

    llama.cpp's AMX matrix product (``ggml_backend_amx_mul_mat``) segfaults on Q4_K_M weights on some
    Sapphire Rapids machines, in the first prompt of more than a few tokens (seen here 2026-12-03; reported
    upstream as ggml-org/llama.cpp#20824, closed without a fix; dspy#10079 removed AMX for the same crash).
    A segfault takes the whole app down, so where AMX is compiled in the weights are not repacked into
    extra buffers (``use_extra_bufts = False``: the plain CPU kernels run). `make setup` builds
    llama-cpp-python without AMX, so this matters only for a wheel built elsewhere.
    llama-cpp-python has no argument for it: its default model parameters are wrapped while the model loads
    (under the generator cache's lock, so no other load sees the change).
    """
    if not amx_compiled():
        return llama_class(**kwargs)
    import llama_cpp.llama as llama_module

    low = llama_module.llama_cpp
    original = low.llama_model_default_params

    def without_extra_buffers() -> Llama:
        params = original()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without_extra_buffers
    try:
        return llama_class(**kwargs)
    finally:
        low.llama_model_default_params = original
