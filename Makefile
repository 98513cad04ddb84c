# mdq: make run (demo lake + server), make test (vet, gofmt, every test), make bench.
PORT ?= 8080
DATA ?= ./data
SCALE ?= small
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO ?= go
SHELL := /bin/bash
export CGO_ENABLED = 1
# duckdb_arrow: the driver's Arrow interface, through which ingest hands staged rows to
# DuckDB (ingest/stage_arrow.go; without it they go through CSV files, docs/INGEST.md).
export GOFLAGS += -tags=duckdb_arrow

.PHONY: build run test vet fmt-check bench bench-scale bench-oneday test-memory-limit test-point-in-time lint mcp-check clean

build:
	$(GO) build -ldflags "-X main.Version=$(VERSION)" -o bin/mdq ./cmd/mdq

# run: build, generate the demo lake on first run, print a development key, serve.
run: build
	@# No lake.json means no complete lake (first run, or an interrupted one): --force
	@# replaces only the lake's table directories and keeps the credentials database.
	@if [ ! -f $(DATA)/lake.json ]; then ./bin/mdq demo --data $(DATA) --scale $(SCALE) --force; fi
	@./bin/mdq dev-key --data $(DATA)
	./bin/mdq serve --data $(DATA) --addr :$(PORT)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# test: every package; the pure-Go concurrent parts (credentials, budget, archive) once
# more under the race detector (the DuckDB-linked packages are too slow under -race).
test: vet fmt-check
	$(GO) test -count=1 -timeout 30m ./...
	@# the staging without the Arrow hand-off (a plain `go build`) too
	GOFLAGS= $(GO) test -count=1 ./ingest/
	$(GO) test -count=1 -race ./ratelimit/ ./archive/ ./lake/

BENCH_LAKE ?= ./data-medium

# bench: benchmarks on the medium demo lake (generated once into $(BENCH_LAKE)).
bench: build
	@if [ ! -f $(BENCH_LAKE)/lake.json ]; then ./bin/mdq demo --data $(BENCH_LAKE) --scale medium --seed 1 --end 2026-11-20T12:00:00Z --force; fi
	MDQ_BENCH_LAKE=$(abspath $(BENCH_LAKE)) $(GO) test -run '^$$' -bench . -benchtime 2s ./...

# test-point-in-time: the point-in-time property test alone (every route, full lake
# against `mdq lake cut` at five clocks); make test runs it too.
test-point-in-time:
	$(GO) test -count=1 -run TestPointInTimeEveryRoute -v -timeout 60m ./cmd/mdq/cli/

# test-memory-limit: every route on the medium demo lake (generated once into
# $(BENCH_LAKE)) under a 1 GiB budget answers the same bytes as under the default one.
MEMORY_TEST_LIMIT ?= 1073741824
test-memory-limit: build
	@if [ ! -f $(BENCH_LAKE)/lake.json ]; then ./bin/mdq demo --data $(BENCH_LAKE) --scale medium --seed 1 --end 2026-11-20T12:00:00Z --force; fi
	@# the test's status, not grep's, is the target's (a failing run exited 0 before)
	set -o pipefail; MDQ_MEMORY_TEST_LAKE=$(abspath $(BENCH_LAKE)) MDQ_MEMORY_TEST_LIMIT=$(MEMORY_TEST_LIMIT) MDQ_MEMORY_TEST_CLOCK=2026-11-20T12:00:00Z \
	  $(GO) test -count=1 -run TestSmallMemoryLimitAnswersEveryRoute -v -timeout 90m ./handlers/ | grep -Ev '^(=== |[0-9/]+ [0-9:]+ INFO)'

SCALE_LAKES ?= ./data-scale
SCALES ?= tiny small medium large
SCALE_SECONDS ?= 60
SCALE_ROUTES = Benchmark(ScaleConcurrent16|Predmkt(Leaderboard|Events50k|SmartMoney|OHLCV|Markets)|Perpdex(Leaderboard|Builders|TradesSummary|PositionsMatch|Liquidations)|Onchain(Screener|Discover|Wallet|Counterparties|TraceDepth5Width10|LabelsBatch100|Holders))$$

# bench-scale: the scale figures of docs/PERFORMANCE.md for each of $(SCALES): the demo
# lake is generated once into $(SCALE_LAKES)/<scale> (large: about 25 minutes and 15 GB),
# then the real binary's start-to-ready, peak RSS and 16-connection load
# (BenchmarkServeScale, RSS curve in $(SCALE_LAKES)/<scale>.rss.csv), the legs'
# full-versus-one-day publication, and each route's p99 beside its SQL run directly.
bench-scale: build
	@for s in $(SCALES); do if [ ! -f $(SCALE_LAKES)/$$s/lake.json ]; then \
	  ./bin/mdq demo --data $(SCALE_LAKES)/$$s --scale $$s --seed 1 --end 2026-11-20T12:00:00Z --force || exit 1; fi; done
	@set -o pipefail; for s in $(SCALES); do echo "== $$s"; lake=$(abspath $(SCALE_LAKES))/$$s; \
	  MDQ_BENCH_LAKE=$$lake MDQ_SCALE_SECONDS=$(SCALE_SECONDS) MDQ_SCALE_CURVE=$$lake.rss.csv \
	    $(GO) test -run '^$$' -bench BenchmarkServeScale -benchtime 1x -timeout 60m ./cmd/mdq/cli/ | grep -E '^Benchmark|^ok|FAIL' || exit 1; \
	  MDQ_BENCH_LAKE=$$lake $(GO) test -run '^$$' -bench BenchmarkOnchainLegsPublication -benchtime 1x -timeout 60m ./query/ | grep -E '^Benchmark|^ok|FAIL' || exit 1; \
	  MDQ_BENCH_LAKE=$$lake $(GO) test -run '^$$' -bench '$(SCALE_ROUTES)' -benchtime 30x -timeout 60m ./handlers/ | grep -E '^Benchmark|^ok|FAIL' || exit 1; \
	done

