# The README's two commands:  make run  |  make test
# Both set everything up first (idempotent: a second run takes seconds).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.requirements.stamp
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test setup models models-1.5b browser doctor clean-venv

run: setup
	$(VENV)/bin/streamlit run app.py --server.headless true --server.port 8501

test: setup browser
	$(PY) -m pytest

setup: $(STAMP) models

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# torch first, from the CPU wheel on local disk: otherwise a multi-GB CUDA build comes in.
# llama-cpp-python compiles from source the first time (about 5 minutes); pip caches the wheel.
$(STAMP): requirements.txt $(VENV)/bin/python
	$(PIP) install --quiet "torch==2.13.0"
	$(PIP) install --quiet -r requirements.txt
	touch $(STAMP)

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
