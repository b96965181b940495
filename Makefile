# xk6-llmstream — every task a contributor or CI needs. Only Go and make are required.
GO        ?= go
FUZZTIME  ?= 1s
export CGO_ENABLED ?= 0

.PHONY: all k6 llm-sim build llmstream setup test unit e2e k6v2 xk6-lint fuzz-short vet lint types bench bench-calls accuracy accuracy-short accuracy-capacity accuracy-capacity-short bench-capacity memory bench-schedule soak soak-short demo clean

# progress runs a long step and says what it waits for when it goes quiet (go test: a
# line per package, test or example as it finishes); TEST_COUNTS, set by scripts/test.sh,
# collects each step's pass/fail counts for make test's closing summary.
PROGRESS := $(CURDIR)/.cache/tools/progress
COUNTS    = $(if $(TEST_COUNTS),-counts $(TEST_COUNTS))
$(PROGRESS): scripts/progress/main.go
	@mkdir -p $(dir $@)
	$(GO) build -o $@ ./scripts/progress

all: k6 llm-sim llmstream

## k6: the custom k6 binary with k6/x/llmstream compiled in (what xk6 would build).
k6:
	$(GO) build -trimpath -o k6 ./cmd/k6

## llm-sim: the simulated LLM server.
llm-sim:
	$(GO) build -trimpath -o llm-sim ./cmd/llm-sim

## build: k6 and llm-sim with progress lines (a first build of k6 takes minutes), for the demo and the checks.
build: $(PROGRESS)
	@$(PROGRESS) -stage build -hint 'compiling k6 with the extension (minutes on an empty Go cache)' -- $(MAKE) --no-print-directory k6 llm-sim

## llmstream: merges the run records of a test split across k6 instances (docs/distributed.md).
llmstream:
	$(GO) build -trimpath -o llmstream ./cmd/llmstream

## demo: build both, start llm-sim on loopback, run the mixed workload (30 s) with per-category thresholds, stop
## llm-sim; ends with the report (HTML and run record under reports/, or LLM_REPORT_DIR).
demo: build
	DURATION=$${DURATION:-30s} ./scripts/demo.sh

## setup: checks what make test needs besides Go and make (C compiler, Node.js/npm, Chromium, Prometheus); as root
## with apt-get installs what is missing, otherwise names the command to run (scripts/setup.sh, also run by .ci/run).
setup:
	@./scripts/setup.sh

## test: the checks of every change — setup, vet, lint, type-check, unit tests with -race, short fuzzing, end-to-end
## runs of every example, the short accuracy check, the capacity search against queueing truth under Poisson
## arrivals — one after another, then a summary (stages, times, counts). CI
## (.ci/run) then runs the short soak and the k6 v2 build's smoke (make k6v2), which alone takes minutes building
## k6 v2 and would put make test past its 15-minute budget on 2 cores.
test:
	@./scripts/test.sh setup vet lint types unit fuzz-short e2e accuracy-short accuracy-capacity-short

vet: $(PROGRESS)
	@$(PROGRESS) -stage vet $(COUNTS) -- $(GO) vet ./...

## lint: golangci-lint (version pinned here, config in .golangci.yml), installed once into .cache/tools from the Go module proxy;
## a second golangci-lint on the machine (an editor's) is waited for, not an error.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT := $(CURDIR)/.cache/tools/$(GOLANGCI_LINT_VERSION)/golangci-lint
# gosec's paths come before the lint rule: make expands a rule's prerequisites as it reads it.
GOSEC_VERSION ?= v2.30.0
GOSEC := $(CURDIR)/.cache/tools/gosec-$(GOSEC_VERSION)/gosec
lint: $(GOLANGCI_LINT) $(GOSEC) $(PROGRESS)
	@$(PROGRESS) -stage lint $(COUNTS) -hint 'golangci-lint checks every package' -- $(GOLANGCI_LINT) run --allow-serial-runners ./...
	@$(PROGRESS) -stage gosec -hint 'gosec checks every non-test file' -- $(GOSEC) -quiet -exclude-generated ./...

## gosec: the security check of the k6 extension registry (`xk6 lint`), run as it runs it (every rule, every
## non-test file; a finding accepted on purpose carries `#nosec G… -- why`); part of make lint.
gosec: $(GOSEC)
	$(GOSEC) -quiet -exclude-generated ./...

