package perpdex

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"mdq/ingest"
	"mdq/lake"
)

// nodeFile writes a node fill file of n fills (ten fills per block, two sides per
// trade, some with builder codes), the shape of the venue's node_fills_by_block.
func nodeFile(b testing.TB, n int, compress bool) (string, int64) {
	return nodeFileFrom(b, b.TempDir(), 0, n, compress)
}

// nodeFileFrom writes into dir the node fill file of fills first to first+n of the
// sequence nodeFile begins (so consecutive ranges are consecutive blocks).
func nodeFileFrom(b testing.TB, dir string, first, n int, compress bool) (string, int64) {
	b.Helper()
	var buf bytes.Buffer
	t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := first; i < first+n; i += 10 {
		ms := t0 + int64(i)*50
		fmt.Fprintf(&buf, `{"local_time":"2026-04-01T00:00:00.000000000","block_time":"2026-04-01T00:00:00.000000","block_number":%d,"events":[`, i)
		for j := 0; j < 10 && i+j < first+n; j++ {
			k := i + j
			if j > 0 {
				buf.WriteByte(',')
			}
			side, dir := "B", "Open Long"
			if k%2 == 1 {
				side, dir = "A", "Open Short"
			}
			builder := ""
			if k%5 == 0 {
				builder = `,"builder":"0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","builderFee":"0.012"`
			}
			fmt.Fprintf(&buf, `["0x%040x",{"coin":"BTC","px":"80123.5","sz":"0.01234","side":"%s","time":%d,"startPosition":"-1.41864","dir":"%s","closedPnl":"-0.003753","hash":"0x%064x","oid":%d,"crossed":%v,"fee":"0.021351","tid":%d,"cloid":null,"feeToken":"USDC"%s}]`,
				k%5000, side, ms, dir, k/2, 100000+k, k%2 == 0, 1_000_000+k/2, builder)
		}
		buf.WriteString("]}\n")
	}
	data := buf.Bytes()
	name := filepath.Join(dir, fmt.Sprintf("node_fills_%08d.jsonl", first))
	if compress {
		data = lz4Compress(b, data)
		name += ".lz4"
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return name, int64(buf.Len())
}

// cpuSeconds is the process's user plus system CPU time: on a shared machine the wall
// clock says more about the neighbours than about the code, so the benchmarks also
// report fills per CPU second.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func lz4Compress(b testing.TB, data []byte) []byte {
	b.Helper()
	return lz4Bytes(&testing.T{}, string(data))
}