# bench-oneday: the publication of one more day against a full rebuild, on
# $(ONEDAY_LAKE) (default the large scale lake of bench-scale, which must exist), with
# the real binary on a hard-linked copy beside the lake (removed afterwards; the lake's
# files are never written): reports each step's CPU, wall time and peak RSS and their
# ratios (BenchmarkRebuildOneDay). About 25 minutes at large.
ONEDAY_LAKE ?= $(SCALE_LAKES)/large
bench-oneday:
	@# the benchmark's status, not grep's, is the target's
	set -o pipefail; MDQ_BENCH_LAKE=$(abspath $(ONEDAY_LAKE)) $(GO) test -run '^$$' -bench BenchmarkRebuildOneDay -benchtime 1x -timeout 90m ./cmd/mdq/cli/ | grep -E '^Benchmark|^ok|FAIL|moved aside'

# lint: the generated OpenAPI document through an independent linter (Redocly, clean:
# no error and no warning), then the MCP Inspector CLI against a server it starts on
# loopback over a tiny demo lake: it lists the tools (with its schema-portability
# check) and calls one. `make mcp-check MCP_URL=... MCP_KEY=...` runs the Inspector
# part against a server you already run (make run).
REDOCLY ?= @redocly/cli@2.77.0
INSPECTOR ?= @modelcontextprotocol/inspector@2.12.0
LINT_DIR ?= $(CURDIR)/.lint
LINT_PORT ?= 18089
MCP_URL ?= http://127.0.0.1:$(PORT)/mcp
MCP_KEY ?=

lint: build
	@mkdir -p $(LINT_DIR)
	./bin/mdq openapi > $(LINT_DIR)/openapi.json
	@npx -y $(REDOCLY) lint $(LINT_DIR)/openapi.json > $(LINT_DIR)/redocly.log 2>&1; rc=$$?; \
	grep -v 'npm warn' $(LINT_DIR)/redocly.log | sed -n '/validating/,$$p'; \
	if [ $$rc -ne 0 ] || grep -Eq 'You have [0-9]+ warning' $(LINT_DIR)/redocly.log; then echo "lint: the OpenAPI document is not clean"; exit 1; fi
	@if [ ! -f $(LINT_DIR)/data/lake.json ]; then ./bin/mdq demo --data $(LINT_DIR)/data --scale tiny --end 2026-11-20T12:00:00Z --force >/dev/null; fi
	@set -e; key=$$(./bin/mdq dev-key --new --data $(LINT_DIR)/data | tail -1); \
	./bin/mdq serve --data $(LINT_DIR)/data --addr 127.0.0.1:$(LINT_PORT) --clock 2026-11-20T12:00:00Z > $(LINT_DIR)/serve.log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 1 60); do curl -fs http://127.0.0.1:$(LINT_PORT)/healthz >/dev/null 2>&1 && break; sleep 0.5; done; \
	$(MAKE) --no-print-directory mcp-check MCP_URL=http://127.0.0.1:$(LINT_PORT)/mcp MCP_KEY=$$key

mcp-check:
	@set -e; out=$(LINT_DIR); mkdir -p $$out; \
	npx -y $(INSPECTOR) --cli $(MCP_URL) --transport http --header "X-API-Key: $(MCP_KEY)" --method tools/list --strict > $$out/tools.json 2> $$out/inspector.log \
	  || { grep -v 'npm warn' $$out/inspector.log; echo "mcp-check: tools/list failed"; exit 1; }; \
	if grep -Eq '^(Warning|Error)' $$out/inspector.log; then grep -v 'npm warn' $$out/inspector.log; echo "mcp-check: tool schemas are not portable"; exit 1; fi; \
	n=$$(grep -c '"name": "[a-z_]*"' $$out/tools.json || true); \
	tool=$$(grep -o '"name": "predmkt_leaderboard"' $$out/tools.json | head -1 | cut -d'"' -f4); \
	if [ -z "$$tool" ]; then tool=$$(grep -o '"name": "[a-z_]*"' $$out/tools.json | head -1 | cut -d'"' -f4); fi; \
	if [ -z "$$tool" ]; then echo "mcp-check: the Inspector lists no tool"; exit 1; fi; \
	npx -y $(INSPECTOR) --cli $(MCP_URL) --transport http --header "X-API-Key: $(MCP_KEY)" --method tools/call --tool-name $$tool > $$out/call.json 2>> $$out/inspector.log \
	  || { grep -v 'npm warn' $$out/inspector.log; echo "mcp-check: tools/call $$tool failed"; exit 1; }; \
	if grep -q '"isError": true' $$out/call.json; then cat $$out/call.json; echo "mcp-check: $$tool answered a tool error"; exit 1; fi; \
	echo "mcp-check: the MCP Inspector listed the tools of $(MCP_URL) and called $$tool"

clean:
	rm -rf bin
