# The README's two commands:  make run  |  make test
# Both set everything up first (idempotent: a second run takes seconds).
# For development: make test-fast (no real models, no browser), make lint (ruff).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
# Where the app listens: this machine only, by default (issue 26). Anything else (make run ADDRESS=0.0.0.0)
# serves it to the network, and then every page asks for the password of `python -m rag access set-password`.
ADDRESS ?= 127.0.0.1
# The port it listens on (make run PORT=8502 when 8501 is taken).
PORT ?= 8501
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.requirements.stamp
DEV    := $(VENV)/.dev-requirements.stamp
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# llama-cpp-python is compiled for this CPU, but without llama.cpp's AMX kernels: on Sapphire Rapids Xeons
# (this project's machines among them) its AMX matrix product segfaults on the Q4_K_M models in the first
# real prompt (ggml-org/llama.cpp#20824; rag/answer/generate.py also turns it off at load for other builds).
# GCC's explicit -mno-amx-int8 wins over the -march=native llama.cpp adds. Another CMAKE_ARGS replaces it.
ifeq ($(shell uname -m),x86_64)
CMAKE_ARGS ?= -DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8
export CMAKE_ARGS
endif

.PHONY: run test test-fast lint setup dev models models-1.5b browser doctor clean-venv

# The app offers both shipped models (the 1.5B answers right more often, at twice the wait: docs/answers.md);
# the app still starts with the 0.5B alone if the 1.5B cannot be provisioned.
run: setup
	@$(PY) -m rag models --large || echo "the 1.5B model could not be provisioned; the app runs with the 0.5B"
	@mkdir -p static  # where cited PDFs are served from; Streamlit warns at start when it is missing
	$(VENV)/bin/streamlit run app.py --server.headless true --server.port $(PORT) --server.address $(ADDRESS)

# Everything: real models, the shared corpus, the real browser (what CI and the README run).
test: setup dev browser
	$(PY) -m pytest

# The inner loop: no real model, no browser (fakes for the embedder and the generator). Four pytest-xdist
# processes on two cores: a fifth of the tier's time is spent waiting on child processes (workers, contained
# extraction, AppTest), which the other processes fill (one process: 4 min 14 s; -n 2: 2 min 15 s; -n 4: under 2).
test-fast: setup dev
	$(PY) -m pytest -n 4 -m "not slow and not browser"

lint: dev
	$(VENV)/bin/ruff check .

setup: $(STAMP) models

dev: $(DEV)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# torch first, from the CPU wheel on local disk: otherwise a multi-GB CUDA build comes in.
# llama-cpp-python compiles from source the first time (about 5 minutes); pip caches the wheel.
$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml $(VENV)/bin/python
	$(PIP) install --quiet "torch==2.13.0"
	$(PIP) install --quiet -r requirements.txt
	$(PIP) install --quiet --no-deps -r requirements-nodeps.txt
	$(PIP) install --quiet --no-deps --no-build-isolation --config-settings editable_mode=compat -e .
	touch $(STAMP)

# Test and lint tools, apart from what the app needs.
$(DEV): requirements-dev.txt $(STAMP)
	$(PIP) install --quiet -r requirements-dev.txt
	touch $(DEV)

models: $(STAMP)
	$(PY) -m rag models

models-1.5b: $(STAMP)
	$(PY) -m rag models --large

# Debian's chromium and tesseract (OCR of the opened PDF tab) for the real-browser test
# (Playwright never downloads its own browser here).
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/tesseract ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian chromium and tesseract-ocr for the browser test (about 40 s)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium tesseract-ocr >/dev/null; \
	  else echo "chromium/tesseract missing and not root: the browser test will be skipped"; fi; \
	fi

doctor: $(STAMP)
	$(PY) -m rag doctor

clean-venv:
	rm -rf $(VENV)