// BenchmarkNodeFillsParse: parsing node fill lines alone (no lake).
func BenchmarkNodeFillsParse(b *testing.B) {
	const n = 200_000
	name, size := nodeFile(b, n, false)
	b.SetBytes(size)
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for range b.N {
		f, _ := os.Open(name)
		count := 0
		ingest.Lines(f, name, func(_ int, line []byte) error { //nolint:errcheck
			fills, _, err := ParseNodeLine(line)
			count += len(fills)
			return err
		})
		f.Close()
		if count != n {
			b.Fatalf("%d fills", count)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "fills/s")
	b.ReportMetric(float64(n*b.N)/(cpuSeconds()-cpu0), "fills/cpu-s")
}

func benchIngest(b *testing.B, compress bool) {
	const n = 200_000
	name, size := nodeFile(b, n, compress)
	benchIngestFiles(b, []string{name}, n, size)
}

// benchIngestFiles ingests files (n fills, size bytes uncompressed) in one batch per
// run, into an empty lake: parse, stage, merge, tape derived.
func benchIngestFiles(b *testing.B, files []string, n int, size int64) {
	b.SetBytes(size) // uncompressed bytes
	b.ResetTimer()
	cpu0 := cpuSeconds()
	var stageCPU, stageWall, mergeCPU, mergeWall float64
	for range b.N {
		root := b.TempDir()
		ctx := context.Background()
		t0, c0 := time.Now(), cpuSeconds()
		st, err := ingest.NewStage(ctx, root)
		if err != nil {
			b.Fatal(err)
		}
		l, _ := NewLoader(st, Options{})
		for _, name := range files {
			if err := l.File(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
		t1, c1 := time.Now(), cpuSeconds()
		sum, err := l.Finish(ctx, time.Now())
		st.Close()
		if err != nil || sum.Read != int64(n) {
			b.Fatalf("%s %v", sum.String(), err)
		}
		stageCPU += c1 - c0
		stageWall += t1.Sub(t0).Seconds()
		mergeCPU += cpuSeconds() - c1
		mergeWall += time.Since(t1).Seconds()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "fills/s")
	b.ReportMetric(float64(n*b.N)/(cpuSeconds()-cpu0), "fills/cpu-s")
	// Per run: staging (parse, build rows, write the bulk files) and the merges (fills
	// read from the bulk file, sorted, written; the tape derived and written, of which
	// BenchmarkTapeFromFills measures the tape alone).
	k := float64(b.N)
	b.ReportMetric(stageCPU/k, "stage-cpu-s")
	b.ReportMetric(stageWall/k, "stage-wall-s")
	b.ReportMetric(mergeCPU/k, "merge-cpu-s")
	b.ReportMetric(mergeWall/k, "merge-wall-s")
}

// BenchmarkTapeFromFills: the public tape of a day derived from its stored fills
// (200,000 fills, 100,000 trades) and merged into an empty tape partition: the tape's
// share of a node-fills ingest.
func BenchmarkTapeFromFills(b *testing.B) {
	const n = 200_000
	name, _ := nodeFile(b, n, false)
	root := b.TempDir()
	ctx := context.Background()
	st, err := ingest.NewStage(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	l, _ := NewLoader(st, Options{})
	if err := l.File(ctx, name); err != nil {
		b.Fatal(err)
	}
	if _, err := l.Finish(ctx, time.Now()); err != nil {
		b.Fatal(err)
	}
	st.Close()
	dates := l.dates
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuSeconds()
	var trades int64
	for range b.N {
		b.StopTimer()
		old, _ := filepath.Glob(filepath.Join(root, "archive", "venue=perpdex", "date=*", lake.PerpdexTrades.File))
		if len(old) == 0 {
			b.Fatal("no tape was written")
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		st, err := ingest.NewStage(ctx, root)
		if err != nil {
			b.Fatal(err)
		}
		l, _ := NewLoader(st, Options{})
		l.dates = dates
		if _, err := l.Finish(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		trades += l.derived
		st.Close()
	}
	b.ReportMetric(float64(trades)/time.Since(start).Seconds(), "trades/s")
	b.ReportMetric(float64(trades)/(cpuSeconds()-cpu0), "trades/cpu-s")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// BenchmarkNodeFillsIngest: a plain node file into an empty lake (parse, stage,
// merge, tape derived), 200,000 fills.
func BenchmarkNodeFillsIngest(b *testing.B) { benchIngest(b, false) }

// BenchmarkNodeFillsIngestLZ4: the same file LZ4-framed.
func BenchmarkNodeFillsIngestLZ4(b *testing.B) { benchIngest(b, true) }

// BenchmarkNodeFillsIngestDay: a day's batch the way `mdq ingest perpdex DAY/*` loads
// it, 24 hourly node files of 50,000 fills (1.2 million) in one run: the per-run costs
// (opening the stage, the merge's setup, the lake marker) are spread over the day, and
// DuckDB's sort and Parquet writer have a dozen row groups to share between the cores
// instead of two. (The venue's node writes one file per hour.)
func BenchmarkNodeFillsIngestDay(b *testing.B) { benchDay(b, false) }

// BenchmarkNodeFillsIngestDayLZ4: the same day LZ4-framed, as the public bucket holds it.
func BenchmarkNodeFillsIngestDayLZ4(b *testing.B) { benchDay(b, true) }

func benchDay(b *testing.B, compress bool) {
	const hours, perHour = 24, 50_000
	dir := b.TempDir()
	var files []string
	var size int64
	for h := range hours {
		name, sz := nodeFileFrom(b, dir, h*perHour, perHour, compress)
		files = append(files, name)
		size += sz
	}
	benchIngestFiles(b, files, hours*perHour, size)
}

// BenchmarkRecorder1000Users: one full round (fills, funding, ledger and the hourly
// snapshots) for 1,000 users against a local info server without rate limit: the
// recorder's request rate, and its peak resident memory.
func BenchmarkRecorder1000Users(b *testing.B) {
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("0x%040x", i+1)
	}
	t0 := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	fake := &fakeInfo{users: users, t0: t0, now: t0.Add(10 * time.Hour), pageLimit: 2000, noFaults: true}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b.ResetTimer()
	var reqs int64
	for range b.N {
		rec := &Recorder{Root: b.TempDir(), Info: srv.URL + "/info", Users: users, RPM: 1 << 30,
			Now: func() time.Time { return fake.now }}
		if _, err := rec.Cycle(context.Background()); err != nil {
			b.Fatal(err)
		}
		reqs += rec.Requests
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "requests/s")
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
}

// BenchmarkNodeFillsIngestCores: the ingest of BenchmarkNodeFillsIngest with GOMAXPROCS
// 1 and 2 in turn (the merge's DuckDB threads follow it), interleaved run by run so
// that both see the same neighbours: fills per wall and per CPU second of each, by
// phase, the CPU time of the loader's own goroutine while staging (the staging's
// serial floor: parsing runs on another goroutine, formatting the bulk file on a
// third) and the ratio of one core's wall time to two cores'.
func BenchmarkNodeFillsIngestCores(b *testing.B) {
	const n = 200_000
	name, _ := nodeFile(b, n, false)
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	type acc struct{ wall, cpu, stageWall, stageCPU, loaderCPU float64 }
	var runs [3]acc
	b.ResetTimer()
	for range b.N {
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			root := b.TempDir()
			ctx := context.Background()
			t0, c0, l0 := time.Now(), cpuSeconds(), threadSeconds()
			st, err := ingest.NewStage(ctx, root)
			if err != nil {
				b.Fatal(err)
			}
			l, _ := NewLoader(st, Options{})
			if err := l.File(ctx, name); err != nil {
				b.Fatal(err)
			}
			a := &runs[procs]
			a.stageWall += time.Since(t0).Seconds()
			a.stageCPU += cpuSeconds() - c0
			a.loaderCPU += threadSeconds() - l0
			sum, err := l.Finish(ctx, time.Now())
			st.Close()
			if err != nil || sum.Read != n {
				b.Fatalf("%s %v", sum.String(), err)
			}
			a.wall += time.Since(t0).Seconds()
			a.cpu += cpuSeconds() - c0
		}
	}
	k := float64(b.N)
	for _, procs := range []int{1, 2} {
		a := runs[procs]
		sfx := fmt.Sprintf("-%dcore", procs)
		b.ReportMetric(n*k/a.wall, "fills/s"+sfx)
		b.ReportMetric(n*k/a.cpu, "fills/cpu-s"+sfx)
		b.ReportMetric(a.stageWall/k, "stage-wall-s"+sfx)
		b.ReportMetric(a.stageCPU/k, "stage-cpu-s"+sfx)
		b.ReportMetric(a.loaderCPU/k, "stage-loader-cpu-s"+sfx)
		b.ReportMetric((a.wall-a.stageWall)/k, "merge-wall-s"+sfx)
		b.ReportMetric((a.cpu-a.stageCPU)/k, "merge-cpu-s"+sfx)
	}
	b.ReportMetric(runs[1].wall/runs[2].wall, "wall-1core/2core")
}

// threadSeconds is the CPU time of the calling thread (user plus system).
func threadSeconds() float64 {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	syscall.Getrusage(rusageThread, &ru) //nolint:errcheck
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
