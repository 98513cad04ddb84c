package predmkt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time: on a shared machine the wall
// clock measures the neighbours too, so the benchmarks report per CPU-second as well.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds msgs/s and MB/s over the wall clock and per CPU-second.
func report(b *testing.B, msgs, bytes int64, wall, cpu time.Duration) {
	b.ReportMetric(float64(msgs)/wall.Seconds(), "msgs/s")
	b.ReportMetric(float64(bytes)/wall.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(msgs)/cpu.Seconds(), "msgs/cpu-s")
	b.ReportMetric(float64(bytes)/cpu.Seconds()/1e6, "MB/cpu-s")
}

// benchCapture writes a capture of n messages over 50 tokens in the shape of the live
// channel: a book per token every few hundred messages, price_change deltas (the
// 2025-09 schema, two changes a frame), trades; one frame a line after the receive time.
func benchCapture(b *testing.B, n int) (string, int64) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	p := filepath.Join(b.TempDir(), "capture.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	ts := int64(1773050400000)
	msgs := 0
	for msgs < n {
		tok := fmt.Sprintf("%d", 1_000_000+rng.IntN(50))
		ts += int64(rng.IntN(3))
		switch r := rng.IntN(100); {
		case r < 1:
			sb.Reset()
			for i := 0; i < 20; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"price":"0.%02d","size":"%d.%02d"}`, 1+i, rng.IntN(10000), rng.IntN(100))
			}
			bids := sb.String()
			fmt.Fprintf(f, `%d {"event_type":"book","asset_id":"%s","market":"0x01","timestamp":"%d","hash":"ab","bids":[%s],"asks":[%s],"tick_size":"0.01"}`+"\n",
				ts+3, tok, ts, bids, strings.ReplaceAll(bids, `"0.`, `"0.5`))
			msgs++
		case r < 85:
			fmt.Fprintf(f, `%d {"event_type":"price_change","market":"0x01","timestamp":"%d","price_changes":[{"asset_id":"%s","price":"0.%02d","side":"BUY","size":"%d","hash":"x","best_bid":"0.48","best_ask":"0.52"},{"asset_id":"%s","price":"0.5%d","side":"SELL","size":"%d","hash":"y","best_bid":"0.48","best_ask":"0.52"}]}`+"\n",
				ts+2, ts, tok, 1+rng.IntN(48), rng.IntN(5000), tok, rng.IntN(10), rng.IntN(5000))
			msgs++
		default:
			fmt.Fprintf(f, `%d {"event_type":"last_trade_price","asset_id":"%s","market":"0x01","timestamp":"%d","price":"0.5%d","side":"BUY","size":"%d.5","fee_rate_bps":"0"}`+"\n",
				ts+2, tok, ts, rng.IntN(10), 1+rng.IntN(100))
			msgs++
		}
	}
	st, _ := f.Stat()
	f.Close()
	return p, st.Size()
}

// BenchmarkTapeParse: market-channel lines to rows, without the lake (the parsing
// share of an ingest).
func BenchmarkTapeParse(b *testing.B) {
	const n = 200_000
	p, size := benchCapture(b, n)
	data, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	b.ResetTimer()
	start, c0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		tp := NewTape()
		for _, l := range lines {
			if err := tp.Line([]byte(l), func(*Event) {}); err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, int64(n*b.N), size*int64(b.N), time.Since(start), cpuTime()-c0)
}

// BenchmarkIngestMarketChannel: a whole `mdq ingest predmkt` of a capture into an
// empty lake (validation pass, staging, merge, Parquet write), as Ingest runs it. Beside
// the totals, the CPU and wall seconds of each phase per run: reading and staging
// (parse, build rows, write the bulk files) and the merge (DuckDB reads the bulk
// files, sorts, writes Parquet).
func BenchmarkIngestMarketChannel(b *testing.B) {
	const n = 500_000
	p, size := benchCapture(b, n)
	b.ResetTimer()
	var took, cpu, stageCPU, stageWall time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		ctx := context.Background()
		start, c0 := time.Now(), cpuTime()
		l, err := NewLoader(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.File(input{name: p, path: p, kind: KindMarketChannel}, false); err != nil || len(l.res.Bad) > 0 {
			b.Fatal(err, l.res.Bad)
		}
		stageWall += time.Since(start)
		stageCPU += cpuTime() - c0
		if err := l.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		l.Close()
		took += time.Since(start)
		cpu += cpuTime() - c0
	}
	report(b, int64(n*b.N), size*int64(b.N), took, cpu)
	phases(b, stageWall, stageCPU, took-stageWall, cpu-stageCPU)
}

// phases reports the CPU and wall seconds per run of the staging and merging phases.
func phases(b *testing.B, stageWall, stageCPU, mergeWall, mergeCPU time.Duration) {
	n := float64(b.N)
	b.ReportMetric(stageCPU.Seconds()/n, "stage-cpu-s")
	b.ReportMetric(stageWall.Seconds()/n, "stage-wall-s")
	b.ReportMetric(mergeCPU.Seconds()/n, "merge-cpu-s")
	b.ReportMetric(mergeWall.Seconds()/n, "merge-wall-s")
}

// BenchmarkIngestFills: Data API fill records (matched against no tape: the fill side
// alone).
func BenchmarkIngestFills(b *testing.B) {
	const n = 200_000
	p := filepath.Join(b.TempDir(), "fills.jsonl")
	f, _ := os.Create(p)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		fmt.Fprintf(f, `{"proxyWallet":"0x%040x","side":"BUY","asset":"%d","conditionId":"0x%064x","size":%d.5,"price":0.%02d,"timestamp":%d,"outcome":"Yes","outcomeIndex":0,"name":"","pseudonym":"","transactionHash":"0x%064x"}`+"\n",
			rng.IntN(5000), 1_000_000+rng.IntN(50), rng.IntN(25), rng.IntN(1000), 1+rng.IntN(98), 1773050400+i/10, i)
	}
	st, _ := f.Stat()
	f.Close()
	b.ResetTimer()
	var took, cpu time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		start, c0 := time.Now(), cpuTime()
		if _, err := Ingest(context.Background(), dir, []string{p}, Options{}); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		cpu += cpuTime() - c0
	}
	report(b, int64(n*b.N), st.Size()*int64(b.N), took, cpu)
}

// BenchmarkIngestMarketChannelCores: the ingest of BenchmarkIngestMarketChannel with
// GOMAXPROCS 1 and 2 in turn (the merge's DuckDB threads follow it), interleaved run
// by run so that both see the same neighbours: wall seconds and CPU seconds of each,
// by phase, and the ratios of one core's wall time to two cores'. On an idle 2-core
// machine the wall ratio is what the second core buys; on a shared one it is a lower
// bound (the second core is not always free).
func BenchmarkIngestMarketChannelCores(b *testing.B) {
	const n = 500_000
	p, _ := benchCapture(b, n)
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	type acc struct{ wall, cpu, stageWall, stageCPU, loaderCPU time.Duration }
	var runs [3]acc // by GOMAXPROCS
	// The loader's own goroutine (reading, applying, staging; the decoding is on
	// another goroutine since decodeLines) stays on this thread, whose CPU time is the
	// staging's serial floor: on two free cores the staging cannot take less wall time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			dir := b.TempDir()
			ctx := context.Background()
			start, c0, t0 := time.Now(), cpuTime(), threadCPU()
			l, err := NewLoader(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.File(input{name: p, path: p, kind: KindMarketChannel}, false); err != nil || len(l.res.Bad) > 0 {
				b.Fatal(err, l.res.Bad)
			}
			a := &runs[procs]
			a.stageWall += time.Since(start)
			a.stageCPU += cpuTime() - c0
			a.loaderCPU += threadCPU() - t0
			if err := l.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			l.Close()
			a.wall += time.Since(start)
			a.cpu += cpuTime() - c0
		}
	}
	k := float64(b.N)
	for _, procs := range []int{1, 2} {
		a := runs[procs]
		sfx := fmt.Sprintf("-%dcore", procs)
		b.ReportMetric(float64(n)*k/a.wall.Seconds(), "msgs/s"+sfx)
		b.ReportMetric(float64(n)*k/a.cpu.Seconds(), "msgs/cpu-s"+sfx)
		b.ReportMetric(a.stageWall.Seconds()/k, "stage-wall-s"+sfx)
		b.ReportMetric(a.stageCPU.Seconds()/k, "stage-cpu-s"+sfx)
		b.ReportMetric(a.loaderCPU.Seconds()/k, "stage-loader-cpu-s"+sfx)
		b.ReportMetric((a.wall-a.stageWall).Seconds()/k, "merge-wall-s"+sfx)
		b.ReportMetric((a.cpu-a.stageCPU).Seconds()/k, "merge-cpu-s"+sfx)
	}
	b.ReportMetric(runs[1].wall.Seconds()/runs[2].wall.Seconds(), "wall-1core/2core")
	b.ReportMetric(runs[1].stageWall.Seconds()/runs[2].stageWall.Seconds(), "stage-wall-1core/2core")
}

// threadCPU is the CPU time of the calling thread (user plus system).
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	syscall.Getrusage(rusageThread, &ru) //nolint:errcheck
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