$(GOSEC):
	env GOBIN=$(dir $(GOSEC)) $(GO) install github.com/securego/gosec/v2/cmd/gosec@$(GOSEC_VERSION)

## xk6-lint: the k6 extension registry's grading, `xk6 lint --preset strict` (k6 v1.8.1 for its build and smoke
## checks), with xk6, gosec and govulncheck installed from the Go module proxy into .cache/tools (XK6=… takes an
## xk6 built elsewhere). Not in make test: `vulnerability` needs the Go vulnerability database (vuln.go.dev),
## `versions` a release tag; XK6_LINT_FLAGS='--disable vulnerability,versions' checks the rest offline (docs/lint.md).
XK6_VERSION ?= v1.4.11
GOVULNCHECK_VERSION ?= v1.9.0
XK6 ?= $(CURDIR)/.cache/tools/xk6-$(XK6_VERSION)/xk6
GOVULNCHECK := $(CURDIR)/.cache/tools/govulncheck-$(GOVULNCHECK_VERSION)/govulncheck
XK6_LINT_FLAGS ?=
xk6-lint: $(XK6) $(GOSEC) $(GOVULNCHECK)
	PATH="$(dir $(GOSEC)):$(dir $(GOVULNCHECK)):$$PATH" $(XK6) lint --preset strict -k v1.8.1 $(XK6_LINT_FLAGS) .

$(CURDIR)/.cache/tools/xk6-$(XK6_VERSION)/xk6:
	env GOBIN=$(dir $@) $(GO) install go.k6.io/xk6@$(XK6_VERSION)

$(GOVULNCHECK):
	env GOBIN=$(dir $@) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)

