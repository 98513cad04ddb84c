# mdq: make run (demo lake + server), make test (vet, gofmt, every test), make bench.
PORT ?= 8080
DATA ?= ./data
SCALE ?= small
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO ?= go
export CGO_ENABLED = 1

.PHONY: build run test vet fmt-check bench lint clean

build:
	$(GO) build -ldflags "-X main.Version=$(VERSION)" -o bin/mdq ./cmd/mdq

# run: build, generate the demo lake on first run, print a development key, serve.
run: build
	@if [ ! -f $(DATA)/lake.json ]; then ./bin/mdq demo --data $(DATA) --scale $(SCALE); fi
	@./bin/mdq dev-key --data $(DATA) 2>/dev/null || true
	./bin/mdq serve --data $(DATA) --addr :$(PORT)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: vet fmt-check
	$(GO) test -count=1 -timeout 30m ./...

BENCH_LAKE ?= ./data-medium

# bench: benchmarks on the medium demo lake (generated once into $(BENCH_LAKE)).
bench: build
	@if [ ! -f $(BENCH_LAKE)/lake.json ]; then ./bin/mdq demo --data $(BENCH_LAKE) --scale medium --seed 1 --end 2026-11-20T12:00:00Z --force; fi
	MDQ_BENCH_LAKE=$(abspath $(BENCH_LAKE)) $(GO) test -run '^$$' -bench . -benchtime 2s ./...

lint:
	@echo "lint: see issue 7 (OpenAPI lint)"

clean:
	rm -rf bin
