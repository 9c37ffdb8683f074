# The two commands the README promises: both set everything up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

# torch is installed first and pinned: a plain "torch" requirement with no torch present
# can pull a CUDA build of several GB.
# vit-pytorch (tests/test_vit_pytorch.py: a second model library, translated and compared) is installed without
# its dependencies: it requires torchvision for its DINO trainer only, whose wheel would pull another torch and
# cannot load its operators on a CPU build of torch; einops, its other one, is a test dependency.
$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[test]'
	$(BIN)/python -m pip install -q --no-deps vit-pytorch==1.26.11
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	GLOG_v=3 $(BIN)/recompat demo

test: $(STAMP)
	GLOG_v=3 $(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	GLOG_v=3 $(BIN)/python bench/translate_bench.py --to mindspore
	GLOG_v=3 $(BIN)/python bench/translate_bench.py --to torch
	GLOG_v=3 $(BIN)/python bench/suite_bench.py
	GLOG_v=3 $(BIN)/python bench/convert_bench.py
	GLOG_v=3 $(BIN)/python bench/startup_bench.py
	GLOG_v=3 $(BIN)/python bench/training_bench.py
	GLOG_v=3 $(BIN)/python bench/kink_bench.py
	GLOG_v=3 $(BIN)/python bench/graph_recompute_bench.py
	GLOG_v=3 $(BIN)/python bench/weights_bench.py
	GLOG_v=3 $(BIN)/python bench/weights_monai_bench.py
	GLOG_v=3 $(BIN)/python bench/localise_bench.py
	GLOG_v=3 $(BIN)/python bench/user_weights_bench.py
	GLOG_v=3 $(BIN)/python bench/peers_bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