$(GOLANGCI_LINT): | $(PROGRESS)
	@echo "lint: installing golangci-lint $(GOLANGCI_LINT_VERSION) into .cache/tools: go install compiles it from source, about 5 minutes on an empty Go cache (once)"
	@$(PROGRESS) -stage lint-install -hint 'compiling golangci-lint from source (about 5 minutes on an empty Go cache, once)' -- \
	  env GOBIN=$(dir $(GOLANGCI_LINT)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## types: index.d.ts and every example type-checked by TypeScript (checkJs), against k6 v1.8's types (@types/k6 1.x)
## and k6 v2's (@types/k6 2.x, tsconfig.k6v2.json); needs node and npm.
types: node_modules/.package-lock.json $(PROGRESS)
	@$(PROGRESS) -stage types $(COUNTS) -- ./node_modules/.bin/tsc -p tsconfig.json
	@$(PROGRESS) -stage types-k6v2 $(COUNTS) -- ./node_modules/.bin/tsc -p tsconfig.k6v2.json

node_modules/.package-lock.json: package.json package-lock.json | $(PROGRESS)
	@$(PROGRESS) -stage npm -hint 'npm ci installs TypeScript into node_modules' -- npm ci --no-audit --no-fund

## unit: every package but e2e with -race (cgo: needs a C compiler); a line per package as it finishes.
unit: $(PROGRESS)
	@CGO_ENABLED=1 $(PROGRESS) -stage unit -json $(COUNTS) -hint '-race builds take minutes on an empty Go cache' -- \
	  $(GO) test -json -race -count=1 -timeout 15m $$($(GO) list ./... | grep -v /e2e)

## e2e: builds ./k6 and ./llm-sim, runs every example against llm-sim, checks a violated threshold fails the run;
## a line per test and per example as it finishes. Six tests at a time: most of an e2e test is k6 waiting on
## llm-sim's simulated time, not CPU (on 2 cores the stage averages under one busy core; six took 4m27s-4m36s where
## four took 5m32s, eight no less and late sends); the tests that measure timing are not parallel and run alone first. The
## capacity search held to a queue's simulated truth end to end runs alone, after e2e (make accuracy-capacity-short,
## Poisson and bursty arrivals; make accuracy-capacity, all three arrival processes, half an hour): at the boundary a busy
## machine's late steps are load. make unit holds its decision rule to the same truths on a fake clock.
## The tests run ./k6 as make build leaves it (LLMSTREAM_E2E_K6, unless set), so make test links k6 once for e2e
## and accuracy-short.
E2E_PARALLEL ?= 6
e2e: build
	@LLMSTREAM_E2E_K6=$${LLMSTREAM_E2E_K6:-$(CURDIR)/k6} $(PROGRESS) -stage e2e -json -each subtest $(COUNTS) \
	  -hint 'the first test builds llm-sim' -- $(GO) test -json -count=1 -parallel $(E2E_PARALLEL) -timeout 15m ./e2e/...

## k6v2: the module ported to k6 v2 in a scratch directory (imports rewritten, go.k6.io/k6/v2 replaced by a
## local source tree: K6V2_SRC, default ../shared/k6-v2.2.0), k6 built from it and the e2e smoke run with it
## (quickstart, baseline report, failing threshold, web dashboard tab). Skipped, saying so, without the tree.
k6v2:
	./scripts/k6v2.sh

## fuzz-short: each fuzz target for $(FUZZTIME) (crashers become fixtures under testdata/fuzz). Short on purpose: make
## test runs every target (two dozen) one after another, and each run starts from the corpus earlier runs kept in the
## Go cache, so the short runs add up; a long hunt is `go test -fuzz=FuzzX -fuzztime=10m ./internal/x`.
fuzz-short: $(PROGRESS)
	@$(PROGRESS) -stage fuzz -hint 'a package is compiled with fuzzing instrumentation before its first target runs' -- ./scripts/fuzz.sh $(FUZZTIME)

## bench: hot-path Go benchmarks and the loopback k6-vs-bare-client comparison (numbers go in BENCHMARKS.md).
bench: k6 llm-sim
	./scripts/bench.sh

## bench-calls: the per-call cost: calls/s and CPU per call at 50 VUs (4-token streamed answers; embeddings at batch 1),
## the module (at its default gapSamples 'sampled', and 'event') vs k6's own http.post (and awaited http.asyncRequest)
## of the same request vs a bare Go client, 9 interleaved rounds of 6 s, then CPU profiles of a default chat run and
## of an http.post run, three turns of 10 s each, side by side in µs per call (about 13 minutes; K6_BASE=an earlier k6 build adds it to each round).
bench-calls: k6 llm-sim
	BENCH_PARTS=calls ./scripts/bench.sh

## accuracy: the module's TTFT / gap error against llm-sim's ground truth, bare Go client as the floor,
## at 1, 50, 200, 500 and 1 000 streams, staggered and uniform answers (about 12 minutes; knobs in scripts/accuracy.sh).
accuracy: k6 llm-sim
	./scripts/accuracy.sh

## accuracy-short: the CI variant (1 and 50 streams, 3 s each, 20–40-token answers): every answer
## joined, errors finite and positive, no more connections than streams (reuse); a verdict line per
## client, shape and level (the tables: make accuracy).
accuracy-short: build
	@$(PROGRESS) -stage accuracy-short -hint 'each check runs llm-sim and a client for 3 s' -- env CHECK=1 CHECK_REUSE=1 BRIEF=1 \
	  LEVELS=1,50 DURATION=3s DECODE_MS=10 MIN_TOKENS=20 MAX_TOKENS=40 ./scripts/accuracy.sh

## bench-capacity: BENCHMARKS.md's capacity table: Capacity.search's decision rule against two simulated queues
## (G/D/4) under constant, Poisson and bursty arrivals, 20 s and 8 s windows, 10 seeds each; answer vs the queue's
## simulated boundary and the search's length (fake clock: about a minute of CPU, no k6).
bench-capacity:
	$(GO) test -count=1 -run TestCapacityTruthTable -v ./internal/capacity/ -args -capacity.table

## accuracy-capacity: the capacity search in k6 against llm-sim set up as 4 slots of a fixed 200 ms call, constant,
## Poisson and bursty arrivals one after another, each answer held to the same queue simulated, then plain runs at
## the answer (the objective holds) and 30 % above it (it does not): about 35 minutes, bursty arrivals' search the
## longest, then make accuracy-capacity-short's checks (about three minutes). One at a time:
## at the boundary a few percent slower a llm-sim step is a few percent more load, and three searches at once slow
## it. CAPACITY_TRUTH_WINDOW=20s runs the default window.
accuracy-capacity: k6
	LLMSTREAM_CAPACITY_TRUTH=1 LLMSTREAM_E2E_K6=$(CURDIR)/k6 $(GO) test -count=1 -parallel 1 -timeout 60m -run '^(TestCapacityAgainstQueueingTruth|TestQuickCapacityAgainstQueueingTruth)$$' -v ./e2e/

## accuracy-capacity-short: make test's last stage, alone on the machine: the capacity search in k6 under Poisson
## arrivals (its default; llm-sim as 16 slots of a fixed 200 ms call, TTFT p95<200ms) and under bursty ones (gamma,
## cv 2; 32 slots, p95<400ms), side by side, 5 s windows; each answer held to the boundary of the same queue
## simulated, then plain runs at the answer (the objective not shown broken) and 30 % above it (shown broken), judged
## by thousands of runs of their length simulated. About three minutes; it prints the answers, the truths and every window.
accuracy-capacity-short: build
	@LLMSTREAM_CAPACITY_TRUTH=1 LLMSTREAM_E2E_K6=$${LLMSTREAM_E2E_K6:-$(CURDIR)/k6} $(PROGRESS) -stage accuracy-capacity-short \
	  -json -each subtest -logs $(COUNTS) -hint 'two capacity searches side by side, then their plain runs' -- \
	  $(GO) test -json -count=1 -timeout 10m -run '^TestQuickCapacityAgainstQueueingTruth$$' ./e2e/

## bench-schedule: dispatch delay p50/p99 of the Schedule vs k6's constant-arrival-rate at 100 / 500 / 1 000 req/s
## (zero-delay llm-sim), and k6's memory with a 1-million-row Mooncake trace loaded (made in a temp dir).
bench-schedule: k6 llm-sim
	./scripts/schedule-bench.sh

## memory: k6's live heap per in-flight stream at 100 / 1 000 / 5 000 streams held open (llm-sim's slow profile).
memory: k6 llm-sim
	./scripts/memory.sh

## soak-short: 2.5 minutes at a high token rate (50 streams of 1000 tokens, zero-delay llm-sim) with the
## module's default options. k6's live heap is split by the heap profile's stacks into k6's Trend sample
## store (k6 keeps 8 B per Trend sample for its summary: it grows with every call whatever the client does)
## and everything else, judged after 30 s of warm-up: everything else must grow slower than 5 MB/min (a
## client keeping 8 B per token grows it 8 B x tokens/s, past the bound from under 11k tokens/s, far below
## what even a loaded machine streams here; 1 B per token fails from 90k tokens/s, ~500 B per call from 170
## calls/s), and the Trend store by at most 0.5 B per output token (the default keeps about 20 samples per
## call of 1000 tokens plus the capped gaps, 8 B each; gapSamples 'event', one sample per token, is 8 B and
## more).
soak-short: k6 llm-sim
	SOAK_DURATION=150s SOAK_EVERY=5s SOAK_VUS=50 SOAK_FAULT_RATE=0 SOAK_GAP_SAMPLES=$${SOAK_GAP_SAMPLES:-default} \
	  SOAK_MAX_TOKENS=1000 SOAK_DECODE_MS=0 SOAK_MAX_HEAP_GROWTH=5 SOAK_MAX_TREND_PER_TOKEN=0.5 SOAK_WARMUP=30s \
	  ./scripts/soak.sh

## soak: 30 minutes at a high token rate with the default options (50 streams of 1000 tokens, zero-delay llm-sim,
## 1 % faults); RSS, live heap (and its split) and goroutines sampled every 30 s; after 2 minutes, fails when
## everything but k6's Trend sample store grows faster than 2 MB/min (0.35 B per token at 100k tokens/s; its
## noise shrinks with the run's length) or the store by more than 0.5 B per output token. Any SOAK_* variable
## given overrides (knobs in scripts/soak.sh); not in CI.
soak: k6 llm-sim
	SOAK_DURATION=$${SOAK_DURATION:-30m} SOAK_EVERY=$${SOAK_EVERY:-30s} SOAK_VUS=$${SOAK_VUS:-50} \
	  SOAK_GAP_SAMPLES=$${SOAK_GAP_SAMPLES:-default} SOAK_MAX_TOKENS=$${SOAK_MAX_TOKENS:-1000} \
	  SOAK_DECODE_MS=$${SOAK_DECODE_MS:-0} SOAK_MAX_HEAP_GROWTH=$${SOAK_MAX_HEAP_GROWTH:-2} \
	  SOAK_MAX_TREND_PER_TOKEN=$${SOAK_MAX_TREND_PER_TOKEN:-0.5} SOAK_WARMUP=$${SOAK_WARMUP:-2m} ./scripts/soak.sh

clean:
	rm -rf k6 llm-sim node_modules
