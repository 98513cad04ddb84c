//go:build unix

package onchain

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"mdq/internal/evmnode"
)

// writeETLBench writes an export of n transfers over n/20 blocks and 50 tokens.
func writeETLBench(b *testing.B, dir string, n int) {
	b.Helper()
	f, _ := os.Create(filepath.Join(dir, "token_transfers.csv"))
	w := bufio.NewWriter(f)
	w.WriteString("token_address,from_address,to_address,value,transaction_hash,log_index,block_number\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "0x%040x,0x%040x,0x%040x,%d%018d,0x%064x,%d,%d\n", 1+i%50, 1000+i%997, 5000+i%1009, i%7, i, i, i%20, 20_000_000+i/20)
	}
	w.Flush()
	f.Close()
	f, _ = os.Create(filepath.Join(dir, "blocks.csv"))
	w = bufio.NewWriter(f)
	w.WriteString("number,timestamp\n")
	for i := 0; i < n/20+1; i++ {
		fmt.Fprintf(w, "%d,%d\n", 20_000_000+i, 1_700_000_000+i*12)
	}
	w.Flush()
	f.Close()
	f, _ = os.Create(filepath.Join(dir, "tokens.csv"))
	fmt.Fprintln(f, "address,symbol,name,decimals")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(f, "0x%040x,T%d,Token %d,18\n", i, i, i)
	}
	f.Close()
}

// BenchmarkETLIngest: transfers per second from Ethereum-ETL CSV into an empty lake
// (parse, stage, merge into date partitions), reported as transfers/s.
func BenchmarkETLIngest(b *testing.B) {
	const n = 500_000
	src := b.TempDir()
	writeETLBench(b, src, n)
	files, err := FindETL([]string{src})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime()
	var stageCPU, mergeCPU, stageWall, mergeWall time.Duration
	for i := 0; i < b.N; i++ {
		root := filepath.Join(b.TempDir(), "lake")
		t0, c0 := time.Now(), cpuTime()
		l, err := NewLoader(ctx, root, "ethereum")
		if err != nil {
			b.Fatal(err)
		}
		if err := LoadETL(ctx, l, files, Options{}); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuTime()
		if err := l.Commit(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		l.Close()
		stageCPU += c1 - c0
		stageWall += t1.Sub(t0)
		mergeCPU += cpuTime() - c1
		mergeWall += time.Since(t1)
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "transfers/s")
	// Per CPU-second of the whole process (Go and DuckDB threads): what an idle
	// machine gets per core, whatever other processes take from this one.
	b.ReportMetric(float64(n*b.N)/(cpuTime()-cpu0).Seconds(), "transfers/cpu-s")
	// Per run: staging (CSV parsed, rows built, bulk files written) and the merge.
	k := float64(b.N)
	b.ReportMetric(stageCPU.Seconds()/k, "stage-cpu-s")
	b.ReportMetric(stageWall.Seconds()/k, "stage-wall-s")
	b.ReportMetric(mergeCPU.Seconds()/k, "merge-cpu-s")
	b.ReportMetric(mergeWall.Seconds()/k, "merge-wall-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRPCIngest: transfers per second from a JSON-RPC node on loopback (20
// transfers a block), and the requests the loader makes per 1,000 blocks.
func BenchmarkRPCIngest(b *testing.B) {
	const blocks = 5000
	node := evmnode.New(1000+blocks+100, linearTime)
	node.Tokens[hexAddr('c', 1)] = evmnode.Token{Decimals: 18, Symbol: "T", Name: "T"}
	for blk := uint64(1000); blk < 1000+blocks; blk++ {
		for i := 0; i < 20; i++ {
			node.AddLogs(blk, evmnode.Transfer(hexAddr('c', 1), hexAddr('a', i), hexAddr('b', int(blk)), "123456789012345678", fmt.Sprintf("0x%060x%04x", blk, i), uint64(i)))
		}
	}
	url := node.Start(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	var reqs int64
	for i := 0; i < b.N; i++ {
		root := filepath.Join(b.TempDir(), "lake")
		l, err := NewLoader(ctx, root, "ethereum")
		if err != nil {
			b.Fatal(err)
		}
		c := NewClient(url)
		l.Meta = c.TokenMeta
		if err := LoadRPC(ctx, l, c, 1000, 1000+blocks-1, nil); err != nil {
			b.Fatal(err)
		}
		if err := l.Commit(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		l.Close()
		reqs += c.Requests()
	}
	b.ReportMetric(float64(blocks*20*b.N)/time.Since(start).Seconds(), "transfers/s")
	b.ReportMetric(float64(reqs)/float64(b.N)/blocks*1000, "requests/1000blocks")
}
