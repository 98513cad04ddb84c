package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// BenchmarkServeScale runs the real binary the way an operator does, over
// MDQ_BENCH_LAKE (tiny by default) with --clock at the lake's end: it reports the
// seconds from process start to /readyz 200 (derived tables already published: no
// history is recomputed), then drives a mixed load with 16 connections for
// MDQ_SCALE_SECONDS (default 30) while sampling the process's resident set every
// second, and reports the peak RSS, requests per second and errors. With
// MDQ_SCALE_CURVE=FILE it writes the RSS curve (seconds since start, MB) as CSV.
// MDQ_SCALE_MEMORY passes --memory-limit; MDQ_SCALE_LOG=FILE keeps the server's log;
// MDQ_SCALE_ARGS adds serve flags (e.g. --log-level debug). Bounded in time; binds loopback only.
func BenchmarkServeScale(b *testing.B) {
	dir := testlake.Bench(b)
	secs := 30
	if s := os.Getenv("MDQ_SCALE_SECONDS"); s != "" {
		secs, _ = strconv.Atoi(s)
	}
	end := testlake.BenchNow(b).Format(time.RFC3339)
	for b.Loop() {
		keyOut, err := exec.Command(mdqBinary(b), "dev-key", "--new", "--data", dir).Output()
		if err != nil {
			b.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(keyOut)), "\n")
		key := strings.TrimSpace(lines[len(lines)-1])
		var stderr bytes.Buffer
		// The load is far above SPEC's hourly budget; the budget is not what is measured.
		extra := []string{"--clock", end, "--hourly-limit", "1000000000"}
		if m := os.Getenv("MDQ_SCALE_MEMORY"); m != "" {
			extra = append(extra, "--memory-limit", m)
		}
		extra = append(extra, strings.Fields(os.Getenv("MDQ_SCALE_ARGS"))...)
		start := time.Now()
		cmd, base := startServeArgs(b, dir, &stderr, extra...)
		pid := cmd.Process.Pid
		var curve []string
		sample := func() float64 {
			mb := rssMB(pid)
			curve = append(curve, fmt.Sprintf("%.1f,%.0f", time.Since(start).Seconds(), mb))
			return mb
		}
		deadline := time.Now().Add(10 * time.Minute)
		var ready time.Duration
		for {
			resp, err := http.Get(base + "/readyz")
			if err == nil {
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ready = time.Since(start)
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("not ready after 10 minutes\n%s", stderr.String())
			}
			sample()
			time.Sleep(100 * time.Millisecond)
		}
		paths := []string{
			"/v1/predmkt/leaderboard?limit=20", "/v1/predmkt/leaderboard?window=7d&sort=volume_24h",
			"/v1/predmkt/smart_money", "/v1/predmkt/markets",
			"/v1/perpdex/leaderboard", "/v1/perpdex/builders", "/v1/perpdex/liquidations?limit=100",
			"/v1/onchain/tokens/screener?chain=ethereum", "/v1/onchain/wallets/discover",
			"/v1/onchain/tokens/screener?chain=base&window=7d",
		}
		var n, bad atomic.Int64
		// Each failure is kept (route, status or error, elapsed) so a run that counts
		// errors also says which route failed and how, and each route's slowest
		// answer is reported beside it.
		var mu sync.Mutex
		var failures []string
		slowest := map[string]time.Duration{}
		note := func(path string, took time.Duration, fail string) {
			mu.Lock()
			defer mu.Unlock()
			slowest[path] = max(slowest[path], took)
			if fail != "" {
				failures = append(failures, fmt.Sprintf("%s after %s at %.0f s: %s", path, took.Round(time.Millisecond), time.Since(start).Seconds(), fail))
			}
		}
		stop := time.Now().Add(time.Duration(secs) * time.Second)
		var wg sync.WaitGroup
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; time.Now().Before(stop); i++ {
					path := paths[i%len(paths)]
					req, _ := http.NewRequest("GET", base+path, nil)
					req.Header.Set("X-API-Key", key)
					t0 := time.Now()
					resp, err := c.Do(req)
					if err != nil {
						bad.Add(1)
						note(path, time.Since(t0), err.Error())
						continue
					}
					body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
					io.Copy(io.Discard, resp.Body) //nolint:errcheck
					resp.Body.Close()
					fail := ""
					if resp.StatusCode != 200 {
						bad.Add(1)
						fail = fmt.Sprintf("%d %.200s", resp.StatusCode, body)
					}
					note(path, time.Since(t0), fail)
					n.Add(1)
				}
			}()
		}
		peak := 0.0
		for time.Now().Before(stop) {
			peak = max(peak, sample())
			time.Sleep(time.Second)
		}
		wg.Wait()
		peak = max(peak, sample())
		cmd.Process.Signal(os.Interrupt) //nolint:errcheck
		cmd.Wait()                       //nolint:errcheck
		for _, f := range failures[:min(len(failures), 20)] {
			b.Logf("failed: %s", f)
		}
		if len(failures) > 0 {
			// The server's own account of what failed (its error lines).
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
					b.Logf("server: %s", l)
				}
			}
		}
		for _, p := range paths {
			b.Logf("slowest %s: %s", p, slowest[p].Round(time.Millisecond))
		}
		b.ReportMetric(ready.Seconds(), "ready_s")
		b.ReportMetric(peak, "peak_rss_MB")
		b.ReportMetric(float64(n.Load())/float64(secs), "rps")
		b.ReportMetric(float64(bad.Load()), "errors")
		if p := os.Getenv("MDQ_SCALE_CURVE"); p != "" {
			os.WriteFile(p, []byte("seconds,rss_mb\n"+strings.Join(curve, "\n")+"\n"), 0o644) //nolint:errcheck
		}
		// The server's whole log (every request line, and the background work's lines at
		// MDQ_LOG_LEVEL=debug), to line the RSS curve up with what ran.
		if p := os.Getenv("MDQ_SCALE_LOG"); p != "" {
			os.WriteFile(p, stderr.Bytes(), 0o644) //nolint:errcheck
		}
	}
}

// rssMB reads VmRSS of pid from /proc (0 off Linux).
func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
